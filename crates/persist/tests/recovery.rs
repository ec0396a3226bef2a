//! Reading partition logs back: round trips across reopen, torn tails cut at every byte, damage
//! refused with the file and offset named, and snapshots interrupted at each step.

use std::fs;
use std::path::{Path, PathBuf};

use ferrogrid_persist::{partition_dir, FsyncPolicy, Limits, PartitionLog, PersistError, Recovered};

const PARTITION: u16 = 7;
const HEADER_BYTES: u64 = 20;
const FRAME_HEADER_BYTES: u64 = 8;

fn limits() -> Limits {
    Limits { max_record_bytes: 1 << 16, max_batch_bytes: 1 << 16 }
}

fn open(base: &Path) -> Result<(PartitionLog, Recovered), PersistError> {
    PartitionLog::open(base, PARTITION, FsyncPolicy::Always, limits())
}

fn reopen(base: &Path) -> Recovered {
    open(base).unwrap().1
}

fn log_path(base: &Path, generation: u64) -> PathBuf {
    partition_dir(base, PARTITION).join(format!("log-{generation:020}.log"))
}

fn snapshot_path(base: &Path, generation: u64) -> PathBuf {
    partition_dir(base, PARTITION).join(format!("snapshot-{generation:020}.snap"))
}

/// Record `index` of a test: distinct content and lengths, never empty.
fn record(index: usize) -> Vec<u8> {
    (0..=index * 3 + 1).map(|byte| (byte * 31 + index) as u8).collect()
}

fn records(range: std::ops::Range<usize>) -> Vec<Vec<u8>> {
    range.map(record).collect()
}

fn framed_len(body: &[u8]) -> u64 {
    FRAME_HEADER_BYTES + body.len() as u64
}

/// Writes `records`, one flush each when `flush_each`, else all in one batch.
fn write(log: &mut PartitionLog, records: &[Vec<u8>], flush_each: bool) {
    for body in records {
        log.append(body).unwrap();
        if flush_each {
            log.flush().unwrap();
        }
    }
    log.flush().unwrap();
}

fn corrupt_details(error: PersistError) -> (PathBuf, u64, String) {
    match error {
        PersistError::Corrupt { path, offset, reason } => (path, offset, reason),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

#[test]
fn records_come_back_in_order_across_reopens() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, recovered) = open(base.path()).unwrap();
    assert_eq!(recovered, Recovered::default());
    write(&mut log, &records(0..10), false);
    drop(log);
    let (mut log, recovered) = open(base.path()).unwrap();
    assert_eq!(recovered.records, records(0..10));
    write(&mut log, &records(10..20), true);
    drop(log);
    let recovered = reopen(base.path());
    assert_eq!(recovered.records, records(0..20));
    assert_eq!(recovered.torn_tail_bytes, 0);
    assert!(recovered.snapshot_chunks.is_empty());
}

#[test]
fn unflushed_records_are_not_persisted() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..2), false);
    log.append(&record(2)).unwrap();
    drop(log);
    assert_eq!(reopen(base.path()).records, records(0..2));
}

#[test]
fn a_snapshot_replaces_the_log_and_records_after_it_follow() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..5), false);
    log.append(&record(5)).unwrap(); // buffered: the snapshot flushes it to the old log first
    log.snapshot(vec![b"chunk one".to_vec(), Vec::new(), b"chunk three".to_vec()]).unwrap();
    assert_eq!(log.generation(), 1);
    write(&mut log, &records(6..8), false);
    let on_disk = fs::metadata(snapshot_path(base.path(), 1)).unwrap().len()
        + fs::metadata(log_path(base.path(), 1)).unwrap().len();
    assert_eq!(log.bytes_on_disk(), on_disk);
    drop(log);
    let (mut log, recovered) = open(base.path()).unwrap();
    assert_eq!(recovered.snapshot_chunks, vec![b"chunk one".to_vec(), Vec::new(), b"chunk three".to_vec()]);
    assert_eq!(recovered.records, records(6..8));
    let names = names_in(&partition_dir(base.path(), PARTITION));
    assert_eq!(names, ["log-00000000000000000001.log", "snapshot-00000000000000000001.snap"]);
    log.snapshot(std::iter::empty::<Vec<u8>>()).unwrap();
    drop(log);
    let recovered = reopen(base.path());
    assert_eq!((recovered.snapshot_chunks.len(), recovered.records.len()), (0, 0));
}

