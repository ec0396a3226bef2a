//! Partition-bound map operations: run on the thread that owns the partition.
//!
//! Each function decodes one request, applies it to the partition's store and appends the
//! response to `out`. Semantics follow Hazelcast 5.6 (return values, what counts as present,
//! the error for a null key or value). Keys and values compare as serialized bytes.

use crate::store::PartitionStore;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorHolder};
use ferrogrid_protocol::{Data, DecodeError, Message, MessageType};

/// Backup acks the response tells the client to wait for; 0 until backups exist.
const BACKUP_ACKS: u8 = 0;

/// True when `message_type` is a map operation bound to one partition.
pub fn is_partition_operation(message_type: MessageType) -> bool {
    PARTITION_OPERATIONS.contains(&message_type)
}

const PARTITION_OPERATIONS: &[MessageType] = &[
    MapPut::TYPE,
    MapGet::TYPE,
    MapRemove::TYPE,
    MapReplace::TYPE,
    MapReplaceIfSame::TYPE,
    MapContainsKey::TYPE,
    MapRemoveIfSame::TYPE,
    MapDelete::TYPE,
    MapTryRemove::TYPE,
    MapTryPut::TYPE,
    MapPutTransient::TYPE,
    MapPutIfAbsent::TYPE,
    MapSet::TYPE,
    MapGetEntryView::TYPE,
    MapEvict::TYPE,
    MapGetAll::TYPE,
    MapPutAll::TYPE,
    MapSetTtl::TYPE,
    MapPutWithMaxIdle::TYPE,
    MapPutTransientWithMaxIdle::TYPE,
    MapPutIfAbsentWithMaxIdle::TYPE,
    MapSetWithMaxIdle::TYPE,
];

/// A request that is well-formed but cannot be served; answered with an Error response.
struct Refusal {
    code: error::ErrorCode,
    message: String,
}

fn null_check(data: Data<'_>, what: &str) -> Result<(), Refusal> {
    match data.type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(Refusal { code: error::NULL_POINTER, message: format!("Null {what} is not allowed!") }),
    }
}

/// Expiry arrives with the expiry issue; until then a TTL or max-idle is refused, not ignored.
fn no_expiry(ttl_ms: i64, max_idle_ms: i64) -> Result<(), Refusal> {
    if ttl_ms > 0 || max_idle_ms > 0 {
        return Err(Refusal {
            code: error::UNSUPPORTED_OPERATION,
            message: "ferrogrid does not support per-entry TTL or max-idle yet".into(),
        });
    }
    Ok(())
}

/// Runs a partition-bound map request. `Err` means the request is malformed (the caller
/// closes the connection); semantic failures are written to `out` as Error responses.
pub fn execute(partition: &mut PartitionStore, message: &Message<'_>, out: &mut Vec<u8>) -> Result<(), DecodeError> {
    let correlation_id = message.correlation_id();
    let start = out.len();
    match apply(partition, message, out) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(refusal)) => {
            out.truncate(start);
            let holder = ErrorHolder { code: refusal.code, message: Some(&refusal.message) };
            write_error_response(out, correlation_id, &[holder]);
            Ok(())
        }
        Err(decode_error) => {
            out.truncate(start);
            Err(decode_error)
        }
    }
}

fn data_response(out: &mut Vec<u8>, response_type: MessageType, correlation_id: i64, value: Option<&[u8]>) {
    NullableDataResponse { response: value.map(Data) }.encode(out, response_type, correlation_id, BACKUP_ACKS);
}

fn bool_response(out: &mut Vec<u8>, response_type: MessageType, correlation_id: i64, value: bool) {
    BoolResponse { response: value }.encode(out, response_type, correlation_id, BACKUP_ACKS);
}

fn empty_response(out: &mut Vec<u8>, response_type: MessageType, correlation_id: i64) {
    EmptyResponse {}.encode(out, response_type, correlation_id, BACKUP_ACKS);
}

/// Stores key → value after the null checks; returns the previous value.
fn store(
    partition: &mut PartitionStore,
    name: &str,
    key: Data<'_>,
    value: Data<'_>,
) -> Result<Option<Box<[u8]>>, Refusal> {
    null_check(key, "key")?;
    null_check(value, "value")?;
    Ok(partition.map_mut(name).put(key.0, value.0))
}

fn current<'s>(partition: &'s PartitionStore, name: &str, key: Data<'_>) -> Result<Option<&'s [u8]>, Refusal> {
    null_check(key, "key")?;
    Ok(partition.map(name).and_then(|map| map.get(key.0)).map(|record| &*record.value))
}

fn take(partition: &mut PartitionStore, name: &str, key: Data<'_>) -> Result<Option<Box<[u8]>>, Refusal> {
    null_check(key, "key")?;
    Ok(partition.map_mut(name).remove(key.0))
}

type Outcome = Result<Result<(), Refusal>, DecodeError>;

