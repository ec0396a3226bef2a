//! Entry listeners: registrations and event delivery.
//!
//! Every reactor keeps its own copy of the registrations (added and removed by a fan-out to
//! all reactors, so one is in force everywhere before the client hears it is registered) and
//! publishes the events of the partitions it owns straight to the listening connections. A
//! partition's events therefore leave in the order the partition applied them. Registrations
//! of a closed connection are dropped when next seen.
//!
//! Events for a connection with more than `listener-event-queue-bytes` waiting are dropped,
//! as Hazelcast drops events past its event queue capacity: a client that stops reading its
//! events must not grow the member's memory without bound. Each drop is counted in the
//! reactor's `eventsDropped` probe and warned about at most once per second per reactor.
//! Invalidation sequences advance for dropped events too, so a near cache sees the gap: each
//! reactor keeps the sequences and partition uuids of its partitions (`invalidation.rs`).

use crate::cluster::peer::TopicRelay;
pub use crate::engine::entry_event::{Event, EventKind};
use crate::engine::invalidation::InvalidationMetadata;
use crate::engine::map::query_cache::QueryCaches;
use crate::net::connection::ConnectionShared;
use crate::net::outbox::Outbox;
use crate::obs::probes::Counter;
use ahash::RandomState;
use ferrogrid_protocol::codec::{EntryEvent, ItemEvent, MapInvalidationEvent, TopicEvent};
use ferrogrid_protocol::{Data, MessageType, PartitionId, Uuid};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::warn;

pub(crate) mod caches;
mod query_caches;

/// Shortest time between two warnings about dropped events from one reactor.
const DROP_WARNING_INTERVAL: Duration = Duration::from_secs(1);

/// One registration on one connection.
#[derive(Debug, Clone)]
pub struct Listener {
    pub id: Uuid,
    pub connection: Arc<ConnectionShared>,
    /// The registration request's correlation id: every event carries it.
    pub correlation_id: i64,
    /// The event message type (the registration request type with kind 0x02).
    pub event_type: MessageType,
    pub include_value: bool,
    pub flags: i32,
    /// Only this key's events (AddEntryListenerToKey).
    pub key: Option<Box<[u8]>>,
    /// A near-cache invalidation listener: told which keys changed, not how.
    pub invalidation: bool,
    /// A topic listener of a smart client, registered with every member: it hears only what
    /// is published by this member (a unisocket client's hears every member's, relayed).
    pub local_only: bool,
    /// Only events whose entry passes this predicate (AddEntryListenerWithPredicate): the new
    /// value for ADDED and UPDATED, the old one for REMOVED, EVICTED and EXPIRED, as Hazelcast's
    /// `QueryEventFilter` tests them.
    pub predicate: Option<Arc<crate::engine::map::query::Predicate>>,
}

/// What the invalidation of a whole map (a clear) names: the map name's partition, that
/// partition's uuid and the sequence the clear took there (as Hazelcast's clear invalidation
/// names them; a client's repairing handler checks them against the name's partition).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClearInvalidation {
    pub partition: PartitionId,
    pub partition_uuid: Uuid,
    pub sequence: i64,
}

/// A new random partition uuid.
pub(crate) fn fresh_uuid() -> Uuid {
    Uuid::from_u128(uuid::Uuid::new_v4().as_u128())
}

/// The bound on events waiting for one listening connection, and what happens past it.
#[derive(Debug)]
pub struct EventBound {
    /// The reactor these listeners belong to (named in warnings).
    reactor: usize,
    /// `listener-event-queue-bytes`.
    limit_bytes: usize,
    /// Events dropped, one per listener that did not get an event: the reactor's probe.
    dropped: Arc<Counter>,
    last_warning: Option<Instant>,
    /// Drops since the last warning.
    unreported: u64,
}

impl EventBound {
    pub fn new(reactor: usize, limit_bytes: usize, dropped: Arc<Counter>) -> EventBound {
        EventBound { reactor, limit_bytes, dropped, last_warning: None, unreported: 0 }
    }

