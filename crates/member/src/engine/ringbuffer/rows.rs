//! The ringbuffer's rows of the operation table and their decoder.

use crate::engine::request::Request;
use crate::engine::request::*;
use crate::route::row::{row, Operation, A, S, W};
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message};
use std::borrow::Cow;

/// In the partition of the ringbuffer's name.
pub(crate) static ROWS: &[Operation] = &[
    row!(RingbufferAdd, Partition, W.with(A).with(S), decode_ringbuffer),
    row!(RingbufferAddAll, Partition, W.with(A).with(S), decode_ringbuffer),
    row!(RingbufferReadOne, Partition, S, decode_ringbuffer),
    row!(RingbufferReadMany, Partition, S, decode_ringbuffer),
    row!(RingbufferSize, Partition, S, decode_ringbuffer),
    row!(RingbufferTailSequence, Partition, S, decode_ringbuffer),
    row!(RingbufferHeadSequence, Partition, S, decode_ringbuffer),
    row!(RingbufferCapacity, Partition, S, decode_ringbuffer),
    row!(RingbufferRemainingCapacity, Partition, S, decode_ringbuffer),
];

/// The decoder of the operation table's ringbuffer rows.
pub(crate) fn decode_ringbuffer<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    let request = |name: &'a str, op| Request::Ringbuffer(RingbufferRequest { name: Cow::Borrowed(name), op });
    Ok(match message.message_type() {
        RingbufferSize::TYPE => request(RingbufferSize::decode(message)?.name, RingbufferOp::Size),
        RingbufferTailSequence::TYPE => {
            request(RingbufferTailSequence::decode(message)?.name, RingbufferOp::TailSequence)
        }
        RingbufferHeadSequence::TYPE => {
            request(RingbufferHeadSequence::decode(message)?.name, RingbufferOp::HeadSequence)
        }
        RingbufferCapacity::TYPE => request(RingbufferCapacity::decode(message)?.name, RingbufferOp::Capacity),
        RingbufferRemainingCapacity::TYPE => {
            request(RingbufferRemainingCapacity::decode(message)?.name, RingbufferOp::RemainingCapacity)
        }
        RingbufferAdd::TYPE => {
            let r = RingbufferAdd::decode(message)?;
            request(r.name, RingbufferOp::Add { values: vec![blob(r.value)], overflow_policy: r.overflow_policy })
        }
        RingbufferAddAll::TYPE => {
            let r = RingbufferAddAll::decode(message)?;
            request(r.name, RingbufferOp::Add { values: list(r.value_list), overflow_policy: r.overflow_policy })
        }
        RingbufferReadOne::TYPE => {
            let r = RingbufferReadOne::decode(message)?;
            let op = RingbufferOp::Read { sequence: r.sequence, min: 1, max: 1, one: true, filter: None };
            request(r.name, op)
        }
        RingbufferReadMany::TYPE => {
            let r = RingbufferReadMany::decode(message)?;
            // The Node.js client sends "no filter" as a serialized null (type 0).
            let filter = r.filter.filter(|filter| filter.type_id().unwrap_or(0) != 0).map(blob);
            let (min, max) = (r.min_count, r.max_count);
            request(r.name, RingbufferOp::Read { sequence: r.start_sequence, min, max, one: false, filter })
        }
        other => unreachable!("{other} has a ringbuffer row but no decoder"),
    })
}
