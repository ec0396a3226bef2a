//! Persistence, as Hazelcast configures it (`hazelcast.persistence` and each map's
//! `data-persistence`), and ferrogrid's own fsync policy and log bound
//! (`ferrogrid.persistence`). Read and checked in full; the member persists as
//! docs/persistence.md says (Hazelcast keeps persistence in its Enterprise edition).

use crate::error::{invalid, ConfigError};

/// The most threads a member may load its partitions with at start (`parallelism`).
pub const MAX_PARALLELISM: u32 = 1024;

/// The longest `validation-timeout-seconds` and `data-load-timeout-seconds` accepted: a day.
pub const MAX_TIMEOUT_SECONDS: u32 = 86_400;

/// The longest `rebalance-delay-seconds` accepted: a day.
pub const MAX_REBALANCE_DELAY_SECONDS: u32 = 86_400;

/// What a cluster restarted from disk does when not every member came back with the data of
/// the partition table it had (`cluster-data-recovery-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryPolicy {
    /// Every member must come back with its data (`FULL_RECOVERY_ONLY`, Hazelcast's default).
    FullRecoveryOnly,
    /// The members with the most recent partition table start; the others drop their data
    /// (`PARTIAL_RECOVERY_MOST_RECENT`).
    PartialRecoveryMostRecent,
    /// The largest group of members with the same partition table starts
    /// (`PARTIAL_RECOVERY_MOST_COMPLETE`).
    PartialRecoveryMostComplete,
}

impl RecoveryPolicy {
    /// The policy named as Hazelcast writes it (any case).
    pub fn parse(name: &str) -> Option<RecoveryPolicy> {
        match name.to_ascii_uppercase().as_str() {
            "FULL_RECOVERY_ONLY" => Some(RecoveryPolicy::FullRecoveryOnly),
            "PARTIAL_RECOVERY_MOST_RECENT" => Some(RecoveryPolicy::PartialRecoveryMostRecent),
            "PARTIAL_RECOVERY_MOST_COMPLETE" => Some(RecoveryPolicy::PartialRecoveryMostComplete),
            _ => None,
        }
    }
}

/// When a member's log reaches the disk: the storage layer's own policy
/// (`ferrogrid.persistence.fsync-policy`, as Redis' `appendfsync`; default `everysec`); a map
/// whose `data-persistence.fsync` is true is synced on every write whatever this says.
pub use ferrogrid_persist::FsyncPolicy;

/// The fsync policy named as Redis' `appendfsync` names it (any case).
pub fn parse_fsync_policy(name: &str) -> Option<FsyncPolicy> {
    match name.to_ascii_lowercase().as_str() {
        "always" => Some(FsyncPolicy::Always),
        "everysec" => Some(FsyncPolicy::EverySec),
        "no" => Some(FsyncPolicy::No),
        _ => None,
    }
}

/// `hazelcast.persistence`, Hazelcast's keys and defaults, plus ferrogrid's
/// `ferrogrid.persistence.fsync-policy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistenceConfig {
    /// `enabled`, default false.
    pub enabled: bool,
    /// `base-dir`, default `persistence` (relative to the working directory); not empty.
    pub base_dir: String,
    /// `backup-dir`, where hot backups go; none by default.
    pub backup_dir: Option<String>,
    /// `parallelism`: threads loading the data at start, default 1, in `1..=MAX_PARALLELISM`.
    pub parallelism: u32,
    /// `validation-timeout-seconds`: how long the members wait for each other to compare
    /// their partition tables at start, default 120, in `1..=MAX_TIMEOUT_SECONDS`.
    pub validation_timeout_seconds: u32,
    /// `data-load-timeout-seconds`: how long loading may take, default 900, in
    /// `1..=MAX_TIMEOUT_SECONDS`.
    pub data_load_timeout_seconds: u32,
    /// `cluster-data-recovery-policy`, default FULL_RECOVERY_ONLY.
    pub cluster_data_recovery_policy: RecoveryPolicy,
    /// `auto-remove-stale-data`: a member whose data the cluster no longer wants drops it and
    /// joins empty, default true.
    pub auto_remove_stale_data: bool,
    /// `rebalance-delay-seconds`: how long a restarted cluster waits for missing members before
    /// moving their partitions, default 0, at most `MAX_REBALANCE_DELAY_SECONDS`.
    pub rebalance_delay_seconds: u32,
    /// `ferrogrid.persistence.fsync-policy`: `always`, `everysec` (default) or `no`.
    pub fsync_policy: FsyncPolicy,
    /// `ferrogrid.persistence.compact-log-bytes`: a partition's log longer than this is
    /// replaced by a snapshot of the partition (checked about once a second), default 64 MiB,
    /// in `MIN_COMPACT_LOG_BYTES..=MAX_COMPACT_LOG_BYTES`.
    pub compact_log_bytes: u64,
}

/// The least `compact-log-bytes` accepted: 64 KiB.
pub const MIN_COMPACT_LOG_BYTES: u64 = 64 << 10;

/// The most `compact-log-bytes` accepted: 1 TiB.
pub const MAX_COMPACT_LOG_BYTES: u64 = 1 << 40;

