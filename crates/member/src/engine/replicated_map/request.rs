//! The replicated map's typed requests. No wire format in them: a row decodes a message into
//! them (`rows.rs`), the engine runs them.

use crate::engine::request::Blob;
use ferrogrid_protocol::Uuid;
use std::borrow::Cow;

/// One replicated map key request: a write runs on the owner of the key's partition, a read
/// on the copy of the member asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicatedMapRequest<'a> {
    /// The replicated map's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: ReplicatedMapOp<'a>,
}

/// The replicated map's key operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicatedMapOp<'a> {
    /// put, with a ttl in milliseconds (0: none); answers the previous value.
    Put {
        key: Blob<'a>,
        value: Blob<'a>,
        ttl_ms: i64,
    },
    /// Answers the removed value.
    Remove {
        key: Blob<'a>,
    },
    Get {
        key: Blob<'a>,
    },
    ContainsKey {
        key: Blob<'a>,
    },
    /// A page of the partition's entry views (`iteration.rs`).
    FetchEntryViews {
        cursor: Uuid,
        new_iteration: bool,
        batch: usize,
    },
}

impl ReplicatedMapOp<'_> {
    /// Whether it changes the map (and so runs on the partition's owner).
    pub fn is_write(&self) -> bool {
        matches!(self, ReplicatedMapOp::Put { .. } | ReplicatedMapOp::Remove { .. })
    }
}
