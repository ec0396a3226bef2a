//! The transactions this member coordinates, shared by its reactors behind one mutex (taken
//! once per transactional request; a transaction's requests come from one connection).
//!
//! A transaction is open from create to commit or rollback. Its deadline passing, or its
//! connection closing, rolls it back (the reactor that notices runs the rollback); a timed-out
//! transaction stays listed, rolled back, until its client commits (TransactionTimedOut) or
//! rolls it back, as Hazelcast's context does. Bounds: open transactions per connection and
//! per member, log entries (key writes and locks) per transaction, and the timeout.
//!
//! An XA transaction (`XATransaction.create`) is one of them with its Xid. Once prepared it is
//! also listed by its Xid and no longer belongs to its connection's life: a closed connection
//! rolls back only the XA transactions it had not prepared. A prepared one stays (counted in
//! `max-transactions`) until its client commits or rolls it back, or any connection finalizes
//! or clears it by its Xid (recovery); its deadline still rolls its changes back, after which
//! a commit of it fails.

use crate::engine::request::{ErrorKind, OpError};
use crate::transaction::backup_log::Logs;
use ahash::RandomState;
use ferrogrid_protocol::Uuid;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// Hazelcast's transaction types (`TransactionOptions.TransactionType` ids).
pub(crate) const TWO_PHASE: i32 = 1;
pub(crate) const ONE_PHASE: i32 = 2;

/// The longest global transaction id and branch qualifier of an Xid
/// (`javax.transaction.xa.Xid.MAXGTRIDSIZE`, `MAXBQUALSIZE`).
pub(crate) const MAX_XID_PART: usize = 64;

/// The connection of a prepared XA transaction whose client went: no connection's id.
const NO_CONNECTION: u64 = u64::MAX;

/// An XA transaction's id (`javax.transaction.xa.Xid`) as the registry keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct XaId {
    pub(crate) format_id: i32,
    pub(crate) global_transaction_id: Box<[u8]>,
    pub(crate) branch_qualifier: Box<[u8]>,
}

impl XaId {
    /// The Xid a request carries, its parts within [`MAX_XID_PART`] bytes.
    pub(crate) fn of(xid: &ferrogrid_protocol::codec::Xid<'_>) -> Result<XaId, OpError> {
        let longest = xid.global_transaction_id.len().max(xid.branch_qualifier.len());
        if longest > MAX_XID_PART {
            let text = format!("an Xid's global transaction id and branch qualifier are at most {MAX_XID_PART} bytes");
            return Err(OpError::new(ErrorKind::IllegalArgument, text));
        }
        Ok(XaId {
            format_id: xid.format_id,
            global_transaction_id: xid.global_transaction_id.into(),
            branch_qualifier: xid.branch_qualifier.into(),
        })
    }

    pub(crate) fn wire(&self) -> ferrogrid_protocol::codec::Xid<'_> {
        ferrogrid_protocol::codec::Xid {
            format_id: self.format_id,
            global_transaction_id: &self.global_transaction_id,
            branch_qualifier: &self.branch_qualifier,
        }
    }
}

/// The transactions a finalize or clear took by their Xid.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Taken {
    pub(crate) txns: Vec<Uuid>,
    /// One of them passed its deadline (it was rolled back): a commit of them fails.
    pub(crate) timed_out: bool,
}

/// The bounds the registry holds transactions to (from `ferrogrid.limits`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub(crate) per_connection: u32,
    pub(crate) per_member: u32,
    pub(crate) log_entries: u32,
    pub(crate) default_timeout_ms: i64,
    pub(crate) max_timeout_ms: i64,
}

impl Bounds {
    pub(crate) fn of(limits: &ferrogrid_config::Limits) -> Bounds {
        Bounds {
            per_connection: limits.max_transactions_per_connection,
            per_member: limits.max_transactions,
            log_entries: limits.max_transaction_log_entries,
            default_timeout_ms: i64::from(limits.transaction_default_timeout_millis),
            max_timeout_ms: i64::from(limits.transaction_max_timeout_millis),
        }
    }
}

