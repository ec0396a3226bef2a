//! Maps in a partition: one map's entries (and key locks) that hash to one partition, as a
//! [`RecordStore`], the first kind of partition object (`partition/objects.rs`), and its backup and
//! snapshot encoding. Map operations reach it through the typed accessors in `partition/objects.rs`
//! (`PartitionStore::map_mut`).
//!
//! Owned and written by exactly one thread: the reactor that owns the partition
//! (`partition % reactor_count == reactor index`). No locks; other threads reach a partition
//! only by handing an operation to its reactor.
//!
//! Entries are [`Entry`]s (key, value and metadata in one allocation; `entry.rs`) in an open
//! addressing [`Table`] (`table.rs`). An entry keeps its full [`Meta`] only when the map or the
//! entry needs it (ttl or max-idle, LRU/LFU eviction, per-entry statistics); otherwise just its
//! version. The expiry sweep walks a bounded run of table slots per tick from a cursor, and
//! eviction samples the entries of a run of slots from a random one, like Hazelcast's
//! sampling eviction. Times are milliseconds since the Unix epoch, taken once per reactor
//! loop iteration.

use crate::clock::NEVER;
use crate::cluster::peer::{put_bytes, Malformed, Reader, SnapshotWriter};
use crate::engine::locks::{LockImage, LockTable, Parked};
use crate::engine::map::staged::StagedChange;
use crate::engine::map::table::Table;
use crate::engine::settings::{MapSettings, PartitionLimit, SettingsCache};
use crate::engine::structures::ObjectKind;
use crate::partition::object::{PartitionObject, RemovedEntry};
use ferrogrid_config::EvictionPolicy;
use ferrogrid_protocol::Uuid;
use std::sync::Arc;

pub(crate) use crate::engine::map::entry::{Entry, Meta};

/// How many key operations a map counts per partition: the map's key rows of the operation
/// table (`rows.rs`; the table checks the two agree).
pub const KEY_OPERATION_COUNT: usize = 32;

/// Entries examined per eviction.
const EVICTION_SAMPLE: usize = 15;

/// The entries of one map within one partition, keyed by the key's serialized bytes.
#[derive(Debug)]
pub struct RecordStore {
    entries: Table,
    /// Bytes held by keys and values (the USED_HEAP_SIZE measure).
    held_bytes: usize,
    pub settings: Arc<MapSettings>,
    pub locks: LockTable,
    /// Transactions' changes not yet committed (`staged.rs`).
    pub staged: crate::engine::map::staged::Staged,
    /// The table slot where the expiry sweep continues.
    sweep_cursor: usize,
    /// Whether any entry was ever given a finite ttl or max-idle. Until then nothing can
    /// expire: lookups skip the expiry check and counting is O(1).
    ever_expiring: bool,
    /// Whether any entry was ever given a finite max-idle (its reads must be recorded).
    ever_idle: bool,
    /// State of the sampling random generator (xorshift).
    random: u64,
    /// Requests run on this map in this partition, by operation (index in
    /// the operation table's partition rows).
    pub op_counts: [u64; KEY_OPERATION_COUNT],
    /// Keys written or removed since the owner last sent backups (puts, removes, ttl
    /// changes, evictions; not the expiry sweep, which backups run themselves).
    pub changed: Vec<Box<[u8]>>,
    /// Whether changes are recorded (the partition has backups).
    pub track_changes: bool,
    /// The map's indexes (`index.rs`) this store files its entries in: told of every change
    /// below.
    indexes: Option<Indexing>,
    /// The map's event journal in this partition, if enabled (`journal.rs`): its events
    /// reach the backups in this store's bodies.
    pub journal: Option<Box<crate::engine::ringbuffer::store::RingbufferStore>>,
}

impl RecordStore {
    pub fn new(settings: Arc<MapSettings>) -> RecordStore {
        RecordStore {
            entries: Table::default(),
            held_bytes: 0,
            locks: LockTable::default(),
            staged: Default::default(),
            sweep_cursor: 0,
            ever_expiring: false,
            ever_idle: false,
            random: 0x9e37_79b9_7f4a_7c15,
            op_counts: [0; KEY_OPERATION_COUNT],
            changed: Vec::new(),
            track_changes: false,
            indexes: (!settings.indexes.definitions.is_empty())
                .then(|| Indexing::private(&settings.indexes.schemas, &settings.indexes.definitions)),
            journal: settings.journal.map(|(config, read_limit_bytes)| {
                Box::new(crate::engine::ringbuffer::store::RingbufferStore::journal(config, read_limit_bytes))
            }),
            settings,
        }
    }

