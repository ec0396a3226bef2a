//! Member configuration for ferrogrid.
//!
//! A member reads a file in the shape of Hazelcast's own `hazelcast.yaml` or `hazelcast.xml`, so
//! an existing file works for the keys ferrogrid supports, plus a `ferrogrid` section for settings
//! of its own. An XML document is translated into the tree a YAML document parses to (`xml.rs`),
//! Hazelcast's `HZ_*` / `hz.*` overrides are applied onto that tree (`overrides.rs`), and one
//! walker reads it (`yaml.rs`), so both syntaxes name every key by the same dotted path. Which
//! file is read follows Hazelcast's look-up order (`locate.rs`).
//!
//! Keys ferrogrid does not support are not an error: they are listed in
//! [`LoadedConfig::unsupported_keys`] for the caller to report once at start-up. A supported key
//! with a bad value is a [`ConfigError::InvalidValue`] naming the key.
//!
//! Invariant: every `MemberConfig` this crate returns from a text or a file has passed
//! [`MemberConfig::validate`], which checks every bound documented on the fields.

mod cardinality_estimator;
mod collection;
mod error;
mod flake_id;
mod limits;
mod locate;
mod map;
mod merge_policy;
mod network;
mod observability;
mod overrides;
mod persistence;
mod pn_counter;
mod queue;
mod replicated_map;
mod ringbuffer;
mod security;
mod split_brain;
mod tenants;
mod tls;
mod xml;
mod yaml;

use std::io::Read;
use std::path::Path;

pub use cardinality_estimator::{CardinalityEstimatorConfig, CardinalityEstimatorConfigs};
pub use collection::{CollectionConfig, CollectionConfigs, MultiMapConfig, MultiMapConfigs, ValueCollectionType};
pub use error::ConfigError;
pub use flake_id::{FlakeIdGeneratorConfig, FlakeIdGeneratorConfigs, MAX_PREFETCH_COUNT};
pub use limits::{Limits, MAX_FRAME_BYTES, MIN_FRAME_BYTES, MIN_UNAUTHENTICATED_MESSAGE_BYTES};
pub use locate::{locate, ConfigOrigin, Environment, CONFIG_PROPERTY, CONFIG_VARIABLE, WORKING_DIRECTORY_FILES};
pub use map::{
    EventJournalConfig, EvictionConfig, EvictionPolicy, MapConfig, MapConfigs, MapIndexConfig, MaxSizePolicy,
    NamedConfigs, DEFAULT_MAP_NAME, MAX_BACKUP_COUNT, MAX_EXPIRY_SECONDS,
};
pub use merge_policy::{MergePolicy, MergePolicyConfig, MergingEntry, MAX_MERGE_BATCH_SIZE};
pub use network::{Endpoint, NetworkConfig, PublicAddress, DEFAULT_CLIENT_PORT};
pub use observability::{IoConfig, MetricsConfig, PackingConfig, Placement};
pub use overrides::{AppliedOverride, Overrides};
pub use persistence::{
    parse_fsync_policy, DataPersistenceConfig, FsyncPolicy, PersistenceConfig, RecoveryPolicy, MAX_PARALLELISM,
    MAX_REBALANCE_DELAY_SECONDS, MAX_TIMEOUT_SECONDS,
};
pub use pn_counter::{CrdtReplicationConfig, PnCounterConfig, PnCounterConfigs};
pub use queue::{QueueConfig, QueueConfigs};
pub use replicated_map::{InMemoryFormat, ReplicatedMapConfig, ReplicatedMapConfigs};
pub use ringbuffer::{RingbufferConfig, RingbufferConfigs, TopicConfig, TopicConfigs};
pub use security::{SecurityConfig, User};
pub use split_brain::{
    ProtectOn, ProtectedStructure, ProtectionFunction, SplitBrainProtectionConfig, SplitBrainProtections,
    MAX_MINIMUM_CLUSTER_SIZE, MAX_SPLIT_BRAIN_PROTECTIONS,
};
pub use tenants::{OverQuota, TenantConfig, TenantsConfig, MAX_TENANTS, MAX_WEIGHT};
pub use tls::{KeySource, MutualAuthentication, TlsConfig, TlsProtocol, TrustSource, BASIC_FACTORY, OPENSSL_FACTORY};
pub use xml::MAX_XML_DEPTH;

