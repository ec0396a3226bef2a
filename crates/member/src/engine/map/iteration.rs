//! Iteration over one partition of a map in batches (`Map.FetchKeys`, `Map.FetchEntries`,
//! `Map.FetchWithQuery`: the Java client's `for (Map.Entry e : map)`, its partition iterators
//! and Jet's map source), with Hazelcast 5.x's iteration pointers: a list of (index, size)
//! pairs whose last one is where the next batch starts; the client starts from
//! `(Integer.MAX_VALUE, -1)` and stops at an index below 0 (or at an empty batch).
//!
//! Hazelcast's index is a slot of its hash table (the size detects a resize). Here the index
//! is an entry's *position*, a hash of its key bytes alone ([`position`], 30 bits, so below
//! `Integer.MAX_VALUE`): a batch is the live entries with the highest positions below the
//! index, and the next index is the lowest position it returned (an entry sharing that
//! position goes in the same batch, so none is split between two). The position does not
//! depend on the table's layout, its growth, the member or the reactor, so:
//! - an entry present from the first batch to the last is returned exactly once, whatever is
//!   written meanwhile; entries added or removed meanwhile may or may not be returned;
//! - this holds across migration too: the new owner computes the same positions, so a
//!   client that retries its batch (a migrating partition answers `PartitionMigrating`) goes
//!   on from the same index.
//!
//! A batch costs a pass over the partition's entries (and sorting those below the index);
//! it stops before its answer passes half of `max-message-bytes` (at least one entry).

use crate::engine::map::query::{exec_failure, failure, Predicate, ShareSchemas};
use crate::engine::map::store::{Entry, RecordStore};
use crate::engine::request::{ErrorKind, OpError, Replies, Reply};
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::wire;
use ferrogrid_query::aggregation::Projection;

/// Where a fresh iteration starts (`Integer.MAX_VALUE`: above every position); clients send it.
#[cfg(test)]
pub const START: i32 = i32::MAX;
/// The index of an iteration that is over.
pub const DONE: i32 = -1;
/// Seed of [`position`]'s hash (any fixed value: every member must use the same).
const POSITION_SEED: u32 = 0x6665_7272;

/// An entry's place in the iteration order: a hash of its key's bytes, below `i32::MAX`.
pub fn position(key: &[u8]) -> i32 {
    (ferrogrid_protocol::data::murmur3_x86_32(key, POSITION_SEED) >> 2) as i32
}

/// What a batch returns of each entry.
#[derive(Debug)]
pub(crate) enum Fetched<'a> {
    Keys,
    Entries,
    /// The entries that pass `predicate`, each through `projection` (a Data blob).
    Query {
        predicate: Predicate,
        projection: &'a [u8],
    },
}

/// One batch of one partition's entries.
#[derive(Debug)]
pub(crate) struct Fetch<'a> {
    name: &'a str,
    /// The last iteration pointer's index (None: the client sent no pointer).
    index: Option<i32>,
    batch: i32,
    fetched: Fetched<'a>,
}

impl<'a> Fetch<'a> {
    /// A batch after `pointers` (the last one is where it starts) of at most `batch` items.
    pub(crate) fn new(name: &'a str, pointers: &[(i32, i32)], batch: i32, fetched: Fetched<'a>) -> Fetch<'a> {
        Fetch { name, index: pointers.last().map(|(index, _)| *index), batch, fetched }
    }
}

/// Decides whether an entry (key, value) belongs to the iteration (a query's predicate).
pub type Keep<'k> = dyn FnMut(&[u8], &[u8]) -> Result<bool, OpError> + 'k;

