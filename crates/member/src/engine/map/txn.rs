//! A transaction's operations on one key of a map (TransactionalMap), run by the key's owner
//! like any key request: the coordinator (`transaction/service.rs`) routed it here by its key.
//!
//! As in Hazelcast, every operation but get and containsKey first takes the key's lock for the
//! transaction (owner: its client and thread, as Hazelcast's; leased for the longest a
//! transaction may live), waiting as any lock-aware request does while another owner holds
//! it; a TWO_PHASE transaction's lock also makes others' plain reads of the key wait. The change
//! is staged (`staged.rs`), not applied: the transaction reads it back, nobody else sees it,
//! and the commit (`txn_wide.rs`) applies it and releases the lock.

use crate::engine::locks::LockOwner;
use crate::engine::map::ops::{null_check, Done, OpContext};
use crate::engine::map::request::TxnOp;
use crate::engine::map::staged::{Change, StagedChange};
use crate::engine::map::store::RecordStore;
use crate::engine::request::{OpError, Replies, Reply};
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::Uuid;

/// The key's value as transaction `txn` sees it: its own staged change, else the committed one.
fn seen(store: &RecordStore, txn: Uuid, key: &[u8], now_ms: i64) -> Option<Vec<u8>> {
    match store.staged.of(txn, key) {
        Some(Change::Set { value, .. }) => Some(value.to_vec()),
        Some(Change::Removed) => None,
        Some(Change::Locked) | None => store.get(key, now_ms).map(|entry| entry.value().to_vec()),
    }
}

/// Checks the values an operation carries (Hazelcast's NullPointerException for a null).
fn check_values(op: &TxnOp<'_>) -> Result<(), OpError> {
    match op {
        TxnOp::Put { value, .. }
        | TxnOp::Set { value }
        | TxnOp::PutIfAbsent { value }
        | TxnOp::Replace { value }
        | TxnOp::RemoveIfSame { value } => null_check(value, "value"),
        TxnOp::ReplaceIfSame { expected, value } => null_check(expected, "value").and(null_check(value, "value")),
        TxnOp::Get | TxnOp::ContainsKey | TxnOp::GetForUpdate | TxnOp::Remove | TxnOp::Delete => Ok(()),
    }
}

/// Runs transaction `txn`'s operation on `key` of map `name` for thread `thread_id` of the
/// requesting client (`ctx.source`); `blocks_reads`: a TWO_PHASE transaction, whose locks make
/// others' plain reads wait. Answers [`Done::Park`] while another owner holds the key's lock.
pub fn execute(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    name: &str,
    (key, txn, thread_id, blocks_reads): (&[u8], Uuid, i64, bool),
    op: &TxnOp<'_>,
    reply: &mut impl Replies,
) -> Result<Done, OpError> {
    null_check(key, "key")?;
    check_values(op)?;
    let now_ms = ctx.now_ms;
    let lease_ms = ctx.settings.transaction_max_timeout_ms();
    let settings = &mut *ctx.settings;
    let store = partition.map_mut(name, || settings.get(name));
    store.expire_if_due(key, now_ms);
    let current = seen(store, txn, key, now_ms);
    if !op.locks() {
        let answer = match op {
            TxnOp::ContainsKey => Reply::Bool(current.is_some()),
            _ => Reply::Value(current.as_deref()),
        };
        reply.reply(answer);
        return Ok(Done::Answered);
    }
    let owner = LockOwner { client: ctx.source, thread_id };
    ctx.released.extend(store.locks.expire_lease(key, now_ms));
    let first = store.staged.of(txn, key).is_none();
    if first {
        // One hold per transaction and key (reentrant over the client's own locks), released
        // once at its end.
        if !store.locks.acquire(key, owner, lease_ms, now_ms) {
            return Ok(Done::Park { wait_ms: lease_ms });
        }
        if let Some(deadline) = store.locks.lease_deadline(key) {
            ctx.deadlines.push((deadline, name.into(), key.into()));
        }
    }
    let (answer, change) = decide(op, current.as_deref());
    let change = match change {
        Some(change) => Some(change),
        None if first => Some(Change::Locked),
        None => None,
    };
    if let Some(change) = change {
        store.staged.stage(key, StagedChange { txn, owner, blocks_reads, change });
    }
    reply.reply(answer);
    Ok(Done::Answered)
}

/// What a locking operation answers, given the value the transaction sees, and the change it
/// stages (None: none beyond the lock).
fn decide<'a>(op: &'a TxnOp<'_>, current: Option<&'a [u8]>) -> (Reply<'a>, Option<Change>) {
    let set = |value: &[u8], ttl_ms: i64| Some(Change::Set { value: value.into(), ttl_ms });
    match op {
        TxnOp::GetForUpdate => (Reply::Value(current), None),
        TxnOp::Put { value, ttl_ms } => (Reply::Value(current), set(value, *ttl_ms)),
        TxnOp::Set { value } => (Reply::Empty, set(value, -1)),
        TxnOp::PutIfAbsent { value } => match current {
            Some(_) => (Reply::Value(current), None),
            None => (Reply::Value(None), set(value, -1)),
        },
        TxnOp::Replace { value } => match current {
            Some(_) => (Reply::Value(current), set(value, -1)),
            None => (Reply::Value(None), None),
        },
        TxnOp::ReplaceIfSame { expected, value } => {
            let same = current == Some(&**expected);
            (Reply::Bool(same), if same { set(value, -1) } else { None })
        }
        TxnOp::Remove => (Reply::Value(current), current.map(|_| Change::Removed)),
        TxnOp::Delete => (Reply::Empty, Some(Change::Removed)),
        TxnOp::RemoveIfSame { value } => {
            let same = current == Some(&**value);
            (Reply::Bool(same), same.then_some(Change::Removed))
        }
        TxnOp::Get | TxnOp::ContainsKey => unreachable!("reads take no lock"),
    }
}
