//! The transaction service on the reactor that read a request (`impl Core`): create, commit
//! and rollback, and the admission and routing of every transactional operation.
//!
//! - *Create* opens the transaction in the member's registry (`registry.rs`) and answers its id.
//! - *A key operation* (TransactionalMap.put, …) is admitted (its transaction is this
//!   connection's, open, within its deadline and its log bound), then routed by its key: the
//!   request's header gets the key's partition and the request goes on as a partition request
//!   (run here, handed to the owning reactor, or forwarded to the owning member, whose row
//!   runs it: `engine/map/txn.rs`).
//! - *An operation on a queue, list or set* is admitted and routed the same way, to the
//!   partition of the structure's name (`engine/queue/txn.rs`, `engine/collection/txn.rs`).
//! - *A read over every partition* (size, keySet, …) is admitted, then fanned out as its row
//!   classifies it (`engine/map/txn_wide.rs`), to every member.
//! - *Commit / rollback* ends the transaction in the registry and fans its end out to every
//!   reactor of every member (the client's request goes to the others), answered once all
//!   applied it. A deadline that passes (checked by every reactor's sweep) or the connection
//!   closing rolls it back the same way, answered to no one.
//! - *XA transactions* (`xa.rs`) are created, prepared and ended there, and ended the same way.

use crate::engine::map::txn_wide::TxnEnd;
use crate::engine::request::ErrorKind;
use crate::engine::wide::WideRequest;
use crate::net::connection::ConnectionShared;
use crate::route::client::service::After;
use crate::route::dispatch::{Core, Hop, Origin};
use crate::route::operations::{Operation, TxnCall};
use crate::route::wire;
use crate::transaction::backup_log::State;
use crate::transaction::registry::{Options, TWO_PHASE};
use ferrogrid_protocol::codec::{TransactionCommit, TransactionCreate, TransactionRollback, UuidResponse};
use ferrogrid_protocol::frame::{FRAME_HEADER_SIZE, TXN_BLOCKS_READS};
use ferrogrid_protocol::message::{RequestHeader, REQUEST_HEADER_SIZE};
use ferrogrid_protocol::{Data, DecodeError, Message, Uuid};
use std::sync::Arc;

/// Where a request's partition id sits: after the frame header, the type and the correlation id.
const PARTITION_ID_OFFSET: usize = FRAME_HEADER_SIZE + 4 + 8;
/// Where the initial frame's flags sit: after its length.
const FLAGS_OFFSET: usize = 4;

impl Core {
    /// A request of the transaction service's rows (`transaction/rows.rs`,
    /// `engine/map/txn_rows.rs`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dispatch_transaction(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        (slot, row): (usize, &Operation),
        call: TxnCall,
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, DecodeError> {
        if origin.hop != Hop::Client {
            // A key operation the coordinator forwarded to this member, the key's owner.
            return self.dispatch_partition(connection, header, (slot, row), bytes, out, origin);
        }
        let message = Message::parse(bytes)?;
        let id = header.correlation_id;
        match call {
            TxnCall::Create => self.txn_create(connection, &message, out)?,
            TxnCall::Commit | TxnCall::Rollback => {
                let (txn, commit) = match call {
                    TxnCall::Commit => (TransactionCommit::decode(&message)?.transaction_id, true),
                    _ => (TransactionRollback::decode(&message)?.transaction_id, false),
                };
                self.txn_end(connection, id, txn.unwrap_or_default(), commit, bytes, out);
            }
            call if call.is_xa() => self.dispatch_xa(connection, call, &message, out)?,
            _ => {
                let mut fixed = message.fixed(REQUEST_HEADER_SIZE)?;
                let txn: Option<Uuid> = fixed.read()?;
                let now_ms = crate::clock::now_ms();
                let write = row.is(crate::route::operations::Flags::WRITE);
                let admitted = self.shared.transactions.registry.lock().admit(
                    txn.unwrap_or_default(),
                    connection.id.0,
                    write,
                    now_ms,
                );
                let blocks_reads = match admitted {
                    Ok(transaction_type) => transaction_type == TWO_PHASE,
                    Err(failure) => {
                        wire::write_error(out, id, &failure);
                        return Ok(After::Continue);
                    }
                };
                if call == TxnCall::Wide {
                    return self.dispatch_wide(connection, row, &message, id, bytes, out, origin);
                }
                let mut reader = message.reader();
                let name = reader.string()?;
                let count = self.shared.view.partition_count;
                let partition = if call == TxnCall::Named {
                    // Placed by the name the client gave, as its plain requests are.
                    let unscoped = name.split_once(crate::tenants::SEPARATOR).map_or(name, |(_, name)| name);
                    ferrogrid_protocol::partition_for_name(unscoped, count)
                } else {
                    ferrogrid_protocol::partition_for(Data(reader.value_frame("a transactional key")?), count)
                };
                let mut routed = bytes.to_vec();
                routed[PARTITION_ID_OFFSET..PARTITION_ID_OFFSET + 4]
                    .copy_from_slice(&i32::from(partition.0).to_le_bytes());
                if blocks_reads {
                    let flags = u16::from_le_bytes([routed[FLAGS_OFFSET], routed[FLAGS_OFFSET + 1]]) | TXN_BLOCKS_READS;
                    routed[FLAGS_OFFSET..FLAGS_OFFSET + 2].copy_from_slice(&flags.to_le_bytes());
                }
                let header = RequestHeader { partition_id: i32::from(partition.0), ..header };
                return self.dispatch_partition(connection, header, (slot, row), &routed, out, origin);
            }
        }
        Ok(After::Continue)
    }

