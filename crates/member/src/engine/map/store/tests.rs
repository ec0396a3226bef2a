use super::*;
use crate::engine::locks::LockOwner;
use crate::engine::structures::ObjectKind;
use ferrogrid_config::{EvictionConfig, MapConfig, MaxSizePolicy};

fn store(config: MapConfig) -> RecordStore {
    RecordStore::new(Arc::new(MapSettings::resolve(&config, 271, 1)))
}

#[test]
fn put_returns_previous_and_bumps_version() {
    let mut store = store(MapConfig::DEFAULT);
    assert_eq!(store.put(b"k", b"v1", 0, -1, -1), None);
    assert_eq!(store.get(b"k", 0).unwrap().version(), 0);
    assert_eq!(store.put(b"k", b"v22", 1, -1, -1).as_ref().map(Entry::value), Some(&b"v1"[..]));
    assert_eq!(store.get(b"k", 1).unwrap().version(), 1);
    assert_eq!(store.held_bytes(), 4);
    assert_eq!(store.remove(b"k").as_ref().map(Entry::value), Some(&b"v22"[..]));
    assert_eq!(store.held_bytes(), 0);
    assert!(store.is_empty());
}

#[test]
fn ttl_and_max_idle_expire_entries() {
    let mut store = store(MapConfig { time_to_live_seconds: 10, ..MapConfig::DEFAULT });
    store.put(b"default", b"v", 0, -1, -1);
    store.put(b"forever", b"v", 0, 0, -1);
    store.put(b"short", b"v", 0, 1_000, -1);
    store.put(b"idle", b"v", 0, 0, 500);
    assert!(store.get(b"short", 999).is_some());
    assert!(store.get(b"short", 1_000).is_none());
    store.touch(b"idle", 400);
    assert!(store.get(b"idle", 899).is_some(), "an access postpones max-idle expiry");
    assert!(store.get(b"idle", 900).is_none());
    assert!(store.get(b"default", 9_999).is_some());
    assert!(store.get(b"default", 10_000).is_none(), "the map default applies to ttl −1");
    assert!(store.get(b"forever", i64::MAX - 1).is_some(), "ttl 0 is forever, even with a map default");
    assert_eq!(store.expire_if_due(b"short", 1_000).as_ref().map(Entry::key), Some(&b"short"[..]));
    assert_eq!(store.len(), 3);
}

#[test]
fn sweep_is_bounded_and_finds_every_expired_entry() {
    let mut store = store(MapConfig::DEFAULT);
    for index in 0..100u32 {
        store.put(&index.to_be_bytes(), b"v", 0, if index % 2 == 0 { 10 } else { 0 }, -1);
    }
    let mut expired = 0;
    for _ in 0..20 {
        let removed = store.sweep(10, 10);
        assert!(removed.len() <= 10);
        expired += removed.len();
    }
    assert_eq!(expired, 50);
    assert_eq!(store.len(), 50);
    let mut store = self::store(MapConfig::DEFAULT);
    for index in 0..1_000u32 {
        store.put(&index.to_le_bytes(), b"v", 20, 10, -1);
    }
    for _ in 0..20 {
        store.sweep(35, 100);
    }
    assert_eq!(store.len(), 0);
    store.put(b"late", b"v", 40, 10, -1);
    assert_eq!(store.sweep(50, 1).len(), 1, "the budget counts entries; the table shrank");
}

#[test]
fn eviction_holds_the_per_partition_bound_and_prefers_the_least_recently_used() {
    let eviction =
        EvictionConfig { size: 10, max_size_policy: MaxSizePolicy::PerPartition, eviction_policy: EvictionPolicy::Lru };
    let mut store = store(MapConfig { eviction, ..MapConfig::DEFAULT });
    for index in 0..10u32 {
        store.put(&index.to_be_bytes(), b"v", index as i64, -1, -1);
    }
    store.touch(&0u32.to_be_bytes(), 100);
    store.put(b"new", b"v", 101, -1, -1);
    let evicted = store.evict_to_limit(b"new");
    assert_eq!(evicted.len(), 1);
    assert_eq!(evicted[0].key(), &1u32.to_be_bytes()[..], "the oldest access of the sample goes");
    assert_eq!(store.len(), 10);
    assert!(store.get(b"new", 101).is_some());
}

