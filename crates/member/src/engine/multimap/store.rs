//! Multimaps (`MultiMap`): the values of each key of one named multimap, in the partition of
//! the key, with synchronous backups and migration through [`PartitionObject`].
//!
//! A key's values are a set (each value once: Hazelcast's default `value-collection-type`)
//! or a list (every value put, in order). Values compare by their serialized bytes. A backup
//! record carries a key's whole collection (or its removal), so applying one twice, or after
//! a snapshot, is harmless.
//!
//! Owned by the reactor that owns the partition; no locks. Key locks (`lock`, `tryLock`) are
//! the same [`LockTable`] maps have; the multimap-wide operations are in `wide.rs`.

use crate::cluster::peer::{put_bytes, Malformed, Reader, SnapshotWriter};
use crate::engine::listeners::{Event, EventKind, Listeners, Registry};
use crate::engine::locks::{KeyDeadline, LockImage, LockOwner, LockTable, Parked};
use crate::engine::multimap::request::MultiMapOp;
use crate::engine::request::{Blob, ErrorKind, OpError, Reply};
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::net::outbox::Outbox;
use crate::partition::object::PartitionObject;
use ahash::RandomState;
use ferrogrid_config::{MultiMapConfig, ValueCollectionType};
use ferrogrid_protocol::{Data, PartitionId, Uuid};
use std::collections::HashMap;

/// Record kinds: a key's whole collection, or its removal; a key's lock as the owner holds it
/// ([`LockImage::write`]), or its release; a transaction's staged values of the key, or their
/// end (commit or rollback).
///
/// ```text
/// VALUES   (1) key bytes | count u32 | value bytes *count
/// REMOVED  (2) key bytes
/// LOCK     (3) key bytes | lock image
/// UNLOCK   (4) key bytes
/// STAGE    (5) key bytes | txn u128 | client u128 | thread id i64 | blocks reads u8 (0, 1)
///              | count u32 | value bytes *count
/// UNSTAGE  (6) key bytes
/// ```
const VALUES: u8 = 1;
const REMOVED: u8 = 2;
const LOCK: u8 = 3;
const UNLOCK: u8 = 4;
const STAGE: u8 = 5;
const UNSTAGE: u8 = 6;

/// A key's values (a set's without duplicates).
pub(crate) type Values = Vec<Box<[u8]>>;

/// One multimap in one partition.
#[derive(Debug)]
pub struct MultiMapStore {
    entries: hashbrown::HashMap<Box<[u8]>, Values, RandomState>,
    /// Key locks and the requests parked on them (held locks go to backups and snapshots).
    pub(crate) locks: LockTable,
    config: MultiMapConfig,
    held_bytes: usize,
    track_changes: bool,
    /// Keys changed since the last `write_changes`.
    changed: Vec<Box<[u8]>>,
    /// Transactions' changes not yet committed: per key, the transaction holding its lock and
    /// the key's values as it sees them (`txn.rs`). Changed only through [`MultiMapStore::stage`]
    /// and [`MultiMapStore::unstage`], which record the key for the backups.
    pub(crate) staged: HashMap<Box<[u8]>, StagedValues, RandomState>,
    /// Keys staged or unstaged since the last `write_changes`.
    staged_changed: Vec<Box<[u8]>>,
}

/// A transaction's view of one key of a multimap, until its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StagedValues {
    pub(crate) txn: Uuid,
    /// Who holds the key's lock for it (its client and thread).
    pub(crate) owner: LockOwner,
    /// Whether others' plain reads of the key wait (TWO_PHASE).
    pub(crate) blocks_reads: bool,
    pub(crate) values: Values,
}

/// What an operation needs besides its multimap: owned by the reactor, lent per operation.
pub(crate) struct MultiMapContext<'a> {
    pub name: &'a str,
    pub member: Uuid,
    /// The client whose request this is (the source of its events, the owner of its locks).
    pub source: Uuid,
    pub partition_id: PartitionId,
    pub now_ms: i64,
    pub listeners: &'a mut Listeners,
    pub outbox: &'a mut Outbox,
    /// Parked requests this operation released; the reactor re-runs them next.
    pub released: &'a mut Vec<Parked>,
    /// (deadline, multimap, key) of leases that need the reactor's timer.
    pub deadlines: &'a mut Vec<KeyDeadline>,
}

