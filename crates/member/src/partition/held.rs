//! A reactor's partitions behind a lock of their own, so that the reactor that read a request
//! can run it on another reactor's partitions itself instead of handing it over (a hop between
//! threads costs more than the operation: see ARCHITECTURE.md, "Threads and who owns what").
//!
//! The owning reactor takes its lock on first use in a loop iteration and keeps it until it
//! lets go ([`HeldOwner::release`]): before it sleeps in poll and after each connection's
//! read batch. Another reactor takes it only with `try_lock`, never while it holds its own,
//! so two reactors cannot wait on each other.

use crate::partition::owner::PartitionOwner;
use parking_lot::{ArcMutexGuard, Mutex, RawMutex};
use std::cell::OnceCell;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// The lock around one reactor's partitions (shared with the other reactors).
pub(crate) type OwnerLock = Arc<Mutex<PartitionOwner>>;

/// A locked reactor's partitions.
pub(crate) type OwnerGuard = ArcMutexGuard<RawMutex, PartitionOwner>;

/// The owning reactor's handle on its partitions: locked on first use, until released.
pub(crate) struct HeldOwner {
    lock: OwnerLock,
    guard: OnceCell<OwnerGuard>,
}

impl HeldOwner {
    pub(crate) fn new(owner: PartitionOwner) -> HeldOwner {
        HeldOwner { lock: Arc::new(Mutex::new(owner)), guard: OnceCell::new() }
    }

    /// The lock, for the other reactors.
    pub(crate) fn lock(&self) -> &OwnerLock {
        &self.lock
    }

    /// Lets the other reactors in until this reactor uses its partitions again.
    pub(crate) fn release(&mut self) {
        self.guard.take();
    }
}

impl Deref for HeldOwner {
    type Target = PartitionOwner;

    fn deref(&self) -> &PartitionOwner {
        self.guard.get_or_init(|| self.lock.lock_arc())
    }
}

impl DerefMut for HeldOwner {
    fn deref_mut(&mut self) -> &mut PartitionOwner {
        self.guard.get_or_init(|| self.lock.lock_arc());
        self.guard.get_mut().expect("locked just now")
    }
}

impl std::fmt::Debug for HeldOwner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldOwner").field("held", &self.guard.get().is_some()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner() -> PartitionOwner {
        let config = Arc::new(ferrogrid_config::MemberConfig::default());
        let me = ferrogrid_cluster::MemberId(1);
        let cluster = Arc::new(crate::cluster::replication::state::ClusterState::alone(me, 271));
        PartitionOwner::new(0, 2, ferrogrid_protocol::Uuid::from_u128(1), config, 271, cluster, Arc::default())
    }

    #[test]
    fn the_owner_is_locked_on_use_and_free_after_release() {
        let mut held = HeldOwner::new(owner());
        let lock = held.lock().clone();
        assert!(lock.try_lock().is_some(), "nothing holds it before its first use");
        held.tick_clock();
        assert!(lock.try_lock().is_none(), "the reactor holds it from its first use");
        held.release();
        let guard = lock.try_lock_arc().expect("another reactor may take it after release");
        assert_eq!(guard.partitions.len(), 136);
        drop(guard);
        assert_eq!(held.partitions.len(), 136, "the reactor takes it again on its next use");
        assert!(lock.try_lock().is_none());
    }
}
