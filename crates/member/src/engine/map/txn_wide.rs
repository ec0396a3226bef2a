//! A transaction's work over every partition of the maps: its end ([`TxnEnd`]: commit applies
//! every change it staged and releases its key locks; rollback only releases them; on queues,
//! lists and sets their own `end`) and its
//! reads ([`TxnRead`]: size, isEmpty, keySet, values, containsValue, with or without a
//! predicate, counting its own staged changes). Both run on every member's owned partitions:
//! a transaction stages a key's change where the key's owner is.

use crate::engine::listeners::{Event, EventKind, Registry};
use crate::engine::map::query::{Predicate, ShareSchemas};
use crate::engine::map::staged::Change;
use crate::engine::map::store::RecordStore;
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Partial, Partitions, ShareContext, WideOperation};
use crate::partition::objects::kind;
use crate::route::wire;
use ferrogrid_protocol::message::{write_frame, MessageReader, MessageWriter, RESPONSE_HEADER_SIZE};
use ferrogrid_protocol::{DecodeError, Message, PartitionId, Uuid};

/// The end of transaction `txn`: its staged changes applied (`commit`) or dropped, and its
/// key locks released, on every partition this member owns.
#[derive(Debug)]
pub(crate) struct TxnEnd {
    pub(crate) txn: Uuid,
    pub(crate) commit: bool,
    /// Where the coordinator of a logged commit learns that every member applied it (its
    /// reply pushes `txn`; `transaction/backup_log.rs` then purges the holders' logs).
    pub(crate) finished: Option<std::sync::Arc<parking_lot::Mutex<Vec<Uuid>>>>,
}

impl WideOperation for TxnEnd {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    /// On every replica, not only owned ones, for maps and multimaps: a backup that ends the
    /// transaction itself (silently: the owner publishes the events) holds the same outcome
    /// as the owner's records bring it, which then find nothing staged, and a backup promoted
    /// before the end reached its owner (a departed coordinator's holder ending its
    /// transactions while the promotions are being announced) does not keep the staged
    /// change and its lock for ever.
    fn on_share(&self, _: &str, share: &mut ShareContext<'_>, _: &mut ()) {
        for local in 0..share.partitions.len() {
            let owned = share.owned.get(local).copied().unwrap_or(false);
            let partition_id = PartitionId(share.partition_id(local));
            let mut ended = false;
            for (name, store) in share.partitions[local].stores_mut::<kind::Map>() {
                if store.staged.is_empty() {
                    continue;
                }
                for (key, staged) in store.staged.take(self.txn) {
                    ended = true;
                    if self.commit {
                        let event = apply(store, &key, &staged.change, share.now_ms).filter(|_| owned);
                        if let Some((kind, value, old)) = event {
                            let (value, old_value) = (value.as_deref(), old.as_deref());
                            store.journal_event(kind, &key, value, old_value, share.now_ms);
                            let source = share.member;
                            let key = Some(&*key);
                            let partition_id = Some(partition_id);
                            let event =
                                Event { kind, partition_id, key, value, old_value, affected_entries: 1, source };
                            share.listeners.publish(share.outbox, share.member, name, event);
                        }
                    }
                    // Its one hold of the key (a lease that ran out may have taken it).
                    if let Ok(released) = store.locks.unlock(&key, staged.owner) {
                        share.released.extend(released);
                    }
                }
            }
            ended |= self.end_multimaps(share, local, (partition_id, owned));
            ended |= crate::engine::queue::txn::end(share, local, self.txn, self.commit, owned);
            ended |= crate::engine::collection::txn::end(share, local, self.txn, self.commit, owned);
            if ended {
                share.touched.push(local);
            }
        }
    }

    fn reply<'p>(&'p self, _: &'p mut ()) -> Result<Reply<'p>, OpError> {
        if let Some(finished) = &self.finished {
            finished.lock().push(self.txn);
        }
        Ok(Reply::Empty)
    }
}

