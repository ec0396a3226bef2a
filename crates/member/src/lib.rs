//! A ferrogrid member: thread-per-core reactors serving the Hazelcast client protocol over a
//! partitioned in-memory map.
//!
//! See ARCHITECTURE.md for the life of a request. Modules, in the order a request meets them:
//! [`server`] (start-up, acceptor), [`reactor`] (event loop, dispatch), [`connection`]
//! (buffers, write-through), [`client`] (authentication and client-service requests),
//! [`owner`] (what a reactor does as owner of its partitions), [`map_ops`] (partition-bound
//! map operations), [`fanout`] (map-wide operations), [`partition`] (a partition's objects and
//! the interface replication reaches them by), [`store`] (a map's data in a partition),
//! [`locks`] (key locks and parked requests), [`listeners`] (entry events), [`outbox`] (output
//! to other connections), [`cluster`] (what clients are told about the cluster).

pub mod balancer;
pub mod client;
pub mod clock;
pub mod cluster;
pub mod cluster_service;
pub mod connection;
pub mod connection_io;
pub mod dispatch;
pub mod envelope;
pub mod fanout;
pub mod listeners;
pub mod locks;
pub mod map_ops;
pub mod map_settings;
pub mod member_link;
pub mod metrics;
pub mod object;
pub mod operations;
pub mod outbox;
pub mod owner;
pub mod partition;
pub mod peer;
pub mod probes;
pub mod reactor;
pub mod replica;
pub mod replication;
pub mod request;
pub mod server;
pub mod shared;
pub mod store;
pub mod tenants;
pub mod wire;

pub use server::{Member, StartError};
