//! The queue's rows of the operation table and their decoder.

use crate::engine::request::Request;
use crate::engine::request::*;
use crate::engine::wide::objects::classify_listener;
use crate::route::row::{row, wide_row, Operation, A, S, W};
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message};
use std::borrow::Cow;

/// In the partition of the queue's name; item listeners on every reactor.
pub(crate) static ROWS: &[Operation] = &[
    row!(QueueOffer, Partition, W.with(A).with(S), decode_queue),
    row!(QueuePut, Partition, W.with(A).with(S), decode_queue),
    row!(QueueAddAll, Partition, W.with(A).with(S), decode_queue),
    row!(QueuePoll, Partition, W.with(S), decode_queue),
    row!(QueueTake, Partition, W.with(S), decode_queue),
    row!(QueueRemove, Partition, W.with(S), decode_queue),
    row!(QueueDrainTo, Partition, W.with(S), decode_queue),
    row!(QueueDrainToMaxSize, Partition, W.with(S), decode_queue),
    row!(QueueClear, Partition, W.with(S), decode_queue),
    row!(QueueCompareAndRemoveAll, Partition, W.with(S), decode_queue),
    row!(QueueCompareAndRetainAll, Partition, W.with(S), decode_queue),
    row!(QueuePeek, Partition, S, decode_queue),
    row!(QueueSize, Partition, S, decode_queue),
    row!(QueueIsEmpty, Partition, S, decode_queue),
    row!(QueueRemainingCapacity, Partition, S, decode_queue),
    row!(QueueIterator, Partition, S, decode_queue),
    row!(QueueContains, Partition, S, decode_queue),
    row!(QueueContainsAll, Partition, S, decode_queue),
    wide_row!(QueueAddListener, S, classify_listener),
    wide_row!(QueueRemoveListener, S, classify_listener),
];

/// The decoder of the operation table's queue rows.
pub(crate) fn decode_queue<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    decode_queue_request(message).map(Request::Queue)
}

/// Decodes a queue request (every one names its queue first).
pub(crate) fn decode_queue_request<'a>(message: &Message<'a>) -> Result<QueueRequest<'a>, DecodeError> {
    let request = |name: &'a str, op| QueueRequest { name: Cow::Borrowed(name), op };
    Ok(match message.message_type() {
        QueueOffer::TYPE => {
            let r = QueueOffer::decode(message)?;
            request(r.name, QueueOp::Offer { value: blob(r.value), timeout_ms: r.timeout_millis, answers_bool: true })
        }
        QueuePut::TYPE => {
            let r = QueuePut::decode(message)?;
            request(r.name, QueueOp::Offer { value: blob(r.value), timeout_ms: -1, answers_bool: false })
        }
        QueuePoll::TYPE => {
            let r = QueuePoll::decode(message)?;
            request(r.name, QueueOp::Poll { timeout_ms: r.timeout_millis })
        }
        QueueTake::TYPE => request(QueueTake::decode(message)?.name, QueueOp::Poll { timeout_ms: -1 }),
        QueuePeek::TYPE => request(QueuePeek::decode(message)?.name, QueueOp::Peek),
        QueueSize::TYPE => request(QueueSize::decode(message)?.name, QueueOp::Size),
        QueueIsEmpty::TYPE => request(QueueIsEmpty::decode(message)?.name, QueueOp::IsEmpty),
        QueueRemainingCapacity::TYPE => {
            request(QueueRemainingCapacity::decode(message)?.name, QueueOp::RemainingCapacity)
        }
        QueueIterator::TYPE => request(QueueIterator::decode(message)?.name, QueueOp::Iterator),
        QueueClear::TYPE => request(QueueClear::decode(message)?.name, QueueOp::Clear),
        QueueDrainTo::TYPE => request(QueueDrainTo::decode(message)?.name, QueueOp::Drain { max: None }),
        QueueDrainToMaxSize::TYPE => {
            let r = QueueDrainToMaxSize::decode(message)?;
            request(r.name, QueueOp::Drain { max: Some(r.max_size) })
        }
        QueueContains::TYPE => {
            let r = QueueContains::decode(message)?;
            request(r.name, QueueOp::Contains { value: blob(r.value) })
        }
        QueueRemove::TYPE => {
            let r = QueueRemove::decode(message)?;
            request(r.name, QueueOp::Remove { value: blob(r.value) })
        }
        QueueContainsAll::TYPE => {
            let r = QueueContainsAll::decode(message)?;
            request(r.name, QueueOp::ContainsAll { values: list(r.data_list) })
        }
        QueueAddAll::TYPE => {
            let r = QueueAddAll::decode(message)?;
            request(r.name, QueueOp::AddAll { values: list(r.data_list) })
        }
        QueueCompareAndRemoveAll::TYPE => {
            let r = QueueCompareAndRemoveAll::decode(message)?;
            request(r.name, QueueOp::RemoveAll { values: list(r.data_list) })
        }
        QueueCompareAndRetainAll::TYPE => {
            let r = QueueCompareAndRetainAll::decode(message)?;
            request(r.name, QueueOp::RetainAll { values: list(r.data_list) })
        }
        other => unreachable!("{other} has a queue row but no decoder"),
    })
}
