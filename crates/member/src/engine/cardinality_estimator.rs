//! Cardinality estimators: a HyperLogLog per name in the partition of the name (`hll.rs`, with
//! the bias data it corrects by in `bias.rs`), its store there (`store.rs`), and its rows of the
//! operation table with their decoders (`rows.rs`); a split-brain merge's estimators arrive by
//! `merge.rs`.
pub(crate) mod bias;
pub(crate) mod hll;
pub(crate) mod merge;
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod store;
