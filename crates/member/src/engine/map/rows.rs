//! The map's key rows of the operation table (first in the table: a row's index there is its
//! per-map counter slot), each with its decoder; its rows over every partition are
//! `wide_rows.rs`.

use crate::engine::locks::Waiting;
use crate::engine::map::iteration::{Fetch, Fetched};
use crate::engine::map::journal;
use crate::engine::map::ops::{self as map_ops, Done, OpContext};
use crate::engine::map::query::Predicate;
use crate::engine::map::request::*;
use crate::engine::structures::ObjectKind;
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::row::{row, Operation, A, L, S, W};
use crate::route::wire;
use crate::route::wire::blob;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::Data;
use std::borrow::Cow;

/// The fields every put-like request has, in the order [`put`] takes them.
macro_rules! fields {
    ($r:ident) => {
        ($r.key, $r.value, $r.thread_id, $r.ttl)
    };
}

/// Key operations, in the partition of the key; their order is the per-map counters' order.
pub(crate) static KEY_ROWS: &[Operation] = &[
    row!(MapPut, Partition, W.with(A).with(L).with(S), |r| put(r.name, fields!(r), -1, PutAnswer::Previous)),
    row!(MapGet, Partition, S, |r| map(r.name, MapOp::Get { key: blob(r.key) })),
    row!(MapRemove, Partition, W.with(L).with(S), |r| remove(r.name, r.key, r.thread_id, RemoveAnswer::Previous)),
    row!(MapReplace, Partition, W.with(L).with(S), |r| {
        let (key, value) = (blob(r.key), blob(r.value));
        map(r.name, MapOp::Replace { key, expected: None, value, thread_id: r.thread_id })
    }),
    row!(MapReplaceIfSame, Partition, W.with(L).with(S), |r| {
        let (key, value, expected) = (blob(r.key), blob(r.value), Some(blob(r.test_value)));
        map(r.name, MapOp::Replace { key, expected, value, thread_id: r.thread_id })
    }),
    row!(MapContainsKey, Partition, S, |r| map(r.name, MapOp::ContainsKey { key: blob(r.key) })),
    row!(MapRemoveIfSame, Partition, W.with(L).with(S), |r| {
        map(r.name, MapOp::RemoveIfSame { key: blob(r.key), value: blob(r.value), thread_id: r.thread_id })
    }),
    row!(MapDelete, Partition, W.with(L).with(S), |r| remove(r.name, r.key, r.thread_id, RemoveAnswer::Deleted)),
    row!(MapTryRemove, Partition, W.with(L).with(S), |r| {
        remove(r.name, r.key, r.thread_id, RemoveAnswer::Try { timeout_ms: r.timeout })
    }),
    row!(MapTryPut, Partition, W.with(A).with(L).with(S), |r| {
        let (key, value) = (blob(r.key), blob(r.value));
        map(r.name, MapOp::TryPut { key, value, thread_id: r.thread_id, timeout_ms: r.timeout })
    }),
    row!(MapPutTransient, Partition, W.with(A).with(L).with(S), |r| put(r.name, fields!(r), -1, PutAnswer::Empty)),
    row!(MapPutIfAbsent, Partition, W.with(A).with(L).with(S), |r| put_if_absent(r.name, fields!(r), -1)),
    row!(MapSet, Partition, W.with(A).with(L).with(S), |r| put(r.name, fields!(r), -1, PutAnswer::Empty)),
    row!(MapGetEntryView, Partition, S, |r| map(r.name, MapOp::GetEntryView { key: blob(r.key) })),
    row!(MapEvict, Partition, W.with(L).with(S), |r| {
        map(r.name, MapOp::Evict { key: blob(r.key), thread_id: r.thread_id })
    }),
    row!(MapGetAll, Partition, S, |r| map(r.name, MapOp::GetAll { keys: r.keys.into_iter().map(blob).collect() })),
    row!(MapPutAll, Partition, W.with(A).with(S), |r| {
        let entries = r.entries.into_iter().map(|(key, value)| (blob(key), blob(value))).collect();
        map(r.name, MapOp::PutAll { entries })
    }),
    row!(MapSetTtl, Partition, W.with(L).with(S), |r| map(r.name, MapOp::SetTtl { key: blob(r.key), ttl_ms: r.ttl })),
    row!(MapPutWithMaxIdle, Partition, W.with(A).with(L).with(S), |r| {
        put(r.name, fields!(r), r.max_idle, PutAnswer::Previous)
    }),
    row!(MapPutTransientWithMaxIdle, Partition, W.with(A).with(L).with(S), |r| {
        put(r.name, fields!(r), r.max_idle, PutAnswer::Null)
    }),
    row!(MapPutIfAbsentWithMaxIdle, Partition, W.with(A).with(L).with(S), |r| {
        put_if_absent(r.name, fields!(r), r.max_idle)
    }),
    row!(MapSetWithMaxIdle, Partition, W.with(A).with(L).with(S), |r| {
        put(r.name, fields!(r), r.max_idle, PutAnswer::Null)
    }),
    row!(MapLock, Partition, W.with(L).with(S), |r| {
        map(r.name, MapOp::Lock { key: blob(r.key), thread_id: r.thread_id, lease_ms: r.ttl, try_timeout_ms: None })
    }),
    row!(MapTryLock, Partition, W.with(L).with(S), |r| {
        let (key, lease_ms, try_timeout_ms) = (blob(r.key), r.lease, Some(r.timeout));
        map(r.name, MapOp::Lock { key, thread_id: r.thread_id, lease_ms, try_timeout_ms })
    }),
    row!(MapIsLocked, Partition, S, |r| map(r.name, MapOp::IsLocked { key: blob(r.key) })),
    row!(MapUnlock, Partition, W.with(S), |r| {
        map(r.name, MapOp::Unlock { key: blob(r.key), thread_id: Some(r.thread_id) })
    }),
    row!(MapForceUnlock, Partition, W.with(S), |r| map(r.name, MapOp::Unlock { key: blob(r.key), thread_id: None })),
    // Iteration by partition (iteration.rs).
    row!(MapFetchKeys, Partition, S, |r| Fetch::new(r.name, &r.iteration_pointers.0, r.batch, Fetched::Keys)),
    row!(MapFetchEntries, Partition, S, |r| Fetch::new(r.name, &r.iteration_pointers.0, r.batch, Fetched::Entries)),
    row!(MapFetchWithQuery, Partition, S, |r| {
        let query = Fetched::Query { predicate: Predicate::new(Some(r.predicate.0)), projection: r.projection.0 };
        Fetch::new(r.name, &r.iteration_pointers.0, r.batch, query)
    }),
    // The event journal of the partition the client names (journal.rs).
    row!(MapEventJournalSubscribe, Partition, S, |r| journal::journal(r.name, journal::JournalOp::Subscribe)),
    row!(MapEventJournalRead, Partition, S, |r| journal::read(&r)),
];

