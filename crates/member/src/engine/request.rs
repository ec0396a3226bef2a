//! Typed requests, replies and errors of the map engine: what an operation takes and gives,
//! with no wire format in them.
//!
//! A front end (today the Hazelcast protocol adapter in `wire.rs`) decodes a request once into
//! a [`MapRequest`] borrowing from its read buffer, runs it, and encodes the [`Reply`] the
//! engine hands to its [`Replies`] sink, or the [`OpError`]. Keys and values stay the
//! serialized bytes the client sent (keys compare by their bytes, as in Hazelcast). A request
//! that must outlive its buffer (one parked on a key lock) is made owned with
//! [`MapRequest::into_owned`].

use ferrogrid_protocol::codec::EntryView;
use ferrogrid_protocol::Uuid;
use std::borrow::Cow;

/// A serialized key or value (Hazelcast `Data`: partition hash, type id, payload).
pub type Blob<'a> = Cow<'a, [u8]>;

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
            | Unlock { key, .. } => Some(key),
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
        }
    }
}

/// One queue request (the queue lives in the partition of its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRequest<'a> {
    /// The queue's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: QueueOp<'a>,
}

/// The queue operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueOp<'a> {
    /// offer (`answers_bool`; `timeout_ms` 0: do not wait) and put (waits until there is room:
    /// `timeout_ms` < 0, answers nothing).
    Offer {
        value: Blob<'a>,
        timeout_ms: i64,
        answers_bool: bool,
    },
    /// poll (`timeout_ms` 0: do not wait) and take (`timeout_ms` < 0).
    Poll {
        timeout_ms: i64,
    },
    Peek,
    Size,
    IsEmpty,
    RemainingCapacity,
    /// The items in order, not removed.
    Iterator,
    Contains {
        value: Blob<'a>,
    },
    ContainsAll {
        values: Vec<Blob<'a>>,
    },
    /// The first equal item.
    Remove {
        value: Blob<'a>,
    },
    /// drainTo (`max` None) and drainToMaxSize.
    Drain {
        max: Option<i32>,
    },
    Clear,
    AddAll {
        values: Vec<Blob<'a>>,
    },
    RemoveAll {
        values: Vec<Blob<'a>>,
    },
    RetainAll {
        values: Vec<Blob<'a>>,
    },
}

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
            | IsLocked { key } => Some(key),
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
}

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
}

impl ReplicatedMapOp<'_> {
    /// Whether it changes the map (and so runs on the partition's owner).
    pub fn is_write(&self) -> bool {
        matches!(self, ReplicatedMapOp::Put { .. } | ReplicatedMapOp::Remove { .. })
    }
}

/// One list or set request (the collection lives in the partition of its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionRequest<'a> {
    /// The collection's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    /// A set (unique items, no positions) or a list.
    pub set: bool,
    pub op: CollectionOp<'a>,
}

/// The operations of lists and sets; those with an index are the list's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectionOp<'a> {
    Size,
    IsEmpty,
    Contains {
        value: Blob<'a>,
    },
    ContainsAll {
        values: Vec<Blob<'a>>,
    },
    /// add (at the end, or at `index` of a list: answers nothing).
    Add {
        value: Blob<'a>,
        index: Option<i32>,
    },
    /// addAll (at the end, or from `index` of a list).
    AddAll {
        values: Vec<Blob<'a>>,
        index: Option<i32>,
    },
    /// The first equal item.
    Remove {
        value: Blob<'a>,
    },
    RemoveAll {
        values: Vec<Blob<'a>>,
    },
    RetainAll {
        values: Vec<Blob<'a>>,
    },
    Clear,
    /// getAll and iterator: every item in order.
    GetAll,
    Get {
        index: i32,
    },
    /// set: the item at `index` replaced; answers the old one.
    Replace {
        index: i32,
        value: Blob<'a>,
    },
    RemoveAt {
        index: i32,
    },
    IndexOf {
        value: Blob<'a>,
        last: bool,
    },
    /// subList and listIterator (from `from` to the end: `to` −1), with Hazelcast's −1
    /// bounds: (−1, −1) is the whole list.
    Sub {
        from: i32,
        to: i32,
    },
}

/// One topic request: messages to publish (the topic's name's partition owner publishes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicRequest<'a> {
    /// The topic's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    /// publish (one) or publishAll.
    pub messages: Vec<Blob<'a>>,
}

/// What a PN counter request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PnCounterOp {
    Get,
    /// Adds `delta` (negative: subtracts) and answers the value before or after it.
    Add {
        delta: i64,
        get_before_update: bool,
    },
}

/// One PN counter request, for the replica its client chose (`engine/pn_counter/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PnCounterRequest<'a> {
    /// The counter's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: PnCounterOp,
    /// The vector clock the client last observed: (replica, timestamp) pairs.
    pub observed: Vec<(Option<Uuid>, i64)>,
    /// The member the client sent it to (None: a null uuid, which names no member).
    pub target: Option<Uuid>,
}