    /// Counts one dropped event; returns the drops to report if a warning is due at `now`.
    fn count_drop(&mut self, now: Instant) -> Option<u64> {
        self.dropped.add(1);
        self.unreported += 1;
        let due = self.last_warning.is_none_or(|last| now.duration_since(last) >= DROP_WARNING_INTERVAL);
        if !due {
            return None;
        }
        self.last_warning = Some(now);
        Some(std::mem::take(&mut self.unreported))
    }

    /// Counts an event not sent to `listener`, warning at most once per interval.
    fn drop_event(&mut self, listener: &Listener, map: &str) {
        if let Some(dropped) = self.count_drop(Instant::now()) {
            warn!(
                reactor = self.reactor,
                peer = %listener.connection.peer,
                map = %crate::tenants::display(map),
                dropped,
                limit_bytes = self.limit_bytes,
                "dropping entry events for a listening client that does not read them (more than \
                 listener-event-queue-bytes waiting); `dropped` counts this reactor's drops since its last warning"
            );
        }
    }
}

/// One reactor's copy of the registrations, by map name.
#[derive(Debug)]
pub struct Listeners {
    maps: HashMap<Box<str>, Vec<Listener>, RandomState>,
    /// The other registries (item listeners of queues, lists and sets, message listeners of
    /// topics), by object name, at `Registry as usize - 1`.
    objects: [HashMap<Box<str>, Vec<Listener>, RandomState>; OBJECT_REGISTRIES],
    /// The invalidation sequences and partition uuids of this reactor's partitions.
    pub metadata: InvalidationMetadata,
    bound: EventBound,
    /// The cluster's Compact schemas and partition count, for predicates of listeners.
    pub(crate) schemas: (Arc<crate::engine::schemas::Schemas>, u16),
    /// The query caches' publishers of this reactor's partitions (`map/query_cache.rs`); their
    /// events go to the registrations under each cache's name in `maps`.
    pub(crate) query_caches: QueryCaches,
}

/// Unbounded registrations for unit tests of the code that publishes through them.
#[cfg(test)]
impl Default for Listeners {
    fn default() -> Listeners {
        Listeners::new(EventBound::new(0, usize::MAX, Default::default()))
    }
}

/// Which registrations: entry listeners of maps, item listeners of queues, lists and sets,
/// message listeners of topics (objects of different services may share a name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registry {
    Entries,
    Items,
    ListItems,
    SetItems,
    Messages,
    MultiMapEntries,
    /// Entry listeners of replicated maps: each member publishes the changes it applies to
    /// its own registrations ([`Listeners::publish_replicated`]).
    ReplicatedEntries,
    /// Entry listeners of JCache caches (`Cache.AddEntryListener`): events of a key go to
    /// the registrations on the member that owns it ([`Listeners::publish_cache`]).
    CacheEntries,
}

const OBJECT_REGISTRIES: usize = 7;

impl Registry {
    const OBJECTS: [Registry; OBJECT_REGISTRIES] = [
        Registry::Items,
        Registry::ListItems,
        Registry::SetItems,
        Registry::Messages,
        Registry::MultiMapEntries,
        Registry::ReplicatedEntries,
        Registry::CacheEntries,
    ];
}

/// Item event types of queues, lists and sets: the `eventType` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ItemEventKind {
    Added = 1,
    Removed = 2,
}

impl Listeners {
    pub fn new(bound: EventBound) -> Listeners {
        let schemas = (Arc::default(), 1);
        Listeners {
            maps: HashMap::default(),
            objects: Default::default(),
            metadata: InvalidationMetadata::default(),
            bound,
            schemas,
            query_caches: QueryCaches::default(),
        }
    }

    fn registrations(&mut self, registry: Registry) -> &mut HashMap<Box<str>, Vec<Listener>, RandomState> {
        match registry {
            Registry::Entries => &mut self.maps,
            other => &mut self.objects[other as usize - 1],
        }
    }

