//! The one interface through which everything that does not know a partition object's kind
//! reaches it ([`PartitionObject`]): backups, migration snapshots, promotion, dropping a
//! replica, destroy, tenant quotas, metrics, the expiry sweep and a client's departure. Each
//! kind's store implements it (maps: `engine/map/store.rs`); `objects.rs` holds the objects.

use crate::cluster::peer::{Malformed, SnapshotWriter};
use crate::engine::locks::Parked;
use crate::engine::request::WaiterId;
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use ferrogrid_protocol::Uuid;

/// A removed entry, for its key and value (EVICTED / EXPIRED events).
pub type RemovedEntry = crate::engine::map::entry::Entry;

/// What every kind of partition object implements: everything replication, migration,
/// destroy, tenant quotas and metrics need, so that none of them knows a kind's records.
///
/// Called only by the reactor that owns the partition. A kind's change and snapshot bodies
/// are its own encoding (read with `peer::Reader`, written with `peer::put_bytes` and plain
/// little-endian integers); `peer.rs` frames them with the object's kind and name.
pub(crate) trait PartitionObject {
    /// A new, empty object of `kind` named `name`, with its settings from configuration
    /// (resolved once per reactor by `settings`; a store that serves more than one kind, as
    /// lists and sets share one, picks by `kind`).
    fn create(kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self
    where
        Self: Sized;

    /// Entries held (records, items), for tenant quotas, metrics and destroy's count.
    fn entry_count(&self) -> usize;

    /// Bytes of keys and values held, for tenant quotas and metrics.
    fn held_bytes(&self) -> usize;

    /// Starts or stops recording changes for backups (the partition is owned here and has
    /// backups). Stopping forgets what was recorded.
    fn set_track_changes(&mut self, track: bool);

    /// The object was placed in slot `slot` of its reactor's partitions (the reactor's
    /// per-object state, as a map's indexes, can hold it from now on).
    fn place(&mut self, _slot: u32) {}

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

    /// Answers the reads parked in the object's event journal (maps' and caches') that events
    /// appended outside a request (a fan-out share, the expiry sweep) made possible. Kinds
    /// without a journal keep this default.
    fn serve_journal_readers(&mut self, _waiters: &mut dyn crate::engine::request::Waiters) {}

    /// Takes the ids of every request waiting here (on a key lock, for an item or room): the
    /// partition moved away and they are answered "retry", or the object is destroyed. Kinds
    /// whose requests never wait keep this default.
    fn take_waiting(&mut self) -> Vec<WaiterId> {
        Vec::new()
    }

    /// Whether the object has been empty and unused past its configured time (a queue's
    /// `empty-queue-ttl`), to be destroyed; it then counts as used, so that it is not chosen
    /// again while the destroy runs. Kinds that never go idle keep this default.
    fn take_idle(&mut self, _now_ms: i64) -> bool {
        false
    }

    /// Whether the metrics' per-object figures (items, bytes) count this object: maps have
    /// figures of their own, replicated maps only with `statistics-enabled`.
    fn in_object_figures(&self) -> bool {
        true
    }

    /// Whether the object's changes go to its partition's log when the member persists
    /// (`data-persistence.enabled`), and if so whether each must be synced before its answer
    /// (`fsync`). Kinds that are not persisted keep this default (None).
    fn persistence(&self) -> Option<bool> {
        None
    }

    /// The kind's key locks (maps and multimaps); kinds without key locks keep this default.
    fn locks_mut(&mut self) -> Option<&mut crate::engine::locks::LockTable> {
        None
    }
}
