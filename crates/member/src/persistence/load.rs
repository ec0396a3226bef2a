//! A persisting member's start: each of a reactor's partitions opened and read back (its
//! newest snapshot, then its log) into the partition's objects, as a new replica applies a
//! migration's snapshot and then backups. Indexes are rebuilt as entries arrive. Locks are not
//! kept (their clients are gone with the cluster), as Hazelcast keeps none across a restart.
//!
//! A torn last write (a crash in the middle of one) is dropped and logged; anything else
//! damaged fails the start, naming the file (and the record).

use crate::cluster::peer::{self, Reader};
use crate::engine::settings::SettingsCache;
use crate::partition::objects::{Object, PartitionStore};
use crate::persistence::logs::{CHANGE, DROPPED, STATE};
use ferrogrid_persist::{FsyncPolicy, Limits, PartitionLog, Recovered};
use std::collections::BTreeSet;
use std::path::Path;
use tracing::warn;

/// What a reactor's partitions came back with.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Loaded {
    pub(crate) entries: usize,
    pub(crate) records: usize,
    pub(crate) torn_bytes: u64,
}

/// Opens the logs of partitions `globals` (by local index) under `dir` and applies what they
/// hold to `partitions` where `held` (the persisted table names this member for the
/// partition; another replica's log is left for the caller to empty). Returns the open logs.
pub(crate) fn load_partitions(
    dir: &Path,
    (globals, held): (&[u16], &[bool]),
    partitions: &mut [PartitionStore],
    settings: &mut SettingsCache,
    (policy, limits): (FsyncPolicy, Limits),
) -> Result<(Vec<PartitionLog>, Loaded), String> {
    let mut logs = Vec::with_capacity(globals.len());
    let mut loaded = Loaded::default();
    for (local, &partition) in globals.iter().enumerate() {
        let (log, recovered) =
            PartitionLog::open(dir, partition, policy, limits.clone()).map_err(|error| error.to_string())?;
        if recovered.torn_tail_bytes > 0 {
            warn!(
                partition,
                bytes = recovered.torn_tail_bytes,
                "partition log: a torn last write (a crash in the middle of it) dropped"
            );
        }
        loaded.torn_bytes += recovered.torn_tail_bytes;
        if !held[local] {
            logs.push(log);
            continue;
        }
        loaded.records += recovered.records.len();
        apply(&recovered, &mut partitions[local], settings)
            .map_err(|reason| format!("{}: {reason}", log.dir().display()))?;
        release_locks(&mut partitions[local]);
        loaded.entries +=
            partitions[local].objects().map(|(_, _, object)| object.as_object().entry_count()).sum::<usize>();
        logs.push(log);
    }
    Ok((logs, loaded))
}

/// Applies a partition's snapshot chunks, then its records, to `partition`.
fn apply(recovered: &Recovered, partition: &mut PartitionStore, settings: &mut SettingsCache) -> Result<(), String> {
    for (index, chunk) in recovered.snapshot_chunks.iter().enumerate() {
        let (_, objects) = peer::read_snapshot(chunk).map_err(|error| format!("snapshot chunk {index}: {error}"))?;
        for object in objects {
            let target =
                partition.object_mut(object.kind, object.name, || Object::new(object.kind, object.name, settings));
            target
                .as_object_mut()
                .apply_snapshot(object.body)
                .map_err(|error| format!("snapshot chunk {index}: {:?} {}: {error}", object.kind, object.name))?;
        }
    }
    for (index, record) in recovered.records.iter().enumerate() {
        let malformed = |error: peer::Malformed| format!("log record {index}: {error}");
        let (&tag, rest) = record.split_first().ok_or_else(|| format!("log record {index}: empty"))?;
        let mut reader = Reader::new(rest);
        let object = peer::read_object(&mut reader).map_err(malformed)?;
        if !reader.is_empty() {
            return Err(format!("log record {index}: {} bytes after its object", reader.rest().len()));
        }
        match tag {
            CHANGE => {
                let target =
                    partition.object_mut(object.kind, object.name, || Object::new(object.kind, object.name, settings));
                target.as_object_mut().apply_backup(object.body).map_err(malformed)?;
            }
            DROPPED => {
                partition.drop_object(object.kind, object.name);
            }
            STATE => {
                let target =
                    partition.object_mut(object.kind, object.name, || Object::new(object.kind, object.name, settings));
                target.as_object_mut().apply_snapshot(object.body).map_err(malformed)?;
            }
            other => return Err(format!("log record {index}: unknown record type {other}")),
        }
    }
    Ok(())
}

/// Drops the locks the records held: their owners were clients of the cluster before the
/// restart.
fn release_locks(partition: &mut PartitionStore) {
    for (_, _, object) in partition.objects_mut() {
        let Some(locks) = object.as_object_mut().locks_mut() else { continue };
        let owners: BTreeSet<u128> = locks.images().map(|(_, image)| image.owner.client.as_u128()).collect();
        for owner in owners {
            locks.release_client(ferrogrid_protocol::Uuid::from_u128(owner));
        }
    }
}