/// A request on the map `name`.
fn map<'a>(name: &'a str, op: MapOp<'a>) -> MapRequest<'a> {
    MapRequest { name: Cow::Borrowed(name), op }
}

/// The fields every put-like request has: (key, value, thread id, ttl).
fn put<'a>(
    name: &'a str,
    fields: (Data<'a>, Data<'a>, i64, i64),
    max_idle_ms: i64,
    answer: PutAnswer,
) -> MapRequest<'a> {
    let (key, value, thread_id, ttl_ms) = fields;
    map(name, MapOp::Put { key: blob(key), value: blob(value), thread_id, ttl_ms, max_idle_ms, answer })
}

fn put_if_absent<'a>(name: &'a str, fields: (Data<'a>, Data<'a>, i64, i64), max_idle_ms: i64) -> MapRequest<'a> {
    let (key, value, thread_id, ttl_ms) = fields;
    map(name, MapOp::PutIfAbsent { key: blob(key), value: blob(value), thread_id, ttl_ms, max_idle_ms })
}

fn remove<'a>(name: &'a str, key: Data<'a>, thread_id: i64, answer: RemoveAnswer) -> MapRequest<'a> {
    map(name, MapOp::Remove { key: blob(key), thread_id, answer })
}

/// A map request.
impl Execute for MapRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let request = self;
        let local = call.local;
        let partition_id = call.partition_id;
        let start = out.len();
        let mut ctx = OpContext {
            now_ms: owner.now_ms,
            member: owner.member,
            source: call.source,
            partition_id,
            counter_slot: call.counter_slot,
            settings: &mut owner.settings,
            listeners: &mut owner.listeners,
            outbox: &mut owner.outbox,
            released: &mut owner.released,
            deadlines: &mut owner.deadlines,
        };
        let partition = &mut owner.partitions[local];
        let mut reply = call.replies(out);
        let done = match &request.op {
            MapOp::Txn { key, txn, thread_id, blocks_reads, op } => {
                let of = (key.as_ref(), *txn, *thread_id, *blocks_reads);
                crate::engine::map::txn::execute(partition, &mut ctx, &request.name, of, op, &mut reply)
            }
            _ => map_ops::execute(partition, &mut ctx, request, &mut reply),
        };
        let outcome = match done {
            Ok(Done::Park { wait_ms }) => match partition.waiters.register(call.reply_to()) {
                Ok(id) => {
                    let parked = call.park(Waiting::Map(request.clone().into_owned()), owner.now_ms, wait_ms, id);
                    map_ops::park(partition, &mut ctx, parked).inspect_err(|_| {
                        partition.waiters.take(id);
                    })
                }
                Err(failure) => Err(failure),
            },
            Ok(Done::Answered) => Ok(()),
            Err(failure) => Err(failure),
        };
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        let mut others = Vec::new();
        // The journal reads the write made possible are answered with it.
        owner.partitions[local].serve_journal_of(ObjectKind::Map, &request.name, &mut others);
        if owner.partitions[local].tracks_changes() || !others.is_empty() {
            owner.replicate(partition_id, call, out, start, others);
        }
        owner.after_key_request(partition_id, ObjectKind::Map);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::connection::ConnectionShared;
    use crate::partition::owner::testing::serving_alone;
    use crate::route::operations::testing::run;
    use crate::route::operations::{self, Route};
    use ferrogrid_protocol::Message;

    #[test]
    fn rows_decode_their_requests_and_run_them_on_the_owner() {
        let (key, value, newer) = (
            Data(b"\0\0\0\0\xff\xff\xff\xf9k"),
            Data(b"\0\0\0\0\xff\xff\xff\xf9v"),
            Data(b"\0\0\0\0\xff\xff\xff\xf9w"),
        );
        let name = "m";
        let mut owner = serving_alone();
        let (connection, _client) = ConnectionShared::loopback(1);
        let mut send = |source: u128, encode: &dyn Fn(&mut Vec<u8>) -> usize| {
            let mut request = Vec::new();
            encode(&mut request);
            run(&mut owner, &connection, source, &request).expect("decodes")
        };
        let answer = send(1, &|out| {
            MapPutAll { trigger_map_loader: None, name, entries: vec![(key, value)] }.encode(out, 9, 0, 0)
        });
        assert!(EmptyResponse::decode(&Message::parse(&answer).unwrap()).is_ok());
        let answer = send(1, &|out| MapGet { thread_id: 1, name, key }.encode(out, 9, 0, 0));
        assert_eq!(NullableDataResponse::decode(&Message::parse(&answer).unwrap()).unwrap().response, Some(value));
        let answer = send(1, &|out| MapPut { thread_id: 1, ttl: 5_000, name, key, value: newer }.encode(out, 9, 0, 0));
        let previous = NullableDataResponse::decode(&Message::parse(&answer).unwrap()).unwrap().response;
        assert_eq!(previous, Some(value), "a put answers the previous value");
        let try_lock = |thread_id| {
            move |out: &mut Vec<u8>| {
                MapTryLock { thread_id, lease: -1, timeout: 0, reference_id: 4, name, key }.encode(out, 9, 0, 0)
            }
        };
        let locked = |answer: Vec<u8>| BoolResponse::decode(&Message::parse(&answer).unwrap()).unwrap().response;
        assert!(locked(send(1, &try_lock(1))), "the key is free");
        assert!(!locked(send(2, &try_lock(1))), "another client holds it");
        // Every partition row decodes its own type: a truncated message is an error, not a
        // panic, and nothing is answered.
        for row in operations::rows().iter().filter(|row| row.route == Route::Partition) {
            let mut request = Vec::new();
            ferrogrid_protocol::message::MessageWriter::request(&mut request, row.message_type, 1, 0, 0).finish();
            assert!(run(&mut owner, &connection, 1, &request).is_err(), "{}", row.name);
        }
    }
}
