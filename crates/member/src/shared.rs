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
    pub config: MemberConfig,
    pub view: ClusterView,
    pub reactors: Vec<ReactorHandle>,
    pub objects: RwLock<BTreeSet<ObjectName>>,
    pub shutdown: AtomicBool,
    pub next_connection_id: AtomicU64,
    pub open_connections: AtomicUsize,
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