/// Cuts the log of generation 0 to every length from `from` to its full length, checking each
/// time that recovery returns the records whose frames fit whole, reports the rest as torn,
/// and takes appends again after it.
fn check_every_cut(base: &Path, from: u64, all: &[Vec<u8>]) {
    let path = log_path(base, 0);
    let bytes = fs::read(&path).unwrap();
    for cut in from..=bytes.len() as u64 {
        fs::write(&path, &bytes[..cut as usize]).unwrap();
        let ends = all.iter().scan(HEADER_BYTES, |end, body| {
            *end += framed_len(body);
            Some(*end)
        });
        let whole = ends.take_while(|&end| end <= cut).count();
        let good_len = HEADER_BYTES + all[..whole].iter().map(|body| framed_len(body)).sum::<u64>();
        let (mut log, recovered) = open(base).unwrap();
        assert_eq!(recovered.records, all[..whole], "cut at {cut}");
        assert_eq!(recovered.torn_tail_bytes, cut - good_len, "cut at {cut}");
        assert_eq!(fs::metadata(&path).unwrap().len(), good_len, "the torn tail is cut off");
        write(&mut log, &[b"after".to_vec()], false);
        drop(log);
        let mut expected = all[..whole].to_vec();
        expected.push(b"after".to_vec());
        assert_eq!(reopen(base).records, expected, "cut at {cut}, then an append");
    }
}

#[test]
fn every_cut_of_the_last_record_recovers_the_records_before_it() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    let all = records(0..5);
    write(&mut log, &all, true);
    drop(log);
    let last_start = fs::metadata(log_path(base.path(), 0)).unwrap().len() - framed_len(&all[4]);
    check_every_cut(base.path(), last_start, &all);
}

#[test]
fn every_cut_of_the_last_batch_recovers_its_whole_records() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..3), false);
    let batch_start = log.bytes_on_disk();
    write(&mut log, &records(3..8), false);
    drop(log);
    check_every_cut(base.path(), batch_start, &records(0..8));
}

#[test]
fn a_zeroed_tail_is_torn_not_a_run_of_empty_records() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..3), false);
    drop(log);
    let path = log_path(base.path(), 0);
    let mut bytes = fs::read(&path).unwrap();
    bytes.extend_from_slice(&[0u8; 4096]);
    fs::write(&path, &bytes).unwrap();
    let recovered = reopen(base.path());
    assert_eq!(recovered.records, records(0..3));
    assert_eq!(recovered.torn_tail_bytes, 4096);
}

#[test]
fn a_bad_checksum_on_the_last_record_is_a_torn_tail() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    let all = records(0..4);
    write(&mut log, &all, false);
    drop(log);
    let path = log_path(base.path(), 0);
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    fs::write(&path, &bytes).unwrap();
    let recovered = reopen(base.path());
    assert_eq!(recovered.records, all[..3]);
    assert_eq!(recovered.torn_tail_bytes, framed_len(&all[3]));
}

#[test]
fn a_flipped_byte_in_a_middle_record_is_corruption_at_that_record() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    let all = records(0..5);
    write(&mut log, &all, false);
    drop(log);
    let path = log_path(base.path(), 0);
    let mut bytes = fs::read(&path).unwrap();
    let third_start = HEADER_BYTES + framed_len(&all[0]) + framed_len(&all[1]);
    bytes[(third_start + FRAME_HEADER_BYTES + 1) as usize] ^= 0x01;
    fs::write(&path, &bytes).unwrap();
    let error = open(base.path()).unwrap_err();
    let message = error.to_string();
    let (error_path, offset, reason) = corrupt_details(error);
    assert_eq!((error_path, offset), (path.clone(), third_start));
    assert!(reason.contains("checksum mismatch"), "{reason}");
    assert!(message.contains("log-00000000000000000000.log") && message.contains(&format!("offset {third_start}")));
    assert_eq!(fs::read(&path).unwrap(), bytes, "a refused open changes nothing");
}