    /// Adds an index (`Map.addIndex`) and files every entry in it; false if it existed (in the
    /// reactor's indexes the store files in: another store of the map added it).
    pub fn add_index(
        &mut self,
        definition: crate::engine::map::index::IndexDefinition,
        schemas: &std::sync::Arc<crate::engine::schemas::Schemas>,
    ) -> bool {
        let indexing = self.indexes.get_or_insert_with(|| Indexing::private(schemas, &[]));
        let entries = || self.entries.iter().map(|entry| (entry.key(), entry.value()));
        indexing.with(|indexes, owner| {
            let added = indexes.ensure(&definition);
            indexes.file_missing(owner, entries);
            added
        })
    }

    /// The store is placed in slot `slot` of its reactor's partitions: it files its entries in
    /// the reactor's indexes of the map (its settings': `SettingsCache::get`) from now on,
    /// with the map's configured and added indexes there.
    pub fn place(&mut self, slot: u32) {
        let Some(shared) = self.settings.indexes.shared.clone() else { return };
        let keys = self.entries.iter().map(|entry| entry.key());
        if let Some(Indexing::Shared { shared, owner }) = &self.indexes {
            shared.lock().detach(*owner, keys);
        }
        let owner = crate::engine::map::index::new_owner(slot);
        {
            let mut indexes = shared.lock();
            indexes.attach(owner);
            for definition in &self.settings.indexes.definitions {
                indexes.ensure(definition);
            }
            indexes.file_missing(owner, || self.entries.iter().map(|entry| (entry.key(), entry.value())));
        }
        self.indexes = Some(Indexing::Shared { shared, owner });
    }

    /// Files the entries in every index of the reactor's indexes they are not in yet (an index
    /// that came after the store attached without it): `Indexes::complete` after every
    /// store of the map did.
    pub fn file_missing(&self) {
        if let Some(Indexing::Shared { shared, owner }) = &self.indexes {
            let mut indexes = shared.lock();
            if indexes.missing(*owner) {
                indexes.file_missing(*owner, || self.entries.iter().map(|entry| (entry.key(), entry.value())));
            }
        }
    }

    /// The keys of the entries a query with lookups `plan` may match, from the store's
    /// private indexes (None: no index applies, or the store files in its reactor's: scan).
    pub fn index_candidates(&self, plan: &[crate::engine::map::index::Lookup]) -> Option<Vec<&[u8]>> {
        let Some(Indexing::Private(indexes)) = &self.indexes else { return None };
        Some(indexes.candidates(plan)?.into_iter().map(|(key, _)| key).collect())
    }

    fn index_insert(&mut self, key: &[u8], value: &[u8]) {
        if let Some(indexing) = self.indexes.as_mut().filter(|indexing| indexing.any()) {
            indexing.with(|indexes, owner| indexes.insert(key, value, owner));
        }
    }

