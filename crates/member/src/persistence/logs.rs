//! A reactor's partition logs ([`Logs`]): what its partitions' objects changed, appended as
//! the change records backups carry, and flushed once per loop turn.
//!
//! - **Records.** `CHANGE kind name body` (an object's `write_changes`, applied at load with
//!   `apply_backup`), `DROPPED kind name` (the object was destroyed) and, after a `DROPPED`,
//!   `STATE kind name body` (the object's whole state once a clear changed it on every
//!   replica without recorded changes, applied with `apply_snapshot`). A snapshot's chunks are
//!   the ones a migration sends (`SnapshotWriter`), applied with `apply_snapshot`.
//! - **When answers go out.** Every path that writes answers to sockets first flushes the
//!   logs of the partitions that ran ([`Logs::flush`], called by
//!   `PartitionOwner::flush_persistence`). Under `always`, or for a map configured with
//!   `fsync: true`, the flush syncs, so no answer leaves before its write is on disk; under
//!   `everysec` the log is written before the answers and synced within a second.
//! - **Held answers.** An answer whose write must be on disk before it goes out (`always`,
//!   `fsync`, or a partition whose log failed) is held ([`Logs::hold`]) until its flush: the
//!   client gets it if the flush worked and an error naming the failure if not.
//! - **A full disk.** A failed flush marks the partition's log failed: its batch was cut
//!   off, so memory holds what the disk lacks. Writes to the partition are answered only once
//!   a later flush worked (else they fail with the disk's error); that flush first writes a
//!   snapshot of the partition, so the disk catches up with memory. Reads go on.
//! - **Compaction.** A log past `compact-log-bytes` (and past its snapshot's size) is
//!   replaced by a snapshot of the partition.

use crate::cluster::peer::{self, ObjectRecord, SnapshotWriter};
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::structures::ObjectKind;
use crate::net::connection::ConnectionShared;
use crate::partition::objects::{Object, PartitionStore};
use ferrogrid_persist::{FsyncPolicy, PartitionLog, PersistError};
use std::sync::Arc;
use std::time::Instant;
use tracing::{error, info, warn};

/// An object's changes: `kind name body`, applied with `apply_backup`.
pub(crate) const CHANGE: u8 = 1;
/// An object destroyed: `kind name` (an empty body).
pub(crate) const DROPPED: u8 = 2;
/// Part of an object's whole state (after a `DROPPED` of it: the object as a clear left it):
/// `kind name body`, applied with `apply_snapshot`.
pub(crate) const STATE: u8 = 3;

/// How often the logs are looked at for an `everysec` sync that is due.
pub(crate) const SYNC_CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_millis(20);

/// Bytes of a snapshot chunk on disk (the unit `apply_snapshot` takes at load).
const SNAPSHOT_CHUNK_BYTES: usize = 1 << 20;

/// A persisting reactor's logs, and the table its loaded data was written under until the
/// first table of the cluster says whether it is kept (`partition/persisting.rs` runs it).
#[derive(Debug)]
pub(crate) struct Persisting {
    pub(crate) logs: Logs,
    /// Taken by the first table (`PartitionOwner::first_table_from_disk`).
    pub(crate) restored: Option<Option<ferrogrid_cluster::PartitionTable>>,
    /// Partitions that still hold what was loaded from disk (a replica's data arriving from
    /// another member replaces it): what the first table drops if the cluster did not
    /// restore this member's table.
    pub(crate) from_disk: Vec<bool>,
}

/// An answer waiting for its partition's flush.
#[derive(Debug)]
struct Held {
    local: usize,
    connection: Arc<ConnectionShared>,
    answer: Vec<u8>,
}

