//! Executor services (`IExecutorService`, and the proxies of the durable and scheduled ones):
//! their proxies are created, listed and destroyed like any other (`cluster/peer.rs`'s
//! `Service`), and hold no state. A task is Java code, which ferrogrid cannot run: a submit is
//! answered with the error a Hazelcast member without the task's class answers (`java_code.rs`),
//! for the plain executor's submits and the durable and scheduled executors' submits to a
//! partition or member. shutdown and isShutdown, and the durable and scheduled executors' other
//! requests (results, cancel, statistics), have no row (UnsupportedOperationException naming the
//! request).

use crate::engine::java_code::{refusal, JavaRole};
use crate::engine::wide::Classified;
use crate::route::row::{wide_row, Operation, S};
use ferrogrid_protocol::codec::*;

/// Answered where they are read, whichever member or partition they name: the task decides
/// the error.
pub(crate) static ROWS: &[Operation] = &[
    wide_row!(ExecutorServiceSubmitToPartition, S, |message, _| {
        let r = ExecutorServiceSubmitToPartition::decode(message)?;
        Ok(Classified::Refused(refusal(r.callable.0, JavaRole::Task)))
    }),
    wide_row!(ExecutorServiceSubmitToMember, S, |message, _| {
        let r = ExecutorServiceSubmitToMember::decode(message)?;
        Ok(Classified::Refused(refusal(r.callable.0, JavaRole::Task)))
    }),
    wide_row!(DurableExecutorSubmitToPartition, S, |message, _| {
        let r = DurableExecutorSubmitToPartition::decode(message)?;
        Ok(Classified::Refused(refusal(r.callable.0, JavaRole::Callable)))
    }),
    wide_row!(ScheduledExecutorSubmitToPartition, S, |message, _| {
        let r = ScheduledExecutorSubmitToPartition::decode(message)?;
        Ok(Classified::Refused(refusal(r.task.0, JavaRole::Callable)))
    }),
    wide_row!(ScheduledExecutorSubmitToMember, S, |message, _| {
        let r = ScheduledExecutorSubmitToMember::decode(message)?;
        Ok(Classified::Refused(refusal(r.task.0, JavaRole::Callable)))
    }),
];
