//! Topics (`ITopic`): published by the owner of the name's partition to the listeners every
//! reactor keeps (`engine/listeners.rs`); here, the topic's rows of the operation table with their
//! decoders (`rows.rs`).
pub(crate) mod request;
pub(crate) mod rows;
