//! An async (tokio) client for ferrogrid and Hazelcast 5.x members, speaking the Open Binary
//! Client Protocol 2.x through `ferrogrid-protocol`. Built for load generation: many requests
//! in flight per connection, a few syscalls for many requests, bounded everything.
//!
//! ```no_run
//! # async fn example() -> Result<(), ferrogrid_client::ClientError> {
//! use ferrogrid_client::{serialize_string, Client, ClientConfig};
//! let client = Client::connect(ClientConfig::default()).await?;
//! let orders = client.map("orders").await?;
//! orders.put(&serialize_string("o-1"), &serialize_string("pending")).await?;
//! client.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Life of a request
//! 1. [`Map`] (`map.rs`) encodes the request once, with the key's partition id in its header;
//!    [`Queue`] (`queue.rs`) and [`Topic`] (`topic.rs`) with the partition of their name.
//! 2. The invocation layer (`invocation.rs`) picks a connection: the partition owner's with
//!    smart routing, else any open one; takes a correlation id from the client's counter.
//! 3. The connection (`connection.rs`) registers the call in the connection's pending table
//!    (holding one of `max_in_flight_per_connection` permits) and queues it for the writer.
//! 4. The connection's writer task gathers everything queued, stamps correlation ids, and
//!    writes it all with one `write_all`.
//! 5. The reader task cuts responses out of each read with `StreamDecoder`, then completes
//!    their calls under one lock. Events go to the handler registered under their
//!    correlation id (the cluster-view listener's, which updates the view; a topic message
//!    listener's, which calls its callback or feeds its bounded channel).
//! 6. The caller wakes with the response, or retries per client-protocol.md §3.4.
//!
//! # Tasks and who owns what
//! | task | owns | shares |
//! |---|---|---|
//! | caller tasks (any number) | their encoded requests | pending tables, semaphores, outbound queues, state (read lock) |
//! | writer, one per connection | socket write half, outbound queue receiver, write buffer | last-write time |
//! | reader, one per connection | socket read half, read buffer, stream decoder | pending table (completes calls), state (view events) |
//! | maintenance, one per client | nothing | state: prunes connections, starts connects, pings, listener re-registration |
//! | connect tasks (spawned by maintenance) | a socket until it is admitted | state: admit under the write lock |
//!
//! Shared state (`shared.rs`'s `State`: the `ClusterView` of `cluster.rs` and the open connections)
//! sits behind one `RwLock`: read by every routing decision, written only on connection
//! changes and view events.
//!
//! # Bounds
//! - requests in flight per connection: `max_in_flight_per_connection` (a semaphore; the
//!   outbound queue is bounded by the same number);
//! - requests per write: 1024, and about 1 MiB (`connection.rs`);
//! - inbound frames and messages: `StreamLimits::default()` (64 MiB frame, 256 MiB message);
//! - every invocation, retries and the wait for its response included: `invocation_timeout`;
//! - connecting: `connect_timeout` per attempt, and for [`Client::connect`] as a whole;
//! - a topic listener's channel ([`Topic::subscribe`]): its capacity, beyond which messages are
//!   dropped and counted.
//!
//! # Left out
//! No BACKUP_AWARE flag (members then do synchronous backups; no backup events to count), no
//! user listeners but topic message listeners (not registered again after their connection
//! closes), no locks, near cache, TLS or custom credentials.

mod client;
mod cluster;
mod config;
mod connection;
mod error;
mod handshake;
mod invocation;
mod map;
mod proxy;
mod queue;
mod serialization;
mod shared;
mod topic;

pub use client::{ClientStats, MAP_SERVICE, QUEUE_SERVICE, TOPIC_SERVICE};
pub use cluster::Member;
pub use config::{ClientConfig, MAX_IN_FLIGHT_PER_CONNECTION};
pub use error::{AuthenticationStatus, ClientError};
pub use ferrogrid_protocol::{PartitionId, Uuid};
pub use map::Map;
pub use queue::Queue;
pub use serialization::{
    deserialize_bytes, deserialize_string, greater_equal_predicate, serialize_bytes, serialize_string,
    BYTE_ARRAY_TYPE_ID, STRING_TYPE_ID,
};
pub use shared::Client;
pub use topic::{MessageListener, Topic, TopicMessage};
