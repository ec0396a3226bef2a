//! `Map.FetchNearCacheInvalidationMetadata`: what a client's repairing handler asks a member
//! every reconciliation interval, for the maps it caches: the invalidation sequence of each
//! (map, partition) the member owns and each owned partition's uuid (`engine/invalidation.rs`
//! keeps them). The client names the member: the row sends the request there
//! ([`WideOperation::target`]), and only that member's reactors answer, each for the partitions
//! it owns.

use crate::engine::listeners::{fresh_uuid, Listeners};
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Partial, Partitions, ShareContext, WideOperation};
use ferrogrid_protocol::message::{MessageWriter, Packed, VarField};
use ferrogrid_protocol::{DecodeError, Message, Uuid};

/// The request: the maps asked about, and the member the client asked.
#[derive(Debug)]
pub(crate) struct FetchMetadata {
    names: Vec<Box<str>>,
    member: Uuid,
}

impl FetchMetadata {
    pub(crate) fn new(names: &[&str], member: Uuid) -> FetchMetadata {
        FetchMetadata { names: names.iter().map(|name| (*name).into()).collect(), member }
    }
}

/// A map's (partition, sequence) pairs.
pub(crate) type MapSequences = (Box<str>, Vec<(i32, i64)>);

/// Per map asked about (in the request's order), its (partition, sequence) pairs with a sequence
/// other than 0; the (partition, uuid) of every owned partition.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Metadata {
    pub sequences: Vec<MapSequences>,
    pub uuids: Vec<(i32, Uuid)>,
}

impl Partial for Metadata {
    fn merge(&mut self, other: Metadata) {
        for (name, pairs) in other.sequences {
            match self.sequences.iter_mut().find(|(held, _)| *held == name) {
                Some((_, held)) => held.extend(pairs),
                None => self.sequences.push((name, pairs)),
            }
        }
        self.uuids.extend(other.uuids);
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        let sequences: Vec<(&str, Packed<(i32, i64)>)> =
            self.sequences.iter().map(|(name, pairs)| (&**name, Packed(pairs.clone()))).collect();
        sequences.write(writer);
        Packed(self.uuids.iter().map(|(id, uuid)| (*id, Some(*uuid))).collect()).write(writer);
    }

    fn read_from(message: &Message<'_>) -> Result<Metadata, DecodeError> {
        let mut reader = message.reader();
        let sequences = <Vec<(&str, Packed<(i32, i64)>)>>::read(&mut reader)?;
        let uuids = <Packed<(i32, Option<Uuid>)>>::read(&mut reader)?;
        let uuids = uuids.0.into_iter().map(|(id, uuid)| uuid.map(|uuid| (id, uuid)));
        Ok(Metadata {
            sequences: sequences.into_iter().map(|(name, pairs)| (name.into(), pairs.0)).collect(),
            uuids: uuids.collect::<Option<_>>().ok_or(DecodeError::InvalidValue("a partition uuid"))?,
        })
    }
}

impl Metadata {
    /// Adds the metadata of the owned partitions `owned` (ids) for the maps `names`.
    fn add(&mut self, names: &[Box<str>], listeners: &mut Listeners, owned: &[u16]) {
        for name in names {
            let pairs = owned
                .iter()
                .map(|partition| (i32::from(*partition), listeners.metadata.current_sequence(name, *partition)));
            self.sequences.push((name.clone(), pairs.filter(|(_, sequence)| *sequence != 0).collect()));
        }
        for partition in owned {
            self.uuids.push((i32::from(*partition), listeners.metadata.uuid(*partition, fresh_uuid)));
        }
    }
}

impl WideOperation for FetchMetadata {
    type Partial = Metadata;
    const PARTITIONS: Partitions = Partitions::Owned;
    /// The member the client named answers alone.
    const CLUSTER_WIDE: bool = false;

    fn target(&self) -> Option<Uuid> {
        Some(self.member)
    }

