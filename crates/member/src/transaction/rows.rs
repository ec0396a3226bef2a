//! The transaction service's rows: create, commit and rollback (`service.rs` answers them on
//! the reactor that read them), and the XA transactions' (`xa.rs`). Commit and rollback have classifiers: other members run their
//! share of a transaction's end from the client's request, sent to them as a fan-out's.

use crate::engine::map::txn_wide::TxnEnd;
use crate::engine::wide::Classified;
use crate::route::row::{Flags, Operation, Route, TxnCall};
use ferrogrid_protocol::codec::{
    TransactionCommit, TransactionCreate, TransactionRollback, XATransactionClearRemote,
    XATransactionCollectTransactions, XATransactionCommit, XATransactionCreate, XATransactionFinalize,
    XATransactionPrepare, XATransactionRollback,
};

macro_rules! service_row {
    ($codec:ident, $call:ident, $classify:expr) => {
        Operation {
            message_type: $codec::TYPE,
            name: stringify!($codec),
            route: Route::Transaction(TxnCall::$call),
            flags: Flags::NONE,
            run: None,
            replica: None,
            classify: $classify,
        }
    };
}

pub(crate) static ROWS: &[Operation] = &[
    service_row!(TransactionCreate, Create, None),
    service_row!(
        TransactionCommit,
        Commit,
        Some(|message, _| {
            let request = TransactionCommit::decode(message)?;
            Classified::wide(
                TxnEnd { txn: request.transaction_id.unwrap_or_default(), commit: true, finished: None },
                "",
            )
        })
    ),
    service_row!(
        TransactionRollback,
        Rollback,
        Some(|message, _| {
            let request = TransactionRollback::decode(message)?;
            Classified::wide(
                TxnEnd { txn: request.transaction_id.unwrap_or_default(), commit: false, finished: None },
                "",
            )
        })
    ),
    // XA ends reach other members as the TransactionCommit / TransactionRollback the
    // coordinator writes for them: no classifier.
    service_row!(XATransactionClearRemote, XaClear, None),
    service_row!(XATransactionCollectTransactions, XaCollect, None),
    service_row!(XATransactionFinalize, XaFinalize, None),
    service_row!(XATransactionCommit, XaCommit, None),
    service_row!(XATransactionCreate, XaCreate, None),
    service_row!(XATransactionPrepare, XaPrepare, None),
    service_row!(XATransactionRollback, XaRollback, None),
];
