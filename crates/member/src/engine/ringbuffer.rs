//! Ringbuffers (and reliable topics, which are ringbuffers): the items in the partition of the
//! name (`store.rs`), and the ringbuffer's rows of the operation table with their decoders
//! (`rows.rs`).
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod store;
