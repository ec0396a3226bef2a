use super::*;
use crate::engine::request::string_data as item;
use std::borrow::Cow;

fn run(store: &mut MultiMapStore, op: MultiMapOp<'_>) -> String {
    let (mut listeners, mut outbox) = (Listeners::default(), Outbox::default());
    let (mut released, mut deadlines) = (Vec::new(), Vec::new());
    let mut ctx = MultiMapContext {
        name: "mm",
        member: Uuid::default(),
        source: Uuid::default(),
        partition_id: PartitionId(0),
        now_ms: 0,
        listeners: &mut listeners,
        outbox: &mut outbox,
        released: &mut released,
        deadlines: &mut deadlines,
    };
    let mut answer = String::new();
    execute(store, &mut ctx, &op, &mut |reply| answer = format!("{reply:?}")).unwrap();
    answer
}

fn put<'a>(key: &'a [u8], value: &'a [u8]) -> MultiMapOp<'a> {
    MultiMapOp::Put { key: Cow::Borrowed(key), value: Cow::Borrowed(value), thread_id: 1 }
}

#[test]
fn set_values_are_ordered_as_java_s_hash_set_of_their_data() {
    let string = |text: &str| {
        let mut data = vec![0, 0, 0, 0];
        data.extend_from_slice(&(-11i32).to_be_bytes());
        data.extend_from_slice(&(text.len() as i32).to_be_bytes());
        data.extend_from_slice(text.as_bytes());
        data
    };
    let datas: Vec<Vec<u8>> = (0..13).map(|i| string(&format!("v{i}"))).collect();
    let mut ordered: Vec<&[u8]> = datas.iter().map(|data| &data[..]).collect();
    set_order(&mut ordered);
    let names: Vec<String> = ordered.iter().map(|data| String::from_utf8_lossy(&data[12..]).into_owned()).collect();
    // What a Hazelcast 5.6.0 member answers for get after these 13 puts, in this order.
    let hazelcast = ["v10", "v4", "v8", "v7", "v2", "v6", "v1", "v5", "v9", "v12", "v0", "v3", "v11"];
    assert_eq!(names, hazelcast);
}

#[test]
fn a_key_holds_a_set_or_a_list_of_values_and_backups_mirror_it() {
    let (k, v1, v2) = (item("k"), item("v1"), item("v2"));
    for (collection, duplicates) in [(ValueCollectionType::Set, false), (ValueCollectionType::List, true)] {
        let config = MultiMapConfig { value_collection_type: collection, ..MultiMapConfig::DEFAULT };
        let (mut owner, mut backup) = (MultiMapStore::new(config), MultiMapStore::new(config));
        owner.set_track_changes(true);
        assert_eq!(run(&mut owner, put(&k, &v1)), "Bool(true)");
        assert_eq!(run(&mut owner, put(&k, &v1)), format!("Bool({duplicates})"));
        assert_eq!(run(&mut owner, put(&k, &v2)), "Bool(true)");
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        backup.apply_backup(&body).unwrap();
        backup.apply_backup(&body).unwrap();
        assert_eq!(backup.entries, owner.entries);
        assert_eq!(backup.held_bytes, owner.held_bytes);
        let removed =
            run(&mut owner, MultiMapOp::RemoveKey { key: Cow::Borrowed(&k), answer_values: true, thread_id: 1 });
        assert!(removed.starts_with("Values(["), "{removed}");
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        backup.apply_backup(&body).unwrap();
        assert!(backup.entries.is_empty() && backup.held_bytes == 0);
        for cut in 0..body.len() {
            let _ = MultiMapStore::new(config).apply_backup(&body[..cut]);
        }
    }
}

