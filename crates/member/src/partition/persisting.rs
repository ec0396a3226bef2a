//! A persisting reactor's side of its partition logs (`persistence/`): loading them at start,
//! writing what operations and backups change, flushing before answers go out, and what the
//! first partition table of a restarted cluster does with the loaded data.

use crate::cluster::peer::ObjectRecord;
use crate::net::connection::ConnectionShared;
use crate::partition::owner::PartitionOwner;
use crate::persistence::load::{load_partitions, Loaded};
use crate::persistence::logs::Logs;
use ferrogrid_cluster::PartitionTable;
use ferrogrid_config::MemberConfig;
use std::path::Path;
use std::sync::Arc;
use tracing::info;

/// A persisting reactor's logs, and the table its loaded data was written under until the
/// first table of the cluster says whether it is kept.
#[derive(Debug)]
pub(crate) struct Persisting {
    pub(crate) logs: Logs,
    /// Taken by the first table (`PartitionOwner::first_table_from_disk`).
    restored: Option<Option<PartitionTable>>,
}

impl PartitionOwner {
    /// Opens this reactor's partition logs in `dir` and loads what they hold into its
    /// partitions; `table`: the partition table the data was written under.
    pub(crate) fn load_persisted(
        &mut self,
        dir: &Path,
        config: &MemberConfig,
        table: Option<PartitionTable>,
    ) -> Result<Loaded, String> {
        let globals: Vec<u16> = (0..self.partitions.len()).map(|local| self.replication.global(local) as u16).collect();
        let persistence = &config.persistence;
        let policy = (persistence.fsync_policy, ferrogrid_persist::Limits::default());
        let (logs, loaded) = load_partitions(dir, &globals, &mut self.partitions, &mut self.settings, policy)?;
        for partition in &mut self.partitions {
            partition.dropped = Some(Vec::new());
        }
        let logs = Logs::new(logs, globals, persistence.fsync_policy, persistence.compact_log_bytes);
        self.persisting = Some(Box::new(Persisting { logs, restored: Some(table) }));
        Ok(loaded)
    }

    /// Whether this member persists.
    pub(crate) fn persists(&self) -> bool {
        self.persisting.is_some()
    }

    /// Appends an object's changes to partition `local`'s log when the object is persisted
    /// (`persistence`: its `PartitionObject::persistence`). Returns whether it did, and
    /// whether the object wants a sync.
    pub(crate) fn persist_changes(
        &mut self,
        local: usize,
        record: &ObjectRecord<'_>,
        persistence: Option<bool>,
    ) -> Option<bool> {
        let (persisting, fsync) = (self.persisting.as_mut()?, persistence?);
        persisting.logs.append_change(local, record, fsync);
        Some(fsync)
    }

    /// After a write whose records went to partition `local`'s log (`appended`: whether one
    /// wants a sync): holds its answer (`out[start..]`) until the flush when it must wait
    /// for the disk.
    pub(crate) fn hold_for_disk(
        &mut self,
        local: usize,
        appended: Option<bool>,
        connection: &Arc<ConnectionShared>,
        out: &mut Vec<u8>,
        start: usize,
    ) {
        let (Some(fsync), Some(persisting)) = (appended, self.persisting.as_mut()) else { return };
        if out.len() > start && persisting.logs.must_hold(local, fsync) {
            let answer = out.split_off(start);
            persisting.logs.hold(local, connection, answer);
        }
    }

    /// Why partition `local`'s log cannot be written now, if it cannot.
    pub(crate) fn disk_failure(&self, local: usize) -> Option<String> {
        self.persisting.as_ref()?.logs.failure(local).map(str::to_owned)
    }

    /// Replaces partition `local`'s log by a snapshot of what it holds now (a replica that
    /// arrived whole, or was dropped).
    pub(crate) fn persist_replace(&mut self, local: usize) {
        if let Some(persisting) = self.persisting.as_mut() {
            persisting.logs.replace(local, &self.partitions[local]);
        }
    }

    /// Group commit: flushes what this reactor's partitions appended since the last flush,
    /// then queues the answers that waited for it. Called before any answer is written.
    pub(crate) fn flush_persistence(&mut self) {
        let Some(persisting) = self.persisting.as_mut() else { return };
        if !persisting.logs.is_dirty() {
            return;
        }
        for (connection, answer) in persisting.logs.flush(&self.partitions) {
            if !connection.is_closed() {
                self.outbox.buffer(&connection).extend_from_slice(&answer);
            }
        }
    }

    /// Once per loop turn: records destroyed objects, syncs and compacts as due, flushes.
    pub(crate) fn persistence_turn(&mut self) {
        let Some(persisting) = self.persisting.as_mut() else { return };
        persisting.logs.record_dropped(&mut self.partitions);
        persisting.logs.tick(&self.partitions);
        self.flush_persistence();
    }

    /// At this member's first partition table: the table its loaded data was written under
    /// when the cluster restored it (`kept`), to apply the first table from, as if it had
    /// been the table before; otherwise the loaded data is dropped (stale, or not wanted) and
    /// None. None also when nothing was loaded, or after the first table.
    pub(crate) fn first_table_from_disk(&mut self, kept: bool) -> Option<PartitionTable> {
        let restored = self.persisting.as_mut()?.restored.take()?;
        match restored {
            Some(table) if kept => {
                info!(version = table.version, "the cluster restored this member's partition table: data kept");
                Some(table)
            }
            _ => {
                for local in 0..self.partitions.len() {
                    if self.partitions[local].objects().next().is_some() {
                        self.partitions[local].drop_all();
                        self.persist_replace(local);
                    }
                }
                info!("the cluster did not restore this member's partition table: its data was dropped");
                None
            }
        }
    }
}
