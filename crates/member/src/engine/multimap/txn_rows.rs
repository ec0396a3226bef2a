//! TransactionalMultiMap's rows of the operation table: sent to the transaction's coordinator,
//! admitted and routed there (`transaction/service.rs`) as TransactionalMap's are
//! (`engine/map/txn_rows.rs`); a key operation decodes here into a [`MultiMapOp::Txn`] that the
//! multimap's handler runs at the key's owner (`txn.rs`), and size is a read over every
//! partition (`engine/map/txn_wide.rs`).

use crate::engine::map::txn_wide::{TxnRead, TxnView};
use crate::engine::multimap::request::{MultiMapOp, MultiMapRequest, MultiTxnOp};
use crate::engine::wide::Classified;
use crate::route::row::{Flags, Operation, Route, TxnCall, L, S, W};
use crate::route::wire::blob;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::frame::TXN_BLOCKS_READS;
use std::borrow::Cow;

/// A key row: `key_row!(Codec, flags, |r| op)`, decoded into a [`MultiMapOp::Txn`].
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
                    let op: MultiTxnOp<'_> = $op;
                    let (txn, thread_id) = ($r.txn_id.unwrap_or_default(), $r.thread_id);
                    let blocks_reads = message.initial_flags() & TXN_BLOCKS_READS != 0;
                    let key = blob($r.key);
                    let request = MultiMapRequest {
                        name: Cow::Borrowed($r.name),
                        op: MultiMapOp::Txn { key, txn, thread_id, blocks_reads, op },
                    };
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

const WRITE: Flags = W.with(L).with(S);

pub(crate) static ROWS: &[Operation] = &[
    key_row!(TransactionalMultiMapPut, WRITE.with(crate::route::row::A), |r| MultiTxnOp::Put { value: blob(r.value) }),
    key_row!(TransactionalMultiMapGet, S, |r| MultiTxnOp::Get),
    key_row!(TransactionalMultiMapRemove, WRITE, |r| MultiTxnOp::RemoveKey),
    key_row!(TransactionalMultiMapRemoveEntry, WRITE, |r| MultiTxnOp::RemoveEntry { value: blob(r.value) }),
    key_row!(TransactionalMultiMapValueCount, S, |r| MultiTxnOp::ValueCount),
    Operation {
        message_type: TransactionalMultiMapSize::TYPE,
        name: "TransactionalMultiMapSize",
        route: Route::Transaction(TxnCall::Wide),
        flags: S,
        run: None,
        replica: None,
        classify: Some(|message, _| {
            let request = TransactionalMultiMapSize::decode(message)?;
            let read = TxnRead::new(request.txn_id.unwrap_or_default(), TxnView::MultiMapSize);
            Classified::wide(read, request.name)
        }),
    },
];
