//! What a client connects to and the bounds it runs under.
//!
//! Every bound has its default documented on the field and is checked by
//! [`ClientConfig::validate`], which [`crate::Client::connect`] calls first.

use std::net::SocketAddr;
use std::time::Duration;

use crate::error::ClientError;

/// Largest accepted `max_in_flight_per_connection`.
pub const MAX_IN_FLIGHT_PER_CONNECTION: u32 = 1_000_000;

/// Client settings. Build with `ClientConfig { addresses, ..Default::default() }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Members tried, in order, when no connection is open (at start and after losing every
    /// connection). Default `[127.0.0.1:5701]`; at least one.
    pub addresses: Vec<SocketAddr>,
    /// The cluster name the members must have. Default `"dev"`.
    pub cluster_name: String,
    /// Smart routing: one connection per member, key-based requests sent to the partition
    /// owner. Off ("unisocket"): one connection carries everything. Default `true`.
    pub smart_routing: bool,
    /// Credentials for members with security enabled. Default none (a member without security
    /// refuses a client that sends credentials, as Hazelcast does).
    pub username: Option<String>,
    pub password: Option<String>,
    /// How long an invocation may take, retries included, measured from its first send.
    /// Default 120 s (Hazelcast's `hazelcast.client.invocation.timeout.seconds`); above zero.
    pub invocation_timeout: Duration,
    /// How long [`crate::Client::connect`] keeps trying the addresses; also the bound on each
    /// TCP connect plus authentication. Default 5 s; above zero.
    pub connect_timeout: Duration,
    /// Requests sent on one connection and not yet answered. A caller beyond it waits for a
    /// slot. Default 10 000; 1..=[`MAX_IN_FLIGHT_PER_CONNECTION`].
    pub max_in_flight_per_connection: u32,
    /// A connection on which nothing was written for this long gets a `Client.Ping`.
    /// Default 5 s; above zero.
    pub heartbeat_interval: Duration,
    /// A connection on which nothing was read for this long is closed. Default 60 s; longer
    /// than `heartbeat_interval`.
    pub heartbeat_timeout: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            addresses: vec![SocketAddr::from(([127, 0, 0, 1], 5701))],
            cluster_name: "dev".to_owned(),
            smart_routing: true,
            username: None,
            password: None,
            invocation_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(5),
            max_in_flight_per_connection: 10_000,
            heartbeat_interval: Duration::from_secs(5),
            heartbeat_timeout: Duration::from_secs(60),
        }
    }
}

impl ClientConfig {
    /// Checks every bound documented on the fields.
    pub fn validate(&self) -> Result<(), ClientError> {
        let invalid = |reason: String| Err(ClientError::Config(reason));
        if self.addresses.is_empty() {
            return invalid("addresses: at least one member address is needed".to_owned());
        }
        if !(1..=MAX_IN_FLIGHT_PER_CONNECTION).contains(&self.max_in_flight_per_connection) {
            let value = self.max_in_flight_per_connection;
            return invalid(format!(
                "max_in_flight_per_connection: expected 1..={MAX_IN_FLIGHT_PER_CONNECTION}, got {value}"
            ));
        }
        for (name, value) in [
            ("invocation_timeout", self.invocation_timeout),
            ("connect_timeout", self.connect_timeout),
            ("heartbeat_interval", self.heartbeat_interval),
        ] {
            if value.is_zero() {
                return invalid(format!("{name}: must be above zero"));
            }
        }
        if self.heartbeat_timeout <= self.heartbeat_interval {
            let (timeout, interval) = (self.heartbeat_timeout, self.heartbeat_interval);
            return invalid(format!("heartbeat_timeout ({timeout:?}) must exceed heartbeat_interval ({interval:?})"));
        }
        if self.password.is_some() && self.username.is_none() {
            return invalid("password: given without a username".to_owned());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        ClientConfig::default().validate().unwrap();
    }

    #[test]
    fn rejects_out_of_bounds_values() {
        let bad = [
            ClientConfig { addresses: vec![], ..Default::default() },
            ClientConfig { max_in_flight_per_connection: 0, ..Default::default() },
            ClientConfig { invocation_timeout: Duration::ZERO, ..Default::default() },
            ClientConfig { heartbeat_timeout: Duration::from_secs(5), ..Default::default() },
            ClientConfig { password: Some("p".into()), ..Default::default() },
        ];
        for config in bad {
            assert!(matches!(config.validate(), Err(ClientError::Config(_))), "{config:?}");
        }
    }
}
