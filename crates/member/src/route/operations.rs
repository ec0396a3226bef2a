//! The operation table: one row per message type the member serves, and nothing else in the
//! member classifies message types.
//!
//! A row says how a request is routed (the owner of the partition in its header, this
//! member's copy of that partition, every partition, the connection's reactor, or the member
//! link), its flags (writes, may add entries, may wait on a key lock, names a tenant-scoped
//! object) and, for partition-bound requests, its handler: the decoder that turns the wire
//! message into the typed request the engine runs ([`crate::engine::request::MapRequest`]). Dispatch,
//! tenant scoping, the data quota and the per-type counters all read the row, found with one
//! array index ([`lookup`]). A type without a row is answered with
//! `UnsupportedOperationException`.
//!
//! Adding an operation: a codec in `protocol/src/codec.rs`, a row here, and (for a partition
//! operation) a variant of the typed request with its decoder (`wire.rs`) and its execution.

use crate::cluster::peer;
use crate::engine::request::Request;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message, MessageType};
use std::sync::OnceLock;

/// Where a request runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// On the member and reactor owning the partition named in the request header.
    Partition,
    /// On this member's copy of the partition named in the request header, on the reactor
    /// owning it, whoever owns the partition in the cluster (a replicated map's reads: every
    /// member holds every partition's copy). Never forwarded.
    LocalCopy,
    /// Over every partition of the map (size, keySet, clear, listener registration, …):
    /// every reactor runs a share, other members too where the work is cluster-wide.
    EveryPartition,
    /// On the member the request names as its target replica (a CRDT: PN counter get and
    /// add), on the reactor of its name's partition there; forwarded to that member if it is
    /// another.
    Replica,
    /// Answered by the reactor that read it (client service: authentication, ping, proxies).
    Connection,
    /// Answered by the reactor that read it from state its member's reactors share, not from
    /// a partition (flake id generators); from a client it may go on to another member.
    Local,
    /// The SQL service (`sql.rs`), on the reactor that read it: a statement fans out over
    /// the partitions of the maps it names.
    Sql,
    /// Member-to-member traffic (only on member links).
    MemberLink,
}

/// What a request may do, for admission and bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    pub const NONE: Flags = Flags(0);
    /// Changes data (or locks).
    pub const WRITE: Flags = Flags(1);
    /// May add entries: refused for a tenant at its data quota.
    pub const ADDS_ENTRIES: Flags = Flags(2);
    /// May wait for a key lock another owner holds.
    pub const LOCK_AWARE: Flags = Flags(4);
    /// Names an object in its first variable frame, which a tenant's namespace scopes.
    pub const SCOPED: Flags = Flags(8);

    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Decodes a partition-bound request into the engine's typed request (of its structure).
pub type Decoder = for<'a> fn(&Message<'a>) -> Result<Request<'a>, DecodeError>;

/// One row of the table.
#[derive(Debug)]
pub struct Operation {
    pub message_type: MessageType,
    pub name: &'static str,
    pub route: Route,
    pub flags: Flags,
    /// The typed request's decoder (partition-bound operations only).
    pub decode: Option<Decoder>,
}

impl Operation {
    pub fn is(&self, flags: Flags) -> bool {
        self.flags.contains(flags)
    }
}

const W: Flags = Flags::WRITE;
const A: Flags = Flags::ADDS_ENTRIES;
const L: Flags = Flags::LOCK_AWARE;
const S: Flags = Flags::SCOPED;

macro_rules! row {
    ($codec:ident, $route:ident, $flags:expr) => {
        row!($codec, $route, $flags, None)
    };
    ($codec:ident, $route:ident, $flags:expr, $decode:expr) => {
        Operation {
            message_type: $codec::TYPE,
            name: stringify!($codec),
            route: Route::$route,
            flags: $flags,
            decode: $decode,
        }
    };
}

macro_rules! key_row {
    ($codec:ident, $flags:expr) => {
        row!($codec, Partition, $flags, Some(crate::route::wire::decode_map as Decoder))
    };
}

/// A partition row of a structure other than the map: `$decode` is its `wire` decoder.
macro_rules! object_row {
    ($codec:ident, $flags:expr, $decode:ident) => {
        row!($codec, Partition, $flags, Some(crate::route::wire::$decode as Decoder))
    };
}

