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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::listeners::Listeners;
    use crate::engine::locks::KeyDeadline;
    use crate::engine::request::string_data as data;
    use crate::engine::settings::SettingsCache;
    use crate::net::outbox::Outbox;
    use ferrogrid_protocol::PartitionId;
    use std::borrow::Cow;
    use std::sync::Arc;

    const CLIENT: Uuid = Uuid { most: 1, least: 1 };
    const OTHER: Uuid = Uuid { most: 2, least: 2 };
    const TXN: Uuid = Uuid { most: 9, least: 9 };

    #[derive(Default)]
    struct Answers(Vec<String>);

    impl Replies for Answers {
        fn reply(&mut self, reply: Reply<'_>) {
            self.0.push(format!("{reply:?}"));
        }
    }

    /// Runs `op` of transaction TXN (thread 1, as CLIENT) on key `key` of map "m".
    fn try_run(
        partition: &mut PartitionStore,
        settings: &mut SettingsCache,
        key: &[u8],
        op: TxnOp<'_>,
    ) -> Result<(Done, String), OpError> {
        let (mut listeners, mut outbox) = (Listeners::default(), Outbox::default());
        let (mut released, mut deadlines): (Vec<_>, Vec<KeyDeadline>) = (Vec::new(), Vec::new());
        let mut ctx = OpContext {
            now_ms: 0,
            member: Uuid::default(),
            source: CLIENT,
            partition_id: PartitionId(0),
            counter_slot: 0,
            settings,
            listeners: &mut listeners,
            outbox: &mut outbox,
            released: &mut released,
            deadlines: &mut deadlines,
        };
        let mut answers = Answers::default();
        let done = execute(partition, &mut ctx, "m", (key, TXN, 1, true), &op, &mut answers)?;
        Ok((done, answers.0.join(", ")))
    }

    fn run(partition: &mut PartitionStore, settings: &mut SettingsCache, key: &[u8], op: TxnOp<'_>) -> (Done, String) {
        try_run(partition, settings, key, op).expect("not refused")
    }

    #[test]
    fn a_transaction_stages_under_the_key_lock_and_reads_its_own_writes() {
        let mut settings = SettingsCache::new(Arc::new(ferrogrid_config::MemberConfig::default()), 271);
        let mut partition = PartitionStore::default();
        let (key, old, new) = (data("k"), data("old"), data("new"));
        partition.map_mut("m", || settings.get("m")).put(&key, &old, 0, -1, -1);
        let put = TxnOp::Put { value: Cow::Borrowed(&new), ttl_ms: -1 };
        assert_eq!(run(&mut partition, &mut settings, &key, put).1, format!("Value(Some({old:?}))"));
        let store = partition.map("m").unwrap();
        assert_eq!(store.get(&key, 0).map(|entry| entry.value().to_vec()), Some(old.clone()), "not applied");
        assert!(!store.locks.may_write(&key, LockOwner { client: OTHER, thread_id: 1 }), "locked for others");
        assert!(store.staged.blocks_read(&key, OTHER, &store.locks), "a TWO_PHASE transaction's key");
        assert_eq!(run(&mut partition, &mut settings, &key, TxnOp::Get).1, format!("Value(Some({new:?}))"));
        assert_eq!(run(&mut partition, &mut settings, &key, TxnOp::Delete).1, "Empty");
        assert_eq!(run(&mut partition, &mut settings, &key, TxnOp::ContainsKey).1, "Bool(false)");
        let same = TxnOp::RemoveIfSame { value: Cow::Borrowed(&old) };
        assert_eq!(run(&mut partition, &mut settings, &key, same).1, "Bool(false)", "removed in the transaction");
        // One hold of the lock however many operations: one unlock releases it.
        let store = partition.existing_mut("m").unwrap();
        let staged = store.staged.take(TXN);
        assert_eq!(staged.len(), 1);
        assert_eq!(staged[0].1.change, Change::Removed);
        assert!(store.locks.unlock(&key, staged[0].1.owner).is_ok());
        assert!(!store.locks.is_locked(&key));
    }

    #[test]
    fn another_owner_s_lock_parks_a_write_but_not_a_read() {
        let mut settings = SettingsCache::new(Arc::new(ferrogrid_config::MemberConfig::default()), 271);
        let mut partition = PartitionStore::default();
        let key = data("k");
        let store = partition.map_mut("m", || settings.get("m"));
        assert!(store.locks.acquire(&key, LockOwner { client: OTHER, thread_id: 1 }, -1, 0));
        let (done, answered) = run(&mut partition, &mut settings, &key, TxnOp::GetForUpdate);
        assert_eq!((done, answered.as_str()), (Done::Park { wait_ms: 600_000 }, ""));
        assert!(partition.map("m").unwrap().staged.is_empty(), "nothing staged while it waits");
        assert_eq!(run(&mut partition, &mut settings, &key, TxnOp::Get), (Done::Answered, "Value(None)".into()));
        let null = TxnOp::Set { value: Cow::Borrowed(&[0, 0, 0, 0, 0, 0, 0, 0][..]) };
        let refused = try_run(&mut partition, &mut settings, &key, null).expect_err("a null value");
        assert_eq!(refused.kind, crate::engine::request::ErrorKind::NullArgument);
    }
}
