//! The PN counter's typed requests. No wire format in them: a row decodes a message into
//! them (`rows.rs`), the engine runs them.

use ferrogrid_protocol::Uuid;
use std::borrow::Cow;

/// What a PN counter request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PnCounterOp {
    Get,
    /// Adds `delta` (negative: subtracts) and answers the value before or after it.
    Add {
        delta: i64,
        get_before_update: bool,
    },
}

/// One PN counter request, for the replica its client chose (`engine/pn_counter/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PnCounterRequest<'a> {
    /// The counter's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: PnCounterOp,
    /// The vector clock the client last observed: (replica, timestamp) pairs.
    pub observed: Vec<(Option<Uuid>, i64)>,
    /// The member the client sent it to (None: a null uuid, which names no member).
    pub target: Option<Uuid>,
}
