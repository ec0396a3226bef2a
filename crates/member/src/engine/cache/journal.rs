//! A cache's event journal (`event-journal` in the cache's configuration, which the client
//! sends with CreateConfig): in each partition, the last events of the cache's entries there,
//! which clients read with `Cache.eventJournalSubscribe` and `Cache.eventJournalRead`
//! (`EventJournalReader` on the Java client's `ICache`).
//!
//! The map's journal (`engine/map/journal.rs`) with the cache's events: a ringbuffer inside the
//! cache's partition store (`store.rs`, JOURNAL), sized as Hazelcast sizes it (the capacity
//! divided by the partition count), appended by the owner and carried to the backups with the
//! same sequences. What Hazelcast 5.6's cache writes to it: CREATED (the new value), UPDATED
//! (new and old), REMOVED (removeAll too, and an expiry, found on access or by the sweep: not
//! EXPIRED) and EVICTED (the old value). A clear is not
//! journaled: it empties the journal, whose sequences start over at 0, as Hazelcast's clear
//! destroys it.
//!
//! Events are kept as Hazelcast serializes them for a reader: its
//! `DeserializingEventJournalCacheEvent` (factory and class in [`CACHE_EVENT`]) of the event
//! type, key, new value and old value. Owned by the reactor that owns the partition.

use crate::engine::cache::configs::not_exists;
use crate::engine::cache::store::CacheStore;
use crate::engine::map::journal::{event_data, run_parking, EventIds, JournalOp};
use crate::engine::request::{ErrorKind, OpError};
use crate::partition::object::RemovedEntry;
use crate::partition::objects::{kind, Kind, Object};
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::wire;
use std::borrow::Cow;

/// A cache's journal event: `CacheDataSerializerHook`'s factory and its
/// `EVENT_JOURNAL_DESERIALIZING_CACHE_EVENT` in Hazelcast 5.6.
pub(crate) const CACHE_EVENT: EventIds = EventIds { factory: -13, class: 54 };

/// Hazelcast's `CacheEventType` of a journal event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Journaled {
    Created = 1,
    Updated = 2,
    Removed = 3,
    Evicted = 5,
}

/// A request on a cache's journal in one partition.
#[derive(Debug, Clone)]
pub struct CacheJournalRequest<'a> {
    pub name: Cow<'a, str>,
    pub op: JournalOp,
}

/// Hazelcast's error for a cache without an enabled journal; a read names the cache's
/// namespace.
fn not_enabled(name: &str, op: &JournalOp) -> OpError {
    let name = crate::tenants::display(name);
    let what = match op {
        JournalOp::Subscribe => format!("cache {name}"),
        JournalOp::Read { .. } => {
            format!("DistributedObjectNamespace{{service='hz:impl:cacheService', objectName='{name}'}}")
        }
    };
    let text = format!("Cannot subscribe to event journal because it is either not configured or disabled for {what}");
    OpError::new(ErrorKind::Unsupported, text)
}

/// Subscribe answers at once; a read answers, or parks in the journal until events arrive.
impl Execute for CacheJournalRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        let refusal = match owner.settings.dynamic.caches.get(&self.name) {
            None => Some(not_exists(&self.name)),
            Some(def) if def.journal.is_none() => Some(not_enabled(&self.name, &self.op)),
            Some(_) => None,
        };
        if let Some(refusal) = refusal {
            // Refused before the cache's store would be made in the partition for it.
            wire::replace_with_error(out, start, call.correlation_id, &refusal);
            return owner.hold_behind_writes(call.partition_id, call.connection, out, start);
        }
        let max_waiters = owner.settings.max_parked_per_key();
        let now_ms = owner.now_ms;
        let (store, waiters) = owner.partitions[call.local].store_mut::<kind::Cache>(&self.name, &mut owner.settings);
        let journal = store.journal.as_deref_mut().ok_or_else(|| not_enabled(&self.name, &self.op));
        let outcome = journal.and_then(|ring| run_parking(ring, waiters, &self.op, call, out, (now_ms, max_waiters)));
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        owner.hold_behind_writes(call.partition_id, call.connection, out, start);
    }
}

