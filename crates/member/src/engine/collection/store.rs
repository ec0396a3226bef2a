//! Lists and sets (`IList`, `ISet`): the items of one named collection, in the partition of
//! its name, with synchronous backups and migration through [`PartitionObject`].
//!
//! A list keeps its items in order, each with an id from a per-list counter; backups insert
//! an item after the item it follows (by id), replace and remove by id, so applying a change
//! twice is harmless and a backup keeps the owner's order. A set keeps its items in a hash
//! set (no order, as in Hazelcast); its backups add and remove by value, which is idempotent
//! as it is.
//!
//! The open transactions' holds (their staged adds and the items their removes reserved,
//! `txn.rs`) are part of what the backups and snapshots carry (`store/hold.rs`), so a promoted
//! backup or a migrated partition holds them and the commit that then reaches it applies them
//! once. Invariants: `held_bytes` counts the items and the reserved items (not the staged
//! adds); a list's ids are unique across its items, reserved items and staged adds; no hold is
//! empty.
//!
//! Owned by the reactor that owns the partition; no locks.

use crate::cluster::peer::{put_bytes, Malformed, Reader, SnapshotWriter};
use crate::engine::collection::request::CollectionOp;
use crate::engine::listeners::{ItemEventKind, Listeners, Registry};
use crate::engine::request::{Blob, ErrorKind, OpError, Reply};
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::net::outbox::Outbox;
use crate::partition::object::PartitionObject;
use ahash::RandomState;
use ferrogrid_config::CollectionConfig;
use ferrogrid_protocol::{Data, PartitionId, Uuid};

mod hold;

/// One item of a list: its id (for backups) and its serialized value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    id: u64,
    value: Box<[u8]>,
}

/// The items: a list's in order, a set's unique.
#[derive(Debug)]
enum Items {
    List(Vec<Item>),
    Set(hashbrown::HashSet<Box<[u8]>, RandomState>),
}

/// What one transaction holds of a list or set (`txn.rs`): its adds, staged until its commit
/// and seen by no one else, and the items its removes reserved: out of `items` (nobody else
/// sees them) and still counted in `held_bytes` until the commit removes them; a rollback puts
/// them back (a list's after the item it followed). The backups hold it too (`store/hold.rs`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct TxnHold {
    pub(super) txn: Uuid,
    pub(super) adds: Vec<StagedAdd>,
    pub(super) reserved: Vec<Reserved>,
    /// A backup replica heard the transaction end (commit: true) before its owner's records
    /// did: the end is applied when this replica runs an operation as the owner
    /// (`txn.rs`'s `settle_ended`), if the owner's END never came.
    pub(super) ended: Option<bool>,
}

/// A transaction's add, staged until its commit. Its id (from `next_id`, which only needs to
/// be unique) names it in the backups' records, so that applying one twice stages it once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StagedAdd {
    pub(super) id: u64,
    pub(super) value: Box<[u8]>,
}

/// An item a transaction's remove reserved: a list's id and the id of the item it followed
/// (0: none), or a set's value with an id of its own (from `next_id`; after 0), which names the
/// reservation in the backups' records (a set's value may be reserved, added again and
/// reserved again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reserved {
    id: u64,
    after: u64,
    pub(super) value: Box<[u8]>,
}

/// What a backup must do to mirror the owner (values are looked up when written, but a set
/// reservation's: its value may be gone from the hold by then and back in the items).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    /// A list item inserted after the item `after` (0: at the front).
    Inserted {
        id: u64,
        after: u64,
    },
    Replaced(u64),
    RemovedId(u64),
    AddedValue(Box<[u8]>),
    RemovedValue(Box<[u8]>),
    /// Transaction `txn` staged its add `id`.
    StagedAdd {
        txn: Uuid,
        id: u64,
    },
    /// Transaction `txn` dropped its add `id` again (its remove of it).
    UnstagedAdd {
        txn: Uuid,
        id: u64,
    },
    /// Transaction `txn` reserved the list item `id`, which followed `after`.
    ReservedId {
        txn: Uuid,
        id: u64,
        after: u64,
    },
    /// Transaction `txn` reserved the set's `value` (reservation `id`).
    ReservedValue {
        txn: Uuid,
        id: u64,
        value: Box<[u8]>,
    },
    /// Transaction `txn`'s hold ended (its commit or rollback).
    Ended(Uuid),
}

