//! The partition table's steps: the member list and table published, the Ready reports that
//! let the next step go, rebalancing towards the balanced assignment, and graceful leaves.

use super::{Message, Node, Output, JOIN_RETRY_MS};
use crate::partition_table::{assign, MemberId, PartitionTable, MAX_REPLICAS};

impl Node {
    pub(super) fn publish_members(&mut self) {
        let message =
            Message::Members { version: self.members_version, members: self.members.clone(), cluster: self.cluster_id };
        self.broadcast(message);
        self.out.push(Output::MembersChanged { version: self.members_version, members: self.members.clone() });
    }

    /// Sends a new table version to every member and waits for all to be ready for it.
    pub(super) fn publish_table(&mut self, table: PartitionTable) {
        self.table = table.clone();
        self.rebalance.awaiting = self.members.iter().map(|member| member.id).collect();
        self.broadcast(Message::Table(table.clone()));
        self.out.push(Output::TableChanged(table));
    }

    pub(super) fn ready(&mut self, from: MemberId, version: u64) {
        if version >= self.table.version {
            self.rebalance.awaiting.remove(&from);
        }
        if self.rebalance.awaiting.is_empty() && self.takeover.is_none() {
            self.step_rebalance();
        }
    }

    /// The master's next table step, once the previous one is done everywhere.
    pub(super) fn step_rebalance(&mut self) {
        if self.table.version == 0 {
            self.first_table();
            return;
        }
        if !self.rebalance.awaiting.is_empty() {
            return;
        }
        let staying: Vec<MemberId> =
            self.data_members().into_iter().filter(|id| !self.rebalance.leaving.contains(id)).collect();
        if self.nothing_to_hand_off(&staying) {
            self.finish_leaves();
            return;
        }
        let target = match &self.rebalance.target {
            Some((members, target)) if *members == staying => target.clone(),
            _ => {
                let target = assign(&self.table, &staying, self.config.backup_count);
                self.rebalance.target = Some((staying, target.clone()));
                target
            }
        };
        let mut differing: Vec<usize> = (0..self.table.partition_count())
            .filter(|partition| self.table.replicas(*partition) != target.replicas(*partition))
            .collect();
        // Rows short of replicas first (a partition with no backup loses acknowledged writes
        // with its owner), then the rest; a stable sort keeps partition order within each.
        let filled = |partition: usize, table: &PartitionTable| {
            table.replicas(partition).iter().filter(|member| member.is_some()).count()
        };
        differing.sort_by_key(|partition| filled(*partition, &self.table) >= filled(*partition, &target));
        if differing.is_empty() {
            self.finish_leaves();
            return;
        }
        let mut next = self.table.clone();
        for partition in differing.into_iter().take(self.config.max_parallel_migrations.max(1)) {
            let current = *self.table.replicas(partition);
            let wanted: [Option<MemberId>; MAX_REPLICAS] = *target.replicas(partition);
            // Copy before moving: members new to the partition first join as extra replicas
            // (they get the data and every later write) while the old replicas stay; only the
            // next step, once they are ready, gives the row its final shape. A crash in between
            // never leaves a partition whose only copy was on its way.
            let mut row = current;
            let mut complete = true;
            for member in wanted.iter().flatten().filter(|member| !current.contains(&Some(**member))) {
                match row.iter().position(Option::is_none) {
                    Some(slot) => row[slot] = Some(*member),
                    None => complete = false,
                }
            }
            let adds = row != current;
            next.set_replicas(partition, if adds && complete { row } else { wanted });
        }
        next.version = self.table.version + 1;
        self.publish_table(next);
    }

    /// The master's first table: a restored one (`recovery.rs`), or one assigned over the
    /// data members once those starting with it joined (or waited for long enough).
    fn first_table(&mut self) {
        if self.step_recovery() {
            return;
        }
        let joining = self.peers.iter().any(|(id, peer)| {
            peer.linked
                && peer.master.as_ref().is_none_or(|master| master.id == self.config.id)
                && !self.members.iter().any(|member| member.id == *id)
        });
        if joining && self.now_ms < self.first_table_due_ms {
            return;
        }
        // Lite members hold nothing; a cluster of only lite members has an empty table.
        let mut table = assign(&self.table, &self.data_members(), self.config.backup_count);
        table.version = 1;
        self.publish_table(table);
    }