/// What a client asks of a new transaction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    pub(crate) timeout_ms: i64,
    pub(crate) durability: i32,
    pub(crate) transaction_type: i32,
    pub(crate) thread_id: i64,
}

/// One open transaction.
#[derive(Debug)]
struct Open {
    /// The connection that created it (its id): the only one that may use it.
    connection: u64,
    thread_id: i64,
    transaction_type: i32,
    deadline_ms: i64,
    log_entries: u32,
    /// Rolled back when its deadline passed; waits for its client's commit or rollback.
    timed_out: bool,
    /// An XA transaction's Xid, and whether it was prepared.
    xa: Option<(XaId, bool)>,
}

/// The open transactions and their bounds.
#[derive(Debug)]
pub(crate) struct Registry {
    bounds: Bounds,
    open: HashMap<Uuid, Open, RandomState>,
    per_connection: HashMap<u64, u32, RandomState>,
    /// The prepared XA transactions by Xid (several branches may share one).
    prepared: HashMap<XaId, Vec<Uuid>, RandomState>,
    /// The XA transactions other members prepared, as they announced them (`XA_PREPARED`):
    /// any member lists them and may finalize them, as Hazelcast's are cluster-wide.
    elsewhere: HashMap<Uuid, XaId, RandomState>,
}

fn unknown_xa(txn: Uuid) -> OpError {
    OpError::new(ErrorKind::Transaction, format!("No transaction context with given transactionId: {txn}"))
}

fn unknown(txn: Uuid) -> OpError {
    OpError::new(ErrorKind::Transaction, format!("No transaction context found for txnId:{txn}"))
}

fn timed_out() -> OpError {
    OpError::new(ErrorKind::TransactionTimedOut, "Transaction is timed-out!")
}

