//! State shared by all threads of a member: configuration, identity, the reactors' inboxes
//! and the distributed-object registry. Nothing here is partition data.

use crate::cluster::view::ClusterView;
use crate::net::connection::ConnectionShared;
use crate::route::fanout::FanOut;
use crossbeam_channel::{Receiver, Sender, TrySendError};
use ferrogrid_config::MemberConfig;
use ferrogrid_protocol::PartitionId;
use mio::Waker;
use parking_lot::RwLock;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Work handed to a reactor: the only way one thread reaches another's partitions.
#[derive(Debug)]
pub enum Task {
    /// A freshly accepted connection this reactor now owns, and the port it came in on.
    NewConnection(mio::net::TcpStream, SocketAddr, crate::net::connection::Port),
    /// Partition-bound requests of one connection for partitions this reactor owns, cut from
    /// one read batch (copied once out of the origin's read buffer, parsed here).
    Partitions { connection: Arc<ConnectionShared>, batch: crate::route::envelope::Handoffs },
    /// This reactor's share of a map-wide request.
    FanOut(Arc<FanOut>),
    /// A client has had no connection for the cleanup period: release its locks.
    ReleaseClient(ferrogrid_protocol::Uuid),
    /// From the IO balancer: move this reactor's busiest connection whose load (requests
    /// since the last run) is below `gap` to reactor `to`; `gap` is how many more requests
    /// this reactor received than `to`, so the move always narrows the imbalance.
    MigrateBusiest { to: usize, gap: u64 },
    /// From packed placement: this reactor is no longer active; move every connection to
    /// reactor `to`.
    Vacate { to: usize },
    /// A connection another reactor moved here; from now on this reactor reads it.
    AdoptConnection(Box<crate::net::connection::Connection>),
    /// A link to another member this member opened (`FGM` and Hello already sent, or, over
    /// TLS, queued in its session to go once the handshake is done).
    NewMemberConnection(mio::net::TcpStream, SocketAddr, Option<Box<crate::net::tls::TlsSession>>),
    /// New members, table or links from the cluster service.
    Cluster(Arc<crate::cluster::replication::state::ClusterState>),
    /// The writes of an `INSERT ... SELECT` whose query has run: fan them out (`sql/shares.rs`).
    SqlWrite(Box<crate::sql::service::FollowUp>),
    /// A streamed query's next round, the last having had no row to answer (`sql/stream.rs`).
    SqlRound(Box<crate::sql::service::NextRound>),
    /// Member traffic for this reactor's partitions or forwarded requests, read by another
    /// reactor from a member link.
    Member { from: ferrogrid_cluster::MemberId, work: MemberWork },
    /// A split-brain merge's steps (`cluster/merge.rs`).
    Merge(MergeStep),
}

/// What the cluster service tells reactors while this member merges into another cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeStep {
    /// This member leaves its cluster: keep the map entries of the partitions it owns, drop
    /// every replica.
    Leave,
    /// The cluster it joined is settled: merge what was kept into it.
    Replay,
}

/// What reactors tell the cluster service.
#[derive(Debug)]
pub enum ClusterEvent {
    /// A link exchanged identities (the reactor checked cluster name and partition count).
    Hello { link: Arc<ConnectionShared>, outgoing: bool, hello: crate::cluster::peer::Hello },
    /// A membership message from the member at the other end of `link`.
    Control { link: crate::net::connection::ConnectionId, from: ferrogrid_cluster::MemberId, bytes: Vec<u8> },
    /// A link closed.
    Closed { link: crate::net::connection::ConnectionId },
    /// Leave the cluster gracefully (then the member stops).
    Shutdown,
    /// A reactor became ready for a table version (look now rather than at the next tick).
    Ready,
    /// A client asked this lite member to become a data member.
    Promote,
}