/// A [`Route::LocalCopy`] row: `$decode` is its `wire` decoder.
macro_rules! local_row {
    ($codec:ident, $flags:expr, $decode:ident) => {
        row!($codec, LocalCopy, $flags, Some(crate::route::wire::$decode as Decoder))
    };
}

macro_rules! member_row {
    ($constant:path, $name:literal) => {
        Operation { message_type: $constant, name: $name, route: Route::MemberLink, flags: Flags::NONE, decode: None }
    };
}

/// Map key rows come first: a row's index below [`PARTITION_OPERATION_COUNT`] is its per-map
/// counter slot.
static TABLE: &[Operation] = &[
    key_row!(MapPut, W.with(A).with(L).with(S)),
    key_row!(MapGet, S),
    key_row!(MapRemove, W.with(L).with(S)),
    key_row!(MapReplace, W.with(L).with(S)),
    key_row!(MapReplaceIfSame, W.with(L).with(S)),
    key_row!(MapContainsKey, S),
    key_row!(MapRemoveIfSame, W.with(L).with(S)),
    key_row!(MapDelete, W.with(L).with(S)),
    key_row!(MapTryRemove, W.with(L).with(S)),
    key_row!(MapTryPut, W.with(A).with(L).with(S)),
    key_row!(MapPutTransient, W.with(A).with(L).with(S)),
    key_row!(MapPutIfAbsent, W.with(A).with(L).with(S)),
    key_row!(MapSet, W.with(A).with(L).with(S)),
    key_row!(MapGetEntryView, S),
    key_row!(MapEvict, W.with(L).with(S)),
    key_row!(MapGetAll, S),
    key_row!(MapPutAll, W.with(A).with(S)),
    key_row!(MapSetTtl, W.with(L).with(S)),
    key_row!(MapPutWithMaxIdle, W.with(A).with(L).with(S)),
    key_row!(MapPutTransientWithMaxIdle, W.with(A).with(L).with(S)),
    key_row!(MapPutIfAbsentWithMaxIdle, W.with(A).with(L).with(S)),
    key_row!(MapSetWithMaxIdle, W.with(A).with(L).with(S)),
    key_row!(MapLock, W.with(L).with(S)),
    key_row!(MapTryLock, W.with(L).with(S)),
    key_row!(MapIsLocked, S),
    key_row!(MapUnlock, W.with(S)),
    key_row!(MapForceUnlock, W.with(S)),
    // Map-wide.
    row!(MapSize, EveryPartition, S),
    row!(MapIsEmpty, EveryPartition, S),
    row!(MapContainsValue, EveryPartition, S),
    row!(MapClear, EveryPartition, W.with(S)),
    row!(MapKeySet, EveryPartition, S),
    row!(MapValues, EveryPartition, S),
    row!(MapEntrySet, EveryPartition, S),
    // Queries (fanout/query_ops.rs): every owned partition's entries, filtered by the predicate.
    row!(MapKeySetWithPredicate, EveryPartition, S),
    row!(MapValuesWithPredicate, EveryPartition, S),
    row!(MapEntriesWithPredicate, EveryPartition, S),
    row!(MapKeySetWithPagingPredicate, EveryPartition, S),
    row!(MapValuesWithPagingPredicate, EveryPartition, S),
    row!(MapEntriesWithPagingPredicate, EveryPartition, S),
    row!(MapAddIndex, EveryPartition, W.with(S)),
    // Aggregations and projections (fanout/aggregate_ops.rs).
    row!(MapAggregate, EveryPartition, S),
    row!(MapAggregateWithPredicate, EveryPartition, S),
    row!(MapProject, EveryPartition, S),
    row!(MapProjectWithPredicate, EveryPartition, S),
    row!(MapEvictAll, EveryPartition, W.with(S)),
    row!(MapFlush, EveryPartition, S),
    row!(MapAddEntryListener, EveryPartition, S),
    row!(MapAddEntryListenerToKey, EveryPartition, S),
    row!(MapAddEntryListenerWithPredicate, EveryPartition, S),
    row!(MapAddEntryListenerToKeyWithPredicate, EveryPartition, S),
    row!(MapAddNearCacheInvalidationListener, EveryPartition, S),
    row!(MapRemoveEntryListener, EveryPartition, S),
    // Queue: in the partition of its name.
    object_row!(QueueOffer, W.with(A).with(S), decode_queue),
    object_row!(QueuePut, W.with(A).with(S), decode_queue),
    object_row!(QueueAddAll, W.with(A).with(S), decode_queue),
    object_row!(QueuePoll, W.with(S), decode_queue),
    object_row!(QueueTake, W.with(S), decode_queue),
    object_row!(QueueRemove, W.with(S), decode_queue),
    object_row!(QueueDrainTo, W.with(S), decode_queue),
    object_row!(QueueDrainToMaxSize, W.with(S), decode_queue),
    object_row!(QueueClear, W.with(S), decode_queue),
    object_row!(QueueCompareAndRemoveAll, W.with(S), decode_queue),
    object_row!(QueueCompareAndRetainAll, W.with(S), decode_queue),
    object_row!(QueuePeek, S, decode_queue),
    object_row!(QueueSize, S, decode_queue),
    object_row!(QueueIsEmpty, S, decode_queue),
    object_row!(QueueRemainingCapacity, S, decode_queue),
    object_row!(QueueIterator, S, decode_queue),
    object_row!(QueueContains, S, decode_queue),
    object_row!(QueueContainsAll, S, decode_queue),
    row!(QueueAddListener, EveryPartition, S),
    row!(QueueRemoveListener, EveryPartition, S),
    // MultiMap: in the partition of the key (work in progress: key operations only).
    object_row!(MultiMapPut, W.with(A).with(S), decode_multimap),
    object_row!(MultiMapPutAll, W.with(A).with(S), decode_multimap),
    object_row!(MultiMapRemove, W.with(S), decode_multimap),
    object_row!(MultiMapDelete, W.with(S), decode_multimap),
    object_row!(MultiMapRemoveEntry, W.with(S), decode_multimap),
    object_row!(MultiMapGet, S, decode_multimap),
    object_row!(MultiMapContainsKey, S, decode_multimap),
    object_row!(MultiMapContainsEntry, S, decode_multimap),
    object_row!(MultiMapValueCount, S, decode_multimap),
    object_row!(MultiMapLock, S, decode_multimap),
    object_row!(MultiMapTryLock, S, decode_multimap),
    object_row!(MultiMapUnlock, S, decode_multimap),
    object_row!(MultiMapForceUnlock, S, decode_multimap),
    object_row!(MultiMapIsLocked, S, decode_multimap),
    row!(MultiMapKeySet, EveryPartition, S),
    row!(MultiMapValues, EveryPartition, S),
    row!(MultiMapEntrySet, EveryPartition, S),
    row!(MultiMapSize, EveryPartition, S),
    row!(MultiMapContainsValue, EveryPartition, S),
    row!(MultiMapClear, EveryPartition, W.with(S)),
    row!(MultiMapAddEntryListener, EveryPartition, S),
    row!(MultiMapAddEntryListenerToKey, EveryPartition, S),
    row!(MultiMapRemoveEntryListener, EveryPartition, S),
    // ReplicatedMap: key writes on the owner of the key's partition, which sends them to every
    // member; key reads on the copy of the member asked; the map-wide reads over this member's
    // copy, the map-wide writes (putAll, clear) on every member's owned partitions.
    object_row!(ReplicatedMapPut, W.with(A).with(S), decode_replicated_map),
    object_row!(ReplicatedMapRemove, W.with(S), decode_replicated_map),
    local_row!(ReplicatedMapGet, S, decode_replicated_map),
    local_row!(ReplicatedMapContainsKey, S, decode_replicated_map),
    row!(ReplicatedMapSize, EveryPartition, S),
    row!(ReplicatedMapIsEmpty, EveryPartition, S),
    row!(ReplicatedMapContainsValue, EveryPartition, S),
    row!(ReplicatedMapKeySet, EveryPartition, S),
    row!(ReplicatedMapValues, EveryPartition, S),
    row!(ReplicatedMapEntrySet, EveryPartition, S),
    row!(ReplicatedMapPutAll, EveryPartition, W.with(A).with(S)),
    row!(ReplicatedMapClear, EveryPartition, W.with(S)),
    row!(ReplicatedMapAddEntryListener, EveryPartition, S),
    row!(ReplicatedMapAddEntryListenerToKey, EveryPartition, S),
    row!(ReplicatedMapAddEntryListenerWithPredicate, EveryPartition, S),
    row!(ReplicatedMapAddEntryListenerToKeyWithPredicate, EveryPartition, S),
    row!(ReplicatedMapRemoveEntryListener, EveryPartition, S),
    // List and set: in the partition of their name.
    object_row!(ListAdd, W.with(A).with(S), decode_collection),
    object_row!(ListAddAll, W.with(A).with(S), decode_collection),
    object_row!(ListAddWithIndex, W.with(A).with(S), decode_collection),
    object_row!(ListAddAllWithIndex, W.with(A).with(S), decode_collection),
    object_row!(ListSet, W.with(A).with(S), decode_collection),
    object_row!(ListRemove, W.with(S), decode_collection),
    object_row!(ListRemoveWithIndex, W.with(S), decode_collection),
    object_row!(ListCompareAndRemoveAll, W.with(S), decode_collection),
    object_row!(ListCompareAndRetainAll, W.with(S), decode_collection),
    object_row!(ListClear, W.with(S), decode_collection),
    object_row!(ListSize, S, decode_collection),
    object_row!(ListIsEmpty, S, decode_collection),
    object_row!(ListContains, S, decode_collection),
    object_row!(ListContainsAll, S, decode_collection),
    object_row!(ListGetAll, S, decode_collection),
    object_row!(ListIterator, S, decode_collection),
    object_row!(ListListIterator, S, decode_collection),
    object_row!(ListGet, S, decode_collection),
    object_row!(ListIndexOf, S, decode_collection),
    object_row!(ListLastIndexOf, S, decode_collection),
    object_row!(ListSub, S, decode_collection),
    row!(ListAddListener, EveryPartition, S),
    row!(ListRemoveListener, EveryPartition, S),
    object_row!(SetAdd, W.with(A).with(S), decode_collection),
    object_row!(SetAddAll, W.with(A).with(S), decode_collection),
    object_row!(SetRemove, W.with(S), decode_collection),
    object_row!(SetCompareAndRemoveAll, W.with(S), decode_collection),
    object_row!(SetCompareAndRetainAll, W.with(S), decode_collection),
    object_row!(SetClear, W.with(S), decode_collection),
    object_row!(SetSize, S, decode_collection),
    object_row!(SetIsEmpty, S, decode_collection),
    object_row!(SetContains, S, decode_collection),
    object_row!(SetContainsAll, S, decode_collection),
    object_row!(SetGetAll, S, decode_collection),
    row!(SetAddListener, EveryPartition, S),
    row!(SetRemoveListener, EveryPartition, S),
    // Ringbuffer: in the partition of its name.
    object_row!(RingbufferAdd, W.with(A).with(S), decode_ringbuffer),
    object_row!(RingbufferAddAll, W.with(A).with(S), decode_ringbuffer),
    object_row!(RingbufferReadOne, S, decode_ringbuffer),
    object_row!(RingbufferReadMany, S, decode_ringbuffer),
    object_row!(RingbufferSize, S, decode_ringbuffer),
    object_row!(RingbufferTailSequence, S, decode_ringbuffer),
    object_row!(RingbufferHeadSequence, S, decode_ringbuffer),
    object_row!(RingbufferCapacity, S, decode_ringbuffer),
    object_row!(RingbufferRemainingCapacity, S, decode_ringbuffer),
    // Topic: published by the owner of its name's partition; listeners on every reactor.
    object_row!(TopicPublish, S, decode_topic),
    object_row!(TopicPublishAll, S, decode_topic),
    row!(TopicAddMessageListener, EveryPartition, S),
    row!(TopicRemoveMessageListener, EveryPartition, S),
    // PN counter: on the target replica the client chose; the configured replica count from
    // any member.
    row!(PnCounterGet, Replica, S, Some(crate::route::wire::decode_pn_counter as Decoder)),
    row!(PnCounterAdd, Replica, W.with(S), Some(crate::route::wire::decode_pn_counter as Decoder)),
    row!(PnCounterGetConfiguredReplicaCount, Connection, S),
    // Flake id generators: member-wide state, answered where the request is read.
    row!(FlakeIdGeneratorNewIdBatch, Local, S),
    // SQL: statements run where they are read (scans and writes fan out); cursors belong to
    // the connection that opened them.
    row!(SqlExecute, Sql, W.with(S)),
    row!(SqlFetch, Sql, S),
    row!(SqlClose, Sql, S),
    row!(SqlMappingDdl, Sql, S),
    // Client service.
    row!(ClientAuthentication, Connection, Flags::NONE),
    row!(ClientAuthenticationCustom, Connection, Flags::NONE),
    row!(ClientAddClusterViewListener, Connection, Flags::NONE),
    row!(ClientLocalBackupListener, Connection, Flags::NONE),
    row!(ClientPing, Connection, Flags::NONE),
    row!(ClientStatistics, Connection, Flags::NONE),
    row!(ClientTriggerPartitionAssignment, Connection, Flags::NONE),
    row!(ClientCreateProxy, Connection, S),
    row!(ClientCreateProxies, Connection, Flags::NONE),
    row!(ClientDestroyProxy, Connection, W.with(S)),
    row!(ClientGetDistributedObjects, Connection, Flags::NONE),
    row!(ClientAddDistributedObjectListener, Connection, Flags::NONE),
    row!(ClientRemoveDistributedObjectListener, Connection, Flags::NONE),
    row!(ClientAddPartitionLostListener, Connection, Flags::NONE),
    row!(ClientRemovePartitionLostListener, Connection, Flags::NONE),
    row!(MapAddPartitionLostListener, Connection, S),
    // Compact schemas: kept by every member (schemas.rs).
    row!(ClientSendSchema, Connection, Flags::NONE),
    row!(ClientFetchSchema, Connection, Flags::NONE),
    row!(ClientSendAllSchemas, Connection, Flags::NONE),
    row!(MapRemovePartitionLostListener, Connection, S),
    // Member links.
    member_row!(peer::HELLO, "MemberHello"),
    member_row!(peer::CONTROL, "MemberControl"),
    member_row!(peer::BACKUP, "MemberBackup"),
    member_row!(peer::BACKUP_ACK, "MemberBackupAck"),
    member_row!(peer::SNAPSHOT, "MemberSnapshot"),
    member_row!(peer::WIDE, "MemberWide"),
    member_row!(peer::FORWARD, "MemberForward"),
    member_row!(peer::CLIENT_GONE, "MemberClientGone"),
    member_row!(peer::SNAPSHOT_REQUEST, "MemberSnapshotRequest"),
    member_row!(peer::FORWARD_AGAIN, "MemberForwardAgain"),
    member_row!(peer::TOPIC, "MemberTopic"),
    member_row!(peer::OBJECT, "MemberObject"),
    member_row!(peer::LISTEN, "MemberListen"),
    member_row!(peer::UNLISTEN, "MemberUnlisten"),
    member_row!(peer::PARTITION_LOST, "MemberPartitionLost"),
    member_row!(peer::OBJECTS, "MemberObjects"),
    member_row!(peer::SCHEMAS, "MemberSchemas"),
    member_row!(peer::SCHEMAS_ACK, "MemberSchemasAck"),
    member_row!(peer::INDEXES, "MemberIndexes"),
    member_row!(peer::MAPPINGS, "MemberMappings"),
    member_row!(peer::PN_COUNTER_STATE, "MemberPnCounterState"),
    member_row!(peer::REPLICATED_CHANGES, "MemberReplicatedChanges"),
    member_row!(peer::REPLICATED_SYNC, "MemberReplicatedSync"),
    member_row!(peer::REPLICATED_VERSIONS, "MemberReplicatedVersions"),
    member_row!(peer::REPLICATED_SYNC_REQUEST, "MemberReplicatedSyncRequest"),
];