/// The records of a list's or set's backup and snapshot bodies, one after another (a kind
/// byte, then its fields, little-endian; bytes are a `u32` length and the bytes):
///
/// ```text
/// INSERT       (1) id u64 | after u64 | value bytes        a list item, after item `after` (0: first)
/// REPLACE      (2) id u64 | value bytes                    a list item's new value
/// REMOVE_ID    (3) id u64                                  a list item removed
/// ADD_VALUE    (4) value bytes                             a set item
/// REMOVE_VALUE (5) value bytes                             a set item removed
/// STAGE_ADD    (6) txn u128 | id u64 | value bytes         a transaction's staged add
/// UNSTAGE_ADD  (7) txn u128 | id u64                       the add dropped again
/// RESERVE      (8) list: txn u128 | id u64 | after u64     the item `id` moved into the hold
///                  set:  txn u128 | id u64 | value bytes   the value moved into the hold
/// END          (9) txn u128                                the hold's end
/// HELD        (10) list: txn u128 | id u64 | after u64 | value bytes   a reserved item
///                  set:  txn u128 | id u64 | value bytes
/// ```
///
/// A snapshot holds INSERT or ADD_VALUE per item, then per hold a HELD per reserved item and a
/// STAGE_ADD per add, in the owner's order; the kinds that take something away (3, 5, 7, 8, 9)
/// are refused there. What each does to a backup, and why applying it twice is harmless, is
/// in `store/hold.rs`.
const INSERT: u8 = 1;
const REPLACE: u8 = 2;
const REMOVE_ID: u8 = 3;
const ADD_VALUE: u8 = 4;
const REMOVE_VALUE: u8 = 5;
const STAGE_ADD: u8 = 6;
const UNSTAGE_ADD: u8 = 7;
const RESERVE: u8 = 8;
const END: u8 = 9;
const HELD: u8 = 10;

/// One list or set in one partition.
#[derive(Debug)]
pub struct CollectionStore {
    items: Items,
    next_id: u64,
    config: CollectionConfig,
    held_bytes: usize,
    track_changes: bool,
    changed: Vec<Change>,
    /// The open transactions' adds and reservations, one hold per transaction (`txn.rs`).
    pub(super) txns: Vec<TxnHold>,
}

/// What an operation needs besides its collection: owned by the reactor, lent per operation.
pub(crate) struct CollectionContext<'a> {
    pub name: &'a str,
    pub member: Uuid,
    pub partition_id: PartitionId,
    pub listeners: &'a mut Listeners,
    pub outbox: &'a mut Outbox,
}

impl std::fmt::Debug for CollectionContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollectionContext").field("name", &self.name).finish()
    }
}

fn null_check(value: &[u8]) -> Result<(), OpError> {
    match Data(value).type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(OpError::new(ErrorKind::NullArgument, "Null item is not allowed!")),
    }
}

impl CollectionStore {
    pub(crate) fn new(config: CollectionConfig, set: bool) -> CollectionStore {
        let items = if set { Items::Set(Default::default()) } else { Items::List(Vec::new()) };
        let (track_changes, changed, txns) = (false, Vec::new(), Vec::new());
        CollectionStore { items, next_id: 1, config, held_bytes: 0, track_changes, changed, txns }
    }

    pub(super) fn registry(&self) -> Registry {
        match self.items {
            Items::List(_) => Registry::ListItems,
            Items::Set(_) => Registry::SetItems,
        }
    }

    pub(crate) fn len(&self) -> usize {
        match &self.items {
            Items::List(items) => items.len(),
            Items::Set(items) => items.len(),
        }
    }

