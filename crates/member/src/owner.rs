//! What a reactor does as the owner of its partitions: run their operations, re-run requests
//! released from key locks, fire lock and wait deadlines, sweep expired entries, and publish
//! entry events. Owned by one reactor thread; the reactor does the IO around it.

use crate::connection::ConnectionShared;
use crate::fanout::{FanOut, ShareContext};
use crate::listeners::{Event, EventKind, Listeners};
use crate::locks::Parked;
use crate::map_ops::{self, OpContext, SettingsCache};
use crate::outbox::Outbox;
use crate::store::PartitionStore;
use ferrogrid_config::MemberConfig;
use ferrogrid_protocol::{DecodeError, Message, Uuid};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use tracing::warn;

/// Entries the expiry sweep examines per reactor per tick (bounds the pause it causes).
const SWEEP_BUDGET_ENTRIES: usize = 2_000;

/// Something that must happen at a time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Timer {
    /// Re-check a key's lock lease and the deadlines of requests parked on it.
    Key { partition: usize, map: Box<str>, key: Box<[u8]> },
    /// Release the locks of a client that has had no connection since it was scheduled.
    ClientCleanup(Uuid),
}

/// The partitions of one reactor and everything that acts on them.
#[derive(Debug)]
pub struct PartitionOwner {
    /// Partition `p` is at `p / reactor_count`.
    pub partitions: Vec<PartitionStore>,
    reactor_index: usize,
    reactor_count: usize,
    member: Uuid,
    pub listeners: Listeners,
    pub outbox: Outbox,
    settings: SettingsCache,
    released: Vec<Parked>,
    deadlines: Vec<map_ops::KeyDeadline>,
    timers: BinaryHeap<Reverse<(i64, Timer)>>,
    /// Milliseconds since the epoch, read once per reactor loop iteration.
    pub now_ms: i64,
    sweep_cursor: usize,
    scratch: Vec<u8>,
    /// Backups, replica hand-offs and forwarded requests of these partitions.
    pub replication: crate::replication::Replication,
    /// Latency of every request this reactor ran, by type (nanoseconds).
    latency:
        std::collections::HashMap<ferrogrid_protocol::MessageType, hdrhistogram::Histogram<u64>, ahash::RandomState>,
    /// Latency of every request by tenant id (only with tenants configured).
    tenant_latency: Vec<hdrhistogram::Histogram<u64>>,
}

impl PartitionOwner {
    pub fn new(
        reactor_index: usize,
        reactor_count: usize,
        member: Uuid,
        config: Arc<MemberConfig>,
        partition_count: u16,
        cluster: Arc<crate::replication::ClusterState>,
    ) -> Self {
        let owned = (0..partition_count as usize).filter(|p| p % reactor_count == reactor_index).count();
        let backup_timeout_ms = config.cluster.backup_timeout_ms;
        let tenants = config.tenants.tenants.len();
        let tenant_latency =
            if tenants == 0 { Vec::new() } else { (0..=tenants).map(|_| crate::probes::latency_histogram()).collect() };
        PartitionOwner {
            replication: crate::replication::Replication::new(
                reactor_index,
                reactor_count,
                owned,
                cluster,
                backup_timeout_ms,
            ),
            partitions: (0..owned).map(|_| PartitionStore::default()).collect(),
            reactor_index,
            reactor_count,
            member,
            listeners: Listeners::default(),
            outbox: Outbox::default(),
            settings: SettingsCache::new(config, partition_count),
            released: Vec::new(),
            deadlines: Vec::new(),
            timers: BinaryHeap::new(),
            now_ms: now_ms(),
            sweep_cursor: 0,
            scratch: Vec::new(),
            latency: std::collections::HashMap::default(),
            tenant_latency,
        }
    }

    pub fn record_latency(
        &mut self,
        message_type: ferrogrid_protocol::MessageType,
        tenant: u16,
        elapsed: std::time::Duration,
    ) {
        let nanos = elapsed.as_nanos().max(1) as u64;
        let histogram = self.latency.entry(message_type).or_insert_with(crate::probes::latency_histogram);
        histogram.saturating_record(nanos);
        if let Some(histogram) = self.tenant_latency.get_mut(tenant as usize) {
            histogram.saturating_record(nanos);
        }
    }

