//! Starting and stopping a member: bind its port (and, with an advanced network's client
//! endpoint, the client port), start the reactors and the acceptor.
//!
//! Threads: one acceptor (accepts on every port, places each connection on the reactor with the
//! fewest connections, naming the port it came in on) and `reactor_threads` reactors. The
//! acceptor never touches a connection again after handing it over.

use crate::cluster::view::ClusterView;
use crate::net::connection::Port;
use crate::net::reactor::{Reactor, WAKER_TOKEN};
use crate::shared::{inbox, ClusterEvent, ReactorHandle, Shared, Task};
use crossbeam_channel::Receiver;
use ferrogrid_config::MemberConfig;
use ferrogrid_protocol::Uuid;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};
use parking_lot::RwLock;
use std::collections::BTreeSet;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tracing::{info, warn};

const LISTENER_TOKEN: Token = Token(0);
/// How long past the join wait `Member::start` waits to be in a cluster.
const JOIN_GRACE: Duration = Duration::from_secs(5);

/// Why a member could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("invalid configuration: {0}")]
    Config(#[from] ferrogrid_config::ConfigError),
    #[error("no free port in {host}:{first}..={last}: {source}")]
    NoFreePort { host: String, first: u16, last: u16, source: io::Error },
    #[error("could not start a thread: {0}")]
    Thread(io::Error),
    /// Two rows for one message type (a structure's rows clash with another's).
    #[error("the operation table is inconsistent: {0}")]
    OperationTable(String),
    /// The TLS material `hazelcast.network.ssl` names is missing or wrong.
    #[error(transparent)]
    Tls(#[from] crate::net::tls_files::TlsError),
    /// The persisted data cannot be read: a damaged file, another partition count.
    #[error("cannot start from the persisted data: {0}")]
    Persistence(String),
}

/// A running member. Dropping it does not stop it; call [`Member::shutdown`].
#[derive(Debug)]
pub struct Member {
    shared: Arc<Shared>,
    address: SocketAddr,
    /// Where `/metrics` and `/health` are served, if enabled.
    metrics_address: Option<SocketAddr>,
    acceptor_waker: Arc<Waker>,
    threads: Vec<JoinHandle<()>>,
}

impl Member {
    /// Binds the client port (trying the next ones when auto-increment is on) and starts the
    /// threads. Returns once the member accepts connections.
    pub fn start(config: MemberConfig) -> Result<Member, StartError> {
        config.validate()?;
        crate::route::operations::check().map_err(StartError::OperationTable)?;
        let tls = tls_context(&config)?;
        let (listener, member_bound) = bind(&config.network.endpoint())?;
        let mut listeners = Listeners(vec![(listener, Port::Shared)]);
        let mut address = member_bound;
        if let Some(endpoint) = &config.network.client_endpoint {
            let (client_listener, client_address) = bind(endpoint)?;
            listeners.0[0].1 = Port::Member;
            listeners.0.push((client_listener, Port::Client));
            address = client_address;
        }
        let reactor_count = config.reactor_thread_count();
        let (mut polls, mut handles, mut receivers) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reactor_count {
            let (poll, handle, receiver) = new_reactor(&config)?;
            polls.push(poll);
            handles.push(handle);
            receivers.push(receiver);
        }
        let disk = if config.persistence.enabled {
            let new_uuid = uuid::Uuid::new_v4().as_u128();
            let disk = crate::persistence::disk::open(&config, member_bound.port(), new_uuid);
            Some(disk.map_err(StartError::Persistence)?)
        } else {
            None
        };
        let (shared, cluster_receiver) = shared_state(config, handles, (member_bound, address), tls, disk);
        let mut threads = Vec::with_capacity(reactor_count + 1);
        // Every reactor is built (its partitions' lock published) before any runs.
        let reactors: Vec<Reactor> = polls
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(index, (poll, receiver))| Reactor::new(index, shared.clone(), poll, receiver))
            .collect();
        load_persisted(&shared, &reactors)?;
        for (index, reactor) in reactors.into_iter().enumerate() {
            threads.push(spawn(format!("reactor-{index}"), move || reactor.run())?);
        }
        let acceptor_poll = Poll::new().map_err(StartError::Thread)?;
        let acceptor_waker = Arc::new(Waker::new(acceptor_poll.registry(), WAKER_TOKEN).map_err(StartError::Thread)?);
        let acceptor_shared = shared.clone();
        threads.push(spawn("acceptor".into(), move || accept_loop(acceptor_shared, acceptor_poll, listeners))?);
        let (cluster_shared, member_address) = (shared.clone(), shared.member_address.clone());
        let cluster = move || crate::cluster::service::run(cluster_shared, cluster_receiver, member_address);
        threads.push(spawn("cluster".into(), cluster)?);
        wait_until_serving(&shared);
        let metrics_address = start_observability(&shared, &mut threads)?;
        info!(
            %address,
            %member_bound,
            member = %shared.view.member_uuid,
            cluster_name = %shared.config.cluster_name,
            reactors = reactor_count,
            partitions = shared.view.partition_count,
            "member started"
        );
        Ok(Member { shared, address, metrics_address, acceptor_waker, threads })
    }

    /// The address clients connect to (the client endpoint's when there is one).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Where `/metrics` and `/health` are served (None when the endpoint is off).
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.metrics_address
    }

    /// Every probe, read now.
    pub fn probes(&self) -> Vec<crate::obs::probes::Probe> {
        crate::obs::metrics::collect(&self.shared)
    }

    /// Leaves the cluster gracefully (its partitions are handed to the other members first,
    /// waiting at most `timeout`), then stops.
    pub fn leave(self, timeout: Duration) {
        let _ = self.shared.cluster_events.send(crate::shared::ClusterEvent::Shutdown);
        let deadline = Instant::now() + timeout;
        while !self.shared.left.load(Ordering::Acquire) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if self.shared.left.load(Ordering::Acquire) {
            // Let the last answers and the hand-off reach the other members.
            std::thread::sleep(Duration::from_millis(200));
            info!("left the cluster");
        } else {
            warn!("leaving the cluster timed out; stopping anyway");
        }
        self.shutdown();
    }

    /// Why the member stopped serving on its own (a cluster that cannot start from its
    /// disks), once it has: the process should exit.
    pub fn failure(&self) -> Option<String> {
        self.shared.failure.lock().clone()
    }

    /// This member's uuid.
    pub fn uuid(&self) -> Uuid {
        self.shared.view.member_uuid
    }

    /// How many members this member currently sees (itself included).
    pub fn cluster_size(&self) -> usize {
        self.shared.cluster_state().members.len()
    }

    /// Stops accepting, closes every connection and joins all threads.
    pub fn shutdown(self) {
        self.shared.shutdown.store(true, Ordering::Release);
        let _ = self.acceptor_waker.wake();
        for reactor in &self.shared.reactors {
            let _ = reactor.waker.wake();
        }
        if let Some(address) = self.metrics_address {
            crate::obs::metrics::wake_http(address);
        }
        for thread in self.threads {
            let _ = thread.join();
        }
        info!("member stopped");
    }
}

