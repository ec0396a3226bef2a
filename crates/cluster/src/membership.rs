//! Membership: join, heartbeats, failure detection, the master, and the partition table the
//! master publishes, step by step, while migrations run. No IO and no clock: the member feeds
//! [`Input`]s (messages, link changes, ticks with the time) and carries out the [`Output`]s.
//!
//! - **Join.** A member links to every address of its member list. Links exchange heartbeats
//!   that name the sender's master. A member that hears of a master asks it to join; the
//!   master appends it to the member list (oldest first, so the master is always the first),
//!   bumps the list's version, records that version as the newcomer's join version, and sends
//!   the list to everyone. If nobody has a master once the
//!   join wait has passed, the member with the lowest address among those it reaches becomes
//!   master, so members started together form one cluster.
//! - **Failure detection.** A member is suspected when nothing was heard from it for
//!   `max_no_heartbeat_ms`, or its link is down and reconnecting failed
//!   `CONNECT_FAILURES_TO_SUSPECT` times in a row (a killed process refuses connections at
//!   once). The master removes suspects; when the master itself is suspected, the oldest
//!   member left takes over.
//! - **Partition table.** When members leave, the master first publishes the table without
//!   them (backups promoted, no data copied), then moves towards the balanced [`assign`]ment
//!   at most `max_parallel_migrations` partitions per step. A partition gaining a member takes
//!   two steps: the newcomer is added as an extra replica (and gets the data), then the row
//!   takes its final shape, so no step drops a copy before its replacement has the data. Each step is a new table version;
//!   the next step waits until every member reported [`Message::Ready`] for it (it holds the
//!   data that version gives it).
//! - **Graceful leave.** A leaving member asks the master; the master moves every replica off
//!   it and then drops it from the member list, which is the leaver's signal to exit.
//! - **Join versions.** A member's join version (in [`MemberEntry`]) is unique for the
//!   cluster's life because member-list versions only grow: each list a master makes is
//!   numbered above every version this member has seen, in any member list or heartbeat, and
//!   a new master numbers its first list 100 past that (the old master's last lists may have
//!   reached others and not it). A member that rejoins (a restart is a new member; one
//!   removed while alive joins again) is admitted at a new version.

use crate::partition_table::{assign, MemberId, PartitionTable, MAX_REPLICAS};
use std::collections::{BTreeMap, BTreeSet};

/// Consecutive failed connection attempts after which a member whose link dropped is suspected.
pub const CONNECT_FAILURES_TO_SUSPECT: u32 = 3;
/// Pause between connection attempts to one address.
pub const RECONNECT_INTERVAL_MS: u64 = 300;
/// How often a member that is not yet in a cluster repeats its join request.
const JOIN_RETRY_MS: u64 = 1_000;
/// How far a member taking over from a failed master numbers its first member list and table
/// past its own: the last ones the old master sent may have reached others but not it, and the
/// new master's must be newer everywhere (a member ignores a version it already has).
const TAKEOVER_VERSION_GAP: u64 = 100;
/// How long a new master waits for the survivors' tables before it publishes its own.
const TAKEOVER_WAIT_MS: u64 = 1_000;

/// What a member knows of itself and the timings it runs with.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    pub id: MemberId,
    /// host:port, as other members reach it.
    pub address: String,
    /// The tcp-ip member list (may include this member's own address).
    pub seeds: Vec<String>,
    pub partition_count: usize,
    /// Replicas besides the owner (sync + async backups of the most demanding map).
    pub backup_count: usize,
    pub heartbeat_interval_ms: u64,
    pub max_no_heartbeat_ms: u64,
    /// How long a member looks for an existing cluster before it may found one.
    pub join_wait_ms: u64,
    pub max_parallel_migrations: usize,
}

