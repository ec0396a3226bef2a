//! A ferrogrid member: reactors serving the Hazelcast client protocol over partitioned data
//! structures (maps, queues, multimaps, replicated maps, lists, sets, ringbuffers, topics, PN
//! counters, flake ids) and SQL, in a cluster with backups and migration.
//!
//! A folder per layer, each read from the ones below it (ARCHITECTURE.md, "Layout of the
//! member", walks a request through them):
//! - `net`: reactors, connections and their IO, the placement of connections on reactors.
//! - `route`: the operation table (every structure's rows), dispatch on the reactor that read a
//!   request, hand-offs to other reactors, fan-outs over every partition, the client service,
//!   and the protocol adapter of the engines' answers.
//! - `engine`: the table of structures (`engine/structures.rs`, one line each), a folder per
//!   structure (its rows and the handler of its typed requests, its engine and state in a
//!   partition, its work over every partition), and what structures share (replies,
//!   listeners, key locks, settings, schemas).
//! - `partition`: a reactor's partitions as their owner, and the one interface replication and
//!   migration reach any structure's objects by.
//! - `cluster`: membership, member links and the member protocol, replication to backups.
//! - `sql`: statements run over the maps they name. `obs`: probes and metrics.
//! - At the top: start-up (`server`), the state every thread shares (`shared`), time (`clock`)
//!   and tenants (`tenants`).
//!
//! Modules import each other without cycles (`tests/module_graph.rs`, which checks every crate).

pub(crate) mod clock;
pub(crate) mod cluster;
pub(crate) mod engine;
pub(crate) mod net;
pub(crate) mod obs;
pub(crate) mod partition;
pub(crate) mod persistence;
pub(crate) mod route;
pub(crate) mod server;
pub(crate) mod shared;
pub(crate) mod sql;
pub(crate) mod tenants;
pub(crate) mod transaction;

pub use server::{Member, StartError};
