//! What a reactor does as the owner of its partitions: run their operations, re-run requests
//! released from key locks, fire lock and wait deadlines, sweep expired entries, and publish
//! entry events. Owned by one reactor thread; the reactor does the IO around it.

use crate::clock::now_ms;
use crate::engine::listeners::{Event, EventBound, EventKind, Listeners, Registry};
use crate::engine::locks::{Parked, Waiting};
use crate::engine::map::ops::{self as map_ops};
use crate::engine::queue::request::{QueueOp, QueueTxnOp};
use crate::engine::queue::store::Waiter;
use crate::engine::request::{ErrorKind, OpError, WaiterId};
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::engine::wide::ShareContext;
use crate::net::connection::{ConnectionShared, ReplyTo};
use crate::net::outbox::Outbox;
use crate::obs::probes::ObjectFigures;
use crate::partition::objects::{kind, Object, PartitionStore};
use crate::route::fanout::FanOut;
use crate::route::wire::{self, HazelcastReply};
use ferrogrid_config::MemberConfig;
use ferrogrid_protocol::{MessageType, PartitionId, Uuid};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// Something that must happen at a time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Timer {
    /// Re-check a key's lock lease and the deadlines of requests parked on it (a map's or a
    /// multimap's key: `kind`).
    Key { partition: PartitionId, kind: ObjectKind, map: Box<str>, key: Box<[u8]> },
    /// Answer the waiters of a queue whose deadline passed.
    Queue { partition: PartitionId, name: Box<str> },
    /// Release the locks of a client that has had no connection since it was scheduled.
    ClientCleanup(Uuid),
    /// Send an answer held back until then (in `PartitionOwner::held_answers`, by this id).
    Answer(u64),
}

/// One run of a partition request: where its answer goes and what the request bytes do not
/// say. Borrowed for the run; made owned only if the request parks.
#[derive(Debug)]
pub struct Call<'c> {
    pub connection: &'c Arc<ConnectionShared>,
    pub correlation_id: i64,
    pub response_type: MessageType,
    /// The client the request came from (owner of its locks, source of its events).
    pub source: Uuid,
    /// Its row in the operation table (its per-map counter).
    pub counter_slot: usize,
    pub partition_id: PartitionId,
    /// The client asked for backup acknowledgements (`BACKUP_AWARE`) and has a local backup
    /// listener on this connection: a write with synchronous backups is answered at once with
    /// their number, and each backup's acknowledgement goes to the client as a backup event.
    pub backup_aware: bool,
    /// The partition's index among this reactor's. For a partition-bound row, routing checked
    /// once that this member serves the partition ([`PartitionOwner::serving`]); a row that
    /// runs on any copy (replicated maps' reads) or outside the partitions (PN counters) does
    /// not need it.
    pub local: usize,
}

impl Call<'_> {
    /// Where the engine's answer to this call goes now: `out`, encoded for its client.
    pub(crate) fn replies<'o>(&self, out: &'o mut Vec<u8>) -> HazelcastReply<'o> {
        HazelcastReply { out, response_type: self.response_type, correlation_id: self.correlation_id }
    }

    /// Where the answer goes if the request waits.
    pub(crate) fn reply_to(&self) -> ReplyTo {
        ReplyTo {
            connection: self.connection.clone(),
            correlation_id: self.correlation_id,
            response_type: self.response_type,
        }
    }

    /// The queue request as it waits for an item or room until `deadline_ms`, as `id`.
    pub(crate) fn waiter(&self, op: &QueueOp<'_>, deadline_ms: i64, id: WaiterId) -> Waiter {
        let (item, answers_bool) = match op {
            QueueOp::Offer { value, answers_bool, .. } => (Some(value.as_ref().into()), *answers_bool),
            QueueOp::Txn { op: QueueTxnOp::Offer { value, .. }, .. } => (Some(value.as_ref().into()), true),
            _ => (None, false),
        };
        let txn = match op {
            QueueOp::Txn { txn, .. } => Some(*txn),
            _ => None,
        };
        let peek = matches!(op, QueueOp::Txn { op: QueueTxnOp::Peek { .. }, .. });
        Waiter { id, deadline_ms, source: self.source, item, answers_bool, txn, peek }
    }

    /// The request as it waits on a key lock for `wait_ms` (< 0: until released), as `id`.
    pub(crate) fn park(&self, request: Waiting, now_ms: i64, wait_ms: i64, id: WaiterId) -> Parked {
        Parked {
            id,
            source: self.source,
            counter_slot: self.counter_slot,
            partition_id: self.partition_id,
            request,
            deadline_ms: crate::clock::deadline_after(now_ms, wait_ms),
        }
    }
}

