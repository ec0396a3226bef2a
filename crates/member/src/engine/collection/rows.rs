//! The list's and the set's rows of the operation table, each with its decoder.

use crate::engine::collection::request::{CollectionOp as Op, CollectionRequest, CollectionTxnOp as TxnOp};
use crate::engine::collection::store::{self as collection, CollectionContext};
use crate::engine::listeners::{Listener, Registry};
use crate::engine::request::Replies;
use crate::engine::structures::ObjectKind;
use crate::engine::wide::objects::destroy_object;
use crate::engine::wide::objects::{add_listener, listener, remove_listener};
use crate::engine::wide::WideRequest;
use crate::partition::objects::kind;
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::row::{row, txn_row, wide_row, Operation, A, S, W};
use crate::route::wire;
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use std::borrow::Cow;

/// The list's: in the partition of its name; item listeners on every reactor.
pub(crate) static LIST_ROWS: &[Operation] = &[
    row!(ListAdd, Partition, W.with(A).with(S), |r| {
        list_request(r.name, Op::Add { value: blob(r.value), index: None })
    }),
    row!(ListAddAll, Partition, W.with(A).with(S), |r| {
        list_request(r.name, Op::AddAll { values: list(r.value_list), index: None })
    }),
    row!(ListAddWithIndex, Partition, W.with(A).with(S), |r| {
        list_request(r.name, Op::Add { value: blob(r.value), index: Some(r.index) })
    }),
    row!(ListAddAllWithIndex, Partition, W.with(A).with(S), |r| {
        list_request(r.name, Op::AddAll { values: list(r.value_list), index: Some(r.index) })
    }),
    row!(ListSet, Partition, W.with(A).with(S), |r| {
        list_request(r.name, Op::Replace { index: r.index, value: blob(r.value) })
    }),
    row!(ListRemove, Partition, W.with(S), |r| list_request(r.name, Op::Remove { value: blob(r.value) })),
    row!(ListRemoveWithIndex, Partition, W.with(S), |r| list_request(r.name, Op::RemoveAt { index: r.index })),
    row!(ListCompareAndRemoveAll, Partition, W.with(S), |r| {
        list_request(r.name, Op::RemoveAll { values: list(r.values) })
    }),
    row!(ListCompareAndRetainAll, Partition, W.with(S), |r| {
        list_request(r.name, Op::RetainAll { values: list(r.values) })
    }),
    row!(ListClear, Partition, W.with(S), |r| list_request(r.name, Op::Clear)),
    row!(ListSize, Partition, S, |r| list_request(r.name, Op::Size)),
    row!(ListIsEmpty, Partition, S, |r| list_request(r.name, Op::IsEmpty)),
    row!(ListContains, Partition, S, |r| list_request(r.name, Op::Contains { value: blob(r.value) })),
    row!(ListContainsAll, Partition, S, |r| list_request(r.name, Op::ContainsAll { values: list(r.values) })),
    row!(ListGetAll, Partition, S, |r| list_request(r.name, Op::GetAll)),
    row!(ListIterator, Partition, S, |r| list_request(r.name, Op::GetAll)),
    row!(ListListIterator, Partition, S, |r| list_request(r.name, Op::Sub { from: r.index, to: -1 })),
    row!(ListGet, Partition, S, |r| list_request(r.name, Op::Get { index: r.index })),
    row!(ListIndexOf, Partition, S, |r| list_request(r.name, Op::IndexOf { value: blob(r.value), last: false })),
    row!(ListLastIndexOf, Partition, S, |r| list_request(r.name, Op::IndexOf { value: blob(r.value), last: true })),
    row!(ListSub, Partition, S, |r| list_request(r.name, Op::Sub { from: r.from, to: r.to })),
    // TransactionalList: admitted by the transaction's coordinator, run here (`txn.rs`).
    txn_row!(TransactionalListAdd, W.with(A).with(S), |r| list_txn(
        r.name,
        r.txn_id,
        TxnOp::Add { value: blob(r.item) }
    )),
    txn_row!(TransactionalListRemove, W.with(S), |r| list_txn(r.name, r.txn_id, TxnOp::Remove { value: blob(r.item) })),
    txn_row!(TransactionalListSize, S, |r| list_txn(r.name, r.txn_id, TxnOp::Size)),
    wide_row!(ListAddListener, S, |message, connection| {
        let r = ListAddListener::decode(message)?;
        let listener =
            Listener { include_value: r.include_value, local_only: r.local_only, ..listener(message, connection) };
        add_listener(Registry::ListItems, r.name, listener)
    }),
    wide_row!(ListRemoveListener, S, |message, _| {
        let r = ListRemoveListener::decode(message)?;
        remove_listener(Registry::ListItems, r.name, r.registration_id)
    }),
];

