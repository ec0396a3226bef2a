//! Replicated map settings, from `hazelcast.replicatedmap.<name or pattern>` (resolved like map
//! settings).

use crate::error::{invalid, ConfigError};
use crate::map::NamedConfigs;

/// How a replicated map keeps its values: `in-memory-format`. ferrogrid keeps serialized
/// bytes either way (values compare by their bytes, which for the clients' types is what
/// Java's `equals` says); NATIVE (off-heap, Enterprise) is refused by `validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InMemoryFormat {
    Binary,
    /// Hazelcast's default for replicated maps.
    Object,
    Native,
}

/// Settings of one replicated map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicatedMapConfig {
    /// `in-memory-format`: OBJECT (default) or BINARY.
    pub in_memory_format: InMemoryFormat,
    /// `async-fillup`, default true: a member that has not received a partition's copy yet
    /// answers reads from what it has. With false, a key read (get, containsKey) of a
    /// partition whose copy has not arrived yet answers "retry" (PartitionMigrating, which
    /// clients retry) until it arrives; whole-map reads answer from what is there.
    pub async_fillup: bool,
    /// `statistics-enabled`, default true: entry, byte and listener figures in the metrics.
    pub statistics_enabled: bool,
    /// `merge-policy` (`class-name`, `batch-size`): how the map's entries merge into another
    /// cluster after a split brain; default PutIfAbsentMergePolicy, 100.
    pub merge_policy: crate::MergePolicyConfig,
}

impl ReplicatedMapConfig {
    pub const DEFAULT: ReplicatedMapConfig = ReplicatedMapConfig {
        in_memory_format: InMemoryFormat::Object,
        async_fillup: true,
        statistics_enabled: true,
        merge_policy: crate::MergePolicyConfig::DEFAULT,
    };

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        self.merge_policy.validate(key)?;
        if self.in_memory_format == InMemoryFormat::Native {
            let text = "NATIVE (off-heap) is not supported; use OBJECT or BINARY";
            return Err(invalid(format!("{key}.in-memory-format"), text));
        }
        Ok(())
    }
}

impl Default for ReplicatedMapConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_REPLICATED_MAP_CONFIG: ReplicatedMapConfig = ReplicatedMapConfig::DEFAULT;

/// All configured replicated map entries.
pub type ReplicatedMapConfigs = NamedConfigs<ReplicatedMapConfig>;

impl ReplicatedMapConfigs {
    /// The settings of the replicated map called `name`.
    pub fn for_replicated_map(&self, name: &str) -> &ReplicatedMapConfig {
        self.resolve(name, &DEFAULT_REPLICATED_MAP_CONFIG)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with("replicatedmap", ReplicatedMapConfig::validate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicated_maps_resolve_by_pattern_and_refuse_native() {
        let mut configs = ReplicatedMapConfigs::default();
        assert_eq!(*configs.for_replicated_map("any"), ReplicatedMapConfig::DEFAULT);
        let quiet = ReplicatedMapConfig { statistics_enabled: false, ..ReplicatedMapConfig::DEFAULT };
        configs.insert("quiet-*", quiet);
        assert!(!configs.for_replicated_map("quiet-1").statistics_enabled);
        assert!(configs.validate().is_ok());
        configs.insert("off-heap", ReplicatedMapConfig { in_memory_format: InMemoryFormat::Native, ..quiet });
        let error = configs.validate().unwrap_err().to_string();
        assert!(error.contains("hazelcast.replicatedmap.off-heap.in-memory-format"), "{error}");
    }
}
