//! A cluster restarted from disk: the master restores the partition table the members came
//! back with, or fails the start, as the recovery policy says (`membership/recovery.rs`).
//! Nodes linked to each other from the start, messages delivered in order at once.

use ferrogrid_cluster::{
    assign, Input, MemberId, Message, Node, NodeConfig, Output, PartitionTable, Recovery, RecoveryOutcome,
    RecoveryPolicy,
};
use std::collections::VecDeque;

const PARTITIONS: usize = 31;
const VALIDATION_MS: u64 = 5_000;

struct Net {
    nodes: Vec<Node>,
    alive: Vec<bool>,
    queue: VecDeque<(usize, MemberId, Message)>,
    outcomes: Vec<Vec<RecoveryOutcome>>,
    now: u64,
}

fn config(index: usize, count: usize) -> NodeConfig {
    NodeConfig {
        id: id(index),
        address: format!("127.0.0.1:{}", 5701 + index),
        seeds: (0..count).map(|i| format!("127.0.0.1:{}", 5701 + i)).collect(),
        partition_count: PARTITIONS,
        backup_count: 1,
        heartbeat_interval_ms: 100,
        max_no_heartbeat_ms: 60_000,
        join_wait_ms: 300,
        max_parallel_migrations: 100,
        lite: false,
        client_address: String::new(),
        merge_first_run_delay_ms: 1_000_000,
        merge_next_run_delay_ms: 1_000_000,
    }
}

fn id(index: usize) -> MemberId {
    MemberId(1000 + index as u128)
}

/// The table three members had before the restart (version 7).
fn persisted() -> PartitionTable {
    let mut table = assign(&PartitionTable::empty(PARTITIONS), &[id(0), id(1), id(2)], 1);
    table.version = 7;
    table
}

impl Net {
    /// `tables[i]`: what member i came back with (None: an empty disk); `alive[i]`: started.
    fn new(tables: Vec<Option<PartitionTable>>, alive: Vec<bool>, policy: RecoveryPolicy) -> Net {
        let count = tables.len();
        let nodes = tables
            .into_iter()
            .enumerate()
            .map(|(index, table)| {
                let mut node = Node::new(config(index, count));
                node.set_recovery(Recovery { table, policy, validation_timeout_ms: VALIDATION_MS });
                node
            })
            .collect();
        let mut net = Net { nodes, alive, queue: VecDeque::new(), outcomes: vec![Vec::new(); count], now: 0 };
        for a in 0..count {
            for b in 0..count {
                if a != b && net.alive[a] && net.alive[b] {
                    let address = format!("127.0.0.1:{}", 5701 + b);
                    net.feed(a, Input::LinkUp { id: id(b), address });
                }
            }
        }
        net
    }

    fn feed(&mut self, index: usize, input: Input) {
        for output in self.nodes[index].handle(input) {
            match output {
                Output::Send { to, message } => self.queue.push_back((index, to, message)),
                Output::Recovery { outcome, .. } => self.outcomes[index].push(outcome),
                _ => {}
            }
        }
    }

    fn run(&mut self, until_ms: u64) {
        while self.now < until_ms {
            self.now += 50;
            for index in 0..self.nodes.len() {
                if self.alive[index] {
                    self.feed(index, Input::Tick { now_ms: self.now });
                }
            }
            while let Some((from, to, message)) = self.queue.pop_front() {
                let to = (to.0 - 1000) as usize;
                if self.alive[to] {
                    self.feed(to, Input::Received { from: id(from), message });
                }
            }
        }
    }
}

#[test]
fn every_member_back_with_the_same_table_restores_it() {
    let table = persisted();
    let mut net = Net::new(vec![Some(table.clone()); 3], vec![true; 3], RecoveryPolicy::FullRecoveryOnly);
    net.run(3_000);
    for (index, node) in net.nodes.iter().enumerate() {
        assert_eq!(node.table().version, 8, "member {index}: one past the persisted version");
        for partition in 0..PARTITIONS {
            assert_eq!(node.table().replicas(partition), table.replicas(partition), "member {index}");
        }
        assert_eq!(net.outcomes[index], [RecoveryOutcome::Keep], "member {index}");
    }
}

