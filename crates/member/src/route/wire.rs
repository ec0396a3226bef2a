//! The Hazelcast protocol adapter of the map engine: decodes a request message once into a
//! typed [`MapRequest`], encodes the engine's [`Reply`] as the response the client expects,
//! and names every [`OpError`] with Hazelcast's error code (the only place that does).
//!
//! Fields borrow from the message's buffer; nothing is copied to decode.

use crate::engine::request::{
    CollectionOp, CollectionRequest, ErrorKind, MapOp, MapRequest, MultiMapOp, MultiMapRequest, OpError, PnCounterOp,
    PnCounterRequest, PutAnswer, QueueOp, QueueRequest, RemoveAnswer, ReplicatedMapOp, ReplicatedMapRequest, Replies,
    Reply, Request, RingbufferOp, RingbufferRequest, TopicRequest,
};
use crate::net::connection::{ConnectionShared, ReplyTo};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorCode, ErrorHolder};
use ferrogrid_protocol::message::Packed;
use ferrogrid_protocol::{Data, DecodeError, Message, MessageType};
use std::borrow::Cow;
use std::sync::Arc;

/// Backup acks a response tells the client to wait for: the member waits for backups itself.
const BACKUP_ACKS: u8 = 0;

fn blob(data: Data<'_>) -> Cow<'_, [u8]> {
    Cow::Borrowed(data.0)
}

fn list(values: Vec<Data<'_>>) -> Vec<Cow<'_, [u8]>> {
    values.into_iter().map(blob).collect()
}

fn request<'a>(name: &'a str, op: MapOp<'a>) -> MapRequest<'a> {
    MapRequest { name: Cow::Borrowed(name), op }
}

/// The decoder of the operation table's map key rows.
pub fn decode_map<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    decode_map_request(message).map(Request::Map)
}

/// The decoder of the operation table's queue rows.
pub fn decode_queue<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    decode_queue_request(message).map(Request::Queue)
}

/// The decoder of the operation table's ringbuffer rows.
pub fn decode_ringbuffer<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    let request = |name: &'a str, op| Request::Ringbuffer(RingbufferRequest { name: Cow::Borrowed(name), op });
    Ok(match message.message_type() {
        RingbufferSize::TYPE => request(RingbufferSize::decode(message)?.name, RingbufferOp::Size),
        RingbufferTailSequence::TYPE => {
            request(RingbufferTailSequence::decode(message)?.name, RingbufferOp::TailSequence)
        }
        RingbufferHeadSequence::TYPE => {
            request(RingbufferHeadSequence::decode(message)?.name, RingbufferOp::HeadSequence)
        }
        RingbufferCapacity::TYPE => request(RingbufferCapacity::decode(message)?.name, RingbufferOp::Capacity),
        RingbufferRemainingCapacity::TYPE => {
            request(RingbufferRemainingCapacity::decode(message)?.name, RingbufferOp::RemainingCapacity)
        }
        RingbufferAdd::TYPE => {
            let r = RingbufferAdd::decode(message)?;
            request(r.name, RingbufferOp::Add { values: vec![blob(r.value)], overflow_policy: r.overflow_policy })
        }
        RingbufferAddAll::TYPE => {
            let r = RingbufferAddAll::decode(message)?;
            request(r.name, RingbufferOp::Add { values: list(r.value_list), overflow_policy: r.overflow_policy })
        }
        RingbufferReadOne::TYPE => {
            let r = RingbufferReadOne::decode(message)?;
            let op = RingbufferOp::Read { sequence: r.sequence, min: 1, max: 1, one: true, filter: None };
            request(r.name, op)
        }
        RingbufferReadMany::TYPE => {
            let r = RingbufferReadMany::decode(message)?;
            // The Node.js client sends "no filter" as a serialized null (type 0).
            let filter = r.filter.filter(|filter| filter.type_id().unwrap_or(0) != 0).map(blob);
            let (min, max) = (r.min_count, r.max_count);
            request(r.name, RingbufferOp::Read { sequence: r.start_sequence, min, max, one: false, filter })
        }
        other => unreachable!("{other} has a ringbuffer row but no decoder"),
    })
}

