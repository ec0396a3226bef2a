//! The replicated-map-wide operations. The reads (size, isEmpty, containsValue, keySet,
//! values, entrySet) run over THIS member's copy of every partition (every member holds all
//! of them), and never go to other members: a client's proxy sends them to one member. The
//! writes (putAll, clear) run on every member, each over the partitions it owns, as their
//! owner: changes numbered and sent to every other member, events published here.
//! Listener registration and removal act on each reactor's registrations. Their rows
//! (`rows.rs`) decode them.

use crate::engine::listeners::{EventKind, Registry};
use crate::engine::replicated_map::iteration::OwnedView;
use crate::engine::replicated_map::store::{publish, put_change, put_kind, EntryChange};
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Count, Found, Items, Listed, Partitions, ShareContext, WideOperation};
use crate::partition::objects::kind;
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::data::partition_for;
use ferrogrid_protocol::message::write_frame;
use ferrogrid_protocol::{Data, Uuid};

/// ReplicatedMap.size and isEmpty: the live entries of this member's copy.
#[derive(Debug)]
pub(crate) struct ReplicatedSize {
    /// isEmpty: answers whether the count is 0.
    pub answer_empty: bool,
}

impl WideOperation for ReplicatedSize {
    type Partial = Count;
    const PARTITIONS: Partitions = Partitions::Every;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) -> Count {
        Count(0)
    }

    fn on_partition(&self, name: &str, partition: &mut PartitionStore, _owned: bool, now_ms: i64, partial: &mut Count) {
        if let Some(store) = partition.store::<kind::ReplicatedMap>(name) {
            partial.0 += store.live_len(now_ms) as u64;
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Count) -> Result<Reply<'p>, OpError> {
        Ok(if self.answer_empty { Reply::Bool(partial.0 == 0) } else { partial.int() })
    }
}

/// ReplicatedMap.containsValue over this member's copy (values compare by their bytes).
#[derive(Debug)]
pub(crate) struct ReplicatedContainsValue(pub Box<[u8]>);

impl WideOperation for ReplicatedContainsValue {
    type Partial = Found;
    const PARTITIONS: Partitions = Partitions::Every;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) -> Found {
        Found(false)
    }

    fn on_partition(&self, name: &str, partition: &mut PartitionStore, _owned: bool, now_ms: i64, partial: &mut Found) {
        if partial.0 {
            return;
        }
        if let Some(store) = partition.store::<kind::ReplicatedMap>(name) {
            partial.0 = store.live(now_ms).any(|(_, value)| *value == *self.0);
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Found) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Bool(partial.0))
    }
}

/// ReplicatedMap.keySet / values / entrySet over this member's copy.
#[derive(Debug)]
pub(crate) struct ReplicatedList(pub Listed);

impl WideOperation for ReplicatedList {
    type Partial = Items;
    const PARTITIONS: Partitions = Partitions::Every;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) -> Items {
        Items(Vec::new())
    }

    fn on_partition(&self, name: &str, partition: &mut PartitionStore, _owned: bool, now_ms: i64, partial: &mut Items) {
        let Some(store) = partition.store::<kind::ReplicatedMap>(name) else { return };
        let frames = &mut partial.0;
        for (key, value) in store.live(now_ms) {
            match self.0 {
                Listed::Keys => write_frame(frames, 0, key),
                Listed::Values => write_frame(frames, 0, value),
                Listed::Entries => {
                    write_frame(frames, 0, key);
                    write_frame(frames, 0, value);
                }
            }
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Items) -> Result<Reply<'p>, OpError> {
        Ok(partial.list())
    }
}

/// The local partitions a replicated-map write runs on in this share: those this member owns
/// and holds the copy of.
fn written(share: &ShareContext<'_>) -> Vec<usize> {
    (0..share.partitions.len())
        .filter(|local| share.owned.get(*local).copied().unwrap_or(false) && share.replicated.writable(*local))
        .collect()
}

/// ReplicatedMap.clear: every member clears the partitions it owns, as their owner (each
/// clear is a change sent to every other member), and its copies of the others' partitions
/// (silently: the owner's change, when it comes, clears them again), so that once the clear
/// is answered no member's copy holds an entry put before it (Hazelcast's clear is
/// synchronous on every member); the member asked publishes one CLEAR_ALL to its listeners,
/// counting the entries removed everywhere.
#[derive(Debug)]
pub(crate) struct ReplicatedClear;

