//! Replicated maps (`ReplicatedMap`): every member holds a full copy. Each partition's share
//! of a replicated map lives in that partition's [`ReplicatedMapStore`], on the reactor that
//! owns the partition (`p % N`), on EVERY member, not only on the partition's replicas.
//!
//! Writes of a key run on the owner of the key's partition, which applies them, answers at
//! once and sends the change to every other member asynchronously (`peer::REPLICATED_CHANGES`);
//! reads are answered from the copy of the member asked. What keeps the copies together is a
//! per-partition [`Version`] (`sync.rs` drives it):
//!
//! - the owner numbers its changes of a partition: (epoch, sequence), the epoch being the
//!   partition-table version at which it became the owner, the sequence counting its changes
//!   since. A member applies a change in the owner's order; one that does not follow the
//!   version it holds tells it that it missed some, and it asks for the whole partition
//!   (`peer::REPLICATED_SYNC`), which replaces what it held;
//! - a new owner (a promoted member, or one a migration chose) carries on from its own copy:
//!   it starts a new epoch and sends its copy to every other member, so that all agree with
//!   it again (what the old owner changed and nobody else saw is lost, as in Hazelcast, whose
//!   replication is asynchronous too). A member that never received the partition first asks
//!   the old owner for it;
//! - every second an owner tells every member its versions (`peer::REPLICATED_VERSIONS`); a
//!   member whose copy is older asks for it. A new member so gets everything, and a change
//!   lost with a link is repaired.
//!
//! The store takes no part in a partition's backups, snapshots or dropping of a replica
//! ([`ObjectKind::is_everywhere`]): its [`PartitionObject`] methods for those do nothing.
//!
//! Entries expire by their ttl on every member, each member sweeping its own copy.
//!
//! Owned by the reactor that owns the partition; no locks.

use crate::clock::NEVER;
use crate::cluster::peer::{put_bytes, put_str, Malformed, Reader, SnapshotWriter};
use crate::engine::listeners::{Event, EventKind, Listeners, Registry};
use crate::engine::replicated_map::iteration::{Iterations, OwnedView, Page, RecordMeta};
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::net::outbox::Outbox;
use crate::partition::object::PartitionObject;
use ahash::RandomState;
use ferrogrid_cluster::MemberId;
use ferrogrid_config::ReplicatedMapConfig;
use ferrogrid_protocol::{PartitionId, Uuid};

/// Change kinds in a REPLICATED_CHANGES body.
const PUT: u8 = 1;
const REMOVE: u8 = 2;
const CLEAR: u8 = 3;

/// A key and its value, owned (an expired entry, a putAll's entry).
pub(crate) type OwnedEntry = (Box<[u8]>, Box<[u8]>);

/// One entry: its value, when it expires (`NEVER`: no ttl), and the metadata its entry view
/// reports (`iteration.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    value: Box<[u8]>,
    expires_at_ms: i64,
    meta: RecordMeta,
}

impl Record {
    fn is_live(&self, now_ms: i64) -> bool {
        self.expires_at_ms > now_ms
    }
}

/// One replicated map's entries of one partition, on one member.
#[derive(Debug)]
pub struct ReplicatedMapStore {
    entries: hashbrown::HashMap<Box<[u8]>, Record, RandomState>,
    held_bytes: usize,
    /// Entries with a ttl (the sweep skips a store without any).
    expiring: usize,
    pub(crate) config: ReplicatedMapConfig,
    /// The entry-view iterations started on this copy (`fetchEntryViews`).
    pub(crate) iterations: Iterations,
}

/// When a write with `ttl_ms` at `now_ms` expires: 0 is never (Hazelcast's "no ttl").
pub(crate) fn expiry_of(now_ms: i64, ttl_ms: i64) -> i64 {
    if ttl_ms <= 0 {
        NEVER
    } else {
        now_ms.saturating_add(ttl_ms)
    }
}

impl ReplicatedMapStore {
    pub(crate) fn new(config: ReplicatedMapConfig) -> ReplicatedMapStore {
        ReplicatedMapStore {
            entries: Default::default(),
            held_bytes: 0,
            expiring: 0,
            config,
            iterations: Iterations::default(),
        }
    }

    /// The live value of `key`.
    pub(crate) fn get(&self, key: &[u8], now_ms: i64) -> Option<&[u8]> {
        self.entries.get(key).filter(|record| record.is_live(now_ms)).map(|record| &*record.value)
    }

