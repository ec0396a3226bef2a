//! Events of JCache caches (`Registry::CacheEntries`): each key operation sends each of the
//! cache's registrations here one `Cache` event, its change (CREATED, UPDATED, REMOVED, with the
//! key and values) or, when it changed nothing, COMPLETED, both carrying the operation's
//! completion id: a Java client with synchronous listeners waits for one event per listener
//! before it answers the caller (`ClientCacheProxySyncListenerCompleter`). A near cache's
//! invalidation listener (a registration with `invalidation` set) hears a CacheInvalidation of
//! every change, eviction and clear instead, with the partition's uuid and sequence (the
//! metadata maps' invalidations use, under the cache's name), which its repairing handler
//! checks.

use super::{Listeners, Registry};
use crate::net::outbox::Outbox;
use ferrogrid_protocol::codec::{CacheEvent, CacheEventData, CacheInvalidationEvent};
use ferrogrid_protocol::{Data, PartitionId, Uuid};

/// JCache's event types (`CacheEventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum CacheEventKind {
    Created = 1,
    Updated = 2,
    Removed = 3,
    Expired = 4,
    /// An entry evicted, or every entry cleared (no key): near caches are told, entry listeners
    /// are not (JCache has no such event).
    Invalidated = 6,
    Completed = 7,
}

/// One change of one key.
#[derive(Debug, Clone, Copy)]
pub struct CacheChange<'a> {
    pub kind: CacheEventKind,
    pub key: &'a [u8],
    pub value: Option<&'a [u8]>,
    pub old_value: Option<&'a [u8]>,
}

impl Listeners {
    /// Whether the cache `name` has registrations here.
    pub fn has_cache_listeners(&self, name: &str) -> bool {
        self.has_object_listeners(Registry::CacheEntries, name)
    }

    /// Sends every registration of the cache `name` the event of `change` with `completion_id`
    /// (−1: none), past the event bound dropped and counted like entry events.
    pub fn publish_cache(
        &mut self,
        outbox: &mut Outbox,
        (member, name, partition): (Uuid, &str, PartitionId),
        change: CacheChange<'_>,
        completion_id: i32,
    ) {
        let registrations = &mut self.objects[Registry::CacheEntries as usize - 1];
        let Some(listeners) = registrations.get_mut(name) else { return };
        listeners.retain(|listener| !listener.connection.is_closed());
        let partition_id = i32::from(partition.0);
        let data = CacheEventData {
            name,
            event_type: change.kind as i32,
            key: (!change.key.is_empty()).then_some(Data(change.key)),
            value: change.value.map(Data),
            old_value: change.old_value.map(Data),
            old_value_available: change.old_value.is_some(),
        };
        let mut invalidation = None;
        for listener in listeners.iter() {
            // COMPLETED only to entry listeners, INVALIDATED only to near caches.
            let wanted = match listener.invalidation {
                true => change.kind != CacheEventKind::Completed,
                false => change.kind != CacheEventKind::Invalidated,
            };
            if !wanted {
                continue;
            }
            let Some(out) = outbox.event_buffer(&listener.connection, self.bound.limit_bytes) else {
                self.bound.drop_event(listener, name);
                continue;
            };
            if listener.invalidation {
                // One sequence per change, taken once whoever listens.
                let (partition_uuid, sequence) = *invalidation.get_or_insert_with(|| {
                    let sequence = self.metadata.next_sequence(name, partition.0);
                    (Some(self.metadata.uuid(partition.0, super::fresh_uuid)), sequence)
                });
                let (source_uuid, key) = (Some(member), data.key);
                CacheInvalidationEvent { source_uuid, partition_uuid, sequence, name, key }.encode(
                    out,
                    listener.correlation_id,
                    partition_id,
                );
                continue;
            }
            let event = CacheEvent { event_type: change.kind as i32, completion_id, keys: vec![data.clone()] };
            event.encode(out, listener.correlation_id, partition_id);
        }
    }

    /// EXPIRED events of what the expiry sweep removed from the cache `name`.
    pub fn publish_cache_expired(
        &mut self,
        outbox: &mut Outbox,
        (member, name, partition): (Uuid, &str, PartitionId),
        expired: &[crate::partition::object::RemovedEntry],
    ) {
        if expired.is_empty() || !self.has_cache_listeners(name) {
            return;
        }
        for entry in expired {
            let change = CacheChange {
                kind: CacheEventKind::Expired,
                key: entry.key(),
                value: Some(entry.value()),
                old_value: None,
            };
            self.publish_cache(outbox, (member, name, partition), change, -1);
        }
    }
}
