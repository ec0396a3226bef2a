//! The queue's rows of the operation table, each with its decoder.

use crate::clock::NEVER;
use crate::engine::listeners::{Listener, Registry};
use crate::engine::queue::request::{QueueOp as Op, QueueRequest, QueueTxnOp as TxnOp};
use crate::engine::queue::store::{self as queue, QueueContext, QueueDone};
use crate::engine::request::Replies;
use crate::engine::structures::ObjectKind;
use crate::engine::wide::objects::destroy_object;
use crate::engine::wide::objects::{add_listener, listener, remove_listener};
use crate::engine::wide::WideRequest;
use crate::partition::objects::kind;
use crate::partition::owner::Timer;
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::row::{row, txn_row, wide_row, Operation, A, S, W};
use crate::route::wire;
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::PartitionId;
use std::borrow::Cow;
use std::cmp::Reverse;

/// In the partition of the queue's name; item listeners on every reactor.
pub(crate) static ROWS: &[Operation] = &[
    row!(QueueOffer, Partition, W.with(A).with(S), |r| {
        queue(r.name, Op::Offer { value: blob(r.value), timeout_ms: r.timeout_millis, answers_bool: true })
    }),
    row!(QueuePut, Partition, W.with(A).with(S), |r| {
        queue(r.name, Op::Offer { value: blob(r.value), timeout_ms: -1, answers_bool: false })
    }),
    row!(QueueAddAll, Partition, W.with(A).with(S), |r| queue(r.name, Op::AddAll { values: list(r.data_list) })),
    row!(QueuePoll, Partition, W.with(S), |r| queue(r.name, Op::Poll { timeout_ms: r.timeout_millis })),
    row!(QueueTake, Partition, W.with(S), |r| queue(r.name, Op::Poll { timeout_ms: -1 })),
    row!(QueueRemove, Partition, W.with(S), |r| queue(r.name, Op::Remove { value: blob(r.value) })),
    row!(QueueDrainTo, Partition, W.with(S), |r| queue(r.name, Op::Drain { max: None })),
    row!(QueueDrainToMaxSize, Partition, W.with(S), |r| queue(r.name, Op::Drain { max: Some(r.max_size) })),
    row!(QueueClear, Partition, W.with(S), |r| queue(r.name, Op::Clear)),
    row!(QueueCompareAndRemoveAll, Partition, W.with(S), |r| {
        queue(r.name, Op::RemoveAll { values: list(r.data_list) })
    }),
    row!(QueueCompareAndRetainAll, Partition, W.with(S), |r| {
        queue(r.name, Op::RetainAll { values: list(r.data_list) })
    }),
    row!(QueuePeek, Partition, S, |r| queue(r.name, Op::Peek)),
    row!(QueueSize, Partition, S, |r| queue(r.name, Op::Size)),
    row!(QueueIsEmpty, Partition, S, |r| queue(r.name, Op::IsEmpty)),
    row!(QueueRemainingCapacity, Partition, S, |r| queue(r.name, Op::RemainingCapacity)),
    row!(QueueIterator, Partition, S, |r| queue(r.name, Op::Iterator)),
    row!(QueueContains, Partition, S, |r| queue(r.name, Op::Contains { value: blob(r.value) })),
    row!(QueueContainsAll, Partition, S, |r| queue(r.name, Op::ContainsAll { values: list(r.data_list) })),
    // TransactionalQueue: admitted by the transaction's coordinator, run here (`txn.rs`).
    txn_row!(TransactionalQueueOffer, W.with(A).with(S), |r| {
        txn(r.name, r.txn_id, TxnOp::Offer { value: blob(r.item), timeout_ms: r.timeout })
    }),
    txn_row!(TransactionalQueuePoll, W.with(S), |r| txn(r.name, r.txn_id, TxnOp::Poll { timeout_ms: r.timeout })),
    txn_row!(TransactionalQueueTake, W.with(S), |r| txn(r.name, r.txn_id, TxnOp::Poll { timeout_ms: -1 })),
    txn_row!(TransactionalQueuePeek, S, |r| txn(r.name, r.txn_id, TxnOp::Peek { timeout_ms: r.timeout })),
    txn_row!(TransactionalQueueSize, S, |r| txn(r.name, r.txn_id, TxnOp::Size)),
    wide_row!(QueueAddListener, S, |message, connection| {
        let r = QueueAddListener::decode(message)?;
        let listener =
            Listener { include_value: r.include_value, local_only: r.local_only, ..listener(message, connection) };
        add_listener(Registry::Items, r.name, listener)
    }),
    wide_row!(QueueRemoveListener, S, |message, _| {
        let r = QueueRemoveListener::decode(message)?;
        remove_listener(Registry::Items, r.name, r.registration_id)
    }),
];

