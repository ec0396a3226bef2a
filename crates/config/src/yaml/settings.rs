//! The member-wide sections of the document: `network`, `security`, `properties` and
//! ferrogrid's own `limits`.

use super::values::{boolean, interface_host, public_address, signed, strings, text, unsigned};
use super::{Result, Section};
use crate::error::invalid;
use crate::network::Endpoint;
use crate::{
    KeySource, MemberConfig, MutualAuthentication, NetworkConfig, OverQuota, SecurityConfig, TenantConfig, TlsConfig,
    TlsProtocol, TrustSource, User,
};

pub(super) fn read_properties(mut properties: Section, config: &mut MemberConfig) -> Result<()> {
    let partition_count = &mut config.partition_count;
    properties.set("hazelcast.partition.count", partition_count, unsigned)?;
    let unauthenticated = &mut config.limits.max_unauthenticated_message_bytes;
    properties.set("hazelcast.client.protocol.max.message.bytes", unauthenticated, unsigned)?;
    let balancer = &mut config.io.balancer_interval_seconds;
    properties.set("hazelcast.io.balancer.interval.seconds", balancer, signed)?;
    let cluster = &mut config.cluster;
    read_seconds(&mut properties, "hazelcast.heartbeat.interval.seconds", &mut cluster.heartbeat_interval_ms)?;
    read_seconds(&mut properties, "hazelcast.max.no.heartbeat.seconds", &mut cluster.max_no_heartbeat_ms)?;
    read_seconds(&mut properties, "hazelcast.wait.seconds.before.join", &mut cluster.join_wait_ms)?;
    read_seconds(&mut properties, "hazelcast.merge.first.run.delay.seconds", &mut cluster.merge_first_run_delay_ms)?;
    read_seconds(&mut properties, "hazelcast.merge.next.run.delay.seconds", &mut cluster.merge_next_run_delay_ms)?;
    let migrations = &mut cluster.max_parallel_migrations;
    properties.set("hazelcast.partition.max.parallel.migrations", migrations, unsigned)?;
    properties.set("hazelcast.operation.backup.timeout.millis", &mut cluster.backup_timeout_ms, unsigned)?;
    properties.set("hazelcast.query.result.size.limit", &mut cluster.query_result_size_limit, signed)?;
    let bind_any = properties.read("hazelcast.socket.bind.any", boolean)?.unwrap_or(true);
    let client_bind_any = properties.read("hazelcast.socket.client.bind.any", boolean)?.unwrap_or(bind_any);
    let client_bind = properties.read("hazelcast.socket.client.bind", boolean)?.unwrap_or(true);
    cluster.bind_outgoing_links = client_bind && !client_bind_any;
    let heartbeat_key = "hazelcast.client.max.no.heartbeat.seconds";
    if let Some((path, value)) = properties.take(heartbeat_key) {
        let seconds: u64 = unsigned(value, &path)?;
        let too_large = || invalid(&path, format!("{seconds} seconds is too large"));
        config.client_heartbeat_timeout_ms = seconds.checked_mul(1000).ok_or_else(too_large)?;
    }
    Ok(())
}

/// A property in whole seconds, kept in milliseconds.
fn read_seconds(properties: &mut Section, key: &str, target_ms: &mut u64) -> Result<()> {
    if let Some((path, value)) = properties.take(key) {
        let seconds: u64 = unsigned(value, &path)?;
        *target_ms =
            seconds.checked_mul(1000).ok_or_else(|| invalid(&path, format!("{seconds} seconds is too large")))?;
    }
    Ok(())
}

pub(super) fn read_network(mut section: Section, network: &mut NetworkConfig) -> Result<()> {
    let mut endpoint = network.endpoint();
    read_endpoint(&mut section, &mut endpoint)?;
    network.set_endpoint(endpoint);
    if let Some(ssl) = section.section("ssl")? {
        read_ssl(ssl, &mut network.tls)?;
    }
    read_join(&mut section, network)
}

