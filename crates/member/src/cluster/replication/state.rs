//! A reactor's replication state for its partitions: the cluster as the cluster service last
//! published it ([`ClusterState`]), where a partition request runs ([`Route`]), the writes held
//! for synchronous backups, the requests forwarded to other members, and the member messages
//! gathered per peer for one write per loop iteration. What the owner does with this state,
//! per partition, is in `backups.rs`.

use crate::cluster::peer::{self, BackupHeader, ObjectRecord};
use crate::net::connection::ConnectionShared;
use crate::route::fanout::FanOut;
use ferrogrid_cluster::{MemberEntry, MemberId, PartitionTable};
use ferrogrid_protocol::PartitionId;
use std::collections::HashMap;
use std::sync::Arc;
use tracing::debug;

/// Hazelcast's words for a partition request in a cluster of only lite members.
pub const NO_DATA_MEMBER_TEXT: &str = "Partitions can't be assigned since all nodes in the cluster are lite members";

/// What the cluster service publishes to every reactor: members, table and member links.
#[derive(Debug, Clone)]
pub struct ClusterState {
    pub me: MemberId,
    pub members: Vec<MemberEntry>,
    pub members_version: u64,
    /// The founder's uuid (what clients are told as the cluster id).
    pub cluster_id: MemberId,
    pub table: PartitionTable,
    pub links: HashMap<MemberId, Arc<ConnectionShared>>,
    /// A cluster restarted from disk restored the partition table this member's data was
    /// written under (`persistence`): its first table keeps what it loaded. False: a member
    /// that loaded data drops it when the first table arrives.
    pub kept: bool,
}

impl ClusterState {
    pub fn alone(me: MemberId, partition_count: usize) -> ClusterState {
        ClusterState {
            me,
            members: Vec::new(),
            members_version: 0,
            cluster_id: me,
            table: PartitionTable::empty(partition_count),
            links: HashMap::new(),
            kept: false,
        }
    }

    /// A cluster of only lite members (once joined: a member alone before joining is not one).
    pub fn without_data_members(&self) -> bool {
        !self.members.is_empty() && self.members.iter().all(|member| member.lite)
    }

    pub fn is_member(&self, id: MemberId) -> bool {
        self.members.iter().any(|member| member.id == id)
    }

    /// Another member of this cluster with a link: what this member sends cluster data to. A
    /// link alone is not enough: links to the other side of a split stay open through the cut.
    pub fn is_peer(&self, id: MemberId) -> bool {
        id != self.me && self.links.contains_key(&id) && self.is_member(id)
    }

    /// The members' uuids, as clients know them.
    pub fn member_uuids(&self) -> Vec<ferrogrid_protocol::Uuid> {
        self.members.iter().map(|member| ferrogrid_protocol::Uuid::from_u128(member.id.0)).collect()
    }
}

/// Where a partition request runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// This member owns the partition, on reactor `reactor`; `serves`: its local index when it
    /// is this reactor's and its data is here now (None: another reactor's, or being
    /// installed: checked by the reactor that runs it, [`Replication::serving`]).
    Here {
        reactor: usize,
        serves: Option<usize>,
    },
    Member(MemberId),
    /// Nobody can take it now: the client is told to retry.
    Unavailable,
    /// Nobody ever will: the cluster has only lite members.
    NoDataMember,
}

/// A response held until the synchronous backups acknowledged the write.
#[derive(Debug)]
pub(crate) struct PendingWrite {
    pub(crate) connection: Arc<ConnectionShared>,
    pub(crate) correlation_id: i64,
    pub(crate) response: Vec<u8>,
    /// The members asked to acknowledge the write: first the `awaited` ones still awaited,
    /// then those that acknowledged it (applied). One allocation for both: an acknowledgement
    /// moves its member, it allocates nothing.
    pub(crate) asked: Vec<MemberId>,
    pub(crate) awaited: usize,
    pub(crate) refused: bool,
    pub(crate) deadline_ms: i64,
    /// Answers the operation gave other connections (a queue's waiters it served), released
    /// with its own.
    pub(crate) others: Vec<(Arc<ConnectionShared>, Vec<u8>)>,
    /// A backup-aware client was answered at once with the number of backups to wait for:
    /// each backup's acknowledgement is a backup event to it, under this correlation id (its
    /// local backup listener's). Nothing else is written to it when the write is released.
    pub(crate) client_acks: Option<i64>,
    /// The partition written, for a partition's backups (None: a PN counter's replicas, which
    /// are not re-created elsewhere).
    pub(crate) partition: Option<u16>,
    /// Acknowledgements owed by members that left before sending them: each is asked of
    /// another replica of the partition once the table names one (`rebackup.rs`).
    pub(crate) lost: usize,
}

