//! The replicated map's rows of the operation table, each with its decoder or classifier.

use crate::engine::listeners::{Listener, Registry};
use crate::engine::map::query::Predicate;
use crate::engine::replicated_map::iteration::{OwnedView, RecordMeta};
use crate::engine::replicated_map::request::{ReplicatedMapOp as Op, ReplicatedMapRequest};
use crate::engine::replicated_map::wide::{
    EndEntryViewIteration, ReplicatedClear, ReplicatedContainsValue, ReplicatedList, ReplicatedPutAll,
    ReplicatedPutAllWithMetadata, ReplicatedSize,
};
use crate::engine::structures::ObjectKind;
use crate::engine::wide::objects::destroy_object;
use crate::engine::wide::objects::{add_listener, listener, remove_listener};
use crate::engine::wide::WideRequest;
use crate::engine::wide::{Classified, Listed};
use crate::net::connection::ConnectionShared;
use crate::route::row::{row, wide_row, Operation, A, S, W};
use crate::route::wire::blob;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{Message, Uuid};
use std::borrow::Cow;
use std::sync::Arc;

/// Key writes on the owner of the key's partition, which sends them to every member; key
/// reads on the copy of the member asked; the map-wide reads over this member's copy, the
/// map-wide writes (putAll, clear) on every member's owned partitions.
pub(crate) static ROWS: &[Operation] = &[
    row!(ReplicatedMapPut, Partition, W.with(A).with(S), |r| {
        replicated_map(r.name, Op::Put { key: blob(r.key), value: blob(r.value), ttl_ms: r.ttl })
    }),
    row!(ReplicatedMapRemove, Partition, W.with(S), |r| replicated_map(r.name, Op::Remove { key: blob(r.key) })),
    row!(ReplicatedMapGet, LocalCopy, S, |r| replicated_map(r.name, Op::Get { key: blob(r.key) })),
    row!(ReplicatedMapContainsKey, LocalCopy, S, |r| replicated_map(r.name, Op::ContainsKey { key: blob(r.key) })),
    wide_row!(ReplicatedMapSize, S, |message, _| Classified::named(ReplicatedSize { answer_empty: false }, message)),
    wide_row!(ReplicatedMapIsEmpty, S, |message, _| Classified::named(ReplicatedSize { answer_empty: true }, message)),
    wide_row!(ReplicatedMapContainsValue, S, |message, _| {
        let r = ReplicatedMapContainsValue::decode(message)?;
        if r.value.type_id().unwrap_or(0) == 0 {
            return Classified::null("Null value is not allowed!");
        }
        Classified::wide(ReplicatedContainsValue(r.value.0.into()), r.name)
    }),
    wide_row!(ReplicatedMapKeySet, S, |message, _| Classified::named(ReplicatedList(Listed::Keys), message)),
    wide_row!(ReplicatedMapValues, S, |message, _| Classified::named(ReplicatedList(Listed::Values), message)),
    wide_row!(ReplicatedMapEntrySet, S, |message, _| Classified::named(ReplicatedList(Listed::Entries), message)),
    wide_row!(ReplicatedMapPutAll, W.with(A).with(S), |message, _| {
        let r = ReplicatedMapPutAll::decode(message)?;
        if r.entries.iter().any(|(key, value)| key.type_id().unwrap_or(0) == 0 || value.type_id().unwrap_or(0) == 0) {
            return Classified::null("Null key or value is not allowed!");
        }
        let entries = r.entries.iter().map(|(key, value)| (key.0.into(), value.0.into())).collect();
        Classified::wide(ReplicatedPutAll { entries }, r.name)
    }),
    // Entries with their metadata, on the owner of the request's partition.
    wide_row!(ReplicatedMapPutAllWithMetadata, W.with(A).with(S), |message, _| {
        let r = ReplicatedMapPutAllWithMetadata::decode(message)?;
        let entries = r
            .entries
            .iter()
            .map(|view| {
                let meta = RecordMeta {
                    creation_time_ms: view.creation_time,
                    hits: view.hits,
                    last_access_time_ms: view.last_access_time,
                    last_update_time_ms: view.last_update_time,
                    ttl_ms: view.ttl,
                };
                OwnedView { key: view.key.0.into(), value: view.value.0.into(), meta }
            })
            .collect();
        let partition = u16::try_from(r.partition_id).unwrap_or(u16::MAX);
        Classified::wide(ReplicatedPutAllWithMetadata { partition, entries }, r.name)
    }),
    // Iteration over entry views by cursor (iteration.rs), on the partition's owner.
    row!(ReplicatedMapFetchEntryViews, Partition, S, |r| {
        let cursor = r.cursor_id.unwrap_or(Uuid { most: 0, least: 0 });
        let batch = usize::try_from(r.batch_size).unwrap_or(0);
        replicated_map(r.name, Op::FetchEntryViews { cursor, new_iteration: r.new_iteration, batch })
    }),
    wide_row!(ReplicatedMapEndEntryViewIteration, S, |message, _| {
        let r = ReplicatedMapEndEntryViewIteration::decode(message)?;
        Classified::wide(EndEntryViewIteration(r.cursor_id), r.name)
    }),
    wide_row!(ReplicatedMapClear, W.with(S), |message, _| Classified::named(ReplicatedClear, message)),
    wide_row!(ReplicatedMapAddEntryListener, S, |message, connection| {
        let r = ReplicatedMapAddEntryListener::decode(message)?;
        let listener = Listener { local_only: r.local_only, ..entry_listener(message, connection) };
        add_listener(Registry::ReplicatedEntries, r.name, listener)
    }),
    wide_row!(ReplicatedMapAddEntryListenerToKey, S, |message, connection| {
        let r = ReplicatedMapAddEntryListenerToKey::decode(message)?;
        if r.key.type_id().unwrap_or(0) == 0 {
            return Classified::null("Null key is not allowed!");
        }
        let (key, local_only) = (Some(r.key.0.into()), r.local_only);
        let listener = Listener { key, local_only, ..entry_listener(message, connection) };
        add_listener(Registry::ReplicatedEntries, r.name, listener)
    }),
    wide_row!(ReplicatedMapAddEntryListenerWithPredicate, S, |message, connection| {
        let r = ReplicatedMapAddEntryListenerWithPredicate::decode(message)?;
        let (local_only, predicate) = (r.local_only, Some(Arc::new(Predicate::new(Some(r.predicate.0)))));
        let listener = Listener { local_only, predicate, ..entry_listener(message, connection) };
        add_listener(Registry::ReplicatedEntries, r.name, listener)
    }),
    wide_row!(ReplicatedMapAddEntryListenerToKeyWithPredicate, S, |message, connection| {
        let r = ReplicatedMapAddEntryListenerToKeyWithPredicate::decode(message)?;
        if r.key.type_id().unwrap_or(0) == 0 {
            return Classified::null("Null key is not allowed!");
        }
        let (key, local_only) = (Some(r.key.0.into()), r.local_only);
        let predicate = Some(Arc::new(Predicate::new(Some(r.predicate.0))));
        let listener = Listener { key, local_only, predicate, ..entry_listener(message, connection) };
        add_listener(Registry::ReplicatedEntries, r.name, listener)
    }),
    // A near cache's listener: an entry listener's events (values included whatever
    // includeValue says), as Hazelcast's ReplicatedMapAddNearCacheListenerMessageTask sends them.
    wide_row!(ReplicatedMapAddNearCacheEntryListener, S, |message, connection| {
        let r = ReplicatedMapAddNearCacheEntryListener::decode(message)?;
        let listener = Listener { local_only: r.local_only, ..entry_listener(message, connection) };
        add_listener(Registry::ReplicatedEntries, r.name, listener)
    }),
    wide_row!(ReplicatedMapRemoveEntryListener, S, |message, _| {
        let r = ReplicatedMapRemoveEntryListener::decode(message)?;
        remove_listener(Registry::ReplicatedEntries, r.name, r.registration_id)
    }),
];

/// A request on the replicated map `name`.
fn replicated_map<'a>(name: &'a str, op: Op<'a>) -> ReplicatedMapRequest<'a> {
    ReplicatedMapRequest { name: Cow::Borrowed(name), op }
}

/// An entry listener: every kind of event, with values.
fn entry_listener(message: &Message<'_>, connection: &Arc<ConnectionShared>) -> Listener {
    Listener { include_value: true, flags: -1, ..listener(message, connection) }
}

/// Destroy of a replicated map: its entries and its entry listeners, everywhere.
pub(crate) fn destroy(kind: ObjectKind) -> WideRequest {
    destroy_object(Some(kind), Some(Registry::ReplicatedEntries))
}