/// `advanced-network` (enabled): the member endpoint fills the network settings, the client
/// endpoint is a listener of its own, the REST endpoint's port is the metrics endpoint's.
/// `network_present`: the document has a `network` section, which Hazelcast refuses beside it.
pub(super) fn read_advanced_network(
    mut section: Section,
    network: &mut NetworkConfig,
    metrics_http_port: &mut u16,
    network_present: bool,
) -> Result<()> {
    if section.read("enabled", boolean)? != Some(true) {
        return Ok(());
    }
    if network_present {
        let message = "Ambiguous configuration: cannot include both network and an enabled advanced-network; \
                       configure the network in one of them";
        return Err(invalid(section.child_path("enabled"), message));
    }
    network.advanced = true;
    if let Some(mut member) = section.section("member-server-socket-endpoint-config")? {
        let mut endpoint = network.endpoint();
        read_endpoint(&mut member, &mut endpoint)?;
        network.set_endpoint(endpoint);
        if let Some(ssl) = member.section("ssl")? {
            read_ssl(ssl, &mut network.tls)?;
        }
    }
    if let Some(mut client) = section.section("client-server-socket-endpoint-config")? {
        // Hazelcast's defaults, binding the member endpoint's host unless it names its own.
        let port = crate::network::DEFAULT_CLIENT_PORT;
        let mut endpoint = Endpoint { host: network.host.clone(), port, ..Endpoint::default() };
        read_endpoint(&mut client, &mut endpoint)?;
        network.client_endpoint = Some(endpoint);
    }
    if let Some(mut rest) = section.section("rest-server-socket-endpoint-config")? {
        let mut endpoint = Endpoint { port: *metrics_http_port, ..Endpoint::default() };
        read_endpoint_port(&mut rest, &mut endpoint)?;
        *metrics_http_port = endpoint.port;
    }
    read_join(&mut section, network)
}

/// An endpoint's `port`, `interfaces` and `public-address`.
fn read_endpoint(section: &mut Section, endpoint: &mut Endpoint) -> Result<()> {
    read_endpoint_port(section, endpoint)?;
    if let Some(mut interfaces) = section.section("interfaces")? {
        let enabled = interfaces.read("enabled", boolean)?.unwrap_or(false);
        let patterns = interfaces.read("interfaces", strings)?.unwrap_or_default();
        if enabled {
            let host = patterns.iter().find_map(|pattern| interface_host(pattern));
            let message = "interfaces are enabled, so expected at least one IPv4 address \
                           or pattern such as 10.0.0.* or 10.0.0.4-18";
            let path = interfaces.child_path("interfaces");
            endpoint.host = host.ok_or_else(|| invalid(path, message))?.to_string();
            endpoint.interfaces = patterns;
        }
    }
    section.set("public-address", &mut endpoint.public_address, public_address)
}

/// Both `port: 5701` and `port: {port: 5701, auto-increment: true, port-count: 100}` are valid.
fn read_endpoint_port(section: &mut Section, endpoint: &mut Endpoint) -> Result<()> {
    if let Some((path, value)) = section.take("port") {
        if value.is_mapping() {
            let mut port = Section::new(value, path, &section.walk)?;
            port.set("port", &mut endpoint.port, unsigned)?;
            port.set("auto-increment", &mut endpoint.port_auto_increment, boolean)?;
            port.set("port-count", &mut endpoint.port_count, unsigned)?;
        } else {
            endpoint.port = unsigned(value, &path)?;
        }
    }
    Ok(())
}

/// `join`: tcp-ip only.
fn read_join(section: &mut Section, network: &mut NetworkConfig) -> Result<()> {
    if let Some(mut join) = section.section("join")? {
        if let Some(tcp_ip) = join.section("tcp-ip")? {
            network.member_list = read_tcp_ip(tcp_ip)?;
        }
        for mechanism in ["multicast", "auto-detection"] {
            let Some(mut disabled) = join.section(mechanism)? else {
                continue;
            };
            if disabled.read("enabled", boolean)? == Some(true) {
                let message = format!("{mechanism} discovery is not supported; use tcp-ip");
                return Err(invalid(disabled.child_path("enabled"), message));
            }
        }
    }
    Ok(())
}

