//! The map's rows of the operation table: its key operations (first in the table: a row's
//! index there is its per-map counter slot) with their decoder, and its operations over every
//! partition with their classifier (`wide.rs`).

use crate::engine::map::wide::classify;
use crate::engine::request::Request;
use crate::engine::request::*;
use crate::route::row::{row, wide_row, Operation, A, L, S, W};
use crate::route::wire::blob;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{Data, DecodeError, Message, MessageType};
use std::borrow::Cow;

/// The fields every put-like request has, in the order [`put`] takes them.
macro_rules! fields {
    ($r:ident) => {
        ($r.key, $r.value, $r.thread_id, $r.ttl)
    };
}

/// Key operations, in the partition of the key; their order is the per-map counters' order.
pub(crate) static KEY_ROWS: &[Operation] = &[
    row!(MapPut, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapGet, Partition, S, decode_map),
    row!(MapRemove, Partition, W.with(L).with(S), decode_map),
    row!(MapReplace, Partition, W.with(L).with(S), decode_map),
    row!(MapReplaceIfSame, Partition, W.with(L).with(S), decode_map),
    row!(MapContainsKey, Partition, S, decode_map),
    row!(MapRemoveIfSame, Partition, W.with(L).with(S), decode_map),
    row!(MapDelete, Partition, W.with(L).with(S), decode_map),
    row!(MapTryRemove, Partition, W.with(L).with(S), decode_map),
    row!(MapTryPut, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapPutTransient, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapPutIfAbsent, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapSet, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapGetEntryView, Partition, S, decode_map),
    row!(MapEvict, Partition, W.with(L).with(S), decode_map),
    row!(MapGetAll, Partition, S, decode_map),
    row!(MapPutAll, Partition, W.with(A).with(S), decode_map),
    row!(MapSetTtl, Partition, W.with(L).with(S), decode_map),
    row!(MapPutWithMaxIdle, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapPutTransientWithMaxIdle, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapPutIfAbsentWithMaxIdle, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapSetWithMaxIdle, Partition, W.with(A).with(L).with(S), decode_map),
    row!(MapLock, Partition, W.with(L).with(S), decode_map),
    row!(MapTryLock, Partition, W.with(L).with(S), decode_map),
    row!(MapIsLocked, Partition, S, decode_map),
    row!(MapUnlock, Partition, W.with(S), decode_map),
    row!(MapForceUnlock, Partition, W.with(S), decode_map),
];

/// Operations over every partition of the map.
pub(crate) static WIDE_ROWS: &[Operation] = &[
    wide_row!(MapSize, S, classify),
    wide_row!(MapIsEmpty, S, classify),
    wide_row!(MapContainsValue, S, classify),
    wide_row!(MapClear, W.with(S), classify),
    wide_row!(MapKeySet, S, classify),
    wide_row!(MapValues, S, classify),
    wide_row!(MapEntrySet, S, classify),
    // Queries (fanout/query_ops.rs): every owned partition's entries, filtered by the predicate.
    wide_row!(MapKeySetWithPredicate, S, classify),
    wide_row!(MapValuesWithPredicate, S, classify),
    wide_row!(MapEntriesWithPredicate, S, classify),
    wide_row!(MapKeySetWithPagingPredicate, S, classify),
    wide_row!(MapValuesWithPagingPredicate, S, classify),
    wide_row!(MapEntriesWithPagingPredicate, S, classify),
    wide_row!(MapAddIndex, W.with(S), classify),
    // Aggregations and projections (fanout/aggregate_ops.rs).
    wide_row!(MapAggregate, S, classify),
    wide_row!(MapAggregateWithPredicate, S, classify),
    wide_row!(MapProject, S, classify),
    wide_row!(MapProjectWithPredicate, S, classify),
    wide_row!(MapEvictAll, W.with(S), classify),
    wide_row!(MapFlush, S, classify),
    wide_row!(MapAddEntryListener, S, classify),
    wide_row!(MapAddEntryListenerToKey, S, classify),
    wide_row!(MapAddEntryListenerWithPredicate, S, classify),
    wide_row!(MapAddEntryListenerToKeyWithPredicate, S, classify),
    wide_row!(MapAddNearCacheInvalidationListener, S, classify),
    wide_row!(MapRemoveEntryListener, S, classify),
];