#[test]
fn a_damaged_header_is_corruption() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..2), false);
    drop(log);
    let path = log_path(base.path(), 0);
    let original = fs::read(&path).unwrap();
    for position in 0..HEADER_BYTES as usize {
        let mut bytes = original.clone();
        bytes[position] ^= 0x10;
        fs::write(&path, &bytes).unwrap();
        corrupt_details(open(base.path()).unwrap_err());
    }
    fs::write(&path, &original[..10]).unwrap();
    let (_, offset, reason) = corrupt_details(open(base.path()).unwrap_err());
    assert_eq!(offset, 0);
    assert!(reason.contains("shorter than a file header"), "{reason}");
}

#[test]
fn files_of_another_partition_are_refused() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..2), false);
    drop(log);
    let other = partition_dir(base.path(), PARTITION + 1);
    fs::create_dir_all(&other).unwrap();
    fs::copy(log_path(base.path(), 0), other.join("log-00000000000000000000.log")).unwrap();
    let error = PartitionLog::open(base.path(), PARTITION + 1, FsyncPolicy::Always, limits()).unwrap_err();
    let (_, offset, reason) = corrupt_details(error);
    assert_eq!(offset, 6);
    assert!(reason.contains("written for partition 7, opened as partition 8"), "{reason}");
}

/// A partition at generation 1: a snapshot of three chunks and two records after it.
fn snapshotted(base: &Path) -> Vec<Vec<u8>> {
    let chunks = vec![b"first chunk".to_vec(), b"second".to_vec(), vec![0xAB; 300]];
    let (mut log, _) = open(base).unwrap();
    write(&mut log, &records(0..3), false);
    log.snapshot(chunks.clone()).unwrap();
    write(&mut log, &records(3..5), false);
    chunks
}

#[test]
fn a_snapshot_cut_anywhere_is_corruption() {
    let base = tempfile::tempdir().unwrap();
    snapshotted(base.path());
    let path = snapshot_path(base.path(), 1);
    let bytes = fs::read(&path).unwrap();
    for cut in 0..bytes.len() {
        fs::write(&path, &bytes[..cut]).unwrap();
        let (error_path, _, _) = corrupt_details(open(base.path()).unwrap_err());
        assert_eq!(error_path, path, "cut at {cut}");
    }
}

#[test]
fn a_snapshot_with_any_byte_flipped_is_corruption() {
    let base = tempfile::tempdir().unwrap();
    snapshotted(base.path());
    let path = snapshot_path(base.path(), 1);
    let original = fs::read(&path).unwrap();
    for position in 0..original.len() {
        let mut bytes = original.clone();
        bytes[position] ^= 0x01;
        fs::write(&path, &bytes).unwrap();
        corrupt_details(open(base.path()).unwrap_err());
    }
    let mut longer = original.clone();
    longer.push(0);
    fs::write(&path, &longer).unwrap();
    let (_, _, reason) = corrupt_details(open(base.path()).unwrap_err());
    assert!(reason.contains("after the trailer"), "{reason}");
    fs::write(&path, &original).unwrap();
    assert_eq!(reopen(base.path()).records, records(3..5));
}

#[test]
fn a_snapshot_interrupted_before_its_rename_leaves_the_old_generation() {
    let base = tempfile::tempdir().unwrap();
    let chunks = snapshotted(base.path());
    let dir = partition_dir(base.path(), PARTITION);
    // What a crash in steps 1 (or 3) of generation 2 leaves: temp files, cut anywhere.
    fs::write(dir.join("snapshot-00000000000000000002.snap.tmp"), b"FGsn half a snapsh").unwrap();
    fs::write(dir.join("log-00000000000000000002.log.tmp"), b"FGlg").unwrap();
    fs::write(dir.join("unrelated.tmp"), b"not ours").unwrap();
    let recovered = reopen(base.path());
    assert_eq!(recovered.snapshot_chunks, chunks);
    assert_eq!(recovered.records, records(3..5));
    let names = names_in(&dir);
    assert_eq!(names, ["log-00000000000000000001.log", "snapshot-00000000000000000001.snap", "unrelated.tmp"]);
}

