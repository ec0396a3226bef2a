//! The objects of one partition ([`PartitionStore`]): a table of named objects of any kind,
//! and the typed accessors each kind's operations reach their store by (maps: [`PartitionStore::map_mut`]).
//!
//! A partition holds named objects keyed by (kind, name): a map and a queue may share a name,
//! as in Hazelcast, whose services each have their own namespace. Each kind is one structure
//! whose store implements [`PartitionObject`] (`object.rs`), with its line in the table of
//! structures (`engine/structures.rs`: its [`ObjectKind`] and store type, from which the
//! [`Object`] enum below is made). A structure reaches its objects by its kind as a type
//! ([`PartitionStore::store_mut`]`::<kind::Queue>`), with no accessor of its own here.
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

use crate::engine::map::store::RecordStore;
use crate::engine::settings::{MapSettings, SettingsCache};
use crate::engine::structures::ObjectKind;
use crate::net::connection::ReplyTo;
use crate::partition::object::PartitionObject;
use crate::partition::waiters::WaiterTable;
use ahash::RandomState;
use std::sync::Arc;

/// Makes [`Object`] from the table of structures (`engine/structures.rs`): a variant per kind,
/// holding the kind's store, and its arms in `Object`'s constructor and views.
macro_rules! partition_objects {
    ($($kind:ident = $code:literal, $service:literal, $label:literal, $held:ident:
        $($store:ident)::+, [$($($rows:ident)::+),+], $($destroy:ident)::+;)+) => {
        /// One object of a partition: its kind's store, inline.
        #[derive(Debug)]
        #[allow(clippy::large_enum_variant, reason = "inline, a map operation reaches its store without a pointer")]
        pub(crate) enum Object {
            $($kind(crate::engine::$($store)::+),)+
            #[cfg(test)]
            Probe(probe::Probe),
        }

        impl Object {
            /// A new, empty object of `kind` named `name`.
            pub(crate) fn new(kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Object {
                match kind {
                    $(ObjectKind::$kind => Object::$kind(PartitionObject::create(kind, name, settings)),)+
                    #[cfg(test)]
                    ObjectKind::Probe => Object::Probe(probe::Probe::create(kind, name, settings)),
                }
            }

            pub(crate) fn kind(&self) -> ObjectKind {
                match self {
                    $(Object::$kind(_) => ObjectKind::$kind,)+
                    #[cfg(test)]
                    Object::Probe(_) => ObjectKind::Probe,
                }
            }

            /// The object as any kind, for code that does not care which.
            pub(crate) fn as_object(&self) -> &dyn PartitionObject {
                match self {
                    $(Object::$kind(store) => store,)+
                    #[cfg(test)]
                    Object::Probe(store) => store,
                }
            }

            pub(crate) fn as_object_mut(&mut self) -> &mut dyn PartitionObject {
                match self {
                    $(Object::$kind(store) => store,)+
                    #[cfg(test)]
                    Object::Probe(store) => store,
                }
            }
        }

        /// Each kind as a type, for [`PartitionStore::store_mut`] and its siblings
        /// (`kind::Queue`).
        pub(crate) mod kind {
            $(
                #[derive(Debug)]
                pub(crate) enum $kind {}
            )+
        }

        $(impl Kind for kind::$kind {
            const KIND: ObjectKind = ObjectKind::$kind;
            type Store = crate::engine::$($store)::+;

            fn store(object: &Object) -> Option<&Self::Store> {
                match object {
                    Object::$kind(store) => Some(store),
                    #[allow(unreachable_patterns, reason = "one kind per variant")]
                    _ => None,
                }
            }

            fn store_mut(object: &mut Object) -> Option<&mut Self::Store> {
                match object {
                    Object::$kind(store) => Some(store),
                    #[allow(unreachable_patterns, reason = "one kind per variant")]
                    _ => None,
                }
            }
        })+
    };
}

/// A kind of partition object as a type (`kind::Queue`): its store's type, and the store in
/// an [`Object`] of the kind. A structure reaches its objects by it, with no accessor of its
/// own here.
pub(crate) trait Kind {
    const KIND: ObjectKind;
    type Store: PartitionObject + 'static;
    fn store(object: &Object) -> Option<&Self::Store>;
    fn store_mut(object: &mut Object) -> Option<&mut Self::Store>;
}

crate::engine::structures::with_structures!(partition_objects);

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
    /// Its place in its reactor's partitions (None: a partition outside a reactor).
    slot: Option<u32>,
    /// Where the requests waiting in this partition's objects are answered.
    pub(crate) waiters: WaiterTable,
    /// When the member persists: objects destroyed (`false`) or emptied by a clear on every
    /// replica (`true`) since the partition's log last heard of it (the log records them,
    /// `persistence/logs.rs`). None: not recorded.
    pub(crate) dropped: Option<Vec<(ObjectKind, Box<str>, bool)>>,
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
        let (track, slot) = (self.track_changes, self.slot);
        let object = self.objects.entry_ref(&ObjectRef { kind, name }).or_insert_with(|| {
            let mut object = create();
            assert_eq!(object.kind(), kind, "an object is filed under its own kind");
            object.as_object_mut().set_track_changes(track);
            if let Some(slot) = slot {
                object.as_object_mut().place(slot);
            }
            object
        });
        (object, &mut self.waiters)
    }

    pub(crate) fn existing_object_mut(&mut self, kind: ObjectKind, name: &str) -> Option<&mut Object> {
        self.objects.get_mut(&ObjectRef { kind, name })
    }

    /// Removes an object (destroy); returns it, if it was here.
    pub(crate) fn drop_object(&mut self, kind: ObjectKind, name: &str) -> Option<Object> {
        let object = self.objects.remove(&ObjectRef { kind, name });
        if let Some(dropped) = self.dropped.as_mut().filter(|_| object.is_some()) {
            dropped.push((kind, name.into(), false));
        }
        object
    }

    /// Object `kind` `name` was changed in place on every replica (a clear), not through
    /// recorded changes: its log takes its whole state again.
    pub(crate) fn note_replaced(&mut self, kind: ObjectKind, name: &str) {
        if let Some(dropped) = self.dropped.as_mut() {
            dropped.push((kind, name.into(), true));
        }
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

    /// Answers the reads parked in the journal of object `name` of `kind` (a map's or a
    /// cache's) that its new events made possible; the answers go to `others`.
    pub(crate) fn serve_journal_of(
        &mut self,
        kind: ObjectKind,
        name: &str,
        others: &mut Vec<crate::partition::waiters::OtherAnswer>,
    ) {
        let Some(object) = self.objects.get_mut(&ObjectRef { kind, name }) else { return };
        object.as_object_mut().serve_journal_readers(&mut self.waiters.answering(others));
    }

    /// Answers the journal reads (maps' and caches') that events appended outside a request
    /// made possible; the answers go to `others`.
    pub(crate) fn serve_journal_readers(&mut self, others: &mut Vec<crate::partition::waiters::OtherAnswer>) {
        let mut answering = self.waiters.answering(others);
        for object in self.objects.values_mut() {
            object.as_object_mut().serve_journal_readers(&mut answering);
        }
    }

    /// Drops every object of the partition's replicas (this member no longer holds a replica
    /// of the partition, or a snapshot replaces it); objects every member holds (replicated
    /// maps) stay.
    pub fn drop_all(&mut self) {
        self.objects.retain(|key, _| key.kind.is_everywhere());
        // Only kinds held per partition have waiters: they went with their objects, unanswered.
        self.waiters.clear();
    }

    /// The partition in slot `slot` of its reactor's partitions, whose waiter table holds at
    /// most `capacity_waiters` waiters.
    pub(crate) fn in_slot(slot: usize, capacity_waiters: usize) -> PartitionStore {
        let slot = Some(u32::try_from(slot).expect("fewer partitions than u32::MAX"));
        PartitionStore { waiters: WaiterTable::new(capacity_waiters), slot, ..PartitionStore::default() }
    }

    /// Takes every request waiting in `object` (one of this partition's, or one just dropped
    /// from it): where their answers go. They leave the waiter table.
    pub(crate) fn take_waiting(&mut self, object: &mut Object) -> Vec<ReplyTo> {
        self.waiters.take_all(object.as_object_mut().take_waiting())
    }

    /// The `K` object `name` of this partition, created on first use with its configured
    /// settings, and the partition's waiter table.
    pub(crate) fn store_mut<K: Kind>(
        &mut self,
        name: &str,
        settings: &mut SettingsCache,
    ) -> (&mut K::Store, &mut WaiterTable) {
        let create = || Object::new(K::KIND, name, settings);
        let (object, waiters) = self.object_and_waiters(K::KIND, name, create);
        (K::store_mut(object).expect("filed under its own kind"), waiters)
    }

    /// The `K` object `name` if this partition has it.
    pub(crate) fn store<K: Kind>(&self, name: &str) -> Option<&K::Store> {
        K::store(self.object(K::KIND, name)?)
    }

    /// The `K` object `name` if this partition has it.
    pub(crate) fn existing_store_mut<K: Kind>(&mut self, name: &str) -> Option<&mut K::Store> {
        K::store_mut(self.existing_object_mut(K::KIND, name)?)
    }

    /// The `K` object `name` if this partition has it, and the partition's waiter table.
    pub(crate) fn existing_store_and_waiters<K: Kind>(
        &mut self,
        name: &str,
    ) -> Option<(&mut K::Store, &mut WaiterTable)> {
        let object = self.objects.get_mut(&ObjectRef { kind: K::KIND, name })?;
        Some((K::store_mut(object)?, &mut self.waiters))
    }

    /// Every `K` object of this partition.
    pub(crate) fn stores<K: Kind>(&self) -> impl Iterator<Item = (&str, &K::Store)> {
        self.objects().filter_map(|(_, name, object)| Some((name, K::store(object)?)))
    }

    pub(crate) fn stores_mut<K: Kind>(&mut self) -> impl Iterator<Item = (&str, &mut K::Store)> {
        self.objects_mut().filter_map(|(_, name, object)| Some((name, K::store_mut(object)?)))
    }

    /// Drops every `K` object of this partition.
    pub(crate) fn drop_stores<K: Kind>(&mut self) {
        self.objects.retain(|key, _| key.kind != K::KIND);
    }

    /// The key locks of the object (`kind`) `name`, if this partition has it and its kind
    /// has key locks (maps and multimaps).
    pub(crate) fn lock_table_mut(
        &mut self,
        kind: ObjectKind,
        name: &str,
    ) -> Option<&mut crate::engine::locks::LockTable> {
        self.existing_object_mut(kind, name)?.as_object_mut().locks_mut()
    }
}

