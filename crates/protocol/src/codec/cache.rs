//! The Cache service's messages (JCache), declared with the table's macro (`codec.rs`).

use super::*;
use crate::data::Data;
use crate::frame::DecodeError;
use crate::types::{MessageType, Uuid};

messages! {
    // ----- Cache (service 0x13, JCache): key requests go to the key's partition; createConfig,
    // getConfig, destroy, size, clear, removeAll, getAll and the listeners to any member, which
    // works over every partition. Names carry the cache manager's prefix ("/hz/" + name) -----
    Request CacheAddEntryListener<'a> = 0x130100 { local_only: bool; var name: &'a str }
    /// A batch of entry events of one type; `completion_id` is the operation's (−1 for none),
    /// which a client with synchronous listeners waits for.
    Event CacheEvent<'a> = 0x130102 { event_type: i32, completion_id: i32; var keys: Vec<CacheEventData<'a>> }
    Request CacheClear<'a> = 0x130200 { ; var name: &'a str }
    Request CacheRemoveAllKeys<'a> = 0x130300 { completion_id: i32; var name: &'a str, keys: Vec<Data<'a>> }
    Request CacheRemoveAll<'a> = 0x130400 { completion_id: i32; var name: &'a str }
    Request CacheContainsKey<'a> = 0x130500 { ; var name: &'a str, key: Data<'a> }
    Request CacheCreateConfig<'a> = 0x130600 { create_also_on_others: bool; var config: CacheConfigHolder<'a> }
    /// createConfig's and getConfig's answer: a cache's configuration, or null.
    Response CacheConfigResponse<'a> { ; var response: Option<CacheConfigHolder<'a>> }
    Request CacheDestroy<'a> = 0x130700 { ; var name: &'a str }
    Request CacheEntryProcessor<'a> = 0x130800 {
        completion_id: i32; var name: &'a str, key: Data<'a>, entry_processor: Data<'a>, arguments: Vec<Data<'a>>
    }
    Request CacheGetAll<'a> = 0x130900 { ; var name: &'a str, keys: Vec<Data<'a>>, expiry_policy: Option<Data<'a>> }
    Request CacheGetAndRemove<'a> = 0x130A00 { completion_id: i32; var name: &'a str, key: Data<'a> }
    Request CacheGetAndReplace<'a> = 0x130B00 {
        completion_id: i32; var name: &'a str, key: Data<'a>, value: Data<'a>, expiry_policy: Option<Data<'a>>
    }
    Request CacheGetConfig<'a> = 0x130C00 { ; var name: &'a str, simple_name: &'a str }
    Request CacheGet<'a> = 0x130D00 { ; var name: &'a str, key: Data<'a>, expiry_policy: Option<Data<'a>> }
    /// One batch of a partition's keys from where `iteration_pointers` left off (answered with
    /// a `MapFetchKeysResponse`).
    Request CacheIterate<'a> = 0x130E00 { batch: i32; var name: &'a str, iteration_pointers: Packed<(i32, i32)> }
    Request CacheListenerRegistration<'a> = 0x130F00 {
        should_register: bool, uuid: Option<Uuid>; var name: &'a str, listener_config: Data<'a>
    }
    /// loadAll: answered with an `EmptyResponse`.
    Request CacheLoadAll<'a> = 0x131000 { replace_existing_values: bool; var name: &'a str, keys: Vec<Data<'a>> }
    Request CacheManagementConfig<'a> = 0x131100 { is_stat: bool, enabled: bool, uuid: Option<Uuid>; var name: &'a str }
    Request CachePutIfAbsent<'a> = 0x131200 {
        completion_id: i32; var name: &'a str, key: Data<'a>, value: Data<'a>, expiry_policy: Option<Data<'a>>
    }
    Request CachePut<'a> = 0x131300 {
        get: bool, completion_id: i32;
        var name: &'a str, key: Data<'a>, value: Data<'a>, expiry_policy: Option<Data<'a>>
    }
    Request CacheRemoveEntryListener<'a> = 0x131400 { registration_id: Option<Uuid>; var name: &'a str }
    Request CacheRemoveInvalidationListener<'a> = 0x131500 { registration_id: Option<Uuid>; var name: &'a str }
    Request CacheRemove<'a> = 0x131600 {
        completion_id: i32; var name: &'a str, key: Data<'a>, current_value: Option<Data<'a>>
    }
    Request CacheReplace<'a> = 0x131700 {
        completion_id: i32;
        var name: &'a str, key: Data<'a>, old_value: Option<Data<'a>>, new_value: Data<'a>, expiry_policy: Option<Data<'a>>
    }
    Request CacheSize<'a> = 0x131800 { ; var name: &'a str }
    /// Answered by the member the client asks (a `UuidResponse`), as other partition-lost
    /// listeners are.
    Request CacheAddPartitionLostListener<'a> = 0x131900 { local_only: bool; var name: &'a str }
    /// A partition of the cache lost with all its backups: its id and the member that says so.
    Event CachePartitionLostEvent = 0x131902 { partition_id: i32, uuid: Option<Uuid> }
    Request CacheRemovePartitionLostListener<'a> = 0x131A00 { registration_id: Option<Uuid>; var name: &'a str }
    Request CachePutAll<'a> = 0x131B00 {
        completion_id: i32; var name: &'a str, entries: Vec<(Data<'a>, Data<'a>)>, expiry_policy: Option<Data<'a>>
    }
    /// A near cache's invalidation listener: one CacheInvalidation event per changed key (null
    /// key: every key), with the partition's uuid and sequence.
    Request CacheAddNearCacheInvalidationListener<'a> = 0x131D00 { local_only: bool; var name: &'a str }
    Event CacheInvalidationEvent<'a> = 0x131D02 {
        source_uuid: Option<Uuid>, partition_uuid: Option<Uuid>, sequence: i64; var name: &'a str, key: Option<Data<'a>>
    }
    /// A near cache's repairing handler: answered as the map's (a
    /// `MapFetchNearCacheInvalidationMetadataResponse`).
    Request CacheFetchNearCacheInvalidationMetadata<'a> = 0x131E00 { uuid: Option<Uuid>; var names: Vec<&'a str> }
    /// One batch of a partition's entries (answered with a `MapFetchEntriesResponse`).
    Request CacheIterateEntries<'a> = 0x131C00 {
        batch: i32; var name: &'a str, iteration_pointers: Packed<(i32, i32)>
    }
    Request CacheSetExpiryPolicy<'a> = 0x132100 { ; var name: &'a str, keys: Vec<Data<'a>>, expiry_policy: Data<'a> }
    /// The cache's event journal in the partition of the request: its first and last sequence
    /// (answered as the map's, a `MapEventJournalSubscribeResponse`).
    Request CacheEventJournalSubscribe<'a> = 0x131F00 { ; var name: &'a str }
    /// Events of the partition's journal (answered as readMany, a `RingbufferReadManyResponse`).
    Request CacheEventJournalRead<'a> = 0x132000 {
        start_sequence: i64, min_size: i32, max_size: i32;
        var name: &'a str, predicate: Option<Data<'a>>, projection: Option<Data<'a>>
    }
}
