//! `Map.removeAll(predicate)`: every entry that passes the predicate goes, in every partition,
//! with a REMOVED event (key and old value) per entry an owner removed, as Hazelcast publishes
//! them.
//!
//! Like clear, the removal is not replicated as records: every member runs it on each replica
//! it holds, owned or backup, and the same predicate over the same entries removes the same
//! ones (a write racing with the removal may land on one copy before it and on another after,
//! as with clear). Only owners publish events and count towards the answer's coverage; a
//! partition no owner covered (it moved while the request ran) makes the answer
//! `PartitionMigrating`, which clients retry (removing again what passes is harmless).

use crate::engine::listeners::{Event, EventKind};
use crate::engine::map::query::{reactor_indexes, Narrowed};
use crate::engine::map::query::{Predicate, ShareSchemas};
use crate::engine::map::query_ops::{for_each_match, Coverage};
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Partial, Partitions, ShareContext, WideOperation};
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::message::MessageWriter;
use ferrogrid_protocol::{DecodeError, Message, PartitionId};

/// Map.removeAll with its predicate (decoded and compiled on first use).
#[derive(Debug)]
pub(crate) struct RemoveAll {
    predicate: Predicate,
}

impl RemoveAll {
    pub(crate) fn new(predicate: &[u8]) -> RemoveAll {
        RemoveAll { predicate: Predicate::new(Some(predicate)) }
    }
}

/// The owned partitions the shares covered, and the first failure.
#[derive(Debug, Default)]
pub(crate) struct Swept(Coverage);

impl Partial for Swept {
    fn merge(&mut self, other: Swept) {
        self.0.merge(other.0);
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        self.0.write_to(writer);
    }

    fn read_from(message: &Message<'_>) -> Result<Swept, DecodeError> {
        Coverage::read_from(&mut message.reader()).map(Swept)
    }
}

impl WideOperation for RemoveAll {
    type Partial = Swept;
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) -> Swept {
        Swept::default()
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut Swept) {
        unreachable!("removeAll runs its share in on_share")
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Swept) {
        let compiled = &match self.predicate.for_share(share.schemas, share.partition_count) {
            Ok(compiled) => compiled,
            Err(failure) => {
                partial.0.failure = Some(failure);
                return;
            }
        };
        let owned = partial.0.cover_owned(share, compiled);
        let shared = share.schemas.clone();
        let (now_ms, schemas) = (share.now_ms, ShareSchemas::new(&shared));
        // Each partition's candidates from the reactor's indexes, copied out (the indexes
        // change below).
        let narrowed: Option<Vec<Vec<Box<[u8]>>>> = {
            let indexes = reactor_indexes((share.partitions, share.settings), map, !compiled.plan.is_empty());
            let indexes = indexes.as_ref().map(|indexes| indexes.lock());
            let narrowed = indexes.as_ref().and_then(|indexes| Narrowed::new(indexes, &compiled.plan));
            narrowed.map(|narrowed| {
                let owned = |local| narrowed.of(local).iter().map(|(_, key)| Box::from(*key)).collect();
                (0..share.partitions.len()).map(owned).collect()
            })
        };
        for local in 0..share.partitions.len() {
            let partition_id = share.partition_id(local);
            if compiled.partitions.as_ref().is_some_and(|wanted| !wanted.contains(&partition_id)) {
                continue;
            }
            let candidates: Option<Vec<(u32, &[u8])>> =
                narrowed.as_ref().map(|all| all[local].iter().map(|key| (local as u32, &**key)).collect());
            if candidates.as_ref().is_some_and(Vec::is_empty) {
                continue;
            }
            let Some(store) = share.partitions[local].existing_mut(map) else { continue };
            let mut matched = Vec::new();
            let found = for_each_match((store, candidates.as_deref()), compiled, (now_ms, &schemas), |key, value| {
                matched.push((Box::<[u8]>::from(key), Box::<[u8]>::from(value)));
                Ok(())
            });
            let is_owned = owned.contains(&local);
            if let Err(failure) = found {
                if is_owned && partial.0.failure.is_none() {
                    partial.0.failure = Some(failure);
                }
                continue;
            }
            for (key, _) in &matched {
                store.remove(key);
            }
            if is_owned {
                for (key, old) in &matched {
                    store.journal_event(EventKind::Removed, key, None, Some(old), now_ms);
                }
                // Backed up, and parked journal reads answered, after the share.
                if !matched.is_empty() {
                    crate::engine::wide::touch(share.touched, local);
                }
                for (key, old) in &matched {
                    publish_removed(share, map, partition_id, key, old);
                }
            }
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Swept) -> Result<Reply<'p>, OpError> {
        partial.0.outcome()?;
        Ok(Reply::Empty)
    }
}

/// REMOVED for one entry an owner removed.
fn publish_removed(share: &mut ShareContext<'_>, map: &str, partition_id: u16, key: &[u8], old: &[u8]) {
    if share.listeners.has(map) {
        let event = Event {
            kind: EventKind::Removed,
            partition_id: Some(PartitionId(partition_id)),
            key: Some(key),
            value: None,
            old_value: Some(old),
            affected_entries: 1,
            source: share.member,
        };
        share.listeners.publish(share.outbox, share.member, map, event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::ErrorKind;
    use crate::route::fanout::testing::over_the_hop;

    #[test]
    fn shares_merge_their_coverage_and_first_failure_across_the_member_hop() {
        let mut first = Swept::default();
        first.0.partition_count = 3;
        first.0.covered.extend([0, 1]);
        let mut second = Swept::default();
        second.0.partition_count = 3;
        assert!(first.0.outcome().is_err(), "partition 2 not covered yet: retry");
        second.0.covered.insert(2);
        first.merge(over_the_hop(&second));
        assert!(first.0.outcome().is_ok(), "every partition's owner removed its entries");
        let mut failed = Swept::default();
        failed.0.failure = Some(OpError::new(ErrorKind::Query, "no attribute"));
        first.merge(over_the_hop(&failed));
        assert_eq!(first.0.outcome().unwrap_err().kind, ErrorKind::Query, "a share's failure is the answer");
        let operation = RemoveAll::new(b"");
        assert!(operation.reply(&mut first).is_err());
    }
}
