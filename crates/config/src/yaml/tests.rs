//! The YAML reader: every section, its bounds, and the paths its errors name.

use crate::{ConfigError, LoadedConfig, MemberConfig};

fn load(text: &str) -> LoadedConfig {
    MemberConfig::from_yaml_str(text).unwrap()
}

fn invalid_key(text: &str) -> String {
    match MemberConfig::from_yaml_str(text) {
        Err(ConfigError::InvalidValue { key, .. }) => key,
        other => panic!("expected InvalidValue for {text:?}, got {other:?}"),
    }
}

pub(crate) const USER_FILE: &str = r#"
hazelcast:
  cluster-name: production
  network:
    port:
      auto-increment: false
      port-count: 20
      port: 5801
    interfaces:
      enabled: true
      interfaces:
        - 10.10.1.*
    join:
      multicast:
        enabled: false
      tcp-ip:
        enabled: true
        member-list:
          - 10.10.1.2:5801
          - 10.10.1.3:5801, 10.10.1.4
  map:
    default:
      backup-count: 2
    orders:
      backup-count: 0
      async-backup-count: 1
      time-to-live-seconds: 3600
    sessions*:
      max-idle-seconds: "600"
  properties:
    hazelcast.partition.count: 1021
    hazelcast.client.max.no.heartbeat.seconds: "60"
    hazelcast.client.protocol.max.message.bytes: 8192
ferrogrid:
  reactor-threads: 4
  reactor-spin-micros: 50
  limits:
    max-connections: 500
"#;

#[test]
fn realistic_user_file_parses() {
    let LoadedConfig { config, unsupported_keys, .. } = load(USER_FILE);
    assert!(unsupported_keys.is_empty(), "{unsupported_keys:?}");
    assert_eq!(config.cluster_name, "production");
    let network = &config.network;
    assert_eq!((network.port, network.port_count), (5801, 20));
    assert!(!network.port_auto_increment);
    assert_eq!(network.host, "10.10.1.1");
    assert_eq!(network.interfaces, ["10.10.1.*"]);
    assert_eq!(network.member_list, ["10.10.1.2:5801", "10.10.1.3:5801", "10.10.1.4"]);
    let orders = config.maps.for_map("orders");
    assert_eq!((orders.backup_count, orders.async_backup_count), (0, 1));
    assert_eq!(orders.time_to_live_seconds, 3600);
    let sessions = config.maps.for_map("sessions-eu");
    assert_eq!(sessions.max_idle_seconds, 600);
    assert_eq!(sessions.backup_count, 1, "unset keys take built-in defaults");
    assert_eq!(config.maps.for_map("customers").backup_count, 2);
    assert_eq!(config.partition_count, 1021);
    assert_eq!(config.client_heartbeat_timeout_ms, 60_000);
    assert_eq!(config.limits.max_unauthenticated_message_bytes, 8192);
    assert_eq!((config.reactor_threads, config.limits.max_connections), (4, 500));
    assert_eq!(config.reactor_spin_micros, 50);
}

#[test]
fn tenants_with_quotas() {
    let text = "ferrogrid:\n  fair-scheduling: false\n  tenants:\n    - {name: team-a, username: alice, password: s, weight: 3, \
                max-connections: 10, max-ops-per-second: 5000, max-entries: 100, max-bytes: 4096, over-quota: reject}\n    \
                - {name: team-b, username: bob, password: t}\n";
    let loaded = load(text);
    let tenants = &loaded.config.tenants;
    assert!(!tenants.fair_scheduling);
    assert_eq!(tenants.tenants.len(), 2);
    let a = &tenants.tenants[0];
    assert_eq!((a.name.as_str(), a.username.as_str(), a.weight), ("team-a", "alice", 3));
    assert_eq!(
        (a.max_connections, a.max_ops_per_second, a.max_entries, a.max_bytes),
        (Some(10), Some(5000), Some(100), Some(4096))
    );
    assert_eq!(a.over_quota, crate::OverQuota::Reject);
    assert_eq!(tenants.tenants[1].over_quota, crate::OverQuota::Throttle);
    assert_eq!(tenants.authenticate("bob", "t"), Some(2));
    assert_eq!(tenants.authenticate("bob", "x"), None);
    let duplicate = "ferrogrid: {tenants: [{name: a, username: u, password: p}, {name: b, username: u, password: q}]}";
    let error = MemberConfig::from_yaml_str(duplicate).unwrap_err().to_string();
    assert!(error.contains("ferrogrid.tenants[1].username"), "{error}");
    let bad_name = "ferrogrid: {tenants: [{name: 'a/b', username: u, password: p}]}";
    assert!(MemberConfig::from_yaml_str(bad_name).unwrap_err().to_string().contains("ferrogrid.tenants[0].name"));
    let bad_policy = "ferrogrid: {tenants: [{name: a, username: u, password: p, over-quota: drop}]}";
    assert!(MemberConfig::from_yaml_str(bad_policy).unwrap_err().to_string().contains("throttle or reject"));
}