/// What became of a multimap request that did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MultiDone {
    Answered,
    /// Another owner holds the key's lock: park it for `wait_ms` (< 0: until released).
    Park {
        wait_ms: i64,
    },
}

impl std::fmt::Debug for MultiMapContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiMapContext").field("name", &self.name).finish()
    }
}

impl MultiMapContext<'_> {
    /// An ADDED (with the value) or REMOVED (with the old value) event of `key`.
    fn publish(&mut self, kind: EventKind, key: &[u8], value: &[u8]) {
        if !self.listeners.has_object_listeners(Registry::MultiMapEntries, self.name) {
            return;
        }
        let (value, old_value) = if kind == EventKind::Added { (Some(value), None) } else { (None, Some(value)) };
        let event = Event {
            kind,
            partition_id: Some(self.partition_id),
            key: Some(key),
            value,
            old_value,
            affected_entries: 1,
            source: self.source,
        };
        self.listeners.publish_to(Registry::MultiMapEntries, self.outbox, self.member, self.name, event);
    }
}

fn null_check(bytes: &[u8], what: &str) -> Result<(), OpError> {
    match Data(bytes).type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(OpError::new(ErrorKind::NullArgument, format!("Null {what} is not allowed!"))),
    }
}

/// Orders `values` (in the order they were added) as Java's `HashSet<MultiMapRecord>` iterates
/// them: a record's hash is its value's (`HeapData.hashCode`: MurmurHash3 x86 32 of the payload
/// after the 8-byte header), spread (`h ^ h >>> 16`) and masked to the table's size; buckets in
/// order, each bucket's values in the order they were added (a resize keeps it). The set's table
/// grew from 16, doubling when more than 3/4 full (taken from the values held now: a table
/// that grew before values were removed is not remembered), then copied into `new
/// HashSet<>(set)`, as Hazelcast answers a get or a removal, whose table is sized for the values
/// (`size / .75 + 1`, at least 16) and filled in the set's order. (A bin Java turns into a tree, 8 values of one bucket in a table
/// of 64 or more, is not modelled.)
pub(crate) fn set_order(values: &mut [&[u8]]) {
    let size = values.len();
    let mut grown = 16usize;
    while size > grown / 4 * 3 {
        grown *= 2;
    }
    // Each value hashed once; both sorts are stable (ties keep the order they had).
    let mut hashed: Vec<(usize, &[u8])> = values
        .iter()
        .map(|value| {
            let payload = value.get(ferrogrid_protocol::data::DATA_HEADER_SIZE..).unwrap_or(&[]);
            let hash = ferrogrid_protocol::data::murmur3_x86_32(payload, ferrogrid_protocol::data::MURMUR_SEED);
            ((hash ^ (hash >> 16)) as usize, *value)
        })
        .collect();
    hashed.sort_by_key(|(hash, _)| hash & (grown - 1));
    let copy = ((size as f32 / 0.75) as usize + 1).max(16).next_power_of_two();
    hashed.sort_by_key(|(hash, _)| hash & (copy - 1));
    for (slot, (_, value)) in values.iter_mut().zip(hashed) {
        *slot = value;
    }
}

fn size_of(key: &[u8], values: &[Box<[u8]>]) -> usize {
    key.len() + values.iter().map(|value| value.len()).sum::<usize>()
}

impl MultiMapStore {
    pub(crate) fn new(config: MultiMapConfig) -> MultiMapStore {
        MultiMapStore {
            entries: Default::default(),
            locks: LockTable::default(),
            config,
            held_bytes: 0,
            track_changes: false,
            changed: Vec::new(),
            staged: HashMap::default(),
            staged_changed: Vec::new(),
        }
    }

    /// Whether `set` semantics hold for its values (no value twice under a key).
    pub(crate) fn holds_sets(&self) -> bool {
        self.is_set()
    }

    /// `key`'s committed values.
    pub(crate) fn values(&self, key: &[u8]) -> &[Box<[u8]>] {
        self.entries.get(key).map_or(&[], |values| &values[..])
    }