fn request<'a>(name: &'a str, op: MapOp<'a>) -> MapRequest<'a> {
    MapRequest { name: Cow::Borrowed(name), op }
}

/// The decoder of the operation table's map key rows.
pub(crate) fn decode_map<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    decode_map_request(message).map(Request::Map)
}

/// Decodes a partition-bound map request.
pub(crate) fn decode_map_request<'a>(message: &Message<'a>) -> Result<MapRequest<'a>, DecodeError> {
    let ty = message.message_type();
    Ok(match ty {
        MapGet::TYPE => {
            let r = MapGet::decode(message)?;
            request(r.name, MapOp::Get { key: blob(r.key) })
        }
        MapContainsKey::TYPE => {
            let r = MapContainsKey::decode(message)?;
            request(r.name, MapOp::ContainsKey { key: blob(r.key) })
        }
        MapGetEntryView::TYPE => {
            let r = MapGetEntryView::decode(message)?;
            request(r.name, MapOp::GetEntryView { key: blob(r.key) })
        }
        MapIsLocked::TYPE => {
            let r = MapIsLocked::decode(message)?;
            request(r.name, MapOp::IsLocked { key: blob(r.key) })
        }
        MapSetTtl::TYPE => {
            let r = MapSetTtl::decode(message)?;
            request(r.name, MapOp::SetTtl { key: blob(r.key), ttl_ms: r.ttl })
        }
        MapGetAll::TYPE => {
            let r = MapGetAll::decode(message)?;
            request(r.name, MapOp::GetAll { keys: r.keys.into_iter().map(blob).collect() })
        }
        MapPutAll::TYPE => {
            let r = MapPutAll::decode(message)?;
            let entries = r.entries.into_iter().map(|(key, value)| (blob(key), blob(value))).collect();
            request(r.name, MapOp::PutAll { entries })
        }
        _ => return decode_write(message, ty),
    })
}

/// The fields every put-like request has: (key, value, thread id, ttl).
fn put<'a>(
    name: &'a str,
    fields: (Data<'a>, Data<'a>, i64, i64),
    max_idle_ms: i64,
    answer: PutAnswer,
) -> MapRequest<'a> {
    let (key, value, thread_id, ttl_ms) = fields;
    request(name, MapOp::Put { key: blob(key), value: blob(value), thread_id, ttl_ms, max_idle_ms, answer })
}

fn put_if_absent<'a>(name: &'a str, fields: (Data<'a>, Data<'a>, i64, i64), max_idle_ms: i64) -> MapRequest<'a> {
    let (key, value, thread_id, ttl_ms) = fields;
    request(name, MapOp::PutIfAbsent { key: blob(key), value: blob(value), thread_id, ttl_ms, max_idle_ms })
}

fn decode_write<'a>(message: &Message<'a>, ty: MessageType) -> Result<MapRequest<'a>, DecodeError> {
    Ok(match ty {
        MapPut::TYPE => {
            let r = MapPut::decode(message)?;
            put(r.name, fields!(r), -1, PutAnswer::Previous)
        }
        MapPutWithMaxIdle::TYPE => {
            let r = MapPutWithMaxIdle::decode(message)?;
            put(r.name, fields!(r), r.max_idle, PutAnswer::Previous)
        }
        MapSet::TYPE => {
            let r = MapSet::decode(message)?;
            put(r.name, fields!(r), -1, PutAnswer::Empty)
        }
        MapSetWithMaxIdle::TYPE => {
            let r = MapSetWithMaxIdle::decode(message)?;
            put(r.name, fields!(r), r.max_idle, PutAnswer::Null)
        }
        MapPutTransient::TYPE => {
            let r = MapPutTransient::decode(message)?;
            put(r.name, fields!(r), -1, PutAnswer::Empty)
        }
        MapPutTransientWithMaxIdle::TYPE => {
            let r = MapPutTransientWithMaxIdle::decode(message)?;
            put(r.name, fields!(r), r.max_idle, PutAnswer::Null)
        }
        MapPutIfAbsent::TYPE => {
            let r = MapPutIfAbsent::decode(message)?;
            put_if_absent(r.name, fields!(r), -1)
        }
        MapPutIfAbsentWithMaxIdle::TYPE => {
            let r = MapPutIfAbsentWithMaxIdle::decode(message)?;
            put_if_absent(r.name, fields!(r), r.max_idle)
        }
        _ => return decode_key_write(message, ty),
    })
}

