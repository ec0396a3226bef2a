//! Entry listeners: registrations and event delivery.
//!
//! Every reactor keeps its own copy of the registrations (added and removed by a fan-out to
//! all reactors, so one is in force everywhere before the client hears it is registered) and
//! publishes the events of the partitions it owns straight to the listening connections. A
//! partition's events therefore leave in the order the partition applied them. Registrations
//! of a closed connection are dropped when next seen.

use crate::connection::ConnectionShared;
use crate::outbox::Outbox;
use ahash::RandomState;
use ferrogrid_protocol::codec::{EntryEvent, MapInvalidationEvent};
use ferrogrid_protocol::{Data, MessageType, Uuid};
use std::collections::HashMap;
use std::sync::Arc;

/// Entry event types (the `eventType` field and the bits of `listenerFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum EventKind {
    Added = 1,
    Removed = 2,
    Updated = 4,
    Evicted = 8,
    Expired = 16,
    EvictAll = 32,
    ClearAll = 64,
}

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
}

/// The `listenerFlags` bit of near-cache invalidation listeners.
pub const INVALIDATION_FLAG: i32 = 256;

/// What one event says; values are sent only to listeners that asked for them.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub kind: EventKind,
    pub partition_id: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub old_value: Option<&'a [u8]>,
    pub affected_entries: i32,
    /// Who caused it (the writing client, or this member for expiry and eviction).
    pub source: Uuid,
}

/// A stable uuid naming one partition's invalidation sequence on this member.
fn partition_uuid(member: Uuid, partition_id: i32) -> Uuid {
    Uuid { most: member.most, least: member.least ^ (partition_id as u32 as u64).rotate_left(32) }
}

/// One reactor's copy of the registrations, by map name.
#[derive(Debug, Default)]
pub struct Listeners {
    maps: HashMap<Box<str>, Vec<Listener>, RandomState>,
    /// Invalidations sent per partition (the `sequence` near caches track).
    sequences: HashMap<i32, i64, RandomState>,
}

impl Listeners {
    pub fn add(&mut self, map: &str, listener: Listener) {
        self.maps.entry(map.into()).or_default().push(listener);
    }

    /// Removes a registration; true if this reactor had it.
    pub fn remove(&mut self, map: &str, id: Uuid) -> bool {
        let Some(listeners) = self.maps.get_mut(map) else { return false };
        let before = listeners.len();
        listeners.retain(|listener| listener.id != id);
        let removed = listeners.len() != before;
        if listeners.is_empty() {
            self.maps.remove(map);
        }
        removed
    }

    pub fn drop_map(&mut self, map: &str) {
        self.maps.remove(map);
    }

    /// Whether any registration could receive an event of `map` (cheap pre-check).
    pub fn has(&self, map: &str) -> bool {
        !self.maps.is_empty() && self.maps.contains_key(map)
    }

    /// Encodes `event` for every interested registration of `map` into the outbox.
    pub fn publish(&mut self, outbox: &mut Outbox, member: Uuid, map: &str, event: Event<'_>) {
        let Some(listeners) = self.maps.get_mut(map) else { return };
        listeners.retain(|listener| !listener.connection.is_closed());
        let mut sequence = None;
        for listener in listeners.iter() {
            if listener.invalidation {
                let sequence = *sequence.get_or_insert_with(|| {
                    let counter = self.sequences.entry(event.partition_id).or_insert(0);
                    *counter += 1;
                    *counter
                });
                MapInvalidationEvent {
                    source_uuid: Some(event.source),
                    partition_uuid: Some(partition_uuid(member, event.partition_id)),
                    sequence,
                    key: event.key.map(Data),
                }
                .encode(
                    outbox.buffer(&listener.connection),
                    listener.correlation_id,
                    event.partition_id,
                );
                continue;
            }
            if listener.flags & event.kind as i32 == 0 {
                continue;
            }
            if let (Some(wanted), Some(key)) = (&listener.key, event.key) {
                if **wanted != *key {
                    continue;
                }
            }
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
            .encode(
                outbox.buffer(&listener.connection),
                listener.event_type,
                listener.correlation_id,
                event.partition_id,
            );
        }
    }
}
