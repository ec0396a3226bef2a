//! The PN counter's rows of the operation table and their decoder.

use crate::engine::request::Request;
use crate::engine::request::*;
use crate::route::row::{row, Operation, S, W};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message};
use std::borrow::Cow;

/// On the target replica the client chose; the configured replica count from any member.
pub(crate) static ROWS: &[Operation] = &[
    row!(PnCounterGet, Replica, S, decode_pn_counter),
    row!(PnCounterAdd, Replica, W.with(S), decode_pn_counter),
    row!(PnCounterGetConfiguredReplicaCount, Connection, S),
];

/// Decodes a PN counter get or add (routed to its target replica, `Route::Replica`).
pub(crate) fn decode_pn_counter<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    let (name, op, observed, target) = match message.message_type() {
        PnCounterGet::TYPE => {
            let r = PnCounterGet::decode(message)?;
            (r.name, PnCounterOp::Get, r.replica_timestamps.0, r.target_replica_uuid)
        }
        PnCounterAdd::TYPE => {
            let r = PnCounterAdd::decode(message)?;
            let op = PnCounterOp::Add { delta: r.delta, get_before_update: r.get_before_update };
            (r.name, op, r.replica_timestamps.0, r.target_replica_uuid)
        }
        other => unreachable!("{other} has a PN counter row but no decoder"),
    };
    Ok(Request::PnCounter(PnCounterRequest { name: Cow::Borrowed(name), op, observed, target }))
}