/// The decoder of the operation table's replicated map key rows.
pub fn decode_replicated_map<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    use ReplicatedMapOp as Op;
    let (name, op) = match message.message_type() {
        ReplicatedMapPut::TYPE => {
            let r = ReplicatedMapPut::decode(message)?;
            (r.name, Op::Put { key: blob(r.key), value: blob(r.value), ttl_ms: r.ttl })
        }
        ReplicatedMapRemove::TYPE => {
            let r = ReplicatedMapRemove::decode(message)?;
            (r.name, Op::Remove { key: blob(r.key) })
        }
        ReplicatedMapGet::TYPE => {
            let r = ReplicatedMapGet::decode(message)?;
            (r.name, Op::Get { key: blob(r.key) })
        }
        ReplicatedMapContainsKey::TYPE => {
            let r = ReplicatedMapContainsKey::decode(message)?;
            (r.name, Op::ContainsKey { key: blob(r.key) })
        }
        other => unreachable!("{other} has a replicated map row but no decoder"),
    };
    Ok(Request::ReplicatedMap(ReplicatedMapRequest { name: Cow::Borrowed(name), op }))
}

/// The decoder of the operation table's multimap key rows.
pub fn decode_multimap<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    use MultiMapOp as Op;
    let (name, op) = match message.message_type() {
        MultiMapPut::TYPE => {
            let r = MultiMapPut::decode(message)?;
            (r.name, Op::Put { key: blob(r.key), value: blob(r.value), thread_id: r.thread_id })
        }
        MultiMapGet::TYPE => {
            let r = MultiMapGet::decode(message)?;
            (r.name, Op::Get { key: blob(r.key) })
        }
        MultiMapRemove::TYPE => {
            let r = MultiMapRemove::decode(message)?;
            (r.name, Op::RemoveKey { key: blob(r.key), answer_values: true, thread_id: r.thread_id })
        }
        MultiMapDelete::TYPE => {
            let r = MultiMapDelete::decode(message)?;
            (r.name, Op::RemoveKey { key: blob(r.key), answer_values: false, thread_id: r.thread_id })
        }
        MultiMapRemoveEntry::TYPE => {
            let r = MultiMapRemoveEntry::decode(message)?;
            (r.name, Op::RemoveEntry { key: blob(r.key), value: blob(r.value), thread_id: r.thread_id })
        }
        MultiMapContainsKey::TYPE => {
            let r = MultiMapContainsKey::decode(message)?;
            (r.name, Op::ContainsKey { key: blob(r.key) })
        }
        MultiMapContainsEntry::TYPE => {
            let r = MultiMapContainsEntry::decode(message)?;
            (r.name, Op::ContainsEntry { key: blob(r.key), value: blob(r.value) })
        }
        MultiMapValueCount::TYPE => {
            let r = MultiMapValueCount::decode(message)?;
            (r.name, Op::ValueCount { key: blob(r.key) })
        }
        MultiMapPutAll::TYPE => {
            let r = MultiMapPutAll::decode(message)?;
            let entries = r.entries.into_iter().map(|(key, values)| (blob(key), list(values))).collect();
            (r.name, Op::PutAll { entries })
        }
        MultiMapLock::TYPE => {
            let r = MultiMapLock::decode(message)?;
            (r.name, Op::Lock { key: blob(r.key), thread_id: r.thread_id, lease_ms: r.ttl, try_timeout_ms: None })
        }
        MultiMapTryLock::TYPE => {
            let r = MultiMapTryLock::decode(message)?;
            let (lease_ms, try_timeout_ms) = (r.lease, Some(r.timeout));
            (r.name, Op::Lock { key: blob(r.key), thread_id: r.thread_id, lease_ms, try_timeout_ms })
        }
        MultiMapUnlock::TYPE => {
            let r = MultiMapUnlock::decode(message)?;
            (r.name, Op::Unlock { key: blob(r.key), thread_id: Some(r.thread_id) })
        }
        MultiMapForceUnlock::TYPE => {
            let r = MultiMapForceUnlock::decode(message)?;
            (r.name, Op::Unlock { key: blob(r.key), thread_id: None })
        }
        MultiMapIsLocked::TYPE => {
            let r = MultiMapIsLocked::decode(message)?;
            (r.name, Op::IsLocked { key: blob(r.key) })
        }
        other => unreachable!("{other} has a multimap row but no decoder"),
    };
    Ok(Request::MultiMap(MultiMapRequest { name: Cow::Borrowed(name), op }))
}

