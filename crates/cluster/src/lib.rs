//! Cluster logic with no IO, testable on one thread.
//!
//! - [`partition_table`]: who owns and who backs up each partition. Assignment keeps what it
//!   can (sticky), promotes backups when an owner leaves, never puts two replicas of a
//!   partition on one member, and balances every replica index across members.
//! - [`migration`]: the moves that turn one table into another, and a scheduler that keeps a
//!   bounded number in flight.
//!
//! Membership (join, heartbeats, master election) is the next step of the cluster issue and
//! will follow the same shape: `step(input) -> outputs`, driven by a thin IO layer.

pub mod migration;
pub mod partition_table;

pub use migration::{plan_migrations, Migration, MigrationScheduler};
pub use partition_table::{assign, MemberId, PartitionTable, MAX_REPLICAS};