/// The live entries of `store` that `keep` accepts in the batch below `index`: at most `batch`
/// of them (more only to keep entries of one position together, fewer once they hold
/// `max_bytes`), highest position first, and the index the next batch starts from.
pub fn batch<'s>(
    store: &'s RecordStore,
    (now_ms, index): (i64, i32),
    (batch, max_bytes): (usize, usize),
    keep: &mut Keep<'_>,
) -> Result<(Vec<&'s Entry>, i32), OpError> {
    if index < 0 || batch == 0 {
        return Ok((Vec::new(), index));
    }
    let mut below: Vec<(i32, &Entry)> = Vec::new();
    for (key, entry) in store.iter(now_ms) {
        let at = position(key);
        if at < index && keep(key, entry.value())? {
            below.push((at, entry));
        }
    }
    below.sort_unstable_by_key(|(at, _)| std::cmp::Reverse(*at));
    let (mut taken, mut bytes) = (0, 0);
    while taken < below.len() {
        let full = taken >= batch || (taken > 0 && bytes >= max_bytes);
        if full && below[taken].0 != below[taken - 1].0 {
            break;
        }
        bytes += below[taken].1.key().len() + below[taken].1.value().len() + 12;
        taken += 1;
    }
    let next = if taken == below.len() { DONE } else { below[taken - 1].0 };
    debug_assert!(next < index, "an iteration only moves down");
    Ok((below.into_iter().take(taken).map(|(_, entry)| entry).collect(), next))
}

impl Execute for Fetch<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let Some(index) = self.index else {
            let failure = OpError::new(ErrorKind::IllegalArgument, "no iteration pointer");
            return wire::write_error(out, call.correlation_id, &failure);
        };
        let bounds = (self.batch.max(0) as usize, owner.settings.max_message_bytes() / 2);
        let cursor = (owner.now_ms, index);
        if let Some(store) = owner.partitions[call.local].existing_mut(self.name) {
            store.op_counts[call.counter_slot] += 1;
        }
        let Some(store) = owner.partitions[call.local].map(self.name) else {
            // Nothing to iterate: over at once.
            let pointers = vec![(if index < 0 { index } else { DONE }, -1)];
            return match self.fetched {
                Fetched::Query { .. } => call.replies(out).reply(Reply::FetchedQuery { pointers, results: Vec::new() }),
                _ => call.replies(out).reply(Reply::Fetched { pointers, keys: Vec::new(), values: None }),
            };
        };
        let outcome = match &self.fetched {
            Fetched::Keys | Fetched::Entries => {
                batch(store, cursor, bounds, &mut |_, _| Ok(true)).map(|(found, next)| {
                    let keys = found.iter().map(|entry| entry.key()).collect();
                    let values =
                        matches!(self.fetched, Fetched::Entries).then(|| found.iter().map(|e| e.value()).collect());
                    Reply::Fetched { pointers: vec![(next, -1)], keys, values }
                })
            }
            Fetched::Query { predicate, projection } => {
                let partition_count = owner.replication.state.table.partition_count() as u16;
                let schemas = ShareSchemas::new(&owner.schemas);
                match predicate.compiled(&owner.schemas, partition_count) {
                    Ok(compiled) => {
                        let mut keep =
                            |key: &[u8], value: &[u8]| compiled.filter.matches(key, value, &schemas).map_err(failure);
                        batch(store, cursor, bounds, &mut keep).and_then(|(found, next)| {
                            let results = project(projection, &found, &schemas)?;
                            Ok(Reply::FetchedQuery { pointers: vec![(next, -1)], results })
                        })
                    }
                    Err(failure) => Err(failure.clone()),
                }
            }
        };
        match outcome {
            Ok(reply) => call.replies(out).reply(reply),
            Err(failure) => wire::write_error(out, call.correlation_id, &failure),
        }
    }
}