fn apply(partition: &mut PartitionStore, message: &Message<'_>, out: &mut Vec<u8>) -> Outcome {
    let corr = message.correlation_id();
    let ty = message.message_type();
    let result = match ty {
        MapGet::TYPE => {
            let request = MapGet::decode(message)?;
            current(partition, request.name, request.key).map(|value| data_response(out, ty.response(), corr, value))
        }
        MapPut::TYPE => {
            let r = MapPut::decode(message)?;
            put_like(partition, out, ty, corr, (r.name, r.key, r.value), r.ttl, -1, Reply::Previous)
        }
        MapPutWithMaxIdle::TYPE => {
            let r = MapPutWithMaxIdle::decode(message)?;
            put_like(partition, out, ty, corr, (r.name, r.key, r.value), r.ttl, r.max_idle, Reply::Previous)
        }
        MapSet::TYPE => {
            let r = MapSet::decode(message)?;
            put_like(partition, out, ty, corr, (r.name, r.key, r.value), r.ttl, -1, Reply::Empty)
        }
        MapSetWithMaxIdle::TYPE => {
            let r = MapSetWithMaxIdle::decode(message)?;
            put_like(partition, out, ty, corr, (r.name, r.key, r.value), r.ttl, r.max_idle, Reply::Null)
        }
        MapPutTransient::TYPE => {
            let r = MapPutTransient::decode(message)?;
            put_like(partition, out, ty, corr, (r.name, r.key, r.value), r.ttl, -1, Reply::Empty)
        }
        MapPutTransientWithMaxIdle::TYPE => {
            let r = MapPutTransientWithMaxIdle::decode(message)?;
            put_like(partition, out, ty, corr, (r.name, r.key, r.value), r.ttl, r.max_idle, Reply::Null)
        }
        MapTryPut::TYPE => {
            let r = MapTryPut::decode(message)?;
            put_like(partition, out, ty, corr, (r.name, r.key, r.value), -1, -1, Reply::True)
        }
        MapPutIfAbsent::TYPE => {
            let r = MapPutIfAbsent::decode(message)?;
            put_if_absent(partition, out, ty, corr, (r.name, r.key, r.value), r.ttl, -1)
        }
        MapPutIfAbsentWithMaxIdle::TYPE => {
            let r = MapPutIfAbsentWithMaxIdle::decode(message)?;
            put_if_absent(partition, out, ty, corr, (r.name, r.key, r.value), r.ttl, r.max_idle)
        }
        MapRemove::TYPE => {
            let r = MapRemove::decode(message)?;
            take(partition, r.name, r.key).map(|old| data_response(out, ty.response(), corr, old.as_deref()))
        }
        MapDelete::TYPE => {
            let r = MapDelete::decode(message)?;
            take(partition, r.name, r.key).map(|old| {
                DeleteResponse { response: Some(old.is_some()) }.encode(out, ty.response(), corr, BACKUP_ACKS);
            })
        }
        MapTryRemove::TYPE => {
            let r = MapTryRemove::decode(message)?;
            take(partition, r.name, r.key).map(|old| bool_response(out, ty.response(), corr, old.is_some()))
        }
        MapEvict::TYPE => {
            let r = MapEvict::decode(message)?;
            take(partition, r.name, r.key).map(|old| bool_response(out, ty.response(), corr, old.is_some()))
        }
        MapRemoveIfSame::TYPE => {
            let r = MapRemoveIfSame::decode(message)?;
            remove_if_same(partition, r.name, r.key, r.value).map(|done| bool_response(out, ty.response(), corr, done))
        }
        MapContainsKey::TYPE => {
            let r = MapContainsKey::decode(message)?;
            current(partition, r.name, r.key).map(|value| bool_response(out, ty.response(), corr, value.is_some()))
        }
        MapReplace::TYPE => {
            let r = MapReplace::decode(message)?;
            replace(partition, r.name, r.key, None, r.value)
                .map(|old| data_response(out, ty.response(), corr, old.as_deref()))
        }
        MapReplaceIfSame::TYPE => {
            let r = MapReplaceIfSame::decode(message)?;
            replace(partition, r.name, r.key, Some(r.test_value), r.value)
                .map(|old| bool_response(out, ty.response(), corr, old.is_some()))
        }
        MapGetEntryView::TYPE => {
            let r = MapGetEntryView::decode(message)?;
            entry_view(partition, r.name, r.key, out, ty.response(), corr)
        }
        MapGetAll::TYPE => {
            let r = MapGetAll::decode(message)?;
            get_all(partition, r.name, &r.keys, out, ty.response(), corr)
        }
        MapPutAll::TYPE => {
            let r = MapPutAll::decode(message)?;
            put_all(partition, r.name, &r.entries).map(|()| empty_response(out, ty.response(), corr))
        }
        MapSetTtl::TYPE => Err(Refusal {
            code: error::UNSUPPORTED_OPERATION,
            message: "ferrogrid does not support per-entry TTL yet (Map.SetTtl)".into(),
        }),
        other => unreachable!("{other} is not a partition operation"),
    };
    Ok(result)
}

/// What a put-like request answers with.
#[derive(Clone, Copy)]
enum Reply {
    /// The previous value (Put).
    Previous,
    /// No fields (Set, PutTransient).
    Empty,
    /// A null Data (the WithMaxIdle variants of Set and PutTransient).
    Null,
    /// `true` (TryPut: no lock can be held yet, so it always succeeds).
    True,
}

