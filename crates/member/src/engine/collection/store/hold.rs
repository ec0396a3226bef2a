//! The transactions' holds of a list or set (`TxnHold`, used by `collection/txn.rs`): how the
//! owner changes them, and how its backups and snapshots carry them (record layouts: the
//! constants in `store.rs`).
//!
//! While the owner has backups, every change of a hold is recorded: an add staged (STAGE_ADD),
//! the transaction's own add dropped again (UNSTAGE_ADD), an item reserved (RESERVE) and the
//! hold's end (END). A backup replays them in the owner's order, so it holds what the owner
//! holds: a promoted backup gets the commit (TxnEnd goes to the partition's owner) and applies
//! the adds and removals once. END drops the hold, its adds and reserved items with it, on a
//! commit and a rollback alike: the items the owner's commit adds, and those its rollback puts
//! back, follow as INSERT or ADD_VALUE records, where they went on the owner. A snapshot
//! carries each hold's reserved items (HELD) and staged adds (STAGE_ADD).
//!
//! A backup may apply a body twice (and a body already in a snapshot it got). Every record
//! leaves the same state when applied again: adds and reservations are named by ids from the
//! store's `next_id`, and one already held is not taken again; a set's RESERVE of a value
//! already held takes the value out of the items again (a body may add it back before it, as
//! the owner's did not); an END, or an UNSTAGE_ADD, of a hold no longer there finds nothing.
//! (Why END does not put a rollback's items back itself: applied again, END would put them
//! back a second time, after items the first pass had placed since.) A whole body applied
//! twice leaves what applying it once does, but for one case: a body holding both a list
//! item's RESERVE and the END of its rollback takes the item out again and puts it back
//! where the owner put it then, possibly in front of items placed after it since. No body
//! holds both: the owner writes one per operation (`cluster/replication/backups.rs`), and a
//! reservation and its transaction's end are different operations.

use super::{Change, CollectionStore, Items, Reserved, StagedAdd, TxnHold};
use super::{END, HELD, RESERVE, STAGE_ADD, UNSTAGE_ADD};
use crate::cluster::peer::{put_bytes, Malformed, Reader, SnapshotWriter};
use ferrogrid_protocol::Uuid;

impl TxnHold {
    fn is_empty(&self) -> bool {
        self.adds.is_empty() && self.reserved.is_empty()
    }
}

/// The owner's changes of the holds, for `txn.rs`.
impl CollectionStore {
    /// How many adds and reserved items the open transactions hold (they take room).
    pub(in crate::engine::collection) fn held_count(&self) -> usize {
        self.txns.iter().map(|hold| hold.adds.len() + hold.reserved.len()).sum()
    }

    /// The values transaction `txn` added, in order.
    pub(in crate::engine::collection) fn own_adds(&self, txn: Uuid) -> impl Iterator<Item = &[u8]> {
        self.txns.iter().filter(move |hold| hold.txn == txn).flat_map(|hold| hold.adds.iter().map(|add| &*add.value))
    }

    /// Stages transaction `txn`'s add of `value`, seen by no one else until its commit.
    pub(in crate::engine::collection) fn stage_add(&mut self, txn: Uuid, value: &[u8]) {
        let id = self.next_id;
        self.next_id += 1;
        self.hold_mut(txn).adds.push(StagedAdd { id, value: value.into() });
        self.record(Change::StagedAdd { txn, id });
    }

    /// Drops transaction `txn`'s first staged add of `value` (its remove of it); whether it had
    /// one. A hold left empty goes.
    pub(in crate::engine::collection) fn unstage_add(&mut self, txn: Uuid, value: &[u8]) -> bool {
        let Some(at) = self.hold_index(txn) else { return false };
        let hold = &mut self.txns[at];
        let Some(index) = hold.adds.iter().position(|add| *add.value == *value) else { return false };
        let id = hold.adds.remove(index).id;
        if hold.is_empty() {
            self.txns.swap_remove(at);
        }
        self.record(Change::UnstagedAdd { txn, id });
        true
    }

    /// Reserves the first item equal to `value` for transaction `txn`'s remove: out of the
    /// items (nobody else sees it), still counted in `held_bytes`. Whether there was one.
    pub(in crate::engine::collection) fn reserve(&mut self, txn: Uuid, value: &[u8]) -> bool {
        let reserved = match &mut self.items {
            Items::List(items) => {
                let Some(index) = items.iter().position(|item| *item.value == *value) else { return false };
                let after = index.checked_sub(1).map_or(0, |before| items[before].id);
                let item = items.remove(index);
                self.record(Change::ReservedId { txn, id: item.id, after });
                Reserved { id: item.id, after, value: item.value }
            }
            Items::Set(items) => {
                let Some(value) = items.take(value) else { return false };
                let id = self.next_id;
                self.next_id += 1;
                if self.track_changes {
                    self.record(Change::ReservedValue { txn, id, value: value.clone() });
                }
                Reserved { id, after: 0, value }
            }
        };
        self.hold_mut(txn).reserved.push(reserved);
        true
    }