    /// Transaction.create: a new transaction coordinated here, answered with its id.
    fn txn_create(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let request = TransactionCreate::decode(message)?;
        let options = Options {
            timeout_ms: request.timeout,
            durability: request.durability,
            transaction_type: request.transaction_type,
            thread_id: request.thread_id,
        };
        let txn = crate::route::client::service::random_uuid();
        let created =
            self.shared.transactions.registry.lock().create(txn, connection.id.0, options, crate::clock::now_ms());
        let id = message.correlation_id();
        match created {
            Ok(deadline_ms) => {
                if options.transaction_type == TWO_PHASE && options.durability > 0 {
                    self.txn_log_open(txn, options.durability as usize, deadline_ms);
                }
                UuidResponse { response: Some(txn) }.encode(out, TransactionCreate::RESPONSE, id, 0);
            }
            Err(failure) => wire::write_error(out, id, &failure),
        }
        Ok(())
    }

    /// Transaction.commit / rollback: the transaction ends here and on every partition.
    #[allow(clippy::too_many_arguments)]
    fn txn_end(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        txn: Uuid,
        commit: bool,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) {
        let now_ms = crate::clock::now_ms();
        let ended = self.shared.transactions.registry.lock().end(txn, connection.id.0, commit, now_ms);
        let holders = if ended.is_ok() { self.shared.transactions.logs.lock().take_holders(txn) } else { None };
        match ended {
            Ok(_) if commit && holders.is_some() => {
                // TWO_PHASE: its holders learn it is committing before anything applies.
                let holders = holders.expect("matched");
                let deadline_ms = now_ms + self.owner.replication.backup_timeout_ms;
                let waiting = (connection.clone(), correlation_id);
                self.shared.transactions.logs.lock().wait(txn, waiting, bytes.to_vec(), holders.clone(), deadline_ms);
                self.txn_log_send(&holders, txn, State::Committing, now_ms);
            }
            Ok(_) => {
                if let Some(holders) = holders {
                    self.txn_log_send(&holders, txn, State::Purge, now_ms);
                }
                let response_type = if commit { TransactionCommit::RESPONSE } else { TransactionRollback::RESPONSE };
                let operation = WideRequest::new(TxnEnd { txn, commit, finished: None });
                self.fan_out_with(
                    Some(connection),
                    correlation_id,
                    response_type,
                    "".into(),
                    operation,
                    out,
                    Some(bytes),
                );
            }
            Err(failure) => {
                if failure.kind == ErrorKind::TransactionTimedOut {
                    // A commit too late: the transaction is rolled back instead.
                    self.txn_roll_back(txn);
                }
                wire::write_error(out, correlation_id, &failure);
            }
        }
    }

    /// Rolls transaction `txn` back on every partition of every member, answered to no one
    /// (its deadline passed, or its client went), and purges its log from its holders.
    pub(crate) fn txn_roll_back(&mut self, txn: Uuid) {
        let holders = self.shared.transactions.logs.lock().take_holders(txn);
        if let Some(holders) = holders {
            self.txn_log_send(&holders, txn, State::Purge, crate::clock::now_ms());
        }
        self.txn_end_unanswered(txn, false);
    }

    /// Ends transaction `txn` on every partition of every member, answered to no one: a
    /// rollback, or a commit its coordinator began and left to this member (a log holder).
    pub(crate) fn txn_end_unanswered(&mut self, txn: Uuid, commit: bool) {
        let (request, response_type) = end_request(txn, commit);
        let operation = WideRequest::new(TxnEnd { txn, commit, finished: None });
        let mut out = Vec::new();
        self.fan_out_with(None, 0, response_type, "".into(), operation, &mut out, Some(&request));
    }

    /// Rolls back the transactions whose deadline passed (any reactor's sweep; each is taken
    /// once), and tends the TWO_PHASE logs (`durability.rs`).
    pub(crate) fn txn_expire(&mut self) {
        let now_ms = crate::clock::now_ms();
        let expired = self.shared.transactions.registry.lock().take_expired(now_ms);
        for (txn, _) in expired {
            self.txn_roll_back(txn);
        }
        self.txn_logs_sweep(now_ms);
    }

    /// Rolls back the open transactions of a connection that closed.
    pub(crate) fn txn_connection_closed(&mut self, connection: crate::net::connection::ConnectionId) {
        let open = self.shared.transactions.registry.lock().take_connection(connection.0);
        for txn in open {
            self.txn_roll_back(txn);
        }
    }
}

/// The TransactionCommit (or TransactionRollback) request a member writes to end transaction
/// `txn` everywhere (the other members classify it into its `TxnEnd`), and its response type.
pub(crate) fn end_request(txn: Uuid, commit: bool) -> (Vec<u8>, ferrogrid_protocol::MessageType) {
    let mut request = Vec::new();
    if commit {
        TransactionCommit { transaction_id: Some(txn), thread_id: 0 }.encode(&mut request, 0, -1, 0);
        (request, TransactionCommit::RESPONSE)
    } else {
        TransactionRollback { transaction_id: Some(txn), thread_id: 0 }.encode(&mut request, 0, -1, 0);
        (request, TransactionRollback::RESPONSE)
    }
}
