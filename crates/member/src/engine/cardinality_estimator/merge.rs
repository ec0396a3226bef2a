//! A split-brain merge's cardinality estimators arriving in the cluster they merge into: the
//! merging member kept the estimators of the partitions it owned (`cluster/merge.rs`) and sends
//! each as a MERGE_ESTIMATOR request (the map merge's encoding, `engine/map/merge.rs`: one
//! record, the estimator's name as its key and its whole state as its value). The owner of the
//! name's partition merges it by the estimator's policy (`store.rs`, `merge_state`) and sends
//! the new state to the backups as it does a transaction's commit.

use crate::engine::map::merge::MergeEntries;
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Partitions, ShareContext, WideOperation};
use crate::partition::objects::{kind, PartitionStore};
use ferrogrid_protocol::data::partition_for_name;
use ferrogrid_protocol::MessageType;
use tracing::warn;

/// Members' internal request carrying a merging estimator's state (never accepted from a
/// client: the operation table has no row for it).
pub(crate) const MERGE_ESTIMATOR: MessageType = MessageType(0x19_FF00);

/// The index in `share.partitions` of the partition of the estimator `name`, if this reactor
/// owns it.
fn owned_local(share: &ShareContext<'_>, name: &str) -> Option<usize> {
    let partition = usize::from(partition_for_name(name, share.partition_count).0);
    let (index, count) = share.reactor;
    if partition % count != index {
        return None;
    }
    let local = partition / count;
    share.owned.get(local).copied().unwrap_or(false).then_some(local)
}

/// A merging estimator on the reactor that owns its partition.
#[derive(Debug)]
pub(crate) struct EstimatorMergeWrite {
    pub(crate) batch: MergeEntries,
}

impl WideOperation for EstimatorMergeWrite {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    fn on_share(&self, _: &str, share: &mut ShareContext<'_>, _: &mut ()) {
        for record in &self.batch.records {
            let Ok(name) = std::str::from_utf8(&record.key) else { continue };
            let Some(local) = owned_local(share, name) else { continue };
            let store = share.partitions[local].store_mut::<kind::CardinalityEstimator>(name, share.settings).0;
            match store.merge_state(self.batch.policy, &record.value) {
                Ok(true) => share.touch(local),
                Ok(_) => {}
                Err(error) => warn!(%error, estimator = name, "a malformed merging estimator: skipped"),
            }
        }
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut ()) {
        unreachable!("on_share does an estimator merge's work")
    }

    fn reply<'p>(&'p self, _: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}