use error::invalid;

/// Largest partition count accepted; Hazelcast allows more, but more is never sensible here.
pub const MAX_PARTITION_COUNT: u16 = 10_000;

/// Largest explicit `reactor_threads`, and the cap when resolving 0 to the core count.
pub const MAX_REACTOR_THREADS: usize = 1024;

/// Longest accepted `reactor_spin_micros` (a reactor that spins longer is a busy loop).
pub const MAX_REACTOR_SPIN_MICROS: u64 = 10_000;

/// Shortest accepted client heartbeat timeout.
pub const MIN_CLIENT_HEARTBEAT_TIMEOUT_MS: u64 = 1000;

/// Largest config file [`MemberConfig::from_file`] reads.
pub const MAX_CONFIG_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Everything a member needs to start. Built once at start-up and then read-only, so it may be
/// shared by every thread.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberConfig {
    /// Name clients must present to connect. `hazelcast.cluster-name`, default `"dev"`, non-empty.
    pub cluster_name: String,
    /// Listening address and join settings. `hazelcast.network`.
    pub network: NetworkConfig,
    /// Number of partitions. `hazelcast.properties."hazelcast.partition.count"`, default 271,
    /// in `1..=MAX_PARTITION_COUNT`.
    pub partition_count: u16,
    /// Per-map settings by name or pattern. `hazelcast.map`.
    pub maps: MapConfigs,
    /// Per-queue settings by name or pattern. `hazelcast.queue`.
    pub queues: QueueConfigs,
    /// Per-multimap settings by name or pattern. `hazelcast.multimap`.
    pub multimaps: MultiMapConfigs,
    /// Per-replicated-map settings by name or pattern. `hazelcast.replicatedmap`.
    pub replicated_maps: ReplicatedMapConfigs,
    /// Per-list settings by name or pattern. `hazelcast.list`.
    pub lists: CollectionConfigs,
    /// Per-set settings by name or pattern. `hazelcast.set`.
    pub sets: CollectionConfigs,
    /// Per-ringbuffer settings by name or pattern. `hazelcast.ringbuffer`.
    pub ringbuffers: RingbufferConfigs,
    /// Per-topic settings by name or pattern. `hazelcast.topic`.
    pub topics: TopicConfigs,
    /// Per-PN-counter settings by name or pattern. `hazelcast.pn-counter`.
    pub pn_counters: PnCounterConfigs,
    /// Per-cardinality-estimator settings by name or pattern. `hazelcast.cardinality-estimator`.
    pub cardinality_estimators: CardinalityEstimatorConfigs,
    /// How often CRDT replicas exchange their states. `hazelcast.crdt-replication`.
    pub crdt_replication: CrdtReplicationConfig,
    /// Per-generator settings by name or pattern. `hazelcast.flake-id-generator`.
    pub flake_id_generators: FlakeIdGeneratorConfigs,
    /// Split-brain protection rules (`hazelcast.split-brain-protection`) and the structures'
    /// `split-brain-protection-ref`s.
    pub split_brain_protections: SplitBrainProtections,
    /// Client credentials. `hazelcast.security`.
    pub security: SecurityConfig,
    /// Persistence. `hazelcast.persistence` (read and checked; enabling it refuses the start).
    pub persistence: PersistenceConfig,
    /// Every bound the member enforces. `ferrogrid.limits` and one Hazelcast property.
    pub limits: Limits,
    /// Reactor (network and partition) threads; 0 = one per available core.
    /// `ferrogrid.reactor-threads`, default 0, at most `MAX_REACTOR_THREADS`.
    pub reactor_threads: usize,
    /// How long a reactor that just had work keeps looking for more before it sleeps in poll
    /// (microseconds; 0 = it sleeps at once). Spinning buys throughput and latency with CPU.
    /// `ferrogrid.reactor-spin-micros`, default 0, at most `MAX_REACTOR_SPIN_MICROS`.
    pub reactor_spin_micros: u64,
    /// A client silent this long is disconnected.
    /// `hazelcast.properties."hazelcast.client.max.no.heartbeat.seconds"` × 1000, default 300 000,
    /// at least `MIN_CLIENT_HEARTBEAT_TIMEOUT_MS`.
    pub client_heartbeat_timeout_ms: u64,
    /// Probes, metrics file and HTTP endpoint.
    pub metrics: MetricsConfig,
    /// Reactor IO: the balancer and connection placement.
    pub io: IoConfig,
    /// Membership timings and migration bounds.
    pub cluster: ClusterConfig,
    /// Tenants (`ferrogrid.tenants`) and fair scheduling.
    pub tenants: TenantsConfig,
    /// A lite member: it joins the cluster and serves clients but holds no partition replica
    /// (until promoted). `hazelcast.lite-member.enabled`, default false.
    pub lite_member: bool,
}

