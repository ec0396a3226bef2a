//! Every YAML sample of the reader's tests, written as Hazelcast writes it in XML, reads to the same
//! configuration and the same unsupported keys; a bad value is refused at the same dotted path.

use crate::yaml::tests::{SECURITY, USER_FILE};
use crate::{ConfigError, LoadedConfig, MemberConfig};

/// `xml` (the body of `<hazelcast>`, plus an optional `<ferrogrid>`) reads exactly as `yaml`.
fn same(yaml: &str, xml: &str) -> LoadedConfig {
    let from_yaml = MemberConfig::from_yaml_str(yaml).unwrap();
    let from_xml = MemberConfig::from_xml_str(&document(xml)).unwrap();
    assert_eq!(from_xml, from_yaml, "{xml}");
    from_xml
}

/// `<hazelcast>` with Hazelcast's namespace declarations around `body`.
fn document(body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<hazelcast xmlns=\"http://www.hazelcast.com/schema/config\"\n    \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n    xsi:schemaLocation=\"http://www.hazelcast.com/schema/config\n    \
         http://www.hazelcast.com/schema/config/hazelcast-config-5.6.xsd\">\n{body}\n</hazelcast>\n"
    )
}

fn invalid_key(result: Result<LoadedConfig, ConfigError>) -> String {
    match result {
        Err(ConfigError::InvalidValue { key, .. }) => key,
        other => panic!("expected InvalidValue, got {other:?}"),
    }
}

/// `yaml` and `xml` are refused naming the same key, which is returned.
fn same_error(yaml: &str, xml: &str) -> String {
    let from_yaml = invalid_key(MemberConfig::from_yaml_str(yaml));
    let from_xml = invalid_key(MemberConfig::from_xml_str(&document(xml)));
    assert_eq!(from_xml, from_yaml, "{xml}");
    from_xml
}

const USER_FILE_XML: &str = r#"
    <cluster-name>production</cluster-name>
    <network>
        <port auto-increment="false" port-count="20">5801</port>
        <interfaces enabled="true">
            <interface>10.10.1.*</interface>
        </interfaces>
        <join>
            <multicast enabled="false"/>
            <tcp-ip enabled="true">
                <member-list>
                    <member>10.10.1.2:5801</member>
                    <member>10.10.1.3:5801, 10.10.1.4</member>
                </member-list>
            </tcp-ip>
        </join>
    </network>
    <map name="default">
        <backup-count>2</backup-count>
    </map>
    <map name="orders">
        <backup-count>0</backup-count>
        <async-backup-count>1</async-backup-count>
        <time-to-live-seconds>3600</time-to-live-seconds>
    </map>
    <map name="sessions*">
        <max-idle-seconds>600</max-idle-seconds>
    </map>
    <properties>
        <property name="hazelcast.partition.count">1021</property>
        <property name="hazelcast.client.max.no.heartbeat.seconds">60</property>
        <property name="hazelcast.client.protocol.max.message.bytes">8192</property>
    </properties>
    <ferrogrid>
        <reactor-threads>4</reactor-threads>
        <reactor-spin-micros>50</reactor-spin-micros>
        <limits>
            <max-connections>500</max-connections>
        </limits>
    </ferrogrid>"#;

#[test]
fn realistic_user_file_reads_the_same_in_xml() {
    let loaded = same(USER_FILE, USER_FILE_XML);
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    assert_eq!(loaded.config.network.member_list, ["10.10.1.2:5801", "10.10.1.3:5801", "10.10.1.4"]);
    assert_eq!(loaded.config.reactor_threads, 4);
}

#[test]
fn tcp_ip_members_written_directly_or_comma_separated() {
    let yaml = "hazelcast: {network: {port: 6000, public-address: 'node1.example.com:6000', \
                join: {tcp-ip: {member-list: [a:1], members: 'b:2, c:3'}}}}";
    let xml = "<network><port>6000</port><public-address>node1.example.com:6000</public-address>\
               <join><tcp-ip><member>a:1</member><members>b:2, c:3</members></tcp-ip></join></network>";
    let loaded = same(yaml, xml);
    assert_eq!(loaded.config.network.member_list, ["a:1", "b:2", "c:3"]);
    let disabled = "<network><join><tcp-ip enabled=\"false\"><member>a</member></tcp-ip></join></network>";
    same("hazelcast: {network: {join: {tcp-ip: {enabled: false, member-list: [a]}}}}", disabled);
}

