//! A split-brain merge's map entries arriving in the cluster they merge into: a member that left
//! its (smaller) cluster replays the entries it owned there through each map's merge policy
//! (`cluster/merge.rs` keeps and sends them). [`MergeEntries`] is that batch as a fan-out: every
//! member's owners decide, per entry, between the merging entry and the one they hold, as
//! Hazelcast's `MapMergeOperation` does, and publish MERGED events; the reactor sends the changes
//! to the backups as it does a transaction's commit.

use crate::engine::listeners::{Event, EventKind};
use crate::engine::map::entry::Meta;
use crate::engine::map::store::RecordStore;
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Partitions, ShareContext, WideOperation};
use ferrogrid_config::{MergePolicy, MergingEntry};
use ferrogrid_protocol::message::{MessageWriter, REQUEST_HEADER_SIZE};
use ferrogrid_protocol::{DecodeError, Message, MessageType, PartitionId};

/// Members' internal request carrying one batch of a merging map's entries (never accepted from
/// a client: the operation table has no row for it).
pub(crate) const MERGE_ENTRIES: MessageType = MessageType(0x01_FF00);

/// One entry of the merging side, with the metadata its policy compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergingRecord {
    pub(crate) key: Box<[u8]>,
    pub(crate) value: Box<[u8]>,
    pub(crate) meta: Meta,
}

/// One map's (or replicated map's) entries this member owned when its cluster merged into
/// another, and its policy.
#[derive(Debug)]
pub(crate) struct MergingMap {
    /// The request that carries its batches: MERGE_ENTRIES (an IMap's) or MERGE_REPLICATED (a
    /// replicated map's).
    pub(crate) message_type: MessageType,
    pub(crate) name: Box<str>,
    pub(crate) policy: ferrogrid_config::MergePolicyConfig,
    pub(crate) records: Vec<MergingRecord>,
}

/// A reactor's part of a merge: what it owned, kept from leaving its cluster until the cluster
/// it joined is settled, then sent in batches.
#[derive(Debug, Default)]
pub(crate) struct Merging {
    pub(crate) maps: Vec<MergingMap>,
    /// Its queues, lists, sets and ringbuffers, each sent whole (`engine/container_merge.rs`).
    pub(crate) containers: Vec<crate::engine::container_merge::MergingContainer>,
    /// The cluster it joined is settled: send the batches (a bounded number per sweep).
    pub(crate) replaying: bool,
}

/// A batch of one map's merging entries and the map's policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergeEntries {
    pub(crate) policy: MergePolicy,
    pub(crate) records: Vec<MergingRecord>,
}

const META_FIELDS: usize = Meta::FIELDS;

/// What the merge policy compares of an entry.
fn stats(meta: &Meta) -> MergingEntry {
    MergingEntry {
        hits: meta.hits,
        last_access_time_ms: meta.last_access_time_ms,
        last_update_time_ms: meta.last_update_time_ms,
        expiration_time_ms: meta.expiration_time_ms(),
    }
}

impl MergeEntries {
    /// The MERGE_ENTRIES (or MERGE_REPLICATED) request for `map`: the policy's number in the
    /// initial frame, the name, then per entry its key, value and metadata frames.
    pub(crate) fn encode(&self, message_type: MessageType, map: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut writer = MessageWriter::request(&mut out, message_type, 0, -1, 0);
        writer.fixed(&i32::from(self.policy.code()));
        writer.frame(map.as_bytes()).begin();
        let mut meta = Vec::with_capacity(META_FIELDS * 8);
        for record in &self.records {
            meta.clear();
            for field in record.meta.fields() {
                meta.extend_from_slice(&field.to_le_bytes());
            }
            writer.frame(&record.key).frame(&record.value).frame(&meta);
        }
        writer.end();
        writer.finish();
        out
    }

