//! Tests that need the log's insides: a failing disk put in place of the log file, and sync
//! counts against a controlled clock.

use std::fs;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::*;

/// Switches of a [`FailingDisk`], kept by the test.
#[derive(Debug, Default)]
struct Faults {
    /// Writes put half their bytes in the file, then fail with ENOSPC, as a device filling up
    /// in the middle of a write does.
    disk_full: AtomicBool,
    /// Syncs fail with an I/O error.
    sync_fails: AtomicBool,
    /// Truncation fails.
    set_len_fails: AtomicBool,
}

/// A log file that fails when the test says so.
#[derive(Debug)]
struct FailingDisk {
    inner: std::fs::File,
    faults: Arc<Faults>,
}

impl LogFile for FailingDisk {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.faults.disk_full.load(Ordering::Relaxed) {
            LogFile::write_all(&mut self.inner, &bytes[..bytes.len() / 2])?;
            return Err(io::Error::from_raw_os_error(28));
        }
        LogFile::write_all(&mut self.inner, bytes)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        if self.faults.sync_fails.load(Ordering::Relaxed) {
            return Err(io::Error::other("injected I/O error"));
        }
        LogFile::sync_data(&mut self.inner)
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        if self.faults.set_len_fails.load(Ordering::Relaxed) {
            return Err(io::Error::other("injected truncate failure"));
        }
        LogFile::set_len(&mut self.inner, len)
    }
}

fn open(base: &Path, policy: FsyncPolicy) -> (PartitionLog, Recovered) {
    PartitionLog::open(base, 3, policy, Limits::default()).unwrap()
}

/// Puts a [`FailingDisk`] in place of `log`'s file and returns its switches.
fn inject(log: &mut PartitionLog) -> Arc<Faults> {
    let faults = Arc::new(Faults::default());
    let inner = fsio::open_append(&log.log_path()).unwrap();
    log.file = Some(Box::new(FailingDisk { inner, faults: Arc::clone(&faults) }));
    faults
}

fn file_len(log: &PartitionLog) -> u64 {
    fs::metadata(log.log_path()).unwrap().len()
}

fn reopened_records(base: &Path) -> Vec<Vec<u8>> {
    let (_, recovered) = open(base, FsyncPolicy::Always);
    assert_eq!(recovered.torn_tail_bytes, 0);
    recovered.records
}

/// A log (policy Always) holding one flushed record, `before`, and the directory it is in.
fn log_with_a_record() -> (tempfile::TempDir, PartitionLog) {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path(), FsyncPolicy::Always);
    log.append(b"before").unwrap();
    log.flush().unwrap();
    (base, log)
}

/// Appends and flushes `after` (the fault switched off), then checks that a reopened log holds
/// `before` and `after` and nothing of what failed between them.
fn recovers_with_one_more(base: tempfile::TempDir, mut log: PartitionLog) {
    log.append(b"after").unwrap();
    log.flush().unwrap();
    drop(log);
    assert_eq!(reopened_records(base.path()), vec![b"before".to_vec(), b"after".to_vec()]);
}

#[test]
fn a_full_disk_fails_the_flush_clearly_and_the_log_goes_on_after() {
    let (base, mut log) = log_with_a_record();
    let good_len = file_len(&log);
    let faults = inject(&mut log);
    faults.disk_full.store(true, Ordering::Relaxed);
    log.append(b"lost one").unwrap();
    log.append(b"lost two").unwrap();
    let error = log.flush().unwrap_err();
    assert!(error.is_disk_full(), "{error:?}");
    let message = error.to_string();
    assert!(message.starts_with("disk full writing ") && message.contains("log-00000000000000000000.log"), "{message}");
    assert_eq!(file_len(&log), good_len, "the half-written batch is cut off");
    assert_eq!(log.bytes_on_disk(), good_len);
    assert_eq!(log.pending_bytes(), 0, "the failed batch is dropped");
    faults.disk_full.store(false, Ordering::Relaxed);
    recovers_with_one_more(base, log);
}

#[test]
fn garbage_left_by_a_failed_cut_is_cut_before_the_next_write() {
    let (base, mut log) = log_with_a_record();
    let good_len = file_len(&log);
    let faults = inject(&mut log);
    faults.disk_full.store(true, Ordering::Relaxed);
    faults.set_len_fails.store(true, Ordering::Relaxed);
    log.append(b"lost").unwrap();
    assert!(log.flush().unwrap_err().is_disk_full());
    assert!(file_len(&log) > good_len, "the cut failed: half a batch is left");
    faults.disk_full.store(false, Ordering::Relaxed);
    faults.set_len_fails.store(false, Ordering::Relaxed);
    recovers_with_one_more(base, log);
}

