//! A map's typed requests: one partition-bound request ([`MapRequest`]) and its operation ([`MapOp`]), with what puts and removals answer. No wire format in them: a row decodes a message into
//! them (`rows.rs`), the engine runs them.

use crate::engine::request::Blob;
use ferrogrid_protocol::Uuid;
use std::borrow::Cow;

/// One partition-bound map request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapRequest<'a> {
    /// The map's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: MapOp<'a>,
}

/// What a put-like request answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutAnswer {
    /// The previous value (put).
    Previous,
    /// Nothing (set, putTransient).
    Empty,
    /// A null value (the max-idle variants of set and putTransient).
    Null,
}

/// What a removal answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoveAnswer {
    /// The old value (remove).
    Previous,
    /// Whether something was removed; the old value is not read (delete).
    Deleted,
    /// Whether something was removed, waiting at most `timeout_ms` for the key's lock
    /// (tryRemove).
    Try { timeout_ms: i64 },
}

/// The operations on one key (or on a few keys of one partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapOp<'a> {
    Get {
        key: Blob<'a>,
    },
    ContainsKey {
        key: Blob<'a>,
    },
    GetEntryView {
        key: Blob<'a>,
    },
    /// put, set, putTransient and their max-idle variants. ttl and max-idle: −1 the map's
    /// default, 0 never, otherwise milliseconds.
    Put {
        key: Blob<'a>,
        value: Blob<'a>,
        thread_id: i64,
        ttl_ms: i64,
        max_idle_ms: i64,
        answer: PutAnswer,
    },
    PutIfAbsent {
        key: Blob<'a>,
        value: Blob<'a>,
        thread_id: i64,
        ttl_ms: i64,
        max_idle_ms: i64,
    },
    TryPut {
        key: Blob<'a>,
        value: Blob<'a>,
        thread_id: i64,
        timeout_ms: i64,
    },
    Remove {
        key: Blob<'a>,
        thread_id: i64,
        answer: RemoveAnswer,
    },
    RemoveIfSame {
        key: Blob<'a>,
        value: Blob<'a>,
        thread_id: i64,
    },
    /// replace, and with `expected` replace(key, old, new).
    Replace {
        key: Blob<'a>,
        expected: Option<Blob<'a>>,
        value: Blob<'a>,
        thread_id: i64,
    },
    Evict {
        key: Blob<'a>,
        thread_id: i64,
    },
    SetTtl {
        key: Blob<'a>,
        ttl_ms: i64,
    },
    GetAll {
        keys: Vec<Blob<'a>>,
    },
    PutAll {
        entries: Vec<(Blob<'a>, Blob<'a>)>,
    },
    /// lock (`try_timeout_ms` None: wait until acquired) and tryLock.
    Lock {
        key: Blob<'a>,
        thread_id: i64,
        lease_ms: i64,
        try_timeout_ms: Option<i64>,
    },
    IsLocked {
        key: Blob<'a>,
    },
    /// unlock (`thread_id` given: only its owner) and forceUnlock.
    Unlock {
        key: Blob<'a>,
        thread_id: Option<i64>,
    },
    /// A transaction's operation on one key (TransactionalMap), run by the key's owner
    /// (`txn.rs`).
    Txn {
        key: Blob<'a>,
        txn: Uuid,
        thread_id: i64,
        /// Its locks make others' plain reads wait (a TWO_PHASE transaction's).
        blocks_reads: bool,
        op: TxnOp<'a>,
    },
}

