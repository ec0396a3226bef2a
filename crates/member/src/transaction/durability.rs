//! What the reactors do with TWO_PHASE transactions' backup logs (`backup_log.rs` keeps
//! them): name a new transaction's holders and tell them it is active; hold a commit until
//! they acknowledged it is committing, then apply it everywhere; as a holder, keep other
//! members' logs and end the transactions of a coordinator that left; purge what ended.

use crate::cluster::peer::{TXN_LOG, TXN_LOG_ACK};
use crate::engine::map::txn_wide::TxnEnd;
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::wide::WideRequest;
use crate::net::connection::ConnectionShared;
use crate::route::dispatch::Core;
use crate::route::wire;
use crate::transaction::backup_log::{
    choose_holders, decode_ack, encode_ack, Acked, PendingCommit, Record, State, KEEP_AFTER_DEADLINE_MS,
};
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::codec::{EmptyResponse, TransactionCommit, XATransactionPrepare};
use ferrogrid_protocol::Uuid;
use std::sync::Arc;
use tracing::{info, warn};

impl Core {
    /// Names the holders of new TWO_PHASE transaction `txn` (`durability` other members, or
    /// as many as there are) and tells them it is active; its deadline bounds how long they
    /// keep that.
    pub(crate) fn txn_log_open(&mut self, txn: Uuid, durability: usize, deadline_ms: i64) {
        let state = &self.owner.replication.state;
        let members: Vec<MemberId> = state.members.iter().map(|member| member.id).collect();
        let holders = choose_holders(&members, state.me, &self.owner.replication.peers(), durability);
        if holders.is_empty() {
            return;
        }
        self.txn_log_send(&holders, txn, State::Active, deadline_ms);
        self.shared.transactions.logs.lock().open(txn, holders);
    }

    /// Tells `holders` transaction `txn`'s new state. `time_ms`: an active one's deadline, else
    /// now.
    pub(crate) fn txn_log_send(&mut self, holders: &[MemberId], txn: Uuid, state: State, time_ms: i64) {
        let coordinator = self.shared.view.member_uuid;
        let keep_until_ms = time_ms.saturating_add(KEEP_AFTER_DEADLINE_MS);
        let mut payload = Vec::with_capacity(Record::SIZE);
        Record { txn, coordinator, state, keep_until_ms }.encode(&mut payload);
        self.write_to_peers(holders, TXN_LOG, &payload);
    }

    /// A TXN_LOG from member `from`, the coordinator of its transactions: kept (a committing
    /// one acknowledged), or refused with a logged reason.
    pub(crate) fn member_txn_log(&mut self, from: MemberId, payload: &[u8]) {
        let records = match Record::decode_all(payload) {
            Ok(records) => records,
            Err(error) => return warn!(%error, "malformed transaction log: ignored"),
        };
        for record in records {
            let kept = self.shared.transactions.logs.lock().hold(&record);
            if !kept {
                let bound = self.shared.config.limits.max_transactions;
                warn!(txn = %record.txn, bound, "a transaction log refused: this member holds max-transactions logs");
            }
            if record.state == State::Committing {
                let mut ack = Vec::new();
                encode_ack(record.txn, kept, &mut ack);
                crate::cluster::peer::write(self.owner.replication.message_for(from), TXN_LOG_ACK, 0, &ack);
            }
        }
    }

    /// A holder's TXN_LOG_ACK (`prepare` false), or a member's XA_PREPARED_ACK (true), read
    /// from `link`: the commit goes on, or the prepare is answered, once every member waited
    /// for has it.
    pub(crate) fn member_txn_log_ack(
        &mut self,
        link: &Arc<ConnectionShared>,
        from: MemberId,
        payload: &[u8],
        prepare: bool,
    ) {
        let (txn, kept) = match decode_ack(payload) {
            Ok(ack) => ack,
            Err(error) => return warn!(%error, prepare, "malformed transaction log acknowledgement: ignored"),
        };
        let acked = self.shared.transactions.logs.lock().acked(txn, from, kept, prepare);
        match acked {
            Acked::Waiting => {}
            Acked::Complete(pending) => {
                // What the link carried before this goes to its reactors first.
                self.send_outgoing(link);
                self.txn_commit_logged(pending);
            }
            Acked::Refused(pending, member) => {
                let text = format!("member {} could not keep the transaction's log", Uuid::from_u128(member.0));
                self.txn_commit_failed(pending, text);
            }
        }
    }

