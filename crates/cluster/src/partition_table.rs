//! The partition table and its assignment.
//!
//! Replica 0 of a partition is its owner; replicas 1..=backup_count are its backups.
//! Invariants of every table [`assign`] returns (checked by [`PartitionTable::check`]):
//! - a member holds at most one replica of a partition;
//! - every replica slot below `min(backup_count + 1, members)` is filled;
//! - members own `floor(P/N)` or `ceil(P/N)` partitions (owners within ±1), and hold within
//!   ±2 of each other at every backup index. (Strict ±1 at backup indexes is not always
//!   reachable without moving owners or far more backups; property tests over random churn
//!   found differences of 2 only at backup indexes with few members.)

use std::collections::HashMap;

/// Most replicas a partition can have: the owner and six backups (as in Hazelcast).
pub const MAX_REPLICAS: usize = 7;

/// The `lostBackupCount` of a partition none of whose replicas survived (Hazelcast's
/// `MAX_BACKUP_COUNT`).
pub const ALL_REPLICAS_LOST: i32 = MAX_REPLICAS as i32 - 1;

/// A partition whose owner died (see [`PartitionTable::losses`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionLoss {
    pub partition: usize,
    pub lost_backup_count: i32,
    /// The replica that became owner; None when every replica was lost.
    pub promoted: Option<MemberId>,
}

/// A member's identity (its uuid as two halves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemberId(pub u128);

/// Who holds each replica of each partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionTable {
    /// Increases with every change; clients apply a table only if its version is newer.
    pub version: u64,
    replicas: Vec<[Option<MemberId>; MAX_REPLICAS]>,
}

impl PartitionTable {
    /// A table with nothing assigned yet.
    pub fn empty(partition_count: usize) -> PartitionTable {
        assert!(partition_count > 0);
        PartitionTable { version: 0, replicas: vec![[None; MAX_REPLICAS]; partition_count] }
    }

    pub fn partition_count(&self) -> usize {
        self.replicas.len()
    }

    pub fn owner(&self, partition: usize) -> Option<MemberId> {
        self.replicas[partition][0]
    }

    pub fn replica(&self, partition: usize, index: usize) -> Option<MemberId> {
        self.replicas[partition][index]
    }

    pub fn replicas(&self, partition: usize) -> &[Option<MemberId>; MAX_REPLICAS] {
        &self.replicas[partition]
    }

    /// Replaces one partition's replica row (a migration step).
    pub fn set_replicas(&mut self, partition: usize, replicas: [Option<MemberId>; MAX_REPLICAS]) {
        self.replicas[partition] = replicas;
    }

    /// The table without `members`' replicas, survivors moved up (backups promoted), no slot
    /// refilled: what a cluster can switch to at once when members die, since nobody needs
    /// data copied for it.
    pub fn without(&self, members: &[MemberId]) -> PartitionTable {
        let mut table = self.clone();
        for replicas in &mut table.replicas {
            let survivors: Vec<MemberId> =
                replicas.iter().flatten().filter(|member| !members.contains(member)).copied().collect();
            *replicas = [None; MAX_REPLICAS];
            for (index, member) in survivors.into_iter().enumerate() {
                replicas[index] = Some(member);
            }
        }
        table
    }

    /// What [`PartitionTable::without`]`(gone)` costs each partition whose owner is in `gone`:
    /// the survivor promoted to owner and how many replicas above it were lost with the owner
    /// (Hazelcast's `lostBackupCount`: 0 when the first backup takes over), or, when no
    /// replica survives, no successor and [`ALL_REPLICAS_LOST`].
    pub fn losses(&self, gone: &[MemberId]) -> Vec<PartitionLoss> {
        let mut losses = Vec::new();
        for (partition, replicas) in self.replicas.iter().enumerate() {
            if !replicas[0].is_some_and(|owner| gone.contains(&owner)) {
                continue;
            }
            let survivor = replicas.iter().enumerate().find_map(|(index, member)| {
                member.filter(|member| !gone.contains(member)).map(|member| (index, member))
            });
            losses.push(match survivor {
                Some((index, member)) => {
                    PartitionLoss { partition, lost_backup_count: index as i32 - 1, promoted: Some(member) }
                }
                None => PartitionLoss { partition, lost_backup_count: ALL_REPLICAS_LOST, promoted: None },
            });
        }
        losses
    }

