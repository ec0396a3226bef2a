//! What every engine's operations give: replies, errors and waiter ids, with no wire format in
//! them; and [`Blob`], the serialized key or value their typed requests carry (each structure's
//! requests are in its folder, `engine/<structure>/request.rs`).
//!
//! A front end (today the Hazelcast protocol: a row decodes the request, `route/wire.rs`
//! encodes the answer) decodes a request once into its structure's typed request, borrowing
//! from its read buffer, runs it, and encodes the [`Reply`] the engine hands to its [`Replies`]
//! sink, or the [`OpError`]. Keys and values stay the serialized bytes the client sent (keys
//! compare by their bytes, as in Hazelcast).

use ferrogrid_protocol::codec::{EntryView, ReplicatedEntryView};
use ferrogrid_protocol::Uuid;
use ferrogrid_query::Value;
use ferrogrid_sql::plan::ColumnMeta;
use ferrogrid_sql::SqlError;
use std::borrow::Cow;

/// A serialized key or value (Hazelcast `Data`: partition hash, type id, payload).
pub type Blob<'a> = Cow<'a, [u8]>;

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
    /// A page of a replicated map's entry views and the cursor of the next page.
    EntryViews {
        cursor: Uuid,
        views: Vec<ReplicatedEntryView<'a>>,
    },
    Entries(Vec<(&'a [u8], &'a [u8])>),
    Int(i32),
    Long(i64),
    /// A list of values (or of keys).
    Values(Vec<&'a [u8]>),
    /// A map event journal's oldest and newest sequence in one partition.
    Sequences {
        oldest: i64,
        newest: i64,
    },
    /// A ringbuffer's readMany: the items with their sequences, and where the next read starts.
    ReadMany {
        items: Vec<(i64, &'a [u8])>,
        next_sequence: i64,
    },
    /// A list of keys, of values, or of entries (each key then its value) that the shares of a
    /// request over every partition gathered already framed, in merge order: the answer copies
    /// them once.
    FramedList(&'a [u8]),
    /// One page of a sorted query's result, and the anchors the client keeps for the pages
    /// after it: (page, key, value) of the last entry of each page it has seen, this one's too.
    Page {
        items: PageItems<'a>,
        anchors: Vec<(i32, &'a [u8], &'a [u8])>,
    },
    /// An aggregation's result, or null.
    Aggregated(Option<Vec<u8>>),
    /// A projection's result: one value (or null) per matching entry.
    Projected(Vec<Option<&'a [u8]>>),
    /// One batch of a map's iteration over a partition: the iteration pointers (index, size)
    /// to send back for the next batch, the keys, and their values when entries were asked for.
    Fetched {
        pointers: Vec<(i32, i32)>,
        keys: Vec<&'a [u8]>,
        values: Option<Vec<&'a [u8]>>,
    },
    /// One batch of an iteration with a query: each passing entry's projection (or null).
    FetchedQuery {
        pointers: Vec<(i32, i32)>,
        results: Vec<Option<Vec<u8>>>,
    },
    /// A listener's registration id.
    Registration(Uuid),
    /// A structure's frames as a client sent them (a cache's configuration), or null.
    Structure(Option<&'a [u8]>),
    /// A PN counter's value, the vector clock of the replica that answers (each replica's id
    /// and timestamp), and how many replicas the counter is configured with.
    Counter {
        value: i64,
        clock: Vec<(Option<Uuid>, i64)>,
        replica_count: i32,
    },
    /// The members known to hold a schema a client sent.
    SchemaHolders(Vec<Uuid>),
    /// A member's near-cache invalidation metadata: per map, the (partition, sequence) pairs of
    /// its owned partitions whose sequence is not 0; each owned partition's uuid.
    InvalidationMetadata {
        sequences: Vec<(&'a str, Vec<(i32, i64)>)>,
        uuids: Vec<(i32, Uuid)>,
    },
    /// A SQL statement's result.
    Statement(Statement),
    /// No answer: another request answers for this one (an `INSERT ... SELECT`'s writes), or no
    /// one waits for one.
    NoAnswer,
}

/// What one page of a sorted query holds: keys or values, or entries.
#[derive(Debug, Clone, PartialEq)]
pub enum PageItems<'a> {
    Values(Vec<&'a [u8]>),
    Entries(Vec<(&'a [u8], &'a [u8])>),
}

/// A SQL statement's result as its client reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// A query's columns and its first page of rows (`last`: no page follows; the rest wait in
    /// a cursor for the client's fetches).
    Rows { columns: Vec<ColumnMeta>, rows: Vec<Vec<Value>>, last: bool },
    /// A later page of a query's rows (Sql.Fetch's answer).
    Page { columns: Vec<ColumnMeta>, rows: Vec<Vec<Value>>, last: bool },
    /// What a DML or DDL statement answers when it succeeds.
    UpdateCount(i64),
    /// The statement's error, from `member` (the member that ran it): a result the client
    /// raises, not a failed request.
    Failed { error: SqlError, member: Uuid },
}

/// Where an operation's reply goes: the front end encodes it for its client.
pub trait Replies {
    fn reply(&mut self, reply: Reply<'_>);
}

/// Kinds of expected failure; the front end names each as its protocol does (Hazelcast: an
/// error code and a Java exception class, in `wire::error_code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A null where a value is required: a null key or value, or a query comparing with null
    /// (Java's NullPointerException).
    NullArgument,
    IllegalArgument,
    /// Unlock by a thread that does not hold the lock.
    NotLockOwner,
    /// The partition is migrating or not owned here; the client retries.
    PartitionMigrating,
    /// The cluster has only lite members: no partition has an owner, and none will until a
    /// data member joins or a lite member is promoted.
    NoDataMember,
    /// The object's state does not allow it (a queue full for addAll).
    IllegalState,
    /// Anything else the member refuses or cannot do (quotas, bounds, a result it cannot
    /// write): Hazelcast's generic HazelcastException.
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
    /// A query that cannot read or compare an attribute (an attribute a value does not have).
    Query,
    /// A query's result beyond its bounds: more results than the result size limit, or an
    /// answer larger than a message may be.
    QueryResultSizeExceeded,
    /// Bytes that cannot be read as what they should be (a predicate, a value a query reads,
    /// a value of a Compact schema the member does not hold), or a result that cannot be
    /// serialized.
    Serialization,
    /// An object's split-brain protection rule is not met on this member's side
    /// (`hazelcast.split-brain-protection`).
    SplitBrainProtection,
    /// Text that is not a number of the type a query compares it with.
    NumberFormat,
    /// A query's regular expression that does not compile.
    PatternSyntax,
    /// Text that is not the date or time a query compares it with.
    DateTimeParse,
    /// A configuration that conflicts with one the cluster has (a dynamic configuration of
    /// the same name that differs).
    InvalidConfiguration,
    /// Arithmetic Java refuses in an aggregation (a BigDecimal average with no exact result).
    Arithmetic,
    /// A transaction that cannot go on: unknown (never created, or already committed or
    /// rolled back) or over its bounds.
    Transaction,
    /// A transaction used or committed after its timeout, or that waited too long for a key's
    /// lock.
    TransactionTimedOut,
    /// A durable executor's result slot that holds another sequence than the one asked for.
    StaleTaskId,
    /// A scheduled executor's task that does not exist (never scheduled, or disposed).
    StaleTask,
    /// An executor asked for work after its shutdown.
    RejectedExecution,
    /// A JCache cache that was never created, or was destroyed.
    CacheNotExists,
    /// A cache's loader (Java code, which ferrogrid does not run) was needed.
    CacheLoader,
    /// A cache's writer (Java code) was needed.
    CacheWriter,
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

/// A serialized string (Hazelcast `Data`, type id −11): the keys and values of engine tests.
#[cfg(test)]
pub(crate) fn string_data(text: &str) -> Vec<u8> {
    let mut blob = vec![0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf5];
    blob.extend_from_slice(&(text.len() as i32).to_be_bytes());
    blob.extend_from_slice(text.as_bytes());
    blob
}
