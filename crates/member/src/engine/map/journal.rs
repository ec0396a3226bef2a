//! A map's event journal (`event-journal` in the map's config): in each partition, the last
//! events of the map's entries there, each with its sequence, which clients read with
//! `Map.eventJournalSubscribe` (the oldest and newest sequence) and `Map.eventJournalRead`.
//!
//! The journal is a ringbuffer ([`RingbufferStore`]) inside the map's partition store, sized as
//! Hazelcast sizes it (the map's capacity divided by the partition count) and kept with the
//! same sequences on the backups: the owner appends each event and the map's backup body
//! carries the appended events (`store.rs`, JOURNAL), as a map snapshot carries the whole
//! journal, so a promoted backup or a migrated partition reads on from the same sequences.
//! Backups never append events themselves.
//!
//! Events are kept as Hazelcast serializes them for a reader: its
//! `DeserializingEventJournalMapEvent`, an IdentifiedDataSerializable (factory −4, class
//! [`EVENT_CLASS_ID`]) of the event type, key, new value and old value. What Hazelcast's map
//! writes to its journal: ADDED, UPDATED, REMOVED, and EVICTED for an eviction or an expiry.
//!
//! A read waits (as a ringbuffer readMany waits, parked in the journal) until `minSize`
//! events follow its start; a write to the map answers the reads it makes possible. A start
//! before the oldest event or after the newest is moved to them, as Hazelcast clamps it.
//! Owned by the reactor that owns the partition, like the map.

use crate::engine::java_code::{refusal, JavaRole};
use crate::engine::listeners::EventKind;
use crate::engine::map::store::RecordStore;
use crate::engine::request::{ErrorKind, OpError, Replies, Reply};
use crate::engine::ringbuffer::request::RingbufferOp;
use crate::engine::ringbuffer::rows::park_or_answered;
use crate::engine::ringbuffer::store::{self as ringbuffer, RingDone, RingbufferStore};
use crate::partition::object::RemovedEntry;
use crate::partition::objects::{kind, Kind, Object};
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::wire;
use ferrogrid_protocol::codec::MapEventJournalRead;
use ferrogrid_protocol::Data;
use std::borrow::Cow;

/// A journal event's IdentifiedDataSerializable factory and class ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventIds {
    pub factory: i32,
    pub class: i32,
}

/// A map's journal event: `MapDataSerializerHook`'s factory and its
/// `EVENT_JOURNAL_DESERIALIZING_MAP_EVENT` in Hazelcast 5.6 (seen on the wire).
pub(crate) const MAP_EVENT: EventIds = EventIds { factory: -4, class: 132 };
/// The IdentifiedDataSerializable serialization type id.
const IDENTIFIED_TYPE_ID: i32 = -2;

/// A request on a map's journal in one partition.
#[derive(Debug, Clone)]
pub struct JournalRequest<'a> {
    pub name: Cow<'a, str>,
    pub op: JournalOp,
}

#[derive(Debug, Clone)]
pub enum JournalOp {
    Subscribe,
    /// A read from `sequence` of `min..=max` events; `java`: the predicate or projection the
    /// client sent (Java code the member would run), refused.
    Read {
        sequence: i64,
        min: i32,
        max: i32,
        java: Option<(Box<[u8]>, JavaRole)>,
    },
}

/// The request of a journal row (`rows.rs`): subscribe, or a read.
pub(crate) fn journal(name: &str, op: JournalOp) -> JournalRequest<'_> {
    JournalRequest { name: Cow::Borrowed(name), op }
}

/// A read from `sequence` of `min..=max` events; a predicate or projection is refused.
pub(crate) fn read<'a>(r: &MapEventJournalRead<'a>) -> JournalRequest<'a> {
    journal(r.name, read_op((r.start_sequence, r.min_size, r.max_size), r.predicate, r.projection))
}

/// A journal read (a map's or a cache's) from `sequence` of `min..=max` events, with the
/// predicate or projection the client sent, if any (refused when run).
pub(crate) fn read_op(
    (sequence, min, max): (i64, i32, i32),
    predicate: Option<Data<'_>>,
    projection: Option<Data<'_>>,
) -> JournalOp {
    let code = predicate.map(|p| (p, JavaRole::JournalPredicate));
    let code = code.or(projection.map(|p| (p, JavaRole::JournalProjection)));
    let java = code.map(|(data, role)| (Box::from(data.0), role));
    JournalOp::Read { sequence, min, max, java }
}

