//! The list's and the set's rows of the operation table and their decoders.

use crate::engine::request::Request;
use crate::engine::request::*;
use crate::engine::wide::objects::classify_listener;
use crate::route::row::{row, wide_row, Operation, A, S, W};
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{Data, DecodeError, Message};
use std::borrow::Cow;

/// In the partition of the collection's name; item listeners on every reactor.
pub(crate) static ROWS: &[Operation] = &[
    row!(ListAdd, Partition, W.with(A).with(S), decode_collection),
    row!(ListAddAll, Partition, W.with(A).with(S), decode_collection),
    row!(ListAddWithIndex, Partition, W.with(A).with(S), decode_collection),
    row!(ListAddAllWithIndex, Partition, W.with(A).with(S), decode_collection),
    row!(ListSet, Partition, W.with(A).with(S), decode_collection),
    row!(ListRemove, Partition, W.with(S), decode_collection),
    row!(ListRemoveWithIndex, Partition, W.with(S), decode_collection),
    row!(ListCompareAndRemoveAll, Partition, W.with(S), decode_collection),
    row!(ListCompareAndRetainAll, Partition, W.with(S), decode_collection),
    row!(ListClear, Partition, W.with(S), decode_collection),
    row!(ListSize, Partition, S, decode_collection),
    row!(ListIsEmpty, Partition, S, decode_collection),
    row!(ListContains, Partition, S, decode_collection),
    row!(ListContainsAll, Partition, S, decode_collection),
    row!(ListGetAll, Partition, S, decode_collection),
    row!(ListIterator, Partition, S, decode_collection),
    row!(ListListIterator, Partition, S, decode_collection),
    row!(ListGet, Partition, S, decode_collection),
    row!(ListIndexOf, Partition, S, decode_collection),
    row!(ListLastIndexOf, Partition, S, decode_collection),
    row!(ListSub, Partition, S, decode_collection),
    wide_row!(ListAddListener, S, classify_listener),
    wide_row!(ListRemoveListener, S, classify_listener),
    row!(SetAdd, Partition, W.with(A).with(S), decode_collection),
    row!(SetAddAll, Partition, W.with(A).with(S), decode_collection),
    row!(SetRemove, Partition, W.with(S), decode_collection),
    row!(SetCompareAndRemoveAll, Partition, W.with(S), decode_collection),
    row!(SetCompareAndRetainAll, Partition, W.with(S), decode_collection),
    row!(SetClear, Partition, W.with(S), decode_collection),
    row!(SetSize, Partition, S, decode_collection),
    row!(SetIsEmpty, Partition, S, decode_collection),
    row!(SetContains, Partition, S, decode_collection),
    row!(SetContainsAll, Partition, S, decode_collection),
    row!(SetGetAll, Partition, S, decode_collection),
    wide_row!(SetAddListener, S, classify_listener),
    wide_row!(SetRemoveListener, S, classify_listener),
];

/// The decoder of the operation table's list and set rows.
pub(crate) fn decode_collection<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
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