    /// Registers a listener of the object `name` in `registry` (an item listener uses only
    /// `id`, `connection`, `correlation_id` and `include_value` of the registration). A
    /// registration of the same connection and correlation id replaces the one held (a client
    /// never reuses a correlation id; another member relays a registration under the same relay
    /// id when it is a member again, over a link that may have stayed open).
    pub fn add_to(&mut self, registry: Registry, name: &str, listener: Listener) {
        let listeners = self.registrations(registry).entry(name.into()).or_default();
        let same = |held: &&mut Listener| {
            Arc::ptr_eq(&held.connection, &listener.connection) && held.correlation_id == listener.correlation_id
        };
        match listeners.iter_mut().find(same) {
            Some(held) => *held = listener,
            None => listeners.push(listener),
        }
        if registry == Registry::Entries && self.query_caches.count() > 0 {
            self.query_caches.listened(name);
        }
    }

    /// Removes a registration; true if this reactor had it.
    pub fn remove_from(&mut self, registry: Registry, name: &str, id: Uuid) -> bool {
        let registrations = self.registrations(registry);
        let Some(listeners) = registrations.get_mut(name) else { return false };
        let before = listeners.len();
        listeners.retain(|listener| listener.id != id);
        let removed = listeners.len() != before;
        if listeners.is_empty() {
            registrations.remove(name);
        }
        removed
    }

    /// How many registrations each object has here, by registry: (registry, name, count).
    pub fn counts(&self) -> impl Iterator<Item = (Registry, &str, usize)> {
        let objects = Registry::OBJECTS.into_iter().zip(self.objects.iter());
        let registries = std::iter::once((Registry::Entries, &self.maps)).chain(objects);
        registries.flat_map(|(registry, registrations)| {
            registrations.iter().map(move |(name, listeners)| (registry, &**name, listeners.len()))
        })
    }

    /// Drops, in every registry, the registrations sending to `connection` under
    /// `correlation_id` (a relayed registration another member withdrew: `relays.rs`).
    pub fn drop_relayed(&mut self, connection: &Arc<ConnectionShared>, correlation_id: i64) {
        self.drop_where(|listener| {
            Arc::ptr_eq(&listener.connection, connection) && listener.correlation_id == correlation_id
        });
        self.drop_unlistened_caches();
    }

    /// Drops, in every registry, the registrations another member relayed over `link` (that
    /// member left this cluster; it relays them again if it is a member again).
    pub fn drop_link(&mut self, link: &Arc<ConnectionShared>) {
        self.drop_where(|listener| Arc::ptr_eq(&listener.connection, link));
    }

    /// Drops, in every registry, the registrations of connections that have closed, and the
    /// query caches left without a listener.
    pub fn drop_closed(&mut self) {
        self.drop_where(|listener| listener.connection.is_closed());
        self.drop_unlistened_caches();
    }

    fn drop_where(&mut self, matches: impl Fn(&Listener) -> bool) {
        for registrations in std::iter::once(&mut self.maps).chain(self.objects.iter_mut()) {
            registrations.retain(|_, listeners| {
                listeners.retain(|listener| !matches(listener));
                !listeners.is_empty()
            });
        }
    }

    /// Drops every registration of the object `name` in `registry` (destroy); a map's query
    /// caches too.
    pub fn drop_all_of(&mut self, registry: Registry, name: &str) {
        self.registrations(registry).remove(name);
        if registry == Registry::Entries {
            self.query_caches.drop_map(name);
        }
    }

    /// Whether any listener in `registry` (an object registry) could receive an event of `name`.
    pub fn has_object_listeners(&self, registry: Registry, name: &str) -> bool {
        let registrations = &self.objects[registry as usize - 1];
        !registrations.is_empty() && registrations.contains_key(name)
    }

