//! Queues (`IQueue`): the items of one named queue, in the partition of its name, in FIFO
//! order, with synchronous backups and migration through [`PartitionObject`].
//!
//! Blocking calls never block a reactor: a poll or take on an empty queue, and an offer or put
//! on a full one, wait here as a [`Waiter`] (the id its owner answers it by, and until when)
//! and are answered, in arrival order, by the operation that makes them possible (an offer
//! serves the oldest waiting poll, a poll lets the oldest waiting offer in) or by their deadline
//! ([`QueueStore::expire_waiters`]), through [`Waiters`]. A waiter whose requester is gone
//! ([`Waiters::drop_if_gone`]) is skipped, so it never takes an item. Waiters are not replicated: a client whose queue moves gets
//! PartitionMigrating and retries, as with Hazelcast.
//!
//! Each item has an id from a per-queue counter; backups add and remove items by id, so
//! applying a change twice is harmless and a backup's order is the owner's.
//!
//! Owned by the reactor that owns the partition; no locks.

use crate::clock::deadline_after;
use crate::cluster::peer::{put_bytes, Malformed, Reader, SnapshotWriter};
use crate::engine::listeners::{ItemEventKind, Listeners, Registry};
use crate::engine::queue::request::QueueOp;
use crate::engine::request::{Blob, ErrorKind, OpError, Reply, WaiterId, Waiters};
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::net::outbox::Outbox;
use crate::partition::object::PartitionObject;
use ferrogrid_config::QueueConfig;
use ferrogrid_protocol::{Data, PartitionId, Uuid};
use std::collections::VecDeque;

/// One item: its id (order of arrival, for backups) and its serialized value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Item {
    pub(super) id: u64,
    pub(super) value: Box<[u8]>,
}

/// What one transaction holds of a queue (`txn.rs`): its offers, staged until its commit and
/// seen by no one else, and the items its polls reserved: out of `items` (nobody else sees
/// them) and still counted in `held_bytes` until the commit removes them (rollback puts them
/// back in their place, by id). Backups and snapshots carry holds (STAGE, UNSTAGE, RESERVE,
/// END and HELD records), so a promoted backup or a migrated queue holds the transaction's
/// offers and reservations for its commit.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct TxnHold {
    pub(super) txn: Uuid,
    /// Its offers, each with an id of the queue's counter (so that a backup stages each once);
    /// the commit appends them with new ids, behind every item.
    pub(super) offers: Vec<Item>,
    pub(super) reserved: Vec<Item>,
    /// A backup replica heard the transaction end (commit: true) before its owner's records
    /// did: the end is applied when this replica runs an operation as the owner
    /// ([`QueueStore::settle_ended`]), if the owner's END never came.
    pub(super) ended: Option<bool>,
}

/// A request waiting for an item (poll, take, a transaction's peek) or for room (offer, put).
#[derive(Debug)]
pub(crate) struct Waiter {
    /// Whom the answer goes to (the owner's waiter table knows).
    pub id: WaiterId,
    /// When it gives up (poll: null, offer: false); `clock::NEVER` waits until served.
    pub deadline_ms: i64,
    /// The client it came from (the source of the events it causes).
    pub source: Uuid,
    /// An offer's item (None for a poll).
    pub item: Option<Box<[u8]>>,
    /// An offer answers `true` (offer) or nothing (put).
    pub answers_bool: bool,
    /// A transaction's request (`txn.rs`): the item a poll or take gets is reserved for it, an
    /// offer's item staged in its hold.
    pub txn: Option<Uuid>,
    /// A transactional peek: answered with the first item, which stays.
    pub peek: bool,
}

/// What a backup must do to mirror the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Change {
    Added(u64),
    Removed(u64),
    /// Transaction `txn` staged the offer with this id, or took it back (its own poll).
    Staged {
        txn: Uuid,
        id: u64,
    },
    Unstaged {
        txn: Uuid,
        id: u64,
    },
    /// Transaction `txn`'s poll reserved the item with this id.
    Reserved {
        txn: Uuid,
        id: u64,
    },
    /// Transaction `txn` ended (its commit's removals and additions were recorded before).
    Ended {
        txn: Uuid,
        commit: bool,
    },
}