    /// Whether a plain read by `client` of `key` waits: another client's TWO_PHASE transaction
    /// staged it and still holds its lock (staged values whose lock's lease ran out, or whose
    /// unstage a promoted backup never got, hold up no one).
    pub(crate) fn blocks_read(&self, key: &[u8], client: Uuid) -> bool {
        self.staged.get(key).is_some_and(|staged| {
            staged.blocks_reads && staged.owner.client != client && self.locks.held_by(key, staged.owner)
        })
    }

    /// Records transaction `staged.txn`'s view of `key` (replacing any earlier one).
    pub(crate) fn stage(&mut self, key: &[u8], staged: StagedValues) {
        self.staged.insert(key.into(), staged);
        if self.track_changes {
            self.staged_changed.push(key.into());
        }
    }

    /// Removes and returns the staged view of `key` (its transaction's end).
    pub(crate) fn unstage(&mut self, key: &[u8]) -> Option<StagedValues> {
        let staged = self.staged.remove(key)?;
        if self.track_changes {
            self.staged_changed.push(key.into());
        }
        Some(staged)
    }

    /// Makes `values` the values of `key` (a transaction's commit): the values added and
    /// removed, for events.
    pub(crate) fn replace_values(&mut self, key: &[u8], values: Values) -> (Values, Values) {
        let old = self.remove_key(key);
        let removed: Values = old.iter().filter(|value| !values.contains(value)).cloned().collect();
        let added: Values = values.iter().filter(|value| !old.contains(value)).cloned().collect();
        for value in values {
            self.put(key, &value);
        }
        self.record(key);
        (added, removed)
    }

    fn is_set(&self) -> bool {
        self.config.value_collection_type == ValueCollectionType::Set
    }

    /// Values held, over every key (Hazelcast's size).
    pub(crate) fn value_count(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    fn record(&mut self, key: &[u8]) {
        if self.track_changes {
            self.changed.push(key.into());
        }
    }

    /// Adds `value` to `key`'s values; false for a set that has it.
    fn put(&mut self, key: &[u8], value: &[u8]) -> bool {
        let set = self.is_set();
        let values = self.entries.entry_ref(key).or_default();
        let fresh = values.is_empty();
        if set && values.iter().any(|held| **held == *value) {
            return false;
        }
        values.push(value.into());
        self.held_bytes += value.len() + if fresh { key.len() } else { 0 };
        self.record(key);
        true
    }

    /// Removes `key` and answers its values (empty if it had none).
    fn remove_key(&mut self, key: &[u8]) -> Vec<Box<[u8]>> {
        let Some((key, values)) = self.entries.remove_entry(key) else { return Vec::new() };
        self.held_bytes -= size_of(&key, &values);
        self.record(&key);
        values
    }

    /// Removes one value of `key` (the first equal one); whether there was one.
    fn remove_value(&mut self, key: &[u8], value: &[u8]) -> bool {
        let Some(values) = self.entries.get_mut(key) else { return false };
        let Some(index) = values.iter().position(|held| **held == *value) else { return false };
        values.remove(index);
        self.held_bytes -= value.len();
        if values.is_empty() {
            self.entries.remove(key);
            self.held_bytes -= key.len();
        }
        self.record(key);
        true
    }

    /// Every key with its values.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&[u8], &[Box<[u8]>])> {
        self.entries.iter().map(|(key, values)| (&**key, &values[..]))
    }

    /// Removes every key that is not locked (as Hazelcast's clear does); returns how many
    /// keys went. Applied by every replica to its own copy: no records.
    pub(crate) fn clear(&mut self) -> usize {
        let (before, locks) = (self.entries.len(), &self.locks);
        self.entries.retain(|key, _| locks.is_locked(key));
        self.held_bytes = self.entries.iter().map(|(key, values)| size_of(key, values)).sum();
        self.changed.clear();
        before - self.entries.len()
    }

    /// A key's values in the order Hazelcast answers them (get and remove): a LIST's as added; a
    /// SET's as Java's `HashSet` of their serialized forms iterates (`set_order`).
    fn answer_order<'v>(&self, values: &'v [Box<[u8]>]) -> Vec<&'v [u8]> {
        let mut ordered: Vec<&[u8]> = values.iter().map(|value| &**value).collect();
        if self.is_set() {
            set_order(&mut ordered);
        }
        ordered
    }

    fn contains_entry(&self, key: &[u8], value: &[u8]) -> bool {
        self.entries.get(key).is_some_and(|values| values.iter().any(|held| **held == *value))
    }
}

