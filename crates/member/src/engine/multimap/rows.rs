//! The multimap's rows of the operation table and their decoder.

use crate::engine::multimap::wide::classify_multimap;
use crate::engine::request::Request;
use crate::engine::request::*;
use crate::route::row::{row, wide_row, Operation, A, S, W};
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message};
use std::borrow::Cow;

/// Key operations in the partition of the key; the rest over every partition (`wide.rs`).
pub(crate) static ROWS: &[Operation] = &[
    row!(MultiMapPut, Partition, W.with(A).with(S), decode_multimap),
    row!(MultiMapPutAll, Partition, W.with(A).with(S), decode_multimap),
    row!(MultiMapRemove, Partition, W.with(S), decode_multimap),
    row!(MultiMapDelete, Partition, W.with(S), decode_multimap),
    row!(MultiMapRemoveEntry, Partition, W.with(S), decode_multimap),
    row!(MultiMapGet, Partition, S, decode_multimap),
    row!(MultiMapContainsKey, Partition, S, decode_multimap),
    row!(MultiMapContainsEntry, Partition, S, decode_multimap),
    row!(MultiMapValueCount, Partition, S, decode_multimap),
    row!(MultiMapLock, Partition, S, decode_multimap),
    row!(MultiMapTryLock, Partition, S, decode_multimap),
    row!(MultiMapUnlock, Partition, S, decode_multimap),
    row!(MultiMapForceUnlock, Partition, S, decode_multimap),
    row!(MultiMapIsLocked, Partition, S, decode_multimap),
    wide_row!(MultiMapKeySet, S, classify_multimap),
    wide_row!(MultiMapValues, S, classify_multimap),
    wide_row!(MultiMapEntrySet, S, classify_multimap),
    wide_row!(MultiMapSize, S, classify_multimap),
    wide_row!(MultiMapContainsValue, S, classify_multimap),
    wide_row!(MultiMapClear, W.with(S), classify_multimap),
    wide_row!(MultiMapAddEntryListener, S, classify_multimap),
    wide_row!(MultiMapAddEntryListenerToKey, S, classify_multimap),
    wide_row!(MultiMapRemoveEntryListener, S, classify_multimap),
];

/// The decoder of the operation table's multimap key rows.
pub(crate) fn decode_multimap<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
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
