//! Reading a partition's files back at start: which generation is current, its snapshot, and
//! the log records after it; what is a torn tail (dropped) and what is damage (refused).
//!
//! Rules, for a log:
//! - bytes after the last valid record that cannot be a frame (a header or a body cut short by
//!   the end of the file, a length of 0 as a zeroed region reads) are a torn tail;
//! - a complete record with a bad checksum and no valid record anywhere after it (following
//!   the lengths) is a torn tail too, from that record on;
//! - a record with a bad checksum followed by a valid one is damage: [`PersistError::Corrupt`]
//!   at the bad record's offset;
//! - right after a valid record, a length over `max_record_bytes` whose body would end within
//!   the file is damage too (or a bound lowered since): a torn write leaves zeros or a frame
//!   cut short, and dropping the rest of the log silently would lose acknowledged records.
//!
//! A snapshot is synced before it gets its name, so it is never torn: any frame that is not
//! valid, a missing trailer, a trailer counting other than the chunks read, or bytes after the
//! trailer are damage. So is a bad header in either kind of file.

use std::path::Path;

use crate::error::PersistError;
use crate::frame::{FileKind, Frame, FrameReader};
use crate::fsio;
use crate::layout::{self, log_name, snapshot_name, Listing};

/// What a partition's directory holds once recovered.
#[derive(Debug)]
pub(crate) struct RecoveredDir {
    /// The current generation: that of the newest snapshot, 0 when there is none.
    pub(crate) generation: u64,
    pub(crate) snapshot_chunks: Vec<Vec<u8>>,
    pub(crate) snapshot_bytes: u64,
    /// The current generation's log, its torn tail already cut off; None when it does not exist
    /// (a new partition, or a crash between a snapshot's rename and its log's creation).
    pub(crate) log: Option<LogScan>,
}

/// Reads the current generation of the partition in `dir` and removes what a crash left of
/// other generations: temp files, and older generations' files (a crash after a snapshot's
/// commit, before it removed them). Nothing is removed or cut unless every read succeeded.
pub(crate) fn recover_dir(dir: &Path, partition_id: u16, max_record_bytes: u32) -> Result<RecoveredDir, PersistError> {
    let listing = layout::list(dir)?;
    let generation = listing.snapshots.last().copied().unwrap_or(0);
    if let Some(&stray) = listing.logs.iter().find(|&&log| log > generation) {
        // A log gets its name only after its snapshot's rename was synced: this is not our doing.
        let reason =
            format!("log of generation {stray} has no snapshot (the newest snapshot is of generation {generation})");
        return Err(PersistError::corrupt(dir.join(log_name(stray)), 0, reason));
    }
    let (snapshot_chunks, snapshot_bytes) = match generation {
        0 => (Vec::new(), 0),
        _ => {
            let path = dir.join(snapshot_name(generation));
            let chunks = read_snapshot(&path, partition_id, generation, max_record_bytes)?;
            (chunks, file_len(&path)?)
        }
    };
    let log = if listing.logs.contains(&generation) {
        Some(scan_and_cut_log(&dir.join(log_name(generation)), partition_id, generation, max_record_bytes)?)
    } else {
        None
    };
    remove_stale(dir, &listing, generation)?;
    Ok(RecoveredDir { generation, snapshot_chunks, snapshot_bytes, log })
}

fn file_len(path: &Path) -> Result<u64, PersistError> {
    Ok(std::fs::metadata(path).map_err(|error| PersistError::io("read the length of", path, error))?.len())
}

/// [`scan_log`], then the file cut to its valid part so later appends follow a good record.
fn scan_and_cut_log(
    path: &Path,
    partition_id: u16,
    generation: u64,
    max_record_bytes: u32,
) -> Result<LogScan, PersistError> {
    let scan = scan_log(path, partition_id, generation, max_record_bytes)?;
    if scan.torn_bytes > 0 {
        fsio::truncate(path, scan.good_len)?;
    }
    Ok(scan)
}

