//! What a partition's owner does for its replicas, and a replica for its owner: backups,
//! replica snapshots on table changes, and relaying forwarded requests' answers. The state it
//! works on is a reactor's [`Replication`] (`state.rs`); routing to the owner member is
//! `Replication::route`.
//!
//! - **Backups.** After an operation on a partition this member owns, each object it changed
//!   (a map, …) writes its changes (`PartitionObject::write_changes`), and they are sent to
//!   the partition's backup members (batched per peer per loop iteration: one BACKUP message
//!   per peer however many operations ran), where the same object applies them. Nothing here
//!   knows an object's records. If the object has synchronous backups, the operation's
//!   response is held under a sequence number until every synchronous backup acknowledged
//!   it. A backup that refuses (it does not consider the sender the owner) turns the response
//!   into PartitionMigratingException, which clients retry. A `backup-timeout` without an
//!   answer releases it; an acknowledgement lost with a backup member that left is asked of
//!   the partition's new backup (`rebackup.rs`).
//! - **Table changes.** Each new table version is applied per partition, comparing the
//!   member's replica index before and after: an old owner sends its data to a new owner that
//!   had no replica; a new owner that had no replica waits for it (its partition answers
//!   PartitionMigratingException meanwhile); an owner that is new, or whose backups are new,
//!   sends them the whole partition (every object's `write_snapshot`, in bounded chunks); a
//!   member that lost its replica drops the data. Readiness (every replica this member holds
//!   has its data) is reported to the cluster service, which tells the master.
//! - **Forwarding.** A request for a partition another member owns is sent to that member with
//!   a correlation id naming this reactor; its answer is relayed to the client with the
//!   original id. Nothing waits: the pending request is a map entry.

use crate::cluster::peer::{self, ObjectRecord, SnapshotWriter};
use crate::cluster::replication::state::{ClusterState, Forward, HeldWrite, PendingWrite};
use crate::engine::request::{ErrorKind, OpError};
use crate::net::connection::ConnectionShared;
use crate::partition::owner::{Call, PartitionOwner};
use crate::route::wire;
use ferrogrid_cluster::{MemberId, PartitionTable};
use ferrogrid_protocol::error::{self, write_error_response, ErrorHolder};
use ferrogrid_protocol::{Message, PartitionId};
use std::sync::Arc;
use tracing::{debug, warn};

impl PartitionOwner {
    /// After an operation on `partition` (which this member owns): sends every object's
    /// recorded changes to the backups and, if any is synchronous, holds the response written
    /// since `start` until they acknowledged it.
    pub fn replicate(
        &mut self,
        partition: PartitionId,
        call: &Call<'_>,
        out: &mut Vec<u8>,
        start: usize,
        others: Vec<(Arc<ConnectionShared>, Vec<u8>)>,
    ) {
        let partition = partition.0 as usize;
        let local = self.replication.local(partition);
        if !self.partitions[local].tracks_changes() {
            self.send_others(others);
            return;
        }
        let mut held = HeldWrite { answered: out.len() > start, ..HeldWrite::default() };
        let appended = self.write_changes(partition, local, &mut held);
        if held.sequence == 0 || held.waiting.is_empty() {
            self.send_others(others);
            self.hold_for_disk(local, appended, call.connection, out, start);
        } else {
            let client_acks = Self::answer_now(call, out, start, held.waiting.len());
            let response = if client_acks.is_some() { Vec::new() } else { out.split_off(start) };
            let deadline_ms = self.now_ms + self.replication.backup_timeout_ms;
            let pending = PendingWrite {
                connection: call.connection.clone(),
                correlation_id: call.correlation_id,
                response,
                awaited: held.waiting.len(),
                asked: held.waiting,
                refused: false,
                deadline_ms,
                others,
                client_acks,
                partition: Some(partition as u16),
                lost: 0,
            };
            self.replication.pending.insert(held.sequence, pending);
            self.replication.last_held[local] = held.sequence;
            // A backup-aware client's answer went on: it waits for the disk here.
            self.hold_for_disk(local, appended, call.connection, out, start);
        }
    }

