//! Lists and sets (`IList`, `ISet`): the items of one named collection, in the partition of
//! its name, with synchronous backups and migration through [`PartitionObject`].
//!
//! A list keeps its items in order, each with an id from a per-list counter; backups insert
//! an item after the item it follows (by id), replace and remove by id, so applying a change
//! twice is harmless and a backup keeps the owner's order. A set keeps its items in a hash
//! set (no order, as in Hazelcast); its backups add and remove by value, which is idempotent
//! as it is.
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
/// sees them), still counted in `held_bytes` and still in the backups until the commit removes
/// them; a rollback puts them back (a list's after the item it followed).
#[derive(Debug, Default)]
pub(super) struct TxnHold {
    pub(super) txn: Uuid,
    pub(super) adds: Vec<Box<[u8]>>,
    pub(super) reserved: Vec<Reserved>,
}

/// An item a transaction's remove reserved: a list's id and the id of the item it followed
/// (0: none), or a set's value alone (ids 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reserved {
    id: u64,
    after: u64,
    pub(super) value: Box<[u8]>,
}

/// What a backup must do to mirror the owner (values are looked up when written).
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
}

const INSERT: u8 = 1;
const REPLACE: u8 = 2;
const REMOVE_ID: u8 = 3;
const ADD_VALUE: u8 = 4;
const REMOVE_VALUE: u8 = 5;

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

    /// Takes the first item equal to `value` out of sight for a transaction's remove, not yet
    /// removed for the backups (nor from `held_bytes`).
    pub(super) fn reserve(&mut self, value: &[u8]) -> Option<Reserved> {
        match &mut self.items {
            Items::List(items) => {
                let index = items.iter().position(|item| *item.value == *value)?;
                let after = index.checked_sub(1).map_or(0, |before| items[before].id);
                let item = items.remove(index);
                Some(Reserved { id: item.id, after, value: item.value })
            }
            Items::Set(items) => Some(Reserved { id: 0, after: 0, value: items.take(value)? }),
        }
    }

    /// Puts a reserved item back (a rollback): a list's after the item it followed (at the
    /// front if it followed none, at the end if that item has gone since). A set's value added
    /// again meanwhile is held once (and counted once).
    pub(super) fn restore(&mut self, reserved: Reserved) {
        match &mut self.items {
            Items::List(items) => {
                let place = match reserved.after {
                    0 => 0,
                    after => items.iter().position(|item| item.id == after).map_or(items.len(), |index| index + 1),
                };
                items.insert(place, Item { id: reserved.id, value: reserved.value });
            }
            Items::Set(items) => {
                let length = reserved.value.len();
                if !items.insert(reserved.value) {
                    self.held_bytes -= length;
                }
            }
        }
    }

    /// Removes a reserved item for good (a commit), for the backups too (not a set's value
    /// added again meanwhile: the backups hold it once, as the owner does).
    pub(super) fn remove_reserved(&mut self, reserved: &Reserved) {
        self.held_bytes -= reserved.value.len();
        match &self.items {
            Items::List(_) => self.record(Change::RemovedId(reserved.id)),
            Items::Set(items) if items.contains(&reserved.value) => {}
            Items::Set(_) => self.record(Change::RemovedValue(reserved.value.clone())),
        }
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
    fn publish(&mut self, registry: Registry, kind: ItemEventKind, item: &[u8]) {
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
    /// Applies records (a backup; a snapshot holds insertions and additions only).
    fn apply_records(&mut self, body: &[u8], removals: bool) -> Result<(), Malformed> {
        let mut reader = Reader::new(body);
        while !reader.is_empty() {
            let kind = reader.u8()?;
            match (kind, &mut self.items) {
                (INSERT, Items::List(items)) => {
                    let (id, after) = (reader.u64()?, reader.u64()?);
                    let value: Box<[u8]> = reader.bytes()?.into();
                    self.next_id = self.next_id.max(id + 1);
                    if items.iter().any(|item| item.id == id) {
                        continue;
                    }
                    let index = match after {
                        0 => 0,
                        after => items.iter().position(|item| item.id == after).map_or(items.len(), |at| at + 1),
                    };
                    self.held_bytes += value.len();
                    items.insert(index, Item { id, value });
                }
                (REPLACE, Items::List(items)) => {
                    let id = reader.u64()?;
                    let value: Box<[u8]> = reader.bytes()?.into();
                    if let Some(item) = items.iter_mut().find(|item| item.id == id) {
                        self.held_bytes = self.held_bytes + value.len() - item.value.len();
                        item.value = value;
                    }
                }
                (REMOVE_ID, Items::List(items)) if removals => {
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
                (REMOVE_VALUE, Items::Set(items)) if removals => {
                    if let Some(value) = items.take(reader.bytes()?) {
                        self.held_bytes -= value.len();
                    }
                }
                (REMOVE_ID | REMOVE_VALUE, _) if !removals => {
                    return Err(Malformed::Refused("a collection snapshot holds a removal"));
                }
                (INSERT | REPLACE | REMOVE_ID | ADD_VALUE | REMOVE_VALUE, _) => {
                    return Err(Malformed::Refused("a list record for a set, or a set record for a list"));
                }
                (other, _) => return Err(Malformed::UnknownChange(other)),
            }
        }
        Ok(())
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

    fn write_changes(&mut self, body: &mut Vec<u8>) {
        for change in std::mem::take(&mut self.changed) {
            let value_of = |id: u64| match &self.items {
                Items::List(items) => items.iter().find(|item| item.id == id).map(|item| &*item.value),
                Items::Set(_) => None,
            };
            match change {
                // An item inserted and removed before the backups heard of it is skipped
                // (its removal follows and finds nothing).
                Change::Inserted { id, after } => {
                    if let Some(value) = value_of(id) {
                        put_insert(body, id, after, value);
                    }
                }
                Change::Replaced(id) => {
                    if let Some(value) = value_of(id) {
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
            }
        }
    }

    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body, true)
    }

    /// The items reserved by transactions too (a list's at its end), so that a new replica
    /// holds them until a commit removes them.
    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
        let reserved = self.txns.iter().flat_map(|hold| &hold.reserved);
        match &self.items {
            Items::List(items) => {
                let mut after = 0;
                let reserved = reserved.map(|reserved| (reserved.id, &reserved.value));
                for (id, value) in items.iter().map(|item| (item.id, &item.value)).chain(reserved) {
                    writer.entry(|out| put_insert(out, id, after, value));
                    after = id;
                }
            }
            Items::Set(items) => {
                for value in items.iter().chain(reserved.map(|reserved| &reserved.value)) {
                    writer.entry(|out| put_value(out, ADD_VALUE, value));
                }
            }
        }
    }

    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::string_data as item;
    use std::borrow::Cow;

    /// Runs `op`: its answer as text, or the error's kind.
    fn run(store: &mut CollectionStore, op: CollectionOp<'_>) -> Result<String, ErrorKind> {
        let (mut listeners, mut outbox) = (Listeners::default(), Outbox::default());
        let mut ctx = CollectionContext {
            name: "c",
            member: Uuid::default(),
            partition_id: PartitionId(0),
            listeners: &mut listeners,
            outbox: &mut outbox,
        };
        let mut answer = String::new();
        execute(store, &mut ctx, &op, &mut |reply| answer = format!("{reply:?}")).map_err(|failure| failure.kind)?;
        Ok(answer)
    }

    fn add(value: &[u8], index: Option<i32>) -> CollectionOp<'_> {
        CollectionOp::Add { value: Cow::Borrowed(value), index }
    }

    fn mirror(store: &mut CollectionStore, backup: &mut CollectionStore) {
        let mut body = Vec::new();
        store.write_changes(&mut body);
        backup.apply_backup(&body).unwrap();
        backup.apply_backup(&body).unwrap();
    }

    #[test]
    fn a_list_keeps_positions_and_a_backup_keeps_its_order() {
        let bounded = CollectionConfig { max_size: 3, ..CollectionConfig::DEFAULT };
        let (mut list, mut backup) = (CollectionStore::new(bounded, false), CollectionStore::new(bounded, false));
        list.set_track_changes(true);
        let (a, b, c, d) = (item("a"), item("b"), item("c"), item("d"));
        assert_eq!(run(&mut list, add(&a, None)), Ok("Bool(true)".into()));
        assert_eq!(run(&mut list, add(&b, Some(0))), Ok("Empty".into()));
        assert_eq!(run(&mut list, add(&c, Some(1))), Ok("Empty".into()));
        mirror(&mut list, &mut backup);
        assert_eq!(run(&mut list, add(&d, None)), Ok("Bool(false)".into()), "full");
        assert_eq!(run(&mut list, add(&d, Some(0))), Ok("Empty".into()), "full: nothing added, no error");
        assert_eq!(list.len(), 3);
        assert_eq!(run(&mut list, CollectionOp::Get { index: 3 }), Err(ErrorKind::IndexOutOfBounds));
        let replaced = run(&mut list, CollectionOp::Replace { index: 2, value: Cow::Borrowed(&d) }).unwrap();
        assert_eq!(replaced, format!("Value(Some({a:?}))"));
        assert_eq!(run(&mut list, CollectionOp::RemoveAt { index: 0 }).unwrap(), format!("Value(Some({b:?}))"));
        mirror(&mut list, &mut backup);
        assert_eq!(backup.values(), list.values(), "c, d in order");
        assert_eq!(backup.held_bytes, list.held_bytes);
        let sub = run(&mut list, CollectionOp::Sub { from: 1, to: -1 }).unwrap();
        assert_eq!(sub, format!("Values([{d:?}])"));
        let whole = run(&mut list, CollectionOp::Sub { from: -1, to: -1 }).unwrap();
        assert_eq!(whole, format!("Values([{c:?}, {d:?}])"));
        assert_eq!(run(&mut list, CollectionOp::Sub { from: 2, to: 1 }), Err(ErrorKind::IllegalArgument));
        assert_eq!(run(&mut list, CollectionOp::Sub { from: 0, to: 3 }), Err(ErrorKind::IndexOutOfBounds));
        let mut snapshot = Vec::new();
        let mut after = 0;
        if let Items::List(items) = &list.items {
            for item in items {
                put_insert(&mut snapshot, item.id, after, &item.value);
                after = item.id;
            }
        }
        let mut replica = CollectionStore::new(bounded, false);
        replica.apply_snapshot(&snapshot).unwrap();
        assert_eq!(replica.values(), list.values());
        assert!(replica.apply_snapshot(&[REMOVE_ID, 1, 0, 0, 0, 0, 0, 0, 0]).is_err());
        for cut in 0..snapshot.len() {
            let _ = CollectionStore::new(bounded, false).apply_backup(&snapshot[..cut]);
        }
    }

    #[test]
    fn a_set_holds_each_item_once() {
        let (mut set, mut backup) = (
            CollectionStore::new(CollectionConfig::DEFAULT, true),
            CollectionStore::new(CollectionConfig::DEFAULT, true),
        );
        set.set_track_changes(true);
        let values: Vec<Vec<u8>> = ["a", "b", "a"].iter().map(|text| item(text)).collect();
        fn all(values: &[Vec<u8>]) -> Vec<Blob<'_>> {
            values.iter().map(|value| Cow::Borrowed(&value[..])).collect()
        }
        assert_eq!(run(&mut set, CollectionOp::AddAll { values: all(&values), index: None }), Ok("Bool(true)".into()));
        assert_eq!(set.len(), 2);
        assert_eq!(run(&mut set, add(&values[0], None)), Ok("Bool(false)".into()), "a duplicate");
        assert_eq!(run(&mut set, CollectionOp::Get { index: 0 }), Err(ErrorKind::IllegalArgument));
        assert_eq!(run(&mut set, CollectionOp::RetainAll { values: all(&values[..1]) }), Ok("Bool(true)".into()));
        mirror(&mut set, &mut backup);
        assert_eq!(backup.values(), set.values());
        assert_eq!(backup.held_bytes, set.held_bytes);
        assert!(backup.apply_backup(&[INSERT, 1, 0, 0, 0, 0, 0, 0, 0]).is_err(), "a list record for a set");
    }
}