    /// Whether leavers can go at once: every member leaves (nobody to hand off to), or no data
    /// member stays and no partition has a replica left (only lite members remain). With data
    /// members all leaving and lite members staying, the table steps to empty first.
    fn nothing_to_hand_off(&self, staying: &[MemberId]) -> bool {
        let table_is_empty = (0..self.table.partition_count()).all(|partition| self.table.owner(partition).is_none());
        (staying.is_empty() && table_is_empty)
            || self.members.iter().all(|member| self.rebalance.leaving.contains(&member.id))
    }

    /// A lite member asks to hold data: the master makes it one, or is asked to.
    pub(super) fn promote_local(&mut self) {
        if !self.joined {
            // Not in a cluster yet: it joins as a data member.
            self.config.lite = false;
        } else if self.is_master() {
            self.promote_member(self.config.id);
        } else if let Some(master) = self.master() {
            self.send(master, Message::Promote { member: self.config.id });
        }
    }

    /// (Master) marks a lite member a data member in a new member list; the next table steps
    /// give it its share of partitions.
    pub(super) fn promote_member(&mut self, id: MemberId) {
        if !self.is_master() {
            return;
        }
        let Some(member) = self.members.iter_mut().find(|member| member.id == id && member.lite) else {
            return;
        };
        member.lite = false;
        let text = format!("lite member {} promoted to a data member", member.address);
        self.log(text);
        self.next_members_version(0);
        self.publish_members();
        if self.takeover.is_none() {
            self.step_rebalance();
        }
    }

    /// Drops members whose partitions have all moved off them: that tells them to exit.
    fn finish_leaves(&mut self) {
        let done: Vec<MemberId> = self.rebalance.leaving.iter().copied().collect();
        if done.is_empty() {
            return;
        }
        if done.contains(&self.config.id) {
            // The master itself leaves: the others will see the next oldest first.
            let mut rest = self.members.clone();
            rest.retain(|member| !done.contains(&member.id));
            let version = self.next_members_version(0);
            let message = Message::Members { version, members: rest, cluster: self.cluster_id };
            self.broadcast(message);
            self.left = true;
            self.joined = false;
            self.log("left the cluster: partitions handed off".into());
            self.out.push(Output::Left);
            return;
        }
        for id in &done {
            self.rebalance.leaving.remove(id);
        }
        let members_before = self.members.clone();
        self.members.retain(|member| !done.contains(&member.id));
        self.next_members_version(0);
        self.publish_members();
        // The leavers are no longer in the list: tell them directly.
        let message =
            Message::Members { version: self.members_version, members: self.members.clone(), cluster: self.cluster_id };
        for member in members_before.iter().filter(|member| done.contains(&member.id)) {
            self.out.push(Output::Send { to: member.id, message: message.clone() });
        }
    }

    /// A Leave is lost if the master dies (or the link drops) before acting on it: repeat it
    /// to whoever is master now, or act on it if that is this member.
    pub(super) fn repeat_leave(&mut self, now_ms: u64) {
        if self.is_master() {
            self.rebalance.leaving.insert(self.config.id);
        } else if now_ms.saturating_sub(self.last_leave_request_ms) >= JOIN_RETRY_MS {
            self.last_leave_request_ms = now_ms;
            if let Some(master) = self.master() {
                self.send(master, Message::Leave { member: self.config.id });
            }
        }
    }

    pub(super) fn shutdown(&mut self) {
        if !self.joined || self.leaving {
            self.left = true;
            self.out.push(Output::Left);
            return;
        }
        self.leaving = true;
        if self.members.len() == 1 {
            self.left = true;
            self.out.push(Output::Left);
            return;
        }
        if self.is_master() {
            self.rebalance.leaving.insert(self.config.id);
            if self.takeover.is_none() {
                self.step_rebalance();
            }
        } else if let Some(master) = self.master() {
            self.last_leave_request_ms = self.now_ms;
            self.send(master, Message::Leave { member: self.config.id });
        }
    }
}
