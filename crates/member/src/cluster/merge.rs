//! A split-brain merge on the merging member's reactors. When the membership layer decides this
//! member's cluster merges into another (`ferrogrid_cluster::membership::merge`), the cluster
//! service tells every reactor [`MergeStep::Leave`]: each keeps the map entries of the
//! partitions this member owns, and of the replicated maps' copies of those partitions (on the
//! merging side every partition has one owner, so the side keeps each entry once), and drops
//! every replica, as Hazelcast's merging members drop their data and rejoin empty. Once the member has joined the other cluster and that cluster's partition
//! table is settled (balanced, every replica in place, this member's reactors ready), the service
//! says [`MergeStep::Replay`]: each reactor sends its entries in batches of each map's
//! `merge-policy.batch-size` as MERGE_ENTRIES (or MERGE_REPLICATED) fan-outs, at most
//! [`BATCHES_PER_SWEEP`] every 100 ms, and the owners merge them through the map's policy
//! (`engine/map/merge.rs`, `engine/replicated_map/merge.rs`).
//!
//! Kept and merged: maps and replicated maps (each entry once: from the partition's owner on the
//! merging side), queues, lists, sets and ringbuffers, each whole, as one MERGE_QUEUE,
//! MERGE_LIST, MERGE_SET or MERGE_RINGBUFFER request (`engine/container_merge.rs`), multimaps
//! (each key with its whole value collection, as MERGE_MULTIMAP batches,
//! `engine/multimap/merge.rs`) and cardinality estimators (each state as one MERGE_ESTIMATOR,
//! `engine/cardinality_estimator/merge.rs`). PN counters live beside the partitions and are not
//! dropped: once rejoined, the periodic state exchange joins them with the other replicas'
//! (`engine/pn_counter/replicas.rs`). Other structures of the merging side are dropped (see
//! docs/cluster.md).

use crate::engine::cardinality_estimator::merge::{EstimatorMergeWrite, MERGE_ESTIMATOR};
use crate::engine::container_merge::{self, ContainerMergeWrite, MergingContainer};
use crate::engine::map::entry::Meta;
use crate::engine::map::merge::{MergeEntries, MergeWrite, MergingMap, MergingRecord, MERGE_ENTRIES};
use crate::engine::multimap::merge::{encode_values, MultiMapMergeWrite, MERGE_MULTIMAP};
use crate::engine::replicated_map::merge::{ReplicatedMergeWrite, MERGE_REPLICATED};
use crate::engine::wide::WideRequest;
use crate::partition::objects::kind;
use crate::partition::owner::PartitionOwner;
use crate::route::dispatch::Core;
use crate::shared::MergeStep;
use ferrogrid_config::{MergePolicy, MergePolicyConfig};
use ferrogrid_protocol::{DecodeError, Message, MessageType, PartitionId};
use std::collections::BTreeMap;
use tracing::info;

/// MERGE_ENTRIES fan-outs a reactor starts per 100 ms while it replays.
const BATCHES_PER_SWEEP: usize = 64;

/// The fan-out a merge request of `message_type` runs (None: not a merge request).
pub(crate) fn merge_operation(message_type: MessageType, batch: MergeEntries) -> Option<WideRequest> {
    match message_type {
        MERGE_ENTRIES => Some(WideRequest::new(MergeWrite { batch })),
        MERGE_REPLICATED => Some(WideRequest::new(ReplicatedMergeWrite { batch })),
        MERGE_MULTIMAP => Some(WideRequest::new(MultiMapMergeWrite { batch })),
        MERGE_ESTIMATOR => Some(WideRequest::new(EstimatorMergeWrite { batch })),
        _ => None,
    }
}

/// Another member's merge request (MERGE_ENTRIES, MERGE_REPLICATED, MERGE_MULTIMAP,
/// MERGE_ESTIMATOR, or one whole structure's: MERGE_QUEUE, MERGE_LIST, MERGE_SET,
/// MERGE_RINGBUFFER): the structure's name and the fan-out it runs; None for any other request.
pub(crate) fn merge_request(inner: &Message<'_>) -> Result<Option<(String, WideRequest)>, DecodeError> {
    if container_merge::kind_of(inner.message_type()).is_some() {
        let container = MergingContainer::decode(inner)?;
        return Ok(Some((container.name.to_string(), WideRequest::new(ContainerMergeWrite { container }))));
    }
    if ![MERGE_ENTRIES, MERGE_REPLICATED, MERGE_MULTIMAP, MERGE_ESTIMATOR].contains(&inner.message_type()) {
        return Ok(None);
    }
    let (map, batch) = MergeEntries::decode(inner)?;
    Ok(merge_operation(inner.message_type(), batch).map(|operation| (map, operation)))
}

