//! JCache's typed key requests (in the partition of the key, or of a putAll's entries). No
//! wire format in them: a row decodes a message into them (`rows.rs`), the engine runs them.

use std::borrow::Cow;

/// A key and its value.
pub type Pair<'a> = (Cow<'a, [u8]>, Cow<'a, [u8]>);

/// One request on the cache `name` (with its manager's prefix, scoped to the tenant).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheRequest<'a> {
    pub name: Cow<'a, str>,
    pub op: CacheOp<'a>,
    /// The operation's completion id (−1: none), which its events carry.
    pub completion_id: i32,
    /// The operation's own expiry policy (Java-serialized), over the cache's.
    pub expiry: Option<Cow<'a, [u8]>>,
}

/// What a key request does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheOp<'a> {
    Get {
        key: Cow<'a, [u8]>,
    },
    ContainsKey {
        key: Cow<'a, [u8]>,
    },
    /// put and getAndPut (`answer_old`).
    Put {
        key: Cow<'a, [u8]>,
        value: Cow<'a, [u8]>,
        answer_old: bool,
    },
    PutIfAbsent {
        key: Cow<'a, [u8]>,
        value: Cow<'a, [u8]>,
    },
    /// replace (with or without the old value: answered as a serialized Boolean) and
    /// getAndReplace (`answer_old`: answered with the old value).
    Replace {
        key: Cow<'a, [u8]>,
        old: Option<Cow<'a, [u8]>>,
        value: Cow<'a, [u8]>,
        answer_old: bool,
    },
    /// remove (with or without the current value: a boolean) and getAndRemove (`answer_old`).
    Remove {
        key: Cow<'a, [u8]>,
        current: Option<Cow<'a, [u8]>>,
        answer_old: bool,
    },
    PutAll {
        entries: Vec<Pair<'a>>,
    },
    /// invoke: an entry processor, Java code the member cannot run.
    EntryProcessor {
        processor: Cow<'a, [u8]>,
    },
    /// setExpiryPolicy: the request's policy becomes these keys' own.
    SetExpiryPolicy {
        keys: Vec<Cow<'a, [u8]>>,
    },
    /// One batch of a partition's keys, or of its entries (`entries`).
    Iterate {
        index: Option<i32>,
        batch: i32,
        entries: bool,
    },
}
