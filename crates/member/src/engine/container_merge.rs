//! A split-brain merge's queues, lists, sets and ringbuffers: each merges whole, as Hazelcast
//! merges them (`QueueMergeOperation`, `CollectionMergeOperation`, the ringbuffer's
//! `MergeOperation`): all of a structure's items are one merging value, with no statistics.
//!
//! On leaving its cluster, the merging member keeps each such structure of every partition it
//! owns, with the structure's merge policy ([`keep`]; Discard keeps nothing, as Hazelcast's
//! collectors drop those; empty structures are kept, as Hazelcast sends them too). After
//! rejoining it sends each as one request of its kind ([`MergingContainer`]: MERGE_QUEUE,
//! MERGE_LIST, MERGE_SET, MERGE_RINGBUFFER; `cluster/merge.rs`), which every member runs as a
//! fan-out and the owner of the structure's partition applies ([`ContainerMergeWrite`]):
//!
//! - PutIfAbsent (the default): the merging items only where the structure is empty or absent;
//! - PassThrough: the merging items replace the held ones (none: it is emptied);
//! - Discard: nothing is sent.
//!
//! A ringbuffer that takes the merging items takes their sequences too (Hazelcast sets the
//! merging ringbuffer's head and tail sequences). The owner sends the change to its backups as
//! it does a request's; no item events are published and a queue's or list's `max-size` is not
//! checked, as in Hazelcast.

use crate::engine::request::{OpError, Reply};
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::engine::wide::{Partitions, ShareContext, WideOperation};
use crate::partition::objects::{kind, PartitionStore};
use ferrogrid_config::{MergePolicy, MergingEntry};
use ferrogrid_protocol::message::{MessageWriter, REQUEST_HEADER_SIZE};
use ferrogrid_protocol::{DecodeError, Message, MessageType, PartitionId};

/// Members' internal requests carrying one merging structure each (never accepted from a
/// client: the operation table has no row for them), in the style of MERGE_ENTRIES.
pub(crate) const MERGE_QUEUE: MessageType = MessageType(0x03_FF00);
pub(crate) const MERGE_LIST: MessageType = MessageType(0x05_FF00);
pub(crate) const MERGE_SET: MessageType = MessageType(0x06_FF00);
pub(crate) const MERGE_RINGBUFFER: MessageType = MessageType(0x17_FF00);

/// Each request and the kind of structure it merges.
const KINDS: [(MessageType, ObjectKind); 4] = [
    (MERGE_QUEUE, ObjectKind::Queue),
    (MERGE_LIST, ObjectKind::List),
    (MERGE_SET, ObjectKind::Set),
    (MERGE_RINGBUFFER, ObjectKind::Ringbuffer),
];

/// The kind of structure a request of `message_type` merges (None: not such a request).
pub(crate) fn kind_of(message_type: MessageType) -> Option<ObjectKind> {
    KINDS.iter().find(|(known, _)| *known == message_type).map(|(_, kind)| *kind)
}

/// One queue, list, set or ringbuffer the merging member owned, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergingContainer {
    /// Queue, List, Set or Ringbuffer.
    pub(crate) kind: ObjectKind,
    pub(crate) name: Box<str>,
    /// The partition of its name (the owner of the same partition applies it).
    pub(crate) partition: PartitionId,
    pub(crate) policy: MergePolicy,
    /// A ringbuffer's head sequence: its first item's (0 for the others).
    pub(crate) head: i64,
    /// Its items, in order (a queue's oldest first; a set's in no order).
    pub(crate) items: Vec<Box<[u8]>>,
}

impl MergingContainer {
    /// The request type that carries it.
    pub(crate) fn message_type(&self) -> MessageType {
        KINDS.iter().find(|(_, kind)| *kind == self.kind).map(|(message_type, _)| *message_type).expect("merges whole")
    }

    /// The request: the policy's number, the partition and the head sequence in the initial
    /// frame, then the name and the items as a list of frames.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut writer = MessageWriter::request(&mut out, self.message_type(), 0, -1, 0);
        writer.fixed(&i32::from(self.policy.code()));
        writer.fixed(&i32::from(self.partition.0));
        writer.fixed(&self.head);
        writer.frame(self.name.as_bytes()).begin();
        for item in &self.items {
            writer.frame(item);
        }
        writer.end();
        writer.finish();
        out
    }

    /// Decodes [`MergingContainer::encode`]'s request.
    pub(crate) fn decode(message: &Message<'_>) -> Result<MergingContainer, DecodeError> {
        let kind = kind_of(message.message_type()).ok_or(DecodeError::UnexpectedFrame("a structure's merge"))?;
        let mut fixed = message.fixed(REQUEST_HEADER_SIZE)?;
        let (code, partition, head): (i32, i32, i64) = (fixed.read()?, fixed.read()?, fixed.read()?);
        let policy = u8::try_from(code)
            .ok()
            .and_then(MergePolicy::from_code)
            .ok_or(DecodeError::UnexpectedFrame("a known merge policy"))?;
        let partition = u16::try_from(partition).map_err(|_| DecodeError::UnexpectedFrame("a partition id"))?;
        let mut reader = message.reader();
        let name = reader.string()?.into();
        reader.begin()?;
        let mut items = Vec::new();
        while !reader.at_end()? {
            items.push(reader.value_frame("a merging item")?.into());
        }
        Ok(MergingContainer { kind, name, partition: PartitionId(partition), policy, head, items })
    }
}