    /// Takes every object's recorded changes in `partition` (local index `local`): queued
    /// for its backups (synchronous ones under `held`'s sequence) and, when the member
    /// persists the object, appended to the partition's log. Returns whether a record was
    /// appended, and whether one wants a sync.
    fn write_changes(&mut self, partition: usize, local: usize, held: &mut HeldWrite) -> Option<bool> {
        let mut body = std::mem::take(&mut self.replication.changes);
        let mut appended: Option<bool> = None;
        for (kind, name, object) in self.partitions[local].objects_mut() {
            let object = object.as_object_mut();
            body.clear();
            object.write_changes(&mut body);
            if !body.is_empty() {
                let record = ObjectRecord { kind, name, body: &body };
                self.replication.queue_backup(partition, &record, object.sync_backup_count(), held);
                if let (Some(persisting), Some(fsync)) = (self.persisting.as_mut(), object.persistence()) {
                    persisting.logs.append_change(local, &record, fsync);
                    appended = Some(appended.unwrap_or(false) | fsync);
                }
            }
        }
        self.replication.changes = body;
        appended
    }

    /// Sends the changes the objects of `partition` (which this member owns) recorded outside
    /// a request (a transaction's commit, a fan-out share) to its backups, asynchronously:
    /// no one's answer waits for them.
    pub fn send_changes(&mut self, partition: PartitionId) {
        let partition = partition.0 as usize;
        let local = self.replication.local(partition);
        if !self.partitions[local].tracks_changes() {
            return;
        }
        // Asynchronous for backups: no sequence, since nothing was answered (`answered`).
        let mut held = HeldWrite::default();
        self.write_changes(partition, local, &mut held);
    }

    /// For a backup-aware call whose answer is `out[start..]`: writes the number of backups
    /// to wait for into the answer's header, which then goes out now (Hazelcast's backup
    /// acknowledgements to the client), and returns the client's backup-listener correlation
    /// id. None (the answer is held until the backups acknowledged) for any other call.
    fn answer_now(call: &Call<'_>, out: &mut [u8], start: usize, backups: usize) -> Option<i64> {
        const TYPE_AT: usize = 6;
        const BACKUP_ACKS_AT: usize = 18;
        let listener = call.connection.backup_listener().filter(|_| call.backup_aware)?;
        let answer = out.get_mut(start..)?;
        let answer_type = answer.get(TYPE_AT..TYPE_AT + 4)?;
        if answer_type != call.response_type.0.to_le_bytes() || answer.len() <= BACKUP_ACKS_AT {
            return None; // an error, not the operation's response
        }
        answer[BACKUP_ACKS_AT] = u8::try_from(backups).ok()?;
        Some(listener)
    }

    /// Holds a read's answer (`out[start..]`) until the backups of its partition's last write
    /// still waiting for them acknowledge (released with it, as the answers it gave waiters
    /// are), so that a reader never sees what a failover could take back: a reliable topic's
    /// listener would otherwise read a message its backup never got, and after the owner's
    /// loss skip or repeat the sequence the new owner gives the next one.
    pub(crate) fn hold_behind_writes(
        &mut self,
        partition: PartitionId,
        connection: &Arc<ConnectionShared>,
        out: &mut Vec<u8>,
        start: usize,
    ) {
        let local = self.replication.local(partition.0 as usize);
        let sequence = self.replication.last_held[local];
        if out.len() == start {
            return;
        }
        if let Some(pending) = self.replication.pending.get_mut(&sequence) {
            pending.others.push((connection.clone(), out.split_off(start)));
        }
    }

    /// Writes answers an operation gave other connections (not held for backups).
    pub(crate) fn send_others(&mut self, others: Vec<(Arc<ConnectionShared>, Vec<u8>)>) {
        for (connection, answer) in others {
            if !connection.is_closed() {
                self.outbox.buffer(&connection).extend_from_slice(&answer);
            }
        }
    }

