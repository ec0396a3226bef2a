//! The Hazelcast Open Binary Client Protocol 2.x, as ferrogrid speaks it (client and member traffic).
//!
//! This crate does no IO. It turns bytes into messages and messages into bytes:
//! - [`frame`]: the 6-byte frame header, flags, and [`frame::StreamDecoder`], which cuts a byte
//!   stream into complete messages (reassembling fragmented ones) under configured bounds;
//! - [`message`]: a zero-copy reader over one message's frames and a writer that appends
//!   frames straight into an output buffer;
//! - [`codec`]: every message ferrogrid understands, declared once in a table;
//! - [`data`]: the serialized key/value blob ("Data") and the partition hash;
//! - [`sql`]: the SQL service's structures: query ids, errors, column metadata, row pages;
//! - [`error`]: Hazelcast error codes and the Error response.
//!
//! Invariant: nothing here panics on input bytes. Malformed input is a [`DecodeError`].

pub mod codec;
pub mod data;
pub mod error;
pub mod frame;
pub mod message;
pub mod sql;
pub mod types;

pub use data::{partition_for, partition_for_name, Data, PartitionId};
pub use frame::{DecodeError, StreamDecoder, StreamLimits};
pub use message::{Message, MessageReader, MessageWriter};
pub use types::{CorrelationId, MessageType, Uuid};
