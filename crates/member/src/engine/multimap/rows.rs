//! The multimap's rows of the operation table, each with its decoder or classifier.

use crate::clock::NEVER;
use crate::engine::listeners::{Listener, Registry};
use crate::engine::locks::Waiting;
use crate::engine::multimap::request::{MultiMapOp as Op, MultiMapRequest};
use crate::engine::multimap::store::{self as multimap, MultiDone};
use crate::engine::multimap::wide::{MultiClear, MultiContainsValue, MultiList, MultiListed, MultiSize};
use crate::engine::request::Replies;
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::structures::ObjectKind;
use crate::engine::wide::objects::destroy_object;
use crate::engine::wide::objects::{add_listener, listener, remove_listener};
use crate::engine::wide::Classified;
use crate::engine::wide::WideRequest;
use crate::partition::objects::kind;
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::row::{row, wide_row, Operation, A, S, W};
use crate::route::wire;
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use std::borrow::Cow;

/// Key operations in the partition of the key; the rest over every partition (`wide.rs`).
pub(crate) static ROWS: &[Operation] = &[
    row!(MultiMapPut, Partition, W.with(A).with(S), |r| {
        multimap(r.name, Op::Put { key: blob(r.key), value: blob(r.value), thread_id: r.thread_id })
    }),
    row!(MultiMapPutAll, Partition, W.with(A).with(S), |r| {
        let entries = r.entries.into_iter().map(|(key, values)| (blob(key), list(values))).collect();
        multimap(r.name, Op::PutAll { entries })
    }),
    row!(MultiMapRemove, Partition, W.with(S), |r| {
        multimap(r.name, Op::RemoveKey { key: blob(r.key), answer_values: true, thread_id: r.thread_id })
    }),
    row!(MultiMapDelete, Partition, W.with(S), |r| {
        multimap(r.name, Op::RemoveKey { key: blob(r.key), answer_values: false, thread_id: r.thread_id })
    }),
    row!(MultiMapRemoveEntry, Partition, W.with(S), |r| {
        multimap(r.name, Op::RemoveEntry { key: blob(r.key), value: blob(r.value), thread_id: r.thread_id })
    }),
    row!(MultiMapGet, Partition, S, |r| multimap(r.name, Op::Get { key: blob(r.key) })),
    row!(MultiMapContainsKey, Partition, S, |r| multimap(r.name, Op::ContainsKey { key: blob(r.key) })),
    row!(MultiMapContainsEntry, Partition, S, |r| {
        multimap(r.name, Op::ContainsEntry { key: blob(r.key), value: blob(r.value) })
    }),
    row!(MultiMapValueCount, Partition, S, |r| multimap(r.name, Op::ValueCount { key: blob(r.key) })),
    row!(MultiMapLock, Partition, S, |r| {
        multimap(r.name, Op::Lock { key: blob(r.key), thread_id: r.thread_id, lease_ms: r.ttl, try_timeout_ms: None })
    }),
    row!(MultiMapTryLock, Partition, S, |r| {
        let (lease_ms, try_timeout_ms) = (r.lease, Some(r.timeout));
        multimap(r.name, Op::Lock { key: blob(r.key), thread_id: r.thread_id, lease_ms, try_timeout_ms })
    }),
    row!(MultiMapUnlock, Partition, S, |r| {
        multimap(r.name, Op::Unlock { key: blob(r.key), thread_id: Some(r.thread_id) })
    }),
    row!(MultiMapForceUnlock, Partition, S, |r| multimap(r.name, Op::Unlock { key: blob(r.key), thread_id: None })),
    row!(MultiMapIsLocked, Partition, S, |r| multimap(r.name, Op::IsLocked { key: blob(r.key) })),
    wide_row!(MultiMapKeySet, S, |message, _| Classified::named(MultiList(MultiListed::Keys), message)),
    wide_row!(MultiMapValues, S, |message, _| Classified::named(MultiList(MultiListed::Values), message)),
    wide_row!(MultiMapEntrySet, S, |message, _| Classified::named(MultiList(MultiListed::Entries), message)),
    wide_row!(MultiMapSize, S, |message, _| Classified::named(MultiSize, message)),
    wide_row!(MultiMapContainsValue, S, |message, _| {
        let r = MultiMapContainsValue::decode(message)?;
        Classified::wide(MultiContainsValue(r.value.0.into()), r.name)
    }),
    wide_row!(MultiMapClear, W.with(S), |message, _| Classified::named(MultiClear, message)),
    wide_row!(MultiMapAddEntryListener, S, |message, connection| {
        let r = MultiMapAddEntryListener::decode(message)?;
        let (include_value, local_only) = (r.include_value, r.local_only);
        let listener = Listener { include_value, flags: -1, local_only, ..listener(message, connection) };
        add_listener(Registry::MultiMapEntries, r.name, listener)
    }),
    wide_row!(MultiMapAddEntryListenerToKey, S, |message, connection| {
        let r = MultiMapAddEntryListenerToKey::decode(message)?;
        let (include_value, local_only, key) = (r.include_value, r.local_only, Some(r.key.0.into()));
        let listener = Listener { include_value, flags: -1, key, local_only, ..listener(message, connection) };
        add_listener(Registry::MultiMapEntries, r.name, listener)
    }),
    wide_row!(MultiMapRemoveEntryListener, S, |message, _| {
        let r = MultiMapRemoveEntryListener::decode(message)?;
        remove_listener(Registry::MultiMapEntries, r.name, r.registration_id)
    }),
];