    /// Applies a commit whose holders all have its log on every partition of every member,
    /// answering its client once all did; answers a prepare every other member lists.
    fn txn_commit_logged(&mut self, pending: PendingCommit) {
        if pending.prepare {
            let mut out = Vec::new();
            EmptyResponse {}.encode(&mut out, XATransactionPrepare::RESPONSE, pending.correlation_id, 0);
            pending.connection.send(&out);
            return;
        }
        let PendingCommit { txn, connection, correlation_id, request, holders, .. } = pending;
        let finished = Some(self.shared.transactions.finished.clone());
        if !holders.is_empty() {
            self.shared.transactions.logs.lock().committing(txn, holders);
        }
        let operation = WideRequest::new(TxnEnd { txn, commit: true, finished });
        let mut out = Vec::new();
        let response_type = TransactionCommit::RESPONSE;
        self.start_fan_out(
            Some(&connection),
            correlation_id,
            response_type,
            "".into(),
            operation,
            &mut out,
            Some(&request),
        );
        if !out.is_empty() {
            connection.send(&out);
        }
    }

    /// A commit whose log could not be kept: rolled back, and its client told why
    /// (TransactionException, as Hazelcast's failed log replication). A prepare not listed
    /// everywhere fails the same way; its transaction stays prepared here, for the client's
    /// rollback.
    fn txn_commit_failed(&mut self, pending: PendingCommit, text: String) {
        if pending.prepare {
            warn!(txn = %pending.txn, reason = %text, "an XA prepare failed");
            let mut out = Vec::new();
            wire::write_error(&mut out, pending.correlation_id, &OpError::new(ErrorKind::Transaction, text));
            pending.connection.send(&out);
            return;
        }
        warn!(txn = %pending.txn, reason = %text, "a TWO_PHASE commit rolled back");
        self.txn_log_send(&pending.holders, pending.txn, State::Purge, crate::clock::now_ms());
        self.txn_end_unanswered(pending.txn, false);
        let mut out = Vec::new();
        wire::write_error(&mut out, pending.correlation_id, &OpError::new(ErrorKind::Transaction, text));
        pending.connection.send(&out);
    }

    /// Members that left the cluster: the transactions they coordinated and logged here are
    /// ended as their logs say (committed or rolled back everywhere; the end also acts on
    /// backup replicas, so it holds while the departed owners' promotions are announced), and
    /// this member's commits stop waiting for them.
    pub(crate) fn txn_members_left(&mut self, left: &[MemberId]) {
        if left.is_empty() {
            return;
        }
        let coordinators: Vec<Uuid> = left.iter().map(|member| Uuid::from_u128(member.0)).collect();
        let (orphans, ready) = {
            let mut logs = self.shared.transactions.logs.lock();
            (logs.take_coordinated_by(&coordinators), logs.members_left(left))
        };
        for (txn, commit) in orphans {
            let what = if commit { "committed" } else { "rolled back" };
            info!(%txn, "a transaction whose coordinator left is {what} by its log holder");
            self.txn_end_unanswered(txn, commit);
        }
        for pending in ready {
            self.txn_commit_logged(pending);
        }
    }

    /// The sweep's part: commits whose holders did not answer in time fail; the logs of
    /// commits that answered are purged; logs kept past their time are dropped.
    pub(crate) fn txn_logs_sweep(&mut self, now_ms: i64) {
        let finished = std::mem::take(&mut *self.shared.transactions.finished.lock());
        let (overdue, purges) = {
            let mut logs = self.shared.transactions.logs.lock();
            logs.expire_held(now_ms);
            (logs.overdue(now_ms), logs.finished(finished))
        };
        for (txn, holders) in purges {
            self.txn_log_send(&holders, txn, State::Purge, now_ms);
        }
        for pending in overdue {
            let text = "the transaction's log holders did not answer within the backup timeout".to_string();
            self.txn_commit_failed(pending, text);
        }
    }
}
