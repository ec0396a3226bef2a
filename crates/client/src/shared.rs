//! What one client shares between its handles, tasks and invocations: [`Inner`], with the
//! routing [`State`] behind its lock, and the handle users hold, [`Client`] (dropping its last
//! clone shuts the client down). Connecting and maintenance (`client.rs`), invocations
//! (`invocation.rs`) and the proxies (`map.rs`, `queue.rs`, `topic.rs`) build on it.

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use ferrogrid_protocol::codec::ClientPing;
use ferrogrid_protocol::{partition_for, Data, PartitionId, Uuid};
use parking_lot::{Mutex, RwLock};
use tokio::task::JoinHandle;

use crate::cluster::{ClusterView, ConnectionId};
use crate::config::ClientConfig;
use crate::connection::{ClientSignals, Connection};
use crate::serialization::serialize_string;

static CLIENT_COUNTER: AtomicU64 = AtomicU64::new(1);

/// What routing reads and connection set-up writes.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub view: ClusterView,
    /// Open connections, at most one per member uuid (closed ones linger until pruned).
    pub connections: Vec<Arc<Connection>>,
}

/// Where the cluster-view listener is registered.
#[derive(Debug, Default)]
pub(crate) struct ViewListener {
    pub connection: Option<ConnectionId>,
    pub registering: bool,
}

/// Everything one client shares between its handles, tasks and invocations.
#[derive(Debug)]
pub(crate) struct Inner {
    pub config: ClientConfig,
    pub client_uuid: Uuid,
    pub client_name: String,
    next_correlation_id: AtomicI64,
    pub next_connection_id: AtomicU64,
    pub state: RwLock<State>,
    /// Set by the first authentication; never changes afterwards.
    pub partition_count: AtomicU32,
    pub round_robin: AtomicUsize,
    pub signals: Arc<ClientSignals>,
    shut_down: AtomicBool,
    /// (service, name) of every proxy created, re-created on a new cluster.
    pub proxies: Mutex<BTreeSet<(String, String)>>,
    pub view_listener: Mutex<ViewListener>,
    /// Members a connection attempt is under way to.
    pub connecting: Mutex<HashSet<Uuid>>,
    pub reconnecting: AtomicBool,
    pub maintenance: Mutex<Option<JoinHandle<()>>>,
    pub ping_request: Arc<Vec<u8>>,
}

/// The user-held part: dropping the last one shuts the client down.
#[derive(Debug)]
struct Handle {
    inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.inner.begin_shutdown();
    }
}

/// A connected client. Clone it to share it between tasks.
#[derive(Debug, Clone)]
pub struct Client {
    handle: Arc<Handle>,
}

impl Client {
    /// A client not yet connected: its shared state, before the first connection.
    pub(crate) fn new(config: ClientConfig) -> Client {
        Client { handle: Arc::new(Handle { inner: Arc::new(Inner::new(config)) }) }
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.handle.inner
    }

    /// The cluster's partition count (from the first authentication).
    pub fn partition_count(&self) -> u16 {
        self.inner().partition_count.load(Ordering::Relaxed) as u16
    }

    /// The partition a serialized key belongs to.
    pub fn partition_of(&self, key: &[u8]) -> PartitionId {
        self.inner().partition_of(key)
    }

    /// The partition of a named structure (a queue, a topic): that of its partition key as a
    /// serialized String, as Hazelcast's `StringPartitioningStrategy` has it. The key is the
    /// name, or the part after its first `@` (`"orders@eu"` lives with everything keyed `"eu"`).
    pub fn partition_of_name(&self, name: &str) -> PartitionId {
        self.partition_of(&serialize_string(partition_key(name)))
    }
}

impl Inner {
    fn new(config: ClientConfig) -> Inner {
        let mut ping_request = Vec::with_capacity(32);
        ClientPing {}.encode(&mut ping_request, 0, -1, 0);
        Inner {
            config,
            client_uuid: Uuid::from_u128(uuid::Uuid::new_v4().as_u128()),
            client_name: format!("ferrogrid-client-{}", CLIENT_COUNTER.fetch_add(1, Ordering::Relaxed)),
            next_correlation_id: AtomicI64::new(1),
            next_connection_id: AtomicU64::new(1),
            state: RwLock::new(State::default()),
            partition_count: AtomicU32::new(0),
            round_robin: AtomicUsize::new(0),
            signals: Arc::new(ClientSignals::default()),
            shut_down: AtomicBool::new(false),
            proxies: Mutex::new(BTreeSet::new()),
            view_listener: Mutex::new(ViewListener::default()),
            connecting: Mutex::new(HashSet::new()),
            reconnecting: AtomicBool::new(false),
            maintenance: Mutex::new(None),
            ping_request: Arc::new(ping_request),
        }
    }

    pub(crate) fn next_correlation_id(&self) -> i64 {
        self.next_correlation_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::Acquire)
    }

    pub(crate) fn partition_of(&self, key: &[u8]) -> PartitionId {
        let count = self.partition_count.load(Ordering::Relaxed);
        assert!(count > 0, "the partition count is set by the first authentication, before any invocation");
        partition_for(Data(key), count as u16)
    }

    /// Marks the client shut down and closes its connections; returns them so the caller can
    /// wait for their sockets to close.
    pub(crate) fn begin_shutdown(&self) -> Vec<Arc<Connection>> {
        self.shut_down.store(true, Ordering::Release);
        let connections = std::mem::take(&mut self.state.write().connections);
        for connection in &connections {
            connection.close("client shut down");
        }
        self.signals.wake.notify_one();
        connections
    }
}

/// The partition key of a structure's name: the part after the first `@`, else the name.
pub(crate) fn partition_key(name: &str) -> &str {
    name.split_once('@').map_or(name, |(_, key)| key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partition_key_is_the_name_or_what_follows_its_first_at() {
        assert_eq!(partition_key("orders"), "orders");
        assert_eq!(partition_key("orders@eu"), "eu");
        assert_eq!(partition_key("a@b@c"), "b@c");
        assert_eq!(partition_key("@"), "");
    }
}