    /// Sets `key`; returns the live value it replaced (an expired one counts as absent). The
    /// entry keeps the creation time and hits of the one it replaces.
    pub(crate) fn put(&mut self, key: &[u8], value: &[u8], expires_at_ms: i64, now_ms: i64) -> Option<Box<[u8]>> {
        let ttl_ms = if expires_at_ms == NEVER { 0 } else { expires_at_ms.saturating_sub(now_ms) };
        let held = self.entries.get(key).filter(|record| record.is_live(now_ms)).map(|record| record.meta);
        let meta = RecordMeta {
            creation_time_ms: held.map_or(now_ms, |meta| meta.creation_time_ms),
            hits: held.map_or(0, |meta| meta.hits),
            last_access_time_ms: now_ms,
            last_update_time_ms: now_ms,
            ttl_ms,
        };
        self.put_record(key, value, expires_at_ms, meta, now_ms)
    }

    /// Sets `key` with the metadata it came with (`putAllWithMetadata`, as Hazelcast's
    /// `putRecord`): its ttl counts from now; returns the live value it replaced.
    pub(crate) fn put_with_metadata(
        &mut self,
        key: &[u8],
        value: &[u8],
        meta: RecordMeta,
        now_ms: i64,
    ) -> Option<Box<[u8]>> {
        self.put_record(key, value, expiry_of(now_ms, meta.ttl_ms), meta, now_ms)
    }

    fn put_record(
        &mut self,
        key: &[u8],
        value: &[u8],
        expires_at_ms: i64,
        meta: RecordMeta,
        now_ms: i64,
    ) -> Option<Box<[u8]>> {
        let record = Record { value: value.into(), expires_at_ms, meta };
        self.held_bytes += key.len() + value.len();
        self.expiring += usize::from(expires_at_ms != NEVER);
        let old = self.entries.insert(key.into(), record)?;
        self.forget(key, &old);
        old.is_live(now_ms).then_some(old.value)
    }

    /// Removes `key`; returns its live value.
    pub(crate) fn remove(&mut self, key: &[u8], now_ms: i64) -> Option<Box<[u8]>> {
        let old = self.entries.remove(key)?;
        self.forget(key, &old);
        old.is_live(now_ms).then_some(old.value)
    }

    fn forget(&mut self, key: &[u8], record: &Record) {
        self.held_bytes -= key.len() + record.value.len();
        self.expiring -= usize::from(record.expires_at_ms != NEVER);
    }

    /// Removes every entry; returns how many were live.
    pub(crate) fn clear(&mut self, now_ms: i64) -> usize {
        let live = self.live_len(now_ms);
        self.entries.clear();
        (self.held_bytes, self.expiring) = (0, 0);
        live
    }

    pub(crate) fn live_len(&self, now_ms: i64) -> usize {
        if self.expiring == 0 {
            return self.entries.len();
        }
        self.entries.values().filter(|record| record.is_live(now_ms)).count()
    }

    /// The live entries, in no order.
    pub(crate) fn live(&self, now_ms: i64) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.entries
            .iter()
            .filter(move |(_, record)| record.is_live(now_ms))
            .map(|(key, record)| (&**key, &*record.value))
    }

    /// A page of entry views after `cursor` (`iteration.rs`), starting iteration `cursor` first
    /// if `new_iteration`; None for a cursor of no iteration. Reading an entry into a page
    /// counts as an access (a hit, the access time), as Hazelcast's iteration reads each record.
    pub(crate) fn fetch_views(
        &mut self,
        cursor: Uuid,
        new_iteration: bool,
        batch: usize,
        now_ms: i64,
    ) -> Option<Page<'_>> {
        let ReplicatedMapStore { entries, iterations, .. } = self;
        if new_iteration {
            let live = entries.iter().filter(|(_, record)| record.is_live(now_ms));
            iterations.start(cursor, || live.map(|(key, _)| key.clone()).collect(), now_ms);
        }
        iterations.fetch(cursor, batch, now_ms, |key| {
            let record = entries.get_mut(key).filter(|record| record.is_live(now_ms))?;
            record.meta.hits = record.meta.hits.saturating_add(1);
            record.meta.last_access_time_ms = now_ms;
            Some(OwnedView { key: key.into(), value: record.value.clone(), meta: record.meta })
        })
    }

    /// Removes expired entries, examining at most `budget`; returns them (key, value) for
    /// EVICTED events.
    pub(crate) fn sweep(&mut self, now_ms: i64, budget: usize) -> Vec<OwnedEntry> {
        if self.expiring == 0 {
            return Vec::new();
        }
        let expired: Vec<Box<[u8]>> = self
            .entries
            .iter()
            .take(budget)
            .filter(|(_, record)| !record.is_live(now_ms))
            .map(|(key, _)| key.clone())
            .collect();
        let mut removed = Vec::with_capacity(expired.len());
        for key in expired {
            let record = self.entries.remove(&key).expect("just seen");
            self.forget(&key, &record);
            removed.push((key, record.value));
        }
        removed
    }
}