#[test]
fn full_recovery_waits_for_a_missing_member_then_fails_everywhere() {
    let table = persisted();
    let mut net = Net::new(vec![Some(table.clone()); 3], vec![true, true, false], RecoveryPolicy::FullRecoveryOnly);
    net.run(VALIDATION_MS - 500);
    assert!(net.nodes.iter().take(2).all(|node| node.table().version == 0), "no table while it waits");
    assert!(net.outcomes.iter().all(Vec::is_empty));
    net.run(VALIDATION_MS + 1_000);
    assert_eq!(net.outcomes[0], [RecoveryOutcome::Failed]);
    assert_eq!(net.outcomes[1], [RecoveryOutcome::Failed]);
    assert_eq!(net.nodes[0].table().version, 0, "nothing published");
}

#[test]
fn full_recovery_refuses_members_that_came_back_with_different_tables() {
    let table = persisted();
    let mut older = table.clone();
    older.version = 6;
    older.set_replicas(0, [Some(id(2)), Some(id(0)), None, None, None, None, None]);
    let tables = vec![Some(table.clone()), Some(table), Some(older)];
    let mut net = Net::new(tables, vec![true; 3], RecoveryPolicy::FullRecoveryOnly);
    net.run(2_000);
    assert!(net.outcomes.iter().all(|outcomes| outcomes == &[RecoveryOutcome::Failed]), "{:?}", net.outcomes);
}

#[test]
fn partial_recovery_restores_the_most_recent_table_without_the_rest() {
    let table = persisted();
    let mut older = table.clone();
    older.version = 6;
    older.set_replicas(0, [Some(id(2)), Some(id(0)), None, None, None, None, None]);
    let tables = vec![Some(older), Some(table.clone()), Some(table.clone())];
    let mut net = Net::new(tables, vec![true; 3], RecoveryPolicy::PartialRecoveryMostRecent);
    net.run(2_000);
    assert_eq!(net.outcomes[0], [RecoveryOutcome::Drop], "the stale member drops its data");
    assert_eq!(net.outcomes[1], [RecoveryOutcome::Keep]);
    assert_eq!(net.outcomes[2], [RecoveryOutcome::Keep]);
    let restored = table.without(&[id(0)]);
    for partition in 0..PARTITIONS {
        // The restored row (member 0 dropped from it), then filled again by rebalancing.
        let row = net.nodes[1].table().replicas(partition);
        assert_eq!(row[0], restored.replicas(partition)[0], "partition {partition}: owners kept or promoted");
    }
}

#[test]
fn partial_recovery_goes_on_without_a_member_that_did_not_come_back() {
    let table = persisted();
    let mut net =
        Net::new(vec![Some(table.clone()); 3], vec![true, true, false], RecoveryPolicy::PartialRecoveryMostComplete);
    net.run(VALIDATION_MS + 1_000);
    assert_eq!(net.outcomes[0], [RecoveryOutcome::Keep]);
    assert_eq!(net.outcomes[1], [RecoveryOutcome::Keep]);
    let table_now = net.nodes[0].table();
    assert!(table_now.version > 7);
    for partition in 0..PARTITIONS {
        assert!(!table_now.replicas(partition).contains(&Some(id(2))), "partition {partition}");
        assert!(table_now.owner(partition).is_some(), "partition {partition} has an owner");
    }
}

#[test]
fn a_member_with_an_empty_disk_is_told_to_start_empty() {
    let table = persisted();
    let tables = vec![Some(table.clone()), Some(table), None];
    let mut net = Net::new(tables, vec![true; 3], RecoveryPolicy::FullRecoveryOnly);
    net.run(2_000);
    assert_eq!(net.outcomes[0], [RecoveryOutcome::Keep]);
    assert_eq!(net.outcomes[1], [RecoveryOutcome::Keep]);
    assert_eq!(net.outcomes[2], [RecoveryOutcome::Drop]);
    assert!(net.nodes[2].table().version > 7);
}

#[test]
fn without_persisted_data_the_first_table_is_a_new_one() {
    let mut net = Net::new(vec![None; 3], vec![true; 3], RecoveryPolicy::FullRecoveryOnly);
    net.run(3_000);
    assert!(net.outcomes.iter().all(Vec::is_empty), "no word about data nobody has");
    assert!(net.nodes.iter().all(|node| node.table().version >= 1));
}