/// One reactor's poll, the handle other threads reach it by, and its inbox's receiving end.
pub(crate) fn new_reactor(config: &MemberConfig) -> Result<(Poll, ReactorHandle, Receiver<Task>), StartError> {
    let poll = Poll::new().map_err(StartError::Thread)?;
    let waker = Waker::new(poll.registry(), WAKER_TOKEN).map_err(StartError::Thread)?;
    let (sender, receiver) = inbox(config.limits.reactor_queue_capacity as usize);
    let handle = ReactorHandle {
        inbox: sender,
        waker,
        sleeping: AtomicBool::new(false),
        connections: AtomicUsize::new(0),
        probes: crate::obs::probes::ReactorProbes::default(),
        ready_version: AtomicU64::new(0),
        tenant_probes: (0..=config.tenants.tenants.len()).map(|_| Default::default()).collect(),
        thread_id: AtomicU64::new(0),
        owner: std::sync::OnceLock::new(),
    };
    Ok((poll, handle, receiver))
}

/// The member's shared state (a new identity, alone until the cluster service joins a
/// cluster), and the receiving end of the cluster service's event queue.
pub(crate) fn shared_state(
    config: MemberConfig,
    handles: Vec<ReactorHandle>,
    (member_bound, client_bound): (SocketAddr, SocketAddr),
    tls: Option<crate::net::tls::TlsContext>,
    disk: Option<crate::persistence::disk::MemberDisk>,
) -> (Arc<Shared>, Receiver<ClusterEvent>) {
    let reactor_count = handles.len();
    // A persisting member comes back as the member its data was written by.
    let member_uuid = Uuid::from_u128(disk.as_ref().map_or_else(|| uuid::Uuid::new_v4().as_u128(), |disk| disk.uuid));
    // Clients and members are told the public addresses when there are some; the binds stay
    // local. Clients reach the client endpoint when there is one.
    let (host, port) = config.network.advertised(member_bound.port());
    let member_address = host_port(&host, port);
    let client_endpoint = config.network.client_endpoint.as_ref();
    let (client_host, client_port) =
        client_endpoint.map_or((host, port), |endpoint| endpoint.advertised(client_bound.port()));
    let client_address = client_endpoint.map(|_| host_port(&client_host, client_port));
    let view = ClusterView::new(member_uuid, client_host, i32::from(client_port), config.partition_count);
    let me = ferrogrid_cluster::MemberId(member_uuid.as_u128());
    let cluster =
        Arc::new(crate::cluster::replication::state::ClusterState::alone(me, config.partition_count as usize));
    let (cluster_events, cluster_receiver) = crossbeam_channel::bounded(config.limits.cluster_event_queue as usize);
    let tenants =
        config.tenants.tenants.iter().map(|tenant| crate::tenants::Tenant::new(tenant.clone(), reactor_count));
    let tenants = tenants.collect();
    let transactions = crate::transaction::registry::Transactions::new(&config.limits);
    let config = Arc::new(config);
    let protection_active = config.split_brain_protections.is_active();
    let dynamic_configs = Arc::new(crate::engine::dynamic_config::configs::DynamicConfigs::new(config.clone()));
    let flake_ids = crate::engine::flake_id::store::FlakeIdGenerators::new(dynamic_configs.clone());
    let packing = crate::obs::probes::PackingProbes::new(crate::net::packing::initial_active(&config, reactor_count));
    let shared = Arc::new(Shared {
        config,
        view,
        reactors: handles,
        objects: RwLock::new(BTreeSet::new()),
        cluster_listeners: Default::default(),
        schemas: Default::default(),
        sql: Default::default(),
        transactions,
        indexes: Default::default(),
        dynamic_configs,
        relays: Default::default(),
        shutdown: AtomicBool::new(false),
        next_connection_id: AtomicU64::new(1),
        open_connections: AtomicUsize::new(0),
        client_closes: Default::default(),
        congested_links: AtomicUsize::new(0),
        clients: parking_lot::Mutex::new(std::collections::HashMap::new()),
        balancer: crate::obs::probes::BalancerProbes::default(),
        cluster_probes: crate::obs::probes::ClusterProbes::default(),
        packing,
        cluster: RwLock::new(cluster),
        cluster_events,
        joined: AtomicBool::new(false),
        protection_active,
        heard: Default::default(),
        left: AtomicBool::new(false),
        member_address,
        client_address,
        tenants,
        flake_ids,
        tls,
        persisted: crate::persistence::disk::Persisted::new(disk),
        failure: parking_lot::Mutex::new(None),
    });
    (shared, cluster_receiver)
}