impl Registry {
    pub(crate) fn new(bounds: Bounds) -> Registry {
        Registry {
            bounds,
            open: HashMap::default(),
            per_connection: HashMap::default(),
            prepared: HashMap::default(),
            elsewhere: HashMap::default(),
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.open.len()
    }

    /// Opens a transaction `id` for `connection`, checking the options and the bounds. Ok: its
    /// deadline.
    pub(crate) fn create(&mut self, id: Uuid, connection: u64, options: Options, now_ms: i64) -> Result<i64, OpError> {
        let refuse = |text: String| Err(OpError::new(ErrorKind::IllegalArgument, text));
        if options.timeout_ms < 0 {
            return refuse("Timeout can not be negative!".into());
        }
        if options.timeout_ms > self.bounds.max_timeout_ms {
            let max = self.bounds.max_timeout_ms;
            return refuse(format!("Timeout {} ms is over this member's maximum of {max} ms", options.timeout_ms));
        }
        if options.durability < 0 {
            return refuse("Durability cannot be negative!".into());
        }
        if !matches!(options.transaction_type, TWO_PHASE | ONE_PHASE) {
            return refuse(format!("Unknown transaction type {}", options.transaction_type));
        }
        let mine = self.per_connection.get(&connection).copied().unwrap_or(0);
        if mine >= self.bounds.per_connection {
            let text = format!("a connection may have at most {} open transactions", self.bounds.per_connection);
            return Err(OpError::new(ErrorKind::Transaction, text));
        }
        if self.open.len() >= self.bounds.per_member as usize {
            let text = format!("this member coordinates at most {} open transactions", self.bounds.per_member);
            return Err(OpError::new(ErrorKind::Transaction, text));
        }
        let timeout_ms = if options.timeout_ms == 0 { self.bounds.default_timeout_ms } else { options.timeout_ms };
        let deadline_ms = now_ms.saturating_add(timeout_ms);
        let open = Open {
            connection,
            thread_id: options.thread_id,
            transaction_type: options.transaction_type,
            deadline_ms,
            log_entries: 0,
            timed_out: false,
            xa: None,
        };
        assert!(self.open.insert(id, open).is_none(), "transaction ids are random uuids");
        *self.per_connection.entry(connection).or_default() += 1;
        Ok(deadline_ms)
    }

    /// Admits a request of transaction `txn` from `connection`; a `write` (a key it locks)
    /// counts against its log entries. Ok: the transaction's type.
    pub(crate) fn admit(&mut self, txn: Uuid, connection: u64, write: bool, now_ms: i64) -> Result<i32, OpError> {
        let Some(open) = self.open.get_mut(&txn).filter(|open| open.connection == connection) else {
            return Err(unknown(txn));
        };
        if open.timed_out || now_ms > open.deadline_ms {
            return Err(timed_out());
        }
        if write && matches!(open.xa, Some((_, true))) {
            return Err(OpError::new(ErrorKind::Transaction, "Transaction is not active!"));
        }
        if write {
            if open.log_entries >= self.bounds.log_entries {
                let text = format!("a transaction may log at most {} entries", self.bounds.log_entries);
                return Err(OpError::new(ErrorKind::Transaction, text));
            }
            open.log_entries += 1;
        }
        Ok(open.transaction_type)
    }

    /// Ends transaction `txn` of `connection` (its commit or rollback): Ok(thread id) if its
    /// partitions must now apply (commit) or drop (rollback) its changes. A commit of a
    /// transaction past its deadline fails, and the transaction is rolled back (its end is
    /// still sent to the partitions).
    pub(crate) fn end(&mut self, txn: Uuid, connection: u64, commit: bool, now_ms: i64) -> Result<i64, OpError> {
        let Some(open) = self.open.get(&txn).filter(|open| open.connection == connection) else {
            return Err(unknown(txn));
        };
        if open.xa.is_some() {
            return Err(OpError::new(ErrorKind::Transaction, "an XA transaction ends through its XA resource"));
        }
        let late = open.timed_out || now_ms > open.deadline_ms;
        let thread_id = open.thread_id;
        self.remove(txn);
        if commit && late {
            return Err(timed_out());
        }
        Ok(thread_id)
    }

    fn remove(&mut self, txn: Uuid) {
        let Some(open) = self.open.remove(&txn) else { return };
        if let Some((xid, true)) = &open.xa {
            let branches = self.prepared.get_mut(xid).expect("a prepared transaction is listed by its Xid");
            branches.retain(|branch| *branch != txn);
            if branches.is_empty() {
                self.prepared.remove(xid);
            }
        }
        if let Some(count) = self.per_connection.get_mut(&open.connection) {
            *count -= 1;
            if *count == 0 {
                self.per_connection.remove(&open.connection);
            }
        }
    }

    /// Transactions whose deadline passed by `now_ms`, marked timed out: the caller rolls
    /// each back on the partitions.
    pub(crate) fn take_expired(&mut self, now_ms: i64) -> Vec<(Uuid, i64)> {
        let mut expired = Vec::new();
        for (txn, open) in &mut self.open {
            if !open.timed_out && now_ms > open.deadline_ms {
                open.timed_out = true;
                expired.push((*txn, open.thread_id));
            }
        }
        expired
    }

    /// Removes the transactions of a closed connection; the caller rolls each back (again, for
    /// one that timed out: an operation of it that waited for a lock may have run since).
    pub(crate) fn take_connection(&mut self, connection: u64) -> Vec<Uuid> {
        if !self.per_connection.contains_key(&connection) {
            return Vec::new();
        }
        let mut theirs = Vec::new();
        for (txn, open) in &mut self.open {
            if open.connection != connection {
                continue;
            }
            if matches!(open.xa, Some((_, true))) {
                // Prepared: kept for its transaction manager's recovery.
                open.connection = NO_CONNECTION;
            } else {
                theirs.push(*txn);
            }
        }
        self.per_connection.remove(&connection);
        for txn in &theirs {
            self.open.remove(txn);
        }
        theirs
    }
}

/// XA transactions (`XATransaction.*`; `transaction/xa.rs` answers them).
impl Registry {
    /// Opens XA transaction `id` for `connection` with `xid`, as [`Registry::create`] (TWO_PHASE,
    /// no backup log). Ok: its deadline.
    pub(crate) fn create_xa(
        &mut self,
        id: Uuid,
        xid: XaId,
        connection: u64,
        timeout_ms: i64,
        now_ms: i64,
    ) -> Result<i64, OpError> {
        let options = Options { timeout_ms, durability: 0, transaction_type: TWO_PHASE, thread_id: 0 };
        let deadline_ms = self.create(id, connection, options, now_ms)?;
        self.open.get_mut(&id).expect("just created").xa = Some((xid, false));
        Ok(deadline_ms)
    }

