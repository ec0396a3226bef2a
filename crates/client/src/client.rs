//! The client: connecting to the cluster, following its view, keeping connections alive.
//!
//! [`Client`] is a cheap handle (clone it freely); the last handle dropped shuts the client
//! down, as [`Client::shutdown`] does (that one also waits for the sockets to close).
//!
//! Shared state ([`Inner`]) is written by: `open` (a new connection is admitted under the
//! state lock, checked against the view), the cluster-view event handler (runs on the reader
//! task of the connection carrying the listener), and the maintenance task. The maintenance
//! task runs a pass every second, or sooner when woken (a connection closed, the member list
//! changed, an invocation found no connection); a pass is quick and spawns anything slow:
//! - drops closed connections, closes connections to members no longer listed;
//! - heartbeats: a ping on connections idle for writing, closing silent ones;
//! - with no connection left, reconnects (known members first, then configured addresses);
//! - re-registers the cluster-view listener when its connection is gone;
//! - smart routing: connects to listed members that have no connection.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use ferrogrid_protocol::codec::{
    ClientAddClusterViewListener, ClientCreateProxies, ClientCreateProxy, MembersViewEvent, PartitionsViewEvent,
};
use ferrogrid_protocol::Message;
use tokio::task::JoinSet;
use tokio::time::{timeout_at, Instant};
use tracing::{debug, info, warn};

use crate::cluster::{Admission, Authenticated, ConnectionId, Member};
use crate::config::ClientConfig;
use crate::connection::Connection;
use crate::error::ClientError;
use crate::handshake::{self, Handshake, Identity};
use crate::invocation::{Backoff, Invocation, Target};
use crate::map::Map;
use crate::queue::Queue;
use crate::shared::{Client, Inner, State};
use crate::topic::Topic;

/// The service name of `IMap` proxies.
pub const MAP_SERVICE: &str = "hz:impl:mapService";
/// The service name of `IQueue` proxies.
pub const QUEUE_SERVICE: &str = "hz:impl:queueService";
/// The service name of `ITopic` proxies.
pub const TOPIC_SERVICE: &str = "hz:impl:topicService";
/// Longest wait between maintenance passes.
const MAINTENANCE_PERIOD: Duration = Duration::from_secs(1);
/// Shortest wait between maintenance passes, however often the task is woken.
const MIN_MAINTENANCE_INTERVAL: Duration = Duration::from_millis(20);

/// Counters for callers that watch the client (the Simulator).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Open connections.
    pub connections: usize,
    /// Requests sent and not yet answered, over all connections.
    pub in_flight: usize,
    /// Responses whose correlation id matched no pending request (0 unless a member errs).
    pub unmatched_responses: u64,
    /// Connections opened since the client started (reconnects included).
    pub connections_opened: u64,
}

impl Client {
    /// Connects to the cluster: tries the configured addresses (with pauses of 100 ms growing
    /// to 1 s) until one accepts or `connect_timeout` passes, registers the cluster-view
    /// listener, and with smart routing connects to every listed member (failures there are
    /// retried in the background). A refused authentication fails at once.
    pub async fn connect(config: ClientConfig) -> Result<Client, ClientError> {
        config.validate()?;
        let deadline = Instant::now() + config.connect_timeout;
        let client = Client::new(config);
        let inner = client.inner();
        let first = inner.connect_first(deadline).await?;
        inner.register_view_listener(&first, deadline).await?;
        if inner.config.smart_routing {
            inner.connect_missing_members(deadline).await;
        }
        let task = tokio::spawn(maintain(inner.clone()));
        *inner.maintenance.lock() = Some(task);
        let members = inner.state.read().view.members().len();
        info!(client = %inner.client_name, address = %first.address, members, "client connected");
        Ok(client)
    }

    /// A handle on the map `name`; sends `Client.CreateProxy` the first time a name is used.
    pub async fn map(&self, name: &str) -> Result<Map, ClientError> {
        self.inner().create_proxy(MAP_SERVICE, name).await?;
        Ok(Map::new(self.clone(), name))
    }

