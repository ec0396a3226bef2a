//! The cluster service thread: runs the membership state machine (`ferrogrid_cluster::Node`)
//! and does its IO. It connects to other members, keeps one link per member, feeds the node
//! link changes, membership messages and a tick, and carries out what the node decides:
//! sending messages, publishing the member list and partition table to the reactors and to
//! clients, and reporting readiness.
//!
//! Links are ordinary reactor connections (the reactors read them); this thread only creates
//! outgoing ones and writes membership messages. When two members connect to each other at
//! once, both keep the link opened by the member with the lower address and close the other,
//! so a pair never keeps two links.

use crate::cluster::events::PartitionLoss;
use crate::cluster::peer::{self, Hello};
use crate::cluster::replication::state::ClusterState;
use crate::cluster::view::{ViewMember, ViewState};
use crate::net::connection::ConnectionShared;
use crate::net::tls::TlsSession;
use crate::shared::{ClusterEvent, MergeStep, Shared, Task};
use crossbeam_channel::{Receiver, RecvTimeoutError};
use ferrogrid_cluster::{Input, MemberEntry, MemberId, Message, Node, NodeConfig, Output};
use ferrogrid_protocol::Uuid;
use std::collections::HashMap;
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::{debug, error, info, warn};

/// How often the node gets a tick.
const TICK: Duration = Duration::from_millis(50);
/// Longest wait for an outgoing connection.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

#[derive(Debug)]
struct Link {
    connection: Arc<ConnectionShared>,
    outgoing: bool,
    address: String,
}

/// The cluster service's state; run by [`run`] on its own thread.
struct Service {
    shared: Arc<Shared>,
    node: Node,
    me: MemberId,
    address: String,
    links: HashMap<MemberId, Link>,
    state: Arc<ClusterState>,
    started: Instant,
    /// The highest table version reported ready.
    reported_ready: u64,
    /// (As master) the table is balanced and every replica is in place.
    complete: bool,
    /// This member left its cluster to merge into another: its reactors kept their map entries
    /// until the cluster it joins is settled (`cluster/merge.rs`).
    merge_pending: bool,
    /// The cluster restored the partition table this member's data was written under.
    kept: bool,
}

/// A persisting member's recovery from disk, from its configuration.
fn recovery_of(
    persistence: &ferrogrid_config::PersistenceConfig,
    table: Option<ferrogrid_cluster::PartitionTable>,
) -> ferrogrid_cluster::Recovery {
    use ferrogrid_cluster::RecoveryPolicy as Policy;
    use ferrogrid_config::RecoveryPolicy as Configured;
    let policy = match persistence.cluster_data_recovery_policy {
        Configured::FullRecoveryOnly => Policy::FullRecoveryOnly,
        Configured::PartialRecoveryMostRecent => Policy::PartialRecoveryMostRecent,
        Configured::PartialRecoveryMostComplete => Policy::PartialRecoveryMostComplete,
    };
    let validation_timeout_ms = u64::from(persistence.validation_timeout_seconds) * 1000;
    ferrogrid_cluster::Recovery { table, policy, validation_timeout_ms }
}

/// Builds the node configuration from the member's.
pub fn node_config(shared: &Shared, address: &str) -> NodeConfig {
    let config = &shared.config;
    let seeds = config
        .network
        .member_list
        .iter()
        .map(|seed| if seed.contains(':') { seed.clone() } else { format!("{seed}:5701") })
        .collect();
    NodeConfig {
        id: MemberId(shared.view.member_uuid.as_u128()),
        address: address.to_owned(),
        seeds,
        partition_count: config.partition_count as usize,
        backup_count: config.table_backup_count(),
        heartbeat_interval_ms: config.cluster.heartbeat_interval_ms,
        max_no_heartbeat_ms: config.cluster.max_no_heartbeat_ms,
        join_wait_ms: config.cluster.join_wait_ms,
        max_parallel_migrations: config.cluster.max_parallel_migrations as usize,
        lite: config.lite_member,
        client_address: shared.client_address.clone().unwrap_or_default(),
        merge_first_run_delay_ms: config.cluster.merge_first_run_delay_ms,
        merge_next_run_delay_ms: config.cluster.merge_next_run_delay_ms,
    }
}

