//! The map engine: partition-bound map operations on typed requests, run by whoever owns the
//! partition. No wire format in here: a front end decodes the request ([`MapRequest`]) and
//! encodes the [`Reply`] this module hands to its [`Replies`] sink, or the [`OpError`].
//!
//! Semantics follow Hazelcast 5.6 (return values, what counts as present, errors for null keys
//! or values). Along the way an operation expires the key it touches if due, publishes entry
//! events, evicts to the map's bound after an insert, and respects key locks: a lock-aware
//! request on a key another owner has locked answers [`Done::Park`], and the caller parks it
//! ([`park`]) to be re-run when the lock is released; so does a read of a key another client's
//! TWO_PHASE transaction holds (`staged.rs`), as Hazelcast's reads wait for such a lock.

use crate::clock::NEVER;
use crate::engine::listeners::{Event, EventKind, Listeners};
use crate::engine::locks::{KeyDeadline, LockOwner, Parked, Waiting};
use crate::engine::map::request::{MapOp, MapRequest, PutAnswer, RemoveAnswer};
use crate::engine::map::store::{Entry, RecordStore};
use crate::engine::request::{ErrorKind, OpError, Replies, Reply};
use crate::engine::settings::SettingsCache;
use crate::net::outbox::Outbox;
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::codec::EntryView;
use ferrogrid_protocol::{Data, PartitionId, Uuid};

/// What an operation needs besides its partition: owned by the reactor, lent per operation.
#[derive(Debug)]
pub struct OpContext<'a> {
    pub now_ms: i64,
    pub member: Uuid,
    /// The client whose request this is (the source of its events, the owner of its locks).
    pub source: Uuid,
    pub partition_id: PartitionId,
    /// The operation's per-map counter (its row in the operation table).
    pub counter_slot: usize,
    pub settings: &'a mut SettingsCache,
    pub listeners: &'a mut Listeners,
    /// Events for listening connections.
    pub outbox: &'a mut Outbox,
    /// Parked requests this operation released; the reactor re-runs them next.
    pub released: &'a mut Vec<Parked>,
    /// (deadline, map, key) of locks and waits that need the reactor's timer.
    pub deadlines: &'a mut Vec<KeyDeadline>,
}

impl OpContext<'_> {
    fn publish(&mut self, map: &str, kind: EventKind, key: &[u8], value: Option<&[u8]>, old_value: Option<&[u8]>) {
        if self.listeners.has(map) {
            let (partition_id, source) = (self.partition_id, self.source);
            let event = Event {
                kind,
                partition_id: Some(partition_id),
                key: Some(key),
                value,
                old_value,
                affected_entries: 1,
                source,
            };
            self.listeners.publish(self.outbox, self.member, map, event);
        }
    }
}

/// What became of a request that did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    Answered,
    /// Another owner holds the key's lock: park the request ([`park`]) for `wait_ms` (< 0:
    /// until released); it is answered when re-run, or `false` when the wait is over.
    Park {
        wait_ms: i64,
    },
}

pub(crate) fn null_check(bytes: &[u8], what: &str) -> Result<(), OpError> {
    match Data(bytes).type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(OpError::new(ErrorKind::NullArgument, format!("Null {what} is not allowed!"))),
    }
}

/// Runs a partition-bound map request against `partition`; the answer goes to `reply`
/// (nothing is answered when it fails or parks).
pub fn execute(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    request: &MapRequest<'_>,
    reply: &mut impl Replies,
) -> Result<Done, OpError> {
    let name = &*request.name;
    match &request.op {
        MapOp::Get { key } => {
            let op = KeyOp::new(partition, ctx, name, key)?;
            if op.store.staged.blocks_read(key, op.ctx.source, &op.store.locks) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            op.store.touch(key, op.ctx.now_ms);
            reply.reply(Reply::Value(op.current(key)));
            Ok(Done::Answered)
        }
        MapOp::ContainsKey { key } => {
            let op = KeyOp::new(partition, ctx, name, key)?;
            if op.store.staged.blocks_read(key, op.ctx.source, &op.store.locks) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            // containsKey counts as an access (it keeps a max-idle entry alive), as in Hazelcast.
            op.store.touch(key, op.ctx.now_ms);
            reply.reply(Reply::Bool(op.current(key).is_some()));
            Ok(Done::Answered)
        }
        MapOp::GetEntryView { key } => {
            let op = KeyOp::new(partition, ctx, name, key)?;
            if op.store.staged.blocks_read(key, op.ctx.source, &op.store.locks) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            entry_view(&op, key, reply)
        }
        MapOp::GetAll { keys } => get_all(partition, ctx, name, keys, reply),
        MapOp::PutAll { entries } => put_all(partition, ctx, name, entries, reply),
        op @ (MapOp::Lock { .. } | MapOp::Unlock { .. } | MapOp::IsLocked { .. }) => {
            lock_op(partition, ctx, name, op, reply)
        }
        MapOp::Txn { .. } => {
            // The map's handler runs a transaction's request by `txn.rs`.
            Err(OpError::new(ErrorKind::Unsupported, "a transactional request outside its handler"))
        }
        op => write_op(partition, ctx, name, op, reply),
    }
}