/// Every queue, list, set and ringbuffer of `partition` (partition `partition_id`, owned by
/// this member) that its merge policy sends: all but Discard's. A ringbuffer only reads have
/// used is none (Hazelcast's reads create none).
pub(crate) fn keep(
    partition: &PartitionStore,
    partition_id: PartitionId,
    settings: &SettingsCache,
) -> Vec<MergingContainer> {
    let whole = |kind, name: &str, policy, head, items| MergingContainer {
        kind,
        name: name.into(),
        partition: partition_id,
        policy,
        head,
        items,
    };
    let mut kept = Vec::new();
    for (name, queue) in partition.stores::<kind::Queue>() {
        kept.push(whole(ObjectKind::Queue, name, settings.queue(name).merge_policy.policy, 0, queue.values()));
    }
    let lists = partition.stores::<kind::List>().map(|(name, list)| (ObjectKind::List, name, list));
    let sets = partition.stores::<kind::Set>().map(|(name, set)| (ObjectKind::Set, name, set));
    for (kind, name, store) in lists.chain(sets) {
        let policy = settings.collection(name, kind == ObjectKind::Set).merge_policy.policy;
        kept.push(whole(kind, name, policy, 0, store.values().into_iter().map(Box::from).collect()));
    }
    for (name, ring) in partition.stores::<kind::Ringbuffer>() {
        let Some((head, items)) = ring.merging() else { continue };
        kept.push(whole(ObjectKind::Ringbuffer, name, settings.ringbuffer(name).merge_policy.policy, head, items));
    }
    kept.retain(|container| container.policy != MergePolicy::Discard);
    kept
}

/// Whether the structure `name` of `kind` holds no item here (or does not exist).
fn held_empty(partition: &PartitionStore, kind: ObjectKind, name: &str) -> bool {
    match kind {
        ObjectKind::Queue => partition.store::<kind::Queue>(name).is_none_or(|queue| queue.len() == 0),
        ObjectKind::List => partition.store::<kind::List>(name).is_none_or(|list| list.len() == 0),
        ObjectKind::Set => partition.store::<kind::Set>(name).is_none_or(|set| set.len() == 0),
        ObjectKind::Ringbuffer => partition.store::<kind::Ringbuffer>(name).is_none_or(|ring| ring.is_empty()),
        other => unreachable!("{other:?} does not merge whole"),
    }
}

/// Merges `container` into `partition` (its owner's copy) by its policy; whether anything
/// changed (the backups then need the change).
fn merge_into(
    partition: &mut PartitionStore,
    settings: &mut SettingsCache,
    container: &MergingContainer,
    now_ms: i64,
) -> bool {
    let (kind, name) = (container.kind, &*container.name);
    let empty = held_empty(partition, kind, name);
    let whole = MergingEntry::default();
    if !container.policy.merging_wins(&whole, (!empty).then_some(&whole)) {
        return false;
    }
    // Nothing into nothing changes nothing (a ringbuffer still takes the merging sequences).
    if empty && container.items.is_empty() && kind != ObjectKind::Ringbuffer {
        return false;
    }
    let items = container.items.clone();
    match kind {
        ObjectKind::Queue => partition.store_mut::<kind::Queue>(name, settings).0.replace(items),
        ObjectKind::List => partition.store_mut::<kind::List>(name, settings).0.replace(items),
        ObjectKind::Set => partition.store_mut::<kind::Set>(name, settings).0.replace(items),
        ObjectKind::Ringbuffer => {
            partition.store_mut::<kind::Ringbuffer>(name, settings).0.replace(container.head, items, now_ms);
        }
        other => unreachable!("{other:?} does not merge whole"),
    }
    true
}

/// One merging structure on the member that owns its partition (every other share finds
/// nothing to do).
#[derive(Debug)]
pub(crate) struct ContainerMergeWrite {
    pub(crate) container: MergingContainer,
}

