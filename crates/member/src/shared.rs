//! State shared by all threads of a member: configuration, identity, the reactors' inboxes
//! and the distributed-object registry. Nothing here is partition data.

use crate::cluster::ClusterView;
use crate::connection::ConnectionShared;
use crate::fanout::FanOut;
use crossbeam_channel::{Receiver, Sender, TrySendError};
use ferrogrid_config::MemberConfig;
use mio::Waker;
use parking_lot::RwLock;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Work handed to a reactor: the only way one thread reaches another's partitions.
#[derive(Debug)]
pub enum Task {
    /// A freshly accepted connection this reactor now owns.
    NewConnection(mio::net::TcpStream, SocketAddr),
    /// Partition-bound requests of one connection for partitions this reactor owns, cut from
    /// one read batch: each is a `u32` LE length and the whole request (copied once out of
    /// the origin's read buffer).
    Partitions { connection: Arc<ConnectionShared>, batch: Box<[u8]> },
    /// This reactor's share of a map-wide request.
    FanOut(Arc<FanOut>),
    /// A client has had no connection for the cleanup period: release its locks.
    ReleaseClient(ferrogrid_protocol::Uuid),
    /// From the IO balancer: move this reactor's busiest connection whose load (requests
    /// since the last run) is below `gap` to reactor `to`; `gap` is how many more requests
    /// this reactor received than `to`, so the move always narrows the imbalance.
    MigrateBusiest { to: usize, gap: u64 },
    /// A connection another reactor moved here; from now on this reactor reads it.
    AdoptConnection(Box<crate::connection::Connection>),
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
    pub probes: crate::probes::ReactorProbes,
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
    pub shutdown: AtomicBool,
    pub next_connection_id: AtomicU64,
    pub open_connections: AtomicUsize,
    /// Open connections per authenticated client uuid (locks are released once a client has
    /// had none for `CLIENT_CLEANUP_PERIOD_MS`).
    pub clients: parking_lot::Mutex<std::collections::HashMap<ferrogrid_protocol::Uuid, usize>>,
    /// The IO balancer's probes.
    pub balancer: crate::metrics::BalancerProbes,
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
}

impl Shared {
    pub fn reactor_count(&self) -> usize {
        self.reactors.len()
    }

    /// The reactor that owns `partition`: a mod, an array index.
    pub fn owner_of(&self, partition: u16) -> usize {
        partition as usize % self.reactors.len()
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }
}

/// Creates a reactor's inbox with the configured bound.
pub fn inbox(capacity: usize) -> (Sender<Task>, Receiver<Task>) {
    crossbeam_channel::bounded(capacity)
}
