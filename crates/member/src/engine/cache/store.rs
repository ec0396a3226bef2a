//! One JCache cache's entries in one partition: key → value and its expiry time, with
//! synchronous backups and migration through [`PartitionObject`]. An entry whose expiry time
//! has come is invisible, and goes on the next access or expiry sweep.
//!
//! Change records, each carrying the resulting state of one key, so applying one twice, or
//! after a snapshot (whose entries are `PUT` records), is harmless:
//!
//! | record | body |
//! |---|---|
//! | `PUT` | key, value (`u32` length each), expiry time (`i64`, `i64::MAX` never), the entry's own expiry policy (`u8` 0, or 1 and its creation, access and update lifetimes: `i64` each, −1 eternal, −2 none) |
//! | `REMOVE` | key |
//! | `CLEAR` | nothing: every entry goes |
//! | `JOURNAL` | the event journal's records (`ringbuffer/store.rs`) as one run of bytes (`u32` length): the events the owner appended, or (in a snapshot) the whole journal |
//!
//! Owned by the reactor that owns the partition; no locks.

use crate::cluster::peer::{put_bytes, Malformed, Reader, SnapshotWriter};
use crate::engine::cache::configs::Evict;
use crate::engine::cache::expiry::{ExpiryPolicy, Lifetime};
use crate::engine::map::entry::{Entry, Meta};
use crate::engine::map::iteration::position;
use crate::engine::ringbuffer::store::RingbufferStore;
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::partition::object::{PartitionObject, RemovedEntry};
use ahash::RandomState;
use std::collections::{HashMap, HashSet};

/// A key and its value, owned.
pub(crate) type Owned = (Box<[u8]>, Box<[u8]>);
/// A batch of the iteration: keys and values.
pub(crate) type Batch<'s> = Vec<(&'s [u8], &'s [u8])>;

/// Entries an eviction samples, as Hazelcast's eviction does.
const EVICTION_SAMPLE: usize = 15;

const PUT: u8 = 1;
const REMOVE: u8 = 2;
const CLEAR: u8 = 3;
const JOURNAL: u8 = 4;

/// One entry: its value, when it expires, and its own expiry policy (`setExpiryPolicy`), which
/// stands for the cache's in later operations on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub value: Box<[u8]>,
    pub expires_ms: i64,
    pub policy: Option<ExpiryPolicy>,
    /// Last access or write, and reads (for eviction; not replicated: a backup starts them over).
    pub used_ms: i64,
    pub hits: u32,
}

/// One cache in one partition.
#[derive(Debug)]
pub struct CacheStore {
    entries: HashMap<Box<[u8]>, Record, RandomState>,
    held_bytes: usize,
    sync_backups: usize,
    track_changes: bool,
    changed: HashSet<Box<[u8]>, RandomState>,
    cleared: bool,
    /// The cache's event journal in this partition, if enabled (`journal.rs`): its events,
    /// appended by the owner, travel to the backups in the JOURNAL record.
    pub journal: Option<Box<RingbufferStore>>,
}

impl CacheStore {
    pub(crate) fn new(sync_backups: usize) -> CacheStore {
        CacheStore {
            entries: HashMap::default(),
            held_bytes: 0,
            sync_backups,
            track_changes: false,
            changed: HashSet::default(),
            cleared: false,
            journal: None,
        }
    }

    fn changed(&mut self, key: &[u8]) {
        if self.track_changes && !self.changed.contains(key) {
            self.changed.insert(key.into());
        }
    }

    /// The live entry of `key` at `now_ms`; an expired one is removed (and None).
    pub(crate) fn get(&mut self, key: &[u8], now_ms: i64) -> Option<&mut Record> {
        self.take_expired(key, now_ms);
        self.entries.get_mut(key)
    }

    /// Removes `key`'s entry if it has expired at `now_ms`; answers its value if so.
    pub(crate) fn take_expired(&mut self, key: &[u8], now_ms: i64) -> Option<Box<[u8]>> {
        if self.entries.get(key).is_some_and(|record| record.expires_ms <= now_ms) {
            return self.remove(key).map(|record| record.value);
        }
        None
    }

    /// Gives the live entry of `key` its own expiry policy.
    pub(crate) fn set_policy(&mut self, key: &[u8], policy: ExpiryPolicy) {
        if let Some(record) = self.entries.get_mut(key) {
            record.policy = Some(policy);
            self.changed(key);
        }
    }

    /// Sets `key`'s expiry time (it is live).
    pub(crate) fn set_expiry(&mut self, key: &[u8], expires_ms: i64) {
        if let Some(record) = self.entries.get_mut(key) {
            if record.expires_ms != expires_ms {
                record.expires_ms = expires_ms;
                self.changed(key);
            }
        }
    }

