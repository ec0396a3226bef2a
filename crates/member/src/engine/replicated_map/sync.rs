//! What a reactor does for its partitions' replicated-map copies (`store.rs` has the
//! stores, the encodings and the [`Version`] rules): runs key operations (writes as the
//! partition's owner, reads on this member's copy), numbers the owner's changes and sends them
//! to every other member, applies the changes other members send, installs whole copies, and
//! keeps the copies together when owners change and members join (anti-entropy every second).
//!
//! Every member publishes the entry events of the changes it applies to its own listeners
//! (`Listeners::publish_replicated`): the owner as it writes, the others as the change
//! arrives. A smart client registers a local-only listener with every member and hears each
//! change once, from its owner; a unisocket client's listener on one member hears every change
//! that member applies.

use crate::cluster::peer::{self, Reader};
use crate::engine::listeners::EventKind;
use crate::engine::replicated_map::request::{ReplicatedMapOp, ReplicatedMapRequest};
use crate::engine::replicated_map::store::{self, publish, put_kind, Change, EntryChange, Phase, SyncHeader, Version};
use crate::engine::request::{ErrorKind, OpError, Replies, Reply};
use crate::partition::objects::kind;
use crate::partition::owner::Execute;
use crate::partition::owner::{Call, PartitionOwner};
use crate::route::wire;
use ferrogrid_cluster::{MemberId, PartitionTable};
use ferrogrid_protocol::{Data, PartitionId, Uuid};
use tracing::{debug, warn};

/// How often an owner tells the others its versions, and the shortest time between two
/// requests for one partition's copy.
const ANTI_ENTROPY_INTERVAL_MS: i64 = 1_000;

fn null_check(bytes: &[u8], what: &str) -> Result<(), OpError> {
    match Data(bytes).type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(OpError::new(ErrorKind::NullArgument, format!("Null {what} is not allowed!"))),
    }
}

fn member_uuid(member: MemberId) -> Uuid {
    Uuid::from_u128(member.0)
}

/// A page of entry views of the copy of partition `local` (`iteration.rs`), or
/// IllegalStateException for a cursor of no iteration, as Hazelcast answers it.
fn fetch_views(
    owner: &mut PartitionOwner,
    call: &Call<'_>,
    out: &mut Vec<u8>,
    (name, local): (&str, usize),
    (cursor, new_iteration, batch): (Uuid, bool, usize),
) {
    let (now_ms, member) = (owner.now_ms, owner.member);
    let store = owner.partitions[local].store_mut::<kind::ReplicatedMap>(name, &mut owner.settings).0;
    match store.fetch_views(cursor, new_iteration, batch, now_ms) {
        Some((next, page)) => {
            let views = page.iter().map(|view| view.encoded()).collect();
            call.replies(out).reply(Reply::EntryViews { cursor: next, views });
        }
        None => {
            let message = format!("There is no iteration with cursor id {cursor} on member {member}.");
            wire::write_error(out, call.correlation_id, &OpError::new(ErrorKind::IllegalState, message));
        }
    }
}