/// Hazelcast's error for a map without an enabled journal; a read names the map's namespace.
fn not_enabled(name: &str, op: &JournalOp) -> OpError {
    let what = match op {
        JournalOp::Subscribe => format!("map '{name}'"),
        JournalOp::Read { .. } => {
            format!("DistributedObjectNamespace{{service='hz:impl:mapService', objectName='{name}'}}")
        }
    };
    let text = format!("Cannot subscribe to event journal because it is either not configured or disabled for {what}");
    OpError::new(ErrorKind::Unsupported, text)
}

/// Subscribe answers at once; a read answers, or parks in the journal until events arrive.
impl Execute for JournalRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        if owner.settings.get(&self.name).journal.is_none() {
            // Refused before the map's store would be made in the partition for it.
            wire::replace_with_error(out, start, call.correlation_id, &not_enabled(&self.name, &self.op));
            return owner.hold_behind_writes(call.partition_id, call.connection, out, start);
        }
        let max_waiters = owner.settings.max_parked_per_key();
        let now_ms = owner.now_ms;
        let (store, waiters) = owner.partitions[call.local].store_mut::<kind::Map>(&self.name, &mut owner.settings);
        store.op_counts[call.counter_slot] += 1;
        let journal = store.journal.as_deref_mut().ok_or_else(|| not_enabled(&self.name, &self.op));
        let outcome = journal.and_then(|ring| run_parking(ring, waiters, &self.op, call, out, (now_ms, max_waiters)));
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        owner.hold_behind_writes(call.partition_id, call.connection, out, start);
    }
}

/// Runs a journal request (a map's or a cache's) on `ring`, its answer written to `out`; a
/// read that must wait parks in the journal, registered in the partition's `waiters` (at
/// most `max_waiters`).
pub(crate) fn run_parking(
    ring: &mut RingbufferStore,
    waiters: &mut crate::partition::waiters::WaiterTable,
    op: &JournalOp,
    call: &Call<'_>,
    out: &mut Vec<u8>,
    (now_ms, max_waiters): (i64, usize),
) -> Result<(), OpError> {
    // A waiting read answers nobody else now: nothing goes to other connections.
    let mut others = Vec::new();
    let mut answering = waiters.answering(&mut others);
    let mut reply = call.replies(out);
    let done = run(ring, op, now_ms, &mut |answer| reply.reply(answer));
    park_or_answered(done, ring, &mut answering, call, max_waiters)
}

