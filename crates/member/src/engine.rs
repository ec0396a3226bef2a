//! The data structures: the table of those whose objects live in partitions
//! (`structures.rs`, one line each), and a folder per structure with its rows, the handler of
//! its typed requests (`rows.rs`), and its state in a partition (or, for PN counters and flake
//! ids, outside the partitions) with the operations on it on typed requests, no sockets in
//! them. Shared by several structures: replies and errors (`request.rs`), entry listeners, key
//! locks, per-object settings and Compact schemas.

pub(crate) mod cache;
pub(crate) mod cardinality_estimator;
pub(crate) mod collection;
pub(crate) mod container_merge;
pub(crate) mod dynamic_config;
pub(crate) mod entry_event;
pub(crate) mod executor;
pub(crate) mod flake_id;
pub(crate) mod invalidation;
pub(crate) mod java_code;
pub(crate) mod listeners;
pub(crate) mod locks;
pub(crate) mod map;
pub(crate) mod multimap;
pub(crate) mod pn_counter;
pub(crate) mod queue;
pub(crate) mod replicated_map;
pub(crate) mod request;
pub(crate) mod ringbuffer;
pub(crate) mod schemas;
pub(crate) mod settings;
pub(crate) mod structures;
pub(crate) mod topic;
pub(crate) mod wide;