    pub(super) fn capacity(&self) -> usize {
        self.config.capacity() as usize
    }

    pub(super) fn is_set(&self) -> bool {
        matches!(self.items, Items::Set(_))
    }

    fn room(&self) -> usize {
        (self.config.capacity() as usize).saturating_sub(self.len())
    }

    pub(super) fn contains(&self, value: &[u8]) -> bool {
        match &self.items {
            Items::List(items) => items.iter().any(|item| *item.value == *value),
            Items::Set(items) => items.contains(value),
        }
    }

    /// Its items: a list's in order, a set's in no order.
    pub(crate) fn values(&self) -> Vec<&[u8]> {
        match &self.items {
            Items::List(items) => items.iter().map(|item| &*item.value).collect(),
            Items::Set(items) => items.iter().map(|value| &**value).collect(),
        }
    }

    /// Replaces its items with `values` (a split-brain merge's winner: `engine/container_merge.rs`),
    /// for the backups too. As Hazelcast's merge, it ignores `max-size` and publishes no item
    /// events; items reserved by open transactions stay theirs.
    pub(crate) fn replace(&mut self, values: Vec<Box<[u8]>>) {
        self.remove_where(|_| true);
        for value in &values {
            self.insert(value, None);
        }
    }

    fn record(&mut self, change: Change) {
        if self.track_changes {
            self.changed.push(change);
        }
    }

    /// Adds `value` (a list: at `index`, the end if None); false for a set that has it.
    pub(super) fn insert(&mut self, value: &[u8], index: Option<usize>) -> bool {
        let value: Box<[u8]> = value.into();
        let size = value.len();
        match &mut self.items {
            Items::List(items) => {
                let (id, index) = (self.next_id, index.unwrap_or(items.len()));
                self.next_id += 1;
                let after = index.checked_sub(1).map_or(0, |before| items[before].id);
                items.insert(index, Item { id, value });
                self.record(Change::Inserted { id, after });
            }
            Items::Set(items) => {
                if !items.insert(value.clone()) {
                    return false;
                }
                self.record(Change::AddedValue(value));
            }
        }
        self.held_bytes += size;
        true
    }

    /// Puts a reserved item back (a rollback): a list's after the item it followed (at the
    /// front if it followed none, at the end if that item has gone since), recorded for the
    /// backups as an insertion where it went. A set's value added again meanwhile is held once
    /// (and counted once).
    fn restore(&mut self, reserved: Reserved) {
        match &mut self.items {
            Items::List(items) => {
                let place = match reserved.after {
                    0 => 0,
                    after => items.iter().position(|item| item.id == after).map_or(items.len(), |index| index + 1),
                };
                let after = place.checked_sub(1).map_or(0, |before| items[before].id);
                items.insert(place, Item { id: reserved.id, value: reserved.value });
                self.record(Change::Inserted { id: reserved.id, after });
            }
            Items::Set(items) => {
                if items.contains(&reserved.value) {
                    self.held_bytes -= reserved.value.len();
                    return;
                }
                let added = self.track_changes.then(|| reserved.value.clone());
                items.insert(reserved.value);
                if let Some(value) = added {
                    self.record(Change::AddedValue(value));
                }
            }
        }
    }

    /// Removes a reserved item for good (a commit). Nothing is recorded: the END record of
    /// the hold's end removes it from the backups' holds.
    pub(super) fn remove_reserved(&mut self, reserved: &Reserved) {
        self.held_bytes -= reserved.value.len();
    }

    /// Removes the list item at `index`; returns its value.
    fn remove_at(&mut self, index: usize) -> Box<[u8]> {
        let Items::List(items) = &mut self.items else { unreachable!("only lists have positions") };
        let item = items.remove(index);
        self.held_bytes -= item.value.len();
        self.record(Change::RemovedId(item.id));
        item.value
    }