impl PendingWrite {
    /// Whether nothing more is awaited: every member asked acknowledged, and no lost
    /// acknowledgement is still to be asked of another replica.
    pub(crate) fn settled(&self) -> bool {
        self.awaited == 0 && self.lost == 0
    }

    /// The members still awaited.
    pub(crate) fn waiting(&self) -> &[MemberId] {
        &self.asked[..self.awaited]
    }

    /// The members that acknowledged the write (applied).
    pub(crate) fn acked(&self) -> &[MemberId] {
        &self.asked[self.awaited..]
    }

    /// `member` answered: no longer awaited, and, if it `applied` the write, counted as
    /// holding it. Returns whether it was awaited.
    pub(crate) fn answered(&mut self, member: MemberId, applied: bool) -> bool {
        let Some(index) = self.waiting().iter().position(|id| *id == member) else { return false };
        self.awaited -= 1;
        if applied {
            self.asked.swap(index, self.awaited);
        } else {
            self.asked.remove(index);
        }
        true
    }

    /// Stops awaiting the members `gone` says left; returns how many.
    pub(crate) fn forget_departed(&mut self, gone: impl Fn(MemberId) -> bool) -> usize {
        let before = self.awaited;
        for index in (0..self.awaited).rev() {
            if gone(self.asked[index]) {
                self.asked.remove(index);
                self.awaited -= 1;
            }
        }
        before - self.awaited
    }

    /// Awaits `member` too (asked for a lost acknowledgement).
    pub(crate) fn await_member(&mut self, member: MemberId) {
        debug_assert!(!self.asked.contains(&member), "a member is asked once");
        self.asked.insert(self.awaited, member);
        self.awaited += 1;
    }

    /// Appends a backup event for a backup-aware client (one backup acknowledged this write),
    /// under its backup listener's correlation id; nothing for another call.
    pub(crate) fn backup_event(&self, out: &mut Vec<u8>) {
        let Some(listener) = self.client_acks else { return };
        let event = ferrogrid_protocol::codec::BackupEvent { source_invocation_correlation_id: self.correlation_id };
        let at = out.len();
        event.encode(out, listener, -1);
        // Flagged as a backup event too, which the Java client looks for first.
        let flags = u16::from_le_bytes([out[at + 4], out[at + 5]]) | ferrogrid_protocol::frame::BACKUP_EVENT;
        out[at + 4..at + 6].copy_from_slice(&flags.to_le_bytes());
    }
}

/// What one operation's backups hold: its sequence number (0 until a synchronous backup is
/// sent) and the members that must acknowledge it.
#[derive(Debug, Default)]
pub(crate) struct HeldWrite {
    /// Whether the operation wrote a response (only a response can be held).
    pub(crate) answered: bool,
    pub(crate) sequence: u64,
    pub(crate) waiting: Vec<MemberId>,
}

/// A request sent to another member, waiting for its answer.
#[derive(Debug)]
pub enum Forward {
    /// A client's partition request: relay the answer with the client's correlation id.
    Relay { connection: Arc<ConnectionShared>, correlation_id: i64, member: MemberId },
    /// Another member's share of a map-wide request.
    Wide { job: Arc<FanOut>, member: MemberId },
}