#[test]
fn key_locks_go_to_backups_and_snapshots() {
    let (k, v) = (item("k"), item("v"));
    let lock = MultiMapOp::Lock { key: Cow::Borrowed(&k), thread_id: 7, lease_ms: -1, try_timeout_ms: None };
    let (mut owner, mut backup) =
        (MultiMapStore::new(MultiMapConfig::DEFAULT), MultiMapStore::new(MultiMapConfig::DEFAULT));
    owner.set_track_changes(true);
    run(&mut owner, put(&k, &v));
    assert_eq!(run(&mut owner, lock), "Empty");
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    backup.apply_backup(&body).unwrap();
    assert_eq!(backup.locks.image(&k), owner.locks.image(&k));
    assert!(backup.locks.image(&k).is_some_and(|image| image.owner.thread_id == 7));

    let mut fresh = MultiMapStore::new(MultiMapConfig::DEFAULT);
    let mut out = Vec::new();
    let mut writer = SnapshotWriter::new(&mut out, 0, 1, 256);
    writer.begin_object(ObjectKind::MultiMap, "mm");
    owner.write_snapshot(&mut writer);
    assert_eq!(writer.finish().1, 2, "the key's values and its lock");
    for chunk in crate::cluster::peer::tests::snapshot_chunks(&out) {
        for object in crate::cluster::peer::read_snapshot(&chunk).unwrap().1 {
            fresh.apply_snapshot(object.body).unwrap();
        }
    }
    assert_eq!(fresh.locks.image(&k), owner.locks.image(&k));
    assert_eq!(fresh.entries, owner.entries);

    run(&mut owner, MultiMapOp::Unlock { key: Cow::Borrowed(&k), thread_id: Some(7) });
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    backup.apply_backup(&body).unwrap();
    assert!(!backup.locks.is_locked(&k));
    for cut in 0..body.len() {
        let _ = MultiMapStore::new(MultiMapConfig::DEFAULT).apply_backup(&body[..cut]);
    }
}
#[test]
fn staged_values_go_to_backups_and_snapshots_until_their_transaction_ends() {
    let (k, old, new) = (item("k"), item("old"), item("new"));
    let txn = Uuid::from_u128(9);
    let owner_of = LockOwner { client: Uuid::from_u128(5), thread_id: 3 };
    let (mut owner, mut backup) =
        (MultiMapStore::new(MultiMapConfig::DEFAULT), MultiMapStore::new(MultiMapConfig::DEFAULT));
    owner.set_track_changes(true);
    run(&mut owner, put(&k, &old));
    assert!(owner.locks.acquire(&k, owner_of, 600_000, 0));
    let values: Values = vec![old.clone().into(), new.clone().into()];
    owner.stage(&k, StagedValues { txn, owner: owner_of, blocks_reads: true, values: values.clone() });
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    backup.apply_backup(&body).unwrap();
    assert_eq!(backup.staged, owner.staged, "the transaction's view, its owner and flag");
    assert!(backup.blocks_read(&k, Uuid::from_u128(6)));
    let mut lease_ran_out = MultiMapStore::new(MultiMapConfig::DEFAULT);
    lease_ran_out.apply_backup(&body).unwrap();
    lease_ran_out.locks.apply(&k, None);
    assert!(!lease_ran_out.blocks_read(&k, Uuid::from_u128(6)), "staged values without their lock hold up no one");
    for cut in 0..body.len() {
        let _ = MultiMapStore::new(MultiMapConfig::DEFAULT).apply_backup(&body[..cut]);
    }

    let mut fresh = MultiMapStore::new(MultiMapConfig::DEFAULT);
    let mut out = Vec::new();
    let mut writer = SnapshotWriter::new(&mut out, 0, 1, 256);
    writer.begin_object(ObjectKind::MultiMap, "mm");
    owner.write_snapshot(&mut writer);
    assert_eq!(writer.finish().1, 3, "the key's values, its lock and its staged values");
    for chunk in crate::cluster::peer::tests::snapshot_chunks(&out) {
        for object in crate::cluster::peer::read_snapshot(&chunk).unwrap().1 {
            fresh.apply_snapshot(object.body).unwrap();
        }
    }
    assert_eq!(fresh.staged, owner.staged, "a snapshot carries the staged values");

    // The commit, as `TxnEnd` runs it: the values made the key's, unstaged, unlocked.
    let staged = owner.unstage(&k).expect("staged");
    owner.replace_values(&k, staged.values);
    owner.locks.unlock(&k, owner_of).unwrap();
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    backup.apply_backup(&body).unwrap();
    assert!(backup.staged.is_empty(), "a backup that got the commit keeps no staged values");
    assert_eq!(backup.values(&k), &values[..]);
    assert!(!backup.locks.is_locked(&k));
    let mut unstage = Vec::new();
    put_staged(&mut unstage, &k, None);
    assert_eq!(fresh.apply_snapshot(&unstage), Err(Malformed::Refused("a multimap snapshot holds a removal")));
    let mut bad_flag = Vec::new();
    let bad = StagedValues { txn, owner: owner_of, blocks_reads: false, values: Vec::new() };
    put_staged(&mut bad_flag, &k, Some(&bad));
    let flag = bad_flag.len() - 5;
    bad_flag[flag] = 7;
    assert!(matches!(fresh.apply_backup(&bad_flag), Err(Malformed::Refused(_))));
}