/// One reactor's partition logs, by the partition's local index.
#[derive(Debug)]
pub(crate) struct Logs {
    logs: Vec<PartitionLog>,
    /// Partition ids, by local index.
    globals: Vec<u16>,
    policy: FsyncPolicy,
    compact_log_bytes: u64,
    /// Partitions with records buffered since the last flush, and whether one of their
    /// records asks for a sync (a map with `fsync: true`).
    dirty: Vec<usize>,
    marked: Vec<bool>,
    sync: Vec<bool>,
    /// Why each partition's last flush failed (None: it did not).
    failed: Vec<Option<String>>,
    held: Vec<Held>,
    /// Replicas this member stopped holding under table version `.1`, whose logs are emptied
    /// once the member persisted a table at least that new: until then a restart may come
    /// back under a table that still names this member for them.
    pending_drops: Vec<(usize, u64)>,
    /// A record was appended whose answer was not held: the next answers written must wait
    /// for the log's write (`PartitionOwner::flush_persistence_before_answers`).
    unheld: bool,
    scratch: Vec<u8>,
    last_tick: Instant,
    last_sync_check: Instant,
}

impl Logs {
    /// Logs for the partitions `globals` (by local index), opened and recovered already.
    pub(crate) fn new(logs: Vec<PartitionLog>, globals: Vec<u16>, policy: FsyncPolicy, compact_log_bytes: u64) -> Logs {
        let count = logs.len();
        Logs {
            logs,
            globals,
            policy,
            compact_log_bytes,
            dirty: Vec::new(),
            marked: vec![false; count],
            sync: vec![false; count],
            failed: vec![None; count],
            held: Vec::new(),
            pending_drops: Vec::new(),
            unheld: false,
            scratch: Vec::new(),
            last_tick: Instant::now(),
            last_sync_check: Instant::now(),
        }
    }

    /// Appends `record` (an object's changes, `write_changes`' body) to partition `local`'s
    /// log; `fsync`: the object's configuration wants it synced before its answer.
    pub(crate) fn append_change(&mut self, local: usize, record: &ObjectRecord<'_>, fsync: bool) {
        self.scratch.clear();
        self.scratch.push(CHANGE);
        peer::put_object(&mut self.scratch, record);
        self.append(local, fsync);
    }

    /// Appends that object `kind` `name` of partition `local` was destroyed.
    pub(crate) fn append_dropped(&mut self, local: usize, kind: ObjectKind, name: &str) {
        self.scratch.clear();
        self.scratch.push(DROPPED);
        peer::put_object(&mut self.scratch, &ObjectRecord { kind, name, body: &[] });
        self.append(local, false);
    }

    fn append(&mut self, local: usize, fsync: bool) {
        self.mark(local);
        self.sync[local] |= fsync;
        if let Err(failure) = self.logs[local].append(&self.scratch) {
            // Too large a record, or the flush of a full batch failed: the partition's log
            // no longer has what memory has.
            self.fail(local, &failure);
        }
    }

    /// Appends the objects destroyed in `partitions` since the last call (each partition
    /// records them, `PartitionStore::dropped`).
    pub(crate) fn record_dropped(&mut self, partitions: &mut [PartitionStore]) {
        for (local, partition) in partitions.iter_mut().enumerate() {
            let Some(dropped) = partition.dropped.as_mut().filter(|dropped| !dropped.is_empty()) else { continue };
            for (kind, name, replaced) in std::mem::take(dropped) {
                self.append_dropped(local, kind, &name);
                if replaced {
                    self.append_state(local, partition, kind, &name);
                }
            }
        }
    }

    /// Appends object `kind` `name`'s whole state (after its `DROPPED`), if it exists.
    fn append_state(&mut self, local: usize, partition: &PartitionStore, kind: ObjectKind, name: &str) {
        let Some(object) = partition.object(kind, name) else { return };
        for chunk in &self.chunks_of(local, std::iter::once((kind, name, object))) {
            let Ok((_, records)) = peer::read_snapshot(chunk) else { continue };
            for record in records {
                self.scratch.clear();
                self.scratch.push(STATE);
                peer::put_object(&mut self.scratch, &record);
                self.append(local, false);
            }
        }
    }

