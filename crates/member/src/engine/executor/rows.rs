//! Executor services (`IExecutorService`, and the durable and scheduled ones): their proxies
//! are created, listed and destroyed like any other (`cluster/peer.rs`'s `Service`). A task is
//! Java code, which ferrogrid cannot run, so no task ever runs or waits here; every request is
//! answered as a Hazelcast 5.6 member answers it when it has none of the task's classes:
//!
//! * a submit (the plain executor's to a partition or member, the durable executor's, the
//!   scheduled executor's to a partition or member): the error the member answers for the
//!   task's serialized form (`java_code.rs`), before and after a shutdown alike (the member
//!   reads the task before it looks at its executor's state);
//! * shutdown and isShutdown (plain and durable): a shutdown is recorded on every reactor of
//!   the member that receives it, and only there (a Hazelcast member shuts down its own
//!   executor: a client that wants the cluster's shut down asks each member), and isShutdown
//!   answers from the member asked;
//! * the plain executor's cancelOnPartition and cancelOnMember: false (no task has the uuid);
//! * the durable executor's retrieveResult, disposeResult and retrieveAndDisposeResult: its
//!   ring of results starts with every slot holding sequence 0, so sequence 0 reads a null
//!   result (and disposes nothing) and any other is a StaleTaskIdException, after a shutdown
//!   too;
//! * the scheduled executor's shutdown names one member, where it is recorded;
//!   getAllScheduledFutures answers an empty list; a task's getStats, getDelay, cancel,
//!   isCancelled, isDone, getResult and dispose (on its partition's owner or on a member) are a
//!   StaleTaskException (no task has the name), or a RejectedExecutionException where the
//!   scheduler was shut down.
//!
//! Invariant: each reactor's `shutdowns::Shutdowns` holds one entry per (service, name) shut
//! down and not destroyed since, as Hazelcast's own sets of shut-down executors (destroying the
//! proxy clears it: `wide/objects.rs`'s `ForgetShutdown`). Checked against a Hazelcast 5.6.0
//! member by `tests/python/test_executors.py`.

use crate::engine::executor::shutdowns::ExecutorKind;
use crate::engine::java_code::{refusal, JavaRole};
use crate::engine::request::{ErrorKind, OpError, Reply};
use crate::engine::wide::objects::{answered, Answer};
use crate::engine::wide::{Classified, Found, Partitions, ShareContext, WideOperation};
use crate::route::row::{wide_row, Flags, Operation, S};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Uuid};

/// shutdown: recorded on every reactor of the member that receives it (of the one member
/// named, for a scheduled executor); answers nothing.
#[derive(Debug)]
struct Shutdown {
    service: ExecutorKind,
    member: Option<Uuid>,
}

impl WideOperation for Shutdown {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;
    /// A Hazelcast member shuts down its own executor only.
    const CLUSTER_WIDE: bool = false;

    fn target(&self) -> Option<Uuid> {
        self.member
    }

    fn empty(&self) {}

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, _partial: &mut ()) {
        share.executors.insert(self.service, name);
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// What a request about the executor answers from the member asked, once it knows whether the
/// executor is shut down there.
#[derive(Debug)]
enum Asked {
    IsShutdown,
    /// A scheduled task: `None` for getAllScheduledFutures (no task, so an empty list).
    Task(Option<Box<str>>),
}

/// A request answered from the member asked (or the one it names): whether its reactors
/// recorded the executor's shutdown decides the answer.
#[derive(Debug)]
struct FromState {
    service: ExecutorKind,
    asked: Asked,
    member: Option<Uuid>,
}

impl WideOperation for FromState {
    type Partial = Found;
    const PARTITIONS: Partitions = Partitions::None;
    const CLUSTER_WIDE: bool = false;

    fn target(&self) -> Option<Uuid> {
        self.member
    }

    fn empty(&self) -> Found {
        Found(false)
    }

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, partial: &mut Found) {
        partial.0 |= share.executors.contains(self.service, name);
    }

    fn reply<'p>(&'p self, partial: &'p mut Found) -> Result<Reply<'p>, OpError> {
        let shut_down = partial.0;
        match &self.asked {
            Asked::IsShutdown => Ok(Reply::Bool(shut_down)),
            Asked::Task(None) => Ok(Reply::Values(Vec::new())),
            Asked::Task(Some(_)) if shut_down => {
                Err(OpError::new(ErrorKind::RejectedExecution, "Executor is shut down."))
            }
            Asked::Task(Some(task)) => {
                Err(OpError::new(ErrorKind::StaleTask, format!("Task with name {task} not found. ")))
            }
        }
    }
}

fn shutdown(service: ExecutorKind, member: Option<Uuid>, name: &str) -> Result<Classified, DecodeError> {
    Classified::wide(Shutdown { service, member }, name)
}

fn from_state(
    service: ExecutorKind,
    asked: Asked,
    member: Option<Uuid>,
    name: &str,
) -> Result<Classified, DecodeError> {
    Classified::wide(FromState { service, asked, member }, name)
}

/// A scheduled task's request on its partition's owner (`member` None) or on a member.
fn scheduled_task(scheduler: &str, task: &str, member: Option<Uuid>) -> Result<Classified, DecodeError> {
    from_state(ExecutorKind::Scheduled, Asked::Task(Some(task.into())), member, scheduler)
}

/// A durable executor's result slot: sequence 0 holds a null result, any other is stale.
fn durable_result(name: &str, sequence: i32, answer: Answer) -> Result<Classified, DecodeError> {
    if sequence != 0 {
        return Ok(Classified::Refused(OpError::new(ErrorKind::StaleTaskId, "The sequence has been overwritten")));
    }
    answered(answer, name)
}