#[test]
fn tenants_metrics_and_io_read_the_same_in_xml() {
    let yaml = "hazelcast: {metrics: {enabled: false, collection-frequency-seconds: 2}}\n\
                ferrogrid: {fair-scheduling: false, metrics: {http-port: 9900, max-file-bytes: 65536}, \
                io: {initial-placement: first-reactor, packing: {period-millis: 500, saturated-percent: 70}}, \
                tenants: [{name: team-a, username: alice, password: s, weight: 3, over-quota: reject}, \
                {name: team-b, username: bob, password: t}]}";
    let xml = r#"<metrics enabled="false"><collection-frequency-seconds>2</collection-frequency-seconds></metrics>
        <ferrogrid>
            <fair-scheduling>false</fair-scheduling>
            <metrics><http-port>9900</http-port><max-file-bytes>65536</max-file-bytes></metrics>
            <io>
                <initial-placement>first-reactor</initial-placement>
                <packing><period-millis>500</period-millis><saturated-percent>70</saturated-percent></packing>
            </io>
            <tenants>
                <tenant name="team-a" username="alice" password="s" weight="3" over-quota="reject"/>
                <tenant><name>team-b</name><username>bob</username><password>t</password></tenant>
            </tenants>
        </ferrogrid>"#;
    let loaded = same(yaml, xml);
    assert_eq!(loaded.config.tenants.tenants.len(), 2);
    let duplicate = "ferrogrid: {tenants: [{name: a, username: u, password: p}, {name: b, username: u, password: q}]}";
    let duplicate_xml = "<ferrogrid><tenants><tenant name=\"a\" username=\"u\" password=\"p\"/>\
                         <tenant name=\"b\" username=\"u\" password=\"q\"/></tenants></ferrogrid>";
    assert_eq!(same_error(duplicate, duplicate_xml), "ferrogrid.tenants[1].username");
}

#[test]
fn an_empty_metrics_file_turns_it_off_in_both() {
    let loaded = same("ferrogrid: {metrics: {file: ''}}", "<ferrogrid><metrics><file></file></metrics></ferrogrid>");
    assert_eq!(loaded.config.metrics.file, None);
}

#[test]
fn structures_read_the_same_in_xml() {
    let yaml = r#"
hazelcast:
  map:
    employees:
      indexes: [{type: HASH, attributes: [name]}, {attributes: [age, dept]}]
    bounded*:
      per-entry-stats-enabled: true
      in-memory-format: BINARY
      eviction: {size: 1000, max-size-policy: PER_PARTITION, eviction-policy: LFU}
  queue:
    bounded-q-*: {max-size: 3, backup-count: 0, async-backup-count: 1, empty-queue-ttl: 1}
  list:
    l: {max-size: 3, backup-count: 2}
  set:
    s: {max-size: 4}
  multimap:
    list-mm-*: {value-collection-type: LIST, backup-count: 0}
  replicatedmap:
    cache-*: {in-memory-format: BINARY, async-fillup: false, statistics-enabled: false}
  ringbuffer:
    rb-*: {capacity: 5, time-to-live-seconds: 600, backup-count: 0, in-memory-format: OBJECT}
  topic:
    news: {global-ordering-enabled: true, statistics-enabled: false}
  pn-counter:
    two-*: {replica-count: 2, statistics-enabled: false}
  crdt-replication: {replication-period-millis: 250}
  flake-id-generator:
    ids-*:
      prefetch-count: 10
      prefetch-validity-millis: 0
      epoch-start: 1600000000000
      node-id-offset: 10
      bits-sequence: 8
      bits-node-id: 4
      allowed-future-millis: 0
      statistics-enabled: false
ferrogrid: {limits: {max-flake-id-generators: 5}}
"#;
    let xml = r#"
    <map name="employees">
        <indexes>
            <index type="HASH"><attributes><attribute>name</attribute></attributes></index>
            <index><attributes><attribute>age</attribute><attribute>dept</attribute></attributes></index>
        </indexes>
    </map>
    <map name="bounded*">
        <per-entry-stats-enabled>true</per-entry-stats-enabled>
        <in-memory-format>BINARY</in-memory-format>
        <eviction size="1000" max-size-policy="PER_PARTITION" eviction-policy="LFU"/>
    </map>
    <queue name="bounded-q-*">
        <max-size>3</max-size><backup-count>0</backup-count><async-backup-count>1</async-backup-count>
        <empty-queue-ttl>1</empty-queue-ttl>
    </queue>
    <list name="l"><max-size>3</max-size><backup-count>2</backup-count></list>
    <set name="s"><max-size>4</max-size></set>
    <multimap name="list-mm-*"><value-collection-type>LIST</value-collection-type><backup-count>0</backup-count></multimap>
    <replicatedmap name="cache-*">
        <in-memory-format>BINARY</in-memory-format><async-fillup>false</async-fillup>
        <statistics-enabled>false</statistics-enabled>
    </replicatedmap>
    <ringbuffer name="rb-*">
        <capacity>5</capacity><time-to-live-seconds>600</time-to-live-seconds><backup-count>0</backup-count>
        <in-memory-format>OBJECT</in-memory-format>
    </ringbuffer>
    <topic name="news"><global-ordering-enabled>true</global-ordering-enabled><statistics-enabled>false</statistics-enabled></topic>
    <pn-counter name="two-*"><replica-count>2</replica-count><statistics-enabled>false</statistics-enabled></pn-counter>
    <crdt-replication><replication-period-millis>250</replication-period-millis></crdt-replication>
    <flake-id-generator name="ids-*">
        <prefetch-count>10</prefetch-count>
        <prefetch-validity-millis>0</prefetch-validity-millis>
        <epoch-start>1600000000000</epoch-start>
        <node-id-offset>10</node-id-offset>
        <bits-sequence>8</bits-sequence>
        <bits-node-id>4</bits-node-id>
        <allowed-future-millis>0</allowed-future-millis>
        <statistics-enabled>false</statistics-enabled>
    </flake-id-generator>
    <ferrogrid><limits><max-flake-id-generators>5</max-flake-id-generators></limits></ferrogrid>"#;
    let loaded = same(yaml, xml);
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    assert_eq!(loaded.config.maps.for_map("employees").indexes.len(), 2);
    assert_eq!(loaded.config.queues.for_queue("bounded-q-1").capacity(), 3);
    assert_eq!(loaded.config.ringbuffers.for_ringbuffer("rb-1").capacity, 5);
}