    fn empty(&self) -> Metadata {
        Metadata::default()
    }

    fn on_share(&self, _map: &str, share: &mut ShareContext<'_>, partial: &mut Metadata) {
        let owned: Vec<u16> = (0..share.partitions.len())
            .filter(|local| share.owned.get(*local).copied().unwrap_or(true))
            .map(|local| share.partition_id(local))
            .collect();
        partial.add(&self.names, share.listeners, &owned);
    }

    fn reply<'p>(&'p self, partial: &'p mut Metadata) -> Result<Reply<'p>, OpError> {
        partial.uuids.sort_unstable_by_key(|(partition, _)| *partition);
        let sequences = partial.sequences.iter_mut().map(|(name, pairs)| {
            pairs.sort_unstable_by_key(|(partition, _)| *partition);
            (&**name, pairs.clone())
        });
        Ok(Reply::InvalidationMetadata { sequences: sequences.collect(), uuids: partial.uuids.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::fanout::testing::over_the_hop;

    const MEMBER: Uuid = Uuid { most: 1, least: 2 };

    fn names(names: &[&str]) -> Vec<Box<str>> {
        names.iter().map(|name| (*name).into()).collect()
    }

    #[test]
    fn a_share_reports_every_owned_partitions_uuid_and_only_sequences_taken() {
        let mut listeners = Listeners::default();
        listeners.metadata.next_sequence("a", 2);
        listeners.metadata.next_sequence("a", 2);
        listeners.metadata.next_sequence("a", 9);
        listeners.metadata.next_sequence("b", 4);
        let mut partial = Metadata::default();
        partial.add(&names(&["a", "b", "c"]), &mut listeners, &[2, 4, 6]);
        let sequences: Vec<(&str, &[(i32, i64)])> =
            partial.sequences.iter().map(|(name, pairs)| (&**name, &pairs[..])).collect();
        assert_eq!(sequences, [("a", &[(2, 2)][..]), ("b", &[(4, 1)][..]), ("c", &[][..])], "partition 9 is not owned");
        let partitions: Vec<i32> = partial.uuids.iter().map(|(partition, _)| *partition).collect();
        assert_eq!(partitions, [2, 4, 6]);
        let uuid = listeners.metadata.uuid(4, || unreachable!("made when reported"));
        assert_eq!(partial.uuids[1], (4, uuid), "the uuid reported is the one events carry");
    }

    #[test]
    fn shares_merge_per_map_and_cross_the_member_hop() {
        let one =
            || Metadata { sequences: vec![("a".into(), vec![(0, 3)]), ("b".into(), vec![])], uuids: vec![(0, MEMBER)] };
        let other = Metadata {
            sequences: vec![("a".into(), vec![(1, 5)]), ("b".into(), vec![(1, 1)])],
            uuids: vec![(1, MEMBER)],
        };
        let mut merged = one();
        merged.merge(other);
        assert_eq!(merged.sequences, vec![("a".into(), vec![(0, 3), (1, 5)]), ("b".into(), vec![(1, 1)])]);
        assert_eq!(merged.uuids, [(0, MEMBER), (1, MEMBER)]);
        assert_eq!(over_the_hop(&merged), merged);
        assert_eq!(over_the_hop(&Metadata::default()), Metadata::default());
    }

    #[test]
    fn the_answer_lists_partitions_in_order() {
        let operation = FetchMetadata::new(&["a"], MEMBER);
        let mut partial =
            Metadata { sequences: vec![("a".into(), vec![(5, 1), (1, 2)])], uuids: vec![(5, MEMBER), (1, MEMBER)] };
        let reply = operation.reply(&mut partial);
        let expected = Reply::InvalidationMetadata {
            sequences: vec![("a", vec![(1, 2), (5, 1)])],
            uuids: vec![(1, MEMBER), (5, MEMBER)],
        };
        assert_eq!(reply, Ok(expected));
        assert_eq!(operation.target(), Some(MEMBER));
    }
}