/// A member as the member list carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberEntry {
    pub id: MemberId,
    pub address: String,
    /// The member-list version at which the master admitted this member (Hazelcast's
    /// "member list join version"; 0 outside a member list: in a join request, or a member
    /// not yet admitted). Never the same for two members in the cluster's life, including
    /// one that rejoins (a new join) and across master takeovers; flake id generators take
    /// it as their node id.
    pub join_version: u64,
}

impl MemberEntry {
    /// A member not (yet) in a member list.
    pub fn new(id: MemberId, address: String) -> MemberEntry {
        MemberEntry { id, address, join_version: 0 }
    }
}

/// Messages between members' cluster services.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// Sent every heartbeat interval on every link; names the sender's master.
    Heartbeat {
        master: Option<MemberEntry>,
        members_version: u64,
    },
    JoinRequest {
        member: MemberEntry,
    },
    /// The member list, oldest (the master) first, and the cluster's id (its founder's uuid:
    /// the same on every member, new when a cluster is formed anew).
    Members {
        version: u64,
        members: Vec<MemberEntry>,
        cluster: MemberId,
    },
    Table(PartitionTable),
    /// The sender holds everything table `version` gives it.
    Ready {
        version: u64,
    },
    /// The sender is shutting down and asks for its replicas to be moved off it.
    Leave {
        member: MemberId,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Tick {
        now_ms: u64,
    },
    /// A link to `id` is up (identities exchanged and checked by the IO layer).
    LinkUp {
        id: MemberId,
        address: String,
    },
    LinkDown {
        id: MemberId,
    },
    ConnectFailed {
        address: String,
    },
    Received {
        from: MemberId,
        message: Message,
    },
    /// This member holds everything the table of `version` gives it.
    LocalReady {
        version: u64,
    },
    /// Leave the cluster gracefully.
    Shutdown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Connect {
        address: String,
    },
    Send {
        to: MemberId,
        message: Message,
    },
    /// Oldest first; this member is in it.
    MembersChanged {
        version: u64,
        members: Vec<MemberEntry>,
    },
    TableChanged(PartitionTable),
    /// (Master) members died holding these partitions' owners: the table that promotes their
    /// survivors follows. For partition-lost listeners.
    PartitionsLost(Vec<crate::PartitionLoss>),
    /// A member found a cluster or founded one.
    Joined {
        master: MemberId,
    },
    /// The leave completed (or the member was dropped while leaving): stop now.
    Left,
    Log(String),
}

#[derive(Debug, Clone)]
struct Peer {
    address: String,
    linked: bool,
    last_heard_ms: u64,
    connect_failures: u32,
    /// The master its heartbeats named.
    master: Option<MemberEntry>,
}

/// A new master's first act: before it publishes a table it asks the survivors for theirs.
/// The old master's last step may have reached some members and not this one; a table built
/// from an older one would take partitions from owners that accepted writes under the newer.
#[derive(Debug)]
struct Takeover {
    /// Members whose table has not arrived yet.
    awaiting: BTreeSet<MemberId>,
    /// When to go on without them.
    deadline_ms: u64,
    version_gap: u64,
}

/// The master's progress towards a balanced table.
#[derive(Debug, Default)]
struct Rebalance {
    /// Members whose Ready for the current table version is still missing.
    awaiting: BTreeSet<MemberId>,
    /// Members that asked to leave.
    leaving: BTreeSet<MemberId>,
    /// The balanced table being stepped towards and the members it was computed for. Kept
    /// until they change: recomputing it from every partial step can undo the previous step.
    target: Option<(Vec<MemberId>, PartitionTable)>,
}

