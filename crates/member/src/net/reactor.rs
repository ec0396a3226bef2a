//! A reactor: one thread, one mio event loop, a set of connections and the partitions
//! `p` with `p % reactor_count == index`.
//!
//! Life of a request: the reactor reads every ready byte of a connection, cuts messages, and
//! for each one either runs it inline (its own partition, or a client-service request), hands
//! it to the owning reactor's bounded inbox (one hop: a mod and an array index), or fans it out
//! to all reactors (map-wide requests). Whoever runs an operation writes the response straight
//! to the client's socket ([`ConnectionShared::send`]). Inline responses of one read batch are
//! written with one syscall.
//!
//! This file is the event loop: polling, the inbox, timers, sweeps, the retry list, published
//! snapshots and readiness, and the IO balancer's moves. A connection's bytes are read and cut
//! in `connection_io.rs`, a request is routed in `dispatch.rs`, and member links' traffic is
//! handled in `cluster/link.rs`.
//!
//! Bounds: the inbox (config `reactor-queue-capacity`); hand-offs that do not fit wait in a
//! per-target overflow list, and while it is non-empty the reactor reads no new requests; a
//! connection whose unsent responses exceed `connection-write-buffer-bytes` is not read until
//! its client catches up; a connection's buffered input never exceeds the message limit.

use crate::net::connection::{Connection, ConnectionState, Port};
use crate::route::dispatch::Core;
use crate::shared::{MemberWork, Shared, Task};
use crossbeam_channel::Receiver;
use ferrogrid_protocol::frame::StreamLimits;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::{info, warn};

pub const WAKER_TOKEN: Token = Token(usize::MAX);
const EVENTS_CAPACITY: usize = 1024;
const SWEEP_INTERVAL: Duration = Duration::from_millis(500);
/// How often the expiry sweep runs (each run examines a bounded number of entries).
const EXPIRY_SWEEP_INTERVAL: Duration = Duration::from_millis(100);
/// Poll timeout while work is pending on backpressure (outbound full, inbox full).
const BACKOFF: Duration = Duration::from_millis(1);

/// One reactor thread's state. Owned and run by that thread only.
pub struct Reactor {
    pub(crate) core: Core,
    pub(crate) poll: Poll,
    pub(crate) inbox: Receiver<Task>,
    pub(crate) connections: Slab<Connection>,
    /// Connections with input left unread because of backpressure or fairness.
    pub(crate) retry: Vec<Token>,
    /// A member link with more than `connection-write-buffer-bytes` waiting to be written:
    /// client connections are not read (their requests would add backups and forwards to it)
    /// until it drains. Member links are read on (the other side waits on their answers).
    pub(crate) congested_link: Option<ferrogrid_cluster::MemberId>,
    pub(crate) unauthenticated_limits: StreamLimits,
    pub(crate) last_sweep: Instant,
    pub(crate) last_expiry_sweep: Instant,
    /// `Shared::client_closes` at the last sweep.
    pub(crate) client_closes_seen: u64,
    /// How long a reactor that had work looks for more before it sleeps.
    pub(crate) spin: Duration,
}

impl std::fmt::Debug for Reactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reactor").field("index", &self.core.index).finish_non_exhaustive()
    }
}

impl Reactor {
    pub fn new(index: usize, shared: Arc<Shared>, poll: Poll, inbox: Receiver<Task>) -> Reactor {
        let spin = Duration::from_micros(shared.config.reactor_spin_micros);
        let unauthenticated = shared.config.limits.max_unauthenticated_message_bytes;
        let unauthenticated_limits = StreamLimits {
            max_frame_bytes: unauthenticated,
            max_message_bytes: unauthenticated,
            max_pending_fragmented: 1,
        };
        Reactor {
            core: Core::new(index, shared),
            poll,
            inbox,
            connections: Slab::new(),
            retry: Vec::new(),
            congested_link: None,
            unauthenticated_limits,
            last_sweep: Instant::now(),
            last_expiry_sweep: Instant::now(),
            client_closes_seen: 0,
            spin,
        }
    }