    /// Entries and bytes each tenant's maps hold in partitions this member owns, by tenant
    /// name (scoped map names: `tenant\0map`).
    pub fn tenant_usage(&self) -> std::collections::HashMap<&str, (u64, u64)> {
        let mut usage: std::collections::HashMap<&str, (u64, u64)> = std::collections::HashMap::new();
        for (local, partition) in self.partitions.iter().enumerate() {
            if !self.replication.owned.get(local).copied().unwrap_or(false) {
                continue;
            }
            for (name, store) in partition.maps() {
                if let Some((tenant, _)) = crate::tenants::split(name) {
                    let figures = usage.entry(tenant).or_default();
                    figures.0 += store.len() as u64;
                    figures.1 += store.held_bytes() as u64;
                }
            }
        }
        usage
    }

    /// Copies latency histograms and per-map figures out for the metrics threads.
    pub fn snapshot(&self) -> crate::probes::ReactorSnapshot {
        let latency = self.latency.iter().map(|(ty, histogram)| (*ty, histogram.clone())).collect();
        let tenant_latency = self.tenant_latency.clone();
        let mut snapshot = crate::probes::ReactorSnapshot { latency, tenant_latency, ..Default::default() };
        for partition in &self.partitions {
            for (name, store) in partition.maps() {
                let figures = snapshot.maps.entry(name.to_owned()).or_default();
                figures.entries += store.len() as u64;
                figures.bytes += store.held_bytes() as u64;
                for (slot, count) in store.op_counts.iter().enumerate().filter(|(_, count)| **count > 0) {
                    *figures.ops.entry(map_ops::PARTITION_OPERATIONS[slot]).or_insert(0) += count;
                }
            }
        }
        snapshot
    }

    /// The settings of `map` (resolved once per reactor).
    pub fn settings_for(&mut self, map: &str) -> Arc<crate::store::MapSettings> {
        self.settings.get(map)
    }

    pub fn tick_clock(&mut self) {
        self.now_ms = now_ms();
    }

    /// Runs a partition-bound request for a partition this reactor owns; the response goes
    /// to `out` (or stays pending if the request parked on a lock).
    pub fn execute(
        &mut self,
        connection: &Arc<ConnectionShared>,
        source: Uuid,
        message: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let partition_id = message.partition_id();
        let local = partition_id as usize / self.reactor_count;
        if !self.replication.serves(partition_id as usize) {
            let text = format!("partition {partition_id} is migrating or not owned by this member; retry");
            let holder = ferrogrid_protocol::error::ErrorHolder {
                code: ferrogrid_protocol::error::PARTITION_MIGRATING,
                message: Some(&text),
            };
            ferrogrid_protocol::error::write_error_response(out, message.correlation_id(), &[holder]);
            return Ok(());
        }
        let start = out.len();
        let mut ctx = OpContext {
            now_ms: self.now_ms,
            member: self.member,
            source,
            partition_id,
            settings: &mut self.settings,
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            released: &mut self.released,
            deadlines: &mut self.deadlines,
        };
        let result = map_ops::execute(&mut self.partitions[local], &mut ctx, connection, message, out);
        if self.partitions[local].tracks_changes() {
            self.replicate(partition_id as usize, connection, message.correlation_id(), out, start);
        }
        for (deadline, map, key) in self.deadlines.drain(..) {
            self.timers.push(Reverse((deadline, Timer::Key { partition: local, map, key })));
        }
        if !self.released.is_empty() {
            self.rerun_released();
        }
        result
    }

    /// Re-runs requests released from key locks, in the order they parked; their answers go
    /// to their own connections.
    fn rerun_released(&mut self) {
        while !self.released.is_empty() {
            let batch = std::mem::take(&mut self.released);
            for parked in batch {
                self.rerun(parked);
            }
        }
    }

    fn rerun(&mut self, parked: Parked) {
        if parked.connection.is_closed() {
            return;
        }
        let message = Message::parse(&parked.message).expect("parked requests were parsed before");
        let mut scratch = std::mem::take(&mut self.scratch);
        if self.execute(&parked.connection, parked.source, &message, &mut scratch).is_ok() {
            self.outbox.buffer(&parked.connection).extend_from_slice(&scratch);
        }
        scratch.clear();
        self.scratch = scratch;
    }

