//! TransactionalMap's rows of the operation table. The client sends them to the member that
//! coordinates its transaction (partition id −1); the transaction service
//! (`transaction/service.rs`) admits each and routes a key operation to its key's partition,
//! where its row decodes it into a [`MapOp::Txn`] the map's handler runs (`txn.rs`), and a read
//! over every partition to a fan-out of the row's classifier's operation (`txn_wide.rs`).

use crate::engine::map::request::{MapOp, MapRequest, TxnOp};
use crate::engine::map::txn_wide::{TxnRead, TxnView};
use crate::engine::wide::Classified;
use crate::route::row::{Flags, Operation, Route, TxnCall, A, L, S, W};
use crate::route::wire::blob;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::frame::TXN_BLOCKS_READS;
use ferrogrid_protocol::{Data, Uuid};
use std::borrow::Cow;

/// A key row: `key_row!(Codec, flags, |r| (key, op))`, decoded into a [`MapOp::Txn`].
macro_rules! key_row {
    ($codec:ident, $flags:expr, |$r:ident| $op:expr) => {
        Operation {
            message_type: $codec::TYPE,
            name: stringify!($codec),
            route: Route::Transaction(TxnCall::Key),
            flags: $flags,
            run: Some({
                const RUN: crate::route::row::Run = |message, owner, call, out| {
                    let $r = $codec::decode(message)?;
                    let (key, op): (Data<'_>, TxnOp<'_>) = $op;
                    let blocks_reads = message.initial_flags() & TXN_BLOCKS_READS != 0;
                    let request = txn_request(&$r.name, ($r.txn_id, $r.thread_id, blocks_reads), key, op);
                    crate::partition::owner::Execute::execute(&request, owner, call, out);
                    Ok(())
                };
                RUN
            }),
            replica: None,
            classify: None,
        }
    };
}

/// A read over every partition: `wide_row!(Codec, |r| view)`.
macro_rules! read_row {
    ($codec:ident, |$r:ident| $view:expr) => {
        Operation {
            message_type: $codec::TYPE,
            name: stringify!($codec),
            route: Route::Transaction(TxnCall::Wide),
            flags: S,
            run: None,
            replica: None,
            classify: Some({
                const CLASSIFY: crate::route::row::Classifier = |message, _| {
                    let $r = $codec::decode(message)?;
                    let view: TxnView = $view;
                    Classified::wide(TxnRead::new($r.txn_id.unwrap_or_default(), view), $r.name)
                };
                CLASSIFY
            }),
        }
    };
}

const WRITE: Flags = W.with(L).with(S);

pub(crate) static ROWS: &[Operation] = &[
    key_row!(TransactionalMapContainsKey, S, |r| (r.key, TxnOp::ContainsKey)),
    key_row!(TransactionalMapGet, S, |r| (r.key, TxnOp::Get)),
    key_row!(TransactionalMapGetForUpdate, WRITE, |r| (r.key, TxnOp::GetForUpdate)),
    key_row!(TransactionalMapPut, WRITE.with(A), |r| (r.key, TxnOp::Put { value: blob(r.value), ttl_ms: r.ttl })),
    key_row!(TransactionalMapSet, WRITE.with(A), |r| (r.key, TxnOp::Set { value: blob(r.value) })),
    key_row!(TransactionalMapPutIfAbsent, WRITE.with(A), |r| (r.key, TxnOp::PutIfAbsent { value: blob(r.value) })),
    key_row!(TransactionalMapReplace, WRITE, |r| (r.key, TxnOp::Replace { value: blob(r.value) })),
    key_row!(TransactionalMapReplaceIfSame, WRITE, |r| {
        (r.key, TxnOp::ReplaceIfSame { expected: blob(r.old_value), value: blob(r.new_value) })
    }),
    key_row!(TransactionalMapRemove, WRITE, |r| (r.key, TxnOp::Remove)),
    key_row!(TransactionalMapDelete, WRITE, |r| (r.key, TxnOp::Delete)),
    key_row!(TransactionalMapRemoveIfSame, WRITE, |r| (r.key, TxnOp::RemoveIfSame { value: blob(r.value) })),
    read_row!(TransactionalMapSize, |r| TxnView::Size),
    read_row!(TransactionalMapIsEmpty, |r| TxnView::IsEmpty),
    read_row!(TransactionalMapKeySet, |r| TxnView::Keys(None)),
    read_row!(TransactionalMapKeySetWithPredicate, |r| TxnView::Keys(Some(r.predicate.0.into()))),
    read_row!(TransactionalMapValues, |r| TxnView::Values(None)),
    read_row!(TransactionalMapValuesWithPredicate, |r| TxnView::Values(Some(r.predicate.0.into()))),
    read_row!(TransactionalMapContainsValue, |r| TxnView::ContainsValue(r.value.0.into())),
];

/// The request of transaction (id, thread, whether its locks block reads) on `key`.
fn txn_request<'a>(name: &'a str, of: (Option<Uuid>, i64, bool), key: Data<'a>, op: TxnOp<'a>) -> MapRequest<'a> {
    let (txn, thread_id, blocks_reads) = (of.0.unwrap_or_default(), of.1, of.2);
    MapRequest { name: Cow::Borrowed(name), op: MapOp::Txn { key: blob(key), txn, thread_id, blocks_reads, op } }
}