#[test]
fn a_failed_sync_under_always_leaves_none_of_the_batch() {
    let (base, mut log) = log_with_a_record();
    let faults = inject(&mut log);
    faults.sync_fails.store(true, Ordering::Relaxed);
    log.append(b"unsynced").unwrap();
    let message = log.flush().unwrap_err().to_string();
    assert!(message.starts_with("cannot sync ") && message.contains("injected I/O error"), "{message}");
    assert_eq!(log.sync_count(), 1);
    faults.sync_fails.store(false, Ordering::Relaxed);
    recovers_with_one_more(base, log);
}

#[test]
fn always_syncs_once_per_flush_whatever_the_batch_holds() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path(), FsyncPolicy::Always);
    for batch in 1..=3u8 {
        for record in 0..batch * 10 {
            log.append(&[batch, record]).unwrap();
        }
        log.flush().unwrap();
        assert_eq!(log.sync_count(), u64::from(batch));
    }
    log.flush().unwrap();
    assert_eq!(log.sync_count(), 3, "an empty flush writes and syncs nothing");
}

#[test]
fn a_flush_asked_to_sync_syncs_under_every_policy() {
    for policy in [FsyncPolicy::EverySec, FsyncPolicy::No] {
        let base = tempfile::tempdir().unwrap();
        let (mut log, _) = open(base.path(), policy);
        log.append(b"first").unwrap();
        log.flush().unwrap();
        let after_plain = log.sync_count();
        log.append(b"synced").unwrap();
        log.flush_with(Instant::now(), true).unwrap();
        assert_eq!(log.sync_count(), after_plain + 1, "{policy:?}");
        log.flush_with(Instant::now(), true).unwrap();
        assert_eq!(log.sync_count(), after_plain + 1, "{policy:?}: an empty flush syncs nothing");
    }
}

#[test]
fn every_sec_syncs_at_most_once_a_second_and_only_what_was_written() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path(), FsyncPolicy::EverySec);
    let start = Instant::now();
    let at = |millis| start + Duration::from_millis(millis);
    log.append(b"one").unwrap();
    log.flush_at(at(0)).unwrap();
    assert_eq!(log.sync_count(), 1, "the first write is synced at once");
    log.append(b"two").unwrap();
    log.flush_at(at(100)).unwrap();
    log.tick(at(900)).unwrap();
    assert_eq!(log.sync_count(), 1, "under a second since the last sync");
    log.tick(at(1000)).unwrap();
    assert_eq!(log.sync_count(), 2, "a second passed with bytes unsynced");
    log.tick(at(3000)).unwrap();
    assert_eq!(log.sync_count(), 2, "nothing written since");
    log.append(b"three").unwrap();
    log.flush_at(at(3500)).unwrap();
    assert_eq!(log.sync_count(), 3, "the flush itself syncs when a second has passed");
}

#[test]
fn policy_no_never_syncs_the_log() {
    let base = tempfile::tempdir().unwrap();
    let (mut log, _) = open(base.path(), FsyncPolicy::No);
    let start = Instant::now();
    for second in 0..3 {
        log.append(b"record").unwrap();
        log.flush_at(start + Duration::from_secs(second)).unwrap();
        log.tick(start + Duration::from_secs(second)).unwrap();
    }
    assert_eq!(log.sync_count(), 0);
}

#[test]
fn a_batch_past_its_bound_is_written_before_the_next_record() {
    let base = tempfile::tempdir().unwrap();
    let limits = Limits { max_record_bytes: 8192, max_batch_bytes: 4096 };
    let (mut log, _) = PartitionLog::open(base.path(), 3, FsyncPolicy::Always, limits).unwrap();
    let empty_len = log.bytes_on_disk();
    for _ in 0..4 {
        log.append(&[7u8; 1000]).unwrap();
    }
    assert_eq!(log.bytes_on_disk(), empty_len, "4 032 bytes fit in the batch");
    log.append(&[8u8; 1000]).unwrap();
    assert_eq!(log.bytes_on_disk(), empty_len + 4032, "the full batch was written first");
    assert_eq!(log.pending_bytes(), 1008);
    log.append(&[9u8; 8192]).unwrap();
    assert_eq!(log.pending_bytes(), 8200, "a record larger than a batch is a batch of its own");
    log.flush().unwrap();
    assert!(log.batch.capacity() <= 4096, "the buffer gives back what the large record took");
    assert_eq!(log.sync_count(), 3);
}
