//! The queue store's tests (and the harness `txn.rs`'s tests share).

use super::*;
use crate::engine::request::string_data as item;
use crate::engine::request::RecordedWaiters;
use std::borrow::Cow;

/// What a queue operation borrows from a reactor, with no reactor (also `txn.rs`'s tests').
pub(in crate::engine::queue) struct Harness {
    pub(in crate::engine::queue) listeners: Listeners,
    pub(in crate::engine::queue) outbox: Outbox,
    pub(in crate::engine::queue) waiters: RecordedWaiters,
}

impl Harness {
    pub(in crate::engine::queue) fn new() -> Harness {
        Harness { listeners: Listeners::default(), outbox: Outbox::default(), waiters: RecordedWaiters::default() }
    }

    pub(in crate::engine::queue) fn context(&mut self) -> QueueContext<'_> {
        QueueContext {
            name: "q",
            member: Uuid::default(),
            source: Uuid::default(),
            partition_id: PartitionId(0),
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            waiters: &mut self.waiters,
        }
    }

    /// Runs `op`, returning what it answered (as text) or that it waits.
    fn run(&mut self, queue: &mut QueueStore, op: QueueOp<'_>) -> Result<String, QueueDone> {
        let mut ctx = self.context();
        let mut answer = String::new();
        match execute(queue, &mut ctx, &op, 0, &mut |reply| answer = format!("{reply:?}")).unwrap() {
            QueueDone::Answered => Ok(answer),
            waits => Err(waits),
        }
    }
}

fn offer(value: &[u8]) -> QueueOp<'_> {
    QueueOp::Offer { value: Cow::Borrowed(value), timeout_ms: 0, answers_bool: true }
}

#[test]
fn fifo_with_a_bound() {
    let mut queue = QueueStore::new(QueueConfig { max_size: 2, ..QueueConfig::DEFAULT });
    let mut harness = Harness::new();
    let (a, b, c) = (item("a"), item("b"), item("c"));
    assert_eq!(harness.run(&mut queue, offer(&a)).unwrap(), "Bool(true)");
    assert_eq!(harness.run(&mut queue, offer(&b)).unwrap(), "Bool(true)");
    assert_eq!(harness.run(&mut queue, offer(&c)).unwrap(), "Bool(false)", "full");
    let waits = QueueOp::Offer { value: Cow::Borrowed(&c), timeout_ms: 5, answers_bool: true };
    assert_eq!(harness.run(&mut queue, waits), Err(QueueDone::Wait { deadline_ms: 5 }));
    assert_eq!(harness.run(&mut queue, QueueOp::RemainingCapacity).unwrap(), "Int(0)");
    let polled = harness.run(&mut queue, QueueOp::Poll { timeout_ms: 0 }).unwrap();
    assert_eq!(polled, format!("Value(Some({a:?}))"));
    assert_eq!(harness.run(&mut queue, QueueOp::Size).unwrap(), "Int(1)");
    assert_eq!(queue.held_bytes, b.len());
}

/// Runs `op`, which must wait, and parks it as `id`.
fn park(harness: &mut Harness, queue: &mut QueueStore, op: QueueOp<'_>, id: u64) -> Result<(), OpError> {
    let Err(QueueDone::Wait { deadline_ms }) = harness.run(queue, op.clone()) else { panic!("{op:?} waits") };
    let item = match &op {
        QueueOp::Offer { value, .. } => Some(value.as_ref().into()),
        _ => None,
    };
    let source = Uuid::default();
    let waiter = Waiter { id: WaiterId(id), deadline_ms, source, item, answers_bool: true, txn: None, peek: false };
    queue.wait(waiter, 2, &mut harness.waiters)
}

#[test]
fn a_parked_poll_is_woken_by_an_offer_through_its_id() {
    let mut queue = QueueStore::new(QueueConfig::DEFAULT);
    let mut harness = Harness::new();
    let (a, b) = (item("a"), item("b"));
    park(&mut harness, &mut queue, QueueOp::Poll { timeout_ms: -1 }, 1).unwrap();
    park(&mut harness, &mut queue, QueueOp::Poll { timeout_ms: 50 }, 2).unwrap();
    let third = park(&mut harness, &mut queue, QueueOp::Poll { timeout_ms: 50 }, 3);
    assert_eq!(third.unwrap_err().kind, ErrorKind::Refused, "two may wait");
    assert_eq!(harness.run(&mut queue, offer(&a)).unwrap(), "Bool(true)");
    assert_eq!(harness.waiters.answers, [(WaiterId(1), format!("Ok(Value(Some({a:?})))"))], "the oldest poll");
    assert_eq!(harness.run(&mut queue, QueueOp::Size).unwrap(), "Int(0)", "the item went to the waiter");
    // The other poller's client left: the next item is not handed to it.
    harness.waiters.gone.push(WaiterId(2));
    assert_eq!(harness.run(&mut queue, offer(&b)).unwrap(), "Bool(true)");
    assert_eq!(harness.waiters.dropped, [WaiterId(2)]);
    assert_eq!(harness.waiters.answers.len(), 1, "a gone waiter is not answered");
    assert_eq!(harness.run(&mut queue, QueueOp::Size).unwrap(), "Int(1)");
    assert!(queue.take_waiting().is_empty());
}

