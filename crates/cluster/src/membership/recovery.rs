//! A cluster restarted from disk (persistence): before its first table, the master gathers the
//! partition table every member came back with and restores one of them, so that each member
//! serves the replicas whose data it loaded; members whose data the restored table does not
//! name drop it and are filled from replicas like new members.
//!
//! - Each joined member sends the master what it came back with ([`Message::Restored`]: its
//!   persisted table, or none for an empty disk), repeated until the first table arrives.
//! - The master waits, up to the validation timeout from when it founded the cluster, until
//!   every member named in a reported table has joined and reported. Then, by the policy:
//!   `FullRecoveryOnly` restores the table only if every one came back and all agree, else the
//!   start fails everywhere; the partial policies restore the most recent table
//!   (`PartialRecoveryMostRecent`) or the one most members came back with
//!   (`PartialRecoveryMostComplete`), without the members that did not come back with it.
//! - The master tells each member whether it keeps its data ([`Message::Recovery`]) before it
//!   publishes the restored table (version one past the persisted one); a member that is told
//!   nothing, or "drop", drops what it loaded when it applies its first table.

use super::{Message, Node, Output, JOIN_RETRY_MS};
use crate::partition_table::{MemberId, PartitionTable};
use std::collections::{BTreeMap, BTreeSet};

/// What a restarted cluster does when not every member came back with the same data
/// (Hazelcast's `cluster-data-recovery-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryPolicy {
    FullRecoveryOnly,
    PartialRecoveryMostRecent,
    PartialRecoveryMostComplete,
}

/// A member's persistence at start: the table it came back with and the cluster's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The partition table persisted with this member's data; None for an empty disk.
    pub table: Option<PartitionTable>,
    pub policy: RecoveryPolicy,
    /// How long the master waits for the members to come back (`validation-timeout-seconds`).
    pub validation_timeout_ms: u64,
}

/// The master's word to a member about the data it loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryOutcome {
    /// The restored table is the one it came back with: it serves what it loaded.
    Keep,
    /// Its data is stale or not wanted: it drops it and is filled from replicas.
    Drop,
    /// The cluster cannot start from its disks (the reason follows): every member stops.
    Failed,
}

/// Recovery's progress on one member.
#[derive(Debug)]
pub(super) struct RecoveryState {
    config: Recovery,
    /// (Master) what each member reported.
    reports: BTreeMap<MemberId, Option<PartitionTable>>,
    /// (Master) when the validation timeout ends.
    deadline_ms: Option<u64>,
    /// When this member last sent its report.
    last_report_ms: u64,
    /// The master restored a table.
    done: bool,
    /// The master found the cluster cannot start from its disks: no table ever goes out.
    failed: bool,
    logged_wait: bool,
}

impl RecoveryState {
    pub(super) fn new(config: Recovery) -> RecoveryState {
        RecoveryState {
            config,
            reports: BTreeMap::new(),
            deadline_ms: None,
            last_report_ms: 0,
            done: false,
            failed: false,
            logged_wait: false,
        }
    }
}

impl Node {
    /// Starts this member's recovery from disk: call before the first input.
    pub fn set_recovery(&mut self, recovery: Recovery) {
        self.recovery = Some(RecoveryState::new(recovery));
    }

    /// (Every member, each tick) sends the master what this member came back with, until the
    /// first table arrives.
    pub(super) fn report_recovery(&mut self) {
        let now = self.now_ms;
        let Some(master) = self.master() else { return };
        let Some(state) = self.recovery.as_mut() else { return };
        if self.table.version != 0 || master == self.config.id {
            return;
        }
        if state.last_report_ms != 0 && now.saturating_sub(state.last_report_ms) < JOIN_RETRY_MS {
            return;
        }
        state.last_report_ms = now.max(1);
        let table = state.config.table.clone();
        self.send(master, Message::Restored { table });
    }

    /// (Master) a member's report.
    pub(super) fn restored(&mut self, from: MemberId, table: Option<PartitionTable>) {
        if !self.is_master() || self.table.version != 0 {
            return;
        }
        if let Some(state) = self.recovery.as_mut() {
            state.reports.insert(from, table);
        }
    }

    /// The master's word, on a member.
    pub(super) fn recovery_told(&mut self, from: MemberId, outcome: RecoveryOutcome, reason: String) {
        if self.master() != Some(from) || self.is_master() {
            return;
        }
        if outcome == RecoveryOutcome::Failed {
            self.log(format!("cluster start from disk failed: {reason}"));
        }
        self.out.push(Output::Recovery { outcome, reason });
    }