/// Parks a request [`execute`] answered [`Done::Park`] for on its key's lock queue.
pub fn park(partition: &mut PartitionStore, ctx: &mut OpContext<'_>, parked: Parked) -> Result<(), OpError> {
    let Waiting::Map(request) = &parked.request else { unreachable!("a map request parks on a map") };
    let key: Box<[u8]> = request.key().expect("only single-key requests park").into();
    let name: Box<str> = (*request.name).into();
    let deadline_ms = parked.deadline_ms;
    let settings = &mut *ctx.settings;
    let store = partition.map_mut(&name, || settings.get(&name));
    let max_parked = settings.max_parked_per_key();
    if !store.locks.park(&key, parked, max_parked) {
        let text = "too many operations are waiting for this key's lock";
        return Err(OpError::new(ErrorKind::Refused, text));
    }
    if deadline_ms != NEVER {
        ctx.deadlines.push((deadline_ms, name, key));
    }
    Ok(())
}

/// Answers a parked request whose wait timed out: the try-operations say `false`.
pub fn answer_timed_out(reply: &mut impl Replies) {
    reply.reply(Reply::Bool(false));
}

/// One request's view of its map and key, with the helpers every operation shares.
struct KeyOp<'p, 'c, 'x> {
    store: &'p mut RecordStore,
    ctx: &'c mut OpContext<'x>,
    name: &'p str,
}

impl<'p, 'c, 'x> KeyOp<'p, 'c, 'x> {
    fn new(
        partition: &'p mut PartitionStore,
        ctx: &'c mut OpContext<'x>,
        name: &'p str,
        key: &[u8],
    ) -> Result<Self, OpError> {
        null_check(key, "key")?;
        let settings = &mut *ctx.settings;
        let store = partition.map_mut(name, || settings.get(name));
        store.op_counts[ctx.counter_slot] += 1;
        let op = KeyOp { store, ctx, name };
        if let Some(expired) = op.store.expire_if_due(key, op.ctx.now_ms) {
            op.store.journal_event(EventKind::Expired, key, None, Some(expired.value()), op.ctx.now_ms);
            op.ctx.publish(name, EventKind::Expired, key, None, Some(expired.value()));
        }
        Ok(op)
    }

    fn current(&self, key: &[u8]) -> Option<&[u8]> {
        self.store.get(key, self.ctx.now_ms).map(Entry::value)
    }

    /// Whether another owner than (this client, `thread_id`) holds the key's lock.
    fn locked_by_other(&self, key: &[u8], thread_id: i64) -> bool {
        !self.store.locks.may_write(key, LockOwner { client: self.ctx.source, thread_id })
    }

    /// Stores the value, publishes ADDED/UPDATED, and evicts to the map's bound; with `blind`
    /// (putAll, which does not read old values) the event is always ADDED without an old
    /// value, as Hazelcast publishes it. Returns the previous entry.
    fn write(&mut self, key: &[u8], value: &[u8], (ttl_ms, max_idle_ms): (i64, i64), blind: bool) -> Option<Entry> {
        let previous = self.store.put(key, value, self.ctx.now_ms, ttl_ms, max_idle_ms);
        let now_ms = self.ctx.now_ms;
        match &previous {
            Some(old) => {
                // The journal has the old value even where the event has none (putAll).
                self.store.journal_event(EventKind::Updated, key, Some(value), Some(old.value()), now_ms);
                let (kind, published_old) =
                    if blind { (EventKind::Added, None) } else { (EventKind::Updated, Some(old.value())) };
                self.ctx.publish(self.name, kind, key, Some(value), published_old);
            }
            None => {
                self.store.journal_event(EventKind::Added, key, Some(value), None, now_ms);
                self.ctx.publish(self.name, EventKind::Added, key, Some(value), None);
                for evicted in self.store.evict_to_limit(key) {
                    self.store.journal_event(EventKind::Evicted, evicted.key(), None, Some(evicted.value()), now_ms);
                    self.ctx.publish(self.name, EventKind::Evicted, evicted.key(), None, Some(evicted.value()));
                }
            }
        }
        previous
    }