#[test]
fn entries_keep_metadata_only_where_the_map_or_the_entry_needs_it() {
    let mut plain = store(MapConfig::DEFAULT);
    plain.put(b"k", b"v", 5, -1, -1);
    plain.put(b"k", b"v2", 6, -1, -1);
    let entry = plain.get(b"k", 6).unwrap();
    assert!(!entry.is_rich());
    assert_eq!(entry.meta(), Meta::plain(1));
    plain.put(b"k", b"v3", 7, 1_000, -1);
    let entry = plain.get(b"k", 7).unwrap();
    assert!(entry.is_rich(), "a ttl needs the times");
    assert_eq!((entry.version(), entry.meta().ttl_base_ms, entry.expiration_time_ms()), (2, 7, 1_007));
    plain.put(b"k", b"v4", 8, 0, -1);
    assert!(!plain.get(b"k", 8).unwrap().is_rich(), "no longer expiring");
    assert_eq!(plain.get(b"k", 8).unwrap().version(), 3);
    assert_eq!(plain.held_bytes(), 3);

    let stats = store(MapConfig { per_entry_stats_enabled: true, ..MapConfig::DEFAULT });
    let eviction =
        EvictionConfig { size: 10, max_size_policy: MaxSizePolicy::PerPartition, eviction_policy: EvictionPolicy::Lfu };
    let lfu = store(MapConfig { eviction, ..MapConfig::DEFAULT });
    for mut store in [stats, lfu] {
        store.put(b"k", b"v", 5, -1, -1);
        store.touch(b"k", 9);
        store.put(b"k", b"v2", 10, -1, -1);
        let meta = store.get(b"k", 10).unwrap().meta();
        assert_eq!((meta.creation_time_ms, meta.last_update_time_ms, meta.hits, meta.version), (5, 10, 1, 1));
    }
}

const ALICE: LockOwner = LockOwner { client: Uuid { most: 1, least: 2 }, thread_id: -3 };

/// Every entry and lock of a store, sorted by key.
type Contents = (Vec<Entry>, Vec<(Vec<u8>, LockImage)>);

/// What `store` holds, to compare replicas.
fn contents(store: &RecordStore) -> Contents {
    let mut records: Vec<_> = store.raw_iter().cloned().collect();
    let mut locks: Vec<_> = store.locks.images().map(|(key, image)| (key.to_vec(), image)).collect();
    records.sort_by(|a, b| a.key().cmp(b.key()));
    locks.sort_by(|a, b| a.0.cmp(&b.0));
    (records, locks)
}

#[test]
fn a_backup_applies_the_owners_changes_and_only_those() {
    let mut owner = store(MapConfig::DEFAULT);
    owner.put(b"before", b"not tracked", 0, -1, -1);
    owner.set_track_changes(true);
    owner.put(b"k1", b"v1", 10, 5_000, -1);
    owner.put(b"k2", b"v2", 11, -1, 700);
    owner.put(b"k1", b"v1 again", 12, -1, -1);
    owner.remove(b"k2");
    owner.locks.acquire(b"k1", ALICE, 100, 12);
    owner.locks.acquire(b"k3", ALICE, -1, 12);
    owner.locks.release(b"k3");
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    let mut backup = store(MapConfig::DEFAULT);
    let k1 = owner.raw(b"k1").unwrap();
    backup.apply(b"k2", k1.value(), &k1.meta());
    backup.locks.apply(b"k3", owner.locks.image(b"k1"));
    backup.apply_backup(&body).unwrap();
    owner.apply_remove(b"before");
    assert_eq!(contents(&backup), contents(&owner), "puts, removals, locks and unlocks arrive as they end");
    assert_eq!(backup.held_bytes(), owner.held_bytes());
    let mut again = Vec::new();
    owner.write_changes(&mut again);
    assert!(again.is_empty(), "changes are taken once");
    owner.set_track_changes(false);
    owner.put(b"k4", b"v", 13, -1, -1);
    owner.write_changes(&mut again);
    assert!(again.is_empty(), "nothing is recorded without backups");
}

