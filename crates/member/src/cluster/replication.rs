//! Replication of partitions to their backups: a reactor's replication state (`state.rs`),
//! what an owner does for its replicas and a replica for its owner (`backups.rs`), and how an
//! owner has the writes a departed backup never acknowledged acknowledged by another replica
//! (`rebackup.rs`).

pub(crate) mod backups;
pub(crate) mod rebackup;
pub(crate) mod state;