#[test]
fn scalar_port_public_address_and_members_string() {
    let text = "
hazelcast:
  network:
    port: 6000
    public-address: node1.example.com:6000
    join: {tcp-ip: {members: 'a:1, b:2'}}";
    let network = load(text).config.network;
    assert_eq!((network.port, network.port_count), (6000, 100));
    assert!(network.port_auto_increment);
    assert_eq!(network.host, "127.0.0.1", "the bind address stays local");
    assert_eq!(network.advertised(5701), ("node1.example.com".to_owned(), 6000));
    let no_port = load("hazelcast: {network: {public-address: '[::1]'}}").config.network;
    assert_eq!(no_port.advertised(5702), ("::1".to_owned(), 5702));
    let bad = MemberConfig::from_yaml_str("hazelcast: {network: {public-address: 'a:0'}}").unwrap_err();
    assert!(bad.to_string().contains("public-address"), "{bad}");
    assert_eq!(network.member_list, ["a:1", "b:2"]);
    let disabled = "hazelcast: {network: {join: {tcp-ip: {enabled: false, members: a}}}}";
    assert!(load(disabled).config.network.member_list.is_empty());
}

#[test]
fn metrics_and_io_settings_are_read() {
    let text = "hazelcast: {metrics: {enabled: false, collection-frequency-seconds: 2}, \
                properties: {hazelcast.io.balancer.interval.seconds: -1}}\n\
                ferrogrid: {metrics: {file: '', http-port: 9900, max-file-bytes: 65536}, \
                io: {initial-placement: first-reactor}}";
    let loaded = load(text);
    let config = loaded.config;
    assert!(!config.metrics.enabled);
    assert_eq!(config.metrics.collection_frequency_seconds, 2);
    assert_eq!(config.metrics.file, None);
    assert_eq!(config.metrics.http_port, 9900);
    assert_eq!(config.io.balancer_interval(), None, "negative disables the balancer");
    assert_eq!(config.io.initial_placement, crate::Placement::FirstReactor);
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    let zero = "hazelcast: {properties: {hazelcast.io.balancer.interval.seconds: 0}}";
    assert_eq!(invalid_key(zero), "hazelcast.properties.hazelcast.io.balancer.interval.seconds");
    assert_eq!(invalid_key("ferrogrid: {io: {initial-placement: random}}"), "ferrogrid.io.initial-placement");
    assert_eq!(MemberConfig::default().io.balancer_interval(), Some(std::time::Duration::from_secs(20)));
}

#[test]
fn packing_thresholds_are_read_and_checked() {
    let text = "ferrogrid: {io: {packing: {period-millis: 500, saturated-percent: 70, \
                spare-cores-percent: 150, shrink-below-percent: 30}}}";
    let loaded = load(text);
    let packing = &loaded.config.io.packing;
    assert_eq!((packing.period_millis, packing.saturated_percent), (500, 70));
    assert_eq!((packing.spare_cores_percent, packing.shrink_below_percent), (150, 30));
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    let key = |name: &str| format!("ferrogrid.io.packing.{name}");
    let invalid = |setting: &str| invalid_key(&format!("ferrogrid: {{io: {{packing: {{{setting}}}}}}}"));
    assert_eq!(invalid("period-millis: 50"), key("period-millis"));
    assert_eq!(invalid("saturated-percent: 0"), key("saturated-percent"));
    assert_eq!(invalid("saturated-percent: 101"), key("saturated-percent"));
    assert_eq!(invalid("spare-cores-percent: 100001"), key("spare-cores-percent"));
    assert_eq!(invalid("shrink-below-percent: 85"), key("shrink-below-percent"), "not below saturated");
    assert_eq!(invalid("saturated-percent: 40"), key("shrink-below-percent"), "the default 50 is not below 40");
    assert_eq!(invalid("period-millis: -1"), key("period-millis"));
}

