//! Where the member listens and which members it contacts to join a cluster.

use crate::error::{invalid, ConfigError};
use crate::tls::TlsConfig;

/// Network settings, from `hazelcast.network`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkConfig {
    /// Address the member binds (and advertises, unless `public_address` is set). Default
    /// `"127.0.0.1"`. Set by `hazelcast.network.interfaces` (first IPv4 interface, when enabled).
    pub host: String,
    /// The address other members and clients are told to reach this member at, when it is not
    /// the bound one (a container's or a NAT's address). `hazelcast.network.public-address`:
    /// `host`, `host:port` or `[ipv6]:port`; without a port the bound port is advertised.
    /// Default none.
    pub public_address: Option<PublicAddress>,
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
    /// Read from `hazelcast.advanced-network` (enabled): the fields above are its member
    /// endpoint's (`member-server-socket-endpoint-config`) and its `join`. Default false.
    pub advanced: bool,
    /// A listener for clients apart from the member port (advanced network's
    /// `client-server-socket-endpoint-config`; port default 5702 there). With it, the member
    /// port refuses clients and the client port refuses members. Default none: clients and
    /// members share the one port.
    pub client_endpoint: Option<Endpoint>,
}

/// Port on which the client endpoint of an advanced network listens by default (Hazelcast's).
pub const DEFAULT_CLIENT_PORT: u16 = 5702;

/// Where one listener binds and what it advertises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub port_auto_increment: bool,
    pub port_count: u16,
    pub interfaces: Vec<String>,
    pub public_address: Option<PublicAddress>,
}

impl Default for Endpoint {
    fn default() -> Self {
        let network = NetworkConfig::default();
        network.endpoint()
    }
}

impl Endpoint {
    /// The host and port this endpoint is known by, given the port it bound.
    pub fn advertised(&self, bound_port: u16) -> (String, u16) {
        match &self.public_address {
            Some(public) => public.with_port(bound_port),
            None => (self.host.clone(), bound_port),
        }
    }

    /// The ports tried in order: `port`, and the following ones with auto-increment.
    pub fn ports(&self) -> std::ops::RangeInclusive<u16> {
        let last = if self.port_auto_increment { self.port.saturating_add(self.port_count - 1) } else { self.port };
        self.port..=last
    }

    /// Checks the bounds documented on [`NetworkConfig`]'s fields of the same names; `key`
    /// is the endpoint's section.
    fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if self.host.trim().is_empty() {
            return Err(invalid(format!("{key}.interfaces"), "expected a host to bind"));
        }
        if self.public_address.as_ref().is_some_and(|public| public.host.trim().is_empty()) {
            return Err(invalid(format!("{key}.public-address"), "expected a host"));
        }
        if self.port == 0 {
            return Err(invalid(format!("{key}.port"), "expected 1..=65535, got 0"));
        }
        let count_key = format!("{key}.port.port-count");
        if self.port_count == 0 {
            return Err(invalid(count_key, "expected at least 1, got 0"));
        }
        let last_port = u32::from(self.port) + u32::from(self.port_count) - 1;
        if self.port_auto_increment && last_port > u32::from(u16::MAX) {
            let (port, count) = (self.port, self.port_count);
            let message = format!("port {port} + port-count {count} runs past port 65535");
            return Err(invalid(count_key, message));
        }
        Ok(())
    }
}

/// An address advertised instead of the bound one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicAddress {
    pub host: String,
    /// None: the port the member bound.
    pub port: Option<u16>,
}

impl PublicAddress {
    /// Reads `host`, `host:port` or `[ipv6]:port`.
    pub fn parse(text: &str) -> Result<PublicAddress, String> {
        let text = text.trim();
        let (host, port) = match text.strip_prefix('[') {
            Some(bracketed) => {
                let (host, rest) = bracketed.split_once(']').ok_or("an unclosed [ in an IPv6 address")?;
                (host, rest.strip_prefix(':'))
            }
            None if text.matches(':').count() == 1 => text.split_once(':').map(|(h, p)| (h, Some(p))).expect("one :"),
            None => (text, None),
        };
        let host = host.trim();
        if host.is_empty() {
            return Err("expected host or host:port".into());
        }
        let port = match port {
            None => None,
            Some(port) => match port.trim().parse::<u16>() {
                Ok(0) | Err(_) => return Err(format!("expected a port 1..=65535, got {port:?}")),
                Ok(port) => Some(port),
            },
        };
        Ok(PublicAddress { host: host.to_owned(), port })
    }

    /// `host:port`, with `bound_port` when no port was given.
    pub fn with_port(&self, bound_port: u16) -> (String, u16) {
        (self.host.clone(), self.port.unwrap_or(bound_port))
    }
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".to_owned(),
            port: 5701,
            port_auto_increment: true,
            port_count: 100,
            public_address: None,
            interfaces: Vec::new(),
            member_list: Vec::new(),
            tls: TlsConfig::default(),
            advanced: false,
            client_endpoint: None,
        }
    }
}

impl NetworkConfig {
    /// The host and port this member is known by, given the port it bound: the public address
    /// if one is set, else the bound host and port.
    pub fn advertised(&self, bound_port: u16) -> (String, u16) {
        match &self.public_address {
            Some(public) => public.with_port(bound_port),
            None => (self.host.clone(), bound_port),
        }
    }

    /// The member endpoint's fields as an [`Endpoint`].
    pub fn endpoint(&self) -> Endpoint {
        Endpoint {
            host: self.host.clone(),
            port: self.port,
            port_auto_increment: self.port_auto_increment,
            port_count: self.port_count,
            interfaces: self.interfaces.clone(),
            public_address: self.public_address.clone(),
        }
    }

    /// Sets the member endpoint's fields.
    pub fn set_endpoint(&mut self, endpoint: Endpoint) {
        let Endpoint { host, port, port_auto_increment, port_count, interfaces, public_address } = endpoint;
        (self.host, self.port, self.port_auto_increment, self.port_count) =
            (host, port, port_auto_increment, port_count);
        (self.interfaces, self.public_address) = (interfaces, public_address);
    }

    /// Checks every bound documented on the fields.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let (member_key, client_key) = if self.advanced {
            (
                "hazelcast.advanced-network.member-server-socket-endpoint-config",
                "hazelcast.advanced-network.client-server-socket-endpoint-config",
            )
        } else {
            ("hazelcast.network", "")
        };
        self.endpoint().validate(member_key)?;
        if let Some(client) = &self.client_endpoint {
            client.validate(client_key)?;
        }
        let members_key = "hazelcast.network.join.tcp-ip.member-list";
        if self.member_list.iter().any(|member| member.trim().is_empty()) {
            return Err(invalid(members_key, "expected non-empty member addresses"));
        }
        self.tls.validate()
    }
}