/// Each of `entries` through the projection (a Data blob).
fn project(
    projection: &[u8],
    entries: &[&Entry],
    schemas: &dyn ferrogrid_query::SchemaSource,
) -> Result<Vec<Option<Vec<u8>>>, OpError> {
    let projection: Projection = ferrogrid_query::aggregation::decode_projection(projection)
        .map_err(|error| OpError::new(ErrorKind::IllegalArgument, format!("cannot read the projection: {error}")))?;
    let project = |entry: &&Entry| ferrogrid_query::exec::project(&projection, entry.key(), entry.value(), schemas);
    entries.iter().map(|entry| project(entry).map_err(exec_failure)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::settings::MapSettings;
    use ferrogrid_config::MapConfig;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn store(keys: impl IntoIterator<Item = u32>) -> RecordStore {
        let mut store = RecordStore::new(Arc::new(MapSettings::resolve(&MapConfig::DEFAULT, 271, 1)));
        for key in keys {
            store.put(&key.to_be_bytes(), b"v", 0, -1, -1);
        }
        store
    }

    /// Runs batches of `size` to the end, calling `between` after each; returns every key seen.
    fn iterate(store: &mut RecordStore, size: usize, mut between: impl FnMut(&mut RecordStore)) -> Vec<Vec<u8>> {
        let (mut index, mut seen) = (START, Vec::new());
        while index >= 0 {
            let (found, next) = batch(store, (0, index), (size, usize::MAX), &mut |_, _| Ok(true)).unwrap();
            assert!(found.len() >= size.min(1) || next == DONE, "only the last batch is short");
            let at = |index: usize| position(found[index].key());
            assert!(found.len() <= size || at(size - 1) == at(size), "a batch passes its size only for one position");
            seen.extend(found.iter().map(|entry| entry.key().to_vec()));
            index = next;
            between(store);
        }
        seen
    }

    #[test]
    fn every_entry_once_in_batches_of_any_size() {
        for size in [1, 7, 100, 5_000] {
            let mut store = store(0..3_007);
            let mut seen = iterate(&mut store, size, |_| {});
            assert_eq!(seen.len(), 3_007, "batch {size}");
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), 3_007, "no entry twice with batch {size}");
        }
        let empty = store(0..0);
        assert_eq!(batch(&empty, (0, START), (10, usize::MAX), &mut |_, _| Ok(true)).unwrap().1, DONE);
    }

    #[test]
    fn writes_meanwhile_neither_hide_nor_repeat_an_entry_present_throughout() {
        // 1,000 keys stay; between batches 300 others come and go and the table grows.
        let mut store = store(0..1_000);
        let mut next_key = 10_000u32;
        let seen = iterate(&mut store, 50, |store| {
            for _ in 0..300 {
                store.put(&next_key.to_be_bytes(), b"w", 0, -1, -1);
                next_key += 1;
            }
            for old in (next_key - 600)..(next_key - 450) {
                store.remove(&old.to_be_bytes());
            }
        });
        let mut counts: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
        for key in seen {
            *counts.entry(key).or_default() += 1;
        }
        assert!(counts.values().all(|count| *count == 1), "nothing is returned twice");
        assert!(
            (0..1_000u32).all(|key| counts.contains_key(&key.to_be_bytes()[..])),
            "nothing present throughout is missed"
        );
    }

    #[test]
    fn a_batch_keeps_one_position_whole_and_stops_at_its_bytes() {
        let store = store(0..200);
        let (found, next) = batch(&store, (0, START), (1_000, 40), &mut |_, _| Ok(true)).unwrap();
        assert!(found.len() < 200 && next > 0, "the byte bound cuts the batch: {}", found.len());
        let (found, _) = batch(&store, (0, START), (0, usize::MAX), &mut |_, _| Ok(true)).unwrap();
        assert!(found.is_empty(), "a batch of 0 returns nothing");
        let even = |key: &[u8], _: &[u8]| Ok(key[3].is_multiple_of(2));
        let (found, next) = batch(&store, (0, START), (1_000, usize::MAX), &mut { even }).unwrap();
        assert_eq!((found.len(), next), (100, DONE), "a filter applies before the batch is cut");
        assert!(position(b"any key") < START && position(b"") >= 0);
    }
}
