//! The multimap-wide operations: keySet, values, entrySet, containsValue, size, clear (their
//! rows, `rows.rs`, decode them).

use crate::engine::listeners::{EventKind, Registry};
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Count, Found, Items, Partitions, WideOperation};
use crate::partition::objects::kind;
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::message::write_frame;

/// What a multimap listing answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MultiListed {
    /// Every key (also one put with no values).
    Keys,
    /// Every value of every key.
    Values,
    /// Every distinct (key, value) pair.
    Entries,
}

/// MultiMap.keySet / values / entrySet over the owned partitions.
#[derive(Debug)]
pub(crate) struct MultiList(pub MultiListed);

impl WideOperation for MultiList {
    type Partial = Items;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Items {
        Items(Vec::new())
    }

    fn on_partition(
        &self,
        name: &str,
        partition: &mut PartitionStore,
        _owned: bool,
        _now_ms: i64,
        partial: &mut Items,
    ) {
        let Some(store) = partition.store::<kind::MultiMap>(name) else { return };
        let frames = &mut partial.0;
        for (key, values) in store.entries() {
            match self.0 {
                MultiListed::Keys => write_frame(frames, 0, key),
                MultiListed::Values => values.iter().for_each(|value| write_frame(frames, 0, value)),
                MultiListed::Entries => {
                    for (index, value) in values.iter().enumerate() {
                        if values[..index].contains(value) {
                            continue;
                        }
                        write_frame(frames, 0, key);
                        write_frame(frames, 0, value);
                    }
                }
            }
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Items) -> Result<Reply<'p>, OpError> {
        Ok(partial.list())
    }
}

/// MultiMap.size: values over every key of the owned partitions.
#[derive(Debug)]
pub(crate) struct MultiSize;

impl WideOperation for MultiSize {
    type Partial = Count;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Count {
        Count(0)
    }

    fn on_partition(
        &self,
        name: &str,
        partition: &mut PartitionStore,
        _owned: bool,
        _now_ms: i64,
        partial: &mut Count,
    ) {
        if let Some(store) = partition.store::<kind::MultiMap>(name) {
            partial.0 += store.value_count() as u64;
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Count) -> Result<Reply<'p>, OpError> {
        Ok(partial.int())
    }
}

/// MultiMap.containsValue.
#[derive(Debug)]
pub(crate) struct MultiContainsValue(pub Box<[u8]>);

impl WideOperation for MultiContainsValue {
    type Partial = Found;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Found {
        Found(false)
    }

    fn on_partition(
        &self,
        name: &str,
        partition: &mut PartitionStore,
        _owned: bool,
        _now_ms: i64,
        partial: &mut Found,
    ) {
        if partial.0 {
            return;
        }
        if let Some(store) = partition.store::<kind::MultiMap>(name) {
            partial.0 = store.entries().any(|(_, values)| values.iter().any(|value| **value == *self.0));
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Found) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Bool(partial.0))
    }
}

/// MultiMap.clear: every key of every replica held here (each replica clears its own copy).
#[derive(Debug)]
pub(crate) struct MultiClear;

impl WideOperation for MultiClear {
    type Partial = Count;
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) -> Count {
        Count(0)
    }

    fn on_partition(&self, name: &str, partition: &mut PartitionStore, owned: bool, _now_ms: i64, partial: &mut Count) {
        if let Some(store) = partition.existing_store_mut::<kind::MultiMap>(name) {
            let removed = store.clear() as u64;
            if owned {
                partial.0 += removed;
            }
        }
    }

    /// One CLEAR_ALL counting the keys removed, even none (as Hazelcast's multimap does).
    fn map_event(&self, partial: &Count) -> Option<(Registry, EventKind, u64)> {
        Some((Registry::MultiMapEntries, EventKind::ClearAll, partial.0))
    }

    fn reply<'p>(&'p self, _partial: &'p mut Count) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}
