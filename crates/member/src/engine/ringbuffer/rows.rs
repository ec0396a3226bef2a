//! The ringbuffer's rows of the operation table, each with its decoder.

use crate::engine::ringbuffer::request::{RingbufferOp as Op, RingbufferRequest};

use crate::route::row::Request;
use crate::route::row::{row, Operation, A, S, W};
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use std::borrow::Cow;

/// In the partition of the ringbuffer's name.
pub(crate) static ROWS: &[Operation] = &[
    row!(RingbufferAdd, Partition, W.with(A).with(S), |r| {
        ringbuffer(r.name, Op::Add { values: vec![blob(r.value)], overflow_policy: r.overflow_policy })
    }),
    row!(RingbufferAddAll, Partition, W.with(A).with(S), |r| {
        ringbuffer(r.name, Op::Add { values: list(r.value_list), overflow_policy: r.overflow_policy })
    }),
    row!(RingbufferReadOne, Partition, S, |r| {
        ringbuffer(r.name, Op::Read { sequence: r.sequence, min: 1, max: 1, one: true, filter: None })
    }),
    row!(RingbufferReadMany, Partition, S, |r| {
        // The Node.js client sends "no filter" as a serialized null (type 0).
        let filter = r.filter.filter(|filter| filter.type_id().unwrap_or(0) != 0).map(blob);
        let (min, max) = (r.min_count, r.max_count);
        ringbuffer(r.name, Op::Read { sequence: r.start_sequence, min, max, one: false, filter })
    }),
    row!(RingbufferSize, Partition, S, |r| ringbuffer(r.name, Op::Size)),
    row!(RingbufferTailSequence, Partition, S, |r| ringbuffer(r.name, Op::TailSequence)),
    row!(RingbufferHeadSequence, Partition, S, |r| ringbuffer(r.name, Op::HeadSequence)),
    row!(RingbufferCapacity, Partition, S, |r| ringbuffer(r.name, Op::Capacity)),
    row!(RingbufferRemainingCapacity, Partition, S, |r| ringbuffer(r.name, Op::RemainingCapacity)),
];

/// A request on the ringbuffer `name`.
fn ringbuffer<'a>(name: &'a str, op: Op<'a>) -> Request<'a> {
    Request::Ringbuffer(RingbufferRequest { name: Cow::Borrowed(name), op })
}
