//! Random sequences of appends, flushes, snapshots and reopens against an in-memory model of
//! what must be on disk: after any sequence, a reopen returns exactly the last snapshot and the
//! records flushed after it.

use std::path::Path;

use ferrogrid_persist::{FsyncPolicy, Limits, PartitionLog};
use proptest::prelude::*;

/// Small batches, so that appends also write batches on their own.
const LIMITS: Limits = Limits { max_record_bytes: 8192, max_batch_bytes: 4096 };
const FRAME_HEADER_BYTES: usize = 8;

#[derive(Debug, Clone)]
enum Step {
    Append(Vec<u8>),
    Flush,
    /// A snapshot of the model's whole state, this many records to a chunk (at most 3 of
    /// 1 500 bytes: under `max_record_bytes`).
    Snapshot(usize),
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => prop::collection::vec(any::<u8>(), 1..=1500).prop_map(Step::Append),
        3 => Just(Step::Flush),
        1 => (1usize..4).prop_map(Step::Snapshot),
        1 => Just(Step::Reopen),
    ]
}

/// What must be on disk, and what is buffered.
#[derive(Debug, Default)]
struct Model {
    /// The records the last snapshot holds, and its chunks (those records joined).
    snapshot_records: Vec<Vec<u8>>,
    chunks: Vec<Vec<u8>>,
    /// Records flushed after the last snapshot.
    records: Vec<Vec<u8>>,
    batch: Vec<Vec<u8>>,
}

impl Model {
    fn batch_bytes(&self) -> usize {
        self.batch.iter().map(|body| FRAME_HEADER_BYTES + body.len()).sum()
    }

    fn append(&mut self, body: Vec<u8>) {
        if !self.batch.is_empty()
            && self.batch_bytes() + FRAME_HEADER_BYTES + body.len() > LIMITS.max_batch_bytes as usize
        {
            self.flush();
        }
        self.batch.push(body);
    }

    fn flush(&mut self) {
        self.records.append(&mut self.batch);
    }

    /// Every record so far (the snapshot's, then those after it), `per_chunk` to a chunk.
    fn snapshot(&mut self, per_chunk: usize) -> Vec<Vec<u8>> {
        self.flush();
        self.snapshot_records.append(&mut self.records);
        self.chunks = self.snapshot_records.chunks(per_chunk).map(|group| group.concat()).collect();
        self.chunks.clone()
    }
}

fn open(base: &Path, model: &Model) -> PartitionLog {
    let (log, recovered) = PartitionLog::open(base, 1, FsyncPolicy::No, LIMITS.clone()).unwrap();
    assert_eq!(recovered.snapshot_chunks, model.chunks);
    assert_eq!(recovered.records, model.records);
    assert_eq!(recovered.torn_tail_bytes, 0);
    log
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn reopen_returns_the_last_snapshot_and_the_records_flushed_after_it(
        steps in prop::collection::vec(step(), 1..60)
    ) {
        let base = tempfile::tempdir().unwrap();
        let mut model = Model::default();
        let mut log = open(base.path(), &model);
        for step in steps {
            match step {
                Step::Append(body) => {
                    log.append(&body).unwrap();
                    model.append(body);
                }
                Step::Flush => {
                    log.flush().unwrap();
                    model.flush();
                }
                Step::Snapshot(per_chunk) => log.snapshot(model.snapshot(per_chunk)).unwrap(),
                Step::Reopen => {
                    drop(log);
                    model.batch.clear(); // never flushed: lost
                    log = open(base.path(), &model);
                }
            }
            prop_assert_eq!(log.pending_bytes(), model.batch_bytes());
        }
        drop(log);
        model.batch.clear();
        open(base.path(), &model);
    }
}
