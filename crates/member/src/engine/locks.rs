//! Key locks of one map in one partition (`IMap.lock` and friends), and the requests parked
//! on them.
//!
//! A lock is owned by (client uuid, thread id), is reentrant, and may carry a lease. A
//! lock-aware write or lock request on a key locked by someone else is parked here (its
//! decoded request, owned) and re-run, in order, when the lock is released; parked requests
//! with a timeout are answered "false" when it passes. Owned by the partition's reactor.

use crate::clock::NEVER;
use crate::cluster::peer::{Malformed, Reader};
use crate::engine::map::request::MapRequest;
use crate::engine::multimap::request::MultiMapRequest;
use crate::engine::request::WaiterId;
use ahash::RandomState;
use ferrogrid_protocol::{PartitionId, Uuid};
use std::collections::{HashMap, VecDeque};

/// A deadline a lock or a parked request needs the reactor's timer for: (when, map or
/// multimap, key).
pub type KeyDeadline = (i64, Box<str>, Box<[u8]>);

/// Who holds a lock: a client and one of its threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LockOwner {
    pub client: Uuid,
    pub thread_id: i64,
}

/// The decoded request a parked one re-runs: a map's or a multimap's (owned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waiting {
    Map(MapRequest<'static>),
    MultiMap(MultiMapRequest<'static>),
}

/// A request waiting for a key's lock to be released.
#[derive(Debug)]
pub struct Parked {
    /// Whom its answer goes to (the owner's waiter table knows).
    pub id: WaiterId,
    /// The client the request came from (forwarded requests arrive on a member link).
    pub source: Uuid,
    /// Its row in the operation table (its per-map counter).
    pub counter_slot: usize,
    pub partition_id: PartitionId,
    pub request: Waiting,
    /// When to give up and answer "false" (NEVER = wait until released).
    pub deadline_ms: i64,
}

#[derive(Debug)]
struct LockState {
    owner: LockOwner,
    /// Reentrant acquisitions not yet released.
    count: u32,
    lease_deadline_ms: i64,
}

/// Locks and waiters of one map in one partition.
#[derive(Debug, Default)]
pub struct LockTable {
    locks: HashMap<Box<[u8]>, LockState, RandomState>,
    parked: HashMap<Box<[u8]>, VecDeque<Parked>, RandomState>,
    /// Keys whose lock changed since the owner last sent backups.
    changed: ChangedKeys,
}

/// A held lock as backups and snapshots carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockImage {
    pub owner: LockOwner,
    pub count: u32,
    pub lease_deadline_ms: i64,
}

impl LockImage {
    /// Appends the image as backup and snapshot records carry it:
    /// `client u128 | thread id i64 | count u32 | lease deadline i64`, little-endian.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.owner.client.as_u128().to_le_bytes());
        out.extend_from_slice(&self.owner.thread_id.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.lease_deadline_ms.to_le_bytes());
    }

    /// Reads what [`LockImage::write`] wrote.
    pub fn read(reader: &mut Reader<'_>) -> Result<LockImage, Malformed> {
        let owner = LockOwner { client: Uuid::from_u128(reader.u128()?), thread_id: reader.i64()? };
        let (count, lease_deadline_ms) = (reader.u32()?, reader.i64()?);
        Ok(LockImage { owner, count, lease_deadline_ms })
    }
}

/// Why an unlock failed (answered with IllegalMonitorStateException, code 26).
#[derive(Debug, PartialEq, Eq)]
pub struct NotOwner;

