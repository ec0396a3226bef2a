//! Joining: links to the member list's addresses, the join request to a known master (or
//! founding a cluster when there is none), and the member lists the master sends.

use super::{MemberEntry, Message, Node, Output, Peer, Rebalance, JOIN_RETRY_MS, RECONNECT_INTERVAL_MS};
use crate::partition_table::MemberId;
use std::collections::BTreeSet;

impl Node {
    pub(super) fn link_up(&mut self, id: MemberId, address: String) {
        self.attempts.remove(&address);
        self.unreachable.remove(&address);
        let now = self.now_ms;
        let peer = self.peers.entry(id).or_insert_with(|| Peer {
            address: address.clone(),
            linked: true,
            last_heard_ms: now,
            connect_failures: 0,
            master: None,
        });
        peer.linked = true;
        peer.address = address;
        peer.last_heard_ms = now;
        peer.connect_failures = 0;
        // Say who we are at once, rather than at the next heartbeat.
        let heartbeat = self.heartbeat();
        self.send(id, heartbeat);
        if self.is_master() && self.members.iter().any(|member| member.id == id) {
            // A member we lost the link to is back: make sure it has the latest state.
            self.send(
                id,
                Message::Members {
                    version: self.members_version,
                    members: self.members.clone(),
                    cluster: self.cluster_id,
                },
            );
            self.send(id, Message::Table(self.table.clone()));
        } else if self.master() == Some(id) && !self.is_master() {
            // A Ready sent on the link that dropped may be lost: repeat it.
            if self.local_ready_version >= self.table.version {
                self.send(id, Message::Ready { version: self.local_ready_version });
            }
        }
    }

    /// Asks for links to every member this member has no link to, and, until it is in a
    /// cluster, to every seed. A joined member dials members by the addresses they announce
    /// only: a member with a public address is listed under another address than the seed
    /// that reached it, and dialling the seed again would open a second link to it (or, for
    /// a seed naming this member's own bind address, a link to itself) every attempt.
    pub(super) fn connect_missing(&mut self) {
        let linked: BTreeSet<&str> =
            self.peers.values().filter(|peer| peer.linked).map(|peer| peer.address.as_str()).collect();
        let mut wanted: Vec<String> = if self.joined { Vec::new() } else { self.config.seeds.clone() };
        wanted.extend(self.members.iter().map(|member| member.address.clone()));
        wanted.sort();
        wanted.dedup();
        let wanted: Vec<String> = wanted
            .into_iter()
            .filter(|address| *address != self.config.address && !linked.contains(address.as_str()))
            .collect();
        for address in wanted {
            let due = self.attempts.get(&address).is_none_or(|last| self.now_ms >= last + RECONNECT_INTERVAL_MS);
            if due {
                self.attempts.insert(address.clone(), self.now_ms);
                self.out.push(Output::Connect { address });
            }
        }
    }

    pub(super) fn try_join(&mut self, now_ms: u64, started: u64) {
        let seeds_elsewhere = self.config.seeds.iter().any(|seed| *seed != self.config.address);
        // A master heard of through a link that is up (one a lost peer named may be dead).
        let known_master = self
            .peers
            .values()
            .filter(|peer| peer.linked)
            .filter_map(|peer| peer.master.clone())
            .find(|master| master.id != self.config.id);
        if let Some(master) = known_master {
            if now_ms.saturating_sub(self.last_join_request_ms) >= JOIN_RETRY_MS || self.last_join_request_ms == 0 {
                self.last_join_request_ms = now_ms.max(1);
                let linked = self.peers.get(&master.id).is_some_and(|peer| peer.linked);
                if linked {
                    let member = self.me_entry();
                    self.send(master.id, Message::JoinRequest { member });
                } else if !self.attempts.contains_key(&master.address) {
                    self.attempts.insert(master.address.clone(), now_ms);
                    self.out.push(Output::Connect { address: master.address.clone() });
                }
            }
            return;
        }
        if seeds_elsewhere && now_ms.saturating_sub(started) < self.config.join_wait_ms {
            return;
        }
        // Nobody has a cluster: the lowest address founds it. Seeds not reached yet count
        // unless their last connection attempt failed, so that members started together do
        // not found two clusters; after three join waits only linked members count.
        let me = self.config.address.as_str();
        let linked = self.peers.values().filter(|peer| peer.linked).map(|peer| peer.address.as_str());
        let patient = now_ms.saturating_sub(started) < self.config.join_wait_ms.saturating_mul(3);
        let seeds =
            self.config.seeds.iter().map(String::as_str).filter(|seed| patient && !self.unreachable.contains(*seed));
        let lowest = linked.chain(seeds).chain(std::iter::once(me)).min().expect("self");
        if lowest == me {
            self.found();
        }
    }