    /// Removes the entry, publishing `kind` (REMOVED or EVICTED) with the old value unless
    /// `without_old` (Hazelcast's delete does not read it); returns the old entry.
    fn take(&mut self, key: &[u8], kind: EventKind, without_old: bool) -> Option<Entry> {
        let old = self.store.remove(key)?;
        self.store.journal_event(kind, key, None, Some(old.value()), self.ctx.now_ms);
        let published_old = if without_old { None } else { Some(old.value()) };
        self.ctx.publish(self.name, kind, key, None, published_old);
        Some(old)
    }
}

/// Writes that wait for another owner's key lock (put-likes, removals, replace, evict, setTtl).
fn write_op(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    name: &str,
    op: &MapOp<'_>,
    reply: &mut impl Replies,
) -> Result<Done, OpError> {
    let key = op.key().expect("single-key writes");
    let mut keyed = KeyOp::new(partition, ctx, name, key)?;
    match op {
        MapOp::Put { value, thread_id, ttl_ms, max_idle_ms, answer, .. } => {
            null_check(value, "value")?;
            if keyed.locked_by_other(key, *thread_id) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            let previous = keyed.write(key, value, (*ttl_ms, *max_idle_ms), false);
            reply.reply(match answer {
                PutAnswer::Previous => Reply::Value(previous.as_ref().map(Entry::value)),
                PutAnswer::Empty => Reply::Empty,
                PutAnswer::Null => Reply::Value(None),
            });
        }
        MapOp::PutIfAbsent { value, thread_id, ttl_ms, max_idle_ms, .. } => {
            null_check(value, "value")?;
            if keyed.locked_by_other(key, *thread_id) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            match keyed.current(key) {
                Some(existing) => reply.reply(Reply::Value(Some(existing))),
                None => {
                    keyed.write(key, value, (*ttl_ms, *max_idle_ms), false);
                    reply.reply(Reply::Value(None));
                }
            }
        }
        MapOp::TryPut { value, thread_id, timeout_ms, .. } => {
            null_check(value, "value")?;
            if keyed.locked_by_other(key, *thread_id) {
                return try_wait(*timeout_ms, reply);
            }
            keyed.write(key, value, (-1, -1), false);
            reply.reply(Reply::Bool(true));
        }
        MapOp::SetTtl { ttl_ms, .. } => {
            // SetTtl carries no thread id: any lock holder blocks it until released.
            if keyed.store.locks.is_locked(key) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            let found = keyed.store.set_ttl(key, *ttl_ms, keyed.ctx.now_ms);
            reply.reply(Reply::Bool(found));
        }
        _ => return removal_op(keyed, key, op, reply),
    }
    Ok(Done::Answered)
}

/// A try-operation blocked by another owner's lock: wait up to `timeout_ms`, or answer false
/// at once when it is not positive.
fn try_wait(timeout_ms: i64, reply: &mut impl Replies) -> Result<Done, OpError> {
    if timeout_ms > 0 {
        return Ok(Done::Park { wait_ms: timeout_ms });
    }
    reply.reply(Reply::Bool(false));
    Ok(Done::Answered)
}