    /// Puts `key` (keeping its own expiry policy and its use) at `now_ms`; answers the old
    /// record.
    pub(crate) fn put(&mut self, key: &[u8], value: &[u8], expires_ms: i64, now_ms: i64) -> Option<Record> {
        let (policy, hits) = self.entries.get(key).map_or((None, 0), |record| (record.policy, record.hits));
        self.put_record(key, Record { value: value.into(), expires_ms, policy, used_ms: now_ms, hits })
    }

    /// Records a read of `key` at `now_ms`.
    pub(crate) fn touch(&mut self, key: &[u8], now_ms: i64) {
        if let Some(record) = self.entries.get_mut(key) {
            record.used_ms = now_ms;
            record.hits = record.hits.saturating_add(1);
        }
    }

    /// Makes room for a new entry when `max` entries are held (Hazelcast's check, before each
    /// new entry): removes one chosen by `evict` among a sample; answers it.
    pub(crate) fn evict_for_new(&mut self, max: usize, evict: Evict) -> Option<Owned> {
        if self.entries.len() < max {
            return None;
        }
        let sample = self.entries.iter().take(EVICTION_SAMPLE);
        let chosen = match evict {
            Evict::Lru => sample.min_by_key(|(_, record)| record.used_ms),
            Evict::Lfu => sample.min_by_key(|(_, record)| (record.hits, record.used_ms)),
            Evict::Random => sample.into_iter().next(),
        };
        let key = chosen.map(|(key, _)| key.clone())?;
        self.remove(&key).map(|record| (key, record.value))
    }

    fn put_record(&mut self, key: &[u8], record: Record) -> Option<Record> {
        let value = &record.value;
        self.held_bytes += key.len() + value.len();
        let old = self.entries.insert(key.into(), record);
        if let Some(old) = &old {
            self.held_bytes -= key.len() + old.value.len();
        }
        self.changed(key);
        old
    }

    pub(crate) fn remove(&mut self, key: &[u8]) -> Option<Record> {
        let old = self.entries.remove(key)?;
        self.held_bytes -= key.len() + old.value.len();
        self.changed(key);
        Some(old)
    }

    /// Removes every entry; answers the live ones removed (key, value).
    pub(crate) fn clear(&mut self, now_ms: i64) -> Vec<Owned> {
        let removed = std::mem::take(&mut self.entries)
            .into_iter()
            .filter(|(_, record)| record.expires_ms > now_ms)
            .map(|(key, record)| (key, record.value))
            .collect();
        self.held_bytes = 0;
        if self.track_changes {
            self.changed.clear();
            self.cleared = true;
        }
        removed
    }

    /// Removes the live entries of `keys`; answers them (key, value).
    pub(crate) fn remove_keys(&mut self, keys: &[Box<[u8]>], now_ms: i64) -> Vec<Owned> {
        let mut removed = Vec::new();
        for key in keys {
            if self.get(key, now_ms).is_some() {
                let record = self.remove(key).expect("live");
                removed.push((key.clone(), record.value));
            }
        }
        removed
    }

    /// Live entries at `now_ms`.
    pub(crate) fn live(&self, now_ms: i64) -> impl Iterator<Item = (&[u8], &Record)> {
        self.entries.iter().filter(move |(_, record)| record.expires_ms > now_ms).map(|(key, record)| (&**key, record))
    }

    pub(crate) fn size(&self, now_ms: i64) -> usize {
        self.live(now_ms).count()
    }

    /// One batch of the iteration (`engine/map/iteration.rs`'s order): the live entries with
    /// the highest positions below `index`, at least `batch` of them unless fewer are left
    /// (entries sharing the last position go together); and the next index (−1: done).
    pub(crate) fn batch(&self, index: i32, batch: usize, now_ms: i64) -> (Batch<'_>, i32) {
        let mut below: Vec<(i32, &[u8], &[u8])> = self
            .live(now_ms)
            .map(|(key, record)| (position(key), key, &*record.value))
            .filter(|(at, _, _)| *at < index)
            .collect();
        below.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        let mut end = batch.max(1).min(below.len());
        while end < below.len() && below[end].0 == below[end - 1].0 {
            end += 1;
        }
        let next = if end == below.len() { -1 } else { below[end - 1].0 };
        (below[..end].iter().map(|(_, key, value)| (*key, *value)).collect(), next)
    }