impl TxnEnd {
    /// The transaction's end on the multimaps of partition `local`: each key it staged gets
    /// the values it staged (commit, with ADDED and REMOVED events if `owned`) and its lock
    /// released. Whether it staged anything there.
    fn end_multimaps(
        &self,
        share: &mut ShareContext<'_>,
        local: usize,
        (partition_id, owned): (PartitionId, bool),
    ) -> bool {
        let mut ended = false;
        for (name, store) in share.partitions[local].stores_mut::<kind::MultiMap>() {
            let keys: Vec<Box<[u8]>> =
                store.staged.iter().filter(|(_, staged)| staged.txn == self.txn).map(|(key, _)| key.clone()).collect();
            for key in keys {
                let Some(staged) = store.unstage(&key) else { continue };
                ended = true;
                if self.commit {
                    let (added, removed) = store.replace_values(&key, staged.values);
                    let added = added.iter().filter(|_| owned).map(|value| (EventKind::Added, Some(&**value), None));
                    let removed =
                        removed.iter().filter(|_| owned).map(|value| (EventKind::Removed, None, Some(&**value)));
                    for (kind, value, old_value) in added.chain(removed) {
                        let (key, partition_id, source) = (Some(&*key), Some(partition_id), share.member);
                        let event = Event { kind, partition_id, key, value, old_value, affected_entries: 1, source };
                        share.listeners.publish_to(Registry::MultiMapEntries, share.outbox, share.member, name, event);
                    }
                }
                if let Ok(released) = store.locks.unlock(&key, staged.owner) {
                    share.released.extend(released);
                }
            }
        }
        ended
    }
}

/// An event's kind, new value and old value.
type Applied = (EventKind, Option<Vec<u8>>, Option<Vec<u8>>);

/// Applies one committed change; the event it publishes, if any.
fn apply(store: &mut RecordStore, key: &[u8], change: &Change, now_ms: i64) -> Option<Applied> {
    match change {
        Change::Locked => None,
        Change::Set { value, ttl_ms } => {
            let old = store.put(key, value, now_ms, *ttl_ms, -1).map(|entry| entry.value().to_vec());
            let kind = if old.is_some() { EventKind::Updated } else { EventKind::Added };
            Some((kind, Some(value.to_vec()), old))
        }
        Change::Removed => {
            let old = store.remove(key)?;
            Some((EventKind::Removed, None, Some(old.value().to_vec())))
        }
    }
}

/// What a transactional read asks.
#[derive(Debug)]
pub(crate) enum TxnView {
    Size,
    IsEmpty,
    /// Keys, of entries that match the predicate if there is one.
    Keys(Option<Box<[u8]>>),
    Values(Option<Box<[u8]>>),
    ContainsValue(Box<[u8]>),
    /// A multimap's size: its values, counting the transaction's staged ones.
    MultiMapSize,
}

/// A read of the map as transaction `txn` sees it: the committed entries with its staged
/// changes applied.
#[derive(Debug)]
pub(crate) struct TxnRead {
    txn: Uuid,
    view: TxnView,
    predicate: Option<Predicate>,
}

impl TxnRead {
    pub(crate) fn new(txn: Uuid, view: TxnView) -> TxnRead {
        let predicate = match &view {
            TxnView::Keys(Some(data)) | TxnView::Values(Some(data)) => Some(Predicate::new(Some(data))),
            _ => None,
        };
        TxnRead { txn, view, predicate }
    }

    /// A multimap's values in the owned partitions, with the transaction's staged keys as it
    /// sees them.
    fn multimap_size(&self, name: &str, share: &ShareContext<'_>, partial: &mut Viewed) {
        for (local, partition) in share.partitions.iter().enumerate() {
            let owned = share.owned.get(local).copied().unwrap_or(false);
            let Some(store) = partition.store::<kind::MultiMap>(name).filter(|_| owned) else { continue };
            let mut count = store.value_count() as u64;
            for (key, staged) in store.staged.iter().filter(|(_, staged)| staged.txn == self.txn) {
                count = count - store.values(key).len() as u64 + staged.values.len() as u64;
            }
            partial.count += count;
        }
    }

    /// The entries of `store` as the transaction sees them.
    fn entries<'s>(&self, store: &'s RecordStore, now_ms: i64) -> Vec<(&'s [u8], &'s [u8])> {
        let txn = self.txn;
        let mut seen: Vec<(&[u8], &[u8])> = store
            .iter(now_ms)
            .filter(|(key, _)| matches!(store.staged.of(txn, key), None | Some(Change::Locked)))
            .map(|(key, entry)| (key, entry.value()))
            .collect();
        for (key, change) in store.staged.changes_of(txn) {
            if let Change::Set { value, .. } = change {
                seen.push((key, value));
            }
        }
        seen
    }
}

/// A transactional read's share: a count, whether a value was found, the listed frames, and
/// the first failure (a predicate that cannot be evaluated).
#[derive(Debug, Default)]
pub(crate) struct Viewed {
    count: u64,
    found: bool,
    frames: Vec<u8>,
    failure: Option<OpError>,
}

