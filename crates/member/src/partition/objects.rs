//! The objects of one partition ([`PartitionStore`]): a table of named objects of any kind,
//! and the typed accessors each kind's operations reach their store by (maps: [`PartitionStore::map_mut`]).
//!
//! A partition holds named objects keyed by (kind, name): a map and a queue may share a name,
//! as in Hazelcast, whose services each have their own namespace. Each kind is one module
//! whose store implements [`PartitionObject`] (`object.rs`), has a code in member records
//! ([`ObjectKind`], `peer.rs`) and one row in the `partition_objects!` table below (its store
//! type).
//!
//! Stores live inline in the partition's hash table, in the [`Object`] enum, not boxed behind
//! `dyn`: a map operation reaches its store with one hash lookup and a match, no extra pointer
//! and no downcast. Code that does not care about the kind takes a `&dyn PartitionObject`
//! view of the enum ([`Object::as_object`]); those paths (replication, migration, sweeps)
//! walk objects, not entries, so an indirect call there costs nothing measurable.
//!
//! Beside its objects a partition keeps its [`WaiterTable`]: where the answers of the requests
//! waiting in those objects go (the objects hold only their ids).
//!
//! Owned and written by exactly one thread: the reactor that owns the partition
//! (`partition % reactor_count == reactor index`). No locks; other threads reach a partition
//! only by handing an operation to its reactor.

use crate::cluster::peer::ObjectKind;
use crate::engine::collection::store::CollectionStore;
use crate::engine::map::store::RecordStore;
use crate::engine::multimap::store::MultiMapStore;
use crate::engine::queue::store::QueueStore;
use crate::engine::replicated_map::store::ReplicatedMapStore;
use crate::engine::ringbuffer::store::RingbufferStore;
use crate::engine::settings::{MapSettings, SettingsCache};
use crate::net::connection::ReplyTo;
use crate::partition::object::PartitionObject;
use crate::partition::waiters::WaiterTable;
use ahash::RandomState;
use std::sync::Arc;

