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

#[cfg(test)]
mod tests {
    //! The table's life through the owner: every id leaves it once its request is answered,
    //! timed out, re-run or gone.
    use crate::engine::map::request::{MapOp, MapRequest};
    use crate::engine::queue::request::{QueueOp, QueueRequest};
    use crate::engine::request::string_data as data;
    use crate::net::connection::ConnectionShared;
    use crate::partition::owner::testing::{self, serving_alone as owner};
    use crate::partition::owner::Execute;
    use crate::partition::owner::{Call, PartitionOwner};
    use ferrogrid_protocol::MessageType;
    use std::borrow::Cow;
    use std::sync::Arc;

    fn call(connection: &Arc<ConnectionShared>, source: u128) -> Call<'_> {
        testing::call(connection, source, MessageType(0x030301))
    }

    fn queue(op: QueueOp<'_>) -> QueueRequest<'_> {
        QueueRequest { name: Cow::Borrowed("q"), op }
    }

    fn waiting(owner: &PartitionOwner) -> usize {
        owner.partitions[0].waiters.entries.len()
    }

    #[test]
    fn a_queue_waiter_leaves_the_table_when_served_gone_or_timed_out() {
        let mut owner = owner();
        let (poller, _poller_client) = ConnectionShared::loopback(1);
        let (offerer, _offerer_client) = ConnectionShared::loopback(2);
        let item = data("item");
        let offer = || queue(QueueOp::Offer { value: Cow::Borrowed(&item), timeout_ms: 0, answers_bool: true });
        let mut out = Vec::new();
        queue(QueueOp::Poll { timeout_ms: -1 }).execute(&mut owner, &call(&poller, 1), &mut out);
        assert!(out.is_empty(), "the poll waits");
        assert_eq!(waiting(&owner), 1);
        offer().execute(&mut owner, &call(&offerer, 2), &mut out);
        assert!(!out.is_empty(), "the offer is answered");
        assert!(!owner.outbox.buffer(&poller).is_empty(), "the poll is answered on its connection");
        assert_eq!(waiting(&owner), 0, "served");
        // A poller whose connection closed is dropped by the next offer, which keeps its item.
        queue(QueueOp::Poll { timeout_ms: -1 }).execute(&mut owner, &call(&poller, 1), &mut Vec::new());
        poller.close();
        offer().execute(&mut owner, &call(&offerer, 2), &mut Vec::new());
        assert_eq!(waiting(&owner), 0, "gone");
        queue(QueueOp::Poll { timeout_ms: 0 }).execute(&mut owner, &call(&offerer, 2), &mut Vec::new());
        // A poll with a deadline is answered null when it passes.
        let (late, _late_client) = ConnectionShared::loopback(3);
        queue(QueueOp::Poll { timeout_ms: 50 }).execute(&mut owner, &call(&late, 3), &mut Vec::new());
        assert_eq!(waiting(&owner), 1);
        owner.now_ms += 50;
        owner.fire_timers();
        assert_eq!(waiting(&owner), 0, "timed out");
        assert!(!owner.outbox.buffer(&late).is_empty(), "answered null");
    }

    #[test]
    fn a_parked_map_request_leaves_the_table_when_re_run() {
        let mut owner = owner();
        let (alice, _alice_client) = ConnectionShared::loopback(1);
        let (bob, _bob_client) = ConnectionShared::loopback(2);
        let (key, value) = (data("k"), data("v"));
        let map = |op| MapRequest { name: Cow::Borrowed("m"), op };
        let lock = MapOp::Lock { key: Cow::Borrowed(&key[..]), thread_id: 1, lease_ms: -1, try_timeout_ms: None };
        map(lock).execute(&mut owner, &call(&alice, 1), &mut Vec::new());
        let put = MapOp::Put {
            key: Cow::Borrowed(&key[..]),
            value: Cow::Borrowed(&value[..]),
            thread_id: 1,
            ttl_ms: -1,
            max_idle_ms: -1,
            answer: crate::engine::map::request::PutAnswer::Previous,
        };
        let mut out = Vec::new();
        map(put).execute(&mut owner, &call(&bob, 2), &mut out);
        assert!(out.is_empty(), "Bob's put waits for Alice's lock");
        assert_eq!(waiting(&owner), 1);
        let unlock = MapOp::Unlock { key: Cow::Borrowed(&key[..]), thread_id: Some(1) };
        map(unlock).execute(&mut owner, &call(&alice, 1), &mut Vec::new());
        assert_eq!(waiting(&owner), 0, "re-run");
        assert!(!owner.outbox.buffer(&bob).is_empty(), "the put is answered on Bob's connection");
        let stored = owner.partitions[0].map("m").and_then(|store| store.raw(&key).map(|entry| entry.value().to_vec()));
        assert_eq!(stored, Some(value));
    }
}
