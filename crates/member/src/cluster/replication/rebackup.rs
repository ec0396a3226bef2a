//! Held writes whose backup member left before acknowledging them (a `kill -9`): the owner has
//! another replica of the partition acknowledge them, so that neither a backup-aware client
//! nor a held answer waits the whole backup timeout for an acknowledgement that never comes.
//!
//! - **Lost.** When a member leaves the member list, every held write of a partition still
//!   waiting for it counts one lost acknowledgement (`PendingWrite::lost`) instead of waiting
//!   for it.
//! - **Asked again.** Once the table this member owns the partition under names a replica that
//!   has neither acknowledged the write nor been asked, the owner asks it (BACKUP_SYNC, with
//!   the write's sequence number) and waits for it instead. That replica holds the write: it
//!   got the write's own record (records go to every replica of the row), or, added to the row
//!   since, the owner's whole partition (the snapshot the owner sends when its table adds a
//!   backup), both ahead of the BACKUP_SYNC on the same link and applied in order by the
//!   replica's reactor of the partition (`link.rs` hands that reactor the records read before
//!   the BACKUP_SYNC first). Its acknowledgement becomes the client's backup event, as the lost
//!   one would have been, and releases a held answer.
//! - **Given up.** A row holds at most the table's backups, and no more than the other data
//!   members. When the write's lost acknowledgements and the replicas holding it (acknowledged
//!   or asked) come to more than that, the excess is dropped from what it waits for: the write
//!   then waits only for the backups the cluster can hold now, which is what Hazelcast answers
//!   a write made now (its owner counts only the backups it sends to replicas that exist). So
//!   a write that waited for a member the partition was moving to (past the table's backups,
//!   see `Replication::queue_backup`) whose backup acknowledged it, or a write whose backup was
//!   the last other data member, is not left waiting for a replica the row will never have. A
//!   backup-aware client gets those as backup events at once rather than after its timeout.
//! - **Moved on.** When this member no longer owns the partition, a held answer goes out
//!   without the lost acknowledgements (the new owner has this member's copy; before lost
//!   acknowledgements were asked again, every held answer went out when its backup left); a
//!   backup-aware client is sent nothing more.
//! - Nothing else stands in for an acknowledgement: one neither asked again nor given up
//!   before `backup-timeout` is released as before, and the client waits its own timeout.
//!
//! A PN counter's held add (no partition) just stops waiting for a replica that left: its state
//! lives only on the counter's replicas.

use crate::cluster::peer::{self, BackupHeader};
use crate::cluster::replication::state::ClusterState;
use crate::partition::owner::PartitionOwner;
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::PartitionId;
use std::collections::HashMap;
use tracing::debug;

impl PartitionOwner {
    /// Counts the acknowledgements that members no longer in the member list owed held writes
    /// as lost (a PN counter's add just stops waiting for them).
    pub(crate) fn count_lost_acks(&mut self) {
        let state = &self.replication.state;
        for pending in self.replication.pending.values_mut() {
            let departed = pending.forget_departed(|member| !state.is_member(member));
            if pending.partition.is_some() {
                pending.lost += departed;
            }
        }
    }

    /// For every held write with lost acknowledgements on a partition this member owns: asks
    /// the replicas its table names and that were not asked yet, and gives up those past what
    /// the row can hold now (the table's backups, at most the other data members).
    pub(crate) fn rebackup(&mut self) {
        let state = self.replication.state.clone();
        let others = state.members.iter().filter(|member| !member.lite && member.id != state.me).count();
        let capacity = others.min(self.replication.table_backups);
        let mut syncs: Vec<(MemberId, BackupHeader)> = Vec::new();
        for (sequence, pending) in self.replication.pending.iter_mut() {
            let Some(partition) = pending.partition.filter(|_| pending.lost > 0) else { continue };
            if state.table.owner(partition as usize) != Some(state.me) {
                // The partition moved on (its new owner has this member's copy): a held answer
                // goes out as it did before lost acknowledgements were asked again; a
                // backup-aware client is told nothing more and waits its timeout.
                if pending.client_acks.is_none() {
                    pending.lost = 0;
                }
                continue;
            }
            let asked: Vec<MemberId> = replacements(&state, partition, &pending.asked).take(pending.lost).collect();
            for member in asked {
                pending.await_member(member);
                pending.lost -= 1;
                let header = BackupHeader { partition, table_version: state.table.version, sequence: *sequence };
                syncs.push((member, header));
            }
            let holding = pending.awaited + pending.acked().iter().filter(|id| state.is_member(**id)).count();
            let given_up = pending.lost.saturating_sub(capacity.saturating_sub(holding));
            pending.lost -= given_up;
            if !pending.connection.is_closed() {
                for _ in 0..given_up {
                    pending.backup_event(self.outbox.buffer(&pending.connection));
                }
            }
            debug_assert!(pending.lost <= capacity, "a lost acknowledgement waits only for a replica the row can hold");
        }
        self.send_backup_syncs(syncs);
    }

    /// Queues the BACKUP_SYNC entries, one message per member, behind everything gathered
    /// for that member before (backup records, snapshots).
    fn send_backup_syncs(&mut self, syncs: Vec<(MemberId, BackupHeader)>) {
        if syncs.is_empty() {
            return;
        }
        debug!(count = syncs.len(), "held writes' lost backup acknowledgements asked of other replicas");
        self.replication.seal();
        let mut payloads: HashMap<MemberId, Vec<u8>> = HashMap::new();
        for (member, header) in syncs {
            peer::put_backup_sync(payloads.entry(member).or_default(), header);
        }
        for (member, payload) in payloads {
            peer::write(self.replication.message_for(member), peer::BACKUP_SYNC, 0, &payload);
        }
    }

    /// BACKUP_SYNC entries from `from`, all for this reactor's partitions: each acknowledged,
    /// "applied" if this member takes backups of the partition from `from` (as for a backup
    /// record) and holds a complete replica: one its table names it for, or the copy `from`
    /// sent for the sync's table (this member may not have that table yet). What `from` sent
    /// before is applied by now: it came ahead on the link and was handed to this reactor first.
    pub fn on_backup_syncs(&mut self, from: MemberId, syncs: &[BackupHeader]) {
        for sync in syncs {
            if !self.replication.owns_locally(PartitionId(sync.partition)) {
                continue;
            }
            let (partition, me) = (sync.partition as usize, self.replication.state.me);
            let local = self.replication.local(partition);
            let table = &self.replication.state.table;
            let from_owner = table.owner(partition) == Some(from) || sync.table_version > table.version;
            let named = table.replicas(partition).contains(&Some(me));
            let copied = self.replication.snapshot_version[local] >= sync.table_version;
            let complete = self.replication.ready[local] && (named || copied);
            self.replication.acknowledge(from, sync.sequence, from_owner && complete);
        }
    }
}

/// The replicas of `partition` in `state`'s table, other than this member, that a held write
/// may ask for a lost acknowledgement: members, and not `asked` already (awaited or
/// acknowledged).
fn replacements<'a>(
    state: &'a ClusterState,
    partition: u16,
    asked: &'a [MemberId],
) -> impl Iterator<Item = MemberId> + 'a {
    state.table.replicas(partition as usize)[1..]
        .iter()
        .flatten()
        .copied()
        .filter(move |member| *member != state.me && state.is_member(*member) && !asked.contains(member))
}
