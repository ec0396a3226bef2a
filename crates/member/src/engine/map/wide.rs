//! The map-wide operations of `IMap` (size, isEmpty, containsValue, keySet, values, entrySet,
//! clear, evictAll, flush, destroy). Their rows (`wide_rows.rs`) decode the requests into them
//! (and into entry listeners, queries, aggregations and projections).

use crate::engine::invalidation::InvalidationMetadata;
use crate::engine::listeners::{fresh_uuid, ClearInvalidation, EventKind, Listeners, Registry};
use crate::engine::request::{OpError, Reply};
use crate::engine::structures::ObjectKind;
use crate::engine::wide::{Count, Found, Items, Listed, Partial, Partitions, ShareContext, WideOperation, WideRequest};
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::message::{write_frame, MessageWriter, RESPONSE_HEADER_SIZE};
use ferrogrid_protocol::{DecodeError, Message, PartitionId, Uuid};

/// Map.size: live entries of owned partitions.
#[derive(Debug)]
pub(crate) struct Size;

impl WideOperation for Size {
    type Partial = Count;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Count {
        Count(0)
    }

    fn on_partition(&self, map: &str, partition: &mut PartitionStore, _owned: bool, now_ms: i64, partial: &mut Count) {
        if let Some(store) = partition.map(map) {
            partial.0 += store.live_len(now_ms) as u64;
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Count) -> Result<Reply<'p>, OpError> {
        Ok(partial.int())
    }
}

/// Map.isEmpty: counts like size, answers whether the count is 0.
#[derive(Debug)]
pub(crate) struct IsEmpty;

impl WideOperation for IsEmpty {
    type Partial = Count;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Count {
        Count(0)
    }

    fn on_partition(&self, map: &str, partition: &mut PartitionStore, owned: bool, now_ms: i64, partial: &mut Count) {
        Size.on_partition(map, partition, owned, now_ms, partial);
    }

    fn reply<'p>(&'p self, partial: &'p mut Count) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Bool(partial.0 == 0))
    }
}

/// Map.containsValue: whether a live entry of an owned partition holds exactly these bytes.
#[derive(Debug)]
pub(crate) struct ContainsValue {
    value: Box<[u8]>,
}

impl ContainsValue {
    pub(crate) fn new(value: &[u8]) -> ContainsValue {
        ContainsValue { value: value.into() }
    }
}

impl WideOperation for ContainsValue {
    type Partial = Found;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Found {
        Found(false)
    }

    fn on_partition(&self, map: &str, partition: &mut PartitionStore, _owned: bool, now_ms: i64, partial: &mut Found) {
        if partial.0 {
            return;
        }
        if let Some(store) = partition.map(map) {
            partial.0 = store.iter(now_ms).any(|(_, record)| record.value() == &*self.value);
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Found) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Bool(partial.0))
    }
}

/// Map.keySet / values / entrySet: the live entries of owned partitions, as a list.
#[derive(Debug)]
pub(crate) struct List(pub Listed);

impl WideOperation for List {
    type Partial = Items;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Items {
        Items(Vec::new())
    }

    fn on_partition(&self, map: &str, partition: &mut PartitionStore, _owned: bool, now_ms: i64, partial: &mut Items) {
        let Some(store) = partition.map(map) else { return };
        let frames = &mut partial.0;
        match self.0 {
            Listed::Keys => store.iter(now_ms).for_each(|(key, _)| write_frame(frames, 0, key)),
            Listed::Values => store.iter(now_ms).for_each(|(_, record)| write_frame(frames, 0, record.value())),
            Listed::Entries => store.iter(now_ms).for_each(|(key, record)| {
                write_frame(frames, 0, key);
                write_frame(frames, 0, record.value());
            }),
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Items) -> Result<Reply<'p>, OpError> {
        Ok(partial.list())
    }
}

/// Map.clear and Map.evictAll: remove every unlocked entry from every replica held here;
/// one CLEAR_ALL or EVICT_ALL event with the number of live entries removed. Where a near
/// cache listens, the map takes one invalidation sequence on every owned partition: the
/// clear's invalidation names the one of the map name's partition (Hazelcast 5.6's
/// `invalidateAllKeysInNearCaches`, run by the clear on every partition: `invalidateAllKeys`
/// on the name's partition, `forceIncrementSequence` on the others).
#[derive(Debug)]
pub(crate) struct Clear {
    event: EventKind,
}

impl Clear {
    /// `event` is ClearAll (clear) or EvictAll (evictAll).
    pub(crate) fn new(event: EventKind) -> Clear {
        assert!(matches!(event, EventKind::ClearAll | EventKind::EvictAll), "clear publishes CLEAR_ALL or EVICT_ALL");
        Clear { event }
    }
}

