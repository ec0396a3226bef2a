//! Replication of partitions to their backups: a reactor's replication state (`state.rs`) and
//! what an owner does for its replicas and a replica for its owner (`backups.rs`).

pub(crate) mod backups;
pub(crate) mod state;
