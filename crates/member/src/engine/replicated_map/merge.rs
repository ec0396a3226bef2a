//! A split-brain merge's replicated-map entries arriving in the cluster they merge into: the
//! merging member kept the entries of the partitions it owned (`cluster/merge.rs`) and sends them
//! in MERGE_REPLICATED batches (the map merge's encoding, `engine/map/merge.rs`, without
//! statistics: a replicated map keeps none, so the statistics-based policies see a tie, which
//! goes to the merging entry). Each member's owners decide per entry, as an owner's put they
//! apply it, publish its event and send the change to every other member.

use crate::engine::map::merge::MergeEntries;
use crate::engine::replicated_map::store::{self, publish, put_kind, EntryChange};
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Partitions, ShareContext, WideOperation};
use crate::partition::objects::{kind, PartitionStore};
use ferrogrid_config::MergingEntry;
use ferrogrid_protocol::MessageType;

/// Members' internal request carrying one batch of a merging replicated map's entries (never
/// accepted from a client: the operation table has no row for it).
pub(crate) const MERGE_REPLICATED: MessageType = MessageType(0x0D_FF00);

/// A batch on the partitions this member owns.
#[derive(Debug)]
pub(crate) struct ReplicatedMergeWrite {
    pub(crate) batch: MergeEntries,
}

impl WideOperation for ReplicatedMergeWrite {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, _: &mut ()) {
        let now_ms = share.now_ms;
        let no_stats = MergingEntry::default();
        let mut changes: Vec<(usize, Vec<u8>)> = Vec::new();
        for record in &self.batch.records {
            let Some((partition, local)) = share.local_of(&record.key) else { continue };
            let partition = partition as usize;
            if !share.owned.get(local).copied().unwrap_or(false) || !share.replicated.writable(local) {
                continue;
            }
            let store = share.partitions[local].store_mut::<kind::ReplicatedMap>(name, share.settings).0;
            let held = store.get(&record.key, now_ms).is_some();
            if !self.batch.policy.merging_wins(&no_stats, held.then_some(&no_stats)) {
                continue;
            }
            let old = store.put(&record.key, &record.value, crate::clock::NEVER, now_ms);
            let at = match changes.iter().position(|(p, _)| *p == partition) {
                Some(at) => at,
                None => {
                    changes.push((partition, Vec::new()));
                    changes.len() - 1
                }
            };
            store::put_change(&mut changes[at].1, name, &record.key, &record.value, crate::clock::NEVER);
            let (key, value, kind) = (&*record.key, Some(&*record.value), put_kind(old.as_deref()));
            let change = EntryChange { name, partition, kind, key, value, old_value: old.as_deref() };
            publish(share.listeners, share.outbox, (share.member, false), &change);
        }
        for (partition, body) in changes {
            share.replicated.send(partition, &body);
        }
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut ()) {
        unreachable!("on_share does a replicated merge's work")
    }

    fn reply<'p>(&'p self, _: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}