/// remove, delete, tryRemove, remove(key, value), replace, replace(key, old, new), evict.
fn removal_op(
    mut keyed: KeyOp<'_, '_, '_>,
    key: &[u8],
    op: &MapOp<'_>,
    reply: &mut impl Replies,
) -> Result<Done, OpError> {
    match op {
        MapOp::Remove { thread_id, answer, .. } => {
            if keyed.locked_by_other(key, *thread_id) {
                return match answer {
                    RemoveAnswer::Try { timeout_ms } => try_wait(*timeout_ms, reply),
                    _ => Ok(Done::Park { wait_ms: -1 }),
                };
            }
            let old = keyed.take(key, EventKind::Removed, *answer == RemoveAnswer::Deleted);
            reply.reply(match answer {
                RemoveAnswer::Previous => Reply::Value(old.as_ref().map(Entry::value)),
                RemoveAnswer::Deleted => Reply::Deleted(old.is_some()),
                RemoveAnswer::Try { .. } => Reply::Bool(old.is_some()),
            });
        }
        MapOp::RemoveIfSame { value, thread_id, .. } => {
            null_check(value, "value")?;
            if keyed.locked_by_other(key, *thread_id) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            let same = keyed.current(key) == Some(&**value);
            if same {
                keyed.take(key, EventKind::Removed, false);
            }
            reply.reply(Reply::Bool(same));
        }
        MapOp::Replace { expected, value, thread_id, .. } => {
            null_check(value, "value")?;
            if let Some(expected) = expected {
                null_check(expected, "value")?;
            }
            if keyed.locked_by_other(key, *thread_id) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            let matches = match keyed.current(key) {
                None => false,
                Some(present) => expected.as_ref().is_none_or(|expected| **expected == *present),
            };
            let previous = if matches { keyed.write(key, value, (-1, -1), false) } else { None };
            reply.reply(match expected {
                None => Reply::Value(previous.as_ref().map(Entry::value)),
                Some(_) => Reply::Bool(previous.is_some()),
            });
        }
        MapOp::Evict { thread_id, .. } => {
            // Evict waits for another owner's lock, as Hazelcast's does.
            if keyed.locked_by_other(key, *thread_id) {
                return Ok(Done::Park { wait_ms: -1 });
            }
            let evicted = keyed.take(key, EventKind::Evicted, false).is_some();
            reply.reply(Reply::Bool(evicted));
        }
        other => unreachable!("{other:?} is not a removal"),
    }
    Ok(Done::Answered)
}

/// lock, tryLock, unlock, forceUnlock, isLocked.
fn lock_op(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    name: &str,
    op: &MapOp<'_>,
    reply: &mut impl Replies,
) -> Result<Done, OpError> {
    let key = op.key().expect("lock operations name a key");
    let keyed = KeyOp::new(partition, ctx, name, key)?;
    let now_ms = keyed.ctx.now_ms;
    keyed.ctx.released.extend(keyed.store.locks.expire_lease(key, now_ms));
    match op {
        MapOp::Lock { thread_id, lease_ms, try_timeout_ms, .. } => {
            let owner = LockOwner { client: keyed.ctx.source, thread_id: *thread_id };
            if !keyed.store.locks.acquire(key, owner, *lease_ms, now_ms) {
                return match try_timeout_ms {
                    Some(0) => {
                        reply.reply(Reply::Bool(false));
                        Ok(Done::Answered)
                    }
                    Some(timeout_ms) => Ok(Done::Park { wait_ms: *timeout_ms }),
                    None => Ok(Done::Park { wait_ms: -1 }),
                };
            }
            if let Some(deadline) = keyed.store.locks.lease_deadline(key) {
                keyed.ctx.deadlines.push((deadline, name.into(), key.into()));
            }
            reply.reply(if try_timeout_ms.is_some() { Reply::Bool(true) } else { Reply::Empty });
        }
        MapOp::Unlock { thread_id, .. } => {
            let released = match thread_id {
                None => keyed.store.locks.release(key),
                Some(thread_id) => {
                    let owner = LockOwner { client: keyed.ctx.source, thread_id: *thread_id };
                    keyed.store.locks.unlock(key, owner).map_err(|_| {
                        let text = format!(
                            "Current thread is not owner of the lock! -> <not locked by {}:{thread_id}>",
                            owner.client
                        );
                        OpError::new(ErrorKind::NotLockOwner, text)
                    })?
                }
            };
            keyed.ctx.released.extend(released);
            reply.reply(Reply::Empty);
        }
        MapOp::IsLocked { .. } => reply.reply(Reply::Bool(keyed.store.locks.is_locked(key))),
        other => unreachable!("{other:?} is not a lock operation"),
    }
    Ok(Done::Answered)
}