    /// Encodes an item event of the queue, list or set `name` (`registry` says which) for its
    /// listeners (the item only for those that asked for values), past the event bound
    /// dropped and counted like entry events.
    pub fn publish_item(
        &mut self,
        outbox: &mut Outbox,
        registry: Registry,
        (member, name, partition): (Uuid, &str, PartitionId),
        kind: ItemEventKind,
        item: &[u8],
    ) {
        let Some(listeners) = self.objects[registry as usize - 1].get_mut(name) else { return };
        listeners.retain(|listener| !listener.connection.is_closed());
        for listener in listeners.iter() {
            let Some(out) = outbox.event_buffer(&listener.connection, self.bound.limit_bytes) else {
                self.bound.drop_event(listener, name);
                continue;
            };
            let item = Some(Data(item)).filter(|_| listener.include_value);
            let event = ItemEvent { uuid: Some(member), event_type: kind as i32, item };
            event.encode(out, listener.event_type, listener.correlation_id, i32::from(partition.0));
        }
    }

    /// Delivers messages published to the topic `name` by `publisher` at `publish_time_ms`
    /// to its listeners here; `relayed` (published on another member): only to those that
    /// are not local-only. Returns how many deliveries were made (past the event bound,
    /// dropped and counted like entry events).
    pub fn publish_messages(&mut self, outbox: &mut Outbox, relay: &TopicRelay<'_>, relayed: bool) -> u64 {
        let Some(listeners) = self.objects[Registry::Messages as usize - 1].get_mut(relay.name) else { return 0 };
        listeners.retain(|listener| !listener.connection.is_closed());
        let mut delivered = 0;
        for listener in listeners.iter().filter(|listener| !(relayed && listener.local_only)) {
            for message in &relay.messages {
                let Some(out) = outbox.event_buffer(&listener.connection, self.bound.limit_bytes) else {
                    self.bound.drop_event(listener, relay.name);
                    continue;
                };
                let event = TopicEvent {
                    publish_time: relay.publish_time_ms,
                    uuid: Some(relay.publisher),
                    item: Data(message),
                };
                // Under the topic's partition id: the Java client keeps one partition's events in
                // order (those of -1 go to any of its event threads).
                event.encode(out, listener.correlation_id, i32::from(relay.partition));
                delivered += 1;
            }
        }
        delivered
    }

    /// Registers an entry listener of `map` (for tests of the code that publishes).
    #[cfg(test)]
    pub fn add(&mut self, map: &str, listener: Listener) {
        self.add_to(Registry::Entries, map, listener);
    }

    /// Whether any registration or query cache could receive an event of `map` (cheap
    /// pre-check).
    pub fn has(&self, map: &str) -> bool {
        (!self.maps.is_empty() && self.maps.contains_key(map)) || self.query_caches.has(map)
    }

    /// Whether a near cache listens to `map`'s invalidations here (Hazelcast's
    /// `hasInvalidationListener`: only then do its changes take invalidation sequences).
    pub fn has_invalidation_listener(&self, map: &str) -> bool {
        self.maps.get(map).is_some_and(|listeners| listeners.iter().any(|listener| listener.invalidation))
    }

    /// Encodes `event` for every interested registration of `map` into the outbox, except for
    /// connections past the event bound, whose events are dropped and counted.
    pub fn publish(&mut self, outbox: &mut Outbox, member: Uuid, map: &str, event: Event<'_>) {
        self.publish_to(Registry::Entries, outbox, member, map, event);
    }

    /// [`Listeners::publish`] to the entry listeners of a map (`Registry::Entries`) or of a
    /// multimap (`Registry::MultiMapEntries`).
    pub fn publish_to(&mut self, registry: Registry, outbox: &mut Outbox, member: Uuid, map: &str, event: Event<'_>) {
        self.publish_entry(registry, outbox, (member, false), map, (event, None));
    }

    /// [`Listeners::publish`] of a map-wide event (CLEAR_ALL, EVICT_ALL): its invalidation
    /// carries `clear` (the map name's partition, its uuid and the sequence the clear took
    /// there; None if the member that owns that partition did not say: partition uuid null,
    /// sequence 0).
    pub fn publish_map_wide(
        &mut self,
        outbox: &mut Outbox,
        member: Uuid,
        map: &str,
        event: Event<'_>,
        clear: Option<ClearInvalidation>,
    ) {
        debug_assert!(event.partition_id.is_none(), "a map-wide event names no partition");
        self.publish_entry(Registry::Entries, outbox, (member, false), map, (event, clear));
    }