/// Member traffic one reactor hands another.
#[derive(Debug)]
pub enum MemberWork {
    /// Backup records for partitions of the receiving reactor.
    Backups(Box<[u8]>),
    /// A snapshot chunk (payload) for a partition of the receiving reactor.
    Snapshot(Box<[u8]>),
    /// Acknowledgements of writes the receiving reactor holds.
    Acks(Vec<(u64, bool)>),
    /// Requests to acknowledge held writes again, for partitions of the receiving reactor
    /// (handed over after the backup records read before them).
    BackupSyncs(Vec<crate::cluster::peer::BackupHeader>),
    /// A member waiting for this partition's data asks for it again.
    SnapshotRequest(PartitionId),
    /// Answers (whole messages, each `u32` LE length-prefixed) to requests the receiving
    /// reactor forwarded.
    Responses(Box<[u8]>),
    /// PN counter states (PN_COUNTER_STATE records) for counters of the receiving reactor.
    CounterStates(Box<[u8]>),
    /// A replicated-map message (`peer::REPLICATED_*`) with only the receiving reactor's
    /// partitions in its payload.
    Replicated(ferrogrid_protocol::MessageType, Box<[u8]>),
}

/// How other threads reach one reactor.
#[derive(Debug)]
pub struct ReactorHandle {
    pub inbox: Sender<Task>,
    pub waker: Waker,
    /// Set while the reactor may be blocked in poll; senders wake it only then.
    pub sleeping: AtomicBool,
    /// Connections owned (for placing new connections on the least-loaded reactor).
    pub connections: AtomicUsize,
    /// This reactor's probes (written by it, read by anyone).
    pub probes: crate::obs::probes::ReactorProbes,
    /// The table version for which every replica this reactor holds is complete.
    pub ready_version: AtomicU64,
    /// Per tenant id (0: the default tenant): this reactor's tenant probes.
    pub tenant_probes: Vec<crate::tenants::TenantProbes>,
    /// The reactor thread's Linux thread id once it runs (0 before), for reading its CPU time.
    pub thread_id: AtomicU64,
    /// The lock around this reactor's partitions (`held.rs`), set when the reactor is built:
    /// another reactor runs requests on them itself when it can take it.
    pub(crate) owner: std::sync::OnceLock<crate::partition::held::OwnerLock>,
}

impl ReactorHandle {
    /// Queues a task without blocking; the caller wakes the reactor (once per batch).
    pub fn try_push(&self, task: Task) -> Result<(), Task> {
        self.inbox.try_send(task).map_err(|error| match error {
            TrySendError::Full(task) | TrySendError::Disconnected(task) => task,
        })
    }