/// Runs a journal request (a map's or a cache's) on the partition's journal `ring` at
/// `now_ms` (events past their time to live are gone first, as Hazelcast cleans up before both).
pub(crate) fn run(
    ring: &mut RingbufferStore,
    op: &JournalOp,
    now_ms: i64,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<RingDone, OpError> {
    ring.expire(now_ms);
    match op {
        JournalOp::Subscribe => {
            let (oldest, newest) = ring.sequences();
            reply(Reply::Sequences { oldest, newest });
            Ok(RingDone::Answered)
        }
        JournalOp::Read { java: Some((code, role)), .. } => Err(refusal(code, *role)),
        JournalOp::Read { sequence, min, max, java: None } => {
            let read = RingbufferOp::Read { sequence: *sequence, min: *min, max: *max, one: false, filter: None };
            ringbuffer::execute(ring, &read, now_ms, reply)
        }
    }
}

/// Hazelcast's journal event type of a map event: an expiry is journaled as an eviction;
/// None for the events the journal does not keep.
fn journal_type(kind: EventKind) -> Option<i32> {
    match kind {
        EventKind::Added | EventKind::Updated | EventKind::Removed | EventKind::Evicted => Some(kind as i32),
        EventKind::Expired => Some(EventKind::Evicted as i32),
        EventKind::EvictAll | EventKind::ClearAll | EventKind::Merged => None,
    }
}

/// A journal event as Hazelcast serializes it for readers (big-endian, as Hazelcast's data).
pub(crate) fn event_data(
    ids: EventIds,
    event_type: i32,
    key: &[u8],
    new_value: Option<&[u8]>,
    old_value: Option<&[u8]>,
) -> Box<[u8]> {
    let length = |bytes: Option<&[u8]>| bytes.map_or(0, <[u8]>::len);
    let mut out = Vec::with_capacity(33 + key.len() + length(new_value) + length(old_value));
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&IDENTIFIED_TYPE_ID.to_be_bytes());
    out.push(1);
    out.extend_from_slice(&ids.factory.to_be_bytes());
    out.extend_from_slice(&ids.class.to_be_bytes());
    out.extend_from_slice(&event_type.to_be_bytes());
    for data in [Some(key), new_value, old_value] {
        match data {
            Some(bytes) => {
                let length = i32::try_from(bytes.len()).expect("data fits a message");
                out.extend_from_slice(&length.to_be_bytes());
                out.extend_from_slice(bytes);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    out.into_boxed_slice()
}

impl RecordStore {
    /// Appends an event of one entry to the map's journal, if it has one (owner only: the
    /// backups receive the appended events).
    pub(crate) fn journal_event(
        &mut self,
        kind: EventKind,
        key: &[u8],
        new_value: Option<&[u8]>,
        old_value: Option<&[u8]>,
        now_ms: i64,
    ) {
        let (Some(ring), Some(event_type)) = (self.journal.as_deref_mut(), journal_type(kind)) else { return };
        ring.append(event_data(MAP_EVENT, event_type, key, new_value, old_value), now_ms);
    }
}

/// Journals the entries the expiry sweep removed from a map's partition this member owns
/// (its backups receive the events with the partition's next backup body).
pub(crate) fn journal_expired(object: &mut Object, expired: &[RemovedEntry], now_ms: i64) {
    let Some(store) = <kind::Map as Kind>::store_mut(object) else { return };
    for entry in expired {
        store.journal_event(EventKind::Expired, entry.key(), None, Some(entry.value()), now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_hazelcasts_identified_data() {
        let data = event_data(MAP_EVENT, 4, b"k", Some(b"new"), None);
        let data = Data(&data);
        assert_eq!(data.type_id(), Some(IDENTIFIED_TYPE_ID));
        let payload = data.payload();
        assert_eq!(payload[0], 1, "identified");
        assert_eq!(&payload[1..5], &(-4i32).to_be_bytes());
        assert_eq!(&payload[5..9], &132i32.to_be_bytes());
        assert_eq!(&payload[9..13], &4i32.to_be_bytes());
        assert_eq!(&payload[13..18], b"\0\0\0\x01k");
        assert_eq!(&payload[18..25], b"\0\0\0\x03new");
        assert_eq!(&payload[25..], &(-1i32).to_be_bytes());
        assert_eq!(journal_type(EventKind::Expired), Some(8), "an expiry is journaled as an eviction");
        assert_eq!(journal_type(EventKind::ClearAll), None);
    }

    fn journaled(capacity: u32) -> RecordStore {
        let event_journal = ferrogrid_config::EventJournalConfig { enabled: true, capacity, time_to_live_seconds: 0 };
        let config = ferrogrid_config::MapConfig { event_journal, ..ferrogrid_config::MapConfig::DEFAULT };
        let mut settings = crate::engine::settings::MapSettings::resolve(&config, 271, 1);
        settings.journal.as_mut().expect("enabled").1 = 1 << 20;
        RecordStore::new(std::sync::Arc::new(settings))
    }

    fn sequences(store: &RecordStore) -> (i64, i64) {
        store.journal.as_ref().expect("a journal").sequences()
    }

    #[test]
    fn backups_and_snapshots_carry_the_journal_with_its_sequences() {
        use crate::partition::object::PartitionObject;
        let mut owner = journaled(2710);
        owner.set_track_changes(true);
        for index in 0..15u8 {
            owner.journal_event(EventKind::Added, &[index], Some(b"v"), None, 0);
        }
        owner.journal_event(EventKind::Merged, b"k", Some(b"v"), None, 0);
        assert_eq!(sequences(&owner), (5, 14), "10 events a partition; a merge is not journaled");
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        let mut backup = journaled(2710);
        backup.apply_backup(&body).expect("a valid body");
        assert_eq!(sequences(&backup), (5, 14), "the backup has the same sequences");
        let mut out = Vec::new();
        let mut writer = crate::cluster::peer::SnapshotWriter::new(&mut out, 0, 1, 1 << 16);
        writer.begin_object(crate::engine::structures::ObjectKind::Map, "m");
        owner.write_snapshot(&mut writer);
        writer.finish();
        let mut replica = journaled(2710);
        for chunk in crate::cluster::peer::tests::snapshot_chunks(&out) {
            for object in crate::cluster::peer::read_snapshot(&chunk).expect("a snapshot").1 {
                replica.apply_snapshot(object.body).expect("a valid snapshot");
            }
        }
        assert_eq!(sequences(&replica), (5, 14), "a migrated journal keeps its sequences");
        let plain = RecordStore::new(std::sync::Arc::default());
        assert!(plain.journal.is_none(), "no journal unless enabled");
    }
}
