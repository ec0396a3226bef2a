//! A transaction's operations on a queue (TransactionalQueue), run by the owner of the
//! queue's partition like any queue request, and their end.
//!
//! As a Hazelcast 5.6 member does: an offer is staged in the transaction's hold and seen by
//! no one else until the commit; a poll reserves the first item (out of `items`, so others'
//! size, peek and poll skip it), or, on an empty queue, takes the transaction's own first
//! offer; with a timeout (take: none) it waits like a plain poll, and the item an offer brings
//! it is reserved the same way (`QueueStore::serve_waiters`). An offer to a full queue (its
//! room counts every transaction's offers and reservations) waits its timeout for room. Peek
//! and size see the committed items and the transaction's own offers; a peek with a timeout
//! waits for an item as a poll does, without reserving it. The commit ([`end`], from the transaction's
//! `TxnEnd`) removes the reserved items and appends the offers, with their events and their
//! changes for the backups; a rollback puts the reserved items back in their place (by id) and
//! drops the offers. Either way the transaction's waiting polls are answered null.
//!
//! The hold is in the backups and migrates with the queue, as Hazelcast's reservations do
//! (its TxnReserveOffer/TxnReservePoll backups): every offer staged or taken back, every
//! reservation and the end are records for the backups (`store.rs`), and a snapshot carries
//! each hold, so the commit finds the transaction's offers and reservations on whichever member
//! owns the queue by then. The owner alone ends a hold (the commit appends its offers with new
//! ids, which a backup could not choose alike); a backup replica that hears the end first marks
//! it and ends it if it becomes the owner before the owner's END record reaches it.

use crate::engine::listeners::{ItemEventKind, Registry};
use crate::engine::queue::request::QueueTxnOp;
use crate::engine::queue::store::{Change, QueueContext, QueueDone, QueueStore};
use crate::engine::request::{ErrorKind, OpError, Reply};
use crate::engine::wide::ShareContext;
use crate::partition::objects::kind;
use ferrogrid_protocol::{Data, PartitionId, Uuid};

fn null_check(bytes: &[u8]) -> Result<(), OpError> {
    match Data(bytes).type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(OpError::new(ErrorKind::NullArgument, "Null item is not allowed!")),
    }
}

/// Runs transaction `txn`'s `op` on `queue`; its answer goes to `reply` unless it waits.
pub(crate) fn execute(
    queue: &mut QueueStore,
    ctx: &mut QueueContext<'_>,
    txn: Uuid,
    op: &QueueTxnOp<'_>,
    now_ms: i64,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<QueueDone, OpError> {
    queue.touch(now_ms);
    let source = ctx.source;
    queue.settle_ended().publish(|kind, value| ctx.publish(kind, value, source));
    let own = queue.txns.iter().find(|hold| hold.txn == txn);
    match op {
        QueueTxnOp::Offer { value, timeout_ms } => {
            null_check(value)?;
            let room = queue.room_beside_holds() > 0 && queue.room() > 0 && queue.offerers.is_empty();
            if room {
                queue.stage_offer(txn, value.as_ref().into());
            } else if *timeout_ms != 0 {
                return Ok(QueueDone::Wait { deadline_ms: crate::clock::deadline_after(now_ms, *timeout_ms) });
            }
            reply(Reply::Bool(room));
        }
        QueueTxnOp::Peek { timeout_ms } => {
            let first_offer = own.and_then(|hold| hold.offers.first());
            let first = queue.items.front().or(first_offer).map(|item| &*item.value);
            if first.is_none() && *timeout_ms != 0 {
                return Ok(QueueDone::Wait { deadline_ms: crate::clock::deadline_after(now_ms, *timeout_ms) });
            }
            reply(Reply::Value(first));
        }
        QueueTxnOp::Size => {
            let offers = own.map_or(0, |hold| hold.offers.len());
            reply(Reply::Int((queue.items.len() + offers).min(i32::MAX as usize) as i32));
        }
        QueueTxnOp::Poll { timeout_ms } => {
            if let Some(value) = queue.reserve_front(txn).or_else(|| queue.take_own_offer(txn)) {
                reply(Reply::Value(Some(&value)));
            } else if *timeout_ms == 0 {
                reply(Reply::Value(None));
            } else {
                let deadline_ms = crate::clock::deadline_after(now_ms, *timeout_ms);
                return Ok(QueueDone::Wait { deadline_ms });
            }
        }
    }
    // A reservation makes room for a waiting offer, as a poll does.
    queue.serve_waiters(ctx);
    Ok(QueueDone::Answered)
}

/// What the end of a transaction did to one queue.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Ended {
    /// Items added (commit: its offers) and removed (commit: its reservations), for events.
    pub(crate) added: Vec<Box<[u8]>>,
    pub(crate) removed: Vec<Box<[u8]>>,
    /// Whether the transaction held anything here (the partition's changes and waiters are
    /// to be seen to).
    pub(crate) held: bool,
}