/// A reactor's replication state for its partitions.
#[derive(Debug)]
pub struct Replication {
    pub(crate) reactor_index: usize,
    pub(crate) reactor_count: usize,
    pub state: Arc<ClusterState>,
    /// Per local partition: the data of the replica this member holds is complete.
    pub(crate) ready: Vec<bool>,
    /// Per local partition: the table version a complete snapshot was last received for.
    pub(crate) snapshot_version: Vec<u64>,
    /// Per local partition: the member whose snapshot this replica waits for.
    pub(crate) source: Vec<Option<MemberId>>,
    /// Per local partition: when the data was last asked for (while waiting for it).
    pub(crate) asked_ms: Vec<i64>,
    /// Per local partition: members to send the whole partition once it is ready here.
    pub(crate) owed: Vec<Vec<MemberId>>,
    /// Per local partition: this member owns it (map-wide reads count only these).
    pub owned: Vec<bool>,
    /// Whole member messages per peer, flushed once per loop iteration.
    pub(crate) out: HashMap<MemberId, Vec<u8>>,
    /// BACKUP payload being gathered per peer.
    pub(crate) backups: HashMap<MemberId, Vec<u8>>,
    /// One object's changes, encoded once for all its backups (kept for its allocation).
    pub(crate) changes: Vec<u8>,
    /// BACKUP_ACK payload being gathered per peer.
    pub(crate) acks: HashMap<MemberId, Vec<u8>>,
    /// PN_COUNTER_STATE payload being gathered per peer (`engine/pn_counter/`).
    pub(crate) counter_states: HashMap<MemberId, Vec<u8>>,
    pub(crate) pending: HashMap<u64, PendingWrite>,
    /// Per local partition: the sequence of its last write held for backups (0: none yet);
    /// reads that must not see unacknowledged writes wait behind it.
    pub(crate) last_held: Vec<u64>,
    pub(crate) next_sequence: u64,
    pub forwards: HashMap<i64, Forward>,
    pub(crate) next_forward: u64,
    pub(crate) backup_timeout_ms: i64,
    /// The table's backup count (`Config::table_backup_count`): a row with a replica past it
    /// is moving (copy before move), see `queue_backup`.
    pub(crate) table_backups: usize,
    /// A snapshot chunk is sent once it holds this much (`snapshot-chunk-bytes`; entries are
    /// never split).
    pub(crate) snapshot_chunk_bytes: usize,
    /// The versions of this reactor's replicated-map copies and the changes gathered for the
    /// other members (`engine/replicated_map/`).
    pub(crate) replicated: crate::engine::replicated_map::store::Shares,
}

impl Replication {
    pub fn new(
        reactor_index: usize,
        reactor_count: usize,
        local_partitions: usize,
        state: Arc<ClusterState>,
        backup_timeout_ms: u64,
        table_backups: usize,
        snapshot_chunk_bytes: usize,
    ) -> Replication {
        let partition_count = state.table.partition_count() as u16;
        let replicated = crate::engine::replicated_map::store::Shares::new(
            reactor_index,
            reactor_count,
            local_partitions,
            partition_count,
        );
        Replication {
            replicated,
            reactor_index,
            reactor_count,
            state,
            ready: vec![true; local_partitions],
            snapshot_version: vec![0; local_partitions],
            source: vec![None; local_partitions],
            asked_ms: vec![0; local_partitions],
            owed: vec![Vec::new(); local_partitions],
            owned: vec![false; local_partitions],
            out: HashMap::new(),
            backups: HashMap::new(),
            changes: Vec::new(),
            acks: HashMap::new(),
            counter_states: HashMap::new(),
            pending: HashMap::new(),
            last_held: vec![0; local_partitions],
            next_sequence: 1,
            forwards: HashMap::new(),
            next_forward: 1,
            backup_timeout_ms: backup_timeout_ms as i64,
            table_backups,
            snapshot_chunk_bytes,
        }
    }

    /// Whether `partition` exists and belongs to this reactor (what a member message names
    /// must be checked before it indexes anything).
    pub(crate) fn owns_locally(&self, partition: PartitionId) -> bool {
        let partition = partition.0 as usize;
        partition < self.state.table.partition_count() && partition % self.reactor_count == self.reactor_index
    }

    pub(crate) fn local(&self, partition: usize) -> usize {
        partition / self.reactor_count
    }

    pub(crate) fn global(&self, local: usize) -> usize {
        self.reactor_index + local * self.reactor_count
    }