/// A replicated map key request: a write on this member as the partition's owner (its
/// change numbered and sent to every other member), a read on this member's copy.
impl Execute for ReplicatedMapRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let request = self;
        let partition = call.partition_id.0 as usize;
        let local = owner.replication.replicated.local(partition);
        let name = &*request.name;
        let retry = |out: &mut Vec<u8>, text: String| {
            wire::write_error(out, call.correlation_id, &OpError::new(ErrorKind::PartitionMigrating, text));
        };
        if request.op.is_write() && !owner.writes_replicated(partition) {
            return retry(out, format!("partition {partition} is migrating or not owned by this member; retry"));
        }
        let shares = &owner.replication.replicated;
        if !request.op.is_write() && !shares.filled(local) && !owner.settings.replicated_map(name).async_fillup {
            return retry(out, format!("this member's copy of partition {partition} has not arrived yet; retry"));
        }
        let start = out.len();
        let mut reply = call.replies(out);
        let now_ms = owner.now_ms;
        match &request.op {
            ReplicatedMapOp::Get { key } => {
                let store = owner.partitions[local].store::<kind::ReplicatedMap>(name);
                reply.reply(Reply::Value(store.and_then(|store| store.get(key, now_ms))));
            }
            ReplicatedMapOp::ContainsKey { key } => {
                let store = owner.partitions[local].store::<kind::ReplicatedMap>(name);
                reply.reply(Reply::Bool(store.is_some_and(|store| store.get(key, now_ms).is_some())));
            }
            ReplicatedMapOp::FetchEntryViews { cursor, new_iteration, batch } => {
                return fetch_views(owner, call, reply.out, (name, local), (*cursor, *new_iteration, *batch));
            }
            ReplicatedMapOp::Put { key, value, ttl_ms } => {
                let mut checked = null_check(key, "key").and_then(|()| null_check(value, "value"));
                if *ttl_ms < 0 {
                    checked = Err(OpError::new(ErrorKind::IllegalArgument, "ttl must be a positive integer"));
                }
                if let Err(failure) = checked {
                    return wire::write_error(reply.out, call.correlation_id, &failure);
                }
                let expires_at_ms = store::expiry_of(now_ms, *ttl_ms);
                let store = owner.partitions[local].store_mut::<kind::ReplicatedMap>(name, &mut owner.settings).0;
                let old = store.put(key, value, expires_at_ms, now_ms);
                reply.reply(Reply::Value(old.as_deref()));
                let mut changes = Vec::new();
                store::put_change(&mut changes, name, key, value, expires_at_ms);
                owner.replication.replicated.send(partition, &changes);
                let kind = put_kind(old.as_deref());
                let change = EntryChange { name, partition, kind, key, value: Some(value), old_value: old.as_deref() };
                publish(&mut owner.listeners, &mut owner.outbox, (owner.member, false), &change);
            }
            ReplicatedMapOp::Remove { key } => {
                let store = owner.partitions[local].existing_store_mut::<kind::ReplicatedMap>(name);
                let old = store.and_then(|store| store.remove(key, now_ms));
                reply.reply(Reply::Value(old.as_deref()));
                // Sent, and heard (with no old value), even when nothing was here, as in
                // Hazelcast: a copy that still has the key drops it.
                let mut changes = Vec::new();
                store::remove_change(&mut changes, name, key);
                owner.replication.replicated.send(partition, &changes);
                let kind = EventKind::Removed;
                let change = EntryChange { name, partition, kind, key, value: None, old_value: old.as_deref() };
                publish(&mut owner.listeners, &mut owner.outbox, (owner.member, false), &change);
            }
        }
        if request.op.is_write() {
            answer_after_changes(owner, call, out, start);
        }
    }
}

/// A write another member forwarded: its answer (written to `out` from `start`) follows the
/// changes on the link as a REPLICATED_REPLY, so the forwarder's copy holds the write before
/// its client hears the answer.
fn answer_after_changes(owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>, start: usize) {
    let Some(forwarder) = owner.replication.link_member(call.connection) else { return };
    let response = out.split_off(start);
    owner.replication.seal_replicated();
    let mut record = Vec::with_capacity(response.len() + 6);
    record.extend_from_slice(&call.partition_id.0.to_le_bytes());
    peer::put_bytes(&mut record, &response);
    peer::write(owner.replication.message_for(forwarder), peer::REPLICATED_REPLY, 0, &record);
}

impl PartitionOwner {
    /// A replicated-map message from `from` whose payload holds only this reactor's
    /// partitions.
    pub fn on_replicated(&mut self, from: MemberId, ty: ferrogrid_protocol::MessageType, payload: &[u8]) {
        match ty {
            peer::REPLICATED_CHANGES => self.apply_replicated_changes(from, payload),
            peer::REPLICATED_SYNC => self.install_replicated_sync(from, payload),
            peer::REPLICATED_VERSIONS => self.on_replicated_versions(from, payload),
            peer::REPLICATED_SYNC_REQUEST => self.on_replicated_sync_request(from, payload),
            other => debug!(%other, "not a replicated-map message: ignored"),
        }
    }