#[test]
fn map_indexes_are_read_and_checked() {
    let loaded =
        load("hazelcast: {map: {employees: {indexes: [{type: HASH, attributes: [name]}, {attributes: [age, dept]}]}}}");
    let indexes = &loaded.config.maps.for_map("employees").indexes;
    assert_eq!(indexes.len(), 2);
    assert_eq!((indexes[0].sorted, indexes[0].attributes.clone()), (false, vec!["name".to_owned()]));
    assert_eq!((indexes[1].sorted, indexes[1].attributes.clone()), (true, vec!["age".to_owned(), "dept".to_owned()]));
    for bad in [
        "hazelcast: {map: {m: {indexes: [{type: FULLTEXT, attributes: [a]}]}}}",
        "hazelcast: {map: {m: {indexes: [{type: HASH}]}}}",
        "hazelcast: {map: {m: {indexes: [{attributes: [' ']}]}}}",
        "hazelcast: {map: {m: {indexes: [{attributes: [a], unique: true}]}}}",
    ] {
        assert!(MemberConfig::from_yaml_str(bad).is_err(), "{bad}");
    }
}

#[test]
fn replicated_map_settings_are_read() {
    let text = "hazelcast: {replicatedmap: {cache-*: {in-memory-format: BINARY, async-fillup: false, \
                statistics-enabled: false}}}";
    let loaded = load(text);
    let replicated = loaded.config.replicated_maps.for_replicated_map("cache-1");
    assert_eq!(replicated.in_memory_format, crate::InMemoryFormat::Binary);
    assert!(!replicated.async_fillup && !replicated.statistics_enabled);
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    assert_eq!(*loaded.config.replicated_maps.for_replicated_map("other"), crate::ReplicatedMapConfig::DEFAULT);
    let native = "hazelcast: {replicatedmap: {m: {in-memory-format: NATIVE}}}";
    assert_eq!(invalid_key(native), "hazelcast.replicatedmap.m.in-memory-format");
    let unknown = "hazelcast: {replicatedmap: {m: {in-memory-format: HEAP}}}";
    assert_eq!(invalid_key(unknown), "hazelcast.replicatedmap.m.in-memory-format");
}

#[test]
fn eviction_and_per_entry_stats_are_read() {
    let text = "hazelcast: {map: {bounded*: {per-entry-stats-enabled: true, in-memory-format: BINARY, \
                eviction: {size: 1000, max-size-policy: PER_PARTITION, eviction-policy: LFU}}}}";
    let loaded = load(text);
    let map = loaded.config.maps.for_map("bounded-1");
    assert!(map.per_entry_stats_enabled);
    assert_eq!(map.eviction.size, 1000);
    assert_eq!(map.eviction.max_size_policy, crate::MaxSizePolicy::PerPartition);
    assert_eq!(map.eviction.eviction_policy, crate::EvictionPolicy::Lfu);
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    assert_eq!(loaded.config.maps.for_map("other").eviction, crate::EvictionConfig::DEFAULT);
    let bad = "hazelcast: {map: {m: {eviction: {max-size-policy: FREE_HEAP_SIZE}}}}";
    assert_eq!(invalid_key(bad), "hazelcast.map.m.eviction.max-size-policy");
    assert_eq!(invalid_key("hazelcast: {map: {m: {eviction: {size: 0}}}}"), "hazelcast.map.m.eviction.size");
}