    /// Takes transaction `txn`'s hold for its commit or rollback (recorded for the backups,
    /// before what the commit or rollback then does to the items); None if it holds nothing
    /// here.
    pub(in crate::engine::collection) fn take_hold(&mut self, txn: Uuid) -> Option<TxnHold> {
        let index = self.hold_index(txn)?;
        self.record(Change::Ended(txn));
        Some(self.txns.swap_remove(index))
    }

    /// Puts a rolled-back hold's reserved items back: the last reserved first, so that each
    /// goes back after the item it followed (recorded for the backups).
    pub(in crate::engine::collection) fn restore_all(&mut self, reserved: Vec<Reserved>) {
        reserved.into_iter().rev().for_each(|reserved| self.restore(reserved));
    }

    fn hold_index(&self, txn: Uuid) -> Option<usize> {
        self.txns.iter().position(|hold| hold.txn == txn)
    }

    /// Transaction `txn`'s hold, made if it has none.
    fn hold_mut(&mut self, txn: Uuid) -> &mut TxnHold {
        let index = match self.hold_index(txn) {
            Some(index) => index,
            None => {
                self.txns.push(TxnHold { txn, ..Default::default() });
                self.txns.len() - 1
            }
        };
        &mut self.txns[index]
    }

    /// Whether a transaction holds the reserved item (or set reservation) `id`.
    pub(super) fn reserved_id(&self, id: u64) -> bool {
        self.txns.iter().flat_map(|hold| &hold.reserved).any(|reserved| reserved.id == id)
    }
}

/// The backups' side: writing and applying the hold records.
impl CollectionStore {
    /// Appends the record of one change of a hold. A staged add gone before the backups heard
    /// of it is skipped: its UNSTAGE_ADD or END follows.
    pub(super) fn write_hold_change(&self, body: &mut Vec<u8>, change: Change) {
        match change {
            Change::StagedAdd { txn, id } => {
                let adds = self.txns.iter().filter(|hold| hold.txn == txn).flat_map(|hold| &hold.adds);
                if let Some(add) = adds.into_iter().find(|add| add.id == id) {
                    put_stage_add(body, txn, add);
                }
            }
            Change::UnstagedAdd { txn, id } => {
                put_txn(body, UNSTAGE_ADD, txn);
                body.extend_from_slice(&id.to_le_bytes());
            }
            Change::ReservedId { txn, id, after } => {
                put_txn(body, RESERVE, txn);
                body.extend_from_slice(&id.to_le_bytes());
                body.extend_from_slice(&after.to_le_bytes());
            }
            Change::ReservedValue { txn, id, value } => {
                put_txn(body, RESERVE, txn);
                body.extend_from_slice(&id.to_le_bytes());
                put_bytes(body, &value);
            }
            Change::Ended(txn) => put_txn(body, END, txn),
            Change::Inserted { .. }
            | Change::Replaced(_)
            | Change::RemovedId(_)
            | Change::AddedValue(_)
            | Change::RemovedValue(_) => unreachable!("an item's change is written by write_changes"),
        }
    }

    /// A snapshot's part of the holds: per hold, in order, a HELD per reserved item and a
    /// STAGE_ADD per add (in their order: a rollback restores, a commit adds, in that order).
    pub(super) fn write_holds(&self, writer: &mut SnapshotWriter<'_>) {
        let list = matches!(self.items, Items::List(_));
        for hold in &self.txns {
            for reserved in &hold.reserved {
                writer.entry(|out| {
                    put_txn(out, HELD, hold.txn);
                    out.extend_from_slice(&reserved.id.to_le_bytes());
                    if list {
                        out.extend_from_slice(&reserved.after.to_le_bytes());
                    }
                    put_bytes(out, &reserved.value);
                });
            }
            for add in &hold.adds {
                writer.entry(|out| put_stage_add(out, hold.txn, add));
            }
        }
    }

    /// Applies one hold record (STAGE_ADD to HELD), whose kind `reader` has read; a snapshot's
    /// (not `removals`) holds STAGE_ADD and HELD only.
    pub(super) fn apply_hold_record(
        &mut self,
        kind: u8,
        reader: &mut Reader<'_>,
        removals: bool,
    ) -> Result<(), Malformed> {
        if !removals && !matches!(kind, STAGE_ADD | HELD) {
            return Err(Malformed::Refused("a collection snapshot holds a removal"));
        }
        let txn = Uuid::from_u128(reader.u128()?);
        let list = matches!(self.items, Items::List(_));
        match kind {
            STAGE_ADD => {
                let id = reader.u64()?;
                self.apply_stage_add(txn, StagedAdd { id, value: reader.bytes()?.into() });
            }
            UNSTAGE_ADD => self.apply_unstage_add(txn, reader.u64()?),
            RESERVE if list => {
                let (id, after) = (reader.u64()?, reader.u64()?);
                self.apply_reserve_id(txn, id, after);
            }
            RESERVE => {
                let id = reader.u64()?;
                self.apply_reserve_value(txn, id, reader.bytes()?);
            }
            END => self.apply_end(txn),
            HELD => {
                let id = reader.u64()?;
                let after = if list { reader.u64()? } else { 0 };
                self.apply_held(txn, Reserved { id, after, value: reader.bytes()?.into() });
            }
            other => unreachable!("apply_records passes hold records only, not {other}"),
        }
        Ok(())
    }

