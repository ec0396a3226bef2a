//! The connection a reactor is processing, as its `Core` keeps it between the messages it cuts.

use std::time::Instant;

/// The connection a reactor is processing: what its turn has left, what kind it is, and the
/// bookkeeping of its requests (`Core` owns it; it is reset for each connection's turn).
#[derive(Debug)]
pub(crate) struct Turn {
    /// Requests the connection may still cut in its current turn.
    pub(crate) budget: usize,
    /// A connection ended its turn with input left: poll without sleeping this iteration.
    pub(crate) over: bool,
    /// Whether the connection is a member link (its requests are always handed over: they
    /// keep their order with the backups and snapshots it carries).
    pub(crate) link: bool,
    /// Whether the connection is a member link this member opened.
    pub(crate) outgoing_link: bool,
    /// When the previous request of the batch finished: the next one's start (one clock read
    /// per request instead of two; None at a batch's start and after a hand-off).
    pub(crate) request_clock: Option<Instant>,
    /// Whether the request being handled went to another reactor (it is timed there).
    pub(crate) handed_off: bool,
}

impl Turn {
    pub(crate) fn new(budget: usize) -> Turn {
        Turn { budget, over: false, link: false, outgoing_link: false, request_clock: None, handed_off: false }
    }
}
