//! One partition replica's durable state: its current snapshot and the log of change records
//! written after it.
//!
//! Records are buffered by [`PartitionLog::append`] and written by [`PartitionLog::flush`] in
//! one write per batch (group commit), then synced as the [`FsyncPolicy`] says: the cost of
//! waiting for the disk is per batch, not per record. [`PartitionLog::snapshot`] starts a new
//! generation so the log does not grow without end.
//!
//! Invariants: the log file holds its header and whole valid records up to `log_len`, and
//! nothing after it once a write is ended (a failed write is cut back before anything else is
//! written); a flush that returns an error left none of its batch in the log.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::PersistError;
use crate::frame::{
    encode_frame, encode_header, encode_trailer, frame_header, FileKind, FILE_HEADER_BYTES, FRAME_HEADER_BYTES,
};
use crate::fsio::{self, LogFile};
use crate::layout::{log_name, partition_dir, snapshot_name};
use crate::limits::{FsyncPolicy, Limits};
use crate::recovery;

/// Shortest time between two syncs under [`FsyncPolicy::EverySec`]: a little under a second,
/// so that an owner calling [`PartitionLog::tick`] every few tens of milliseconds has every
/// write on disk within a second of being written.
const SYNC_INTERVAL: Duration = Duration::from_millis(950);

/// What [`PartitionLog::open`] read back, to be applied in order: the snapshot's chunks, then
/// the records.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// The chunks of the newest snapshot, in the order given to [`PartitionLog::snapshot`];
    /// empty when no snapshot was taken.
    pub snapshot_chunks: Vec<Vec<u8>>,
    /// The records appended (and flushed) after that snapshot, in order.
    pub records: Vec<Vec<u8>>,
    /// Bytes dropped from the end of the log as a torn write (a crash mid-write); 0 normally.
    /// The caller logs it: records in them were never acknowledged under
    /// [`FsyncPolicy::Always`].
    pub torn_tail_bytes: u64,
}

/// The files of one partition replica in `<base>/partition-<id>/`. Owned by the thread that
/// owns the partition (its reactor), which is the only one to touch it; methods take `&mut`.
#[derive(Debug)]
pub struct PartitionLog {
    dir: PathBuf,
    partition_id: u16,
    policy: FsyncPolicy,
    limits: Limits,
    /// The current generation: its snapshot (none for 0) and its log are the state.
    generation: u64,
    /// The current generation's log, open for appending. None only after a snapshot committed
    /// but its log could not be created: the next flush creates it.
    file: Option<Box<dyn LogFile>>,
    /// Length of the log's header and its written records.
    log_len: u64,
    /// Whether the file may hold bytes past `log_len` (a write or sync failed and cutting them
    /// off failed too): they are cut before the next write.
    needs_truncate: bool,
    /// Length of the current snapshot file, 0 when there is none.
    snapshot_bytes: u64,
    /// Framed records not yet written.
    batch: Vec<u8>,
    /// Whether bytes were written since the last sync.
    unsynced: bool,
    /// When the log was last synced; None before the first sync.
    last_sync: Option<Instant>,
    /// Syncs of the log since open, for metrics and tests.
    syncs: u64,
}

impl PartitionLog {
    /// Opens (creating if missing) the files of partition `partition_id` under `base` and reads
    /// them back: the newest snapshot, then the log records after it. A torn last write is
    /// dropped and reported in [`Recovered::torn_tail_bytes`]; damage is
    /// [`PersistError::Corrupt`] and leaves the files as they were.
    pub fn open(
        base: &Path,
        partition_id: u16,
        policy: FsyncPolicy,
        limits: Limits,
    ) -> Result<(PartitionLog, Recovered), PersistError> {
        limits.validate()?;
        let dir = partition_dir(base, partition_id);
        fsio::create_dir(&dir)?;
        fsio::sync_dir(base)?; // the partition's directory itself must survive a crash
        let found = recovery::recover_dir(&dir, partition_id, limits.max_record_bytes)?;
        let mut log = PartitionLog {
            dir,
            partition_id,
            policy,
            limits,
            generation: found.generation,
            file: None,
            log_len: 0,
            needs_truncate: false,
            snapshot_bytes: found.snapshot_bytes,
            batch: Vec::new(),
            unsynced: false,
            last_sync: None,
            syncs: 0,
        };
        let mut recovered = Recovered { snapshot_chunks: found.snapshot_chunks, ..Recovered::default() };
        match found.log {
            Some(scan) => {
                log.file = Some(Box::new(fsio::open_append(&log.log_path())?));
                log.log_len = scan.good_len;
                recovered.records = scan.records;
                recovered.torn_tail_bytes = scan.torn_bytes;
            }
            None => log.start_log()?,
        }
        Ok((log, recovered))
    }