/// The set's: in the partition of its name; item listeners on every reactor.
pub(crate) static SET_ROWS: &[Operation] = &[
    row!(SetAdd, Partition, W.with(A).with(S), |r| set_request(r.name, Op::Add { value: blob(r.value), index: None })),
    row!(SetAddAll, Partition, W.with(A).with(S), |r| {
        set_request(r.name, Op::AddAll { values: list(r.value_list), index: None })
    }),
    row!(SetRemove, Partition, W.with(S), |r| set_request(r.name, Op::Remove { value: blob(r.value) })),
    row!(SetCompareAndRemoveAll, Partition, W.with(S), |r| {
        set_request(r.name, Op::RemoveAll { values: list(r.values) })
    }),
    row!(SetCompareAndRetainAll, Partition, W.with(S), |r| {
        set_request(r.name, Op::RetainAll { values: list(r.values) })
    }),
    row!(SetClear, Partition, W.with(S), |r| set_request(r.name, Op::Clear)),
    row!(SetSize, Partition, S, |r| set_request(r.name, Op::Size)),
    row!(SetIsEmpty, Partition, S, |r| set_request(r.name, Op::IsEmpty)),
    row!(SetContains, Partition, S, |r| set_request(r.name, Op::Contains { value: blob(r.value) })),
    row!(SetContainsAll, Partition, S, |r| set_request(r.name, Op::ContainsAll { values: list(r.items) })),
    row!(SetGetAll, Partition, S, |r| set_request(r.name, Op::GetAll)),
    // TransactionalSet: admitted by the transaction's coordinator, run here (`txn.rs`).
    txn_row!(TransactionalSetAdd, W.with(A).with(S), |r| set_txn(r.name, r.txn_id, TxnOp::Add { value: blob(r.item) })),
    txn_row!(TransactionalSetRemove, W.with(S), |r| set_txn(r.name, r.txn_id, TxnOp::Remove { value: blob(r.item) })),
    txn_row!(TransactionalSetSize, S, |r| set_txn(r.name, r.txn_id, TxnOp::Size)),
    wide_row!(SetAddListener, S, |message, connection| {
        let r = SetAddListener::decode(message)?;
        let listener =
            Listener { include_value: r.include_value, local_only: r.local_only, ..listener(message, connection) };
        add_listener(Registry::SetItems, r.name, listener)
    }),
    wide_row!(SetRemoveListener, S, |message, _| {
        let r = SetRemoveListener::decode(message)?;
        remove_listener(Registry::SetItems, r.name, r.registration_id)
    }),
];

/// A request on the list `name`.
fn list_request<'a>(name: &'a str, op: Op<'a>) -> CollectionRequest<'a> {
    CollectionRequest { name: Cow::Borrowed(name), set: false, op }
}

/// A request on the set `name`.
fn set_request<'a>(name: &'a str, op: Op<'a>) -> CollectionRequest<'a> {
    CollectionRequest { name: Cow::Borrowed(name), set: true, op }
}

/// A request of transaction `txn` on the list `name`.
fn list_txn<'a>(name: &'a str, txn: Option<ferrogrid_protocol::Uuid>, op: TxnOp<'a>) -> CollectionRequest<'a> {
    list_request(name, Op::Txn { txn: txn.unwrap_or_default(), op })
}

/// A request of transaction `txn` on the set `name`.
fn set_txn<'a>(name: &'a str, txn: Option<ferrogrid_protocol::Uuid>, op: TxnOp<'a>) -> CollectionRequest<'a> {
    set_request(name, Op::Txn { txn: txn.unwrap_or_default(), op })
}

/// A list or set request.
impl Execute for CollectionRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let request = self;
        let local = call.local;
        let partition_id = call.partition_id;
        let start = out.len();
        let name = &*request.name;
        let (partition, settings) = (&mut owner.partitions[local], &mut owner.settings);
        let (store, _) = if request.set {
            partition.store_mut::<kind::Set>(name, settings)
        } else {
            partition.store_mut::<kind::List>(name, settings)
        };
        let (listeners, outbox) = (&mut owner.listeners, &mut owner.outbox);
        let mut ctx = CollectionContext { name, member: owner.member, partition_id, listeners, outbox };
        crate::engine::collection::txn::settle_ended(store, &mut ctx);
        let mut reply = call.replies(out);
        let answer: &mut dyn FnMut(crate::engine::request::Reply<'_>) = &mut |answer| reply.reply(answer);
        let done = match &request.op {
            Op::Txn { txn, op } => crate::engine::collection::txn::execute(store, *txn, op, answer),
            op => collection::execute(store, &mut ctx, op, answer),
        };
        if let Err(failure) = done {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        owner.replicate(partition_id, call, out, start, Vec::new());
    }
}

/// Destroy of a list or set: its items and its item listeners, everywhere.
pub(crate) fn destroy(kind: ObjectKind) -> WideRequest {
    let registry = if kind == ObjectKind::Set { Registry::SetItems } else { Registry::ListItems };
    destroy_object(Some(kind), Some(registry))
}
