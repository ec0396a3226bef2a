//! JCache's requests over every member: createConfig, getConfig and destroy (a cache's life),
//! and size, clear, removeAll (all, or of keys) and getAll over the partitions. A data request
//! on a cache that does not exist fails with CacheNotExistsException, as Hazelcast's does.

use crate::engine::cache::configs::CacheDef;
use crate::engine::cache::expiry::ExpiryPolicy;
use crate::engine::cache::journal::Journaled;
use crate::engine::cache::store::CacheStore;
use crate::engine::listeners::caches::{CacheChange, CacheEventKind};
use crate::engine::listeners::Registry;
use crate::engine::map::entry::Meta;
use crate::engine::request::{ErrorKind, OpError, Reply};
use crate::engine::structures::ObjectKind;
use crate::engine::wide::{touch, Items, Partial, Partitions, ShareContext, WideOperation};
use crate::partition::object::RemovedEntry;
use crate::partition::objects::kind;
use ferrogrid_protocol::message::{write_frame, MessageWriter, RESPONSE_HEADER_SIZE};
use ferrogrid_protocol::{DecodeError, Message, PartitionId};
use std::sync::Arc;

/// The error of a request over the partitions on the cache `name`, which does not exist.
fn config_not_created(name: &str) -> OpError {
    let text = format!("Cache config for cache {} has not been created yet!", crate::tenants::display(name));
    OpError::new(ErrorKind::CacheNotExists, text)
}

/// A cache's configuration held (its frames), and a share's refusal.
#[derive(Debug, Default)]
pub(crate) struct Configured {
    holder: Option<Box<[u8]>>,
    refusal: Option<String>,
}

impl Partial for Configured {
    fn merge(&mut self, other: Configured) {
        self.holder = self.holder.take().or(other.holder);
        self.refusal = self.refusal.take().or(other.refusal);
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        match &self.holder {
            Some(holder) => writer.frame(holder),
            None => writer.null(),
        };
        match &self.refusal {
            Some(refusal) => writer.frame(refusal.as_bytes()),
            None => writer.null(),
        };
    }

    fn read_from(message: &Message<'_>) -> Result<Configured, DecodeError> {
        let mut reader = message.reader();
        let holder = (!reader.next_is_null()).then(|| reader.value_frame("cache config")).transpose()?;
        let refusal = (!reader.next_is_null()).then(|| reader.string()).transpose()?;
        Ok(Configured { holder: holder.map(Into::into), refusal: refusal.map(Into::into) })
    }
}

impl Configured {
    fn answer(&self) -> Result<Reply<'_>, OpError> {
        match &self.refusal {
            Some(refusal) => Err(OpError::new(ErrorKind::Refused, refusal.clone())),
            None => Ok(Reply::Structure(self.holder.as_deref())),
        }
    }
}

/// Cache.CreateConfig: the cache exists on every member from now on; answers the
/// configuration it had if it existed (then nothing changes), else null.
#[derive(Debug)]
pub(crate) struct CreateConfig(pub Arc<CacheDef>);

impl WideOperation for CreateConfig {
    type Partial = Configured;
    const PARTITIONS: Partitions = Partitions::None;

    fn empty(&self) -> Configured {
        Configured::default()
    }

    fn on_share(&self, _name: &str, share: &mut ShareContext<'_>, partial: &mut Configured) {
        let limit = share.settings.dynamic.config().limits.max_dynamic_configs as usize;
        match share.settings.dynamic.caches.create(self.0.clone(), limit) {
            Ok(Some(existing)) if !Arc::ptr_eq(&existing, &self.0) && existing.request != self.0.request => {
                partial.holder = Some(existing.holder.clone());
            }
            Ok(_) => {}
            Err(refusal) => partial.refusal = Some(refusal.message),
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Configured) -> Result<Reply<'p>, OpError> {
        partial.answer()
    }
}

/// Cache.GetConfig: the cache's configuration as it was created, or null.
#[derive(Debug)]
pub(crate) struct GetConfig;