    /// Applies backup records (all for this reactor's partitions) from `from`, and queues the
    /// acknowledgements of their sequence numbers: one per operation, "applied" only if every
    /// record of that operation was.
    pub fn apply_backups(&mut self, from: MemberId, records: &[u8]) {
        let mut reader = peer::Backups::new(records);
        // The operation being read: (sequence, applied so far).
        let mut operation: Option<(u64, bool)> = None;
        loop {
            let record = match reader.next_record() {
                Ok(Some(record)) => record,
                Ok(None) => break,
                Err(error) => {
                    warn!(%error, "malformed backup records from a member: ignored");
                    // The operation read last may have lost records: let its client retry.
                    if let Some((_, applied)) = &mut operation {
                        *applied = false;
                    }
                    break;
                }
            };
            let Some(applied) = self.apply_backup_record(from, &record) else { continue };
            let sequence = record.header.sequence;
            match &mut operation {
                Some((current, all_applied)) if *current == sequence => *all_applied &= applied,
                _ => {
                    if let Some((previous, all_applied)) = operation.replace((sequence, applied)) {
                        self.replication.acknowledge(from, previous, all_applied);
                    }
                }
            }
        }
        if let Some((sequence, applied)) = operation {
            self.replication.acknowledge(from, sequence, applied);
        }
    }

    /// Applies one backup record if this member takes backups of its partition from `from`
    /// (it considers `from` the owner, or `from`'s table is newer). Returns whether it applied
    /// it, or None for a partition that is not this reactor's (nothing to acknowledge).
    fn apply_backup_record(&mut self, from: MemberId, record: &peer::BackupRecord<'_>) -> Option<bool> {
        let (header, object) = (record.header, record.object);
        let partition = header.partition as usize;
        if !self.replication.owns_locally(PartitionId(header.partition)) {
            warn!(partition, "backup record for a partition this reactor does not own: ignored");
            return None;
        }
        let table = &self.replication.state.table;
        if table.owner(partition) != Some(from) && header.table_version <= table.version {
            return Some(false);
        }
        let local = self.replication.local(partition);
        let target = self.replica_object(local, object.kind, object.name).as_object_mut();
        if let Err(error) = target.apply_backup(object.body) {
            warn!(%error, partition, kind = ?object.kind, "malformed backup body from a member: refused");
            return Some(false);
        }
        let persistence = target.persistence();
        // The acknowledgement goes out after the flush of this turn (it writes the logs first).
        self.persist_changes(local, &object, persistence);
        Some(true)
    }

    /// Acknowledgements from `from` for writes this reactor holds.
    pub fn on_acks(&mut self, from: MemberId, acks: &[(u64, bool)]) {
        for (sequence, applied) in acks {
            let Some(pending) = self.replication.pending.get_mut(sequence) else { continue };
            let was_waiting = pending.answered(from, *applied);
            if pending.client_acks.is_some() && !applied && !pending.refused && !pending.connection.is_closed() {
                // The client was answered already and waits for this backup: the partition
                // moved while it was written, so the write may be lost with the old owner. As
                // for a held answer, it gets "retry" (the client takes it over the answer).
                let text = "the partition moved while a backup was written; retry";
                let holder = ErrorHolder { code: error::PARTITION_MIGRATING, message: Some(text) };
                write_error_response(self.outbox.buffer(&pending.connection), pending.correlation_id, &[holder]);
            }
            pending.refused |= !applied;
            if *applied && was_waiting {
                pending.backup_event(self.outbox.buffer(&pending.connection));
            }
            if pending.settled() {
                let pending = self.replication.pending.remove(sequence).expect("present");
                self.release(pending);
            }
        }
    }