    /// Decodes [`MergeEntries::encode`]'s request: the map's name and the batch.
    pub(crate) fn decode(message: &Message<'_>) -> Result<(String, MergeEntries), DecodeError> {
        let index: i32 = message.fixed(REQUEST_HEADER_SIZE)?.read()?;
        let policy = u8::try_from(index)
            .ok()
            .and_then(MergePolicy::from_code)
            .ok_or(DecodeError::UnexpectedFrame("a known merge policy"))?;
        let mut reader = message.reader();
        let map = reader.string()?.to_owned();
        reader.begin()?;
        let mut records = Vec::new();
        while !reader.at_end()? {
            let key = reader.value_frame("a merging key")?.into();
            let value = reader.value_frame("a merging value")?.into();
            let bytes = reader.value_frame("a merging entry's metadata")?;
            if bytes.len() != META_FIELDS * 8 {
                return Err(DecodeError::UnexpectedFrame("64 bytes of a merging entry's metadata"));
            }
            let mut fields = [0i64; META_FIELDS];
            for (field, chunk) in fields.iter_mut().zip(bytes.chunks_exact(8)) {
                *field = i64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            }
            records.push(MergingRecord { key, value, meta: Meta::from_fields(fields) });
        }
        Ok((map, MergeEntries { policy, records }))
    }
}

/// Merges one entry into `store` (the owner's copy): the merging entry replaces the one held,
/// or fills its absence, when the policy says so; the merged entry keeps the merging side's
/// metadata, its version one past the replaced entry's. Returns what a MERGED event carries:
/// the value the key has now (Hazelcast publishes one for every merging entry, also when the
/// held entry stays) and the one it had; None when the key stays absent.
fn merge_one(store: &mut RecordStore, policy: MergePolicy, record: &MergingRecord, now_ms: i64) -> Option<Merged> {
    store.expire_if_due(&record.key, now_ms);
    let existing = store.get(&record.key, now_ms).map(|entry| (entry.meta(), entry.value().to_vec()));
    if !policy.merging_wins(&stats(&record.meta), existing.as_ref().map(|(meta, _)| stats(meta)).as_ref()) {
        return existing.map(|(_, value)| Merged::Kept(value));
    }
    let mut meta = record.meta;
    if let Some((held, _)) = &existing {
        meta.version = held.version.wrapping_add(1);
    }
    store.merge_in(&record.key, &record.value, &meta);
    Some(Merged::Won { old: existing.map(|(_, value)| value) })
}

/// What a merging entry did to its key.
enum Merged {
    /// The held entry stays: its value.
    Kept(Vec<u8>),
    /// The merging entry is in place; the value it replaced, if any.
    Won { old: Option<Vec<u8>> },
}

/// A batch on this reactor's owned partitions of the entries' keys.
#[derive(Debug)]
pub(crate) struct MergeWrite {
    pub(crate) batch: MergeEntries,
}

/// The MERGED event of an entry merged into `map` (its value after, and before), to the map's
/// listeners if it has any.
pub(crate) fn publish_merged(
    share: &mut ShareContext<'_>,
    map: &str,
    partition_id: u16,
    key: &[u8],
    value: &[u8],
    old_value: Option<&[u8]>,
) {
    if !share.listeners.has(map) {
        return;
    }
    let event = Event {
        kind: EventKind::Merged,
        partition_id: Some(PartitionId(partition_id)),
        key: Some(key),
        value: Some(value),
        old_value,
        affected_entries: 1,
        source: share.member,
    };
    share.listeners.publish(share.outbox, share.member, map, event);
}