impl QueueStore {
    /// Ends transaction `txn` on this queue: commit applies its hold, rollback puts its
    /// reserved items back; its waiting polls are due at once (answered null by the next
    /// `expire_waiters`).
    pub(crate) fn end_txn(&mut self, txn: Uuid, commit: bool) -> Ended {
        let mut ended = Ended::default();
        // Answered by the `expire_waiters` that follows the end (`PartitionOwner::run_share`),
        // before anything could serve them.
        for waiter in self.pollers.iter_mut().chain(self.offerers.iter_mut()).filter(|waiter| waiter.txn == Some(txn)) {
            waiter.deadline_ms = i64::MIN;
            ended.held = true;
        }
        let Some(hold) = self.txns.iter().find(|hold| hold.txn == txn) else { return ended };
        ended.held = true;
        if commit {
            let (reserved, offers) = (hold.reserved.clone(), hold.offers.clone());
            for item in reserved {
                self.track(Change::Removed(item.id));
                ended.removed.push(item.value);
            }
            for offer in offers {
                self.push(offer.value.clone());
                ended.added.push(offer.value);
            }
        }
        self.end_hold(txn, commit);
        self.track(Change::Ended { txn, commit });
        ended
    }

    /// Ends the transactions a backup replica heard end before its owner's records came
    /// (`TxnEnd` on a replica this member did not own then), now that it runs operations as
    /// the owner. What they added and removed, for events.
    pub(crate) fn settle_ended(&mut self) -> Ended {
        let mut settled = Ended::default();
        while let Some((txn, commit)) = self.txns.iter().find_map(|hold| Some((hold.txn, hold.ended?))) {
            let ended = self.end_txn(txn, commit);
            settled.added.extend(ended.added);
            settled.removed.extend(ended.removed);
            settled.held = true;
        }
        settled
    }
}

/// The end of transaction `txn` on the queues of partition `local` (its commit or rollback,
/// `engine/map/txn_wide.rs`'s `TxnEnd`). Whether it held anything there: the caller then
/// sends the partition's changes to the backups and answers its queues' waiters.
///
/// On a replica this member does not own, the end is only marked on the hold: the owner's END
/// record drops it; if this replica becomes the owner first (a promotion announced after the
/// end arrived), its next operation ends it ([`QueueStore::settle_ended`]).
pub(crate) fn end(share: &mut ShareContext<'_>, local: usize, txn: Uuid, commit: bool, owned: bool) -> bool {
    let partition_id = PartitionId(share.partition_id(local));
    let mut held = false;
    for (name, queue) in share.partitions[local].stores_mut::<kind::Queue>() {
        let waiting = queue.pollers.iter().chain(queue.offerers.iter()).any(|waiter| waiter.txn.is_some());
        if queue.txns.is_empty() && !waiting {
            continue;
        }
        if !owned {
            if let Some(hold) = queue.txns.iter_mut().find(|hold| hold.txn == txn) {
                hold.ended = Some(commit);
            }
            continue;
        }
        let mut ended = queue.settle_ended();
        let own = queue.end_txn(txn, commit);
        ended.held |= own.held;
        ended.added.extend(own.added);
        ended.removed.extend(own.removed);
        held |= ended.held;
        if share.listeners.has_object_listeners(Registry::Items, name) {
            let origin = (share.member, name, partition_id);
            ended.publish(|kind, value| {
                share.listeners.publish_item(share.outbox, Registry::Items, origin, kind, value)
            });
        }
    }
    held
}