/// A structure's typed request, run on the owner of its partition: the answer goes to `out`
/// (or later, to its connection, if it waits: on a lock, for a queue item or room, or for
/// backups).
pub(crate) trait Execute {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>);
}

impl PartitionOwner {
    /// The local index of `partition` if this member serves it; else answers
    /// PartitionMigrating (the request was routed to this reactor before its partition moved)
    /// and returns None. Routing asks it once per request, where the request runs, unless it
    /// checked the reactor's own state in the same turn.
    pub(crate) fn serving(&self, partition: PartitionId, correlation_id: i64, out: &mut Vec<u8>) -> Option<usize> {
        if let Some(local) = self.replication.serving(partition) {
            return Some(local);
        }
        let text = format!("partition {} is migrating or not owned by this member; retry", partition.0);
        wire::write_error(out, correlation_id, &OpError::new(ErrorKind::PartitionMigrating, text));
        None
    }
}

/// The partitions of one reactor and everything that acts on them.
#[derive(Debug)]
pub struct PartitionOwner {
    /// The cluster's Compact schemas (queries read values with them).
    pub schemas: Arc<crate::engine::schemas::Schemas>,
    /// Partition `p` is at `p / reactor_count`.
    pub partitions: Vec<PartitionStore>,
    pub(crate) reactor_index: usize,
    pub(crate) reactor_count: usize,
    pub(crate) member: Uuid,
    pub listeners: Listeners,
    pub outbox: Outbox,
    pub(crate) settings: SettingsCache,
    pub(crate) released: Vec<Parked>,
    pub(crate) deadlines: Vec<crate::engine::locks::KeyDeadline>,
    pub(crate) timers: BinaryHeap<Reverse<(i64, Timer)>>,
    /// Answers sent at a time (`Timer::Answer`), by id: a flake id batch too far ahead of the
    /// clock. Each counts as in flight on its connection, which bounds them per connection.
    pub(crate) held_answers: std::collections::HashMap<u64, (Arc<ConnectionShared>, Vec<u8>)>,
    pub(crate) next_held_answer: u64,
    /// Milliseconds since the epoch, read once per reactor loop iteration.
    pub now_ms: i64,
    pub(crate) sweep_cursor: usize,
    /// Entries the expiry sweep examines per run (`expiry-sweep-entries`: bounds its pause).
    pub(crate) sweep_budget_entries: usize,
    pub(crate) scratch: Vec<u8>,
    /// Backups, replica hand-offs and forwarded requests of these partitions.
    pub replication: crate::cluster::replication::state::Replication,
    /// Latency of every request this reactor ran, by type (nanoseconds).
    latency:
        std::collections::HashMap<ferrogrid_protocol::MessageType, hdrhistogram::Histogram<u64>, ahash::RandomState>,
    /// Latency of every request by tenant id (only with tenants configured).
    pub(crate) tenant_latency: Vec<hdrhistogram::Histogram<u64>>,
    /// Per topic with statistics enabled: messages published here, and sent to this member's
    /// listeners (locally published or relayed).
    pub topic_counts: std::collections::HashMap<Box<str>, (u64, u64), ahash::RandomState>,
    /// This member's replicas of the PN counters whose name's partition is this reactor's.
    pub pn_counters: crate::engine::pn_counter::state::PnCounters,
    /// The executors shut down (this reactor's copy; every reactor records each shutdown).
    pub executors: crate::engine::executor::shutdowns::Shutdowns,
    /// The map entries this member owned when its cluster merged into another, until they are
    /// merged into that cluster (`cluster/merge.rs`).
    pub(crate) merging: crate::engine::map::merge::Merging,
    /// When the member persists: its partitions' logs (`persisting.rs`).
    pub(crate) persisting: Option<Box<crate::persistence::logs::Persisting>>,
}

