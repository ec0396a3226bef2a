use super::*;
use crate::engine::request::string_data as item;
use std::borrow::Cow;

/// Runs `op`: its answer as text, or the error's kind.
fn run(store: &mut CollectionStore, op: CollectionOp<'_>) -> Result<String, ErrorKind> {
    let (mut listeners, mut outbox) = (Listeners::default(), Outbox::default());
    let mut ctx = CollectionContext {
        name: "c",
        member: Uuid::default(),
        partition_id: PartitionId(0),
        listeners: &mut listeners,
        outbox: &mut outbox,
    };
    let mut answer = String::new();
    execute(store, &mut ctx, &op, &mut |reply| answer = format!("{reply:?}")).map_err(|failure| failure.kind)?;
    Ok(answer)
}

fn add(value: &[u8], index: Option<i32>) -> CollectionOp<'_> {
    CollectionOp::Add { value: Cow::Borrowed(value), index }
}

fn mirror(store: &mut CollectionStore, backup: &mut CollectionStore) {
    let mut body = Vec::new();
    store.write_changes(&mut body);
    backup.apply_backup(&body).unwrap();
    backup.apply_backup(&body).unwrap();
}

#[test]
fn a_list_keeps_positions_and_a_backup_keeps_its_order() {
    let bounded = CollectionConfig { max_size: 3, ..CollectionConfig::DEFAULT };
    let (mut list, mut backup) = (CollectionStore::new(bounded, false), CollectionStore::new(bounded, false));
    list.set_track_changes(true);
    let (a, b, c, d) = (item("a"), item("b"), item("c"), item("d"));
    assert_eq!(run(&mut list, add(&a, None)), Ok("Bool(true)".into()));
    assert_eq!(run(&mut list, add(&b, Some(0))), Ok("Empty".into()));
    assert_eq!(run(&mut list, add(&c, Some(1))), Ok("Empty".into()));
    mirror(&mut list, &mut backup);
    assert_eq!(run(&mut list, add(&d, None)), Ok("Bool(false)".into()), "full");
    assert_eq!(run(&mut list, add(&d, Some(0))), Ok("Empty".into()), "full: nothing added, no error");
    assert_eq!(list.len(), 3);
    assert_eq!(run(&mut list, CollectionOp::Get { index: 3 }), Err(ErrorKind::IndexOutOfBounds));
    let replaced = run(&mut list, CollectionOp::Replace { index: 2, value: Cow::Borrowed(&d) }).unwrap();
    assert_eq!(replaced, format!("Value(Some({a:?}))"));
    assert_eq!(run(&mut list, CollectionOp::RemoveAt { index: 0 }).unwrap(), format!("Value(Some({b:?}))"));
    mirror(&mut list, &mut backup);
    assert_eq!(backup.values(), list.values(), "c, d in order");
    assert_eq!(backup.held_bytes, list.held_bytes);
    let sub = run(&mut list, CollectionOp::Sub { from: 1, to: -1 }).unwrap();
    assert_eq!(sub, format!("Values([{d:?}])"));
    let whole = run(&mut list, CollectionOp::Sub { from: -1, to: -1 }).unwrap();
    assert_eq!(whole, format!("Values([{c:?}, {d:?}])"));
    assert_eq!(run(&mut list, CollectionOp::Sub { from: 2, to: 1 }), Err(ErrorKind::IllegalArgument));
    assert_eq!(run(&mut list, CollectionOp::Sub { from: 0, to: 3 }), Err(ErrorKind::IndexOutOfBounds));
    let mut snapshot = Vec::new();
    let mut after = 0;
    if let Items::List(items) = &list.items {
        for item in items {
            put_insert(&mut snapshot, item.id, after, &item.value);
            after = item.id;
        }
    }
    let mut replica = CollectionStore::new(bounded, false);
    replica.apply_snapshot(&snapshot).unwrap();
    assert_eq!(replica.values(), list.values());
    assert!(replica.apply_snapshot(&[REMOVE_ID, 1, 0, 0, 0, 0, 0, 0, 0]).is_err());
    for cut in 0..snapshot.len() {
        let _ = CollectionStore::new(bounded, false).apply_backup(&snapshot[..cut]);
    }
}

#[test]
fn a_set_holds_each_item_once() {
    let (mut set, mut backup) =
        (CollectionStore::new(CollectionConfig::DEFAULT, true), CollectionStore::new(CollectionConfig::DEFAULT, true));
    set.set_track_changes(true);
    let values: Vec<Vec<u8>> = ["a", "b", "a"].iter().map(|text| item(text)).collect();
    fn all(values: &[Vec<u8>]) -> Vec<Blob<'_>> {
        values.iter().map(|value| Cow::Borrowed(&value[..])).collect()
    }
    assert_eq!(run(&mut set, CollectionOp::AddAll { values: all(&values), index: None }), Ok("Bool(true)".into()));
    assert_eq!(set.len(), 2);
    assert_eq!(run(&mut set, add(&values[0], None)), Ok("Bool(false)".into()), "a duplicate");
    assert_eq!(run(&mut set, CollectionOp::Get { index: 0 }), Err(ErrorKind::IllegalArgument));
    assert_eq!(run(&mut set, CollectionOp::RetainAll { values: all(&values[..1]) }), Ok("Bool(true)".into()));
    mirror(&mut set, &mut backup);
    assert_eq!(backup.values(), set.values());
    assert_eq!(backup.held_bytes, set.held_bytes);
    assert!(backup.apply_backup(&[INSERT, 1, 0, 0, 0, 0, 0, 0, 0]).is_err(), "a list record for a set");
}
