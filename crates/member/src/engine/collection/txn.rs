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
//! The hold is not in the backups and does not migrate (as a map's staged changes); the
//! reserved items are, as items, until the commit removes them.

use crate::engine::collection::request::CollectionTxnOp;
use crate::engine::collection::store::{CollectionStore, Reserved};
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
    let own = store.txns.iter().position(|hold| hold.txn == txn);
    fn own_adds(store: &CollectionStore, own: Option<usize>) -> &[Box<[u8]>] {
        own.map_or(&[], |index| &store.txns[index].adds)
    }
    match op {
        CollectionTxnOp::Add { value } => {
            null_check(value)?;
            let held: usize = store.txns.iter().map(|hold| hold.adds.len() + hold.reserved.len()).sum();
            let has =
                store.is_set() && (store.contains(value) || own_adds(store, own).iter().any(|add| **add == **value));
            let added = !has && store.len() + held < store.capacity();
            if added {
                hold_mut(store, txn).adds.push(value.as_ref().into());
            }
            reply(Reply::Bool(added));
        }
        CollectionTxnOp::Remove { value } => {
            null_check(value)?;
            let removed = match store.reserve(value) {
                Some(reserved) => {
                    hold_mut(store, txn).reserved.push(reserved);
                    true
                }
                None => match own_adds(store, own).iter().position(|add| **add == **value) {
                    Some(index) => {
                        hold_mut(store, txn).adds.remove(index);
                        true
                    }
                    None => false,
                },
            };
            reply(Reply::Bool(removed));
        }
        CollectionTxnOp::Size => {
            let size = store.len() + own_adds(store, own).len();
            reply(Reply::Int(size.min(i32::MAX as usize) as i32));
        }
    }
    Ok(())
}

/// Transaction `txn`'s hold of `store`, made if it has none.
fn hold_mut(store: &mut CollectionStore, txn: Uuid) -> &mut crate::engine::collection::store::TxnHold {
    let index = match store.txns.iter().position(|hold| hold.txn == txn) {
        Some(index) => index,
        None => {
            store.txns.push(crate::engine::collection::store::TxnHold { txn, ..Default::default() });
            store.txns.len() - 1
        }
    };
    &mut store.txns[index]
}

/// What a transaction's end did to a collection: the items it removed and added (for events).
type Ended = (Vec<Reserved>, Vec<Box<[u8]>>);

/// Ends transaction `txn` on `store`: commit removes its reserved items and adds its staged
/// ones, rollback puts the reserved items back. The items removed and added (events), or None
/// if it held nothing here.
fn end_txn(store: &mut CollectionStore, txn: Uuid, commit: bool) -> Option<Ended> {
    let index = store.txns.iter().position(|hold| hold.txn == txn)?;
    let hold = store.txns.swap_remove(index);
    if !commit {
        // Last reserved first: each goes back after the item it followed.
        hold.reserved.into_iter().rev().for_each(|reserved| store.restore(reserved));
        return Some((Vec::new(), Vec::new()));
    }
    hold.reserved.iter().for_each(|reserved| store.remove_reserved(reserved));
    let added = hold.adds.into_iter().filter(|value| store.insert(value, None)).collect();
    Some((hold.reserved, added))
}

/// The end of transaction `txn` on the lists and sets of partition `local` (its commit or
/// rollback, `engine/map/txn_wide.rs`'s `TxnEnd`). Whether it held anything there: the caller
/// then sends the partition's changes to the backups.
pub(crate) fn end(share: &mut ShareContext<'_>, local: usize, txn: Uuid, commit: bool) -> bool {
    let partition_id = PartitionId(share.partition_id(local));
    let partition = &mut share.partitions[local];
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
        run(&mut set, TWO, remove(&a));
        assert!(set.insert(&a, None));
        let mut body = Vec::new();
        set.write_changes(&mut body);
        end_txn(&mut set, TWO, true).expect("held");
        let mut after_commit = Vec::new();
        set.write_changes(&mut after_commit);
        assert!(after_commit.is_empty(), "the backups keep the value the owner keeps");
        assert_eq!((values(&set), set.held_bytes()), (vec![a.clone()], a.len()), "committed: the new one stays");
    }
}