impl WideOperation for Clear {
    type Partial = Cleared;
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) -> Cleared {
        Cleared::default()
    }

    fn on_partition(&self, map: &str, partition: &mut PartitionStore, owned: bool, now_ms: i64, partial: &mut Cleared) {
        if let Some(store) = partition.existing_mut(map) {
            let removed = store.clear(now_ms) as u64;
            if owned {
                partial.count.0 += removed;
            }
            partition.note_replaced(crate::engine::structures::ObjectKind::Map, map);
        }
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Cleared) {
        let owned: Vec<u16> = (0..share.partitions.len())
            .filter(|local| share.owned.get(*local).copied().unwrap_or(true))
            .map(|local| share.partition_id(local))
            .collect();
        for (index, partition) in share.partitions.iter_mut().enumerate() {
            let owned = share.owned.get(index).copied().unwrap_or(true);
            self.on_partition(map, partition, owned, share.now_ms, partial);
        }
        share.listeners.publish_map_wide_to_caches(share.outbox, map, self.event, &owned);
        if share.listeners.has_invalidation_listener(map) {
            let name_partition = ferrogrid_protocol::data::partition_for_string(map, share.partition_count);
            let metadata = &mut share.listeners.metadata;
            if let Some(invalidation) = take_sequences(metadata, map, &owned, name_partition) {
                partial.invalidation = Some(invalidation);
            }
        }
    }

    fn map_event(&self, partial: &Cleared) -> Option<(Registry, EventKind, u64)> {
        // Hazelcast publishes no entry event when nothing was cleared or evicted, but
        // invalidates near caches all the same (the listeners skip an event of nothing).
        let published = partial.count.0 > 0 || partial.invalidation.is_some();
        published.then_some((Registry::Entries, self.event, partial.count.0))
    }

    fn clear_invalidation(&self, partial: &Cleared) -> Option<ClearInvalidation> {
        partial.invalidation
    }

    fn reply<'p>(&'p self, _partial: &'p mut Cleared) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// A clear of `map` on the partitions `owned` (ids): each takes the map's next sequence; the
/// name's partition's (if owned here), under its uuid, is the clear's invalidation.
fn take_sequences(
    metadata: &mut InvalidationMetadata,
    map: &str,
    owned: &[u16],
    name_partition: PartitionId,
) -> Option<ClearInvalidation> {
    let mut invalidation = None;
    for partition in owned {
        let sequence = metadata.next_sequence(map, *partition);
        if *partition == name_partition.0 {
            let partition_uuid = metadata.uuid(*partition, fresh_uuid);
            invalidation = Some(ClearInvalidation { partition: name_partition, partition_uuid, sequence });
        }
    }
    invalidation
}

/// What a clear removed from owned partitions, and the invalidation it took on the map name's
/// partition (from the share, or the member, that owns that partition).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cleared {
    pub count: Count,
    pub invalidation: Option<ClearInvalidation>,
}

impl Partial for Cleared {
    fn merge(&mut self, other: Cleared) {
        self.count.merge(other.count);
        self.invalidation = self.invalidation.or(other.invalidation);
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        let invalidation = self.invalidation;
        writer.fixed(&(self.count.0.min(i64::MAX as u64) as i64));
        writer.fixed(&invalidation.is_some());
        writer.fixed(&invalidation.map_or(0, |invalidation| i32::from(invalidation.partition.0)));
        writer.fixed(&invalidation.map(|invalidation| invalidation.partition_uuid));
        writer.fixed(&invalidation.map_or(0, |invalidation| invalidation.sequence));
    }

    fn read_from(message: &Message<'_>) -> Result<Cleared, DecodeError> {
        let mut fixed = message.fixed(RESPONSE_HEADER_SIZE)?;
        let count: i64 = fixed.read()?;
        let (present, partition, partition_uuid, sequence): (bool, i32, Option<Uuid>, i64) =
            (fixed.read()?, fixed.read()?, fixed.read()?, fixed.read()?);
        let invalidation = match (present, u16::try_from(partition), partition_uuid) {
            (true, Ok(partition), Some(partition_uuid)) => {
                Some(ClearInvalidation { partition: PartitionId(partition), partition_uuid, sequence })
            }
            (true, _, _) => {
                return Err(DecodeError::InvalidValue("a clear invalidation naming a partition and its uuid"))
            }
            (false, _, _) => None,
        };
        Ok(Cleared { count: Count(count.max(0) as u64), invalidation })
    }
}

/// Map.flush: nothing to write behind (no map store), so nothing to do but answer.
#[derive(Debug)]
pub(crate) struct Flush;