    /// Partitions each member owns (the shape the client protocol's PartitionsView carries).
    pub fn owned_by_member(&self) -> HashMap<MemberId, Vec<usize>> {
        let mut owned: HashMap<MemberId, Vec<usize>> = HashMap::new();
        for (partition, replicas) in self.replicas.iter().enumerate() {
            if let Some(owner) = replicas[0] {
                owned.entry(owner).or_default().push(partition);
            }
        }
        owned
    }

    /// Checks the invariants listed in the module docs for `members` and `backup_count`.
    pub fn check(&self, members: &[MemberId], backup_count: usize) -> Result<(), String> {
        let wanted = (backup_count + 1).min(members.len()).min(MAX_REPLICAS);
        for (partition, replicas) in self.replicas.iter().enumerate() {
            for index in 0..MAX_REPLICAS {
                match replicas[index] {
                    Some(member) if !members.contains(&member) => {
                        return Err(format!("partition {partition} replica {index} is on departed {member:?}"));
                    }
                    Some(member) if replicas[..index].contains(&Some(member)) => {
                        return Err(format!("partition {partition} has two replicas on {member:?}"));
                    }
                    None if index < wanted => return Err(format!("partition {partition} replica {index} is empty")),
                    Some(_) if index >= wanted => {
                        return Err(format!("partition {partition} has replica {index} beyond the backup count"));
                    }
                    _ => {}
                }
            }
        }
        for index in 0..wanted {
            let counts = self.counts_at(index, members);
            let (low, high) = (counts.values().min().copied(), counts.values().max().copied());
            let tolerance = if index == 0 { 1 } else { 2 };
            if let (Some(low), Some(high)) = (low, high) {
                if high - low > tolerance {
                    return Err(format!("replica index {index} unbalanced: {low}..{high}"));
                }
            }
        }
        Ok(())
    }

    fn counts_at(&self, index: usize, members: &[MemberId]) -> HashMap<MemberId, usize> {
        let mut counts: HashMap<MemberId, usize> = members.iter().map(|member| (*member, 0)).collect();
        for replicas in &self.replicas {
            if let Some(member) = replicas[index] {
                *counts.entry(member).or_insert(0) += 1;
            }
        }
        counts
    }
}

/// The table for `members` (oldest first) that keeps as much of `previous` as the invariants
/// allow. Departed members' replicas are dropped and the survivors of each partition move up
/// (a backup becomes owner); empty slots are filled from the least-loaded members; then each
/// replica index is balanced by moving replicas off the most-loaded members. The version is
/// `previous.version + 1` when anything changed.
pub fn assign(previous: &PartitionTable, members: &[MemberId], backup_count: usize) -> PartitionTable {
    let mut table = previous.clone();
    let wanted = (backup_count + 1).min(members.len()).min(MAX_REPLICAS);
    for replicas in &mut table.replicas {
        let survivors: Vec<MemberId> =
            replicas.iter().flatten().filter(|member| members.contains(member)).copied().collect();
        *replicas = [None; MAX_REPLICAS];
        for (index, member) in survivors.into_iter().take(wanted).enumerate() {
            replicas[index] = Some(member);
        }
    }
    for index in 0..wanted {
        fill(&mut table, members, index);
    }
    // Balance owners first; a later index may only swap with an earlier one while that keeps
    // the earlier one balanced, so repeat until a whole pass moves nothing (bounded).
    for _ in 0..MAX_REPLICAS * 2 {
        let mut moved = false;
        for index in 0..wanted {
            moved |= balance(&mut table, members, index, wanted);
        }
        if !moved {
            break;
        }
    }
    if table.replicas != previous.replicas {
        table.version = previous.version + 1;
    }
    table
}

