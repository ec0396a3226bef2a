//! Per-map settings, and Hazelcast's rules for choosing which configured entry applies to a map.
//!
//! An entry is named either exactly (`orders`) or by a pattern with one `*` wildcard (`orders*`,
//! `*-cache`, `a*z`). `MapConfigs::validate` keeps every entry name non-empty with at most one `*`.

use std::collections::BTreeMap;

use crate::error::{invalid, ConfigError};
use crate::merge_policy::MergePolicyConfig;

/// Most backups, synchronous and asynchronous together, a map may keep (as in Hazelcast).
pub const MAX_BACKUP_COUNT: u8 = 6;

/// Largest `time_to_live_seconds` / `max_idle_seconds`: Hazelcast keeps them as a signed 32-bit int.
pub const MAX_EXPIRY_SECONDS: u64 = i32::MAX as u64;

/// Name of the entry used when no exact name or pattern matches.
pub const DEFAULT_MAP_NAME: &str = "default";

/// Settings of one map, from `hazelcast.map.<name or pattern>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapConfig {
    /// Synchronous backups of each partition. `backup-count`, default 1, in `0..=6`.
    pub backup_count: u8,
    /// Asynchronous backups. `async-backup-count`, default 0; `backup_count + async_backup_count`
    /// must be at most 6.
    pub async_backup_count: u8,
    /// Seconds an entry lives after its last write; 0 = forever. `time-to-live-seconds`,
    /// default 0, at most `MAX_EXPIRY_SECONDS`.
    pub time_to_live_seconds: u64,
    /// Seconds an entry lives after its last access; 0 = forever. `max-idle-seconds`,
    /// default 0, at most `MAX_EXPIRY_SECONDS`.
    pub max_idle_seconds: u64,
    /// Size bound and what to evict at it. `eviction`, default: no bound.
    pub eviction: EvictionConfig,
    /// Whether entry views report creation/access/update times and hits (`per-entry-stats-enabled`,
    /// default false; Hazelcast then reports −1 for them).
    pub per_entry_stats_enabled: bool,
    /// Indexes the map has from its start (`indexes`: a list of `type` (SORTED, the default;
    /// HASH; BITMAP) and `attributes`), as `Map.addIndex` adds them.
    pub indexes: Vec<MapIndexConfig>,
    /// How the entries of a cluster that merges into another after a split-brain are merged
    /// (`merge-policy`: `class-name`, Hazelcast's short or full name, default
    /// PutIfAbsentMergePolicy; `batch-size`, default 100, in `1..=MAX_MERGE_BATCH_SIZE`).
    pub merge_policy: MergePolicyConfig,
    /// The map's event journal (`event-journal`: `enabled`, default false; `capacity`, default
    /// 10,000 events for the whole map, split evenly over the partitions as Hazelcast splits it,
    /// in `1..=2147483647`; `time-to-live-seconds`, default 0 = until overwritten, in
    /// `0..=2147483647`).
    pub event_journal: EventJournalConfig,
    /// Whether the map is persisted when the member's persistence is enabled
    /// (`data-persistence`: `enabled`, `fsync`, both default false).
    pub data_persistence: crate::DataPersistenceConfig,
}

/// `hazelcast.map.<name>.event-journal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventJournalConfig {
    pub enabled: bool,
    pub capacity: u32,
    pub time_to_live_seconds: u32,
}

impl EventJournalConfig {
    pub const DEFAULT: EventJournalConfig =
        EventJournalConfig { enabled: false, capacity: 10_000, time_to_live_seconds: 0 };

    /// Checks the bounds documented on [`MapConfig::event_journal`].
    fn validate(&self, key: &str) -> Result<(), ConfigError> {
        let max = i32::MAX as u32;
        if self.capacity == 0 || self.capacity > max {
            let message = format!("expected 1..={max}, got {}", self.capacity);
            return Err(invalid(format!("{key}.event-journal.capacity"), message));
        }
        if self.time_to_live_seconds > max {
            let message = format!("expected 0..={max}, got {}", self.time_to_live_seconds);
            return Err(invalid(format!("{key}.event-journal.time-to-live-seconds"), message));
        }
        Ok(())
    }
}

/// One index of `hazelcast.map.<name>.indexes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapIndexConfig {
    /// SORTED (true) or HASH/BITMAP (false).
    pub sorted: bool,
    /// At least one, none blank.
    pub attributes: Vec<String>,
}

/// How a map's size bound is measured (`eviction.max-size-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxSizePolicy {
    /// Entries on this member (`PER_NODE`, the default).
    PerNode,
    /// Entries in each partition (`PER_PARTITION`).
    PerPartition,
    /// Mebibytes of keys and values held by this member (`USED_HEAP_SIZE`).
    UsedHeapSize,
}

/// Which entry goes when a map is at its bound (`eviction.eviction-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvictionPolicy {
    /// Least recently used (of a sample).
    Lru,
    /// Least frequently used (of a sample).
    Lfu,
    Random,
    /// No eviction (the default): the bound is not enforced, as in Hazelcast.
    None,
}

