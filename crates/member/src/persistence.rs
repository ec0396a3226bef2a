//! Persistence (`hazelcast.persistence`; docs/persistence.md): each partition replica this
//! member holds keeps the change records its backups carry in an append-only log on disk
//! (`ferrogrid-persist`), so that a cluster whose members all restart comes back with what it
//! acknowledged.
//!
//! - [`disk`]: the member's directory: its manifest (the uuid it comes back as, the partition
//!   count), and the partition table its data was written under.
//! - [`logs`]: a reactor's logs, one per partition it owns: records appended as operations
//!   change objects (owner and backups alike), one flush per loop turn (group commit) before
//!   any answer of the turn goes out, answers held until the disk has them where the policy
//!   says so, snapshots that compact a log, and the failures of a full disk.
//! - [`load`]: a member's start: every partition's snapshot and log read back into its
//!   reactor's objects, in parallel, before the member joins its cluster.
pub(crate) mod disk;
pub(crate) mod load;
pub(crate) mod logs;