#[test]
fn unsupported_keys_are_the_same_in_xml() {
    let yaml = r#"
hazelcast:
  network:
    ssl: {enabled: false, factory-class-name: com.example.Factory}
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
  management-center: {}
ferrogrid: {unknown: 1}
"#;
    let xml = r#"
    <network>
        <ssl enabled="false"><factory-class-name>com.example.Factory</factory-class-name></ssl>
        <port reuse-address="true">5701</port>
    </network>
    <topic name="default">
        <global-ordering-enabled>true</global-ordering-enabled>
        <multi-threading-enabled>true</multi-threading-enabled>
    </topic>
    <ringbuffer name="rb-*"><capacity>5</capacity><ringbuffer-store enabled="false"/></ringbuffer>
    <queue name="default"><max-size>10</max-size><statistics-enabled>true</statistics-enabled></queue>
    <map name="default">
        <backup-count>1</backup-count>
        <eviction size="100"/>
        <merge-policy batch-size="100">PutIfAbsentMergePolicy</merge-policy>
    </map>
    <properties><property name="hazelcast.logging.type">slf4j</property></properties>
    <management-center/>
    <ferrogrid><unknown>1</unknown></ferrogrid>"#;
    let loaded = same(yaml, xml);
    let expected = [
        "ferrogrid.unknown",
        "hazelcast.management-center",
        "hazelcast.network.port.reuse-address",
        "hazelcast.properties.hazelcast.logging.type",
        "hazelcast.queue.default.statistics-enabled",
        "hazelcast.ringbuffer.rb-*.ringbuffer-store",
        "hazelcast.topic.default.multi-threading-enabled",
    ];
    assert_eq!(loaded.unsupported_keys, expected);
}

#[test]
fn security_reads_the_same_in_xml() {
    let xml = r#"
    <security enabled="true">
        <realms>
            <realm name="otherRealm">
                <authentication><simple><user username="other" password="x"/></simple></authentication>
            </realm>
            <realm name="simpleRealm">
                <authentication>
                    <simple>
                        <user username="dev" password="secret"><role>admin</role></user>
                    </simple>
                </authentication>
            </realm>
        </realms>
        <client-authentication realm="simpleRealm"/>
    </security>"#;
    let loaded = same(SECURITY, xml);
    assert!(loaded.config.security.check(Some("dev"), Some("secret")));
    let missing_realm = xml.replace("realm=\"simpleRealm\"", "realm=\"nope\"");
    let missing_realm_yaml = SECURITY.replace("realm: simpleRealm", "realm: nope");
    assert_eq!(same_error(&missing_realm_yaml, &missing_realm), "hazelcast.security.client-authentication.realm");
    let no_password = xml.replace(" password=\"secret\"", "");
    let no_password_yaml = SECURITY.replace("password: secret", "");
    let key = same_error(&no_password_yaml, &no_password);
    assert_eq!(key, "hazelcast.security.realms[1].authentication.simple.users[0].password");
}