impl PartitionObject for ReplicatedMapStore {
    fn create(_kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self {
        ReplicatedMapStore::new(settings.replicated_map(name))
    }

    fn in_object_figures(&self) -> bool {
        self.config.statistics_enabled
    }

    fn entry_count(&self) -> usize {
        self.entries.len()
    }

    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Replicated maps send their own changes to every member (`sync.rs`).
    fn set_track_changes(&mut self, _track: bool) {}

    fn sync_backup_count(&self) -> usize {
        0
    }

    fn write_changes(&mut self, _body: &mut Vec<u8>) {}

    fn apply_backup(&mut self, _body: &[u8]) -> Result<(), Malformed> {
        Err(Malformed::Refused("replicated maps take no backup records"))
    }

    /// Not part of a partition's snapshot: every member holds its copy already.
    fn write_snapshot(&self, _writer: &mut SnapshotWriter<'_>) {}

    fn apply_snapshot(&mut self, _body: &[u8]) -> Result<(), Malformed> {
        Err(Malformed::Refused("replicated maps take no snapshot records"))
    }
}

/// An entry event of a replicated map for this member's listeners.
pub(crate) struct EntryChange<'a> {
    pub(crate) name: &'a str,
    pub(crate) partition: usize,
    pub(crate) kind: EventKind,
    pub(crate) key: &'a [u8],
    pub(crate) value: Option<&'a [u8]>,
    pub(crate) old_value: Option<&'a [u8]>,
}

/// Publishes `change` to this reactor's listeners of its map: from `origin` (the member that
/// made it); `relayed` if that is another member.
pub(crate) fn publish(
    listeners: &mut Listeners,
    outbox: &mut Outbox,
    (origin, relayed): (Uuid, bool),
    change: &EntryChange<'_>,
) {
    if !listeners.has_object_listeners(Registry::ReplicatedEntries, change.name) {
        return;
    }
    let event = Event {
        kind: change.kind,
        partition_id: Some(PartitionId(change.partition as u16)),
        key: Some(change.key),
        value: change.value,
        old_value: change.old_value,
        affected_entries: 1,
        source: origin,
    };
    listeners.publish_replicated(outbox, (origin, relayed), change.name, event);
}

/// ADDED or UPDATED, by whether a value was replaced.
pub(crate) fn put_kind(old: Option<&[u8]>) -> EventKind {
    if old.is_some() {
        EventKind::Updated
    } else {
        EventKind::Added
    }
}

/// A copy's version: the owner's epoch (the table version it became the owner at) and how
/// many changes it made since. (0, 0): this member never received the partition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Version {
    pub(crate) epoch: u64,
    pub(crate) sequence: u64,
}

impl Version {
    pub(crate) const NONE: Version = Version { epoch: 0, sequence: 0 };
}

/// Where a member's copy of a partition stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// In step with the owner's changes (as far as this member knows).
    Current,
    /// A change did not follow this copy's version: it was applied, and the whole partition
    /// asked for.
    Stale,
    /// This member owns the partition but never received it: it asked `source` (the old
    /// owner), and its writes answer "retry" until the copy arrives.
    Waiting { source: MemberId },
}

/// One partition's copy on this member.
#[derive(Debug, Clone)]
pub(crate) struct Share {
    pub(crate) version: Version,
    pub(crate) phase: Phase,
    /// When the partition was last asked for (0: not since it was current).
    pub(crate) asked_ms: i64,
    /// The version of the sync being received (its first chunk came, its last not yet).
    pub(crate) receiving: Option<Version>,
}