    /// Buffers one record for the next [`PartitionLog::flush`]. A body over `max_record_bytes`
    /// or empty is refused. When the batch would pass `max_batch_bytes` it is flushed first; an
    /// error from that flush means no record appended since the last successful flush (this one
    /// included) is in the log.
    pub fn append(&mut self, body: &[u8]) -> Result<(), PersistError> {
        if body.is_empty() {
            return Err(PersistError::EmptyRecord);
        }
        if body.len() > self.limits.max_record_bytes as usize {
            return Err(PersistError::RecordTooLarge {
                len_bytes: body.len(),
                max_bytes: self.limits.max_record_bytes,
            });
        }
        let framed_len = FRAME_HEADER_BYTES + body.len();
        if !self.batch.is_empty() && self.batch.len() + framed_len > self.limits.max_batch_bytes as usize {
            self.flush()?;
        }
        encode_frame(&mut self.batch, body);
        Ok(())
    }

    /// [`PartitionLog::flush_at`] now.
    pub fn flush(&mut self) -> Result<(), PersistError> {
        self.flush_at(Instant::now())
    }

    /// Group commit: writes the buffered batch in one write, then syncs as the policy says
    /// (`now` decides whether a second has passed under [`FsyncPolicy::EverySec`]). Returns
    /// once the batch is as durable as the policy promises: the caller acknowledges the
    /// batch's operations after it. On an error (the disk full, an I/O error) the file is cut
    /// back to its last good length, the batch is dropped (none of it is in the log; the
    /// caller fails its operations), and the log takes later batches as before.
    pub fn flush_at(&mut self, now: Instant) -> Result<(), PersistError> {
        self.flush_with(now, false)
    }

