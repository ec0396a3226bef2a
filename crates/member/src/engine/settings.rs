//! A map's settings, resolved from configuration when the map is first used on a reactor
//! ([`MapSettings`]), and the reactor's cache of them ([`SettingsCache`]), so that an operation
//! finds its map's settings without reading configuration.

use crate::clock::NEVER;
use ahash::RandomState;
use ferrogrid_config::{EvictionPolicy, MapConfig, MaxSizePolicy, MemberConfig};
use std::collections::HashMap;
use std::sync::Arc;

/// How a map's bound is enforced in one partition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PartitionLimit {
    Unbounded,
    /// At most this many entries (fractional, as Hazelcast translates a per-member size).
    Entries(f64),
    /// At most this many bytes of keys and values.
    Bytes(f64),
}

/// A map's settings, resolved from configuration when the map is first used on a reactor.
#[derive(Debug, Clone, PartialEq)]
pub struct MapSettings {
    pub default_ttl_ms: i64,
    pub default_max_idle_ms: i64,
    pub per_entry_stats: bool,
    pub limit: PartitionLimit,
    pub eviction_policy: EvictionPolicy,
    /// Synchronous backups (a write is answered once they applied it).
    pub backup_count: usize,
    /// Asynchronous backups (sent, not waited for).
    pub async_backup_count: usize,
    /// The map's indexes (`Map.addIndex`) as a new partition store must build them.
    pub indexes: IndexSetup,
    /// How its entries merge into another cluster after a split brain.
    pub merge_policy: ferrogrid_config::MergePolicyConfig,
    /// Its event journal in each partition, if enabled: a ringbuffer of the configured
    /// capacity divided by the partition count (at least 1), with the map's backups; and the
    /// most bytes of events one read answers with (half of `max-message-bytes`).
    pub journal: Option<(ferrogrid_config::RingbufferConfig, usize)>,
    /// Whether its entries are persisted (when the member persists) and synced per write.
    pub data_persistence: ferrogrid_config::DataPersistenceConfig,
}

/// A map's index definitions, the schemas its indexes read values with, and the reactor's
/// indexes of the map its stores file in once placed in a partition (None: settings made
/// outside a reactor).
#[derive(Debug, Clone, Default)]
pub struct IndexSetup {
    pub schemas: Arc<crate::engine::schemas::Schemas>,
    pub definitions: Vec<crate::engine::map::index::IndexDefinition>,
    pub shared: Option<crate::engine::map::index::Shared>,
}

impl PartialEq for IndexSetup {
    fn eq(&self, other: &IndexSetup) -> bool {
        self.definitions == other.definitions
    }
}

impl MapSettings {
    /// Resolves `config` for a member that is one of `member_count` over `partition_count`
    /// partitions. A per-member bound becomes a per-partition one, as in Hazelcast.
    pub fn resolve(config: &MapConfig, partition_count: u16, member_count: usize) -> MapSettings {
        let seconds = |value: u64| if value == 0 { NEVER } else { value as i64 * 1000 };
        let share = member_count as f64 / partition_count as f64;
        let size = config.eviction.size as f64;
        let limit = match (config.eviction.eviction_policy, config.eviction.max_size_policy) {
            (EvictionPolicy::None, _) => PartitionLimit::Unbounded,
            (_, MaxSizePolicy::PerPartition) => PartitionLimit::Entries(size),
            (_, MaxSizePolicy::PerNode) => PartitionLimit::Entries(size * share),
            (_, MaxSizePolicy::UsedHeapSize) => PartitionLimit::Bytes(size * 1024.0 * 1024.0 * share),
        };
        MapSettings {
            default_ttl_ms: seconds(config.time_to_live_seconds),
            default_max_idle_ms: seconds(config.max_idle_seconds),
            per_entry_stats: config.per_entry_stats_enabled,
            limit,
            eviction_policy: config.eviction.eviction_policy,
            backup_count: config.backup_count as usize,
            async_backup_count: config.async_backup_count as usize,
            indexes: IndexSetup::default(),
            merge_policy: config.merge_policy,
            journal: journal_of(config, partition_count),
            data_persistence: config.data_persistence,
        }
    }

