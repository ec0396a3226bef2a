//! Maps (`IMap`): the engine's operations (`ops.rs`), a map's entries in one partition
//! (`store.rs` over `table.rs` and `entry.rs`), its indexes and the predicates queries run,
//! iteration by partition (`iteration.rs`), and its transactional operations (`txn.rs`: a
//! transaction's key operations, staged in `staged.rs` until its end; `txn_wide.rs`: its
//! commit, rollback and reads over every partition), a split-brain merge's entries arriving
//! through each map's merge policy (`merge.rs`), and the near-cache invalidation metadata a
//! client's repairing handler fetches (`near_cache.rs`); entries put with their metadata
//! (`with_metadata.rs`); the publishers of query caches (`query_cache.rs`, their rows
//! `query_cache_rows.rs`).
pub(crate) mod aggregate_ops;
pub(crate) mod entry;
pub(crate) mod index;
pub(crate) mod iteration;
pub(crate) mod journal;
pub(crate) mod merge;
pub(crate) mod near_cache;
pub(crate) mod ops;
pub(crate) mod partition_set;
pub(crate) mod query;
pub(crate) mod query_cache;
pub(crate) mod query_cache_rows;
pub(crate) mod query_ops;
pub(crate) mod remove_all;
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod staged;
pub(crate) mod store;
pub(crate) mod table;
pub(crate) mod txn;
pub(crate) mod txn_rows;
pub(crate) mod txn_wide;
pub(crate) mod wide;
pub(crate) mod wide_rows;
pub(crate) mod with_metadata;