fn entry_view(op: &KeyOp<'_, '_, '_>, key: &[u8], reply: &mut impl Replies) -> Result<Done, OpError> {
    let Some(entry) = op.store.get(key, op.ctx.now_ms) else {
        reply.reply(Reply::EntryView(None));
        return Ok(Done::Answered);
    };
    let record = entry.meta();
    // Hazelcast keeps entry times in whole seconds. With per-entry statistics off (its default)
    // it reports −1 for creation/access/stored times and hits, and the update time only for
    // an entry that expires (expiration = update time + ttl).
    let seconds = |ms: i64| ms - ms.rem_euclid(1000);
    let stats = op.store.settings.per_entry_stats;
    let expires = record.expiration_time_ms() != NEVER;
    let last_update = if stats || expires { seconds(record.last_update_time_ms) } else { -1 };
    let expiration_time = if record.ttl_ms == NEVER && record.max_idle_ms == NEVER {
        NEVER
    } else {
        let by_ttl =
            if record.ttl_ms == NEVER { NEVER } else { seconds(record.ttl_base_ms).saturating_add(record.ttl_ms) };
        let by_idle = if record.max_idle_ms == NEVER {
            NEVER
        } else {
            seconds(record.last_access_time_ms).saturating_add(record.max_idle_ms)
        };
        by_ttl.min(by_idle)
    };
    let statistic = |value: i64| if stats { value } else { -1 };
    reply.reply(Reply::EntryView(Some(EntryView {
        key: Data(key),
        value: Data(entry.value()),
        cost: estimated_cost(key.len(), entry.value().len()),
        creation_time: statistic(seconds(record.creation_time_ms)),
        expiration_time,
        hits: statistic(record.hits),
        last_access_time: statistic(seconds(record.last_access_time_ms)),
        last_stored_time: -1,
        last_update_time: last_update,
        version: record.version,
        ttl: record.ttl_ms,
        max_idle: record.max_idle_ms,
    })));
    Ok(Done::Answered)
}

/// Hazelcast's heap-cost estimate of an entry: both blobs plus a fixed record overhead
/// (66 for a 14-byte key and a 14-byte value on a 5.6 member).
fn estimated_cost(key_bytes: usize, value_bytes: usize) -> i64 {
    (key_bytes + value_bytes + 38) as i64
}

