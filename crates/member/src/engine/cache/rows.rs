//! JCache's rows of the operation table, each with its decoder or classifier: key requests in
//! the partition of the key (putAll: of its entries), the rest over every member (`wide.rs`).

use crate::engine::cache::configs::not_exists;
use crate::engine::cache::configs::CacheDef;
use crate::engine::cache::expiry;
use crate::engine::cache::journal::CacheJournalRequest;
use crate::engine::cache::ops::{self, Answer, Context};
use crate::engine::cache::request::{CacheOp as Op, CacheRequest};
use crate::engine::cache::wide::{CreateConfig, Destroy, GetConfig, OverPartitions, Work};
use crate::engine::listeners::caches::{CacheChange, CacheEventKind};
use crate::engine::listeners::{Listener, Registry};
use crate::engine::map::journal::JournalOp;
use crate::engine::map::near_cache::FetchMetadata;
use crate::engine::request::{OpError, Replies, Reply};
use crate::engine::structures::ObjectKind;
use crate::engine::wide::objects::{add_listener, answered, listener, remove_listener, Answer as Fixed};
use crate::engine::wide::{Classified, WideRequest};
use crate::partition::objects::kind;
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::row::{row, wide_row, Flags, Operation, A, S, W};
use crate::route::wire::{self, blob};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::Data;
use std::borrow::Cow;
use std::sync::Arc;