/// How members watch each other and move partitions (`hazelcast.properties`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterConfig {
    /// `hazelcast.heartbeat.interval.seconds` × 1000, default 1 000 (Hazelcast: 5 s), at least 100.
    pub heartbeat_interval_ms: u64,
    /// A member silent this long is removed. `hazelcast.max.no.heartbeat.seconds` × 1000,
    /// default 15 000 (Hazelcast: 60 s); more than the heartbeat interval.
    pub max_no_heartbeat_ms: u64,
    /// How long a starting member looks for an existing cluster before founding one.
    /// `hazelcast.wait.seconds.before.join` × 1000, default 2 000 (Hazelcast: 5 s).
    pub join_wait_ms: u64,
    /// Partitions changing hands per table step. `hazelcast.partition.max.parallel.migrations`,
    /// default 10 (as in Hazelcast), at least 1.
    pub max_parallel_migrations: u32,
    /// A write waits at most this long for its backups' acknowledgements before it is answered
    /// anyway. `hazelcast.operation.backup.timeout.millis`, default 5 000 (as in Hazelcast).
    pub backup_timeout_ms: u64,
    /// Outgoing member links are bound to the member's address (its `host`) before they
    /// connect, as Hazelcast does with `hazelcast.socket.client.bind` true (the default) and
    /// `hazelcast.socket.client.bind.any` false (its default: `hazelcast.socket.bind.any`,
    /// true). Default false: the kernel picks the source address. (ferrogrid's listening
    /// socket binds the member's address whatever `hazelcast.socket.bind.any` says.)
    pub bind_outgoing_links: bool,
    /// A master first looks for another cluster to merge with (a split brain healed) this long
    /// after it became master. `hazelcast.merge.first.run.delay.seconds` × 1000, default
    /// 300 000 (as in Hazelcast).
    pub merge_first_run_delay_ms: u64,
    /// Then every this long. `hazelcast.merge.next.run.delay.seconds` × 1000, default 120 000.
    pub merge_next_run_delay_ms: u64,
    /// The most results a query may return; beyond it the query fails with
    /// `QueryResultSizeExceededException`. `hazelcast.query.result.size.limit`, default -1 (no
    /// count limit, as in Hazelcast: an answer is still bounded by `max-message-bytes`).
    pub query_result_size_limit: i64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            heartbeat_interval_ms: 1_000,
            max_no_heartbeat_ms: 15_000,
            join_wait_ms: 2_000,
            max_parallel_migrations: 10,
            backup_timeout_ms: 5_000,
            bind_outgoing_links: false,
            merge_first_run_delay_ms: 300_000,
            merge_next_run_delay_ms: 120_000,
            query_result_size_limit: -1,
        }
    }
}

