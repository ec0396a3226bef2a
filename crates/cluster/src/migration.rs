//! Migrations: the replica moves that turn one partition table into another, and a scheduler
//! that keeps a bounded number in flight while the cluster goes on serving.

use crate::partition_table::{MemberId, PartitionTable, MAX_REPLICAS};
use std::collections::VecDeque;

/// One replica of one partition changing hands. `source` is where the data is copied from
/// (the current owner if the old holder is gone); `destination` the new holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub partition: usize,
    pub replica_index: usize,
    pub source: Option<MemberId>,
    pub destination: MemberId,
}

/// Every replica slot whose holder differs between `from` and `to`, owners first. A slot whose
/// new holder already held another replica of the partition needs no data copy, but is still
/// listed (its role changes). `source` is the old holder if it is still in `to`'s partition
/// replicas or the old owner otherwise; None when the partition had no data anywhere.
pub fn plan_migrations(from: &PartitionTable, to: &PartitionTable) -> Vec<Migration> {
    assert_eq!(from.partition_count(), to.partition_count());
    let mut migrations = Vec::new();
    for replica_index in 0..MAX_REPLICAS {
        for partition in 0..to.partition_count() {
            let (old, new) = (from.replica(partition, replica_index), to.replica(partition, replica_index));
            let Some(destination) = new else { continue };
            if old == Some(destination) {
                continue;
            }
            let surviving_old_owner =
                from.owner(partition).filter(|owner| to.replicas(partition).contains(&Some(*owner)));
            let source = old
                .filter(|member| to.replicas(partition).contains(&Some(*member)))
                .or(surviving_old_owner)
                .or(from.owner(partition));
            migrations.push(Migration { partition, replica_index, source, destination });
        }
    }
    migrations
}

/// Hands out planned migrations, at most `max_in_flight` at a time and at most one per
/// partition at a time (a partition is never migrating twice at once).
#[derive(Debug)]
pub struct MigrationScheduler {
    pending: VecDeque<Migration>,
    in_flight: Vec<Migration>,
    max_in_flight: usize,
}

impl MigrationScheduler {
    pub fn new(planned: Vec<Migration>, max_in_flight: usize) -> MigrationScheduler {
        assert!(max_in_flight > 0);
        MigrationScheduler { pending: planned.into(), in_flight: Vec::new(), max_in_flight }
    }

    /// The migrations to start now.
    pub fn next_batch(&mut self) -> Vec<Migration> {
        let mut started = Vec::new();
        let mut index = 0;
        while self.in_flight.len() < self.max_in_flight && index < self.pending.len() {
            let candidate = self.pending[index];
            let busy = self.in_flight.iter().any(|running| running.partition == candidate.partition);
            if busy {
                index += 1;
                continue;
            }
            let migration = self.pending.remove(index).expect("index in range");
            self.in_flight.push(migration);
            started.push(migration);
        }
        started
    }

    /// A started migration finished (or failed and will not be retried).
    pub fn completed(&mut self, migration: Migration) {
        let position = self.in_flight.iter().position(|running| *running == migration);
        self.in_flight.remove(position.expect("completed a migration that was in flight"));
    }

    pub fn in_flight(&self) -> &[Migration] {
        &self.in_flight
    }

    pub fn is_done(&self) -> bool {
        self.pending.is_empty() && self.in_flight.is_empty()
    }
}