#[test]
fn a_cut_or_unknown_map_change_is_an_error() {
    let mut owner = store(MapConfig::DEFAULT);
    owner.set_track_changes(true);
    owner.put(b"key", b"value", 0, -1, -1);
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    for cut in 1..body.len() {
        assert!(store(MapConfig::DEFAULT).apply_backup(&body[..cut]).is_err(), "cut at {cut}");
    }
    body[0] = 9;
    assert_eq!(store(MapConfig::DEFAULT).apply_backup(&body), Err(Malformed::UnknownChange(9)));
}

#[test]
fn a_snapshot_copies_records_and_locks_across_chunks() {
    let mut owner = store(MapConfig::DEFAULT);
    for index in 0..50u32 {
        owner.put(&index.to_be_bytes(), &[index as u8; 20], index as i64, -1, -1);
    }
    owner.locks.acquire(&7u32.to_be_bytes(), ALICE, 1_000, 50);
    let mut out = Vec::new();
    let mut writer = SnapshotWriter::new(&mut out, 0, 1, 256);
    writer.begin_object(ObjectKind::Map, "m");
    owner.write_snapshot(&mut writer);
    let (chunks, entries) = writer.finish();
    assert!(chunks > 1);
    assert_eq!(entries, 51);
    let mut replica = store(MapConfig::DEFAULT);
    for chunk in crate::cluster::peer::tests::snapshot_chunks(&out) {
        for object in crate::cluster::peer::read_snapshot(&chunk).unwrap().1 {
            replica.apply_snapshot(object.body).unwrap();
        }
    }
    assert_eq!(contents(&replica), contents(&owner));
    let mut removal = Vec::new();
    put_key(&mut removal, REMOVE, b"key");
    assert!(matches!(replica.apply_snapshot(&removal), Err(Malformed::Refused(_))), "a snapshot holds no removals");
}

/// Every staged change of a store, sorted by key.
fn staged_contents(store: &RecordStore) -> Vec<(Vec<u8>, StagedChange)> {
    let mut staged: Vec<_> = store.staged.iter().map(|(key, staged)| (key.to_vec(), staged.clone())).collect();
    staged.sort_by(|a, b| a.0.cmp(&b.0));
    staged
}

const TXN: Uuid = Uuid { most: 4, least: 4 };

/// Stages transaction TXN's changes on `owner` (of ALICE, TWO_PHASE): k1 set, k2 removed, k3
/// only locked, each under its lock.
fn stage_three(owner: &mut RecordStore) {
    use crate::engine::map::staged::Change;
    let changes = [
        (&b"k1"[..], Change::Set { value: b"staged".to_vec().into(), ttl_ms: 9_000 }),
        (b"k2", Change::Removed),
        (b"k3", Change::Locked),
    ];
    for (key, change) in changes {
        assert!(owner.locks.acquire(key, ALICE, 600_000, 20));
        owner.staged.stage(key, StagedChange { txn: TXN, owner: ALICE, blocks_reads: true, change });
    }
}