/// `hazelcast.map.<name>.eviction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvictionConfig {
    /// The bound, in the unit of `max_size_policy`. `size`, default `i32::MAX`, at least 1.
    pub size: u32,
    pub max_size_policy: MaxSizePolicy,
    pub eviction_policy: EvictionPolicy,
}

impl EvictionConfig {
    pub const DEFAULT: EvictionConfig = EvictionConfig {
        size: i32::MAX as u32,
        max_size_policy: MaxSizePolicy::PerNode,
        eviction_policy: EvictionPolicy::None,
    };
}

impl Default for EvictionConfig {
    fn default() -> Self {
        EvictionConfig::DEFAULT
    }
}

impl MapConfig {
    /// Hazelcast's built-in map settings, used for every key an entry does not set.
    pub const DEFAULT: MapConfig = MapConfig {
        backup_count: 1,
        async_backup_count: 0,
        time_to_live_seconds: 0,
        max_idle_seconds: 0,
        eviction: EvictionConfig::DEFAULT,
        per_entry_stats_enabled: false,
        indexes: Vec::new(),
        merge_policy: MergePolicyConfig::DEFAULT,
        event_journal: EventJournalConfig::DEFAULT,
        data_persistence: crate::DataPersistenceConfig::DEFAULT,
    };

    /// Checks every bound documented on the fields; `key` is the entry's dotted path.
    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if self.backup_count > MAX_BACKUP_COUNT {
            return Err(invalid(
                format!("{key}.backup-count"),
                format!("expected 0..={MAX_BACKUP_COUNT}, got {}", self.backup_count),
            ));
        }
        check_backup_counts(key, self.backup_count, self.async_backup_count)?;
        self.merge_policy.validate(key)?;
        self.event_journal.validate(key)?;
        if self.eviction.size == 0 || self.eviction.size > i32::MAX as u32 {
            let message = format!("expected 1..={}, got {}", i32::MAX, self.eviction.size);
            return Err(invalid(format!("{key}.eviction.size"), message));
        }
        let expiries =
            [("time-to-live-seconds", self.time_to_live_seconds), ("max-idle-seconds", self.max_idle_seconds)];
        for (name, seconds) in expiries {
            if seconds > MAX_EXPIRY_SECONDS {
                return Err(invalid(
                    format!("{key}.{name}"),
                    format!("expected 0..={MAX_EXPIRY_SECONDS}, got {seconds}"),
                ));
            }
        }
        Ok(())
    }
}

impl Default for MapConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_MAP_CONFIG: MapConfig = MapConfig::DEFAULT;

/// Checks that `backup-count + async-backup-count` of the object configured at `key` is at
/// most [`MAX_BACKUP_COUNT`] (every kind with backups has both keys).
pub(crate) fn check_backup_counts(key: &str, backup_count: u8, async_backup_count: u8) -> Result<(), ConfigError> {
    if u16::from(backup_count) + u16::from(async_backup_count) <= u16::from(MAX_BACKUP_COUNT) {
        return Ok(());
    }
    let message = format!(
        "backup-count + async-backup-count must be at most {MAX_BACKUP_COUNT}, got {backup_count} + {async_backup_count}"
    );
    Err(invalid(format!("{key}.async-backup-count"), message))
}

/// The capacity clients see of a collection bounded by `max-size`: it, or Integer.MAX_VALUE
/// when 0 (unbounded), as Hazelcast reports it (queues, lists, sets).
pub(crate) fn capacity_of(max_size: u32) -> u32 {
    if max_size == 0 {
        i32::MAX as u32
    } else {
        max_size
    }
}

/// Checks a `max-size` of the object configured at `key`: `0..=2147483647`.
pub(crate) fn check_max_size(key: &str, max_size: u32) -> Result<(), ConfigError> {
    if max_size > i32::MAX as u32 {
        let expected = format!("expected 0..={}, got {max_size}", i32::MAX);
        return Err(invalid(format!("{key}.max-size"), expected));
    }
    Ok(())
}

/// Configured entries of one kind of object (maps, queues, …), keyed by exact name or wildcard
/// pattern, resolved for an object's name by Hazelcast's rules ([`NamedConfigs::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedConfigs<T> {
    entries: BTreeMap<String, T>,
}

impl<T> Default for NamedConfigs<T> {
    fn default() -> Self {
        NamedConfigs { entries: BTreeMap::new() }
    }
}

/// All configured map entries.
pub type MapConfigs = NamedConfigs<MapConfig>;

impl<T> NamedConfigs<T> {
    /// Adds or replaces the entry for `name_or_pattern`, returning the one it replaced.
    pub fn insert(&mut self, name_or_pattern: impl Into<String>, config: T) -> Option<T> {
        self.entries.insert(name_or_pattern.into(), config)
    }