impl PartitionOwner {
    pub fn new(
        reactor_index: usize,
        reactor_count: usize,
        member: Uuid,
        config: Arc<MemberConfig>,
        partition_count: u16,
        cluster: Arc<crate::cluster::replication::state::ClusterState>,
        events_dropped: Arc<crate::obs::probes::Counter>,
    ) -> Self {
        let owned = (0..partition_count as usize).filter(|p| p % reactor_count == reactor_index).count();
        let backup_timeout_ms = config.cluster.backup_timeout_ms;
        let sweep_budget_entries = config.limits.expiry_sweep_entries as usize;
        let event_limit_bytes = config.limits.listener_event_queue_bytes as usize;
        // Every waiter is in flight on its connection, so the in-flight bounds bound them.
        let capacity_waiters =
            config.limits.max_connections as usize * config.limits.max_in_flight_per_connection as usize;
        let tenants = config.tenants.tenants.len();
        let tenant_latency = if tenants == 0 {
            Vec::new()
        } else {
            (0..=tenants).map(|_| crate::obs::probes::latency_histogram()).collect()
        };
        PartitionOwner {
            schemas: Arc::default(),
            replication: crate::cluster::replication::state::Replication::new(
                reactor_index,
                reactor_count,
                owned,
                cluster,
                backup_timeout_ms,
                config.table_backup_count(),
                config.limits.snapshot_chunk_bytes as usize,
            ),
            partitions: (0..owned).map(|slot| PartitionStore::in_slot(slot, capacity_waiters)).collect(),
            reactor_index,
            reactor_count,
            member,
            listeners: Listeners::new(EventBound::new(reactor_index, event_limit_bytes, events_dropped)),
            outbox: Outbox::default(),
            settings: SettingsCache::new(config, partition_count),
            released: Vec::new(),
            deadlines: Vec::new(),
            timers: BinaryHeap::new(),
            held_answers: std::collections::HashMap::new(),
            next_held_answer: 0,
            now_ms: now_ms(),
            sweep_cursor: 0,
            sweep_budget_entries,
            scratch: Vec::new(),
            latency: std::collections::HashMap::default(),
            tenant_latency,
            topic_counts: std::collections::HashMap::default(),
            pn_counters: crate::engine::pn_counter::state::PnCounters::default(),
            executors: Default::default(),
            merging: crate::engine::map::merge::Merging::default(),
            persisting: None,
        }
    }

    pub fn record_latency(
        &mut self,
        message_type: ferrogrid_protocol::MessageType,
        tenant: u16,
        elapsed: std::time::Duration,
    ) {
        let nanos = elapsed.as_nanos().max(1) as u64;
        let histogram = self.latency.entry(message_type).or_insert_with(crate::obs::probes::latency_histogram);
        histogram.saturating_record(nanos);
        if let Some(histogram) = self.tenant_latency.get_mut(tenant as usize) {
            histogram.saturating_record(nanos);
        }
    }

    /// Entries and bytes each tenant's objects hold in partitions this member owns, by tenant
    /// name (scoped object names: `tenant\0name`).
    pub fn tenant_usage(&self) -> std::collections::HashMap<&str, (u64, u64)> {
        let mut usage: std::collections::HashMap<&str, (u64, u64)> = std::collections::HashMap::new();
        for (local, partition) in self.partitions.iter().enumerate() {
            if !self.replication.owned.get(local).copied().unwrap_or(false) {
                continue;
            }
            for (_, name, object) in partition.objects() {
                if let Some((tenant, _)) = crate::tenants::split(name) {
                    let object = object.as_object();
                    let figures = usage.entry(tenant).or_default();
                    figures.0 += object.entry_count() as u64;
                    figures.1 += object.held_bytes() as u64;
                }
            }
        }
        usage
    }

