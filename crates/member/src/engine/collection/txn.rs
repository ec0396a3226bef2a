//! A transaction's operations on a list or set (TransactionalList, TransactionalSet), run by
//! the owner of the collection's partition like any list or set request, and their end.
//!
//! As a Hazelcast 5.6 member does: an add is staged in the transaction's hold and seen by no
//! one else until the commit (a set's add of an item it has, or the transaction added, answers
//! false); a remove reserves the first equal committed item (out of sight of everyone), or else
//! drops the transaction's own add of it; size counts the committed items and the transaction's
//! adds. The commit ([`end`], from the transaction's `TxnEnd`) removes the reserved items and
//! adds the staged ones, with their events and their changes for the backups; a rollback puts
//! the reserved items back and drops the adds.
//!
//! The holds are in the backups and migrate (`store/hold.rs`): every add staged or dropped,
//! item reserved and hold ended is recorded for the backups, and a snapshot carries the holds,
//! so when the owner dies or the partition moves before the end, the member that then owns
//! the partition holds the transaction's adds and reservations, and the end (`TxnEnd`, sent to
//! the owner) applies them once.

use crate::engine::collection::request::CollectionTxnOp;
use crate::engine::collection::store::{CollectionContext, CollectionStore, Reserved};
use crate::engine::listeners::ItemEventKind;
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

/// Runs transaction `txn`'s `op` on `store`; its answer goes to `reply`.
pub(crate) fn execute(
    store: &mut CollectionStore,
    txn: Uuid,
    op: &CollectionTxnOp<'_>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<(), OpError> {
    match op {
        CollectionTxnOp::Add { value } => {
            null_check(value)?;
            let has = store.is_set() && (store.contains(value) || store.own_adds(txn).any(|add| *add == **value));
            let added = !has && store.len() + store.held_count() < store.capacity();
            if added {
                store.stage_add(txn, value);
            }
            reply(Reply::Bool(added));
        }
        CollectionTxnOp::Remove { value } => {
            null_check(value)?;
            // The first equal committed item, or else its own add of it.
            let removed = store.reserve(txn, value) || store.unstage_add(txn, value);
            reply(Reply::Bool(removed));
        }
        CollectionTxnOp::Size => {
            let size = store.len() + store.own_adds(txn).count();
            reply(Reply::Int(size.min(i32::MAX as usize) as i32));
        }
    }
    Ok(())
}

/// What a transaction's end did to a collection: the items it removed and added (for events).
type Ended = (Vec<Reserved>, Vec<Box<[u8]>>);

/// Ends transaction `txn` on `store`: commit removes its reserved items and adds its staged
/// ones, rollback puts the reserved items back. The items removed and added (events), or None
/// if it held nothing here.
fn end_txn(store: &mut CollectionStore, txn: Uuid, commit: bool) -> Option<Ended> {
    let hold = store.take_hold(txn)?;
    if !commit {
        store.restore_all(hold.reserved);
        return Some((Vec::new(), Vec::new()));
    }
    hold.reserved.iter().for_each(|reserved| store.remove_reserved(reserved));
    let added = hold.adds.into_iter().map(|add| add.value).filter(|value| store.insert(value, None)).collect();
    Some((hold.reserved, added))
}

/// Ends the transactions a backup replica heard end before its owner's records came (`end`
/// on a replica this member did not own then), now that it runs operations as the owner, with
/// their events.
pub(crate) fn settle_ended(store: &mut CollectionStore, ctx: &mut CollectionContext<'_>) {
    while let Some((txn, commit)) = store.txns.iter().find_map(|hold| Some((hold.txn, hold.ended?))) {
        let Some((removed, added)) = end_txn(store, txn, commit) else { return };
        let registry = store.registry();
        removed.iter().for_each(|reserved| ctx.publish(registry, ItemEventKind::Removed, &reserved.value));
        added.iter().for_each(|value| ctx.publish(registry, ItemEventKind::Added, value));
    }
}

