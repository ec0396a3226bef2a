//! The caches that exist: a cache exists once a client created its configuration
//! (`Cache.CreateConfig`, which the Java client's `CacheManager.createCache` sends) and until it
//! is destroyed. Every member keeps them ([`CacheConfigs`], shared by its reactors, in the
//! member's `DynamicConfigs`); a member that joins is sent each cache's CreateConfig request
//! with the dynamic configurations (`peer::CONFIGS`).
//!
//! A configuration may name a `CacheLoader` and a `CacheWriter` (factories of Java code, which
//! ferrogrid does not run): it is accepted, as a Hazelcast member without their classes accepts
//! it, and what needs them fails as there (`ops.rs`).
//!
//! Bound: at most `ferrogrid.limits.max-dynamic-configs` caches.

use crate::engine::cache::expiry::{self, ExpiryPolicy};
use crate::engine::request::{ErrorKind, OpError};
use ferrogrid_protocol::codec::{CacheConfigHolder, CacheCreateConfig, EvictionConfigHolder};
use ferrogrid_protocol::Message;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The error of a key request on the cache `name`, which does not exist.
pub(crate) fn not_exists(name: &str) -> OpError {
    let text = format!("Cache {} is already destroyed or not created yet", crate::tenants::display(name));
    OpError::new(ErrorKind::CacheNotExists, text)
}

/// Hazelcast's limit on a structure's backups.
const MAX_BACKUPS: i32 = 6;

/// One cache's configuration.
#[derive(Debug)]
pub(crate) struct CacheDef {
    /// Its name with its manager's prefix (what requests name).
    pub name: String,
    /// Its name as the user gave it (what partition-lost listeners name).
    pub simple_name: String,
    /// The CacheConfigHolder's frames, as getConfig answers them.
    pub holder: Box<[u8]>,
    /// The CreateConfig request (what a joining member is sent).
    pub request: Box<[u8]>,
    pub expiry: ExpiryPolicy,
    /// Synchronous and asynchronous backups.
    pub backups: (u8, u8),
    /// A `CacheLoader` is configured, and read-through.
    pub loader: (bool, bool),
    /// A `CacheWriter` is configured, and write-through.
    pub writer: (bool, bool),
    /// The eviction's entry count for the whole cache and its policy (None: no eviction).
    pub eviction: Option<(usize, Evict)>,
    /// Its event journal, if enabled (`journal.rs`).
    pub journal: Option<ferrogrid_config::EventJournalConfig>,
}

impl CacheDef {
    /// The entries a partition keeps at most and the eviction policy, for `partitions`
    /// partitions (Hazelcast's `EntryCountCacheEvictionChecker`: the balanced share plus a
    /// margin of 5 standard deviations up to 4,000 entries, 3 up to 1,000,000, none beyond).
    pub(crate) fn eviction(&self, partitions: u16) -> Option<(usize, Evict)> {
        let (size, evict) = self.eviction?;
        let balanced = size as f64 / f64::from(partitions.max(1));
        let margin = match size {
            0..=4_000 => 5.0,
            4_001..=1_000_000 => 3.0,
            _ => 0.0,
        };
        Some(((balanced.sqrt() * margin + balanced) as usize, evict))
    }

    /// A get of an absent key needs the loader (Java code ferrogrid does not run).
    pub(crate) fn loads_on_miss(&self) -> bool {
        self.loader == (true, true)
    }

    /// A write needs the writer (Java code ferrogrid does not run).
    pub(crate) fn writes_through(&self) -> bool {
        self.writer == (true, true)
    }
}

impl CacheDef {
    /// The definition a CreateConfig request makes, or why it is refused.
    pub(crate) fn from_request(request: &[u8]) -> Result<CacheDef, OpError> {
        let malformed =
            |error: ferrogrid_protocol::DecodeError| OpError::new(ErrorKind::IllegalArgument, error.to_string());
        let message = Message::parse(request).map_err(malformed)?;
        let create = CacheCreateConfig::decode(&message).map_err(malformed)?;
        CacheDef::from_holder(&create.config, request)
    }

    fn from_holder(holder: &CacheConfigHolder<'_>, request: &[u8]) -> Result<CacheDef, OpError> {
        let (sync, backup_async) = (holder.backup_count, holder.async_backup_count);
        if !(0..=MAX_BACKUPS).contains(&sync)
            || !(0..=MAX_BACKUPS).contains(&backup_async)
            || sync + backup_async > MAX_BACKUPS
        {
            let text = format!("the backup counts of a cache ({sync} and {backup_async}) must be 0 to {MAX_BACKUPS}, and {MAX_BACKUPS} together at most");
            return Err(OpError::new(ErrorKind::IllegalArgument, text));
        }
        Ok(CacheDef {
            name: format!("{}{}", holder.manager_prefix.unwrap_or(""), holder.name),
            simple_name: holder.name.to_owned(),
            holder: holder.frames.into(),
            request: request.into(),
            expiry: expiry::from_factory(holder.expiry_policy_factory.0)?,
            backups: (sync as u8, backup_async as u8),
            eviction: eviction(&holder.eviction)?,
            loader: (holder.loader_factory.is_some(), holder.read_through),
            writer: (holder.writer_factory.is_some(), holder.write_through),
            journal: journal(holder.event_journal)?,
        })
    }
}

