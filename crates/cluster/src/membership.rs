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
//!
//! - **Split-brain merge.** A master looks for other clusters at its member list's addresses
//!   (linked peers outside its member list whose heartbeats name another master), first
//!   `merge_first_run_delay_ms` after it became master, then every `merge_next_run_delay_ms`.
//!   It asks one of them for that cluster's member list ([`Message::MergeCheck`]) and decides as
//!   Hazelcast does: the cluster with fewer data members merges into the other; with as many, the one
//!   whose master's `[host]:port` sorts after the other's. Clusters that share a member do not
//!   merge. The merging master tells its members ([`Message::MergeTo`]); each member
//!   ([`Output::MergeInto`]) leaves its cluster and joins the other's master as a new member,
//!   and the member layer replays its data through the structures' merge policies.
//!
//! This file holds the messages, the node's state and the dispatch of its inputs; the steps are
//! in `join`, `failure` (detection and takeover), `table` (the table's steps, leaves) and `merge`
//! (split-brain merges).

mod failure;
mod join;
mod merge;
mod recovery;
mod table;

pub use recovery::{Recovery, RecoveryOutcome, RecoveryPolicy};

use crate::partition_table::{MemberId, PartitionTable};
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
    /// A lite member: in the member list, never given a partition replica (until promoted).
    pub lite: bool,
    /// host:port clients are told to reach this member at (its client endpoint); empty when
    /// clients use `address`.
    pub client_address: String,
    /// A new master first looks for other clusters to merge with this long after it became
    /// master (`hazelcast.merge.first.run.delay.seconds`).
    pub merge_first_run_delay_ms: u64,
    /// Then every this long (`hazelcast.merge.next.run.delay.seconds`).
    pub merge_next_run_delay_ms: u64,
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
    /// A lite member holds no partition replica: tables are assigned over the others only.
    pub lite: bool,
    /// host:port of its client endpoint when that is not `address` (advanced network, a
    /// public address of its own); empty otherwise.
    pub client_address: String,
}

impl MemberEntry {
    /// A data member not (yet) in a member list, reached by clients at `address`.
    pub fn new(id: MemberId, address: String) -> MemberEntry {
        MemberEntry { id, address, join_version: 0, lite: false, client_address: String::new() }
    }

    /// Where clients reach it.
    pub fn client_address(&self) -> &str {
        if self.client_address.is_empty() {
            &self.address
        } else {
            &self.client_address
        }
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
    /// The sender, a lite member, asks to become a data member (Hazelcast's
    /// `Cluster.promoteLocalLiteMember`).
    Promote {
        member: MemberId,
    },
    /// A master looking for another cluster to merge with asks a member of it for its member
    /// list (`reply: false`); the answer carries the answering member's (`reply: true`).
    MergeCheck {
        reply: bool,
        members: Vec<MemberEntry>,
        cluster: MemberId,
    },
    /// From the master: this cluster merges into the cluster `master` leads.
    MergeTo {
        master: MemberEntry,
    },
    /// To the master of a cluster restarted from disk: the partition table the sender came
    /// back with (None: its disk was empty). See `recovery.rs`.
    Restored {
        table: Option<PartitionTable>,
    },
    /// From the master: whether the receiver keeps the data it loaded, or the reason the
    /// cluster cannot start from its disks.
    Recovery {
        outcome: RecoveryOutcome,
        reason: String,
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
    /// Make this lite member a data member (it then takes its share of partitions).
    Promote,
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
    /// This member left its cluster to merge into the cluster `master` leads (a split brain
    /// healed): its partitions are no longer its own. The member layer keeps what it owned to
    /// merge it into that cluster once it has joined (the node joins by itself).
    MergeInto {
        master: MemberEntry,
    },
    /// A cluster restarted from disk: the master's word on this member's data, given before
    /// the first table (`Failed`: the member stops, with the reason).
    Recovery {
        outcome: RecoveryOutcome,
        reason: String,
    },
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
    /// (Master) when to look for other clusters next.
    merge_due_ms: Option<u64>,
    /// When to ask again the clusters whose seeds the last lookup dialled (their links and
    /// first heartbeats arrive in between).
    merge_followup_ms: Option<u64>,
    /// Recovery from disk, when the member persists (`recovery.rs`).
    recovery: Option<recovery::RecoveryState>,
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
            merge_due_ms: None,
            merge_followup_ms: None,
            recovery: None,
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

    /// The members that hold partitions (the member list without lite members), oldest first.
    pub fn data_members(&self) -> Vec<MemberId> {
        self.members.iter().filter(|member| !member.lite).map(|member| member.id).collect()
    }

    /// This member as its member-list entry says it is (before joining, as configured).
    fn me_entry(&self) -> MemberEntry {
        MemberEntry {
            lite: self.config.lite,
            client_address: self.config.client_address.clone(),
            ..MemberEntry::new(self.config.id, self.config.address.clone())
        }
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
            Input::Promote => self.promote_local(),
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
        self.report_recovery();
        if self.leaving {
            self.repeat_leave(now_ms);
        }
        if self.is_master() {
            self.finish_takeover();
            if self.takeover.is_none() {
                self.step_rebalance();
            }
            self.look_for_clusters();
        } else {
            self.merge_due_ms = None;
            self.merge_followup_ms = None;
        }
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
            Message::Promote { member } => self.promote_member(member),
            Message::MergeCheck { reply: false, .. } => self.answer_merge_check(from),
            Message::MergeCheck { reply: true, members, cluster } => self.merge_check_answered(members, cluster),
            Message::MergeTo { master } => {
                if self.master() == Some(from) && !self.is_master() {
                    self.merge_into(master);
                }
            }
            Message::Restored { table } => self.restored(from, table),
            Message::Recovery { outcome, reason } => self.recovery_told(from, outcome, reason),
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
}