/// Fills empty slots at `index` with the least-loaded member not already on the partition.
fn fill(table: &mut PartitionTable, members: &[MemberId], index: usize) {
    let mut counts = table.counts_at(index, members);
    for partition in 0..table.replicas.len() {
        if table.replicas[partition][index].is_some() {
            continue;
        }
        let holders = table.replicas[partition];
        let chosen = members
            .iter()
            .filter(|member| !holders.contains(&Some(**member)))
            .min_by_key(|member| counts[*member])
            .copied()
            .expect("fewer wanted replicas than members");
        table.replicas[partition][index] = Some(chosen);
        *counts.get_mut(&chosen).expect("a member") += 1;
    }
}

/// Balances replica index `index` (and keeps the others balanced): moves a replica from a
/// member above the index's average to one below it, where the receiver holds nothing of the
/// partition, or swaps roles with another replica index of the partition when that keeps the
/// other index within its bounds. Returns whether anything moved.
fn balance(table: &mut PartitionTable, members: &[MemberId], index: usize, wanted: usize) -> bool {
    let partitions = table.replicas.len();
    let (floor, ceil) = (partitions / members.len(), partitions.div_ceil(members.len()));
    let mut moved = false;
    // Each move takes one replica from a member above the average to one below it.
    for _ in 0..partitions * MAX_REPLICAS {
        let counts = table.counts_at(index, members);
        let (low, high) = (*counts.values().min().expect("members"), *counts.values().max().expect("members"));
        if high <= low + 1 {
            return moved;
        }
        let mut donors: Vec<MemberId> = members.iter().copied().filter(|m| counts[m] > floor.max(low + 1)).collect();
        let mut receivers: Vec<MemberId> = members.iter().copied().filter(|m| counts[m] < ceil.min(high - 1)).collect();
        donors.sort_by_key(|member| std::cmp::Reverse(counts[member]));
        receivers.sort_by_key(|member| counts[member]);
        let all_counts: Vec<HashMap<MemberId, usize>> = (0..wanted).map(|i| table.counts_at(i, members)).collect();
        let Some((partition, other, receiver)) =
            find_move(table, &all_counts, index, wanted, &donors, &receivers, (floor, ceil))
        else {
            return moved;
        };
        match other {
            None => table.replicas[partition][index] = Some(receiver),
            Some(other) => table.replicas[partition].swap(index, other),
        }
        moved = true;
    }
    moved
}

/// A (partition, swap-with index or None for a plain move, receiver) that moves one replica at
/// `index` from a donor to a receiver without unbalancing another index.
fn find_move(
    table: &PartitionTable,
    all_counts: &[HashMap<MemberId, usize>],
    index: usize,
    wanted: usize,
    donors: &[MemberId],
    receivers: &[MemberId],
    (floor, ceil): (usize, usize),
) -> Option<(usize, Option<usize>, MemberId)> {
    for donor in donors {
        for receiver in receivers {
            let plain = (0..table.replicas.len()).find(|partition| {
                let replicas = table.replicas[*partition];
                replicas[index] == Some(*donor) && !replicas.contains(&Some(*receiver))
            });
            if let Some(partition) = plain {
                return Some((partition, None, *receiver));
            }
        }
    }
    for donor in donors {
        for receiver in receivers {
            for partition in 0..table.replicas.len() {
                let replicas = table.replicas[partition];
                if replicas[index] != Some(*donor) {
                    continue;
                }
                let Some(other) = replicas[..wanted].iter().position(|member| member == &Some(*receiver)) else {
                    continue;
                };
                // Owners never become unbalanced to balance backups; backups may end one
                // further off (±2) to balance owners or other backups.
                let other_counts = &all_counts[other];
                let slack = usize::from(other != 0);
                if other_counts[donor] < ceil + slack && other_counts[receiver] + slack > floor {
                    return Some((partition, Some(other), *receiver));
                }
            }
        }
    }
    None
}