/// A request on the multimap `name`.
fn multimap<'a>(name: &'a str, op: Op<'a>) -> MultiMapRequest<'a> {
    MultiMapRequest { name: Cow::Borrowed(name), op }
}

/// A multimap key request: run, or parked on its key's lock.
impl Execute for MultiMapRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let request = self;
        let local = call.local;
        let partition_id = call.partition_id;
        let start = out.len();
        let name = &*request.name;
        let max_parked = owner.settings.max_parked_per_key();
        let lease_ms = owner.settings.transaction_max_timeout_ms();
        let (store, waiters) = owner.partitions[local].store_mut::<kind::MultiMap>(name, &mut owner.settings);
        let mut ctx = multimap::MultiMapContext {
            name,
            member: owner.member,
            source: call.source,
            partition_id,
            now_ms: owner.now_ms,
            listeners: &mut owner.listeners,
            outbox: &mut owner.outbox,
            released: &mut owner.released,
            deadlines: &mut owner.deadlines,
        };
        let mut reply = call.replies(out);
        let done = match &request.op {
            Op::Txn { key, txn, thread_id, blocks_reads, op } => {
                let (of, mut lease_deadline) = ((key.as_ref(), *txn, *thread_id, *blocks_reads), None);
                let times = (ctx.now_ms, lease_ms);
                let done = crate::engine::multimap::txn::execute(
                    store,
                    of,
                    call.source,
                    times,
                    op,
                    &mut lease_deadline,
                    &mut |answer| reply.reply(answer),
                );
                if let Some(deadline) = lease_deadline {
                    ctx.deadlines.push((deadline, name.into(), key.as_ref().into()));
                }
                done
            }
            op => multimap::execute(store, &mut ctx, op, &mut |answer| reply.reply(answer)),
        };
        let outcome = match done {
            Ok(MultiDone::Park { wait_ms }) => {
                let key: Box<[u8]> = request.key().expect("only key requests park").into();
                let request = Waiting::MultiMap(request.clone().into_owned());
                let deadline_ms = crate::clock::deadline_after(owner.now_ms, wait_ms);
                waiters.park(call.reply_to(), |id| {
                    let parked = call.park(request, owner.now_ms, wait_ms, id);
                    if !store.locks.park(&key, parked, max_parked) {
                        let text = "too many operations are waiting for this key's lock";
                        return Err(OpError::new(ErrorKind::Refused, text));
                    }
                    if deadline_ms != NEVER {
                        ctx.deadlines.push((deadline_ms, name.into(), key));
                    }
                    Ok(())
                })
            }
            Ok(MultiDone::Answered) => Ok(()),
            Err(failure) => Err(failure),
        };
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        owner.replicate(partition_id, call, out, start, Vec::new());
        owner.after_key_request(partition_id, ObjectKind::MultiMap);
    }
}

/// Destroy of a multimap: its entries and its entry listeners, everywhere.
pub(crate) fn destroy(kind: ObjectKind) -> WideRequest {
    destroy_object(Some(kind), Some(Registry::MultiMapEntries))
}
