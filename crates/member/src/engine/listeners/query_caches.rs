//! Query caches' events (`map/query_cache.rs` keeps the publishers): taken from the entry
//! events of this reactor's partitions and sent to the registrations under each cache's name,
//! past the event bound dropped and counted as entry events are.

use super::{EventKind, Listeners};
use crate::engine::entry_event::Event;
use crate::engine::map::query_cache::{self, Outgoing, Spec};
use crate::engine::request::OpError;
use crate::net::outbox::Outbox;
use std::sync::Arc;

impl Listeners {
    /// Creates cache `spec.cache`'s publisher (`QueryCaches::create`), noting whether its
    /// listener is registered here already (the Java client registers it first).
    pub(crate) fn create_query_cache(
        &mut self,
        map: &str,
        spec: Arc<Spec>,
        (bound, keep): (usize, bool),
    ) -> Result<(), OpError> {
        let listened = self.maps.contains_key(&*spec.cache);
        self.query_caches.create(map, spec, (bound, keep, listened))
    }

    /// Drops the publishers whose listeners all went (after `drop_closed`), logging how many.
    pub(super) fn drop_unlistened_caches(&mut self) {
        if self.query_caches.count() == 0 {
            return;
        }
        let maps = &self.maps;
        let dropped = self.query_caches.drop_unlistened(|cache| maps.contains_key(cache));
        if dropped > 0 {
            tracing::info!(dropped, "query caches dropped: their clients' connections closed");
        }
    }

    /// Takes the entry event `event` of `map` (of one partition) into the map's caches, and
    /// sends what is due.
    pub(super) fn publish_to_caches(&mut self, outbox: &mut Outbox, map: &str, event: &Event<'_>) {
        let due = self.query_caches.take(map, event, &self.schemas, crate::clock::now_ms());
        self.send_cache_events(outbox, due);
    }

    /// A clear (CLEAR_ALL) or evictAll (EVICT_ALL) of `map` for its query caches: one event in
    /// each of `partitions` (this reactor's owned ones), sent as their caches' batches allow.
    pub(crate) fn publish_map_wide_to_caches(
        &mut self,
        outbox: &mut Outbox,
        map: &str,
        kind: EventKind,
        partitions: &[u16],
    ) {
        if self.query_caches.has(map) {
            let due = self.query_caches.take_map_wide(map, kind, partitions, crate::clock::now_ms());
            self.send_cache_events(outbox, due);
        }
    }

    /// The query caches' events due at `now_ms` (the reactor's sweep: batches whose delay
    /// passed, events replayed by setReadCursor, those held until the cache was publishable).
    pub(crate) fn flush_query_caches(&mut self, outbox: &mut Outbox, now_ms: i64) {
        if self.query_caches.count() > 0 {
            let due = self.query_caches.due(now_ms);
            self.send_cache_events(outbox, due);
        }
    }

    /// Partition `partition` changed hands (`map/query_cache.rs`, `partition_moved`): the
    /// caches' clients that must start its sequence over are told.
    pub(crate) fn query_caches_partition_moved(
        &mut self,
        outbox: &mut Outbox,
        partition: u16,
        (gave_up, owner_died): (bool, bool),
    ) {
        if self.query_caches.count() == 0 {
            return;
        }
        for spec in self.query_caches.partition_moved(partition, gave_up, owner_died) {
            let Some(listeners) = self.maps.get(&*spec.cache) else { continue };
            for listener in listeners.iter().filter(|listener| !listener.connection.is_closed()) {
                let Some(out) = outbox.event_buffer(&listener.connection, self.bound.limit_bytes) else {
                    self.bound.drop_event(listener, &spec.map);
                    continue;
                };
                query_cache::encode_end(out, listener.correlation_id, &spec, partition);
            }
        }
    }

    /// Sends each cache's events to the registrations under its name: a batch of one as a
    /// `QueryCacheSingleEvent`, more as `QueryCacheBatchEvent`s of at most its batch size.
    fn send_cache_events(&mut self, outbox: &mut Outbox, due: Vec<Outgoing>) {
        for (spec, partition, events) in due {
            let Some(listeners) = self.maps.get_mut(&*spec.cache) else { continue };
            listeners.retain(|listener| !listener.connection.is_closed());
            for listener in listeners.iter() {
                for chunk in events.chunks(spec.batch_size) {
                    let Some(out) = outbox.event_buffer(&listener.connection, self.bound.limit_bytes) else {
                        self.bound.drop_event(listener, &spec.map);
                        continue;
                    };
                    query_cache::encode(out, listener.correlation_id, &spec, partition, chunk);
                }
            }
        }
    }
}