/// One member's view of the cluster and the state machine that moves it.
#[derive(Debug)]
pub struct Node {
    config: NodeConfig,
    now_ms: u64,
    started_ms: Option<u64>,
    peers: BTreeMap<MemberId, Peer>,
    /// Addresses being (re)connected, with the time of the last attempt.
    attempts: BTreeMap<String, u64>,
    /// Addresses whose last connection attempt failed.
    unreachable: BTreeSet<String>,
    /// (Founder) when the first table is published even if linked members have not joined.
    first_table_due_ms: u64,
    members: Vec<MemberEntry>,
    members_version: u64,
    /// The highest member-list version this member has seen anywhere (its own lists, lists
    /// it ignored, heartbeats, join versions): a list it makes is numbered above it.
    highest_version_seen: u64,
    /// The founder's uuid (see [`Message::Members`]).
    cluster_id: MemberId,
    joined: bool,
    last_join_request_ms: u64,
    last_heartbeat_ms: u64,
    table: PartitionTable,
    rebalance: Rebalance,
    takeover: Option<Takeover>,
    leaving: bool,
    /// When the Leave request was last sent (it is repeated until the master acts on it).
    last_leave_request_ms: u64,
    left: bool,
    /// The highest version this member reported LocalReady for.
    local_ready_version: u64,
    out: Vec<Output>,
}

impl Node {
    pub fn new(config: NodeConfig) -> Node {
        let table = PartitionTable::empty(config.partition_count);
        Node {
            config,
            now_ms: 0,
            started_ms: None,
            peers: BTreeMap::new(),
            attempts: BTreeMap::new(),
            unreachable: BTreeSet::new(),
            first_table_due_ms: 0,
            members: Vec::new(),
            members_version: 0,
            highest_version_seen: 0,
            cluster_id: MemberId(0),
            joined: false,
            last_join_request_ms: 0,
            last_heartbeat_ms: 0,
            table,
            rebalance: Rebalance::default(),
            takeover: None,
            leaving: false,
            last_leave_request_ms: 0,
            left: false,
            local_ready_version: 0,
            out: Vec::new(),
        }
    }

    pub fn id(&self) -> MemberId {
        self.config.id
    }

    pub fn is_joined(&self) -> bool {
        self.joined
    }

    pub fn master(&self) -> Option<MemberId> {
        self.joined.then(|| self.members.first().map(|member| member.id)).flatten()
    }

    pub fn is_master(&self) -> bool {
        self.master() == Some(self.config.id)
    }

    pub fn members(&self) -> &[MemberEntry] {
        &self.members
    }

    /// The cluster's id: its founder's uuid (0 before joining).
    pub fn cluster_id(&self) -> MemberId {
        self.cluster_id
    }

    pub fn members_version(&self) -> u64 {
        self.members_version
    }

    /// This member's join version in the member list it has (None before it joined).
    pub fn join_version(&self) -> Option<u64> {
        let me = self.members.iter().find(|member| member.id == self.config.id);
        me.filter(|_| self.joined).map(|member| member.join_version)
    }

    /// Numbers a new member list: above every version seen, plus `gap`.
    fn next_members_version(&mut self, gap: u64) -> u64 {
        let version = self.members_version.max(self.highest_version_seen) + 1 + gap;
        self.members_version = version;
        self.highest_version_seen = version;
        version
    }

    /// Notes versions heard of (a list's, its join versions, a heartbeat's).
    fn saw_version(&mut self, version: u64) {
        self.highest_version_seen = self.highest_version_seen.max(version);
    }

    pub fn table(&self) -> &PartitionTable {
        &self.table
    }

    /// Whether the master is still moving partitions (a table step waits for Ready).
    pub fn is_migrating(&self) -> bool {
        !self.rebalance.awaiting.is_empty() || self.takeover.is_some()
    }

