//! Hazelcast's override names, applied onto YAML and XML files, and where a configuration is
//! looked for.

use std::path::PathBuf;

use crate::{locate, ConfigError, ConfigOrigin, Environment, LoadedConfig, MemberConfig, Overrides, Syntax};

fn pairs(entries: &[(&str, &str)]) -> Vec<(String, String)> {
    entries.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
}

fn with_overrides(
    text: &str,
    syntax: Syntax,
    variables: &[(&str, &str)],
    properties: &[(&str, &str)],
) -> Result<LoadedConfig, ConfigError> {
    let overrides = Overrides::new(pairs(variables), pairs(properties))?;
    MemberConfig::from_str_with(text, syntax, &overrides)
}

fn from_env(text: &str, syntax: Syntax, variables: &[(&str, &str)]) -> LoadedConfig {
    with_overrides(text, syntax, variables, &[]).unwrap()
}

const YAML: &str = "hazelcast:\n  cluster-name: file\n  network:\n    port: {port: 5801, auto-increment: false}\n  \
                    map:\n    orders: {backup-count: 2, time-to-live-seconds: 60}\n";
const XML: &str = "<hazelcast><cluster-name>file</cluster-name><network><port auto-increment=\"false\">5801</port></network>\
                   <map name=\"orders\"><backup-count>2</backup-count><time-to-live-seconds>60</time-to-live-seconds></map></hazelcast>";

#[test]
fn each_environment_variable_sets_its_field_in_yaml_xml_and_no_file() {
    type Check = fn(&MemberConfig) -> String;
    let table: [(&str, &str, Check, &str); 11] = [
        ("HZ_CLUSTERNAME", "prod", |c| c.cluster_name.clone(), "prod"),
        ("HZ_NETWORK_PORT_PORT", "6000", |c| c.network.port.to_string(), "6000"),
        ("HZ_NETWORK_PORT_AUTOINCREMENT", "true", |c| c.network.port_auto_increment.to_string(), "true"),
        ("HZ_NETWORK_PORT_PORTCOUNT", "5", |c| c.network.port_count.to_string(), "5"),
        ("HZ_MAP_ORDERS_BACKUPCOUNT", "0", |c| c.maps.for_map("orders").backup_count.to_string(), "0"),
        ("HZ_MAP_CACHE_TIMETOLIVESECONDS", "9", |c| c.maps.for_map("cache").time_to_live_seconds.to_string(), "9"),
        ("HZ_QUEUE_JOBS_MAXSIZE", "3", |c| c.queues.for_queue("jobs").capacity().to_string(), "3"),
        (
            "HZ_NETWORK_JOIN_TCPIP_MEMBERS",
            "127.0.0.1:5702,127.0.0.1:5703",
            |c| c.network.member_list.join(" "),
            "127.0.0.1:5702 127.0.0.1:5703",
        ),
        ("HZ_METRICS_COLLECTIONFREQUENCYSECONDS", "7", |c| c.metrics.collection_frequency_seconds.to_string(), "7"),
        // A container's usual settings: a lite member, the address the host publishes.
        ("HZ_LITEMEMBER_ENABLED", "true", |c| c.lite_member.to_string(), "true"),
        (
            "HZ_NETWORK_PUBLICADDRESS",
            "203.0.113.9:31701",
            |c| format!("{:?}", c.network.advertised(5701)),
            "(\"203.0.113.9\", 31701)",
        ),
    ];
    for (variable, value, field, expected) in table {
        for (text, syntax) in [(YAML, Syntax::Yaml), (XML, Syntax::Xml), ("", Syntax::Yaml)] {
            let loaded = from_env(text, syntax, &[(variable, value)]);
            assert_eq!(field(&loaded.config), expected, "{variable} on {text:?}");
            assert!(loaded.unsupported_keys.is_empty(), "{variable}: {:?}", loaded.unsupported_keys);
            assert_eq!(loaded.overrides.len(), 1);
            assert_eq!(loaded.overrides[0].source, format!("environment variable {variable}"));
        }
    }
}

