//! List and set settings, from `hazelcast.list.<name or pattern>` and
//! `hazelcast.set.<name or pattern>` (resolved like map settings).

use crate::error::ConfigError;
use crate::map::{capacity_of, check_backup_counts, check_max_size, NamedConfigs};
use crate::merge_policy::{MergePolicy, MergePolicyConfig};

/// Settings of one list or set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectionConfig {
    /// Most items it holds; 0 (the default) is unbounded (Hazelcast's Integer.MAX_VALUE).
    /// `max-size`, in `0..=2147483647`.
    pub max_size: u32,
    /// Synchronous backups. `backup-count`, default 1, at most 6 with the asynchronous ones.
    pub backup_count: u8,
    /// Asynchronous backups. `async-backup-count`, default 0.
    pub async_backup_count: u8,
    /// How its items merge into another cluster after a split brain, all of them as one value
    /// (`merge-policy`: `class-name` PutIfAbsentMergePolicy (default), PassThroughMergePolicy
    /// or DiscardMergePolicy; `batch-size`, default 100, read and bounded but unused: each
    /// list or set is sent whole, as Hazelcast sends it).
    pub merge_policy: MergePolicyConfig,
}

impl CollectionConfig {
    pub const DEFAULT: CollectionConfig = CollectionConfig {
        max_size: 0,
        backup_count: 1,
        async_backup_count: 0,
        merge_policy: MergePolicyConfig::DEFAULT,
    };

    /// The most items it may hold: `max-size`, or Integer.MAX_VALUE when unbounded.
    pub fn capacity(&self) -> u32 {
        capacity_of(self.max_size)
    }

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        check_max_size(key, self.max_size)?;
        self.merge_policy.validate_whole(key)?;
        check_backup_counts(key, self.backup_count, self.async_backup_count)
    }
}

impl Default for CollectionConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_COLLECTION_CONFIG: CollectionConfig = CollectionConfig::DEFAULT;

/// All configured list (or set) entries.
pub type CollectionConfigs = NamedConfigs<CollectionConfig>;

impl CollectionConfigs {
    /// The settings of the collection called `name`.
    pub fn for_collection(&self, name: &str) -> &CollectionConfig {
        self.resolve(name, &DEFAULT_COLLECTION_CONFIG)
    }

    /// `kind`: `list` or `set`, the section's name in error messages.
    pub fn validate(&self, kind: &str) -> Result<(), ConfigError> {
        self.validate_with(kind, CollectionConfig::validate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collections_resolve_by_pattern_and_check_their_bounds() {
        let mut lists = CollectionConfigs::default();
        assert_eq!(lists.for_collection("todo").capacity(), i32::MAX as u32);
        lists.insert("bounded-*", CollectionConfig { max_size: 3, ..CollectionConfig::DEFAULT });
        assert_eq!(lists.for_collection("bounded-1").capacity(), 3);
        assert!(lists.validate("list").is_ok());
        lists.insert("bad", CollectionConfig { backup_count: 5, async_backup_count: 2, ..CollectionConfig::DEFAULT });
        assert!(lists.validate("list").unwrap_err().to_string().contains("hazelcast.list.bad.async-backup-count"));
    }
}

/// How a multimap keeps the values of one key: `value-collection-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueCollectionType {
    /// Each value once per key (Hazelcast's default).
    Set,
    /// Every value put, in order, duplicates kept.
    List,
}

/// Settings of one multimap, from `hazelcast.multimap.<name or pattern>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultiMapConfig {
    /// `value-collection-type`, SET (default) or LIST.
    pub value_collection_type: ValueCollectionType,
    /// Synchronous backups. `backup-count`, default 1, at most 6 with the asynchronous ones.
    pub backup_count: u8,
    /// Asynchronous backups. `async-backup-count`, default 0.
    pub async_backup_count: u8,
    /// What a split-brain merge does with the merging side's value collection of a key.
    /// `merge-policy`, default PutIfAbsentMergePolicy; not ExpirationTimeMergePolicy, which
    /// Hazelcast refuses for multimaps (they provide no expiration time).
    pub merge_policy: MergePolicyConfig,
}

impl MultiMapConfig {
    pub const DEFAULT: MultiMapConfig = MultiMapConfig {
        value_collection_type: ValueCollectionType::Set,
        backup_count: 1,
        async_backup_count: 0,
        merge_policy: MergePolicyConfig::DEFAULT,
    };

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        check_backup_counts(key, self.backup_count, self.async_backup_count)?;
        self.merge_policy.validate(key)?;
        if self.merge_policy.policy == MergePolicy::ExpirationTime {
            let message = "ExpirationTimeMergePolicy needs an expiration time, which a multimap's entries do not have";
            return Err(crate::error::invalid(format!("{key}.merge-policy.class-name"), message));
        }
        Ok(())
    }
}

impl Default for MultiMapConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_MULTIMAP_CONFIG: MultiMapConfig = MultiMapConfig::DEFAULT;

/// All configured multimap entries.
pub type MultiMapConfigs = NamedConfigs<MultiMapConfig>;

impl MultiMapConfigs {
    /// The settings of the multimap called `name`.
    pub fn for_multimap(&self, name: &str) -> &MultiMapConfig {
        self.resolve(name, &DEFAULT_MULTIMAP_CONFIG)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with("multimap", MultiMapConfig::validate)
    }
}
