//! Replicated maps (`ReplicatedMap`): every member holds a full copy (`store.rs`: the stores, their
//! encodings and the version rules), kept in step by the partition's owner (`sync.rs`); a
//! split-brain merge's entries arrive by `merge.rs`; iteration over entry views by cursor and
//! puts with metadata are `iteration.rs`.
pub(crate) mod iteration;
pub(crate) mod merge;
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod store;
pub(crate) mod sync;
pub(crate) mod wide;