/// Runs one key request; its answer goes to `reply` unless it fails or parks.
pub(crate) fn execute(
    store: &mut MultiMapStore,
    ctx: &mut MultiMapContext<'_>,
    op: &MultiMapOp<'_>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<MultiDone, OpError> {
    let locked_by_other = |store: &MultiMapStore, key: &[u8], thread_id: i64| {
        !store.locks.may_write(key, LockOwner { client: ctx.source, thread_id })
    };
    match op {
        MultiMapOp::Put { key, value, thread_id } => {
            null_check(key, "key")?;
            null_check(value, "value")?;
            if locked_by_other(store, key, *thread_id) {
                return Ok(MultiDone::Park { wait_ms: -1 });
            }
            let added = store.put(key, value);
            if added {
                ctx.publish(EventKind::Added, key, value);
            }
            reply(Reply::Bool(added));
        }
        MultiMapOp::Get { key } | MultiMapOp::ValueCount { key } if store.blocks_read(key, ctx.source) => {
            return Ok(MultiDone::Park { wait_ms: -1 });
        }
        MultiMapOp::Get { key } => {
            let values = store.entries.get(&**key).map_or(&[][..], |values| &values[..]);
            reply(Reply::Values(store.answer_order(values)));
        }
        MultiMapOp::RemoveKey { key, answer_values, thread_id } => {
            // Hazelcast's delete neither waits for a lock nor is announced.
            if !answer_values {
                store.remove_key(key);
                reply(Reply::Empty);
                return Ok(MultiDone::Answered);
            }
            if locked_by_other(store, key, *thread_id) {
                return Ok(MultiDone::Park { wait_ms: -1 });
            }
            let values = store.remove_key(key);
            values.iter().for_each(|value| ctx.publish(EventKind::Removed, key, value));
            reply(Reply::Values(store.answer_order(&values)));
        }
        MultiMapOp::RemoveEntry { key, value, thread_id } => {
            if locked_by_other(store, key, *thread_id) {
                return Ok(MultiDone::Park { wait_ms: -1 });
            }
            let removed = store.remove_value(key, value);
            if removed {
                ctx.publish(EventKind::Removed, key, value);
            }
            reply(Reply::Bool(removed));
        }
        MultiMapOp::ContainsKey { key } => reply(Reply::Bool(store.entries.contains_key(&**key))),
        MultiMapOp::ContainsEntry { key, value } => reply(Reply::Bool(store.contains_entry(key, value))),
        MultiMapOp::ValueCount { key } => {
            reply(Reply::Int(store.entries.get(&**key).map_or(0, |values| values.len() as i32)))
        }
        MultiMapOp::PutAll { entries } => {
            put_all(store, ctx, entries)?;
            reply(Reply::Empty);
        }
        op @ (MultiMapOp::Lock { .. } | MultiMapOp::Unlock { .. } | MultiMapOp::IsLocked { .. }) => {
            return lock_op(store, ctx, op, reply);
        }
        MultiMapOp::Txn { .. } => return Err(OpError::new(ErrorKind::Unsupported, "run by the transaction's handler")),
    }
    Ok(MultiDone::Answered)
}

/// lock, tryLock, unlock, forceUnlock, isLocked of a key, as for maps.
fn lock_op(
    store: &mut MultiMapStore,
    ctx: &mut MultiMapContext<'_>,
    op: &MultiMapOp<'_>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<MultiDone, OpError> {
    let (key, now_ms) = (op_key(op), ctx.now_ms);
    null_check(key, "key")?;
    ctx.released.extend(store.locks.expire_lease(key, now_ms));
    match op {
        MultiMapOp::Lock { thread_id, lease_ms, try_timeout_ms, .. } => {
            let owner = LockOwner { client: ctx.source, thread_id: *thread_id };
            if !store.locks.acquire(key, owner, *lease_ms, now_ms) {
                return Ok(match try_timeout_ms {
                    Some(0) => {
                        reply(Reply::Bool(false));
                        MultiDone::Answered
                    }
                    Some(timeout_ms) => MultiDone::Park { wait_ms: *timeout_ms },
                    None => MultiDone::Park { wait_ms: -1 },
                });
            }
            if let Some(deadline) = store.locks.lease_deadline(key) {
                ctx.deadlines.push((deadline, ctx.name.into(), key.into()));
            }
            reply(if try_timeout_ms.is_some() { Reply::Bool(true) } else { Reply::Empty });
        }
        MultiMapOp::Unlock { thread_id: None, .. } => {
            ctx.released.extend(store.locks.release(key));
            reply(Reply::Empty);
        }
        MultiMapOp::Unlock { thread_id: Some(thread_id), .. } => {
            let owner = LockOwner { client: ctx.source, thread_id: *thread_id };
            let released = store.locks.unlock(key, owner).map_err(|_| {
                let text =
                    format!("Current thread is not owner of the lock! -> <not locked by {}:{thread_id}>", owner.client);
                OpError::new(ErrorKind::NotLockOwner, text)
            })?;
            ctx.released.extend(released);
            reply(Reply::Empty);
        }
        MultiMapOp::IsLocked { .. } => reply(Reply::Bool(store.locks.is_locked(key))),
        other => unreachable!("{other:?} is not a lock operation"),
    }
    Ok(MultiDone::Answered)
}