/// `network.ssl`: Hazelcast's `BasicSSLContextFactory` properties (PKCS12 key and trust stores)
/// or its `OpenSSLEngineFactory` ones (PEM files); the files are read by the member at start.
fn read_ssl(mut ssl: Section, tls: &mut TlsConfig) -> Result<()> {
    ssl.set("enabled", &mut tls.enabled, boolean)?;
    ssl.set("factory-class-name", &mut tls.factory_class_name, text)?;
    let Some(mut properties) = ssl.section("properties")? else {
        return Ok(());
    };
    tls.key = read_key_source(&mut properties)?;
    tls.trust = read_trust_source(&mut properties)?;
    if let Some((path, value)) = properties.take("protocol") {
        tls.protocol = TlsProtocol::parse(&text(value, &path)?).map_err(|message| invalid(path, message))?;
    }
    if let Some((path, value)) = properties.take("mutualAuthentication") {
        let mode = MutualAuthentication::parse(&text(value, &path)?);
        tls.mutual_authentication = mode.map_err(|message| invalid(path, message))?;
    }
    if let Some(suites) = properties.read("ciphersuites", text)? {
        tls.cipher_suites = suites.split(',').map(|suite| suite.trim().to_owned()).collect();
    }
    Ok(())
}

/// `keyStore` (PKCS12) or `keyFile` + `keyCertChainFile` (PEM), not both.
fn read_key_source(properties: &mut Section) -> Result<Option<KeySource>> {
    let store = properties.read("keyStore", text)?;
    let password = properties.read("keyStorePassword", text)?.unwrap_or_default();
    read_store_type(properties, "keyStoreType")?;
    let key_file = properties.read("keyFile", text)?;
    let chain_file = properties.read("keyCertChainFile", text)?;
    if properties.read("keyFilePassword", text)?.is_some() {
        let message = "encrypted PEM keys are not supported: give an unencrypted keyFile or a PKCS12 keyStore";
        return Err(invalid(properties.child_path("keyFilePassword"), message));
    }
    match (store, key_file, chain_file) {
        (None, None, None) => Ok(None),
        (Some(path), None, None) => Ok(Some(KeySource::KeyStore { path: path.into(), password })),
        (None, Some(key_file), Some(chain_file)) => {
            Ok(Some(KeySource::Pem { key_file: key_file.into(), cert_chain_file: chain_file.into() }))
        }
        (Some(_), _, _) => {
            Err(invalid(properties.child_path("keyStore"), "give either keyStore or keyFile and keyCertChainFile"))
        }
        (None, _, _) => Err(invalid(properties.child_path("keyFile"), "keyFile and keyCertChainFile go together")),
    }
}

/// `trustStore` (PKCS12) or `trustCertCollectionFile` (PEM), not both.
fn read_trust_source(properties: &mut Section) -> Result<Option<TrustSource>> {
    let store = properties.read("trustStore", text)?;
    let password = properties.read("trustStorePassword", text)?.unwrap_or_default();
    read_store_type(properties, "trustStoreType")?;
    let collection = properties.read("trustCertCollectionFile", text)?;
    match (store, collection) {
        (None, None) => Ok(None),
        (Some(path), None) => Ok(Some(TrustSource::TrustStore { path: path.into(), password })),
        (None, Some(path)) => Ok(Some(TrustSource::Pem { path: path.into() })),
        (Some(_), Some(_)) => {
            Err(invalid(properties.child_path("trustStore"), "give either trustStore or trustCertCollectionFile"))
        }
    }
}

/// Only PKCS12 stores are read (Java's JKS is a format of its own).
fn read_store_type(properties: &mut Section, key: &str) -> Result<()> {
    if let Some((path, value)) = properties.take(key) {
        let store_type = text(value, &path)?;
        if !store_type.eq_ignore_ascii_case("PKCS12") {
            let message = format!("only PKCS12 stores are supported, got {store_type:?} (convert with keytool -importkeystore -deststoretype PKCS12)");
            return Err(invalid(path, message));
        }
    }
    Ok(())
}