    fn found(&mut self) {
        self.cluster_id = self.config.id;
        // 1 for a member that never saw a list (as in Hazelcast), else above what it saw.
        let version = self.next_members_version(0);
        let me = MemberEntry { join_version: version, ..self.me_entry() };
        self.members = vec![me];
        self.joined = true;
        self.log(format!("no cluster found: {} is the master of a new cluster", self.config.address));
        self.out.push(Output::Joined { master: self.config.id });
        self.out.push(Output::MembersChanged { version, members: self.members.clone() });
        // The first table waits for members reaching us to join (at most three join waits:
        // they learn of us by the heartbeat below and ask at once), so that members started
        // together get partitions and backups from the start: a table made without them
        // leaves partitions with no backup until migrations add one, and a write acknowledged
        // in that window dies with this member. Until then requests are answered "retry".
        self.first_table_due_ms = self.now_ms + self.config.join_wait_ms.saturating_mul(3);
        let heartbeat = self.heartbeat();
        let linked: Vec<MemberId> = self.peers.iter().filter(|(_, peer)| peer.linked).map(|(id, _)| *id).collect();
        for id in linked {
            self.send(id, heartbeat.clone());
        }
        self.step_rebalance();
    }

    pub(super) fn join_request(&mut self, member: MemberEntry) {
        if !self.is_master() {
            return;
        }
        if self.rebalance.leaving.contains(&self.config.id) {
            return;
        }
        if !self.members.iter().any(|entry| entry.id == member.id) {
            // An old incarnation at the same address (restarted before it was found dead) is
            // gone for good: removed as a crashed member is, its backups promoted, so that no
            // table step keeps replicas on it.
            let old: Vec<MemberId> =
                self.members.iter().filter(|entry| entry.address == member.address).map(|entry| entry.id).collect();
            if !old.is_empty() {
                self.remove_members(&old, 0);
            }
            let join_version = self.next_members_version(0);
            let lite = if member.lite { " as a lite member" } else { "" };
            let text = format!(
                "member {} joined{lite} (uuid {:032x}, join version {join_version})",
                member.address, member.id.0
            );
            self.log(text);
            self.members.push(MemberEntry { join_version, ..member });
            self.ensure_peers();
            self.publish_members();
        } else {
            self.send(
                member.id,
                Message::Members {
                    version: self.members_version,
                    members: self.members.clone(),
                    cluster: self.cluster_id,
                },
            );
        }
        self.send(member.id, Message::Table(self.table.clone()));
    }

    pub(super) fn members_update(
        &mut self,
        from: MemberId,
        version: u64,
        members: Vec<MemberEntry>,
        cluster: MemberId,
    ) {
        // Even a list this member ignores numbers versions a master used.
        let highest_join = members.iter().map(|member| member.join_version).max().unwrap_or(0);
        self.saw_version(version.max(highest_join));
        if version <= self.members_version && self.joined {
            return;
        }
        // From the master of the new list, or from ours handing the cluster over as it leaves.
        if members.first().map(|member| member.id) != Some(from) && self.master() != Some(from) {
            return;
        }
        let contains_me = members.iter().any(|member| member.id == self.config.id);
        if !contains_me {
            if self.leaving {
                self.left = true;
                self.joined = false;
                self.log("left the cluster: partitions handed off".into());
                self.out.push(Output::Left);
            } else if self.joined {
                self.log(format!("removed from the cluster by {from:?}: joining again"));
                self.joined = false;
                self.members.clear();
                self.members_version = 0;
            }
            return;
        }
        let was_master = self.is_master();
        let first_join = !self.joined;
        let old_master = self.master();
        self.members = members;
        self.members_version = version;
        self.cluster_id = cluster;
        self.joined = true;
        self.ensure_peers();
        if first_join {
            self.log(format!("joined the cluster of {} members", self.members.len()));
            self.out.push(Output::Joined { master: from });
        }
        if was_master && !self.is_master() {
            self.rebalance = Rebalance::default();
            self.takeover = None;
        }
        if !first_join && old_master != Some(from) && self.master() == Some(from) && from != self.config.id {
            // A new master: it builds its first table from the newest of the survivors'.
            self.send(from, Message::Table(self.table.clone()));
        }
        self.out.push(Output::MembersChanged { version, members: self.members.clone() });
    }

    /// Tracks every member as a peer, linked or not, so that one never reached is suspected too.
    fn ensure_peers(&mut self) {
        let now = self.now_ms;
        for member in self.members.iter().filter(|member| member.id != self.config.id) {
            self.peers.entry(member.id).or_insert_with(|| Peer {
                address: member.address.clone(),
                linked: false,
                last_heard_ms: now,
                connect_failures: 0,
                master: None,
            });
        }
    }
}