    fn apply_records(&mut self, body: &[u8]) -> Result<(), Malformed> {
        let mut reader = Reader::new(body);
        while !reader.is_empty() {
            match reader.u8()? {
                PUT => {
                    let (key, value, expires_ms) = (reader.bytes()?, reader.bytes()?, reader.i64()?);
                    let policy = read_policy(&mut reader)?;
                    self.put_record(key, Record { value: value.into(), expires_ms, policy, used_ms: 0, hits: 0 });
                }
                REMOVE => {
                    self.remove(reader.bytes()?);
                }
                CLEAR => {
                    self.clear(i64::MIN);
                }
                JOURNAL => match self.journal.as_deref_mut() {
                    Some(journal) => journal.apply_backup(reader.bytes()?)?,
                    None => return Err(Malformed::Refused("journal events of a cache without a journal")),
                },
                other => return Err(Malformed::UnknownChange(other)),
            }
        }
        Ok(())
    }
}

fn write_record(out: &mut Vec<u8>, key: &[u8], record: &Record) {
    out.push(PUT);
    put_bytes(out, key);
    put_bytes(out, &record.value);
    out.extend_from_slice(&record.expires_ms.to_le_bytes());
    let Some(policy) = record.policy else { return out.push(0) };
    out.push(1);
    let code = |lifetime: Option<Lifetime>| match lifetime {
        None => -2i64,
        Some(Lifetime::Eternal) => -1,
        Some(Lifetime::Millis(ms)) => ms,
    };
    for lifetime in [Some(policy.creation), policy.access, policy.update] {
        out.extend_from_slice(&code(lifetime).to_le_bytes());
    }
}

fn read_policy(reader: &mut Reader<'_>) -> Result<Option<ExpiryPolicy>, Malformed> {
    match reader.u8()? {
        0 => return Ok(None),
        1 => {}
        _ => return Err(Malformed::Refused("a cache entry's policy flag is neither 0 nor 1")),
    }
    let mut lifetime = || -> Result<Option<Lifetime>, Malformed> {
        Ok(match reader.i64()? {
            -2 => None,
            -1 => Some(Lifetime::Eternal),
            ms if ms >= 0 => Some(Lifetime::Millis(ms)),
            _ => return Err(Malformed::Refused("a cache entry's lifetime below -2")),
        })
    };
    let creation = lifetime()?.ok_or(Malformed::Refused("a cache entry's policy without a creation lifetime"))?;
    Ok(Some(ExpiryPolicy { creation, access: lifetime()?, update: lifetime()? }))
}

