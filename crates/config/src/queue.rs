//! Queue settings, from `hazelcast.queue.<name or pattern>` (resolved like map settings).

use crate::error::{invalid, ConfigError};
use crate::map::{capacity_of, check_backup_counts, check_max_size, NamedConfigs};
use crate::merge_policy::MergePolicyConfig;

/// Settings of one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// Most items the queue holds; 0 (the default) is unbounded (Hazelcast's Integer.MAX_VALUE).
    /// `max-size`, in `0..=2147483647`.
    pub max_size: u32,
    /// Synchronous backups. `backup-count`, default 1, at most 6 with the asynchronous ones.
    pub backup_count: u8,
    /// Asynchronous backups. `async-backup-count`, default 0.
    pub async_backup_count: u8,
    /// Seconds after which a queue that is empty and unused (no operation, nothing waiting)
    /// is destroyed; −1 (the default) never. `empty-queue-ttl`, in `-1..=2147483647`.
    pub empty_queue_ttl_seconds: i64,
    /// How the queue's items merge into another cluster after a split brain, all of them as
    /// one value (`merge-policy`: `class-name` PutIfAbsentMergePolicy (default),
    /// PassThroughMergePolicy or DiscardMergePolicy; `batch-size`, default 100, read and
    /// bounded but unused: each queue is sent whole, as Hazelcast sends it).
    pub merge_policy: MergePolicyConfig,
}

impl QueueConfig {
    pub const DEFAULT: QueueConfig = QueueConfig {
        max_size: 0,
        backup_count: 1,
        async_backup_count: 0,
        empty_queue_ttl_seconds: -1,
        merge_policy: MergePolicyConfig::DEFAULT,
    };

    /// The capacity clients see: `max-size`, or Integer.MAX_VALUE when unbounded.
    pub fn capacity(&self) -> u32 {
        capacity_of(self.max_size)
    }

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        check_max_size(key, self.max_size)?;
        self.merge_policy.validate_whole(key)?;
        if !(-1..=i64::from(i32::MAX)).contains(&self.empty_queue_ttl_seconds) {
            let expected = format!("expected -1..={}, got {}", i32::MAX, self.empty_queue_ttl_seconds);
            return Err(invalid(format!("{key}.empty-queue-ttl"), expected));
        }
        check_backup_counts(key, self.backup_count, self.async_backup_count)
    }
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static DEFAULT_QUEUE_CONFIG: QueueConfig = QueueConfig::DEFAULT;

/// All configured queue entries.
pub type QueueConfigs = NamedConfigs<QueueConfig>;

impl QueueConfigs {
    /// The settings of the queue called `name` (exact name, longest pattern, `default`, built-in).
    pub fn for_queue(&self, name: &str) -> &QueueConfig {
        self.resolve(name, &DEFAULT_QUEUE_CONFIG)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with("queue", QueueConfig::validate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_resolve_by_pattern_and_check_their_bounds() {
        let mut queues = QueueConfigs::default();
        assert_eq!(queues.for_queue("jobs").capacity(), i32::MAX as u32);
        queues.insert("jobs-*", QueueConfig { max_size: 3, ..QueueConfig::DEFAULT });
        assert_eq!(queues.for_queue("jobs-eu").capacity(), 3);
        assert_eq!(queues.for_queue("other").backup_count, 1);
        assert!(queues.validate().is_ok());
        queues.insert("bad", QueueConfig { backup_count: 4, async_backup_count: 3, ..QueueConfig::DEFAULT });
        assert!(queues.validate().unwrap_err().to_string().contains("hazelcast.queue.bad.async-backup-count"));
        let mut queues = QueueConfigs::default();
        queues.insert("idle", QueueConfig { empty_queue_ttl_seconds: -2, ..QueueConfig::DEFAULT });
        assert!(queues.validate().unwrap_err().to_string().contains("hazelcast.queue.idle.empty-queue-ttl"));
    }
}