    /// Stages `add` for `txn`, unless a hold has it already.
    fn apply_stage_add(&mut self, txn: Uuid, add: StagedAdd) {
        self.next_id = self.next_id.max(add.id.saturating_add(1));
        if !self.txns.iter().flat_map(|hold| &hold.adds).any(|held| held.id == add.id) {
            self.hold_mut(txn).adds.push(add);
        }
    }

    /// Drops `txn`'s add `id`, if it holds it; a hold left empty goes.
    fn apply_unstage_add(&mut self, txn: Uuid, id: u64) {
        let Some(at) = self.hold_index(txn) else { return };
        self.txns[at].adds.retain(|add| add.id != id);
        if self.txns[at].is_empty() {
            self.txns.swap_remove(at);
        }
    }

    /// Moves list item `id` into `txn`'s hold, remembering the owner's `after`. Nothing if a
    /// hold has it already, or if it is gone (a body applied again after its commit: its END
    /// follows and finds no hold).
    fn apply_reserve_id(&mut self, txn: Uuid, id: u64, after: u64) {
        self.next_id = self.next_id.max(id.saturating_add(1));
        if self.reserved_id(id) {
            return;
        }
        let Items::List(items) = &mut self.items else { unreachable!("checked a list") };
        let Some(index) = items.iter().position(|item| item.id == id) else { return };
        let value = items.remove(index).value;
        self.hold_mut(txn).reserved.push(Reserved { id, after, value });
    }

    /// Makes `value` reserved by `txn` as reservation `id`, and not among the items: taken
    /// out of them (or, if they lack it, counted anew), or, if the reservation is held
    /// already, taken out again.
    fn apply_reserve_value(&mut self, txn: Uuid, id: u64, value: &[u8]) {
        self.next_id = self.next_id.max(id.saturating_add(1));
        let held = self.reserved_id(id);
        let Items::Set(items) = &mut self.items else { unreachable!("checked a set") };
        let taken = items.take(value);
        match (held, taken) {
            (true, Some(taken)) => self.held_bytes -= taken.len(),
            (true, None) => {}
            (false, taken) => {
                let value = taken.unwrap_or_else(|| {
                    self.held_bytes += value.len();
                    value.into()
                });
                self.hold_mut(txn).reserved.push(Reserved { id, after: 0, value });
            }
        }
    }

    /// Holds `reserved` for `txn` (a snapshot's reserved item), unless a hold has it already.
    fn apply_held(&mut self, txn: Uuid, reserved: Reserved) {
        self.next_id = self.next_id.max(reserved.id.saturating_add(1));
        if !self.reserved_id(reserved.id) {
            self.held_bytes += reserved.value.len();
            self.hold_mut(txn).reserved.push(reserved);
        }
    }

    /// Drops `txn`'s hold, its reserved items and adds with it (the records that follow put
    /// back what the owner's rollback put back, and add what its commit added).
    fn apply_end(&mut self, txn: Uuid) {
        let Some(index) = self.hold_index(txn) else { return };
        let hold = self.txns.swap_remove(index);
        hold.reserved.iter().for_each(|reserved| self.remove_reserved(reserved));
    }
}

fn put_txn(out: &mut Vec<u8>, kind: u8, txn: Uuid) {
    out.push(kind);
    out.extend_from_slice(&txn.as_u128().to_le_bytes());
}

fn put_stage_add(out: &mut Vec<u8>, txn: Uuid, add: &StagedAdd) {
    put_txn(out, STAGE_ADD, txn);
    out.extend_from_slice(&add.id.to_le_bytes());
    put_bytes(out, &add.value);
}

/// What a backup must hold equal to its owner: the items (a list's in order, with ids; a
/// set's sorted), the holds (by transaction) and `held_bytes`.
#[cfg(test)]
#[derive(Debug, PartialEq, Eq)]
pub(in crate::engine::collection) struct Image {
    items: Vec<(u64, Box<[u8]>)>,
    holds: Vec<TxnHold>,
    held_bytes: usize,
}

#[cfg(test)]
impl CollectionStore {
    pub(in crate::engine::collection) fn image(&self) -> Image {
        let mut items: Vec<(u64, Box<[u8]>)> = match &self.items {
            Items::List(items) => items.iter().map(|item| (item.id, item.value.clone())).collect(),
            Items::Set(items) => items.iter().map(|value| (0, value.clone())).collect(),
        };
        if self.is_set() {
            items.sort();
        }
        let mut holds = self.txns.clone();
        holds.sort_by_key(|hold| hold.txn);
        let counted = items.iter().map(|(_, value)| value.len()).sum::<usize>()
            + self.txns.iter().flat_map(|hold| &hold.reserved).map(|reserved| reserved.value.len()).sum::<usize>();
        assert_eq!(counted, self.held_bytes, "held_bytes counts the items and the reserved items");
        assert!(self.txns.iter().all(|hold| !hold.is_empty()), "no hold is empty");
        Image { items, holds, held_bytes: self.held_bytes }
    }
}
