//! The multimap's typed requests. No wire format in them: a row decodes a message into
//! them (`rows.rs`), the engine runs them.

use crate::engine::request::Blob;
use ferrogrid_protocol::Uuid;
use std::borrow::Cow;

/// One multimap key request (in the partition of its key; putAll: of its keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiMapRequest<'a> {
    /// The multimap's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: MultiMapOp<'a>,
}

impl MultiMapRequest<'_> {
    /// The key a single-key request names (None: putAll).
    pub fn key(&self) -> Option<&[u8]> {
        use MultiMapOp::*;
        match &self.op {
            Put { key, .. } | Get { key } | RemoveKey { key, .. } | RemoveEntry { key, .. } | ContainsKey { key } => {
                Some(key)
            }
            ContainsEntry { key, .. }
            | ValueCount { key }
            | Lock { key, .. }
            | Unlock { key, .. }
            | IsLocked { key }
            | Txn { key, .. } => Some(key),
            PutAll { .. } => None,
        }
    }

    /// The same request owning its fields (for one that waits on a key lock).
    pub fn into_owned(self) -> MultiMapRequest<'static> {
        let owned = |blob: Blob<'_>| -> Blob<'static> { Cow::Owned(blob.into_owned()) };
        use MultiMapOp::*;
        let op = match self.op {
            Put { key, value, thread_id } => Put { key: owned(key), value: owned(value), thread_id },
            Get { key } => Get { key: owned(key) },
            RemoveKey { key, answer_values, thread_id } => RemoveKey { key: owned(key), answer_values, thread_id },
            RemoveEntry { key, value, thread_id } => RemoveEntry { key: owned(key), value: owned(value), thread_id },
            ContainsKey { key } => ContainsKey { key: owned(key) },
            ContainsEntry { key, value } => ContainsEntry { key: owned(key), value: owned(value) },
            ValueCount { key } => ValueCount { key: owned(key) },
            PutAll { entries } => PutAll {
                entries: entries
                    .into_iter()
                    .map(|(key, values)| (owned(key), values.into_iter().map(owned).collect()))
                    .collect(),
            },
            Lock { key, thread_id, lease_ms, try_timeout_ms } => {
                Lock { key: owned(key), thread_id, lease_ms, try_timeout_ms }
            }
            Unlock { key, thread_id } => Unlock { key: owned(key), thread_id },
            IsLocked { key } => IsLocked { key: owned(key) },
            Txn { key, txn, thread_id, blocks_reads, op } => {
                Txn { key: owned(key), txn, thread_id, blocks_reads, op: op.into_owned() }
            }
        };
        MultiMapRequest { name: Cow::Owned(self.name.into_owned()), op }
    }
}

/// The multimap's key operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiMapOp<'a> {
    /// put: waits for another owner's lock of the key (owner: the client and `thread_id`).
    Put {
        key: Blob<'a>,
        value: Blob<'a>,
        thread_id: i64,
    },
    Get {
        key: Blob<'a>,
    },
    /// remove(key) (`answer_values`: answers the removed values; waits for another owner's
    /// lock) and delete (does not wait, as in Hazelcast).
    RemoveKey {
        key: Blob<'a>,
        answer_values: bool,
        thread_id: i64,
    },
    /// remove(key, value): waits for another owner's lock.
    RemoveEntry {
        key: Blob<'a>,
        value: Blob<'a>,
        thread_id: i64,
    },
    ContainsKey {
        key: Blob<'a>,
    },
    ContainsEntry {
        key: Blob<'a>,
        value: Blob<'a>,
    },
    ValueCount {
        key: Blob<'a>,
    },
    /// putAll (does not wait for locks, as in Hazelcast).
    PutAll {
        entries: Vec<(Blob<'a>, Vec<Blob<'a>>)>,
    },
    /// lock and tryLock (`try_timeout_ms`), with a lease (−1: none).
    Lock {
        key: Blob<'a>,
        thread_id: i64,
        lease_ms: i64,
        try_timeout_ms: Option<i64>,
    },
    /// unlock (`thread_id`) and forceUnlock (None).
    Unlock {
        key: Blob<'a>,
        thread_id: Option<i64>,
    },
    IsLocked {
        key: Blob<'a>,
    },
    /// A transaction's operation on one key (TransactionalMultiMap), run by the key's owner
    /// (`txn.rs`).
    Txn {
        key: Blob<'a>,
        txn: Uuid,
        thread_id: i64,
        /// Its locks make others' plain reads wait (a TWO_PHASE transaction's).
        blocks_reads: bool,
        op: MultiTxnOp<'a>,
    },
}

/// What a transaction does to one key of a multimap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiTxnOp<'a> {
    Get,
    ValueCount,
    Put {
        value: Blob<'a>,
    },
    /// remove(key): every value.
    RemoveKey,
    RemoveEntry {
        value: Blob<'a>,
    },
}

impl MultiTxnOp<'_> {
    /// Whether it takes the key's lock (the writes).
    pub fn locks(&self) -> bool {
        !matches!(self, MultiTxnOp::Get | MultiTxnOp::ValueCount)
    }

    fn into_owned(self) -> MultiTxnOp<'static> {
        match self {
            MultiTxnOp::Get => MultiTxnOp::Get,
            MultiTxnOp::ValueCount => MultiTxnOp::ValueCount,
            MultiTxnOp::Put { value } => MultiTxnOp::Put { value: Cow::Owned(value.into_owned()) },
            MultiTxnOp::RemoveKey => MultiTxnOp::RemoveKey,
            MultiTxnOp::RemoveEntry { value } => MultiTxnOp::RemoveEntry { value: Cow::Owned(value.into_owned()) },
        }
    }
}