#[test]
fn flake_id_generators_are_read_with_hazelcasts_names() {
    let text = r#"
hazelcast:
  flake-id-generator:
    ids-*:
      prefetch-count: 10
      prefetch-validity-millis: 0
      epoch-start: 1600000000000
      node-id-offset: "10"
      bits-sequence: 8
      bits-node-id: 4
      allowed-future-millis: 0
      statistics-enabled: false
      id-generator-tag: x
ferrogrid: {limits: {max-flake-id-generators: 5}}
"#;
    let loaded = load(text);
    assert_eq!(loaded.unsupported_keys, ["hazelcast.flake-id-generator.ids-*.id-generator-tag"]);
    let expected = crate::FlakeIdGeneratorConfig {
        prefetch_count: 10,
        prefetch_validity_millis: 0,
        epoch_start: 1_600_000_000_000,
        node_id_offset: 10,
        bits_sequence: 8,
        bits_node_id: 4,
        allowed_future_millis: 0,
        statistics_enabled: false,
    };
    assert_eq!(loaded.config.flake_id_generators.for_generator("ids-1"), &expected);
    assert_eq!(loaded.config.flake_id_generators.for_generator("other"), &crate::FlakeIdGeneratorConfig::DEFAULT);
    assert_eq!(loaded.config.limits.max_flake_id_generators, 5);
    let key = "hazelcast.flake-id-generator.g";
    assert_eq!(invalid_key("hazelcast: {flake-id-generator: {g: {bits-node-id: -1}}}"), format!("{key}.bits-node-id"));
    assert_eq!(
        invalid_key("hazelcast: {flake-id-generator: {g: {bits-sequence: 63}}}"),
        format!("{key}.bits-sequence")
    );
    assert_eq!(
        invalid_key("hazelcast: {flake-id-generator: {g: {prefetch-count: 0}}}"),
        format!("{key}.prefetch-count")
    );
    assert_eq!(
        invalid_key("hazelcast: {flake-id-generator: {g: {node-id-offset: -1}}}"),
        format!("{key}.node-id-offset")
    );
    let future = "hazelcast: {flake-id-generator: {g: {allowed-future-millis: -5}}}";
    assert_eq!(invalid_key(future), format!("{key}.allowed-future-millis"));
    assert_eq!(
        invalid_key("ferrogrid: {limits: {max-flake-id-generators: 0}}"),
        "ferrogrid.limits.max-flake-id-generators"
    );
}

#[test]
fn unsupported_keys_are_listed_not_errors() {
    let text = r#"
hazelcast:
  network:
    ssl:
      enabled: false
      factory-class-name: com.example.Factory
    port: {port: 5701, reuse-address: true}
  topic:
    default: {global-ordering-enabled: true, multi-threading-enabled: true}
  ringbuffer:
    rb-*: {capacity: 5, ringbuffer-store: {enabled: false}}
  queue:
    default: {max-size: 10, statistics-enabled: true}
  map:
    default: {backup-count: 1, eviction: {size: 100}, merge-policy: {class-name: PutIfAbsentMergePolicy}}
  properties: {hazelcast.logging.type: slf4j}
ferrogrid: {unknown: 1}
management-center: {}
"#;
    let expected = [
        "ferrogrid.unknown",
        "hazelcast.network.port.reuse-address",
        "hazelcast.properties.hazelcast.logging.type",
        "hazelcast.queue.default.statistics-enabled",
        "hazelcast.ringbuffer.rb-*.ringbuffer-store",
        "hazelcast.topic.default.multi-threading-enabled",
        "management-center",
    ];
    let loaded = load(text);
    assert_eq!(loaded.unsupported_keys, expected);
    assert_eq!(loaded.config.queues.for_queue("any").capacity(), 10);
    assert_eq!(loaded.config.ringbuffers.for_ringbuffer("rb-1").capacity, 5);
    assert!(loaded.config.topics.for_topic("news").global_ordering_enabled);
    let bad = "hazelcast: {queue: {q: {max-size: -1}}}";
    assert_eq!(invalid_key(bad), "hazelcast.queue.q.max-size");
}