    /// The open XA transaction `txn` of `connection`.
    fn xa_of(&mut self, txn: Uuid, connection: u64) -> Result<&mut Open, OpError> {
        self.open.get_mut(&txn).filter(|open| open.connection == connection && open.xa.is_some()).ok_or(unknown_xa(txn))
    }

    /// Prepares XA transaction `txn` of `connection`: listed by its Xid from now on.
    pub(crate) fn prepare(&mut self, txn: Uuid, connection: u64, now_ms: i64) -> Result<(), OpError> {
        let open = self.xa_of(txn, connection)?;
        if open.timed_out || now_ms > open.deadline_ms {
            return Err(timed_out());
        }
        let Some((xid, prepared)) = open.xa.as_mut() else { unreachable!("xa_of checked it") };
        if *prepared {
            return Err(OpError::new(ErrorKind::Transaction, "Transaction is not active"));
        }
        *prepared = true;
        let xid = xid.clone();
        self.prepared.entry(xid).or_default().push(txn);
        Ok(())
    }

    /// Ends XA transaction `txn` of `connection`: its rollback, its commit once prepared, or its
    /// one-phase commit before. A commit in the wrong phase changes nothing; one past the
    /// deadline ends it (the caller rolls it back).
    pub(crate) fn end_xa(&mut self, txn: Uuid, connection: u64, end: XaEnd, now_ms: i64) -> Result<(), OpError> {
        let open = self.xa_of(txn, connection)?;
        let prepared = matches!(open.xa, Some((_, true)));
        match end {
            XaEnd::OnePhase if prepared => {
                return Err(OpError::new(ErrorKind::Transaction, "Transaction is not active"))
            }
            XaEnd::TwoPhase if !prepared => {
                return Err(OpError::new(ErrorKind::IllegalState, "Transaction is not prepared"))
            }
            _ => {}
        }
        let late = open.timed_out || now_ms > open.deadline_ms;
        self.remove(txn);
        if end != XaEnd::Rollback && late {
            return Err(timed_out());
        }
        Ok(())
    }

    /// Takes the prepared transactions of `xid`, this member's and those other members
    /// announced (none: an Xid no one prepared, or one already ended).
    pub(crate) fn take_xid(&mut self, xid: &XaId, now_ms: i64) -> Taken {
        let mut txns = self.prepared.get(xid).cloned().unwrap_or_default();
        let timed_out = txns.iter().any(|txn| {
            let open = &self.open[txn];
            open.timed_out || now_ms > open.deadline_ms
        });
        txns.iter().for_each(|txn| self.remove(*txn));
        assert!(!self.prepared.contains_key(xid), "removing its branches unlists an Xid");
        let theirs: Vec<Uuid> = self.elsewhere.iter().filter(|(_, of)| *of == xid).map(|(txn, _)| *txn).collect();
        theirs.iter().for_each(|txn| {
            self.elsewhere.remove(txn);
        });
        txns.extend(theirs);
        Taken { txns, timed_out }
    }

    /// The Xids of the cluster's prepared transactions (this member's and those announced).
    pub(crate) fn prepared_xids(&self) -> Vec<XaId> {
        let mut xids: Vec<XaId> = self.prepared.keys().chain(self.elsewhere.values()).cloned().collect();
        xids.sort_by(|a, b| {
            (a.format_id, &a.global_transaction_id, &a.branch_qualifier).cmp(&(
                b.format_id,
                &b.global_transaction_id,
                &b.branch_qualifier,
            ))
        });
        xids.dedup();
        xids
    }

    /// Every prepared XA transaction this member knows of, its own and those announced, with
    /// its Xid (what a member that joins is told: `xa.rs`'s `send_xa_prepared_to`).
    pub(crate) fn prepared_transactions(&self) -> Vec<(Uuid, XaId)> {
        let own = self.prepared.iter().flat_map(|(xid, txns)| txns.iter().map(move |txn| (*txn, xid.clone())));
        own.chain(self.elsewhere.iter().map(|(txn, xid)| (*txn, xid.clone()))).collect()
    }

