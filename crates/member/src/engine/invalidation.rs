//! Near-cache invalidation metadata of the partitions one reactor holds: the sequence of each
//! (map, partition), increased by every invalidation the partition's owner publishes for the
//! map, and a uuid per partition. A client's repairing handler tracks both per partition: the
//! events carry them, and `Map.FetchNearCacheInvalidationMetadata` answers them for the
//! partitions a member owns, so a client that missed invalidations (a gap in the sequence) or
//! whose partition's sequences started over (a new uuid) drops that partition's cached entries.
//!
//! As Hazelcast's `MetaDataGenerator`: a sequence not yet used is 0 (and is not reported); a
//! uuid is made on first use; a clear of a map takes one sequence of the map on every partition
//! (Hazelcast 5.6's `forceIncrementSequence`, and the clear's own invalidation on the name's
//! partition); a partition whose owner changes loses its uuid and all its sequences, so its
//! next owner's answers carry a uuid the clients have not seen. (Hazelcast
//! hands a migrating partition's uuid and sequences to its new owner; ferrogrid's migration does
//! not carry them, so the new owner names a new uuid and clients refetch that partition's
//! entries once, which is safe, where keeping the uuid with sequences started over would not be.)
//!
//! Owned by the reactor of its partitions (inside its `Listeners`, behind the partitions' lock).

use ahash::RandomState;
use ferrogrid_protocol::Uuid;
use std::collections::HashMap;

/// One reactor's invalidation sequences and partition uuids.
#[derive(Debug, Default)]
pub struct InvalidationMetadata {
    /// Per map, per partition id: the sequence of the last invalidation published (absent: 0).
    sequences: HashMap<Box<str>, HashMap<u16, i64, RandomState>, RandomState>,
    /// Per partition id: its uuid (absent: made on next use).
    uuids: HashMap<u16, Uuid, RandomState>,
}

impl InvalidationMetadata {
    /// The sequence of the invalidation about to be published for `map` in `partition`.
    pub fn next_sequence(&mut self, map: &str, partition: u16) -> i64 {
        let sequences = match self.sequences.get_mut(map) {
            Some(sequences) => sequences,
            None => self.sequences.entry(map.into()).or_default(),
        };
        let sequence = sequences.entry(partition).or_insert(0);
        *sequence += 1;
        assert!(*sequence > 0, "an invalidation sequence only grows");
        *sequence
    }

    /// The sequence of the last invalidation published for `map` in `partition` (0: none).
    pub fn current_sequence(&self, map: &str, partition: u16) -> i64 {
        self.sequences.get(map).and_then(|sequences| sequences.get(&partition)).copied().unwrap_or(0)
    }

    /// `partition`'s uuid, made now (with `fresh`) if it has none.
    pub fn uuid(&mut self, partition: u16, fresh: impl FnOnce() -> Uuid) -> Uuid {
        *self.uuids.entry(partition).or_insert_with(fresh)
    }

    /// `partition`'s owner changed (this member took it over, or gave it up): its uuid and the
    /// sequences of every map there go.
    pub fn forget_partition(&mut self, partition: u16) {
        self.uuids.remove(&partition);
        self.sequences.retain(|_, sequences| {
            sequences.remove(&partition);
            !sequences.is_empty()
        });
    }

    /// `map` was destroyed: its sequences go (a map of the name made later starts from 0).
    pub fn forget_map(&mut self, map: &str) {
        self.sequences.remove(map);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uuids 1, 2, 3, … in the order they are made.
    fn counter() -> impl FnMut() -> Uuid {
        let mut made = 0;
        move || {
            made += 1;
            Uuid { most: 7, least: made }
        }
    }

    #[test]
    fn sequences_grow_per_map_and_partition_from_one() {
        let mut metadata = InvalidationMetadata::default();
        assert_eq!(metadata.current_sequence("a", 3), 0, "nothing published yet");
        assert_eq!(metadata.next_sequence("a", 3), 1);
        assert_eq!(metadata.next_sequence("a", 3), 2);
        assert_eq!(metadata.next_sequence("a", 4), 1, "each partition counts for itself");
        assert_eq!(metadata.next_sequence("b", 3), 1, "each map counts for itself");
        assert_eq!(metadata.current_sequence("a", 3), 2);
        assert_eq!(metadata.current_sequence("a", 5), 0);
        assert_eq!(metadata.current_sequence("c", 3), 0);
    }

    #[test]
    fn a_uuid_is_made_once_and_kept() {
        let (mut metadata, mut fresh) = (InvalidationMetadata::default(), counter());
        let first = metadata.uuid(9, &mut fresh);
        assert_eq!(metadata.uuid(9, &mut fresh), first, "asked again, the same uuid");
        assert_ne!(metadata.uuid(10, &mut fresh), first, "another partition has its own");
    }

    #[test]
    fn a_partition_that_changes_owner_loses_its_uuid_and_sequences() {
        let (mut metadata, mut fresh) = (InvalidationMetadata::default(), counter());
        let before = metadata.uuid(3, &mut fresh);
        let other = metadata.uuid(4, &mut fresh);
        metadata.next_sequence("a", 3);
        metadata.next_sequence("b", 3);
        metadata.next_sequence("b", 4);
        metadata.forget_partition(3);
        assert_eq!((metadata.current_sequence("a", 3), metadata.current_sequence("b", 3)), (0, 0));
        assert_eq!(metadata.current_sequence("b", 4), 1, "other partitions keep theirs");
        assert_ne!(metadata.uuid(3, &mut fresh), before);
        assert_eq!(metadata.uuid(4, &mut fresh), other);
    }

    #[test]
    fn a_destroyed_map_starts_from_zero() {
        let mut metadata = InvalidationMetadata::default();
        metadata.next_sequence("a", 3);
        metadata.next_sequence("b", 3);
        metadata.forget_map("a");
        assert_eq!(metadata.current_sequence("a", 3), 0);
        assert_eq!(metadata.current_sequence("b", 3), 1);
    }
}