impl WideOperation for GetConfig {
    type Partial = Configured;
    const PARTITIONS: Partitions = Partitions::None;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) -> Configured {
        Configured::default()
    }

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, partial: &mut Configured) {
        partial.holder = share.settings.dynamic.caches.get(name).map(|def| def.holder.clone());
    }

    fn reply<'p>(&'p self, partial: &'p mut Configured) -> Result<Reply<'p>, OpError> {
        partial.answer()
    }
}

/// Cache.Destroy: the cache's configuration, entries and listeners, everywhere (a cache that
/// does not exist: nothing to do).
#[derive(Debug)]
pub(crate) struct Destroy;

impl WideOperation for Destroy {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) {}

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, _partial: &mut ()) {
        share.settings.dynamic.caches.remove(name);
        share.listeners.drop_all_of(Registry::CacheEntries, name);
        for partition in share.partitions.iter_mut() {
            partition.drop_object(ObjectKind::Cache, name);
        }
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// What a data request over the partitions does in each.
#[derive(Debug)]
pub(crate) enum Work {
    Size,
    /// clear: every entry goes, without events.
    Clear,
    /// removeAll, of every key (None) or of these: REMOVED events, and one COMPLETED per
    /// owned partition carrying the completion id (the client counts one per partition).
    RemoveAll {
        keys: Option<Vec<Box<[u8]>>>,
        completion_id: i32,
    },
    /// getAll: the live entries of these keys, each read an access (the operation's policy,
    /// else the entry's own, else the cache's, gives its access duration).
    GetAll {
        keys: Vec<Box<[u8]>>,
        policy: Option<ExpiryPolicy>,
    },
    /// loadAll: nothing to load without a loader; with one (Java code), the failure a
    /// Hazelcast member without the loader's class answers.
    LoadAll,
}

/// Size, clear, removeAll and getAll of the cache `name`.
#[derive(Debug)]
pub(crate) struct OverPartitions {
    pub name: Box<str>,
    pub work: Work,
}

/// The partial of [`OverPartitions`]: a count, gathered entries (framed), and whether a share
/// found no such cache.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    count: u64,
    missing: bool,
    items: Items,
}

impl Partial for Gathered {
    fn merge(&mut self, other: Gathered) {
        self.count += other.count;
        self.missing |= other.missing;
        self.items.merge(other.items);
    }
    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&(self.count.min(i64::MAX as u64) as i64)).fixed(&self.missing);
        self.items.write_to(writer);
    }
    fn read_from(message: &Message<'_>) -> Result<Gathered, DecodeError> {
        let mut fixed = message.fixed(RESPONSE_HEADER_SIZE)?;
        let (count, missing) = (fixed.read::<i64>()?.max(0) as u64, fixed.read::<bool>()?);
        Ok(Gathered { count, missing, items: Items::read_from(message)? })
    }
}