#[test]
fn bad_values_name_their_key() {
    let network = |yaml: &str| invalid_key(&format!("hazelcast: {{network: {yaml}}}"));
    assert_eq!(network("{port: -1}"), "hazelcast.network.port");
    assert_eq!(network("{port: abc}"), "hazelcast.network.port");
    assert_eq!(network("{port: 0}"), "hazelcast.network.port");
    assert_eq!(network("{port: {port: 70000}}"), "hazelcast.network.port.port");
    assert_eq!(network("{port: {auto-increment: maybe}}"), "hazelcast.network.port.auto-increment");
    assert_eq!(network("{port: {port: 65500}}"), "hazelcast.network.port.port-count");
    let multicast = "{join: {multicast: {enabled: true}}}";
    assert_eq!(network(multicast), "hazelcast.network.join.multicast.enabled");
    assert_eq!(network("{ssl: {enabled: true}}"), "hazelcast.network.ssl.properties");
    let permissions = "hazelcast: {security: {enabled: true, client-permissions: {all: {principal: admin}}, \
                       realms: [{name: r, authentication: {simple: {users: [{username: u, password: p}]}}}], \
                       client-authentication: {realm: r}}}";
    assert_eq!(invalid_key(permissions), "hazelcast.security.client-permissions");
    let interfaces = "{interfaces: {enabled: true, interfaces: [eth0]}}";
    assert_eq!(network(interfaces), "hazelcast.network.interfaces.interfaces");
    let map = |yaml: &str| invalid_key(&format!("hazelcast: {{map: {{orders: {yaml}}}}}"));
    assert_eq!(map("{backup-count: 7}"), "hazelcast.map.orders.backup-count");
    assert_eq!(map("{backup-count: 300}"), "hazelcast.map.orders.backup-count");
    let too_many = "{backup-count: 4, async-backup-count: 3}";
    assert_eq!(map(too_many), "hazelcast.map.orders.async-backup-count");
    assert_eq!(map("{max-idle-seconds: 1e3}"), "hazelcast.map.orders.max-idle-seconds");
    assert_eq!(invalid_key("hazelcast: {map: {'a**': {}}}"), "hazelcast.map.a**");
    assert_eq!(invalid_key("hazelcast: {cluster-name: [a]}"), "hazelcast.cluster-name");
    assert_eq!(invalid_key("[1, 2]"), "(document)");
    let message = MemberConfig::from_yaml_str(&format!("hazelcast: {{network: {multicast}}}"));
    let message = message.unwrap_err().to_string();
    assert!(message.contains("multicast discovery is not supported; use tcp-ip"), "{message}");
    assert!(matches!(MemberConfig::from_yaml_str("a: [b"), Err(ConfigError::Yaml(_))));
}

#[test]
fn out_of_range_properties_and_limits_are_rejected() {
    let cases = [
        ("hazelcast.partition.count: 0", "hazelcast.partition.count"),
        ("hazelcast.partition.count: '10001'", "hazelcast.partition.count"),
        ("hazelcast.client.max.no.heartbeat.seconds: 0", "hazelcast.client.max.no.heartbeat.seconds"),
        ("hazelcast.client.protocol.max.message.bytes: 1023", "hazelcast.client.protocol.max.message.bytes"),
    ];
    for (property, key) in cases {
        let text = format!("hazelcast: {{properties: {{{property}}}}}");
        assert_eq!(invalid_key(&text), format!("hazelcast.properties.{key}"));
    }
    let limits = [
        "max-frame-bytes: 300000000",
        "max-frame-bytes: 1000",
        "max-message-bytes: 0",
        "connection-write-buffer-bytes: 0",
        "max-connections: 0",
        "reactor-queue-capacity: 0",
        "max-pending-fragmented-messages: 0",
        "max-in-flight-per-connection: 0",
        "requests-per-turn: 0",
        "reads-per-turn: 0",
        "max-parked-per-key: 0",
        "expiry-sweep-entries: 0",
        "snapshot-chunk-bytes: 0",
        "snapshot-chunk-bytes: 33554433",
        "cluster-event-queue: 0",
        "listener-event-queue-bytes: 0",
        "listener-event-queue-bytes: -1",
    ];
    for limit in limits {
        let key = limit.split(':').next().unwrap();
        let text = format!("ferrogrid: {{limits: {{{limit}}}}}");
        assert_eq!(invalid_key(&text), format!("ferrogrid.limits.{key}"));
    }
    assert_eq!(invalid_key("ferrogrid: {reactor-threads: 1025}"), "ferrogrid.reactor-threads");
    assert_eq!(invalid_key("ferrogrid: {reactor-spin-micros: 10001}"), "ferrogrid.reactor-spin-micros");
}

#[test]
fn bounds_that_were_constants_are_read() {
    let text = "ferrogrid:\n  limits:\n    requests-per-turn: 64\n    reads-per-turn: '4'\n    \
                max-parked-per-key: 100\n    expiry-sweep-entries: 500\n    snapshot-chunk-bytes: 65536\n    \
                cluster-event-queue: 1024\n    listener-event-queue-bytes: 1048576\n";
    let loaded = load(text);
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    let limits = &loaded.config.limits;
    assert_eq!((limits.requests_per_turn, limits.reads_per_turn), (64, 4));
    assert_eq!((limits.max_parked_per_key, limits.expiry_sweep_entries), (100, 500));
    assert_eq!((limits.snapshot_chunk_bytes, limits.cluster_event_queue), (65_536, 1024));
    assert_eq!(limits.listener_event_queue_bytes, 1 << 20);
}