    /// Removes the first item equal to `value`; whether there was one.
    fn remove(&mut self, value: &[u8]) -> bool {
        match &mut self.items {
            Items::List(items) => match items.iter().position(|item| *item.value == *value) {
                Some(index) => {
                    self.remove_at(index);
                    true
                }
                None => false,
            },
            Items::Set(items) => match items.take(value) {
                Some(value) => {
                    self.held_bytes -= value.len();
                    self.record(Change::RemovedValue(value));
                    true
                }
                None => false,
            },
        }
    }

    /// Removes every item `doomed` picks (a list's in order); returns their values.
    fn remove_where(&mut self, doomed: impl Fn(&[u8]) -> bool) -> Vec<Box<[u8]>> {
        let mut removed = Vec::new();
        let mut changes = Vec::new();
        match &mut self.items {
            Items::List(items) => items.retain_mut(|item| {
                let keep = !doomed(&item.value);
                if !keep {
                    changes.push(Change::RemovedId(item.id));
                    removed.push(std::mem::take(&mut item.value));
                }
                keep
            }),
            Items::Set(items) => {
                removed.extend(items.extract_if(|value| doomed(value)));
                changes.extend(removed.iter().map(|value| Change::RemovedValue(value.clone())));
            }
        }
        self.held_bytes -= removed.iter().map(|value| value.len()).sum::<usize>();
        changes.into_iter().for_each(|change| self.record(change));
        removed
    }

    fn list(&self) -> Result<&Vec<Item>, OpError> {
        match &self.items {
            Items::List(items) => Ok(items),
            Items::Set(_) => Err(OpError::new(ErrorKind::IllegalArgument, "a set has no positions")),
        }
    }

    /// `index` of an item (within `0..len`), failing as Java's ArrayList does.
    fn check_index(&self, index: i32) -> Result<usize, OpError> {
        let len = self.list()?.len();
        match usize::try_from(index) {
            Ok(index) if index < len => Ok(index),
            _ => {
                let text = format!("Index {index} out of bounds for length {len}");
                Err(OpError::new(ErrorKind::IndexOutOfBounds, text))
            }
        }
    }

    /// `index` to insert at (within `0..=len`), failing as Java's ArrayList does.
    fn check_insert_index(&self, index: i32) -> Result<usize, OpError> {
        let len = self.list()?.len();
        match usize::try_from(index) {
            Ok(index) if index <= len => Ok(index),
            _ => Err(OpError::new(ErrorKind::IndexOutOfBounds, format!("Index: {index}, Size: {len}"))),
        }
    }

    /// The range of subList(`from`, `to`) with Hazelcast's −1 bounds ((−1, −1): all, `to`
    /// −1: to the end), failing as Java's `subList` does.
    fn check_range(&self, from: i32, to: i32) -> Result<std::ops::Range<usize>, OpError> {
        let len = self.list()?.len() as i64;
        let (from, to) = match (from, to) {
            (-1, -1) => (0, len),
            (from, -1) => (i64::from(from), len),
            (from, to) => (i64::from(from), i64::from(to)),
        };
        if from < 0 {
            return Err(OpError::new(ErrorKind::IndexOutOfBounds, format!("fromIndex = {from}")));
        }
        if to > len {
            return Err(OpError::new(ErrorKind::IndexOutOfBounds, format!("toIndex = {to}")));
        }
        if from > to {
            return Err(OpError::new(ErrorKind::IllegalArgument, format!("fromIndex({from}) > toIndex({to})")));
        }
        Ok(from as usize..to as usize)
    }
}

impl CollectionContext<'_> {
    pub(super) fn publish(&mut self, registry: Registry, kind: ItemEventKind, item: &[u8]) {
        if self.listeners.has_object_listeners(registry, self.name) {
            let origin = (self.member, self.name, self.partition_id);
            self.listeners.publish_item(self.outbox, registry, origin, kind, item);
        }
    }
}