    /// Feeds one input; returns what to do, in order.
    pub fn handle(&mut self, input: Input) -> Vec<Output> {
        match input {
            Input::Tick { now_ms } => self.tick(now_ms),
            Input::LinkUp { id, address } => self.link_up(id, address),
            Input::LinkDown { id } => {
                if let Some(peer) = self.peers.get_mut(&id) {
                    peer.linked = false;
                    peer.connect_failures = 0;
                }
            }
            Input::ConnectFailed { address } => {
                self.unreachable.insert(address.clone());
                for peer in self.peers.values_mut().filter(|peer| peer.address == address && !peer.linked) {
                    peer.connect_failures += 1;
                }
            }
            Input::Received { from, message } => {
                if let Some(peer) = self.peers.get_mut(&from) {
                    peer.last_heard_ms = self.now_ms;
                }
                self.receive(from, message);
            }
            Input::LocalReady { version } => {
                self.local_ready_version = self.local_ready_version.max(version);
                if self.is_master() {
                    self.ready(self.config.id, version);
                } else if let Some(master) = self.master() {
                    self.send(master, Message::Ready { version });
                }
            }
            Input::Shutdown => self.shutdown(),
        }
        std::mem::take(&mut self.out)
    }

    fn log(&mut self, text: String) {
        self.out.push(Output::Log(text));
    }

    fn send(&mut self, to: MemberId, message: Message) {
        if to != self.config.id {
            self.out.push(Output::Send { to, message });
        }
    }

    fn broadcast(&mut self, message: Message) {
        let targets: Vec<MemberId> = self.members.iter().map(|member| member.id).collect();
        for to in targets {
            self.send(to, message.clone());
        }
    }

