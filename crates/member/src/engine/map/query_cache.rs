//! Query caches (`ContinuousQuery`, the member side of the Java client's `IMap.getQueryCache`):
//! each reactor's publishers, one per cache of a map, turn the changes of the partitions it
//! owns into the cache's events, as Hazelcast's publisher accumulators do.
//!
//! - An entry event becomes a cache event by the predicate, tested against the old and the new
//!   value: entering the predicate's set is ADDED, leaving it REMOVED (carrying the new value),
//!   staying UPDATED; a remove, an eviction or an expiry of an entry in the set keeps its type;
//!   a clear (evictAll) is one CLEAR_ALL (EVICT_ALL) in every partition, without a key.
//! - Each partition numbers its events from 1 (the client checks that none is missing) and
//!   keeps the last `buffer-size` of them, so `setReadCursor` can send them again.
//! - Events go out when a partition holds `batch-size` unsent ones (one `QueryCacheSingleEvent`
//!   for a batch of one, else a `QueryCacheBatchEvent`), or `delay-seconds` after the oldest
//!   unsent one (the reactor's 100 ms sweep looks), and only once the cache is publishable
//!   (`madePublishable`, after the client read the initial contents; at once for a cache
//!   created without them).
//! - With coalescing, a key's unsent event takes the place of the one before it, keeping that
//!   one's sequence. Unlike Hazelcast 5.6 (whose coalescing index outlives the batch, so a
//!   key's later event never reaches the cache: `tests/python/test_query_cache.py`), a key's
//!   event after its batch went out is a new event.
//! - The events go to the connections registered under the cache's name
//!   (`ContinuousQuery.addListener`, kept among the map listeners with no event types, so no
//!   map event reaches them; `Map.removeEntryListener` with the cache's name removes it). A
//!   publisher whose listeners are all gone (their connections closed) is dropped.
//!
//! Bounds: `max-query-caches` publishers per member, `query-cache-buffer-events` events per
//! partition of a publisher (a cache's larger buffer size is cut to it); events for a connection
//! past `listener-event-queue-bytes` are dropped as entry events are.
//!
//! A partition that changes hands starts its events over at its new owner: the member that
//! gave it up (or, when its owner died, the one that took it over) sends the cache an event of
//! sequence -1, on which the Java client starts counting that partition again, as on
//! Hazelcast's migrations. A member that joins is sent every publisher (`QUERY_CACHES`).

use crate::engine::entry_event::{Event, EventKind};
use crate::engine::map::query::Predicate;
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::schemas::Schemas;
use ahash::RandomState;
use ferrogrid_protocol::codec::{QueryCacheBatchEvent, QueryCacheEventData, QueryCacheSingleEvent};
use ferrogrid_protocol::Data;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// What a cache asked for (publisherCreate's fields).
#[derive(Debug)]
pub(crate) struct Spec {
    pub(crate) map: Box<str>,
    /// The cache's name: its listener is registered under it.
    pub(crate) cache: Box<str>,
    pub(crate) predicate: Predicate,
    pub(crate) include_value: bool,
    pub(crate) batch_size: usize,
    /// Events kept per partition (at least the batch size).
    pub(crate) buffer_size: usize,
    pub(crate) delay_ms: i64,
    pub(crate) coalesce: bool,
    /// The client asked for the initial contents: events wait for its madePublishable.
    pub(crate) populate: bool,
    /// The client's publisherCreate as this member received it: what a member that joins is
    /// sent, to publish the cache's events of the partitions it comes to own.
    pub(crate) request: Box<[u8]>,
}

impl Spec {
    /// The spec of a publisherCreate request, its sizes cut to at least 1 and to the member's
    /// `buffer_bound`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        (map, cache): (&str, &str),
        predicate: &[u8],
        include_value: bool,
        (batch_size, buffer_size, delay_seconds): (i32, i32, i64),
        (coalesce, populate): (bool, bool),
        (buffer_bound, request): (usize, &[u8]),
    ) -> Spec {
        let batch_size = usize::try_from(batch_size).unwrap_or(1).clamp(1, buffer_bound);
        let buffer_size = usize::try_from(buffer_size).unwrap_or(1).clamp(batch_size, buffer_bound);
        Spec {
            map: map.into(),
            cache: cache.into(),
            predicate: Predicate::new(Some(predicate)),
            include_value,
            batch_size,
            buffer_size,
            delay_ms: delay_seconds.clamp(0, i64::MAX / 1000) * 1000,
            coalesce,
            populate,
            request: request.into(),
        }
    }

    /// The map's name as the client knows it (a tenant's map without its namespace).
    fn client_map(&self) -> &str {
        crate::tenants::split(&self.map).map_or(&self.map, |(_, map)| map)
    }
}

