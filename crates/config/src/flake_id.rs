//! Flake id generator settings, from `hazelcast.flake-id-generator.<name or pattern>`
//! (resolved like map settings), with Hazelcast's names, defaults and bounds.
//!
//! `prefetch-count` and `prefetch-validity-millis` are accepted and checked as Hazelcast checks
//! them, but a member never uses them: they size the batches of a generator used on the
//! member itself (Hazelcast's embedded `newId()`), and a client asks for its batch size in
//! each request, from its own client config. The others shape the ids this member hands out.

use crate::error::{invalid, ConfigError};
use crate::map::NamedConfigs;

/// Largest `prefetch-count` (Hazelcast's `MAXIMUM_PREFETCH_COUNT`).
pub const MAX_PREFETCH_COUNT: u32 = 100_000;
/// Bits of an id: timestamp, sequence and node id share the 63 bits of a positive `i64`.
pub const ID_BITS: u8 = 63;

/// Settings of one flake id generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlakeIdGeneratorConfig {
    /// Ids an embedded generator fetches per batch (unused by a member serving clients).
    /// `prefetch-count`, default 100, in `1..=100000`.
    pub prefetch_count: u32,
    /// How long an embedded generator's batch stays valid, ≤ 0 for ever (unused by a member
    /// serving clients). `prefetch-validity-millis`, default 600 000.
    pub prefetch_validity_millis: i64,
    /// The time the timestamp part counts from, in milliseconds since the Unix epoch.
    /// `epoch-start`, default 1 514 764 800 000 (2018-01-01T00:00:00Z).
    pub epoch_start: i64,
    /// Added to the member's join version to make its node id. `node-id-offset`, default 0,
    /// not negative.
    pub node_id_offset: i64,
    /// Bits of the sequence within a millisecond. `bits-sequence`, default 6, in `0..=62`.
    pub bits_sequence: u8,
    /// Bits of the node id. `bits-node-id`, default 16, in `0..=62`; with `bits-sequence` at
    /// most 63, leaving the rest for the timestamp.
    pub bits_node_id: u8,
    /// How far ahead of the clock a member may hand out ids (more than `2^bits-sequence` ids a
    /// millisecond run ahead); a batch that goes further is answered only once the clock has
    /// caught up to within this. `allowed-future-millis`, default 15 000, not negative.
    pub allowed_future_millis: i64,
    /// Count ids and batches in the metrics. `statistics-enabled`, default true.
    pub statistics_enabled: bool,
}

impl FlakeIdGeneratorConfig {
    pub const DEFAULT: FlakeIdGeneratorConfig = FlakeIdGeneratorConfig {
        prefetch_count: 100,
        prefetch_validity_millis: 600_000,
        epoch_start: 1_514_764_800_000,
        node_id_offset: 0,
        bits_sequence: 6,
        bits_node_id: 16,
        allowed_future_millis: 15_000,
        statistics_enabled: true,
    };

    /// Checks the bounds Hazelcast checks (its messages), and that the sequence and node id
    /// leave bits for the timestamp, which Hazelcast checks only when the generator is first
    /// used.
    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if !(1..=MAX_PREFETCH_COUNT).contains(&self.prefetch_count) {
            let text = format!("prefetch-count must be 1..{MAX_PREFETCH_COUNT}, but is {}", self.prefetch_count);
            return Err(invalid(format!("{key}.prefetch-count"), text));
        }
        if self.node_id_offset < 0 {
            return Err(invalid(format!("{key}.node-id-offset"), "node id offset must be non-negative"));
        }
        if self.bits_sequence >= ID_BITS {
            return Err(invalid(format!("{key}.bits-sequence"), "sequence bit-length must be 0..63"));
        }
        if self.bits_node_id >= ID_BITS {
            return Err(invalid(format!("{key}.bits-node-id"), "node ID bit-length must be 0..63"));
        }
        if self.bits_sequence + self.bits_node_id > ID_BITS {
            let text = format!(
                "bits-sequence ({}) + bits-node-id ({}) leave no bits for the timestamp (at most {ID_BITS} together)",
                self.bits_sequence, self.bits_node_id
            );
            return Err(invalid(format!("{key}.bits-node-id"), text));
        }
        if self.allowed_future_millis < 0 {
            return Err(invalid(format!("{key}.allowed-future-millis"), "allowedFutureMillis must be non-negative"));
        }
        Ok(())
    }

    /// Bits left for the timestamp.
    pub fn bits_timestamp(&self) -> u8 {
        ID_BITS - self.bits_sequence - self.bits_node_id
    }
}

impl Default for FlakeIdGeneratorConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_FLAKE_ID_GENERATOR_CONFIG: FlakeIdGeneratorConfig = FlakeIdGeneratorConfig::DEFAULT;