// The records backups and snapshots carry (`apply_records`):
// ADD     (1) id u64 | value bytes
// REMOVE  (2) id u64
// STAGE   (3) id u64 | txn u128 | value bytes    an offer staged by the transaction
// UNSTAGE (4) id u64 | txn u128                  the staged offer taken back
// RESERVE (5) id u64 | txn u128                  the item moved from the items to the hold
// END     (6) txn u128 | commit u8 (0, 1)        the hold dropped (rollback: its items back)
// HELD    (7) id u64 | txn u128 | value bytes    snapshots only: an item the hold reserved
const ADD: u8 = 1;
const REMOVE: u8 = 2;
const STAGE: u8 = 3;
const UNSTAGE: u8 = 4;
const RESERVE: u8 = 5;
const END: u8 = 6;
const HELD: u8 = 7;

/// One queue in one partition.
#[derive(Debug)]
pub struct QueueStore {
    pub(super) items: VecDeque<Item>,
    next_id: u64,
    config: QueueConfig,
    pub(super) held_bytes: usize,
    track_changes: bool,
    changed: Vec<Change>,
    pub(super) pollers: VecDeque<Waiter>,
    pub(super) offerers: VecDeque<Waiter>,
    /// When an operation last ran on it (for `empty-queue-ttl`).
    last_used_ms: i64,
    /// The open transactions' offers and reservations, one hold per transaction (`txn.rs`).
    pub(super) txns: Vec<TxnHold>,
}

/// What an operation needs besides its queue: owned by the reactor, lent per operation.
pub(crate) struct QueueContext<'a> {
    pub name: &'a str,
    pub member: Uuid,
    /// The client whose request this is (the source of its events).
    pub source: Uuid,
    pub partition_id: PartitionId,
    pub listeners: &'a mut Listeners,
    pub outbox: &'a mut Outbox,
    /// Answers waiters (the owner encodes each answer and holds it with the operation's own
    /// until the backups have the change) and tells which have gone.
    pub waiters: &'a mut dyn Waiters,
}

impl std::fmt::Debug for QueueContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueContext").field("name", &self.name).field("partition_id", &self.partition_id).finish()
    }
}

impl QueueContext<'_> {
    pub(super) fn publish(&mut self, kind: ItemEventKind, item: &[u8], _source: Uuid) {
        if self.listeners.has_object_listeners(Registry::Items, self.name) {
            let origin = (self.member, self.name, self.partition_id);
            self.listeners.publish_item(self.outbox, Registry::Items, origin, kind, item);
        }
    }
}

/// What became of a queue request that did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueueDone {
    Answered,
    /// It waits (poll on empty, offer on full) until the deadline (ms; `clock::NEVER`: until served).
    Wait {
        deadline_ms: i64,
    },
}

fn null_check(bytes: &[u8]) -> Result<(), OpError> {
    match Data(bytes).type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(OpError::new(ErrorKind::NullArgument, "Null item is not allowed!")),
    }
}

impl QueueStore {
    pub(crate) fn new(config: QueueConfig) -> QueueStore {
        QueueStore {
            items: VecDeque::new(),
            next_id: 1,
            config,
            held_bytes: 0,
            track_changes: false,
            changed: Vec::new(),
            pollers: VecDeque::new(),
            offerers: VecDeque::new(),
            last_used_ms: crate::clock::now_ms(),
            txns: Vec::new(),
        }
    }

    /// Whether the queue has been empty and unused (nothing waiting either) for its
    /// `empty-queue-ttl` at `now_ms`: then it is to be destroyed.
    pub(crate) fn is_idle(&self, now_ms: i64) -> bool {
        let ttl_seconds = self.config.empty_queue_ttl_seconds;
        ttl_seconds >= 0
            && self.items.is_empty()
            && self.pollers.is_empty()
            && self.offerers.is_empty()
            && self.txns.is_empty()
            && now_ms - self.last_used_ms >= ttl_seconds * 1000
    }