/// The decoder of the operation table's list and set rows.
pub fn decode_collection<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    let ty = message.message_type();
    let (name, op) = if ty.0 >> 16 == 0x06 { decode_set(message)? } else { decode_list(message)? };
    let set = ty.0 >> 16 == 0x06;
    Ok(Request::Collection(CollectionRequest { name: Cow::Borrowed(name), set, op }))
}

/// A set request: the operations lists and sets share.
fn decode_set<'a>(message: &Message<'a>) -> Result<(&'a str, CollectionOp<'a>), DecodeError> {
    use CollectionOp as Op;
    Ok(match message.message_type() {
        SetSize::TYPE => (SetSize::decode(message)?.name, Op::Size),
        SetIsEmpty::TYPE => (SetIsEmpty::decode(message)?.name, Op::IsEmpty),
        SetClear::TYPE => (SetClear::decode(message)?.name, Op::Clear),
        SetGetAll::TYPE => (SetGetAll::decode(message)?.name, Op::GetAll),
        SetContains::TYPE => {
            decode_value(SetContains::decode(message).map(|r| (r.name, r.value)), |value| Op::Contains { value })?
        }
        SetAdd::TYPE => {
            decode_value(SetAdd::decode(message).map(|r| (r.name, r.value)), |value| Op::Add { value, index: None })?
        }
        SetRemove::TYPE => {
            decode_value(SetRemove::decode(message).map(|r| (r.name, r.value)), |value| Op::Remove { value })?
        }
        SetContainsAll::TYPE => decode_values(SetContainsAll::decode(message).map(|r| (r.name, r.items)), |values| {
            Op::ContainsAll { values }
        })?,
        SetAddAll::TYPE => decode_values(SetAddAll::decode(message).map(|r| (r.name, r.value_list)), |values| {
            Op::AddAll { values, index: None }
        })?,
        SetCompareAndRemoveAll::TYPE => {
            decode_values(SetCompareAndRemoveAll::decode(message).map(|r| (r.name, r.values)), |values| {
                Op::RemoveAll { values }
            })?
        }
        SetCompareAndRetainAll::TYPE => {
            decode_values(SetCompareAndRetainAll::decode(message).map(|r| (r.name, r.values)), |values| {
                Op::RetainAll { values }
            })?
        }
        other => unreachable!("{other} has a set row but no decoder"),
    })
}

/// A list request.
fn decode_list<'a>(message: &Message<'a>) -> Result<(&'a str, CollectionOp<'a>), DecodeError> {
    use CollectionOp as Op;
    Ok(match message.message_type() {
        ListSize::TYPE => (ListSize::decode(message)?.name, Op::Size),
        ListIsEmpty::TYPE => (ListIsEmpty::decode(message)?.name, Op::IsEmpty),
        ListClear::TYPE => (ListClear::decode(message)?.name, Op::Clear),
        ListGetAll::TYPE => (ListGetAll::decode(message)?.name, Op::GetAll),
        ListIterator::TYPE => (ListIterator::decode(message)?.name, Op::GetAll),
        ListContains::TYPE => {
            decode_value(ListContains::decode(message).map(|r| (r.name, r.value)), |value| Op::Contains { value })?
        }
        ListAdd::TYPE => {
            decode_value(ListAdd::decode(message).map(|r| (r.name, r.value)), |value| Op::Add { value, index: None })?
        }
        ListRemove::TYPE => {
            decode_value(ListRemove::decode(message).map(|r| (r.name, r.value)), |value| Op::Remove { value })?
        }
        ListIndexOf::TYPE => decode_value(ListIndexOf::decode(message).map(|r| (r.name, r.value)), |value| {
            Op::IndexOf { value, last: false }
        })?,
        ListLastIndexOf::TYPE => decode_value(ListLastIndexOf::decode(message).map(|r| (r.name, r.value)), |value| {
            Op::IndexOf { value, last: true }
        })?,
        ListContainsAll::TYPE => {
            decode_values(ListContainsAll::decode(message).map(|r| (r.name, r.values)), |values| Op::ContainsAll {
                values,
            })?
        }
        ListAddAll::TYPE => decode_values(ListAddAll::decode(message).map(|r| (r.name, r.value_list)), |values| {
            Op::AddAll { values, index: None }
        })?,
        ListCompareAndRemoveAll::TYPE => {
            decode_values(ListCompareAndRemoveAll::decode(message).map(|r| (r.name, r.values)), |values| {
                Op::RemoveAll { values }
            })?
        }
        ListCompareAndRetainAll::TYPE => {
            decode_values(ListCompareAndRetainAll::decode(message).map(|r| (r.name, r.values)), |values| {
                Op::RetainAll { values }
            })?
        }
        _ => decode_list_position(message)?,
    })
}

