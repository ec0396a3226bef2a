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
//! Bounds: the inbox (config `reactor-queue-capacity`); hand-offs that do not fit wait in a
//! per-target overflow list, and while it is non-empty the reactor reads no new requests; a
//! connection whose unsent responses exceed `connection-write-buffer-bytes` is not read until
//! its client catches up; a connection's buffered input never exceeds the message limit.

use crate::client::{self, After};
use crate::connection::{Connection, ConnectionId, ConnectionShared, ConnectionState};
use crate::envelope::{Forward, Handoffs};
use crate::fanout::{self, Classified, FanOut, WideRequest};
use crate::operations::{self, Flags, Operation, Route};
use crate::owner::{Call, PartitionOwner};
use crate::replication::{Forward as Pending, Route as Route_};
use crate::request::{ErrorKind, OpError};
use crate::shared::CLIENT_CLEANUP_PERIOD_MS;
use crate::shared::{MemberWork, Shared, Task};
use crate::wire;
use crossbeam_channel::Receiver;
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::codec::{ClientAddClusterViewListener, ClientDestroyProxy};
use ferrogrid_protocol::error;
use ferrogrid_protocol::frame::{Decoded, StreamLimits, CLIENT_PROTOCOL_HEADER};
use ferrogrid_protocol::message::{RequestHeader, REQUEST_HEADER_SIZE};
use ferrogrid_protocol::{Message, MessageType, Uuid};
use mio::{Events, Interest, Poll, Token};
use slab::Slab;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::{debug, info, warn};

pub const WAKER_TOKEN: Token = Token(usize::MAX);
const EVENTS_CAPACITY: usize = 1024;
const SWEEP_INTERVAL: Duration = Duration::from_millis(500);
/// How often the expiry sweep runs (each run examines a bounded number of entries).
const EXPIRY_SWEEP_INTERVAL: Duration = Duration::from_millis(100);
/// Poll timeout while work is pending on backpressure (outbound full, inbox full).
const BACKOFF: Duration = Duration::from_millis(1);
/// How many requests may be cut from one connection's input between checks of its unsent
/// responses written by other reactors.
const OUTBOUND_CHECK_INTERVAL: usize = 64;

/// Why [`Core::process_input`] stopped.
#[derive(Debug, PartialEq, Eq)]
enum Progress {
    /// Every complete message was handled; waiting for more bytes.
    NeedInput,
    /// Stopped on a bound (unsent responses, requests in flight, the connection's turn, its
    /// tenant's share or quota); retry later.
    Throttled,
}

/// What to do with a connection after handling one message.
enum Flow {
    Continue,
    Close(String),
}

/// Everything a reactor owns except its connections (so both can be borrowed at once).
struct Core {
    index: usize,
    shared: Arc<Shared>,
    /// The partitions this reactor owns and everything that acts on them.
    owner: PartitionOwner,
    /// Hand-offs that did not fit a target's inbox, per target, in order.
    overflow: Vec<VecDeque<Task>>,
    /// Reactors to wake at the end of this batch.
    wake: Vec<bool>,
    /// Requests for other reactors cut from the connection being processed, per target.
    outgoing: Vec<Handoffs>,
    /// Backup records read from a member link for other reactors' partitions, per target.
    member_backups: Vec<Vec<u8>>,
    /// Answers read from a member link to requests other reactors forwarded, per target
    /// (each `u32` LE length-prefixed).
    member_responses: Vec<Vec<u8>>,
    authenticated_limits: StreamLimits,
    /// Whether the request being handled went to another reactor (it is timed there).
    handed_off: bool,
    /// Whether the connection being processed is a member link this member opened.
    current_outgoing: bool,
    /// Deficit round robin over tenants.
    fairness: crate::tenants::Fairness,
    /// Requests the connection being processed may still have cut in its current turn.
    turn_budget: usize,
    /// A connection ended its turn with input left: poll without sleeping this iteration.
    turn_over: bool,
}

/// One reactor thread's state. Owned and run by that thread only.
pub struct Reactor {
    core: Core,
    poll: Poll,
    inbox: Receiver<Task>,
    connections: Slab<Connection>,
    /// Connections with input left unread because of backpressure or fairness.
    retry: Vec<Token>,
    /// A member link with more than `connection-write-buffer-bytes` waiting to be written:
    /// client connections are not read (their requests would add backups and forwards to it)
    /// until it drains. Member links are read on (the other side waits on their answers).
    congested_link: Option<ferrogrid_cluster::MemberId>,
    unauthenticated_limits: StreamLimits,
    last_sweep: Instant,
    last_expiry_sweep: Instant,
}

impl std::fmt::Debug for Reactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reactor").field("index", &self.core.index).finish_non_exhaustive()
    }
}

impl Reactor {
    pub fn new(index: usize, shared: Arc<Shared>, poll: Poll, inbox: Receiver<Task>) -> Reactor {
        let count = shared.reactor_count();
        let (member, partition_count) = (shared.view.member_uuid, shared.view.partition_count);
        let events_dropped = shared.reactors[index].probes.events_dropped.clone();
        let owner = PartitionOwner::new(
            index,
            count,
            member,
            shared.config.clone(),
            partition_count,
            shared.cluster_state(),
            events_dropped,
        );
        let limits = &shared.config.limits;
        let authenticated_limits = StreamLimits {
            max_frame_bytes: limits.max_frame_bytes,
            max_message_bytes: limits.max_message_bytes,
            max_pending_fragmented: limits.max_pending_fragmented_messages,
        };
        let unauthenticated = limits.max_unauthenticated_message_bytes;
        let unauthenticated_limits = StreamLimits {
            max_frame_bytes: unauthenticated,
            max_message_bytes: unauthenticated,
            max_pending_fragmented: 1,
        };
        let tenants = &shared.config.tenants;
        let weights: Vec<u32> = std::iter::once(1).chain(tenants.tenants.iter().map(|tenant| tenant.weight)).collect();
        let fairness = crate::tenants::Fairness::new(tenants.fair_scheduling, &weights);
        let requests_per_turn = limits.requests_per_turn as usize;
        Reactor {
            core: Core {
                index,
                shared,
                owner,
                overflow: (0..count).map(|_| VecDeque::new()).collect(),
                wake: vec![false; count],
                outgoing: (0..count).map(|_| Handoffs::default()).collect(),
                member_backups: vec![Vec::new(); count],
                member_responses: vec![Vec::new(); count],
                authenticated_limits,
                handed_off: false,
                current_outgoing: false,
                fairness,
                turn_budget: requests_per_turn,
                turn_over: false,
            },
            poll,
            inbox,
            connections: Slab::new(),
            retry: Vec::new(),
            congested_link: None,
            unauthenticated_limits,
            last_sweep: Instant::now(),
            last_expiry_sweep: Instant::now(),
        }
    }