    /// A ttl or max-idle argument from a request: −1 = the map default, 0 = never, else ms.
    pub(crate) fn effective(requested_ms: i64, default_ms: i64) -> i64 {
        match requested_ms {
            ms if ms < 0 => default_ms,
            0 => NEVER,
            ms => ms,
        }
    }
}

/// The ringbuffer a map's event journal is in each of `partition_count` partitions, as
/// Hazelcast sizes it; the read limit is set by [`SettingsCache::get`].
fn journal_of(config: &MapConfig, partition_count: u16) -> Option<(ferrogrid_config::RingbufferConfig, usize)> {
    let journal = &config.event_journal;
    if !journal.enabled {
        return None;
    }
    let ring = ferrogrid_config::RingbufferConfig {
        capacity: (journal.capacity / u32::from(partition_count.max(1))).max(1),
        time_to_live_seconds: journal.time_to_live_seconds,
        backup_count: config.backup_count,
        async_backup_count: config.async_backup_count,
        ..ferrogrid_config::RingbufferConfig::DEFAULT
    };
    Some((ring, usize::MAX))
}

impl Default for MapSettings {
    fn default() -> Self {
        MapSettings::resolve(&MapConfig::DEFAULT, 271, 1)
    }
}

/// What clients name a reliable topic's ringbuffer: this prefix and the topic's name.
const RELIABLE_TOPIC_RINGBUFFER_PREFIX: &str = "_hz_rb_";

/// Each map's resolved settings, cached per reactor.
#[derive(Debug)]
pub struct SettingsCache {
    /// Every map's index definitions (shared by the member's reactors) and the schemas.
    pub indexes: (Arc<crate::engine::map::index::Registry>, Arc<crate::engine::schemas::Schemas>),
    /// The static configuration and the configurations added while the cluster runs (shared
    /// by the member's reactors), which every look-up below goes through.
    pub dynamic: Arc<crate::engine::dynamic_config::configs::DynamicConfigs>,
    config: Arc<MemberConfig>,
    partition_count: u16,
    cache: HashMap<Box<str>, Arc<MapSettings>, RandomState>,
    /// This reactor's indexes of each map (`index.rs`): kept while settings are forgotten and
    /// made again, so every store of a map files in the same ones.
    shared_indexes: HashMap<Box<str>, crate::engine::map::index::Shared, RandomState>,
}

impl SettingsCache {
    pub fn new(config: Arc<MemberConfig>, partition_count: u16) -> SettingsCache {
        let dynamic = Arc::new(crate::engine::dynamic_config::configs::DynamicConfigs::new(config.clone()));
        let (cache, shared_indexes) = (HashMap::default(), HashMap::default());
        SettingsCache { dynamic, config, partition_count, cache, indexes: Default::default(), shared_indexes }
    }

    /// Forgets `map`'s settings (its indexes changed: stores created from now on build them).
    pub fn forget(&mut self, map: &str) {
        self.cache.remove(map);
    }

    /// This reactor's indexes of `map`, if a store of it was made here.
    pub fn shared_indexes(&self, map: &str) -> Option<crate::engine::map::index::Shared> {
        self.shared_indexes.get(map).cloned()
    }

    /// Forgets `map`'s indexes on this reactor (the map was destroyed, its stores dropped): a
    /// map of the name made later starts without them.
    pub fn drop_indexes(&mut self, map: &str) {
        self.shared_indexes.remove(map);
    }

    /// A query's bounds: the most results (`hazelcast.query.result.size.limit`; unlimited when
    /// not positive) and the most bytes of its answer (`max-message-bytes`).
    pub fn query_limits(&self) -> (usize, usize) {
        let results = self.config.cluster.query_result_size_limit;
        let results = if results > 0 { results as usize } else { usize::MAX };
        (results, self.config.limits.max_message_bytes as usize)
    }

    /// Requests that may wait for one key's lock (`max-parked-per-key`).
    /// The settings of the multimap called `name`.
    pub fn multimap(&self, name: &str) -> ferrogrid_config::MultiMapConfig {
        self.dynamic.multimap(name)
    }

    /// The settings of the replicated map called `name`.
    pub fn replicated_map(&self, name: &str) -> ferrogrid_config::ReplicatedMapConfig {
        self.dynamic.replicated_map(name)
    }

    /// The settings of the list (`set` false) or set called `name`.
    pub fn collection(&self, name: &str, set: bool) -> ferrogrid_config::CollectionConfig {
        self.dynamic.collection(name, set)
    }