    /// Runs the event loop until the member shuts down.
    pub fn run(mut self) {
        let mut events = Events::with_capacity(EVENTS_CAPACITY);
        let index = self.core.index;
        let mut busy = false;
        let thread_id = crate::net::packing::current_thread_id().unwrap_or(0);
        self.core.shared.reactors[index].thread_id.store(thread_id, Ordering::Release);
        while !self.core.shared.is_shutting_down() {
            let timeout = self.poll_timeout();
            // Asleep, it lets the other reactors run requests on its partitions.
            self.core.owner.release();
            let polled = self.poll_events(&mut events, timeout, busy);
            if let Err(error) = polled {
                if error.kind() != io::ErrorKind::Interrupted {
                    panic!("reactor {index}: poll failed: {error}");
                }
            }
            self.core.owner.tick_clock();
            self.core.fairness.refill();
            self.core.turn.over = false;
            busy = !events.is_empty();
            self.check_links();
            for event in events.iter() {
                let token = event.token();
                if token == WAKER_TOKEN {
                    continue;
                }
                let probes = &self.core.shared.reactors[index].probes;
                if event.is_writable() {
                    probes.write_events.add(1);
                    if let Some(connection) = self.connections.get(token.0) {
                        probes.bytes_out.add(connection.shared.on_writable() as u64);
                    }
                }
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    probes.read_events.add(1);
                    self.on_readable(token);
                }
            }
            self.core.shared.reactors[index].probes.queue_depth.set(self.inbox.len() as u64);
            self.drain_inbox();
            self.check_links();
            self.fire_timers();
            if self.last_expiry_sweep.elapsed() >= EXPIRY_SWEEP_INTERVAL {
                self.last_expiry_sweep = Instant::now();
                self.core.owner.sweep_expired();
                self.core.owner.flush_query_caches();
                self.core.owner.check_pending();
                self.core.owner.exchange_counters();
                for (kind, name) in self.core.owner.idle_objects() {
                    self.core.destroy_internally(crate::cluster::peer::Service::Object(kind), name);
                }
                self.core.replay_merge();
            }
            let persisted = self.core.shared.persisted.table_version.load(Ordering::Acquire);
            self.core.owner.persistence_turn(persisted);
            let written = self.core.owner.outbox.flush() + self.core.owner.replication.flush();
            self.core.probes().bytes_out.add(written as u64);
            self.retry_overflow();
            self.retry_connections();
            self.core.handoff.wake_targets();
            if self.last_sweep.elapsed() >= SWEEP_INTERVAL {
                self.sweep();
                self.publish_snapshot();
            }
        }
        let tokens: Vec<usize> = self.connections.iter().map(|(key, _)| key).collect();
        for key in tokens {
            self.close(Token(key), "member shutting down");
        }
    }

    /// Waits for readiness. A reactor that just had work first looks again without sleeping
    /// for up to `reactor-spin-micros` (yielding the core between looks): a sleep and the
    /// wake-up after it cost more than the wait they save when the next request is near.
    fn poll_events(&mut self, events: &mut Events, timeout: Duration, busy: bool) -> io::Result<()> {
        if busy && !timeout.is_zero() && !self.spin.is_zero() {
            let until = Instant::now() + self.spin;
            loop {
                self.poll.poll(events, Some(Duration::ZERO))?;
                if !events.is_empty() || !self.inbox.is_empty() || Instant::now() >= until {
                    break;
                }
                std::thread::yield_now();
            }
            if !events.is_empty() || !self.inbox.is_empty() {
                return Ok(());
            }
        }
        let handle = &self.core.shared.reactors[self.core.index];
        handle.sleeping.store(true, Ordering::SeqCst);
        let timeout = if self.inbox.is_empty() { timeout } else { Duration::ZERO };
        let polled = self.poll.poll(events, Some(timeout));
        handle.sleeping.store(false, Ordering::SeqCst);
        polled
    }

    pub(crate) fn poll_timeout(&self) -> Duration {
        if !self.retry.is_empty() && (self.core.fairness.waiting || self.core.turn.over) {
            // Connections wait for the next round (fair scheduling, or their turn was used
            // up), not for a resource.
            return Duration::ZERO;
        }
        if !self.retry.is_empty() || self.core.handoff.has_overflow() {
            return BACKOFF;
        }
        let until_timer = self
            .core
            .owner
            .next_deadline_ms()
            .map(|deadline| Duration::from_millis(deadline.saturating_sub(self.core.owner.now_ms).max(0) as u64));
        let timeout = until_timer.map_or(EXPIRY_SWEEP_INTERVAL, |until| until.min(EXPIRY_SWEEP_INTERVAL));
        // A persisting reactor wakes for its logs' due syncs (`everysec`).
        self.core.owner.persistence_wait().map_or(timeout, |wait| timeout.min(wait))
    }

    /// Fires due lock/wait timers; a client whose cleanup period passed without a new
    /// connection has its locks released on every reactor.
    pub(crate) fn fire_timers(&mut self) {
        for client in self.core.owner.fire_timers() {
            if self.core.shared.client_is_connected(client) {
                continue;
            }
            info!(%client, "client gone for the cleanup period: releasing its locks");
            self.core.release_everywhere(client);
            // Its requests may have been forwarded: the owners of those partitions hold
            // locks in its name too.
            let state = self.core.owner.replication.state.clone();
            for member in state.links.keys() {
                let out = self.core.owner.replication.message_for(*member);
                crate::cluster::peer::write(out, crate::cluster::peer::CLIENT_GONE, 0, &client.as_u128().to_le_bytes());
            }
        }
    }

    /// Moves this reactor's busiest connection whose load (requests since the balancer last
    /// asked) is below `gap` to reactor `to`: moving a load below the gap always narrows it,
    /// so connections do not bounce between reactors. The connection's buffered input,
    /// decoder and state move with it, and this reactor reads nothing more from it, so no
    /// frame is lost, duplicated or reordered.
    pub(crate) fn migrate_busiest(&mut self, to: usize, gap: u64) {
        let busiest = self
            .connections
            .iter()
            .filter(|(_, connection)| connection.requests_since_balance > 0 && connection.requests_since_balance < gap)
            .max_by_key(|(_, connection)| connection.requests_since_balance)
            .map(|(key, _)| key);
        for (_, connection) in self.connections.iter_mut() {
            connection.requests_since_balance = 0;
        }
        let Some(key) = busiest.filter(|_| self.connections.len() >= 2 && to != self.core.index) else { return };
        self.move_connection(key, to);
    }

    /// Moves every connection to reactor `to` (packed placement made this reactor inactive).
    pub(crate) fn vacate(&mut self, to: usize) {
        if to == self.core.index || to >= self.core.shared.active_reactors() {
            return;
        }
        let keys: Vec<usize> = self.connections.iter().map(|(key, _)| key).collect();
        for key in keys {
            self.move_connection(key, to);
        }
    }

    fn move_connection(&mut self, key: usize, to: usize) {
        let mut connection = self.connections.remove(key);
        self.core.flush_output(&mut connection);
        self.deregister(&connection.shared);
        self.retry.retain(|token| token.0 != key);
        self.core.shared.reactors[self.core.index].connections.fetch_sub(1, Ordering::AcqRel);
        self.core.probes().connections_migrated_out.add(1);
        info!(peer = %connection.shared.peer, from = self.core.index, to, "IO balancer: moving connection");
        self.core.handoff.hand_off(to, Task::AdoptConnection(Box::new(connection)));
    }

    /// Takes over a connection another reactor moved here.
    pub(crate) fn adopt(&mut self, mut connection: Connection) {
        let token = Token(self.connections.vacant_key());
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(error) = self.register(&connection.shared, token, interest) {
            warn!(peer = %connection.shared.peer, %error, "could not register a moved connection");
            connection.shared.close();
            return;
        }
        connection.token = token;
        let shared = connection.shared.clone();
        let key = self.connections.insert(connection);
        assert_eq!(key, token.0, "a slab fills the key it reported vacant");
        self.core.shared.reactors[self.core.index].connections.fetch_add(1, Ordering::AcqRel);
        self.core.probes().connections_migrated_in.add(1);
        // Readiness that arrived while the connection was between reactors is not reported
        // again: look now.
        self.core.probes().bytes_out.add(shared.on_writable() as u64);
        self.on_readable(token);
    }

    /// Copies this reactor's heavier measures out for the metrics threads (about once a second).
    pub(crate) fn publish_snapshot(&mut self) {
        let mut snapshot = self.core.owner.snapshot(crate::route::operations::counted_type);
        for (_, connection) in self.connections.iter() {
            if let ConnectionState::Authenticated { client_uuid, .. } = &connection.state {
                let figures = snapshot.clients.entry(*client_uuid).or_default();
                figures.connections += 1;
                figures.requests += connection.requests;
            }
        }
        *self.core.probes().snapshot.lock() = snapshot;
        if !self.core.shared.tenants.is_empty() {
            let usage = self.core.owner.tenant_usage();
            for tenant in &self.core.shared.tenants {
                let (entries, bytes) = usage.get(tenant.config.name.as_str()).copied().unwrap_or_default();
                tenant.entries[self.core.index].store(entries, Ordering::Relaxed);
                tenant.bytes[self.core.index].store(bytes, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn schedule_retry(&mut self, token: Token) {
        if let Some(connection) = self.connections.get_mut(token.0) {
            self.core.flush_output(connection);
        }
        if !self.retry.contains(&token) {
            self.retry.push(token);
        }
    }

    pub(crate) fn retry_connections(&mut self) {
        if self.retry.is_empty() {
            return;
        }
        let tokens = std::mem::take(&mut self.retry);
        for token in tokens {
            self.on_readable(token);
        }
    }

    pub(crate) fn drain_inbox(&mut self) {
        let capacity = self.core.shared.config.limits.reactor_queue_capacity as usize;
        for _ in 0..capacity {
            let Ok(task) = self.inbox.try_recv() else {
                break;
            };
            match task {
                Task::NewConnection(stream, peer, port) => self.accept(stream, peer, port),
                Task::Partitions { connection, batch } => {
                    let ran = self.core.owner.run_handed_off(&connection, &batch) as u64;
                    connection.end_queued();
                    self.core.probes().received_ops.add(ran);
                    self.core.probes().messages_out.add(ran);
                }
                Task::FanOut(job) => {
                    if let Some(connection) = &job.connection {
                        connection.end_queued();
                    }
                    if let Some(response) = self.core.owner.run_share(&job, crate::engine::wide::Share::Here) {
                        self.core.probes().bytes_out.add(job.deliver(&response) as u64);
                        self.core.probes().messages_out.add(1);
                    }
                }
                Task::ReleaseClient(client) => self.core.owner.release_client(client),
                Task::SqlWrite(follow_up) => self.core.sql_follow_up(*follow_up),
                Task::SqlRound(next) => self.core.sql_next_round(*next),
                Task::MigrateBusiest { to, gap } => self.migrate_busiest(to, gap),
                Task::Vacate { to } => self.vacate(to),
                Task::AdoptConnection(connection) => self.adopt(*connection),
                Task::NewMemberConnection(stream, peer, tls) => {
                    self.add_connection(stream, peer, Some(tls.map(|session| *session)), Port::Member)
                }
                Task::Cluster(state) => self.on_cluster_state(state),
                Task::Member { from, work } => self.on_member_work(from, work),
                Task::Merge(step) => self.core.on_merge_step(step),
            }
        }
        self.core.owner.flush_persistence();
        let written = self.core.owner.outbox.flush() + self.core.owner.replication.flush();
        self.core.probes().bytes_out.add(written as u64);
    }

    /// The cluster as the cluster service published it: applied to this reactor's partitions;
    /// reactor 0 also sends the members that joined what every member keeps. A member counts
    /// as joined once it is both linked and in the member list: after a split heals, the
    /// links of the two sides may have stayed open, and what each side created apart
    /// (mappings, schemas, proxies, configs) must still reach the other.
    fn on_cluster_state(&mut self, state: Arc<crate::cluster::replication::state::ClusterState>) {
        let table_changed = state.table.version != self.core.owner.replication.state.table.version;
        let before = &self.core.owner.replication.state;
        let joined: Vec<_> =
            state.links.keys().filter(|peer| state.is_peer(**peer) && !before.is_peer(**peer)).copied().collect();
        // As Hazelcast drops the registrations of a member it removes: no event of this cluster
        // reaches the other side of a split (the link may stay open through the cut).
        let removed: Vec<_> =
            before.members.iter().map(|member| member.id).filter(|member| !state.is_member(*member)).collect();
        let left: Vec<_> = (before.links.iter())
            .filter(|(peer, _)| before.is_peer(**peer) && !state.is_member(**peer))
            .map(|(_, link)| link.clone())
            .collect();
        for link in &left {
            self.core.owner.listeners.drop_link(link);
        }
        self.core.owner.apply_cluster_state(state);
        self.core.txn_members_left(&removed);
        if self.core.index == 0 {
            self.core.relay_registrations_to(&joined);
            self.core.send_listing_to(&joined);
            self.core.send_schemas_to(&joined);
            self.core.send_indexes_to(&joined);
            self.core.send_configs_to(&joined);
            self.core.send_mappings_to(&joined);
            self.core.send_xa_prepared_to(&joined);
            self.core.send_query_caches_to(&joined);
        }
        if table_changed {
            self.core.owner.log_replicas();
        }
        self.core.publish_ready();
    }

    /// Member traffic another reactor read from a link for this reactor's partitions.
    fn on_member_work(&mut self, from: ferrogrid_cluster::MemberId, work: MemberWork) {
        match work {
            MemberWork::Backups(records) => self.core.owner.apply_backups(from, &records),
            MemberWork::Snapshot(payload) => {
                self.core.owner.install_snapshot(from, &payload);
                self.core.publish_ready();
            }
            MemberWork::Acks(acks) => self.core.owner.on_acks(from, &acks),
            MemberWork::BackupSyncs(syncs) => self.core.owner.on_backup_syncs(from, &syncs),
            MemberWork::CounterStates(records) => self.core.owner.apply_counter_states(from, &records),
            MemberWork::SnapshotRequest(partition) => self.core.owner.on_snapshot_request(from, partition),
            MemberWork::Replicated(crate::cluster::peer::REPLICATED_REPLY, payload) => {
                self.core.relay_replicated_replies(from, &payload)
            }
            MemberWork::Replicated(ty, payload) => self.core.owner.on_replicated(from, ty, &payload),
            MemberWork::Responses(mut batch) => {
                let mut batch: &[u8] = &mut batch;
                while batch.len() >= 4 {
                    let length = u32::from_le_bytes(batch[..4].try_into().expect("4 bytes")) as usize;
                    self.core.owner.on_forward_response(&batch[4..4 + length]);
                    batch = &batch[4 + length..];
                }
            }
        }
    }

    pub(crate) fn retry_overflow(&mut self) {
        for target in 0..self.core.handoff.overflow.len() {
            while let Some(task) = self.core.handoff.overflow[target].pop_front() {
                if let Err(task) = self.core.shared.reactors[target].try_push(task) {
                    self.core.handoff.overflow[target].push_front(task);
                    break;
                }
                self.core.handoff.wake[target] = true;
            }
        }
    }

    /// Closes connections that went silent or whose socket failed while writing.
    pub(crate) fn sweep(&mut self) {
        self.last_sweep = Instant::now();
        let timeout = Duration::from_millis(self.core.shared.config.client_heartbeat_timeout_ms);
        let expired: Vec<(Token, &'static str)> = self
            .connections
            .iter()
            .filter_map(|(key, connection)| {
                if connection.shared.is_closed() {
                    Some((Token(key), "socket failed"))
                } else if connection.last_read.elapsed() > timeout {
                    Some((Token(key), "no heartbeat from client within the timeout"))
                } else {
                    None
                }
            })
            .collect();
        for (token, reason) in expired {
            self.close(token, reason);
        }
        self.core.answer_schemas_due();
        self.core.txn_expire();
        let closes = self.core.shared.client_closes.load(Ordering::Acquire);
        if closes != self.client_closes_seen {
            self.client_closes_seen = closes;
            self.core.owner.listeners.drop_closed();
        }
    }
}

impl Core {
    /// Publishes this reactor's readiness (every replica it holds is complete) for the
    /// cluster service.
    pub(crate) fn publish_ready(&self) {
        if let Some(version) = self.owner.replication.ready_version() {
            let previous = self.shared.reactors[self.index].ready_version.swap(version, Ordering::AcqRel);
            if previous != version {
                let _ = self.shared.cluster_events.try_send(crate::shared::ClusterEvent::Ready);
            }
        }
    }
}