    /// Where a request for `partition` must run.
    pub fn route(&self, partition: PartitionId) -> Route {
        match self.state.table.owner(partition.0 as usize) {
            Some(owner) if owner == self.state.me => {
                // Only this reactor's partitions have their readiness here.
                let (global, local) = (partition.0 as usize, self.local(partition.0 as usize));
                let reactor = global % self.reactor_count;
                let mine = reactor == self.reactor_index;
                Route::Here { reactor, serves: (mine && self.ready[local]).then_some(local) }
            }
            Some(owner) if self.state.links.contains_key(&owner) => Route::Member(owner),
            None if self.state.without_data_members() => Route::NoDataMember,
            // No table yet, or no link to the owner.
            _ => Route::Unavailable,
        }
    }

    /// Whether this member owns `partition` and holds its data.
    pub fn serves(&self, partition: PartitionId) -> bool {
        let partition = partition.0 as usize;
        self.state.table.owner(partition) == Some(self.state.me) && self.ready[self.local(partition)]
    }

    /// The local index of `partition` (one of this reactor's) if this member serves it.
    pub fn serving(&self, partition: PartitionId) -> Option<usize> {
        self.serves(partition).then(|| self.local(partition.0 as usize))
    }

    /// A correlation id for a request forwarded from this reactor (the reactor's index is in
    /// the top byte, so any reactor reading the answer knows where it belongs).
    pub fn forward_id(&mut self) -> i64 {
        let id = ((self.reactor_index as u64) << 56) | (self.next_forward & ((1 << 56) - 1));
        self.next_forward += 1;
        id as i64
    }

    /// Queues a whole member message for `peer`.
    pub fn message_for(&mut self, peer: MemberId) -> &mut Vec<u8> {
        self.out.entry(peer).or_default()
    }

    /// Queues a topic's published messages for every other member (for their listeners that
    /// are not local-only); a member with no link gets nothing, as a member that left would.
    pub(crate) fn relay_topic(&mut self, relay: &crate::cluster::peer::TopicRelay<'_>) {
        if self.state.links.is_empty() {
            return;
        }
        let mut payload = Vec::new();
        relay.encode(&mut payload);
        for peer in self.peers() {
            peer::write(self.message_for(peer), peer::TOPIC, 0, &payload);
        }
    }

    /// Queues a proxy's creation or destruction for every other member.
    pub(crate) fn relay_object(&mut self, event: &crate::cluster::events::ObjectEvent) {
        let mut payload = Vec::new();
        event.encode(&mut payload);
        for peer in self.peers() {
            peer::write(self.message_for(peer), peer::OBJECT, 0, &payload);
        }
    }

    /// The member at the other end of `connection`, if it is a member link.
    pub(crate) fn link_member(&self, connection: &Arc<ConnectionShared>) -> Option<MemberId> {
        self.state.links.iter().find(|(_, link)| Arc::ptr_eq(link, connection)).map(|(member, _)| *member)
    }

    /// The other members of this member's cluster it has a link to. (A link to a member of
    /// another cluster, after a split, carries membership messages only: changes sent to it
    /// while the network was cut would otherwise reach it when the network heals.)
    pub(crate) fn peers(&self) -> Vec<MemberId> {
        self.state.links.keys().copied().filter(|peer| self.state.is_peer(*peer)).collect()
    }

    /// Moves the replicated-map changes gathered since the last call into one message per
    /// other member (the same records for each). Called before anything that must follow
    /// them on a link (a copy, the versions), and by [`Replication::seal`].
    pub(crate) fn seal_replicated(&mut self) {
        if self.replicated.outgoing.is_empty() {
            return;
        }
        for peer in self.peers() {
            let out = self.out.entry(peer).or_default();
            peer::write(out, peer::REPLICATED_CHANGES, 0, &self.replicated.outgoing);
        }
        self.replicated.outgoing.clear();
    }

    /// Moves gathered backup and acknowledgement payloads into whole messages.
    pub(crate) fn seal(&mut self) {
        self.seal_replicated();
        for (peer, payload) in self.backups.iter_mut().filter(|(_, payload)| !payload.is_empty()) {
            peer::write(self.out.entry(*peer).or_default(), peer::BACKUP, 0, payload);
            payload.clear();
        }
        for (peer, payload) in self.counter_states.iter_mut().filter(|(_, payload)| !payload.is_empty()) {
            peer::write(self.out.entry(*peer).or_default(), peer::PN_COUNTER_STATE, 0, payload);
            payload.clear();
        }
        for (peer, payload) in self.acks.iter_mut().filter(|(_, payload)| !payload.is_empty()) {
            peer::write(self.out.entry(*peer).or_default(), peer::BACKUP_ACK, 0, payload);
            payload.clear();
        }
    }