    /// Whether an answer to a write of partition `local` must wait for the flush: the policy
    /// or the object (`fsync`) wants it on disk first, or the partition's log failed.
    pub(crate) fn must_hold(&self, local: usize, fsync: bool) -> bool {
        self.policy == FsyncPolicy::Always || fsync || self.failed[local].is_some()
    }

    /// Holds `answer` (one or more whole messages for `connection`) until partition `local`'s
    /// next flush.
    pub(crate) fn hold(&mut self, local: usize, connection: &Arc<ConnectionShared>, answer: Vec<u8>) {
        self.mark(local);
        self.held.push(Held { local, connection: connection.clone(), answer });
    }

    fn mark(&mut self, local: usize) {
        if !self.marked[local] {
            self.marked[local] = true;
            self.dirty.push(local);
        }
    }

    /// Why partition `local`'s last flush failed, while it has not worked since.
    pub(crate) fn failure(&self, local: usize) -> Option<&str> {
        self.failed[local].as_deref()
    }

    /// A write's answer goes out without waiting for the flush (its records must be written
    /// before that answer is).
    pub(crate) fn note_unheld(&mut self) {
        self.unheld = true;
    }

    /// Whether an answer waits to be written after records not yet flushed.
    pub(crate) fn has_unheld(&self) -> bool {
        self.unheld
    }

    /// Partition `local` is no longer held here from table `version` on: its log is emptied
    /// once a table that new is persisted ([`Logs::due_drops`]).
    pub(crate) fn defer_drop(&mut self, local: usize, version: u64) {
        self.pending_drops.retain(|(pending, _)| *pending != local);
        self.pending_drops.push((local, version));
    }

    /// The deferred drops a persisted table of `persisted_version` makes due (taken).
    pub(crate) fn due_drops(&mut self, persisted_version: u64) -> Vec<usize> {
        let mut due = Vec::new();
        self.pending_drops.retain(|(local, version)| {
            let is_due = *version <= persisted_version;
            if is_due {
                due.push(*local);
            }
            !is_due
        });
        due
    }

    /// Whether partition `local`'s log or snapshot holds anything (past its file header).
    pub(crate) fn has_records(&self, local: usize) -> bool {
        self.logs[local].holds_anything()
    }

    /// Whether a log waits for an `everysec` sync (its reactor must not sleep past it).
    pub(crate) fn sync_pending(&self) -> bool {
        self.policy == FsyncPolicy::EverySec && self.logs.iter().any(PartitionLog::is_unsynced)
    }

    /// Whether anything waits for a flush.
    pub(crate) fn is_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Group commit: writes (and syncs, as the policy says) every partition log appended to
    /// since the last flush; a failed one first writes a snapshot of its partition
    /// (`partitions`, by local index). Returns the held answers to send: each as it was if its
    /// partition's flush worked, else an error naming the failure.
    pub(crate) fn flush(&mut self, partitions: &[PartitionStore]) -> Vec<(Arc<ConnectionShared>, Vec<u8>)> {
        let now = Instant::now();
        self.unheld = false;
        let dirty = std::mem::take(&mut self.dirty);
        for &local in &dirty {
            self.marked[local] = false;
            let sync = std::mem::take(&mut self.sync[local]);
            if self.failed[local].is_some() {
                self.resnapshot(local, &partitions[local]);
            } else if let Err(failure) = self.logs[local].flush_with(now, sync) {
                self.fail(local, &failure);
            }
        }
        self.dirty = dirty;
        self.dirty.clear();
        let held = std::mem::take(&mut self.held);
        held.into_iter()
            .map(|held| match &self.failed[held.local] {
                None => (held.connection, held.answer),
                Some(reason) => {
                    let answer = failed_answer(&held.answer, reason);
                    (held.connection, answer)
                }
            })
            .collect()
    }