/// Runs the cluster service until the member shuts down.
pub fn run(shared: Arc<Shared>, events: Receiver<ClusterEvent>, address: String) {
    let mut node = Node::new(node_config(&shared, &address));
    if let Some(disk) = &shared.persisted.disk {
        node.set_recovery(recovery_of(&shared.config.persistence, disk.table.clone()));
    }
    let me = node.id();
    let state = shared.cluster_state();
    let mut service = Service {
        shared,
        node,
        me,
        address,
        links: HashMap::new(),
        state,
        started: Instant::now(),
        reported_ready: 0,
        complete: false,
        merge_pending: false,
        kept: false,
    };
    while !service.shared.is_shutting_down() {
        match events.recv_timeout(TICK) {
            Ok(event) => {
                service.on_event(event);
                while let Ok(event) = events.try_recv() {
                    service.on_event(event);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let now_ms = service.started.elapsed().as_millis() as u64;
        service.feed(Input::Tick { now_ms });
        service.report_ready();
        service.watch_completeness();
        service.watch_merge();
    }
}

impl Service {
    fn feed(&mut self, input: Input) {
        let outputs = self.node.handle(input);
        // Any state published while carrying these out has the node's newest table: the
        // word on this member's data, which goes with its first table, comes first.
        for output in &outputs {
            if let Output::Recovery { outcome, .. } = output {
                self.kept = *outcome == ferrogrid_cluster::RecoveryOutcome::Keep;
            }
        }
        for output in outputs {
            self.carry_out(output);
        }
    }

    fn on_event(&mut self, event: ClusterEvent) {
        match event {
            ClusterEvent::Hello { link, outgoing, hello } => self.on_hello(link, outgoing, hello),
            ClusterEvent::Control { link, from, bytes } => {
                if self.links.get(&from).is_none_or(|current| current.connection.id != link) {
                    return;
                }
                self.shared.heard.heard(from, Instant::now());
                match ferrogrid_cluster::wire::decode(&bytes) {
                    Ok(message) => self.feed(Input::Received { from, message }),
                    Err(error) => warn!(peer = ?from, %error, "malformed membership message: ignored"),
                }
            }
            ClusterEvent::Closed { link } => {
                let Some(peer) =
                    self.links.iter().find(|(_, current)| current.connection.id == link).map(|(id, _)| *id)
                else {
                    return;
                };
                let removed = self.links.remove(&peer).expect("found");
                info!(peer = %removed.address, "member link closed");
                self.publish_state();
                self.feed(Input::LinkDown { id: peer });
            }
            ClusterEvent::Ready => {}
            ClusterEvent::Promote => {
                info!("promoting this lite member to a data member");
                self.feed(Input::Promote);
            }
            ClusterEvent::Shutdown => {
                info!("leaving the cluster: handing partitions off");
                self.feed(Input::Shutdown);
            }
        }
    }

    fn on_hello(&mut self, link: Arc<ConnectionShared>, outgoing: bool, hello: Hello) {
        let peer = MemberId(hello.member);
        if peer == self.me {
            link.close();
            return;
        }
        if let Some(existing) = self.links.get(&peer) {
            if !existing.connection.is_closed() {
                // Keep the link opened by the lower address; both ends decide alike.
                let keep_outgoing = self.address < hello.address;
                if existing.outgoing == keep_outgoing || outgoing != keep_outgoing {
                    debug!(peer = %hello.address, "duplicate member link closed");
                    link.close();
                    return;
                }
                debug!(peer = %hello.address, "duplicate member link replaced");
                existing.connection.close();
            }
        }
        info!(peer = %hello.address, outgoing, "member link up");
        let address = hello.address.clone();
        self.links.insert(peer, Link { connection: link, outgoing, address: address.clone() });
        self.publish_state();
        self.feed(Input::LinkUp { id: peer, address });
    }

    fn carry_out(&mut self, output: Output) {
        match output {
            Output::Connect { address } => self.connect(&address),
            Output::Send { to, message } => self.send(to, &message),
            Output::MembersChanged { version, members } => {
                info!(version, members = ?members.iter().map(|m| m.address.as_str()).collect::<Vec<_>>(), "member list");
                self.publish_state();
            }
            Output::TableChanged(table) => {
                debug!(version = table.version, "partition table");
                self.publish_state();
            }
            Output::PartitionsLost(losses) => self.partitions_lost(&losses),
            Output::Joined { master } => {
                info!(master = %Uuid::from_u128(master.0), "joined");
                self.shared.joined.store(true, Ordering::Release);
            }
            Output::Left => {
                self.shared.left.store(true, Ordering::Release);
            }
            Output::MergeInto { master } => {
                warn!(master = %master.address, "merging into another cluster: this member's map entries merge into it once joined");
                self.shared.joined.store(false, Ordering::Release);
                // Before the emptied table reaches the reactors (the inbox is in order).
                self.tell_reactors(MergeStep::Leave);
                self.shared.cluster_probes.merging.add(1);
                self.merge_pending = true;
                // The new cluster's table versions start over: the emptied table now, so that
                // nothing is reported ready for the old one.
                self.reported_ready = 0;
                self.publish_state();
            }
            Output::Recovery { outcome, reason } => self.recovery(outcome, reason),
            Output::Log(text) => info!("{text}"),
        }
    }

    /// (Master) members died: each partition they owned is announced by the member promoted
    /// to its owner, or by this member when none survived. Every member gets the list (its
    /// listeners that are not local-only hear every loss), on the links the table follows.
    fn partitions_lost(&mut self, losses: &[ferrogrid_cluster::PartitionLoss]) {
        let me = Uuid::from_u128(self.me.0);
        let losses: Vec<PartitionLoss> = losses
            .iter()
            .map(|loss| PartitionLoss {
                partition: loss.partition as u16,
                lost_backup_count: loss.lost_backup_count,
                origin: loss.promoted.map_or(me, |member| Uuid::from_u128(member.0)),
            })
            .collect();
        let gone = losses.iter().filter(|loss| loss.lost_backup_count == ferrogrid_cluster::ALL_REPLICAS_LOST).count();
        if gone > 0 {
            warn!(partitions = gone, "partitions lost every replica: they start empty");
        }
        info!(partitions = losses.len(), "members died owning partitions: announcing the promotions");
        let mut payload = Vec::new();
        PartitionLoss::encode_all(&losses, &mut payload);
        let mut out = Vec::with_capacity(payload.len() + 32);
        peer::write(&mut out, peer::PARTITION_LOST, 0, &payload);
        for link in self.links.values() {
            link.connection.send(&out);
        }
        self.shared.partitions_lost_here(&losses);
    }

    fn send(&self, to: MemberId, message: &Message) {
        let Some(link) = self.links.get(&to) else {
            return;
        };
        let mut payload = Vec::new();
        ferrogrid_cluster::wire::encode(message, &mut payload);
        let mut out = Vec::with_capacity(payload.len() + 32);
        peer::write(&mut out, peer::CONTROL, 0, &payload);
        link.connection.send(&out);
    }

    /// Opens a link: connects, sends `FGM` and the Hello, and hands the socket to a reactor.
    /// The address outgoing links are bound to (`bind_outgoing_links`), if any.
    fn bound_source(&self) -> Option<SocketAddr> {
        let config = &self.shared.config;
        let host = config.cluster.bind_outgoing_links.then_some(config.network.host.as_str())?;
        host.parse().ok().map(|ip| SocketAddr::new(ip, 0))
    }

    fn connect(&mut self, address: &str) {
        let resolved: Option<SocketAddr> = address.to_socket_addrs().ok().and_then(|mut addresses| addresses.next());
        let Some(target) = resolved.filter(|target| target.ip().is_loopback() || !target.ip().is_multicast()) else {
            warn!(address, "cannot resolve a member address");
            self.feed(Input::ConnectFailed { address: address.to_owned() });
            return;
        };
        let mut stream = match connect_to(target, self.bound_source()) {
            Ok(stream) => stream,
            Err(error) => {
                debug!(address, %error, "cannot reach a member");
                self.feed(Input::ConnectFailed { address: address.to_owned() });
                return;
            }
        };
        let _ = stream.set_nodelay(true);
        let mut preamble = peer::MEMBER_PROTOCOL_HEADER.to_vec();
        preamble.extend_from_slice(&hello_message(&self.shared, &self.address));
        // Over TLS the preamble waits in the session for the handshake the reactor drives.
        let sent = match &self.shared.tls {
            None => stream.write_all(&preamble).map(|()| None),
            Some(context) => {
                TlsSession::client(&context.client, target, &preamble).map(|session| Some(Box::new(session)))
            }
        };
        let tls = match sent.and_then(|tls| stream.set_nonblocking(true).map(|()| tls)) {
            Ok(tls) => tls,
            Err(error) => {
                debug!(address, %error, "member connection failed");
                self.feed(Input::ConnectFailed { address: address.to_owned() });
                return;
            }
        };
        let stream = mio::net::TcpStream::from_std(stream);
        let reactor = self.shared.least_loaded();
        self.shared.open_connections.fetch_add(1, Ordering::AcqRel);
        if self.shared.reactors[reactor].inbox.send(Task::NewMemberConnection(stream, target, tls)).is_ok() {
            self.shared.reactors[reactor].wake();
            let _ = self.shared.reactors[reactor].waker.wake();
        }
    }

    /// Publishes members, table and links to every reactor and the view to clients.
    fn publish_state(&mut self) {
        let links = self.links.iter().map(|(id, link)| (*id, link.connection.clone())).collect();
        let state = Arc::new(ClusterState {
            me: self.me,
            members: self.node.members().to_vec(),
            members_version: self.node.members_version(),
            cluster_id: self.node.cluster_id(),
            table: self.node.table().clone(),
            links,
            kept: self.kept,
        });
        if state.table.version != self.state.table.version {
            // Replica moves that copy data (a first table assigns, it moves nothing).
            let moves = ferrogrid_cluster::plan_migrations(&self.state.table, &state.table);
            let copies = moves.iter().filter(|planned| planned.source.is_some()).count();
            self.shared.cluster_probes.migrations.add(copies as u64);
        }
        self.state = state.clone();
        *self.shared.cluster.write() = state.clone();
        for reactor in &self.shared.reactors {
            // The inbox is bounded; a reactor that is far behind gets the state when it catches up.
            let _ = reactor.inbox.send(Task::Cluster(state.clone()));
            reactor.wake();
        }
        if self.node.is_joined() {
            self.shared.view.update(view_state(&state));
        }
    }

    /// (As master) logs when the cluster becomes fully backed up and balanced, and when it
    /// stops being so.
    fn watch_completeness(&mut self) {
        if !self.node.is_master() {
            self.complete = false;
            return;
        }
        let members: Vec<MemberId> = self.node.data_members();
        let backups = self.shared.config.table_backup_count();
        let complete = !self.node.is_migrating() && self.node.table().check(&members, backups).is_ok();
        if complete != self.complete {
            self.complete = complete;
            let version = self.node.table().version;
            if complete {
                info!(version, members = members.len(), "partition table complete: balanced, every replica in place");
            } else {
                info!(version, members = members.len(), "partition table incomplete: migrating");
            }
        }
    }

    /// (Merging) once this member is in the other cluster and its table is settled (balanced,
    /// every replica in place, this member's reactors ready for it), the reactors merge what
    /// they kept into it.
    fn watch_merge(&mut self) {
        if !self.merge_pending || !self.node.is_joined() || self.node.is_migrating() {
            return;
        }
        let version = self.node.table().version;
        let members: Vec<MemberId> = self.node.data_members();
        let backups = self.shared.config.table_backup_count();
        if version == 0 || self.reported_ready < version || self.node.table().check(&members, backups).is_err() {
            return;
        }
        self.merge_pending = false;
        info!(
            version,
            members = members.len(),
            "joined and settled: merging this member's map entries into the cluster"
        );
        self.tell_reactors(MergeStep::Replay);
        self.shared.cluster_probes.merged.add(1);
    }

    fn tell_reactors(&self, step: MergeStep) {
        for reactor in &self.shared.reactors {
            let _ = reactor.inbox.send(Task::Merge(step));
            reactor.wake();
        }
    }

    /// Tells the node when every reactor holds the data of the current table. (A reactor's
    /// version is never ahead of the service's; it must equal it: after a merge the new
    /// cluster's versions start lower than the old cluster's, which a reactor may still show.)
    fn report_ready(&mut self) {
        let version = self.state.table.version;
        if version == 0 || version <= self.reported_ready {
            return;
        }
        let ready = self.shared.reactors.iter().all(|reactor| reactor.ready_version.load(Ordering::Acquire) == version);
        if ready {
            self.reported_ready = version;
            self.feed(Input::LocalReady { version });
            // The data on disk is now the data of this table: a restart comes back under it.
            if let Some(disk) = &self.shared.persisted.disk {
                match crate::persistence::disk::save_table(&disk.dir, self.node.table()) {
                    Ok(()) => self.shared.persisted.table_version.store(version, Ordering::Release),
                    Err(error) => error!(%error, version, "cannot persist the partition table"),
                }
            }
        }
    }

    /// A cluster restarted from disk: the master's word on this member's data (`kept`, set
    /// by `feed`). A start that failed stops the member (the process exits with the reason).
    fn recovery(&mut self, outcome: ferrogrid_cluster::RecoveryOutcome, reason: String) {
        match outcome {
            ferrogrid_cluster::RecoveryOutcome::Keep => {}
            ferrogrid_cluster::RecoveryOutcome::Drop => {
                info!("the restarted cluster does not want this member's persisted data: it is dropped");
            }
            ferrogrid_cluster::RecoveryOutcome::Failed => {
                error!(%reason, "cluster start from disk failed: stopping");
                *self.shared.failure.lock() = Some(format!("cluster start from disk failed: {reason}"));
                self.shared.left.store(true, Ordering::Release);
            }
        }
    }
}

/// The Hello message this member sends on every link.
pub fn hello_message(shared: &Shared, address: &str) -> Vec<u8> {
    let hello = Hello {
        member: shared.view.member_uuid.as_u128(),
        address: address.to_owned(),
        cluster_name: shared.config.cluster_name.clone(),
        partition_count: shared.config.partition_count,
    };
    let mut out = Vec::new();
    peer::write(&mut out, peer::HELLO, 0, &hello.encode());
    out
}

/// Why a peer's Hello is refused, if it is.
pub fn check_hello(shared: &Shared, hello: &Hello) -> Result<(), String> {
    if hello.cluster_name != shared.config.cluster_name {
        return Err(format!(
            "member {} refused: its cluster name is {:?}, ours is {:?}",
            hello.address, hello.cluster_name, shared.config.cluster_name
        ));
    }
    if hello.partition_count != shared.config.partition_count {
        return Err(format!(
            "member {} refused: it has {} partitions, we have {}",
            hello.address, hello.partition_count, shared.config.partition_count
        ));
    }
    Ok(())
}

/// `host:port` (`[ipv6]:port` too) as a host and a port; 5701 when the port is missing.
fn split_address(address: &str) -> (String, i32) {
    let (host, port) = address.rsplit_once(':').unwrap_or((address, "5701"));
    let host = host.strip_prefix('[').and_then(|host| host.strip_suffix(']')).unwrap_or(host);
    (host.to_owned(), port.parse().unwrap_or(5701))
}

/// What clients are told: members (oldest first) and partition owners.
fn view_state(state: &ClusterState) -> ViewState {
    let members = state
        .members
        .iter()
        .map(|member: &MemberEntry| {
            let (host, port) = split_address(member.client_address());
            let member_endpoint = (!member.client_address.is_empty()).then(|| split_address(&member.address));
            ViewMember { uuid: Uuid::from_u128(member.id.0), host, port, member_endpoint, lite: member.lite }
        })
        .collect();
    let owners = state
        .table
        .owned_by_member()
        .into_iter()
        .map(|(member, partitions)| (Uuid::from_u128(member.0), partitions.into_iter().map(|p| p as i32).collect()))
        .collect();
    let version = |value: u64| value.min(i32::MAX as u64) as i32;
    ViewState {
        cluster_id: Uuid::from_u128(state.cluster_id.0),
        members,
        member_list_version: version(state.members_version),
        owners,
        partition_table_version: version(state.table.version),
    }
}

/// A blocking connection to `target` within [`CONNECT_TIMEOUT`], from `source` if given.
fn connect_to(target: SocketAddr, source: Option<SocketAddr>) -> std::io::Result<std::net::TcpStream> {
    let Some(source) = source else {
        return std::net::TcpStream::connect_timeout(&target, CONNECT_TIMEOUT);
    };
    let socket = socket2::Socket::new(socket2::Domain::for_address(target), socket2::Type::STREAM, None)?;
    socket.bind(&source.into())?;
    socket.connect_timeout(&target.into(), CONNECT_TIMEOUT)?;
    Ok(socket.into())
}