#[allow(clippy::too_many_arguments)]
fn put_like(
    partition: &mut PartitionStore,
    out: &mut Vec<u8>,
    ty: MessageType,
    corr: i64,
    (name, key, value): (&str, Data<'_>, Data<'_>),
    ttl_ms: i64,
    max_idle_ms: i64,
    reply: Reply,
) -> Result<(), Refusal> {
    no_expiry(ttl_ms, max_idle_ms)?;
    let previous = store(partition, name, key, value)?;
    match reply {
        Reply::Previous => data_response(out, ty.response(), corr, previous.as_deref()),
        Reply::Empty => empty_response(out, ty.response(), corr),
        Reply::Null => data_response(out, ty.response(), corr, None),
        Reply::True => bool_response(out, ty.response(), corr, true),
    }
    Ok(())
}

fn put_if_absent(
    partition: &mut PartitionStore,
    out: &mut Vec<u8>,
    ty: MessageType,
    corr: i64,
    (name, key, value): (&str, Data<'_>, Data<'_>),
    ttl_ms: i64,
    max_idle_ms: i64,
) -> Result<(), Refusal> {
    no_expiry(ttl_ms, max_idle_ms)?;
    null_check(value, "value")?;
    if let Some(existing) = current(partition, name, key)? {
        data_response(out, ty.response(), corr, Some(existing));
        return Ok(());
    }
    partition.map_mut(name).put(key.0, value.0);
    data_response(out, ty.response(), corr, None);
    Ok(())
}

fn remove_if_same(partition: &mut PartitionStore, name: &str, key: Data<'_>, value: Data<'_>) -> Result<bool, Refusal> {
    null_check(value, "value")?;
    if current(partition, name, key)? != Some(value.0) {
        return Ok(false);
    }
    Ok(take(partition, name, key)?.is_some())
}

/// Replaces the value when the key is present (and equals `expected`, if given); returns
/// the replaced value.
fn replace(
    partition: &mut PartitionStore,
    name: &str,
    key: Data<'_>,
    expected: Option<Data<'_>>,
    value: Data<'_>,
) -> Result<Option<Box<[u8]>>, Refusal> {
    null_check(value, "value")?;
    if let Some(expected) = expected {
        null_check(expected, "value")?;
    }
    match current(partition, name, key)? {
        None => return Ok(None),
        Some(present) if expected.is_some_and(|expected| expected.0 != present) => return Ok(None),
        Some(_) => {}
    }
    store(partition, name, key, value)
}

fn entry_view(
    partition: &mut PartitionStore,
    name: &str,
    key: Data<'_>,
    out: &mut Vec<u8>,
    response_type: MessageType,
    corr: i64,
) -> Result<(), Refusal> {
    null_check(key, "key")?;
    let Some(record) = partition.map(name).and_then(|map| map.get(key.0)) else {
        EntryViewResponse { max_idle: 0, response: None }.encode(out, response_type, corr, BACKUP_ACKS);
        return Ok(());
    };
    // With per-entry statistics off (Hazelcast's default) the member reports −1 for times
    // and hits, and Long.MAX_VALUE for ttl, max-idle and expiration of an entry without expiry.
    let view = EntryView {
        key,
        value: Data(&record.value),
        cost: estimated_cost(key.0.len(), record.value.len()),
        creation_time: -1,
        expiration_time: i64::MAX,
        hits: -1,
        last_access_time: -1,
        last_stored_time: -1,
        last_update_time: -1,
        version: record.version,
        ttl: i64::MAX,
        max_idle: i64::MAX,
    };
    EntryViewResponse { max_idle: i64::MAX, response: Some(view) }.encode(out, response_type, corr, BACKUP_ACKS);
    Ok(())
}

/// Hazelcast's heap-cost estimate of an entry: both blobs plus a fixed record overhead
/// (66 for a 14-byte key and a 14-byte value on a 5.6 member).
fn estimated_cost(key_bytes: usize, value_bytes: usize) -> i64 {
    (key_bytes + value_bytes + 38) as i64
}

fn get_all(
    partition: &mut PartitionStore,
    name: &str,
    keys: &[Data<'_>],
    out: &mut Vec<u8>,
    response_type: MessageType,
    corr: i64,
) -> Result<(), Refusal> {
    for key in keys {
        null_check(*key, "key")?;
    }
    let map = partition.map(name);
    let found: Vec<(Data<'_>, Data<'_>)> = keys
        .iter()
        .filter_map(|key| map.and_then(|map| map.get(key.0)).map(|record| (*key, Data(&record.value))))
        .collect();
    EntryListResponse { response: found }.encode(out, response_type, corr, BACKUP_ACKS);
    Ok(())
}

fn put_all(partition: &mut PartitionStore, name: &str, entries: &[(Data<'_>, Data<'_>)]) -> Result<(), Refusal> {
    for (key, value) in entries {
        null_check(*key, "key")?;
        null_check(*value, "value")?;
    }
    let map = partition.map_mut(name);
    for (key, value) in entries {
        map.put(key.0, value.0);
    }
    Ok(())
}