fn op_key<'o>(op: &'o MultiMapOp<'_>) -> &'o [u8] {
    match op {
        MultiMapOp::Lock { key, .. } | MultiMapOp::Unlock { key, .. } | MultiMapOp::IsLocked { key } => key,
        other => unreachable!("{other:?} is not a lock operation"),
    }
}

/// putAll of this partition's keys: each value put as by put; a key given no values exists
/// with none (as in Hazelcast: containsKey and keySet see it, size does not count it).
fn put_all(
    store: &mut MultiMapStore,
    ctx: &mut MultiMapContext<'_>,
    entries: &[(Blob<'_>, Vec<Blob<'_>>)],
) -> Result<(), OpError> {
    for (key, values) in entries {
        null_check(key, "key")?;
        values.iter().try_for_each(|value| null_check(value, "value"))?;
    }
    for (key, values) in entries {
        if values.is_empty() && !store.entries.contains_key(&**key) {
            store.entries.insert((**key).into(), Vec::new());
            store.held_bytes += key.len();
            store.record(key);
        }
        for value in values {
            if store.put(key, value) {
                ctx.publish(EventKind::Added, key, value);
            }
        }
    }
    Ok(())
}

fn put_values(out: &mut Vec<u8>, key: &[u8], values: &[Box<[u8]>]) {
    out.push(VALUES);
    put_bytes(out, key);
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for value in values {
        put_bytes(out, value);
    }
}

/// A key's STAGE record, or its UNSTAGE (None).
fn put_staged(out: &mut Vec<u8>, key: &[u8], staged: Option<&StagedValues>) {
    out.push(if staged.is_some() { STAGE } else { UNSTAGE });
    put_bytes(out, key);
    let Some(staged) = staged else { return };
    out.extend_from_slice(&staged.txn.as_u128().to_le_bytes());
    out.extend_from_slice(&staged.owner.client.as_u128().to_le_bytes());
    out.extend_from_slice(&staged.owner.thread_id.to_le_bytes());
    out.push(u8::from(staged.blocks_reads));
    out.extend_from_slice(&(staged.values.len() as u32).to_le_bytes());
    for value in &staged.values {
        put_bytes(out, value);
    }
}

/// Reads a key's values as [`put_values`] and [`put_staged`] write them: a count, bounded by
/// what `body` can hold, and the values.
fn read_values(reader: &mut Reader<'_>, body: &[u8]) -> Result<Values, Malformed> {
    let count = reader.u32()? as usize;
    let mut values = Vec::with_capacity(count.min(reader_bound(body)));
    for _ in 0..count {
        values.push(reader.bytes()?.into());
    }
    Ok(values)
}

/// Reads what [`put_staged`] wrote after the key of a STAGE record.
fn read_staged(reader: &mut Reader<'_>, body: &[u8]) -> Result<StagedValues, Malformed> {
    let txn = Uuid::from_u128(reader.u128()?);
    let owner = LockOwner { client: Uuid::from_u128(reader.u128()?), thread_id: reader.i64()? };
    let blocks_reads = match reader.u8()? {
        0 => false,
        1 => true,
        _ => return Err(Malformed::Refused("a multimap's staged values' blocks-reads flag is neither 0 nor 1")),
    };
    Ok(StagedValues { txn, owner, blocks_reads, values: read_values(reader, body)? })
}

