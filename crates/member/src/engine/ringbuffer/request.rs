//! The ringbuffer's typed requests. No wire format in them: a row decodes a message into
//! them (`rows.rs`), the engine runs them.

use crate::engine::request::Blob;
use std::borrow::Cow;

/// One ringbuffer request (the ringbuffer lives in the partition of its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingbufferRequest<'a> {
    /// The ringbuffer's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: RingbufferOp<'a>,
}

/// The ringbuffer operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RingbufferOp<'a> {
    Size,
    TailSequence,
    HeadSequence,
    Capacity,
    RemainingCapacity,
    /// add (one value) and addAll, with Hazelcast's overflow policy: 0 OVERWRITE (the oldest
    /// item goes), 1 FAIL (answers −1 when the values do not fit).
    Add {
        values: Vec<Blob<'a>>,
        overflow_policy: i32,
    },
    /// readOne (`one`: answers the item; min and max 1) and readMany (items from `sequence`,
    /// at least `min` of them, waiting until there are, at most `max`). `filter`: what the
    /// client sent as a filter (a Java function on the member, which ferrogrid cannot run).
    Read {
        sequence: i64,
        min: i32,
        max: i32,
        one: bool,
        filter: Option<Blob<'a>>,
    },
}