    /// Copies latency histograms and per-map figures out for the metrics threads (the probes
    /// have figures per map; other kinds add theirs with their own probes). `counted_type`:
    /// the message type of a per-map counter slot (the operation table's).
    pub fn snapshot(&self, counted_type: fn(usize) -> MessageType) -> crate::obs::probes::ReactorSnapshot {
        let latency = self.latency.iter().map(|(ty, histogram)| (*ty, histogram.clone())).collect();
        let tenant_latency = self.tenant_latency.clone();
        let mut snapshot = crate::obs::probes::ReactorSnapshot { latency, tenant_latency, ..Default::default() };
        self.object_figures(&mut snapshot.objects);
        for partition in &self.partitions {
            for (name, store) in partition.maps() {
                let figures = snapshot.maps.entry(name.to_owned()).or_default();
                figures.entries += store.len() as u64;
                figures.bytes += store.held_bytes() as u64;
                for (slot, count) in store.op_counts.iter().enumerate().filter(|(_, count)| **count > 0) {
                    *figures.ops.entry(counted_type(slot)).or_insert(0) += count;
                }
            }
        }
        snapshot
    }

    /// Items of the queues, collections, multimaps and ringbuffers this reactor owns and of
    /// the replicated maps it holds (every partition's copy, with `statistics-enabled`),
    /// listeners of those and of topics, and topic counts.
    fn object_figures(&self, objects: &mut std::collections::HashMap<(&'static str, String), ObjectFigures>) {
        for (local, partition) in self.partitions.iter().enumerate() {
            let owned = self.replication.owned.get(local).copied().unwrap_or(false);
            for (kind, name, object) in partition.objects() {
                if !owned && !kind.is_everywhere() {
                    continue;
                }
                if !object.as_object().in_object_figures() {
                    continue;
                }
                let label = kind.label();
                let figures = objects.entry((label, name.to_owned())).or_default();
                figures.items += object.as_object().entry_count() as u64;
                figures.bytes += object.as_object().held_bytes() as u64;
            }
        }
        for (registry, name, count) in self.listeners.counts() {
            let label = match registry {
                Registry::Items => "queue",
                Registry::ListItems => "list",
                Registry::SetItems => "set",
                Registry::MultiMapEntries => "multimap",
                Registry::ReplicatedEntries if self.settings.replicated_map(name).statistics_enabled => "replicatedmap",
                Registry::ReplicatedEntries => continue,
                Registry::Messages => "topic",
                Registry::CacheEntries => "cache",
                Registry::Entries => continue,
            };
            objects.entry((label, name.to_owned())).or_default().listeners += count as u64;
        }
        for (name, (publishes, receives)) in &self.topic_counts {
            let figures = objects.entry(("topic", name.to_string())).or_default();
            figures.publishes += publishes;
            figures.receives += receives;
        }
        self.counter_figures(objects);
    }

    /// Counts a topic's published and delivered messages, if its statistics are enabled.
    pub fn count_topic(&mut self, name: &str, publishes: u64, receives: u64) {
        if !self.settings.topic_statistics(name) {
            return;
        }
        match self.topic_counts.get_mut(name) {
            Some(counts) => *counts = (counts.0 + publishes, counts.1 + receives),
            None => {
                self.topic_counts.insert(name.into(), (publishes, receives));
            }
        }
    }

    /// The settings of `map` (resolved once per reactor).
    #[cfg(test)]
    pub fn settings_for(&mut self, map: &str) -> Arc<crate::engine::settings::MapSettings> {
        self.settings.get(map)
    }

    pub fn tick_clock(&mut self) {
        self.now_ms = now_ms();
    }

    /// After a request on the key locks of a `kind` object (a map's or a multimap's) in
    /// `partition`: the lock deadlines it set become timers, and the requests it released from
    /// locks run again.
    pub(crate) fn after_key_request(&mut self, partition: PartitionId, kind: ObjectKind) {
        for (deadline, map, key) in self.deadlines.drain(..) {
            self.timers.push(Reverse((deadline, Timer::Key { partition, kind, map, key })));
        }
        if !self.released.is_empty() {
            self.rerun_released();
        }
    }

    /// Re-runs requests released from key locks, in the order they parked; their answers go
    /// to their own connections.
    pub(crate) fn rerun_released(&mut self) {
        while !self.released.is_empty() {
            let batch = std::mem::take(&mut self.released);
            for parked in batch {
                self.rerun(parked);
            }
        }
    }

    pub(crate) fn rerun(&mut self, parked: Parked) {
        let local = self.replication.local(parked.partition_id.0 as usize);
        let reply_to = self.partitions[local].waiters.take(parked.id).expect("a parked request is registered");
        if reply_to.connection.is_closed() {
            return;
        }
        let call = Call {
            connection: &reply_to.connection,
            correlation_id: reply_to.correlation_id,
            response_type: reply_to.response_type,
            source: parked.source,
            counter_slot: parked.counter_slot,
            partition_id: parked.partition_id,
            // A request that waited is answered once its backups have it, as without the flag.
            backup_aware: false,
            // Parked requests leave with their partition: it is still served here.
            local,
        };
        let mut scratch = std::mem::take(&mut self.scratch);
        match &parked.request {
            Waiting::Map(request) => request.execute(self, &call, &mut scratch),
            Waiting::MultiMap(request) => request.execute(self, &call, &mut scratch),
        }
        self.outbox.buffer(&reply_to.connection).extend_from_slice(&scratch);
        scratch.clear();
        self.scratch = scratch;
    }

    /// Completes one share of a map-wide request on this reactor: its own partitions, or
    /// another member's answer. Returns the answer to send if it was the last share.
    pub fn run_share(&mut self, job: &FanOut, share: crate::engine::wide::Share<'_>) -> Option<Vec<u8>> {
        let mut touched = Vec::new();
        let here = matches!(share, crate::engine::wide::Share::Here);
        let answer = match share {
            crate::engine::wide::Share::Here => {
                job.run_only(&mut self.share_context(&mut touched));
                None
            }
            crate::engine::wide::Share::Member(answer) => {
                job.merge_remote(answer.as_ref(), &mut self.share_context(&mut touched))
            }
        };
        let count = self.replication.reactor_count;
        for local in touched {
            let partition = PartitionId((self.replication.reactor_index + local * count) as u16);
            // A transaction's end may have brought items, or ended waiting polls.
            let queues: Vec<Box<str>> =
                self.partitions[local].stores_mut::<kind::Queue>().map(|(name, _)| name.into()).collect();
            queues.iter().for_each(|name| self.check_queue(partition, name));
            self.send_changes(partition);
            // A removeAll may have journaled events a parked journal read waits for.
            let mut others = Vec::new();
            self.partitions[local].serve_journal_readers(&mut others);
            self.send_others(others);
        }
        self.rerun_released();
        if !here {
            return answer;
        }
        // What this share changed is in its logs before the share counts as done: the last
        // share, maybe on another reactor, answers at once.
        self.flush_persistence();
        job.finish_local(&mut self.share_context(&mut Vec::new()))
    }

    /// The view of this reactor's partitions a fan-out's share runs on; `touched` collects the
    /// partitions it changed.
    fn share_context<'a>(&'a mut self, touched: &'a mut Vec<usize>) -> ShareContext<'a> {
        ShareContext {
            partitions: &mut self.partitions,
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            now_ms: self.now_ms,
            member: self.member,
            owned: &self.replication.owned,
            counters: &mut self.pn_counters,
            executors: &mut self.executors,
            replicated: &mut self.replication.replicated,
            settings: &mut self.settings,
            schemas: &self.schemas,
            reactor: (self.replication.reactor_index, self.replication.reactor_count),
            partition_count: self.replication.state.table.partition_count() as u16,
            released: &mut self.released,
            touched,
        }
    }

    /// Schedules the lock release of a client that has no connection left.
    pub fn schedule_client_cleanup(&mut self, client: Uuid, delay_ms: i64) {
        self.timers.push(Reverse((self.now_ms.saturating_add(delay_ms), Timer::ClientCleanup(client))));
    }

    /// Sends `answer` to `connection` in `delay_ms` (counted in flight on it until then).
    pub fn answer_later(&mut self, connection: &Arc<ConnectionShared>, answer: Vec<u8>, delay_ms: i64) {
        connection.begin_in_flight();
        let id = self.next_held_answer;
        self.next_held_answer += 1;
        self.held_answers.insert(id, (connection.clone(), answer));
        self.timers.push(Reverse((self.now_ms.saturating_add(delay_ms), Timer::Answer(id))));
    }

    /// Fires every timer that is due; returns clients whose cleanup period has passed (the
    /// reactor decides whether they are still gone and tells every reactor).
    pub fn fire_timers(&mut self) -> Vec<Uuid> {
        let mut clients = Vec::new();
        while let Some(Reverse((deadline, _))) = self.timers.peek() {
            if *deadline > self.now_ms {
                break;
            }
            let Reverse((_, timer)) = self.timers.pop().expect("peeked");
            match timer {
                Timer::Key { partition, kind, map, key } => self.check_key(partition, kind, &map, &key),
                Timer::Queue { partition, name } => self.check_queue(partition, &name),
                Timer::ClientCleanup(client) => clients.push(client),
                Timer::Answer(id) => {
                    let (connection, answer) = self.held_answers.remove(&id).expect("a held answer per timer");
                    self.outbox.buffer(&connection).extend_from_slice(&answer);
                    self.outbox.answered(&connection);
                }
            }
        }
        clients
    }

    /// The next timer's deadline, for the poll timeout.
    pub fn next_deadline_ms(&self) -> Option<i64> {
        self.timers.peek().map(|Reverse((deadline, _))| *deadline)
    }

    pub(crate) fn check_key(&mut self, partition: PartitionId, kind: ObjectKind, map: &str, key: &[u8]) {
        let local = self.replication.local(partition.0 as usize);
        let Some(store) = self.partitions[local].lock_table_mut(kind, map) else { return };
        let released = store.expire_lease(key, self.now_ms);
        let timed_out = store.take_timed_out(key, self.now_ms);
        for parked in &timed_out {
            let reply_to = self.partitions[local].waiters.take(parked.id).expect("a parked request is registered");
            if !reply_to.connection.is_closed() {
                let out = self.outbox.buffer(&reply_to.connection);
                let (response_type, correlation_id) = (reply_to.response_type, reply_to.correlation_id);
                let transactional = match &parked.request {
                    Waiting::Map(request) => matches!(request.op, crate::engine::map::request::MapOp::Txn { .. }),
                    Waiting::MultiMap(request) => {
                        matches!(request.op, crate::engine::multimap::request::MultiMapOp::Txn { .. })
                    }
                };
                if transactional {
                    // A transaction that waited for another's lock as long as a transaction may
                    // live gives up, as Hazelcast's does.
                    let text = "Transaction couldn't obtain lock for the key";
                    wire::write_error(out, correlation_id, &OpError::new(ErrorKind::TransactionTimedOut, text));
                } else {
                    map_ops::answer_timed_out(&mut HazelcastReply { out, response_type, correlation_id });
                }
            }
        }
        self.released.extend(released);
        self.rerun_released();
    }

    /// Releases everything `client` holds in this reactor's partitions (its locks) and re-runs
    /// what waited on it.
    pub fn release_client(&mut self, client: Uuid) {
        for partition in &mut self.partitions {
            for (_, _, object) in partition.objects_mut() {
                object.as_object_mut().release_client(client, &mut self.released);
            }
        }
        self.rerun_released();
    }

    /// Objects of partitions this reactor owns that went idle (queues empty and unused for
    /// their `empty-queue-ttl`): the reactor destroys them. Each counts as used, so that it is
    /// not chosen again while its destroy is under way.
    pub fn idle_objects(&mut self) -> Vec<(ObjectKind, Box<str>)> {
        let mut idle = Vec::new();
        for (local, partition) in self.partitions.iter_mut().enumerate() {
            if !self.replication.owned.get(local).copied().unwrap_or(false) {
                continue;
            }
            for (kind, name, object) in partition.objects_mut() {
                if object.as_object_mut().take_idle(self.now_ms) {
                    idle.push((kind, name.into()));
                }
            }
        }
        idle
    }

    /// Sends the query caches' events that are due (`map/query_cache.rs`).
    pub fn flush_query_caches(&mut self) {
        self.listeners.flush_query_caches(&mut self.outbox, crate::clock::now_ms());
    }

    /// Removes a bounded number of expired entries (round-robin over partitions) and
    /// publishes EXPIRED events for maps' entries.
    pub fn sweep_expired(&mut self) {
        let mut budget = self.sweep_budget_entries;
        for _ in 0..self.partitions.len() {
            if budget == 0 {
                break;
            }
            self.sweep_cursor = (self.sweep_cursor + 1) % self.partitions.len().max(1);
            let partition_id = PartitionId((self.reactor_index + self.sweep_cursor * self.reactor_count) as u16);
            budget -= self.sweep_replicated(self.sweep_cursor, budget);
            let owned = self.replication.owned.get(self.sweep_cursor).copied().unwrap_or(false);
            let partition = &mut self.partitions[self.sweep_cursor];
            let mut journaled = false;
            for (kind, name, object) in partition.objects_mut().filter(|(kind, _, _)| !kind.is_everywhere()) {
                let examined_budget = budget.min(object.as_object_mut().entry_count());
                let expired = object.as_object_mut().sweep_expired(self.now_ms, examined_budget);
                budget -= examined_budget;
                if owned && !expired.is_empty() {
                    match kind {
                        ObjectKind::Map => crate::engine::map::journal::journal_expired(object, &expired, self.now_ms),
                        ObjectKind::Cache => {
                            crate::engine::cache::journal::journal_expired(object, &expired, self.now_ms)
                        }
                        _ => {}
                    }
                    journaled = true;
                }
                if kind == ObjectKind::Cache && owned {
                    self.listeners.publish_cache_expired(&mut self.outbox, (self.member, name, partition_id), &expired);
                }
                // Entry listeners are map listeners.
                if kind != ObjectKind::Map || !self.listeners.has(name) {
                    continue;
                }
                for entry in expired {
                    let event = Event {
                        kind: EventKind::Expired,
                        partition_id: Some(partition_id),
                        key: Some(entry.key()),
                        value: None,
                        old_value: Some(entry.value()),
                        affected_entries: 1,
                        source: self.member,
                    };
                    self.listeners.publish(&mut self.outbox, self.member, name, event);
                }
            }
            if journaled {
                // Journal reads parked for these events are answered now.
                let mut others = Vec::new();
                self.partitions[self.sweep_cursor].serve_journal_readers(&mut others);
                self.send_others(others);
            }
        }
    }

    /// The object `name` of `kind` in local partition `local`, created empty (with its
    /// settings from configuration) if this replica has none yet: where backups and snapshots
    /// land.
    pub(crate) fn replica_object(&mut self, local: usize, kind: ObjectKind, name: &str) -> &mut Object {
        let settings = &mut self.settings;
        self.partitions[local].object_mut(kind, name, || Object::new(kind, name, settings))
    }
}

/// An owner to run requests on in tests, without sockets.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::cluster::replication::state::ClusterState;
    use ferrogrid_cluster::{MemberEntry, MemberId, PartitionTable, MAX_REPLICAS};

