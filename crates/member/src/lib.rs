//! A ferrogrid member: thread-per-core reactors serving the Hazelcast client protocol over a
//! partitioned in-memory map.
//!
//! See ARCHITECTURE.md for the life of a request. Modules, in the order a request meets them:
//! [`server`] (start-up, acceptor), [`reactor`] (event loop, dispatch), [`connection`]
//! (buffers, write-through), [`client`] (authentication and client-service requests),
//! [`map_ops`] (partition-bound map operations), [`fanout`] (map-wide operations),
//! [`store`] (partition data), [`cluster`] (what clients are told about the cluster).

pub mod client;
pub mod cluster;
pub mod connection;
pub mod fanout;
pub mod map_ops;
pub mod reactor;
pub mod server;
pub mod shared;
pub mod store;

pub use server::{Member, StartError};