    /// Counts as a use (the queue is being destroyed: not chosen again meanwhile).
    pub(crate) fn touch(&mut self, now_ms: i64) {
        self.last_used_ms = now_ms;
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Its items, oldest first (what a split-brain merge sends: `engine/container_merge.rs`).
    pub(crate) fn values(&self) -> Vec<Box<[u8]>> {
        self.items.iter().map(|item| item.value.clone()).collect()
    }

    /// Replaces its items with `values` (a split-brain merge's winner), for the backups too:
    /// each held item removed, each new one added with a new id. As Hazelcast's merge, it
    /// ignores `max-size` and publishes no item events; items reserved by open transactions
    /// stay theirs.
    pub(crate) fn replace(&mut self, values: Vec<Box<[u8]>>) {
        while self.take_at(0).is_some() {}
        values.into_iter().for_each(|value| self.push(value));
    }

    pub(super) fn capacity(&self) -> usize {
        self.config.capacity() as usize
    }

    pub(super) fn room(&self) -> usize {
        self.capacity().saturating_sub(self.items.len())
    }

    /// Room for a transaction's offer: every transaction's offers and reservations count, as
    /// Hazelcast's do.
    pub(super) fn room_beside_holds(&self) -> usize {
        let held: usize = self.txns.iter().map(|hold| hold.offers.len() + hold.reserved.len()).sum();
        self.capacity().saturating_sub(self.items.len() + held)
    }

    pub(super) fn push(&mut self, value: Box<[u8]>) {
        let id = self.next_id;
        self.next_id += 1;
        self.held_bytes += value.len();
        self.items.push_back(Item { id, value });
        if self.track_changes {
            self.changed.push(Change::Added(id));
        }
    }

    /// Records a change for the backups (when they are tracked).
    pub(super) fn track(&mut self, change: Change) {
        if self.track_changes {
            self.changed.push(change);
        }
    }

    /// Stages transaction `txn`'s offer of `value`.
    pub(super) fn stage_offer(&mut self, txn: Uuid, value: Box<[u8]>) {
        let id = self.next_id;
        self.next_id += 1;
        self.hold_mut(txn).offers.push(Item { id, value });
        self.track(Change::Staged { txn, id });
    }

    /// Takes transaction `txn`'s first staged offer back (its poll on an empty queue).
    pub(super) fn take_own_offer(&mut self, txn: Uuid) -> Option<Box<[u8]>> {
        let hold = self.txns.iter_mut().find(|hold| hold.txn == txn)?;
        if hold.offers.is_empty() {
            return None;
        }
        let item = hold.offers.remove(0);
        self.track(Change::Unstaged { txn, id: item.id });
        Some(item.value)
    }

    /// Transaction `txn`'s hold, made if it has none.
    fn hold_mut(&mut self, txn: Uuid) -> &mut TxnHold {
        let index = match self.txns.iter().position(|hold| hold.txn == txn) {
            Some(index) => index,
            None => {
                self.txns.push(TxnHold { txn, ..TxnHold::default() });
                self.txns.len() - 1
            }
        };
        &mut self.txns[index]
    }

    /// Reserves the first item for transaction `txn` (a transactional poll): out of sight of
    /// everyone, not yet removed for the backups. Its value, if there was one.
    pub(super) fn reserve_front(&mut self, txn: Uuid) -> Option<Box<[u8]>> {
        let item = self.items.pop_front()?;
        let value = item.value.clone();
        self.track(Change::Reserved { txn, id: item.id });
        self.hold_mut(txn).reserved.push(item);
        Some(value)
    }

    fn take_at(&mut self, index: usize) -> Option<Box<[u8]>> {
        let item = self.items.remove(index)?;
        self.held_bytes -= item.value.len();
        if self.track_changes {
            self.changed.push(Change::Removed(item.id));
        }
        Some(item.value)
    }

    /// Parks a request [`execute`] answered [`QueueDone::Wait`] for; refused when `max` wait
    /// already (gone waiters are dropped first). On refusal its id stays the caller's.
    pub(crate) fn wait(&mut self, waiter: Waiter, max: usize, waiters: &mut dyn Waiters) -> Result<(), OpError> {
        let waiting = if waiter.item.is_some() { &mut self.offerers } else { &mut self.pollers };
        waiting.retain(|waiter| !waiters.drop_if_gone(waiter.id));
        if waiting.len() >= max {
            let text = "too many operations are waiting on this queue (max-parked-per-key)";
            return Err(OpError::new(ErrorKind::Refused, text));
        }
        waiting.push_back(waiter);
        Ok(())
    }

    /// Answers the waiters whose deadline passed (poll: null, offer: false); returns how many.
    pub(crate) fn expire_waiters(&mut self, now_ms: i64, ctx: &mut QueueContext<'_>) -> usize {
        let mut expired = 0;
        for queue in [&mut self.pollers, &mut self.offerers] {
            let (due, waiting): (VecDeque<Waiter>, VecDeque<Waiter>) =
                std::mem::take(queue).into_iter().partition(|waiter| waiter.deadline_ms <= now_ms);
            *queue = waiting;
            for waiter in due {
                if ctx.waiters.drop_if_gone(waiter.id) {
                    continue;
                }
                let reply = if waiter.item.is_some() { Reply::Bool(false) } else { Reply::Value(None) };
                ctx.waiters.answer(waiter.id, reply);
                expired += 1;
            }
        }
        expired
    }

    /// Lets waiting offers in while there is room and hands items to waiting polls while there
    /// are items, oldest first, until neither can move.
    /// A transaction's poll reserves the item it gets instead (`txn.rs`).
    pub(crate) fn serve_waiters(&mut self, ctx: &mut QueueContext<'_>) {
        loop {
            let mut moved = false;
            while !self.items.is_empty() {
                let Some(poller) = self.pollers.pop_front() else { break };
                if ctx.waiters.drop_if_gone(poller.id) {
                    continue;
                }
                let value = match poller.txn {
                    Some(_) if poller.peek => self.items.front().expect("not empty").value.clone(),
                    Some(txn) => self.reserve_front(txn).expect("not empty"),
                    None => {
                        let value = self.take_at(0).expect("not empty");
                        ctx.publish(ItemEventKind::Removed, &value, poller.source);
                        value
                    }
                };
                ctx.waiters.answer(poller.id, Reply::Value(Some(&value)));
                moved = true;
            }
            while let Some(txn) = self.offerers.front().map(|offerer| offerer.txn) {
                // A transaction's offer needs room beside every transaction's hold.
                if (txn.is_some() && self.room_beside_holds() == 0) || self.room() == 0 {
                    break;
                }
                let offerer = self.offerers.pop_front().expect("in front");
                if ctx.waiters.drop_if_gone(offerer.id) {
                    continue;
                }
                let value = offerer.item.expect("offerers carry their item");
                match txn {
                    Some(txn) => self.stage_offer(txn, value),
                    None => {
                        ctx.publish(ItemEventKind::Added, &value, offerer.source);
                        self.push(value);
                    }
                }
                let reply = if offerer.answers_bool { Reply::Bool(true) } else { Reply::Empty };
                ctx.waiters.answer(offerer.id, reply);
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }
}

/// Runs one queue request; its answer goes to `reply` unless it waits or fails.
pub(crate) fn execute(
    queue: &mut QueueStore,
    ctx: &mut QueueContext<'_>,
    op: &QueueOp<'_>,
    now_ms: i64,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<QueueDone, OpError> {
    queue.touch(now_ms);
    let source = ctx.source;
    queue.settle_ended().publish(|kind, value| ctx.publish(kind, value, source));
    let done = match op {
        QueueOp::Offer { value, timeout_ms, answers_bool } => {
            null_check(value)?;
            if queue.room() == 0 || !queue.offerers.is_empty() {
                if *timeout_ms == 0 {
                    reply(Reply::Bool(false));
                    return Ok(QueueDone::Answered);
                }
                return Ok(QueueDone::Wait { deadline_ms: deadline_after(now_ms, *timeout_ms) });
            }
            ctx.publish(ItemEventKind::Added, value, ctx.source);
            queue.push(value.as_ref().into());
            reply(if *answers_bool { Reply::Bool(true) } else { Reply::Empty });
            QueueDone::Answered
        }
        QueueOp::Poll { timeout_ms } => match queue.take_at(0) {
            Some(value) => {
                ctx.publish(ItemEventKind::Removed, &value, ctx.source);
                reply(Reply::Value(Some(&value)));
                QueueDone::Answered
            }
            None if *timeout_ms == 0 => {
                reply(Reply::Value(None));
                QueueDone::Answered
            }
            None => return Ok(QueueDone::Wait { deadline_ms: deadline_after(now_ms, *timeout_ms) }),
        },
        _ => read_or_bulk(queue, ctx, op, reply)?,
    };
    queue.serve_waiters(ctx);
    Ok(done)
}

fn read_or_bulk(
    queue: &mut QueueStore,
    ctx: &mut QueueContext<'_>,
    op: &QueueOp<'_>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<QueueDone, OpError> {
    let position = |queue: &QueueStore, value: &[u8]| queue.items.iter().position(|item| *item.value == *value);
    match op {
        QueueOp::Peek => reply(Reply::Value(queue.items.front().map(|item| &*item.value))),
        QueueOp::Size => reply(Reply::Int(queue.items.len() as i32)),
        QueueOp::IsEmpty => reply(Reply::Bool(queue.items.is_empty())),
        QueueOp::RemainingCapacity => reply(Reply::Int(queue.room() as i32)),
        QueueOp::Iterator => reply(Reply::Values(queue.items.iter().map(|item| &*item.value).collect())),
        QueueOp::Contains { value } => reply(Reply::Bool(position(queue, value).is_some())),
        QueueOp::ContainsAll { values } => {
            reply(Reply::Bool(values.iter().all(|value| position(queue, value).is_some())))
        }
        QueueOp::Remove { value } => {
            let removed = position(queue, value).and_then(|index| queue.take_at(index));
            if let Some(value) = &removed {
                ctx.publish(ItemEventKind::Removed, value, ctx.source);
            }
            reply(Reply::Bool(removed.is_some()));
        }
        QueueOp::Drain { max } => {
            let count =
                max.map_or(queue.len(), |max| if max < 0 { queue.len() } else { (max as usize).min(queue.len()) });
            let drained: Vec<Box<[u8]>> = (0..count).filter_map(|_| queue.take_at(0)).collect();
            for value in &drained {
                ctx.publish(ItemEventKind::Removed, value, ctx.source);
            }
            reply(Reply::Values(drained.iter().map(|value| &**value).collect()));
        }
        QueueOp::Clear => {
            while let Some(value) = queue.take_at(0) {
                ctx.publish(ItemEventKind::Removed, &value, ctx.source);
            }
            reply(Reply::Empty);
        }
        QueueOp::AddAll { values } => add_all(queue, ctx, values, reply)?,
        QueueOp::RemoveAll { values } => reply(Reply::Bool(remove_where(queue, ctx, |item| listed(values, item)))),
        QueueOp::RetainAll { values } => reply(Reply::Bool(remove_where(queue, ctx, |item| !listed(values, item)))),
        QueueOp::Offer { .. } | QueueOp::Poll { .. } => unreachable!("handled by execute"),
        QueueOp::Txn { .. } => unreachable!("handled by the transaction's execute (txn.rs)"),
    }
    Ok(QueueDone::Answered)
}

/// addAll: every item or none (IllegalStateException "Queue full" if they do not all fit).
fn add_all(
    queue: &mut QueueStore,
    ctx: &mut QueueContext<'_>,
    values: &[Blob<'_>],
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<(), OpError> {
    values.iter().try_for_each(|value| null_check(value))?;
    if values.len() > queue.room() {
        return Err(OpError::new(ErrorKind::IllegalState, "Queue full"));
    }
    for value in values {
        ctx.publish(ItemEventKind::Added, value, ctx.source);
        queue.push(value.as_ref().into());
    }
    reply(Reply::Bool(true));
    Ok(())
}

/// Removes every item `matches` picks (removeAll / retainAll); whether any went.
fn remove_where(queue: &mut QueueStore, ctx: &mut QueueContext<'_>, matches: impl Fn(&[u8]) -> bool) -> bool {
    let mut index = 0;
    let mut removed = false;
    while index < queue.items.len() {
        if matches(&queue.items[index].value) {
            let value = queue.take_at(index).expect("in range");
            ctx.publish(ItemEventKind::Removed, &value, ctx.source);
            removed = true;
        } else {
            index += 1;
        }
    }
    removed
}

/// Whether a request's list of serialized items holds `item`.
fn listed(values: &[Blob<'_>], item: &[u8]) -> bool {
    values.iter().any(|value| **value == *item)
}

/// A record naming an item by id (and its transaction, for a hold's records).
fn put_id(out: &mut Vec<u8>, kind: u8, id: u64, txn: Option<Uuid>) {
    out.push(kind);
    out.extend_from_slice(&id.to_le_bytes());
    if let Some(txn) = txn {
        out.extend_from_slice(&txn.as_u128().to_le_bytes());
    }
}

/// A record carrying an item (ADD; STAGE and HELD with their transaction).
fn put_item(out: &mut Vec<u8>, kind: u8, item: &Item, txn: Option<Uuid>) {
    put_id(out, kind, item.id, txn);
    put_bytes(out, &item.value);
}

impl QueueStore {
    /// Applies the records of `body` (a backup's changes; a snapshot holds no REMOVE, UNSTAGE,
    /// RESERVE or END). Applying a body twice changes nothing more.
    fn apply_records(&mut self, body: &[u8], snapshot: bool) -> Result<(), Malformed> {
        let mut reader = Reader::new(body);
        while !reader.is_empty() {
            let kind = reader.u8()?;
            if snapshot && ![ADD, STAGE, HELD].contains(&kind) {
                return Err(Malformed::Refused("a queue snapshot holds a change that is not an item"));
            }
            if kind == END {
                let txn = Uuid::from_u128(reader.u128()?);
                let commit = match reader.u8()? {
                    0 => false,
                    1 => true,
                    _ => return Err(Malformed::Refused("a queue transaction's end is neither 0 nor 1")),
                };
                self.end_hold(txn, commit);
                continue;
            }
            let id = reader.u64()?;
            match kind {
                ADD => self.apply_add(Item { id, value: reader.bytes()?.into() }),
                REMOVE => {
                    if let Some(index) = self.items.iter().position(|item| item.id == id) {
                        let item = self.items.remove(index).expect("found");
                        self.held_bytes -= item.value.len();
                    }
                }
                STAGE | UNSTAGE | RESERVE | HELD => self.apply_hold_record(kind, id, &mut reader)?,
                other => return Err(Malformed::UnknownChange(other)),
            }
        }
        Ok(())
    }

    fn apply_add(&mut self, item: Item) {
        // Ids grow with every add, so the owner's order is the ids' order; an item already
        // here (a record applied twice) is not added again.
        self.next_id = self.next_id.max(item.id + 1);
        if self.items.back().is_none_or(|last| last.id < item.id) {
            self.held_bytes += item.value.len();
            self.items.push_back(item);
        }
    }

    /// STAGE, UNSTAGE, RESERVE and HELD: a record on transaction `txn`'s hold, once.
    fn apply_hold_record(&mut self, kind: u8, id: u64, reader: &mut Reader<'_>) -> Result<(), Malformed> {
        let txn = Uuid::from_u128(reader.u128()?);
        self.next_id = self.next_id.max(id + 1);
        let known = |hold: &TxnHold| hold.offers.iter().chain(&hold.reserved).any(|item| item.id == id);
        match kind {
            STAGE | HELD => {
                let value: Box<[u8]> = reader.bytes()?.into();
                if self.txns.iter().any(|hold| hold.txn == txn && known(hold)) {
                    return Ok(());
                }
                if kind == HELD {
                    self.held_bytes += value.len();
                    self.hold_mut(txn).reserved.push(Item { id, value });
                } else {
                    self.hold_mut(txn).offers.push(Item { id, value });
                }
            }
            UNSTAGE => {
                if let Some(hold) = self.txns.iter_mut().find(|hold| hold.txn == txn) {
                    hold.offers.retain(|offer| offer.id != id);
                }
            }
            _ => {
                if let Some(index) = self.items.iter().position(|item| item.id == id) {
                    let item = self.items.remove(index).expect("found");
                    self.hold_mut(txn).reserved.push(item);
                }
            }
        }
        Ok(())
    }

    /// Drops transaction `txn`'s hold: a commit's reserved items leave (its offers came as
    /// items), a rollback's go back in their place. What the hold held, if it had one.
    pub(super) fn end_hold(&mut self, txn: Uuid, commit: bool) -> Option<TxnHold> {
        let index = self.txns.iter().position(|hold| hold.txn == txn)?;
        let hold = self.txns.swap_remove(index);
        for item in &hold.reserved {
            if commit {
                self.held_bytes -= item.value.len();
            } else {
                let place = self.items.partition_point(|held| held.id < item.id);
                self.items.insert(place, item.clone());
            }
        }
        Some(hold)
    }
}

impl PartitionObject for QueueStore {
    fn create(_kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self {
        QueueStore::new(settings.queue(name))
    }

    fn take_idle(&mut self, now_ms: i64) -> bool {
        let idle = self.is_idle(now_ms);
        if idle {
            self.touch(now_ms);
        }
        idle
    }

    fn entry_count(&self) -> usize {
        self.items.len()
    }

    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    fn set_track_changes(&mut self, track: bool) {
        self.track_changes = track;
        if !track {
            self.changed.clear();
        }
    }

    fn sync_backup_count(&self) -> usize {
        self.config.backup_count as usize
    }

    fn write_changes(&mut self, body: &mut Vec<u8>) {
        for change in std::mem::take(&mut self.changed) {
            match change {
                Change::Added(id) => {
                    // An item added and removed before the backups heard of it: its removal
                    // follows, which finds nothing on the backup: harmless. Send the add only if
                    // the item is still here (its value is needed), or reserved since (its
                    // RESERVE follows).
                    let reserved = self.txns.iter().flat_map(|hold| &hold.reserved);
                    if let Some(item) = self.items.iter().rev().chain(reserved).find(|item| item.id == id) {
                        put_item(body, ADD, item, None);
                    }
                }
                Change::Removed(id) => put_id(body, REMOVE, id, None),
                Change::Staged { txn, id } => {
                    // An offer staged and taken back (or committed) since: nothing to stage.
                    let hold = self.txns.iter().find(|hold| hold.txn == txn);
                    if let Some(offer) = hold.and_then(|hold| hold.offers.iter().find(|offer| offer.id == id)) {
                        put_item(body, STAGE, offer, Some(txn));
                    }
                }
                Change::Unstaged { txn, id } => put_id(body, UNSTAGE, id, Some(txn)),
                Change::Reserved { txn, id } => put_id(body, RESERVE, id, Some(txn)),
                Change::Ended { txn, commit } => {
                    body.push(END);
                    body.extend_from_slice(&txn.as_u128().to_le_bytes());
                    body.push(u8::from(commit));
                }
            }
        }
    }

    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body, false)
    }

    /// The items, then each open transaction's hold: its reserved items (HELD) and its
    /// staged offers (STAGE), so that the new replica holds them for the commit.
    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
        for item in &self.items {
            writer.entry(|out| put_item(out, ADD, item, None));
        }
        for hold in &self.txns {
            for item in &hold.reserved {
                writer.entry(|out| put_item(out, HELD, item, Some(hold.txn)));
            }
            for offer in &hold.offers {
                writer.entry(|out| put_item(out, STAGE, offer, Some(hold.txn)));
            }
        }
    }

    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body, true)
    }

    fn take_waiting(&mut self) -> Vec<WaiterId> {
        self.pollers.drain(..).chain(self.offerers.drain(..)).map(|waiter| waiter.id).collect()
    }
}

#[cfg(test)]
pub(super) mod tests;
