//! Partition assignment and migration planning under seeded membership churn.

use ferrogrid_cluster::{assign, plan_migrations, MemberId, MigrationScheduler, PartitionTable, ALL_REPLICAS_LOST};
use proptest::prelude::*;

fn members(ids: &[u128]) -> Vec<MemberId> {
    ids.iter().map(|id| MemberId(*id)).collect()
}

#[test]
fn one_member_owns_everything() {
    let table = assign(&PartitionTable::empty(271), &members(&[1]), 1);
    assert_eq!(table.version, 1);
    assert!((0..271).all(|p| table.owner(p) == Some(MemberId(1)) && table.replica(p, 1).is_none()));
    table.check(&members(&[1]), 1).unwrap();
}

#[test]
fn a_dead_owner_is_replaced_by_its_backup() {
    let three = members(&[1, 2, 3]);
    let before = assign(&PartitionTable::empty(271), &three, 1);
    let survivors = members(&[2, 3]);
    let after = assign(&before, &survivors, 1);
    for partition in 0..271 {
        if before.owner(partition) == Some(MemberId(1)) {
            assert_eq!(after.owner(partition), before.replica(partition, 1), "the backup is promoted");
        } else {
            assert_eq!(after.owner(partition), before.owner(partition), "surviving owners stay");
        }
    }
    after.check(&survivors, 1).unwrap();
    assert!(after.version > before.version);
}

#[test]
fn a_dead_owner_costs_its_partitions_the_replicas_above_the_promoted_one() {
    let four = members(&[1, 2, 3, 4]);
    // A fresh table pairs members (1 and 2 back each other up, so do 3 and 4).
    for (backups, gone) in [(1, members(&[1, 2, 3])), (2, members(&[1, 2]))] {
        let table = assign(&PartitionTable::empty(271), &four, backups);
        let losses = table.losses(&gone);
        let owned_by_gone: Vec<usize> =
            (0..271).filter(|p| table.owner(*p).is_some_and(|owner| gone.contains(&owner))).collect();
        assert_eq!(losses.iter().map(|loss| loss.partition).collect::<Vec<_>>(), owned_by_gone);
        for loss in &losses {
            let row = table.replicas(loss.partition);
            match row.iter().position(|member| member.is_some_and(|member| !gone.contains(&member))) {
                Some(index) => {
                    assert_eq!(loss.promoted, row[index], "partition {}", loss.partition);
                    assert_eq!(loss.lost_backup_count, index as i32 - 1, "partition {}", loss.partition);
                    assert_eq!(table.without(&gone).owner(loss.partition), row[index]);
                }
                None => assert_eq!((loss.promoted, loss.lost_backup_count), (None, ALL_REPLICAS_LOST)),
            }
        }
        let counts = |count: i32| losses.iter().filter(|loss| loss.lost_backup_count == count).count();
        if backups == 1 {
            assert!(counts(0) > 0, "3's backups (on 4) survive");
            assert!(counts(ALL_REPLICAS_LOST) > 0, "1 and 2 held both replicas of their partitions");
        } else {
            assert!(counts(1) > 0, "1 and 2 held owner and first backup: a second backup takes over");
            assert_eq!(counts(ALL_REPLICAS_LOST), 0, "three replicas on four members: one survives");
        }
    }
    assert!(assign(&PartitionTable::empty(271), &four, 1).losses(&members(&[9])).is_empty());
}

#[test]
fn a_joining_member_takes_its_share_and_only_that_moves() {
    let three = members(&[1, 2, 3]);
    let before = assign(&PartitionTable::empty(271), &three, 1);
    let four = members(&[1, 2, 3, 4]);
    let after = assign(&before, &four, 1);
    after.check(&four, 1).unwrap();
    let owned_by_new = (0..271).filter(|p| after.owner(*p) == Some(MemberId(4))).count();
    assert!((67..=68).contains(&owned_by_new), "{owned_by_new}");
    let owners_moved = (0..271).filter(|p| after.owner(*p) != before.owner(*p)).count();
    assert_eq!(owners_moved, owned_by_new, "no owner moves except to the new member");
}

#[test]
fn scheduler_bounds_migrations_and_never_runs_a_partition_twice() {
    let before = assign(&PartitionTable::empty(271), &members(&[1, 2, 3]), 2);
    let after = assign(&before, &members(&[1, 2, 3, 4, 5]), 2);
    let planned = plan_migrations(&before, &after);
    assert!(!planned.is_empty());
    let mut scheduler = MigrationScheduler::new(planned.clone(), 4);
    let mut done = 0;
    while !scheduler.is_done() {
        let batch = scheduler.next_batch();
        assert!(scheduler.in_flight().len() <= 4);
        let mut partitions: Vec<usize> = scheduler.in_flight().iter().map(|m| m.partition).collect();
        partitions.sort();
        partitions.dedup();
        assert_eq!(partitions.len(), scheduler.in_flight().len(), "one migration per partition at a time");
        for migration in batch {
            scheduler.completed(migration);
            done += 1;
        }
    }
    assert_eq!(done, planned.len());
}

/// A sequence of membership changes: members join (new id) or leave (an index into the list).
#[derive(Debug, Clone)]
enum Change {
    Join,
    Leave(usize),
}

fn changes() -> impl Strategy<Value = Vec<Change>> {
    prop::collection::vec(prop_oneof![2 => Just(Change::Join), 1 => (0usize..8).prop_map(Change::Leave)], 1..16)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_table_after_any_churn_keeps_the_invariants(
        changes in changes(),
        backup_count in 0usize..4,
        partition_count in prop_oneof![Just(271usize), 1usize..40],
    ) {
        let mut next_id = 1u128;
        let mut current: Vec<MemberId> = vec![MemberId(0)];
        let mut table = assign(&PartitionTable::empty(partition_count), &current, backup_count);
        for change in changes {
            match change {
                Change::Join if current.len() < 8 => {
                    current.push(MemberId(next_id));
                    next_id += 1;
                }
                Change::Leave(index) if current.len() > 1 => {
                    current.remove(index % current.len());
                }
                _ => continue,
            }
            let next = assign(&table, &current, backup_count);
            prop_assert!(next.check(&current, backup_count).is_ok(), "{:?}", next.check(&current, backup_count));
            prop_assert!(next.version >= table.version);
            // Data survives: a partition keeps at least one replica on a surviving member
            // whenever it had one there before (with backups, one leave never loses data).
            let plan = plan_migrations(&table, &next);
            for migration in plan.iter().filter(|m| m.replica_index == 0) {
                let partition = migration.partition;
                let had_survivor = table.replicas(partition).iter().flatten().any(|member| current.contains(member));
                if had_survivor {
                    let from_a_holder = migration.source.is_some_and(|source| table.replicas(partition).contains(&Some(source)));
                    prop_assert!(from_a_holder, "every new owner copies from a replica that had the data");
                }
            }
            table = next;
        }
    }
}