    /// Runs requests another reactor handed over (each a `u32` LE length, the client's uuid,
    /// its tenant (`u16` LE), then the request, in `batch`); answers go to the outbox. Returns
    /// how many it ran.
    pub fn run_handed_off(&mut self, connection: &Arc<ConnectionShared>, mut batch: &[u8]) -> usize {
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut ran = 0;
        while !batch.is_empty() {
            let length = u32::from_le_bytes(batch[..4].try_into().expect("length prefix")) as usize;
            let source = Uuid::from_u128(u128::from_le_bytes(batch[4..20].try_into().expect("uuid")));
            let tenant = u16::from_le_bytes(batch[20..22].try_into().expect("tenant"));
            let bytes = &batch[22..22 + length];
            batch = &batch[22 + length..];
            self.outbox.answered(connection);
            if connection.is_closed() {
                continue;
            }
            let message = Message::parse(bytes).expect("the origin reactor parsed this message");
            let started = std::time::Instant::now();
            if let Err(error) = self.execute(connection, source, &message, &mut scratch) {
                warn!(peer = %connection.peer, %error, "closing connection: malformed request");
                connection.close();
            }
            self.record_latency(message.message_type(), tenant, started.elapsed());
            ran += 1;
            self.outbox.buffer(connection).extend_from_slice(&scratch);
            scratch.clear();
        }
        self.scratch = scratch;
        ran
    }

    /// Completes one share of a map-wide request on this reactor: its own partitions, or
    /// another member's answer. Returns the answer to send if it was the last share.
    pub fn run_share(&mut self, job: &FanOut, share: crate::fanout::Share<'_>) -> Option<Vec<u8>> {
        let mut context = ShareContext {
            partitions: &mut self.partitions,
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            now_ms: self.now_ms,
            member: self.member,
            owned: &self.replication.owned,
        };
        match share {
            crate::fanout::Share::Here => job.run_share(&mut context),
            crate::fanout::Share::Member(answer) => job.merge_remote(answer.as_ref(), &mut context),
        }
    }

    /// Schedules the lock release of a client that has no connection left.
    pub fn schedule_client_cleanup(&mut self, client: Uuid, delay_ms: i64) {
        self.timers.push(Reverse((self.now_ms.saturating_add(delay_ms), Timer::ClientCleanup(client))));
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
                Timer::Key { partition, map, key } => self.check_key(partition, &map, &key),
                Timer::ClientCleanup(client) => clients.push(client),
            }
        }
        clients
    }

    /// The next timer's deadline, for the poll timeout.
    pub fn next_deadline_ms(&self) -> Option<i64> {
        self.timers.peek().map(|Reverse((deadline, _))| *deadline)
    }

    fn check_key(&mut self, partition: usize, map: &str, key: &[u8]) {
        let Some(store) = self.partitions[partition].existing_mut(map) else { return };
        let released = store.locks.expire_lease(key, self.now_ms);
        let timed_out = store.locks.take_timed_out(key, self.now_ms);
        for parked in &timed_out {
            if !parked.connection.is_closed() {
                map_ops::answer_timed_out(parked, self.outbox.buffer(&parked.connection));
            }
        }
        self.released.extend(released);
        self.rerun_released();
    }

    /// Releases every lock `client` holds in this reactor's partitions and re-runs what
    /// waited on them.
    pub fn release_client(&mut self, client: Uuid) {
        for partition in &mut self.partitions {
            for (_, store) in partition.maps_mut() {
                for (_, parked) in store.locks.release_client(client) {
                    self.released.extend(parked);
                }
            }
        }
        self.rerun_released();
    }

    /// Removes a bounded number of expired entries (round-robin over partitions) and
    /// publishes their EXPIRED events.
    pub fn sweep_expired(&mut self) {
        let mut budget = SWEEP_BUDGET_ENTRIES;
        for _ in 0..self.partitions.len() {
            if budget == 0 {
                break;
            }
            self.sweep_cursor = (self.sweep_cursor + 1) % self.partitions.len().max(1);
            let partition_id = (self.reactor_index + self.sweep_cursor * self.reactor_count) as i32;
            let partition = &mut self.partitions[self.sweep_cursor];
            for (name, store) in partition.maps_mut() {
                let examined_budget = budget.min(store.len());
                let expired = store.sweep(self.now_ms, examined_budget);
                budget -= examined_budget;
                for (key, value) in expired {
                    if self.listeners.has(name) {
                        let event = Event {
                            kind: EventKind::Expired,
                            partition_id,
                            key: Some(&key),
                            value: None,
                            old_value: Some(&value),
                            affected_entries: 1,
                            source: self.member,
                        };
                        self.listeners.publish(&mut self.outbox, self.member, name, event);
                    }
                }
            }
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as i64)
}
