//! The map's key rows of the operation table (first in the table: a row's index there is its
//! per-map counter slot), each with its decoder; its rows over every partition are
//! `wide_rows.rs`.

use crate::engine::map::request::*;
use crate::route::row::Request;
use crate::route::row::{row, Operation, A, L, S, W};
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
];

/// A request on the map `name`.
fn map<'a>(name: &'a str, op: MapOp<'a>) -> Request<'a> {
    Request::Map(MapRequest { name: Cow::Borrowed(name), op })
}

/// The fields every put-like request has: (key, value, thread id, ttl).
fn put<'a>(name: &'a str, fields: (Data<'a>, Data<'a>, i64, i64), max_idle_ms: i64, answer: PutAnswer) -> Request<'a> {
    let (key, value, thread_id, ttl_ms) = fields;
    map(name, MapOp::Put { key: blob(key), value: blob(value), thread_id, ttl_ms, max_idle_ms, answer })
}

fn put_if_absent<'a>(name: &'a str, fields: (Data<'a>, Data<'a>, i64, i64), max_idle_ms: i64) -> Request<'a> {
    let (key, value, thread_id, ttl_ms) = fields;
    map(name, MapOp::PutIfAbsent { key: blob(key), value: blob(value), thread_id, ttl_ms, max_idle_ms })
}

fn remove<'a>(name: &'a str, key: Data<'a>, thread_id: i64, answer: RemoveAnswer) -> Request<'a> {
    map(name, MapOp::Remove { key: blob(key), thread_id, answer })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::operations::{self, Route};
    use ferrogrid_protocol::{Message, MessageType};

    fn encode_every_partition_request() -> Vec<(MessageType, Vec<u8>)> {
        let (key, value) = (Data(b"\0\0\0\0\xff\xff\xff\xf9k"), Data(b"\0\0\0\0\xff\xff\xff\xf9v"));
        let name = "m";
        let mut all = Vec::new();
        let mut add = |ty: MessageType, encode: &dyn Fn(&mut Vec<u8>) -> usize| {
            let mut out = Vec::new();
            encode(&mut out);
            all.push((ty, out));
        };
        add(MapPut::TYPE, &|out| MapPut { thread_id: 1, ttl: 5, name, key, value }.encode(out, 9, 3, 0));
        add(MapGet::TYPE, &|out| MapGet { thread_id: 1, name, key }.encode(out, 9, 3, 0));
        add(MapTryLock::TYPE, &|out| {
            MapTryLock { thread_id: 1, lease: 2, timeout: 3, reference_id: 4, name, key }.encode(out, 9, 3, 0)
        });
        add(MapPutAll::TYPE, &|out| {
            MapPutAll { trigger_map_loader: None, name, entries: vec![(key, value)] }.encode(out, 9, 3, 0)
        });
        all
    }

    #[test]
    fn requests_decode_into_typed_values() {
        let requests = encode_every_partition_request();
        fn decode((ty, bytes): &(MessageType, Vec<u8>)) -> MapRequest<'_> {
            let decoder = operations::row(*ty).and_then(|row| row.decode).expect("a decoder");
            let Request::Map(request) = decoder(&Message::parse(bytes).unwrap()).unwrap() else {
                panic!("a map request")
            };
            request
        }
        let decoded: Vec<MapRequest<'_>> = requests.iter().map(decode).collect();
        assert!(decoded.iter().all(|request| request.name == "m"));
        assert!(matches!(
            decoded[0].op,
            MapOp::Put { ttl_ms: 5, max_idle_ms: -1, thread_id: 1, answer: PutAnswer::Previous, .. }
        ));
        assert!(matches!(decoded[1].op, MapOp::Get { .. }));
        assert!(matches!(decoded[2].op, MapOp::Lock { lease_ms: 2, try_timeout_ms: Some(3), thread_id: 1, .. }));
        assert!(matches!(&decoded[3].op, MapOp::PutAll { entries } if entries.len() == 1));
        // Every partition row decodes its own type (a truncated message is an error, not a panic).
        for row in operations::rows().iter().filter(|row| row.route == Route::Partition) {
            let mut out = Vec::new();
            ferrogrid_protocol::message::MessageWriter::request(&mut out, row.message_type, 1, 0, 0).finish();
            let message = Message::parse(&out).unwrap();
            assert!((row.decode.expect("a decoder"))(&message).is_err(), "{}", row.name);
        }
    }
}