    /// Runs the event loop until the member shuts down.
    pub fn run(mut self) {
        let mut events = Events::with_capacity(EVENTS_CAPACITY);
        let index = self.core.index;
        while !self.core.shared.is_shutting_down() {
            let timeout = self.poll_timeout();
            let handle = &self.core.shared.reactors[index];
            handle.sleeping.store(true, Ordering::SeqCst);
            let timeout = if self.inbox.is_empty() { timeout } else { Duration::ZERO };
            let polled = self.poll.poll(&mut events, Some(timeout));
            handle.sleeping.store(false, Ordering::SeqCst);
            if let Err(error) = polled {
                if error.kind() != io::ErrorKind::Interrupted {
                    panic!("reactor {index}: poll failed: {error}");
                }
            }
            self.core.owner.tick_clock();
            self.core.fairness.refill();
            self.core.turn_over = false;
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
            self.fire_timers();
            if self.last_expiry_sweep.elapsed() >= EXPIRY_SWEEP_INTERVAL {
                self.last_expiry_sweep = Instant::now();
                self.core.owner.sweep_expired();
                self.core.owner.check_pending();
            }
            let written = self.core.owner.outbox.flush() + self.core.owner.replication.flush();
            self.core.probes().bytes_out.add(written as u64);
            self.retry_overflow();
            self.retry_connections();
            self.core.wake_targets();
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

    fn poll_timeout(&self) -> Duration {
        if !self.retry.is_empty() && (self.core.fairness.waiting || self.core.turn_over) {
            // Connections wait for the next round (fair scheduling, or their turn was used
            // up), not for a resource.
            return Duration::ZERO;
        }
        if !self.retry.is_empty() || self.core.overflow.iter().any(|queue| !queue.is_empty()) {
            return BACKOFF;
        }
        let until_timer = self
            .core
            .owner
            .next_deadline_ms()
            .map(|deadline| Duration::from_millis(deadline.saturating_sub(self.core.owner.now_ms).max(0) as u64));
        until_timer.map_or(EXPIRY_SWEEP_INTERVAL, |until| until.min(EXPIRY_SWEEP_INTERVAL))
    }

    /// Fires due lock/wait timers; a client whose cleanup period passed without a new
    /// connection has its locks released on every reactor.
    fn fire_timers(&mut self) {
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
                crate::peer::write(out, crate::peer::CLIENT_GONE, 0, &client.as_u128().to_le_bytes());
            }
        }
    }

    /// Moves this reactor's busiest connection whose load (requests since the balancer last
    /// asked) is below `gap` to reactor `to`: moving a load below the gap always narrows it,
    /// so connections do not bounce between reactors. The connection's buffered input,
    /// decoder and state move with it, and this reactor reads nothing more from it, so no
    /// frame is lost, duplicated or reordered.
    fn migrate_busiest(&mut self, to: usize, gap: u64) {
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
        let mut connection = self.connections.remove(key);
        self.core.flush_output(&mut connection);
        let _ = self.poll.registry().deregister(&mut ConnectionStreamRef(&connection.shared));
        self.retry.retain(|token| token.0 != key);
        self.core.shared.reactors[self.core.index].connections.fetch_sub(1, Ordering::AcqRel);
        self.core.probes().connections_migrated_out.add(1);
        info!(peer = %connection.shared.peer, from = self.core.index, to, "IO balancer: moving connection");
        self.core.hand_off(to, Task::AdoptConnection(Box::new(connection)));
    }

    /// Takes over a connection another reactor moved here.
    fn adopt(&mut self, mut connection: Connection) {
        let entry = self.connections.vacant_entry();
        let token = Token(entry.key());
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(error) = self.poll.registry().register(&mut ConnectionStreamRef(&connection.shared), token, interest)
        {
            warn!(peer = %connection.shared.peer, %error, "could not register a moved connection");
            connection.shared.close();
            return;
        }
        connection.token = token;
        let shared = connection.shared.clone();
        entry.insert(connection);
        self.core.shared.reactors[self.core.index].connections.fetch_add(1, Ordering::AcqRel);
        self.core.probes().connections_migrated_in.add(1);
        // Readiness that arrived while the connection was between reactors is not reported
        // again: look now.
        self.core.probes().bytes_out.add(shared.on_writable() as u64);
        self.on_readable(token);
    }

