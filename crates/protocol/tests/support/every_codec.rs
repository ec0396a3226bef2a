//! Decodes one message with every codec of the table (and the Error response reader).
//!
//! Shared by `tests/properties.rs` and the fuzz targets in `fuzz/` (which include this file by
//! path), so both exercise the same list. `properties.rs` checks the list against the
//! `messages!` table in `src/codec.rs`, so a codec added there without being added here fails
//! the tests.

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::read_error_response;
use ferrogrid_protocol::Message;

/// Calls `$visit!(Codec, …)` with every codec in the table: requests, responses, events.
macro_rules! for_every_codec {
    ($visit:ident) => {
        $visit!(
            ClientAuthentication,
            ClientAuthenticationCustom,
            ClientAddClusterViewListener,
            ClientCreateProxy,
            ClientDestroyProxy,
            ClientAddPartitionLostListener,
            ClientRemovePartitionLostListener,
            ClientGetDistributedObjects,
            ClientAddDistributedObjectListener,
            DistributedObjectEvent,
            ClientRemoveDistributedObjectListener,
            ClientPing,
            ClientStatistics,
            ClientCreateProxies,
            ClientLocalBackupListener,
            ClientTriggerPartitionAssignment,
            MultiMapPut,
            MultiMapGet,
            MultiMapRemove,
            MultiMapKeySet,
            MultiMapValues,
            MultiMapEntrySet,
            MultiMapContainsKey,
            MultiMapContainsValue,
            MultiMapContainsEntry,
            MultiMapSize,
            MultiMapClear,
            MultiMapValueCount,
            MultiMapAddEntryListenerToKey,
            MultiMapAddEntryListener,
            MultiMapRemoveEntryListener,
            MultiMapLock,
            MultiMapTryLock,
            MultiMapIsLocked,
            MultiMapUnlock,
            MultiMapForceUnlock,
            MultiMapRemoveEntry,
            MultiMapDelete,
            MultiMapPutAll,
            QueueOffer,
            QueuePut,
            QueueSize,
            QueueRemove,
            QueuePoll,
            QueueTake,
            QueuePeek,
            QueueIterator,
            QueueDrainTo,
            QueueDrainToMaxSize,
            QueueContains,
            QueueContainsAll,
            QueueCompareAndRemoveAll,
            QueueCompareAndRetainAll,
            QueueClear,
            QueueAddAll,
            QueueAddListener,
            QueueItemEvent,
            QueueRemoveListener,
            QueueRemainingCapacity,
            QueueIsEmpty,
            ListSize,
            ListContains,
            ListContainsAll,
            ListAdd,
            ListRemove,
            ListAddAll,
            ListCompareAndRemoveAll,
            ListCompareAndRetainAll,
            ListClear,
            ListGetAll,
            ListAddListener,
            ListRemoveListener,
            ListIsEmpty,
            ListAddAllWithIndex,
            ListGet,
            ListSet,
            ListAddWithIndex,
            ListRemoveWithIndex,
            ListLastIndexOf,
            ListIndexOf,
            ListSub,
            ListIterator,
            ListListIterator,
            SetSize,
            SetContains,
            SetContainsAll,
            SetAdd,
            SetRemove,
            SetAddAll,
            SetCompareAndRemoveAll,
            SetCompareAndRetainAll,
            SetClear,
            SetGetAll,
            SetAddListener,
            SetRemoveListener,
            SetIsEmpty,
            ItemEvent,
            TopicPublish,
            TopicAddMessageListener,
            TopicEvent,
            TopicRemoveMessageListener,
            TopicPublishAll,
            RingbufferSize,
            RingbufferTailSequence,
            RingbufferHeadSequence,
            RingbufferCapacity,
            RingbufferRemainingCapacity,
            RingbufferAdd,
            RingbufferReadOne,
            RingbufferAddAll,
            RingbufferReadMany,
            RingbufferReadManyResponse,
            PnCounterGet,
            PnCounterAdd,
            PnCounterGetConfiguredReplicaCount,
            PnCounterResponse,
            MapPut,
            MapGet,
            MapRemove,
            MapReplace,
            MapReplaceIfSame,
            MapContainsKey,
            MapContainsValue,
            MapRemoveIfSame,
            MapDelete,
            MapFlush,
            MapTryRemove,
            MapTryPut,
            MapPutTransient,
            MapPutIfAbsent,
            MapSet,
            MapGetEntryView,
            MapEvict,
            MapEvictAll,
            MapKeySet,
            MapGetAll,
            MapValues,
            MapEntrySet,
            MapSize,
            MapIsEmpty,
            MapPutAll,
            MapClear,
            MapSetTtl,
            MapPutWithMaxIdle,
            MapPutTransientWithMaxIdle,
            MapPutIfAbsentWithMaxIdle,
            MapSetWithMaxIdle,
            MapLock,
            MapTryLock,
            MapIsLocked,
            MapUnlock,
            MapForceUnlock,
            MapAddEntryListenerToKeyWithPredicate,
            MapAddEntryListenerWithPredicate,
            MapAddEntryListenerToKey,
            MapAddEntryListener,
            MapRemoveEntryListener,
            MapAddNearCacheInvalidationListener,
            MapInvalidationEvent,
            MapBatchInvalidationEvent,
            FlakeIdGeneratorNewIdBatch,
            FlakeIdGeneratorNewIdBatchResponse,
            AuthenticationResponse,
            DistributedObjectsResponse,
            EmptyResponse,
            BoolResponse,
            IntResponse,
            LongResponse,
            UuidResponse,
            NullableDataResponse,
            DeleteResponse,
            DataListResponse,
            EntryListResponse,
            EntryViewResponse,
            MembersViewEvent,
            PartitionsViewEvent,
            MemberGroupsViewEvent,
            ClusterVersionEvent,
            BackupEvent,
            EntryEvent
        )
    };
}

/// Reads the header accessors and decodes `message` with every codec, whatever its type.
/// Returns how many codecs accepted it. Never panics (that is the property under test).
pub fn decode_with_every_codec(message: &Message<'_>) -> usize {
    std::hint::black_box((
        message.message_type(),
        message.correlation_id(),
        message.partition_id(),
        message.backup_acks(),
        message.initial_flags(),
    ));
    let mut accepted = usize::from(read_error_response(message).is_ok());
    macro_rules! decode_all {
        ($($codec:ident),*) => {
            $(accepted += usize::from(std::hint::black_box($codec::decode(message)).is_ok());)*
        };
    }
    for_every_codec!(decode_all);
    accepted
}

/// The names in [`for_every_codec!`], for checking the list against the table.
#[allow(dead_code)]
pub fn every_codec_name() -> Vec<&'static str> {
    macro_rules! names {
        ($($codec:ident),*) => {
            vec![$(stringify!($codec)),*]
        };
    }
    for_every_codec!(names)
}