fn get_all(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    name: &str,
    keys: &[crate::engine::request::Blob<'_>],
    reply: &mut impl Replies,
) -> Result<Done, OpError> {
    let mut found = Vec::with_capacity(keys.len());
    for key in keys {
        let op = KeyOp::new(partition, ctx, name, key)?;
        op.store.touch(key, op.ctx.now_ms);
        if let Some(value) = op.current(key) {
            found.push((&**key, value.to_vec()));
        }
    }
    reply.reply(Reply::Entries(found.iter().map(|(key, value)| (*key, &value[..])).collect()));
    Ok(Done::Answered)
}

fn put_all(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    name: &str,
    entries: &[(crate::engine::request::Blob<'_>, crate::engine::request::Blob<'_>)],
    reply: &mut impl Replies,
) -> Result<Done, OpError> {
    for (key, value) in entries {
        null_check(key, "key")?;
        null_check(value, "value")?;
    }
    for (key, value) in entries {
        KeyOp::new(partition, ctx, name, key)?.write(key, value, (-1, -1), true);
    }
    reply.reply(Reply::Empty);
    Ok(Done::Answered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::string_data as data;
    use crate::engine::request::WaiterId;
    use std::borrow::Cow;
    use std::sync::Arc;

    const ALICE: Uuid = Uuid { most: 1, least: 1 };
    const BOB: Uuid = Uuid { most: 2, least: 2 };
    const THREAD: i64 = 1;

    /// What an operation answered, as text.
    #[derive(Debug, Default)]
    struct Answers(Vec<String>);

    impl Replies for Answers {
        fn reply(&mut self, reply: Reply<'_>) {
            self.0.push(format!("{reply:?}"));
        }
    }

    /// One partition and what its operations borrow from a reactor, with no reactor or socket.
    struct Harness {
        partition: PartitionStore,
        settings: SettingsCache,
        listeners: Listeners,
        outbox: Outbox,
        released: Vec<Parked>,
        deadlines: Vec<KeyDeadline>,
    }

    impl Harness {
        fn new() -> Harness {
            Harness {
                partition: PartitionStore::default(),
                settings: SettingsCache::new(Arc::new(ferrogrid_config::MemberConfig::default()), 271),
                listeners: Listeners::default(),
                outbox: Outbox::default(),
                released: Vec::new(),
                deadlines: Vec::new(),
            }
        }

        /// Runs `op` on map "m" for `source`: what it did and what it answered. A request that
        /// parks does so as `id`.
        fn run(&mut self, source: Uuid, op: MapOp<'_>, id: u64) -> (Done, String) {
            let mut ctx = OpContext {
                now_ms: 0,
                member: Uuid::default(),
                source,
                partition_id: PartitionId(0),
                counter_slot: 0,
                settings: &mut self.settings,
                listeners: &mut self.listeners,
                outbox: &mut self.outbox,
                released: &mut self.released,
                deadlines: &mut self.deadlines,
            };
            let request = MapRequest { name: Cow::Borrowed("m"), op };
            let mut answers = Answers::default();
            let done = execute(&mut self.partition, &mut ctx, &request, &mut answers).unwrap();
            if let Done::Park { wait_ms } = done {
                let parked = Parked {
                    id: WaiterId(id),
                    source,
                    counter_slot: 0,
                    partition_id: PartitionId(0),
                    request: Waiting::Map(request.into_owned()),
                    deadline_ms: crate::clock::deadline_after(0, wait_ms),
                };
                park(&mut self.partition, &mut ctx, parked).unwrap();
            }
            (done, answers.0.join(", "))
        }
    }

    fn put<'a>(key: &'a [u8], value: &'a [u8]) -> MapOp<'a> {
        let (key, value) = (Cow::Borrowed(key), Cow::Borrowed(value));
        MapOp::Put { key, value, thread_id: THREAD, ttl_ms: -1, max_idle_ms: -1, answer: PutAnswer::Previous }
    }

    fn get(key: &[u8]) -> MapOp<'_> {
        MapOp::Get { key: Cow::Borrowed(key) }
    }

    #[test]
    fn put_get_remove() {
        let mut harness = Harness::new();
        let (key, one, two) = (data("k"), data("one"), data("two"));
        assert_eq!(harness.run(ALICE, put(&key, &one), 0), (Done::Answered, "Value(None)".into()));
        assert_eq!(harness.run(ALICE, get(&key), 0).1, format!("Value(Some({one:?}))"));
        assert_eq!(harness.run(BOB, put(&key, &two), 0).1, format!("Value(Some({one:?}))"), "the previous value");
        let remove = MapOp::Remove { key: Cow::Borrowed(&key), thread_id: THREAD, answer: RemoveAnswer::Previous };
        assert_eq!(harness.run(ALICE, remove, 0).1, format!("Value(Some({two:?}))"));
        assert_eq!(harness.run(ALICE, get(&key), 0).1, "Value(None)");
        assert_eq!(harness.partition.map("m").map(RecordStore::len), Some(0));
    }

    #[test]
    fn a_put_parks_on_a_lock_and_its_unlock_releases_the_id() {
        let mut harness = Harness::new();
        let (key, value) = (data("k"), data("v"));
        let lock = MapOp::Lock { key: Cow::Borrowed(&key), thread_id: THREAD, lease_ms: -1, try_timeout_ms: None };
        assert_eq!(harness.run(ALICE, lock, 0), (Done::Answered, "Empty".into()));
        assert_eq!(harness.run(BOB, put(&key, &value), 7), (Done::Park { wait_ms: -1 }, String::new()));
        assert!(harness.deadlines.is_empty(), "it waits until released");
        assert_eq!(harness.run(BOB, get(&key), 0).1, "Value(None)", "reads do not wait; the put has not run");
        assert!(harness.released.is_empty());
        let unlock = MapOp::Unlock { key: Cow::Borrowed(&key), thread_id: Some(THREAD) };
        assert_eq!(harness.run(ALICE, unlock, 0).1, "Empty");
        let released = std::mem::take(&mut harness.released);
        assert_eq!(released.iter().map(|parked| parked.id).collect::<Vec<_>>(), [WaiterId(7)]);
        // The owner re-runs the released request and answers id 7 with what it says.
        let Waiting::Map(request) = &released[0].request else { panic!("a map request") };
        assert_eq!(harness.run(released[0].source, request.op.clone(), 8), (Done::Answered, "Value(None)".into()));
        assert_eq!(harness.run(ALICE, get(&key), 0).1, format!("Value(Some({value:?}))"));
    }
}