#[test]
fn bad_values_name_the_same_key_in_xml() {
    let cases = [
        ("hazelcast: {network: {port: -1}}", "<network><port>-1</port></network>"),
        ("hazelcast: {network: {port: abc}}", "<network><port>abc</port></network>"),
        ("hazelcast: {network: {port: {port: 70000}}}", "<network><port port-count=\"1\">70000</port></network>"),
        ("hazelcast: {network: {port: {auto-increment: maybe}}}", "<network><port auto-increment=\"maybe\"/></network>"),
        ("hazelcast: {network: {port: {port: 65500}}}", "<network><port auto-increment=\"true\">65500</port></network>"),
        (
            "hazelcast: {network: {join: {multicast: {enabled: true}}}}",
            "<network><join><multicast enabled=\"true\"/></join></network>",
        ),
        ("hazelcast: {network: {ssl: {enabled: true}}}", "<network><ssl enabled=\"true\"/></network>"),
        (
            "hazelcast: {network: {interfaces: {enabled: true, interfaces: [eth0]}}}",
            "<network><interfaces enabled=\"true\"><interface>eth0</interface></interfaces></network>",
        ),
        ("hazelcast: {map: {orders: {backup-count: 7}}}", "<map name=\"orders\"><backup-count>7</backup-count></map>"),
        (
            "hazelcast: {map: {orders: {backup-count: 4, async-backup-count: 3}}}",
            "<map name=\"orders\"><backup-count>4</backup-count><async-backup-count>3</async-backup-count></map>",
        ),
        ("hazelcast: {map: {orders: {max-idle-seconds: 1e3}}}", "<map name=\"orders\"><max-idle-seconds>1e3</max-idle-seconds></map>"),
        ("hazelcast: {map: {'a**': {}}}", "<map name=\"a**\"/>"),
        (
            "hazelcast: {map: {m: {eviction: {max-size-policy: FREE_HEAP_SIZE}}}}",
            "<map name=\"m\"><eviction max-size-policy=\"FREE_HEAP_SIZE\"/></map>",
        ),
        (
            "hazelcast: {map: {m: {indexes: [{type: FULLTEXT, attributes: [a]}]}}}",
            "<map name=\"m\"><indexes><index type=\"FULLTEXT\"><attributes><attribute>a</attribute></attributes></index></indexes></map>",
        ),
        ("hazelcast: {queue: {q: {max-size: -1}}}", "<queue name=\"q\"><max-size>-1</max-size></queue>"),
        ("hazelcast: {replicatedmap: {m: {in-memory-format: NATIVE}}}", "<replicatedmap name=\"m\"><in-memory-format>NATIVE</in-memory-format></replicatedmap>"),
        ("hazelcast: {flake-id-generator: {g: {bits-sequence: 63}}}", "<flake-id-generator name=\"g\"><bits-sequence>63</bits-sequence></flake-id-generator>"),
        ("hazelcast: {pn-counter: {c: {replica-count: 0}}}", "<pn-counter name=\"c\"><replica-count>0</replica-count></pn-counter>"),
        (
            "hazelcast: {properties: {hazelcast.partition.count: 0}}",
            "<properties><property name=\"hazelcast.partition.count\">0</property></properties>",
        ),
        ("hazelcast: {cluster-name: ''}", "<cluster-name>   </cluster-name>"),
        ("ferrogrid: {limits: {max-connections: 0}}", "<ferrogrid><limits><max-connections>0</max-connections></limits></ferrogrid>"),
        ("ferrogrid: {reactor-threads: 1025}", "<ferrogrid><reactor-threads>1025</reactor-threads></ferrogrid>"),
        ("ferrogrid: {io: {initial-placement: random}}", "<ferrogrid><io><initial-placement>random</initial-placement></io></ferrogrid>"),
    ];
    for (yaml, xml) in cases {
        same_error(yaml, xml);
    }
}

#[test]
fn malformed_xml_names_the_line_and_column() {
    let cases = [
        ("<hazelcast>\n  <cluster-name>dev</cluster>\n</hazelcast>", 2),
        ("<hazelcast>\n  <map name=\"a\" name=\"b\"/>\n</hazelcast>", 2),
        ("<hazelcast>\n  <cluster-name>dev", 1),
        ("<!DOCTYPE hazelcast [<!ENTITY a \"aaaa\">]>\n<hazelcast/>", 1),
        ("<hazelcast>\n\n  <map name=\"a\"/>\n  <map name=\"a\"/>\n</hazelcast>", 4),
        ("", 1),
    ];
    for (text, line) in cases {
        match MemberConfig::from_xml_str(text) {
            Err(ConfigError::Xml { line: at, message, .. }) => assert_eq!(at, line, "{text}: {message}"),
            other => panic!("expected an XML error for {text:?}, got {other:?}"),
        }
    }
    let deep =
        format!("<hazelcast>{}{}</hazelcast>", "<a>".repeat(crate::MAX_XML_DEPTH), "</a>".repeat(crate::MAX_XML_DEPTH));
    let error = MemberConfig::from_xml_str(&deep).unwrap_err().to_string();
    assert!(error.contains("line 1, column") && error.contains("deeper than 64"), "{error}");
    let shallow = format!("<hazelcast>{}{}</hazelcast>", "<a>".repeat(10), "</a>".repeat(10));
    assert_eq!(MemberConfig::from_xml_str(&shallow).unwrap().unsupported_keys, ["hazelcast.a"]);
}