/// A request on the queue `name` (every queue request names its queue first).
fn queue<'a>(name: &'a str, op: Op<'a>) -> QueueRequest<'a> {
    QueueRequest { name: Cow::Borrowed(name), op }
}

/// A request of transaction `txn` on the queue `name`.
fn txn<'a>(name: &'a str, txn: Option<ferrogrid_protocol::Uuid>, op: TxnOp<'a>) -> QueueRequest<'a> {
    queue(name, Op::Txn { txn: txn.unwrap_or_default(), op })
}

/// A queue request: run, or parked as a waiter (with a timer if it has a deadline).
impl Execute for QueueRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let request = self;
        let local = call.local;
        let partition_id = call.partition_id;
        let start = out.len();
        let name = &*request.name;
        let (queue, waiters) = owner.partitions[local].store_mut::<kind::Queue>(name, &mut owner.settings);
        let mut others = Vec::new();
        let mut answering = waiters.answering(&mut others);
        let mut ctx = QueueContext {
            name,
            member: owner.member,
            source: call.source,
            partition_id,
            listeners: &mut owner.listeners,
            outbox: &mut owner.outbox,
            waiters: &mut answering,
        };
        let mut reply = call.replies(out);
        let timers = &mut owner.timers;
        let answer: &mut dyn FnMut(crate::engine::request::Reply<'_>) = &mut |answer| reply.reply(answer);
        let done = match &request.op {
            Op::Txn { txn, op } => crate::engine::queue::txn::execute(queue, &mut ctx, *txn, op, owner.now_ms, answer),
            op => queue::execute(queue, &mut ctx, op, owner.now_ms, answer),
        };
        let outcome = match done {
            Ok(QueueDone::Wait { deadline_ms }) => {
                let max_waiters = owner.settings.max_parked_per_key();
                let waiter = |id| call.waiter(&request.op, deadline_ms, id);
                let parked =
                    answering.park(call.reply_to(), |id, waiters| queue.wait(waiter(id), max_waiters, waiters));
                parked.map(|()| {
                    if deadline_ms != NEVER {
                        timers
                            .push(Reverse((deadline_ms, Timer::Queue { partition: partition_id, name: name.into() })));
                    }
                })
            }
            Ok(QueueDone::Answered) => Ok(()),
            Err(failure) => Err(failure),
        };
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        // Held with the answer while backups are pending; sent at once otherwise.
        owner.replicate(partition_id, call, out, start, others);
    }
}

impl PartitionOwner {
    /// Answers the waiters of a queue whose deadline passed, then those it can serve now.
    pub(crate) fn check_queue(&mut self, partition_id: PartitionId, name: &str) {
        let local = self.replication.local(partition_id.0 as usize);
        let Some((queue, waiters)) = self.partitions[local].existing_store_and_waiters::<kind::Queue>(name) else {
            return;
        };
        let mut answers = Vec::new();
        let mut answering = waiters.answering(&mut answers);
        let mut ctx = QueueContext {
            name,
            member: self.member,
            source: self.member,
            partition_id,
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            waiters: &mut answering,
        };
        queue.expire_waiters(self.now_ms, &mut ctx);
        queue.serve_waiters(&mut ctx);
        self.send_others(answers);
    }
}

/// Destroy of a queue: its items and its item listeners, everywhere.
pub(crate) fn destroy(kind: ObjectKind) -> WideRequest {
    destroy_object(Some(kind), Some(Registry::Items))
}