    fn index_remove(&mut self, key: &[u8]) {
        if let Some(indexing) = self.indexes.as_mut().filter(|indexing| indexing.any()) {
            indexing.with(|indexes, owner| indexes.remove(key, owner));
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Entries that have not expired.
    pub fn live_len(&self, now_ms: i64) -> usize {
        if !self.ever_expiring {
            return self.entries.len();
        }
        self.entries.iter().filter(|entry| !entry.is_expired(now_ms)).count()
    }

    /// The live entry under `key` (expired entries are invisible).
    pub fn get(&self, key: &[u8], now_ms: i64) -> Option<&Entry> {
        self.entries.get(key).filter(|entry| !entry.is_expired(now_ms))
    }

    /// Removes the entry if it has expired; returns it (for the EXPIRED event).
    pub fn expire_if_due(&mut self, key: &[u8], now_ms: i64) -> Option<Entry> {
        if !self.ever_expiring {
            return None;
        }
        if self.entries.get(key)?.is_expired(now_ms) {
            return self.remove(key);
        }
        None
    }

    /// Whether every entry keeps its metadata: for LRU/LFU eviction or entry statistics.
    fn keeps_meta(&self) -> bool {
        self.settings.per_entry_stats
            || matches!(self.settings.eviction_policy, EvictionPolicy::Lru | EvictionPolicy::Lfu)
    }

    /// Whether an entry with `meta` keeps it all (else only its version).
    fn rich(&self, meta: &Meta) -> bool {
        self.keeps_meta() || meta.expires()
    }

    /// Whether reads must be recorded: for max-idle, LRU/LFU eviction or entry statistics.
    fn tracks_access(&self) -> bool {
        self.ever_idle || self.keeps_meta()
    }

    /// Records a read: access time (max-idle, LRU) and hits (LFU) of an entry that keeps
    /// them. A no-op for maps that need neither, so a plain get costs one lookup.
    pub fn touch(&mut self, key: &[u8], now_ms: i64) {
        if !self.tracks_access() {
            return;
        }
        if let Some(meta) = self.entries.get_mut(key).and_then(Entry::meta_mut) {
            meta.last_access_time_ms = now_ms;
            meta.hits += 1;
        }
    }

    /// Stores `value` under `key` with the requested ttl / max-idle (−1 = map default, 0 =
    /// never, else ms); returns the previous entry. The caller expired the key first.
    pub fn put(&mut self, key: &[u8], value: &[u8], now_ms: i64, ttl_ms: i64, max_idle_ms: i64) -> Option<Entry> {
        let ttl_ms = MapSettings::effective(ttl_ms, self.settings.default_ttl_ms);
        let max_idle_ms = MapSettings::effective(max_idle_ms, self.settings.default_max_idle_ms);
        self.ever_expiring |= ttl_ms != NEVER || max_idle_ms != NEVER;
        self.ever_idle |= max_idle_ms != NEVER;
        self.note_change(key);
        let mut meta = Meta {
            version: 0,
            creation_time_ms: now_ms,
            last_update_time_ms: now_ms,
            last_access_time_ms: now_ms,
            hits: 0,
            ttl_ms,
            ttl_base_ms: now_ms,
            max_idle_ms,
        };
        let rich = self.rich(&meta);
        match self.entries.find(key) {
            Some(slot) => {
                let old = self.entries.slot(slot).expect("found");
                meta.version = old.version().wrapping_add(1);
                if let Some(kept) = old.is_rich().then(|| old.meta()) {
                    (meta.creation_time_ms, meta.hits) = (kept.creation_time_ms, kept.hits);
                }
                let previous = self.entries.replace_at(slot, Entry::new(key, value, &meta, rich));
                self.held_bytes = self.held_bytes + value.len() - previous.value().len();
                self.index_insert(key, value);
                Some(previous)
            }
            None => {
                self.held_bytes += key.len() + value.len();
                self.entries.insert(Entry::new(key, value, &meta, rich));
                self.index_insert(key, value);
                None
            }
        }
    }

    /// Sets a new ttl on a live entry, counted from now; false if there is none.
    pub fn set_ttl(&mut self, key: &[u8], ttl_ms: i64, now_ms: i64) -> bool {
        let Some(slot) =
            self.entries.find(key).filter(|slot| !self.entries.slot(*slot).expect("found").is_expired(now_ms))
        else {
            return false;
        };
        let entry = self.entries.slot(slot).expect("found");
        // As in Hazelcast, setTtl is an update (time, version) and replaces any max-idle.
        let mut meta = entry.meta();
        meta.ttl_ms = MapSettings::effective(ttl_ms, self.settings.default_ttl_ms);
        meta.ttl_base_ms = now_ms;
        meta.last_update_time_ms = now_ms;
        meta.version = meta.version.wrapping_add(1);
        meta.max_idle_ms = NEVER;
        self.ever_expiring |= meta.ttl_ms != NEVER;
        let updated = Entry::new(entry.key(), entry.value(), &meta, self.rich(&meta));
        self.entries.replace_at(slot, updated);
        self.note_change(key);
        true
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let entry = self.apply_remove(key)?;
        self.note_change(key);
        Some(entry)
    }

    fn note_change(&mut self, key: &[u8]) {
        if self.track_changes {
            self.changed.push(key.into());
        }
    }

    /// Stores an entry as a backup or snapshot carries it (nothing is recorded as changed).
    pub fn apply(&mut self, key: &[u8], value: &[u8], meta: &Meta) {
        self.ever_expiring |= meta.expires();
        self.ever_idle |= meta.max_idle_ms != NEVER;
        let entry = Entry::new(key, value, meta, self.rich(meta));
        self.held_bytes += value.len();
        self.index_insert(key, value);
        match self.entries.find(key) {
            Some(slot) => {
                let previous = self.entries.replace_at(slot, entry);
                self.held_bytes -= previous.value().len();
            }
            None => {
                self.held_bytes += key.len();
                self.entries.insert(entry);
            }
        }
    }

    /// Stores an entry with the metadata it came with, as its owner (recorded as changed, so
    /// the backups get it): a split-brain merge's entry.
    pub fn merge_in(&mut self, key: &[u8], value: &[u8], meta: &Meta) {
        self.apply(key, value, meta);
        self.note_change(key);
    }

    /// Removes a key as a backup carries it (nothing is recorded as changed).
    pub fn apply_remove(&mut self, key: &[u8]) -> Option<Entry> {
        let entry = self.entries.remove(key)?;
        self.held_bytes -= entry.held_bytes();
        self.index_remove(key);
        Some(entry)
    }

    /// The entry under `key`, expired or not (what a backup must mirror).
    #[cfg(test)]
    pub fn raw(&self, key: &[u8]) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// Every entry, expired or not (a snapshot).
    #[cfg(test)]
    pub fn raw_iter(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    /// Removes every entry except locked ones (as Hazelcast's clear and evictAll do);
    /// returns how many live entries went.
    pub fn clear(&mut self, now_ms: i64) -> usize {
        let locks = &self.locks;
        let mut removed_live = 0;
        let mut removed_bytes = 0;
        let indexed = self.indexes.as_ref().is_some_and(Indexing::any);
        let mut removed: Vec<Box<[u8]>> = Vec::new();
        self.entries.retain(|entry| {
            if locks.is_locked(entry.key()) {
                return true;
            }
            removed_live += usize::from(!entry.is_expired(now_ms));
            removed_bytes += entry.held_bytes();
            if indexed {
                removed.push(entry.key().into());
            }
            false
        });
        self.held_bytes -= removed_bytes;
        if let Some(indexing) = self.indexes.as_mut().filter(|_| indexed) {
            indexing.with(|indexes, owner| removed.iter().for_each(|key| indexes.remove(key, owner)));
        }
        self.sweep_cursor = 0;
        removed_live
    }

    /// Live entries, with their keys.
    pub fn iter(&self, now_ms: i64) -> impl Iterator<Item = (&[u8], &Entry)> {
        self.entries.iter().filter(move |entry| !entry.is_expired(now_ms)).map(|entry| (entry.key(), entry))
    }

    fn over_limit(&self) -> bool {
        match self.settings.limit {
            PartitionLimit::Unbounded => false,
            PartitionLimit::Entries(limit) => self.entries.len() as f64 > limit.max(1.0),
            PartitionLimit::Bytes(limit) => self.held_bytes as f64 > limit,
        }
    }

    fn next_random(&mut self) -> u64 {
        self.random ^= self.random << 13;
        self.random ^= self.random >> 7;
        self.random ^= self.random << 17;
        self.random
    }

    /// Evicts entries while the store is over its bound, choosing by the map's policy among a
    /// sample; skips `protected` (the key just written) and locked keys. Returns what went.
    pub fn evict_to_limit(&mut self, protected: &[u8]) -> Vec<RemovedEntry> {
        let mut evicted = Vec::new();
        while self.over_limit() && self.entries.len() > 1 {
            let Some(slot) = self.eviction_candidate(protected) else { break };
            let entry = self.entries.remove_at(slot);
            self.held_bytes -= entry.held_bytes();
            self.note_change(entry.key());
            self.index_remove(entry.key());
            evicted.push(entry);
        }
        evicted
    }

    /// The slot of the entry to evict: the best by policy among the first
    /// `EVICTION_SAMPLE` entries from a random slot on (a run of slots holds entries in hash
    /// order, unrelated to their age or use). Walks at most the whole table once.
    fn eviction_candidate(&mut self, protected: &[u8]) -> Option<usize> {
        let capacity = self.entries.capacity();
        let start = self.next_random() as usize % capacity;
        let mut best: Option<(i64, usize)> = None;
        let mut sampled = 0;
        for offset in 0..capacity {
            if sampled == EVICTION_SAMPLE {
                break;
            }
            let slot = (start + offset) % capacity;
            let Some(entry) = self.entries.slot(slot) else { continue };
            sampled += 1;
            if entry.key() == protected || self.locks.is_locked(entry.key()) {
                continue;
            }
            let score = match self.settings.eviction_policy {
                EvictionPolicy::Lru => entry.meta().last_access_time_ms,
                EvictionPolicy::Lfu => entry.meta().hits,
                EvictionPolicy::Random | EvictionPolicy::None => 0,
            };
            if best.is_none_or(|(best_score, _)| score < best_score) {
                best = Some((score, slot));
            }
        }
        best.map(|(_, slot)| slot)
    }

    /// Examines at most `budget` entries (and at most one pass of table slots) from where the
    /// last sweep stopped and removes the expired ones (returned for EXPIRED events).
    pub fn sweep(&mut self, now_ms: i64, budget: usize) -> Vec<RemovedEntry> {
        let mut expired = Vec::new();
        let (mut examined, mut scanned) = (0, 0);
        while examined < budget && scanned < self.entries.capacity() {
            if self.sweep_cursor >= self.entries.capacity() {
                self.sweep_cursor = 0;
            }
            scanned += 1;
            let slot = self.sweep_cursor;
            let Some(entry) = self.entries.slot(slot) else {
                self.sweep_cursor += 1;
                continue;
            };
            examined += 1;
            if entry.is_expired(now_ms) && !self.locks.is_locked(entry.key()) {
                // The run after the slot shifts back into it: examine it again.
                let entry = self.entries.remove_at(slot);
                self.held_bytes -= entry.held_bytes();
                self.index_remove(entry.key());
                expired.push(entry);
            } else {
                self.sweep_cursor += 1;
            }
        }
        expired
    }
}

/// The indexes a store files its entries in: its own (a store outside a reactor's
/// partitions), or its reactor's of the map, as `owner`.
#[derive(Debug)]
enum Indexing {
    Private(Box<crate::engine::map::index::Indexes>),
    Shared { shared: crate::engine::map::index::Shared, owner: crate::engine::map::index::Owner },
}

impl Indexing {
    fn private(
        schemas: &Arc<crate::engine::schemas::Schemas>,
        definitions: &[crate::engine::map::index::IndexDefinition],
    ) -> Indexing {
        let mut indexes = crate::engine::map::index::Indexes::new(schemas.clone(), definitions);
        indexes.attach(Self::PRIVATE_OWNER);
        indexes.file_missing(Self::PRIVATE_OWNER, std::iter::empty);
        Indexing::Private(Box::new(indexes))
    }

    const PRIVATE_OWNER: crate::engine::map::index::Owner = crate::engine::map::index::PRIVATE_SLOT as u64;

    /// Whether there is any index to tell of a change.
    fn any(&self) -> bool {
        match self {
            Indexing::Private(_) => true,
            Indexing::Shared { shared, .. } => shared.any(),
        }
    }

    /// Runs `change` on the indexes, as the store's owner in them.
    fn with<R>(&mut self, change: impl FnOnce(&mut crate::engine::map::index::Indexes, u64) -> R) -> R {
        match self {
            Indexing::Private(indexes) => change(indexes, Self::PRIVATE_OWNER),
            Indexing::Shared { shared, owner } => change(&mut shared.lock(), *owner),
        }
    }
}

impl Drop for RecordStore {
    /// A store that goes (migrated away, dropped with its map, replaced by a snapshot) takes
    /// its entries out of its reactor's indexes.
    fn drop(&mut self) {
        if let Some(Indexing::Shared { shared, owner }) = &self.indexes {
            let any = shared.any(); // (no index: no entry to take out, only the store)
            shared.lock().detach(*owner, self.entries.iter().map(|entry| entry.key()).take_while(|_| any));
        }
    }
}

/// A map in a partition as replication and migration see it. Backup and snapshot bodies are
/// runs of [`MapChange`]s, each carrying a key's whole resulting record or lock.
impl PartitionObject for RecordStore {
    fn create(_kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self {
        RecordStore::new(settings.get(name))
    }

    fn entry_count(&self) -> usize {
        self.entries.len()
    }

    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    fn place(&mut self, slot: u32) {
        RecordStore::place(self, slot);
    }

    fn set_track_changes(&mut self, track: bool) {
        self.track_changes = track;
        self.locks.set_track(track);
        self.staged.set_track(track);
        if let Some(journal) = self.journal.as_deref_mut() {
            journal.set_track_changes(track);
        }
        if !track {
            self.changed.clear();
        }
    }

    fn sync_backup_count(&self) -> usize {
        self.settings.backup_count
    }

    fn persistence(&self) -> Option<bool> {
        let persistence = self.settings.data_persistence;
        persistence.enabled.then_some(persistence.fsync)
    }

    fn write_changes(&mut self, body: &mut Vec<u8>) {
        // A key changed twice is written twice, with the same resulting state: harmless.
        let mut keys = std::mem::take(&mut self.changed);
        for key in keys.drain(..) {
            match self.entries.get(&key) {
                Some(entry) => put_entry(body, entry),
                None => put_key(body, REMOVE, &key),
            }
        }
        self.changed = keys;
        self.locks.write_changed(|key, image| match image {
            Some(image) => put_lock(body, key, image),
            None => put_key(body, UNLOCK, key),
        });
        // After the entries: a commit's applied value and its unstage reach the backup in
        // this one body, so no backup keeps a change whose commit it has.
        self.staged.write_changed(|key, staged| match staged {
            Some(staged) => put_staged(body, key, staged),
            None => put_key(body, UNSTAGE, key),
        });
        if let Some(journal) = self.journal.as_deref_mut() {
            let mut events = Vec::new();
            journal.write_changes(&mut events);
            if !events.is_empty() {
                put_key(body, JOURNAL, &events);
            }
        }
    }

    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_changes(body, true)
    }

    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
        for entry in self.entries.iter() {
            writer.entry(|out| put_entry(out, entry));
        }
        for (key, image) in self.locks.images() {
            writer.entry(|out| put_lock(out, key, image));
        }
        for (key, staged) in self.staged.iter() {
            writer.entry(|out| put_staged(out, key, staged));
        }
        if let Some(journal) = self.journal.as_deref() {
            let mut events = Vec::new();
            journal.write_whole(&mut events);
            writer.entry(|out| put_key(out, JOURNAL, &events));
        }
    }

    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_changes(body, false)
    }

    fn sweep_expired(&mut self, now_ms: i64, budget: usize) -> Vec<RemovedEntry> {
        self.sweep(now_ms, budget)
    }

    fn release_client(&mut self, client: Uuid, released: &mut Vec<Parked>) {
        for (_, parked) in self.locks.release_client(client) {
            released.extend(parked);
        }
    }

    fn take_waiting(&mut self) -> Vec<crate::engine::request::WaiterId> {
        let mut waiting: Vec<_> = self.locks.take_all_parked().into_iter().map(|parked| parked.id).collect();
        if let Some(journal) = self.journal.as_deref_mut() {
            waiting.extend(journal.take_waiting());
        }
        waiting
    }

    fn locks_mut(&mut self) -> Option<&mut crate::engine::locks::LockTable> {
        Some(&mut self.locks)
    }

    fn serve_journal_readers(&mut self, waiters: &mut dyn crate::engine::request::Waiters) {
        if let Some(journal) = self.journal.as_deref_mut().filter(|journal| journal.has_readers()) {
            journal.serve_waiters(waiters);
        }
    }

    fn in_object_figures(&self) -> bool {
        false
    }
}

impl RecordStore {
    /// Applies a body of changes as a backup (removals allowed) or snapshot (whole entries
    /// only) carries it. Nothing is recorded as changed.
    fn apply_changes(&mut self, body: &[u8], removals: bool) -> Result<(), Malformed> {
        let mut reader = Reader::new(body);
        while !reader.is_empty() {
            match read_change(&mut reader)? {
                MapChange::Put { key, value, meta } => self.apply(key, value, &meta),
                MapChange::Lock { key, image } => self.locks.apply(key, Some(image)),
                MapChange::Remove { key } if removals => {
                    self.apply_remove(key);
                }
                MapChange::Unlock { key } if removals => self.locks.apply(key, None),
                MapChange::Stage { key, staged } => self.staged.apply(key, Some(staged)),
                MapChange::Unstage { key } if removals => self.staged.apply(key, None),
                MapChange::Journal { events } => match self.journal.as_deref_mut() {
                    Some(journal) => journal.apply_backup(events)?,
                    None => return Err(Malformed::Refused("journal events of a map without a journal")),
                },
                MapChange::Remove { .. } | MapChange::Unlock { .. } | MapChange::Unstage { .. } => {
                    return Err(Malformed::Refused("a map snapshot holds a removal"));
                }
            }
        }
        Ok(())
    }
}

/// What a backup or snapshot body says about one key of a map.
///
/// ```text
/// PUT    (1) key bytes | value bytes | version, creation, last update, last access, hits,
///                                      ttl, ttl base, max idle: i64 each
/// REMOVE (2) key bytes
/// LOCK   (3) key bytes | client u128 | thread id i64 | count u32 | lease deadline i64
/// UNLOCK (4) key bytes
/// STAGE  (5) key bytes | a transaction's staged change (`StagedChange::write`)
/// UNSTAGE (6) key bytes
/// JOURNAL (7) the event journal's records (`ringbuffer/store.rs`) as one run of bytes
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
enum MapChange<'a> {
    Put {
        key: &'a [u8],
        value: &'a [u8],
        meta: Meta,
    },
    Remove {
        key: &'a [u8],
    },
    /// The key's lock as the owner holds it.
    Lock {
        key: &'a [u8],
        image: LockImage,
    },
    Unlock {
        key: &'a [u8],
    },
    /// A transaction's change of the key, not yet committed.
    Stage {
        key: &'a [u8],
        staged: StagedChange,
    },
    /// The key's staged change is gone (its transaction ended).
    Unstage {
        key: &'a [u8],
    },
    /// Events the owner appended to the map's journal (a snapshot: the whole journal).
    Journal {
        events: &'a [u8],
    },
}

