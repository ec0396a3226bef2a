//! A map's transactional changes in one partition, not yet committed: per key, the
//! transaction that holds the key's lock and what it will do to the key at commit (nothing but
//! keep the lock, set a value, or remove it). Owned by the partition's reactor, beside the
//! map's entries and locks. A key has at most one transaction's change: the transaction holds
//! the key's lock from its first write (or getForUpdate) to its end, so no other may stage it.
//! Only the transaction itself sees its changes (it reads its own writes); everyone else reads
//! the committed entries until the commit applies them.
//!
//! Staged changes are part of what the partition's backups and snapshots carry (`store.rs`):
//! while the owner has backups, every key staged or unstaged (commit, rollback) is recorded,
//! so a promoted backup or a migrated partition holds the transaction's changes with its lock.

use crate::cluster::peer::{put_bytes, Malformed, Reader};
use crate::engine::locks::{ChangedKeys, LockOwner, LockTable};
use ahash::RandomState;
use ferrogrid_protocol::Uuid;
use std::collections::HashMap;

/// What a transaction will do to a key at commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Nothing: the key is only locked (getForUpdate, or a conditional write that did not
    /// apply).
    Locked,
    /// Set the value (with its ttl: −1 the map's default, 0 never).
    Set {
        value: Box<[u8]>,
        ttl_ms: i64,
    },
    Removed,
}

/// One key's staged change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedChange {
    pub txn: Uuid,
    /// Who holds the key's lock for the transaction (its client and thread).
    pub owner: LockOwner,
    /// Whether others' plain reads of the key wait for the transaction's end (TWO_PHASE).
    pub blocks_reads: bool,
    pub change: Change,
}

const LOCKED: u8 = 0;
const SET: u8 = 1;
const REMOVED: u8 = 2;

impl StagedChange {
    /// Appends the change as backup and snapshot records carry it:
    /// `txn u128 | client u128 | thread id i64 | blocks reads u8 (0, 1) | change u8` and, for
    /// SET (1), `value bytes | ttl i64` (LOCKED 0 and REMOVED 2 carry nothing more).
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.txn.as_u128().to_le_bytes());
        out.extend_from_slice(&self.owner.client.as_u128().to_le_bytes());
        out.extend_from_slice(&self.owner.thread_id.to_le_bytes());
        out.push(u8::from(self.blocks_reads));
        match &self.change {
            Change::Locked => out.push(LOCKED),
            Change::Set { value, ttl_ms } => {
                out.push(SET);
                put_bytes(out, value);
                out.extend_from_slice(&ttl_ms.to_le_bytes());
            }
            Change::Removed => out.push(REMOVED),
        }
    }

    /// Reads what [`StagedChange::write`] wrote.
    pub fn read(reader: &mut Reader<'_>) -> Result<StagedChange, Malformed> {
        let txn = Uuid::from_u128(reader.u128()?);
        let owner = LockOwner { client: Uuid::from_u128(reader.u128()?), thread_id: reader.i64()? };
        let blocks_reads = match reader.u8()? {
            0 => false,
            1 => true,
            _ => return Err(Malformed::Refused("a staged change's blocks-reads flag is neither 0 nor 1")),
        };
        let change = match reader.u8()? {
            LOCKED => Change::Locked,
            SET => Change::Set { value: reader.bytes()?.into(), ttl_ms: reader.i64()? },
            REMOVED => Change::Removed,
            _ => return Err(Malformed::Refused("a staged change of an unknown kind")),
        };
        Ok(StagedChange { txn, owner, blocks_reads, change })
    }
}

/// The staged changes of one map in one partition.
#[derive(Debug, Default)]
pub struct Staged {
    changes: HashMap<Box<[u8]>, StagedChange, RandomState>,
    /// Keys staged or unstaged since the owner last sent backups.
    changed: ChangedKeys,
}

impl Staged {
    fn note(&mut self, key: &[u8]) {
        self.changed.note(key);
    }

    /// Starts or stops recording which keys are staged or unstaged (on while the owner has
    /// backups).
    pub fn set_track(&mut self, track: bool) {
        self.changed.set_track(track);
    }

