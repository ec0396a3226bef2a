//! Lists and sets (`IList`, `ISet`): the items of one named collection in the partition of its
//! name (`store.rs`), and their rows of the operation table with their decoders (`rows.rs`).
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod store;
pub(crate) mod txn;
