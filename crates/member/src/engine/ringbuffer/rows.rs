//! The ringbuffer's rows of the operation table, each with its decoder.

use crate::engine::ringbuffer::request::{RingbufferOp as Op, RingbufferRequest};

use crate::engine::request::OpError;
use crate::engine::request::Replies;
use crate::engine::ringbuffer::store::{self as ringbuffer, RingDone, RingbufferStore};
use crate::engine::structures::ObjectKind;
use crate::engine::wide::objects::destroy_object;
use crate::engine::wide::WideRequest;
use crate::partition::objects::kind;
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::partition::waiters::Answering;
use crate::route::row::{row, Operation, A, S, W};
use crate::route::wire;
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use std::borrow::Cow;

/// In the partition of the ringbuffer's name.
/// A read of `ring` (a ringbuffer's or a map's event journal) that [`ringbuffer::execute`]
/// answered, or that waits for items: parked for `call`, at most `max_waiters` on the ring.
pub(crate) fn park_or_answered(
    done: Result<RingDone, OpError>,
    ring: &mut RingbufferStore,
    answering: &mut Answering<'_>,
    call: &Call<'_>,
    max_waiters: usize,
) -> Result<(), OpError> {
    match done? {
        RingDone::Wait(pending) => {
            answering.park(call.reply_to(), |id, waiters| ring.wait(id, pending, max_waiters, waiters))
        }
        RingDone::Answered => Ok(()),
    }
}

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
fn ringbuffer<'a>(name: &'a str, op: Op<'a>) -> RingbufferRequest<'a> {
    RingbufferRequest { name: Cow::Borrowed(name), op }
}

/// A ringbuffer request: run, or parked until items arrive; an add answers the reads it
/// makes possible (held with its own answer while its backups are pending).
impl Execute for RingbufferRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let request = self;
        let local = call.local;
        let partition_id = call.partition_id;
        let start = out.len();
        let max_waiters = owner.settings.max_parked_per_key();
        let (ring, waiters) = owner.partitions[local].store_mut::<kind::Ringbuffer>(&request.name, &mut owner.settings);
        let mut others = Vec::new();
        let mut answering = waiters.answering(&mut others);
        let mut reply = call.replies(out);
        let done = ringbuffer::execute(ring, &request.op, owner.now_ms, &mut |answer| reply.reply(answer));
        let outcome = park_or_answered(done, ring, &mut answering, call, max_waiters);
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        if !matches!(request.op, Op::Add { .. }) {
            return owner.hold_behind_writes(partition_id, call.connection, out, start);
        }
        ring.serve_waiters(&mut answering);
        owner.replicate(partition_id, call, out, start, others);
    }
}

/// Destroy of a ringbuffer: its items, everywhere.
pub(crate) fn destroy(kind: ObjectKind) -> WideRequest {
    destroy_object(Some(kind), None)
}