    pub(crate) fn release(&mut self, mut pending: PendingWrite) {
        // The waiters an operation served got their item or room on the owner whatever the
        // backups said.
        self.send_others(std::mem::take(&mut pending.others));
        if pending.connection.is_closed() || pending.client_acks.is_some() {
            // A backup-aware client was answered already; a backup that did not acknowledge
            // is its to notice (after its operation backup timeout).
            return;
        }
        let local = pending.partition.map(|partition| self.replication.local(usize::from(partition)));
        let disk_failure = local.and_then(|local| self.disk_failure(local));
        let out = self.outbox.buffer(&pending.connection);
        if let Some(reason) = disk_failure {
            wire::write_error(out, pending.correlation_id, &crate::persistence::logs::not_persisted(&reason));
        } else if pending.refused {
            let text = "the partition moved while a backup was written; retry";
            let holder = ErrorHolder { code: error::PARTITION_MIGRATING, message: Some(text) };
            write_error_response(out, pending.correlation_id, &[holder]);
        } else {
            out.extend_from_slice(&pending.response);
        }
    }

    /// Asks again, at most once a second per partition, for the data of replicas still
    /// waiting for it (a snapshot lost with a link, or never sent in a race, must not leave a
    /// replica, and the migration waiting on it, stuck).
    fn ask_again(&mut self) {
        let now = self.now_ms;
        for local in 0..self.partitions.len() {
            let Some(source) = self.replication.source[local].filter(|_| !self.replication.ready[local]) else {
                continue;
            };
            if self.replication.asked_ms[local] == 0 {
                // The first second is the normal hand-off's.
                self.replication.asked_ms[local] = now;
                continue;
            }
            if now - self.replication.asked_ms[local] < 1_000 {
                continue;
            }
            self.replication.asked_ms[local] = now;
            let partition = self.replication.global(local) as u16;
            debug!(partition, ?source, "asking again for a partition's data");
            peer::write(self.replication.message_for(source), peer::SNAPSHOT_REQUEST, 0, &partition.to_le_bytes());
        }
    }

    /// Another member waits for `partition`'s data: send it if this member holds a complete
    /// replica (the owner, or a replica the owner's data came from).
    pub fn on_snapshot_request(&mut self, from: MemberId, partition: PartitionId) {
        if !self.replication.owns_locally(partition) {
            return;
        }
        let partition = partition.0 as usize;
        let local = self.replication.local(partition);
        let me = self.replication.state.me;
        let holds = self.replication.state.table.replicas(partition).contains(&Some(me));
        if holds && self.replication.ready[local] {
            self.send_snapshot(partition, from);
        }
    }