    /// Copies this reactor's heavier measures out for the metrics threads (about once a second).
    fn publish_snapshot(&mut self) {
        let mut snapshot = self.core.owner.snapshot();
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

    fn accept(&mut self, stream: mio::net::TcpStream, peer: std::net::SocketAddr) {
        self.add_connection(stream, peer, false);
    }

    /// Publishes this reactor's readiness (every replica it holds is complete) for the
    /// cluster service.
    fn publish_ready(&self) {
        if let Some(version) = self.core.owner.replication.ready_version() {
            let previous = self.core.shared.reactors[self.core.index].ready_version.swap(version, Ordering::AcqRel);
            if previous != version {
                let _ = self.core.shared.cluster_events.try_send(crate::shared::ClusterEvent::Ready);
            }
        }
    }

    fn add_connection(&mut self, mut stream: mio::net::TcpStream, peer: std::net::SocketAddr, outgoing: bool) {
        let entry = self.connections.vacant_entry();
        let token = Token(entry.key());
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(error) = self.poll.registry().register(&mut stream, token, interest) {
            warn!(%peer, %error, "could not register connection");
            self.core.shared.open_connections.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        let id = ConnectionId(self.core.shared.next_connection_id.fetch_add(1, Ordering::Relaxed));
        let shared = Arc::new(ConnectionShared::new(id, peer, self.core.index, stream));
        let mut connection = Connection::new(shared, token, self.unauthenticated_limits);
        connection.outgoing = outgoing;
        entry.insert(connection);
        self.core.shared.reactors[self.core.index].connections.fetch_add(1, Ordering::AcqRel);
        debug!(%peer, reactor = self.core.index, "connection accepted");
        // Bytes may have arrived before registration: edge-triggered polling would not say so.
        self.on_readable(token);
    }

    fn close(&mut self, token: Token, reason: &str) {
        let Some(connection) = self.connections.try_remove(token.0) else {
            return;
        };
        self.core.probes().bytes_out.add(connection.shared.send(&connection.output) as u64);
        if let ConnectionState::Authenticated { client_uuid, tenant, .. } = connection.state {
            if let Some(runtime) = self.core.shared.tenant(tenant) {
                runtime.connections.fetch_sub(1, Ordering::AcqRel);
            }
            if self.core.shared.client_disconnected(client_uuid) {
                self.core.owner.schedule_client_cleanup(client_uuid, CLIENT_CLEANUP_PERIOD_MS);
            }
        }
        if matches!(connection.state, ConnectionState::Member { .. }) {
            let event = crate::shared::ClusterEvent::Closed { link: connection.shared.id };
            let _ = self.core.shared.cluster_events.try_send(event);
        }
        let _ = self.poll.registry().deregister(&mut ConnectionStreamRef(&connection.shared));
        connection.shared.close();
        self.core.shared.reactors[self.core.index].connections.fetch_sub(1, Ordering::AcqRel);
        self.core.shared.open_connections.fetch_sub(1, Ordering::AcqRel);
        info!(peer = %connection.shared.peer, reason, "connection closed");
    }

    /// Whether the reactor may read more requests from this connection now.
    fn may_read(&self, connection: &Connection) -> bool {
        let write_limit = self.core.shared.config.limits.connection_write_buffer_bytes as usize;
        let in_flight_limit = self.core.shared.config.limits.max_in_flight_per_connection as usize;
        let member_link = matches!(connection.state, ConnectionState::Member { .. } | ConnectionState::MemberHello);
        self.core.overflow.iter().all(VecDeque::is_empty)
            && connection.shared.in_flight() < in_flight_limit
            && connection.shared.pending_bytes() <= write_limit
            && (member_link || self.congested_link.is_none())
    }

    /// Notes whether a member link has more pending than a connection may (a slow or stopped
    /// member): its backlog is bounded by not reading clients until it drains.
    fn check_links(&mut self) {
        let limit = self.core.shared.config.limits.connection_write_buffer_bytes as usize;
        let links = &self.core.owner.replication.state.links;
        let congested =
            links.iter().map(|(peer, link)| (*peer, link.pending_bytes())).find(|(_, bytes)| *bytes > limit);
        match (self.congested_link, congested) {
            (None, Some((peer, bytes))) => warn!(
                reactor = self.core.index,
                member = %format!("{:032x}", peer.0),
                bytes,
                limit,
                "member link congested: client connections are not read until it drains"
            ),
            (Some(peer), None) => {
                let member = format!("{:032x}", peer.0);
                info!(reactor = self.core.index, %member, "member link drained: reading clients again");
            }
            _ => {}
        }
        self.congested_link = congested.map(|(peer, _)| peer);
    }

    fn on_readable(&mut self, token: Token) {
        let buffer_limit = self.core.authenticated_limits.max_message_bytes as usize + (64 << 10);
        let limits = &self.core.shared.config.limits;
        self.core.turn_budget = limits.requests_per_turn as usize;
        for _ in 0..limits.reads_per_turn {
            let Some(connection) = self.connections.get_mut(token.0) else {
                return;
            };
            // Messages already buffered are processed before reading more. Stopped by its
            // tenant's fair share or rate quota, the connection waits for a retry: its socket may
            // already be drained, and edge-triggered polling would not report it again.
            match self.core.process_input(connection) {
                Err(reason) => return self.close(token, &reason),
                Ok(Progress::Throttled) => return self.schedule_retry(token),
                Ok(Progress::NeedInput) => {}
            }
            let connection = &self.connections[token.0];
            if !self.may_read(connection) {
                return self.schedule_retry(token);
            }
            let connection = &mut self.connections[token.0];
            match connection.input.read_from(ConnectionStreamRef(&connection.shared), buffer_limit) {
                Ok(0) => return self.close(token, "closed by peer"),
                Ok(count) => {
                    connection.last_read = Instant::now();
                    self.core.probes().bytes_in.add(count as u64);
                    if count < connection.input.last_read_capacity() {
                        // A short read drained the socket; edge-triggered polling reports new
                        // bytes, so skip the read that would only say "would block".
                        match self.core.process_input(connection) {
                            Err(reason) => return self.close(token, &reason),
                            Ok(Progress::Throttled) => return self.schedule_retry(token),
                            Ok(Progress::NeedInput) => {}
                        }
                        self.core.flush_output(connection);
                        return;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    self.core.flush_output(connection);
                    return;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return self.close(token, &format!("read failed: {error}")),
            }
        }
        // Fairness: more may be waiting; come back after other connections had a turn.
        if let Some(connection) = self.connections.get_mut(token.0) {
            if let Err(reason) = self.core.process_input(connection) {
                return self.close(token, &reason);
            }
            self.core.flush_output(connection);
        }
        self.core.turn_over = true;
        self.schedule_retry(token);
    }

    fn schedule_retry(&mut self, token: Token) {
        if let Some(connection) = self.connections.get_mut(token.0) {
            self.core.flush_output(connection);
        }
        if !self.retry.contains(&token) {
            self.retry.push(token);
        }
    }

    fn retry_connections(&mut self) {
        if self.retry.is_empty() {
            return;
        }
        let tokens = std::mem::take(&mut self.retry);
        for token in tokens {
            self.on_readable(token);
        }
    }

    fn drain_inbox(&mut self) {
        let capacity = self.core.shared.config.limits.reactor_queue_capacity as usize;
        for _ in 0..capacity {
            let Ok(task) = self.inbox.try_recv() else {
                break;
            };
            match task {
                Task::NewConnection(stream, peer) => self.accept(stream, peer),
                Task::Partitions { connection, batch } => {
                    let ran = self.core.owner.run_handed_off(&connection, &batch) as u64;
                    self.core.probes().received_ops.add(ran);
                    self.core.probes().messages_out.add(ran);
                }
                Task::FanOut(job) => {
                    if let Some(response) = self.core.owner.run_share(&job, fanout::Share::Here) {
                        self.core.probes().bytes_out.add(job.connection.send(&response) as u64);
                        self.core.probes().messages_out.add(1);
                        job.connection.end_in_flight(1);
                    }
                }
                Task::ReleaseClient(client) => self.core.owner.release_client(client),
                Task::MigrateBusiest { to, gap } => self.migrate_busiest(to, gap),
                Task::AdoptConnection(connection) => self.adopt(*connection),
                Task::NewMemberConnection(stream, peer) => self.add_connection(stream, peer, true),
                Task::Cluster(state) => {
                    let table_changed = state.table.version != self.core.owner.replication.state.table.version;
                    self.core.owner.apply_cluster_state(state);
                    if table_changed && self.core.index == 0 {
                        self.core.owner.log_replicas();
                    }
                    self.publish_ready();
                }
                Task::Member { from, work } => match work {
                    MemberWork::Backups(records) => self.core.owner.apply_backups(from, &records),
                    MemberWork::Snapshot(payload) => {
                        self.core.owner.install_snapshot(from, &payload);
                        self.publish_ready();
                    }
                    MemberWork::Acks(acks) => self.core.owner.on_acks(from, &acks),
                    MemberWork::SnapshotRequest(partition) => self.core.owner.on_snapshot_request(from, partition),
                    MemberWork::Responses(mut batch) => {
                        let mut batch: &[u8] = &mut batch;
                        while batch.len() >= 4 {
                            let length = u32::from_le_bytes(batch[..4].try_into().expect("4 bytes")) as usize;
                            self.core.owner.on_forward_response(&batch[4..4 + length]);
                            batch = &batch[4 + length..];
                        }
                    }
                },
            }
        }
        let written = self.core.owner.outbox.flush() + self.core.owner.replication.flush();
        self.core.probes().bytes_out.add(written as u64);
    }

    fn retry_overflow(&mut self) {
        for target in 0..self.core.overflow.len() {
            while let Some(task) = self.core.overflow[target].pop_front() {
                if let Err(task) = self.core.shared.reactors[target].try_push(task) {
                    self.core.overflow[target].push_front(task);
                    break;
                }
                self.core.wake[target] = true;
            }
        }
    }

    /// Closes connections that went silent or whose socket failed while writing.
    fn sweep(&mut self) {
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
    }
}

impl Core {
    /// Cuts and handles every complete message buffered on `connection`.
    fn process_input(&mut self, connection: &mut Connection) -> Result<Progress, String> {
        let progress = self.process_messages(connection);
        self.send_outgoing(&connection.shared);
        if let ConnectionState::Member { peer } = connection.state {
            self.send_member_work(peer);
        }
        progress
    }

    /// Hands other reactors the member traffic read for them from one link.
    fn send_member_work(&mut self, from: MemberId) {
        for target in 0..self.member_backups.len() {
            if !self.member_backups[target].is_empty() {
                let records = std::mem::take(&mut self.member_backups[target]).into_boxed_slice();
                self.hand_off(target, Task::Member { from, work: MemberWork::Backups(records) });
            }
            if !self.member_responses[target].is_empty() {
                let batch = std::mem::take(&mut self.member_responses[target]).into_boxed_slice();
                self.hand_off(target, Task::Member { from, work: MemberWork::Responses(batch) });
            }
        }
    }

    /// Hands each target reactor the requests gathered for it from this connection.
    fn send_outgoing(&mut self, connection: &Arc<ConnectionShared>) {
        for target in 0..self.outgoing.len() {
            if self.outgoing[target].is_empty() {
                continue;
            }
            let batch = std::mem::take(&mut self.outgoing[target]);
            self.hand_off(target, Task::Partitions { connection: connection.clone(), batch });
        }
    }

    fn process_messages(&mut self, connection: &mut Connection) -> Result<Progress, String> {
        let connection_outgoing = connection.outgoing;
        self.current_outgoing = connection_outgoing;
        let Connection { shared, state, input, decoder, output, requests, requests_since_balance, .. } = connection;
        let write_limit = self.shared.config.limits.connection_write_buffer_bytes as usize;
        let in_flight_limit = self.shared.config.limits.max_in_flight_per_connection as usize;
        for handled in 1usize.. {
            if shared.in_flight() >= in_flight_limit {
                return Ok(Progress::Throttled);
            }
            // Bound the responses a client has not read: stop cutting its requests once they
            // exceed the limit. Inline output is checked on every message; responses other
            // reactors wrote are only visible in the shared buffer, checked periodically.
            if output.len() >= write_limit || handled % OUTBOUND_CHECK_INTERVAL == 1 {
                shared.send(output);
                output.clear();
                if shared.pending_bytes() > write_limit {
                    return Ok(Progress::Throttled);
                }
            }
            if *state == ConnectionState::AwaitingProtocolHeader {
                let unread = input.unread();
                if unread.len() < CLIENT_PROTOCOL_HEADER.len() {
                    return Ok(Progress::NeedInput);
                }
                if &unread[..3] == crate::peer::MEMBER_PROTOCOL_HEADER {
                    input.consume(3);
                    if !connection_outgoing {
                        let mut preamble = crate::peer::MEMBER_PROTOCOL_HEADER.to_vec();
                        let address = &self.shared.member_address;
                        preamble.extend_from_slice(&crate::cluster_service::hello_message(&self.shared, address));
                        shared.send(&preamble);
                    }
                    *state = ConnectionState::MemberHello;
                    decoder.set_limits(self.authenticated_limits);
                    continue;
                }
                if &unread[..3] != CLIENT_PROTOCOL_HEADER {
                    return Err(format!("unknown protocol header {:02x?}", &unread[..3]));
                }
                input.consume(3);
                *state = ConnectionState::AwaitingAuthentication;
                continue;
            }
            if self.turn_budget == 0 && !input.unread().is_empty() {
                self.turn_over = true;
                return Ok(Progress::Throttled);
            }
            if let ConnectionState::Authenticated { tenant, .. } = state {
                if *tenant != 0 && !input.unread().is_empty() && !self.admit(*tenant) {
                    return Ok(Progress::Throttled);
                }
            }
            let decoded = decoder.decode(input.unread()).map_err(|error| format!("malformed input: {error}"))?;
            let flow = match decoded {
                Decoded::NeedMore => return Ok(Progress::NeedInput),
                Decoded::Absorbed { consumed } => {
                    input.consume(consumed);
                    continue;
                }
                Decoded::Message { length } => {
                    let flow = self.handle(shared, state, output, &input.unread()[..length]);
                    input.consume(length);
                    flow
                }
                Decoded::Reassembled { consumed, message } => {
                    input.consume(consumed);
                    self.handle(shared, state, output, &message)
                }
            };
            self.turn_budget = self.turn_budget.saturating_sub(1);
            *requests += 1;
            *requests_since_balance += 1;
            if state.is_established() {
                decoder.set_limits(self.authenticated_limits);
            }
            if let Flow::Close(reason) = flow {
                return Err(reason);
            }
        }
        unreachable!("the loop returns")
    }

    /// Handles one request from a connection this reactor owns.
    fn handle(
        &mut self,
        connection: &Arc<ConnectionShared>,
        state: &mut ConnectionState,
        out: &mut Vec<u8>,
        bytes: &[u8],
    ) -> Flow {
        let (started, written_before) = (Instant::now(), out.len());
        self.handed_off = false;
        let (message_type, correlation_id, outcome) = if let ConnectionState::Authenticated { tenant, .. } = state {
            // A client's request is routed by its header; it is parsed where it runs.
            let Some(header) = RequestHeader::peek(bytes) else {
                return Flow::Close("request initial frame shorter than the 16-byte header".into());
            };
            self.probes().messages_in.add(1);
            let tenant = *tenant;
            let outcome = if tenant == 0 {
                self.dispatch(connection, header, bytes, out, Origin::client(connection, 0))
            } else {
                self.dispatch_for_tenant(connection, header, bytes, out, tenant)
            };
            (header.message_type, header.correlation_id, outcome)
        } else {
            let message = match Message::parse(bytes) {
                Ok(message) => message,
                Err(error) => return Flow::Close(format!("malformed message: {error}")),
            };
            let answer_on_link = matches!(state, ConnectionState::Member { .. })
                && !crate::peer::is_request(message.message_type())
                && !crate::peer::is_member_type(message.message_type());
            if !answer_on_link && message.fixed(REQUEST_HEADER_SIZE).is_err() {
                return Flow::Close("request initial frame shorter than the 16-byte header".into());
            }
            self.probes().messages_in.add(1);
            let outcome = self.handle_unestablished_or_member(connection, state, &message, bytes, out);
            (message.message_type(), message.correlation_id(), outcome)
        };
        if !self.handed_off {
            // Requests handed to another reactor are timed there.
            self.owner.record_latency(message_type, connection.tenant(), started.elapsed());
            if out.len() > written_before {
                self.probes().messages_out.add(1);
            }
        }
        match outcome {
            Ok(After::Continue) => Flow::Continue,
            Ok(After::Close(reason)) => Flow::Close(reason),
            Ok(After::DestroyMap(name)) => {
                // Every member drops its replicas: a client's request goes to the others as
                // WIDE, re-encoded with the map's scoped name (a tenant's name has its prefix).
                let mut request = Vec::new();
                if matches!(state, ConnectionState::Authenticated { .. }) {
                    let destroy = ClientDestroyProxy { name: &name, service_name: client::MAP_SERVICE };
                    destroy.encode(&mut request, correlation_id, -1, 0);
                }
                let request = (!request.is_empty()).then_some(&request[..]);
                let (response, operation) = (ClientDestroyProxy::RESPONSE, WideRequest::destroy());
                self.fan_out_with(connection, correlation_id, response, name, operation, out, request);
                Flow::Continue
            }
            Err(error) => Flow::Close(format!("malformed {message_type} request: {error}")),
        }
    }

    /// A message on a member link, a member's Hello, or a connection's first (authentication)
    /// request.
    fn handle_unestablished_or_member(
        &mut self,
        connection: &Arc<ConnectionShared>,
        state: &mut ConnectionState,
        message: &Message<'_>,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        match state {
            ConnectionState::Member { peer } => {
                let peer = *peer;
                self.handle_member(connection, peer, message, bytes, out)
            }
            ConnectionState::MemberHello => match self.member_hello(connection, message) {
                Ok(peer) => {
                    *state = ConnectionState::Member { peer };
                    Ok(After::Continue)
                }
                Err(reason) => Ok(After::Close(reason)),
            },
            _ => {
                let outcome = client::authenticate(&self.shared, message, state, out);
                if let ConnectionState::Authenticated { client_uuid, tenant, .. } = state {
                    connection.set_client(*client_uuid);
                    connection.set_tenant(*tenant);
                    self.shared.client_connected(*client_uuid);
                }
                outcome
            }
        }
    }

    /// Routes an authenticated request by its row in the operation table.
    fn dispatch(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        match operations::lookup(header.message_type) {
            Some((slot, row)) if row.route == Route::Partition => {
                self.dispatch_partition(connection, header, (slot, row), bytes, out, origin)
            }
            Some((_, row)) if row.route == Route::EveryPartition => {
                let message = Message::parse(bytes)?;
                self.dispatch_wide(connection, &message, bytes, out, origin)
            }
            // The client service, and types without a row (answered UnsupportedOperation).
            _ => {
                let message = Message::parse(bytes)?;
                if header.message_type == ClientAddClusterViewListener::TYPE {
                    self.shared.view.add_listener(connection.clone(), header.correlation_id);
                }
                client::handle(&self.shared, &message, out, origin.tenant)
            }
        }
    }

    fn dispatch_wide(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let from_member = origin.hop != Hop::Client;
        let (correlation_id, response_type) = (message.correlation_id(), message.message_type().response());
        match fanout::classify(message, connection)? {
            Classified::Wide(operation, name) => {
                let remote = if from_member { None } else { Some(bytes) };
                self.fan_out_with(connection, correlation_id, response_type, name, operation, out, remote);
            }
            Classified::Refused(code, text) => fanout::write_refusal(out, correlation_id, code, &text),
            Classified::NotWide => unreachable!("{} has a map-wide row", message.message_type()),
        }
        Ok(After::Continue)
    }

    /// A partition-bound request: run here (parsed and decoded once), handed to the reactor
    /// that owns the partition, or forwarded to the member that does (both unparsed).
    fn dispatch_partition(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        (slot, row): (usize, &Operation),
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let partition = header.partition_id;
        if !self.routes_here(connection, header, bytes, out, origin) {
            return Ok(After::Continue);
        }
        let owner = self.shared.owner_of(partition as u16);
        if owner == self.index {
            self.probes().local_ops.add(1);
            let message = Message::parse(bytes)?;
            let request = (row.decode.expect("partition rows decode"))(&message)?;
            let call = Call {
                connection,
                correlation_id: header.correlation_id,
                response_type: header.message_type.response(),
                source: origin.source,
                counter_slot: slot,
                partition_id: partition,
            };
            self.owner.execute(&call, &request, out);
        } else {
            connection.begin_in_flight();
            self.probes().handed_off_ops.add(1);
            self.handed_off = true;
            self.outgoing[owner].push(bytes, origin.source, origin.tenant, header.correlation_id);
        }
        Ok(After::Continue)
    }

    /// Whether a partition request runs on this member. If not, it has been forwarded to the
    /// owner, or answered with an error (a bad partition id, or no owner to reach).
    fn routes_here(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        bytes: &[u8],
        out: &mut Vec<u8>,
        Origin { hop, source, .. }: Origin,
    ) -> bool {
        let (partition, id) = (header.partition_id, header.correlation_id);
        let count = self.shared.view.partition_count as i32;
        if !(0..count).contains(&partition) {
            let text = if partition < 0 {
                "Partition ID cannot be negative!".to_owned()
            } else {
                format!("Partition ID {partition} is not below the partition count {count}")
            };
            wire::write_error(out, id, &OpError::new(ErrorKind::IllegalArgument, text));
            return false;
        }
        let text = match self.owner.replication.route(partition as usize) {
            Route_::Here => return true,
            Route_::Member(member) if hop == Hop::Client => {
                self.forward(connection, member, id, bytes, source, crate::peer::FORWARD);
                return false;
            }
            Route_::Member(member) if matches!(hop, Hop::Forwarded(by) if by != member) => {
                self.forward(connection, member, id, bytes, source, crate::peer::FORWARD_AGAIN);
                return false;
            }
            Route_::Unavailable => format!("partition {partition} has no owner reachable from this member (no table yet, or no link to the owner); retry"),
            Route_::Member(_) => format!("partition {partition} is migrating: a forwarded request reached a member that no longer owns it; retry"),
        };
        wire::write_error(out, id, &OpError::new(ErrorKind::PartitionMigrating, text));
        false
    }

    fn hand_off(&mut self, target: usize, task: Task) {
        let task =
            if self.overflow[target].is_empty() { self.shared.reactors[target].try_push(task) } else { Err(task) };
        match task {
            Ok(()) => self.wake[target] = true,
            Err(task) => self.overflow[target].push_back(task),
        }
    }

    /// Runs another member's share of a map-wide request (its WIDE message) on every reactor
    /// here, and answers it on `link` with this member's merged partial.
    fn fan_out(
        &mut self,
        link: &Arc<ConnectionShared>,
        correlation_id: i64,
        response_type: MessageType,
        name: Box<str>,
        operation: WideRequest,
        out: &mut Vec<u8>,
    ) {
        self.fan_out_with(link, correlation_id, response_type, name, operation.for_member(), out, None);
    }

    /// Runs a map-wide request on every reactor and, with `request` (the client's bytes), on
    /// every other member too (their answers merge into the same job).
    #[allow(clippy::too_many_arguments)]
    fn fan_out_with(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        response_type: MessageType,
        name: Box<str>,
        operation: WideRequest,
        out: &mut Vec<u8>,
        request: Option<&[u8]>,
    ) {
        let count = self.shared.reactor_count();
        connection.begin_in_flight();
        let job = Arc::new(FanOut::new(connection.clone(), correlation_id, response_type, name, operation, count));
        if let Some(request) = request.filter(|_| job.is_cluster_wide()) {
            let state = self.owner.replication.state.clone();
            let others: Vec<MemberId> = state
                .members
                .iter()
                .map(|member| member.id)
                .filter(|id| *id != state.me && state.links.contains_key(id))
                .collect();
            job.add_shares(others.len());
            for member in others {
                let id = self.owner.replication.forward_id();
                self.owner.replication.forwards.insert(id, Pending::Wide { job: job.clone(), member });
                crate::peer::write(self.owner.replication.message_for(member), crate::peer::WIDE, id, request);
            }
        }
        let origin = self.index;
        for target in (0..count).filter(|target| *target != origin) {
            self.hand_off(target, Task::FanOut(job.clone()));
        }
        if let Some(response) = self.owner.run_share(&job, fanout::Share::Here) {
            out.extend_from_slice(&response);
            connection.end_in_flight(1);
        }
    }

    fn probes(&self) -> &crate::probes::ReactorProbes {
        &self.shared.reactors[self.index].probes
    }

    /// Sends a client's partition request to the member that owns the partition (`kind`:
    /// FORWARD, or FORWARD_AGAIN for one another member forwarded here); its answer is relayed
    /// by [`PartitionOwner::on_forward_response`] to `connection` under `correlation_id`.
    fn forward(
        &mut self,
        connection: &Arc<ConnectionShared>,
        member: MemberId,
        correlation_id: i64,
        bytes: &[u8],
        source: Uuid,
        kind: MessageType,
    ) {
        connection.begin_in_flight();
        self.probes().forwarded_ops.add(1);
        self.handed_off = true;
        let id = self.owner.replication.forward_id();
        let relay = Pending::Relay { connection: connection.clone(), correlation_id, member };
        self.owner.replication.forwards.insert(id, relay);
        // The client's uuid (its locks' owner) and the request, answered under `id`.
        let payload = Forward { source, request: bytes }.encode();
        crate::peer::write(self.owner.replication.message_for(member), kind, id, &payload);
    }

    /// Checks a member's Hello and tells the cluster service about the link.
    fn member_hello(&mut self, connection: &Arc<ConnectionShared>, message: &Message<'_>) -> Result<MemberId, String> {
        if message.message_type() != crate::peer::HELLO {
            return Err(format!("member link: expected a Hello, got {}", message.message_type()));
        }
        let payload = crate::peer::payload(message).map_err(|error| format!("malformed member Hello: {error}"))?;
        let hello = crate::peer::Hello::decode(payload).map_err(|error| format!("malformed member Hello: {error}"))?;
        if let Err(reason) = crate::cluster_service::check_hello(&self.shared, &hello) {
            warn!("{reason}");
            return Err(reason);
        }
        let peer = MemberId(hello.member);
        let outgoing = self.current_outgoing;
        let event = crate::shared::ClusterEvent::Hello { link: connection.clone(), outgoing, hello };
        if self.shared.cluster_events.try_send(event).is_err() {
            return Err("cluster service busy or stopped".into());
        }
        Ok(peer)
    }

    /// Handles one message from another member.
    fn handle_member(
        &mut self,
        connection: &Arc<ConnectionShared>,
        from: MemberId,
        message: &Message<'_>,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        use crate::peer;
        let ty = message.message_type();
        if !peer::is_member_type(ty) {
            // The answer to a request one of this member's reactors forwarded.
            let origin = (message.correlation_id() as u64 >> 56) as usize;
            if origin == self.index {
                self.owner.on_forward_response(bytes);
            } else if origin < self.shared.reactor_count() {
                let batch = &mut self.member_responses[origin];
                batch.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                batch.extend_from_slice(bytes);
            }
            return Ok(After::Continue);
        }
        let payload = peer::payload(message)?;
        match ty {
            peer::CONTROL => {
                let event = crate::shared::ClusterEvent::Control { link: connection.id, from, bytes: payload.to_vec() };
                if self.shared.cluster_events.try_send(event).is_err() {
                    warn!("cluster service busy or stopped: membership message dropped");
                }
            }
            peer::FORWARD | peer::FORWARD_AGAIN => {
                // A client request another member forwarded: run it here, answer on the link
                // under the forwarder's correlation id. If the partition moved on, a FORWARD
                // goes on once more to the owner this member knows (tables differ for a moment
                // while partitions migrate; a client would otherwise pause before its retry).
                let forward = match Forward::decode(payload) {
                    Ok(forward) => forward,
                    Err(reason) => return Ok(After::Close(format!("malformed forwarded request: {reason}"))),
                };
                let Some(header) = RequestHeader::peek(forward.request) else {
                    return Ok(After::Close("malformed forwarded request: no request header".into()));
                };
                if operations::row(header.message_type).is_none_or(|row| row.route != Route::Partition) {
                    let text = format!("not a partition request: {}", header.message_type);
                    fanout::write_refusal(out, message.correlation_id(), error::UNSUPPORTED_OPERATION, &text);
                    return Ok(After::Continue);
                }
                let header = RequestHeader { correlation_id: message.correlation_id(), ..header };
                let hop = if ty == peer::FORWARD { Hop::Forwarded(from) } else { Hop::Last };
                return self.dispatch(
                    connection,
                    header,
                    forward.request,
                    out,
                    Origin { hop, source: forward.source, tenant: 0 },
                );
            }
            peer::SNAPSHOT_REQUEST => {
                if payload.len() == 2 {
                    let partition = u16::from_le_bytes([payload[0], payload[1]]);
                    let target = self.shared.owner_of(partition);
                    if target == self.index {
                        self.owner.on_snapshot_request(from, partition);
                    } else {
                        self.hand_off(target, Task::Member { from, work: MemberWork::SnapshotRequest(partition) });
                    }
                }
            }
            peer::CLIENT_GONE => {
                if payload.len() == 16 {
                    let client = Uuid::from_u128(u128::from_le_bytes(payload.try_into().expect("16 bytes")));
                    self.release_everywhere(client);
                }
            }
            peer::BACKUP => self.route_backups(from, payload),
            peer::BACKUP_ACK => match peer::read_acks(payload) {
                Ok(acks) => {
                    let count = self.shared.reactor_count();
                    let mut per_target: Vec<Vec<(u64, bool)>> = vec![Vec::new(); count];
                    for ack in acks {
                        let target = (ack.0 >> 56) as usize;
                        if target < count {
                            per_target[target].push(ack);
                        }
                    }
                    for (target, acks) in per_target.into_iter().enumerate().filter(|(_, acks)| !acks.is_empty()) {
                        if target == self.index {
                            self.owner.on_acks(from, &acks);
                        } else {
                            self.hand_off(target, Task::Member { from, work: MemberWork::Acks(acks) });
                        }
                    }
                }
                Err(error) => warn!(%error, "malformed backup acknowledgements: ignored"),
            },
            peer::SNAPSHOT => {
                if payload.len() < 2 {
                    warn!("malformed snapshot: ignored");
                    return Ok(After::Continue);
                }
                let partition = u16::from_le_bytes([payload[0], payload[1]]);
                let target = self.shared.owner_of(partition);
                if target == self.index {
                    self.owner.install_snapshot(from, payload);
                    if let Some(version) = self.owner.replication.ready_version() {
                        let previous = self.shared.reactors[self.index].ready_version.swap(version, Ordering::AcqRel);
                        if previous != version {
                            let _ = self.shared.cluster_events.try_send(crate::shared::ClusterEvent::Ready);
                        }
                    }
                } else {
                    self.hand_off(target, Task::Member { from, work: MemberWork::Snapshot(payload.into()) });
                }
            }
            peer::WIDE => {
                // Another member's map-wide request: this member's share, answered on the link
                // with its merged partial.
                let inner = Message::parse(payload)?;
                let correlation_id = message.correlation_id();
                let response_type = inner.message_type().response();
                if inner.message_type() == ClientDestroyProxy::TYPE {
                    let name: Box<str> = ClientDestroyProxy::decode(&inner)?.name.into();
                    self.fan_out(connection, correlation_id, response_type, name, WideRequest::destroy(), out);
                    return Ok(After::Continue);
                }
                match fanout::classify(&inner, connection)? {
                    Classified::Wide(operation, name) => {
                        self.fan_out(connection, correlation_id, response_type, name, operation, out);
                    }
                    Classified::Refused(code, text) => fanout::write_refusal(out, correlation_id, code, &text),
                    Classified::NotWide => {
                        let text = format!("not a map-wide request: {}", inner.message_type());
                        fanout::write_refusal(out, correlation_id, error::UNSUPPORTED_OPERATION, &text);
                    }
                }
            }
            _ => debug!(%ty, "unexpected member message: ignored"),
        }
        Ok(After::Continue)
    }

    /// Whether a connection of `tenant` may have its next request cut now: its fair share of
    /// this round, and (when over-quota work is throttled) its rate quota.
    fn admit(&mut self, tenant: u16) -> bool {
        let probes = &self.shared.reactors[self.index].tenant_probes[tenant as usize];
        if !self.fairness.charge(tenant) {
            probes.throttled.add(1);
            return false;
        }
        let Some(runtime) = self.shared.tenant(tenant) else { return true };
        if runtime.over_quota() == ferrogrid_config::OverQuota::Throttle
            && !runtime.take_operation(crate::tenants::now_ns())
        {
            probes.throttled.add(1);
            return false;
        }
        true
    }

    /// A tenant's request: quotas that refuse, then its object's name scoped to its namespace.
    fn dispatch_for_tenant(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        bytes: &[u8],
        out: &mut Vec<u8>,
        tenant: u16,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let shared = self.shared.clone();
        let runtime = shared.tenant(tenant).expect("authenticated tenants exist");
        let probes = &shared.reactors[self.index].tenant_probes[tenant as usize];
        probes.ops.add(1);
        let row = operations::row(header.message_type);
        let refuse = |out: &mut Vec<u8>, failure: OpError| {
            if failure.kind == ErrorKind::Refused {
                probes.rejected.add(1);
            }
            wire::write_error(out, header.correlation_id, &failure);
            Ok(After::Continue)
        };
        if runtime.over_quota() == ferrogrid_config::OverQuota::Reject
            && !runtime.take_operation(crate::tenants::now_ns())
        {
            let rate = runtime.config.max_ops_per_second.unwrap_or_default();
            let text =
                format!("tenant {} is over its operation quota (max-ops-per-second {rate})", runtime.config.name);
            return refuse(out, OpError::new(ErrorKind::Refused, text));
        }
        if row.is_some_and(|row| row.is(Flags::ADDS_ENTRIES)) && runtime.is_full() {
            let text = format!(
                "tenant {} holds its quota of data on this member (max-entries {:?}, max-bytes {:?})",
                runtime.config.name, runtime.config.max_entries, runtime.config.max_bytes
            );
            return refuse(out, OpError::new(ErrorKind::Refused, text));
        }
        if !row.is_some_and(|row| row.is(Flags::SCOPED)) {
            return self.dispatch(connection, header, bytes, out, Origin::client(connection, tenant));
        }
        match crate::tenants::scope_request(bytes, &runtime.prefix) {
            Ok(scoped) => self.dispatch(connection, header, &scoped, out, Origin::client(connection, tenant)),
            Err(text) => refuse(out, OpError::new(ErrorKind::IllegalArgument, text)),
        }
    }

    /// Releases `client`'s locks on every reactor of this member, unless it is connected here.
    fn release_everywhere(&mut self, client: Uuid) {
        if self.shared.client_is_connected(client) {
            return;
        }
        let (origin, count) = (self.index, self.shared.reactor_count());
        for target in (0..count).filter(|target| *target != origin) {
            self.hand_off(target, Task::ReleaseClient(client));
        }
        self.owner.release_client(client);
    }

    /// Applies backup records for this reactor's partitions and gathers the others' per
    /// reactor (handed off at the end of the read batch).
    fn route_backups(&mut self, from: MemberId, payload: &[u8]) {
        let mut own = Vec::new();
        let mut reader = crate::peer::Backups::new(payload);
        loop {
            match reader.next_record() {
                Ok(Some(record)) => {
                    let target = self.shared.owner_of(record.header.partition);
                    if target == self.index {
                        own.extend_from_slice(record.raw);
                    } else {
                        self.member_backups[target].extend_from_slice(record.raw);
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    warn!(%error, "malformed backup records from a member: rest ignored");
                    break;
                }
            }
        }
        if !own.is_empty() {
            self.owner.apply_backups(from, &own);
        }
    }

    /// Writes the responses gathered for `connection` during this batch.
    fn flush_output(&self, connection: &mut Connection) {
        let written = connection.shared.send(&connection.output);
        self.probes().bytes_out.add(written as u64);
        connection.output.clear();
    }

    fn wake_targets(&mut self) {
        for (target, wake) in self.wake.iter_mut().enumerate() {
            if std::mem::take(wake) {
                self.shared.reactors[target].wake();
            }
        }
    }
}

/// Where a request came from: a client (its uuid owns locks; its tenant) or another member.
#[derive(Debug, Clone, Copy)]
struct Origin {
    hop: Hop,
    source: Uuid,
    tenant: u16,
}

/// How a partition request reached this member, and so whether it may be forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    /// From a client: forwarded to the owner if that is another member.
    Client,
    /// Forwarded by this member: sent on once more (`FORWARD_AGAIN`) to an owner other than it.
    Forwarded(MemberId),
    /// Forwarded twice: run here or refused.
    Last,
}

impl Origin {
    fn client(connection: &ConnectionShared, tenant: u16) -> Origin {
        Origin { hop: Hop::Client, source: connection.client_uuid(), tenant }
    }
}

/// Lets a shared connection's stream be read and deregistered through `&`.
struct ConnectionStreamRef<'a>(&'a ConnectionShared);

impl io::Read for ConnectionStreamRef<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        io::Read::read(&mut self.0.stream(), buffer)
    }
}

impl mio::event::Source for ConnectionStreamRef<'_> {
    fn register(&mut self, registry: &mio::Registry, token: Token, interests: Interest) -> io::Result<()> {
        registry.register(&mut mio::unix::SourceFd(&std::os::fd::AsRawFd::as_raw_fd(self.0.stream())), token, interests)
    }
    fn reregister(&mut self, registry: &mio::Registry, token: Token, interests: Interest) -> io::Result<()> {
        registry.reregister(
            &mut mio::unix::SourceFd(&std::os::fd::AsRawFd::as_raw_fd(self.0.stream())),
            token,
            interests,
        )
    }
    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        registry.deregister(&mut mio::unix::SourceFd(&std::os::fd::AsRawFd::as_raw_fd(self.0.stream())))
    }
}