#[test]
fn an_override_keeps_the_rest_of_its_block() {
    let loaded = from_env(XML, Syntax::Xml, &[("HZ_MAP_ORDERS_BACKUPCOUNT", "0"), ("HZ_NETWORK_PORT_PORT", "6000")]);
    let orders = loaded.config.maps.for_map("orders");
    assert_eq!((orders.backup_count, orders.time_to_live_seconds), (0, 60));
    assert_eq!((loaded.config.network.port, loaded.config.network.port_auto_increment), (6000, false));
    assert_eq!(loaded.config.cluster_name, "file");
    let scalar_port =
        from_env("hazelcast: {network: {port: 5801}}", Syntax::Yaml, &[("HZ_NETWORK_PORT_PORTCOUNT", "3")]);
    assert_eq!((scalar_port.config.network.port, scalar_port.config.network.port_count), (5801, 3));
}

#[test]
fn bad_override_values_are_refused_at_the_usual_path() {
    for (text, syntax) in [(YAML, Syntax::Yaml), (XML, Syntax::Xml), ("", Syntax::Yaml)] {
        let cases = [
            ("HZ_MAP_ORDERS_BACKUPCOUNT", "seven", "hazelcast.map.orders.backup-count"),
            ("HZ_NETWORK_PORT_PORT", "70000", "hazelcast.network.port.port"),
            ("HZ_NETWORK_JOIN_MULTICAST_ENABLED", "true", "hazelcast.network.join.multicast.enabled"),
            ("HZ_NETWORK_JOIN_TCPIP_ENABLED", "maybe", "hazelcast.network.join.tcp-ip.enabled"),
            ("HZ_CLUSTERNAME", "", "hazelcast.cluster-name"),
        ];
        for (variable, value, key) in cases {
            match with_overrides(text, syntax, &[(variable, value)], &[]) {
                Err(ConfigError::InvalidValue { key: at, .. }) => assert_eq!(at, key, "{variable}={value}"),
                other => panic!("{variable}={value}: expected InvalidValue, got {other:?}"),
            }
        }
    }
}

#[test]
fn names_follow_hazelcasts_rules() {
    let unknown = from_env(YAML, Syntax::Yaml, &[("HZ_MAP_ORDERS_WANREPLICATIONREF_X", "X"), ("HZ_HOME", "/opt/hz")]);
    assert_eq!(unknown.unsupported_keys, ["hazelcast.map.orders.wanreplicationref"], "HZ_HOME is no override");
    let merge = from_env(YAML, Syntax::Yaml, &[("HZ_MAP_ORDERS_MERGEPOLICY_CLASSNAME", "PassThroughMergePolicy")]);
    assert_eq!(merge.config.maps.for_map("orders").merge_policy.policy, crate::MergePolicy::PassThrough);
    let ignored =
        from_env(YAML, Syntax::Yaml, &[("HZ_LICENSE_KEY", "k"), ("FERROGRID_LOG", "debug"), ("hz_clustername", "x")]);
    assert!(ignored.overrides.is_empty());
    let properties =
        with_overrides(XML, Syntax::Xml, &[], &[("hz.cluster-name", "p"), ("hz.map.orders.backup-count", "3")]);
    let properties = properties.unwrap();
    assert_eq!(properties.config.cluster_name, "p");
    assert_eq!(properties.config.maps.for_map("orders").backup_count, 3);
    assert_eq!(properties.overrides[0].source, "system property hz.cluster-name");
    let mixed_case = with_overrides("", Syntax::Yaml, &[], &[("hz.Map.Orders.BackupCount", "0")]).unwrap();
    assert_eq!(mixed_case.config.maps.for_map("orders").backup_count, 0, "names are lower-cased, as in Hazelcast");
}

#[test]
fn environment_and_system_properties_may_not_name_the_same_key() {
    let conflict = with_overrides("", Syntax::Yaml, &[("HZ_CLUSTERNAME", "a")], &[("hz.cluster-name", "b")]);
    assert!(matches!(conflict, Err(ConfigError::InvalidValue { key, .. }) if key == "hazelcast.cluster-name"));
    let both =
        with_overrides("", Syntax::Yaml, &[("HZ_CLUSTERNAME", "a")], &[("hz.network.port.port", "6000")]).unwrap();
    assert_eq!((both.config.cluster_name.as_str(), both.config.network.port), ("a", 6000));
    let order: Vec<&str> = both.overrides.iter().map(|applied| applied.source.as_str()).collect();
    assert_eq!(order, ["environment variable HZ_CLUSTERNAME", "system property hz.network.port.port"]);
}