    /// Wakes the reactor if it may be sleeping.
    pub fn wake(&self) {
        if self.sleeping.swap(false, Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
    }
}

/// A distributed object a client created a proxy for: (service name, object name).
pub type ObjectName = (String, String);

/// Shared, read-mostly member state.
#[derive(Debug)]
pub struct Shared {
    pub config: Arc<MemberConfig>,
    pub view: ClusterView,
    pub reactors: Vec<ReactorHandle>,
    pub objects: RwLock<BTreeSet<ObjectName>>,
    /// Distributed-object listeners registered with this member.
    pub cluster_listeners: crate::cluster::events::ClusterListeners,
    /// The cluster's Compact schemas (every member holds all).
    pub schemas: Arc<crate::engine::schemas::Schemas>,
    /// The SQL service: the mappings (every member holds all) and the open cursors.
    pub(crate) sql: Arc<crate::sql::service::SqlService>,
    /// The transactions this member coordinates.
    pub(crate) transactions: crate::transaction::registry::Transactions,
    /// Every map's index definitions (`Map.addIndex`).
    pub indexes: Arc<crate::engine::map::index::Registry>,
    /// Configurations added while the cluster runs (`engine/dynamic_config.rs`).
    pub dynamic_configs: Arc<crate::engine::dynamic_config::configs::DynamicConfigs>,
    /// Listener registrations of this member's unisocket clients made on every member.
    pub relays: crate::cluster::relays::Relays,
    pub shutdown: AtomicBool,
    pub next_connection_id: AtomicU64,
    pub open_connections: AtomicUsize,
    /// Client connections closed so far: a reactor that sees it move drops the listener
    /// registrations of closed connections.
    pub client_closes: std::sync::atomic::AtomicU64,
    /// Reactors whose link to some member holds more than `connection-write-buffer-bytes`:
    /// while any does, no reactor reads clients (a reactor's reads also feed the others' links
    /// through hand-offs).
    pub congested_links: AtomicUsize,
    /// Open connections per authenticated client uuid (locks are released once a client has
    /// had none for `CLIENT_CLEANUP_PERIOD_MS`).
    pub clients: parking_lot::Mutex<std::collections::HashMap<ferrogrid_protocol::Uuid, usize>>,
    /// The IO balancer's probes.
    pub balancer: crate::obs::probes::BalancerProbes,
    /// The cluster service's probes.
    pub cluster_probes: crate::obs::probes::ClusterProbes,
    /// Packed placement's state and probes (`packing.rs`).
    pub packing: crate::obs::probes::PackingProbes,
    /// The latest members, table and links (reactors get each as a task as well).
    pub cluster: RwLock<Arc<crate::cluster::replication::state::ClusterState>>,
    /// Where reactors send link and membership events.
    pub cluster_events: Sender<ClusterEvent>,
    /// This member is in a cluster (founded or joined one).
    pub joined: AtomicBool,
    /// Some split-brain protection rule guards some object (else no request is checked).
    pub(crate) protection_active: bool,
    /// When each other member was last heard from (recently-active split-brain protection).
    pub(crate) heard: crate::cluster::heard::Heard,
    /// This member left the cluster (graceful shutdown finished).
    pub left: AtomicBool,
    /// host:port other members reach this member at.
    pub member_address: String,
    /// host:port clients reach this member at, when that is a client endpoint of its own.
    pub client_address: Option<String>,
    /// The configured tenants; tenant id `i + 1` is `tenants[i]`.
    pub tenants: Vec<crate::tenants::Tenant>,
    /// Flake id generators' state (member-wide, any reactor issues batches).
    pub flake_ids: crate::engine::flake_id::store::FlakeIdGenerators,
    /// The TLS configuration every accepted connection's session is made from, when
    /// `hazelcast.network.ssl` is enabled (loaded and checked once at start).
    pub tls: Option<crate::net::tls::TlsContext>,
    /// When the member persists: its directory and what it persisted (`persistence/disk.rs`).
    pub(crate) persisted: crate::persistence::disk::Persisted,
    /// Why the member stopped serving on its own (a cluster that cannot start from its
    /// disks): the process exits with it.
    pub failure: parking_lot::Mutex<Option<String>>,
}

impl Shared {
    /// When the member persists and holds schemas its disk does not: writes them all, before
    /// the request that brought them is answered (a value on disk is unreadable without its
    /// schema).
    pub(crate) fn persist_schemas(&self) {
        let Some(disk) = &self.persisted.disk else { return };
        let mut saved = self.persisted.schemas.lock();
        if self.schemas.len() <= *saved {
            return;
        }
        let all = self.schemas.all();
        match crate::persistence::disk::save_schemas(&disk.dir, &all) {
            Ok(()) => *saved = all.len(),
            Err(error) => tracing::error!(%error, "cannot persist the Compact schemas"),
        }
    }
}

/// How long a client may be without connections before its locks are released (Hazelcast's
/// `hazelcast.client.cleanup.period.millis`), so that a quick reconnect keeps them.
pub const CLIENT_CLEANUP_PERIOD_MS: i64 = 10_000;

impl Shared {
    /// Counts a new authenticated connection of `client`.
    pub fn client_connected(&self, client: ferrogrid_protocol::Uuid) {
        *self.clients.lock().entry(client).or_insert(0) += 1;
    }

    /// Counts a closed connection; true when the client has none left.
    pub fn client_disconnected(&self, client: ferrogrid_protocol::Uuid) -> bool {
        let mut clients = self.clients.lock();
        let Some(count) = clients.get_mut(&client) else { return true };
        *count -= 1;
        if *count == 0 {
            clients.remove(&client);
            return true;
        }
        false
    }

    pub fn client_is_connected(&self, client: ferrogrid_protocol::Uuid) -> bool {
        self.clients.lock().contains_key(&client)
    }

    /// A destroyed object: what this member keeps of it outside the partitions dropped (a
    /// flake id generator's state). The listing follows the OBJECT event of the destroying
    /// member; partition data and listeners go with the destroy's fan-out.
    pub(crate) fn forget_object(&self, service: crate::cluster::peer::Service, name: &str) {
        if service == crate::cluster::peer::Service::FlakeIdGenerator {
            self.flake_ids.destroy(name, crate::clock::now_ms());
        }
    }
}

impl Shared {
    /// Where a new connection goes: the active reactor with the fewest connections (lowest
    /// index on ties), or reactor 0 when configured to reproduce a skewed assignment. Every
    /// reactor is active unless placement is packed (`packing.rs`).
    pub(crate) fn least_loaded(&self) -> usize {
        if self.config.io.initial_placement == ferrogrid_config::Placement::FirstReactor {
            return 0;
        }
        (0..self.active_reactors())
            .min_by_key(|index| self.reactors[*index].connections.load(Ordering::Acquire))
            .expect("at least one reactor")
    }