    const ME: MemberId = MemberId(1);

    /// The one reactor of a member alone, owning its one partition (0).
    pub(crate) fn serving_alone() -> PartitionOwner {
        let config = Arc::new(MemberConfig::default());
        let alone = Arc::new(ClusterState::alone(ME, 1));
        let mut owner = PartitionOwner::new(0, 1, Uuid::from_u128(1), config, 1, alone, Arc::default());
        let mut table = ferrogrid_cluster::PartitionTable::empty(1);
        table.version = 1;
        let mut row = [None; MAX_REPLICAS];
        row[0] = Some(ME);
        table.set_replicas(0, row);
        let members = vec![MemberEntry::new(ME, String::new())];
        let state: ClusterState = ClusterState {
            me: ME,
            members,
            members_version: 1,
            cluster_id: ME,
            table,
            links: Default::default(),
            kept: false,
        };
        let _: &PartitionTable = &state.table;
        owner.apply_cluster_state(Arc::new(state));
        owner
    }

    /// A request on partition 0 from the client `source`, answered as `response_type`.
    pub(crate) fn call(connection: &Arc<ConnectionShared>, source: u128, response_type: MessageType) -> Call<'_> {
        Call {
            connection,
            correlation_id: 9,
            response_type,
            source: Uuid::from_u128(source),
            counter_slot: 0,
            partition_id: PartitionId(0),
            backup_aware: false,
            local: 0,
        }
    }
}