/// The members to contact: kept unless `enabled` is explicitly false; entries may hold
/// comma-separated lists, as in Hazelcast.
fn read_tcp_ip(mut tcp_ip: Section) -> Result<Vec<String>> {
    let enabled = tcp_ip.read("enabled", boolean)?.unwrap_or(true);
    let mut members = tcp_ip.read("member-list", strings)?.unwrap_or_default();
    members.extend(tcp_ip.read("members", text)?);
    if !enabled {
        return Ok(Vec::new());
    }
    let split = members.iter().flat_map(|entry| entry.split(','));
    let members = split.map(str::trim).filter(|member| !member.is_empty());
    Ok(members.map(String::from).collect())
}

/// Users come from the realm that `client-authentication.realm` names; only simple
/// authentication is supported.
pub(super) fn read_security(mut section: Section, security: &mut SecurityConfig) -> Result<()> {
    section.set("enabled", &mut security.enabled, boolean)?;
    let mut realms: Vec<(String, Vec<User>)> = Vec::new();
    for mut realm in section.list("realms")? {
        let name = realm.read("name", text)?;
        let missing = || invalid(realm.child_path("name"), "every realm needs a name");
        let name = name.ok_or_else(missing)?;
        let mut users = Vec::new();
        if let Some(mut authentication) = realm.section("authentication")? {
            if let Some(mut simple) = authentication.section("simple")? {
                users = read_users(&mut simple)?;
            }
        }
        realms.push((name, users));
    }
    if security.enabled && section.take("client-permissions").is_some() {
        let message = "client permissions are not supported by ferrogrid; refusing to start without enforcing them";
        return Err(invalid(section.child_path("client-permissions"), message));
    }
    if let Some(mut client) = section.section("client-authentication")? {
        if let Some((path, value)) = client.take("realm") {
            let realm = text(value, &path)?;
            let found = realms.into_iter().find(|(name, _)| *name == realm);
            let message = format!("no realm named {realm:?} in hazelcast.security.realms");
            security.users = found.ok_or_else(|| invalid(path, message))?.1;
        }
    }
    Ok(())
}

fn read_users(simple: &mut Section) -> Result<Vec<User>> {
    let mut users = Vec::new();
    for mut user in simple.list("users")? {
        let username = user.read("username", text)?.unwrap_or_default();
        let password = user.read("password", text)?;
        let missing = || invalid(user.child_path("password"), "every user needs a password");
        let password = password.ok_or_else(missing)?;
        user.take("roles"); // Accepted so that Hazelcast files load; ferrogrid has no permissions.
        users.push(User { username, password });
    }
    Ok(users)
}

pub(super) fn read_tenant(section: &mut Section) -> Result<TenantConfig> {
    let mut tenant = TenantConfig::new("", "", "");
    section.set("name", &mut tenant.name, text)?;
    section.set("username", &mut tenant.username, text)?;
    section.set("password", &mut tenant.password, text)?;
    section.set("weight", &mut tenant.weight, unsigned)?;
    tenant.max_connections = section.read("max-connections", unsigned)?;
    tenant.max_ops_per_second = section.read("max-ops-per-second", unsigned)?;
    tenant.max_entries = section.read("max-entries", unsigned)?;
    tenant.max_bytes = section.read("max-bytes", unsigned)?;
    if let Some((path, value)) = section.take("over-quota") {
        tenant.over_quota = match text(value, &path)?.to_ascii_lowercase().as_str() {
            "throttle" => OverQuota::Throttle,
            "reject" => OverQuota::Reject,
            other => return Err(invalid(path, format!("expected throttle or reject, got {other:?}"))),
        };
    }
    Ok(tenant)
}