    /// The settings of the cardinality estimator called `name`.
    pub fn cardinality_estimator(&self, name: &str) -> ferrogrid_config::CardinalityEstimatorConfig {
        self.dynamic.cardinality_estimator(name)
    }

    /// The settings of the PN counter called `name`.
    pub fn pn_counter(&self, name: &str) -> ferrogrid_config::PnCounterConfig {
        self.dynamic.pn_counter(name)
    }

    /// How often CRDT replicas exchange their whole states (`replication-period-millis`).
    pub fn crdt_replication_period_ms(&self) -> i64 {
        self.config.crdt_replication.replication_period_ms as i64
    }

    /// Counters a reactor sends each replica per period (`crdt-replication-batch`).
    pub fn crdt_replication_batch(&self) -> usize {
        self.config.limits.crdt_replication_batch as usize
    }

    /// Whether the topic called `name` counts its messages (`statistics-enabled`).
    pub fn topic_statistics(&self, name: &str) -> bool {
        self.dynamic.topic(name).statistics_enabled
    }

    /// The settings of the ringbuffer called `name`; a reliable topic's ringbuffer
    /// (`_hz_rb_<topic>`) has the ringbuffer settings of the topic's name, as in Hazelcast.
    pub fn ringbuffer(&self, name: &str) -> ferrogrid_config::RingbufferConfig {
        // A tenant's names are scoped (`tenant\0name`): the prefix follows the separator.
        let unscoped_at = name.find(crate::tenants::SEPARATOR).map_or(0, |at| at + 1);
        let name = match name[unscoped_at..].strip_prefix(RELIABLE_TOPIC_RINGBUFFER_PREFIX) {
            Some(topic) => format!("{}{topic}", &name[..unscoped_at]),
            None => name.to_owned(),
        };
        self.dynamic.ringbuffer(&name)
    }

    /// The settings of the queue called `name`.
    pub fn queue(&self, name: &str) -> ferrogrid_config::QueueConfig {
        self.dynamic.queue(name)
    }

    /// Query caches a member publishes, and events a publisher keeps per partition
    /// (`max-query-caches`, `query-cache-buffer-events`).
    pub fn query_cache_limits(&self) -> (usize, usize) {
        let limits = &self.config.limits;
        (limits.max_query_caches as usize, limits.query_cache_buffer_events as usize)
    }

    pub fn partition_count(&self) -> u16 {
        self.partition_count
    }

    pub fn max_message_bytes(&self) -> usize {
        self.config.limits.max_message_bytes as usize
    }

    pub fn max_parked_per_key(&self) -> usize {
        self.config.limits.max_parked_per_key as usize
    }

    /// The longest a transaction lives: how long its key locks are leased for and how long
    /// its operations wait for another's lock (`transaction-max-timeout-millis`).
    pub fn transaction_max_timeout_ms(&self) -> i64 {
        i64::from(self.config.limits.transaction_max_timeout_millis)
    }

    pub fn get(&mut self, map: &str) -> Arc<MapSettings> {
        if let Some(settings) = self.cache.get(map) {
            return settings.clone();
        }
        let config = self.dynamic.map(map);
        let mut settings = MapSettings::resolve(&config, self.partition_count, 1);
        // The configured indexes, then those added by Map.addIndex.
        let configured = config.indexes.iter().map(|index| crate::engine::map::index::IndexDefinition {
            sorted: index.sorted,
            attributes: index.attributes.iter().map(|attribute| attribute.trim().to_owned()).collect(),
        });
        let mut definitions: Vec<crate::engine::map::index::IndexDefinition> = configured.collect();
        for added in self.indexes.0.of(map) {
            if !definitions.contains(&added) {
                definitions.push(added);
            }
        }
        let shared = self
            .shared_indexes
            .entry(map.into())
            .or_insert_with(|| crate::engine::map::index::ReactorIndexes::new(self.indexes.1.clone()));
        settings.indexes = IndexSetup { schemas: self.indexes.1.clone(), definitions, shared: Some(shared.clone()) };
        if let Some((_, read_limit_bytes)) = &mut settings.journal {
            *read_limit_bytes = self.max_message_bytes() / 2;
        }
        let settings = Arc::new(settings);
        self.cache.insert(map.into(), settings.clone());
        settings
    }
}