/// What a transaction does to one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnOp<'a> {
    Get,
    ContainsKey,
    GetForUpdate,
    Put { value: Blob<'a>, ttl_ms: i64 },
    Set { value: Blob<'a> },
    PutIfAbsent { value: Blob<'a> },
    Replace { value: Blob<'a> },
    ReplaceIfSame { expected: Blob<'a>, value: Blob<'a> },
    Remove,
    Delete,
    RemoveIfSame { value: Blob<'a> },
}

impl TxnOp<'_> {
    /// Whether it takes the key's lock (every operation but the plain reads).
    pub fn locks(&self) -> bool {
        !matches!(self, TxnOp::Get | TxnOp::ContainsKey)
    }

    fn into_owned(self) -> TxnOp<'static> {
        match self {
            TxnOp::Get => TxnOp::Get,
            TxnOp::ContainsKey => TxnOp::ContainsKey,
            TxnOp::GetForUpdate => TxnOp::GetForUpdate,
            TxnOp::Put { value, ttl_ms } => TxnOp::Put { value: owned(value), ttl_ms },
            TxnOp::Set { value } => TxnOp::Set { value: owned(value) },
            TxnOp::PutIfAbsent { value } => TxnOp::PutIfAbsent { value: owned(value) },
            TxnOp::Replace { value } => TxnOp::Replace { value: owned(value) },
            TxnOp::ReplaceIfSame { expected, value } => {
                TxnOp::ReplaceIfSame { expected: owned(expected), value: owned(value) }
            }
            TxnOp::Remove => TxnOp::Remove,
            TxnOp::Delete => TxnOp::Delete,
            TxnOp::RemoveIfSame { value } => TxnOp::RemoveIfSame { value: owned(value) },
        }
    }
}

fn owned(blob: Blob<'_>) -> Blob<'static> {
    Cow::Owned(blob.into_owned())
}

impl MapRequest<'_> {
    /// The same request owning its bytes (to wait on a lock past its read buffer).
    pub fn into_owned(self) -> MapRequest<'static> {
        MapRequest { name: Cow::Owned(self.name.into_owned()), op: self.op.into_owned() }
    }

    /// The key a single-key request is about (None for getAll and putAll).
    pub fn key(&self) -> Option<&[u8]> {
        self.op.key()
    }
}

impl MapOp<'_> {
    pub fn key(&self) -> Option<&[u8]> {
        use MapOp::*;
        match self {
            Get { key }
            | ContainsKey { key }
            | GetEntryView { key }
            | Put { key, .. }
            | PutIfAbsent { key, .. }
            | TryPut { key, .. }
            | Remove { key, .. }
            | RemoveIfSame { key, .. }
            | Replace { key, .. }
            | Evict { key, .. }
            | SetTtl { key, .. }
            | Lock { key, .. }
            | IsLocked { key }
            | Unlock { key, .. }
            | Txn { key, .. } => Some(key),
            GetAll { .. } | PutAll { .. } => None,
        }
    }

    fn into_owned(self) -> MapOp<'static> {
        use MapOp::*;
        match self {
            Get { key } => Get { key: owned(key) },
            ContainsKey { key } => ContainsKey { key: owned(key) },
            GetEntryView { key } => GetEntryView { key: owned(key) },
            Put { key, value, thread_id, ttl_ms, max_idle_ms, answer } => {
                Put { key: owned(key), value: owned(value), thread_id, ttl_ms, max_idle_ms, answer }
            }
            PutIfAbsent { key, value, thread_id, ttl_ms, max_idle_ms } => {
                PutIfAbsent { key: owned(key), value: owned(value), thread_id, ttl_ms, max_idle_ms }
            }
            TryPut { key, value, thread_id, timeout_ms } => {
                TryPut { key: owned(key), value: owned(value), thread_id, timeout_ms }
            }
            Remove { key, thread_id, answer } => Remove { key: owned(key), thread_id, answer },
            RemoveIfSame { key, value, thread_id } => RemoveIfSame { key: owned(key), value: owned(value), thread_id },
            Replace { key, expected, value, thread_id } => {
                Replace { key: owned(key), expected: expected.map(owned), value: owned(value), thread_id }
            }
            Evict { key, thread_id } => Evict { key: owned(key), thread_id },
            SetTtl { key, ttl_ms } => SetTtl { key: owned(key), ttl_ms },
            GetAll { keys } => GetAll { keys: keys.into_iter().map(owned).collect() },
            PutAll { entries } => {
                PutAll { entries: entries.into_iter().map(|(key, value)| (owned(key), owned(value))).collect() }
            }
            Lock { key, thread_id, lease_ms, try_timeout_ms } => {
                Lock { key: owned(key), thread_id, lease_ms, try_timeout_ms }
            }
            IsLocked { key } => IsLocked { key: owned(key) },
            Unlock { key, thread_id } => Unlock { key: owned(key), thread_id },
            Txn { key, txn, thread_id, blocks_reads, op } => {
                Txn { key: owned(key), txn, thread_id, blocks_reads, op: op.into_owned() }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owned_request_equals_the_borrowed_one() {
        let key = vec![1u8, 2, 3];
        let borrowed = MapRequest {
            name: Cow::Borrowed("orders"),
            op: MapOp::Replace {
                key: Cow::Borrowed(&key),
                expected: Some(Cow::Borrowed(&key[..1])),
                value: Cow::Borrowed(&key[1..]),
                thread_id: 4,
            },
        };
        let owned = borrowed.clone().into_owned();
        assert_eq!(owned, borrowed);
        assert!(matches!(owned.name, Cow::Owned(_)));
        assert_eq!(owned.key(), Some(&key[..]));
        let get_all = MapOp::GetAll { keys: vec![Cow::Borrowed(&key[..])] };
        assert_eq!(get_all.key(), None);
    }
}