    /// A handle on the queue `name`; sends `Client.CreateProxy` the first time a name is used.
    pub async fn queue(&self, name: &str) -> Result<Queue, ClientError> {
        self.inner().create_proxy(QUEUE_SERVICE, name).await?;
        Ok(Queue::new(self.clone(), name))
    }

    /// A handle on the topic `name`; sends `Client.CreateProxy` the first time a name is used.
    pub async fn topic(&self, name: &str) -> Result<Topic, ClientError> {
        self.inner().create_proxy(TOPIC_SERVICE, name).await?;
        Ok(Topic::new(self.clone(), name))
    }

    /// The members as the cluster view last listed them.
    pub fn members(&self) -> Vec<Member> {
        self.inner().state.read().view.members().to_vec()
    }

    pub fn stats(&self) -> ClientStats {
        let state = self.inner().state.read();
        let open = state.connections.iter().filter(|c| !c.is_closed());
        let (connections, in_flight) = open.fold((0, 0), |(count, pending), c| (count + 1, pending + c.in_flight()));
        let signals = &self.inner().signals;
        let unmatched_responses = signals.unmatched_responses.load(Ordering::Relaxed);
        let connections_opened = signals.connections_opened.load(Ordering::Relaxed);
        ClientStats { connections, in_flight, unmatched_responses, connections_opened }
    }

