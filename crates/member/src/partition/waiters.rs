//! Where the requests waiting in one partition's engines are answered: [`WaiterTable`] maps
//! each [`WaiterId`] an engine holds (a queue's poll or offer, a ringbuffer read, a request
//! parked on a key lock) to its connection, correlation id and response type.
//!
//! Engines never see a connection: the owner registers a request here when it parks and hands
//! the engine its id; the engine answers ids (through [`Waiters`]) or gives them back (a
//! request released from a lock, or taken when the partition moves or the object is destroyed),
//! and each id leaves the table then. Owned with its partition by the partition's reactor.

use crate::engine::request::{ErrorKind, OpError, Reply, WaiterId, Waiters};
use crate::net::connection::{ConnectionShared, ReplyTo};
use crate::route::wire;
use ahash::RandomState;
use std::collections::HashMap;
use std::sync::Arc;

/// An answer for a connection other than the running request's: the connection and the
/// encoded response.
pub(crate) type OtherAnswer = (Arc<ConnectionShared>, Vec<u8>);

/// The waiting requests of one partition, by id. Bounded by `capacity_waiters`, which the
/// per-connection in-flight bound keeps out of reach in practice (every waiter is in flight on
/// its connection); registering past it is refused as the engines refuse a waiter past
/// `max-parked-per-key`.
#[derive(Debug)]
pub struct WaiterTable {
    entries: HashMap<WaiterId, ReplyTo, RandomState>,
    next_id: u64,
    capacity_waiters: usize,
}

impl Default for WaiterTable {
    /// A table bounded by the default `max-connections` × `max-in-flight-per-connection`.
    fn default() -> Self {
        let limits = ferrogrid_config::Limits::default();
        WaiterTable::new(limits.max_connections as usize * limits.max_in_flight_per_connection as usize)
    }
}

impl WaiterTable {
    pub(crate) fn new(capacity_waiters: usize) -> WaiterTable {
        assert!(capacity_waiters > 0, "a waiter table holds at least one waiter");
        WaiterTable { entries: HashMap::default(), next_id: 0, capacity_waiters }
    }

    /// Registers a request that is about to wait; its id goes to the engine.
    pub(crate) fn register(&mut self, reply_to: ReplyTo) -> Result<WaiterId, OpError> {
        if self.entries.len() >= self.capacity_waiters {
            let text = "too many operations are waiting in this partition (max-in-flight-per-connection)";
            return Err(OpError::new(ErrorKind::Refused, text));
        }
        let id = WaiterId(self.next_id);
        self.next_id += 1;
        let previous = self.entries.insert(id, reply_to);
        assert!(previous.is_none(), "waiter ids are never reused");
        Ok(id)
    }

    /// Removes a waiter (answered, re-run, refused by its engine, or taken); where its answer
    /// would have gone. None if it was never registered or already removed.
    pub(crate) fn take(&mut self, id: WaiterId) -> Option<ReplyTo> {
        self.entries.remove(&id)
    }

    /// Registers `reply_to` and hands its id to `park` (an engine parking the request); if the
    /// engine refuses it, the id is forgotten again (no half-parked request).
    pub(crate) fn park(
        &mut self,
        reply_to: ReplyTo,
        park: impl FnOnce(WaiterId) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        let id = self.register(reply_to)?;
        park(id).inspect_err(|_| {
            self.take(id);
        })
    }

    /// Removes the waiters `ids` and returns where their answers go, in order.
    pub(crate) fn take_all(&mut self, ids: impl IntoIterator<Item = WaiterId>) -> Vec<ReplyTo> {
        ids.into_iter().map(|id| self.take(id).expect("a waiter an engine holds is registered")).collect()
    }

    /// Forgets every waiter (the partition's objects are dropped, and their waiters with them).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// The owner's side of [`Waiters`] for one engine call: answers are encoded into `answers`.
    pub(crate) fn answering<'a>(&'a mut self, answers: &'a mut Vec<OtherAnswer>) -> Answering<'a> {
        Answering { table: self, answers }
    }
}

/// A [`WaiterTable`] lent to an engine for one call, with where the answers it gives go.
#[derive(Debug)]
pub(crate) struct Answering<'a> {
    table: &'a mut WaiterTable,
    answers: &'a mut Vec<OtherAnswer>,
}

impl Answering<'_> {
    /// [`WaiterTable::park`], for an engine that also drops gone waiters as it parks one.
    pub(crate) fn park(
        &mut self,
        reply_to: ReplyTo,
        park: impl FnOnce(WaiterId, &mut dyn Waiters) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        let id = self.table.register(reply_to)?;
        park(id, self).inspect_err(|_| {
            self.table.take(id);
        })
    }
}

impl Waiters for Answering<'_> {
    fn drop_if_gone(&mut self, id: WaiterId) -> bool {
        let reply_to = self.table.entries.get(&id).expect("a waiter an engine holds is registered");
        let gone = reply_to.connection.is_closed();
        if gone {
            self.table.entries.remove(&id);
        }
        gone
    }

    fn answer(&mut self, id: WaiterId, reply: Reply<'_>) {
        let reply_to = self.table.take(id).expect("a waiter is answered once");
        self.answers.push(wire::encode_answer(&reply_to, reply));
    }

    fn fail(&mut self, id: WaiterId, failure: OpError) {
        let reply_to = self.table.take(id).expect("a waiter is answered once");
        self.answers.push(wire::encode_outcome(&reply_to, Err(failure)));
    }
}