impl PartitionOwner {
    /// Keeps the map entries, multimaps, estimators, queues, lists, sets and ringbuffers of the
    /// partitions this member owns and drops every replica and replicated-map copy this reactor holds. Returns how
    /// many entries and how many whole structures it kept.
    pub(crate) fn leave_for_merge(&mut self) -> (usize, usize) {
        let now_ms = self.now_ms;
        // By (request type, name): the policy and the entries.
        let mut kept = Kept::new();
        for local in 0..self.partitions.len() {
            if self.replication.owned.get(local).copied().unwrap_or(false) {
                for (name, store) in self.partitions[local].maps() {
                    let records = store.iter(now_ms).map(|(key, entry)| MergingRecord {
                        key: key.into(),
                        value: entry.value().into(),
                        meta: entry.meta(),
                    });
                    let map =
                        kept.entry((MERGE_ENTRIES, name.into())).or_insert((store.settings.merge_policy, Vec::new()));
                    map.1.extend(records);
                }
                for (name, store) in self.partitions[local].stores::<kind::ReplicatedMap>() {
                    let records = store.live(now_ms).map(|(key, value)| MergingRecord {
                        key: key.into(),
                        value: value.into(),
                        meta: Meta::plain(0),
                    });
                    let policy = self.settings.replicated_map(name).merge_policy;
                    kept.entry((MERGE_REPLICATED, name.into())).or_insert((policy, Vec::new())).1.extend(records);
                }
                let partition = PartitionId(self.partition_id(local));
                let containers = container_merge::keep(&self.partitions[local], partition, &self.settings);
                self.merging.containers.extend(containers);
                self.keep_multimaps_and_estimators(local, &mut kept);
            }
            self.partitions[local].drop_all();
            self.partitions[local].drop_stores::<kind::ReplicatedMap>();
            self.persist_replace(local);
        }
        self.replication.reset_for_merge();
        let count = kept.values().map(|(_, records)| records.len()).sum();
        // As Hazelcast, a map whose policy discards the merging entries sends nothing.
        let maps = kept
            .into_iter()
            .filter(|(_, (policy, records))| !records.is_empty() && policy.policy != MergePolicy::Discard);
        let maps =
            maps.map(|((message_type, name), (policy, records))| MergingMap { message_type, name, policy, records });
        self.merging.maps.extend(maps);
        (count, self.merging.containers.len())
    }

    /// The partition id of this reactor's partition `local`.
    fn partition_id(&self, local: usize) -> u16 {
        (self.replication.reactor_index + local * self.replication.reactor_count) as u16
    }
}

/// What a leaving reactor keeps to send, by (request type, structure name): the policy and the
/// records.
type Kept = BTreeMap<(MessageType, Box<str>), (MergePolicyConfig, Vec<MergingRecord>)>;

impl PartitionOwner {
    /// Keeps the multimaps' keys (each with its whole value collection) and the estimators'
    /// states of the owned partition `local`. An estimator nothing was added to is not kept;
    /// each estimator travels alone (its record's key is its name), under its own policy.
    fn keep_multimaps_and_estimators(&self, local: usize, kept: &mut Kept) {
        let partition = &self.partitions[local];
        for (name, store) in partition.stores::<kind::MultiMap>() {
            let records = store.entries().map(|(key, values)| MergingRecord {
                key: key.into(),
                value: encode_values(values),
                meta: Meta::plain(0),
            });
            let policy = self.settings.multimap(name).merge_policy;
            kept.entry((MERGE_MULTIMAP, name.into())).or_insert((policy, Vec::new())).1.extend(records);
        }
        for (name, store) in partition.stores::<kind::CardinalityEstimator>().filter(|(_, store)| !store.is_empty()) {
            let record =
                MergingRecord { key: name.as_bytes().into(), value: store.state().into(), meta: Meta::plain(0) };
            let policy = self.settings.cardinality_estimator(name).merge_policy;
            kept.insert((MERGE_ESTIMATOR, name.into()), (policy, vec![record]));
        }
    }
}

impl Core {
    /// A step the cluster service ordered.
    pub(crate) fn on_merge_step(&mut self, step: MergeStep) {
        match step {
            MergeStep::Leave => {
                let (entries, structures) = self.owner.leave_for_merge();
                info!(
                    reactor = self.index,
                    entries, structures, "left the cluster to merge: map entries and structures kept"
                );
            }
            MergeStep::Replay => {
                self.owner.merging.replaying = true;
                self.replay_merge();
            }
        }
    }