#[test]
fn a_snapshot_interrupted_after_its_rename_is_the_new_generation() {
    let base = tempfile::tempdir().unwrap();
    let chunks = vec![b"state".to_vec()];
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..3), false);
    drop(log);
    let dir = partition_dir(base.path(), PARTITION);
    let old_log = fs::read(log_path(base.path(), 0)).unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    log.snapshot(chunks.clone()).unwrap();
    drop(log);
    // A crash after step 2: the new log not yet created, the old generation not yet removed.
    fs::remove_file(log_path(base.path(), 1)).unwrap();
    fs::write(log_path(base.path(), 0), &old_log).unwrap();
    let (mut log, recovered) = open(base.path()).unwrap();
    assert_eq!(recovered.snapshot_chunks, chunks);
    assert!(recovered.records.is_empty(), "the old log's records are in the snapshot");
    assert_eq!(names_in(&dir), ["log-00000000000000000001.log", "snapshot-00000000000000000001.snap"]);
    write(&mut log, &records(3..4), false);
    drop(log);
    assert_eq!(reopen(base.path()).records, records(3..4));
}

#[test]
fn a_log_newer_than_every_snapshot_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..1), false);
    drop(log);
    fs::copy(log_path(base.path(), 0), log_path(base.path(), 3)).unwrap();
    let (path, _, reason) = corrupt_details(open(base.path()).unwrap_err());
    assert_eq!(path, log_path(base.path(), 3));
    assert!(reason.contains("has no snapshot"), "{reason}");
}

#[test]
fn a_refused_snapshot_changes_nothing() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &records(0..2), false);
    log.append(&record(2)).unwrap(); // buffered: the snapshot writes it to the log before failing
    let too_large = vec![0u8; (limits().max_record_bytes + 1) as usize];
    let error = log.snapshot(vec![b"fine".to_vec(), too_large]).unwrap_err();
    assert!(matches!(error, PersistError::RecordTooLarge { .. }), "{error:?}");
    assert_eq!(log.generation(), 0);
    write(&mut log, &records(3..4), false);
    drop(log);
    assert_eq!(names_in(&partition_dir(base.path(), PARTITION)), ["log-00000000000000000000.log"]);
    assert_eq!(reopen(base.path()).records, records(0..4));
}

#[test]
fn records_over_the_bound_or_empty_are_refused() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    let error = log.append(&vec![1u8; (limits().max_record_bytes + 1) as usize]).unwrap_err();
    assert_eq!(error.to_string(), "record of 65537 bytes is larger than max-record-bytes (65536)");
    assert!(matches!(log.append(b""), Err(PersistError::EmptyRecord)));
    assert_eq!(log.pending_bytes(), 0);
}

#[test]
fn invalid_limits_are_refused_at_open() {
    let base = tempfile::tempdir().unwrap();
    let limits = Limits { max_record_bytes: 0, max_batch_bytes: 4096 };
    let error = PartitionLog::open(base.path(), PARTITION, FsyncPolicy::Always, limits).unwrap_err();
    assert!(error.to_string().contains("max-record-bytes"), "{error}");
}

#[test]
fn a_record_over_a_lowered_bound_is_refused_not_dropped() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path()).unwrap();
    write(&mut log, &[vec![5u8; 5000], b"next".to_vec()], false);
    drop(log);
    let smaller = Limits { max_record_bytes: 4096, max_batch_bytes: 4096 };
    let error = PartitionLog::open(base.path(), PARTITION, FsyncPolicy::Always, smaller).unwrap_err();
    let (_, offset, reason) = corrupt_details(error);
    assert_eq!(offset, HEADER_BYTES);
    assert!(reason.contains("over max-record-bytes (4096)"), "{reason}");
    assert_eq!(reopen(base.path()).records, vec![vec![5u8; 5000], b"next".to_vec()]);
}