impl Ended {
    /// Hands each item event of the end to `publish`: the removals, then the additions.
    pub(crate) fn publish(&self, mut publish: impl FnMut(ItemEventKind, &[u8])) {
        self.removed.iter().for_each(|value| publish(ItemEventKind::Removed, value));
        self.added.iter().for_each(|value| publish(ItemEventKind::Added, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::queue::store::tests::Harness;
    use crate::engine::queue::store::Waiter;
    use crate::engine::request::string_data as item;
    use crate::engine::request::WaiterId;
    use ferrogrid_config::QueueConfig;
    use std::borrow::Cow;

    const ONE: Uuid = Uuid { most: 1, least: 1 };
    const TWO: Uuid = Uuid { most: 2, least: 2 };

    impl Harness {
        /// Runs `op` of `txn`: what it answered, or that it waits.
        fn run_txn(&mut self, queue: &mut QueueStore, txn: Uuid, op: QueueTxnOp<'_>) -> Result<String, QueueDone> {
            let mut ctx = self.context();
            let mut answer = String::new();
            match execute(queue, &mut ctx, txn, &op, 0, &mut |reply| answer = format!("{reply:?}")).unwrap() {
                QueueDone::Answered => Ok(answer),
                waits => Err(waits),
            }
        }
    }

    fn offer(value: &[u8]) -> QueueTxnOp<'_> {
        QueueTxnOp::Offer { value: Cow::Borrowed(value), timeout_ms: 0 }
    }

    fn values(queue: &QueueStore) -> Vec<&[u8]> {
        queue.items.iter().map(|item| &*item.value).collect()
    }

    /// A queue holding `items`, committed.
    fn queue_of(items: &[&[u8]]) -> QueueStore {
        let mut queue = QueueStore::new(QueueConfig { max_size: 4, ..QueueConfig::DEFAULT });
        items.iter().for_each(|value| queue.push((*value).into()));
        queue
    }

    #[test]
    fn offers_are_staged_and_polls_reserve_until_the_commit() {
        let (a, b, x) = (item("a"), item("b"), item("x"));
        let mut queue = queue_of(&[&a, &b]);
        let mut harness = Harness::new();
        assert_eq!(harness.run_txn(&mut queue, ONE, offer(&x)).unwrap(), "Bool(true)");
        assert_eq!(harness.run_txn(&mut queue, ONE, QueueTxnOp::Size).unwrap(), "Int(3)");
        assert_eq!(harness.run_txn(&mut queue, TWO, QueueTxnOp::Size).unwrap(), "Int(2)", "another's offer unseen");
        let polled = harness.run_txn(&mut queue, ONE, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        assert_eq!(polled, format!("Value(Some({a:?}))"));
        assert_eq!(values(&queue), [&b[..]], "the reserved item is out of sight");
        assert_eq!(harness.run_txn(&mut queue, TWO, offer(&x)).unwrap(), "Bool(true)");
        assert_eq!(harness.run_txn(&mut queue, TWO, offer(&x)).unwrap(), "Bool(false)", "four held: full");
        let ended = queue.end_txn(ONE, true);
        assert_eq!((ended.added, ended.removed), (vec![x.clone().into()], vec![a.clone().into()]));
        assert_eq!(values(&queue), [&b[..], &x[..]]);
        assert_eq!(queue.held_bytes, b.len() + x.len());
        assert!(queue.end_txn(TWO, false).added.is_empty() && queue.txns.is_empty());
    }

    #[test]
    fn a_rollback_puts_reserved_items_back_in_their_place() {
        let (a, b, c, x) = (item("a"), item("b"), item("c"), item("x"));
        let mut queue = queue_of(&[&a, &b, &c]);
        let mut harness = Harness::new();
        harness.run_txn(&mut queue, ONE, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        harness.run_txn(&mut queue, TWO, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        harness.run_txn(&mut queue, ONE, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        harness.run_txn(&mut queue, ONE, offer(&x)).unwrap();
        let peeked = harness.run_txn(&mut queue, ONE, QueueTxnOp::Peek { timeout_ms: 0 }).unwrap();
        assert_eq!(peeked, format!("Value(Some({x:?}))"), "its own offer, nothing committed left to it");
        let ended = queue.end_txn(ONE, false);
        assert!(ended.held && ended.added.is_empty() && ended.removed.is_empty());
        assert_eq!(values(&queue), [&a[..], &c[..]], "a and c back in place; b is still the other's");
        queue.end_txn(TWO, false);
        assert_eq!(values(&queue), [&a[..], &b[..], &c[..]]);
        assert!(queue.txns.is_empty());
    }

    #[test]
    fn a_poll_takes_its_own_offer_on_an_empty_queue_and_else_waits() {
        let (x, v) = (item("x"), item("v"));
        let mut queue = queue_of(&[]);
        let mut harness = Harness::new();
        assert_eq!(harness.run_txn(&mut queue, ONE, QueueTxnOp::Peek { timeout_ms: 0 }).unwrap(), "Value(None)");
        harness.run_txn(&mut queue, ONE, offer(&x)).unwrap();
        assert_eq!(
            harness.run_txn(&mut queue, ONE, QueueTxnOp::Peek { timeout_ms: 0 }).unwrap(),
            format!("Value(Some({x:?}))")
        );
        let polled = harness.run_txn(&mut queue, ONE, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        assert_eq!(polled, format!("Value(Some({x:?}))"));
        assert_eq!(harness.run_txn(&mut queue, ONE, QueueTxnOp::Size).unwrap(), "Int(0)");
        let waits = harness.run_txn(&mut queue, TWO, QueueTxnOp::Poll { timeout_ms: -1 });
        assert_eq!(waits, Err(QueueDone::Wait { deadline_ms: crate::clock::NEVER }));
        let waiter = Waiter {
            id: WaiterId(7),
            deadline_ms: crate::clock::NEVER,
            source: ONE,
            item: None,
            answers_bool: false,
            txn: Some(TWO),
            peek: false,
        };
        queue.wait(waiter, 4, &mut harness.waiters).unwrap();
        // A plain offer's item goes to the waiting take, reserved for its transaction.
        queue.push(v.clone().into());
        queue.serve_waiters(&mut harness.context());
        assert_eq!(harness.waiters.answers, [(WaiterId(7), format!("Ok(Value(Some({v:?})))"))]);
        assert!(queue.items.is_empty());
        queue.end_txn(TWO, false);
        assert_eq!(values(&queue), [&v[..]], "rolled back: the item is back");
    }

    #[test]
    fn the_end_of_a_transaction_makes_its_waiting_polls_due() {
        let mut queue = queue_of(&[]);
        let mut harness = Harness::new();
        let waiter = Waiter {
            id: WaiterId(3),
            deadline_ms: crate::clock::NEVER,
            source: ONE,
            item: None,
            answers_bool: false,
            txn: Some(ONE),
            peek: false,
        };
        queue.wait(waiter, 4, &mut harness.waiters).unwrap();
        assert!(queue.end_txn(ONE, true).held);
        queue.push(item("late").into());
        assert_eq!(queue.expire_waiters(0, &mut harness.context()), 1);
        assert_eq!(harness.waiters.answers, [(WaiterId(3), "Ok(Value(None))".to_string())]);
        assert_eq!(queue.items.len(), 1, "the ended transaction reserved nothing");
    }

    /// Sends the owner's changes to the backup (twice: a record applied again changes
    /// nothing) and checks that the backup holds what the owner holds.
    fn mirror(owner: &mut QueueStore, backup: &mut QueueStore) {
        use crate::partition::object::PartitionObject;
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        backup.apply_backup(&body).unwrap();
        backup.apply_backup(&body).unwrap();
        assert_same(owner, backup);
    }

    fn assert_same(owner: &QueueStore, replica: &QueueStore) {
        assert_eq!(replica.items, owner.items);
        let sorted = |queue: &QueueStore| {
            let mut holds = queue.txns.clone();
            holds.sort_by_key(|hold| hold.txn.as_u128());
            holds
        };
        assert_eq!(sorted(replica), sorted(owner));
        assert_eq!(replica.held_bytes, owner.held_bytes);
    }

    /// An owner whose transactions ONE and TWO hold offers and reservations of a, b, x, y, z.
    fn owner_with_holds(harness: &mut Harness) -> (QueueStore, QueueStore) {
        use crate::partition::object::PartitionObject;
        let (a, b, x, y, z) = (item("a"), item("b"), item("x"), item("y"), item("z"));
        let roomy = || QueueStore::new(QueueConfig { max_size: 10, ..QueueConfig::DEFAULT });
        let (mut owner, mut backup) = (roomy(), roomy());
        owner.set_track_changes(true);
        owner.push(a.clone().into());
        owner.push(b.clone().into());
        mirror(&mut owner, &mut backup);
        harness.run_txn(&mut owner, ONE, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        mirror(&mut owner, &mut backup);
        harness.run_txn(&mut owner, TWO, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        harness.run_txn(&mut owner, ONE, offer(&x)).unwrap();
        mirror(&mut owner, &mut backup);
        harness.run_txn(&mut owner, ONE, offer(&y)).unwrap();
        harness.run_txn(&mut owner, TWO, offer(&z)).unwrap();
        mirror(&mut owner, &mut backup);
        let own = harness.run_txn(&mut owner, TWO, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        assert_eq!(own, format!("Value(Some({z:?}))"), "its own offer, taken back");
        mirror(&mut owner, &mut backup);
        assert_eq!(owner.txns.len(), 2);
        (owner, backup)
    }

    #[test]
    fn a_backup_holds_every_transaction_s_offers_and_reservations_through_its_end() {
        let mut harness = Harness::new();
        let (mut owner, mut backup) = owner_with_holds(&mut harness);
        assert!(backup.items.is_empty() && backup.txns.iter().map(|hold| hold.reserved.len()).sum::<usize>() == 2);
        owner.end_txn(ONE, true);
        mirror(&mut owner, &mut backup);
        owner.end_txn(TWO, false);
        mirror(&mut owner, &mut backup);
        assert_eq!(values(&backup), [&item("b")[..], &item("x")[..], &item("y")[..]]);
        assert!(backup.txns.is_empty());
    }

    #[test]
    fn a_snapshot_carries_the_holds_and_the_replica_commits_as_the_owner_does() {
        use crate::cluster::peer::SnapshotWriter;
        use crate::engine::structures::ObjectKind;
        use crate::partition::object::PartitionObject;
        let mut harness = Harness::new();
        let (mut owner, _) = owner_with_holds(&mut harness);
        let mut out = Vec::new();
        let mut writer = SnapshotWriter::new(&mut out, 0, 1, 256);
        writer.begin_object(ObjectKind::Queue, "q");
        owner.write_snapshot(&mut writer);
        writer.finish();
        let mut replica = queue_of(&[]);
        for chunk in crate::cluster::peer::tests::snapshot_chunks(&out) {
            for object in crate::cluster::peer::read_snapshot(&chunk).unwrap().1 {
                replica.apply_snapshot(object.body).unwrap();
            }
        }
        assert_same(&owner, &replica);
        for queue in [&mut owner, &mut replica] {
            queue.end_txn(ONE, true);
            queue.end_txn(TWO, false);
        }
        assert_eq!(values(&replica), values(&owner));
        assert_eq!(values(&owner), [&item("b")[..], &item("x")[..], &item("y")[..]]);
    }

    #[test]
    fn a_replica_that_heard_the_end_before_its_owner_s_records_ends_it_as_the_owner() {
        let mut harness = Harness::new();
        let (mut owner, mut promoted) = owner_with_holds(&mut harness);
        promoted.txns.iter_mut().for_each(|hold| hold.ended = Some(hold.txn == ONE));
        let peeked = harness.run_txn(&mut promoted, TWO, QueueTxnOp::Size).unwrap();
        assert_eq!(peeked, "Int(3)", "ended before it answers: b back, x and y in");
        owner.end_txn(ONE, true);
        owner.end_txn(TWO, false);
        assert_eq!(values(&promoted), values(&owner));
        assert!(promoted.txns.is_empty());
    }

    #[test]
    fn malformed_hold_records_are_refused() {
        use crate::partition::object::PartitionObject;
        let mut harness = Harness::new();
        let (mut owner, mut backup) = owner_with_holds(&mut harness);
        owner.end_txn(ONE, true);
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        for cut in 0..body.len() {
            let _ = queue_of(&[]).apply_backup(&body[..cut]);
        }
        let mut bad = body.clone();
        *bad.last_mut().unwrap() = 2; // the body ends with the commit's END: its commit byte
        assert!(queue_of(&[]).apply_backup(&bad).is_err(), "an end neither commit nor rollback");
        let mut reserve = vec![5];
        reserve.extend_from_slice(&[0; 8 + 16]);
        assert!(backup.apply_snapshot(&reserve).is_err(), "a snapshot holds no reservation record");
        assert!(backup.apply_backup(&reserve[..20]).is_err(), "truncated");
    }

    #[test]
    fn an_offer_to_a_full_queue_waits_for_room_beside_the_holds() {
        let (a, b, c, d, x) = (item("a"), item("b"), item("c"), item("d"), item("x"));
        let mut queue = queue_of(&[&a, &b, &c, &d]);
        let mut harness = Harness::new();
        let waits = QueueTxnOp::Offer { value: Cow::Borrowed(&x), timeout_ms: 100 };
        assert_eq!(harness.run_txn(&mut queue, ONE, waits), Err(QueueDone::Wait { deadline_ms: 100 }));
        assert_eq!(harness.run_txn(&mut queue, ONE, offer(&x)).unwrap(), "Bool(false)", "no timeout: at once");
        let waiter = Waiter {
            id: WaiterId(5),
            deadline_ms: 100,
            source: ONE,
            item: Some(x.clone().into()),
            answers_bool: true,
            txn: Some(ONE),
            peek: false,
        };
        queue.wait(waiter, 4, &mut harness.waiters).unwrap();
        // Another transaction's reservation leaves the room taken: the offer still waits.
        harness.run_txn(&mut queue, TWO, QueueTxnOp::Poll { timeout_ms: 0 }).unwrap();
        assert!(harness.waiters.answers.is_empty());
        queue.end_txn(TWO, true);
        queue.serve_waiters(&mut harness.context());
        assert_eq!(harness.waiters.answers, [(WaiterId(5), "Ok(Bool(true))".to_string())], "room after the commit");
        assert_eq!(values(&queue), [&b[..], &c[..], &d[..]], "staged, not added");
        queue.end_txn(ONE, true);
        assert_eq!(values(&queue), [&b[..], &c[..], &d[..], &x[..]]);
    }

    #[test]
    fn a_waiting_peek_sees_the_first_item_and_leaves_it() {
        let v = item("v");
        let mut queue = queue_of(&[]);
        let mut harness = Harness::new();
        let waits = QueueTxnOp::Peek { timeout_ms: 50 };
        assert_eq!(harness.run_txn(&mut queue, ONE, waits), Err(QueueDone::Wait { deadline_ms: 50 }));
        let peek = Waiter {
            id: WaiterId(1),
            deadline_ms: 50,
            source: ONE,
            item: None,
            answers_bool: false,
            txn: Some(ONE),
            peek: true,
        };
        let poll = Waiter {
            id: WaiterId(2),
            deadline_ms: 50,
            source: ONE,
            item: None,
            answers_bool: false,
            txn: Some(TWO),
            peek: false,
        };
        queue.wait(peek, 4, &mut harness.waiters).unwrap();
        queue.wait(poll, 4, &mut harness.waiters).unwrap();
        queue.push(v.clone().into());
        queue.serve_waiters(&mut harness.context());
        let answer = format!("Ok(Value(Some({v:?})))");
        assert_eq!(harness.waiters.answers, [(WaiterId(1), answer.clone()), (WaiterId(2), answer)], "both");
        assert!(queue.items.is_empty() && queue.end_txn(TWO, false).held, "the poll reserved it");
        assert_eq!(values(&queue), [&v[..]]);
    }
}