    /// Calls `write` with each key staged or unstaged since the last call and its change as
    /// it is now (None: unstaged), for a backup record.
    pub fn write_changed(&mut self, mut write: impl FnMut(&[u8], Option<&StagedChange>)) {
        let keys = self.changed.take();
        for key in &keys {
            write(key, self.changes.get(key));
        }
        self.changed.restore(keys);
    }

    /// Every staged change (a snapshot).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &StagedChange)> {
        self.changes.iter().map(|(key, staged)| (&**key, staged))
    }

    /// Sets the change of `key` as a backup or snapshot carries it (None: unstaged). Nothing
    /// is recorded.
    pub fn apply(&mut self, key: &[u8], staged: Option<StagedChange>) {
        match staged {
            Some(staged) => {
                self.changes.insert(key.into(), staged);
            }
            None => {
                self.changes.remove(key);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// `txn`'s change of `key`, if it staged one.
    pub fn of(&self, txn: Uuid, key: &[u8]) -> Option<&Change> {
        self.changes.get(key).filter(|staged| staged.txn == txn).map(|staged| &staged.change)
    }

    /// Records a transaction's change of `key`, replacing any earlier one (its own, or of a
    /// transaction whose lock expired).
    pub fn stage(&mut self, key: &[u8], staged: StagedChange) {
        self.changes.insert(key.into(), staged);
        self.note(key);
    }

    /// Whether a plain read by `client` of `key` waits: another client's TWO_PHASE transaction
    /// staged it and still holds its lock in `locks` (a change whose lock's lease ran out, or
    /// whose unstage a promoted backup never got, holds up no one).
    pub fn blocks_read(&self, key: &[u8], client: Uuid, locks: &LockTable) -> bool {
        self.changes.get(key).is_some_and(|staged| {
            staged.blocks_reads && staged.owner.client != client && locks.held_by(key, staged.owner)
        })
    }

    /// `txn`'s changes, in no particular order.
    pub fn changes_of(&self, txn: Uuid) -> impl Iterator<Item = (&[u8], &Change)> {
        self.changes.iter().filter(move |(_, staged)| staged.txn == txn).map(|(key, staged)| (&**key, &staged.change))
    }

    /// Removes and returns `txn`'s changes (its commit or rollback).
    pub fn take(&mut self, txn: Uuid) -> Vec<(Box<[u8]>, StagedChange)> {
        let keys: Vec<Box<[u8]>> =
            self.changes.iter().filter(|(_, staged)| staged.txn == txn).map(|(key, _)| key.clone()).collect();
        for key in &keys {
            self.note(key);
        }
        keys.into_iter().filter_map(|key| self.changes.remove_entry(&key)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_sees_and_takes_only_its_own_changes() {
        let (one, two) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let owner = LockOwner { client: Uuid::from_u128(5), thread_id: 7 };
        let change = |txn, blocks_reads, change| StagedChange { txn, owner, blocks_reads, change };
        let mut staged = Staged::default();
        staged.stage(b"a", change(one, false, Change::Set { value: b"x".to_vec().into(), ttl_ms: -1 }));
        staged.stage(b"b", change(two, true, Change::Removed));
        staged.stage(b"a", change(one, false, Change::Removed));
        let mut locks = LockTable::default();
        assert!(!staged.blocks_read(b"b", Uuid::from_u128(6), &locks), "its lock is gone (a lease ran out)");
        assert!(locks.acquire(b"a", owner, -1, 0) && locks.acquire(b"b", owner, -1, 0));
        assert!(!staged.blocks_read(b"a", Uuid::from_u128(6), &locks), "a ONE_PHASE transaction's key");
        assert!(staged.blocks_read(b"b", Uuid::from_u128(6), &locks), "a TWO_PHASE transaction's key");
        assert!(!staged.blocks_read(b"b", owner.client, &locks), "its own client reads on");
        assert_eq!(staged.of(one, b"a"), Some(&Change::Removed), "a later change replaces the earlier");
        assert_eq!(staged.of(two, b"a"), None);
        assert_eq!(staged.changes_of(two).count(), 1);
        let taken = staged.take(one);
        assert_eq!(taken.len(), 1);
        assert_eq!((&*taken[0].0, taken[0].1.owner), (&b"a"[..], owner));
        assert!(!staged.is_empty());
        staged.take(two);
        assert!(staged.is_empty());
    }
}