#[test]
fn security_values_are_not_shown() {
    let text =
        "hazelcast: {security: {realms: [{name: r, authentication: {simple: {users: [{username: u, password: p}]}}}], \
                client-authentication: {realm: r}}}";
    let loaded = from_env(text, Syntax::Yaml, &[("HZ_SECURITY_ENABLED", "true"), ("HZ_CLUSTERNAME", "c")]);
    assert!(loaded.config.security.enabled);
    let shown: Vec<(&str, &str)> = loaded.overrides.iter().map(|o| (o.key.as_str(), o.shown_value.as_str())).collect();
    assert_eq!(shown, [("hazelcast.clustername", "c"), ("hazelcast.security.enabled", "****")]);
}

/// A fresh directory under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("ferrogrid-locate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    directory
}

#[test]
fn the_configuration_is_looked_for_in_hazelcasts_order() {
    let directory = scratch("order");
    let environment = |variables: &[(&str, &str)], properties: &[(&str, &str)]| Environment {
        variables: pairs(variables),
        system_properties: pairs(properties),
        working_directory: directory.clone(),
    };
    let empty = environment(&[], &[]);
    assert_eq!(locate(None, &empty).unwrap(), ConfigOrigin::Defaults);
    std::fs::write(directory.join("hazelcast.yml"), "hazelcast: {cluster-name: yml}").unwrap();
    assert_eq!(locate(None, &empty).unwrap(), ConfigOrigin::WorkingDirectory(directory.join("hazelcast.yml")));
    std::fs::write(directory.join("hazelcast.yaml"), "hazelcast: {cluster-name: yaml}").unwrap();
    assert_eq!(locate(None, &empty).unwrap(), ConfigOrigin::WorkingDirectory(directory.join("hazelcast.yaml")));
    std::fs::write(directory.join("hazelcast.xml"), "<hazelcast><cluster-name>xml</cluster-name></hazelcast>").unwrap();
    std::fs::write(directory.join("other.xml"), "<hazelcast><cluster-name>other</cluster-name></hazelcast>").unwrap();
    std::fs::write(directory.join("named.yaml"), "hazelcast: {cluster-name: named}").unwrap();
    let name = |variables: &[(&str, &str)], properties: &[(&str, &str)], command_line: Option<&str>| {
        let command_line = command_line.map(|file| directory.join(file));
        let (_, loaded) = MemberConfig::load(command_line.as_deref(), &environment(variables, properties)).unwrap();
        loaded.config.cluster_name
    };
    assert_eq!(name(&[], &[], None), "xml");
    assert_eq!(name(&[("HAZELCAST_CONFIG", "named.yaml")], &[], None), "named");
    let property = [("hazelcast.config", "other.xml")];
    assert_eq!(name(&[("HAZELCAST_CONFIG", "named.yaml")], &property, None), "other");
    let later = [("hazelcast.config", "named.yaml"), ("hazelcast.config", "other.xml")];
    assert_eq!(name(&[], &later, None), "other", "the last -D wins");
    assert_eq!(name(&[("HAZELCAST_CONFIG", "named.yaml")], &property, Some("hazelcast.yml")), "yml");
    assert_eq!(name(&[("HZ_CLUSTERNAME", "env")], &[], None), "env", "overrides apply to the file found");
    let missing = locate(None, &environment(&[("HAZELCAST_CONFIG", "none.xml")], &[]));
    assert!(matches!(missing, Err(ConfigError::InvalidValue { key, .. }) if key == "HAZELCAST_CONFIG"));
    let suffix = locate(None, &environment(&[], &[("hazelcast.config", "hazelcast.conf")]));
    assert!(matches!(suffix, Err(ConfigError::InvalidValue { key, .. }) if key == "hazelcast.config"));
    std::fs::write(directory.join("broken.xml"), "<hazelcast>\n<map name=\"a\">\n</hazelcast>").unwrap();
    let broken = MemberConfig::load(Some(&directory.join("broken.xml")), &empty).unwrap_err().to_string();
    assert!(broken.contains("broken.xml") && broken.contains("line 3"), "{broken}");
    std::fs::remove_dir_all(&directory).unwrap();
}