impl Default for PersistenceConfig {
    fn default() -> PersistenceConfig {
        PersistenceConfig {
            enabled: false,
            base_dir: "persistence".to_owned(),
            backup_dir: None,
            parallelism: 1,
            validation_timeout_seconds: 120,
            data_load_timeout_seconds: 900,
            cluster_data_recovery_policy: RecoveryPolicy::FullRecoveryOnly,
            auto_remove_stale_data: true,
            rebalance_delay_seconds: 0,
            fsync_policy: FsyncPolicy::EverySec,
            compact_log_bytes: 64 << 20,
        }
    }
}

impl PersistenceConfig {
    /// Checks the bounds documented on the fields.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let key = |name: &str| format!("hazelcast.persistence.{name}");
        if self.base_dir.trim().is_empty() {
            return Err(invalid(key("base-dir"), "must not be empty"));
        }
        if self.backup_dir.as_deref().is_some_and(|dir| dir.trim().is_empty()) {
            return Err(invalid(key("backup-dir"), "must not be empty when given"));
        }
        let bounded = [
            ("parallelism", self.parallelism, 1, MAX_PARALLELISM),
            ("validation-timeout-seconds", self.validation_timeout_seconds, 1, MAX_TIMEOUT_SECONDS),
            ("data-load-timeout-seconds", self.data_load_timeout_seconds, 1, MAX_TIMEOUT_SECONDS),
            ("rebalance-delay-seconds", self.rebalance_delay_seconds, 0, MAX_REBALANCE_DELAY_SECONDS),
        ];
        for (name, value, low, high) in bounded {
            if !(low..=high).contains(&value) {
                return Err(invalid(key(name), format!("expected {low}..={high}, got {value}")));
            }
        }
        if !(MIN_COMPACT_LOG_BYTES..=MAX_COMPACT_LOG_BYTES).contains(&self.compact_log_bytes) {
            let expected = format!("expected {MIN_COMPACT_LOG_BYTES}..={MAX_COMPACT_LOG_BYTES}");
            let text = format!("{expected}, got {}", self.compact_log_bytes);
            return Err(invalid("ferrogrid.persistence.compact-log-bytes".to_owned(), text));
        }
        Ok(())
    }
}

/// A map's `data-persistence`: whether its entries are persisted when the member's persistence
/// is enabled (`enabled`, default false), and whether each write is synced before it is
/// acknowledged (`fsync`, default false: the member's `fsync-policy` then decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPersistenceConfig {
    pub enabled: bool,
    pub fsync: bool,
}

impl DataPersistenceConfig {
    pub const DEFAULT: DataPersistenceConfig = DataPersistenceConfig { enabled: false, fsync: false };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_hazelcast_s_and_pass() {
        let config = PersistenceConfig::default();
        assert_eq!(config.validation_timeout_seconds, 120);
        assert_eq!(config.data_load_timeout_seconds, 900);
        assert_eq!(config.cluster_data_recovery_policy, RecoveryPolicy::FullRecoveryOnly);
        assert!(config.auto_remove_stale_data && !config.enabled);
        assert!(config.validate().is_ok());
    }

    type Change = fn(&mut PersistenceConfig);

    #[test]
    fn out_of_bounds_values_name_their_key() {
        let cases: [(Change, &str); 5] = [
            (|c| c.parallelism = 0, "parallelism"),
            (|c| c.validation_timeout_seconds = 0, "validation-timeout-seconds"),
            (|c| c.data_load_timeout_seconds = MAX_TIMEOUT_SECONDS + 1, "data-load-timeout-seconds"),
            (|c| c.rebalance_delay_seconds = MAX_REBALANCE_DELAY_SECONDS + 1, "rebalance-delay-seconds"),
            (|c| c.base_dir = " ".into(), "base-dir"),
        ];
        for (change, name) in cases {
            let mut config = PersistenceConfig::default();
            change(&mut config);
            let error = config.validate().expect_err(name).to_string();
            assert!(error.contains(&format!("hazelcast.persistence.{name}")), "{error}");
        }
    }

    #[test]
    fn policies_parse_in_any_case_and_nothing_else() {
        assert_eq!(
            RecoveryPolicy::parse("partial_recovery_most_recent"),
            Some(RecoveryPolicy::PartialRecoveryMostRecent)
        );
        assert_eq!(RecoveryPolicy::parse("PARTIAL"), None);
        assert_eq!(parse_fsync_policy("EverySec"), Some(FsyncPolicy::EverySec));
        assert_eq!(parse_fsync_policy("sometimes"), None);
    }
}

#[cfg(test)]
mod compact_tests {
    use super::*;

    #[test]
    fn the_log_bound_is_checked_with_its_key() {
        for bytes in [MIN_COMPACT_LOG_BYTES - 1, MAX_COMPACT_LOG_BYTES + 1] {
            let config = PersistenceConfig { compact_log_bytes: bytes, ..PersistenceConfig::default() };
            let error = config.validate().unwrap_err().to_string();
            assert!(error.contains("ferrogrid.persistence.compact-log-bytes"), "{error}");
        }
    }
}
