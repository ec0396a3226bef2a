//! XA transactions (`XATransaction.*`, behind the Java client's `HazelcastXAResource`), on the
//! reactor that read the request, as Hazelcast's `XAService` serves them.
//!
//! - *Create* opens a TWO_PHASE transaction with the client's Xid, answered with its id; the
//!   client then uses it as any transaction (`service.rs` admits its operations).
//! - *Prepare*, *commit* (one-phase, or of a prepared one) and *rollback* name it by its id and
//!   come from the connection that created it, as Hazelcast's endpoint-bound context.
//! - *Finalize* (commit or roll back) and *clearRemote* name a prepared transaction by its Xid
//!   and may come from any connection: a transaction manager recovering after its client went.
//!   An Xid prepared nowhere is answered as done, as Hazelcast's client sees it (its
//!   member's XAER_NOTA does not reach the client).
//! - *CollectTransactions* answers the cluster's prepared Xids: the member that prepares one
//!   announces it to the others (`XA_PREPARED`) and answers the prepare once each listed it
//!   (`XA_PREPARED_ACK`), and the member that ends one says so (`XA_ENDED`), so recover,
//!   finalize and clearRemote work through any member as soon as the prepare is answered.
//!
//! Ending one is the fan-out of `service.rs`'s commit or rollback, sent as the
//! TransactionCommit / TransactionRollback request the other members classify.

use crate::cluster::peer::{put_bytes, Malformed, Reader, XA_ENDED, XA_PREPARED, XA_PREPARED_ACK};
use crate::engine::map::txn_wide::TxnEnd;
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::wide::WideRequest;
use crate::net::connection::ConnectionShared;
use crate::route::dispatch::Core;
use crate::route::operations::TxnCall;
use crate::route::wire;
use crate::transaction::backup_log::encode_ack;
use crate::transaction::registry::{XaEnd, XaId};
use ferrogrid_protocol::codec::{
    EmptyResponse, UuidResponse, XATransactionClearRemote, XATransactionCollectTransactions, XATransactionCommit,
    XATransactionCreate, XATransactionFinalize, XATransactionPrepare, XATransactionRollback, XidListResponse,
};
use ferrogrid_protocol::types::MessageType;
use ferrogrid_protocol::{DecodeError, Message, Uuid};
use std::sync::Arc;

impl Core {
    /// A request of an XA transaction row (`rows.rs`), answered into `out` (or by the fan-out
    /// that ends its transactions).
    pub(crate) fn dispatch_xa(
        &mut self,
        connection: &Arc<ConnectionShared>,
        call: TxnCall,
        message: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let id = message.correlation_id();
        let now_ms = crate::clock::now_ms();
        let mine = connection.id.0;
        let shared = self.shared.clone();
        let transactions = &shared.transactions;
        let answered = match call {
            TxnCall::XaCreate => {
                let request = XATransactionCreate::decode(message)?;
                let txn = crate::route::client::service::random_uuid();
                let timeout_ms = request.timeout.saturating_mul(1000);
                XaId::of(&request.xid)
                    .and_then(|xid| transactions.registry.lock().create_xa(txn, xid, mine, timeout_ms, now_ms))
                    .map(|_| {
                        UuidResponse { response: Some(txn) }.encode(out, XATransactionCreate::RESPONSE, id, 0);
                    })
            }
            TxnCall::XaPrepare => {
                let txn = XATransactionPrepare::decode(message)?.transaction_id.unwrap_or_default();
                let prepared = transactions.registry.lock().prepare(txn, mine, now_ms);
                prepared.map(|()| {
                    if !self.xa_announce_prepared(connection, id, txn, now_ms) {
                        EmptyResponse {}.encode(out, XATransactionPrepare::RESPONSE, id, 0);
                    }
                })
            }
            TxnCall::XaCommit | TxnCall::XaRollback => self.xa_end_by_id(connection, call, message, now_ms, out)?,
            TxnCall::XaFinalize => {
                let request = XATransactionFinalize::decode(message)?;
                self.xa_finalize(connection, id, &request, now_ms, out)
            }
            TxnCall::XaClear => {
                let request = XATransactionClearRemote::decode(message)?;
                XaId::of(&request.xid).map(|xid| {
                    let taken = transactions.registry.lock().take_xid(&xid, now_ms);
                    self.xa_announce_ended(&taken.txns);
                    // Forgotten, and its key locks released with it.
                    taken.txns.into_iter().for_each(|txn| self.txn_roll_back(txn));
                    EmptyResponse {}.encode(out, XATransactionClearRemote::RESPONSE, id, 0);
                })
            }
            TxnCall::XaCollect => {
                let xids = transactions.registry.lock().prepared_xids();
                let response = XidListResponse { response: xids.iter().map(XaId::wire).collect() };
                response.encode(out, XATransactionCollectTransactions::RESPONSE, id, 0);
                Ok(())
            }
            _ => unreachable!("dispatch_transaction passes XA calls only"),
        };
        if let Err(failure) = answered {
            wire::write_error(out, id, &failure);
        }
        Ok(())
    }

