//! The objects of one partition, and the one interface through which everything that does not
//! know an object's kind reaches it: backups, migration snapshots, promotion, dropping a
//! replica, destroy, tenant quotas, metrics, the expiry sweep and a client's departure.
//!
//! A partition holds named objects keyed by (kind, name): a map and a queue may share a name,
//! as in Hazelcast, whose services each have their own namespace. Each kind is one module
//! whose store implements [`PartitionObject`] and has one row in the `partition_objects!`
//! table below (its wire code and store type). Its operations reach its store through typed
//! accessors beside it (maps: `PartitionStore::map_mut` in `store.rs`).
//!
//! Stores live inline in the partition's hash table, in the [`Object`] enum, not boxed behind
//! `dyn`: a map operation reaches its store with one hash lookup and a match, no extra pointer
//! and no downcast. Code that does not care about the kind takes a `&dyn PartitionObject`
//! view of the enum ([`Object::as_object`]); those paths (replication, migration, sweeps)
//! walk objects, not entries, so an indirect call there costs nothing measurable.
//!
//! Owned and written by exactly one thread: the reactor that owns the partition
//! (`partition % reactor_count == reactor index`). No locks; other threads reach a partition
//! only by handing an operation to its reactor.

use crate::locks::Parked;
use crate::map_ops::SettingsCache;
use crate::peer::{Malformed, SnapshotWriter};
use crate::store::RemovedEntry;
use ahash::RandomState;
use ferrogrid_protocol::Uuid;

/// What every kind of partition object implements: everything replication, migration,
/// destroy, tenant quotas and metrics need, so that none of them knows a kind's records.
///
/// Called only by the reactor that owns the partition. A kind's change and snapshot bodies
/// are its own encoding (read with `peer::Reader`, written with `peer::put_bytes` and plain
/// little-endian integers); `peer.rs` frames them with the object's kind and name.
pub(crate) trait PartitionObject {
    /// A new, empty object named `name`, with its settings from configuration (resolved once
    /// per reactor by `settings`).
    fn create(name: &str, settings: &mut SettingsCache) -> Self
    where
        Self: Sized;

    /// Entries held (records, items), for tenant quotas, metrics and destroy's count.
    fn entry_count(&self) -> usize;

    /// Bytes of keys and values held, for tenant quotas and metrics.
    fn held_bytes(&self) -> usize;

    /// Starts or stops recording changes for backups (the partition is owned here and has
    /// backups). Stopping forgets what was recorded.
    fn set_track_changes(&mut self, track: bool);

    /// Backups that must acknowledge a change before the operation is answered (from the
    /// kind's configuration); replicas past them get the changes asynchronously.
    fn sync_backup_count(&self) -> usize;

    /// Takes the changes recorded since the last call and appends them to `body` in the
    /// kind's encoding; appends nothing if there were none. Each change should carry the
    /// resulting state, so that applying one twice, or after a snapshot, is harmless.
    fn write_changes(&mut self, body: &mut Vec<u8>);

    /// Applies a body that `write_changes` wrote on the owner. On an error the body is
    /// malformed; changes before the bad one stay applied (each is whole on its own).
    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed>;

    /// Writes every entry for a new replica, one `writer.entry` call per entry (the writer
    /// cuts chunks between entries, so a call writes one whole entry).
    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>);

    /// Applies one chunk's run of entries that `write_snapshot` wrote (on top of what earlier
    /// chunks of the same snapshot applied).
    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed>;

    /// Removes expired entries, examining at most `budget`; returns what went (key, value),
    /// for EXPIRED events. Kinds without expiry keep this default.
    fn sweep_expired(&mut self, _now_ms: i64, _budget: usize) -> Vec<RemovedEntry> {
        Vec::new()
    }

    /// Releases what `client` holds here (its locks) and adds the requests that waited on it
    /// to `released`, to be re-run in order. Kinds nothing is held in keep this default.
    fn release_client(&mut self, _client: Uuid, _released: &mut Vec<Parked>) {}
}

/// The kinds of partition objects, one row each: `Kind = wire code => store type`. A row makes
/// the kind's [`ObjectKind`] variant with its code in BACKUP and SNAPSHOT records, its
/// [`Object`] variant, and its arms in `Object`'s constructor and views. Codes are never reused.
macro_rules! partition_objects {
    ($($(#[cfg($condition:meta)])? $kind:ident = $code:literal => $store:ty,)+) => {
        /// What kind of object a partition holds (which service's): half of its key, and its
        /// code in member records.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub(crate) enum ObjectKind {
            $($(#[cfg($condition)])? $kind = $code,)+
        }

        impl ObjectKind {
            pub(crate) fn code(self) -> u8 {
                self as u8
            }

            pub(crate) fn from_code(code: u8) -> Option<ObjectKind> {
                match code {
                    $($(#[cfg($condition)])? $code => Some(ObjectKind::$kind),)+
                    _ => None,
                }
            }
        }

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
                    $($(#[cfg($condition)])? ObjectKind::$kind => Object::$kind(<$store>::create(name, settings)),)+
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
    Map = 1 => crate::store::RecordStore,
    Queue = 2 => crate::queue::QueueStore,
    #[cfg(test)]
    Probe = 0x7F => probe::Probe,
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
/// typed accessors in `store.rs`, replication and the reactor's sweeps the ones here.
#[derive(Debug, Default)]
pub struct PartitionStore {
    objects: hashbrown::HashMap<ObjectKey, Object, RandomState>,
    /// Whether this member owns the partition and has backups to send changes to.
    track_changes: bool,
}

impl PartitionStore {
    pub(crate) fn object(&self, kind: ObjectKind, name: &str) -> Option<&Object> {
        self.objects.get(&ObjectRef { kind, name })
    }

    /// The object, created on first use by `create` (which must make one of `kind`); a new
    /// object records changes if the partition does. One lookup, no allocation if it exists.
    pub(crate) fn object_mut(&mut self, kind: ObjectKind, name: &str, create: impl FnOnce() -> Object) -> &mut Object {
        let track = self.track_changes;
        self.objects.entry_ref(&ObjectRef { kind, name }).or_insert_with(|| {
            let mut object = create();
            assert_eq!(object.kind(), kind, "an object is filed under its own kind");
            object.as_object_mut().set_track_changes(track);
            object
        })
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

    /// Drops every object (this member no longer holds a replica of the partition, or a
    /// snapshot replaces it).
    pub fn drop_all(&mut self) {
        self.objects.clear();
    }
}

/// A test double: the smallest partition object that is not a map (an append-only log of
/// byte strings), to show that backups, snapshots, migration and drop reach any kind through
/// [`PartitionObject`] alone.
#[cfg(test)]
pub(crate) mod probe {
    use super::*;
    use crate::peer::{put_bytes, Reader};

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
        fn create(_name: &str, _settings: &mut SettingsCache) -> Self {
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
    use crate::store::MapSettings;
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