/// One event of a cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheEvent {
    pub(crate) sequence: i64,
    pub(crate) kind: EventKind,
    pub(crate) key: Option<Box<[u8]>>,
    pub(crate) value: Option<Box<[u8]>>,
    /// When it was taken (a batch that is not full goes out `delay` after its oldest).
    at_ms: i64,
}

/// A publisher's events of one partition.
#[derive(Debug, Default)]
struct PartitionEvents {
    /// The last sequence taken (0: none yet).
    last: i64,
    /// The last `buffer_size` events, oldest first, sent or not.
    held: VecDeque<CacheEvent>,
    /// How many of `held`, at its end, are not sent yet.
    unsent: usize,
}

impl PartitionEvents {
    /// Takes `event` (kind, key, value) at `now_ms`, coalesced into the key's unsent event if
    /// `coalesce`; the oldest held event goes past `buffer_size` (lost if it was not sent).
    fn push(&mut self, (kind, key, value): (EventKind, Option<&[u8]>, Option<&[u8]>), spec: &Spec, now_ms: i64) {
        if spec.coalesce {
            if let Some(key) = key {
                let unsent_from = self.held.len() - self.unsent;
                let same = self.held.range_mut(unsent_from..).find(|held| held.key.as_deref() == Some(key));
                if let Some(held) = same {
                    held.kind = kind;
                    held.value = value.map(Into::into);
                    return;
                }
            }
        }
        self.last += 1;
        let (key, value) = (key.map(Into::into), value.map(Into::into));
        self.held.push_back(CacheEvent { sequence: self.last, kind, key, value, at_ms: now_ms });
        self.unsent += 1;
        if self.held.len() > spec.buffer_size {
            self.held.pop_front();
            self.unsent = self.unsent.min(self.held.len());
        }
    }

    /// The unsent events to send now (marked sent): all of them once `batch_size` are
    /// waiting, or when the oldest waited `delay_ms` (`timed`: the sweep asks).
    fn due(&mut self, spec: &Spec, now_ms: i64, timed: bool) -> Option<Vec<CacheEvent>> {
        if self.unsent == 0 {
            return None;
        }
        let unsent_from = self.held.len() - self.unsent;
        let waited = timed && now_ms - self.held[unsent_from].at_ms >= spec.delay_ms;
        if self.unsent < spec.batch_size && !waited {
            return None;
        }
        self.unsent = 0;
        Some(self.held.range(unsent_from..).cloned().collect())
    }
}

/// A cache's publisher on one reactor.
#[derive(Debug)]
struct Publisher {
    spec: Arc<Spec>,
    /// Events go out only once the client read the initial contents (`madePublishable`).
    publishable: bool,
    partitions: HashMap<u16, PartitionEvents, RandomState>,
    /// The cache's listener has been registered here: once none is left (its client's
    /// connection closed), the publisher goes too.
    listened: bool,
}

/// Events of one cache's partition to send: the cache's spec, the partition and its events.
pub(crate) type Outgoing = (Arc<Spec>, u16, Vec<CacheEvent>);

/// One reactor's publishers, by map name.
#[derive(Debug, Default)]
pub(crate) struct QueryCaches {
    maps: HashMap<Box<str>, Vec<Publisher>, RandomState>,
}

impl QueryCaches {
    /// Whether any cache listens to `map`.
    pub(crate) fn has(&self, map: &str) -> bool {
        !self.maps.is_empty() && self.maps.contains_key(map)
    }

    /// How many publishers this reactor holds (every reactor holds each one).
    pub(crate) fn count(&self) -> usize {
        self.maps.values().map(Vec::len).sum()
    }

    /// The publisher of cache `spec.cache` of `map`, created anew (a cache created again, by a
    /// client that lost it, starts over), or with `keep`, only if there is none (another
    /// member's, sent when a member joined: the one here goes on). Refused past `bound`
    /// publishers.
    pub(crate) fn create(
        &mut self,
        map: &str,
        spec: Arc<Spec>,
        (bound, keep, listened): (usize, bool, bool),
    ) -> Result<(), OpError> {
        if keep && self.find(map, &spec.cache).is_some() {
            return Ok(());
        }
        let publishers = self.maps.entry(map.into()).or_default();
        publishers.retain(|publisher| publisher.spec.cache != spec.cache);
        let count: usize = self.maps.values().map(Vec::len).sum();
        if count >= bound {
            self.maps.retain(|_, publishers| !publishers.is_empty());
            let text = format!("{bound} query caches are published already (ferrogrid.limits.max-query-caches)");
            return Err(OpError::new(ErrorKind::Refused, text));
        }
        // A cache without initial contents is publishable at once (Hazelcast's, too: the client
        // sends no madePublishable then).
        let publishable = !spec.populate;
        let publisher = Publisher { spec, publishable, partitions: HashMap::default(), listened };
        self.maps.entry(map.into()).or_default().push(publisher);
        Ok(())
    }

