//! Executor services (`IExecutorService`, and the proxies of the durable and scheduled ones):
//! their proxies are created, listed and destroyed like any other (`cluster/peer.rs`'s
//! `Service`), and hold no state. A task is Java code, which ferrogrid cannot run: a submit is
//! answered with the error a Hazelcast member without the task's class answers (`java_code.rs`).
//! shutdown and isShutdown, and the durable and scheduled executors' requests, have no row
//! (UnsupportedOperationException naming the request).

use crate::engine::java_code::{refusal, JavaRole};
use crate::engine::wide::Classified;
use crate::route::row::{wide_row, Operation, S};
use ferrogrid_protocol::codec::*;

/// Hazelcast's service names of the executors.
pub(crate) const EXECUTOR_SERVICE: &str = "hz:impl:executorService";
pub(crate) const DURABLE_EXECUTOR_SERVICE: &str = "hz:impl:durableExecutorService";
pub(crate) const SCHEDULED_EXECUTOR_SERVICE: &str = "hz:impl:scheduledExecutorService";

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
];
