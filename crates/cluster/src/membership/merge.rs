//! Split-brain merges: a master finding another cluster at its member list's addresses, the
//! decision of which cluster merges into which (Hazelcast's rule), and a member leaving its
//! cluster to join the other.

use super::{MemberEntry, Message, Node, Output, Rebalance};
use crate::partition_table::{MemberId, PartitionTable};
use std::collections::BTreeSet;

/// How long after dialling other clusters' seeds their masters are asked again.
const MERGE_FOLLOWUP_MS: u64 = 2_000;

impl Node {
    /// (Master, each tick) When due, dials the seeds (the configured member list) it has no
    /// link to, as Hazelcast's joiner searches its member list for other clusters, and asks one
    /// linked member of every other cluster heard of for its member list; the clusters behind
    /// the seeds just dialled are asked once more a moment later, when their links are up.
    pub(super) fn look_for_clusters(&mut self) {
        let due = *self.merge_due_ms.get_or_insert(self.now_ms + self.config.merge_first_run_delay_ms);
        if self.is_migrating() || self.leaving {
            return;
        }
        if self.merge_followup_ms.is_some_and(|at| self.now_ms >= at) {
            self.merge_followup_ms = None;
            self.ask_other_clusters();
        }
        if self.now_ms < due {
            return;
        }
        self.merge_due_ms = Some(self.now_ms + self.config.merge_next_run_delay_ms);
        if self.dial_other_seeds() {
            self.merge_followup_ms = Some(self.now_ms + MERGE_FOLLOWUP_MS);
        }
        self.ask_other_clusters();
    }

    /// Dials every seed that is neither this member, nor a member of its cluster, nor linked;
    /// whether it dialled any.
    fn dial_other_seeds(&mut self) -> bool {
        let known: BTreeSet<&str> = (self.peers.values().filter(|peer| peer.linked).map(|peer| peer.address.as_str()))
            .chain(self.members.iter().map(|member| member.address.as_str()))
            .chain([self.config.address.as_str()])
            .collect();
        let seeds: Vec<String> =
            self.config.seeds.iter().filter(|seed| !known.contains(seed.as_str())).cloned().collect();
        for address in &seeds {
            self.attempts.insert(address.clone(), self.now_ms);
            self.out.push(Output::Connect { address: address.clone() });
        }
        !seeds.is_empty()
    }

    /// Asks one linked member of every other cluster heard of for its member list.
    fn ask_other_clusters(&mut self) {
        let ours: BTreeSet<MemberId> = self.members.iter().map(|member| member.id).collect();
        let mut asked = BTreeSet::new();
        let others: Vec<(MemberId, MemberId)> = self
            .peers
            .iter()
            .filter(|(id, peer)| peer.linked && !ours.contains(id))
            .filter_map(|(id, peer)| peer.master.as_ref().map(|master| (*id, master.id)))
            .filter(|(_, master)| !ours.contains(master))
            .collect();
        for (peer, master) in others {
            if asked.insert(master) {
                let check =
                    Message::MergeCheck { reply: false, members: self.members.clone(), cluster: self.cluster_id };
                self.send(peer, check);
            }
        }
    }

    /// A master of another cluster asked for this cluster's member list.
    pub(super) fn answer_merge_check(&mut self, from: MemberId) {
        if self.joined && !self.leaving {
            let answer = Message::MergeCheck { reply: true, members: self.members.clone(), cluster: self.cluster_id };
            self.send(from, answer);
        }
    }

    /// The member list of another cluster: merge into it if Hazelcast's rule says this one
    /// merges.
    /// (Both sides of a split keep the founder's cluster id: only the member lists tell them
    /// apart, `cluster` is for the logs.)
    pub(super) fn merge_check_answered(&mut self, members: Vec<MemberEntry>, cluster: MemberId) {
        let Some(their_master) = members.first().cloned() else { return };
        if !self.is_master() || self.is_migrating() || self.leaving {
            return;
        }
        let shared = members
            .iter()
            .any(|theirs| self.members.iter().any(|ours| ours.id == theirs.id || ours.address == theirs.address));
        if shared {
            // A partial split: the other side still counts a member of ours; it removes it first.
            let text = format!(
                "cannot merge into the cluster {:032x} of {}: it lists a member of this cluster",
                cluster.0, their_master.address
            );
            self.log(text);
            return;
        }
        let data = |members: &[MemberEntry]| members.iter().filter(|member| !member.lite).count();
        if !should_merge(data(&self.members), &self.config.address, data(&members), &their_master.address) {
            return;
        }
        self.log(format!(
            "merging into the cluster of {} ({} members; this cluster has {})",
            their_master.address,
            members.len(),
            self.members.len()
        ));
        for member in self.members.clone() {
            self.send(member.id, Message::MergeTo { master: their_master.clone() });
        }
        self.merge_into(their_master);
    }

    /// Leaves this member's cluster to join the one `master` leads: no member list, no table,
    /// no cluster; the join starts again (at once: `master` is known).
    pub(super) fn merge_into(&mut self, master: MemberEntry) {
        self.log(format!("leaving the cluster to merge into the cluster of {}", master.address));
        self.joined = false;
        self.members.clear();
        self.members_version = 0;
        self.cluster_id = MemberId(0);
        self.table = PartitionTable::empty(self.config.partition_count);
        self.rebalance = Rebalance::default();
        self.takeover = None;
        self.merge_due_ms = None;
        self.local_ready_version = 0;
        self.first_table_due_ms = 0;
        for peer in self.peers.values_mut() {
            peer.master = None;
        }
        if let Some(peer) = self.peers.get_mut(&master.id) {
            peer.master = Some(master.clone());
        }
        self.last_join_request_ms = 0;
        self.out.push(Output::MergeInto { master: master.clone() });
        if self.peers.get(&master.id).is_some_and(|peer| peer.linked) {
            self.last_join_request_ms = self.now_ms.max(1);
            let member = MemberEntry::new(self.config.id, self.config.address.clone());
            self.send(master.id, Message::JoinRequest { member });
        } else {
            self.out.push(Output::Connect { address: master.address.clone() });
        }
    }
}

/// Hazelcast's rule (`ClusterJoinManager.shouldMerge`): the cluster with fewer data members
/// (lite members do not count) merges into the other; with as many, the one whose master's
/// `[host]:port` sorts after the other's.
pub fn should_merge(our_size: usize, our_master: &str, their_size: usize, their_master: &str) -> bool {
    match our_size.cmp(&their_size) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => bracketed(our_master) > bracketed(their_master),
    }
}

/// `host:port` as Hazelcast compares addresses: `[host]:port`.
fn bracketed(address: &str) -> String {
    match address.rsplit_once(':') {
        Some((host, port)) => format!("[{}]:{port}", host.trim_start_matches('[').trim_end_matches(']')),
        None => format!("[{address}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smaller_cluster_merges_and_a_tie_goes_by_the_masters_address() {
        assert!(should_merge(1, "127.0.0.4:5701", 2, "127.0.0.2:5701"));
        assert!(!should_merge(2, "127.0.0.2:5701", 1, "127.0.0.4:5701"));
        assert!(should_merge(2, "127.0.0.3:5701", 2, "127.0.0.2:5701"));
        assert!(!should_merge(2, "127.0.0.2:5701", 2, "127.0.0.3:5701"));
        // As strings: "[127.0.0.1]:5702" sorts after "[127.0.0.1]:12000".
        assert!(should_merge(1, "127.0.0.1:5702", 1, "127.0.0.1:12000"));
        assert_eq!(bracketed("10.0.0.1:5701"), "[10.0.0.1]:5701");
    }
}