#[test]
fn staged_changes_and_their_commit_reach_the_backup() {
    let mut owner = store(MapConfig::DEFAULT);
    owner.set_track_changes(true);
    owner.put(b"k2", b"committed", 10, -1, -1);
    stage_three(&mut owner);
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    let mut backup = store(MapConfig::DEFAULT);
    backup.apply_backup(&body).unwrap();
    assert_eq!(staged_contents(&backup), staged_contents(&owner), "every staged change, with its owner");
    assert_eq!(staged_contents(&backup).len(), 3);
    assert!(backup.staged.blocks_read(b"k1", Uuid::from_u128(77), &backup.locks), "a TWO_PHASE change blocks reads");
    assert_eq!(contents(&backup), contents(&owner), "with the keys' locks");

    // The commit, as `TxnEnd` runs it: applied, unstaged, unlocked, in one body.
    for (key, staged) in owner.staged.take(TXN) {
        match staged.change {
            crate::engine::map::staged::Change::Set { value, ttl_ms } => {
                owner.put(&key, &value, 30, ttl_ms, -1);
            }
            crate::engine::map::staged::Change::Removed => {
                owner.remove(&key);
            }
            crate::engine::map::staged::Change::Locked => {}
        }
        owner.locks.unlock(&key, staged.owner).unwrap();
    }
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    backup.apply_backup(&body).unwrap();
    assert!(backup.staged.is_empty(), "a backup that got the commit keeps no staged change");
    assert_eq!(contents(&backup), contents(&owner));
    assert_eq!(backup.raw(b"k1").map(|entry| entry.value().to_vec()), Some(b"staged".to_vec()));
    assert!(backup.raw(b"k2").is_none() && backup.locks.images().count() == 0);
}

#[test]
fn a_rollback_unstages_on_the_backup_and_untracked_staging_is_not_sent() {
    let mut owner = store(MapConfig::DEFAULT);
    stage_three(&mut owner);
    let mut body = Vec::new();
    owner.write_changes(&mut body);
    assert!(body.is_empty(), "nothing is recorded without backups");
    owner.set_track_changes(true);
    let mut backup = store(MapConfig::DEFAULT);
    let mut out = Vec::new();
    let mut writer = SnapshotWriter::new(&mut out, 0, 1, 256);
    writer.begin_object(ObjectKind::Map, "m");
    owner.write_snapshot(&mut writer);
    assert_eq!(writer.finish().1, 6, "three locks and three staged changes");
    for chunk in crate::cluster::peer::tests::snapshot_chunks(&out) {
        for object in crate::cluster::peer::read_snapshot(&chunk).unwrap().1 {
            backup.apply_snapshot(object.body).unwrap();
        }
    }
    assert_eq!(staged_contents(&backup), staged_contents(&owner), "a snapshot carries every staged change");
    assert_eq!(contents(&backup), contents(&owner));
    owner.staged.take(TXN);
    owner.write_changes(&mut body);
    backup.apply_backup(&body).unwrap();
    assert!(backup.staged.is_empty(), "the rollback's unstages");
    let mut unstage = Vec::new();
    put_key(&mut unstage, UNSTAGE, b"k1");
    assert!(matches!(backup.apply_snapshot(&unstage), Err(Malformed::Refused(_))), "a snapshot holds no unstage");
}

#[test]
fn a_cut_or_malformed_staged_change_is_refused() {
    let set = crate::engine::map::staged::Change::Set { value: b"v".to_vec().into(), ttl_ms: -1 };
    let mut body = Vec::new();
    put_staged(&mut body, b"key", &StagedChange { txn: TXN, owner: ALICE, blocks_reads: true, change: set });
    for cut in 1..body.len() {
        assert!(store(MapConfig::DEFAULT).apply_backup(&body[..cut]).is_err(), "cut at {cut}");
    }
    let mut one = Vec::new();
    let staged = StagedChange {
        txn: TXN,
        owner: ALICE,
        blocks_reads: false,
        change: crate::engine::map::staged::Change::Removed,
    };
    put_staged(&mut one, b"k", &staged);
    let (flag, kind) = (one.len() - 2, one.len() - 1);
    let mut bad_flag = one.clone();
    bad_flag[flag] = 2;
    assert!(matches!(store(MapConfig::DEFAULT).apply_backup(&bad_flag), Err(Malformed::Refused(_))));
    let mut bad_kind = one.clone();
    bad_kind[kind] = 3;
    assert!(matches!(store(MapConfig::DEFAULT).apply_backup(&bad_kind), Err(Malformed::Refused(_))));
    let mut backup = store(MapConfig::DEFAULT);
    backup.apply_backup(&one).unwrap();
    assert_eq!(backup.staged.of(TXN, b"k"), Some(&staged.change));
}
