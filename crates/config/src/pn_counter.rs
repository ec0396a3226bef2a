//! PN counter settings, from `hazelcast.pn-counter.<name or pattern>` (resolved like map
//! settings), and how often CRDT replicas exchange their states
//! (`hazelcast.crdt-replication`).

use crate::error::{invalid, ConfigError};
use crate::map::NamedConfigs;

/// Settings of one PN counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PnCounterConfig {
    /// How many members keep a replica: the first `replica-count` members of the member list.
    /// `replica-count`, default 2147483647 (Hazelcast's Integer.MAX_VALUE: every member), in
    /// `1..=2147483647`.
    pub replica_count: u32,
    /// `statistics-enabled`, default true: the counter's value and operation counts in the
    /// metrics.
    pub statistics_enabled: bool,
}

impl PnCounterConfig {
    pub const DEFAULT: PnCounterConfig = PnCounterConfig { replica_count: i32::MAX as u32, statistics_enabled: true };

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if self.replica_count == 0 || self.replica_count > i32::MAX as u32 {
            let expected = format!("expected 1..={}, got {}", i32::MAX, self.replica_count);
            return Err(invalid(format!("{key}.replica-count"), expected));
        }
        Ok(())
    }
}

impl Default for PnCounterConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_PN_COUNTER_CONFIG: PnCounterConfig = PnCounterConfig::DEFAULT;

/// All configured PN counter entries.
pub type PnCounterConfigs = NamedConfigs<PnCounterConfig>;

impl PnCounterConfigs {
    /// The settings of the PN counter called `name`.
    pub fn for_pn_counter(&self, name: &str) -> &PnCounterConfig {
        self.resolve(name, &DEFAULT_PN_COUNTER_CONFIG)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with("pn-counter", PnCounterConfig::validate)
    }
}

/// How CRDT replicas exchange their whole states (`hazelcast.crdt-replication`). ferrogrid
/// also sends each change to the other replicas at once and waits for them; this periodic
/// exchange is what brings a replica that missed changes (a member that joined, a link that
/// was down) up to date. How many counters one exchange carries is bounded by
/// `ferrogrid.limits.crdt-replication-batch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrdtReplicationConfig {
    /// `replication-period-millis`, default 1 000 (as in Hazelcast), in `1..=2147483647`.
    pub replication_period_ms: u32,
}

impl CrdtReplicationConfig {
    pub const DEFAULT: CrdtReplicationConfig = CrdtReplicationConfig { replication_period_ms: 1_000 };

    pub fn validate(&self) -> Result<(), ConfigError> {
        let period = self.replication_period_ms;
        if period == 0 || period > i32::MAX as u32 {
            let key = "hazelcast.crdt-replication.replication-period-millis";
            return Err(invalid(key, format!("expected 1..={}, got {period}", i32::MAX)));
        }
        Ok(())
    }
}

impl Default for CrdtReplicationConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pn_counters_resolve_by_pattern_and_check_their_replica_count() {
        let mut counters = PnCounterConfigs::default();
        assert_eq!(counters.for_pn_counter("hits"), &PnCounterConfig::DEFAULT);
        assert_eq!(counters.for_pn_counter("hits").replica_count, 2_147_483_647);
        counters.insert("two-*", PnCounterConfig { replica_count: 2, statistics_enabled: false });
        assert_eq!(counters.for_pn_counter("two-1").replica_count, 2);
        assert!(counters.validate().is_ok());
        counters.insert("none", PnCounterConfig { replica_count: 0, ..PnCounterConfig::DEFAULT });
        let error = counters.validate().unwrap_err().to_string();
        assert!(error.contains("hazelcast.pn-counter.none.replica-count"), "{error}");
    }

    #[test]
    fn the_yaml_sections_use_hazelcasts_names() {
        let text = "hazelcast:\n  pn-counter:\n    two-*:\n      replica-count: 2\n      statistics-enabled: false\n  \
                    crdt-replication:\n    replication-period-millis: 250\n";
        let loaded = crate::MemberConfig::from_yaml_str(text).unwrap();
        assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
        let counter = loaded.config.pn_counters.for_pn_counter("two-a");
        assert_eq!(*counter, PnCounterConfig { replica_count: 2, statistics_enabled: false });
        assert_eq!(loaded.config.crdt_replication.replication_period_ms, 250);
        let zero = "hazelcast:\n  pn-counter:\n    c:\n      replica-count: 0\n";
        assert!(crate::MemberConfig::from_yaml_str(zero).is_err());
    }

    #[test]
    fn the_replication_period_is_positive() {
        assert!(CrdtReplicationConfig::DEFAULT.validate().is_ok());
        let error = CrdtReplicationConfig { replication_period_ms: 0 }.validate().unwrap_err().to_string();
        assert!(error.contains("replication-period-millis"), "{error}");
    }
}