/// Map key rows (the first rows of the table): the size of per-map counter arrays.
pub const PARTITION_OPERATION_COUNT: usize = 27;

/// Member-link types are service 0x7F, method 0, with the kind byte naming the message.
const MEMBER_SERVICE: u32 = 0x7F;
/// Slots of the index: one per (service, method) pair of client requests, then one per
/// member-link message.
const INDEX_SLOTS: usize = (1 << 16) + 256;

/// The row index of each slot, +1 (0: no row). 64 KiB, built once.
fn index() -> &'static [u8] {
    static INDEX: OnceLock<Box<[u8]>> = OnceLock::new();
    INDEX.get_or_init(|| {
        assert!(TABLE.len() < u8::MAX as usize, "row indexes fit a byte");
        let mut index = vec![0u8; INDEX_SLOTS].into_boxed_slice();
        for (row, operation) in TABLE.iter().enumerate() {
            let slot = &mut index[slot_of(operation.message_type).expect("a request or member type")];
            assert_eq!(*slot, 0, "{} has two rows", operation.name);
            *slot = row as u8 + 1;
        }
        index
    })
}

/// A client request (kind byte 0x00) is found by its (service, method) pair; a member-link
/// message by its kind byte. Responses and events have no slot.
fn slot_of(message_type: MessageType) -> Option<usize> {
    let ty = message_type.0 as u32;
    let (service, method, kind) = (ty >> 16, ty >> 8 & 0xff, ty & 0xff);
    match (service, method, kind) {
        (0x100.., _, _) => None,
        (MEMBER_SERVICE, 0, kind) if kind != 0 => Some((1 << 16) + kind as usize),
        (_, _, 0) => Some((ty >> 8) as usize),
        _ => None,
    }
}