    /// Starts the next batches of a replay (none before [`MergeStep::Replay`]).
    pub(crate) fn replay_merge(&mut self) {
        if !self.owner.merging.replaying {
            return;
        }
        for _ in 0..BATCHES_PER_SWEEP {
            if self.owner.merging.maps.is_empty() {
                let Some(container) = self.owner.merging.containers.pop() else {
                    self.owner.merging.replaying = false;
                    info!(reactor = self.index, "merge: every kept map entry and structure sent to its owner");
                    return;
                };
                let (name, request) = (container.name.clone(), container.encode());
                let response = container.message_type().response();
                let operation = WideRequest::new(ContainerMergeWrite { container });
                self.fan_out_with(None, 0, response, name, operation, &mut Vec::new(), Some(&request));
                continue;
            }
            let map = self.owner.merging.maps.last_mut().expect("not empty");
            let size = (map.policy.batch_size.max(1) as usize).min(map.records.len());
            let records: Vec<MergingRecord> = map.records.drain(map.records.len() - size..).collect();
            let (name, message_type) = (map.name.clone(), map.message_type);
            let batch = MergeEntries { policy: map.policy.policy, records };
            if map.records.is_empty() {
                self.owner.merging.maps.pop();
            }
            let request = batch.encode(message_type, &name);
            let operation = merge_operation(message_type, batch).expect("a kept map's request type is a merge's");
            self.fan_out_with(None, 0, message_type.response(), name, operation, &mut Vec::new(), Some(&request));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MERGE_ESTIMATOR;
    use crate::engine::structures::ObjectKind;
    use crate::partition::objects::kind;
    use crate::partition::owner::testing::serving_alone;
    use ferrogrid_protocol::PartitionId;
    use std::sync::Arc;

    #[test]
    fn leaving_keeps_the_owned_entries_and_serves_nothing_after() {
        let mut owner = serving_alone();
        let settings = Arc::new(crate::engine::settings::MapSettings::default());
        let store = owner.partitions[0].map_mut("m", || settings);
        store.put(b"k", b"v", 0, -1, -1);
        let queue = owner.partitions[0].store_mut::<kind::Queue>("q", &mut owner.settings).0;
        queue.replace(vec![b"item".to_vec().into()]);
        assert!(owner.replication.serving(PartitionId(0)).is_some());
        assert_eq!(owner.leave_for_merge(), (1, 1));
        let kept = &owner.merging.maps[0];
        assert_eq!((&*kept.name, kept.records.len(), &*kept.records[0].value), ("m", 1, &b"v"[..]));
        let queue = &owner.merging.containers[0];
        assert_eq!((queue.kind, &*queue.name, queue.partition), (ObjectKind::Queue, "q", PartitionId(0)));
        assert_eq!(queue.items, vec![b"item".to_vec().into_boxed_slice()]);
        assert!(owner.partitions[0].map("m").is_none(), "the replica is dropped");
        assert!(owner.partitions[0].store::<kind::Queue>("q").is_none(), "the queue too");
        // A write handed to this reactor before the emptied table arrives is refused, not
        // applied to a partition whose entries were already kept.
        assert!(owner.replication.serving(PartitionId(0)).is_none());
    }

    #[test]
    fn leaving_keeps_each_multimap_key_whole_and_each_estimator_that_has_items() {
        use crate::engine::multimap::merge::{encode_values, MERGE_MULTIMAP};
        let mut owner = serving_alone();
        let partition = &mut owner.partitions[0];
        let multimap = partition.store_mut::<kind::MultiMap>("mm", &mut owner.settings).0;
        multimap.replace_values(b"k", vec![b"a"[..].into(), b"b"[..].into()]);
        let estimator = partition.store_mut::<kind::CardinalityEstimator>("ce", &mut owner.settings).0;
        estimator.add(42);
        let state = estimator.state();
        partition.store_mut::<kind::CardinalityEstimator>("never-added", &mut owner.settings);
        owner.leave_for_merge();
        let kept: Vec<_> = owner.merging.maps.iter().map(|kept| (kept.message_type, &*kept.name)).collect();
        assert_eq!(kept, [(MERGE_MULTIMAP, "mm"), (MERGE_ESTIMATOR, "ce")], "an empty estimator is not kept");
        let [multimap, estimator] = &owner.merging.maps[..] else { unreachable!() };
        assert_eq!(multimap.records[0].value, encode_values(&[b"a"[..].into(), b"b"[..].into()]));
        assert_eq!((&*estimator.records[0].key, &*estimator.records[0].value), (&b"ce"[..], &state[..]));
        assert_eq!(estimator.policy.policy, ferrogrid_config::MergePolicy::HyperLogLog, "the estimators' default");
        assert!(owner.partitions[0].store::<kind::MultiMap>("mm").is_none(), "the replica is dropped");
    }

    #[test]
    fn leaving_keeps_the_pn_counters_whose_states_join_the_other_side_s() {
        use crate::engine::pn_counter::request::PnCounterOp;
        use crate::engine::pn_counter::state::{read_state, PnCounters};
        use ferrogrid_protocol::Uuid;
        let add = |delta| PnCounterOp::Add { delta, get_before_update: false };
        let mut owner = serving_alone();
        owner.pn_counters.execute("hits", add(100), &[], || Uuid::from_u128(2)).unwrap();
        owner.leave_for_merge();
        // The merging member's state, as the periodic exchange sends it once it rejoined.
        let mut state = Vec::new();
        owner.pn_counters.get("hits").expect("kept through the leave").write_state(&mut state);
        let mut other = PnCounters::default();
        other.execute("hits", add(10), &[], || Uuid::from_u128(3)).unwrap();
        other.execute("hits", add(-1), &[], || unreachable!()).unwrap();
        other.merge("hits", &read_state(&state).unwrap(), || unreachable!());
        assert_eq!(other.get("hits").unwrap().value(), 109, "both sides' adds count");
        // The join is idempotent: the state arriving again changes nothing.
        other.merge("hits", &read_state(&state).unwrap(), || unreachable!());
        assert_eq!(other.get("hits").unwrap().value(), 109);
    }
}