/// A reactor's replicated-map state beside the stores: each local partition's [`Share`], and
/// the changes gathered for every other member over one loop iteration.
#[derive(Debug)]
pub struct Shares {
    pub(crate) reactor_index: usize,
    pub(crate) reactor_count: usize,
    pub(crate) partition_count: u16,
    pub(crate) shares: Vec<Share>,
    /// REPLICATED_CHANGES records for every other member (the same bytes for each), sealed
    /// into one message per member per loop iteration.
    pub(crate) outgoing: Vec<u8>,
    /// When the owner last told the others its versions.
    pub(crate) versions_sent_ms: i64,
}

impl Shares {
    pub(crate) fn new(reactor_index: usize, reactor_count: usize, local: usize, partition_count: u16) -> Shares {
        let share = Share { version: Version::NONE, phase: Phase::Current, asked_ms: 0, receiving: None };
        Shares {
            reactor_index,
            reactor_count,
            partition_count,
            shares: vec![share; local],
            outgoing: Vec::new(),
            versions_sent_ms: 0,
        }
    }

    pub(crate) fn local(&self, partition: usize) -> usize {
        partition / self.reactor_count
    }

    pub(crate) fn global(&self, local: usize) -> usize {
        self.reactor_index + local * self.reactor_count
    }

    /// Whether the owner of local partition `local` may write it (it is not waiting for the
    /// partition's copy).
    pub(crate) fn writable(&self, local: usize) -> bool {
        !matches!(self.shares[local].phase, Phase::Waiting { .. })
    }

    /// Whether this member has ever received local partition `local` (or started it).
    pub(crate) fn filled(&self, local: usize) -> bool {
        self.shares[local].version != Version::NONE
    }

    /// Numbers one operation's `changes` of `partition` (which this member owns) with the
    /// partition's next version and queues them for every other member. Nothing for no
    /// changes.
    pub(crate) fn send(&mut self, partition: usize, changes: &[u8]) {
        if changes.is_empty() {
            return;
        }
        let local = self.local(partition);
        let share = &mut self.shares[local];
        share.version.sequence += 1;
        let version = share.version;
        self.outgoing.extend_from_slice(&(partition as u16).to_le_bytes());
        self.outgoing.extend_from_slice(&version.epoch.to_le_bytes());
        self.outgoing.extend_from_slice(&version.sequence.to_le_bytes());
        put_bytes(&mut self.outgoing, changes);
    }
}

/// Appends a put of `key` in the map `name` to a change body.
pub(crate) fn put_change(body: &mut Vec<u8>, name: &str, key: &[u8], value: &[u8], expires_at_ms: i64) {
    body.push(PUT);
    put_str(body, name);
    put_bytes(body, key);
    put_bytes(body, value);
    body.extend_from_slice(&expires_at_ms.to_le_bytes());
}

/// Appends a removal of `key` in the map `name` to a change body.
pub(crate) fn remove_change(body: &mut Vec<u8>, name: &str, key: &[u8]) {
    body.push(REMOVE);
    put_str(body, name);
    put_bytes(body, key);
}

/// Appends the clearing of the map `name` (this partition's share) to a change body.
pub(crate) fn clear_change(body: &mut Vec<u8>, name: &str) {
    body.push(CLEAR);
    put_str(body, name);
}

/// One change as read from a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change<'a> {
    Put { name: &'a str, key: &'a [u8], value: &'a [u8], expires_at_ms: i64 },
    Remove { name: &'a str, key: &'a [u8] },
    Clear { name: &'a str },
}

/// Reads the changes of a body one by one.
pub(crate) fn read_change<'a>(reader: &mut Reader<'a>) -> Result<Change<'a>, Malformed> {
    let kind = reader.u8()?;
    let name = reader.str()?;
    Ok(match kind {
        PUT => Change::Put { name, key: reader.bytes()?, value: reader.bytes()?, expires_at_ms: reader.i64()? },
        REMOVE => Change::Remove { name, key: reader.bytes()? },
        CLEAR => Change::Clear { name },
        other => return Err(Malformed::UnknownChange(other)),
    })
}

/// One record of a REPLICATED_CHANGES payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChangeRecord<'a> {
    pub(crate) partition: u16,
    pub(crate) version: Version,
    pub(crate) changes: &'a [u8],
    /// The whole record, to hand to another reactor as it is.
    pub(crate) raw: &'a [u8],
}