pub(super) fn read_limits(mut section: Section, config: &mut MemberConfig) -> Result<()> {
    let limits = &mut config.limits;
    let fields = [
        ("max-frame-bytes", &mut limits.max_frame_bytes),
        ("max-message-bytes", &mut limits.max_message_bytes),
        ("connection-write-buffer-bytes", &mut limits.connection_write_buffer_bytes),
        ("max-connections", &mut limits.max_connections),
        ("reactor-queue-capacity", &mut limits.reactor_queue_capacity),
        ("max-pending-fragmented-messages", &mut limits.max_pending_fragmented_messages),
        ("max-in-flight-per-connection", &mut limits.max_in_flight_per_connection),
        ("requests-per-turn", &mut limits.requests_per_turn),
        ("reads-per-turn", &mut limits.reads_per_turn),
        ("max-parked-per-key", &mut limits.max_parked_per_key),
        ("max-sql-rows-per-query", &mut limits.max_sql_rows_per_query),
        ("max-sql-bytes-per-query", &mut limits.max_sql_bytes_per_query),
        ("max-sql-cursors-per-connection", &mut limits.max_sql_cursors_per_connection),
        ("expiry-sweep-entries", &mut limits.expiry_sweep_entries),
        ("crdt-replication-batch", &mut limits.crdt_replication_batch),
        ("snapshot-chunk-bytes", &mut limits.snapshot_chunk_bytes),
        ("cluster-event-queue", &mut limits.cluster_event_queue),
        ("listener-event-queue-bytes", &mut limits.listener_event_queue_bytes),
        ("max-flake-id-generators", &mut limits.max_flake_id_generators),
        ("max-schemas", &mut limits.max_schemas),
        ("max-dynamic-configs", &mut limits.max_dynamic_configs),
        ("max-transactions-per-connection", &mut limits.max_transactions_per_connection),
        ("max-transactions", &mut limits.max_transactions),
        ("max-transaction-log-entries", &mut limits.max_transaction_log_entries),
        ("max-query-caches", &mut limits.max_query_caches),
        ("query-cache-buffer-events", &mut limits.query_cache_buffer_events),
        ("transaction-default-timeout-millis", &mut limits.transaction_default_timeout_millis),
        ("transaction-max-timeout-millis", &mut limits.transaction_max_timeout_millis),
    ];
    for (key, field) in fields {
        section.set(key, field, unsigned)?;
    }
    Ok(())
}

/// `hazelcast.persistence`, Hazelcast's keys (bounds checked, and an enabled persistence
/// refused, by `MemberConfig::validate`).
pub(super) fn read_persistence(mut section: Section, persistence: &mut crate::PersistenceConfig) -> Result<()> {
    section.set("enabled", &mut persistence.enabled, boolean)?;
    section.set("base-dir", &mut persistence.base_dir, text)?;
    if let Some(dir) = section.read("backup-dir", text)? {
        persistence.backup_dir = Some(dir);
    }
    section.set("parallelism", &mut persistence.parallelism, unsigned)?;
    section.set("validation-timeout-seconds", &mut persistence.validation_timeout_seconds, unsigned)?;
    section.set("data-load-timeout-seconds", &mut persistence.data_load_timeout_seconds, unsigned)?;
    section.set("rebalance-delay-seconds", &mut persistence.rebalance_delay_seconds, unsigned)?;
    section.set("auto-remove-stale-data", &mut persistence.auto_remove_stale_data, boolean)?;
    let policy = &mut persistence.cluster_data_recovery_policy;
    section.set("cluster-data-recovery-policy", policy, recovery_policy)?;
    Ok(())
}

/// `cluster-data-recovery-policy`, as Hazelcast names the policies (any case).
fn recovery_policy(value: &super::Value, path: &str) -> Result<crate::RecoveryPolicy> {
    let name = text(value, path)?;
    crate::RecoveryPolicy::parse(&name).ok_or_else(|| {
        let known = "FULL_RECOVERY_ONLY, PARTIAL_RECOVERY_MOST_RECENT or PARTIAL_RECOVERY_MOST_COMPLETE";
        invalid(path.to_owned(), format!("expected {known}, got {name}"))
    })
}

/// `ferrogrid.persistence.fsync-policy`: `always`, `everysec` or `no`, as Redis' `appendfsync`.
pub(super) fn fsync_policy(value: &super::Value, path: &str) -> Result<crate::FsyncPolicy> {
    let name = text(value, path)?;
    let refused = || invalid(path.to_owned(), format!("expected always, everysec or no, got {name}"));
    crate::parse_fsync_policy(&name).ok_or_else(refused)
}