    /// Another member prepared XA transaction `txn` of `xid`. False: this member holds
    /// `max-transactions` of them already (not kept).
    pub(crate) fn prepared_elsewhere(&mut self, txn: Uuid, xid: XaId) -> bool {
        if self.elsewhere.len() >= self.bounds.per_member as usize && !self.elsewhere.contains_key(&txn) {
            return false;
        }
        self.elsewhere.insert(txn, xid);
        true
    }

    /// XA transaction `txn` ended on another member (its finalize, commit or rollback): no
    /// longer listed here, whether announced or prepared here (another member finalized it).
    pub(crate) fn ended_elsewhere(&mut self, txn: Uuid) {
        self.elsewhere.remove(&txn);
        if self.open.get(&txn).is_some_and(|open| matches!(open.xa, Some((_, true)))) {
            self.remove(txn);
        }
    }

    /// The Xid of this member's prepared XA transaction `txn`.
    pub(crate) fn xid_of(&self, txn: Uuid) -> Option<XaId> {
        self.open.get(&txn).and_then(|open| open.xa.as_ref()).map(|(xid, _)| xid.clone())
    }
}

/// How an XA transaction ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum XaEnd {
    Rollback,
    /// A commit without a prepare (`onePhase`).
    OnePhase,
    /// The commit of a prepared transaction.
    TwoPhase,
}

/// The registry and the backup logs as the reactors share them.
#[derive(Debug)]
pub(crate) struct Transactions {
    pub(crate) registry: Mutex<Registry>,
    /// TWO_PHASE logs: this member's transactions' holders and commits waiting for them, and
    /// the other members' transactions held here (`backup_log.rs`).
    pub(crate) logs: Mutex<Logs>,
    /// Commits whose fan-out answered, for the next sweep to purge their logs (pushed by
    /// their `TxnEnd`'s reply).
    pub(crate) finished: Arc<Mutex<Vec<Uuid>>>,
}