    /// Runs `work` every `period` until the member shuts down (which it notices within 50 ms):
    /// the loop of the IO balancer and of packed placement.
    pub(crate) fn every(&self, period: Duration, mut work: impl FnMut()) {
        let step = Duration::from_millis(50).min(period);
        let mut waited = Duration::ZERO;
        while !self.is_shutting_down() {
            std::thread::sleep(step);
            waited += step;
            if waited >= period {
                waited = Duration::ZERO;
                work();
            }
        }
    }

    /// Reactors `0..n` take connections: all of them, or as many as packing keeps active.
    pub(crate) fn active_reactors(&self) -> usize {
        (self.packing.active_reactors.get() as usize).clamp(1, self.reactor_count())
    }

    /// Tenant `id` (None for 0, the default tenant).
    /// The name a connection of `tenant` knows an object by: a tenant sees its own objects
    /// unscoped; nobody sees a tenant's objects but that tenant.
    pub fn visible_name<'n>(&self, tenant: u16, name: &'n str) -> Option<&'n str> {
        match self.tenant(tenant) {
            Some(runtime) => name.strip_prefix(runtime.prefix.as_str()),
            None => (!name.contains(crate::tenants::SEPARATOR)).then_some(name),
        }
    }

    /// Applies a proxy's creation or destruction to this member's listing and, if that
    /// changed it, tells this member's distributed-object listeners (local-only ones only
    /// when this member is the master, the oldest in the member list).
    pub fn object_event_here(&self, event: &crate::cluster::events::ObjectEvent) {
        use crate::cluster::events::ObjectChange;
        let key = (event.service_name.clone(), event.name.clone());
        let changed = match event.change {
            ObjectChange::Created => self.objects.write().insert(key),
            ObjectChange::Destroyed => self.objects.write().remove(&key),
        };
        if changed {
            let view = self.view.state();
            let master = view.members.first().is_none_or(|member| member.uuid == self.view.member_uuid);
            let limit = self.config.limits.listener_event_queue_bytes as usize;
            self.cluster_listeners.publish_object(event, master, limit, |tenant, name| self.visible_name(tenant, name));
        }
    }

    /// Tells this member's partition-lost listeners of `losses` (sent by the master when
    /// members died).
    pub fn partitions_lost_here(&self, losses: &[crate::cluster::events::PartitionLoss]) {
        let limit = self.config.limits.listener_event_queue_bytes as usize;
        let backups = |topic, name: &str| match topic {
            // Hazelcast's cache listeners name the cache as its user did (no manager prefix);
            // no such cache, no event.
            crate::cluster::events::Topic::CachePartitionLost => {
                self.dynamic_configs.caches.backups_of_simple_name(name).unwrap_or(i32::MAX)
            }
            _ => {
                let config = self.config.maps.for_map(name);
                i32::from(config.backup_count) + i32::from(config.async_backup_count)
            }
        };
        self.cluster_listeners.publish_losses(losses, self.view.member_uuid, limit, backups);
    }

    pub fn tenant(&self, id: u16) -> Option<&crate::tenants::Tenant> {
        id.checked_sub(1).and_then(|index| self.tenants.get(index as usize))
    }

    pub fn cluster_state(&self) -> Arc<crate::cluster::replication::state::ClusterState> {
        self.cluster.read().clone()
    }

    pub fn reactor_count(&self) -> usize {
        self.reactors.len()
    }

    /// The reactor that owns `partition`: a mod, an array index.
    pub fn owner_of(&self, partition: PartitionId) -> usize {
        partition.0 as usize % self.reactors.len()
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }
}

/// Creates a reactor's inbox with the configured bound.
pub fn inbox(capacity: usize) -> (Sender<Task>, Receiver<Task>) {
    crossbeam_channel::bounded(capacity)
}
