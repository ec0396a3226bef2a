//! Partitions as a reactor holds them: the objects of one partition of any kind
//! (`objects.rs`), the one interface replication and migration reach them by (`object.rs`), the
//! reactor's partitions as their owner, which runs each structure's typed requests through their
//! `Execute` impls (`owner.rs`), the lock they sit behind (`held.rs`),
//! where the requests waiting in a partition's engines are answered (`waiters.rs`), and their
//! logs on disk when the member persists (`persisting.rs`).

pub(crate) mod held;
pub(crate) mod object;
pub(crate) mod objects;
pub(crate) mod owner;
pub(crate) mod persisting;
pub(crate) mod waiters;