    /// XATransaction.commit / rollback of the connection's transaction, by its id.
    fn xa_end_by_id(
        &mut self,
        connection: &Arc<ConnectionShared>,
        call: TxnCall,
        message: &Message<'_>,
        now_ms: i64,
        out: &mut Vec<u8>,
    ) -> Result<Result<(), OpError>, DecodeError> {
        let (txn, end, response_type) = if call == TxnCall::XaCommit {
            let request = XATransactionCommit::decode(message)?;
            let end = if request.one_phase { XaEnd::OnePhase } else { XaEnd::TwoPhase };
            (request.transaction_id.unwrap_or_default(), end, XATransactionCommit::RESPONSE)
        } else {
            let txn = XATransactionRollback::decode(message)?.transaction_id.unwrap_or_default();
            (txn, XaEnd::Rollback, XATransactionRollback::RESPONSE)
        };
        let ended = self.shared.transactions.registry.lock().end_xa(txn, connection.id.0, end, now_ms);
        if !matches!(&ended, Err(failure) if failure.kind != ErrorKind::TransactionTimedOut) {
            // It left the registry: the other members no longer list it.
            self.xa_announce_ended(&[txn]);
        }
        if matches!(&ended, Err(failure) if failure.kind == ErrorKind::TransactionTimedOut) {
            // A commit too late: the transaction is rolled back instead.
            self.txn_roll_back(txn);
        }
        let id = message.correlation_id();
        Ok(ended.map(|()| self.xa_end(connection, id, response_type, &[txn], end != XaEnd::Rollback, out)))
    }

    /// XATransaction.finalize: the prepared transactions of an Xid committed or rolled back. A
    /// commit of one past its deadline (rolled back then) fails.
    fn xa_finalize(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        request: &XATransactionFinalize<'_>,
        now_ms: i64,
        out: &mut Vec<u8>,
    ) -> Result<(), OpError> {
        let xid = XaId::of(&request.xid)?;
        let taken = self.shared.transactions.registry.lock().take_xid(&xid, now_ms);
        self.xa_announce_ended(&taken.txns);
        if request.is_commit && taken.timed_out {
            taken.txns.into_iter().for_each(|txn| self.txn_roll_back(txn));
            return Err(OpError::new(ErrorKind::TransactionTimedOut, "Transaction is timed-out!"));
        }
        let response_type = XATransactionFinalize::RESPONSE;
        self.xa_end(connection, correlation_id, response_type, &taken.txns, request.is_commit, out);
        Ok(())
    }

    /// Ends `txns` on every partition of every member, answering the client when the last
    /// one's fan-out completes (at once, for none).
    fn xa_end(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        response_type: MessageType,
        txns: &[Uuid],
        commit: bool,
        out: &mut Vec<u8>,
    ) {
        let Some((last, others)) = txns.split_last() else {
            EmptyResponse {}.encode(out, response_type, correlation_id, 0);
            return;
        };
        // Reactors run fan-outs in the order they arrive: the others end before the answer.
        others.iter().for_each(|txn| self.txn_end_unanswered(*txn, commit));
        let (request, _) = crate::transaction::service::end_request(*last, commit);
        let operation = WideRequest::new(TxnEnd { txn: *last, commit, finished: None });
        let name = "".into();
        self.fan_out_with(Some(connection), correlation_id, response_type, name, operation, out, Some(&request));
    }