pub(crate) static ROWS: &[Operation] = &[
    row!(CacheGet, Partition, S, |r| cache(r.name, Op::Get { key: blob(r.key) }, -1, r.expiry_policy)),
    row!(CacheContainsKey, Partition, S, |r| cache(r.name, Op::ContainsKey { key: blob(r.key) }, -1, None)),
    row!(CachePut, Partition, W.with(A).with(S), |r| {
        let op = Op::Put { key: blob(r.key), value: blob(r.value), answer_old: r.get };
        cache(r.name, op, r.completion_id, r.expiry_policy)
    }),
    row!(CachePutIfAbsent, Partition, W.with(A).with(S), |r| {
        let op = Op::PutIfAbsent { key: blob(r.key), value: blob(r.value) };
        cache(r.name, op, r.completion_id, r.expiry_policy)
    }),
    row!(CacheReplace, Partition, W.with(A).with(S), |r| {
        let op =
            Op::Replace { key: blob(r.key), old: r.old_value.map(blob), value: blob(r.new_value), answer_old: false };
        cache(r.name, op, r.completion_id, r.expiry_policy)
    }),
    row!(CacheGetAndReplace, Partition, W.with(A).with(S), |r| {
        let op = Op::Replace { key: blob(r.key), old: None, value: blob(r.value), answer_old: true };
        cache(r.name, op, r.completion_id, r.expiry_policy)
    }),
    row!(CacheGetAndRemove, Partition, W.with(S), |r| {
        let op = Op::Remove { key: blob(r.key), current: None, answer_old: true };
        cache(r.name, op, r.completion_id, None)
    }),
    row!(CacheRemove, Partition, W.with(S), |r| {
        let op = Op::Remove { key: blob(r.key), current: r.current_value.map(blob), answer_old: false };
        cache(r.name, op, r.completion_id, None)
    }),
    row!(CachePutAll, Partition, W.with(A).with(S), |r| {
        let entries = r.entries.into_iter().map(|(key, value)| (blob(key), blob(value))).collect();
        cache(r.name, Op::PutAll { entries }, r.completion_id, r.expiry_policy)
    }),
    row!(CacheEntryProcessor, Partition, W.with(S), |r| {
        cache(r.name, Op::EntryProcessor { processor: blob(r.entry_processor) }, r.completion_id, None)
    }),
    row!(CacheIterate, Partition, S, |r| {
        let index = r.iteration_pointers.0.last().map(|pointer| pointer.0);
        cache(r.name, Op::Iterate { index, batch: r.batch, entries: false }, -1, None)
    }),
    row!(CacheIterateEntries, Partition, S, |r| {
        let index = r.iteration_pointers.0.last().map(|pointer| pointer.0);
        cache(r.name, Op::Iterate { index, batch: r.batch, entries: true }, -1, None)
    }),
    // The client sends each partition's keys to the partition.
    row!(CacheSetExpiryPolicy, Partition, W.with(S), |r| {
        let keys = r.keys.into_iter().map(blob).collect();
        cache(r.name, Op::SetExpiryPolicy { keys }, -1, Some(r.expiry_policy))
    }),
    // The event journal of the partition the client names (journal.rs).
    row!(CacheEventJournalSubscribe, Partition, S, |r| journal(r.name, JournalOp::Subscribe)),
    row!(CacheEventJournalRead, Partition, S, |r| {
        let read = (r.start_sequence, r.min_size, r.max_size);
        journal(r.name, crate::engine::map::journal::read_op(read, r.predicate, r.projection))
    }),
    wide_row!(CacheSize, S, |message, _| over(CacheSize::decode(message)?.name, Work::Size)),
    wide_row!(CacheClear, W.with(S), |message, _| over(CacheClear::decode(message)?.name, Work::Clear)),
    wide_row!(CacheRemoveAll, W.with(S), |message, _| {
        let r = CacheRemoveAll::decode(message)?;
        over(r.name, Work::RemoveAll { keys: None, completion_id: r.completion_id })
    }),
    wide_row!(CacheRemoveAllKeys, W.with(S), |message, _| {
        let r = CacheRemoveAllKeys::decode(message)?;
        let keys = Some(r.keys.into_iter().map(|key| key.0.into()).collect());
        over(r.name, Work::RemoveAll { keys, completion_id: r.completion_id })
    }),
    wide_row!(CacheGetAll, S, |message, _| {
        let r = CacheGetAll::decode(message)?;
        let policy = match expiry::from_operation(r.expiry_policy.map(|data| data.0)) {
            Ok(policy) => policy,
            Err(refusal) => return Ok(Classified::Refused(refusal)),
        };
        over(r.name, Work::GetAll { keys: r.keys.into_iter().map(|key| key.0.into()).collect(), policy })
    }),
    // The name is inside the configuration (no tenant namespace scopes a cache).
    wide_row!(CacheCreateConfig, W, |message, _| match CacheDef::from_request(message.bytes()) {
        Ok(def) => {
            let name = def.name.clone();
            Classified::wide(CreateConfig(Arc::new(def)), &name)
        }
        Err(refusal) => Ok(Classified::Refused(refusal)),
    }),
    wide_row!(CacheGetConfig, S, |message, _| Classified::named(GetConfig, message)),
    wide_row!(CacheDestroy, W.with(S), |message, _| Classified::named(Destroy, message)),
    wide_row!(CacheAddEntryListener, S, |message, connection| {
        let r = CacheAddEntryListener::decode(message)?;
        let listener = Listener { local_only: r.local_only, ..listener(message, connection) };
        add_listener(Registry::CacheEntries, r.name, listener)
    }),
    wide_row!(CacheRemoveEntryListener, S, |message, _| {
        let r = CacheRemoveEntryListener::decode(message)?;
        remove_listener(Registry::CacheEntries, r.name, r.registration_id)
    }),
    // Near caches: invalidation listeners among the cache's registrations
    // (`listeners/caches.rs`), and the map's repairing metadata under the cache's name.
    wide_row!(CacheAddNearCacheInvalidationListener, S, |message, connection| {
        let r = CacheAddNearCacheInvalidationListener::decode(message)?;
        let listener = Listener { local_only: r.local_only, invalidation: true, ..listener(message, connection) };
        add_listener(Registry::CacheEntries, r.name, listener)
    }),
    wide_row!(CacheRemoveInvalidationListener, S, |message, _| {
        let r = CacheRemoveInvalidationListener::decode(message)?;
        remove_listener(Registry::CacheEntries, r.name, r.registration_id)
    }),
    wide_row!(CacheFetchNearCacheInvalidationMetadata, Flags::TARGETED, |message, _| {
        let r = CacheFetchNearCacheInvalidationMetadata::decode(message)?;
        let Some(member) = r.uuid else { return Classified::null("uuid cannot be null") };
        Classified::wide(FetchMetadata::new(&r.names, member), r.names.first().copied().unwrap_or_default())
    }),
    // A listener's configuration (Java code) the client registers itself, and statistics or
    // management switches: accepted, nothing to keep. loadAll: nothing to load without a
    // loader; with one (Java code), the failure a member without its class answers.
    wide_row!(CacheLoadAll, S, |message, _| over(CacheLoadAll::decode(message)?.name, Work::LoadAll)),
    wide_row!(CacheListenerRegistration, S, |message, _| answered(
        Fixed::Nothing,
        CacheListenerRegistration::decode(message)?.name
    )),
    wide_row!(CacheManagementConfig, S, |message, _| answered(
        Fixed::Nothing,
        CacheManagementConfig::decode(message)?.name
    )),
];