impl WideOperation for ReplicatedClear {
    type Partial = Count;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Count {
        Count(0)
    }

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, partial: &mut Count) {
        for local in written(share) {
            let Some(store) = share.partitions[local].existing_store_mut::<kind::ReplicatedMap>(name) else { continue };
            partial.0 += store.clear(share.now_ms) as u64;
            let mut changes = Vec::new();
            crate::engine::replicated_map::store::clear_change(&mut changes, name);
            let partition = share.replicated.global(local);
            share.replicated.send(partition, &changes);
        }
        for local in 0..share.partitions.len() {
            let copy = !share.owned.get(local).copied().unwrap_or(false) && share.replicated.writable(local);
            if let Some(store) =
                share.partitions[local].existing_store_mut::<kind::ReplicatedMap>(name).filter(|_| copy)
            {
                store.clear(share.now_ms);
            }
        }
    }

    fn on_partition(
        &self,
        _name: &str,
        _partition: &mut PartitionStore,
        _owned: bool,
        _now_ms: i64,
        _partial: &mut Count,
    ) {
        unreachable!("on_share does a replicated clear's work")
    }

    fn map_event(&self, partial: &Count) -> Option<(Registry, EventKind, u64)> {
        Some((Registry::ReplicatedEntries, EventKind::ClearAll, partial.0))
    }

    fn reply<'p>(&'p self, _partial: &'p mut Count) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// ReplicatedMap.putAll: every member puts the entries of the partitions it owns, as their
/// owner (no ttl), publishing ADDED or UPDATED here and sending each partition's puts to every
/// other member as one change.
#[derive(Debug)]
pub(crate) struct ReplicatedPutAll {
    pub entries: Vec<crate::engine::replicated_map::store::OwnedEntry>,
}

impl WideOperation for ReplicatedPutAll {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, _partial: &mut ()) {
        let written = written(share);
        if written.is_empty() {
            return;
        }
        let (count, now_ms) = (share.replicated.partition_count, share.now_ms);
        for local in written {
            let partition = share.replicated.global(local);
            let mut changes = Vec::new();
            for (key, value) in &self.entries {
                if partition_for(Data(key), count).0 as usize != partition {
                    continue;
                }
                let store = share.partitions[local].store_mut::<kind::ReplicatedMap>(name, share.settings).0;
                let old = store.put(key, value, crate::clock::NEVER, now_ms);
                crate::engine::replicated_map::store::put_change(&mut changes, name, key, value, crate::clock::NEVER);
                let kind = put_kind(old.as_deref());
                let change = EntryChange { name, partition, kind, key, value: Some(value), old_value: old.as_deref() };
                publish(share.listeners, share.outbox, (share.member, false), &change);
            }
            share.replicated.send(partition, &changes);
        }
    }

    fn on_partition(
        &self,
        _name: &str,
        _partition: &mut PartitionStore,
        _owned: bool,
        _now_ms: i64,
        _partial: &mut (),
    ) {
        unreachable!("on_share does a replicated putAll's work")
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// ReplicatedMap.putAllWithMetadata: the owner of `partition` puts its entries there (keys of
/// another partition are ignored) with the metadata they came with, as Hazelcast's `putRecord`
/// does, then publishes and sends each as an owner's put.
#[derive(Debug)]
pub(crate) struct ReplicatedPutAllWithMetadata {
    pub partition: u16,
    pub entries: Vec<OwnedView>,
}

impl WideOperation for ReplicatedPutAllWithMetadata {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, _partial: &mut ()) {
        let partition = usize::from(self.partition);
        let Some(local) = written(share).into_iter().find(|local| share.replicated.global(*local) == partition) else {
            return;
        };
        let (count, now_ms) = (share.replicated.partition_count, share.now_ms);
        let mut changes = Vec::new();
        for OwnedView { key, value, meta } in &self.entries {
            if partition_for(Data(key), count).0 as usize != partition {
                continue;
            }
            let store = share.partitions[local].store_mut::<kind::ReplicatedMap>(name, share.settings).0;
            let old = store.put_with_metadata(key, value, *meta, now_ms);
            put_change(
                &mut changes,
                name,
                key,
                value,
                crate::engine::replicated_map::store::expiry_of(now_ms, meta.ttl_ms),
            );
            let kind = put_kind(old.as_deref());
            let change = EntryChange { name, partition, kind, key, value: Some(value), old_value: old.as_deref() };
            publish(share.listeners, share.outbox, (share.member, false), &change);
        }
        share.replicated.send(partition, &changes);
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut ()) {
        unreachable!("on_share does a replicated putAllWithMetadata's work")
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// ReplicatedMap.endEntryViewIteration: the member asked drops the iteration (on whichever
/// partition's copy it runs); an unknown one is ignored, as in Hazelcast.
#[derive(Debug)]
pub(crate) struct EndEntryViewIteration(pub Option<Uuid>);

impl WideOperation for EndEntryViewIteration {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Every;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) {}

    fn on_partition(&self, name: &str, partition: &mut PartitionStore, _: bool, _: i64, _: &mut ()) {
        let (Some(id), Some(store)) = (self.0, partition.existing_store_mut::<kind::ReplicatedMap>(name)) else {
            return;
        };
        store.iterations.end(id);
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}