/// A request the engine runs: one structure's typed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request<'a> {
    Map(MapRequest<'a>),
    Queue(QueueRequest<'a>),
    Ringbuffer(RingbufferRequest<'a>),
    Topic(TopicRequest<'a>),
    Collection(CollectionRequest<'a>),
    MultiMap(MultiMapRequest<'a>),
    PnCounter(PnCounterRequest<'a>),
    ReplicatedMap(ReplicatedMapRequest<'a>),
}

/// What an operation answers; values borrow from the partition until encoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<'a> {
    Empty,
    Bool(bool),
    /// A value, or null.
    Value(Option<&'a [u8]>),
    /// delete's answer (whether something was removed).
    Deleted(bool),
    EntryView(Option<EntryView<'a>>),
    Entries(Vec<(&'a [u8], &'a [u8])>),
    Int(i32),
    Long(i64),
    /// A list of values.
    Values(Vec<&'a [u8]>),
    /// A ringbuffer's readMany: the items with their sequences, and where the next read starts.
    ReadMany {
        items: Vec<(i64, &'a [u8])>,
        next_sequence: i64,
    },
}

/// Where an operation's reply goes: the front end encodes it for its client.
pub trait Replies {
    fn reply(&mut self, reply: Reply<'_>);
}

/// Kinds of expected failure; the front end names each as its protocol does (Hazelcast: an
/// error code and a Java exception class, in `wire::error_code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A null key or value.
    NullArgument,
    IllegalArgument,
    /// Unlock by a thread that does not hold the lock.
    NotLockOwner,
    /// The partition is migrating or not owned here; the client retries.
    PartitionMigrating,
    /// The object's state does not allow it (a queue full for addAll).
    IllegalState,
    /// Anything else the member refuses (quotas, bounds).
    Refused,
    /// A ringbuffer read of a sequence older than its head: the item is gone.
    StaleSequence,
    /// Something ferrogrid does not do (a ringbuffer filter, a Java function).
    Unsupported,
    /// A value of the wrong type where the member expects another (Java's ClassCastException).
    ClassCast,
    /// The object was destroyed while the request waited on it.
    Destroyed,
    /// A list index outside the list.
    IndexOutOfBounds,
    /// A CRDT request for a member that is not one of the object's replicas.
    TargetNotReplica,
    /// A CRDT replica whose state is older than what the client already observed.
    ConsistencyLost,
    /// A request naming a member that is not in the member list.
    TargetNotMember,
    /// What Hazelcast answers when its own code recurses without end (a PN counter add of
    /// Long.MIN_VALUE); ferrogrid answers the same error instead of a value.
    StackOverflow,
}

/// A request that is well-formed but cannot be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub kind: ErrorKind,
    pub message: String,
}

impl OpError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> OpError {
        OpError { kind, message: message.into() }
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

/// A request waiting in an engine (for a queue item or room, a ringbuffer item, a key's lock):
/// an opaque id the partition's owner hands out when the request parks and resolves to where
/// its answer goes (unique within its partition, never reused). Engines hold only this, never
/// a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WaiterId(pub u64);

/// Where an engine's waiting requests are answered (the partition's owner, which knows whose
/// each id is; a test's recorder).
pub trait Waiters {
    /// Whether the request has no one left to answer (its connection closed); if so its id is
    /// forgotten: the engine drops the waiter and neither serves nor answers it.
    fn drop_if_gone(&mut self, id: WaiterId) -> bool;

    /// Answers a waiting request and forgets its id (each waiter is answered or failed once).
    fn answer(&mut self, id: WaiterId, reply: Reply<'_>);

    /// Fails a waiting request with `failure` and forgets its id.
    fn fail(&mut self, id: WaiterId, failure: OpError);
}

/// A [`Waiters`] for engine tests: records each answer as text (`Ok(reply)`, `Err(failure)`);
/// the ids in `gone` have
/// departed, and are recorded in `dropped` when an engine drops them.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct RecordedWaiters {
    pub answers: Vec<(WaiterId, String)>,
    pub gone: Vec<WaiterId>,
    pub dropped: Vec<WaiterId>,
}

#[cfg(test)]
impl Waiters for RecordedWaiters {
    fn drop_if_gone(&mut self, id: WaiterId) -> bool {
        let gone = self.gone.contains(&id);
        if gone {
            self.dropped.push(id);
        }
        gone
    }

    fn answer(&mut self, id: WaiterId, reply: Reply<'_>) {
        assert!(self.answers.iter().all(|(answered, _)| *answered != id), "{id:?} answered twice");
        self.answers.push((id, format!("Ok({reply:?})")));
    }

    fn fail(&mut self, id: WaiterId, failure: OpError) {
        assert!(self.answers.iter().all(|(answered, _)| *answered != id), "{id:?} answered twice");
        self.answers.push((id, format!("Err({failure:?})")));
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