const PUT: u8 = 1;
const REMOVE: u8 = 2;
const LOCK: u8 = 3;
const UNLOCK: u8 = 4;
const STAGE: u8 = 5;
const UNSTAGE: u8 = 6;
const JOURNAL: u8 = 7;

fn put_key(out: &mut Vec<u8>, change: u8, key: &[u8]) {
    out.push(change);
    put_bytes(out, key);
}

/// A PUT of the entry's whole state (a compact entry's is [`Meta::plain`]).
fn put_entry(out: &mut Vec<u8>, entry: &Entry) {
    put_key(out, PUT, entry.key());
    put_bytes(out, entry.value());
    for field in entry.meta().fields() {
        out.extend_from_slice(&field.to_le_bytes());
    }
}

fn put_lock(out: &mut Vec<u8>, key: &[u8], image: LockImage) {
    put_key(out, LOCK, key);
    image.write(out);
}

fn put_staged(out: &mut Vec<u8>, key: &[u8], staged: &StagedChange) {
    put_key(out, STAGE, key);
    staged.write(out);
}

fn read_change<'a>(reader: &mut Reader<'a>) -> Result<MapChange<'a>, Malformed> {
    let change = reader.u8()?;
    let key = reader.bytes()?;
    Ok(match change {
        PUT => {
            let value = reader.bytes()?;
            let mut fields = [0i64; Meta::FIELDS];
            for field in &mut fields {
                *field = reader.i64()?;
            }
            MapChange::Put { key, value, meta: Meta::from_fields(fields) }
        }
        REMOVE => MapChange::Remove { key },
        LOCK => MapChange::Lock { key, image: LockImage::read(reader)? },
        UNLOCK => MapChange::Unlock { key },
        STAGE => MapChange::Stage { key, staged: StagedChange::read(reader)? },
        UNSTAGE => MapChange::Unstage { key },
        JOURNAL => MapChange::Journal { events: key },
        other => return Err(Malformed::UnknownChange(other)),
    })
}

#[cfg(test)]
mod tests;