/// Runs one list or set request; its answer goes to `reply` unless it fails.
pub(crate) fn execute(
    store: &mut CollectionStore,
    ctx: &mut CollectionContext<'_>,
    op: &CollectionOp<'_>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<(), OpError> {
    let registry = store.registry();
    match op {
        CollectionOp::Size => reply(Reply::Int(store.len() as i32)),
        CollectionOp::IsEmpty => reply(Reply::Bool(store.len() == 0)),
        CollectionOp::Contains { value } => reply(Reply::Bool(store.contains(value))),
        CollectionOp::ContainsAll { values } => reply(Reply::Bool(values.iter().all(|value| store.contains(value)))),
        CollectionOp::GetAll => reply(Reply::Values(store.values())),
        CollectionOp::Add { value, index } => add(store, ctx, value, *index, reply)?,
        CollectionOp::AddAll { values, index } => add_all(store, ctx, values, *index, reply)?,
        CollectionOp::Remove { value } => {
            let removed = store.remove(value);
            if removed {
                ctx.publish(registry, ItemEventKind::Removed, value);
            }
            reply(Reply::Bool(removed));
        }
        CollectionOp::RemoveAll { values } => {
            let removed = store.remove_where(|item| values.iter().any(|value| **value == *item));
            removed.iter().for_each(|value| ctx.publish(registry, ItemEventKind::Removed, value));
            reply(Reply::Bool(!removed.is_empty()));
        }
        CollectionOp::RetainAll { values } => {
            let removed = store.remove_where(|item| !values.iter().any(|value| **value == *item));
            removed.iter().for_each(|value| ctx.publish(registry, ItemEventKind::Removed, value));
            reply(Reply::Bool(!removed.is_empty()));
        }
        CollectionOp::Clear => {
            let removed = store.remove_where(|_| true);
            removed.iter().for_each(|value| ctx.publish(registry, ItemEventKind::Removed, value));
            reply(Reply::Empty);
        }
        _ => positional(store, ctx, op, reply)?,
    }
    Ok(())
}

/// The list's operations on positions.
fn positional(
    store: &mut CollectionStore,
    ctx: &mut CollectionContext<'_>,
    op: &CollectionOp<'_>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<(), OpError> {
    match op {
        CollectionOp::Get { index } => {
            let index = store.check_index(*index)?;
            reply(Reply::Value(Some(&store.list()?[index].value)));
        }
        CollectionOp::Replace { index, value } => {
            null_check(value)?;
            let index = store.check_index(*index)?;
            let Items::List(items) = &mut store.items else { unreachable!("checked a list") };
            let item = &mut items[index];
            let old = std::mem::replace(&mut item.value, value.as_ref().into());
            let id = item.id;
            store.held_bytes = store.held_bytes + value.len() - old.len();
            store.record(Change::Replaced(id));
            ctx.publish(Registry::ListItems, ItemEventKind::Removed, &old);
            ctx.publish(Registry::ListItems, ItemEventKind::Added, value);
            reply(Reply::Value(Some(&old)));
        }
        CollectionOp::RemoveAt { index } => {
            let index = store.check_index(*index)?;
            let value = store.remove_at(index);
            ctx.publish(Registry::ListItems, ItemEventKind::Removed, &value);
            reply(Reply::Value(Some(&value)));
        }
        CollectionOp::IndexOf { value, last } => {
            let mut positions = store.list()?.iter().enumerate().filter(|(_, item)| *item.value == **value);
            let found = if *last { positions.next_back() } else { positions.next() };
            reply(Reply::Int(found.map_or(-1, |(index, _)| index as i32)));
        }
        CollectionOp::Sub { from, to } => {
            let items = &store.list()?[store.check_range(*from, *to)?];
            reply(Reply::Values(items.iter().map(|item| &*item.value).collect()));
        }
        CollectionOp::Txn { .. } => unreachable!("handled by the transaction's execute (txn.rs)"),
        _ => unreachable!("handled by execute"),
    }
    Ok(())
}