    /// madePublishable: the cache's events go out from now on. False if there is no such cache.
    pub(crate) fn made_publishable(&mut self, map: &str, cache: &str) -> bool {
        self.find(map, cache).map(|publisher| publisher.publishable = true).is_some()
    }

    /// destroyCache: the cache's publisher and its events, gone.
    pub(crate) fn destroy(&mut self, map: &str, cache: &str) {
        if let Some(publishers) = self.maps.get_mut(map) {
            publishers.retain(|publisher| &*publisher.spec.cache != cache);
            if publishers.is_empty() {
                self.maps.remove(map);
            }
        }
    }

    /// Every publisher and whether it is publishable (what a member that joins is sent).
    pub(crate) fn published(&self) -> Vec<(Arc<Spec>, bool)> {
        self.maps.values().flatten().map(|publisher| (publisher.spec.clone(), publisher.publishable)).collect()
    }

    /// Partition `partition` changed hands (this member gave it up, or took it over): its
    /// events start over at its next owner. Returns the caches whose client must be told so
    /// (an event of sequence -1, Hazelcast's end of a partition's sequence): those that sent
    /// events of it from here when `gave_up`, every publishable one when `owner_died` (the
    /// owner that sent them cannot tell).
    pub(crate) fn partition_moved(&mut self, partition: u16, gave_up: bool, owner_died: bool) -> Vec<Arc<Spec>> {
        let mut ended = Vec::new();
        for publisher in self.maps.values_mut().flatten() {
            let sent = publisher.partitions.remove(&partition).is_some_and(|events| events.last > 0);
            if publisher.publishable && ((gave_up && sent) || owner_died) {
                ended.push(publisher.spec.clone());
            }
        }
        ended
    }

    /// A listener of cache `cache` was registered here.
    pub(crate) fn listened(&mut self, cache: &str) {
        for publisher in self.maps.values_mut().flatten().filter(|publisher| &*publisher.spec.cache == cache) {
            publisher.listened = true;
        }
    }

    /// Drops the publishers whose listeners were all dropped (`listening` says whether a cache
    /// has one here): their clients' connections closed, as Hazelcast drops a disconnected
    /// client's query caches. Returns how many went.
    pub(crate) fn drop_unlistened(&mut self, listening: impl Fn(&str) -> bool) -> usize {
        let before = self.count();
        for publishers in self.maps.values_mut() {
            publishers.retain(|publisher| !publisher.listened || listening(&publisher.spec.cache));
        }
        self.maps.retain(|_, publishers| !publishers.is_empty());
        before - self.count()
    }

    /// Drops every cache of `map` (the map was destroyed).
    pub(crate) fn drop_map(&mut self, map: &str) {
        self.maps.remove(map);
    }

    fn find(&mut self, map: &str, cache: &str) -> Option<&mut Publisher> {
        self.maps.get_mut(map)?.iter_mut().find(|publisher| &*publisher.spec.cache == cache)
    }

    /// setReadCursor: the partition's events from `sequence` on are sent again, if it still
    /// holds that one (true); false if it does not (gone past the buffer, or not taken yet)
    /// or there is no such cache.
    pub(crate) fn set_read_cursor(
        &mut self,
        (map, cache): (&str, &str),
        partition: u16,
        sequence: i64,
    ) -> Result<bool, OpError> {
        if sequence <= 0 {
            let text = format!("sequence is {sequence} but must be > 0");
            return Err(OpError::new(ErrorKind::IllegalArgument, text));
        }
        let Some(events) = self.find(map, cache).and_then(|publisher| publisher.partitions.get_mut(&partition)) else {
            return Ok(false);
        };
        let Some(position) = events.held.iter().position(|held| held.sequence == sequence) else { return Ok(false) };
        events.unsent = events.unsent.max(events.held.len() - position);
        Ok(true)
    }

    /// Takes the entry event `event` of `map` (of one partition) into every cache of the map
    /// whose predicate it concerns; returns the events due now.
    pub(crate) fn take(
        &mut self,
        map: &str,
        event: &Event<'_>,
        schemas: &(Arc<Schemas>, u16),
        now_ms: i64,
    ) -> Vec<Outgoing> {
        let (Some(partition), Some(key)) = (event.partition_id, event.key) else { return Vec::new() };
        let Some(publishers) = self.maps.get_mut(map) else { return Vec::new() };
        let mut due = Vec::new();
        for publisher in publishers.iter_mut() {
            let spec = publisher.spec.clone();
            let Some((kind, value)) = cache_event(&spec, event, key, schemas) else { continue };
            let value = value.filter(|_| spec.include_value);
            let events = publisher.partitions.entry(partition.0).or_default();
            events.push((kind, Some(key), value), &spec, now_ms);
            if publisher.publishable {
                if let Some(sent) = events.due(&spec, now_ms, false) {
                    due.push((spec, partition.0, sent));
                }
            }
        }
        due
    }

