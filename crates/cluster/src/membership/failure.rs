//! Failure detection: suspects removed by the master, and the oldest member left taking over
//! when the master itself is suspected.

use super::{
    Message, Node, Output, Takeover, CONNECT_FAILURES_TO_SUSPECT, JOIN_RETRY_MS, TAKEOVER_VERSION_GAP, TAKEOVER_WAIT_MS,
};
use crate::partition_table::MemberId;
use std::collections::BTreeSet;

impl Node {
    pub(super) fn detect_failures(&mut self) {
        let timeout = self.config.max_no_heartbeat_ms;
        let suspects: Vec<MemberId> = self
            .members
            .iter()
            .filter(|member| member.id != self.config.id)
            .filter(|member| {
                self.peers.get(&member.id).is_some_and(|peer| {
                    self.now_ms.saturating_sub(peer.last_heard_ms) > timeout
                        || (!peer.linked && peer.connect_failures >= CONNECT_FAILURES_TO_SUSPECT)
                })
            })
            .map(|member| member.id)
            .collect();
        if suspects.is_empty() {
            return;
        }
        let master = self.master();
        let master_suspected = master.is_some_and(|master| suspects.contains(&master));
        if self.is_master() || master_suspected {
            // The oldest member not suspected takes charge.
            let oldest = self.members.iter().find(|member| !suspects.contains(&member.id)).map(|member| member.id);
            if oldest != Some(self.config.id) {
                if master_suspected {
                    self.ask_next_master();
                }
                return;
            }
            if master_suspected {
                self.log("the master is gone: this member is the master now".into());
            }
            self.remove_members(&suspects, if master_suspected { TAKEOVER_VERSION_GAP } else { 0 });
        }
    }

    /// Our master is gone and a linked member names another one: ask that one to admit us. The
    /// old master may have died before telling the others we joined; then the next master
    /// never sends us its list. (If it already counts us, it just sends its list and table.)
    fn ask_next_master(&mut self) {
        let old = self.master();
        let next = self
            .peers
            .values()
            .filter(|peer| peer.linked)
            .filter_map(|peer| peer.master.clone())
            .find(|master| Some(master.id) != old && master.id != self.config.id);
        let due = self.now_ms.saturating_sub(self.last_join_request_ms) >= JOIN_RETRY_MS;
        if let (Some(next), true) = (next, due) {
            self.last_join_request_ms = self.now_ms.max(1);
            let member = self.me_entry();
            self.send(next.id, Message::JoinRequest { member });
        }
    }

    pub(super) fn remove_members(&mut self, gone: &[MemberId], version_gap: u64) {
        let before = self.members.len();
        for id in gone {
            if let Some(member) = self.members.iter().find(|member| member.id == *id) {
                let text = format!("member {} removed (uuid {:032x})", member.address, member.id.0);
                self.out.push(Output::Log(text));
            }
            // A peer whose link is still up stays known (its master cleared): a network cut
            // that dropped its packets may heal, and its heartbeats then name its cluster's
            // master, which is how a split brain is found (`merge.rs`).
            match self.peers.get_mut(id) {
                Some(peer) if peer.linked => peer.master = None,
                _ => {
                    self.peers.remove(id);
                }
            }
        }
        self.members.retain(|member| !gone.contains(&member.id));
        if self.members.len() == before {
            return;
        }
        self.next_members_version(version_gap);
        self.publish_members();
        for id in gone {
            self.rebalance.awaiting.remove(id);
            self.rebalance.leaving.remove(id);
        }
        if version_gap > 0 || self.takeover.is_some() {
            // Taking over (or still): the table goes out once the survivors sent theirs.
            let survivors: BTreeSet<MemberId> =
                self.members.iter().map(|member| member.id).filter(|id| *id != self.config.id).collect();
            let deadline_ms = self.now_ms + TAKEOVER_WAIT_MS;
            let takeover =
                self.takeover.get_or_insert(Takeover { awaiting: survivors.clone(), deadline_ms, version_gap });
            takeover.awaiting = takeover.awaiting.intersection(&survivors).copied().collect();
            return;
        }
        self.promote();
    }

    /// A table without the members that are gone: backups promoted at once (it copies nothing).
    fn promote(&mut self) {
        let gap = self.takeover.take().map_or(0, |takeover| takeover.version_gap);
        let ids: BTreeSet<MemberId> = self.members.iter().map(|member| member.id).collect();
        let gone: Vec<MemberId> = (0..self.table.partition_count())
            .flat_map(|partition| self.table.replicas(partition).iter().flatten().copied().collect::<Vec<_>>())
            .filter(|id| !ids.contains(id))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let promoted = self.table.without(&gone);
        let losses = self.table.losses(&gone);
        if !losses.is_empty() {
            self.out.push(Output::PartitionsLost(losses));
        }
        if promoted != self.table || gap > 0 {
            let mut table = promoted;
            table.version = self.table.version + 1 + gap;
            self.publish_table(table);
        }
    }

    /// Publishes the takeover table once every survivor's table arrived, or at the deadline.
    pub(super) fn finish_takeover(&mut self) {
        let Some(takeover) = &self.takeover else { return };
        if !takeover.awaiting.is_empty() && self.now_ms < takeover.deadline_ms {
            return;
        }
        if !takeover.awaiting.is_empty() {
            let missing = takeover.awaiting.len();
            self.log(format!("taking over without the tables of {missing} survivor(s): no answer in time"));
        }
        self.promote();
    }
}