/// The kinds of partition objects, one row each: `Kind => store type`. A row makes the kind's
/// [`Object`] variant and its arms in `Object`'s constructor and views; every [`ObjectKind`]
/// needs a row (the constructor's match is exhaustive).
macro_rules! partition_objects {
    ($($(#[cfg($condition:meta)])? $kind:ident => $store:ty,)+) => {
        /// One object of a partition: its kind's store, inline.
        #[derive(Debug)]
        #[allow(clippy::large_enum_variant, reason = "inline, a map operation reaches its store without a pointer")]
        pub(crate) enum Object {
            $($(#[cfg($condition)])? $kind($store),)+
        }

        impl Object {
            /// A new, empty object of `kind` named `name`.
            pub(crate) fn new(kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Object {
                match kind {
                    $($(#[cfg($condition)])? ObjectKind::$kind => Object::$kind(<$store>::create(kind, name, settings)),)+
                }
            }

            pub(crate) fn kind(&self) -> ObjectKind {
                match self {
                    $($(#[cfg($condition)])? Object::$kind(_) => ObjectKind::$kind,)+
                }
            }

            /// The object as any kind, for code that does not care which.
            pub(crate) fn as_object(&self) -> &dyn PartitionObject {
                match self {
                    $($(#[cfg($condition)])? Object::$kind(store) => store,)+
                }
            }

            pub(crate) fn as_object_mut(&mut self) -> &mut dyn PartitionObject {
                match self {
                    $($(#[cfg($condition)])? Object::$kind(store) => store,)+
                }
            }
        }
    };
}

partition_objects! {
    Map => RecordStore,
    Queue => QueueStore,
    Ringbuffer => RingbufferStore,
    List => CollectionStore,
    Set => CollectionStore,
    MultiMap => MultiMapStore,
    ReplicatedMap => ReplicatedMapStore,
    #[cfg(test)]
    Probe => probe::Probe,
}

/// An object's key in its partition's table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ObjectKey {
    kind: ObjectKind,
    name: Box<str>,
}

/// An [`ObjectKey`] borrowed for a lookup, hashing the same, so that finding an object
/// allocates nothing.
#[derive(Debug, Hash)]
struct ObjectRef<'a> {
    kind: ObjectKind,
    name: &'a str,
}

impl hashbrown::Equivalent<ObjectKey> for ObjectRef<'_> {
    fn equivalent(&self, key: &ObjectKey) -> bool {
        self.kind == key.kind && self.name == &*key.name
    }
}

impl From<&ObjectRef<'_>> for ObjectKey {
    fn from(key: &ObjectRef<'_>) -> ObjectKey {
        ObjectKey { kind: key.kind, name: key.name.into() }
    }
}

/// Every object of one partition. Owned by the partition's reactor; map operations use the
/// typed accessors below, replication and the reactor's sweeps the ones here.
#[derive(Debug, Default)]
pub struct PartitionStore {
    objects: hashbrown::HashMap<ObjectKey, Object, RandomState>,
    /// Whether this member owns the partition and has backups to send changes to.
    track_changes: bool,
    /// Where the requests waiting in this partition's objects are answered.
    pub(crate) waiters: WaiterTable,
}

impl PartitionStore {
    pub(crate) fn object(&self, kind: ObjectKind, name: &str) -> Option<&Object> {
        self.objects.get(&ObjectRef { kind, name })
    }

    /// The object, created on first use by `create` (which must make one of `kind`); a new
    /// object records changes if the partition does. One lookup, no allocation if it exists.
    pub(crate) fn object_mut(&mut self, kind: ObjectKind, name: &str, create: impl FnOnce() -> Object) -> &mut Object {
        self.object_and_waiters(kind, name, create).0
    }

    /// [`PartitionStore::object_mut`], with the partition's waiter table beside it (for an
    /// engine call that parks or answers waiters).
    fn object_and_waiters(
        &mut self,
        kind: ObjectKind,
        name: &str,
        create: impl FnOnce() -> Object,
    ) -> (&mut Object, &mut WaiterTable) {
        let track = self.track_changes;
        let object = self.objects.entry_ref(&ObjectRef { kind, name }).or_insert_with(|| {
            let mut object = create();
            assert_eq!(object.kind(), kind, "an object is filed under its own kind");
            object.as_object_mut().set_track_changes(track);
            object
        });
        (object, &mut self.waiters)
    }

    pub(crate) fn existing_object_mut(&mut self, kind: ObjectKind, name: &str) -> Option<&mut Object> {
        self.objects.get_mut(&ObjectRef { kind, name })
    }

    /// Removes an object (destroy); returns it, if it was here.
    pub(crate) fn drop_object(&mut self, kind: ObjectKind, name: &str) -> Option<Object> {
        self.objects.remove(&ObjectRef { kind, name })
    }

    pub(crate) fn objects(&self) -> impl Iterator<Item = (ObjectKind, &str, &Object)> {
        self.objects.iter().map(|(key, object)| (key.kind, &*key.name, object))
    }

    pub(crate) fn objects_mut(&mut self) -> impl Iterator<Item = (ObjectKind, &str, &mut Object)> {
        self.objects.iter_mut().map(|(key, object)| (key.kind, &*key.name, object))
    }

    /// Starts or stops recording changes for backups, in every object, present and future.
    pub fn set_track_changes(&mut self, track: bool) {
        self.track_changes = track;
        for object in self.objects.values_mut() {
            object.as_object_mut().set_track_changes(track);
        }
    }

    pub fn tracks_changes(&self) -> bool {
        self.track_changes
    }

    /// Drops every object of the partition's replicas (this member no longer holds a replica
    /// of the partition, or a snapshot replaces it); objects every member holds (replicated
    /// maps) stay.
    pub fn drop_all(&mut self) {
        self.objects.retain(|key, _| key.kind.is_everywhere());
        // Only kinds held per partition have waiters: they went with their objects, unanswered.
        self.waiters.clear();
    }

    /// A partition whose waiter table holds at most `capacity_waiters` waiters.
    pub(crate) fn with_waiter_capacity(capacity_waiters: usize) -> PartitionStore {
        PartitionStore { waiters: WaiterTable::new(capacity_waiters), ..PartitionStore::default() }
    }

    /// Takes every request waiting in `object` (one of this partition's, or one just dropped
    /// from it): where their answers go. They leave the waiter table.
    pub(crate) fn take_waiting(&mut self, object: &mut Object) -> Vec<ReplyTo> {
        self.waiters.take_all(object.as_object_mut().take_waiting())
    }
}

/// A partition's maps: the map service's typed view of [`PartitionStore`] (whose other
/// objects it does not see). For map operations (`engine/map/ops.rs`, `engine/map/wide.rs`) on the
/// partition's reactor.
impl PartitionStore {
    pub fn map(&self, name: &str) -> Option<&RecordStore> {
        self.object(ObjectKind::Map, name).and_then(Object::as_map)
    }

    /// The map's store, created on first use with `settings`.
    pub fn map_mut(&mut self, name: &str, settings: impl FnOnce() -> Arc<MapSettings>) -> &mut RecordStore {
        let object = self.object_mut(ObjectKind::Map, name, || Object::Map(RecordStore::new(settings())));
        object.as_map_mut().expect("an object filed as a map is a map")
    }

    /// The queue `name` of this partition, created on first use with its configured settings,
    /// and the partition's waiter table.
    pub(crate) fn queue_mut(
        &mut self,
        name: &str,
        settings: &mut SettingsCache,
    ) -> (&mut QueueStore, &mut WaiterTable) {
        match self.object_and_waiters(ObjectKind::Queue, name, || {
            Object::Queue(QueueStore::create(ObjectKind::Queue, name, settings))
        }) {
            (Object::Queue(queue), waiters) => (queue, waiters),
            _ => unreachable!("filed under the queue kind"),
        }
    }

    /// The ringbuffer `name` of this partition, created on first use with its configured
    /// settings, and the partition's waiter table.
    pub(crate) fn ringbuffer_mut(
        &mut self,
        name: &str,
        settings: &mut SettingsCache,
    ) -> (&mut RingbufferStore, &mut WaiterTable) {
        let create = || Object::Ringbuffer(RingbufferStore::create(ObjectKind::Ringbuffer, name, settings));
        match self.object_and_waiters(ObjectKind::Ringbuffer, name, create) {
            (Object::Ringbuffer(ring), waiters) => (ring, waiters),
            _ => unreachable!("filed under the ringbuffer kind"),
        }
    }

    /// The list (`set` false) or set `name` of this partition, created on first use.
    pub(crate) fn collection_mut(
        &mut self,
        name: &str,
        set: bool,
        settings: &mut SettingsCache,
    ) -> &mut CollectionStore {
        let kind = if set { ObjectKind::Set } else { ObjectKind::List };
        match self.object_mut(kind, name, || Object::new(kind, name, settings)) {
            Object::List(store) | Object::Set(store) => store,
            _ => unreachable!("filed under the list or set kind"),
        }
    }

    /// The multimap `name` of this partition, created on first use, and the partition's waiter
    /// table.
    pub(crate) fn multimap_mut(
        &mut self,
        name: &str,
        settings: &mut SettingsCache,
    ) -> (&mut MultiMapStore, &mut WaiterTable) {
        let create = || Object::new(ObjectKind::MultiMap, name, settings);
        match self.object_and_waiters(ObjectKind::MultiMap, name, create) {
            (Object::MultiMap(store), waiters) => (store, waiters),
            _ => unreachable!("filed under the multimap kind"),
        }
    }

    /// The replicated map `name` of this partition, created on first use.
    pub(crate) fn replicated_mut(&mut self, name: &str, settings: &mut SettingsCache) -> &mut ReplicatedMapStore {
        let create = || Object::new(ObjectKind::ReplicatedMap, name, settings);
        match self.object_mut(ObjectKind::ReplicatedMap, name, create) {
            Object::ReplicatedMap(store) => store,
            _ => unreachable!("filed under the replicated map kind"),
        }
    }

    /// The replicated map `name` if this partition has it.
    pub(crate) fn replicated(&self, name: &str) -> Option<&ReplicatedMapStore> {
        match self.object(ObjectKind::ReplicatedMap, name)? {
            Object::ReplicatedMap(store) => Some(store),
            _ => None,
        }
    }

    pub(crate) fn existing_replicated_mut(&mut self, name: &str) -> Option<&mut ReplicatedMapStore> {
        match self.existing_object_mut(ObjectKind::ReplicatedMap, name)? {
            Object::ReplicatedMap(store) => Some(store),
            _ => None,
        }
    }

    /// Every replicated map of this partition.
    pub(crate) fn replicated_maps(&self) -> impl Iterator<Item = (&str, &ReplicatedMapStore)> {
        self.objects().filter_map(|(_, name, object)| match object {
            Object::ReplicatedMap(store) => Some((name, store)),
            _ => None,
        })
    }

    pub(crate) fn replicated_maps_mut(&mut self) -> impl Iterator<Item = (&str, &mut ReplicatedMapStore)> {
        self.objects_mut().filter_map(|(_, name, object)| match object {
            Object::ReplicatedMap(store) => Some((name, store)),
            _ => None,
        })
    }

    /// Drops this partition's replicated maps (a whole copy replaces them).
    pub(crate) fn drop_replicated(&mut self) {
        self.objects.retain(|key, _| key.kind != ObjectKind::ReplicatedMap);
    }

    /// The key locks of the map or multimap (`kind`) `name`, if this partition has it.
    pub(crate) fn lock_table_mut(
        &mut self,
        kind: ObjectKind,
        name: &str,
    ) -> Option<&mut crate::engine::locks::LockTable> {
        match self.existing_object_mut(kind, name)? {
            Object::Map(store) => Some(&mut store.locks),
            Object::MultiMap(store) => Some(&mut store.locks),
            _ => None,
        }
    }

    /// The multimap `name` if this partition has it.
    pub(crate) fn multimap(&self, name: &str) -> Option<&MultiMapStore> {
        match self.object(ObjectKind::MultiMap, name)? {
            Object::MultiMap(store) => Some(store),
            _ => None,
        }
    }

    pub(crate) fn existing_multimap_mut(&mut self, name: &str) -> Option<&mut MultiMapStore> {
        match self.existing_object_mut(ObjectKind::MultiMap, name)? {
            Object::MultiMap(store) => Some(store),
            _ => None,
        }
    }

    /// The queue `name` if this partition has it, and the partition's waiter table.
    pub(crate) fn existing_queue_mut(&mut self, name: &str) -> Option<(&mut QueueStore, &mut WaiterTable)> {
        match self.objects.get_mut(&ObjectRef { kind: ObjectKind::Queue, name })? {
            Object::Queue(queue) => Some((queue, &mut self.waiters)),
            _ => None,
        }
    }

    /// The map's store if it exists.
    pub fn existing_mut(&mut self, name: &str) -> Option<&mut RecordStore> {
        self.existing_object_mut(ObjectKind::Map, name).and_then(Object::as_map_mut)
    }

    /// Drops a map's data in this partition (destroy); returns how many entries it held.
    pub fn drop_map(&mut self, name: &str) -> usize {
        let Some(mut object) = self.drop_object(ObjectKind::Map, name) else { return 0 };
        // Requests parked on its locks go with it, unanswered, as they always have.
        self.take_waiting(&mut object);
        object.as_object().entry_count()
    }

    pub fn maps(&self) -> impl Iterator<Item = (&str, &RecordStore)> {
        self.objects().filter_map(|(_, name, object)| Some((name, object.as_map()?)))
    }
}

impl Object {
    pub(crate) fn as_map(&self) -> Option<&RecordStore> {
        match self {
            Object::Map(store) => Some(store),
            #[allow(unreachable_patterns, reason = "maps are the only kind outside tests")]
            _ => None,
        }
    }

    pub(crate) fn as_map_mut(&mut self) -> Option<&mut RecordStore> {
        match self {
            Object::Map(store) => Some(store),
            #[allow(unreachable_patterns, reason = "maps are the only kind outside tests")]
            _ => None,
        }
    }
}

/// A test double: the smallest partition object that is not a map (an append-only log of
/// byte strings), to show that backups, snapshots, migration and drop reach any kind through
/// [`PartitionObject`] alone.
#[cfg(test)]
pub(crate) mod probe {
    use super::*;
    use crate::cluster::peer::{put_bytes, Malformed, Reader, SnapshotWriter};

    #[derive(Debug, Default)]
    pub(crate) struct Probe {
        pub(crate) items: Vec<Box<[u8]>>,
        /// Items before this index were sent to backups (or need not be).
        sent: usize,
        track: bool,
    }

    impl Probe {
        pub(crate) fn append(&mut self, item: &[u8]) {
            self.items.push(item.into());
            if !self.track {
                self.sent = self.items.len();
            }
        }

        fn apply_items(&mut self, body: &[u8]) -> Result<(), Malformed> {
            let mut reader = Reader::new(body);
            while !reader.is_empty() {
                self.items.push(reader.bytes()?.into());
            }
            self.sent = self.items.len();
            Ok(())
        }
    }

    impl PartitionObject for Probe {
        fn create(_kind: ObjectKind, _name: &str, _settings: &mut SettingsCache) -> Self {
            Probe::default()
        }
        fn entry_count(&self) -> usize {
            self.items.len()
        }
        fn held_bytes(&self) -> usize {
            self.items.iter().map(|item| item.len()).sum()
        }
        fn set_track_changes(&mut self, track: bool) {
            self.track = track;
            self.sent = self.items.len();
        }
        fn sync_backup_count(&self) -> usize {
            1
        }
        fn write_changes(&mut self, body: &mut Vec<u8>) {
            self.items[self.sent..].iter().for_each(|item| put_bytes(body, item));
            self.sent = self.items.len();
        }
        fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
            self.apply_items(body)
        }
        fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
            self.items.iter().for_each(|item| writer.entry(|out| put_bytes(out, item)));
        }
        fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
            self.apply_items(body)
        }
    }

    /// The probe named `name` in `partition`, created if absent.
    pub(crate) fn probe<'a>(partition: &'a mut PartitionStore, name: &str) -> &'a mut Probe {
        match partition.object_mut(ObjectKind::Probe, name, || Object::Probe(Probe::default())) {
            Object::Probe(probe) => probe,
            _ => unreachable!("filed under the probe kind"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::probe::probe;
    use super::*;
    use std::sync::Arc;

    #[test]
    fn objects_of_different_kinds_may_share_a_name() {
        let mut partition = PartitionStore::default();
        partition.map_mut("orders", || Arc::new(MapSettings::default())).put(b"k", b"v", 0, -1, -1);
        probe(&mut partition, "orders").append(b"item");
        probe(&mut partition, "orders").append(b"next");
        assert_eq!(partition.map("orders").unwrap().len(), 1);
        assert_eq!(partition.object(ObjectKind::Probe, "orders").unwrap().as_object().entry_count(), 2);
        assert_eq!(partition.objects().count(), 2);
        assert_eq!(partition.maps().count(), 1, "the map view sees maps only");
        assert_eq!(partition.drop_map("orders"), 1);
        assert!(partition.object(ObjectKind::Probe, "orders").is_some(), "destroying the map leaves the probe");
        partition.drop_all();
        assert_eq!(partition.objects().count(), 0);
    }

    #[test]
    fn change_tracking_reaches_every_object_present_and_future() {
        let mut partition = PartitionStore::default();
        probe(&mut partition, "before").append(b"untracked");
        partition.set_track_changes(true);
        probe(&mut partition, "before").append(b"a");
        probe(&mut partition, "after").append(b"b");
        let mut changes = Vec::new();
        for (_, _, object) in partition.objects_mut() {
            let mut body = Vec::new();
            object.as_object_mut().write_changes(&mut body);
            changes.push(body);
        }
        changes.sort();
        assert_eq!(changes, vec![[1, 0, 0, 0, b'a'].to_vec(), [1, 0, 0, 0, b'b'].to_vec()]);
        partition.set_track_changes(false);
        probe(&mut partition, "after").append(b"c");
        let mut body = Vec::new();
        partition.existing_object_mut(ObjectKind::Probe, "after").unwrap().as_object_mut().write_changes(&mut body);
        assert!(body.is_empty(), "nothing is recorded once tracking stops");
    }

    #[test]
    fn kinds_round_trip_through_their_codes() {
        for kind in [ObjectKind::Map, ObjectKind::Probe] {
            assert_eq!(ObjectKind::from_code(kind.code()), Some(kind));
        }
        assert_eq!(ObjectKind::from_code(0), None);
    }
}
