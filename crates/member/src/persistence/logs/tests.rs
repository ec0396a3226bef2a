//! A reactor's logs on their own: held answers released by the flush (or turned into errors
//! naming the failure), records read back, and drops deferred until a table is persisted.

use super::*;
use crate::net::connection::ConnectionShared;
use crate::partition::objects::PartitionStore;
use ferrogrid_persist::Limits;
use std::path::PathBuf;

/// A fresh directory under the system's temp directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let path = std::env::temp_dir().join(format!("ferrogrid-logs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Dir(path)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Logs of partitions 0 and 1 under `dir`, records of at most `max_record_bytes`.
fn logs(dir: &Dir, policy: FsyncPolicy, max_record_bytes: u32) -> Logs {
    let limits = Limits { max_record_bytes, ..Limits::default() };
    let opened = [0u16, 1].map(|id| PartitionLog::open(&dir.0, id, policy, limits.clone()).unwrap().0);
    Logs::new(opened.into(), vec![0, 1], policy, 64 << 20)
}

/// An answer as the member writes one: a single frame whose header has `correlation_id`.
fn answer(correlation_id: i64) -> Vec<u8> {
    let mut out = Vec::new();
    crate::route::wire::write_error(&mut out, correlation_id, &OpError::new(ErrorKind::IllegalState, "an answer"));
    out
}

fn record(body: &[u8]) -> ObjectRecord<'_> {
    ObjectRecord { kind: ObjectKind::Map, name: "orders", body }
}

#[test]
fn a_held_answer_leaves_with_the_flush_and_its_record_reads_back() {
    let dir = Dir::new("held");
    let mut logs = logs(&dir, FsyncPolicy::Always, 1 << 20);
    let partitions = [PartitionStore::default(), PartitionStore::default()];
    let (connection, _peer) = ConnectionShared::loopback(1);
    logs.append_change(1, &record(b"changes"), false);
    assert!(logs.must_hold(1, false), "always: every answer waits for the disk");
    logs.hold(1, &connection, answer(42));
    assert!(logs.is_dirty());
    let released = logs.flush(&partitions);
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].1, answer(42), "the answer as it was");
    assert!(!logs.is_dirty());
    drop(logs);
    let (_, recovered) = PartitionLog::open(&dir.0, 1, FsyncPolicy::Always, Limits::default()).unwrap();
    let mut expected = vec![CHANGE];
    peer::put_object(&mut expected, &record(b"changes"));
    assert_eq!(recovered.records, vec![expected]);
}

#[test]
fn a_failed_log_answers_its_held_writes_with_the_failure_until_a_snapshot_works() {
    let dir = Dir::new("failed");
    let mut logs = logs(&dir, FsyncPolicy::EverySec, 64);
    let partitions = [PartitionStore::default(), PartitionStore::default()];
    let (connection, _peer) = ConnectionShared::loopback(2);
    assert!(!logs.must_hold(0, false), "everysec: answers do not wait");
    logs.append_change(0, &record(&[7; 200]), false); // past the record bound: the log fails
    assert!(logs.failure(0).is_some_and(|reason| reason.contains("64")), "{:?}", logs.failure(0));
    assert!(logs.must_hold(0, false), "a failed log's writes wait for the flush");
    logs.hold(0, &connection, answer(7));
    let released = logs.flush(&partitions);
    // The flush writes the partition's snapshot first (memory to disk): that works here, so
    // the partition is writable again and the held answer goes out as it was.
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].1, answer(7), "the answer as it was");
    assert!(logs.failure(0).is_none());
    // A failure that stays: the partition holds an entry whose snapshot is past the record
    // bound too, so the snapshot fails as well; the held answer becomes an error with its
    // correlation id, naming the failure, and the partition stays failed.
    let mut partitions = partitions;
    let persisted = ferrogrid_config::DataPersistenceConfig { enabled: true, fsync: false };
    let settings = || {
        let settings = crate::engine::settings::MapSettings::default();
        std::sync::Arc::new(crate::engine::settings::MapSettings { data_persistence: persisted, ..settings })
    };
    partitions[0].map_mut("orders", settings).put(&[1; 100], &[2; 100], 0, -1, -1);
    logs.append_change(0, &record(&[7; 200]), false);
    logs.hold(0, &connection, answer(9));
    let released = logs.flush(&partitions);
    assert_eq!(released.len(), 1);
    let error = ferrogrid_protocol::Message::parse(&released[0].1).unwrap();
    assert_eq!(error.correlation_id(), 9);
    assert_ne!(released[0].1, answer(9), "an error in place of the answer");
    let text = String::from_utf8_lossy(&released[0].1).into_owned();
    assert!(text.contains("the write was not persisted") && text.contains("64"), "{text}");
    assert!(logs.failure(0).is_some(), "still failed: the snapshot did not fit either");
}

#[test]
fn a_deferred_drop_waits_for_a_table_that_new_and_a_replace_cancels_it() {
    let dir = Dir::new("drops");
    let mut logs = logs(&dir, FsyncPolicy::No, 1 << 20);
    let empty = PartitionStore::default();
    logs.defer_drop(0, 5);
    logs.defer_drop(1, 7);
    assert!(logs.due_drops(4).is_empty(), "no table that new persisted yet");
    assert_eq!(logs.due_drops(5), vec![0]);
    logs.replace(1, &empty); // the replica came back whole before its drop was due
    assert!(logs.due_drops(100).is_empty());
}
