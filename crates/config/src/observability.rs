//! Metrics and IO-balancing settings.

use crate::error::{invalid, ConfigError};
use std::path::PathBuf;

/// Longest collection period accepted.
pub const MAX_COLLECTION_FREQUENCY_SECONDS: u32 = 3_600;
/// Smallest rolling metrics file accepted.
pub const MIN_METRICS_FILE_BYTES: u64 = 4_096;

/// Probes, the metrics log and the HTTP endpoint (`hazelcast.metrics`, `ferrogrid.metrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsConfig {
    /// Collect probes at all. `hazelcast.metrics.enabled`, default true.
    pub enabled: bool,
    /// Seconds between snapshots in the metrics file. `hazelcast.metrics.collection-frequency-seconds`,
    /// default 5, in `1..=MAX_COLLECTION_FREQUENCY_SECONDS`.
    pub collection_frequency_seconds: u32,
    /// The rolling metrics file; None = no file. `ferrogrid.metrics.file`, default
    /// `ferrogrid-metrics.log` (relative to the working directory); an empty string turns it off.
    pub file: Option<PathBuf>,
    /// Size at which the file rolls over to `<file>.1` (one old file is kept).
    /// `ferrogrid.metrics.max-file-bytes`, default 10 MiB, at least `MIN_METRICS_FILE_BYTES`.
    pub max_file_bytes: u64,
    /// Serve `GET /metrics` (Prometheus text) and `GET /health`. `ferrogrid.metrics.http-enabled`,
    /// default true.
    pub http_enabled: bool,
    /// HTTP port; the next 99 are tried when it is taken. `ferrogrid.metrics.http-port`, default 9701.
    pub http_port: u16,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: true,
            collection_frequency_seconds: 5,
            file: Some(PathBuf::from("ferrogrid-metrics.log")),
            max_file_bytes: 10 << 20,
            http_enabled: true,
            http_port: 9701,
        }
    }
}

impl MetricsConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let frequency = self.collection_frequency_seconds;
        if !(1..=MAX_COLLECTION_FREQUENCY_SECONDS).contains(&frequency) {
            let expected = format!("expected 1..={MAX_COLLECTION_FREQUENCY_SECONDS}, got {frequency}");
            return Err(invalid("hazelcast.metrics.collection-frequency-seconds", expected));
        }
        if self.max_file_bytes < MIN_METRICS_FILE_BYTES {
            let expected = format!("expected at least {MIN_METRICS_FILE_BYTES}, got {}", self.max_file_bytes);
            return Err(invalid("ferrogrid.metrics.max-file-bytes", expected));
        }
        if self.http_port == 0 {
            return Err(invalid("ferrogrid.metrics.http-port", "expected a port in 1..=65535"));
        }
        Ok(())
    }
}

/// Where a new connection is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// On as few reactors as the load needs (the default): new connections go to the active
    /// reactors (at first only reactor 0), and one more becomes active only while every active
    /// reactor is saturated and the machine has an idle core; an idle one gives its connections
    /// back. Two half-busy reactors sleep and wake far more often than one busy one does, and
    /// each wake-up costs more than the requests it serves (BENCHMARKS.md, "Removing the hop").
    Packed,
    /// On the reactor with the fewest connections, all reactors active.
    LeastConnections,
    /// Always on reactor 0: reproduces a skewed assignment, for tests and diagnosis.
    FirstReactor,
}

/// Reactor IO settings (`ferrogrid.io`, one Hazelcast property).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoConfig {
    /// Seconds between IO balancer runs; negative disables it.
    /// `hazelcast.properties."hazelcast.io.balancer.interval.seconds"`, default 20, not 0.
    pub balancer_interval_seconds: i64,
    /// `ferrogrid.io.initial-placement`: `packed` (default), `least-connections` or
    /// `first-reactor`.
    pub initial_placement: Placement,
    /// `ferrogrid.io.packing`: when packed placement makes one more reactor active or one fewer.
    pub packing: PackingConfig,
}

/// Packed placement's thresholds (`ferrogrid.io.packing`). Loads are in hundredths of a core,
/// read from the reactor threads' CPU time and the machine's idle time every `period-millis`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackingConfig {
    /// `period-millis`: how often the load is read and the active reactors changed (100..=60,000).
    pub period_millis: u64,
    /// `saturated-percent`: a reactor that used this share of a core or more is saturated; one
    /// more reactor becomes active only when every active one is (1..=100).
    pub saturated_percent: u32,
    /// `spare-cores-percent`: ... and only if the machine had this much idle, in hundredths of a
    /// core (0..=100,000: 90 is almost a whole core). A second reactor that must share a core with
    /// the clients costs more than it brings (BENCHMARKS.md, "Packed placement").
    pub spare_cores_percent: u32,
    /// `shrink-below-percent`: the last active reactor gives its connections back when the
    /// active reactors together used less than this share of a core per reactor that would
    /// remain (0..saturated-percent, so that a reactor made active is not given back at once).
    pub shrink_below_percent: u32,
}

impl Default for PackingConfig {
    fn default() -> Self {
        PackingConfig { period_millis: 1000, saturated_percent: 85, spare_cores_percent: 90, shrink_below_percent: 50 }
    }
}

impl PackingConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let key = |name: &str| format!("ferrogrid.io.packing.{name}");
        if !(100..=60_000).contains(&self.period_millis) {
            return Err(invalid(key("period-millis"), "expected 100..=60000 milliseconds"));
        }
        if !(1..=100).contains(&self.saturated_percent) {
            return Err(invalid(key("saturated-percent"), "expected 1..=100 (hundredths of a core)"));
        }
        if self.spare_cores_percent > 100_000 {
            return Err(invalid(key("spare-cores-percent"), "expected 0..=100000 (hundredths of a core)"));
        }
        if self.shrink_below_percent >= self.saturated_percent {
            let why = "expected less than saturated-percent (a reactor made active would be given back at once)";
            return Err(invalid(key("shrink-below-percent"), why));
        }
        Ok(())
    }

    pub fn period(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.period_millis)
    }
}

impl Default for IoConfig {
    fn default() -> Self {
        IoConfig {
            balancer_interval_seconds: 20,
            initial_placement: Placement::Packed,
            packing: PackingConfig::default(),
        }
    }
}

impl IoConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.balancer_interval_seconds == 0 {
            let key = "hazelcast.properties.hazelcast.io.balancer.interval.seconds";
            return Err(invalid(key, "expected a positive number of seconds, or a negative one to disable"));
        }
        self.packing.validate()
    }

    /// The balancer period, or None when disabled.
    pub fn balancer_interval(&self) -> Option<std::time::Duration> {
        (self.balancer_interval_seconds > 0)
            .then(|| std::time::Duration::from_secs(self.balancer_interval_seconds as u64))
    }
}