pub(crate) const SECURITY: &str = r#"
hazelcast:
  security:
    enabled: true
    realms:
      - name: otherRealm
        authentication: {simple: {users: [{username: other, password: x}]}}
      - name: simpleRealm
        authentication:
          simple:
            users:
              - username: dev
                password: secret
                roles: [admin]
    client-authentication:
      realm: simpleRealm
"#;

#[test]
fn security_users_come_from_the_client_realm() {
    let loaded = load(SECURITY);
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    let security = loaded.config.security;
    assert!(security.check(Some("dev"), Some("secret")));
    assert!(!security.check(Some("other"), Some("x")));
    let missing_realm = SECURITY.replace("realm: simpleRealm", "realm: nope");
    let realm_key = "hazelcast.security.client-authentication.realm";
    assert_eq!(invalid_key(&missing_realm), realm_key);
    let no_client_realm = &SECURITY[..SECURITY.find("    client-authentication").unwrap()];
    assert_eq!(invalid_key(no_client_realm), "hazelcast.security.enabled");
    let no_password = SECURITY.replace("password: secret", "");
    let password_key = "hazelcast.security.realms[1].authentication.simple.users[0].password";
    assert_eq!(invalid_key(&no_password), password_key);
}

/// A document with every section and sub-section the walker reads, so that it asks for every key.
const EVERY_SECTION: &str = r#"
hazelcast:
  network:
    port: {port: 5701}
    interfaces: {enabled: false}
    ssl: {properties: {}}
    join: {tcp-ip: {}, multicast: {}, auto-detection: {}}
  lite-member: {}
  advanced-network: {enabled: false}
  map: {m: {eviction: {}, indexes: [], event-journal: {}, data-persistence: {}}}
  queue: {q: {}}
  list: {l: {}}
  set: {s: {}}
  multimap: {mm: {}}
  replicatedmap: {r: {}}
  ringbuffer: {rb: {}}
  topic: {t: {}}
  pn-counter: {c: {}}
  crdt-replication: {}
  flake-id-generator: {f: {}}
  cardinality-estimator: {e: {merge-policy: {}}}
  split-brain-protection: {p: {recently-active-split-brain-protection: {}, probabilistic-split-brain-protection: {}}}
  properties: {}
  security:
    realms: [{name: r, authentication: {simple: {users: [{username: u, password: p}]}}}]
    client-authentication: {}
  metrics: {}
  persistence: {}
ferrogrid:
  persistence: {}
  limits: {}
  metrics: {}
  io: {packing: {}}
  tenants: [{name: t, username: t, password: t}]
"#;

#[test]
fn every_key_the_reader_accepts_is_in_the_configuration_reference() {
    let docs = include_str!("../../../../docs/configuration.md");
    // Words of the reference's code spans: `a.b-c`, `{port, auto-increment}`, `"k.e.y"`.
    let spans = docs.split('`').skip(1).step_by(2);
    let words: std::collections::BTreeSet<&str> =
        spans.flat_map(|span| span.split(|c: char| !(c.is_ascii_alphanumeric() || "-.*_".contains(c)))).collect();
    let document: serde_yaml::Value = serde_yaml::from_str(EVERY_SECTION).unwrap();
    let keys = crate::yaml::accepted_keys(&document);
    assert!(keys.len() > 100, "{keys:?}");
    let documented = |key: &str| words.iter().any(|word| *word == key || word.ends_with(&format!(".{key}")));
    // Sections (`hazelcast.network`, `hazelcast.map.m`) hold keys; the keys are what is documented.
    let section = |path: &String| {
        keys.iter().any(|key| key.starts_with(&format!("{path}.")) || key.starts_with(&format!("{path}[")))
    };
    let missing: Vec<&String> = keys
        .iter()
        .filter(|path| !section(path))
        .filter(|path| {
            let last = path.rsplit_once(['.', ']']).map_or(path.as_str(), |(_, last)| last);
            let last = if path.contains(".properties.") { path.split(".properties.").nth(1).unwrap() } else { last };
            !documented(last) && !documented(path)
        })
        .collect();
    assert!(missing.is_empty(), "keys read but not in docs/configuration.md: {missing:?}");
}

