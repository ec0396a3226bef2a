//! Queues (`IQueue`): the items of one named queue in the partition of its name (`store.rs`), and
//! the queue's rows of the operation table with their decoders (`rows.rs`).
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod store;
pub(crate) mod txn;
