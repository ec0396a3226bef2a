//! Cardinality estimator settings, from `hazelcast.cardinality-estimator.<name or pattern>`
//! (resolved like map settings).

use crate::error::{invalid, ConfigError};
use crate::map::{check_backup_counts, NamedConfigs};
use crate::merge_policy::{MergePolicy, MergePolicyConfig};

/// Settings of one cardinality estimator (a HyperLogLog of fixed size in the partition of its
/// name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardinalityEstimatorConfig {
    /// Synchronous backups. `backup-count`, default 1, at most 6 with the asynchronous ones.
    pub backup_count: u8,
    /// Asynchronous backups. `async-backup-count`, default 0.
    pub async_backup_count: u8,
    /// What a split-brain merge does with the merging side's estimator. `merge-policy`,
    /// default HyperLogLogMergePolicy (the union of both estimators); also PutIfAbsent,
    /// PassThrough and Discard. Hazelcast refuses the policies that compare statistics (an
    /// estimator has none), and so does `validate`.
    pub merge_policy: MergePolicyConfig,
}

impl CardinalityEstimatorConfig {
    pub const DEFAULT: CardinalityEstimatorConfig = CardinalityEstimatorConfig {
        backup_count: 1,
        async_backup_count: 0,
        merge_policy: MergePolicyConfig { policy: MergePolicy::HyperLogLog, batch_size: 100 },
    };

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        check_backup_counts(key, self.backup_count, self.async_backup_count)?;
        self.merge_policy.validate(key)?;
        let allowed =
            [MergePolicy::HyperLogLog, MergePolicy::PutIfAbsent, MergePolicy::PassThrough, MergePolicy::Discard];
        if !allowed.contains(&self.merge_policy.policy) {
            let message =
                "an estimator merges by HyperLogLog, PutIfAbsent, PassThrough or Discard: it keeps no statistics";
            return Err(invalid(format!("{key}.merge-policy.class-name"), message));
        }
        Ok(())
    }
}

impl Default for CardinalityEstimatorConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_CARDINALITY_ESTIMATOR_CONFIG: CardinalityEstimatorConfig = CardinalityEstimatorConfig::DEFAULT;

/// All configured cardinality estimator entries.
pub type CardinalityEstimatorConfigs = NamedConfigs<CardinalityEstimatorConfig>;

impl CardinalityEstimatorConfigs {
    /// The settings of the cardinality estimator called `name`.
    pub fn for_cardinality_estimator(&self, name: &str) -> &CardinalityEstimatorConfig {
        self.resolve(name, &DEFAULT_CARDINALITY_ESTIMATOR_CONFIG)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with("cardinality-estimator", CardinalityEstimatorConfig::validate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemberConfig;

    #[test]
    fn estimators_resolve_by_pattern_and_check_their_backups() {
        let mut estimators = CardinalityEstimatorConfigs::default();
        assert_eq!(*estimators.for_cardinality_estimator("visitors"), CardinalityEstimatorConfig::DEFAULT);
        let none = CardinalityEstimatorConfig { backup_count: 0, async_backup_count: 0, ..Default::default() };
        estimators.insert("fast-*", none);
        assert_eq!(estimators.for_cardinality_estimator("fast-1").backup_count, 0);
        assert!(estimators.validate().is_ok());
        estimators
            .insert("bad", CardinalityEstimatorConfig { backup_count: 6, async_backup_count: 1, ..Default::default() });
        let error = estimators.validate().unwrap_err().to_string();
        assert!(error.contains("hazelcast.cardinality-estimator.bad.async-backup-count"), "{error}");
    }

    #[test]
    fn the_yaml_section_is_read_and_its_merge_policy_accepted() {
        let text = "hazelcast:\n  cardinality-estimator:\n    two-*:\n      backup-count: 2\n      \
                    async-backup-count: 1\n      merge-policy:\n        batch-size: 100\n        \
                    class-name: HyperLogLogMergePolicy\n";
        let loaded = MemberConfig::from_yaml_str(text).unwrap();
        assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
        let estimator = loaded.config.cardinality_estimators.for_cardinality_estimator("two-a");
        assert_eq!(
            *estimator,
            CardinalityEstimatorConfig { backup_count: 2, async_backup_count: 1, ..Default::default() }
        );
        let too_many = "hazelcast:\n  cardinality-estimator:\n    e:\n      backup-count: 7\n";
        let error = MemberConfig::from_yaml_str(too_many).unwrap_err().to_string();
        assert!(error.contains("hazelcast.cardinality-estimator.e"), "{error}");
    }
}