/// The row of a request type, and its index, in one array read.
pub fn lookup(message_type: MessageType) -> Option<(usize, &'static Operation)> {
    let row = index()[slot_of(message_type)?];
    (row != 0).then(|| (row as usize - 1, &TABLE[row as usize - 1]))
}

/// The row of a request type.
pub fn row(message_type: MessageType) -> Option<&'static Operation> {
    lookup(message_type).map(|(_, operation)| operation)
}

/// The message type counted in per-map counter `slot`.
pub fn counted_type(slot: usize) -> MessageType {
    debug_assert!(slot < PARTITION_OPERATION_COUNT);
    TABLE[slot].message_type
}

/// Every row (for tests and documentation).
#[cfg(test)]
pub fn rows() -> &'static [Operation] {
    TABLE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_key_rows_come_first_and_are_counted() {
        let is_map = |row: &Operation| row.message_type.0 >> 16 == 0x01;
        let counted = TABLE.iter().take_while(|row| row.route == Route::Partition && is_map(row)).count();
        assert_eq!(counted, PARTITION_OPERATION_COUNT);
        let rest = &TABLE[PARTITION_OPERATION_COUNT..];
        assert!(rest.iter().all(|row| !(row.route == Route::Partition && is_map(row))));
        let decoded = |row: &Operation| matches!(row.route, Route::Partition | Route::Replica | Route::LocalCopy);
        assert!(TABLE.iter().all(|row| decoded(row) == row.decode.is_some()));
    }

    #[test]
    fn every_row_is_found_at_its_index_and_nothing_else_is() {
        for (index, operation) in TABLE.iter().enumerate() {
            let (found, row) = lookup(operation.message_type).expect("a row");
            assert_eq!((found, row.name), (index, operation.name));
        }
        // Responses, events, unknown methods and unknown services have no row.
        assert!(lookup(MessageType(MapPut::TYPE.0 | 1)).is_none());
        assert!(lookup(MessageType(0x013F02)).is_none());
        assert!(lookup(MessageType(0x1D0400)).is_none(), "a PN counter method Hazelcast does not have");
        assert!(lookup(MessageType(0x01FF00)).is_none());
        assert!(lookup(MessageType(-1)).is_none());
    }

    #[test]
    fn flags_say_what_the_quota_and_the_namespaces_need() {
        let adds: Vec<&str> = TABLE.iter().filter(|row| row.is(Flags::ADDS_ENTRIES)).map(|row| row.name).collect();
        assert_eq!(adds.len(), 26, "{adds:?}");
        assert!(row(MapGet::TYPE).is_some_and(|row| !row.is(Flags::WRITE) && row.is(Flags::SCOPED)));
        assert!(row(ClientDestroyProxy::TYPE).is_some_and(|row| row.is(Flags::SCOPED)));
        assert!(row(ClientPing::TYPE).is_some_and(|row| !row.is(Flags::SCOPED)));
        let named =
            TABLE.iter().filter(|row| matches!(row.message_type.0 >> 16, 0x01..=0x06 | 0x0D | 0x17 | 0x1C | 0x1D));
        assert!(
            named.into_iter().all(|row| row.is(Flags::SCOPED)),
            "every map, multimap, queue, topic, list, set, replicated map, ringbuffer, flake id generator and PN counter \
             request is scoped"
        );
    }
}