/// add: at the end (answers whether it was added: false when full, or a set that has it),
/// or at a list's `index` (a negative one: at the end; answers nothing, and adds nothing
/// when full, as Hazelcast does).
fn add(
    store: &mut CollectionStore,
    ctx: &mut CollectionContext<'_>,
    value: &[u8],
    index: Option<i32>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<(), OpError> {
    null_check(value)?;
    let registry = store.registry();
    let Some(index) = index else {
        let added = store.room() > 0 && store.insert(value, None);
        if added {
            ctx.publish(registry, ItemEventKind::Added, value);
        }
        reply(Reply::Bool(added));
        return Ok(());
    };
    let index = if index < 0 { store.len() } else { store.check_insert_index(index)? };
    if store.room() > 0 {
        store.insert(value, Some(index));
        ctx.publish(registry, ItemEventKind::Added, value);
    }
    reply(Reply::Empty);
    Ok(())
}

/// addAll: every item (a set's new ones) or none; whether the collection changed.
fn add_all(
    store: &mut CollectionStore,
    ctx: &mut CollectionContext<'_>,
    values: &[Blob<'_>],
    index: Option<i32>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<(), OpError> {
    values.iter().try_for_each(|value| null_check(value))?;
    let registry = store.registry();
    let mut at = index.map(|index| store.check_insert_index(index)).transpose()?;
    if values.is_empty() || values.len() > store.room() {
        reply(Reply::Bool(false));
        return Ok(());
    }
    let mut changed = false;
    for value in values {
        if store.insert(value, at) {
            ctx.publish(registry, ItemEventKind::Added, value);
            changed = true;
            at = at.map(|at| at + 1);
        }
    }
    reply(Reply::Bool(changed));
    Ok(())
}

impl CollectionStore {
    /// Applies records: a backup's (`removals`), or a snapshot's, which holds no record that
    /// takes something away. Nothing is recorded as changed.
    fn apply_records(&mut self, body: &[u8], removals: bool) -> Result<(), Malformed> {
        let mut reader = Reader::new(body);
        while !reader.is_empty() {
            let kind = reader.u8()?;
            match kind {
                INSERT..=REMOVE_VALUE => self.apply_item_record(kind, &mut reader, removals)?,
                STAGE_ADD..=HELD => self.apply_hold_record(kind, &mut reader, removals)?,
                other => return Err(Malformed::UnknownChange(other)),
            }
        }
        Ok(())
    }

    /// Applies one record of the items (INSERT to REMOVE_VALUE), whose kind `reader` has read.
    fn apply_item_record(&mut self, kind: u8, reader: &mut Reader<'_>, removals: bool) -> Result<(), Malformed> {
        match (kind, &mut self.items) {
            (REMOVE_ID | REMOVE_VALUE, _) if !removals => {
                return Err(Malformed::Refused("a collection snapshot holds a removal"));
            }
            (INSERT, Items::List(_)) => {
                let (id, after) = (reader.u64()?, reader.u64()?);
                self.apply_insert(id, after, reader.bytes()?);
            }
            (REPLACE, Items::List(items)) => {
                let id = reader.u64()?;
                let value: Box<[u8]> = reader.bytes()?.into();
                // (A reserved item is not replaced: the owner's transaction hides it.)
                if let Some(item) = items.iter_mut().find(|item| item.id == id) {
                    self.held_bytes = self.held_bytes + value.len() - item.value.len();
                    item.value = value;
                }
            }
            (REMOVE_ID, Items::List(items)) => {
                let id = reader.u64()?;
                if let Some(index) = items.iter().position(|item| item.id == id) {
                    self.held_bytes -= items.remove(index).value.len();
                }
            }
            (ADD_VALUE, Items::Set(items)) => {
                let value: Box<[u8]> = reader.bytes()?.into();
                let size = value.len();
                if items.insert(value) {
                    self.held_bytes += size;
                }
            }
            (REMOVE_VALUE, Items::Set(items)) => {
                if let Some(value) = items.take(reader.bytes()?) {
                    self.held_bytes -= value.len();
                }
            }
            _ => return Err(Malformed::Refused("a list record for a set, or a set record for a list")),
        }
        Ok(())
    }

    /// Inserts list item `id` after item `after` (at the end if that has gone), unless it has
    /// it already, among its items or reserved by a transaction (a record applied twice).
    fn apply_insert(&mut self, id: u64, after: u64, value: &[u8]) {
        self.next_id = self.next_id.max(id.saturating_add(1));
        if self.reserved_id(id) {
            return;
        }
        let Items::List(items) = &mut self.items else { unreachable!("checked a list") };
        if items.iter().any(|item| item.id == id) {
            return;
        }
        let index = match after {
            0 => 0,
            after => items.iter().position(|item| item.id == after).map_or(items.len(), |at| at + 1),
        };
        self.held_bytes += value.len();
        items.insert(index, Item { id, value: value.into() });
    }

    /// The value of list item `id`, among the items or reserved by a transaction (an item
    /// inserted and then reserved before the backups heard of it must still reach them).
    fn value_of(&self, id: u64) -> Option<&[u8]> {
        let Items::List(items) = &self.items else { return None };
        let reserved = self.txns.iter().flat_map(|hold| &hold.reserved).find(|reserved| reserved.id == id);
        let item = items.iter().find(|item| item.id == id);
        item.map(|item| &*item.value).or(reserved.map(|reserved| &*reserved.value))
    }
}

fn put_insert(out: &mut Vec<u8>, id: u64, after: u64, value: &[u8]) {
    out.push(INSERT);
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&after.to_le_bytes());
    put_bytes(out, value);
}

fn put_value(out: &mut Vec<u8>, kind: u8, value: &[u8]) {
    out.push(kind);
    put_bytes(out, value);
}

impl PartitionObject for CollectionStore {
    fn create(kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self {
        let set = kind == ObjectKind::Set;
        CollectionStore::new(settings.collection(name, set), set)
    }

    fn entry_count(&self) -> usize {
        self.len()
    }

    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    fn set_track_changes(&mut self, track: bool) {
        self.track_changes = track;
        if !track {
            self.changed.clear();
        }
    }

    fn sync_backup_count(&self) -> usize {
        self.config.backup_count as usize
    }

    /// In the order the changes happened: a backup replays the owner's steps, among them a
    /// hold's (`store/hold.rs`), so an item is inserted before a transaction reserves it and a
    /// reservation made before a commit or rollback that ends it.
    fn write_changes(&mut self, body: &mut Vec<u8>) {
        for change in std::mem::take(&mut self.changed) {
            match change {
                // An item inserted and removed before the backups heard of it is skipped
                // (its removal follows and finds nothing).
                Change::Inserted { id, after } => {
                    if let Some(value) = self.value_of(id) {
                        put_insert(body, id, after, value);
                    }
                }
                Change::Replaced(id) => {
                    if let Some(value) = self.value_of(id) {
                        body.push(REPLACE);
                        body.extend_from_slice(&id.to_le_bytes());
                        put_bytes(body, value);
                    }
                }
                Change::RemovedId(id) => {
                    body.push(REMOVE_ID);
                    body.extend_from_slice(&id.to_le_bytes());
                }
                Change::AddedValue(value) => put_value(body, ADD_VALUE, &value),
                Change::RemovedValue(value) => put_value(body, REMOVE_VALUE, &value),
                hold_change => self.write_hold_change(body, hold_change),
            }
        }
    }

    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body, true)
    }

    /// The committed items (a list's in order), then the holds with their reserved items and
    /// staged adds, so that a new replica or owner holds the open transactions as they are.
    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
        match &self.items {
            Items::List(items) => {
                let mut after = 0;
                for item in items {
                    writer.entry(|out| put_insert(out, item.id, after, &item.value));
                    after = item.id;
                }
            }
            Items::Set(items) => {
                for value in items {
                    writer.entry(|out| put_value(out, ADD_VALUE, value));
                }
            }
        }
        self.write_holds(writer);
    }

    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body, false)
    }
}

#[cfg(test)]
mod tests;