/// Loads every reactor's partitions from the member's directory (a persisting member), one
/// thread per reactor, at most `parallelism` at a time, before any reactor runs.
fn load_persisted(shared: &Shared, reactors: &[Reactor]) -> Result<(), StartError> {
    let Some(disk) = &shared.persisted.disk else { return Ok(()) };
    let started = Instant::now();
    let config = &shared.config;
    let schemas = crate::persistence::disk::load_schemas(&disk.dir).map_err(StartError::Persistence)?;
    *shared.persisted.schemas.lock() = schemas.len();
    for schema in schemas {
        // (The configured bound does not refuse what the member held before its restart.)
        let _ = shared.schemas.put(schema, shared.view.member_uuid, usize::MAX);
    }
    let parallelism = config.persistence.parallelism.max(1) as usize;
    let locks: Vec<_> = reactors.iter().map(|reactor| reactor.core.owner.lock().clone()).collect();
    let mut totals = crate::persistence::load::Loaded::default();
    for batch in locks.chunks(parallelism) {
        let results: Vec<Result<crate::persistence::load::Loaded, String>> = std::thread::scope(|scope| {
            let loads: Vec<_> = batch
                .iter()
                .map(|lock| scope.spawn(|| lock.lock().load_persisted(&disk.dir, config, disk.table.clone())))
                .collect();
            loads
                .into_iter()
                .map(|load| load.join().unwrap_or_else(|_| Err("a loading thread panicked".into())))
                .collect()
        });
        for loaded in results {
            let loaded = loaded.map_err(StartError::Persistence)?;
            totals.entries += loaded.entries;
            totals.records += loaded.records;
            totals.torn_bytes += loaded.torn_bytes;
        }
    }
    info!(
        dir = %disk.dir.display(),
        entries = totals.entries,
        log_records = totals.records,
        torn_bytes = totals.torn_bytes,
        table_version = disk.table.as_ref().map_or(0, |table| table.version),
        millis = started.elapsed().as_millis() as u64,
        "persisted data loaded"
    );
    Ok(())
}

