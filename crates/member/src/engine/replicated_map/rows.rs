//! The replicated map's rows of the operation table and their decoder.

use crate::engine::replicated_map::wide::classify;
use crate::engine::request::Request;
use crate::engine::request::*;
use crate::route::row::{row, wide_row, Operation, A, S, W};
use crate::route::wire::blob;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message};
use std::borrow::Cow;

/// Key writes on the owner of the key's partition, which sends them to every member; key
/// reads on the copy of the member asked; the map-wide reads over this member's copy, the
/// map-wide writes (putAll, clear) on every member's owned partitions.
pub(crate) static ROWS: &[Operation] = &[
    row!(ReplicatedMapPut, Partition, W.with(A).with(S), decode_replicated_map),
    row!(ReplicatedMapRemove, Partition, W.with(S), decode_replicated_map),
    row!(ReplicatedMapGet, LocalCopy, S, decode_replicated_map),
    row!(ReplicatedMapContainsKey, LocalCopy, S, decode_replicated_map),
    wide_row!(ReplicatedMapSize, S, classify),
    wide_row!(ReplicatedMapIsEmpty, S, classify),
    wide_row!(ReplicatedMapContainsValue, S, classify),
    wide_row!(ReplicatedMapKeySet, S, classify),
    wide_row!(ReplicatedMapValues, S, classify),
    wide_row!(ReplicatedMapEntrySet, S, classify),
    wide_row!(ReplicatedMapPutAll, W.with(A).with(S), classify),
    wide_row!(ReplicatedMapClear, W.with(S), classify),
    wide_row!(ReplicatedMapAddEntryListener, S, classify),
    wide_row!(ReplicatedMapAddEntryListenerToKey, S, classify),
    wide_row!(ReplicatedMapAddEntryListenerWithPredicate, S, classify),
    wide_row!(ReplicatedMapAddEntryListenerToKeyWithPredicate, S, classify),
    wide_row!(ReplicatedMapRemoveEntryListener, S, classify),
];

/// The decoder of the operation table's replicated map key rows.
pub(crate) fn decode_replicated_map<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
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