    /// Whether this member writes `partition`'s replicated maps: it owns the partition and
    /// holds its copy.
    pub(crate) fn writes_replicated(&self, partition: usize) -> bool {
        let state = &self.replication.state;
        let local = self.replication.replicated.local(partition);
        state.table.owner(partition) == Some(state.me) && self.replication.replicated.writable(local)
    }

    /// Changes another member made to partitions of this reactor (REPLICATED_CHANGES records).
    /// A change that follows this copy's version is applied and advances it; an older one is
    /// ignored; one after a gap is applied and the whole partition asked for.
    pub fn apply_replicated_changes(&mut self, from: MemberId, records: &[u8]) {
        let mut reader = Reader::new(records);
        loop {
            let record = match store::next_change_record(&mut reader) {
                Ok(Some(record)) => record,
                Ok(None) => break,
                Err(error) => {
                    warn!(%error, "malformed replicated-map changes from a member: rest ignored");
                    break;
                }
            };
            let partition = record.partition as usize;
            if !self.replication.owns_locally(PartitionId(record.partition)) {
                warn!(partition, "replicated-map changes for a partition this reactor does not own: ignored");
                continue;
            }
            let local = self.replication.replicated.local(partition);
            let share = &self.replication.replicated.shares[local];
            if record.version <= share.version {
                continue;
            }
            let follows = share.phase == Phase::Current
                && record.version.epoch == share.version.epoch
                && record.version.sequence == share.version.sequence + 1;
            if let Err(error) = self.apply_changes(from, partition, record.changes) {
                warn!(%error, partition, "malformed replicated-map change from a member: the partition is asked for");
                self.ask_for_copy(from, partition, true);
                continue;
            }
            if follows {
                self.replication.replicated.shares[local].version = record.version;
            } else {
                let share = &mut self.replication.replicated.shares[local];
                if share.phase == Phase::Current {
                    share.phase = Phase::Stale;
                }
                debug!(partition, ?from, version = ?record.version, "replicated-map change after a gap: the partition is asked for");
                self.ask_for_copy(from, partition, false);
            }
        }
    }

    /// Applies one record's changes to this member's copy, publishing their events as
    /// relayed from `from`.
    fn apply_changes(&mut self, from: MemberId, partition: usize, changes: &[u8]) -> Result<(), peer::Malformed> {
        let local = self.replication.replicated.local(partition);
        let (now_ms, origin) = (self.now_ms, (member_uuid(from), true));
        let mut reader = Reader::new(changes);
        while !reader.is_empty() {
            match store::read_change(&mut reader)? {
                Change::Put { name, key, value, expires_at_ms } => {
                    let store = self.partitions[local].store_mut::<kind::ReplicatedMap>(name, &mut self.settings).0;
                    let old = store.put(key, value, expires_at_ms, now_ms);
                    let kind = put_kind(old.as_deref());
                    let change =
                        EntryChange { name, partition, kind, key, value: Some(value), old_value: old.as_deref() };
                    publish(&mut self.listeners, &mut self.outbox, origin, &change);
                }
                Change::Remove { name, key } => {
                    let store = self.partitions[local].existing_store_mut::<kind::ReplicatedMap>(name);
                    let old = store.and_then(|store| store.remove(key, now_ms));
                    let kind = EventKind::Removed;
                    let change = EntryChange { name, partition, kind, key, value: None, old_value: old.as_deref() };
                    publish(&mut self.listeners, &mut self.outbox, origin, &change);
                }
                Change::Clear { name } => {
                    if let Some(store) = self.partitions[local].existing_store_mut::<kind::ReplicatedMap>(name) {
                        store.clear(now_ms);
                    }
                }
            }
        }
        Ok(())
    }