/// `host:port`, an IPv6 host in brackets.
fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The TLS configurations `hazelcast.network.ssl` asks for, every file read and checked.
fn tls_context(config: &MemberConfig) -> Result<Option<crate::net::tls::TlsContext>, StartError> {
    let tls = &config.network.tls;
    if !tls.enabled {
        return Ok(None);
    }
    let material = crate::net::tls_files::material(tls)?;
    let server = crate::net::tls_files::server_config(tls, &material)?;
    let client = crate::net::tls_link::client_config(tls, &material)?;
    Ok(Some(crate::net::tls::TlsContext { server, client }))
}

fn spawn(name: String, body: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, StartError> {
    std::thread::Builder::new().name(name).spawn(body).map_err(StartError::Thread)
}

/// Waits until the member is in a cluster (founded or joined) and every reactor applied a
/// partition table: within the join wait (and the first table's wait for members joining at
/// once). A member still alone afterwards serves retryable errors until it joins.
fn wait_until_serving(shared: &Shared) {
    let join_deadline = Instant::now() + Duration::from_millis(shared.config.cluster.join_wait_ms) + JOIN_GRACE;
    let serving = |shared: &Shared| {
        shared.joined.load(Ordering::Acquire)
            && shared.reactors.iter().all(|reactor| reactor.ready_version.load(Ordering::Acquire) >= 1)
    };
    while !serving(shared) && Instant::now() < join_deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    if !shared.joined.load(Ordering::Acquire) {
        warn!("not in a cluster yet; clients get retryable errors until the member has joined");
    }
}

/// Binds the first free port of `endpoint`'s range.
fn bind(endpoint: &ferrogrid_config::Endpoint) -> Result<(TcpListener, SocketAddr), StartError> {
    let (first, last) = (*endpoint.ports().start(), *endpoint.ports().end());
    let mut last_error = io::Error::other("no port tried");
    for port in endpoint.ports() {
        let address: SocketAddr = match format!("{}:{port}", endpoint.host).parse() {
            Ok(address) => address,
            Err(error) => {
                last_error = io::Error::new(io::ErrorKind::InvalidInput, error);
                break;
            }
        };
        match TcpListener::bind(address) {
            Ok(listener) => return Ok((listener, address)),
            Err(error) => last_error = error,
        }
    }
    Err(StartError::NoFreePort { host: endpoint.host.clone(), first, last, source: last_error })
}

/// The listeners: the member port, and the client port when there is one (the member port
/// then takes members only). Token `i` is listener `i`.
struct Listeners(Vec<(TcpListener, Port)>);

fn accept_loop(shared: Arc<Shared>, mut poll: Poll, Listeners(mut listeners): Listeners) {
    for (index, (listener, _)) in listeners.iter_mut().enumerate() {
        if let Err(error) = poll.registry().register(listener, Token(LISTENER_TOKEN.0 + index), Interest::READABLE) {
            panic!("acceptor: cannot register a listener: {error}");
        }
    }
    let mut events = Events::with_capacity(16);
    while !shared.is_shutting_down() {
        if let Err(error) = poll.poll(&mut events, None) {
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            panic!("acceptor: poll failed: {error}");
        }
        for event in events.iter() {
            let index = event.token().0.wrapping_sub(LISTENER_TOKEN.0);
            if let Some((listener, port)) = listeners.get_mut(index) {
                if !accept_all(&shared, listener, *port) {
                    return;
                }
            }
        }
    }
}

/// Accepts every connection waiting on `listener`; false once the reactors are gone.
fn accept_all(shared: &Shared, listener: &mut TcpListener, port: Port) -> bool {
    let max_connections = shared.config.limits.max_connections as usize;
    loop {
        let (stream, peer) = match listener.accept() {
            Ok(accepted) => accepted,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
            Err(error) => {
                warn!(%error, "accept failed");
                break;
            }
        };
        if shared.open_connections.fetch_add(1, Ordering::AcqRel) >= max_connections {
            shared.open_connections.fetch_sub(1, Ordering::AcqRel);
            warn!(%peer, max_connections, "connection refused: too many connections");
            continue;
        }
        let _ = stream.set_nodelay(true);
        let target = shared.least_loaded();
        if shared.reactors[target].inbox.send(Task::NewConnection(stream, peer, port)).is_err() {
            return false;
        }
        let _ = shared.reactors[target].waker.wake();
    }
    true
}

/// Starts the metrics file writer, the HTTP endpoint and the IO balancer as configured;
/// returns the endpoint's address.
fn start_observability(
    shared: &Arc<Shared>,
    threads: &mut Vec<JoinHandle<()>>,
) -> Result<Option<SocketAddr>, StartError> {
    let spawn = |name: &str, body: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new().name(name.into()).spawn(body).map_err(StartError::Thread)
    };
    let metrics = shared.config.metrics.clone();
    let mut metrics_address = None;
    if metrics.enabled {
        if let Some(path) = metrics.file.clone() {
            let (shared, config) = (shared.clone(), metrics.clone());
            threads.push(spawn("metrics", Box::new(move || crate::obs::metrics::log_loop(shared, config, path)))?);
        }
        if metrics.http_enabled {
            let listener =
                crate::obs::metrics::bind_http(&shared.config.network.host, metrics.http_port).map_err(|source| {
                    StartError::NoFreePort {
                        host: shared.config.network.host.clone(),
                        first: metrics.http_port,
                        last: metrics.http_port.saturating_add(99),
                        source,
                    }
                })?;
            metrics_address = listener.local_addr().ok();
            let shared = shared.clone();
            threads.push(spawn("metrics-http", Box::new(move || crate::obs::metrics::http_loop(shared, listener)))?);
        }
    }
    if let Some(interval) = shared.config.io.balancer_interval() {
        let shared = shared.clone();
        threads.push(spawn("io-balancer", Box::new(move || crate::net::balancer::balancer_loop(shared, interval)))?);
    }
    if shared.active_reactors() < shared.reactor_count() {
        let shared = shared.clone();
        threads.push(spawn("io-packing", Box::new(move || crate::net::packing::packing_loop(shared)))?);
    }
    Ok(metrics_address)
}
