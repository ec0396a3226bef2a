//! Multimaps (`MultiMap`): the values of each key in the partition of the key (`store.rs`), and
//! the multimap-wide operations and their classifier (`wide.rs`); a split-brain merge's keys
//! arrive by `merge.rs`.
pub(crate) mod merge;
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod store;
pub(crate) mod txn;
pub(crate) mod txn_rows;
pub(crate) mod wide;