    /// Tells the other members that XA transaction `txn` (prepared here) is prepared, so that
    /// any of them lists it and may finalize it, also after this member is gone. True: the
    /// prepare is answered once they all acknowledged it (`durability.rs`), as Hazelcast's
    /// prepare waits for its transaction log's backups; a recover through any member then
    /// lists it.
    fn xa_announce_prepared(&mut self, connection: &Arc<ConnectionShared>, id: i64, txn: Uuid, now_ms: i64) -> bool {
        let Some(xid) = self.shared.transactions.registry.lock().xid_of(txn) else { return false };
        let peers = self.owner.replication.peers();
        if peers.is_empty() {
            return false;
        }
        let deadline_ms = now_ms + self.owner.replication.backup_timeout_ms;
        let waiting = (connection.clone(), id);
        self.shared.transactions.logs.lock().wait(txn, waiting, Vec::new(), peers.clone(), deadline_ms);
        self.write_to_peers(&peers, XA_PREPARED, &xa_prepared_payload(txn, &xid));
        true
    }

    /// Tells members that have just joined every prepared XA transaction this member knows
    /// (its own and those announced to it), so that they list them as the others do.
    pub(crate) fn send_xa_prepared_to(&mut self, joined: &[ferrogrid_cluster::MemberId]) {
        if joined.is_empty() {
            return;
        }
        let prepared = self.shared.transactions.registry.lock().prepared_transactions();
        for (txn, xid) in prepared {
            self.write_to_peers(joined, XA_PREPARED, &xa_prepared_payload(txn, &xid));
        }
    }

    /// Tells the other members that XA transactions `txns` ended here.
    fn xa_announce_ended(&mut self, txns: &[Uuid]) {
        if txns.is_empty() {
            return;
        }
        let payload: Vec<u8> = txns.iter().flat_map(|txn| txn.as_u128().to_le_bytes()).collect();
        let peers = self.owner.replication.peers();
        self.write_to_peers(&peers, XA_ENDED, &payload);
    }

    /// Member `from`'s XA_PREPARED: listed here (or refused with a logged reason), and
    /// acknowledged either way (XA_PREPARED_ACK).
    pub(crate) fn member_xa_prepared(&mut self, from: ferrogrid_cluster::MemberId, payload: &[u8]) {
        let mut reader = Reader::new(payload);
        let decoded = (|| {
            let txn = Uuid::from_u128(reader.u128()?);
            let format_id = reader.u32()? as i32;
            let global_transaction_id = reader.bytes()?.into();
            let branch_qualifier = reader.bytes()?.into();
            reader.finish()?;
            Ok::<_, Malformed>((txn, XaId { format_id, global_transaction_id, branch_qualifier }))
        })();
        match decoded {
            Ok((txn, xid)) => {
                let kept = self.shared.transactions.registry.lock().prepared_elsewhere(txn, xid);
                if !kept {
                    tracing::warn!(%txn, "another member's prepared XA transaction not listed: max-transactions");
                }
                let mut ack = Vec::new();
                encode_ack(txn, kept, &mut ack);
                crate::cluster::peer::write(self.owner.replication.message_for(from), XA_PREPARED_ACK, 0, &ack);
            }
            Err(error) => tracing::warn!(%error, "malformed XA_PREPARED: ignored"),
        }
    }

    /// Another member's XA_ENDED: those transactions are no longer listed here.
    pub(crate) fn member_xa_ended(&mut self, payload: &[u8]) {
        if !payload.len().is_multiple_of(16) {
            return tracing::warn!(length = payload.len(), "malformed XA_ENDED: ignored");
        }
        let mut registry = self.shared.transactions.registry.lock();
        for chunk in payload.chunks_exact(16) {
            let txn = Uuid::from_u128(u128::from_le_bytes(chunk.try_into().expect("16 bytes")));
            registry.ended_elsewhere(txn);
        }
    }
}

/// XA_PREPARED: `txn u128 | format id i32 | global transaction id bytes | branch qualifier bytes`.
fn xa_prepared_payload(txn: Uuid, xid: &XaId) -> Vec<u8> {
    let mut payload = Vec::new();
    payload.extend_from_slice(&txn.as_u128().to_le_bytes());
    payload.extend_from_slice(&xid.format_id.to_le_bytes());
    put_bytes(&mut payload, &xid.global_transaction_id);
    put_bytes(&mut payload, &xid.branch_qualifier);
    payload
}
