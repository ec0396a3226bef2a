//! A persisting reactor's side of its partition logs (`persistence/`): loading them at start,
//! writing what operations and backups change, flushing before answers go out, and what the
//! first partition table of a restarted cluster does with the loaded data.

use crate::cluster::peer::ObjectRecord;
use crate::net::connection::ConnectionShared;
use crate::partition::owner::PartitionOwner;
use crate::persistence::load::{load_partitions, Loaded};
use crate::persistence::logs::{Logs, Persisting};
use ferrogrid_cluster::PartitionTable;
use ferrogrid_config::MemberConfig;
use std::path::Path;
use std::sync::Arc;
use tracing::info;

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
        // Only the replicas the persisted table names this member for come back: a replica
        // left under a newer table whose persisting a crash cut short is not this member's.
        let me = Some(ferrogrid_cluster::MemberId(self.member.as_u128()));
        let held: Vec<bool> = globals
            .iter()
            .map(|global| table.as_ref().is_some_and(|table| table.replicas(usize::from(*global)).contains(&me)))
            .collect();
        let persistence = &config.persistence;
        let policy = (persistence.fsync_policy, ferrogrid_persist::Limits::default());
        let (logs, loaded) = load_partitions(dir, (&globals, &held), &mut self.partitions, &mut self.settings, policy)?;
        for partition in &mut self.partitions {
            partition.dropped = Some(Vec::new());
        }
        let mut logs = Logs::new(logs, globals, persistence.fsync_policy, persistence.compact_log_bytes);
        for (local, held) in held.iter().enumerate() {
            if !held && logs.has_records(local) {
                logs.replace(local, &self.partitions[local]);
            }
        }
        let from_disk = held.iter().enumerate().map(|(local, held)| *held && logs.has_records(local)).collect();
        self.persisting = Some(Box::new(Persisting { logs, restored: Some(table), from_disk }));
        Ok(loaded)
    }

    /// Whether this member persists.
    pub(crate) fn persists(&self) -> bool {
        self.persisting.is_some()
    }

    /// Appends an object's changes to partition `local`'s log when the object is persisted
    /// (`persistence`: its `PartitionObject::persistence`, whether it wants a sync).
    pub(crate) fn persist_changes(&mut self, local: usize, record: &ObjectRecord<'_>, persistence: Option<bool>) {
        if let (Some(persisting), Some(fsync)) = (self.persisting.as_mut(), persistence) {
            persisting.logs.append_change(local, record, fsync);
        }
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
        if out.len() <= start {
            return; // no answer here (held for synchronous backups: released after the flush)
        }
        if persisting.logs.must_hold(local, fsync) {
            let answer = out.split_off(start);
            persisting.logs.hold(local, connection, answer);
        } else {
            persisting.logs.note_unheld();
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

    /// Partition `local`'s data is being replaced by a copy from another member (a
    /// snapshot's first chunk): what was loaded from disk is no longer there.
    pub(crate) fn replaced_from_member(&mut self, local: usize) {
        // (Empty once the first table took it.)
        if let Some(loaded) = self.persisting.as_mut().and_then(|persisting| persisting.from_disk.get_mut(local)) {
            *loaded = false;
        }
    }

    /// This member no longer holds a replica of partition `local` (a table change): dropped
    /// in memory now, on disk once a table without it is persisted (a restart before that
    /// may come back under the table that still names this member for it).
    pub(crate) fn leave_replica(&mut self, local: usize) {
        self.partitions[local].drop_all();
        let version = self.replication.state.table.version;
        if let Some(persisting) = self.persisting.as_mut() {
            persisting.logs.defer_drop(local, version);
        }
    }

    /// Drops everything partition `local` holds (a replica that starts empty, or data the
    /// cluster did not want), and on disk too when there was anything.
    pub(crate) fn drop_replica(&mut self, local: usize) {
        let had_any = self.partitions[local].objects().any(|(kind, _, _)| !kind.is_everywhere());
        self.partitions[local].drop_all();
        if had_any || self.persisting.as_ref().is_some_and(|persisting| persisting.logs.has_records(local)) {
            self.persist_replace(local);
        }
    }

    /// Group commit: flushes what this reactor's partitions appended since the last flush,
    /// then queues the answers that waited for it. Called before any answer is written.
    pub(crate) fn flush_persistence(&mut self) {
        let Some(persisting) = self.persisting.as_mut() else { return };
        persisting.logs.record_dropped(&mut self.partitions);
        if !persisting.logs.is_dirty() {
            return;
        }
        for (connection, answer) in persisting.logs.flush(&self.partitions) {
            if !connection.is_closed() {
                self.outbox.buffer(&connection).extend_from_slice(&answer);
            }
        }
    }

    /// Before the answers of a connection's batch are written: flushes the logs if an answer
    /// among them did not wait for its records (`everysec`, `no`); held answers wait for the
    /// loop turn's flush, which then serves every connection's writes at once.
    pub(crate) fn flush_persistence_before_answers(&mut self) {
        if self.persisting.as_ref().is_some_and(|persisting| persisting.logs.has_unheld()) {
            self.flush_persistence();
        }
    }

    /// How long this reactor may sleep without missing a due `everysec` sync (None: as long
    /// as it likes).
    pub(crate) fn persistence_wait(&self) -> Option<std::time::Duration> {
        let persisting = self.persisting.as_ref()?;
        persisting.logs.sync_pending().then_some(crate::persistence::logs::SYNC_CHECK_INTERVAL)
    }

    /// Once per loop turn: empties the logs of replicas left under a table now persisted
    /// (`persisted_version`), syncs and compacts as due, flushes (destroyed objects
    /// included).
    pub(crate) fn persistence_turn(&mut self, persisted_version: u64) {
        let Some(persisting) = self.persisting.as_mut() else { return };
        let me = self.replication.state.me;
        for local in persisting.logs.due_drops(persisted_version) {
            let global = self.replication.global(local);
            if !self.replication.state.table.replicas(global).contains(&Some(me)) {
                persisting.logs.replace(local, &self.partitions[local]);
            }
        }
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
                let from_disk = std::mem::take(&mut self.persisting.as_mut()?.from_disk);
                let dropped = from_disk.iter().filter(|loaded| **loaded).count();
                for (local, _) in from_disk.iter().enumerate().filter(|(_, loaded)| **loaded) {
                    self.drop_replica(local);
                }
                if dropped > 0 {
                    info!(
                        partitions = dropped,
                        "the cluster did not restore this member's partition table: its data was dropped"
                    );
                }
                None
            }
        }
    }
}
