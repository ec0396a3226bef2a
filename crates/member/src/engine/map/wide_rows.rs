//! The map's rows over every partition of the operation table, each with its classifier: the
//! map-wide operations (`wide.rs`), queries and index creation (`query_ops.rs`), aggregations
//! and projections (`aggregate_ops.rs`), and entry listeners.

use crate::engine::java_code::{refusal, JavaRole};
use crate::engine::listeners::{EventKind, Listener, Registry};
use crate::engine::map::aggregate_ops::{Aggregate, Project};
use crate::engine::map::near_cache::FetchMetadata;
use crate::engine::map::query::Predicate;
use crate::engine::map::query_ops::{self, AddIndex, Query};
use crate::engine::map::remove_all::RemoveAll;
use crate::engine::map::wide::{Clear, ContainsValue, Flush, IsEmpty, List, Size};
use crate::engine::map::with_metadata::{EntryWithMetadata, PutAllWithMetadata};
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::wide::objects::{add_listener, answered, listener, remove_listener, Answer};
use crate::engine::wide::{Classified, Listed};
use crate::net::connection::ConnectionShared;
use crate::route::row::{wide_row, Flags, Operation, A, S, W};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::Message;
use std::sync::Arc;

/// Operations over every partition of the map.
pub(crate) static WIDE_ROWS: &[Operation] = &[
    wide_row!(MapSize, S, |message, _| Classified::named(Size, message)),
    wide_row!(MapIsEmpty, S, |message, _| Classified::named(IsEmpty, message)),
    wide_row!(MapContainsValue, S, |message, _| {
        let r = MapContainsValue::decode(message)?;
        if r.value.type_id().unwrap_or(0) == 0 {
            return Classified::null("Null value is not allowed!");
        }
        Classified::wide(ContainsValue::new(r.value.0), r.name)
    }),
    // The request's partition's owner puts its entries (with_metadata.rs).
    wide_row!(MapPutAllWithMetadata, W.with(A).with(S), |message, _| {
        let r = MapPutAllWithMetadata::decode(message)?;
        let partition = u16::try_from(message.partition_id()).unwrap_or(u16::MAX);
        let entries = r.entries.iter().map(EntryWithMetadata::from_view).collect();
        Classified::wide(PutAllWithMetadata { partition, entries }, r.name)
    }),
    wide_row!(MapClear, W.with(S), |message, _| Classified::named(Clear::new(EventKind::ClearAll), message)),
    wide_row!(MapKeySet, S, |message, _| Classified::named(List(Listed::Keys), message)),
    wide_row!(MapValues, S, |message, _| Classified::named(List(Listed::Values), message)),
    wide_row!(MapEntrySet, S, |message, _| Classified::named(List(Listed::Entries), message)),
    // Queries (query_ops.rs): every owned partition's entries, filtered by the predicate.
    wide_row!(MapKeySetWithPredicate, S, |message, _| {
        let r = MapKeySetWithPredicate::decode(message)?;
        Classified::wide(Query::new(Listed::Keys, r.predicate.0, None), r.name)
    }),
    wide_row!(MapValuesWithPredicate, S, |message, _| {
        let r = MapValuesWithPredicate::decode(message)?;
        Classified::wide(Query::new(Listed::Values, r.predicate.0, None), r.name)
    }),
    wide_row!(MapEntriesWithPredicate, S, |message, _| {
        let r = MapEntriesWithPredicate::decode(message)?;
        Classified::wide(Query::new(Listed::Entries, r.predicate.0, None), r.name)
    }),
    wide_row!(MapKeySetWithPagingPredicate, S, |message, _| {
        let r = MapKeySetWithPagingPredicate::decode(message)?;
        query_ops::paged(Listed::Keys, r.name, r.predicate)
    }),
    wide_row!(MapValuesWithPagingPredicate, S, |message, _| {
        let r = MapValuesWithPagingPredicate::decode(message)?;
        query_ops::paged(Listed::Values, r.name, r.predicate)
    }),
    wide_row!(MapEntriesWithPagingPredicate, S, |message, _| {
        let r = MapEntriesWithPagingPredicate::decode(message)?;
        query_ops::paged(Listed::Entries, r.name, r.predicate)
    }),
    wide_row!(MapRemoveAll, W.with(S), |message, _| {
        let r = MapRemoveAll::decode(message)?;
        Classified::wide(RemoveAll::new(r.predicate.0), r.name)
    }),
    // Entry processors are Java code: refused as a Hazelcast member without the class refuses.
    wide_row!(MapExecuteOnKey, W.with(S), |message, _| {
        Ok(Classified::Refused(refusal(MapExecuteOnKey::decode(message)?.entry_processor.0, JavaRole::EntryProcessor)))
    }),
    wide_row!(MapSubmitToKey, W.with(S), |message, _| {
        Ok(Classified::Refused(refusal(MapSubmitToKey::decode(message)?.entry_processor.0, JavaRole::EntryProcessor)))
    }),
    wide_row!(MapExecuteOnAllKeys, W.with(S), |message, _| {
        let r = MapExecuteOnAllKeys::decode(message)?;
        Ok(Classified::Refused(refusal(r.entry_processor.0, JavaRole::EntryProcessor)))
    }),
    wide_row!(MapExecuteWithPredicate, W.with(S), |message, _| {
        let r = MapExecuteWithPredicate::decode(message)?;
        Ok(Classified::Refused(refusal(r.entry_processor.0, JavaRole::EntryProcessor)))
    }),
    wide_row!(MapExecuteOnKeys, W.with(S), |message, _| {
        let r = MapExecuteOnKeys::decode(message)?;
        Ok(Classified::Refused(refusal(r.entry_processor.0, JavaRole::EntryProcessor)))
    }),
    // An interceptor and replaceAll's function are Java code too; no map has an interceptor.
    wide_row!(MapAddInterceptor, W.with(S), |message, _| {
        Ok(Classified::Refused(refusal(MapAddInterceptor::decode(message)?.interceptor.0, JavaRole::Interceptor)))
    }),
    wide_row!(MapRemoveInterceptor, W.with(S), |message, _| {
        answered(Answer::False, MapRemoveInterceptor::decode(message)?.name)
    }),
    wide_row!(MapReplaceAll, W.with(S), |message, _| {
        Ok(Classified::Refused(refusal(MapReplaceAll::decode(message)?.function.0, JavaRole::BiFunction)))
    }),
    // No map has a MapStore: loading all is refused; loading given keys fails as Hazelcast's
    // record store does when it has no loader to wait for (a NullPointerException with no
    // message), unless there is no key to load.
    wide_row!(MapLoadAll, W.with(S), |message, _| {
        MapLoadAll::decode(message)?;
        let text = "First you should configure a map store";
        Ok(Classified::Refused(OpError::new(ErrorKind::IllegalArgument, text)))
    }),
    wide_row!(MapLoadGivenKeys, W.with(S), |message, _| {
        let r = MapLoadGivenKeys::decode(message)?;
        if r.keys.is_empty() {
            return answered(Answer::Nothing, r.name);
        }
        Ok(Classified::Refused(OpError::new(ErrorKind::NullArgument, "")))
    }),
    wide_row!(MapAddIndex, W.with(S), |message, _| AddIndex::classify(message)),
    // Aggregations and projections (aggregate_ops.rs).
    wide_row!(MapAggregate, S, |message, _| {
        let r = MapAggregate::decode(message)?;
        Classified::wide(Aggregate::new(r.aggregator.0, None), r.name)
    }),
    wide_row!(MapAggregateWithPredicate, S, |message, _| {
        let r = MapAggregateWithPredicate::decode(message)?;
        Classified::wide(Aggregate::new(r.aggregator.0, Some(r.predicate.0)), r.name)
    }),
    wide_row!(MapProject, S, |message, _| {
        let r = MapProject::decode(message)?;
        Classified::wide(Project::new(r.projection.0, None), r.name)
    }),
    wide_row!(MapProjectWithPredicate, S, |message, _| {
        let r = MapProjectWithPredicate::decode(message)?;
        Classified::wide(Project::new(r.projection.0, Some(r.predicate.0)), r.name)
    }),
    wide_row!(MapEvictAll, W.with(S), |message, _| Classified::named(Clear::new(EventKind::EvictAll), message)),
    wide_row!(MapFlush, S, |message, _| Classified::named(Flush, message)),
    // Entry listeners and near-cache invalidation listeners, on every reactor.
    wide_row!(MapAddEntryListener, S, |message, connection| {
        let r = MapAddEntryListener::decode(message)?;
        let listener = entry_listener(message, connection, (r.include_value, r.listener_flags, r.local_only));
        add_listener(Registry::Entries, r.name, listener)
    }),
    wide_row!(MapAddEntryListenerToKey, S, |message, connection| {
        let r = MapAddEntryListenerToKey::decode(message)?;
        if r.key.type_id().unwrap_or(0) == 0 {
            return Classified::null("Null key is not allowed!");
        }
        let asked = (r.include_value, r.listener_flags, r.local_only);
        let listener = Listener { key: Some(r.key.0.into()), ..entry_listener(message, connection, asked) };
        add_listener(Registry::Entries, r.name, listener)
    }),
    wide_row!(MapAddEntryListenerWithPredicate, S, |message, connection| {
        let r = MapAddEntryListenerWithPredicate::decode(message)?;
        let asked = (r.include_value, r.listener_flags, r.local_only);
        let listener = Listener { predicate: predicate(r.predicate.0), ..entry_listener(message, connection, asked) };
        add_listener(Registry::Entries, r.name, listener)
    }),
    wide_row!(MapAddEntryListenerToKeyWithPredicate, S, |message, connection| {
        let r = MapAddEntryListenerToKeyWithPredicate::decode(message)?;
        if r.key.type_id().unwrap_or(0) == 0 {
            return Classified::null("Null key is not allowed!");
        }
        let asked = (r.include_value, r.listener_flags, r.local_only);
        let (key, predicate) = (Some(r.key.0.into()), predicate(r.predicate.0));
        let listener = Listener { key, predicate, ..entry_listener(message, connection, asked) };
        add_listener(Registry::Entries, r.name, listener)
    }),
    wide_row!(MapAddNearCacheInvalidationListener, S, |message, connection| {
        let r = MapAddNearCacheInvalidationListener::decode(message)?;
        let listener = entry_listener(message, connection, (false, r.listener_flags, r.local_only));
        add_listener(Registry::Entries, r.name, Listener { invalidation: true, ..listener })
    }),
    // A near cache's repairing handler: the named member's metadata (near_cache.rs).
    wide_row!(MapFetchNearCacheInvalidationMetadata, Flags::TARGETED, |message, _| {
        let r = MapFetchNearCacheInvalidationMetadata::decode(message)?;
        let Some(member) = r.uuid else { return Classified::null("uuid cannot be null") };
        Classified::wide(FetchMetadata::new(&r.names, member), r.names.first().copied().unwrap_or_default())
    }),
    wide_row!(MapRemoveEntryListener, S, |message, _| {
        let r = MapRemoveEntryListener::decode(message)?;
        remove_listener(Registry::Entries, r.name, r.registration_id)
    }),
];

/// An entry listener asking for (values, the event kinds of these flags, only this member's
/// events).
fn entry_listener(
    message: &Message<'_>,
    connection: &Arc<ConnectionShared>,
    (include_value, flags, local_only): (bool, i32, bool),
) -> Listener {
    Listener { include_value, flags, local_only, ..listener(message, connection) }
}

/// A listener's predicate: only events whose entry passes it.
fn predicate(data: &[u8]) -> Option<Arc<Predicate>> {
    Some(Arc::new(Predicate::new(Some(data))))
}
