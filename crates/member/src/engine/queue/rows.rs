//! The queue's rows of the operation table, each with its decoder.

use crate::engine::listeners::{Listener, Registry};
use crate::engine::queue::request::{QueueOp as Op, QueueRequest};
use crate::engine::wide::objects::{add_listener, listener, remove_listener};
use crate::route::row::Request;
use crate::route::row::{row, wide_row, Operation, A, S, W};
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use std::borrow::Cow;

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
fn queue<'a>(name: &'a str, op: Op<'a>) -> Request<'a> {
    Request::Queue(QueueRequest { name: Cow::Borrowed(name), op })
}