    fn link_up(&mut self, id: MemberId, address: String) {
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

    fn heartbeat(&self) -> Message {
        let master = self.master().and_then(|id| self.members.iter().find(|member| member.id == id).cloned());
        Message::Heartbeat { master, members_version: self.members_version }
    }

    fn tick(&mut self, now_ms: u64) {
        self.now_ms = now_ms;
        let started = *self.started_ms.get_or_insert(now_ms);
        self.connect_missing();
        if now_ms.saturating_sub(self.last_heartbeat_ms) >= self.config.heartbeat_interval_ms {
            self.last_heartbeat_ms = now_ms;
            let heartbeat = self.heartbeat();
            let linked: Vec<MemberId> = self.peers.iter().filter(|(_, peer)| peer.linked).map(|(id, _)| *id).collect();
            for id in linked {
                self.send(id, heartbeat.clone());
            }
        }
        if self.left {
            return;
        }
        if !self.joined {
            self.try_join(now_ms, started);
            return;
        }
        self.detect_failures();
        if self.leaving {
            self.repeat_leave(now_ms);
        }
        if self.is_master() {
            self.finish_takeover();
            if self.takeover.is_none() {
                self.step_rebalance();
            }
        }
    }

    /// Asks for links to every seed and member this member has no link to.
    fn connect_missing(&mut self) {
        let linked: BTreeSet<&str> =
            self.peers.values().filter(|peer| peer.linked).map(|peer| peer.address.as_str()).collect();
        let mut wanted: Vec<String> = self.config.seeds.clone();
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

    fn try_join(&mut self, now_ms: u64, started: u64) {
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
                    let member = MemberEntry::new(self.config.id, self.config.address.clone());
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
        let me = MemberEntry { id: self.config.id, address: self.config.address.clone(), join_version: version };
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

    fn receive(&mut self, from: MemberId, message: Message) {
        match message {
            Message::Heartbeat { master, members_version } => {
                self.saw_version(members_version);
                let names_master = master.is_some();
                if let Some(peer) = self.peers.get_mut(&from) {
                    peer.master = master;
                }
                if names_master && !self.joined && !self.left {
                    // Ask to join now rather than at the next tick's retry.
                    let started = self.started_ms.unwrap_or(self.now_ms);
                    self.try_join(self.now_ms, started);
                }
            }
            Message::JoinRequest { member } => self.join_request(member),
            Message::Members { version, members, cluster } => self.members_update(from, version, members, cluster),
            Message::Table(table) => {
                if self.is_master() {
                    // Only a survivor's answer while this member takes over; it is used if it
                    // is newer than the table here (the table goes out at the next tick).
                    let Some(takeover) = &mut self.takeover else { return };
                    if !takeover.awaiting.remove(&from) {
                        return;
                    }
                    if table.version > self.table.version {
                        self.log(format!("taking over from v{} of the partition table, a survivor's", table.version));
                        self.table = table.clone();
                        self.out.push(Output::TableChanged(table));
                    }
                } else if table.version > self.table.version && self.joined {
                    self.table = table.clone();
                    self.out.push(Output::TableChanged(table));
                }
            }
            Message::Ready { version } => {
                if self.is_master() {
                    self.ready(from, version);
                }
            }
            Message::Leave { member } => {
                if self.is_master()
                    && self.members.iter().any(|entry| entry.id == member)
                    && self.rebalance.leaving.insert(member)
                {
                    self.log(format!("member {member:?} is leaving: moving its partitions off it"));
                }
            }
        }
    }

    fn join_request(&mut self, member: MemberEntry) {
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
            let text =
                format!("member {} joined (uuid {:032x}, join version {join_version})", member.address, member.id.0);
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

    fn members_update(&mut self, from: MemberId, version: u64, members: Vec<MemberEntry>, cluster: MemberId) {
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

    fn detect_failures(&mut self) {
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
            let member = MemberEntry::new(self.config.id, self.config.address.clone());
            self.send(next.id, Message::JoinRequest { member });
        }
    }

    fn remove_members(&mut self, gone: &[MemberId], version_gap: u64) {
        let before = self.members.len();
        for id in gone {
            if let Some(member) = self.members.iter().find(|member| member.id == *id) {
                let text = format!("member {} removed (uuid {:032x})", member.address, member.id.0);
                self.out.push(Output::Log(text));
            }
            self.peers.remove(id);
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
    fn finish_takeover(&mut self) {
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

    fn publish_members(&mut self) {
        let message =
            Message::Members { version: self.members_version, members: self.members.clone(), cluster: self.cluster_id };
        self.broadcast(message);
        self.out.push(Output::MembersChanged { version: self.members_version, members: self.members.clone() });
    }

    /// Sends a new table version to every member and waits for all to be ready for it.
    fn publish_table(&mut self, table: PartitionTable) {
        self.table = table.clone();
        self.rebalance.awaiting = self.members.iter().map(|member| member.id).collect();
        self.broadcast(Message::Table(table.clone()));
        self.out.push(Output::TableChanged(table));
    }

    fn ready(&mut self, from: MemberId, version: u64) {
        if version >= self.table.version {
            self.rebalance.awaiting.remove(&from);
        }
        if self.rebalance.awaiting.is_empty() && self.takeover.is_none() {
            self.step_rebalance();
        }
    }

    /// The master's next table step, once the previous one is done everywhere.
    fn step_rebalance(&mut self) {
        if self.table.version == 0 {
            let joining = self.peers.iter().any(|(id, peer)| {
                peer.linked
                    && peer.master.as_ref().is_none_or(|master| master.id == self.config.id)
                    && !self.members.iter().any(|member| member.id == *id)
            });
            if joining && self.now_ms < self.first_table_due_ms {
                return;
            }
            let ids: Vec<MemberId> = self.members.iter().map(|member| member.id).collect();
            let mut table = assign(&self.table, &ids, self.config.backup_count);
            table.version = 1;
            self.publish_table(table);
            return;
        }
        if !self.rebalance.awaiting.is_empty() {
            return;
        }
        let staying: Vec<MemberId> =
            self.members.iter().map(|member| member.id).filter(|id| !self.rebalance.leaving.contains(id)).collect();
        if staying.is_empty() {
            // The last member leaves: nothing to hand off to.
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
    fn repeat_leave(&mut self, now_ms: u64) {
        if self.is_master() {
            self.rebalance.leaving.insert(self.config.id);
        } else if now_ms.saturating_sub(self.last_leave_request_ms) >= JOIN_RETRY_MS {
            self.last_leave_request_ms = now_ms;
            if let Some(master) = self.master() {
                self.send(master, Message::Leave { member: self.config.id });
            }
        }
    }

    fn shutdown(&mut self) {
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