impl Default for MemberConfig {
    fn default() -> Self {
        Self {
            cluster_name: "dev".to_owned(),
            network: NetworkConfig::default(),
            partition_count: 271,
            maps: MapConfigs::default(),
            queues: QueueConfigs::default(),
            multimaps: MultiMapConfigs::default(),
            replicated_maps: ReplicatedMapConfigs::default(),
            lists: CollectionConfigs::default(),
            sets: CollectionConfigs::default(),
            ringbuffers: RingbufferConfigs::default(),
            topics: TopicConfigs::default(),
            pn_counters: PnCounterConfigs::default(),
            cardinality_estimators: CardinalityEstimatorConfigs::default(),
            crdt_replication: CrdtReplicationConfig::DEFAULT,
            flake_id_generators: FlakeIdGeneratorConfigs::default(),
            split_brain_protections: SplitBrainProtections::default(),
            security: SecurityConfig::default(),
            persistence: PersistenceConfig::default(),
            limits: Limits::default(),
            reactor_threads: 0,
            reactor_spin_micros: 0,
            client_heartbeat_timeout_ms: 300_000,
            metrics: MetricsConfig::default(),
            io: IoConfig::default(),
            cluster: ClusterConfig::default(),
            tenants: TenantsConfig::default(),
            lite_member: false,
        }
    }
}

/// A validated configuration and the keys of the file that ferrogrid ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    /// The configuration; already validated.
    pub config: MemberConfig,
    /// Dotted paths present in the file but not supported, sorted, such as
    /// `hazelcast.network.ssl` or `hazelcast.map.default.eviction`. Each names the outermost
    /// unsupported key; nothing beneath it is listed. An override's key not supported is listed
    /// as the override named it (`hazelcast.map.orders.mergepolicy`).
    pub unsupported_keys: Vec<String>,
    /// The overrides applied, in order, for the caller to log.
    pub overrides: Vec<AppliedOverride>,
}

/// The syntax of a configuration text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// `hazelcast.yaml`-shaped.
    Yaml,
    /// `hazelcast.xml`-shaped.
    Xml,
}

impl Syntax {
    /// By the file's extension (`.xml`; `.yaml`, `.yml`), else by its content: XML when the first
    /// character that is not white space is `<`.
    pub fn of(path: &Path, text: &str) -> Syntax {
        let extension = path.extension().map(|extension| extension.to_string_lossy().to_lowercase());
        match extension.as_deref() {
            Some("xml") => Syntax::Xml,
            Some("yaml" | "yml") => Syntax::Yaml,
            _ if text.trim_start_matches('\u{feff}').trim_start().starts_with('<') => Syntax::Xml,
            _ => Syntax::Yaml,
        }
    }
}

impl MemberConfig {
    /// Parses a Hazelcast-shaped YAML document and validates the result. An empty document
    /// gives the defaults.
    pub fn from_yaml_str(text: &str) -> Result<LoadedConfig, ConfigError> {
        Self::from_str_with(text, Syntax::Yaml, &Overrides::default())
    }

    /// Parses a Hazelcast-shaped XML document (`<hazelcast>`) and validates the result.
    pub fn from_xml_str(text: &str) -> Result<LoadedConfig, ConfigError> {
        Self::from_str_with(text, Syntax::Xml, &Overrides::default())
    }

    /// Parses `text` in `syntax`, applies `overrides` onto the document, and validates the result.
    pub fn from_str_with(text: &str, syntax: Syntax, overrides: &Overrides) -> Result<LoadedConfig, ConfigError> {
        let mut document = match syntax {
            Syntax::Yaml => yaml::parse(text)?,
            Syntax::Xml => xml::parse(text)?,
        };
        let (applied, added) = overrides.apply(&mut document)?;
        let mut loaded = yaml::read(&document, added)?;
        loaded.overrides = applied;
        loaded.config.validate()?;
        Ok(loaded)
    }