/// The next record of a REPLICATED_CHANGES payload (None at its end).
pub(crate) fn next_change_record<'a>(reader: &mut Reader<'a>) -> Result<Option<ChangeRecord<'a>>, Malformed> {
    if reader.is_empty() {
        return Ok(None);
    }
    let start = reader.rest();
    let partition = reader.u16()?;
    let version = Version { epoch: reader.u64()?, sequence: reader.u64()? };
    let changes = reader.bytes()?;
    let raw = &start[..start.len() - reader.rest().len()];
    Ok(Some(ChangeRecord { partition, version, changes, raw }))
}

/// The header of a REPLICATED_SYNC chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SyncHeader {
    pub(crate) partition: u16,
    pub(crate) version: Version,
    pub(crate) first: bool,
    pub(crate) last: bool,
}

const SYNC_HEADER_BYTES: usize = 2 + 8 + 8 + 1;

impl SyncHeader {
    fn write(&self, out: &mut [u8]) {
        out[..2].copy_from_slice(&self.partition.to_le_bytes());
        out[2..10].copy_from_slice(&self.version.epoch.to_le_bytes());
        out[10..18].copy_from_slice(&self.version.sequence.to_le_bytes());
        out[18] = u8::from(self.first) | u8::from(self.last) << 1;
    }

    pub(crate) fn read(reader: &mut Reader<'_>) -> Result<SyncHeader, Malformed> {
        let partition = reader.u16()?;
        let version = Version { epoch: reader.u64()?, sequence: reader.u64()? };
        let flags = reader.u8()?;
        Ok(SyncHeader { partition, version, first: flags & 1 != 0, last: flags & 2 != 0 })
    }
}

/// Writes a partition's whole copy (every replicated map's live entries) as REPLICATED_SYNC
/// chunks of about `chunk_bytes` (cut between entries) into `out`, for one member.
pub(crate) fn write_sync<'a>(
    out: &mut Vec<u8>,
    partition: u16,
    version: Version,
    maps: impl Iterator<Item = (&'a str, &'a ReplicatedMapStore)>,
    now_ms: i64,
    chunk_bytes: usize,
) {
    let mut header = SyncHeader { partition, version, first: true, last: false };
    let mut chunk = vec![0; SYNC_HEADER_BYTES];
    for (name, store) in maps {
        for (key, record) in store.entries.iter().filter(|(_, record)| record.is_live(now_ms)) {
            put_str(&mut chunk, name);
            put_bytes(&mut chunk, key);
            put_bytes(&mut chunk, &record.value);
            chunk.extend_from_slice(&record.expires_at_ms.to_le_bytes());
            if chunk.len() >= chunk_bytes {
                header.write(&mut chunk);
                crate::cluster::peer::write(out, crate::cluster::peer::REPLICATED_SYNC, 0, &chunk);
                header.first = false;
                chunk.truncate(SYNC_HEADER_BYTES);
            }
        }
    }
    header.last = true;
    header.write(&mut chunk);
    crate::cluster::peer::write(out, crate::cluster::peer::REPLICATED_SYNC, 0, &chunk);
}

/// One entry of a sync chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SyncEntry<'a> {
    pub(crate) name: &'a str,
    pub(crate) key: &'a [u8],
    pub(crate) value: &'a [u8],
    pub(crate) expires_at_ms: i64,
}