impl LockTable {
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.locks.is_empty() && self.parked.is_empty()
    }

    pub fn is_locked(&self, key: &[u8]) -> bool {
        self.locks.contains_key(key)
    }

    fn note(&mut self, key: &[u8]) {
        self.changed.note(key);
    }

    /// Starts or stops recording which keys' locks change (on while the owner has backups).
    pub fn set_track(&mut self, track: bool) {
        self.changed.set_track(track);
    }

    /// Calls `write` with each key whose lock changed since the last call and its lock as it
    /// is now (None: released), for a backup record.
    pub fn write_changed(&mut self, mut write: impl FnMut(&[u8], Option<LockImage>)) {
        let keys = self.changed.take();
        for key in &keys {
            write(key, self.image(key));
        }
        self.changed.restore(keys);
    }

    /// The lock on `key` as a backup must mirror it.
    pub fn image(&self, key: &[u8]) -> Option<LockImage> {
        self.locks.get(key).map(|lock| LockImage {
            owner: lock.owner,
            count: lock.count,
            lease_deadline_ms: lock.lease_deadline_ms,
        })
    }

    /// Every held lock (a snapshot).
    pub fn images(&self) -> impl Iterator<Item = (&[u8], LockImage)> {
        self.locks.iter().map(|(key, lock)| {
            (&**key, LockImage { owner: lock.owner, count: lock.count, lease_deadline_ms: lock.lease_deadline_ms })
        })
    }

    /// Sets the lock on `key` as a backup or snapshot carries it (None: unlocked).
    pub fn apply(&mut self, key: &[u8], image: Option<LockImage>) {
        match image {
            Some(image) => {
                let state =
                    LockState { owner: image.owner, count: image.count, lease_deadline_ms: image.lease_deadline_ms };
                self.locks.insert(key.into(), state);
            }
            None => {
                self.locks.remove(key);
            }
        }
    }

    /// Takes every parked request (the partition moved away: they are answered "retry").
    pub fn take_all_parked(&mut self) -> Vec<Parked> {
        self.parked.drain().flat_map(|(_, queue)| queue).collect()
    }

    /// Whether `owner` holds the lock on `key`.
    pub fn held_by(&self, key: &[u8], owner: LockOwner) -> bool {
        self.locks.get(key).is_some_and(|lock| lock.owner == owner)
    }

    /// Whether `owner` may write `key`: it is unlocked or `owner` holds it.
    pub fn may_write(&self, key: &[u8], owner: LockOwner) -> bool {
        self.locks.get(key).is_none_or(|lock| lock.owner == owner)
    }

    /// Takes (or re-enters) the lock; false if someone else holds it.
    pub fn acquire(&mut self, key: &[u8], owner: LockOwner, lease_ms: i64, now_ms: i64) -> bool {
        let lease_deadline_ms = if lease_ms > 0 { now_ms.saturating_add(lease_ms) } else { NEVER };
        match self.locks.get_mut(key) {
            Some(lock) if lock.owner != owner => false,
            Some(lock) => {
                lock.count += 1;
                lock.lease_deadline_ms = lease_deadline_ms;
                self.note(key);
                true
            }
            None => {
                self.locks.insert(key.into(), LockState { owner, count: 1, lease_deadline_ms });
                self.note(key);
                true
            }
        }
    }

    /// Releases one acquisition; when the last goes, returns the parked requests to re-run.
    pub fn unlock(&mut self, key: &[u8], owner: LockOwner) -> Result<VecDeque<Parked>, NotOwner> {
        let lock = self.locks.get_mut(key).filter(|lock| lock.owner == owner).ok_or(NotOwner)?;
        lock.count -= 1;
        if lock.count > 0 {
            self.note(key);
            return Ok(VecDeque::new());
        }
        Ok(self.release(key))
    }

    /// Releases the lock whoever holds it; returns the parked requests to re-run.
    pub fn release(&mut self, key: &[u8]) -> VecDeque<Parked> {
        if self.locks.remove(key).is_some() {
            self.note(key);
        }
        self.parked.remove(key).unwrap_or_default()
    }

    /// Releases a lock whose lease has passed; returns the parked requests to re-run.
    pub fn expire_lease(&mut self, key: &[u8], now_ms: i64) -> VecDeque<Parked> {
        match self.locks.get(key) {
            Some(lock) if now_ms >= lock.lease_deadline_ms => self.release(key),
            _ => VecDeque::new(),
        }
    }

    /// The lease deadline of a held lock (for the reactor's timer).
    pub fn lease_deadline(&self, key: &[u8]) -> Option<i64> {
        self.locks.get(key).map(|lock| lock.lease_deadline_ms).filter(|deadline| *deadline != NEVER)
    }

    /// Parks a request on `key`; false (and the request dropped) if `max_parked` requests
    /// already wait on it (`max-parked-per-key`: more are refused rather than queued without
    /// bound).
    pub fn park(&mut self, key: &[u8], parked: Parked, max_parked: usize) -> bool {
        let queue = self.parked.entry(key.into()).or_default();
        if queue.len() >= max_parked {
            return false;
        }
        queue.push_back(parked);
        true
    }

    /// Removes parked requests whose deadline has passed.
    pub fn take_timed_out(&mut self, key: &[u8], now_ms: i64) -> Vec<Parked> {
        let Some(queue) = self.parked.get_mut(key) else { return Vec::new() };
        let (timed_out, waiting): (VecDeque<Parked>, VecDeque<Parked>) =
            std::mem::take(queue).into_iter().partition(|parked| now_ms >= parked.deadline_ms);
        *queue = waiting;
        if queue.is_empty() {
            self.parked.remove(key);
        }
        timed_out.into()
    }

    /// Releases every lock `client` holds (it disconnected); returns the keys released with
    /// their parked requests.
    pub fn release_client(&mut self, client: Uuid) -> Vec<(Box<[u8]>, VecDeque<Parked>)> {
        let keys: Vec<Box<[u8]>> =
            self.locks.iter().filter(|(_, lock)| lock.owner.client == client).map(|(key, _)| key.clone()).collect();
        keys.into_iter().map(|key| (key.clone(), self.release(&key))).collect()
    }
}

/// The keys an object changed since its owner last sent its backups, recorded only while the
/// owner has backups (`set_track`); shared by the key locks and a map's staged changes.
#[derive(Debug, Default)]
pub struct ChangedKeys {
    keys: Vec<Box<[u8]>>,
    track: bool,
}

impl ChangedKeys {
    pub fn note(&mut self, key: &[u8]) {
        if self.track {
            self.keys.push(key.into());
        }
    }

    pub fn set_track(&mut self, track: bool) {
        self.track = track;
        if !track {
            self.keys.clear();
        }
    }