#[test]
fn the_syntax_comes_from_the_extension_then_the_content() {
    use crate::Syntax;
    use std::path::Path;
    assert_eq!(Syntax::of(Path::new("a.XML"), "x: 1"), Syntax::Xml);
    assert_eq!(Syntax::of(Path::new("a.yml"), "<x/>"), Syntax::Yaml);
    assert_eq!(Syntax::of(Path::new("member.conf"), "\u{feff}\n  <hazelcast/>"), Syntax::Xml);
    assert_eq!(Syntax::of(Path::new("member"), "hazelcast: {}"), Syntax::Yaml);
}

#[test]
fn the_example_files_read_the_same() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let yaml = MemberConfig::from_file(&examples.join("hazelcast.yaml")).unwrap();
    let xml = MemberConfig::from_file(&examples.join("hazelcast.xml")).unwrap();
    assert_eq!(xml, yaml);
    assert!(xml.unsupported_keys.is_empty(), "{:?}", xml.unsupported_keys);
}

const TLS_PKCS12: &str = r#"
hazelcast:
  network:
    ssl:
      enabled: true
      factory-class-name: com.hazelcast.nio.ssl.BasicSSLContextFactory
      properties:
        protocol: TLSv1.3
        mutualAuthentication: REQUIRED
        keyStore: /opt/member.p12
        keyStorePassword: secret.123
        keyStoreType: PKCS12
        trustStore: /opt/trust.p12
        trustStorePassword: changeit
        trustStoreType: PKCS12
        ciphersuites: TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384
"#;

const TLS_PKCS12_XML: &str = r#"
    <network>
        <ssl enabled="true">
            <factory-class-name>com.hazelcast.nio.ssl.BasicSSLContextFactory</factory-class-name>
            <properties>
                <property name="protocol">TLSv1.3</property>
                <property name="mutualAuthentication">REQUIRED</property>
                <property name="keyStore">/opt/member.p12</property>
                <property name="keyStorePassword">secret.123</property>
                <property name="keyStoreType">PKCS12</property>
                <property name="trustStore">/opt/trust.p12</property>
                <property name="trustStorePassword">changeit</property>
                <property name="trustStoreType">PKCS12</property>
                <property name="ciphersuites">TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384</property>
            </properties>
        </ssl>
    </network>"#;