/// A list request on positions.
fn decode_list_position<'a>(message: &Message<'a>) -> Result<(&'a str, CollectionOp<'a>), DecodeError> {
    use CollectionOp as Op;
    Ok(match message.message_type() {
        ListAddAllWithIndex::TYPE => {
            let r = ListAddAllWithIndex::decode(message)?;
            (r.name, Op::AddAll { values: list(r.value_list), index: Some(r.index) })
        }
        ListGet::TYPE => {
            let r = ListGet::decode(message)?;
            (r.name, Op::Get { index: r.index })
        }
        ListSet::TYPE => {
            let r = ListSet::decode(message)?;
            (r.name, Op::Replace { index: r.index, value: blob(r.value) })
        }
        ListAddWithIndex::TYPE => {
            let r = ListAddWithIndex::decode(message)?;
            (r.name, Op::Add { value: blob(r.value), index: Some(r.index) })
        }
        ListRemoveWithIndex::TYPE => {
            let r = ListRemoveWithIndex::decode(message)?;
            (r.name, Op::RemoveAt { index: r.index })
        }
        ListSub::TYPE => {
            let r = ListSub::decode(message)?;
            (r.name, Op::Sub { from: r.from, to: r.to })
        }
        ListListIterator::TYPE => {
            let r = ListListIterator::decode(message)?;
            (r.name, Op::Sub { from: r.index, to: -1 })
        }
        other => unreachable!("{other} has a list row but no decoder"),
    })
}

fn decode_value<'a>(
    decoded: Result<(&'a str, Data<'a>), DecodeError>,
    op: impl FnOnce(Cow<'a, [u8]>) -> CollectionOp<'a>,
) -> Result<(&'a str, CollectionOp<'a>), DecodeError> {
    decoded.map(|(name, value)| (name, op(blob(value))))
}

fn decode_values<'a>(
    decoded: Result<(&'a str, Vec<Data<'a>>), DecodeError>,
    op: impl FnOnce(Vec<Cow<'a, [u8]>>) -> CollectionOp<'a>,
) -> Result<(&'a str, CollectionOp<'a>), DecodeError> {
    decoded.map(|(name, values)| (name, op(list(values))))
}

/// The decoder of the operation table's topic rows (publish, publishAll).
pub fn decode_topic<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    let (name, messages) = match message.message_type() {
        TopicPublish::TYPE => {
            let r = TopicPublish::decode(message)?;
            (r.name, vec![blob(r.message)])
        }
        TopicPublishAll::TYPE => {
            let r = TopicPublishAll::decode(message)?;
            (r.name, list(r.messages))
        }
        other => unreachable!("{other} has a topic row but no decoder"),
    };
    Ok(Request::Topic(TopicRequest { name: Cow::Borrowed(name), messages }))
}

/// Decodes a PN counter get or add (routed to its target replica, `Route::Replica`).
pub fn decode_pn_counter<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    let (name, op, observed, target) = match message.message_type() {
        PnCounterGet::TYPE => {
            let r = PnCounterGet::decode(message)?;
            (r.name, PnCounterOp::Get, r.replica_timestamps.0, r.target_replica_uuid)
        }
        PnCounterAdd::TYPE => {
            let r = PnCounterAdd::decode(message)?;
            let op = PnCounterOp::Add { delta: r.delta, get_before_update: r.get_before_update };
            (r.name, op, r.replica_timestamps.0, r.target_replica_uuid)
        }
        other => unreachable!("{other} has a PN counter row but no decoder"),
    };
    Ok(Request::PnCounter(PnCounterRequest { name: Cow::Borrowed(name), op, observed, target }))
}

/// Decodes a partition-bound map request.
pub fn decode_map_request<'a>(message: &Message<'a>) -> Result<MapRequest<'a>, DecodeError> {
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