    /// Reads a UTF-8 file of at most `MAX_CONFIG_FILE_BYTES` in the syntax [`Syntax::of`] picks.
    pub fn from_file(path: &Path) -> Result<LoadedConfig, ConfigError> {
        Self::from_file_with(path, &Overrides::default())
    }

    /// As [`MemberConfig::from_file`], with `overrides` applied onto the document.
    pub fn from_file_with(path: &Path, overrides: &Overrides) -> Result<LoadedConfig, ConfigError> {
        let io_error = |source| ConfigError::Io { path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(io_error)?;
        let mut text = String::new();
        file.take(MAX_CONFIG_FILE_BYTES + 1).read_to_string(&mut text).map_err(io_error)?;
        if text.len() as u64 > MAX_CONFIG_FILE_BYTES {
            return Err(ConfigError::FileTooLarge { path: path.to_owned(), limit_bytes: MAX_CONFIG_FILE_BYTES });
        }
        Self::from_str_with(&text, Syntax::of(path, &text), overrides)
    }

    /// The configuration a member started in `environment` reads: the file [`locate`] finds
    /// (or the defaults), with the overrides of its `HZ_*` variables and `hz.*` system properties.
    pub fn load(
        command_line: Option<&Path>,
        environment: &Environment,
    ) -> Result<(ConfigOrigin, LoadedConfig), ConfigError> {
        let origin = locate(command_line, environment)?;
        let overrides = Overrides::new(environment.variables.clone(), environment.system_properties.clone())?;
        let loaded = match origin.path() {
            Some(path) => Self::from_file_with(path, &overrides)
                .map_err(|source| ConfigError::InFile { path: path.to_owned(), source: Box::new(source) })?,
            None => Self::from_str_with("", Syntax::Yaml, &overrides)?,
        };
        Ok((origin, loaded))
    }

    /// Replicas besides the owner the partition table keeps: the most any map asks for
    /// (synchronous and asynchronous backups together).
    pub fn table_backup_count(&self) -> usize {
        let default = self.maps.for_map("default");
        let configured = self.maps.iter().map(|(_, map)| map.backup_count + map.async_backup_count);
        configured.chain(std::iter::once(default.backup_count + default.async_backup_count)).max().unwrap_or(1) as usize
    }

    /// Checks every bound documented on the fields of this struct and the structs it holds.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.tenants.validate()?;
        if !self.tenants.tenants.is_empty() && self.security.enabled {
            let text = "configure clients either as tenants (ferrogrid.tenants) or as security realm users, not both";
            return Err(invalid("ferrogrid.tenants", text));
        }
        let cluster = &self.cluster;
        if cluster.heartbeat_interval_ms < 100 {
            return Err(invalid("hazelcast.properties.hazelcast.heartbeat.interval.seconds", "expected at least 1"));
        }
        if cluster.max_no_heartbeat_ms <= cluster.heartbeat_interval_ms {
            let text = "expected more than hazelcast.heartbeat.interval.seconds";
            return Err(invalid("hazelcast.properties.hazelcast.max.no.heartbeat.seconds", text));
        }
        for (key, delay_ms) in [
            ("hazelcast.properties.hazelcast.merge.first.run.delay.seconds", cluster.merge_first_run_delay_ms),
            ("hazelcast.properties.hazelcast.merge.next.run.delay.seconds", cluster.merge_next_run_delay_ms),
        ] {
            if delay_ms < 1_000 {
                return Err(invalid(key, "expected at least 1"));
            }
        }
        if cluster.max_parallel_migrations == 0 {
            let key = "hazelcast.properties.hazelcast.partition.max.parallel.migrations";
            return Err(invalid(key, "expected at least 1"));
        }
        if self.cluster_name.is_empty() {
            return Err(invalid("hazelcast.cluster-name", "expected a non-empty name"));
        }
        let partitions = self.partition_count;
        if !(1..=MAX_PARTITION_COUNT).contains(&partitions) {
            let key = "hazelcast.properties.hazelcast.partition.count";
            let expected = format!("expected 1..={MAX_PARTITION_COUNT}, got {partitions}");
            return Err(invalid(key, expected));
        }
        if self.reactor_spin_micros > MAX_REACTOR_SPIN_MICROS {
            let expected = format!("expected 0..={MAX_REACTOR_SPIN_MICROS}, got {}", self.reactor_spin_micros);
            return Err(invalid("ferrogrid.reactor-spin-micros", expected));
        }
        let threads = self.reactor_threads;
        if threads > MAX_REACTOR_THREADS {
            let expected = format!("expected 0..={MAX_REACTOR_THREADS}, got {threads}");
            return Err(invalid("ferrogrid.reactor-threads", expected));
        }
        let timeout_ms = self.client_heartbeat_timeout_ms;
        if timeout_ms < MIN_CLIENT_HEARTBEAT_TIMEOUT_MS {
            let key = "hazelcast.properties.hazelcast.client.max.no.heartbeat.seconds";
            let expected = format!("expected at least 1 second, got {timeout_ms} ms");
            return Err(invalid(key, expected));
        }
        self.network.validate()?;
        self.maps.validate()?;
        self.queues.validate()?;
        self.ringbuffers.validate()?;
        self.lists.validate("list")?;
        self.multimaps.validate()?;
        self.replicated_maps.validate()?;
        self.sets.validate("set")?;
        self.pn_counters.validate()?;
        self.cardinality_estimators.validate()?;
        self.crdt_replication.validate()?;
        self.flake_id_generators.validate()?;
        self.split_brain_protections.validate()?;
        self.security.validate()?;
        self.persistence.validate()?;
        self.metrics.validate()?;
        self.io.validate()?;
        self.limits.validate()
    }

