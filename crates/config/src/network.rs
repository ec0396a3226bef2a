//! Where the member listens and which members it contacts to join a cluster.

use crate::error::{invalid, ConfigError};
use crate::tls::TlsConfig;

/// Network settings, from `hazelcast.network`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkConfig {
    /// Address the member binds and advertises. Default `"127.0.0.1"`.
    /// Set by `hazelcast.network.interfaces` (first IPv4 interface, when enabled) and overridden
    /// by the host part of `hazelcast.network.public-address`.
    pub host: String,
    /// First port tried. `hazelcast.network.port` (scalar) or `hazelcast.network.port.port`.
    /// Default 5701; must not be 0.
    pub port: u16,
    /// Try the following ports when `port` is taken. `hazelcast.network.port.auto-increment`.
    /// Default `true`.
    pub port_auto_increment: bool,
    /// How many ports, starting at `port`, may be tried. `hazelcast.network.port.port-count`.
    /// Default 100; at least 1, and with auto-increment `port + port_count - 1` must be <= 65535.
    pub port_count: u16,
    /// `hazelcast.network.interfaces.interfaces` as written, kept only when
    /// `hazelcast.network.interfaces.enabled` is true. Default empty.
    pub interfaces: Vec<String>,
    /// Members to contact when joining: `hazelcast.network.join.tcp-ip.member-list` (or the
    /// comma-separated `members` string), entries split on commas. Kept unless
    /// `hazelcast.network.join.tcp-ip.enabled` is explicitly false. Default empty.
    pub member_list: Vec<String>,
    /// TLS on the member's port. `hazelcast.network.ssl`; off by default.
    pub tls: TlsConfig,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".to_owned(),
            port: 5701,
            port_auto_increment: true,
            port_count: 100,
            interfaces: Vec::new(),
            member_list: Vec::new(),
            tls: TlsConfig::default(),
        }
    }
}

impl NetworkConfig {
    /// Checks every bound documented on the fields.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.host.trim().is_empty() {
            return Err(invalid("hazelcast.network.public-address", "expected a host"));
        }
        if self.port == 0 {
            return Err(invalid("hazelcast.network.port", "expected 1..=65535, got 0"));
        }
        let count_key = "hazelcast.network.port.port-count";
        if self.port_count == 0 {
            return Err(invalid(count_key, "expected at least 1, got 0"));
        }
        let last_port = u32::from(self.port) + u32::from(self.port_count) - 1;
        if self.port_auto_increment && last_port > u32::from(u16::MAX) {
            let (port, count) = (self.port, self.port_count);
            let message = format!("port {port} + port-count {count} runs past port 65535");
            return Err(invalid(count_key, message));
        }
        let members_key = "hazelcast.network.join.tcp-ip.member-list";
        if self.member_list.iter().any(|member| member.trim().is_empty()) {
            return Err(invalid(members_key, "expected non-empty member addresses"));
        }
        self.tls.validate()
    }
}