macro_rules! fields {
    ($r:ident) => {
        ($r.key, $r.value, $r.thread_id, $r.ttl)
    };
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

/// Decodes a queue request (every one names its queue first).
pub fn decode_queue_request<'a>(message: &Message<'a>) -> Result<QueueRequest<'a>, DecodeError> {
    let request = |name: &'a str, op| QueueRequest { name: Cow::Borrowed(name), op };
    Ok(match message.message_type() {
        QueueOffer::TYPE => {
            let r = QueueOffer::decode(message)?;
            request(r.name, QueueOp::Offer { value: blob(r.value), timeout_ms: r.timeout_millis, answers_bool: true })
        }
        QueuePut::TYPE => {
            let r = QueuePut::decode(message)?;
            request(r.name, QueueOp::Offer { value: blob(r.value), timeout_ms: -1, answers_bool: false })
        }
        QueuePoll::TYPE => {
            let r = QueuePoll::decode(message)?;
            request(r.name, QueueOp::Poll { timeout_ms: r.timeout_millis })
        }
        QueueTake::TYPE => request(QueueTake::decode(message)?.name, QueueOp::Poll { timeout_ms: -1 }),
        QueuePeek::TYPE => request(QueuePeek::decode(message)?.name, QueueOp::Peek),
        QueueSize::TYPE => request(QueueSize::decode(message)?.name, QueueOp::Size),
        QueueIsEmpty::TYPE => request(QueueIsEmpty::decode(message)?.name, QueueOp::IsEmpty),
        QueueRemainingCapacity::TYPE => {
            request(QueueRemainingCapacity::decode(message)?.name, QueueOp::RemainingCapacity)
        }
        QueueIterator::TYPE => request(QueueIterator::decode(message)?.name, QueueOp::Iterator),
        QueueClear::TYPE => request(QueueClear::decode(message)?.name, QueueOp::Clear),
        QueueDrainTo::TYPE => request(QueueDrainTo::decode(message)?.name, QueueOp::Drain { max: None }),
        QueueDrainToMaxSize::TYPE => {
            let r = QueueDrainToMaxSize::decode(message)?;
            request(r.name, QueueOp::Drain { max: Some(r.max_size) })
        }
        QueueContains::TYPE => {
            let r = QueueContains::decode(message)?;
            request(r.name, QueueOp::Contains { value: blob(r.value) })
        }
        QueueRemove::TYPE => {
            let r = QueueRemove::decode(message)?;
            request(r.name, QueueOp::Remove { value: blob(r.value) })
        }
        QueueContainsAll::TYPE => {
            let r = QueueContainsAll::decode(message)?;
            request(r.name, QueueOp::ContainsAll { values: list(r.data_list) })
        }
        QueueAddAll::TYPE => {
            let r = QueueAddAll::decode(message)?;
            request(r.name, QueueOp::AddAll { values: list(r.data_list) })
        }
        QueueCompareAndRemoveAll::TYPE => {
            let r = QueueCompareAndRemoveAll::decode(message)?;
            request(r.name, QueueOp::RemoveAll { values: list(r.data_list) })
        }
        QueueCompareAndRetainAll::TYPE => {
            let r = QueueCompareAndRetainAll::decode(message)?;
            request(r.name, QueueOp::RetainAll { values: list(r.data_list) })
        }
        other => unreachable!("{other} has a queue row but no decoder"),
    })
}

/// Encodes replies as the responses to one request.
#[derive(Debug)]
pub struct HazelcastReply<'o> {
    pub out: &'o mut Vec<u8>,
    pub response_type: MessageType,
    pub correlation_id: i64,
}