#[test]
fn lite_member_is_read_in_yaml_and_xml() {
    assert!(!load("hazelcast: {}").config.lite_member, "a data member by default");
    let yaml = "hazelcast: {lite-member: {enabled: true}}";
    assert!(load(yaml).config.lite_member);
    let xml = r#"<hazelcast xmlns="http://www.hazelcast.com/schema/config"><lite-member enabled="true"/></hazelcast>"#;
    assert!(MemberConfig::from_xml_str(xml).unwrap().config.lite_member);
    let bad = MemberConfig::from_yaml_str("hazelcast: {lite-member: {enabled: maybe}}").unwrap_err();
    assert!(bad.to_string().contains("hazelcast.lite-member.enabled"), "{bad}");
}

#[test]
fn advanced_network_reads_member_client_and_rest_endpoints() {
    let text = "
hazelcast:
  advanced-network:
    enabled: true
    join: {tcp-ip: {enabled: true, member-list: ['127.0.0.1:7001']}}
    member-server-socket-endpoint-config:
      port: {port: 7001, auto-increment: false}
      public-address: 10.0.0.5
    client-server-socket-endpoint-config:
      port: {port: 9001, port-count: 3}
      interfaces: {enabled: true, interfaces: [127.0.0.1]}
      public-address: 'gw.example.com:19001'
    rest-server-socket-endpoint-config:
      port: {port: 8081}";
    let config = load(text).config;
    let network = &config.network;
    assert!(network.advanced);
    assert_eq!((network.port, network.port_auto_increment), (7001, false));
    assert_eq!(network.advertised(7001), ("10.0.0.5".to_owned(), 7001));
    assert_eq!(network.member_list, ["127.0.0.1:7001"]);
    let client = network.client_endpoint.as_ref().expect("a client endpoint");
    assert_eq!((client.port, client.port_count, client.host.as_str()), (9001, 3, "127.0.0.1"));
    assert_eq!(client.ports(), 9001..=9003);
    assert_eq!(client.advertised(9002), ("gw.example.com".to_owned(), 19001));
    assert_eq!(config.metrics.http_port, 8081);
    // Without a client endpoint section, clients share the member port as without it.
    let shared = load("hazelcast: {advanced-network: {enabled: true}}").config.network;
    assert!(shared.advanced && shared.client_endpoint.is_none());
    // Disabled, it is not read.
    let off = "hazelcast: {advanced-network: {enabled: false, client-server-socket-endpoint-config: {port: 9}}}";
    assert!(load(off).config.network.client_endpoint.is_none());
}

#[test]
fn network_and_an_enabled_advanced_network_are_refused_together() {
    let both = "hazelcast: {network: {port: 5701}, advanced-network: {enabled: true}}";
    let error = MemberConfig::from_yaml_str(both).unwrap_err().to_string();
    assert!(error.contains("hazelcast.advanced-network.enabled") && error.contains("Ambiguous"), "{error}");
    let xml = r#"<hazelcast><network><port>5701</port></network>
        <advanced-network enabled="true"/></hazelcast>"#;
    assert!(MemberConfig::from_xml_str(xml).unwrap_err().to_string().contains("Ambiguous"));
    let bad_port = "hazelcast: {advanced-network: {enabled: true, client-server-socket-endpoint-config: {port: 0}}}";
    let error = MemberConfig::from_yaml_str(bad_port).unwrap_err().to_string();
    assert!(error.contains("client-server-socket-endpoint-config.port"), "{error}");
}

#[test]
fn event_journal_is_read_and_bounded() {
    let text =
        "hazelcast: {map: {journal-*: {event-journal: {enabled: true, capacity: 542, time-to-live-seconds: 9}}}}";
    let loaded = load(text);
    let journal = loaded.config.maps.for_map("journal-1").event_journal;
    assert_eq!(journal, crate::EventJournalConfig { enabled: true, capacity: 542, time_to_live_seconds: 9 });
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    assert!(!loaded.config.maps.for_map("other").event_journal.enabled, "off by default");
    let zero = "hazelcast: {map: {m: {event-journal: {enabled: true, capacity: 0}}}}";
    assert_eq!(invalid_key(zero), "hazelcast.map.m.event-journal.capacity");
}