impl Transactions {
    pub(crate) fn new(limits: &ferrogrid_config::Limits) -> Transactions {
        Transactions {
            registry: Mutex::new(Registry::new(Bounds::of(limits))),
            logs: Mutex::new(Logs::new(limits.max_transactions as usize)),
            finished: Arc::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: Uuid = Uuid { most: 1, least: 1 };

    fn registry() -> Registry {
        let bounds = Bounds {
            per_connection: 2,
            per_member: 3,
            log_entries: 2,
            default_timeout_ms: 1_000,
            max_timeout_ms: 10_000,
        };
        Registry::new(bounds)
    }

    fn options(timeout_ms: i64) -> Options {
        Options { timeout_ms, durability: 1, transaction_type: TWO_PHASE, thread_id: 7 }
    }

    fn kind(result: Result<impl std::fmt::Debug, OpError>) -> ErrorKind {
        result.expect_err("refused").kind
    }

    #[test]
    fn a_transaction_is_used_by_its_connection_until_it_ends() {
        let mut registry = registry();
        registry.create(ID, 1, options(0), 0).unwrap();
        assert_eq!(registry.admit(ID, 1, true, 500), Ok(TWO_PHASE));
        assert_eq!(kind(registry.admit(ID, 2, false, 500)), ErrorKind::Transaction, "another connection's");
        assert_eq!(registry.end(ID, 1, true, 900), Ok(7));
        assert_eq!(kind(registry.end(ID, 1, true, 900)), ErrorKind::Transaction, "committed twice");
        assert_eq!(kind(registry.admit(ID, 1, false, 900)), ErrorKind::Transaction, "used after its end");
        assert_eq!(registry.len(), 0);
    }

    #[test]
    fn options_and_bounds_are_checked() {
        let mut registry = registry();
        assert_eq!(kind(registry.create(ID, 1, options(-1), 0)), ErrorKind::IllegalArgument);
        assert_eq!(kind(registry.create(ID, 1, options(10_001), 0)), ErrorKind::IllegalArgument);
        let two_phase_and_more = Options { transaction_type: 3, ..options(0) };
        assert_eq!(kind(registry.create(ID, 1, two_phase_and_more, 0)), ErrorKind::IllegalArgument);
        registry.create(Uuid::from_u128(1), 1, options(0), 0).unwrap();
        registry.create(Uuid::from_u128(2), 1, options(0), 0).unwrap();
        assert_eq!(kind(registry.create(Uuid::from_u128(3), 1, options(0), 0)), ErrorKind::Transaction);
        registry.create(Uuid::from_u128(3), 2, options(0), 0).unwrap();
        assert_eq!(kind(registry.create(Uuid::from_u128(4), 3, options(0), 0)), ErrorKind::Transaction);
        registry.admit(Uuid::from_u128(1), 1, true, 0).unwrap();
        registry.admit(Uuid::from_u128(1), 1, true, 0).unwrap();
        registry.admit(Uuid::from_u128(1), 1, false, 0).unwrap();
        assert_eq!(kind(registry.admit(Uuid::from_u128(1), 1, true, 0)), ErrorKind::Transaction, "log full");
    }

    #[test]
    fn a_deadline_rolls_back_and_a_closed_connection_ends_its_transactions() {
        let mut registry = registry();
        registry.create(ID, 1, options(100), 0).unwrap();
        registry.create(Uuid::from_u128(9), 1, options(5_000), 0).unwrap();
        assert!(registry.take_expired(100).is_empty(), "not before its deadline");
        assert_eq!(registry.take_expired(101), [(ID, 7)]);
        assert!(registry.take_expired(102).is_empty(), "rolled back once");
        assert_eq!(kind(registry.admit(ID, 1, false, 102)), ErrorKind::TransactionTimedOut);
        let mut ended = registry.take_connection(1);
        ended.sort_by_key(|txn| txn.as_u128());
        assert_eq!(ended, [Uuid::from_u128(9), ID], "both, the timed-out one again");
        assert_eq!(registry.len(), 0);
        registry.create(ID, 1, options(100), 0).unwrap();
        assert_eq!(kind(registry.end(ID, 1, true, 200)), ErrorKind::TransactionTimedOut);
        assert_eq!(registry.len(), 0, "a failed commit ends it");
    }

    fn xid(branch: u8) -> XaId {
        XaId { format_id: 7, global_transaction_id: [1, 2].into(), branch_qualifier: [branch].into() }
    }

    #[test]
    fn an_xa_transaction_commits_in_one_phase_or_once_prepared() {
        let mut registry = registry();
        registry.create_xa(ID, xid(1), 1, 0, 0).unwrap();
        assert_eq!(kind(registry.end_xa(ID, 1, XaEnd::TwoPhase, 10)), ErrorKind::IllegalState, "not prepared");
        assert_eq!(kind(registry.end(ID, 1, true, 10)), ErrorKind::Transaction, "not a plain transaction");
        assert_eq!(kind(registry.prepare(ID, 2, 10)), ErrorKind::Transaction, "another connection's");
        registry.end_xa(ID, 1, XaEnd::OnePhase, 10).unwrap();
        assert_eq!(registry.len(), 0);
        registry.create_xa(ID, xid(1), 1, 0, 0).unwrap();
        registry.admit(ID, 1, true, 10).unwrap();
        registry.prepare(ID, 1, 10).unwrap();
        assert_eq!(kind(registry.prepare(ID, 1, 10)), ErrorKind::Transaction, "prepared twice");
        assert_eq!(kind(registry.admit(ID, 1, true, 10)), ErrorKind::Transaction, "a write after the prepare");
        assert_eq!(registry.prepared_xids(), [xid(1)]);
        assert_eq!(kind(registry.end_xa(ID, 1, XaEnd::OnePhase, 10)), ErrorKind::Transaction, "prepared");
        registry.end_xa(ID, 1, XaEnd::TwoPhase, 10).unwrap();
        assert!(registry.prepared_xids().is_empty());
        assert_eq!(registry.len(), 0);
    }

    #[test]
    fn a_prepared_xa_transaction_outlives_its_connection_until_finalized() {
        let mut registry = registry();
        let (prepared, unprepared) = (Uuid::from_u128(1), Uuid::from_u128(2));
        registry.create_xa(prepared, xid(1), 1, 0, 0).unwrap();
        registry.create_xa(unprepared, xid(2), 1, 0, 0).unwrap();
        registry.prepare(prepared, 1, 10).unwrap();
        assert_eq!(registry.take_connection(1), [unprepared], "only the unprepared one is rolled back");
        assert_eq!(registry.prepared_xids(), [xid(1)]);
        assert_eq!(
            kind(registry.end_xa(prepared, 1, XaEnd::TwoPhase, 10)),
            ErrorKind::Transaction,
            "its connection went"
        );
        registry.create(Uuid::from_u128(3), 1, options(0), 0).unwrap();
        registry.create(Uuid::from_u128(4), 1, options(0), 0).unwrap();
        assert_eq!(registry.take_xid(&xid(2), 20), Taken { txns: vec![], timed_out: false }, "never prepared");
        assert_eq!(registry.take_xid(&xid(1), 20), Taken { txns: vec![prepared], timed_out: false });
        assert_eq!(registry.take_xid(&xid(1), 20), Taken { txns: vec![], timed_out: false }, "taken once");
        assert_eq!(registry.len(), 2);
    }

    #[test]
    fn another_member_s_prepared_xa_transactions_are_listed_and_finalized_here() {
        let mut registry = registry();
        let (here, there) = (Uuid::from_u128(1), Uuid::from_u128(2));
        registry.create_xa(here, xid(1), 1, 0, 0).unwrap();
        registry.prepare(here, 1, 10).unwrap();
        assert!(registry.prepared_elsewhere(there, xid(1)));
        assert!(registry.prepared_elsewhere(Uuid::from_u128(3), xid(2)));
        assert_eq!(registry.prepared_xids(), [xid(1), xid(2)]);
        let mut taken = registry.take_xid(&xid(1), 20).txns;
        taken.sort_by_key(|txn| txn.as_u128());
        assert_eq!(taken, [here, there], "both branches, wherever prepared");
        registry.ended_elsewhere(Uuid::from_u128(3));
        assert!(registry.prepared_xids().is_empty());
        registry.create_xa(here, xid(3), 1, 0, 0).unwrap();
        registry.prepare(here, 1, 10).unwrap();
        registry.ended_elsewhere(here);
        assert!(registry.prepared_xids().is_empty(), "finalized by another member");
        assert_eq!(registry.len(), 0);
    }

    #[test]
    fn a_prepared_xa_transaction_past_its_deadline_stays_listed_and_fails_its_commit() {
        let mut registry = registry();
        registry.create_xa(ID, xid(1), 1, 100, 0).unwrap();
        registry.prepare(ID, 1, 50).unwrap();
        assert_eq!(registry.take_expired(101), [(ID, 0)]);
        assert_eq!(registry.prepared_xids(), [xid(1)], "listed until its transaction manager ends it");
        assert_eq!(registry.take_xid(&xid(1), 102), Taken { txns: vec![ID], timed_out: true });
        assert_eq!(registry.len(), 0);
        registry.create_xa(ID, xid(1), 1, 100, 0).unwrap();
        assert_eq!(kind(registry.prepare(ID, 1, 101)), ErrorKind::TransactionTimedOut);
        assert_eq!(kind(registry.end_xa(ID, 1, XaEnd::OnePhase, 101)), ErrorKind::TransactionTimedOut);
        assert_eq!(registry.len(), 0, "a failed commit ends it");
    }

    #[test]
    fn xid_parts_are_bounded() {
        let long = [0u8; MAX_XID_PART + 1];
        let wire = ferrogrid_protocol::codec::Xid { format_id: 1, global_transaction_id: &long, branch_qualifier: &[] };
        assert_eq!(kind(XaId::of(&wire)), ErrorKind::IllegalArgument);
        let fits = ferrogrid_protocol::codec::Xid { global_transaction_id: &long[1..], ..wire };
        assert_eq!(XaId::of(&fits).unwrap().wire(), fits);
    }
}
