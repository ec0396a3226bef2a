//! A transaction's operations on one key of a multimap (TransactionalMultiMap), run by the
//! key's owner like any key request, as a map's are (`engine/map/txn.rs`): get and valueCount
//! read the transaction's view of the key; put, remove and removeEntry first take the key's
//! lock for the transaction (its client and thread, once per transaction, leased for the
//! longest a transaction may live; parking while another owner holds it), then stage the
//! key's values as the transaction sees them (`MultiMapStore::staged`), which the commit
//! (`engine/map/txn_wide.rs`) makes the key's values.

use crate::engine::locks::LockOwner;
use crate::engine::multimap::request::MultiTxnOp;
use crate::engine::multimap::store::{MultiDone, MultiMapStore, StagedValues, Values};
use crate::engine::request::{ErrorKind, OpError, Reply};
use ferrogrid_protocol::{Data, Uuid};

fn null_check(bytes: &[u8], what: &str) -> Result<(), OpError> {
    match Data(bytes).type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(OpError::new(ErrorKind::NullArgument, format!("Null {what} is not allowed!"))),
    }
}

/// Runs transaction `txn`'s operation on `key` for thread `thread_id` of `client`;
/// (`blocks_reads`: TWO_PHASE). Answers [`MultiDone::Park`] while another owner holds the
/// key's lock. `lease_ms`: how long its lock lasts at most; `deadlines` gets the lease's end.
#[allow(clippy::too_many_arguments)]
pub(crate) fn execute(
    store: &mut MultiMapStore,
    (key, txn, thread_id, blocks_reads): (&[u8], Uuid, i64, bool),
    client: Uuid,
    (now_ms, lease_ms): (i64, i64),
    op: &MultiTxnOp<'_>,
    lease_deadline: &mut Option<i64>,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<MultiDone, OpError> {
    null_check(key, "key")?;
    if let MultiTxnOp::Put { value } | MultiTxnOp::RemoveEntry { value } = op {
        null_check(value, "value")?;
    }
    let mine = store.staged.get(key).filter(|staged| staged.txn == txn);
    let mut values: Values = match mine {
        Some(staged) => staged.values.clone(),
        None => store.values(key).to_vec(),
    };
    if !op.locks() {
        match op {
            MultiTxnOp::ValueCount => reply(Reply::Int(values.len() as i32)),
            _ => reply(Reply::Values(values.iter().map(|value| &**value).collect())),
        }
        return Ok(MultiDone::Answered);
    }
    let owner = LockOwner { client, thread_id };
    if mine.is_none() {
        if !store.locks.acquire(key, owner, lease_ms, now_ms) {
            return Ok(MultiDone::Park { wait_ms: lease_ms });
        }
        *lease_deadline = store.locks.lease_deadline(key);
    }
    match op {
        MultiTxnOp::Put { value } => {
            let added = !(store.holds_sets() && values.iter().any(|held| **held == **value));
            if added {
                values.push((**value).into());
            }
            reply(Reply::Bool(added));
        }
        MultiTxnOp::RemoveKey => {
            reply(Reply::Values(values.iter().map(|value| &**value).collect()));
            values.clear();
        }
        MultiTxnOp::RemoveEntry { value } => {
            let found = values.iter().position(|held| **held == **value);
            if let Some(index) = found {
                values.remove(index);
            }
            reply(Reply::Bool(found.is_some()));
        }
        MultiTxnOp::Get | MultiTxnOp::ValueCount => unreachable!("reads take no lock"),
    }
    store.stage(key, StagedValues { txn, owner, blocks_reads, values });
    Ok(MultiDone::Answered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::string_data as data;
    use ferrogrid_config::MultiMapConfig;
    use std::borrow::Cow;

    const CLIENT: Uuid = Uuid { most: 1, least: 1 };
    const TXN: Uuid = Uuid { most: 9, least: 9 };

    /// Runs `op` of TXN (thread 1 of CLIENT) on `key`: what it did and answered.
    fn run(store: &mut MultiMapStore, key: &[u8], op: MultiTxnOp<'_>) -> (MultiDone, String) {
        let mut answers = Vec::new();
        let mut lease = None;
        let done = execute(store, (key, TXN, 1, true), CLIENT, (0, 1_000), &op, &mut lease, &mut |reply| {
            answers.push(format!("{reply:?}"))
        })
        .expect("not refused");
        (done, answers.join(", "))
    }

    #[test]
    fn a_transaction_stages_a_key_s_values_under_its_lock() {
        let mut store = MultiMapStore::new(MultiMapConfig::DEFAULT);
        let (key, a, b) = (data("k"), data("a"), data("b"));
        assert_eq!(run(&mut store, &key, MultiTxnOp::Put { value: Cow::Borrowed(&a) }).1, "Bool(true)");
        assert_eq!(run(&mut store, &key, MultiTxnOp::Put { value: Cow::Borrowed(&a) }).1, "Bool(false)", "a set");
        assert_eq!(run(&mut store, &key, MultiTxnOp::Put { value: Cow::Borrowed(&b) }).1, "Bool(true)");
        assert_eq!(run(&mut store, &key, MultiTxnOp::ValueCount).1, "Int(2)");
        assert!(store.values(&key).is_empty(), "nothing committed");
        assert!(store.blocks_read(&key, Uuid::from_u128(5)) && !store.blocks_read(&key, CLIENT));
        assert!(!store.locks.may_write(&key, LockOwner { client: Uuid::from_u128(5), thread_id: 1 }));
        assert_eq!(run(&mut store, &key, MultiTxnOp::RemoveEntry { value: Cow::Borrowed(&a) }).1, "Bool(true)");
        let staged = store.staged.remove(&key[..]).expect("staged");
        let (added, removed) = store.replace_values(&key, staged.values);
        assert_eq!((added, removed), (vec![b.clone().into_boxed_slice()], vec![]));
        assert_eq!(store.values(&key), [b.into_boxed_slice()]);
        assert!(store.locks.unlock(&key, staged.owner).is_ok(), "one hold");
        assert!(!store.locks.is_locked(&key));
    }

    #[test]
    fn another_owner_s_lock_parks_a_write() {
        let mut store = MultiMapStore::new(MultiMapConfig::DEFAULT);
        let key = data("k");
        assert!(store.locks.acquire(&key, LockOwner { client: Uuid::from_u128(5), thread_id: 1 }, -1, 0));
        assert_eq!(run(&mut store, &key, MultiTxnOp::RemoveKey).0, MultiDone::Park { wait_ms: 1_000 });
        assert_eq!(run(&mut store, &key, MultiTxnOp::Get), (MultiDone::Answered, "Values([])".into()));
        assert!(store.staged.is_empty());
    }
}
