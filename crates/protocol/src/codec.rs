//! Every message ferrogrid understands, declared once.
//!
//! `messages!` generates, per entry, a struct with its fields plus `decode` (from a
//! [`Message`]) and `encode` (append to a buffer). Requests and events carry their type id;
//! responses are shapes shared by many requests, so their type id is given when encoding
//! (`Request::RESPONSE`). Fixed fields are packed in the initial frame in declaration order;
//! `trailing` fixed fields are optional (older peers omit them); `added` fixed fields were added
//! in a later protocol version: always encoded, and decoded as their default when an older peer
//! omits them; `var` fields follow as frames. The initial frame holds the fixed fields, then the
//! `added` ones, then the `trailing` ones.

use crate::data::Data;
use crate::frame::DecodeError;
use crate::message::*;
use crate::sql::{SqlColumnMetadata, SqlError, SqlPage, SqlQueryId};
use crate::types::{MessageType, Uuid};

mod structures;

pub use structures::*;

/// Header layout of the three message kinds.
pub trait Kind {
    const HEADER_SIZE: usize;
}
#[derive(Debug)]
pub struct Request;
#[derive(Debug)]
pub struct Response;
#[derive(Debug)]
pub struct Event;
impl Kind for Request {
    const HEADER_SIZE: usize = REQUEST_HEADER_SIZE;
}
impl Kind for Response {
    const HEADER_SIZE: usize = RESPONSE_HEADER_SIZE;
}
impl Kind for Event {
    const HEADER_SIZE: usize = REQUEST_HEADER_SIZE;
}

macro_rules! messages {
    ($(
        $(#[$doc:meta])*
        $kind:ident $name:ident $(<$lt:lifetime>)? $(= $id:literal)? {
            $($fixed:ident : $fixed_ty:ty),* $(,)?
            $(; trailing $($trailing:ident : $trailing_ty:ty),* $(,)?)?
            $(; added $($added:ident : $added_ty:ty = $default:expr),* $(,)?)?
            $(; var $($var:ident : $var_ty:ty),* $(,)?)?
        }
    )*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name $(<$lt>)? {
            $(pub $fixed: $fixed_ty,)*
            $($(pub $trailing: Option<$trailing_ty>,)*)?
            $($(pub $added: $added_ty,)*)?
            $($(pub $var: $var_ty,)*)?
        }

        impl $(<$lt>)? $name $(<$lt>)? {
            $(pub const TYPE: MessageType = MessageType($id);
              pub const RESPONSE: MessageType = MessageType($id | 1);)?

            /// Decodes the message's fields; fails on missing or malformed fields.
            #[allow(unused_mut, unused_variables)]
            pub fn decode(message: &Message $(<$lt>)?) -> Result<Self, DecodeError> {
                let mut fixed = message.fixed(<$kind as Kind>::HEADER_SIZE)?;
                let mut reader = message.reader();
                $(let $fixed = fixed.read::<$fixed_ty>()?;)*
                $($(let $added = fixed.read_optional::<$added_ty>().unwrap_or($default);)*)?
                $($(let $trailing = fixed.read_optional::<$trailing_ty>();)*)?
                $($(let $var = <$var_ty as VarField>::read(&mut reader)?;)*)?
                Ok($name { $($fixed,)* $($($trailing,)*)? $($($added,)*)? $($($var,)*)? })
            }

            // `added` fields are written like fixed ones, after them.
            messages!(@encode $kind $(= $id)?; $($fixed,)* $($($added,)*)?; $($($trailing),*)?; $($($var),*)?);
        }
    )*

        /// The name of a request or event type declared in the table (e.g. "MapGet").
        pub fn message_name(message_type: MessageType) -> Option<&'static str> {
            match message_type.0 {
                $($($id => Some(stringify!($name)),)?)*
                _ => None,
            }
        }
    };

    (@encode Request = $id:literal; $($fixed:ident,)*; $($trailing:ident),*; $($var:ident),*) => {
        /// Appends this request (flags: unfragmented, plus `extra_flags`).
        pub fn encode(&self, out: &mut Vec<u8>, correlation_id: i64, partition_id: i32, extra_flags: u16) -> usize {
            let mut writer = MessageWriter::request(out, Self::TYPE, correlation_id, partition_id, extra_flags);
            messages!(@body self writer; $($fixed,)*; $($trailing),*; $($var),*)
        }
    };
    (@encode Event = $id:literal; $($fixed:ident,)*; $($trailing:ident),*; $($var:ident),*) => {
        /// Appends this event with the registration's correlation id.
        pub fn encode(&self, out: &mut Vec<u8>, correlation_id: i64, partition_id: i32) -> usize {
            let mut writer = MessageWriter::event(out, Self::TYPE, correlation_id, partition_id);
            messages!(@body self writer; $($fixed,)*; $($trailing),*; $($var),*)
        }
    };
    (@encode Event; $($fixed:ident,)*; $($trailing:ident),*; $($var:ident),*) => {
        /// Appends this event as `message_type` with the registration's correlation id.
        pub fn encode(&self, out: &mut Vec<u8>, message_type: MessageType, correlation_id: i64, partition_id: i32) -> usize {
            let mut writer = MessageWriter::event(out, message_type, correlation_id, partition_id);
            messages!(@body self writer; $($fixed,)*; $($trailing),*; $($var),*)
        }
    };
    (@encode Response; $($fixed:ident,)*; $($trailing:ident),*; $($var:ident),*) => {
        /// Appends this response as `message_type` (the request's `RESPONSE`).
        pub fn encode(&self, out: &mut Vec<u8>, message_type: MessageType, correlation_id: i64, backup_acks: u8) -> usize {
            let mut writer = MessageWriter::response(out, message_type, correlation_id, backup_acks);
            messages!(@body self writer; $($fixed,)*; $($trailing),*; $($var),*)
        }
    };
    (@body $self:ident $writer:ident; $($fixed:ident,)*; $($trailing:ident),*; $($var:ident),*) => {{
        #[allow(clippy::let_and_return, unused_mut)]
        let _ = &mut $writer;
        $($writer.fixed(&$self.$fixed);)*
        $(if let Some(value) = &$self.$trailing { $writer.fixed(value); })*
        $($writer.var(&$self.$var);)*
        $writer.finish()
    }};
}

// ---------------------------------------------------------------------------------------
// The table.

mod cache;
pub use cache::*;

/// The name of a request or event type declared here or in the Cache service's table.
pub fn any_message_name(message_type: MessageType) -> Option<&'static str> {
    message_name(message_type).or_else(|| cache::message_name(message_type))
}

