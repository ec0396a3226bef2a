//! A split-brain merge's multimap keys arriving in the cluster they merge into: the merging
//! member kept each key of the partitions it owned with its whole value collection
//! (`cluster/merge.rs`) and sends them in MERGE_MULTIMAP batches (the map merge's encoding,
//! `engine/map/merge.rs`, a record's value being the key's encoded collection). As Hazelcast's
//! `MultiMapContainer.merge`, the collection is one merging value: the policy decides per key
//! between it and the collection the owner holds, and a collection that wins replaces the held
//! one whole. ferrogrid's multimaps keep no hits or access and update times, so the policies
//! that compare them see a tie, which goes to the merging collection. The owner sends the
//! changed keys to the backups as it does a transaction's commit.

use crate::cluster::peer::{put_bytes, Malformed, Reader};
use crate::engine::map::merge::MergeEntries;
use crate::engine::multimap::store::{MultiMapStore, Values};
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Partitions, ShareContext, WideOperation};
use crate::partition::objects::{kind, PartitionStore};
use ferrogrid_config::{MergePolicy, MergingEntry};
use ferrogrid_protocol::MessageType;
use tracing::warn;

/// Members' internal request carrying one batch of a merging multimap's keys (never accepted
/// from a client: the operation table has no row for it).
pub(crate) const MERGE_MULTIMAP: MessageType = MessageType(0x02_FF00);

/// A key's values as a merging record's value: a `u32` count, then each value's bytes.
pub(crate) fn encode_values(values: &[Box<[u8]>]) -> Box<[u8]> {
    let mut out = Vec::with_capacity(4 + values.iter().map(|value| 4 + value.len()).sum::<usize>());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for value in values {
        put_bytes(&mut out, value);
    }
    out.into()
}

/// Decodes [`encode_values`]; a count beyond what the bytes can hold is refused before
/// anything is allocated for it.
fn decode_values(bytes: &[u8]) -> Result<Values, Malformed> {
    let mut reader = Reader::new(bytes);
    let count = reader.u32()? as usize;
    if count > bytes.len() / 4 {
        return Err(Malformed::Refused("more multimap values than the record holds"));
    }
    let values = (0..count).map(|_| reader.bytes().map(Box::from)).collect::<Result<Values, _>>()?;
    if !reader.is_empty() {
        return Err(Malformed::Refused("bytes after a multimap key's values"));
    }
    Ok(values)
}

/// Merges one key's merging collection into the owner's `store`: it replaces the held one, or
/// fills the key's absence, when the policy says so (an empty collection is an absent key).
/// Returns whether the key changed (a winning collection equal to the held one changes
/// nothing, as in Hazelcast).
fn merge_key(store: &mut MultiMapStore, policy: MergePolicy, key: &[u8], merging: Values) -> bool {
    let no_stats = MergingEntry::default();
    let held = store.values(key);
    if !policy.merging_wins(&no_stats, (!held.is_empty()).then_some(&no_stats)) || held == &merging[..] {
        return false;
    }
    store.replace_values(key, merging);
    true
}

/// A batch on the partitions this member owns.
#[derive(Debug)]
pub(crate) struct MultiMapMergeWrite {
    pub(crate) batch: MergeEntries,
}

impl WideOperation for MultiMapMergeWrite {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, _: &mut ()) {
        for record in &self.batch.records {
            let Some((_, local)) = share.local_of(&record.key) else { continue };
            if !share.owned.get(local).copied().unwrap_or(false) {
                continue;
            }
            let values = match decode_values(&record.value) {
                Ok(values) => values,
                Err(error) => {
                    warn!(%error, multimap = name, "a malformed merging multimap key: skipped");
                    continue;
                }
            };
            let store = share.partitions[local].store_mut::<kind::MultiMap>(name, share.settings).0;
            if merge_key(store, self.batch.policy, &record.key, values) {
                share.touch(local);
            }
        }
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut ()) {
        unreachable!("on_share does a multimap merge's work")
    }

    fn reply<'p>(&'p self, _: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_config::{MultiMapConfig, ValueCollectionType};

    fn values(items: &[&str]) -> Values {
        items.iter().map(|item| item.as_bytes().into()).collect()
    }

    fn held(store: &MultiMapStore, key: &str) -> Vec<String> {
        store.values(key.as_bytes()).iter().map(|value| String::from_utf8_lossy(value).into_owned()).collect()
    }

    #[test]
    fn a_key_s_values_round_trip_and_a_bad_record_is_refused() {
        for items in [&[][..], &["a"][..], &["", "bb", "bb"][..]] {
            assert_eq!(decode_values(&encode_values(&values(items))).unwrap(), values(items));
        }
        let encoded = encode_values(&values(&["abc"]));
        assert!(decode_values(&encoded[..encoded.len() - 1]).is_err(), "truncated");
        assert!(decode_values(&[encoded.to_vec(), vec![0]].concat()).is_err(), "trailing bytes");
        assert!(decode_values(&u32::MAX.to_le_bytes()).is_err(), "a count the bytes cannot hold");
    }

    #[test]
    fn each_policy_merges_a_key_s_whole_collection() {
        let cases = [
            // (policy, the small side's own key, the key both sides hold)
            (MergePolicy::PutIfAbsent, vec!["s1", "s2"], vec!["large"]),
            (MergePolicy::PassThrough, vec!["s1", "s2"], vec!["s1", "s2"]),
            (MergePolicy::Discard, vec![], vec!["large"]),
            (MergePolicy::HigherHits, vec!["s1", "s2"], vec!["s1", "s2"]),
        ];
        for (policy, only_small, both) in cases {
            let mut store = MultiMapStore::new(MultiMapConfig::DEFAULT);
            assert!(merge_key(&mut store, MergePolicy::PassThrough, b"both", values(&["large"])));
            let changed = merge_key(&mut store, policy, b"small", values(&["s1", "s2"]));
            assert_eq!(changed, !only_small.is_empty(), "{policy:?}");
            merge_key(&mut store, policy, b"both", values(&["s1", "s2"]));
            assert_eq!(held(&store, "small"), only_small, "{policy:?}");
            assert_eq!(held(&store, "both"), both, "{policy:?}");
        }
    }

    #[test]
    fn an_equal_collection_changes_nothing_and_a_list_keeps_duplicates() {
        let mut store = MultiMapStore::new(MultiMapConfig::DEFAULT);
        assert!(merge_key(&mut store, MergePolicy::PassThrough, b"k", values(&["a", "b"])));
        assert!(!merge_key(&mut store, MergePolicy::PassThrough, b"k", values(&["a", "b"])));
        let list = MultiMapConfig { value_collection_type: ValueCollectionType::List, ..MultiMapConfig::DEFAULT };
        let mut store = MultiMapStore::new(list);
        assert!(merge_key(&mut store, MergePolicy::PutIfAbsent, b"k", values(&["a", "a"])));
        assert_eq!(held(&store, "k"), ["a", "a"]);
    }
}