    /// Number of reactor threads to start: `reactor_threads`, or when that is 0 the available
    /// cores (1 if unknown), never more than `MAX_REACTOR_THREADS`.
    pub fn reactor_thread_count(&self) -> usize {
        let count = match self.reactor_threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            explicit => explicit,
        };
        count.min(MAX_REACTOR_THREADS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_hazelcast_and_validate() {
        let config = MemberConfig::default();
        assert_eq!(config.cluster_name, "dev");
        assert_eq!(config.network.host, "127.0.0.1");
        assert_eq!((config.network.port, config.network.port_count), (5701, 100));
        assert!(config.network.port_auto_increment);
        assert_eq!(config.partition_count, 271);
        assert_eq!(config.client_heartbeat_timeout_ms, 300_000);
        assert_eq!(config.limits.max_frame_bytes, 64 << 20);
        assert_eq!(config.limits.max_message_bytes, 256 << 20);
        assert_eq!(config.limits.max_unauthenticated_message_bytes, 4096);
        assert_eq!(config.maps.for_map("any"), &MapConfig::DEFAULT);
        assert!(config.security.check(None, None));
        assert!(config.reactor_thread_count() >= 1);
        config.validate().unwrap();
        let empty = MemberConfig::from_yaml_str("").unwrap();
        assert_eq!(empty.config, config);
        assert!(empty.unsupported_keys.is_empty());
    }

    #[test]
    fn validate_checks_bounds_set_in_code() {
        let mut config = MemberConfig::default();
        config.limits.max_frame_bytes = config.limits.max_message_bytes + 1;
        let key = "ferrogrid.limits.max-frame-bytes";
        assert!(matches!(config.validate(), Err(ConfigError::InvalidValue { key: k, .. }) if k == key));
    }

    #[test]
    fn example_file_parses_with_no_unsupported_keys() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hazelcast.yaml");
        let loaded = MemberConfig::from_file(&path).unwrap();
        assert_eq!(loaded.unsupported_keys, Vec::<String>::new());
        assert_eq!(loaded.config.cluster_name, "dev");
        assert_eq!(loaded.config.limits, Limits::default(), "the example shows the defaults");
        let missing = MemberConfig::from_file(Path::new("/nonexistent/hazelcast.yaml"));
        assert!(matches!(missing, Err(ConfigError::Io { .. })));
    }
}