    /// [`PartitionLog::flush_at`], syncing the batch before it returns whatever the policy
    /// (`sync`: the batch holds a record of a structure configured with `fsync: true`).
    pub fn flush_with(&mut self, now: Instant, sync: bool) -> Result<(), PersistError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let result = self.commit_batch(now, sync);
        self.clear_batch();
        result
    }

    /// Writes the batch and syncs it as the policy (or `sync`) says, creating the log first
    /// when a snapshot committed without one. On an error the log is cut back to where it was.
    fn commit_batch(&mut self, now: Instant, sync: bool) -> Result<(), PersistError> {
        if self.file.is_none() {
            self.start_log()?;
        }
        let good_len = self.log_len;
        assert!(good_len >= FILE_HEADER_BYTES, "an open log holds at least its header");
        let result = self.write_batch().and_then(|()| match self.policy {
            _ if sync => self.sync(now),
            FsyncPolicy::Always => self.sync(now),
            FsyncPolicy::EverySec => self.tick(now),
            FsyncPolicy::No => Ok(()),
        });
        if result.is_err() {
            self.cut_back(good_len);
        }
        result
    }

    /// Under [`FsyncPolicy::EverySec`], syncs the log when bytes were written since the last
    /// sync and a second has passed since it (or none was made yet). The owner calls it
    /// periodically, so a batch is synced within about a second even when no other follows.
    /// An error here concerns records already acknowledged: the caller logs it; the next tick
    /// tries again.
    pub fn tick(&mut self, now: Instant) -> Result<(), PersistError> {
        let due = match self.last_sync {
            Some(last) => now.saturating_duration_since(last) >= SYNC_INTERVAL,
            None => true,
        };
        if self.policy == FsyncPolicy::EverySec && self.unsynced && due {
            self.sync(now)?;
        }
        Ok(())
    }

    /// Writes the batch to the open log, first cutting off what a failed write left; `log_len`
    /// then counts it.
    fn write_batch(&mut self) -> Result<(), PersistError> {
        let path = self.log_path();
        let file = self.file.as_mut().expect("the log is open");
        if self.needs_truncate {
            file.set_len(self.log_len).map_err(|error| PersistError::io("truncate", &path, error))?;
            self.needs_truncate = false;
        }
        self.unsynced = true;
        file.write_all(&self.batch).map_err(|error| PersistError::io("write", &path, error))?;
        self.log_len += self.batch.len() as u64;
        Ok(())
    }

    /// Cuts the log back to `good_len` after a failed write or sync, or marks it to be cut
    /// before the next write when even that fails.
    fn cut_back(&mut self, good_len: u64) {
        self.log_len = good_len;
        self.needs_truncate = true;
        if let Some(file) = self.file.as_mut() {
            self.needs_truncate = file.set_len(good_len).is_err();
        }
    }

    /// fdatasync of the log.
    fn sync(&mut self, now: Instant) -> Result<(), PersistError> {
        let path = self.log_path();
        let file = self.file.as_mut().expect("a log is open once written to");
        file.sync_data().map_err(|error| PersistError::io("sync", &path, error))?;
        self.syncs += 1;
        self.unsynced = false;
        self.last_sync = Some(now);
        Ok(())
    }

    /// Empties the batch, giving back memory a single large record grew it past its bound.
    fn clear_batch(&mut self) {
        self.batch.clear();
        self.batch.shrink_to(self.limits.max_batch_bytes as usize);
    }

    /// Replaces the log by a snapshot of the partition: `chunks` (each at most
    /// `max_record_bytes`, in the order [`Recovered::snapshot_chunks`] will return them) become
    /// the state, and the next records go to a new, empty log. The batch is flushed to the
    /// current log first, so a failed snapshot loses nothing.
    ///
    /// Crash safety, step by step (generation `g` current, `g + 1` being made):
    /// 1. the snapshot is written to a temp file and synced: a crash leaves the temp file,
    ///    which recovery removes, and generation `g` whole;
    /// 2. it is renamed to `snapshot-<g + 1>` and the directory synced: the commit point. From
    ///    here recovery picks `g + 1`; the records of log `g` are in the snapshot;
    /// 3. the empty log `g + 1` is created (temp, sync, rename, directory sync): a crash before
    ///    leaves `g + 1` without a log, which recovery reads as empty (no record was appended
    ///    to `g + 1` before this method returned) and creates;
    /// 4. generation `g`'s files are removed: a crash before leaves them, which recovery
    ///    removes because a newer snapshot exists.
    ///
    /// On an error before the commit point the log goes on with generation `g`; after it, with
    /// `g + 1` (its log created by the next flush if step 3 failed).
    ///
    /// Either way no record appended before the call is lost, so a caller may simply try again
    /// later.
    pub fn snapshot<I: IntoIterator<Item = Vec<u8>>>(&mut self, chunks: I) -> Result<(), PersistError> {
        self.flush()?;
        let next = self.generation + 1;
        let snapshot_path = self.dir.join(snapshot_name(next));
        match self.write_snapshot(next, chunks) {
            Ok(snapshot_bytes) => self.commit_generation(next, snapshot_bytes),
            Err(error) if !snapshot_path.exists() => Err(error),
            Err(error) => {
                // Renamed, but the directory sync failed: recovery may pick `next`, so the
                // old log must take no more records. The log `next` gets is created with a
                // directory sync, which makes the rename durable before a record goes in it.
                let snapshot_bytes = std::fs::metadata(&snapshot_path).map_or(0, |metadata| metadata.len());
                let _ = self.commit_generation(next, snapshot_bytes);
                Err(error)
            }
        }
    }

    /// Steps 3 and 4 of [`PartitionLog::snapshot`]: `generation`, whose snapshot is in place,
    /// becomes current.
    fn commit_generation(&mut self, generation: u64, snapshot_bytes: u64) -> Result<(), PersistError> {
        let old = self.generation;
        self.generation = generation;
        self.snapshot_bytes = snapshot_bytes;
        self.file = None; // generation `old`'s log must take no more records
        self.log_len = 0;
        self.needs_truncate = false;
        self.unsynced = false;
        self.start_log()?;
        // Best effort: recovery removes an older generation's files as well.
        let removed = [snapshot_name(old), log_name(old)].iter().all(|name| fsio::remove(&self.dir.join(name)).is_ok());
        if removed {
            let _ = fsio::sync_dir(&self.dir);
        }
        Ok(())
    }

    /// Writes the snapshot of `generation` (steps 1 and 2 of [`PartitionLog::snapshot`]).
    /// Returns its length.
    fn write_snapshot<I: IntoIterator<Item = Vec<u8>>>(&self, generation: u64, chunks: I) -> Result<u64, PersistError> {
        let (partition_id, max_record_bytes) = (self.partition_id, self.limits.max_record_bytes);
        fsio::write_atomically(&self.dir, &snapshot_name(generation), |writer| {
            writer.put(&encode_header(FileKind::Snapshot, partition_id, generation))?;
            let mut count = 0u64;
            for chunk in chunks {
                if chunk.len() > max_record_bytes as usize {
                    return Err(PersistError::RecordTooLarge { len_bytes: chunk.len(), max_bytes: max_record_bytes });
                }
                writer.put(&frame_header(&chunk))?;
                writer.put(&chunk)?;
                count += 1;
            }
            writer.put(&encode_trailer(count))
        })
    }

    /// Creates the current generation's empty log (its header synced before it gets its name)
    /// and opens it.
    fn start_log(&mut self) -> Result<(), PersistError> {
        let header = encode_header(FileKind::Log, self.partition_id, self.generation);
        fsio::write_atomically(&self.dir, &log_name(self.generation), |writer| writer.put(&header))?;
        self.file = Some(Box::new(fsio::open_append(&self.log_path())?));
        self.log_len = FILE_HEADER_BYTES;
        self.needs_truncate = false;
        Ok(())
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join(log_name(self.generation))
    }

    /// Bytes of the current snapshot and log on disk (written, not buffered), for metrics.
    pub fn bytes_on_disk(&self) -> u64 {
        self.snapshot_bytes + self.log_len
    }

    /// Whether the partition's files hold anything past an empty log's header (a snapshot,
    /// records written or buffered).
    pub fn holds_anything(&self) -> bool {
        self.bytes_on_disk() > FILE_HEADER_BYTES || !self.batch.is_empty()
    }

    /// Whether bytes were written and not synced yet.
    pub fn is_unsynced(&self) -> bool {
        self.unsynced
    }

    /// Bytes buffered for the next flush.
    pub fn pending_bytes(&self) -> usize {
        self.batch.len()
    }

    /// Syncs of the log since open (not counting snapshot and header syncs), for metrics and
    /// tests.
    pub fn sync_count(&self) -> u64 {
        self.syncs
    }

    /// The current generation: 0 until the first snapshot, then one more per snapshot.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The directory of this partition's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests;