impl WideOperation for Flush {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;

    fn empty(&self) {}

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// Client.DestroyProxy of a map: drop its data from every replica held here and its listener
/// registrations from every reactor.
#[derive(Debug)]
pub(crate) struct Destroy;

impl WideOperation for Destroy {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) {}

    fn on_reactor(&self, map: &str, listeners: &mut Listeners, _partial: &mut ()) {
        listeners.drop_all_of(Registry::Entries, map);
        listeners.metadata.forget_map(map);
    }

    fn on_partition(&self, map: &str, partition: &mut PartitionStore, _owned: bool, _now_ms: i64, _partial: &mut ()) {
        partition.drop_map(map);
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, _partial: &mut ()) {
        // The map's indexes go with it (a map of the name created later has none).
        share.settings.indexes.0.forget(map);
        share.settings.forget(map);
        for partition in share.partitions.iter_mut() {
            partition.drop_map(map);
        }
        share.settings.drop_indexes(map);
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// Destroy of a map: its entries, indexes, settings and entry listeners, everywhere.
pub(crate) fn destroy(kind: ObjectKind) -> WideRequest {
    debug_assert_eq!(kind, ObjectKind::Map);
    WideRequest::new(Destroy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::listeners::Listener;
    use crate::engine::wide::objects::{AddListener, DropRelayed, RemoveListener};
    use crate::engine::wide::Partial;
    use crate::route::fanout::testing::*;

    /// Entries over four partitions: two shares (reactors) of two partitions each.
    const ENTRIES: &[(&[u8], &[u8], usize)] =
        &[(b"a", b"1", 0), (b"b", b"2", 1), (b"c", b"3", 2), (b"d", b"3", 3), (b"e", b"expired", 3)];

    /// Runs `operation` as two shares, the second merged after crossing the member hop (as
    /// another member's answer would), and returns the merged partial.
    fn two_shares<W: WideOperation>(operation: &W, now_ms: i64) -> W::Partial {
        let mut all = partitions(4, ENTRIES);
        let (first, second) = all.split_at_mut(2);
        let mut merged = share(operation, first, now_ms);
        merged.merge(over_the_hop(&share(operation, second, now_ms)));
        merged
    }

    #[test]
    fn partials_merge_and_cross_the_member_hop() {
        let mut count = Count(3);
        count.merge(Count(4));
        assert_eq!(count, Count(7));
        assert_eq!(over_the_hop(&Count(u64::MAX)), Count(i64::MAX as u64), "clamped, not wrapped");
        let mut found = Found(false);
        found.merge(Found(false));
        assert_eq!(found, Found(false));
        found.merge(Found(true));
        assert_eq!(over_the_hop(&found), Found(true));
        let mut items = Items::default();
        items.merge(Items(frames(&[b"x"])));
        items.merge(Items::default());
        items.merge(Items(frames(&[b"y", b"zz"])));
        assert_eq!(items, Items(frames(&[b"x", b"y", b"zz"])));
        assert_eq!(over_the_hop(&items), items);
        assert_eq!(over_the_hop(&Items::default()), Items::default());
    }

    fn frames(items: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        items.iter().for_each(|item| write_frame(&mut out, 0, item));
        out
    }

    #[test]
    fn size_counts_live_entries_of_every_share() {
        assert_eq!(two_shares(&Size, 0), Count(5));
        let mut merged = two_shares(&Size, 5);
        assert_eq!(merged, Count(4), "an expired entry does not count");
        assert_eq!(Size.reply(&mut merged), Ok(Reply::Int(4)));
        assert_eq!(Size.reply(&mut Count(u64::from(u32::MAX))), Ok(Reply::Int(i32::MAX)), "a Java int");
    }

    fn answer_bool<W: WideOperation>(operation: &W, mut partial: W::Partial) -> bool {
        match operation.reply(&mut partial) {
            Ok(Reply::Bool(answer)) => answer,
            other => panic!("not a boolean answer: {other:?}"),
        }
    }

    #[test]
    fn is_empty_answers_from_the_merged_count() {
        assert!(!answer_bool(&IsEmpty, two_shares(&IsEmpty, 0)));
        let mut empty = partitions(2, &[]);
        assert!(answer_bool(&IsEmpty, share(&IsEmpty, &mut empty, 0)));
        let mut only_expired = partitions(2, &[(b"k", b"expired", 1)]);
        assert!(!answer_bool(&IsEmpty, share(&IsEmpty, &mut only_expired, 0)));
        assert!(answer_bool(&IsEmpty, share(&IsEmpty, &mut only_expired, 5)));
    }

    #[test]
    fn contains_value_is_found_by_any_share() {
        let in_second_share = ContainsValue::new(b"3");
        assert_eq!(two_shares(&in_second_share, 0), Found(true));
        assert!(answer_bool(&in_second_share, Found(true)));
        assert_eq!(two_shares(&ContainsValue::new(b"9"), 0), Found(false));
        assert_eq!(two_shares(&ContainsValue::new(b"expired"), 5), Found(false), "expired values are invisible");
        assert!(!answer_bool(&ContainsValue::new(b"9"), Found(false)));
    }

    fn listed(what: Listed, now_ms: i64) -> Vec<Vec<u8>> {
        let operation = List(what);
        let mut items = list_items(&response(&operation, two_shares(&operation, now_ms)));
        items.sort();
        items
    }

    #[test]
    fn listings_gather_every_share() {
        let owned = |items: &[&[u8]]| items.iter().map(|item| item.to_vec()).collect::<Vec<_>>();
        assert_eq!(listed(Listed::Keys, 5), owned(&[b"a", b"b", b"c", b"d"]));
        assert_eq!(listed(Listed::Keys, 0).len(), 5);
        assert_eq!(listed(Listed::Values, 5), owned(&[b"1", b"2", b"3", b"3"]));
        let operation = List(Listed::Entries);
        let entries = list_items(&response(&operation, two_shares(&operation, 5)));
        let mut pairs: Vec<(&[u8], &[u8])> = entries.chunks(2).map(|pair| (&pair[0][..], &pair[1][..])).collect();
        pairs.sort();
        assert_eq!(pairs, [(&b"a"[..], &b"1"[..]), (b"b", b"2"), (b"c", b"3"), (b"d", b"3")]);
        assert!(list_items(&response(&operation, Items::default())).is_empty());
    }

    #[test]
    fn clear_counts_only_what_it_removed_from_owned_partitions() {
        let operation = Clear::new(EventKind::ClearAll);
        let mut all = partitions(2, &[(b"a", b"1", 0), (b"b", b"1", 1)]);
        let mut partial = operation.empty();
        operation.on_partition(MAP, &mut all[0], true, 0, &mut partial);
        operation.on_partition(MAP, &mut all[1], false, 0, &mut partial);
        assert_eq!(partial.count, Count(1), "a backup's copy would count an entry twice");
        assert_eq!(share(&Size, &mut all, 0), Count(0), "both copies are gone");
    }

    #[test]
    fn clear_and_evict_all_count_what_they_removed() {
        for event in [EventKind::ClearAll, EventKind::EvictAll] {
            let operation = Clear::new(event);
            let mut all = partitions(4, ENTRIES);
            let mut merged = share(&operation, &mut all[..2], 5);
            merged.merge(over_the_hop(&share(&operation, &mut all[2..], 5)));
            assert_eq!(merged.count, Count(4), "the expired entry goes but does not count");
            assert_eq!(operation.map_event(&merged), Some((Registry::Entries, event, 4)));
            assert_eq!(share(&Size, &mut all, 0), Count(0));
            assert_eq!(share(&operation, &mut all, 5).count, Count(0), "a second clear finds nothing");
            assert_eq!(operation.reply(&mut merged), Ok(Reply::Empty));
        }
    }

    #[test]
    fn a_clear_takes_a_sequence_on_every_owned_partition_and_names_the_name_partitions() {
        let mut metadata = InvalidationMetadata::default();
        metadata.next_sequence(MAP, 4);
        let name_uuid = metadata.uuid(4, fresh_uuid);
        let taken = take_sequences(&mut metadata, MAP, &[2, 4], PartitionId(4));
        let expected = ClearInvalidation { partition: PartitionId(4), partition_uuid: name_uuid, sequence: 2 };
        assert_eq!(taken, Some(expected), "the clear's invalidation, under the partition's uuid");
        assert_eq!((metadata.current_sequence(MAP, 2), metadata.current_sequence(MAP, 4)), (1, 2));
        assert_eq!(metadata.current_sequence(MAP, 6), 0, "a partition not owned here is not touched");
        assert_eq!(metadata.uuid(4, fresh_uuid), name_uuid, "a clear keeps the partition's uuid");
        assert_eq!(take_sequences(&mut metadata, MAP, &[2], PartitionId(4)), None, "the name's partition is elsewhere");
        assert_eq!(metadata.current_sequence(MAP, 2), 2);
    }

    #[test]
    fn a_clears_partial_merges_and_crosses_the_member_hop() {
        let invalidation =
            ClearInvalidation { partition: PartitionId(7), partition_uuid: Uuid { most: 1, least: 2 }, sequence: 9 };
        let mut merged = Cleared { count: Count(2), invalidation: None };
        merged.merge(Cleared { count: Count(3), invalidation: Some(invalidation) });
        merged.merge(Cleared::default());
        assert_eq!(merged, Cleared { count: Count(5), invalidation: Some(invalidation) });
        assert_eq!(over_the_hop(&merged), merged);
        assert_eq!(over_the_hop(&Cleared::default()), Cleared::default());
        let clear = Clear::new(EventKind::ClearAll);
        assert_eq!(clear.clear_invalidation(&merged), Some(invalidation));
        let nothing_cleared = Cleared { count: Count(0), invalidation: Some(invalidation) };
        assert_eq!(
            clear.map_event(&nothing_cleared),
            Some((Registry::Entries, EventKind::ClearAll, 0)),
            "near caches hear it"
        );
        assert_eq!(clear.map_event(&Cleared::default()), None, "no near cache, nothing cleared: no event");
    }

    #[test]
    fn destroy_drops_data_and_registrations() {
        let (connection, _client) = loopback();
        let mut listeners = Listeners::default();
        listeners.add(MAP, listener(&connection));
        listeners.add("other", listener(&connection));
        Destroy.on_reactor(MAP, &mut listeners, &mut ());
        assert!(!listeners.has(MAP) && listeners.has("other"));
        let mut all = partitions(4, ENTRIES);
        all[0].map_mut("other", Default::default).put(b"k", b"v", 0, 0, 0);
        share(&Destroy, &mut all, 0);
        assert!(all.iter().all(|partition| partition.map(MAP).is_none()));
        assert!(all[0].map("other").is_some(), "other maps stay");
        assert_eq!(Destroy.map_event(&()), None, "destroy publishes no map event");
        assert_eq!(Destroy.reply(&mut ()), Ok(Reply::Empty));
    }

    #[test]
    fn listener_changes_apply_per_reactor_and_a_unisocket_registration_covers_the_cluster() {
        let (connection, _client) = loopback();
        let registration = Listener { local_only: true, ..listener(&connection) };
        let id = registration.id;
        let add = AddListener::to(Registry::Entries, registration.clone());
        let mut listeners = Listeners::default();
        add.on_reactor(MAP, &mut listeners, &mut ());
        assert!(listeners.has(MAP));
        assert_eq!(add.reply(&mut ()), Ok(Reply::Registration(id)));
        let remove = RemoveListener::from(Registry::Entries, id);
        let mut removed = remove.empty();
        remove.on_reactor(MAP, &mut listeners, &mut removed);
        assert_eq!(removed, Found(true));
        let mut again = remove.empty();
        remove.on_reactor(MAP, &mut listeners, &mut again);
        assert_eq!(again, Found(false));
        assert_eq!(remove.removed_registration(), Some(id), "its relays go too");
        let cluster_wide = |request: &crate::engine::wide::WideRequest| request.shares.is_cluster_wide();
        let (add, remove) = (crate::engine::wide::WideRequest::new(add), crate::engine::wide::WideRequest::new(remove));
        assert!(!cluster_wide(&add) && add.relayed_registration().is_none(), "a smart client's stays here");
        assert!(!cluster_wide(&remove));
        assert!(cluster_wide(&crate::engine::wide::WideRequest::new(Size)));
        let unisocket = crate::engine::wide::WideRequest::new(AddListener::to(
            Registry::Entries,
            Listener { local_only: false, ..registration.clone() },
        ));
        assert!(
            cluster_wide(&unisocket) && unisocket.relayed_registration() == Some(id),
            "a unisocket client's goes everywhere"
        );
        let topic = AddListener::to(Registry::Messages, Listener { local_only: false, ..registration });
        assert!(!cluster_wide(&crate::engine::wide::WideRequest::new(topic)), "a topic relays its messages itself");
        let replicated =
            AddListener::to(Registry::ReplicatedEntries, Listener { local_only: false, ..listener(&connection) });
        assert!(!cluster_wide(&crate::engine::wide::WideRequest::new(replicated)), "every member has every change");
        let mut listeners = Listeners::default();
        AddListener::to(Registry::Entries, listener(&connection)).on_reactor(MAP, &mut listeners, &mut ());
        DropRelayed { link: connection.clone(), relay_id: 99 }.on_reactor(MAP, &mut listeners, &mut ());
        assert!(listeners.has(MAP), "another relay id stays");
        DropRelayed { link: connection.clone(), relay_id: 3 }.on_reactor(MAP, &mut listeners, &mut ());
        assert!(!listeners.has(MAP), "dropped by link and relay id");
    }
}