    /// Queues one object's changes (`object.body`, encoded once) for every backup of
    /// `partition`: the first `sync_backups` replicas synchronously, under `held`'s sequence
    /// number; the rest (extra replicas while a partition migrates, backups another object
    /// wants) asynchronously.
    pub(crate) fn queue_backup(
        &mut self,
        partition: usize,
        object: &ObjectRecord<'_>,
        sync_backups: usize,
        held: &mut HeldWrite,
    ) {
        let replicas = *self.state.table.replicas(partition);
        for (index, member) in replicas[1..].iter().enumerate() {
            let Some(member) = *member else { continue };
            if member == self.state.me {
                continue;
            }
            // A replica past the table's backups is a member the partition is moving to
            // (copy before move): the next table may make it the owner, and a write it
            // refused because it already has that table would be lost with this owner's copy.
            // So every write waits for it, whatever the object's backups, and its refusal
            // makes the client retry.
            let sync = index < sync_backups || index >= self.table_backups;
            if sync && held.answered && held.sequence == 0 {
                held.sequence = self.next_held_sequence();
            }
            let sequence = if sync { held.sequence } else { 0 };
            let header =
                BackupHeader { partition: partition as u16, table_version: self.state.table.version, sequence };
            peer::put_backup(self.backups.entry(member).or_default(), header, object);
            if sequence != 0 && !held.waiting.contains(&member) {
                held.waiting.push(member);
            }
        }
    }

    /// A sequence number for a write whose answer waits for acknowledgements: this reactor's
    /// index in the top byte, so that any reactor reading an acknowledgement knows where it
    /// belongs.
    pub(crate) fn next_held_sequence(&mut self) -> u64 {
        let sequence = ((self.reactor_index as u64) << 56) | self.next_sequence;
        self.next_sequence += 1;
        sequence
    }

    /// Queues the acknowledgement of backup `sequence` for `owner` (nothing for 0, an
    /// asynchronous backup).
    pub(crate) fn acknowledge(&mut self, owner: MemberId, sequence: u64, applied: bool) {
        if sequence != 0 {
            peer::put_ack(self.acks.entry(owner).or_default(), sequence, applied);
        }
    }

    /// Writes every queued member message: one send per peer.
    pub fn flush(&mut self) -> usize {
        self.seal();
        let mut written = 0;
        for (peer, bytes) in self.out.iter_mut().filter(|(_, bytes)| !bytes.is_empty()) {
            match self.state.links.get(peer) {
                Some(link) => written += link.send(bytes),
                None => debug!(peer = ?peer, bytes = bytes.len(), "no link to a member: messages dropped"),
            }
            bytes.clear();
        }
        written
    }

    /// Every partition as a new member's: no replica, nothing received, owed or gathered for
    /// backups, and an empty table at once (a member that leaves its cluster to merge into
    /// another: a write that reaches this reactor after it kept its entries must be refused,
    /// not applied to a partition it no longer owns). What goes on across the merge: members
    /// and links, messages already queued, writes waiting for backups (answered when their
    /// wait times out) and forwarded requests.
    pub(crate) fn reset_for_merge(&mut self) {
        let table = PartitionTable::empty(self.state.table.partition_count());
        let fresh = Replication::new(
            self.reactor_index,
            self.reactor_count,
            self.ready.len(),
            Arc::new(ClusterState { table, ..(*self.state).clone() }),
            self.backup_timeout_ms as u64,
            self.table_backups,
            self.snapshot_chunk_bytes,
        );
        let old = std::mem::replace(self, fresh);
        self.out = old.out;
        self.pending = old.pending;
        self.last_held = old.last_held;
        self.next_sequence = old.next_sequence;
        self.forwards = old.forwards;
        self.next_forward = old.next_forward;
    }

    /// The lowest table version for which every replica here is complete, or None.
    pub fn ready_version(&self) -> Option<u64> {
        self.ready.iter().all(|ready| *ready).then_some(self.state.table.version)
    }
}