const ON_MEMBER: Flags = S.with(Flags::TARGETED);

/// A scheduled task's pair of rows (on its partition, on a member).
macro_rules! scheduled_task_rows {
    ($($partition:ident, $member:ident;)*) => {
        &[$(
            wide_row!($partition, S, |message, _| {
                let r = $partition::decode(message)?;
                scheduled_task(r.scheduler_name, r.task_name, None)
            }),
            wide_row!($member, ON_MEMBER, |message, _| {
                let r = $member::decode(message)?;
                scheduled_task(r.scheduler_name, r.task_name, r.member_uuid)
            }),
        )*]
    };
}

/// A scheduled task's requests.
pub(crate) static SCHEDULED_TASK_ROWS: &[Operation] = scheduled_task_rows! {
    ScheduledExecutorGetStatsFromPartition, ScheduledExecutorGetStatsFromMember;
    ScheduledExecutorGetDelayFromPartition, ScheduledExecutorGetDelayFromMember;
    ScheduledExecutorCancelFromPartition, ScheduledExecutorCancelFromMember;
    ScheduledExecutorIsCancelledFromPartition, ScheduledExecutorIsCancelledFromMember;
    ScheduledExecutorIsDoneFromPartition, ScheduledExecutorIsDoneFromMember;
    ScheduledExecutorGetResultFromPartition, ScheduledExecutorGetResultFromMember;
    ScheduledExecutorDisposeFromPartition, ScheduledExecutorDisposeFromMember;
};

/// Answered where they are read, whichever member or partition they name, except a request
/// for one member's state (forwarded there).
pub(crate) static ROWS: &[Operation] = &[
    wide_row!(ExecutorServiceSubmitToPartition, S, |message, _| {
        let r = ExecutorServiceSubmitToPartition::decode(message)?;
        Ok(Classified::Refused(refusal(r.callable.0, JavaRole::Task)))
    }),
    wide_row!(ExecutorServiceSubmitToMember, S, |message, _| {
        let r = ExecutorServiceSubmitToMember::decode(message)?;
        Ok(Classified::Refused(refusal(r.callable.0, JavaRole::Task)))
    }),
    wide_row!(ExecutorServiceShutdown, S, |message, _| {
        shutdown(ExecutorKind::Plain, None, ExecutorServiceShutdown::decode(message)?.name)
    }),
    wide_row!(ExecutorServiceIsShutdown, S, |message, _| {
        from_state(ExecutorKind::Plain, Asked::IsShutdown, None, ExecutorServiceIsShutdown::decode(message)?.name)
    }),
    wide_row!(ExecutorServiceCancelOnPartition, Flags::NONE, |message, _| {
        ExecutorServiceCancelOnPartition::decode(message)?;
        answered(Answer::False, "")
    }),
    wide_row!(ExecutorServiceCancelOnMember, Flags::NONE, |message, _| {
        ExecutorServiceCancelOnMember::decode(message)?;
        answered(Answer::False, "")
    }),
    wide_row!(DurableExecutorSubmitToPartition, S, |message, _| {
        let r = DurableExecutorSubmitToPartition::decode(message)?;
        Ok(Classified::Refused(refusal(r.callable.0, JavaRole::Callable)))
    }),
    wide_row!(DurableExecutorShutdown, S, |message, _| {
        shutdown(ExecutorKind::Durable, None, DurableExecutorShutdown::decode(message)?.name)
    }),
    wide_row!(DurableExecutorIsShutdown, S, |message, _| {
        from_state(ExecutorKind::Durable, Asked::IsShutdown, None, DurableExecutorIsShutdown::decode(message)?.name)
    }),
    wide_row!(DurableExecutorRetrieveResult, S, |message, _| {
        let r = DurableExecutorRetrieveResult::decode(message)?;
        durable_result(r.name, r.sequence, Answer::Null)
    }),
    wide_row!(DurableExecutorDisposeResult, S, |message, _| {
        let r = DurableExecutorDisposeResult::decode(message)?;
        durable_result(r.name, r.sequence, Answer::Nothing)
    }),
    wide_row!(DurableExecutorRetrieveAndDisposeResult, S, |message, _| {
        let r = DurableExecutorRetrieveAndDisposeResult::decode(message)?;
        durable_result(r.name, r.sequence, Answer::Null)
    }),
    wide_row!(ScheduledExecutorSubmitToPartition, S, |message, _| {
        let r = ScheduledExecutorSubmitToPartition::decode(message)?;
        Ok(Classified::Refused(refusal(r.task.0, JavaRole::Callable)))
    }),
    wide_row!(ScheduledExecutorSubmitToMember, S, |message, _| {
        let r = ScheduledExecutorSubmitToMember::decode(message)?;
        Ok(Classified::Refused(refusal(r.task.0, JavaRole::Callable)))
    }),
    wide_row!(ScheduledExecutorShutdown, ON_MEMBER, |message, _| {
        let r = ScheduledExecutorShutdown::decode(message)?;
        shutdown(ExecutorKind::Scheduled, r.member_uuid, r.scheduler_name)
    }),
    wide_row!(ScheduledExecutorGetAllScheduledFutures, S, |message, _| {
        let r = ScheduledExecutorGetAllScheduledFutures::decode(message)?;
        from_state(ExecutorKind::Scheduled, Asked::Task(None), None, r.scheduler_name)
    }),
];
