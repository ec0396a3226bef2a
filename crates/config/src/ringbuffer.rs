//! Ringbuffer and topic settings, from `hazelcast.ringbuffer.<name or pattern>` and
//! `hazelcast.topic.<name or pattern>` (resolved like map settings). A reliable topic's
//! ringbuffer is the ringbuffer `_hz_rb_<topic>`, configured here like any other.

use crate::error::{invalid, ConfigError};
use crate::map::{check_backup_counts, NamedConfigs};
use crate::merge_policy::MergePolicyConfig;

/// Settings of one ringbuffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingbufferConfig {
    /// Items it holds before the oldest is overwritten. `capacity`, default 10,000, in
    /// `1..=2147483647`.
    pub capacity: u32,
    /// Seconds an item stays readable; 0 (the default) keeps it until overwritten.
    /// `time-to-live-seconds`, in `0..=2147483647`.
    pub time_to_live_seconds: u32,
    /// Synchronous backups. `backup-count`, default 1, at most 6 with the asynchronous ones.
    pub backup_count: u8,
    /// Asynchronous backups. `async-backup-count`, default 0.
    pub async_backup_count: u8,
    /// How its items merge into another cluster after a split brain, all of them as one value
    /// with their sequences (`merge-policy`: `class-name` PutIfAbsentMergePolicy (default),
    /// PassThroughMergePolicy or DiscardMergePolicy; `batch-size`, default 100, read and
    /// bounded but unused: each ringbuffer is sent whole, as Hazelcast sends it).
    pub merge_policy: MergePolicyConfig,
}

impl RingbufferConfig {
    pub const DEFAULT: RingbufferConfig = RingbufferConfig {
        capacity: 10_000,
        time_to_live_seconds: 0,
        backup_count: 1,
        async_backup_count: 0,
        merge_policy: MergePolicyConfig::DEFAULT,
    };

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if self.capacity == 0 || self.capacity > i32::MAX as u32 {
            let expected = format!("expected 1..={}, got {}", i32::MAX, self.capacity);
            return Err(invalid(format!("{key}.capacity"), expected));
        }
        if self.time_to_live_seconds > i32::MAX as u32 {
            let expected = format!("expected 0..={}, got {}", i32::MAX, self.time_to_live_seconds);
            return Err(invalid(format!("{key}.time-to-live-seconds"), expected));
        }
        self.merge_policy.validate_whole(key)?;
        check_backup_counts(key, self.backup_count, self.async_backup_count)
    }
}

impl Default for RingbufferConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_RINGBUFFER_CONFIG: RingbufferConfig = RingbufferConfig::DEFAULT;

/// All configured ringbuffer entries.
pub type RingbufferConfigs = NamedConfigs<RingbufferConfig>;

impl RingbufferConfigs {
    /// The settings of the ringbuffer called `name` (exact name, longest pattern, `default`,
    /// built-in).
    pub fn for_ringbuffer(&self, name: &str) -> &RingbufferConfig {
        self.resolve(name, &DEFAULT_RINGBUFFER_CONFIG)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with("ringbuffer", RingbufferConfig::validate)
    }
}

/// Settings of one topic. Both are accepted as Hazelcast's, and hold whatever their value:
/// every message of a topic goes through the owner of its name's partition, one at a time,
/// so every listener sees one order (global ordering), which includes each publisher's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TopicConfig {
    /// `global-ordering-enabled`, default false.
    pub global_ordering_enabled: bool,
    /// `statistics-enabled`, default true: publish and receive counts in the metrics.
    pub statistics_enabled: bool,
}

impl TopicConfig {
    pub const DEFAULT: TopicConfig = TopicConfig { global_ordering_enabled: false, statistics_enabled: true };
}

static DEFAULT_TOPIC_CONFIG: TopicConfig = TopicConfig::DEFAULT;

/// All configured topic entries.
pub type TopicConfigs = NamedConfigs<TopicConfig>;

impl TopicConfigs {
    /// The settings of the topic called `name`.
    pub fn for_topic(&self, name: &str) -> &TopicConfig {
        self.resolve(name, &DEFAULT_TOPIC_CONFIG)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ringbuffers_resolve_by_pattern_and_check_their_bounds() {
        let mut ringbuffers = RingbufferConfigs::default();
        assert_eq!(ringbuffers.for_ringbuffer("events").capacity, 10_000);
        ringbuffers.insert("small-*", RingbufferConfig { capacity: 3, ..RingbufferConfig::DEFAULT });
        assert_eq!(ringbuffers.for_ringbuffer("small-1").capacity, 3);
        assert!(ringbuffers.validate().is_ok());
        ringbuffers.insert("empty", RingbufferConfig { capacity: 0, ..RingbufferConfig::DEFAULT });
        assert!(ringbuffers.validate().unwrap_err().to_string().contains("hazelcast.ringbuffer.empty.capacity"));
    }
}