    /// The entry configured under exactly this name or pattern, if any.
    pub fn get(&self, name_or_pattern: &str) -> Option<&T> {
        self.entries.get(name_or_pattern)
    }

    /// All entries in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.entries.iter().map(|(name, config)| (name.as_str(), config))
    }

    /// The settings that apply to the object called `name`, by Hazelcast's rules:
    /// 1. the entry named exactly `name`, then the one named its base name (the part before any
    ///    `@`, which Hazelcast uses for a partition key);
    /// 2. else the matching wildcard pattern that fixes the most characters (longest pattern);
    ///    equally long matches, which Hazelcast rejects at lookup, are broken by taking the
    ///    pattern first in byte order, so the answer is always the same;
    /// 3. else the entry named `default`;
    /// 4. else `fallback` (the kind's built-in defaults).
    pub fn resolve<'a>(&'a self, name: &str, fallback: &'a T) -> &'a T {
        self.matching(name).or_else(|| self.get(DEFAULT_MAP_NAME)).unwrap_or(fallback)
    }

    /// Steps 1 and 2 of [`NamedConfigs::resolve`]: the entry named `name` (or its base name),
    /// else the longest matching pattern; None when neither (Hazelcast's `lookupByPattern`,
    /// which a member asks of its static configuration before its dynamic one).
    pub fn matching(&self, name: &str) -> Option<&T> {
        let base_name = name.split('@').next().unwrap_or(name);
        if let Some(config) = self.get(name).or_else(|| self.get(base_name)) {
            return Some(config);
        }
        let mut best: Option<(usize, &T)> = None;
        for (pattern, config) in &self.entries {
            let Some(score) = wildcard_score(pattern, base_name) else {
                continue;
            };
            match best {
                Some((best_score, _)) if best_score >= score => {}
                _ => best = Some((score, config)),
            }
        }
        best.map(|(_, config)| config)
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Checks that each name is non-empty with at most one `*`, and each entry with `check`
    /// (given the entry's key, `hazelcast.<section>.<name>`).
    pub fn validate_with(
        &self,
        section: &str,
        check: impl Fn(&T, &str) -> Result<(), ConfigError>,
    ) -> Result<(), ConfigError> {
        for (name, config) in &self.entries {
            let key = format!("hazelcast.{section}.{name}");
            if name.is_empty() || name.matches('*').count() > 1 {
                return Err(invalid(key, "expected a name, or a pattern with exactly one '*' wildcard"));
            }
            check(config, &key)?;
        }
        Ok(())
    }
}

impl MapConfigs {
    /// The settings of the map called `name` (see [`NamedConfigs::resolve`]).
    pub fn for_map(&self, name: &str) -> &MapConfig {
        self.resolve(name, &DEFAULT_MAP_CONFIG)
    }

    /// Checks every entry's bounds and that each name is non-empty with at most one `*`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with("map", MapConfig::validate)
    }
}

/// How many characters `pattern` fixes if it is a wildcard pattern that matches `name`.
fn wildcard_score(pattern: &str, name: &str) -> Option<usize> {
    let (prefix, suffix) = pattern.split_once('*')?;
    let fixed = prefix.len() + suffix.len();
    let matches = name.len() >= fixed && name.starts_with(prefix) && name.ends_with(suffix);
    matches.then_some(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backups(count: u8) -> MapConfig {
        MapConfig { backup_count: count, ..MapConfig::DEFAULT }
    }

    #[test]
    fn resolution_prefers_exact_then_longest_pattern_then_default() {
        let mut maps = MapConfigs::default();
        assert_eq!(maps.for_map("anything"), &MapConfig::DEFAULT);
        maps.insert("default", backups(0));
        maps.insert("orders", backups(1));
        maps.insert("orders*", backups(2));
        maps.insert("orders-eu*", backups(3));
        maps.insert("*-cache", backups(4));
        maps.insert("a*z", backups(5));
        assert_eq!(maps.for_map("orders").backup_count, 1);
        assert_eq!(maps.for_map("orders-us").backup_count, 2);
        assert_eq!(maps.for_map("orders-eu-west").backup_count, 3);
        assert_eq!(maps.for_map("users-cache").backup_count, 4);
        assert_eq!(maps.for_map("abcz").backup_count, 5);
        assert_eq!(maps.for_map("az").backup_count, 5);
        assert_eq!(maps.for_map("z").backup_count, 0, "prefix and suffix may not overlap");
        assert_eq!(maps.for_map("customers").backup_count, 0);
        assert_eq!(maps.for_map("orders@partition-key").backup_count, 1);
    }

    #[test]
    fn equally_specific_patterns_resolve_deterministically() {
        let mut maps = MapConfigs::default();
        maps.insert("ab*", backups(2));
        maps.insert("*yz", backups(3));
        // '*' sorts before letters, so "*yz" is first in byte order.
        assert_eq!(maps.for_map("abxyz").backup_count, 3);
    }
}