    /// Asks `from` for `partition`'s whole copy, at most once a second per partition (`now`:
    /// at once, whenever last asked).
    fn ask_for_copy(&mut self, from: MemberId, partition: usize, now: bool) {
        let local = self.replication.replicated.local(partition);
        let now_ms = self.now_ms;
        let share = &mut self.replication.replicated.shares[local];
        if !now && share.asked_ms != 0 && now_ms - share.asked_ms < ANTI_ENTROPY_INTERVAL_MS {
            return;
        }
        share.asked_ms = now_ms;
        let payload = (partition as u16).to_le_bytes();
        peer::write(self.replication.message_for(from), peer::REPLICATED_SYNC_REQUEST, 0, &payload);
    }

    /// A chunk of a partition's whole copy: installed if it is newer than this member's copy
    /// (or this copy is not current), replacing it; no events.
    pub fn install_replicated_sync(&mut self, from: MemberId, payload: &[u8]) {
        let mut reader = Reader::new(payload);
        let parsed = SyncHeader::read(&mut reader)
            .and_then(|header| store::read_sync_entries(&mut reader).map(|entries| (header, entries)));
        let (header, entries) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => {
                warn!(%error, "malformed replicated-map copy from a member: ignored");
                return;
            }
        };
        let partition = header.partition as usize;
        if !self.replication.owns_locally(PartitionId(header.partition)) {
            warn!(partition, "replicated-map copy for a partition this reactor does not own: ignored");
            return;
        }
        let local = self.replication.replicated.local(partition);
        let share = &mut self.replication.replicated.shares[local];
        if header.first {
            if header.version <= share.version && share.phase == Phase::Current {
                share.receiving = None;
                return;
            }
            share.receiving = Some(header.version);
            self.partitions[local].drop_stores::<kind::ReplicatedMap>();
        } else if share.receiving != Some(header.version) {
            return;
        }
        let now_ms = self.now_ms;
        for entry in entries {
            let store = self.partitions[local].store_mut::<kind::ReplicatedMap>(entry.name, &mut self.settings).0;
            store.put(entry.key, entry.value, entry.expires_at_ms, now_ms);
        }
        if !header.last {
            return;
        }
        let share = &mut self.replication.replicated.shares[local];
        let waited = matches!(share.phase, Phase::Waiting { .. });
        (share.version, share.phase, share.receiving, share.asked_ms) = (header.version, Phase::Current, None, 0);
        debug!(partition, ?from, version = ?header.version, "replicated-map copy received");
        if waited && self.replication.state.table.owner(partition) == Some(self.replication.state.me) {
            self.take_over(partition);
        }
    }

    /// Starts a new epoch of `partition`'s changes as its owner, from this member's copy, and
    /// sends the copy to every other member (which replace theirs with it).
    fn take_over(&mut self, partition: usize) {
        let local = self.replication.replicated.local(partition);
        let table_version = self.replication.state.table.version;
        let share = &mut self.replication.replicated.shares[local];
        let epoch = table_version.max(share.version.epoch + 1);
        (share.version, share.phase, share.receiving, share.asked_ms) =
            (Version { epoch, sequence: 0 }, Phase::Current, None, 0);
        // Changes numbered under the old version go out before the copy that supersedes them.
        self.replication.seal_replicated();
        for peer in self.replication.peers() {
            self.send_copy(partition, peer);
        }
    }

    /// Queues `partition`'s whole copy for `member`.
    fn send_copy(&mut self, partition: usize, member: MemberId) {
        let local = self.replication.replicated.local(partition);
        let version = self.replication.replicated.shares[local].version;
        let chunk_bytes = self.replication.snapshot_chunk_bytes;
        let maps = self.partitions[local].stores::<kind::ReplicatedMap>();
        let out = self.replication.out.entry(member).or_default();
        store::write_sync(out, partition as u16, version, maps, self.now_ms, chunk_bytes);
    }

    /// Another member asks for copies of these partitions: sent if this member holds them.
    pub fn on_replicated_sync_request(&mut self, from: MemberId, partitions: &[u8]) {
        for pair in partitions.chunks_exact(2) {
            let partition = PartitionId(u16::from_le_bytes([pair[0], pair[1]]));
            if !self.replication.owns_locally(partition) {
                continue;
            }
            let local = self.replication.replicated.local(partition.0 as usize);
            let shares = &self.replication.replicated;
            if shares.filled(local) && shares.writable(local) && shares.shares[local].receiving.is_none() {
                self.send_copy(partition.0 as usize, from);
            }
        }
    }

    /// An owner's versions of its partitions (anti-entropy): a partition whose copy here is
    /// older, or not current, is asked for.
    pub fn on_replicated_versions(&mut self, from: MemberId, versions: &[u8]) {
        let mut reader = Reader::new(versions);
        while !reader.is_empty() {
            let Ok((partition, version)) = (|| {
                Ok::<_, peer::Malformed>((reader.u16()?, Version { epoch: reader.u64()?, sequence: reader.u64()? }))
            })() else {
                warn!("malformed replicated-map versions from a member: rest ignored");
                return;
            };
            if !self.replication.owns_locally(PartitionId(partition)) {
                continue;
            }
            let partition = partition as usize;
            let share = &self.replication.replicated.shares[self.replication.replicated.local(partition)];
            let behind = version > share.version || (version == share.version && share.phase != Phase::Current);
            if behind && !self.writes_replicated(partition) {
                self.ask_for_copy(from, partition, false);
            }
        }
    }

    /// One table change's consequence for `partition`'s copy: a member that becomes its owner
    /// takes over from its copy, or, if it never received the partition and the old owner is
    /// still here, asks the old owner for it first.
    pub(crate) fn replicated_table_change(
        &mut self,
        partition: usize,
        (was, now): (Option<usize>, Option<usize>),
        before: &PartitionTable,
    ) {
        let local = self.replication.replicated.local(partition);
        let state = self.replication.state.clone();
        if now != Some(0) {
            let share = &mut self.replication.replicated.shares[local];
            if matches!(share.phase, Phase::Waiting { .. }) {
                share.phase = Phase::Stale;
            }
            return;
        }
        if was == Some(0) {
            return;
        }
        let old_owner = before.owner(partition).filter(|owner| *owner != state.me && state.is_member(*owner));
        match old_owner {
            Some(source) if !self.replication.replicated.filled(local) => {
                self.replication.replicated.shares[local].phase = Phase::Waiting { source };
                self.ask_for_copy(source, partition, true);
            }
            _ => self.take_over(partition),
        }
    }

    /// Members joined: each partition this member owns and holds is sent to them at once.
    pub(crate) fn replicated_members_joined(&mut self, joined: &[MemberId]) {
        if joined.is_empty() {
            return;
        }
        self.replication.seal_replicated();
        for local in 0..self.partitions.len() {
            let partition = self.replication.replicated.global(local);
            if self.writes_replicated(partition) {
                for member in joined {
                    self.send_copy(partition, *member);
                }
            }
        }
    }

    /// Every second: tells every other member the versions of the partitions this member
    /// owns and holds; asks again for copies a new owner still waits for (or goes on without
    /// one whose source left).
    pub(crate) fn replicated_tick(&mut self) {
        let now_ms = self.now_ms;
        for local in 0..self.partitions.len() {
            let partition = self.replication.replicated.global(local);
            let share = &self.replication.replicated.shares[local];
            if let Phase::Waiting { source } = share.phase {
                if !self.replication.state.is_member(source) {
                    warn!(
                        partition,
                        ?source,
                        "the member this replicated-map copy waited for left: going on with what is here"
                    );
                    self.take_over(partition);
                } else {
                    self.ask_for_copy(source, partition, false);
                }
            }
        }
        let shares = &mut self.replication.replicated;
        if now_ms - shares.versions_sent_ms < ANTI_ENTROPY_INTERVAL_MS {
            return;
        }
        shares.versions_sent_ms = now_ms;
        let mut payload = Vec::new();
        for local in 0..self.partitions.len() {
            let partition = self.replication.replicated.global(local);
            let version = self.replication.replicated.shares[local].version;
            // A partition that never had a change and holds no replicated map has nothing to
            // repair (a copy that missed its epoch's start hears of it with the next change):
            // a member without replicated maps sends nothing.
            let idle = version.sequence == 0 && self.partitions[local].stores::<kind::ReplicatedMap>().next().is_none();
            if self.writes_replicated(partition) && !idle {
                payload.extend_from_slice(&(partition as u16).to_le_bytes());
                payload.extend_from_slice(&version.epoch.to_le_bytes());
                payload.extend_from_slice(&version.sequence.to_le_bytes());
            }
        }
        if payload.is_empty() {
            return;
        }
        self.replication.seal_replicated();
        for peer in self.replication.peers() {
            peer::write(self.replication.message_for(peer), peer::REPLICATED_VERSIONS, 0, &payload);
        }
    }

    /// Removes expired entries of one partition's replicated maps (at most `budget`
    /// examined), publishing EVICTED to this member's listeners; returns how many were
    /// examined.
    pub(crate) fn sweep_replicated(&mut self, local: usize, budget: usize) -> usize {
        let partition = self.replication.replicated.global(local);
        let (now_ms, origin) = (self.now_ms, (self.member, false));
        let mut examined = 0;
        for (name, store) in self.partitions[local].stores_mut::<kind::ReplicatedMap>() {
            let share =
                budget.saturating_sub(examined).min(crate::partition::object::PartitionObject::entry_count(store));
            examined += share;
            for (key, value) in store.sweep(now_ms, share) {
                let kind = EventKind::Evicted;
                let change = EntryChange { name, partition, kind, key: &key, value: None, old_value: Some(&value) };
                publish(&mut self.listeners, &mut self.outbox, origin, &change);
            }
        }
        examined
    }
}