    /// The keys noted since the last call, each once; hand the vector back with
    /// [`ChangedKeys::restore`] to keep its allocation.
    pub fn take(&mut self) -> Vec<Box<[u8]>> {
        let mut keys = std::mem::take(&mut self.keys);
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    pub fn restore(&mut self, mut keys: Vec<Box<[u8]>>) {
        keys.clear();
        if self.keys.is_empty() {
            self.keys = keys;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::map::request::MapOp;

    const ALICE: LockOwner = LockOwner { client: Uuid { most: 1, least: 1 }, thread_id: 7 };
    const BOB: LockOwner = LockOwner { client: Uuid { most: 2, least: 2 }, thread_id: 7 };

    #[test]
    fn reentrant_lock_needs_as_many_unlocks() {
        let mut table = LockTable::default();
        assert!(table.acquire(b"k", ALICE, -1, 0));
        assert!(table.acquire(b"k", ALICE, -1, 0));
        assert!(!table.acquire(b"k", BOB, -1, 0));
        assert!(!table.may_write(b"k", BOB));
        assert!(table.may_write(b"k", ALICE));
        assert_eq!(table.unlock(b"k", BOB).unwrap_err(), NotOwner);
        assert!(table.unlock(b"k", ALICE).is_ok());
        assert!(table.is_locked(b"k"));
        assert!(table.unlock(b"k", ALICE).is_ok());
        assert!(!table.is_locked(b"k"));
        assert!(table.is_empty());
    }

    #[test]
    fn lease_expires() {
        let mut table = LockTable::default();
        table.acquire(b"k", ALICE, 100, 1_000);
        assert_eq!(table.lease_deadline(b"k"), Some(1_100));
        assert!(table.expire_lease(b"k", 1_099).is_empty());
        assert!(table.is_locked(b"k"));
        table.expire_lease(b"k", 1_100);
        assert!(!table.is_locked(b"k"));
    }

    /// Bob's request on key `k`, parked as `id` until `deadline_ms`.
    fn parked(id: u64, deadline_ms: i64) -> Parked {
        let op =
            MapOp::Lock { key: b"k".to_vec().into(), thread_id: BOB.thread_id, lease_ms: -1, try_timeout_ms: None };
        Parked {
            id: WaiterId(id),
            source: BOB.client,
            counter_slot: 0,
            partition_id: PartitionId(0),
            request: Waiting::Map(MapRequest { name: "m".into(), op }),
            deadline_ms,
        }
    }

    fn ids(parked: impl IntoIterator<Item = Parked>) -> Vec<WaiterId> {
        parked.into_iter().map(|parked| parked.id).collect()
    }

    #[test]
    fn parking_stops_at_the_configured_bound() {
        let mut table = LockTable::default();
        table.acquire(b"k", BOB, -1, 0);
        for id in 0..3 {
            assert!(table.park(b"k", parked(id, NEVER), 3));
        }
        assert!(!table.park(b"k", parked(3, NEVER), 3), "the fourth waiter is refused");
        assert!(table.park(b"other", parked(4, NEVER), 3), "the bound is per key");
        assert_eq!(ids(table.release(b"k")), [WaiterId(0), WaiterId(1), WaiterId(2)]);
    }

    #[test]
    fn a_second_owner_parks_and_the_unlock_releases_its_id() {
        let mut table = LockTable::default();
        assert!(table.acquire(b"k", ALICE, -1, 0));
        assert!(!table.acquire(b"k", BOB, -1, 0), "held by Alice: Bob's lock parks");
        assert!(table.park(b"k", parked(7, NEVER), 8));
        assert!(table.take_timed_out(b"k", i64::MAX - 1).is_empty(), "no deadline");
        assert!(table.acquire(b"k", ALICE, -1, 0), "reentrant");
        assert!(table.unlock(b"k", ALICE).unwrap().is_empty(), "still held once");
        let released = table.unlock(b"k", ALICE).unwrap();
        assert_eq!(ids(released), [WaiterId(7)], "the parked id, to re-run");
        assert!(!table.is_locked(b"k"));
        assert!(table.acquire(b"k", BOB, -1, 0), "the re-run takes the lock");
    }

    #[test]
    fn a_parked_request_times_out_by_its_id() {
        let mut table = LockTable::default();
        table.acquire(b"k", ALICE, -1, 0);
        assert!(table.park(b"k", parked(1, 100), 8));
        assert!(table.park(b"k", parked(2, NEVER), 8));
        assert!(table.take_timed_out(b"k", 99).is_empty());
        assert_eq!(ids(table.take_timed_out(b"k", 100)), [WaiterId(1)]);
        assert_eq!(ids(table.release(b"k")), [WaiterId(2)], "the other still waits");
    }

    #[test]
    fn client_release_frees_only_its_locks() {
        let mut table = LockTable::default();
        table.acquire(b"a", ALICE, -1, 0);
        table.acquire(b"b", BOB, -1, 0);
        let released = table.release_client(ALICE.client);
        assert_eq!(released.len(), 1);
        assert!(!table.is_locked(b"a"));
        assert!(table.is_locked(b"b"));
    }
}