#[test]
fn a_parked_offer_gets_room_and_a_timed_out_waiter_is_answered_by_its_id() {
    let mut queue = QueueStore::new(QueueConfig { max_size: 1, ..QueueConfig::DEFAULT });
    let mut harness = Harness::new();
    let (a, b, c) = (item("a"), item("b"), item("c"));
    harness.run(&mut queue, offer(&a)).unwrap();
    let waits = |value| QueueOp::Offer { value: Cow::Borrowed(value), timeout_ms: 10, answers_bool: true };
    park(&mut harness, &mut queue, waits(&b), 4).unwrap();
    park(&mut harness, &mut queue, waits(&c), 5).unwrap();
    assert_eq!(harness.run(&mut queue, QueueOp::Poll { timeout_ms: 0 }).unwrap(), format!("Value(Some({a:?}))"));
    assert_eq!(harness.waiters.answers, [(WaiterId(4), "Ok(Bool(true))".to_string())], "room for the oldest");
    let mut ctx = harness.context();
    assert_eq!(queue.expire_waiters(9, &mut ctx), 0, "not yet");
    assert_eq!(queue.expire_waiters(10, &mut ctx), 1);
    assert_eq!(harness.waiters.answers[1], (WaiterId(5), "Ok(Bool(false))".to_string()), "the offer timed out");
    assert_eq!(harness.run(&mut queue, QueueOp::Iterator).unwrap(), format!("Values([{b:?}])"));
    park(&mut harness, &mut queue, waits(&c), 6).unwrap();
    assert_eq!(queue.take_waiting(), [WaiterId(6)], "taken by id when the partition moves");
}

#[test]
fn bulk_operations_answer_whether_the_queue_changed() {
    let mut queue = QueueStore::new(QueueConfig::DEFAULT);
    let mut harness = Harness::new();
    let items: Vec<Vec<u8>> = ["a", "b", "a", "c"].iter().map(|text| item(text)).collect();
    fn all(values: &[Vec<u8>]) -> Vec<Blob<'_>> {
        values.iter().map(|value| Cow::Borrowed(&value[..])).collect()
    }
    assert_eq!(harness.run(&mut queue, QueueOp::AddAll { values: all(&items) }).unwrap(), "Bool(true)");
    let remove_a = QueueOp::RemoveAll { values: all(&items[..1]) };
    assert_eq!(harness.run(&mut queue, remove_a).unwrap(), "Bool(true)");
    assert_eq!(queue.items.len(), 2);
    let keep_c = QueueOp::RetainAll { values: all(&items[3..]) };
    assert_eq!(harness.run(&mut queue, keep_c).unwrap(), "Bool(true)");
    let keep_c = QueueOp::RetainAll { values: all(&items[3..]) };
    assert_eq!(harness.run(&mut queue, keep_c).unwrap(), "Bool(false)");
    let mut bounded = QueueStore::new(QueueConfig { max_size: 1, ..QueueConfig::DEFAULT });
    let mut ctx_harness = Harness::new();
    let mut ctx = ctx_harness.context();
    let too_many = QueueOp::AddAll { values: all(&items[..2]) };
    let refused = execute(&mut bounded, &mut ctx, &too_many, 0, &mut |_| {}).unwrap_err();
    assert_eq!(refused.kind, ErrorKind::IllegalState);
    assert!(bounded.items.is_empty(), "nothing of a batch that does not fit");
}

#[test]
fn a_backup_mirrors_the_owner_and_applying_twice_is_harmless() {
    let mut owner = QueueStore::new(QueueConfig::DEFAULT);
    owner.set_track_changes(true);
    let mut harness = Harness::new();
    let (a, b, c) = (item("a"), item("b"), item("c"));
    for value in [&a, &b, &c] {
        harness.run(&mut owner, offer(value)).unwrap();
    }
    harness.run(&mut owner, QueueOp::Poll { timeout_ms: 0 }).unwrap();
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    let mut backup = QueueStore::new(QueueConfig::DEFAULT);
    backup.apply_backup(&body).unwrap();
    backup.apply_backup(&body).unwrap();
    assert_eq!(backup.items, owner.items);
    assert_eq!(backup.held_bytes, owner.held_bytes);
    // A snapshot of the owner gives a new replica the same items, and later ids go on.
    let mut replica = QueueStore::new(QueueConfig::DEFAULT);
    let mut snapshot = Vec::new();
    for item in &owner.items {
        put_item(&mut snapshot, ADD, item, None);
    }
    replica.apply_snapshot(&snapshot).unwrap();
    assert_eq!(replica.items, owner.items);
    assert!(replica.next_id > owner.items.back().unwrap().id);
    for cut in 0..body.len() {
        let mut partial = QueueStore::new(QueueConfig::DEFAULT);
        let _ = partial.apply_backup(&body[..cut]);
    }
    assert!(QueueStore::new(QueueConfig::DEFAULT).apply_backup(&[9, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    let removal = [REMOVE, 1, 0, 0, 0, 0, 0, 0, 0];
    assert!(QueueStore::new(QueueConfig::DEFAULT).apply_snapshot(&removal).is_err());
}