impl CacheStore {
    /// Empties the journal and starts its sequences over at 0 (a clear: Hazelcast destroys the
    /// cache's journal with its entries).
    pub(crate) fn restart_journal(&mut self, now_ms: i64) {
        if let Some(ring) = self.journal.as_deref_mut() {
            ring.replace(0, Vec::new(), now_ms);
        }
    }

    /// Appends an event of one entry to the cache's journal, if it has one (owner only: the
    /// backups receive the appended events).
    pub(crate) fn journal_event(
        &mut self,
        event: Journaled,
        key: &[u8],
        (new_value, old_value): (Option<&[u8]>, Option<&[u8]>),
        now_ms: i64,
    ) {
        if let Some(ring) = self.journal.as_deref_mut() {
            ring.append(event_data(CACHE_EVENT, event as i32, key, new_value, old_value), now_ms);
        }
    }
}

/// Journals the entries the expiry sweep removed from a cache's partition this member owns
/// (as removals, as Hazelcast 5.6 journals them).
pub(crate) fn journal_expired(object: &mut Object, expired: &[RemovedEntry], now_ms: i64) {
    let Some(store) = <kind::Cache as Kind>::store_mut(object) else { return };
    for entry in expired {
        store.journal_event(Journaled::Removed, entry.key(), (None, Some(entry.value())), now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ringbuffer::store::RingbufferStore;
    use ferrogrid_protocol::Data;

    #[test]
    fn an_event_is_hazelcasts_cache_journal_event() {
        let data = event_data(CACHE_EVENT, Journaled::Evicted as i32, b"k", None, Some(b"old"));
        let data = Data(&data);
        assert_eq!(data.type_id(), Some(-2), "identified");
        let payload = data.payload();
        assert_eq!(&payload[1..9], &[0xFF, 0xFF, 0xFF, 0xF3, 0, 0, 0, 54]);
        assert_eq!(&payload[9..13], &5i32.to_be_bytes(), "EVICTED");
        assert_eq!(&payload[17..], b"k\xFF\xFF\xFF\xFF\0\0\0\x03old", "key, no new value, the old one");
    }

    fn journaled() -> CacheStore {
        let ring = ferrogrid_config::RingbufferConfig { capacity: 10, ..ferrogrid_config::RingbufferConfig::DEFAULT };
        let mut store = CacheStore::new(1);
        store.journal = Some(Box::new(RingbufferStore::journal(ring, 1 << 20)));
        store
    }

    fn sequences(store: &CacheStore) -> (i64, i64) {
        store.journal.as_ref().expect("a journal").sequences()
    }

    #[test]
    fn backups_and_snapshots_carry_the_journal_and_a_clear_restarts_it() {
        use crate::partition::object::PartitionObject;
        let mut owner = journaled();
        owner.set_track_changes(true);
        for index in 0..15u8 {
            owner.put(&[index], b"v", i64::MAX, 0);
            owner.journal_event(Journaled::Created, &[index], (Some(b"v"), None), 0);
        }
        assert_eq!(sequences(&owner), (5, 14), "10 events a partition");
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        let mut backup = journaled();
        backup.apply_backup(&body).expect("a valid body");
        assert_eq!((sequences(&backup), backup.entry_count()), ((5, 14), 15), "the same sequences");
        let mut out = Vec::new();
        let mut writer = crate::cluster::peer::SnapshotWriter::new(&mut out, 0, 1, 1 << 16);
        writer.begin_object(crate::engine::structures::ObjectKind::Cache, "c");
        owner.write_snapshot(&mut writer);
        writer.finish();
        let mut replica = journaled();
        for chunk in crate::cluster::peer::tests::snapshot_chunks(&out) {
            for object in crate::cluster::peer::read_snapshot(&chunk).expect("a snapshot").1 {
                replica.apply_snapshot(object.body).expect("a valid snapshot");
            }
        }
        assert_eq!(sequences(&replica), (5, 14), "a migrated journal keeps its sequences");
        owner.restart_journal(0);
        owner.journal_event(Journaled::Removed, b"k", (None, Some(b"v")), 0);
        assert_eq!(sequences(&owner), (0, 0), "a clear starts the sequences over");
        body.clear();
        owner.write_changes(&mut body);
        backup.apply_backup(&body).expect("a valid body");
        assert_eq!(sequences(&backup), (0, 0), "and the backups' too");
        let plain = CacheStore::new(1);
        assert!(plain.journal.is_none(), "no journal unless enabled");
    }
}