/// A key's LOCK record, or its UNLOCK (None).
fn put_lock(out: &mut Vec<u8>, key: &[u8], image: Option<LockImage>) {
    out.push(if image.is_some() { LOCK } else { UNLOCK });
    put_bytes(out, key);
    if let Some(image) = image {
        image.write(out);
    }
}

impl MultiMapStore {
    /// Applies key records (a backup; a snapshot holds no removals or releases).
    fn apply_records(&mut self, body: &[u8], removals: bool) -> Result<(), Malformed> {
        let mut reader = Reader::new(body);
        while !reader.is_empty() {
            let kind = reader.u8()?;
            let key: Box<[u8]> = reader.bytes()?.into();
            match kind {
                LOCK => self.locks.apply(&key, Some(LockImage::read(&mut reader)?)),
                UNLOCK if removals => self.locks.apply(&key, None),
                STAGE => {
                    self.staged.insert(key, read_staged(&mut reader, body)?);
                }
                UNSTAGE if removals => {
                    self.staged.remove(&key);
                }
                VALUES => {
                    let values = read_values(&mut reader, body)?;
                    self.remove_entry(&key);
                    self.held_bytes += size_of(&key, &values);
                    self.entries.insert(key, values);
                }
                REMOVED if removals => self.remove_entry(&key),
                REMOVED | UNLOCK | UNSTAGE => return Err(Malformed::Refused("a multimap snapshot holds a removal")),
                other => return Err(Malformed::UnknownChange(other)),
            }
        }
        Ok(())
    }

    fn remove_entry(&mut self, key: &[u8]) {
        if let Some(old) = self.entries.remove(key) {
            self.held_bytes -= size_of(key, &old);
        }
    }
}

/// A bound on a count read from `body` (each value takes at least its 4-byte length).
fn reader_bound(body: &[u8]) -> usize {
    body.len() / 4
}

impl PartitionObject for MultiMapStore {
    fn create(_kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self {
        MultiMapStore::new(settings.multimap(name))
    }

    fn entry_count(&self) -> usize {
        self.value_count()
    }

    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    fn set_track_changes(&mut self, track: bool) {
        self.track_changes = track;
        self.locks.set_track(track);
        if !track {
            self.changed.clear();
            self.staged_changed.clear();
        }
    }

    fn sync_backup_count(&self) -> usize {
        self.config.backup_count as usize
    }

    fn write_changes(&mut self, body: &mut Vec<u8>) {
        let mut changed = std::mem::take(&mut self.changed);
        changed.sort_unstable();
        changed.dedup();
        for key in changed {
            match self.entries.get(&key) {
                Some(values) => put_values(body, &key, values),
                None => {
                    body.push(REMOVED);
                    put_bytes(body, &key);
                }
            }
        }
        self.locks.write_changed(|key, image| put_lock(body, key, image));
        // After the values: a commit's values and its unstage reach the backup in this one
        // body, so no backup keeps staged values whose commit it has.
        let mut staged_changed = std::mem::take(&mut self.staged_changed);
        staged_changed.sort_unstable();
        staged_changed.dedup();
        for key in staged_changed.drain(..) {
            put_staged(body, &key, self.staged.get(&key));
        }
        self.staged_changed = staged_changed;
    }

    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body, true)
    }

    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
        for (key, values) in &self.entries {
            writer.entry(|out| put_values(out, key, values));
        }
        for (key, image) in self.locks.images() {
            writer.entry(|out| put_lock(out, key, Some(image)));
        }
        for (key, staged) in &self.staged {
            writer.entry(|out| put_staged(out, key, Some(staged)));
        }
    }

    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body, false)
    }

    fn release_client(&mut self, client: ferrogrid_protocol::Uuid, released: &mut Vec<Parked>) {
        for (_, parked) in self.locks.release_client(client) {
            released.extend(parked);
        }
    }

    fn take_waiting(&mut self) -> Vec<crate::engine::request::WaiterId> {
        self.locks.take_all_parked().into_iter().map(|parked| parked.id).collect()
    }

    fn locks_mut(&mut self) -> Option<&mut crate::engine::locks::LockTable> {
        Some(&mut self.locks)
    }
}

#[cfg(test)]
mod tests;