/// A cache's event journal as configured, if enabled (Hazelcast's bounds: a positive capacity
/// for the whole cache, a time to live of 0 (none) or more seconds).
fn journal(
    holder: Option<ferrogrid_protocol::codec::EventJournalConfigHolder>,
) -> Result<Option<ferrogrid_config::EventJournalConfig>, OpError> {
    let Some(holder) = holder.filter(|holder| holder.enabled) else { return Ok(None) };
    let (Ok(capacity @ 1..), Ok(time_to_live_seconds)) =
        (u32::try_from(holder.capacity), u32::try_from(holder.time_to_live_seconds))
    else {
        let text = format!(
            "a cache's event journal needs a positive capacity and a time to live of 0 or more seconds (got {} and {})",
            holder.capacity, holder.time_to_live_seconds
        );
        return Err(OpError::new(ErrorKind::IllegalArgument, text));
    };
    Ok(Some(ferrogrid_config::EventJournalConfig { enabled: true, capacity, time_to_live_seconds }))
}

/// Which entry an eviction chooses among its sample (a cache's `eviction-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evict {
    /// The least recently used.
    Lru,
    /// The least frequently used.
    Lfu,
    /// Any.
    Random,
}

/// A cache's eviction as configured: ENTRY_COUNT with LRU, LFU or RANDOM (NONE: no eviction);
/// the native-memory policies are refused, as on a Hazelcast member without native memory.
fn eviction(holder: &EvictionConfigHolder<'_>) -> Result<Option<(usize, Evict)>, OpError> {
    let evict = match holder.eviction_policy {
        "NONE" => return Ok(None),
        "LRU" => Evict::Lru,
        "LFU" => Evict::Lfu,
        "RANDOM" => Evict::Random,
        other => return Err(OpError::new(ErrorKind::IllegalArgument, format!("unknown eviction policy {other}"))),
    };
    if holder.max_size_policy != "ENTRY_COUNT" {
        let text = format!(
            "Invalid max-size policy ({}) for BINARY in-memory format: only ENTRY_COUNT is served",
            holder.max_size_policy
        );
        return Err(OpError::new(ErrorKind::InvalidConfiguration, text));
    }
    Ok(Some((usize::try_from(holder.size).unwrap_or(0), evict)))
}

/// The member's caches, by name (with prefix).
#[derive(Debug, Default)]
pub struct CacheConfigs {
    caches: RwLock<BTreeMap<String, Arc<CacheDef>>>,
}

impl CacheConfigs {
    /// The cache `name` (None: never created, or destroyed).
    pub(crate) fn get(&self, name: &str) -> Option<Arc<CacheDef>> {
        self.caches.read().get(name).cloned()
    }

    /// Adds `def` unless its cache exists; answers the configuration that was there (None: it
    /// is added), or a refusal past `limit` caches.
    pub(crate) fn create(&self, def: Arc<CacheDef>, limit: usize) -> Result<Option<Arc<CacheDef>>, OpError> {
        let mut caches = self.caches.write();
        if let Some(existing) = caches.get(&def.name) {
            return Ok(Some(existing.clone()));
        }
        if caches.len() >= limit {
            let text = format!("{limit} caches exist already (ferrogrid.limits.max-dynamic-configs)");
            return Err(OpError::new(ErrorKind::Refused, text));
        }
        caches.insert(def.name.clone(), def);
        Ok(None)
    }

    /// Forgets the cache `name`; true if it existed.
    pub(crate) fn remove(&self, name: &str) -> bool {
        self.caches.write().remove(name).is_some()
    }

    /// The backups (sync and async together) of the caches named `simple_name` by their user
    /// (under any manager), the fewest; None if there is no such cache.
    pub(crate) fn backups_of_simple_name(&self, simple_name: &str) -> Option<i32> {
        let caches = self.caches.read();
        let named = caches.values().filter(|def| def.simple_name == simple_name);
        named.map(|def| i32::from(def.backups.0) + i32::from(def.backups.1)).min()
    }

    /// Every cache's CreateConfig request, for a member that joins.
    pub(crate) fn requests(&self) -> Vec<Box<[u8]>> {
        self.caches.read().values().map(|def| def.request.clone()).collect()
    }
}