/// A partition's maps: the map service's typed view of [`PartitionStore`] (whose other
/// objects it does not see). For map operations (`engine/map/ops.rs`, `engine/map/wide.rs`) on the
/// partition's reactor.
impl PartitionStore {
    pub fn map(&self, name: &str) -> Option<&RecordStore> {
        self.store::<kind::Map>(name)
    }

    /// The map's store, created on first use with `settings`.
    pub fn map_mut(&mut self, name: &str, settings: impl FnOnce() -> Arc<MapSettings>) -> &mut RecordStore {
        let object = self.object_mut(ObjectKind::Map, name, || Object::Map(RecordStore::new(settings())));
        <kind::Map as Kind>::store_mut(object).expect("an object filed as a map is a map")
    }

    /// The map's store if it exists.
    pub fn existing_mut(&mut self, name: &str) -> Option<&mut RecordStore> {
        self.existing_store_mut::<kind::Map>(name)
    }

    /// Drops a map's data in this partition (destroy); returns how many entries it held.
    pub fn drop_map(&mut self, name: &str) -> usize {
        let Some(mut object) = self.drop_object(ObjectKind::Map, name) else { return 0 };
        // Requests parked on its locks go with it, unanswered, as they always have.
        self.take_waiting(&mut object);
        object.as_object().entry_count()
    }

    pub fn maps(&self) -> impl Iterator<Item = (&str, &RecordStore)> {
        self.stores::<kind::Map>()
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