impl Replies for HazelcastReply<'_> {
    fn reply(&mut self, reply: Reply<'_>) {
        let (out, ty, id) = (&mut *self.out, self.response_type, self.correlation_id);
        match reply {
            Reply::Empty => {
                EmptyResponse {}.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Bool(response) => {
                BoolResponse { response }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Value(value) => {
                NullableDataResponse { response: value.map(Data) }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Deleted(removed) => {
                DeleteResponse { response: Some(removed) }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::EntryView(view) => {
                let max_idle = view.as_ref().map_or(0, |view| view.max_idle);
                EntryViewResponse { max_idle, response: view }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Int(response) => {
                IntResponse { response }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Long(response) => {
                LongResponse { response }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::ReadMany { items, next_sequence } => {
                let sequences = items.iter().map(|(sequence, _)| *sequence).collect();
                RingbufferReadManyResponse {
                    read_count: items.len() as i32,
                    next_seq: next_sequence,
                    items: items.into_iter().map(|(_, item)| Data(item)).collect(),
                    item_seqs: Some(Packed(sequences)),
                }
                .encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Values(values) => {
                DataListResponse { response: values.into_iter().map(Data).collect() }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Entries(entries) => {
                let response = entries.into_iter().map(|(key, value)| (Data(key), Data(value))).collect();
                EntryListResponse { response }.encode(out, ty, id, BACKUP_ACKS);
            }
        }
    }
}

/// Encodes `reply` for a waiting request: its connection and the response bytes.
pub fn encode_answer(reply_to: &ReplyTo, reply: Reply<'_>) -> (Arc<ConnectionShared>, Vec<u8>) {
    encode_outcome(reply_to, Ok(reply))
}

/// Encodes a waiting request's answer or failure: its connection and the response bytes.
pub fn encode_outcome(reply_to: &ReplyTo, outcome: Result<Reply<'_>, OpError>) -> (Arc<ConnectionShared>, Vec<u8>) {
    let mut out = Vec::new();
    let (response_type, correlation_id) = (reply_to.response_type, reply_to.correlation_id);
    match outcome {
        Ok(reply) => HazelcastReply { out: &mut out, response_type, correlation_id }.reply(reply),
        Err(failure) => write_error(&mut out, correlation_id, &failure),
    }
    (reply_to.connection.clone(), out)
}

/// The Hazelcast error code (and so the exception clients raise) of each kind of failure.
pub fn error_code(kind: ErrorKind) -> ErrorCode {
    match kind {
        ErrorKind::NullArgument => error::NULL_POINTER,
        ErrorKind::IllegalArgument => error::ILLEGAL_ARGUMENT,
        ErrorKind::NotLockOwner => error::ILLEGAL_MONITOR_STATE,
        ErrorKind::PartitionMigrating => error::PARTITION_MIGRATING,
        ErrorKind::IllegalState => error::ILLEGAL_STATE,
        ErrorKind::Refused => error::HAZELCAST,
        ErrorKind::StaleSequence => error::STALE_SEQUENCE,
        ErrorKind::Unsupported => error::UNSUPPORTED_OPERATION,
        ErrorKind::ClassCast => error::CLASS_CAST,
        ErrorKind::Destroyed => error::DISTRIBUTED_OBJECT_DESTROYED,
        ErrorKind::IndexOutOfBounds => error::INDEX_OUT_OF_BOUNDS,
        ErrorKind::TargetNotReplica => error::TARGET_NOT_REPLICA,
        ErrorKind::ConsistencyLost => error::CONSISTENCY_LOST,
        ErrorKind::TargetNotMember => error::TARGET_NOT_MEMBER,
        ErrorKind::StackOverflow => error::STACK_OVERFLOW,
    }
}

/// Replaces what an operation wrote from `start` on with the Error response for `failure`
/// (an operation that failed after answering part of its work answers only the error).
pub fn replace_with_error(out: &mut Vec<u8>, start: usize, correlation_id: i64, failure: &OpError) {
    out.truncate(start);
    write_error(out, correlation_id, failure);
}

/// Appends the Error response for `failure`.
pub fn write_error(out: &mut Vec<u8>, correlation_id: i64, failure: &OpError) {
    let holder = ErrorHolder { code: error_code(failure.kind), message: Some(&failure.message) };
    write_error_response(out, correlation_id, &[holder]);
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

    #[test]
    fn replies_and_errors_encode_as_hazelcast_answers() {
        let mut out = Vec::new();
        let mut sink = HazelcastReply { out: &mut out, response_type: MapGet::RESPONSE, correlation_id: 77 };
        sink.reply(Reply::Value(Some(b"v")));
        let message = Message::parse(&out).unwrap();
        assert_eq!((message.message_type(), message.correlation_id()), (MapGet::RESPONSE, 77));
        assert_eq!(NullableDataResponse::decode(&message).unwrap().response, Some(Data(b"v")));
        let mut out = Vec::new();
        write_error(&mut out, 5, &OpError::new(ErrorKind::NotLockOwner, "not yours"));
        let chain = error::read_error_response(&Message::parse(&out).unwrap()).unwrap();
        assert_eq!((chain[0].code, chain[0].message.as_deref()), (26, Some("not yours")));
    }
}