    /// A clear (CLEAR_ALL) or evictAll (EVICT_ALL) of `map`: one such event in each of
    /// `partitions` (those this reactor owns) for every cache of the map; returns the events
    /// due now.
    pub(crate) fn take_map_wide(
        &mut self,
        map: &str,
        kind: EventKind,
        partitions: &[u16],
        now_ms: i64,
    ) -> Vec<Outgoing> {
        let Some(publishers) = self.maps.get_mut(map) else { return Vec::new() };
        let mut due = Vec::new();
        for publisher in publishers.iter_mut() {
            let spec = publisher.spec.clone();
            for partition in partitions {
                let events = publisher.partitions.entry(*partition).or_default();
                events.push((kind, None, None), &spec, now_ms);
                if publisher.publishable {
                    if let Some(sent) = events.due(&spec, now_ms, false) {
                        due.push((spec.clone(), *partition, sent));
                    }
                }
            }
        }
        due
    }

    /// The events of publishable caches due at `now_ms`: full batches, and those whose oldest
    /// event waited the cache's delay.
    pub(crate) fn due(&mut self, now_ms: i64) -> Vec<Outgoing> {
        let mut due = Vec::new();
        for publisher in self.maps.values_mut().flatten().filter(|publisher| publisher.publishable) {
            for (partition, events) in publisher.partitions.iter_mut() {
                if let Some(sent) = events.due(&publisher.spec, now_ms, true) {
                    due.push((publisher.spec.clone(), *partition, sent));
                }
            }
        }
        due
    }
}

/// What entry event `event` of `key` is to a cache: its type and the value it carries, or
/// None if it concerns no entry of the predicate's set.
fn cache_event<'e>(
    spec: &Spec,
    event: &Event<'e>,
    key: &[u8],
    schemas: &(Arc<Schemas>, u16),
) -> Option<(EventKind, Option<&'e [u8]>)> {
    let passes = |value: Option<&[u8]>| {
        value.is_some_and(|value| spec.predicate.admits((key, value), (&schemas.0, schemas.1), "a query cache"))
    };
    match event.kind {
        EventKind::Added => passes(event.value).then_some((EventKind::Added, event.value)),
        EventKind::Updated | EventKind::Merged => match (passes(event.old_value), passes(event.value)) {
            (true, true) => Some((EventKind::Updated, event.value)),
            (false, true) => Some((EventKind::Added, event.value)),
            (true, false) => Some((EventKind::Removed, event.value)),
            (false, false) => None,
        },
        EventKind::Removed | EventKind::Evicted | EventKind::Expired => {
            passes(event.old_value).then_some((event.kind, None))
        }
        EventKind::ClearAll | EventKind::EvictAll => None,
    }
}

/// Appends `events` of `partition` (one batch) for the registration `correlation_id`: one
/// `QueryCacheSingleEvent`, or a `QueryCacheBatchEvent` for more.
pub(crate) fn encode(out: &mut Vec<u8>, correlation_id: i64, spec: &Spec, partition: u16, events: &[CacheEvent]) {
    let partition_id = i32::from(partition);
    let data = |event| event_data(event, partition_id, spec.client_map());
    if let [event] = events {
        QueryCacheSingleEvent { data: data(event) }.encode(out, correlation_id, partition_id);
    } else {
        let events = events.iter().map(data).collect();
        QueryCacheBatchEvent { partition_id, events, source: &spec.cache }.encode(out, correlation_id, partition_id);
    }
}

/// Appends the end of `partition`'s sequence (sequence -1, no key: the client starts counting
/// that partition's events again) for the registration `correlation_id`.
pub(crate) fn encode_end(out: &mut Vec<u8>, correlation_id: i64, spec: &Spec, partition: u16) {
    let partition_id = i32::from(partition);
    let map_name = spec.client_map();
    let data = QueryCacheEventData { key: None, value: None, sequence: -1, event_type: 0, partition_id, map_name };
    QueryCacheSingleEvent { data }.encode(out, correlation_id, partition_id);
}

fn event_data<'e>(event: &'e CacheEvent, partition_id: i32, map_name: &'e str) -> QueryCacheEventData<'e> {
    QueryCacheEventData {
        key: event.key.as_deref().map(Data),
        value: event.value.as_deref().map(Data),
        sequence: event.sequence,
        event_type: event.kind as i32,
        partition_id,
        map_name,
    }
}

#[cfg(test)]
mod tests;