messages! {
    // ----- Client service (0x00) -----
    /// First message on every connection.
    Request ClientAuthentication<'a> = 0x000100 {
        uuid: Option<Uuid>, serialization_version: i8;
        trailing routing_mode: i8, cp_direct_to_leader_routing: bool;
        var cluster_name: &'a str, username: Option<&'a str>, password: Option<&'a str>,
            client_type: &'a str, client_hazelcast_version: &'a str, client_name: &'a str,
            labels: Vec<&'a str>
    }
    /// Authentication with an opaque credentials token.
    Request ClientAuthenticationCustom<'a> = 0x000200 {
        uuid: Option<Uuid>, serialization_version: i8;
        trailing routing_mode: i8, cp_direct_to_leader_routing: bool;
        var cluster_name: &'a str, credentials: Bytes<'a>, client_type: &'a str,
            client_hazelcast_version: &'a str, client_name: &'a str, labels: Vec<&'a str>
    }
    /// Answer to both authentication requests.
    Response AuthenticationResponse<'a> {
        status: u8, member_uuid: Option<Uuid>, serialization_version: i8, partition_count: i32,
        cluster_id: Option<Uuid>, failover_supported: bool;
        trailing member_list_version: i32, partition_list_version: i32;
        var address: Option<Address<'a>>, server_hazelcast_version: &'a str,
            tpc_ports: Option<Packed<i32>>, tpc_token: Option<Bytes<'a>>,
            member_infos: Vec<MemberInfo<'a>>, partitions: PartitionTable,
            key_value_pairs: Vec<(&'a str, &'a str)>
    }
    Request ClientAddClusterViewListener = 0x000300 {}
    Event MembersViewEvent<'a> = 0x000302 { version: i32; var member_infos: Vec<MemberInfo<'a>> }
    Event PartitionsViewEvent = 0x000303 { version: i32; var partitions: PartitionTable }
    Event MemberGroupsViewEvent = 0x000304 { version: i32; var member_groups: Vec<Packed<Option<Uuid>>> }
    Event ClusterVersionEvent = 0x000305 { ; var version: ClusterVersion }
    Request ClientCreateProxy<'a> = 0x000400 { ; var name: &'a str, service_name: &'a str }
    Request ClientDestroyProxy<'a> = 0x000500 { ; var name: &'a str, service_name: &'a str }
    Request ClientAddPartitionLostListener = 0x000600 { local_only: bool }
    Event PartitionLostEvent = 0x000602 { partition_id: i32, lost_backup_count: i32, source: Option<Uuid> }
    Request ClientRemovePartitionLostListener = 0x000700 { registration_id: Option<Uuid> }
    Request ClientGetDistributedObjects = 0x000800 {}
    Response DistributedObjectsResponse<'a> { ; var response: Vec<DistributedObjectInfo<'a>> }
    Request ClientAddDistributedObjectListener = 0x000900 { local_only: bool }
    Event DistributedObjectEvent<'a> = 0x000902 {
        source: Option<Uuid>; var name: &'a str, service_name: &'a str, event_type: &'a str
    }
    Request ClientRemoveDistributedObjectListener = 0x000A00 { registration_id: Option<Uuid> }
    Request ClientPing = 0x000B00 {}
    Request ClientStatistics<'a> = 0x000C00 { timestamp: i64; var client_attributes: &'a str, metrics_blob: Bytes<'a> }
    Request ClientCreateProxies<'a> = 0x000E00 { ; var proxies: Vec<(&'a str, &'a str)> }
    Request ClientLocalBackupListener = 0x000F00 {}
    Event BackupEvent = 0x000F02 { source_invocation_correlation_id: i64 }
    Request ClientTriggerPartitionAssignment = 0x001000 {}
    Request ClientSendSchema<'a> = 0x001300 { ; var schema: CompactSchema<'a> }
    Response SchemaReplicatedResponse { ; var replicated_members: Packed<Option<Uuid>> }
    Request ClientFetchSchema = 0x001400 { schema_id: i64 }
    Response SchemaResponse<'a> { ; var schema: Option<CompactSchema<'a>> }
    Request ClientSendAllSchemas<'a> = 0x001500 { ; var schemas: Vec<CompactSchema<'a>> }

    // ----- Map service (0x01) -----
    Request MapPut<'a> = 0x010100 { thread_id: i64, ttl: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapGet<'a> = 0x010200 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MapRemove<'a> = 0x010300 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MapReplace<'a> = 0x010400 { thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapReplaceIfSame<'a> = 0x010500 { thread_id: i64; var name: &'a str, key: Data<'a>, test_value: Data<'a>, value: Data<'a> }
    Request MapContainsKey<'a> = 0x010600 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MapContainsValue<'a> = 0x010700 { ; var name: &'a str, value: Data<'a> }
    Request MapRemoveIfSame<'a> = 0x010800 { thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapDelete<'a> = 0x010900 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MapFlush<'a> = 0x010A00 { ; var name: &'a str }
    Request MapTryRemove<'a> = 0x010B00 { thread_id: i64, timeout: i64; var name: &'a str, key: Data<'a> }
    Request MapTryPut<'a> = 0x010C00 { thread_id: i64, timeout: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapPutTransient<'a> = 0x010D00 { thread_id: i64, ttl: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapPutIfAbsent<'a> = 0x010E00 { thread_id: i64, ttl: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapSet<'a> = 0x010F00 { thread_id: i64, ttl: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapGetEntryView<'a> = 0x011D00 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MapEvict<'a> = 0x011E00 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MapEvictAll<'a> = 0x011F00 { ; var name: &'a str }
    Request MapKeySet<'a> = 0x012200 { ; var name: &'a str }
    Request MapGetAll<'a> = 0x012300 { ; var name: &'a str, keys: Vec<Data<'a>> }
    Request MapValues<'a> = 0x012400 { ; var name: &'a str }
    Request MapEntrySet<'a> = 0x012500 { ; var name: &'a str }
    Request MapKeySetWithPredicate<'a> = 0x012600 { ; var name: &'a str, predicate: Data<'a> }
    Request MapValuesWithPredicate<'a> = 0x012700 { ; var name: &'a str, predicate: Data<'a> }
    Request MapEntriesWithPredicate<'a> = 0x012800 { ; var name: &'a str, predicate: Data<'a> }
    Request MapAddIndex<'a> = 0x012900 { ; var name: &'a str, index: IndexConfig<'a> }
    Request MapKeySetWithPagingPredicate<'a> = 0x013400 { ; var name: &'a str, predicate: PagingPredicateHolder<'a> }
    Request MapValuesWithPagingPredicate<'a> = 0x013500 { ; var name: &'a str, predicate: PagingPredicateHolder<'a> }
    Request MapEntriesWithPagingPredicate<'a> = 0x013600 { ; var name: &'a str, predicate: PagingPredicateHolder<'a> }
    Request MapAggregate<'a> = 0x013900 { ; var name: &'a str, aggregator: Data<'a> }
    Request MapAggregateWithPredicate<'a> = 0x013A00 { ; var name: &'a str, aggregator: Data<'a>, predicate: Data<'a> }
    Request MapProject<'a> = 0x013B00 { ; var name: &'a str, projection: Data<'a> }
    Request MapProjectWithPredicate<'a> = 0x013C00 { ; var name: &'a str, projection: Data<'a>, predicate: Data<'a> }
    Request MapSize<'a> = 0x012A00 { ; var name: &'a str }
    Request MapIsEmpty<'a> = 0x012B00 { ; var name: &'a str }
    Request MapPutAll<'a> = 0x012C00 { ; trailing trigger_map_loader: bool; var name: &'a str, entries: Vec<(Data<'a>, Data<'a>)> }
    Request MapClear<'a> = 0x012D00 { ; var name: &'a str }
    Request MapLock<'a> = 0x011000 { thread_id: i64, ttl: i64, reference_id: i64; var name: &'a str, key: Data<'a> }
    Request MapTryLock<'a> = 0x011100 { thread_id: i64, lease: i64, timeout: i64, reference_id: i64; var name: &'a str, key: Data<'a> }
    Request MapIsLocked<'a> = 0x011200 { ; var name: &'a str, key: Data<'a> }
    Request MapUnlock<'a> = 0x011300 { thread_id: i64, reference_id: i64; var name: &'a str, key: Data<'a> }
    Request MapForceUnlock<'a> = 0x013300 { reference_id: i64; var name: &'a str, key: Data<'a> }
    Request MapAddEntryListenerToKeyWithPredicate<'a> = 0x011600 {
        include_value: bool, listener_flags: i32, local_only: bool;
        var name: &'a str, key: Data<'a>, predicate: Data<'a>
    }
    Request MapAddEntryListenerWithPredicate<'a> = 0x011700 {
        include_value: bool, listener_flags: i32, local_only: bool; var name: &'a str, predicate: Data<'a>
    }
    Request MapAddEntryListenerToKey<'a> = 0x011800 {
        include_value: bool, listener_flags: i32, local_only: bool; var name: &'a str, key: Data<'a>
    }
    Request MapAddEntryListener<'a> = 0x011900 { include_value: bool, listener_flags: i32, local_only: bool; var name: &'a str }
    Request MapRemoveEntryListener<'a> = 0x011A00 { registration_id: Option<Uuid>; var name: &'a str }
    Request MapAddPartitionLostListener<'a> = 0x011B00 { local_only: bool; var name: &'a str }
    Event MapPartitionLostEvent = 0x011B02 { partition_id: i32, uuid: Option<Uuid> }
    Request MapRemovePartitionLostListener<'a> = 0x011C00 { registration_id: Option<Uuid>; var name: &'a str }
    /// The entry event of every entry-listener registration (type given when encoding:
    /// the registration request's type with kind 0x02).
    Event EntryEvent<'a> {
        event_type: i32, uuid: Option<Uuid>, number_of_affected_entries: i32;
        var key: Option<Data<'a>>, value: Option<Data<'a>>, old_value: Option<Data<'a>>, merging_value: Option<Data<'a>>
    }
    /// Near-cache invalidation listener: events 0x013F02 (one key, or null = all) and 0x013F03.
    Request MapAddNearCacheInvalidationListener<'a> = 0x013F00 { listener_flags: i32, local_only: bool; var name: &'a str }
    Event MapInvalidationEvent<'a> = 0x013F02 {
        source_uuid: Option<Uuid>, partition_uuid: Option<Uuid>, sequence: i64; var key: Option<Data<'a>>
    }
    Event MapBatchInvalidationEvent<'a> = 0x013F03 {
        ; var keys: Vec<Data<'a>>, source_uuids: Packed<Option<Uuid>>, partition_uuids: Packed<Option<Uuid>>,
          sequences: Packed<i64>
    }
    /// The near-cache invalidation metadata of the partitions the member `uuid` owns, for the
    /// maps `names`: per map, the (partition, sequence) pairs whose sequence is not 0, and each
    /// owned partition's uuid.
    Request MapFetchNearCacheInvalidationMetadata<'a> = 0x013D00 { uuid: Option<Uuid>; var names: Vec<&'a str> }
    Response MapFetchNearCacheInvalidationMetadataResponse<'a> {
        ; var name_partition_sequence_list: Vec<(&'a str, Packed<(i32, i64)>)>,
          partition_uuid_list: Packed<(i32, Option<Uuid>)>
    }
    /// One batch of a partition's keys from where `iteration_pointers` (index, size) left off.
    Request MapFetchKeys<'a> = 0x013700 { batch: i32; var name: &'a str, iteration_pointers: Packed<(i32, i32)> }
    Response MapFetchKeysResponse<'a> { ; var iteration_pointers: Packed<(i32, i32)>, keys: Vec<Data<'a>> }
    /// One batch of a partition's entries from where `iteration_pointers` left off.
    Request MapFetchEntries<'a> = 0x013800 { batch: i32; var name: &'a str, iteration_pointers: Packed<(i32, i32)> }
    Response MapFetchEntriesResponse<'a> {
        ; var iteration_pointers: Packed<(i32, i32)>, entries: Vec<(Data<'a>, Data<'a>)>
    }
    /// One batch of a partition's entries that pass `predicate`, each through `projection`.
    Request MapFetchWithQuery<'a> = 0x014000 {
        batch: i32; var name: &'a str, iteration_pointers: Packed<(i32, i32)>, projection: Data<'a>, predicate: Data<'a>
    }
    Response MapFetchWithQueryResponse<'a> {
        ; var results: Vec<Option<Data<'a>>>, iteration_pointers: Packed<(i32, i32)>
    }
    /// The event journal's first and last sequence in the partition of the request.
    Request MapEventJournalSubscribe<'a> = 0x014100 { ; var name: &'a str }
    Response MapEventJournalSubscribeResponse { oldest_sequence: i64, newest_sequence: i64 }
    /// Events of the partition's journal from `start_sequence`, at least `min_size` (waiting
    /// for them) and at most `max_size`; answered as readMany (`RingbufferReadManyResponse`).
    Request MapEventJournalRead<'a> = 0x014200 {
        start_sequence: i64, min_size: i32, max_size: i32;
        var name: &'a str, predicate: Option<Data<'a>>, projection: Option<Data<'a>>
    }
    /// removeAll(predicate): answered with an `EmptyResponse`.
    Request MapRemoveAll<'a> = 0x013E00 { ; var name: &'a str, predicate: Data<'a> }
    /// Entry processors (Java code): decoded to be refused as Hazelcast refuses a class it lacks.
    Request MapExecuteOnKey<'a> = 0x012E00 { thread_id: i64; var name: &'a str, entry_processor: Data<'a>, key: Data<'a> }
    Request MapSubmitToKey<'a> = 0x012F00 { thread_id: i64; var name: &'a str, entry_processor: Data<'a>, key: Data<'a> }
    Request MapExecuteOnAllKeys<'a> = 0x013000 { ; var name: &'a str, entry_processor: Data<'a> }
    Request MapExecuteWithPredicate<'a> = 0x013100 { ; var name: &'a str, entry_processor: Data<'a>, predicate: Data<'a> }
    Request MapExecuteOnKeys<'a> = 0x013200 { ; var name: &'a str, entry_processor: Data<'a>, keys: Vec<Data<'a>> }
    Request MapSetTtl<'a> = 0x014300 { ttl: i64; var name: &'a str, key: Data<'a> }
    Request MapPutWithMaxIdle<'a> = 0x014400 { thread_id: i64, ttl: i64, max_idle: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapPutTransientWithMaxIdle<'a> = 0x014500 { thread_id: i64, ttl: i64, max_idle: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapPutIfAbsentWithMaxIdle<'a> = 0x014600 { thread_id: i64, ttl: i64, max_idle: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MapSetWithMaxIdle<'a> = 0x014700 { thread_id: i64, ttl: i64, max_idle: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    /// An interceptor and replaceAll's function are Java code, refused likewise; loading needs a MapStore.
    Request MapAddInterceptor<'a> = 0x011400 { ; var name: &'a str, interceptor: Data<'a> }
    Request MapRemoveInterceptor<'a> = 0x011500 { ; var name: &'a str, id: &'a str }
    Request MapReplaceAll<'a> = 0x014800 { ; var name: &'a str, function: Data<'a> }
    Request MapLoadAll<'a> = 0x012000 { replace_existing_values: bool; var name: &'a str }
    Request MapLoadGivenKeys<'a> = 0x012100 { replace_existing_values: bool; var name: &'a str, keys: Vec<Data<'a>> }
    /// A partition's entries with their metadata, merged as Hazelcast's PassThroughMergePolicy does.
    Request MapPutAllWithMetadata<'a> = 0x014900 { ; var name: &'a str, entries: Vec<EntryView<'a>> }

    // ----- ExecutorService (0x08): tasks are Java code, refused as Hazelcast refuses a class it lacks -----
    Request ExecutorServiceSubmitToPartition<'a> = 0x080500 { uuid: Option<Uuid>; var name: &'a str, callable: Data<'a> }
    Request ExecutorServiceSubmitToMember<'a> = 0x080600 {
        uuid: Option<Uuid>, member_uuid: Option<Uuid>; var name: &'a str, callable: Data<'a>
    }

    Request ExecutorServiceShutdown<'a> = 0x080100 { ; var name: &'a str }
    Request ExecutorServiceIsShutdown<'a> = 0x080200 { ; var name: &'a str }
    Request ExecutorServiceCancelOnPartition = 0x080300 { uuid: Option<Uuid>, interrupt: bool }
    Request ExecutorServiceCancelOnMember = 0x080400 { uuid: Option<Uuid>, member_uuid: Option<Uuid>, interrupt: bool }

    // ----- DurableExecutor (0x18) and ScheduledExecutor (0x1A): their submits, refused likewise;
    // their results and tasks, of which there are none -----
    Request DurableExecutorShutdown<'a> = 0x180100 { ; var name: &'a str }
    Request DurableExecutorIsShutdown<'a> = 0x180200 { ; var name: &'a str }
    Request DurableExecutorSubmitToPartition<'a> = 0x180300 { ; var name: &'a str, callable: Data<'a> }
    Request DurableExecutorRetrieveResult<'a> = 0x180400 { sequence: i32; var name: &'a str }
    Request DurableExecutorDisposeResult<'a> = 0x180500 { sequence: i32; var name: &'a str }
    Request DurableExecutorRetrieveAndDisposeResult<'a> = 0x180600 { sequence: i32; var name: &'a str }
    Request ScheduledExecutorShutdown<'a> = 0x1A0100 { member_uuid: Option<Uuid>; var scheduler_name: &'a str }
    Request ScheduledExecutorGetAllScheduledFutures<'a> = 0x1A0400 { ; var scheduler_name: &'a str }
    Request ScheduledExecutorSubmitToPartition<'a> = 0x1A0200 {
        task_type: i8, initial_delay_in_millis: i64, period_in_millis: i64, auto_disposable: bool;
        var scheduler_name: &'a str, task_name: &'a str, task: Data<'a>
    }
    Request ScheduledExecutorSubmitToMember<'a> = 0x1A0300 {
        member_uuid: Option<Uuid>, task_type: i8, initial_delay_in_millis: i64, period_in_millis: i64, auto_disposable: bool;
        var scheduler_name: &'a str, task_name: &'a str, task: Data<'a>
    }
    /// A task of a scheduler, on its partition's owner or on a member.
    Request ScheduledExecutorGetStatsFromPartition<'a> = 0x1A0500 { ; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorGetStatsFromMember<'a> = 0x1A0600 { member_uuid: Option<Uuid>; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorGetDelayFromPartition<'a> = 0x1A0700 { ; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorGetDelayFromMember<'a> = 0x1A0800 { member_uuid: Option<Uuid>; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorCancelFromPartition<'a> = 0x1A0900 { may_interrupt_if_running: bool; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorCancelFromMember<'a> = 0x1A0A00 { member_uuid: Option<Uuid>, may_interrupt_if_running: bool; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorIsCancelledFromPartition<'a> = 0x1A0B00 { ; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorIsCancelledFromMember<'a> = 0x1A0C00 { member_uuid: Option<Uuid>; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorIsDoneFromPartition<'a> = 0x1A0D00 { ; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorIsDoneFromMember<'a> = 0x1A0E00 { member_uuid: Option<Uuid>; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorGetResultFromPartition<'a> = 0x1A0F00 { ; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorGetResultFromMember<'a> = 0x1A1000 { member_uuid: Option<Uuid>; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorDisposeFromPartition<'a> = 0x1A1100 { ; var scheduler_name: &'a str, task_name: &'a str }
    Request ScheduledExecutorDisposeFromMember<'a> = 0x1A1200 { member_uuid: Option<Uuid>; var scheduler_name: &'a str, task_name: &'a str }

    // ----- ReplicatedMap (service 0x0D): key writes go to the key's partition owner, reads
    // are answered from the copy of the member asked -----
    Request ReplicatedMapPut<'a> = 0x0D0100 { ttl: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request ReplicatedMapSize<'a> = 0x0D0200 { ; var name: &'a str }
    Request ReplicatedMapIsEmpty<'a> = 0x0D0300 { ; var name: &'a str }
    Request ReplicatedMapContainsKey<'a> = 0x0D0400 { ; var name: &'a str, key: Data<'a> }
    Request ReplicatedMapContainsValue<'a> = 0x0D0500 { ; var name: &'a str, value: Data<'a> }
    Request ReplicatedMapGet<'a> = 0x0D0600 { ; var name: &'a str, key: Data<'a> }
    Request ReplicatedMapRemove<'a> = 0x0D0700 { ; var name: &'a str, key: Data<'a> }
    Request ReplicatedMapPutAll<'a> = 0x0D0800 { ; var name: &'a str, entries: Vec<(Data<'a>, Data<'a>)> }
    Request ReplicatedMapClear<'a> = 0x0D0900 { ; var name: &'a str }
    Request ReplicatedMapAddEntryListenerToKeyWithPredicate<'a> = 0x0D0A00 {
        local_only: bool; var name: &'a str, key: Data<'a>, predicate: Data<'a>
    }
    Request ReplicatedMapAddEntryListenerWithPredicate<'a> = 0x0D0B00 {
        local_only: bool; var name: &'a str, predicate: Data<'a>
    }
    Request ReplicatedMapAddEntryListenerToKey<'a> = 0x0D0C00 { local_only: bool; var name: &'a str, key: Data<'a> }
    Request ReplicatedMapAddEntryListener<'a> = 0x0D0D00 { local_only: bool; var name: &'a str }
    Request ReplicatedMapRemoveEntryListener<'a> = 0x0D0E00 { registration_id: Option<Uuid>; var name: &'a str }
    Request ReplicatedMapKeySet<'a> = 0x0D0F00 { ; var name: &'a str }
    Request ReplicatedMapValues<'a> = 0x0D1000 { ; var name: &'a str }
    Request ReplicatedMapEntrySet<'a> = 0x0D1100 { ; var name: &'a str }
    /// A near cache's listener: entry events (0x0D1202) as an entry listener's; `include_value`
    /// is not read (Hazelcast sends values regardless).
    Request ReplicatedMapAddNearCacheEntryListener<'a> = 0x0D1200 { include_value: bool, local_only: bool; var name: &'a str }
    Request ReplicatedMapPutAllWithMetadata<'a> = 0x0D1300 {
        partition_id: i32; var name: &'a str, entries: Vec<ReplicatedEntryView<'a>>
    }
    /// One page of a partition's entry views, by cursor (a new iteration's id is its first cursor).
    Request ReplicatedMapFetchEntryViews<'a> = 0x0D1400 {
        cursor_id: Option<Uuid>, new_iteration: bool, partition_id: i32, batch_size: i32; var name: &'a str
    }
    Response EntryViewsPage<'a> { cursor_id: Option<Uuid>; var entry_views: Vec<ReplicatedEntryView<'a>> }
    Request ReplicatedMapEndEntryViewIteration<'a> = 0x0D1500 { cursor_id: Option<Uuid>; var name: &'a str }

    // ----- MultiMap (service 2): key requests go to the partition of the key -----
    Request MultiMapPut<'a> = 0x020100 { thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MultiMapGet<'a> = 0x020200 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MultiMapRemove<'a> = 0x020300 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MultiMapKeySet<'a> = 0x020400 { ; var name: &'a str }
    Request MultiMapValues<'a> = 0x020500 { ; var name: &'a str }
    Request MultiMapEntrySet<'a> = 0x020600 { ; var name: &'a str }
    Request MultiMapContainsKey<'a> = 0x020700 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MultiMapContainsValue<'a> = 0x020800 { ; var name: &'a str, value: Data<'a> }
    Request MultiMapContainsEntry<'a> = 0x020900 { thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MultiMapSize<'a> = 0x020A00 { ; var name: &'a str }
    Request MultiMapClear<'a> = 0x020B00 { ; var name: &'a str }
    Request MultiMapValueCount<'a> = 0x020C00 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MultiMapAddEntryListenerToKey<'a> = 0x020D00 {
        include_value: bool, local_only: bool; var name: &'a str, key: Data<'a>
    }
    Request MultiMapAddEntryListener<'a> = 0x020E00 { include_value: bool, local_only: bool; var name: &'a str }
    Request MultiMapRemoveEntryListener<'a> = 0x020F00 { registration_id: Option<Uuid>; var name: &'a str }
    Request MultiMapLock<'a> = 0x021000 { thread_id: i64, ttl: i64, reference_id: i64; var name: &'a str, key: Data<'a> }
    Request MultiMapTryLock<'a> = 0x021100 {
        thread_id: i64, lease: i64, timeout: i64, reference_id: i64; var name: &'a str, key: Data<'a>
    }
    Request MultiMapIsLocked<'a> = 0x021200 { ; var name: &'a str, key: Data<'a> }
    Request MultiMapUnlock<'a> = 0x021300 { thread_id: i64, reference_id: i64; var name: &'a str, key: Data<'a> }
    Request MultiMapForceUnlock<'a> = 0x021400 { reference_id: i64; var name: &'a str, key: Data<'a> }
    Request MultiMapRemoveEntry<'a> = 0x021500 { thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a> }
    Request MultiMapDelete<'a> = 0x021600 { thread_id: i64; var name: &'a str, key: Data<'a> }
    Request MultiMapPutAll<'a> = 0x021700 { ; var name: &'a str, entries: Vec<(Data<'a>, Vec<Data<'a>>)> }

    // ----- Queue (service 3): every request names the queue; all but the listener requests
    // are sent to the partition of the queue's name -----
    Request QueueOffer<'a> = 0x030100 { timeout_millis: i64; var name: &'a str, value: Data<'a> }
    Request QueuePut<'a> = 0x030200 { ; var name: &'a str, value: Data<'a> }
    Request QueueSize<'a> = 0x030300 { ; var name: &'a str }
    Request QueueRemove<'a> = 0x030400 { ; var name: &'a str, value: Data<'a> }
    Request QueuePoll<'a> = 0x030500 { timeout_millis: i64; var name: &'a str }
    Request QueueTake<'a> = 0x030600 { ; var name: &'a str }
    Request QueuePeek<'a> = 0x030700 { ; var name: &'a str }
    Request QueueIterator<'a> = 0x030800 { ; var name: &'a str }
    Request QueueDrainTo<'a> = 0x030900 { ; var name: &'a str }
    Request QueueDrainToMaxSize<'a> = 0x030A00 { max_size: i32; var name: &'a str }
    Request QueueContains<'a> = 0x030B00 { ; var name: &'a str, value: Data<'a> }
    Request QueueContainsAll<'a> = 0x030C00 { ; var name: &'a str, data_list: Vec<Data<'a>> }
    Request QueueCompareAndRemoveAll<'a> = 0x030D00 { ; var name: &'a str, data_list: Vec<Data<'a>> }
    Request QueueCompareAndRetainAll<'a> = 0x030E00 { ; var name: &'a str, data_list: Vec<Data<'a>> }
    Request QueueClear<'a> = 0x030F00 { ; var name: &'a str }
    Request QueueAddAll<'a> = 0x031000 { ; var name: &'a str, data_list: Vec<Data<'a>> }
    Request QueueAddListener<'a> = 0x031100 { include_value: bool, local_only: bool; var name: &'a str }
    /// An item listener's event: ADDED (1) or REMOVED (2), with the item if the listener
    /// asked for values.
    Event QueueItemEvent<'a> = 0x031102 { uuid: Option<Uuid>, event_type: i32; var item: Option<Data<'a>> }
    /// The same event of any collection (queue 0x031102, list 0x050B02, set 0x060B02: the
    /// registration request type with kind 0x02, given when encoding).
    Event ItemEvent<'a> { uuid: Option<Uuid>, event_type: i32; var item: Option<Data<'a>> }
    Request QueueRemoveListener<'a> = 0x031200 { registration_id: Option<Uuid>; var name: &'a str }
    Request QueueRemainingCapacity<'a> = 0x031300 { ; var name: &'a str }
    Request QueueIsEmpty<'a> = 0x031400 { ; var name: &'a str }

    // ----- List (service 5) and Set (service 6): every request names the collection and is
    // sent to the partition of its name -----
    Request ListSize<'a> = 0x050100 { ; var name: &'a str }
    Request ListContains<'a> = 0x050200 { ; var name: &'a str, value: Data<'a> }
    Request ListContainsAll<'a> = 0x050300 { ; var name: &'a str, values: Vec<Data<'a>> }
    Request ListAdd<'a> = 0x050400 { ; var name: &'a str, value: Data<'a> }
    Request ListRemove<'a> = 0x050500 { ; var name: &'a str, value: Data<'a> }
    Request ListAddAll<'a> = 0x050600 { ; var name: &'a str, value_list: Vec<Data<'a>> }
    Request ListCompareAndRemoveAll<'a> = 0x050700 { ; var name: &'a str, values: Vec<Data<'a>> }
    Request ListCompareAndRetainAll<'a> = 0x050800 { ; var name: &'a str, values: Vec<Data<'a>> }
    Request ListClear<'a> = 0x050900 { ; var name: &'a str }
    Request ListGetAll<'a> = 0x050A00 { ; var name: &'a str }
    Request ListAddListener<'a> = 0x050B00 { include_value: bool, local_only: bool; var name: &'a str }
    Request ListRemoveListener<'a> = 0x050C00 { registration_id: Option<Uuid>; var name: &'a str }
    Request ListIsEmpty<'a> = 0x050D00 { ; var name: &'a str }
    Request ListAddAllWithIndex<'a> = 0x050E00 { index: i32; var name: &'a str, value_list: Vec<Data<'a>> }
    Request ListGet<'a> = 0x050F00 { index: i32; var name: &'a str }
    Request ListSet<'a> = 0x051000 { index: i32; var name: &'a str, value: Data<'a> }
    Request ListAddWithIndex<'a> = 0x051100 { index: i32; var name: &'a str, value: Data<'a> }
    Request ListRemoveWithIndex<'a> = 0x051200 { index: i32; var name: &'a str }
    Request ListLastIndexOf<'a> = 0x051300 { ; var name: &'a str, value: Data<'a> }
    Request ListIndexOf<'a> = 0x051400 { ; var name: &'a str, value: Data<'a> }
    Request ListSub<'a> = 0x051500 { from: i32, to: i32; var name: &'a str }
    Request ListIterator<'a> = 0x051600 { ; var name: &'a str }
    Request ListListIterator<'a> = 0x051700 { index: i32; var name: &'a str }
    Request SetSize<'a> = 0x060100 { ; var name: &'a str }
    Request SetContains<'a> = 0x060200 { ; var name: &'a str, value: Data<'a> }
    Request SetContainsAll<'a> = 0x060300 { ; var name: &'a str, items: Vec<Data<'a>> }
    Request SetAdd<'a> = 0x060400 { ; var name: &'a str, value: Data<'a> }
    Request SetRemove<'a> = 0x060500 { ; var name: &'a str, value: Data<'a> }
    Request SetAddAll<'a> = 0x060600 { ; var name: &'a str, value_list: Vec<Data<'a>> }
    Request SetCompareAndRemoveAll<'a> = 0x060700 { ; var name: &'a str, values: Vec<Data<'a>> }
    Request SetCompareAndRetainAll<'a> = 0x060800 { ; var name: &'a str, values: Vec<Data<'a>> }
    Request SetClear<'a> = 0x060900 { ; var name: &'a str }
    Request SetGetAll<'a> = 0x060A00 { ; var name: &'a str }
    Request SetAddListener<'a> = 0x060B00 { include_value: bool, local_only: bool; var name: &'a str }
    Request SetRemoveListener<'a> = 0x060C00 { registration_id: Option<Uuid>; var name: &'a str }
    Request SetIsEmpty<'a> = 0x060D00 { ; var name: &'a str }

    // ----- Topic (service 4): sent to the partition of the topic's name -----
    Request TopicPublish<'a> = 0x040100 { ; var name: &'a str, message: Data<'a> }
    Request TopicAddMessageListener<'a> = 0x040200 { local_only: bool; var name: &'a str }
    /// A message listener's event: the message, when it was published (epoch ms) and by which
    /// member.
    Event TopicEvent<'a> = 0x040202 { publish_time: i64, uuid: Option<Uuid>; var item: Data<'a> }
    Request TopicRemoveMessageListener<'a> = 0x040300 { registration_id: Option<Uuid>; var name: &'a str }
    Request TopicPublishAll<'a> = 0x040400 { ; var name: &'a str, messages: Vec<Data<'a>> }

    // ----- Ringbuffer (service 0x17): sent to the partition of the ringbuffer's name -----
    Request RingbufferSize<'a> = 0x170100 { ; var name: &'a str }
    Request RingbufferTailSequence<'a> = 0x170200 { ; var name: &'a str }
    Request RingbufferHeadSequence<'a> = 0x170300 { ; var name: &'a str }
    Request RingbufferCapacity<'a> = 0x170400 { ; var name: &'a str }
    Request RingbufferRemainingCapacity<'a> = 0x170500 { ; var name: &'a str }
    Request RingbufferAdd<'a> = 0x170600 { overflow_policy: i32; var name: &'a str, value: Data<'a> }
    Request RingbufferReadOne<'a> = 0x170700 { sequence: i64; var name: &'a str }
    Request RingbufferAddAll<'a> = 0x170800 { overflow_policy: i32; var name: &'a str, value_list: Vec<Data<'a>> }
    Request RingbufferReadMany<'a> = 0x170900 {
        start_sequence: i64, min_count: i32, max_count: i32; var name: &'a str, filter: Option<Data<'a>>
    }
    /// readMany's answer: how many items were read (filtered out ones included), the items,
    /// their sequences, and where the next read starts.
    Response RingbufferReadManyResponse<'a> {
        read_count: i32, next_seq: i64; var items: Vec<Data<'a>>, item_seqs: Option<Packed<i64>>
    }

    // ----- CardinalityEstimator (service 0x19): sent to the partition of the estimator's name;
    // the client hashes the item itself (Data.hash64: MurmurHash3 x64 of its payload) -----
    /// Answered with an `EmptyResponse`.
    Request CardinalityEstimatorAdd<'a> = 0x190100 { hash: i64; var name: &'a str }
    /// Answered with a `LongResponse`: the estimate.
    Request CardinalityEstimatorEstimate<'a> = 0x190200 { ; var name: &'a str }

    // ----- ContinuousQuery (service 0x16): the member side of the Java client's query caches.
    // Create, publishable and destroy go to any member (applied on every member); the listener
    // is registered as a map listener under the cache's name; setReadCursor goes to a partition -----
    Request ContinuousQueryPublisherCreateWithValue<'a> = 0x160100 {
        batch_size: i32, buffer_size: i32, delay_seconds: i64, populate: bool, coalesce: bool;
        var map_name: &'a str, cache_name: &'a str, predicate: Data<'a>
    }
    Request ContinuousQueryPublisherCreate<'a> = 0x160200 {
        batch_size: i32, buffer_size: i32, delay_seconds: i64, populate: bool, coalesce: bool;
        var map_name: &'a str, cache_name: &'a str, predicate: Data<'a>
    }
    Request ContinuousQueryMadePublishable<'a> = 0x160300 { ; var map_name: &'a str, cache_name: &'a str }
    Request ContinuousQueryAddListener<'a> = 0x160400 { local_only: bool; var listener_name: &'a str }
    Event QueryCacheSingleEvent<'a> = 0x160402 { ; var data: QueryCacheEventData<'a> }
    Event QueryCacheBatchEvent<'a> = 0x160403 {
        partition_id: i32; var events: Vec<QueryCacheEventData<'a>>, source: &'a str
    }
    Request ContinuousQuerySetReadCursor<'a> = 0x160500 { sequence: i64; var map_name: &'a str, cache_name: &'a str }
    Request ContinuousQueryDestroyCache<'a> = 0x160600 { ; var map_name: &'a str, cache_name: &'a str }

    // ----- PN counter (service 0x1D): sent to the member the request names as its target
    // replica (partition id -1); the replica timestamps are the vector clock the client observed -----
    Request PnCounterGet<'a> = 0x1D0100 {
        target_replica_uuid: Option<Uuid>; var name: &'a str, replica_timestamps: Packed<(Option<Uuid>, i64)>
    }
    Request PnCounterAdd<'a> = 0x1D0200 {
        delta: i64, get_before_update: bool, target_replica_uuid: Option<Uuid>;
        var name: &'a str, replica_timestamps: Packed<(Option<Uuid>, i64)>
    }
    Request PnCounterGetConfiguredReplicaCount<'a> = 0x1D0300 { ; var name: &'a str }
    /// get's and add's answer: the value, the replica's vector clock and the configured
    /// replica count.
    Response PnCounterResponse {
        value: i64, replica_count: i32; var replica_timestamps: Packed<(Option<Uuid>, i64)>
    }
    // ----- FlakeIdGenerator (service 0x1C): answered by the member the client asks -----
    Request FlakeIdGeneratorNewIdBatch<'a> = 0x1C0100 { batch_size: i32; var name: &'a str }
    /// A batch of ids: `base + i * increment` for `i` in `0..batch_size`.
    Response FlakeIdGeneratorNewIdBatchResponse { base: i64, increment: i64, batch_size: i32 }

    // ----- Management center (service 0x20): answered by the member the client asks -----
    /// Makes the member it is sent to, a lite member, a data member.
    Request McPromoteLiteMember = 0x200900 {}
    // ----- DynamicConfig (service 0x1B): sent to any member, applied on every member; each
    // is answered with an `EmptyResponse`. The fields the member applies are typed; the rest
    // are kept as they came (`Opaque`, `Rest`), to tell an identical definition from another.
    Request DynamicConfigAddMultiMapConfig<'a> = 0x1B0100 {
        binary: bool, backup_count: i32, async_backup_count: i32, statistics_enabled: bool, merge_batch_size: i32;
        var name: &'a str, collection_type: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddRingbufferConfig<'a> = 0x1B0200 {
        capacity: i32, backup_count: i32, async_backup_count: i32, time_to_live_seconds: i32, merge_batch_size: i32;
        var name: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddCardinalityEstimatorConfig<'a> = 0x1B0300 {
        backup_count: i32, async_backup_count: i32, merge_batch_size: i32; var name: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddListConfig<'a> = 0x1B0400 {
        backup_count: i32, async_backup_count: i32, max_size: i32, statistics_enabled: bool, merge_batch_size: i32;
        var name: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddSetConfig<'a> = 0x1B0500 {
        backup_count: i32, async_backup_count: i32, max_size: i32, statistics_enabled: bool, merge_batch_size: i32;
        var name: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddReplicatedMapConfig<'a> = 0x1B0600 {
        async_fillup: bool, statistics_enabled: bool, merge_batch_size: i32;
        var name: &'a str, in_memory_format: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddTopicConfig<'a> = 0x1B0700 {
        global_ordering_enabled: bool, statistics_enabled: bool, multi_threading_enabled: bool;
        var name: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddExecutorConfig<'a> = 0x1B0800 { ; var name: &'a str, rest: Rest<'a> }
    Request DynamicConfigAddDurableExecutorConfig<'a> = 0x1B0900 { ; var name: &'a str, rest: Rest<'a> }
    Request DynamicConfigAddScheduledExecutorConfig<'a> = 0x1B0A00 { ; var name: &'a str, rest: Rest<'a> }
    Request DynamicConfigAddQueueConfig<'a> = 0x1B0B00 {
        backup_count: i32, async_backup_count: i32, max_size: i32, empty_queue_ttl: i32, statistics_enabled: bool,
        merge_batch_size: i32;
        var name: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddMapConfig<'a> = 0x1B0C00 {
        backup_count: i32, async_backup_count: i32, time_to_live_seconds: i32, max_idle_seconds: i32,
        read_backup_data: bool, merge_batch_size: i32, statistics_enabled: bool, metadata_policy: i32,
        per_entry_stats_enabled: bool;
        var name: &'a str, eviction: Option<EvictionConfigHolder<'a>>, cache_deserialized_values: &'a str,
            merge_policy: &'a str, in_memory_format: &'a str, listeners: Opaque<'a>, partition_lost_listeners: Opaque<'a>,
            split_brain_protection: Opaque<'a>, map_store: Opaque<'a>, near_cache: Opaque<'a>, wan_replication: Opaque<'a>,
            indexes: Option<Vec<IndexConfig<'a>>>, attributes: Opaque<'a>, query_caches: Opaque<'a>,
            partitioning_strategy_class_name: Opaque<'a>, partitioning_strategy: Opaque<'a>, hot_restart: Opaque<'a>,
            event_journal: Option<EventJournalConfigHolder>, rest: Rest<'a>
    }
    Request DynamicConfigAddReliableTopicConfig<'a> = 0x1B0D00 { ; var name: &'a str, rest: Rest<'a> }
    Request DynamicConfigAddCacheConfig<'a> = 0x1B0E00 { ; var name: &'a str, rest: Rest<'a> }
    Request DynamicConfigAddFlakeIdGeneratorConfig<'a> = 0x1B0F00 {
        prefetch_count: i32, prefetch_validity_millis: i64, statistics_enabled: bool, node_id_offset: i64,
        epoch_start: i64, bits_sequence: i32, bits_node_id: i32, allowed_future_millis: i64;
        var name: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddPnCounterConfig<'a> = 0x1B1000 {
        replica_count: i32, statistics_enabled: bool; var name: &'a str, rest: Rest<'a>
    }
    Request DynamicConfigAddDataConnectionConfig<'a> = 0x1B1100 { shared: bool; var name: &'a str, rest: Rest<'a> }
    Request DynamicConfigAddWanReplicationConfig<'a> = 0x1B1200 { ; var name: &'a str, rest: Rest<'a> }
    Request DynamicConfigAddUserCodeNamespaceConfig<'a> = 0x1B1300 { ; var name: &'a str, rest: Rest<'a> }

    // ----- Sql (service 0x21): sent to any member (partition id -1); the query id is the
    // client's, a Fetch or Close names the cursor an Execute opened -----
    /// Closes a query's cursor; answered with an `EmptyResponse`.
    Request SqlClose = 0x210300 { ; var query_id: SqlQueryId }
    /// Runs a statement: `parameters` are its `?` arguments; `expected_result_type` is one of
    /// `sql::EXPECTED_RESULT_*`.
    Request SqlExecute<'a> = 0x210400 {
        timeout_millis: i64, cursor_buffer_size: i32, expected_result_type: i8;
        added skip_update_statistics: bool = false;
        var sql: &'a str, parameters: Vec<Option<Data<'a>>>, schema: Option<&'a str>, query_id: SqlQueryId
    }
    /// Execute's answer: the row type and first page of a query, or the update count (−1 for a
    /// query) of a statement, or the error. `partition_argument_index` (−1: none) tells a smart
    /// client which argument decides the partition of a repeated statement.
    Response SqlExecuteResponse<'a> {
        update_count: i64; added is_infinite_rows: bool = false, partition_argument_index: i32 = -1;
        var row_metadata: Option<Vec<SqlColumnMetadata<'a>>>, row_page: Option<SqlPage>,
            error: Option<SqlError<'a>>
    }
    /// The next page of an open query.
    Request SqlFetch = 0x210500 { cursor_buffer_size: i32; var query_id: SqlQueryId }
    Response SqlFetchResponse<'a> { ; var row_page: Option<SqlPage>, error: Option<SqlError<'a>> }
    /// The CREATE MAPPING statement that would expose the named object to SQL.
    Request SqlMappingDdl<'a> = 0x210600 { ; var name: &'a str }
    Response SqlMappingDdlResponse<'a> { ; var sql: Option<&'a str> }

    // ----- Transaction (service 0x15): sent to the member the transaction was created on
    // (partition id -1), which coordinates it -----
    /// Answered with an `EmptyResponse`.
    Request TransactionCommit = 0x150100 { transaction_id: Option<Uuid>, thread_id: i64 }
    /// Answered with a `UuidResponse`: the transaction's id. Timeout in ms; type 1 TWO_PHASE,
    /// 2 ONE_PHASE.
    Request TransactionCreate = 0x150200 { timeout: i64, durability: i32, transaction_type: i32, thread_id: i64 }
    /// Answered with an `EmptyResponse`.
    Request TransactionRollback = 0x150300 { transaction_id: Option<Uuid>, thread_id: i64 }

    // ----- XATransaction (service 0x14): create, prepare, commit and rollback are sent to the
    // member the transaction was created on; finalize and clearRemote name the transaction by
    // its Xid, from any connection (recovery) -----
    /// Answered with an `EmptyResponse`.
    Request XATransactionClearRemote<'a> = 0x140100 { ; var xid: Xid<'a> }
    /// Answered with an `XidListResponse`: the Xids of prepared transactions.
    Request XATransactionCollectTransactions = 0x140200 {}
    Response XidListResponse<'a> { ; var response: Vec<Xid<'a>> }
    /// Answered with an `EmptyResponse`.
    Request XATransactionFinalize<'a> = 0x140300 { is_commit: bool; var xid: Xid<'a> }
    /// Answered with an `EmptyResponse`.
    Request XATransactionCommit = 0x140400 { transaction_id: Option<Uuid>, one_phase: bool }
    /// Answered with a `UuidResponse`: the transaction's id. Timeout in seconds.
    Request XATransactionCreate<'a> = 0x140500 { timeout: i64; var xid: Xid<'a> }
    /// Answered with an `EmptyResponse`.
    Request XATransactionPrepare = 0x140600 { transaction_id: Option<Uuid> }
    /// Answered with an `EmptyResponse`.
    Request XATransactionRollback = 0x140700 { transaction_id: Option<Uuid> }

    // ----- TransactionalMap (service 0x0E): sent to the transaction's member (partition id
    // -1); every request names the map, the transaction and its thread -----
    Request TransactionalMapContainsKey<'a> = 0x0E0100 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a> }
    Request TransactionalMapGet<'a> = 0x0E0200 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a> }
    Request TransactionalMapGetForUpdate<'a> = 0x0E0300 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a> }
    Request TransactionalMapSize<'a> = 0x0E0400 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }
    Request TransactionalMapIsEmpty<'a> = 0x0E0500 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }
    Request TransactionalMapPut<'a> = 0x0E0600 {
        txn_id: Option<Uuid>, thread_id: i64, ttl: i64; var name: &'a str, key: Data<'a>, value: Data<'a>
    }
    Request TransactionalMapSet<'a> = 0x0E0700 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a>
    }
    Request TransactionalMapPutIfAbsent<'a> = 0x0E0800 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a>
    }
    Request TransactionalMapReplace<'a> = 0x0E0900 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a>
    }
    Request TransactionalMapReplaceIfSame<'a> = 0x0E0A00 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>, old_value: Data<'a>, new_value: Data<'a>
    }
    Request TransactionalMapRemove<'a> = 0x0E0B00 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a> }
    Request TransactionalMapDelete<'a> = 0x0E0C00 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a> }
    Request TransactionalMapRemoveIfSame<'a> = 0x0E0D00 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a>
    }
    Request TransactionalMapKeySet<'a> = 0x0E0E00 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }
    Request TransactionalMapKeySetWithPredicate<'a> = 0x0E0F00 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, predicate: Data<'a>
    }
    Request TransactionalMapValues<'a> = 0x0E1000 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }
    Request TransactionalMapValuesWithPredicate<'a> = 0x0E1100 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, predicate: Data<'a>
    }
    Request TransactionalMapContainsValue<'a> = 0x0E1200 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, value: Data<'a>
    }

    // ----- TransactionalMultiMap (service 0x0F): as TransactionalMap -----
    Request TransactionalMultiMapPut<'a> = 0x0F0100 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a>
    }
    Request TransactionalMultiMapGet<'a> = 0x0F0200 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a> }
    Request TransactionalMultiMapRemove<'a> = 0x0F0300 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>
    }
    Request TransactionalMultiMapRemoveEntry<'a> = 0x0F0400 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>, value: Data<'a>
    }
    Request TransactionalMultiMapValueCount<'a> = 0x0F0500 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, key: Data<'a>
    }
    Request TransactionalMultiMapSize<'a> = 0x0F0600 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }

    // ----- TransactionalSet (0x10), TransactionalList (0x11), TransactionalQueue (0x12) -----
    Request TransactionalSetAdd<'a> = 0x100100 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, item: Data<'a> }
    Request TransactionalSetRemove<'a> = 0x100200 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, item: Data<'a>
    }
    Request TransactionalSetSize<'a> = 0x100300 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }
    Request TransactionalListAdd<'a> = 0x110100 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, item: Data<'a> }
    Request TransactionalListRemove<'a> = 0x110200 {
        txn_id: Option<Uuid>, thread_id: i64; var name: &'a str, item: Data<'a>
    }
    Request TransactionalListSize<'a> = 0x110300 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }
    Request TransactionalQueueOffer<'a> = 0x120100 {
        txn_id: Option<Uuid>, thread_id: i64, timeout: i64; var name: &'a str, item: Data<'a>
    }
    Request TransactionalQueueTake<'a> = 0x120200 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }
    Request TransactionalQueuePoll<'a> = 0x120300 { txn_id: Option<Uuid>, thread_id: i64, timeout: i64; var name: &'a str }
    Request TransactionalQueuePeek<'a> = 0x120400 { txn_id: Option<Uuid>, thread_id: i64, timeout: i64; var name: &'a str }
    Request TransactionalQueueSize<'a> = 0x120500 { txn_id: Option<Uuid>, thread_id: i64; var name: &'a str }

    // ----- Response shapes shared by many requests -----
    /// No fields.
    Response EmptyResponse {}
    Response BoolResponse { response: bool }
    Response IntResponse { response: i32 }
    Response LongResponse { response: i64 }
    Response UuidResponse { response: Option<Uuid> }
    /// A value or null (Put, Get, Remove, …).
    Response NullableDataResponse<'a> { ; var response: Option<Data<'a>> }
    /// Delete: a trailing bool that older members omit.
    Response DeleteResponse { ; trailing response: bool }
    Response DataListResponse<'a> { ; var response: Vec<Data<'a>> }
    Response EntryListResponse<'a> { ; var response: Vec<(Data<'a>, Data<'a>)> }
    Response DataListPageResponse<'a> { ; var response: Vec<Data<'a>>, anchors: AnchorList<'a> }
    Response EntryListPageResponse<'a> { ; var response: Vec<(Data<'a>, Data<'a>)>, anchors: AnchorList<'a> }
    Response NullableDataListResponse<'a> { ; var response: Vec<Option<Data<'a>>> }
    Response EntryViewResponse<'a> { max_idle: i64; var response: Option<EntryView<'a>> }
}