fn decode_key_write<'a>(message: &Message<'a>, ty: MessageType) -> Result<MapRequest<'a>, DecodeError> {
    let remove =
        |name, key: Data<'a>, thread_id, answer| request(name, MapOp::Remove { key: blob(key), thread_id, answer });
    Ok(match ty {
        MapTryPut::TYPE => {
            let r = MapTryPut::decode(message)?;
            let (key, value) = (blob(r.key), blob(r.value));
            request(r.name, MapOp::TryPut { key, value, thread_id: r.thread_id, timeout_ms: r.timeout })
        }
        MapRemove::TYPE => {
            let r = MapRemove::decode(message)?;
            remove(r.name, r.key, r.thread_id, RemoveAnswer::Previous)
        }
        MapDelete::TYPE => {
            let r = MapDelete::decode(message)?;
            remove(r.name, r.key, r.thread_id, RemoveAnswer::Deleted)
        }
        MapTryRemove::TYPE => {
            let r = MapTryRemove::decode(message)?;
            remove(r.name, r.key, r.thread_id, RemoveAnswer::Try { timeout_ms: r.timeout })
        }
        MapRemoveIfSame::TYPE => {
            let r = MapRemoveIfSame::decode(message)?;
            request(r.name, MapOp::RemoveIfSame { key: blob(r.key), value: blob(r.value), thread_id: r.thread_id })
        }
        MapReplace::TYPE => {
            let r = MapReplace::decode(message)?;
            let (key, value) = (blob(r.key), blob(r.value));
            request(r.name, MapOp::Replace { key, expected: None, value, thread_id: r.thread_id })
        }
        MapReplaceIfSame::TYPE => {
            let r = MapReplaceIfSame::decode(message)?;
            let (key, value, expected) = (blob(r.key), blob(r.value), Some(blob(r.test_value)));
            request(r.name, MapOp::Replace { key, expected, value, thread_id: r.thread_id })
        }
        MapEvict::TYPE => {
            let r = MapEvict::decode(message)?;
            request(r.name, MapOp::Evict { key: blob(r.key), thread_id: r.thread_id })
        }
        _ => return decode_lock(message, ty),
    })
}

fn decode_lock<'a>(message: &Message<'a>, ty: MessageType) -> Result<MapRequest<'a>, DecodeError> {
    Ok(match ty {
        MapLock::TYPE => {
            let r = MapLock::decode(message)?;
            let op = MapOp::Lock { key: blob(r.key), thread_id: r.thread_id, lease_ms: r.ttl, try_timeout_ms: None };
            request(r.name, op)
        }
        MapTryLock::TYPE => {
            let r = MapTryLock::decode(message)?;
            let (key, lease_ms, try_timeout_ms) = (blob(r.key), r.lease, Some(r.timeout));
            request(r.name, MapOp::Lock { key, thread_id: r.thread_id, lease_ms, try_timeout_ms })
        }
        MapUnlock::TYPE => {
            let r = MapUnlock::decode(message)?;
            request(r.name, MapOp::Unlock { key: blob(r.key), thread_id: Some(r.thread_id) })
        }
        MapForceUnlock::TYPE => {
            let r = MapForceUnlock::decode(message)?;
            request(r.name, MapOp::Unlock { key: blob(r.key), thread_id: None })
        }
        other => unreachable!("{other} has a partition row but no decoder"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::operations::{self, Route};

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
        let decoded: Vec<MapRequest<'_>> =
            requests.iter().map(|(_, bytes)| decode_map_request(&Message::parse(bytes).unwrap()).unwrap()).collect();
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