    /// Releases held writes whose backups all acknowledged (acknowledgements lost with members
    /// that left asked of other replicas first, `rebackup.rs`) or timed out.
    pub fn check_pending(&mut self) {
        self.ask_again();
        self.replicated_tick();
        let now = self.now_ms;
        let state = self.replication.state.clone();
        self.count_lost_acks();
        self.rebackup();
        let due: Vec<u64> = self
            .replication
            .pending
            .iter()
            .filter_map(|(sequence, pending)| (pending.settled() || pending.deadline_ms <= now).then_some(*sequence))
            .collect();
        for sequence in due {
            let pending = self.replication.pending.remove(&sequence).expect("present");
            if !pending.settled() {
                let (waiting, lost) = (pending.waiting(), pending.lost);
                warn!(?waiting, lost, "backup acknowledgement timed out: answering anyway");
            }
            self.release(pending);
        }
        // Forwarded requests to members that left will not be answered: let clients retry. A
        // member removed while its link stays open (a network split: TCP keeps the connection
        // through the cut) has left as well; it would answer only after the heal.
        let gone: Vec<i64> = self
            .replication
            .forwards
            .iter()
            .filter(|(_, forward)| {
                let member = match forward {
                    Forward::Relay { member, .. } | Forward::Wide { member, .. } => *member,
                };
                !state.is_peer(member)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            match self.replication.forwards.remove(&id).expect("present") {
                Forward::Relay { connection, correlation_id, .. } => {
                    // It may or may not have run there: the client retries it only if it may
                    // (a read, or with redo-operation), as for a connection lost to a member.
                    let text = "the member owning the partition left before answering; the request may or may not \
                                have run";
                    let holder = ErrorHolder { code: error::TARGET_DISCONNECTED, message: Some(text) };
                    write_error_response(self.outbox.buffer(&connection), correlation_id, &[holder]);
                    self.outbox.answered(&connection);
                }
                Forward::Wide { job, .. } => {
                    if let Some(response) = self.run_share(&job, crate::engine::wide::Share::Member(None)) {
                        job.deliver(&response);
                    }
                }
            }
        }
    }

    /// An answer from another member to a request this reactor forwarded.
    pub fn on_forward_response(&mut self, bytes: &[u8]) {
        let Ok(message) = Message::parse(bytes) else { return };
        let id = message.correlation_id();
        match self.replication.forwards.remove(&id) {
            Some(Forward::Relay { connection, correlation_id, .. }) => {
                if connection.is_closed() {
                    connection.end_in_flight(1);
                    return;
                }
                let out = self.outbox.buffer(&connection);
                let start = out.len();
                out.extend_from_slice(bytes);
                out[start + 10..start + 18].copy_from_slice(&correlation_id.to_le_bytes());
                self.outbox.answered(&connection);
            }
            Some(Forward::Wide { job, .. }) => {
                if let Some(response) = self.run_share(&job, crate::engine::wide::Share::Member(Some(message))) {
                    job.deliver(&response);
                }
            }
            None => debug!(id, "answer to an unknown forwarded request: ignored"),
        }
    }

    /// Installs a snapshot chunk for one of this reactor's partitions.
    pub fn install_snapshot(&mut self, from: MemberId, payload: &[u8]) {
        let (header, objects) = match peer::read_snapshot(payload) {
            Ok(parsed) => parsed,
            Err(error) => {
                warn!(%error, "malformed snapshot from a member: ignored");
                return;
            }
        };
        let partition = header.partition as usize;
        if !self.replication.owns_locally(PartitionId(header.partition)) {
            warn!(partition, "snapshot for a partition this reactor does not own: ignored");
            return;
        }
        let local = self.replication.local(partition);
        if self.replication.serves(PartitionId(header.partition))
            && self.replication.owed[local].is_empty()
            && header.first
        {
            // An owner with complete data never takes a copy from elsewhere.
            if self.replication.state.table.owner(partition) == Some(self.replication.state.me) {
                debug!(partition, ?from, "snapshot for a partition this member owns and holds: ignored");
                return;
            }
        }
        if header.first {
            self.partitions[local].drop_all();
            self.replaced_from_member(local);
        }
        for object in objects {
            let target = self.replica_object(local, object.kind, object.name).as_object_mut();
            if let Err(error) = target.apply_snapshot(object.body) {
                // Not marked complete: a replica still waiting asks for the partition again.
                warn!(%error, partition, ?from, kind = ?object.kind, "malformed snapshot body from a member: ignored");
                return;
            }
        }
        if header.last {
            // The replica is whole: its log restarts from a snapshot of it.
            self.persist_replace(local);
            let version = header.table_version;
            self.replication.snapshot_version[local] = self.replication.snapshot_version[local].max(version);
            if !self.replication.ready[local] {
                self.replication.ready[local] = true;
                debug!(partition, ?from, version, "replica received");
                self.send_owed(local);
            }
        }
    }

    /// Sends the whole partition to every member owed it, if this member is its owner and
    /// holds its data.
    fn send_owed(&mut self, local: usize) {
        if !self.replication.ready[local] || self.replication.owed[local].is_empty() {
            return;
        }
        let partition = self.replication.global(local);
        let owed = std::mem::take(&mut self.replication.owed[local]);
        for member in owed {
            self.send_snapshot(partition, member);
        }
    }

    /// Queues partition `partition`'s whole data (every object's entries) for `member`, in
    /// chunks of about `snapshot-chunk-bytes`.
    fn send_snapshot(&mut self, partition: usize, member: MemberId) {
        let local = self.replication.local(partition);
        let version = self.replication.state.table.version;
        let out = self.replication.out.entry(member).or_default();
        let chunk_bytes = self.replication.snapshot_chunk_bytes;
        let mut writer = SnapshotWriter::new(out, partition as u16, version, chunk_bytes);
        for (kind, name, object) in self.partitions[local].objects() {
            writer.begin_object(kind, name);
            object.as_object().write_snapshot(&mut writer);
        }
        let (chunks, entries) = writer.finish();
        debug!(partition, ?member, chunks, entries, "replica sent");
    }

    /// Applies a new cluster state: members, links, and the table's consequences for each of
    /// this reactor's partitions.
    pub fn apply_cluster_state(&mut self, state: Arc<ClusterState>) {
        // Backups gathered under the old table go out before any snapshot of the new one.
        self.replication.seal();
        let previous = std::mem::replace(&mut self.replication.state, state.clone());
        if state.table.version != previous.table.version {
            let me = state.me;
            // A cluster restarted from disk: the first table follows the one the loaded data
            // was written under, as if that had been the table before.
            let restored = if previous.table.version == 0 { self.first_table_from_disk(state.kept) } else { None };
            let before = restored.as_ref().unwrap_or(&previous.table);
            for local in 0..self.partitions.len() {
                let partition = self.replication.global(local);
                self.transition(partition, local, me, before, &state);
            }
        }
        let joined: Vec<MemberId> = state
            .members
            .iter()
            .map(|member| member.id)
            .filter(|id| *id != state.me && !previous.is_member(*id))
            .collect();
        self.replicated_members_joined(&joined);
        self.check_pending();
    }

    /// Applies one table change to one of this reactor's partitions, by this member's replica
    /// index before and after (the table in ARCHITECTURE.md, "Replication").
    fn transition(
        &mut self,
        partition: usize,
        local: usize,
        me: MemberId,
        before: &PartitionTable,
        state: &ClusterState,
    ) {
        let after = &state.table;
        let old_replicas = before.replicas(partition);
        let new_replicas = after.replicas(partition);
        let was = old_replicas.iter().position(|member| *member == Some(me));
        let now = new_replicas.iter().position(|member| *member == Some(me));
        let (old_owner, new_owner) = (before.owner(partition), after.owner(partition));
        self.replication.owned[local] = now == Some(0);
        if (was == Some(0)) != (now == Some(0)) {
            // Taken over or given up: near caches must see the partition's sequences start over
            // (`engine/invalidation.rs`).
            self.listeners.metadata.forget_partition(partition as u16);
            // And query caches their events' (`engine/map/query_cache.rs`).
            let owner_died = now == Some(0) && old_owner.is_some_and(|owner| !state.is_member(owner));
            let moved = (was == Some(0), owner_died);
            self.listeners.query_caches_partition_moved(&mut self.outbox, partition as u16, moved);
        }
        self.replicated_table_change(partition, (was, now), before);
        // The old owner hands its data to a new owner that held no replica; requests waiting
        // on its locks go to the new owner (clients retry on this answer).
        if was == Some(0) && now != Some(0) {
            let mut ids = Vec::new();
            for (_, _, object) in self.partitions[local].objects_mut() {
                ids.extend(object.as_object_mut().take_waiting());
            }
            let waiting = self.partitions[local].waiters.take_all(ids);
            for reply_to in waiting.iter().filter(|reply_to| !reply_to.connection.is_closed()) {
                let text = "the partition moved to another member; retry";
                let failure = OpError::new(ErrorKind::PartitionMigrating, text);
                wire::write_error(self.outbox.buffer(&reply_to.connection), reply_to.correlation_id, &failure);
            }
            if let Some(new_owner) = new_owner.filter(|owner| !old_replicas.contains(&Some(*owner))) {
                self.send_snapshot(partition, new_owner);
            }
            self.replication.owed[local].clear();
        }
        match now {
            None => {
                if was.is_some() {
                    self.leave_replica(local);
                }
                self.partitions[local].set_track_changes(false);
                self.replication.ready[local] = true;
            }
            Some(0) => self.serve_as_owner(partition, local, was, before, state),
            Some(_) => {
                let owner_changed = old_owner != new_owner;
                if was.is_none() || owner_changed {
                    let received = self.replication.snapshot_version[local] >= after.version;
                    self.replication.ready[local] = received || new_owner.is_none();
                    self.replication.source[local] = new_owner;
                }
                self.partitions[local].set_track_changes(false);
                self.replication.owed[local].clear();
            }
        }
        self.settle_source(partition, local, state);
    }

    /// This member owns `partition` in `state`'s table (`was`: its replica index before): a
    /// promoted backup serves at once, a member new to the partition waits for the old
    /// owner's copy (if the old owner is alive), and the backups (all of them under a new
    /// owner, else the new ones) are owed the whole partition.
    fn serve_as_owner(
        &mut self,
        partition: usize,
        local: usize,
        was: Option<usize>,
        before: &PartitionTable,
        state: &ClusterState,
    ) {
        let (me, after) = (state.me, &state.table);
        let (old_replicas, new_replicas) = (before.replicas(partition), after.replicas(partition));
        let became_owner = was != Some(0);
        if became_owner {
            match was {
                Some(_) if !self.replication.ready[local] => {
                    warn!(partition, "promoted to owner before this replica was complete: data may be missing");
                    self.replication.ready[local] = true;
                }
                Some(_) => {}
                None => {
                    let old_owner = before.owner(partition);
                    let source = old_owner.filter(|owner| state.is_member(*owner) && *owner != me);
                    let received = self.replication.snapshot_version[local] >= after.version;
                    if source.is_none() && old_owner.is_some() {
                        warn!(partition, "no surviving replica of this partition: it starts empty");
                    }
                    self.replication.ready[local] = source.is_none() || received;
                    self.replication.source[local] = source;
                    if source.is_none() {
                        self.drop_replica(local);
                    }
                }
            }
        }
        for backup in new_replicas[1..].iter().flatten() {
            let new_backup = !old_replicas.contains(&Some(*backup));
            if (became_owner || new_backup) && !self.replication.owed[local].contains(backup) {
                self.replication.owed[local].push(*backup);
            }
        }
        self.replication.owed[local].retain(|member| new_replicas.contains(&Some(*member)));
        // Changes are recorded for the backups, and for the log when the member persists.
        let track = new_replicas[1..].iter().any(Option::is_some) || self.persists();
        self.partitions[local].set_track_changes(track);
        self.send_owed(local);
    }

    /// After a table change: a complete replica waits for nobody; one still waiting for a
    /// member that left goes on with what it has (and sends what it owes).
    fn settle_source(&mut self, partition: usize, local: usize, state: &ClusterState) {
        if self.replication.ready[local] {
            self.replication.source[local] = None;
            self.replication.asked_ms[local] = 0;
        } else if let Some(source) = self.replication.source[local] {
            if !state.is_member(source) {
                warn!(partition, ?source, "the member this replica waited for left: going on with what is here");
                self.replication.ready[local] = true;
                self.replication.source[local] = None;
                self.send_owed(local);
            }
        }
    }

    /// Logs (at debug) a summary of what this reactor holds after a table change, with the
    /// partitions it still waits for and from whom.
    pub fn log_replicas(&self) {
        if !tracing::enabled!(tracing::Level::DEBUG) {
            return;
        }
        let owned = self.replication.owned.iter().filter(|owned| **owned).count();
        let waiting = self.replication.ready.iter().filter(|ready| !**ready).count();
        let sources: Vec<(usize, Option<MemberId>)> = (0..self.replication.ready.len())
            .filter(|local| !self.replication.ready[*local])
            .map(|local| (self.replication.global(local), self.replication.source[local]))
            .collect();
        debug!(
            reactor = self.replication.reactor_index,
            owned,
            waiting,
            ?sources,
            version = self.replication.state.table.version,
            "partition table applied"
        );
    }
}

#[cfg(test)]
mod tests;
