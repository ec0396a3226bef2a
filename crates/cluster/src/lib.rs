//! Cluster logic with no IO, testable on one thread.
//!
//! - [`partition_table`]: who owns and who backs up each partition. Assignment keeps what it
//!   can (sticky), promotes backups when an owner leaves, never puts two replicas of a
//!   partition on one member, and balances every replica index across members.
//! - [`migration`]: the moves that turn one table into another, and a scheduler that keeps a
//!   bounded number in flight.
//!
//! - [`membership`]: join, heartbeats, failure detection, the master and the table steps it
//!   publishes; `handle(input) -> outputs`, driven by a thin IO layer in the member.
//! - [`wire`]: the bytes of membership messages.

pub mod membership;
pub mod migration;
pub mod partition_table;
pub mod wire;

pub use membership::{
    Input, MemberEntry, Message, Node, NodeConfig, Output, Recovery, RecoveryOutcome, RecoveryPolicy,
};
pub use migration::{plan_migrations, Migration, MigrationScheduler};
pub use partition_table::{assign, MemberId, PartitionLoss, PartitionTable, ALL_REPLICAS_LOST, MAX_REPLICAS};