    /// (Master, before the first table) whether recovery holds the first table back: true
    /// while it waits for members, or once it published the restored table or failed.
    pub(super) fn step_recovery(&mut self) -> bool {
        let now = self.now_ms;
        let me = self.config.id;
        let data_members: BTreeSet<MemberId> = self.data_members().into_iter().collect();
        let Some(state) = self.recovery.as_mut() else { return false };
        if state.failed {
            return true;
        }
        if state.done {
            return false;
        }
        let own = state.config.table.clone();
        state.reports.insert(me, own);
        let deadline = *state.deadline_ms.get_or_insert(now + state.config.validation_timeout_ms);
        // Every member named in a table someone came back with is expected back.
        let expected: BTreeSet<MemberId> = state
            .reports
            .values()
            .flatten()
            .flat_map(|table| (0..table.partition_count()).flat_map(|p| table.replicas(p).iter().flatten().copied()))
            .collect();
        if expected.is_empty() {
            // Nobody (yet) came back with data: the first table goes out as for a new cluster,
            // unless a report with a table arrives before it.
            return false;
        }
        let reported: BTreeSet<MemberId> =
            state.reports.keys().copied().filter(|member| data_members.contains(member)).collect();
        let everyone = expected.is_subset(&data_members) && data_members.is_subset(&reported);
        if !everyone && now < deadline {
            if !state.logged_wait {
                state.logged_wait = true;
                let missing: Vec<MemberId> = expected.difference(&data_members).copied().collect();
                let text = format!("recovering from disk: waiting for {} member(s) to come back", missing.len());
                self.log(text);
            }
            return true;
        }
        state.done = true;
        let policy = state.config.policy;
        let reports: Vec<(MemberId, PartitionTable)> = state
            .reports
            .iter()
            .filter(|(member, _)| data_members.contains(member))
            .filter_map(|(member, table)| table.clone().map(|table| (*member, table)))
            .collect();
        match choose(policy, everyone, &expected, &data_members, &reports) {
            Ok(chosen) => self.restore(chosen, &reports, &expected),
            Err(reason) => {
                if let Some(state) = self.recovery.as_mut() {
                    state.failed = true;
                }
                self.fail_recovery(reason);
            }
        }
        true
    }

    /// Publishes `chosen` (without the members that did not come back with it) after telling
    /// each member whether it keeps its data.
    fn restore(
        &mut self,
        chosen: PartitionTable,
        reports: &[(MemberId, PartitionTable)],
        expected: &BTreeSet<MemberId>,
    ) {
        let keep: BTreeSet<MemberId> =
            reports.iter().filter(|(_, table)| *table == chosen).map(|(member, _)| *member).collect();
        let gone: Vec<MemberId> = expected.iter().copied().filter(|member| !keep.contains(member)).collect();
        let mut table = chosen.without(&gone);
        table.version = chosen.version + 1;
        let text = format!(
            "restoring v{} of the partition table: {} member(s) keep their data, {} do not",
            chosen.version,
            keep.len(),
            gone.len()
        );
        self.log(text);
        for member in self.data_members() {
            let outcome = if keep.contains(&member) { RecoveryOutcome::Keep } else { RecoveryOutcome::Drop };
            if member == self.config.id {
                self.out.push(Output::Recovery { outcome, reason: String::new() });
            } else {
                self.send(member, Message::Recovery { outcome, reason: String::new() });
            }
        }
        self.publish_table(table);
    }

    fn fail_recovery(&mut self, reason: String) {
        self.log(format!("cluster start from disk failed: {reason}"));
        for member in self.data_members() {
            if member != self.config.id {
                self.send(member, Message::Recovery { outcome: RecoveryOutcome::Failed, reason: reason.clone() });
            }
        }
        self.out.push(Output::Recovery { outcome: RecoveryOutcome::Failed, reason });
    }
}

/// The table to restore, by the policy, or why the cluster cannot start.
fn choose(
    policy: RecoveryPolicy,
    everyone: bool,
    expected: &BTreeSet<MemberId>,
    present: &BTreeSet<MemberId>,
    reports: &[(MemberId, PartitionTable)],
) -> Result<PartitionTable, String> {
    // Each distinct table, with how many members came back with it.
    let mut groups: Vec<(PartitionTable, usize)> = Vec::new();
    for (_, table) in reports {
        match groups.iter_mut().find(|(known, _)| known == table) {
            Some((_, count)) => *count += 1,
            None => groups.push((table.clone(), 1)),
        }
    }
    match policy {
        RecoveryPolicy::FullRecoveryOnly => {
            if !everyone {
                let missing = expected.difference(present).count();
                return Err(format!(
                    "{missing} member(s) did not come back within validation-timeout-seconds \
                     (cluster-data-recovery-policy FULL_RECOVERY_ONLY)"
                ));
            }
            if groups.len() != 1 {
                let versions: Vec<u64> = groups.iter().map(|(table, _)| table.version).collect();
                return Err(format!(
                    "the members came back with different partition tables (versions {versions:?}; \
                     cluster-data-recovery-policy FULL_RECOVERY_ONLY)"
                ));
            }
        }
        RecoveryPolicy::PartialRecoveryMostRecent => groups.sort_by_key(|(table, count)| (table.version, *count)),
        RecoveryPolicy::PartialRecoveryMostComplete => groups.sort_by_key(|(table, count)| (*count, table.version)),
    }
    groups.pop().map(|(table, _)| table).ok_or_else(|| "no member came back with a partition table".to_owned())
}