impl WideOperation for MergeWrite {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, _: &mut ()) {
        let settings = share.settings.get(map);
        for record in &self.batch.records {
            let Some((partition_id, local)) = share.local_of(&record.key) else { continue };
            if !share.owned.get(local).copied().unwrap_or(false) {
                continue;
            }
            let Some(partition) = share.partitions.get_mut(local) else { continue };
            let store = partition.map_mut(map, || settings.clone());
            let Some(merged) = merge_one(store, self.batch.policy, record, share.now_ms) else { continue };
            if matches!(merged, Merged::Won { .. }) {
                share.touch(local);
            }
            let (value, old_value) = match &merged {
                Merged::Kept(held) => (&held[..], Some(&held[..])),
                Merged::Won { old } => (&record.value[..], old.as_deref()),
            };
            publish_merged(share, map, partition_id, &record.key, value, old_value);
        }
    }

    fn reply<'p>(&'p self, _: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::NEVER;
    use crate::engine::settings::MapSettings;
    use std::sync::Arc;

    fn meta(hits: i64, updated_ms: i64) -> Meta {
        Meta {
            version: 3,
            creation_time_ms: 1,
            last_update_time_ms: updated_ms,
            last_access_time_ms: updated_ms,
            hits,
            ttl_ms: NEVER,
            ttl_base_ms: updated_ms,
            max_idle_ms: NEVER,
        }
    }

    fn record(key: &str, value: &str, meta: Meta) -> MergingRecord {
        MergingRecord { key: key.as_bytes().into(), value: value.as_bytes().into(), meta }
    }

    #[test]
    fn a_batch_round_trips() {
        let batch = MergeEntries {
            policy: MergePolicy::LatestUpdate,
            records: vec![record("a", "1", meta(2, 10)), record("b", "", meta(0, 0))],
        };
        let bytes = batch.encode(MERGE_ENTRIES, "orders");
        let message = Message::parse(&bytes).unwrap();
        assert_eq!(MergeEntries::decode(&message).unwrap(), ("orders".to_owned(), batch));
        let mut broken = MergeEntries { policy: MergePolicy::Discard, records: vec![record("a", "1", meta(0, 0))] }
            .encode(MERGE_ENTRIES, "m");
        let length = broken.len();
        broken.truncate(length - 20);
        assert!(Message::parse(&broken).is_err() || MergeEntries::decode(&Message::parse(&broken).unwrap()).is_err());
    }

    #[test]
    fn each_policy_decides_per_entry_against_what_is_held() {
        let now_ms = 1_000;
        let held = |store: &mut RecordStore| {
            store.put(b"both", b"large", now_ms, -1, -1);
        };
        let cases = [
            (MergePolicy::PutIfAbsent, Some("small"), "large"),
            (MergePolicy::PassThrough, Some("small"), "small"),
            (MergePolicy::Discard, None, "large"),
            (MergePolicy::LatestUpdate, Some("small"), "small"),
            (MergePolicy::HigherHits, Some("small"), "small"),
        ];
        for (policy, only_small, both) in cases {
            let mut store = RecordStore::new(Arc::new(MapSettings::default()));
            held(&mut store);
            let newer = meta(5, now_ms + 10);
            assert!(
                merge_one(&mut store, policy, &record("small", "small", newer), now_ms).is_none()
                    == only_small.is_none()
            );
            let merged = merge_one(&mut store, policy, &record("both", "small", newer), now_ms).expect("an event");
            let value =
                |key: &[u8]| store.get(key, now_ms).map(|entry| String::from_utf8_lossy(entry.value()).into_owned());
            assert_eq!(value(b"small").as_deref(), only_small, "{policy:?}");
            assert_eq!(value(b"both").as_deref(), Some(both), "{policy:?}");
            match merged {
                Merged::Won { old } => {
                    assert_eq!(both, "small", "{policy:?}: the merging value");
                    assert_eq!(old.as_deref(), Some(&b"large"[..]), "{policy:?}: the old value");
                    assert_eq!(
                        store.get(b"both", now_ms).unwrap().version(),
                        1,
                        "{policy:?}: one past the held version"
                    );
                }
                Merged::Kept(held) => {
                    assert_eq!(both, "large", "{policy:?}: the held entry stays");
                    assert_eq!(held, b"large", "{policy:?}: the held value");
                }
            }
        }
    }
}
