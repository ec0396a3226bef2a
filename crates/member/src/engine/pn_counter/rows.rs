//! The PN counter's rows of the operation table, each with its decoder (the handler,
//! `impl Execute for PnCounterRequest`, is beside the replication it drives: `replicas.rs`).

use crate::engine::pn_counter::request::{PnCounterOp, PnCounterRequest};
use crate::route::row::{row, ClientCall, Operation, S, W};
use ferrogrid_protocol::codec::*;
use std::borrow::Cow;

/// On the target replica the client chose (`Route::Replica`); the configured replica count from
/// any member.
pub(crate) static ROWS: &[Operation] = &[
    row!(
        PnCounterGet,
        Replica,
        S,
        |r| {
            let (observed, target) = (r.replica_timestamps.0, r.target_replica_uuid);
            PnCounterRequest { name: Cow::Borrowed(r.name), op: PnCounterOp::Get, observed, target }
        },
        replica: |r| (r.name, r.target_replica_uuid)
    ),
    row!(
        PnCounterAdd,
        Replica,
        W.with(S),
        |r| {
            let op = PnCounterOp::Add { delta: r.delta, get_before_update: r.get_before_update };
            let (observed, target) = (r.replica_timestamps.0, r.target_replica_uuid);
            PnCounterRequest { name: Cow::Borrowed(r.name), op, observed, target }
        },
        replica: |r| (r.name, r.target_replica_uuid)
    ),
    row!(PnCounterGetConfiguredReplicaCount, Connection(ClientCall::PnCounterReplicaCount), S),
];
