//! A ferrogrid member: thread-per-core reactors serving the Hazelcast client protocol over a
//! partitioned in-memory map.
//!
//! See ARCHITECTURE.md for the life of a request. Modules, in the order a request meets them:
//! `server` (start-up, acceptor), `reactor` (the event loop), `connection_io` (reading and
//! cutting a connection's messages), `connection` (buffers, write-through), `dispatch`
//! (routing a request), `client` (authentication and client-service requests), `owner` (what
//! a reactor does as owner of its partitions), `map_ops` (partition-bound map operations),
//! `fanout` (map-wide operations), `queue` (queues), `partition` (a partition's objects), `object` (the
//! interface replication reaches them by), `store` (a map's data in a partition), `table` and `entry` (its entries), `locks` (key
//! locks and parked requests), `listeners` (entry events), `outbox` (output to other
//! connections), `cluster` (what clients are told about the cluster). Between members:
//! `member_link` (traffic on member links), `peer` (the member protocol), `replication` and
//! `replica` (backups, snapshots, forwarding), `replicated_map` and `replicated_sync`
//! (replicated maps: a copy on every member), `cluster_service` (membership).
//!
//! Modules import each other without cycles (`tests/module_graph.rs`): each is read from the
//! ones below it.

pub(crate) mod balancer;
pub(crate) mod client;
pub(crate) mod clock;
pub(crate) mod cluster;
pub(crate) mod cluster_events;
pub(crate) mod cluster_service;
pub(crate) mod collection;
pub(crate) mod connection;
pub(crate) mod connection_io;
pub(crate) mod crdt;
pub(crate) mod dispatch;
pub(crate) mod entry;
pub(crate) mod envelope;
pub(crate) mod fanout;
pub(crate) mod flake_id;
pub(crate) mod held;
pub(crate) mod index;
pub(crate) mod listeners;
pub(crate) mod local_ops;
pub(crate) mod locks;
pub(crate) mod map_ops;
pub(crate) mod map_settings;
pub(crate) mod member_link;
pub(crate) mod metrics;
pub(crate) mod multimap;
pub(crate) mod object;
pub(crate) mod operations;
pub(crate) mod outbox;
pub(crate) mod owner;
pub(crate) mod packing;
pub(crate) mod partition;
pub(crate) mod peer;
pub(crate) mod pn_counter;
pub(crate) mod probes;
pub(crate) mod query;
pub(crate) mod queue;
pub(crate) mod reactor;
pub(crate) mod relays;
pub(crate) mod replica;
pub(crate) mod replicated_map;
pub(crate) mod replicated_sync;
pub(crate) mod replication;
pub(crate) mod request;
pub(crate) mod ringbuffer;
pub(crate) mod schemas;
pub(crate) mod server;
pub(crate) mod shared;
pub(crate) mod sql;
pub(crate) mod sql_service;
pub(crate) mod store;
pub(crate) mod table;
pub(crate) mod tenants;
pub(crate) mod wire;

pub use server::{Member, StartError};