    /// An event of a replicated map `map`, published by every member that applies the change
    /// to its own registrations, naming `origin` (the member that made the change: the
    /// partition's owner). `relayed`: the change came from another member, so local-only
    /// listeners (a smart client registers one with every member) do not hear it; they hear
    /// it from its origin, and a client hears each event once.
    pub fn publish_replicated(
        &mut self,
        outbox: &mut Outbox,
        (origin, relayed): (Uuid, bool),
        map: &str,
        event: Event<'_>,
    ) {
        self.publish_entry(Registry::ReplicatedEntries, outbox, (origin, relayed), map, (event, None));
    }

    fn publish_entry(
        &mut self,
        registry: Registry,
        outbox: &mut Outbox,
        (member, relayed): (Uuid, bool),
        map: &str,
        (event, clear): (Event<'_>, Option<ClearInvalidation>),
    ) {
        if registry == Registry::Entries && event.partition_id.is_some() && self.query_caches.has(map) {
            self.publish_to_caches(outbox, map, &event);
        }
        let registrations = match registry {
            Registry::Entries => &mut self.maps,
            other => &mut self.objects[other as usize - 1],
        };
        let Some(listeners) = registrations.get_mut(map) else { return };
        listeners.retain(|listener| !listener.connection.is_closed());
        // On the wire an event's partition id is an `i32`, −1 for none.
        let partition_id = event.partition_id.map_or(-1, |partition| i32::from(partition.0));
        let mut invalidation = None;
        for listener in listeners.iter() {
            if listener.invalidation {
                // One sequence per change, taken once whoever listens (and past the bound too).
                let (partition_uuid, sequence) =
                    *invalidation.get_or_insert_with(|| take_invalidation(&mut self.metadata, map, &event, clear));
                let Some(out) = outbox.event_buffer(&listener.connection, self.bound.limit_bytes) else {
                    self.bound.drop_event(listener, map);
                    continue;
                };
                let (source_uuid, key) = (Some(event.source), event.key.map(Data));
                let invalidated = MapInvalidationEvent { source_uuid, partition_uuid, sequence, key };
                invalidated.encode(out, listener.correlation_id, partition_id);
                continue;
            }
            // A map's map-wide event that affected nothing reaches near caches only (Hazelcast
            // sends no map's CLEAR_ALL or EVICT_ALL of nothing, but invalidates; a multimap's
            // empty clear is heard).
            let nothing = registry == Registry::Entries && event.key.is_none() && event.affected_entries == 0;
            if nothing || listener.flags & event.kind as i32 == 0 || (relayed && listener.local_only) {
                continue;
            }
            if let (Some(wanted), Some(key)) = (&listener.key, event.key) {
                if **wanted != *key {
                    continue;
                }
            }
            if let Some(predicate) = &listener.predicate {
                if !passes(predicate, &event, registry, &self.schemas) {
                    continue;
                }
            }
            let Some(out) = outbox.event_buffer(&listener.connection, self.bound.limit_bytes) else {
                self.bound.drop_event(listener, map);
                continue;
            };
            let values = listener.include_value;
            EntryEvent {
                event_type: event.kind as i32,
                uuid: Some(member),
                number_of_affected_entries: event.affected_entries,
                key: event.key.map(Data),
                value: event.value.filter(|_| values).map(Data),
                old_value: event.old_value.filter(|_| values).map(Data),
                merging_value: None,
            }
            .encode(out, listener.event_type, listener.correlation_id, partition_id);
        }
    }
}

/// The partition uuid and sequence of `event`'s invalidation of `map`: a key's takes the next
/// sequence of its (map, partition); a map-wide one's are `clear`'s (none: null uuid, 0).
fn take_invalidation(
    metadata: &mut InvalidationMetadata,
    map: &str,
    event: &Event<'_>,
    clear: Option<ClearInvalidation>,
) -> (Option<Uuid>, i64) {
    match event.partition_id {
        Some(partition) => {
            let sequence = metadata.next_sequence(map, partition.0);
            (Some(metadata.uuid(partition.0, fresh_uuid)), sequence)
        }
        None => clear.map_or((None, 0), |clear| (Some(clear.partition_uuid), clear.sequence)),
    }
}

/// Whether `event`'s entry passes a listener's predicate (an event the member cannot test, a
/// value it cannot read, is not sent: Hazelcast logs the failure and sends nothing). A map's
/// REMOVED, EVICTED and EXPIRED events are tested with the old value; a replicated map's
/// EVICTED event with its (absent) new value, so none passes, as a Hazelcast 5.6 member sends
/// none to a predicate listener (its REMOVED events are tested with the old value).
fn passes(
    predicate: &crate::engine::map::query::Predicate,
    event: &Event<'_>,
    registry: Registry,
    schemas: &(Arc<crate::engine::schemas::Schemas>, u16),
) -> bool {
    let tested = match (event.kind, registry) {
        (EventKind::Evicted, Registry::ReplicatedEntries) => event.value,
        (EventKind::Removed | EventKind::Evicted | EventKind::Expired, _) => event.old_value,
        _ => event.value,
    };
    let Some(key) = event.key else { return true }; // map-wide events (CLEAR_ALL, EVICT_ALL) pass
    let Some(value) = tested else { return false };
    predicate.admits((key, value), (&schemas.0, schemas.1), "a listener")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::frame::{Decoded, StreamDecoder, StreamLimits};
    use ferrogrid_protocol::Message;
    use std::io::Read;

    const MEMBER: Uuid = Uuid { most: 9, least: 9 };
    const LIMIT_BYTES: usize = 4096;

    fn listeners() -> (Listeners, Arc<Counter>) {
        let dropped = Arc::new(Counter::default());
        (Listeners::new(EventBound::new(0, LIMIT_BYTES, dropped.clone())), dropped)
    }

    fn listen(listeners: &mut Listeners, connection: &Arc<ConnectionShared>, correlation_id: i64) {
        let listener = Listener {
            id: Uuid { most: correlation_id as u64, least: 1 },
            connection: connection.clone(),
            correlation_id,
            event_type: MessageType(0x011902),
            include_value: true,
            flags: EventKind::Added as i32,
            key: None,
            invalidation: false,
            local_only: false,
            predicate: None,
        };
        listeners.add("m", listener);
    }

    /// Publishes an ADDED event for key `[index; 8]` with a 100-byte value.
    fn publish(listeners: &mut Listeners, outbox: &mut Outbox, index: u8) {
        let key = [index; 8];
        let event = Event {
            kind: EventKind::Added,
            partition_id: Some(PartitionId(1)),
            key: Some(&key),
            value: Some(&[7; 100]),
            old_value: None,
            affected_entries: 1,
            source: MEMBER,
        };
        listeners.publish(outbox, MEMBER, "m", event);
    }

    /// Reads `length` bytes from the client's end and returns the first key byte of each event.
    fn received(client: &mut std::net::TcpStream, length: usize) -> Vec<u8> {
        let mut bytes = vec![0; length];
        client.read_exact(&mut bytes).unwrap();
        let limits = StreamLimits { max_frame_bytes: 1 << 20, max_message_bytes: 1 << 20, max_pending_fragmented: 1 };
        let mut decoder = StreamDecoder::new(limits);
        let mut keys = Vec::new();
        let mut rest = &bytes[..];
        while let Decoded::Message { length } = decoder.decode(rest).unwrap() {
            let event = EntryEvent::decode(&Message::parse(&rest[..length]).unwrap()).unwrap();
            keys.push(event.key.expect("a key").0[0]);
            rest = &rest[length..];
        }
        assert!(rest.is_empty(), "whole events only");
        keys
    }

    /// A near cache's registration of [`MAP`]'s invalidations on `connection`.
    fn near_cache(listeners: &mut Listeners, connection: &Arc<ConnectionShared>, correlation_id: i64) {
        let listener = Listener {
            id: Uuid { most: correlation_id as u64, least: 2 },
            connection: connection.clone(),
            correlation_id,
            event_type: MessageType(0x013F02),
            include_value: false,
            flags: 256,
            key: None,
            invalidation: true,
            local_only: false,
            predicate: None,
        };
        listeners.add(MAP, listener);
    }

    /// The (partition uuid, sequence, has a key) of each invalidation in `length` bytes.
    fn invalidations(client: &mut std::net::TcpStream, length: usize) -> Vec<(Option<Uuid>, i64, bool)> {
        let mut bytes = vec![0; length];
        client.read_exact(&mut bytes).unwrap();
        let limits = StreamLimits { max_frame_bytes: 1 << 20, max_message_bytes: 1 << 20, max_pending_fragmented: 1 };
        let (mut decoder, mut rest, mut heard) = (StreamDecoder::new(limits), &bytes[..], Vec::new());
        while let Decoded::Message { length } = decoder.decode(rest).unwrap() {
            let event = MapInvalidationEvent::decode(&Message::parse(&rest[..length]).unwrap()).unwrap();
            assert_eq!(event.source_uuid, Some(MEMBER));
            heard.push((event.partition_uuid, event.sequence, event.key.is_some()));
            rest = &rest[length..];
        }
        heard
    }

    const MAP: &str = "m";

    fn change(listeners: &mut Listeners, outbox: &mut Outbox, map: &str, partition: u16) {
        let event = Event {
            kind: EventKind::Updated,
            partition_id: Some(PartitionId(partition)),
            key: Some(b"key"),
            value: Some(b"value"),
            old_value: None,
            affected_entries: 1,
            source: MEMBER,
        };
        listeners.publish(outbox, MEMBER, map, event);
    }

    #[test]
    fn invalidations_carry_the_partitions_uuid_and_sequence_of_their_map() {
        let (mut listeners, _) = listeners();
        let (connection, mut client) = ConnectionShared::loopback(1);
        let (entries, _entry_client) = ConnectionShared::loopback(2);
        near_cache(&mut listeners, &connection, 5);
        listen(&mut listeners, &entries, 6);
        listeners.maps.get_mut(MAP).unwrap()[1].flags = -1; // every kind of entry event
        assert!(listeners.has_invalidation_listener(MAP) && !listeners.has_invalidation_listener("other"));
        let mut outbox = Outbox::default();
        change(&mut listeners, &mut outbox, MAP, 3);
        change(&mut listeners, &mut outbox, MAP, 3);
        change(&mut listeners, &mut outbox, MAP, 4);
        change(&mut listeners, &mut outbox, "other", 3);
        let uuid = |listeners: &mut Listeners, partition| Some(listeners.metadata.uuid(partition, || unreachable!()));
        let (three, four) = (uuid(&mut listeners, 3), uuid(&mut listeners, 4));
        assert_ne!(three, four);
        let entry_bytes = outbox.buffer(&entries).len();
        assert!(entry_bytes > 0, "the entry listener heard the changes");
        let written = outbox.flush() - entry_bytes;
        assert_eq!(invalidations(&mut client, written), [(three, 1, true), (three, 2, true), (four, 1, true)]);
        assert_eq!(listeners.metadata.current_sequence("other", 3), 0, "no near cache listens to it");
        let clear = ClearInvalidation { partition: PartitionId(3), partition_uuid: three.unwrap(), sequence: 3 };
        let event = Event {
            kind: EventKind::ClearAll,
            partition_id: None,
            key: None,
            value: None,
            old_value: None,
            affected_entries: 0,
            source: MEMBER,
        };
        listeners.publish_map_wide(&mut outbox, MEMBER, MAP, event, Some(clear));
        assert!(outbox.buffer(&entries).is_empty(), "no CLEAR_ALL of nothing");
        let heard = invalidations(&mut client, outbox.flush());
        assert_eq!(heard, [(three, 3, false)], "the clear's invalidation as the name's partition took it");
    }

    #[test]
    fn a_registration_relayed_again_is_held_once() {
        let (mut listeners, _) = listeners();
        let (connection, mut client) = ConnectionShared::loopback(1);
        listen(&mut listeners, &connection, 5);
        listen(&mut listeners, &connection, 5);
        let mut outbox = Outbox::default();
        publish(&mut listeners, &mut outbox, 3);
        let length = outbox.flush();
        assert_eq!(received(&mut client, length), [3], "one event, not one per relay");
    }

    #[test]
    fn events_past_the_bound_are_dropped_counted_and_delivered_again_once_it_drains() {
        let (mut listeners, dropped) = listeners();
        let (connection, mut client) = ConnectionShared::loopback(1);
        listen(&mut listeners, &connection, 5);
        let mut outbox = Outbox::default();
        for index in 0..10 {
            publish(&mut listeners, &mut outbox, index);
        }
        assert_eq!(dropped.get(), 0, "ten small events are under the bound");
        for index in 10..100 {
            publish(&mut listeners, &mut outbox, index);
        }
        let gathered = outbox.buffer(&connection).len();
        assert!(gathered > LIMIT_BYTES && gathered < LIMIT_BYTES + 200, "one event past the bound at most");
        let written = outbox.flush();
        assert_eq!(written, gathered, "the client's socket takes a few KiB");
        let keys = received(&mut client, written);
        assert_eq!(keys, (0..keys.len() as u8).collect::<Vec<_>>(), "the first events, in order");
        assert_eq!(dropped.get(), 100 - keys.len() as u64, "every event not delivered is counted");
        publish(&mut listeners, &mut outbox, 100);
        assert_eq!(received(&mut client, outbox.flush()), [100], "delivered again once nothing waits");
        assert_eq!(dropped.get(), 100 - keys.len() as u64);
    }

    #[test]
    fn a_connection_with_unsent_bytes_gets_no_events_and_others_do() {
        let (mut listeners, dropped) = listeners();
        let (slow, _not_reading) = ConnectionShared::loopback(1);
        let (fast, mut client) = ConnectionShared::loopback(2);
        listen(&mut listeners, &slow, 5);
        listen(&mut listeners, &fast, 6);
        let chunk = vec![0; 1 << 20];
        for _ in 0..256 {
            if slow.pending_bytes() > LIMIT_BYTES {
                break;
            }
            slow.send(&chunk);
        }
        let pending = slow.pending_bytes();
        assert!(pending > LIMIT_BYTES, "the socket filled up");
        let mut outbox = Outbox::default();
        publish(&mut listeners, &mut outbox, 1);
        assert_eq!(dropped.get(), 1, "the slow connection's event is dropped");
        outbox.buffer(&slow).extend_from_slice(b"an answer");
        let written = outbox.flush();
        assert_eq!(received(&mut client, written), [1], "the other connection has its event");
        assert_eq!(slow.pending_bytes(), pending + b"an answer".len(), "answers are never dropped");
    }

    #[test]
    fn drops_are_warned_about_at_most_once_per_interval() {
        let dropped = Arc::new(Counter::default());
        let mut bound = EventBound::new(0, LIMIT_BYTES, dropped.clone());
        let start = Instant::now();
        assert_eq!(bound.count_drop(start), Some(1), "the first drop warns");
        assert_eq!(bound.count_drop(start + Duration::from_millis(10)), None);
        assert_eq!(bound.count_drop(start + Duration::from_millis(999)), None);
        assert_eq!(bound.count_drop(start + DROP_WARNING_INTERVAL), Some(3), "with the drops since the last");
        assert_eq!(bound.count_drop(start + DROP_WARNING_INTERVAL), None);
        assert_eq!(dropped.get(), 5, "every drop is counted");
    }
}
