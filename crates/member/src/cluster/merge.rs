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
//! merging side), and queues, lists, sets and ringbuffers, each whole, as one MERGE_QUEUE,
//! MERGE_LIST, MERGE_SET or MERGE_RINGBUFFER request (`engine/container_merge.rs`). Other
//! structures of the merging side are dropped (Hazelcast merges more of them; see
//! docs/cluster.md).

use crate::engine::container_merge::{self, ContainerMergeWrite, MergingContainer};
use crate::engine::map::entry::Meta;
use crate::engine::map::merge::{MergeEntries, MergeWrite, MergingMap, MergingRecord, MERGE_ENTRIES};
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
        _ => None,
    }
}

/// Another member's merge request (MERGE_ENTRIES, MERGE_REPLICATED, or one structure's:
/// MERGE_QUEUE, MERGE_LIST, MERGE_SET, MERGE_RINGBUFFER): the structure's name and the fan-out
/// it runs; None for any other request.
pub(crate) fn merge_request(inner: &Message<'_>) -> Result<Option<(String, WideRequest)>, DecodeError> {
    if container_merge::kind_of(inner.message_type()).is_some() {
        let container = MergingContainer::decode(inner)?;
        return Ok(Some((container.name.to_string(), WideRequest::new(ContainerMergeWrite { container }))));
    }
    if ![MERGE_ENTRIES, MERGE_REPLICATED].contains(&inner.message_type()) {
        return Ok(None);
    }
    let (map, batch) = MergeEntries::decode(inner)?;
    Ok(merge_operation(inner.message_type(), batch).map(|operation| (map, operation)))
}

impl PartitionOwner {
    /// Keeps the map entries, queues, lists, sets and ringbuffers of the partitions this member
    /// owns and drops every replica and replicated-map copy this reactor holds. Returns how
    /// many entries and how many whole structures it kept.
    pub(crate) fn leave_for_merge(&mut self) -> (usize, usize) {
        let now_ms = self.now_ms;
        // By (request type, name): the policy and the entries.
        let mut kept: BTreeMap<(MessageType, Box<str>), (MergePolicyConfig, Vec<MergingRecord>)> = BTreeMap::new();
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
            }
            self.partitions[local].drop_all();
            self.partitions[local].drop_stores::<kind::ReplicatedMap>();
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
}