impl WideOperation for ContainerMergeWrite {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    fn on_share(&self, _: &str, share: &mut ShareContext<'_>, _: &mut ()) {
        let partition = usize::from(self.container.partition.0);
        let (reactor, count) = share.reactor;
        let local = partition / count;
        if partition % count != reactor || !share.owned.get(local).copied().unwrap_or(false) {
            return;
        }
        let Some(store) = share.partitions.get_mut(local) else { return };
        if merge_into(store, share.settings, &self.container, share.now_ms) {
            share.touch(local);
        }
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut ()) {
        unreachable!("on_share does a structure merge's work")
    }

    fn reply<'p>(&'p self, _: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::string_data as item;
    use crate::partition::object::PartitionObject;
    use ferrogrid_config::{MemberConfig, MergePolicyConfig, QueueConfig, RingbufferConfig};
    use std::sync::Arc;

    /// Settings with ringbuffers of capacity 4 and queues `discard-*` merged by Discard.
    fn settings() -> SettingsCache {
        let mut config = MemberConfig::default();
        let discard = MergePolicyConfig { policy: MergePolicy::Discard, ..MergePolicyConfig::DEFAULT };
        config.queues.insert("discard-*", QueueConfig { merge_policy: discard, ..QueueConfig::DEFAULT });
        config.ringbuffers.insert("default", RingbufferConfig { capacity: 4, ..RingbufferConfig::DEFAULT });
        SettingsCache::new(Arc::new(config), 271)
    }

    fn items(texts: &[&str]) -> Vec<Box<[u8]>> {
        texts.iter().map(|text| item(text).into()).collect()
    }

    fn container(kind: ObjectKind, policy: MergePolicy, head: i64, texts: &[&str]) -> MergingContainer {
        MergingContainer { kind, name: "c".into(), partition: PartitionId(7), policy, head, items: items(texts) }
    }

    /// What the structure `c` of `kind` holds: its head sequence (ringbuffers) and items.
    fn held(partition: &PartitionStore, kind: ObjectKind) -> (i64, Vec<Box<[u8]>>) {
        match kind {
            ObjectKind::Queue => (0, partition.store::<kind::Queue>("c").map_or(Vec::new(), |queue| queue.values())),
            ObjectKind::List | ObjectKind::Set => {
                let store = if kind == ObjectKind::List {
                    partition.store::<kind::List>("c")
                } else {
                    partition.store::<kind::Set>("c")
                };
                let mut values: Vec<Box<[u8]>> =
                    store.map_or(Vec::new(), |store| store.values().into_iter().map(Box::from).collect());
                if kind == ObjectKind::Set {
                    values.sort();
                }
                (0, values)
            }
            _ => partition.store::<kind::Ringbuffer>("c").and_then(|ring| ring.merging()).unwrap_or((0, Vec::new())),
        }
    }

    #[test]
    fn a_structure_round_trips_and_a_truncated_one_is_refused() {
        for kind in [ObjectKind::Queue, ObjectKind::List, ObjectKind::Set, ObjectKind::Ringbuffer] {
            let merging = container(kind, MergePolicy::PassThrough, 5, &["a", "", "b"]);
            let bytes = merging.encode();
            let message = Message::parse(&bytes).unwrap();
            assert_eq!(kind_of(message.message_type()), Some(kind));
            assert_eq!(MergingContainer::decode(&message).unwrap(), merging);
            let mut broken = bytes.clone();
            broken.truncate(bytes.len() - 20);
            let decoded = Message::parse(&broken).map(|message| MergingContainer::decode(&message).is_err());
            assert!(decoded.unwrap_or(true), "{kind:?}");
        }
        assert_eq!(kind_of(crate::engine::map::merge::MERGE_ENTRIES), None);
    }

    #[test]
    fn each_policy_merges_the_whole_structure() {
        let mut settings = settings();
        for kind in [ObjectKind::Queue, ObjectKind::List, ObjectKind::Set, ObjectKind::Ringbuffer] {
            // PutIfAbsent: into nothing, the merging items (and a ringbuffer's sequences).
            let mut partition = PartitionStore::default();
            let merging = container(kind, MergePolicy::PutIfAbsent, 2, &["s2", "s3"]);
            assert!(merge_into(&mut partition, &mut settings, &merging, 0), "{kind:?}");
            let head = if kind == ObjectKind::Ringbuffer { 2 } else { 0 };
            assert_eq!(held(&partition, kind), (head, items(&["s2", "s3"])), "{kind:?}");
            // PutIfAbsent into something: what is held stays.
            let large = container(kind, MergePolicy::PutIfAbsent, 0, &["l0"]);
            assert!(!merge_into(&mut partition, &mut settings, &large, 0), "{kind:?}");
            assert_eq!(held(&partition, kind), (head, items(&["s2", "s3"])), "{kind:?}");
            // PassThrough: the merging items replace the held ones; none empties it.
            let pass = container(kind, MergePolicy::PassThrough, 0, &["p0"]);
            assert!(merge_into(&mut partition, &mut settings, &pass, 0), "{kind:?}");
            assert_eq!(held(&partition, kind), (0, items(&["p0"])), "{kind:?}");
            let nothing = container(kind, MergePolicy::PassThrough, 1, &[]);
            assert!(merge_into(&mut partition, &mut settings, &nothing, 0), "{kind:?}");
            let head = if kind == ObjectKind::Ringbuffer { 1 } else { 0 };
            assert_eq!(held(&partition, kind), (head, Vec::new()), "{kind:?}");
            // Discard keeps what is held, even nothing.
            let discard = container(kind, MergePolicy::Discard, 0, &["d"]);
            assert!(!merge_into(&mut partition, &mut settings, &discard, 0), "{kind:?}");
            assert_eq!(held(&partition, kind).1, Vec::<Box<[u8]>>::new(), "{kind:?}");
        }
    }