impl Partial for Viewed {
    fn merge(&mut self, other: Viewed) {
        self.count += other.count;
        self.found |= other.found;
        self.frames.extend_from_slice(&other.frames);
        if self.failure.is_none() {
            self.failure = other.failure;
        }
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        let code = self.failure.as_ref().map_or(0, |failure| wire::error_code(failure.kind).code);
        writer.fixed(&(self.count.min(i64::MAX as u64) as i64)).fixed(&self.found).fixed(&code);
        writer.frame(self.failure.as_ref().map_or("", |failure| &failure.message).as_bytes());
        writer.begin().append_frames(&self.frames).end();
    }

    fn read_from(message: &Message<'_>) -> Result<Viewed, DecodeError> {
        let mut fixed = message.fixed(RESPONSE_HEADER_SIZE)?;
        let (count, found, code): (i64, bool, i32) = (fixed.read()?, fixed.read()?, fixed.read()?);
        let mut reader: MessageReader<'_> = message.reader();
        let text = reader.string()?.to_owned();
        let frames = crate::engine::wide::list_frames(&mut reader)?.to_vec();
        let failure = (code != 0).then(|| {
            let kinds = crate::engine::map::query::QUERY_FAILURES;
            let class = kinds.iter().map(|kind| wire::error_code(*kind)).find(|named| named.code == code);
            let kind = wire::error_kind(&kinds, code, class.map_or("", |named| named.class_name));
            OpError::new(kind, text)
        });
        Ok(Viewed { count: count.max(0) as u64, found, frames, failure })
    }
}

impl WideOperation for TxnRead {
    type Partial = Viewed;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Viewed {
        Viewed::default()
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Viewed) {
        let filter = match self.predicate.as_ref().map(|p| p.compiled(share.schemas, share.partition_count)) {
            Some(Err(failure)) => {
                partial.failure.get_or_insert_with(|| failure.clone());
                return;
            }
            Some(Ok(compiled)) => Some(&compiled.filter),
            None => None,
        };
        if let TxnView::MultiMapSize = self.view {
            self.multimap_size(map, share, partial);
            return;
        }
        let schemas = ShareSchemas::new(share.schemas);
        for (local, partition) in share.partitions.iter().enumerate() {
            let owned = share.owned.get(local).copied().unwrap_or(false);
            let Some(store) = partition.map(map).filter(|_| owned) else { continue };
            for (key, value) in self.entries(store, share.now_ms) {
                if let Some(filter) = filter {
                    match filter.matches(key, value, &schemas) {
                        Ok(true) => {}
                        Ok(false) => continue,
                        Err(error) => {
                            partial.failure.get_or_insert_with(|| crate::engine::map::query::failure(error));
                            return;
                        }
                    }
                }
                partial.count += 1;
                match &self.view {
                    TxnView::Keys(_) => write_frame(&mut partial.frames, 0, key),
                    TxnView::Values(_) => write_frame(&mut partial.frames, 0, value),
                    TxnView::ContainsValue(wanted) => partial.found |= **wanted == *value,
                    TxnView::Size | TxnView::IsEmpty | TxnView::MultiMapSize => {}
                }
            }
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Viewed) -> Result<Reply<'p>, OpError> {
        if let Some(failure) = partial.failure.take() {
            return Err(failure);
        }
        Ok(match self.view {
            TxnView::Size | TxnView::MultiMapSize => Reply::Int(partial.count.min(i32::MAX as u64) as i32),
            TxnView::IsEmpty => Reply::Bool(partial.count == 0),
            TxnView::ContainsValue(_) => Reply::Bool(partial.found),
            TxnView::Keys(_) | TxnView::Values(_) => Reply::FramedList(&partial.frames),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::ErrorKind;
    use crate::route::fanout::testing::over_the_hop;

    #[test]
    fn a_read_s_shares_merge_and_cross_the_member_hop() {
        let mut first = Viewed { count: 2, found: false, ..Viewed::default() };
        write_frame(&mut first.frames, 0, b"a");
        write_frame(&mut first.frames, 0, b"b");
        let mut second = Viewed { count: 1, found: true, ..Viewed::default() };
        write_frame(&mut second.frames, 0, b"c");
        first.merge(over_the_hop(&second));
        let merged = over_the_hop(&first);
        assert_eq!((merged.count, merged.found, merged.failure), (3, true, None));
        assert_eq!(merged.frames, first.frames);
        let failed = Viewed { failure: Some(OpError::new(ErrorKind::Query, "no such attribute")), ..Viewed::default() };
        let mut empty = Viewed::default();
        empty.merge(over_the_hop(&failed));
        assert_eq!(
            empty.failure,
            Some(OpError::new(ErrorKind::Query, "no such attribute")),
            "a failure's kind and text"
        );
        let read = TxnRead::new(Uuid::default(), TxnView::Size);
        assert!(read.reply(&mut empty).is_err(), "the first failure is the answer");
    }
}
