//! What an entry event is: its type and what it says (published through `listeners.rs`, and
//! taken into query caches by `map/query_cache.rs`).

use ferrogrid_protocol::{PartitionId, Uuid};

/// Entry event types (the `eventType` field and the bits of `listenerFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum EventKind {
    Added = 1,
    Removed = 2,
    Updated = 4,
    Evicted = 8,
    Expired = 16,
    EvictAll = 32,
    ClearAll = 64,
    /// An entry a split-brain merge put in place.
    Merged = 128,
}

/// What one event says; values are sent only to listeners that asked for them.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub kind: EventKind,
    /// None for an event of no one partition (a map-wide clear or eviction).
    pub partition_id: Option<PartitionId>,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub old_value: Option<&'a [u8]>,
    pub affected_entries: i32,
    /// Who caused it (the writing client, or this member for expiry and eviction).
    pub source: Uuid,
}