    #[test]
    fn a_merged_ringbuffer_reaches_its_backups_with_its_sequences() {
        let mut settings = settings();
        let (mut owner, mut backup) = (PartitionStore::default(), PartitionStore::default());
        owner.set_track_changes(true);
        let large = container(ObjectKind::Ringbuffer, MergePolicy::PassThrough, 6, &["l6", "l7", "l8"]);
        let small = container(ObjectKind::Ringbuffer, MergePolicy::PassThrough, 2, &["s2", "s3", "s4", "s5", "s6"]);
        for merging in [&large, &small] {
            assert!(merge_into(&mut owner, &mut settings, merging, 0));
            let mut body = Vec::new();
            owner.store_mut::<kind::Ringbuffer>("c", &mut settings).0.write_changes(&mut body);
            backup.store_mut::<kind::Ringbuffer>("c", &mut settings).0.apply_backup(&body).unwrap();
        }
        // Capacity 4: the oldest merging item left; the backup starts over at the lower head.
        assert_eq!(held(&owner, ObjectKind::Ringbuffer), (3, items(&["s3", "s4", "s5", "s6"])));
        assert_eq!(held(&backup, ObjectKind::Ringbuffer), held(&owner, ObjectKind::Ringbuffer));
    }

    #[test]
    fn a_merged_queue_reaches_its_backups() {
        let mut settings = settings();
        let (mut owner, mut backup) = (PartitionStore::default(), PartitionStore::default());
        owner.set_track_changes(true);
        for texts in [&["l0", "l1"][..], &["s0"]] {
            assert!(merge_into(
                &mut owner,
                &mut settings,
                &container(ObjectKind::Queue, MergePolicy::PassThrough, 0, texts),
                0
            ));
            let mut body = Vec::new();
            owner.store_mut::<kind::Queue>("c", &mut settings).0.write_changes(&mut body);
            backup.store_mut::<kind::Queue>("c", &mut settings).0.apply_backup(&body).unwrap();
        }
        assert_eq!(held(&backup, ObjectKind::Queue), (0, items(&["s0"])));
    }

    #[test]
    fn keeping_takes_every_structure_but_discards_and_unused_ringbuffers() {
        let mut settings = settings();
        let mut partition = PartitionStore::default();
        partition.store_mut::<kind::Queue>("q", &mut settings).0.replace(items(&["a"]));
        partition.store_mut::<kind::Queue>("discard-q", &mut settings).0.replace(items(&["a"]));
        partition.store_mut::<kind::Queue>("empty", &mut settings);
        partition.store_mut::<kind::List>("l", &mut settings).0.replace(items(&["a", "a"]));
        partition.store_mut::<kind::Set>("s", &mut settings).0.replace(items(&["a", "a"]));
        partition.store_mut::<kind::Ringbuffer>("r", &mut settings).0.replace(9, items(&["a"]), 0);
        partition.store_mut::<kind::Ringbuffer>("read-only", &mut settings);
        let mut kept: Vec<(ObjectKind, String, i64, usize)> = keep(&partition, PartitionId(3), &settings)
            .into_iter()
            .inspect(|container| assert_eq!(container.partition, PartitionId(3)))
            .map(|container| (container.kind, container.name.to_string(), container.head, container.items.len()))
            .collect();
        kept.sort();
        let expected = [
            (ObjectKind::Queue, "empty", 0, 0),
            (ObjectKind::Queue, "q", 0, 1),
            (ObjectKind::Ringbuffer, "r", 9, 1),
            (ObjectKind::List, "l", 0, 2),
            (ObjectKind::Set, "s", 0, 1),
        ];
        let expected: Vec<(ObjectKind, String, i64, usize)> =
            expected.iter().map(|(kind, name, head, count)| (*kind, name.to_string(), *head, *count)).collect();
        assert_eq!(kept, expected);
    }
}