impl PartitionObject for CacheStore {
    fn create(_kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self {
        let Some(def) = settings.dynamic.caches.get(name) else { return CacheStore::new(1) };
        let mut store = CacheStore::new(usize::from(def.backups.0));
        store.journal = def.journal.map(|journal| {
            let partitions = u32::from(settings.partition_count().max(1));
            let ring = ferrogrid_config::RingbufferConfig {
                capacity: (journal.capacity / partitions).max(1),
                time_to_live_seconds: journal.time_to_live_seconds,
                backup_count: def.backups.0,
                async_backup_count: def.backups.1,
                ..ferrogrid_config::RingbufferConfig::DEFAULT
            };
            Box::new(RingbufferStore::journal(ring, settings.max_message_bytes() / 2))
        });
        store
    }

    fn entry_count(&self) -> usize {
        self.entries.len()
    }

    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    fn set_track_changes(&mut self, track: bool) {
        self.track_changes = track;
        self.changed.clear();
        self.cleared = false;
        if let Some(journal) = self.journal.as_deref_mut() {
            journal.set_track_changes(track);
        }
    }

    fn sync_backup_count(&self) -> usize {
        self.sync_backups
    }

    fn write_changes(&mut self, body: &mut Vec<u8>) {
        if std::mem::take(&mut self.cleared) {
            body.push(CLEAR);
        }
        for key in std::mem::take(&mut self.changed) {
            match self.entries.get(&key) {
                Some(record) => write_record(body, &key, record),
                None => {
                    body.push(REMOVE);
                    put_bytes(body, &key);
                }
            }
        }
        if let Some(journal) = self.journal.as_deref_mut() {
            let mut events = Vec::new();
            journal.write_changes(&mut events);
            if !events.is_empty() {
                body.push(JOURNAL);
                put_bytes(body, &events);
            }
        }
    }

    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body)
    }

    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
        for (key, record) in &self.entries {
            writer.entry(|out| write_record(out, key, record));
        }
        if let Some(journal) = self.journal.as_deref() {
            let mut events = Vec::new();
            journal.write_whole(&mut events);
            writer.entry(|out| {
                out.push(JOURNAL);
                put_bytes(out, &events);
            });
        }
    }

    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body)
    }

    fn take_waiting(&mut self) -> Vec<crate::engine::request::WaiterId> {
        self.journal.as_deref_mut().map(RingbufferStore::take_waiting).unwrap_or_default()
    }

    fn serve_journal_readers(&mut self, waiters: &mut dyn crate::engine::request::Waiters) {
        if let Some(journal) = self.journal.as_deref_mut().filter(|journal| journal.has_readers()) {
            journal.serve_waiters(waiters);
        }
    }

    /// Expired entries go; answered for EXPIRED events (the owner sends them).
    fn sweep_expired(&mut self, now_ms: i64, budget: usize) -> Vec<RemovedEntry> {
        let expired: Vec<Box<[u8]>> = self
            .entries
            .iter()
            .take(budget)
            .filter(|(_, record)| record.expires_ms <= now_ms)
            .map(|(key, _)| key.clone())
            .collect();
        let removed = expired.into_iter().filter_map(|key| self.remove(&key).map(|record| (key, record.value)));
        removed.map(|(key, value)| Entry::new(&key, &value, &Meta::plain(0), false)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_and_snapshots_rebuild_the_same_entries() {
        let mut owner = CacheStore::new(1);
        owner.set_track_changes(true);
        owner.put(b"a", b"1", i64::MAX, 0);
        owner.put(b"b", b"2", 500, 0);
        let touched = ExpiryPolicy { creation: Lifetime::Millis(5), access: Some(Lifetime::Eternal), update: None };
        owner.set_policy(b"b", touched);
        owner.put(b"c", b"3", i64::MAX, 0);
        owner.remove(b"c");
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        let mut backup = CacheStore::new(1);
        backup.apply_backup(&body).unwrap();
        backup.apply_backup(&body).unwrap();
        let plain = |store: &CacheStore| {
            let mut entries: Vec<_> = store
                .entries
                .iter()
                .map(|(key, record)| (key.clone(), record.value.clone(), record.expires_ms, record.policy))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
        };
        assert_eq!(plain(&backup), plain(&owner));
        assert_eq!(backup.held_bytes, owner.held_bytes);
        owner.clear(0);
        owner.put(b"d", b"4", i64::MAX, 0);
        body.clear();
        owner.write_changes(&mut body);
        backup.apply_backup(&body).unwrap();
        assert_eq!(plain(&backup), plain(&owner));
        for end in 0..body.len() {
            let mut copy = CacheStore::new(1);
            let _ = copy.apply_backup(&body[..end]);
        }
    }

    #[test]
    fn expired_entries_are_invisible_and_go() {
        let mut store = CacheStore::new(1);
        store.put(b"a", b"1", 100, 0);
        store.put(b"b", b"2", i64::MAX, 0);
        assert_eq!(store.size(99), 2);
        assert_eq!(store.size(100), 1);
        assert!(store.get(b"a", 100).is_none());
        assert_eq!(store.entry_count(), 1, "read after its time, the entry went");
        store.put(b"c", b"3", 5, 0);
        let swept = store.sweep_expired(10, 100);
        assert_eq!((swept.len(), swept[0].key(), swept[0].value()), (1, &b"c"[..], &b"3"[..]));
        assert_eq!(store.entry_count(), 1);
    }

    #[test]
    fn a_batched_iteration_returns_every_entry_once() {
        let mut store = CacheStore::new(1);
        for i in 0..100u32 {
            store.put(&i.to_le_bytes(), b"v", i64::MAX, 0);
        }
        let (mut index, mut seen) = (i32::MAX, Vec::new());
        while index >= 0 {
            let (batch, next) = store.batch(index, 7, 0);
            seen.extend(batch.iter().map(|(key, _)| key.to_vec()));
            index = next;
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 100);
    }

    #[test]
    fn a_full_partition_evicts_the_least_recently_used_of_its_sample() {
        let mut store = CacheStore::new(1);
        for i in 0..10u8 {
            store.put(&[i], b"v", i64::MAX, i64::from(i));
        }
        store.touch(&[0], 100);
        assert!(store.evict_for_new(11, Evict::Lru).is_none(), "room left");
        assert_eq!(store.evict_for_new(10, Evict::Lru).map(|(key, _)| key).as_deref(), Some(&[1u8][..]));
        assert_eq!(store.entry_count(), 9);
        assert!(store.get(&[1], 0).is_none(), "entry 1 was used least recently");
        assert!(store.get(&[0], 0).is_some(), "entry 0 was read last");
        store.touch(&[2], 101);
        store.touch(&[2], 102);
        assert!(store.evict_for_new(9, Evict::Lfu).is_some());
        assert!(store.get(&[2], 0).is_some(), "read twice");
    }
}
