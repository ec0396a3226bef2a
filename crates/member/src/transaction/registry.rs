//! The transactions this member coordinates, shared by its reactors behind one mutex (taken
//! once per transactional request; a transaction's requests come from one connection).
//!
//! A transaction is open from create to commit or rollback. Its deadline passing, or its
//! connection closing, rolls it back (the reactor that notices runs the rollback); a timed-out
//! transaction stays listed, rolled back, until its client commits (TransactionTimedOut) or
//! rolls it back, as Hazelcast's context does. Bounds: open transactions per connection and
//! per member, log entries (key writes and locks) per transaction, and the timeout.

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
}

/// The open transactions and their bounds.
#[derive(Debug)]
pub(crate) struct Registry {
    bounds: Bounds,
    open: HashMap<Uuid, Open, RandomState>,
    per_connection: HashMap<u64, u32, RandomState>,
}

fn unknown(txn: Uuid) -> OpError {
    OpError::new(ErrorKind::Transaction, format!("No transaction context found for txnId:{txn}"))
}

fn timed_out() -> OpError {
    OpError::new(ErrorKind::TransactionTimedOut, "Transaction is timed-out!")
}

impl Registry {
    pub(crate) fn new(bounds: Bounds) -> Registry {
        Registry { bounds, open: HashMap::default(), per_connection: HashMap::default() }
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
        let theirs: Vec<Uuid> =
            self.open.iter().filter(|(_, open)| open.connection == connection).map(|(txn, _)| *txn).collect();
        theirs.iter().for_each(|txn| self.remove(*txn));
        theirs
    }
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
}