/// Removes temp files and the files of generations before `generation`.
fn remove_stale(dir: &Path, listing: &Listing, generation: u64) -> Result<(), PersistError> {
    let older_snapshots = listing.snapshots.iter().filter(|&&old| old < generation).map(|&old| snapshot_name(old));
    let older_logs = listing.logs.iter().filter(|&&old| old < generation).map(|&old| log_name(old));
    let mut stale: Vec<_> = older_snapshots.chain(older_logs).map(|name| dir.join(name)).collect();
    stale.extend(listing.temps.iter().cloned());
    for path in &stale {
        fsio::remove(path)?;
    }
    if !stale.is_empty() {
        fsio::sync_dir(dir)?;
    }
    Ok(())
}

/// The records of one log, and where its valid part ends.
#[derive(Debug)]
pub(crate) struct LogScan {
    pub(crate) records: Vec<Vec<u8>>,
    /// Length of the header and the valid records: the file is cut to this.
    pub(crate) good_len: u64,
    /// Bytes after `good_len`, dropped as a torn tail.
    pub(crate) torn_bytes: u64,
}

/// Reads the log at `path` by the rules in the module doc.
pub(crate) fn scan_log(
    path: &Path,
    partition_id: u16,
    generation: u64,
    max_record_bytes: u32,
) -> Result<LogScan, PersistError> {
    let mut reader = FrameReader::open(path, FileKind::Log, partition_id, generation, max_record_bytes)?;
    let mut records = Vec::new();
    // Offset of the first record with a bad checksum: a torn tail unless a valid one follows.
    let mut first_bad: Option<u64> = None;
    loop {
        let offset = reader.offset();
        match (reader.next_frame()?, first_bad.take()) {
            (Frame::Valid(body), None) => records.push(body),
            (Frame::Valid(_), Some(bad)) => {
                let reason = format!("record checksum mismatch, followed by a valid record at offset {offset}");
                return Err(PersistError::corrupt(path, bad, reason));
            }
            (Frame::BadChecksum, bad) => first_bad = Some(bad.unwrap_or(offset)),
            (Frame::TooLong(why), None) => return Err(PersistError::corrupt(path, offset, why)),
            (Frame::Trailer(_), _) => unreachable!("a log reader never reads a trailer"),
            (Frame::TooLong(_) | Frame::Unframed(_) | Frame::End, bad) => {
                let good_len = bad.unwrap_or(offset);
                assert!(good_len <= reader.file_len(), "frames are read within the file");
                return Ok(LogScan { records, good_len, torn_bytes: reader.file_len() - good_len });
            }
        }
    }
}

/// The chunks of the snapshot at `path`, every one checked, in the order written.
pub(crate) fn read_snapshot(
    path: &Path,
    partition_id: u16,
    generation: u64,
    max_record_bytes: u32,
) -> Result<Vec<Vec<u8>>, PersistError> {
    let mut reader = FrameReader::open(path, FileKind::Snapshot, partition_id, generation, max_record_bytes)?;
    let mut chunks = Vec::new();
    loop {
        let offset = reader.offset();
        let reason = match reader.next_frame()? {
            Frame::Valid(chunk) => {
                chunks.push(chunk);
                continue;
            }
            Frame::Trailer(count) => return check_trailer(&reader, offset, count, chunks),
            Frame::BadChecksum => "checksum mismatch".to_string(),
            Frame::TooLong(why) => why,
            Frame::Unframed(why) => format!("{why}: the snapshot is cut short or damaged before its trailer"),
            Frame::End => "no trailer: the snapshot is cut short".to_string(),
        };
        return Err(PersistError::corrupt(reader.path(), offset, reason));
    }
}

/// The chunks read before a trailer at `offset` that counts `count`, if that trailer ends the
/// file and counts them right.
fn check_trailer(
    reader: &FrameReader,
    offset: u64,
    count: u64,
    chunks: Vec<Vec<u8>>,
) -> Result<Vec<Vec<u8>>, PersistError> {
    if count != chunks.len() as u64 {
        let reason = format!("trailer counts {count} chunks, the file holds {}", chunks.len());
        return Err(PersistError::corrupt(reader.path(), offset, reason));
    }
    if reader.offset() != reader.file_len() {
        let reason = format!("{} bytes after the trailer", reader.file_len() - reader.offset());
        return Err(PersistError::corrupt(reader.path(), reader.offset(), reason));
    }
    Ok(chunks)
}