    fn fail(&mut self, local: usize, failure: &PersistError) {
        let partition = self.globals[local];
        if self.failed[local].is_none() {
            error!(partition, %failure, "partition log write failed: writes to the partition fail until it works");
        }
        self.failed[local] = Some(failure.to_string());
    }

    /// Every loop turn: syncs the logs under `everysec` whose sync is due (each log's
    /// within 950 ms of its last, so a write is on disk within a second); about once a second
    /// also retries failed logs (a snapshot) and compacts logs past their bound.
    pub(crate) fn tick(&mut self, partitions: &[PartitionStore]) {
        let now = Instant::now();
        if now.duration_since(self.last_sync_check) < SYNC_CHECK_INTERVAL {
            return;
        }
        self.last_sync_check = now;
        for (local, log) in self.logs.iter_mut().enumerate() {
            if let Err(failure) = log.tick(now) {
                warn!(partition = self.globals[local], %failure, "partition log sync failed: retried");
            }
        }
        if now.duration_since(self.last_tick).as_millis() < 1_000 {
            return;
        }
        self.last_tick = now;
        for (local, partition) in partitions.iter().enumerate() {
            let log = &self.logs[local];
            let long = log.bytes_on_disk() > self.compact_log_bytes;
            // (A replica whose drop waits keeps its log as it is: memory no longer has it.)
            let dropping = self.pending_drops.iter().any(|(pending, _)| *pending == local);
            if (self.failed[local].is_some() || long) && !dropping {
                self.resnapshot(local, partition);
            }
        }
    }

    /// Replaces partition `local`'s log by a snapshot of what `partition` holds now (after a
    /// replica arrived whole, or was dropped: then an empty one).
    pub(crate) fn replace(&mut self, local: usize, partition: &PartitionStore) {
        self.pending_drops.retain(|(pending, _)| *pending != local);
        self.resnapshot(local, partition);
    }

    /// Replaces partition `local`'s log by a snapshot of `partition`'s persisted objects: the
    /// disk catches up with memory, so a failed log is writable again once it worked.
    fn resnapshot(&mut self, local: usize, partition: &PartitionStore) {
        let persisted = partition.objects().filter(|(_, _, object)| object.as_object().persistence().is_some());
        let chunks = self.chunks_of(local, persisted);
        match self.logs[local].snapshot(chunks) {
            Ok(()) => {
                if let Some(reason) = self.failed[local].take() {
                    info!(partition = self.globals[local], %reason, "partition log writable again: snapshot written");
                }
            }
            Err(failure) => self.fail(local, &failure),
        }
    }

    /// `objects`' entries as snapshot chunks of partition `local`.
    fn chunks_of<'a>(
        &self,
        local: usize,
        objects: impl Iterator<Item = (ObjectKind, &'a str, &'a Object)>,
    ) -> Vec<Vec<u8>> {
        let mut chunks = Vec::new();
        let mut writer = SnapshotWriter::chunks(&mut chunks, self.globals[local], SNAPSHOT_CHUNK_BYTES);
        for (kind, name, object) in objects {
            writer.begin_object(kind, name);
            object.as_object().write_snapshot(&mut writer);
        }
        writer.finish();
        chunks
    }
}

/// What a write whose log failed (`reason`) is answered with.
pub(crate) fn not_persisted(reason: &str) -> OpError {
    OpError::new(ErrorKind::Refused, format!("{reason}: the write was not persisted"))
}

/// An error in place of `answer` (whose correlation id it takes): the write is not on disk.
fn failed_answer(answer: &[u8], reason: &str) -> Vec<u8> {
    let correlation_id = ferrogrid_protocol::Message::parse(answer).map_or(0, |message| message.correlation_id());
    let mut out = Vec::new();
    crate::route::wire::write_error(&mut out, correlation_id, &not_persisted(reason));
    out
}

#[cfg(test)]
mod tests;