/// The end of transaction `txn` on the lists and sets of partition `local` (its commit or
/// rollback, `engine/map/txn_wide.rs`'s `TxnEnd`). Whether it held anything there: the caller
/// then sends the partition's changes to the backups.
///
/// On a replica this member does not own, the end is only marked on the hold: the owner's END
/// record drops it; if this replica becomes the owner first (a promotion announced after the
/// end arrived), its next operation ends it ([`settle_ended`]).
pub(crate) fn end(share: &mut ShareContext<'_>, local: usize, txn: Uuid, commit: bool, owned: bool) -> bool {
    let partition_id = PartitionId(share.partition_id(local));
    let partition = &mut share.partitions[local];
    if !owned {
        let mark = |(_, store): (&str, &mut CollectionStore)| {
            if let Some(hold) = store.txns.iter_mut().find(|hold| hold.txn == txn) {
                hold.ended = Some(commit);
            }
        };
        partition.stores_mut::<kind::List>().for_each(mark);
        partition.stores_mut::<kind::Set>().for_each(mark);
        return false;
    }
    let mut ended = Vec::new();
    let lists = partition.stores_mut::<kind::List>().filter(|(_, store)| !store.txns.is_empty());
    for (name, store) in lists {
        if let Some(done) = end_txn(store, txn, commit) {
            ended.push((store.registry(), name.to_owned(), done));
        }
    }
    let sets = partition.stores_mut::<kind::Set>().filter(|(_, store)| !store.txns.is_empty());
    for (name, store) in sets {
        if let Some(done) = end_txn(store, txn, commit) {
            ended.push((store.registry(), name.to_owned(), done));
        }
    }
    let held = !ended.is_empty();
    for (registry, name, (removed, added)) in ended {
        if !share.listeners.has_object_listeners(registry, &name) {
            continue;
        }
        let origin = (share.member, &*name, partition_id);
        let events = removed.iter().map(|reserved| (ItemEventKind::Removed, &reserved.value));
        for (kind, value) in events.chain(added.iter().map(|value| (ItemEventKind::Added, value))) {
            share.listeners.publish_item(share.outbox, registry, origin, kind, value);
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::string_data as item;
    use crate::partition::object::PartitionObject;
    use ferrogrid_config::CollectionConfig;
    use std::borrow::Cow;

    const ONE: Uuid = Uuid { most: 1, least: 1 };
    const TWO: Uuid = Uuid { most: 2, least: 2 };

    /// Runs `op` of `txn`: what it answered.
    fn run(store: &mut CollectionStore, txn: Uuid, op: CollectionTxnOp<'_>) -> String {
        let mut answer = String::new();
        execute(store, txn, &op, &mut |reply| answer = format!("{reply:?}")).expect("not refused");
        answer
    }

    fn add(value: &[u8]) -> CollectionTxnOp<'_> {
        CollectionTxnOp::Add { value: Cow::Borrowed(value) }
    }

    fn remove(value: &[u8]) -> CollectionTxnOp<'_> {
        CollectionTxnOp::Remove { value: Cow::Borrowed(value) }
    }

    /// A list (or set) holding `items`, committed.
    fn collection_of(set: bool, items: &[&[u8]]) -> CollectionStore {
        let mut store = CollectionStore::new(CollectionConfig { max_size: 5, ..CollectionConfig::DEFAULT }, set);
        items.iter().for_each(|value| assert!(store.insert(value, None)));
        store
    }

    fn values(store: &CollectionStore) -> Vec<Vec<u8>> {
        store.values().iter().map(|value| value.to_vec()).collect()
    }

    #[test]
    fn a_list_s_adds_wait_for_the_commit_and_its_removes_reserve() {
        let (a, b, c) = (item("a"), item("b"), item("c"));
        let mut list = collection_of(false, &[&a, &b, &a]);
        assert_eq!(run(&mut list, ONE, add(&c)), "Bool(true)");
        assert_eq!(run(&mut list, ONE, add(&a)), "Bool(true)", "a list holds duplicates");
        assert_eq!(run(&mut list, ONE, CollectionTxnOp::Size), "Int(5)");
        assert_eq!(run(&mut list, TWO, CollectionTxnOp::Size), "Int(3)", "another's adds unseen");
        assert_eq!(run(&mut list, ONE, remove(&a)), "Bool(true)", "the committed a first");
        assert_eq!(values(&list), [b.clone(), a.clone()], "reserved: out of sight");
        assert_eq!(run(&mut list, ONE, remove(&c)), "Bool(true)", "its own add");
        assert_eq!(run(&mut list, ONE, remove(&c)), "Bool(false)");
        assert_eq!(run(&mut list, TWO, add(&c)), "Bool(true)");
        assert_eq!(run(&mut list, TWO, add(&c)), "Bool(false)", "full: two items, two adds, one reserved");
        let (removed, added) = end_txn(&mut list, ONE, true).expect("held");
        assert_eq!((removed.len(), added), (1, vec![a.clone().into_boxed_slice()]));
        assert_eq!(values(&list), [b.clone(), a.clone(), a.clone()]);
        assert!(end_txn(&mut list, TWO, false).is_some() && list.txns.is_empty());
        assert_eq!(end_txn(&mut list, ONE, true), None, "nothing held any more");
    }

    #[test]
    fn a_rollback_puts_a_list_s_reserved_items_back_in_place() {
        let (a, b, c) = (item("a"), item("b"), item("c"));
        let mut list = collection_of(false, &[&a, &b, &c]);
        assert_eq!(run(&mut list, ONE, remove(&b)), "Bool(true)");
        assert_eq!(run(&mut list, ONE, remove(&a)), "Bool(true)");
        assert_eq!(run(&mut list, ONE, remove(&c)), "Bool(true)");
        assert!(values(&list).is_empty());
        end_txn(&mut list, ONE, false).expect("held");
        assert_eq!(values(&list), [a, b, c]);
    }

    #[test]
    fn a_set_refuses_an_item_it_has_and_restores_a_rolled_back_remove() {
        let (a, b) = (item("a"), item("b"));
        let mut set = collection_of(true, &[&a]);
        assert_eq!(run(&mut set, ONE, add(&a)), "Bool(false)", "committed");
        assert_eq!(run(&mut set, ONE, add(&b)), "Bool(true)");
        assert_eq!(run(&mut set, ONE, add(&b)), "Bool(false)", "its own add");
        assert_eq!(run(&mut set, ONE, remove(&a)), "Bool(true)");
        assert_eq!(run(&mut set, ONE, CollectionTxnOp::Size), "Int(1)");
        assert!(values(&set).is_empty());
        end_txn(&mut set, ONE, false).expect("held");
        assert_eq!(values(&set), std::slice::from_ref(&a));
        run(&mut set, TWO, remove(&a));
        run(&mut set, TWO, add(&b));
        end_txn(&mut set, TWO, true).expect("held");
        assert_eq!(values(&set), std::slice::from_ref(&b));
        assert_eq!(set.held_bytes(), b.len());
    }

    #[test]
    fn a_set_value_added_again_while_reserved_is_held_once() {
        let a = item("a");
        let mut set = collection_of(true, &[&a]);
        set.set_track_changes(true);
        run(&mut set, ONE, remove(&a));
        assert!(set.insert(&a, None), "a plain add: the reserved value is out of sight");
        end_txn(&mut set, ONE, false).expect("held");
        assert_eq!((values(&set), set.held_bytes()), (vec![a.clone()], a.len()), "rolled back: once");
        let mut backup = collection_of(true, &[&a]);
        run(&mut set, TWO, remove(&a));
        assert!(set.insert(&a, None));
        mirror(&mut set, &mut backup);
        end_txn(&mut set, TWO, true).expect("held");
        mirror(&mut set, &mut backup);
        assert_eq!((values(&set), set.held_bytes()), (vec![a.clone()], a.len()), "committed: the new one stays");
        assert_eq!(backup.image(), set.image(), "the backups keep the value the owner keeps");
    }

    /// Sends `owner`'s changes to `backup`, which applies them twice (as a resent body), and
    /// checks that they hold the same items, holds and held bytes.
    fn mirror(owner: &mut CollectionStore, backup: &mut CollectionStore) {
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        backup.apply_backup(&body).expect("well formed");
        backup.apply_backup(&body).expect("well formed");
        assert_eq!(backup.image(), owner.image());
    }

    /// One step of a scenario: a transaction's operation or end, or a plain add or remove.
    #[derive(Debug, Clone, Copy)]
    enum Step<'a> {
        Add(Uuid, &'a [u8]),
        Remove(Uuid, &'a [u8]),
        End(Uuid, bool),
        PlainAdd(&'a [u8]),
        PlainRemove(&'a [u8]),
    }

    fn step(store: &mut CollectionStore, step: Step<'_>) {
        use crate::engine::collection::request::CollectionOp;
        use crate::engine::collection::store::{execute as plain, CollectionContext};
        let (mut listeners, mut outbox) = (Default::default(), Default::default());
        let mut ctx = CollectionContext {
            name: "c",
            member: Uuid::default(),
            partition_id: PartitionId(0),
            listeners: &mut listeners,
            outbox: &mut outbox,
        };
        let ignore = &mut |_: Reply<'_>| {};
        match step {
            Step::Add(txn, value) => assert_eq!(run(store, txn, add(value)), "Bool(true)", "{step:?}"),
            Step::Remove(txn, value) => assert_eq!(run(store, txn, remove(value)), "Bool(true)", "{step:?}"),
            Step::End(txn, commit) => assert!(end_txn(store, txn, commit).is_some(), "{step:?}"),
            Step::PlainAdd(value) => {
                plain(store, &mut ctx, &CollectionOp::Add { value: Cow::Borrowed(value), index: None }, ignore)
                    .unwrap();
            }
            Step::PlainRemove(value) => {
                plain(store, &mut ctx, &CollectionOp::Remove { value: Cow::Borrowed(value) }, ignore).unwrap();
            }
        }
    }

    /// A list's scenario (`a`, `b`, `c` committed): ONE adds, reserves, drops its own add,
    /// reserves an item added after it began; TWO reserves the item that ONE's reserved `b`
    /// followed, a plain remove takes `c`, and both end (ONE with `commit`, TWO the other way).
    fn list_steps<'a>(values: &'a [Vec<u8>], commit: bool) -> Vec<Step<'a>> {
        let [a, b, c, d, e, f] = [0, 1, 2, 3, 4, 5].map(|index| &values[index][..]);
        vec![
            Step::Add(ONE, d),
            Step::Remove(ONE, b),
            Step::Remove(ONE, d),
            Step::Add(ONE, e),
            Step::PlainAdd(f),
            Step::Remove(ONE, f),
            Step::Remove(TWO, a),
            Step::PlainRemove(c),
            Step::Add(TWO, a),
            Step::End(ONE, commit),
            Step::End(TWO, !commit),
        ]
    }

    /// A set's scenario (`a`, `b` committed): ONE reserves `a`, which a plain add puts back
    /// and ONE reserves again; ONE drops its own add; TWO reserves `b` and an item added
    /// after it began; both end (ONE with `commit`, TWO the other way).
    fn set_steps<'a>(values: &'a [Vec<u8>], commit: bool) -> Vec<Step<'a>> {
        let [a, b, c, d, e, _] = [0, 1, 2, 3, 4, 5].map(|index| &values[index][..]);
        vec![
            Step::Add(ONE, c),
            Step::Remove(ONE, a),
            Step::PlainAdd(a),
            Step::Remove(ONE, a),
            Step::Remove(ONE, c),
            Step::Add(ONE, d),
            Step::Remove(TWO, b),
            Step::PlainAdd(e),
            Step::Remove(TWO, e),
            Step::End(ONE, commit),
            Step::End(TWO, !commit),
        ]
    }

    fn scenario_values() -> Vec<Vec<u8>> {
        ["a", "b", "c", "d", "e", "f"].iter().map(|text| item(text)).collect()
    }

    /// An owner (with backups) and its backup, with the scenario's committed items.
    fn owner_and_backup(set: bool, values: &[Vec<u8>]) -> (CollectionStore, CollectionStore) {
        let big = CollectionConfig { max_size: 100, ..CollectionConfig::DEFAULT };
        let (mut owner, mut backup) = (CollectionStore::new(big, set), CollectionStore::new(big, set));
        owner.set_track_changes(true);
        let committed = if set { &values[..2] } else { &values[..3] };
        committed.iter().for_each(|value| assert!(owner.insert(value, None)));
        mirror(&mut owner, &mut backup);
        (owner, backup)
    }

    #[test]
    fn a_backup_holds_what_the_owner_holds_through_a_commit_and_a_rollback() {
        let values = scenario_values();
        for (set, commit, every_step) in (0..8).map(|bits| (bits & 1 == 1, bits & 2 == 2, bits & 4 == 4)) {
            let steps = if set { set_steps(&values, commit) } else { list_steps(&values, commit) };
            let (mut owner, mut backup) = owner_and_backup(set, &values);
            for &next in &steps {
                step(&mut owner, next);
                if every_step {
                    mirror(&mut owner, &mut backup);
                }
            }
            // (Not every step: an item added, reserved and ended before the backups heard.)
            mirror(&mut owner, &mut backup);
            assert!(owner.txns.is_empty());
        }
    }

    /// The promoted `backup` ended the transactions as `owner` did: same items (a list's in the
    /// same order), same held bytes, no hold left.
    fn assert_ended_as_owner(backup: &CollectionStore, owner: &CollectionStore, set: bool, commit: bool) {
        assert_eq!(sorted_values(backup), sorted_values(owner), "set {set}, commit {commit}");
        if !set {
            assert_eq!(values(backup), values(owner), "in the same order");
        }
        assert_eq!(backup.held_bytes(), owner.held_bytes());
        assert!(backup.txns.is_empty());
    }

    #[test]
    fn a_promoted_backup_ends_the_transactions_as_its_owner_would_have() {
        let items = scenario_values();
        for (set, commit) in (0..4).map(|bits| (bits & 1 == 1, bits & 2 == 2)) {
            let steps = if set { set_steps(&items, commit) } else { list_steps(&items, commit) };
            let (ops, ends) = steps.split_at(steps.len() - 2);
            let (mut owner, mut backup) = owner_and_backup(set, &items);
            ops.iter().for_each(|&next| step(&mut owner, next));
            mirror(&mut owner, &mut backup);
            // The owner dies: its backup, promoted, gets the ends.
            backup.set_track_changes(true);
            for &end in ends {
                step(&mut owner, end);
                step(&mut backup, end);
            }
            assert_ended_as_owner(&backup, &owner, set, commit);
        }
    }

    #[test]
    fn a_replica_that_heard_the_end_first_ends_it_when_it_runs_as_the_owner() {
        use crate::engine::collection::store::CollectionContext;
        let items = scenario_values();
        for (set, commit) in (0..4).map(|bits| (bits & 1 == 1, bits & 2 == 2)) {
            let steps = if set { set_steps(&items, commit) } else { list_steps(&items, commit) };
            let (ops, ends) = steps.split_at(steps.len() - 2);
            let (mut owner, mut backup) = owner_and_backup(set, &items);
            ops.iter().for_each(|&next| step(&mut owner, next));
            mirror(&mut owner, &mut backup);
            // The ends reach the backup replica (marked) before the owner's records, then the
            // owner dies and the backup, promoted, runs an operation.
            for &end in ends {
                step(&mut owner, end);
                let Step::End(txn, commit) = end else { unreachable!("the scenarios end with ends") };
                backup.txns.iter_mut().filter(|hold| hold.txn == txn).for_each(|hold| hold.ended = Some(commit));
            }
            backup.set_track_changes(true);
            let (mut listeners, mut outbox) = (Default::default(), Default::default());
            let partition_id = PartitionId(0);
            let name = "c";
            let listeners = &mut listeners;
            let outbox = &mut outbox;
            settle_ended(&mut backup, &mut CollectionContext { name, member: ONE, partition_id, listeners, outbox });
            assert_ended_as_owner(&backup, &owner, set, commit);
        }
    }

    /// A new replica of `owner`, from its snapshot cut into a chunk per entry.
    fn replica_of(owner: &CollectionStore, set: bool) -> CollectionStore {
        use crate::cluster::peer::SnapshotWriter;
        use crate::engine::structures::ObjectKind;
        let mut out = Vec::new();
        let mut writer = SnapshotWriter::new(&mut out, 0, 1, 1);
        writer.begin_object(if set { ObjectKind::Set } else { ObjectKind::List }, "c");
        owner.write_snapshot(&mut writer);
        writer.finish();
        let mut replica = CollectionStore::new(CollectionConfig { max_size: 100, ..CollectionConfig::DEFAULT }, set);
        let chunks = crate::cluster::peer::tests::snapshot_chunks(&out);
        assert!(chunks.len() > 3, "the entries spread over chunks");
        for chunk in chunks {
            for object in crate::cluster::peer::read_snapshot(&chunk).expect("well formed").1 {
                replica.apply_snapshot(object.body).expect("well formed");
            }
        }
        replica
    }

    #[test]
    fn a_snapshot_carries_the_holds_and_its_receiver_ends_them_as_the_owner_would_have() {
        let items = scenario_values();
        for (set, commit) in (0..4).map(|bits| (bits & 1 == 1, bits & 2 == 2)) {
            let steps = if set { set_steps(&items, commit) } else { list_steps(&items, commit) };
            let (ops, ends) = steps.split_at(steps.len() - 2);
            let (mut owner, _) = owner_and_backup(set, &items);
            ops.iter().for_each(|&next| step(&mut owner, next));
            assert_eq!(owner.txns.len(), 2);
            let mut replica = replica_of(&owner, set);
            assert_eq!(replica.image(), owner.image(), "set {set}");
            // The partition migrates (or its owner dies): the new owner gets the ends.
            replica.set_track_changes(true);
            for &end in ends {
                step(&mut owner, end);
                step(&mut replica, end);
            }
            assert_eq!(sorted_values(&replica), sorted_values(&owner), "set {set}, commit {commit}");
            if !set {
                assert_eq!(values(&replica), values(&owner), "in the same order");
            }
            assert_eq!(replica.held_bytes(), owner.held_bytes());
            assert!(replica.txns.is_empty());
        }
    }

    #[test]
    fn a_cut_unknown_or_misplaced_hold_record_is_refused() {
        use crate::cluster::peer::Malformed;
        let items = scenario_values();
        for set in [false, true] {
            let (mut owner, _) = owner_and_backup(set, &items);
            let steps = if set { set_steps(&items, false) } else { list_steps(&items, false) };
            steps.iter().for_each(|&next| step(&mut owner, next));
            let mut body = Vec::new();
            owner.write_changes(&mut body);
            for cut in 0..body.len() {
                let (_, mut backup) = owner_and_backup(set, &items);
                match backup.apply_backup(&body[..cut]) {
                    Ok(()) | Err(Malformed::Truncated { .. }) => {}
                    Err(other) => panic!("cut at {cut}: {other}"),
                }
            }
            let txn = ONE.as_u128().to_le_bytes();
            let record = |kind: u8, rest: &[u8]| [&[kind][..], &txn, rest].concat();
            let mut fresh = CollectionStore::new(CollectionConfig::DEFAULT, set);
            assert_eq!(fresh.apply_backup(&[11]), Err(Malformed::UnknownChange(11)));
            assert_eq!(fresh.apply_backup(&[0]), Err(Malformed::UnknownChange(0)));
            assert!(matches!(fresh.apply_backup(&record(6, &[1, 0, 0])), Err(Malformed::Truncated { .. })));
            assert!(matches!(fresh.apply_snapshot(&record(10, &[1; 8])), Err(Malformed::Truncated { .. })));
            let refused = Err(Malformed::Refused("a collection snapshot holds a removal"));
            for kind in [7, 8, 9] {
                assert_eq!(fresh.apply_snapshot(&record(kind, &[1, 0, 0, 0, 0, 0, 0, 0])), refused, "kind {kind}");
            }
            assert_eq!(fresh.image(), CollectionStore::new(CollectionConfig::DEFAULT, set).image(), "nothing held");
        }
    }

    /// Random steps (seeded) on an owner whose backup gets its changes at random moments:
    /// transactions' adds, removes and ends among plain adds (a list's at the front too) and
    /// removes, over few values, so that items are reserved, added again and put back around
    /// each other. A body of one operation (as the owner sends them) is applied twice; a body
    /// of several once (`store/hold.rs` says why).
    #[test]
    fn a_backup_holds_what_the_owner_holds_through_random_steps() {
        let items: Vec<Vec<u8>> = ["a", "b", "c"].iter().map(|text| item(text)).collect();
        let txns = [ONE, TWO, Uuid { most: 3, least: 3 }];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound
        };
        for round in 0..400 {
            let set = round % 2 == 1;
            let (mut owner, mut backup) = owner_and_backup(set, &items);
            let mut operations = 0;
            for _ in 0..40 {
                let (txn, value) = (txns[next(3) as usize], &items[next(3) as usize][..]);
                let mut answer = |_: Reply<'_>| {};
                operations += 1;
                match next(8) {
                    0 | 1 => execute(&mut owner, txn, &add(value), &mut answer).expect("not refused"),
                    2 | 3 => execute(&mut owner, txn, &remove(value), &mut answer).expect("not refused"),
                    4 => drop(end_txn(&mut owner, txn, next(2) == 1)),
                    5 => drop(owner.insert(value, (!set && next(2) == 1).then_some(0))),
                    6 => step(&mut owner, Step::PlainRemove(value)),
                    _ => operations -= 1,
                }
                if next(4) > 0 {
                    mirror_batch(&mut owner, &mut backup, std::mem::take(&mut operations) <= 1);
                }
            }
            txns.iter().for_each(|&txn| drop(end_txn(&mut owner, txn, next(2) == 1)));
            mirror_batch(&mut owner, &mut backup, false);
            assert!(owner.txns.is_empty() && backup.txns.is_empty());
        }
    }

    /// [`mirror`], applying the body once unless `twice`.
    fn mirror_batch(owner: &mut CollectionStore, backup: &mut CollectionStore, twice: bool) {
        if twice {
            return mirror(owner, backup);
        }
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        backup.apply_backup(&body).expect("well formed");
        assert_eq!(backup.image(), owner.image());
    }

    fn sorted_values(store: &CollectionStore) -> Vec<Vec<u8>> {
        let mut values = values(store);
        values.sort();
        values
    }
}