/// All configured flake id generator entries.
pub type FlakeIdGeneratorConfigs = NamedConfigs<FlakeIdGeneratorConfig>;

impl FlakeIdGeneratorConfigs {
    /// The settings of the generator called `name` (exact name, longest pattern, `default`,
    /// built-in).
    pub fn for_generator(&self, name: &str) -> &FlakeIdGeneratorConfig {
        self.resolve(name, &DEFAULT_FLAKE_ID_GENERATOR_CONFIG)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with("flake-id-generator", FlakeIdGeneratorConfig::validate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(config: FlakeIdGeneratorConfig) -> String {
        match config.validate("hazelcast.flake-id-generator.ids") {
            Err(ConfigError::InvalidValue { key, message }) => format!("{key}: {message}"),
            other => panic!("{config:?} must be refused, got {other:?}"),
        }
    }

    #[test]
    fn defaults_are_hazelcasts() {
        let config = FlakeIdGeneratorConfig::DEFAULT;
        assert_eq!((config.prefetch_count, config.prefetch_validity_millis), (100, 600_000));
        assert_eq!((config.epoch_start, config.node_id_offset), (1_514_764_800_000, 0));
        assert_eq!((config.bits_sequence, config.bits_node_id, config.bits_timestamp()), (6, 16, 41));
        assert_eq!((config.allowed_future_millis, config.statistics_enabled), (15_000, true));
        config.validate("k").unwrap();
    }

    #[test]
    fn bounds_are_hazelcasts() {
        let base = FlakeIdGeneratorConfig::DEFAULT;
        for accepted in [
            FlakeIdGeneratorConfig { prefetch_count: 1, ..base },
            FlakeIdGeneratorConfig { prefetch_count: MAX_PREFETCH_COUNT, ..base },
            FlakeIdGeneratorConfig { prefetch_validity_millis: -1, ..base },
            FlakeIdGeneratorConfig { epoch_start: -1, ..base },
            FlakeIdGeneratorConfig { node_id_offset: i64::MAX, ..base },
            FlakeIdGeneratorConfig { bits_sequence: 0, bits_node_id: 0, ..base },
            FlakeIdGeneratorConfig { bits_sequence: 62, bits_node_id: 1, ..base },
            FlakeIdGeneratorConfig { allowed_future_millis: 0, ..base },
        ] {
            accepted.validate("k").unwrap_or_else(|error| panic!("{accepted:?}: {error}"));
        }
        let key = "hazelcast.flake-id-generator.ids";
        let prefetch = refusal(FlakeIdGeneratorConfig { prefetch_count: 0, ..base });
        assert_eq!(prefetch, format!("{key}.prefetch-count: prefetch-count must be 1..100000, but is 0"));
        assert!(refusal(FlakeIdGeneratorConfig { prefetch_count: 100_001, ..base }).contains("but is 100001"));
        let offset = refusal(FlakeIdGeneratorConfig { node_id_offset: -1, ..base });
        assert_eq!(offset, format!("{key}.node-id-offset: node id offset must be non-negative"));
        let sequence = refusal(FlakeIdGeneratorConfig { bits_sequence: 63, bits_node_id: 0, ..base });
        assert_eq!(sequence, format!("{key}.bits-sequence: sequence bit-length must be 0..63"));
        let node = refusal(FlakeIdGeneratorConfig { bits_node_id: 63, bits_sequence: 0, ..base });
        assert_eq!(node, format!("{key}.bits-node-id: node ID bit-length must be 0..63"));
        let both = refusal(FlakeIdGeneratorConfig { bits_sequence: 40, bits_node_id: 24, ..base });
        assert!(both.contains("no bits for the timestamp"), "{both}");
        let future = refusal(FlakeIdGeneratorConfig { allowed_future_millis: -1, ..base });
        assert_eq!(future, format!("{key}.allowed-future-millis: allowedFutureMillis must be non-negative"));
    }

    #[test]
    fn generators_resolve_by_pattern() {
        let mut generators = FlakeIdGeneratorConfigs::default();
        assert_eq!(generators.for_generator("orders"), &FlakeIdGeneratorConfig::DEFAULT);
        generators.insert("short-*", FlakeIdGeneratorConfig { bits_node_id: 4, ..FlakeIdGeneratorConfig::DEFAULT });
        assert_eq!(generators.for_generator("short-1").bits_node_id, 4);
        generators.validate().unwrap();
        generators.insert("bad", FlakeIdGeneratorConfig { prefetch_count: 0, ..FlakeIdGeneratorConfig::DEFAULT });
        let error = generators.validate().unwrap_err().to_string();
        assert!(error.contains("hazelcast.flake-id-generator.bad.prefetch-count"), "{error}");
    }
}