/// Reads a sync chunk's entries (after its header), all checked before any is returned.
pub(crate) fn read_sync_entries<'a>(reader: &mut Reader<'a>) -> Result<Vec<SyncEntry<'a>>, Malformed> {
    let mut entries = Vec::new();
    while !reader.is_empty() {
        entries.push(SyncEntry {
            name: reader.str()?,
            key: reader.bytes()?,
            value: reader.bytes()?,
            expires_at_ms: reader.i64()?,
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::peer::tests::messages;

    fn store() -> ReplicatedMapStore {
        ReplicatedMapStore::new(ReplicatedMapConfig::DEFAULT)
    }

    #[test]
    fn entries_expire_and_keep_their_byte_count() {
        let mut store = store();
        assert_eq!(store.put(b"k", b"v1", NEVER, 0), None);
        assert_eq!(store.put(b"k", b"v22", NEVER, 0).as_deref(), Some(&b"v1"[..]));
        assert_eq!(store.put(b"t", b"x", expiry_of(10, 5), 10), None);
        assert_eq!((store.held_bytes(), store.live_len(14)), (1 + 3 + 1 + 1, 2));
        assert_eq!(store.get(b"t", 15), None, "expired at 15");
        assert_eq!(store.live_len(15), 1);
        assert_eq!(store.put(b"t", b"y", NEVER, 20), None, "an expired value is not answered as the old one");
        assert_eq!(store.remove(b"t", 20).as_deref(), Some(&b"y"[..]));
        store.put(b"u", b"z", 30, 0);
        assert_eq!(store.sweep(31, 100), vec![(b"u".to_vec().into_boxed_slice(), b"z".to_vec().into_boxed_slice())]);
        assert_eq!((store.held_bytes(), store.expiring), (4, 0));
        assert_eq!(store.clear(31), 1);
        assert_eq!((store.held_bytes(), store.entry_count()), (0, 0));
        assert_eq!(expiry_of(5, 0), NEVER, "ttl 0 is no ttl");
    }

    #[test]
    fn changes_are_numbered_and_read_back() {
        let mut shares = Shares::new(1, 2, 3, 6);
        shares.shares[2].version = Version { epoch: 4, sequence: 7 };
        let mut body = Vec::new();
        put_change(&mut body, "m", b"k", b"v", 99);
        remove_change(&mut body, "m", b"gone");
        clear_change(&mut body, "n");
        shares.send(5, &body);
        shares.send(5, &[]);
        assert_eq!(shares.shares[2].version, Version { epoch: 4, sequence: 8 }, "empty changes are not numbered");
        let mut reader = Reader::new(&shares.outgoing);
        let record = next_change_record(&mut reader).unwrap().unwrap();
        assert_eq!(
            (record.partition, record.version, record.raw.len()),
            (5, Version { epoch: 4, sequence: 8 }, shares.outgoing.len())
        );
        assert!(next_change_record(&mut reader).unwrap().is_none());
        let mut changes = Reader::new(record.changes);
        assert_eq!(
            read_change(&mut changes).unwrap(),
            Change::Put { name: "m", key: b"k", value: b"v", expires_at_ms: 99 }
        );
        assert_eq!(read_change(&mut changes).unwrap(), Change::Remove { name: "m", key: b"gone" });
        assert_eq!(read_change(&mut changes).unwrap(), Change::Clear { name: "n" });
        assert!(changes.is_empty());
        for cut in 1..shares.outgoing.len() {
            assert!(next_change_record(&mut Reader::new(&shares.outgoing[..cut])).is_err(), "cut at {cut}");
        }
        assert_eq!(read_change(&mut Reader::new(&[9, 0, 0, 0, 0])), Err(Malformed::UnknownChange(9)));
    }

    #[test]
    fn a_sync_is_cut_into_chunks_between_entries() {
        let mut store = store();
        for index in 0..10u8 {
            store.put(&[index], &[index; 20], NEVER, 0);
        }
        store.put(b"expired", b"x", 5, 0);
        let mut out = Vec::new();
        let version = Version { epoch: 2, sequence: 3 };
        write_sync(&mut out, 7, version, [("m", &store)].into_iter(), 10, 64);
        let chunks = messages(&out);
        assert!(chunks.len() > 2, "64-byte chunks");
        let mut keys = Vec::new();
        for (index, (ty, payload)) in chunks.iter().enumerate() {
            assert_eq!(*ty, crate::cluster::peer::REPLICATED_SYNC);
            let mut reader = Reader::new(payload);
            let header = SyncHeader::read(&mut reader).unwrap();
            assert_eq!((header.partition, header.version), (7, version));
            assert_eq!((header.first, header.last), (index == 0, index == chunks.len() - 1));
            for entry in read_sync_entries(&mut reader).unwrap() {
                assert_eq!((entry.name, entry.value.len(), entry.expires_at_ms), ("m", 20, NEVER));
                keys.push(entry.key[0]);
            }
        }
        keys.sort();
        assert_eq!(keys, (0..10).collect::<Vec<u8>>(), "every live entry once, the expired one not");
        let mut empty = Vec::new();
        write_sync(&mut empty, 1, version, std::iter::empty(), 0, 64);
        let chunks = messages(&empty);
        let header = SyncHeader::read(&mut Reader::new(&chunks[0].1)).unwrap();
        assert!(chunks.len() == 1 && header.first && header.last, "an empty copy is one chunk, first and last");
    }
}
