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

pub(crate) mod clock;
pub(crate) mod cluster;
pub(crate) mod engine;
pub(crate) mod net;
pub(crate) mod obs;
pub(crate) mod partition;
pub(crate) mod route;
pub(crate) mod server;
pub(crate) mod shared;
pub(crate) mod sql;
pub(crate) mod tenants;

pub use server::{Member, StartError};