/// A key request on the cache `name`.
fn cache<'a>(name: &'a str, op: Op<'a>, completion_id: i32, expiry: Option<Data<'a>>) -> CacheRequest<'a> {
    CacheRequest { name: Cow::Borrowed(name), op, completion_id, expiry: expiry.map(blob) }
}

fn journal(name: &str, op: JournalOp) -> CacheJournalRequest<'_> {
    CacheJournalRequest { name: Cow::Borrowed(name), op }
}

fn over(name: &str, work: Work) -> Result<Classified, ferrogrid_protocol::DecodeError> {
    Classified::wide(OverPartitions { name: name.into(), work }, name)
}

/// A JCache key request: refused if the cache does not exist; else run, answered, its events
/// sent (or one COMPLETED for a completion id that made none) and its changes backed up.
impl Execute for CacheRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        let name = &*self.name;
        let outcome = run(self, owner, call);
        let made = match outcome {
            Ok((answer, made)) => {
                reply(call.replies(out), answer);
                made
            }
            Err(failure) => {
                wire::replace_with_error(out, start, call.correlation_id, &failure);
                Vec::new()
            }
        };
        let mut changes: Vec<CacheChange<'_>> = made.iter().map(ops::Made::change).collect();
        if changes.is_empty() && self.completion_id != -1 && owner.listeners.has_cache_listeners(name) {
            let key = self.op.key().unwrap_or(&[]);
            changes.push(CacheChange { kind: CacheEventKind::Completed, key, value: None, old_value: None });
        }
        for change in changes {
            let to = (owner.member, name, call.partition_id);
            owner.listeners.publish_cache(&mut owner.outbox, to, change, self.completion_id);
        }
        let mut others = Vec::new();
        owner.partitions[call.local].serve_journal_of(ObjectKind::Cache, name, &mut others);
        owner.replicate(call.partition_id, call, out, start, others);
        owner.after_key_request(call.partition_id, ObjectKind::Cache);
    }
}

fn run(
    request: &CacheRequest<'_>,
    owner: &mut PartitionOwner,
    call: &Call<'_>,
) -> Result<(Answer, Vec<ops::Made>), OpError> {
    let name = &*request.name;
    let def = owner.settings.dynamic.caches.get(name).ok_or_else(|| not_exists(name))?;
    let operation_policy = expiry::from_operation(request.expiry.as_deref())?;
    let events = owner.listeners.has_cache_listeners(name);
    let (loads_on_miss, writes_through) = (def.loads_on_miss(), def.writes_through());
    let eviction = def.eviction(owner.replication.state.table.partition_count() as u16);
    let cx = Context {
        now_ms: owner.now_ms,
        operation_policy,
        cache_policy: def.expiry,
        events,
        loads_on_miss,
        writes_through,
        eviction,
    };
    let (store, _) = owner.partitions[call.local].store_mut::<kind::Cache>(name, &mut owner.settings);
    ops::execute(store, cx, &request.op)
}

fn reply(mut replies: impl Replies, answer: Answer) {
    match answer {
        Answer::Empty => replies.reply(Reply::Empty),
        Answer::Bool(value) => replies.reply(Reply::Bool(value)),
        Answer::Value(value) => replies.reply(Reply::Value(value.as_deref())),
        Answer::Batch { next, keys, values } => {
            let keys = keys.iter().map(Vec::as_slice).collect();
            let values = values.as_ref().map(|values| values.iter().map(Vec::as_slice).collect());
            replies.reply(Reply::Fetched { pointers: vec![(next, -1)], keys, values })
        }
    }
}

impl Op<'_> {
    /// The key a request names (None for a putAll or an iteration).
    fn key(&self) -> Option<&[u8]> {
        match self {
            Op::Get { key }
            | Op::ContainsKey { key }
            | Op::Put { key, .. }
            | Op::PutIfAbsent { key, .. }
            | Op::Replace { key, .. }
            | Op::Remove { key, .. } => Some(key),
            Op::PutAll { .. } | Op::EntryProcessor { .. } | Op::Iterate { .. } | Op::SetExpiryPolicy { .. } => None,
        }
    }
}

/// Destroy of a cache's proxy (Client.DestroyProxy, which the client's
/// `CacheManager.destroyCache` sends): as Cache.Destroy, its configuration, entries and
/// listeners, everywhere.
pub(crate) fn destroy(_kind: ObjectKind) -> WideRequest {
    WideRequest::new(Destroy)
}