    /// Closes every connection (pending invocations fail with [`ClientError::Shutdown`] or
    /// [`ClientError::ConnectionClosed`]) and waits until the sockets are closed and the
    /// background task has stopped. Later invocations fail with [`ClientError::Shutdown`].
    pub async fn shutdown(&self) {
        let connections = self.inner().begin_shutdown();
        for connection in connections {
            connection.close_and_wait("client shut down").await;
        }
        let task = self.inner().maintenance.lock().take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl Inner {
    fn identity(&self) -> Identity<'_> {
        Identity {
            client_uuid: self.client_uuid,
            client_name: &self.client_name,
            cluster_name: &self.config.cluster_name,
            username: self.config.username.as_deref(),
            password: self.config.password.as_deref(),
            smart_routing: self.config.smart_routing,
        }
    }

    /// Tries the configured addresses in rounds until one connection is admitted.
    async fn connect_first(self: &Arc<Self>, deadline: Instant) -> Result<Arc<Connection>, ClientError> {
        let mut backoff = Backoff::default();
        loop {
            let mut last = ClientError::NoConnection;
            for address in &self.config.addresses {
                match self.open(*address, deadline).await {
                    Ok(connection) => return Ok(connection),
                    Err(error @ (ClientError::Authentication { .. } | ClientError::Shutdown)) => return Err(error),
                    Err(error) => last = error,
                }
            }
            let now = Instant::now();
            if now >= deadline {
                let (addresses, timeout) = (self.config.addresses.clone(), self.config.connect_timeout);
                return Err(ClientError::ConnectFailed { addresses, timeout, last: Box::new(last) });
            }
            debug!(error = %last, "no address accepted a connection yet");
            tokio::time::sleep(backoff.next_pause().min(deadline - now)).await;
        }
    }

    /// Connects to `address`, authenticates and admits the connection into the state. Returns
    /// the already open connection instead if the member has one.
    async fn open(self: &Arc<Self>, address: SocketAddr, deadline: Instant) -> Result<Arc<Connection>, ClientError> {
        let correlation_id = self.next_correlation_id();
        let attempt_deadline = deadline.min(Instant::now() + self.config.connect_timeout);
        let identity = self.identity();
        let Handshake { stream, input, authenticated } =
            match timeout_at(attempt_deadline, handshake::open(address, &identity, correlation_id)).await {
                Ok(result) => result?,
                Err(_elapsed) => {
                    let source =
                        std::io::Error::new(std::io::ErrorKind::TimedOut, "connect and authentication timed out");
                    return Err(ClientError::Io { address, source });
                }
            };
        let id = ConnectionId(self.next_connection_id.fetch_add(1, Ordering::Relaxed));
        let max_in_flight = self.config.max_in_flight_per_connection;
        let member = authenticated.member_uuid;
        let connection = Connection::start(id, member, stream, address, input, max_in_flight, self.signals.clone());
        match self.admit(&connection, &authenticated) {
            Ok(None) => Ok(connection),
            Ok(Some(existing)) => {
                connection.close("a connection to this member is already open");
                Ok(existing)
            }
            Err(error) => {
                connection.close(&error.to_string());
                Err(error)
            }
        }
    }

    /// Adds `connection` to the state if the view accepts what its member said. Returns the
    /// open connection to the same member instead, if there is one.
    fn admit(
        self: &Arc<Self>,
        connection: &Arc<Connection>,
        auth: &Authenticated,
    ) -> Result<Option<Arc<Connection>>, ClientError> {
        let mut state = self.state.write();
        if self.is_shut_down() {
            return Err(ClientError::Shutdown);
        }
        state.connections.retain(|c| !c.is_closed());
        if let Some(existing) = state.connections.iter().find(|c| c.member_uuid == auth.member_uuid) {
            return Ok(Some(existing.clone()));
        }
        let connected = !state.connections.is_empty();
        let admission = state
            .view
            .on_authenticated(connection.id, auth, connected)
            .map_err(|reason| ClientError::Incompatible { address: connection.address, reason })?;
        let count = state.view.partition_count().expect("set by on_authenticated");
        self.partition_count.store(u32::from(count), Ordering::Relaxed);
        state.connections.push(connection.clone());
        drop(state);
        self.signals.connections_opened.fetch_add(1, Ordering::Relaxed);
        debug!(
            connection = connection.id.0,
            address = %connection.address,
            member = %auth.member_uuid,
            server_version = %auth.server_version,
            "connection admitted"
        );
        if admission == Admission::NewCluster {
            info!(address = %connection.address, "connected to a new cluster; re-creating proxies");
            self.recreate_proxies();
        }
        Ok(None)
    }

    /// Registers the cluster-view listener on `connection`; its events update the view.
    async fn register_view_listener(
        self: &Arc<Self>,
        connection: &Arc<Connection>,
        deadline: Instant,
    ) -> Result<(), ClientError> {
        self.state.write().view.reset_member_list_version();
        let correlation_id = self.next_correlation_id();
        let inner = Arc::downgrade(self);
        connection.add_event_handler(
            correlation_id,
            Arc::new(move |source, message| {
                if let Some(inner) = inner.upgrade() {
                    inner.on_view_event(source, message);
                }
            }),
        );
        let mut request = Vec::with_capacity(32);
        ClientAddClusterViewListener {}.encode(&mut request, 0, -1, 0);
        let mut invocation = Invocation::new(request, Target::Connection(connection.clone()), false);
        invocation.correlation_id = Some(correlation_id);
        match self.invoke_until(&invocation, deadline).await {
            Ok(_) => {
                self.view_listener.lock().connection = Some(connection.id);
                Ok(())
            }
            Err(error) => {
                connection.remove_event_handler(correlation_id);
                Err(error)
            }
        }
    }

    /// Applies a MembersView or PartitionsView event; ignores the other view events.
    fn on_view_event(&self, source: ConnectionId, message: &Message<'_>) {
        let message_type = message.message_type();
        if message_type == MembersViewEvent::TYPE {
            match MembersViewEvent::decode(message) {
                Ok(event) => {
                    let members = event.member_infos.iter().filter_map(Member::from_info).collect();
                    if self.state.write().view.apply_members(event.version, members) {
                        self.signals.wake.notify_one();
                    }
                }
                Err(error) => warn!(%error, "ignoring an undecodable MembersView event"),
            }
        } else if message_type == PartitionsViewEvent::TYPE {
            match PartitionsViewEvent::decode(message) {
                Ok(event) => {
                    self.state.write().view.apply_partitions(source, event.version, &event.partitions.0);
                }
                Err(error) => warn!(%error, "ignoring an undecodable PartitionsView event"),
            }
        }
    }

    /// Sends `Client.CreateProxy` unless this proxy was already created.
    pub(crate) async fn create_proxy(&self, service: &str, name: &str) -> Result<(), ClientError> {
        let key = (service.to_owned(), name.to_owned());
        if self.proxies.lock().contains(&key) {
            return Ok(());
        }
        let mut request = Vec::with_capacity(64 + service.len() + name.len());
        ClientCreateProxy { name, service_name: service }.encode(&mut request, 0, -1, 0);
        self.invoke(&Invocation::new(request, Target::Any, true)).await?;
        self.proxies.lock().insert(key);
        Ok(())
    }

    /// After reconnecting to a new cluster: creates every known proxy there (as the Java
    /// client does), in the background.
    fn recreate_proxies(self: &Arc<Self>) {
        let proxies: Vec<(String, String)> = self.proxies.lock().iter().cloned().collect();
        if proxies.is_empty() {
            return;
        }
        let inner = self.clone();
        tokio::spawn(async move {
            let pairs = proxies.iter().map(|(service, name)| (name.as_str(), service.as_str())).collect();
            let mut request = Vec::new();
            ClientCreateProxies { proxies: pairs }.encode(&mut request, 0, -1, 0);
            if let Err(error) = inner.invoke(&Invocation::new(request, Target::Any, true)).await {
                warn!(%error, "could not re-create proxies on the new cluster");
            }
        });
    }

    /// Opens connections to every listed member without one, concurrently, until `deadline`.
    async fn connect_missing_members(self: &Arc<Self>, deadline: Instant) {
        let mut attempts = JoinSet::new();
        for member in self.claim_missing_members() {
            attempts.spawn(self.clone().connect_member(member, deadline));
        }
        while attempts.join_next().await.is_some() {}
    }

    /// Listed members with no open connection and no attempt under way; marks them as being
    /// connected to (the attempt unmarks them).
    fn claim_missing_members(&self) -> Vec<Member> {
        let state = self.state.read();
        let mut connecting = self.connecting.lock();
        let connected =
            |member: &Member| state.connections.iter().any(|c| c.member_uuid == member.uuid && !c.is_closed());
        let missing = state.view.members().iter().filter(|member| !connected(member));
        missing.filter(|member| connecting.insert(member.uuid)).cloned().collect()
    }

    async fn connect_member(self: Arc<Self>, member: Member, deadline: Instant) {
        let result = match resolve(&member.host, member.port).await {
            Some(address) => self.open(address, deadline).await.map(drop),
            None => Err(ClientError::Config(format!("cannot resolve member address {}:{}", member.host, member.port))),
        };
        if let Err(error) = result {
            debug!(member = %member.uuid, host = %member.host, port = member.port, %error, "member connection failed");
        }
        self.connecting.lock().remove(&member.uuid);
    }

    /// One maintenance pass (see the module docs).
    fn maintenance_pass(self: &Arc<Self>) {
        let live = self.prune_connections();
        for connection in &live {
            self.check_heartbeat(connection);
        }
        if live.is_empty() {
            self.spawn_reconnect();
            return;
        }
        self.ensure_view_listener(&live);
        if self.config.smart_routing {
            let deadline = Instant::now() + self.config.connect_timeout;
            for member in self.claim_missing_members() {
                tokio::spawn(self.clone().connect_member(member, deadline));
            }
        }
    }

    /// Drops closed connections and closes those to members the view no longer lists.
    /// Returns the open ones.
    fn prune_connections(&self) -> Vec<Arc<Connection>> {
        let mut state = self.state.write();
        let State { view, connections } = &mut *state;
        let members = view.members();
        connections.retain(|connection| {
            let listed = members.is_empty() || members.iter().any(|m| m.uuid == connection.member_uuid);
            if !listed {
                connection.close("member left the cluster");
            }
            !connection.is_closed()
        });
        connections.clone()
    }

    /// Pings a connection idle for writing; closes one silent for too long.
    fn check_heartbeat(&self, connection: &Arc<Connection>) {
        let silent = connection.read_idle();
        if silent >= self.config.heartbeat_timeout {
            connection.close(&format!("heartbeat timed out: nothing read for {silent:?}"));
            return;
        }
        if connection.write_idle() < self.config.heartbeat_interval {
            return;
        }
        let (connection, request) = (connection.clone(), self.ping_request.clone());
        let correlation_id = self.next_correlation_id();
        let deadline = Instant::now() + self.config.heartbeat_timeout;
        // Holds the connection, not the client: a ping never keeps a dropped client alive.
        tokio::spawn(async move {
            if let Ok(Ok(reply)) = timeout_at(deadline, connection.call(correlation_id, &request)).await {
                let _ = timeout_at(deadline, reply).await;
            }
        });
    }

    /// With no connection left: tries the known members, then the configured addresses.
    fn spawn_reconnect(self: &Arc<Self>) {
        if self.reconnecting.swap(true, Ordering::AcqRel) {
            return;
        }
        let inner = self.clone();
        tokio::spawn(async move {
            let members = inner.state.read().view.members().to_vec();
            let mut addresses = Vec::with_capacity(members.len() + inner.config.addresses.len());
            for member in members {
                addresses.extend(resolve(&member.host, member.port).await);
            }
            addresses.extend(inner.config.addresses.iter().copied());
            let mut tried = HashSet::new();
            for address in addresses.into_iter().filter(|address| tried.insert(*address)) {
                if inner.is_shut_down() {
                    break;
                }
                match inner.open(address, Instant::now() + inner.config.connect_timeout).await {
                    Ok(_) => {
                        info!(%address, "reconnected");
                        inner.signals.wake.notify_one();
                        break;
                    }
                    Err(error) => debug!(%address, %error, "reconnect attempt failed"),
                }
            }
            inner.reconnecting.store(false, Ordering::Release);
        });
    }

    /// Registers the cluster-view listener again if its connection is gone.
    fn ensure_view_listener(self: &Arc<Self>, live: &[Arc<Connection>]) {
        let mut listener = self.view_listener.lock();
        let registered = listener.connection.is_some_and(|id| live.iter().any(|c| c.id == id));
        if listener.registering || registered {
            return;
        }
        listener.registering = true;
        listener.connection = None;
        drop(listener);
        let (inner, connection) = (self.clone(), live[0].clone());
        tokio::spawn(async move {
            let deadline = Instant::now() + inner.config.invocation_timeout;
            match inner.register_view_listener(&connection, deadline).await {
                Ok(()) => debug!(address = %connection.address, "cluster-view listener registered again"),
                Err(error) => warn!(address = %connection.address, %error, "cluster-view listener registration failed"),
            }
            inner.view_listener.lock().registering = false;
        });
    }
}

/// The maintenance task: a pass at least every [`MAINTENANCE_PERIOD`] (or heartbeat interval,
/// if shorter), sooner when woken.
async fn maintain(inner: Arc<Inner>) {
    let signals = inner.signals.clone();
    let period = MAINTENANCE_PERIOD.min(inner.config.heartbeat_interval);
    loop {
        if inner.is_shut_down() {
            return;
        }
        inner.maintenance_pass();
        tokio::select! {
            _ = signals.wake.notified() => {}
            _ = tokio::time::sleep(period) => {}
        }
        tokio::time::sleep(MIN_MAINTENANCE_INTERVAL).await;
    }
}

/// The socket address of a member's host and port (an IP literal needs no lookup).
async fn resolve(host: &str, port: u16) -> Option<SocketAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(SocketAddr::new(ip, port));
    }
    tokio::net::lookup_host((host, port)).await.ok()?.next()
}