#[test]
fn tls_reads_the_same_in_xml() {
    use crate::{KeySource, MutualAuthentication, TlsProtocol, TrustSource};
    let tls = same(TLS_PKCS12, TLS_PKCS12_XML).config.network.tls;
    assert!(tls.enabled);
    assert_eq!(tls.key, Some(KeySource::KeyStore { path: "/opt/member.p12".into(), password: "secret.123".into() }));
    assert_eq!(tls.trust, Some(TrustSource::TrustStore { path: "/opt/trust.p12".into(), password: "changeit".into() }));
    assert_eq!(tls.protocol, TlsProtocol::Tls13);
    assert_eq!(tls.mutual_authentication, MutualAuthentication::Required);
    assert_eq!(tls.cipher_suites, ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"]);
    let pem =
        "hazelcast: {network: {ssl: {enabled: true, factory-class-name: com.hazelcast.nio.ssl.OpenSSLEngineFactory, \
               properties: {keyFile: k.pem, keyCertChainFile: c.pem, trustCertCollectionFile: ca.pem}}}}";
    let tls = MemberConfig::from_yaml_str(pem).unwrap().config.network.tls;
    assert_eq!(tls.key, Some(KeySource::Pem { key_file: "k.pem".into(), cert_chain_file: "c.pem".into() }));
    assert_eq!(tls.trust, Some(TrustSource::Pem { path: "ca.pem".into() }));
    assert_eq!(tls.protocol, TlsProtocol::Tls);
    let off = MemberConfig::from_yaml_str("hazelcast: {network: {ssl: {enabled: false}}}").unwrap();
    assert!(!off.config.network.tls.enabled);
}

#[test]
fn tls_mistakes_name_their_key_in_both_syntaxes() {
    let properties = "hazelcast.network.ssl.properties";
    let cases = [
        (TLS_PKCS12.replace("TLSv1.3", "TLSv1.1"), TLS_PKCS12_XML.replace("TLSv1.3", "TLSv1.1"), "protocol"),
        (
            TLS_PKCS12.replace("REQUIRED", "SOMETIMES"),
            TLS_PKCS12_XML.replace("REQUIRED", "SOMETIMES"),
            "mutualAuthentication",
        ),
        (
            TLS_PKCS12.replace("keyStoreType: PKCS12", "keyStoreType: JKS"),
            TLS_PKCS12_XML.replace("keyStoreType\">PKCS12", "keyStoreType\">JKS"),
            "keyStoreType",
        ),
        (
            TLS_PKCS12.replace("keyStore: /opt/member.p12", "keyFile: k.pem"),
            TLS_PKCS12_XML.replace("\"keyStore\">/opt/member.p12", "\"keyFile\">k.pem"),
            "keyFile",
        ),
    ];
    for (yaml, xml, key) in cases {
        assert_eq!(same_error(&yaml, &xml), format!("{properties}.{key}"), "{yaml}");
    }
    let no_key = TLS_PKCS12.replace("keyStore: /opt/member.p12", "");
    let no_key_xml = TLS_PKCS12_XML.replace("<property name=\"keyStore\">/opt/member.p12</property>", "");
    assert_eq!(same_error(&no_key, &no_key_xml), properties);
    let no_trust = TLS_PKCS12.replace("trustStore: /opt/trust.p12", "");
    let no_trust_xml = TLS_PKCS12_XML.replace("<property name=\"trustStore\">/opt/trust.p12</property>", "");
    assert_eq!(same_error(&no_trust, &no_trust_xml), format!("{properties}.mutualAuthentication"));
    let factory = "hazelcast: {network: {ssl: {enabled: true, factory-class-name: com.example.Factory}}}";
    let factory_xml =
        "<network><ssl enabled=\"true\"><factory-class-name>com.example.Factory</factory-class-name></ssl></network>";
    assert_eq!(same_error(factory, factory_xml), "hazelcast.network.ssl.factory-class-name");
}

#[test]
fn advanced_network_reads_the_same_in_xml() {
    // The official Python client's AdvancedNetworkConfigTest member configuration.
    let yaml = "hazelcast: {advanced-network: {enabled: true, \
                member-server-socket-endpoint-config: {port: 5701}, \
                client-server-socket-endpoint-config: {port: 5702}}}";
    let xml = r#"<advanced-network enabled="true">
        <member-server-socket-endpoint-config><port>5701</port></member-server-socket-endpoint-config>
        <client-server-socket-endpoint-config><port>5702</port></client-server-socket-endpoint-config>
        </advanced-network>"#;
    let network = same(yaml, xml).config.network;
    assert!(network.advanced);
    assert_eq!(network.port, 5701);
    assert_eq!(network.client_endpoint.map(|client| client.port), Some(5702));
}

#[test]
fn merge_policies_read_the_same_from_both_syntaxes() {
    let yaml = "hazelcast:\n  map:\n    a: {merge-policy: {class-name: com.hazelcast.spi.merge.PassThroughMergePolicy, batch-size: 7}}\n    \
                b: {merge-policy: {class-name: DiscardMergePolicy}}\n";
    let xml = r#"<map name="a"><merge-policy batch-size="7">com.hazelcast.spi.merge.PassThroughMergePolicy</merge-policy></map>
        <map name="b"><merge-policy>DiscardMergePolicy</merge-policy></map>"#;
    let loaded = same(yaml, xml);
    let (a, b) = (loaded.config.maps.for_map("a").merge_policy, loaded.config.maps.for_map("b").merge_policy);
    assert_eq!((a.policy, a.batch_size), (crate::MergePolicy::PassThrough, 7));
    assert_eq!((b.policy, b.batch_size), (crate::MergePolicy::Discard, 100));
    assert_eq!(loaded.config.maps.for_map("other").merge_policy, crate::MergePolicyConfig::DEFAULT);
    let unknown = "hazelcast: {map: {a: {merge-policy: {class-name: com.example.MyPolicy}}}}";
    let unknown_xml = r#"<map name="a"><merge-policy>com.example.MyPolicy</merge-policy></map>"#;
    assert_eq!(same_error(unknown, unknown_xml), "hazelcast.map.a.merge-policy.class-name");
    let zero = "hazelcast: {map: {a: {merge-policy: {batch-size: 0}}}}";
    let zero_xml = r#"<map name="a"><merge-policy batch-size="0">PutIfAbsentMergePolicy</merge-policy></map>"#;
    assert_eq!(same_error(zero, zero_xml), "hazelcast.map.a.merge-policy.batch-size");
}

#[test]
fn queues_lists_sets_and_ringbuffers_read_their_merge_policies_from_both_syntaxes() {
    let yaml = "hazelcast:\n  queue: {q: {merge-policy: {class-name: PassThroughMergePolicy, batch-size: 7}}}\n  \
                list: {l: {merge-policy: {class-name: DiscardMergePolicy}}}\n  \
                set: {s: {merge-policy: {class-name: com.hazelcast.spi.merge.PassThroughMergePolicy}}}\n  \
                ringbuffer: {r: {capacity: 4, merge-policy: {class-name: DiscardMergePolicy}}}\n";
    let xml = r#"<queue name="q"><merge-policy batch-size="7">PassThroughMergePolicy</merge-policy></queue>
        <list name="l"><merge-policy>DiscardMergePolicy</merge-policy></list>
        <set name="s"><merge-policy>com.hazelcast.spi.merge.PassThroughMergePolicy</merge-policy></set>
        <ringbuffer name="r"><capacity>4</capacity><merge-policy>DiscardMergePolicy</merge-policy></ringbuffer>"#;
    let config = same(yaml, xml).config;
    let queue = config.queues.for_queue("q").merge_policy;
    assert_eq!((queue.policy, queue.batch_size), (crate::MergePolicy::PassThrough, 7));
    assert_eq!(config.lists.for_collection("l").merge_policy.policy, crate::MergePolicy::Discard);
    assert_eq!(config.sets.for_collection("s").merge_policy.policy, crate::MergePolicy::PassThrough);
    assert_eq!(config.ringbuffers.for_ringbuffer("r").merge_policy.policy, crate::MergePolicy::Discard);
    assert_eq!(config.queues.for_queue("other").merge_policy, crate::MergePolicyConfig::DEFAULT);
    // Hazelcast refuses the policies that compare statistics these structures do not keep.
    for (section, policy) in
        [("queue", "LatestUpdateMergePolicy"), ("list", "HigherHitsMergePolicy"), ("set", "ExpirationTimeMergePolicy")]
    {
        let yaml = format!("hazelcast: {{{section}: {{a: {{merge-policy: {{class-name: {policy}}}}}}}}}");
        let xml = format!(r#"<{section} name="a"><merge-policy>{policy}</merge-policy></{section}>"#);
        assert_eq!(same_error(&yaml, &xml), format!("hazelcast.{section}.a.merge-policy.class-name"));
    }
    let yaml = "hazelcast: {ringbuffer: {a: {merge-policy: {class-name: LatestAccessMergePolicy}}}}";
    let xml = r#"<ringbuffer name="a"><merge-policy>LatestAccessMergePolicy</merge-policy></ringbuffer>"#;
    assert_eq!(same_error(yaml, xml), "hazelcast.ringbuffer.a.merge-policy.class-name");
}

#[test]
fn multimap_and_estimator_merge_policies_read_the_same_from_both_syntaxes() {
    let yaml = "hazelcast:\n  multimap:\n    a: {merge-policy: {class-name: PassThroughMergePolicy, batch-size: 7}}\n  \
                cardinality-estimator:\n    e: {merge-policy: {class-name: com.hazelcast.spi.merge.DiscardMergePolicy}}\n";
    let xml = r#"<multimap name="a"><merge-policy batch-size="7">PassThroughMergePolicy</merge-policy></multimap>
        <cardinality-estimator name="e"><merge-policy>com.hazelcast.spi.merge.DiscardMergePolicy</merge-policy></cardinality-estimator>"#;
    let loaded = same(yaml, xml);
    let multimap = loaded.config.multimaps.for_multimap("a").merge_policy;
    assert_eq!((multimap.policy, multimap.batch_size), (crate::MergePolicy::PassThrough, 7));
    assert_eq!(loaded.config.multimaps.for_multimap("other").merge_policy, crate::MergePolicyConfig::DEFAULT);
    let estimators = &loaded.config.cardinality_estimators;
    assert_eq!(estimators.for_cardinality_estimator("e").merge_policy.policy, crate::MergePolicy::Discard);
    let default = estimators.for_cardinality_estimator("other").merge_policy.policy;
    assert_eq!(default, crate::MergePolicy::HyperLogLog, "Hazelcast's default for estimators");
}

#[test]
fn merge_policies_a_structure_cannot_merge_by_are_refused_as_hazelcast_refuses_them() {
    // A multimap has hits, access and update times, but no expiration time.
    let accepted = "hazelcast: {multimap: {a: {merge-policy: {class-name: HigherHitsMergePolicy}}}}";
    assert!(MemberConfig::from_yaml_str(accepted).is_ok());
    let expiry = "hazelcast: {multimap: {a: {merge-policy: {class-name: ExpirationTimeMergePolicy}}}}";
    let expiry_xml = r#"<multimap name="a"><merge-policy>ExpirationTimeMergePolicy</merge-policy></multimap>"#;
    assert_eq!(same_error(expiry, expiry_xml), "hazelcast.multimap.a.merge-policy.class-name");
    // An estimator has no statistics at all.
    let hits = "hazelcast: {cardinality-estimator: {e: {merge-policy: {class-name: LatestUpdateMergePolicy}}}}";
    let hits_xml = r#"<cardinality-estimator name="e"><merge-policy>LatestUpdateMergePolicy</merge-policy></cardinality-estimator>"#;
    assert_eq!(same_error(hits, hits_xml), "hazelcast.cardinality-estimator.e.merge-policy.class-name");
}

#[test]
fn event_journal_reads_as_in_yaml() {
    let yaml =
        "hazelcast: {map: {journal-*: {event-journal: {enabled: true, capacity: 542, time-to-live-seconds: 9}}}}";
    let xml = r#"<map name="journal-*"><event-journal enabled="true"><capacity>542</capacity>
        <time-to-live-seconds>9</time-to-live-seconds></event-journal></map>"#;
    let loaded = same(yaml, xml);
    assert!(loaded.config.maps.for_map("journal-1").event_journal.enabled);
}

#[test]
fn persistence_reads_the_same_in_xml_and_bad_values_are_refused_alike() {
    let yaml = "hazelcast:\n  persistence:\n    enabled: false\n    base-dir: /mnt/persistence\n    \
                backup-dir: /mnt/hot-backup\n    parallelism: 4\n    validation-timeout-seconds: 60\n    \
                data-load-timeout-seconds: 600\n    cluster-data-recovery-policy: PARTIAL_RECOVERY_MOST_COMPLETE\n    \
                auto-remove-stale-data: false\n    rebalance-delay-seconds: 5\n  \
                map:\n    orders:\n      data-persistence: {enabled: true, fsync: true}\n\
                ferrogrid:\n  persistence: {fsync-policy: always, compact-log-bytes: 1048576}\n";
    let xml = r#"<persistence enabled="false">
            <base-dir>/mnt/persistence</base-dir>
            <backup-dir>/mnt/hot-backup</backup-dir>
            <parallelism>4</parallelism>
            <validation-timeout-seconds>60</validation-timeout-seconds>
            <data-load-timeout-seconds>600</data-load-timeout-seconds>
            <cluster-data-recovery-policy>PARTIAL_RECOVERY_MOST_COMPLETE</cluster-data-recovery-policy>
            <auto-remove-stale-data>false</auto-remove-stale-data>
            <rebalance-delay-seconds>5</rebalance-delay-seconds>
        </persistence>
        <map name="orders"><data-persistence enabled="true"><fsync>true</fsync></data-persistence></map>
        <ferrogrid><persistence><fsync-policy>always</fsync-policy>
            <compact-log-bytes>1048576</compact-log-bytes></persistence></ferrogrid>"#;
    let loaded = same(yaml, xml);
    assert!(loaded.unsupported_keys.is_empty(), "{:?}", loaded.unsupported_keys);
    let persistence = &loaded.config.persistence;
    assert_eq!(persistence.base_dir, "/mnt/persistence");
    assert_eq!(persistence.backup_dir.as_deref(), Some("/mnt/hot-backup"));
    assert_eq!((persistence.parallelism, persistence.validation_timeout_seconds), (4, 60));
    assert_eq!((persistence.data_load_timeout_seconds, persistence.rebalance_delay_seconds), (600, 5));
    assert_eq!(persistence.cluster_data_recovery_policy, crate::RecoveryPolicy::PartialRecoveryMostComplete);
    assert!(!persistence.auto_remove_stale_data);
    assert_eq!(persistence.fsync_policy, crate::FsyncPolicy::Always);
    assert_eq!(persistence.compact_log_bytes, 1 << 20);
    let orders = loaded.config.maps.for_map("orders").data_persistence;
    assert_eq!(orders, crate::DataPersistenceConfig { enabled: true, fsync: true });
    assert_eq!(loaded.config.maps.for_map("other").data_persistence, crate::DataPersistenceConfig::DEFAULT);

    let enabled = "hazelcast: {persistence: {enabled: true, base-dir: /tmp/p}}";
    let enabled_xml = "<persistence enabled=\"true\"><base-dir>/tmp/p</base-dir></persistence>";
    assert!(same(enabled, enabled_xml).config.persistence.enabled);
    let compact = "ferrogrid: {persistence: {compact-log-bytes: 10}}";
    let compact_xml = "<ferrogrid><persistence><compact-log-bytes>10</compact-log-bytes></persistence></ferrogrid>";
    assert_eq!(same_error(compact, compact_xml), "ferrogrid.persistence.compact-log-bytes");
    let policy = "hazelcast: {persistence: {cluster-data-recovery-policy: SOMETIMES}}";
    let policy_xml =
        "<persistence><cluster-data-recovery-policy>SOMETIMES</cluster-data-recovery-policy></persistence>";
    assert_eq!(same_error(policy, policy_xml), "hazelcast.persistence.cluster-data-recovery-policy");
    let parallelism = "hazelcast: {persistence: {parallelism: 0}}";
    let parallelism_xml = "<persistence><parallelism>0</parallelism></persistence>";
    assert_eq!(same_error(parallelism, parallelism_xml), "hazelcast.persistence.parallelism");
    let fsync = "ferrogrid: {persistence: {fsync-policy: sometimes}}";
    let fsync_xml = "<ferrogrid><persistence><fsync-policy>sometimes</fsync-policy></persistence></ferrogrid>";
    assert_eq!(same_error(fsync, fsync_xml), "ferrogrid.persistence.fsync-policy");
}