impl WideOperation for OverPartitions {
    type Partial = Gathered;
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) -> Gathered {
        Gathered::default()
    }

    fn on_share(&self, name: &str, share: &mut ShareContext<'_>, partial: &mut Gathered) {
        let Some(def) = share.settings.dynamic.caches.get(name) else {
            partial.missing = true;
            return;
        };
        if let Work::LoadAll = self.work {
            partial.count = partial.count.max(u64::from(def.loader.0));
            return;
        }
        let (count, reactor) = (share.reactor.1, share.reactor.0);
        for (local, partition) in share.partitions.iter_mut().enumerate() {
            let owned = share.owned.get(local).copied().unwrap_or(true);
            let partition_id = PartitionId((reactor + local * count) as u16);
            let Some(store) = partition.existing_store_mut::<kind::Cache>(name) else {
                if let (true, Work::RemoveAll { completion_id, .. }) = (owned, &self.work) {
                    completed(share.listeners, share.outbox, (share.member, name, partition_id), *completion_id);
                }
                continue;
            };
            let now = share.now_ms;
            match &self.work {
                Work::Size if owned => partial.count += store.size(now) as u64,
                Work::GetAll { keys, policy } if owned => {
                    let before = partial.items.0.len();
                    let expired = get_all(store, keys, (*policy, def.expiry), now, &mut partial.items.0);
                    share.listeners.publish_cache_expired(share.outbox, (share.member, name, partition_id), &expired);
                    // Accesses moved expiry times: the backups are told after the share.
                    if partial.items.0.len() > before || !expired.is_empty() {
                        touch(share.touched, local);
                    }
                }
                Work::Clear => {
                    store.clear(now);
                    store.restart_journal(now);
                    if owned && share.listeners.has_cache_listeners(name) {
                        let change =
                            CacheChange { kind: CacheEventKind::Invalidated, key: &[], value: None, old_value: None };
                        share.listeners.publish_cache(share.outbox, (share.member, name, partition_id), change, -1);
                    }
                }
                Work::RemoveAll { keys, completion_id } => {
                    let removed = match keys {
                        None => store.clear(now),
                        Some(keys) => store.remove_keys(keys, now),
                    };
                    if owned {
                        for (key, value) in &removed {
                            store.journal_event(Journaled::Removed, key, (None, Some(value)), now);
                        }
                        // Backed up, and parked journal reads answered, after the share.
                        touch(share.touched, local);
                        for (key, value) in &removed {
                            let change = CacheChange {
                                kind: CacheEventKind::Removed,
                                key,
                                value: Some(value),
                                old_value: Some(value),
                            };
                            share.listeners.publish_cache(share.outbox, (share.member, name, partition_id), change, -1);
                        }
                        completed(share.listeners, share.outbox, (share.member, name, partition_id), *completion_id);
                    }
                }
                _ => {}
            }
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Gathered) -> Result<Reply<'p>, OpError> {
        if partial.missing {
            return Err(config_not_created(&self.name));
        }
        Ok(match self.work {
            Work::Size => Reply::Int(partial.count.min(i32::MAX as u64) as i32),
            Work::GetAll { .. } => partial.items.list(),
            Work::LoadAll if partial.count > 0 => {
                return Err(OpError::new(ErrorKind::CacheLoader, "Exception in CacheLoader during loadAll"))
            }
            Work::Clear | Work::RemoveAll { .. } | Work::LoadAll => Reply::Empty,
        })
    }
}

/// One partition's share of a getAll: the live entries of `keys` (key and value frames into
/// `items`), each read an access (the operation's policy, else the entry's own, else the
/// cache's: `policies`); answers the entries found expired (gone, journaled as removals).
fn get_all(
    store: &mut CacheStore,
    keys: &[Box<[u8]>],
    (operation, cache): (Option<ExpiryPolicy>, ExpiryPolicy),
    now: i64,
    items: &mut Vec<u8>,
) -> Vec<RemovedEntry> {
    let mut expired = Vec::new();
    for key in keys {
        if let Some(value) = store.take_expired(key, now) {
            store.journal_event(Journaled::Removed, key, (None, Some(&value)), now);
            expired.push(RemovedEntry::new(key, &value, &Meta::plain(0), false));
            continue;
        }
        let Some(record) = store.get(key, now) else { continue };
        write_frame(items, 0, key);
        write_frame(items, 0, &record.value);
        if let Some(lifetime) = operation.or(record.policy).unwrap_or(cache).access {
            store.set_expiry(key, lifetime.from(now));
        }
        store.touch(key, now);
    }
    expired
}

/// The COMPLETED event of a partition's share of a removeAll.
fn completed(
    listeners: &mut crate::engine::listeners::Listeners,
    outbox: &mut crate::net::outbox::Outbox,
    (member, name, partition): (ferrogrid_protocol::Uuid, &str, PartitionId),
    completion_id: i32,
) {
    if completion_id != -1 && listeners.has_cache_listeners(name) {
        let change = CacheChange { kind: CacheEventKind::Completed, key: &[], value: None, old_value: None };
        listeners.publish_cache(outbox, (member, name, partition), change, completion_id);
    }
}
