//! Routing: the operation table, dispatch of a request on the reactor that read it, the
//! envelopes requests travel in to another reactor or member, the protocol adapter (decoding
//! requests, encoding replies and errors), connection-level client requests, and map-wide
//! fan-outs over every partition, and split-brain protection's refusals.

pub(crate) mod client;
pub(crate) mod dispatch;
pub(crate) mod envelope;
pub(crate) mod fanout;
pub(crate) mod handoff;
pub(crate) mod local_ops;
pub(crate) mod operations;
pub(crate) mod protection;
pub(crate) mod row;
pub(crate) mod wide;
pub(crate) mod wire;