#[cfg(test)]
mod tests {
    //! Members' reactors (one each, two partitions) wired by hand: what one queues for another
    //! is delivered by the test, or dropped to make a gap.
    use super::*;
    use crate::cluster::peer::tests::messages;
    use crate::cluster::replication::state::ClusterState;
    use crate::net::connection::{ConnectionId, ConnectionShared};
    use ferrogrid_cluster::{MemberEntry, MAX_REPLICAS};
    use ferrogrid_config::MemberConfig;
    use ferrogrid_protocol::codec::{NullableDataResponse, ReplicatedMapGet, ReplicatedMapPut};
    use ferrogrid_protocol::Message;
    use std::sync::Arc;

    const A: MemberId = MemberId(1);
    const B: MemberId = MemberId(2);
    const C: MemberId = MemberId(3);
    const D: MemberId = MemberId(4);
    const PARTITIONS: usize = 2;
    const MAP: &str = "rm";

    fn connection() -> Arc<ConnectionShared> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let stream = mio::net::TcpStream::from_std(stream);
        Arc::new(ConnectionShared::new(ConnectionId(1), listener.local_addr().unwrap(), stream))
    }

    /// `me`'s view: `members` (with links to each), table `version` giving both partitions
    /// `owner`.
    fn state(me: MemberId, members: &[MemberId], version: u64, owner: MemberId) -> Arc<ClusterState> {
        let mut table = PartitionTable::empty(PARTITIONS);
        table.version = version;
        let mut row = [None; MAX_REPLICAS];
        row[0] = Some(owner);
        (0..PARTITIONS).for_each(|partition| table.set_replicas(partition, row));
        let entries = members.iter().map(|id| MemberEntry::new(*id, String::new())).collect();
        let links = members.iter().filter(|id| **id != me).map(|id| (*id, connection())).collect();
        Arc::new(ClusterState {
            me,
            members: entries,
            members_version: version,
            cluster_id: A,
            table,
            links,
            kept: false,
        })
    }

    fn member(me: MemberId) -> PartitionOwner {
        member_with(me, MemberConfig::default())
    }

    fn member_with(me: MemberId, config: MemberConfig) -> PartitionOwner {
        let alone = Arc::new(ClusterState::alone(me, PARTITIONS));
        let config = Arc::new(config);
        let counter = Arc::new(crate::obs::probes::Counter::default());
        PartitionOwner::new(0, 1, Uuid::from_u128(me.0), config, PARTITIONS as u16, alone, counter)
    }

    /// Delivers what `from` queued for `to` (sealing its changes first); `keep` picks messages.
    fn deliver(
        from: (MemberId, &mut PartitionOwner),
        to: (MemberId, &mut PartitionOwner),
        keep: impl Fn(usize) -> bool,
    ) {
        from.1.replication.seal_replicated();
        let queued = from.1.replication.out.remove(&to.0).unwrap_or_default();
        for (index, (ty, payload)) in messages(&queued).into_iter().enumerate() {
            if keep(index) {
                to.1.on_replicated(from.0, ty, &payload);
            }
        }
    }

    fn all(_: usize) -> bool {
        true
    }

    /// Runs a put of `key` on `owner` (partition 0); the response bytes.
    fn put(owner: &mut PartitionOwner, key: &[u8], value: &[u8]) -> Vec<u8> {
        let mut request = Vec::new();
        let put = ReplicatedMapPut { ttl: 0, name: MAP, key: Data(key), value: Data(value) };
        put.encode(&mut request, 5, 0, 0);
        run(owner, &request)
    }

    fn run(owner: &mut PartitionOwner, request: &[u8]) -> Vec<u8> {
        let message = Message::parse(request).unwrap();
        let row = crate::route::operations::row(message.message_type()).expect("a row");
        let connection = connection();
        let call = Call {
            connection: &connection,
            correlation_id: 5,
            response_type: message.message_type().response(),
            source: Uuid::from_u128(99),
            counter_slot: 0,
            partition_id: PartitionId(0),
            backup_aware: false,
            local: 0,
        };
        let mut out = Vec::new();
        (row.run.expect("a partition row"))(&message, owner, &call, &mut out).unwrap();
        out
    }

    fn get(owner: &mut PartitionOwner, key: &[u8]) -> Option<Vec<u8>> {
        let mut request = Vec::new();
        ReplicatedMapGet { name: MAP, key: Data(key) }.encode(&mut request, 5, 0, 0);
        let out = run(owner, &request);
        NullableDataResponse::decode(&Message::parse(&out).unwrap()).unwrap().response.map(|data| data.0.to_vec())
    }

    /// A key (a serialized Data: 4-byte partition hash, 4-byte type id, payload).
    fn key(text: &str) -> Vec<u8> {
        let mut data = vec![0, 0, 0, 0, 0, 0, 0, 11];
        data.extend_from_slice(text.as_bytes());
        data
    }

    /// Whether `response` is the PartitionMigrating error clients retry on.
    fn is_retry(response: &[u8]) -> bool {
        let message = Message::parse(response).unwrap();
        let errors = ferrogrid_protocol::error::read_error_response(&message).unwrap_or_default();
        message.message_type() == ferrogrid_protocol::error::ERROR_RESPONSE
            && errors.first().is_some_and(|error| error.code == ferrogrid_protocol::error::PARTITION_MIGRATING.code)
    }

    fn version(owner: &PartitionOwner) -> Version {
        owner.replication.replicated.shares[0].version
    }

    #[test]
    fn copies_follow_the_owner_repair_gaps_and_survive_a_new_owner() {
        let (mut a, mut b, mut c) = (member(A), member(B), member(C));
        let three = [A, B, C];
        for (me, owner) in [(A, &mut a), (B, &mut b), (C, &mut c)] {
            owner.apply_cluster_state(state(me, &three, 1, A));
        }
        deliver((A, &mut a), (B, &mut b), all);
        deliver((A, &mut a), (C, &mut c), all);
        assert_eq!([version(&a), version(&b), version(&c)], [Version { epoch: 1, sequence: 0 }; 3]);

        // The owner's writes reach every copy in order.
        assert!(NullableDataResponse::decode(&Message::parse(&put(&mut a, &key("x"), &key("1"))).unwrap())
            .unwrap()
            .response
            .is_none());
        put(&mut a, &key("y"), &key("2"));
        deliver((A, &mut a), (B, &mut b), all);
        assert_eq!((get(&mut b, &key("x")), version(&b)), (Some(key("1")), Version { epoch: 1, sequence: 2 }));
        // C missed the first change: it applies the next, and asks for the partition.
        a.replication.out.remove(&C);
        put(&mut a, &key("z"), &key("3"));
        deliver((A, &mut a), (C, &mut c), all);
        assert_eq!(c.replication.replicated.shares[0].phase, Phase::Stale);
        assert_eq!(get(&mut c, &key("z")), Some(key("3")));
        deliver((C, &mut c), (A, &mut a), all);
        deliver((A, &mut a), (C, &mut c), all);
        assert_eq!((version(&c), c.replication.replicated.shares[0].phase), (version(&a), Phase::Current));
        assert_eq!(get(&mut c, &key("x")), Some(key("1")), "the whole copy arrived");

        // A writes to a partition it does not own are refused (the client retries).
        assert!(is_retry(&put(&mut b, &key("w"), &key("0"))));
        assert_eq!(get(&mut b, &key("w")), None);

        // A dies: B is promoted and carries on from its copy (it missed "z"), C follows B.
        let two = [B, C];
        b.apply_cluster_state(state(B, &two, 2, B));
        c.apply_cluster_state(state(C, &two, 2, B));
        assert_eq!(version(&b), Version { epoch: 2, sequence: 0 });
        deliver((B, &mut b), (C, &mut c), all);
        assert_eq!(get(&mut c, &key("z")), None, "the new owner's copy is the truth");
        put(&mut b, &key("after"), &key("4"));
        deliver((B, &mut b), (C, &mut c), all);
        assert_eq!((get(&mut c, &key("after")), version(&c)), (Some(key("4")), Version { epoch: 2, sequence: 1 }));

        // D joins (the copies B sends it are lost) and then owns the partitions: it asks the
        // old owner and refuses writes until the copy is here, then takes over.
        // D reads only once its copy is here (`async-fillup: false`).
        let mut config = MemberConfig::default();
        let wait_for_copy = ferrogrid_config::ReplicatedMapConfig {
            async_fillup: false,
            ..ferrogrid_config::ReplicatedMapConfig::DEFAULT
        };
        config.replicated_maps.insert(MAP, wait_for_copy);
        let mut d = member_with(D, config);
        let four = [B, C, D];
        d.apply_cluster_state(state(D, &four, 3, B));
        b.apply_cluster_state(state(B, &four, 3, B));
        c.apply_cluster_state(state(C, &four, 3, B));
        b.replication.out.clear();
        for (me, owner) in [(B, &mut b), (C, &mut c), (D, &mut d)] {
            owner.apply_cluster_state(state(me, &four, 4, D));
        }
        assert!(matches!(d.replication.replicated.shares[0].phase, Phase::Waiting { source: B }));
        let mut request = Vec::new();
        ReplicatedMapGet { name: MAP, key: Data(&key("after")) }.encode(&mut request, 5, 0, 0);
        assert!(is_retry(&run(&mut d, &request)), "a read retries too");
        let refused = put(&mut d, &key("early"), &key("5"));
        assert!(
            NullableDataResponse::decode(&Message::parse(&refused).unwrap()).is_err(),
            "retry until the copy is here"
        );
        deliver((D, &mut d), (B, &mut b), all);
        deliver((B, &mut b), (D, &mut d), all);
        assert_eq!(get(&mut d, &key("after")), Some(key("4")));
        assert_eq!(version(&d), Version { epoch: 4, sequence: 0 });
        deliver((D, &mut d), (C, &mut c), all);
        assert_eq!(version(&c), Version { epoch: 4, sequence: 0 });
    }
}
