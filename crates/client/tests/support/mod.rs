//! What the integration tests share: a member to talk to (a ferrogrid member started
//! in-process, or an external one named by `FERROGRID_CLIENT_TEST_ADDRESS`, e.g. a Hazelcast
//! 5.6 member with cluster name `dev`), client configurations and unique map names.

#![allow(dead_code)]

pub mod fake;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ferrogrid_client::ClientConfig;
use ferrogrid_config::MemberConfig;
use ferrogrid_member::Member;

/// Set to `host:port` to run the tests against that member instead of starting one.
pub const EXTERNAL_ADDRESS_VARIABLE: &str = "FERROGRID_CLIENT_TEST_ADDRESS";

/// The member the test talks to; an in-process one is shut down on drop.
pub struct TestMember {
    pub address: SocketAddr,
    member: Option<Member>,
}

impl TestMember {
    /// The external member if the variable is set, else a new in-process ferrogrid member.
    pub fn start() -> TestMember {
        match external_address() {
            Some(address) => TestMember { address, member: None },
            None => {
                let member = start_member(17701, true);
                TestMember { address: member.address(), member: Some(member) }
            }
        }
    }

    /// Stops the in-process member (blocking until its threads are joined).
    pub fn shutdown(&mut self) {
        if let Some(member) = self.member.take() {
            member.shutdown();
        }
    }
}

impl Drop for TestMember {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A ferrogrid member on 127.0.0.1, at `port` (or the next free one with `auto_increment`).
pub fn start_member(port: u16, auto_increment: bool) -> Member {
    let mut config = MemberConfig::default();
    config.network.port = port;
    config.network.port_auto_increment = auto_increment;
    config.network.port_count = 500;
    config.reactor_threads = 2;
    // Both reactors read, so requests also cross between them (packed placement keeps
    // every connection on one reactor until it saturates).
    config.io.initial_placement = ferrogrid_config::Placement::LeastConnections;
    Member::start(config).expect("member starts")
}

/// The address named by [`EXTERNAL_ADDRESS_VARIABLE`]; only loopback addresses are accepted.
pub fn external_address() -> Option<SocketAddr> {
    let text = std::env::var(EXTERNAL_ADDRESS_VARIABLE).ok()?;
    let address: SocketAddr =
        text.parse().unwrap_or_else(|_| panic!("{EXTERNAL_ADDRESS_VARIABLE}={text} is not host:port"));
    assert!(address.ip().is_loopback(), "tests only talk to loopback members, not {address}");
    Some(address)
}

/// True (after saying so) when the test needs to start and stop members itself.
pub fn skip_with_external_member(test: &str) -> bool {
    let external = external_address().is_some();
    if external {
        eprintln!("{test}: skipped, it starts and stops its own ferrogrid members");
    }
    external
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().unwrap().port()
}

pub fn config(address: SocketAddr, smart_routing: bool) -> ClientConfig {
    ClientConfig {
        addresses: vec![address],
        smart_routing,
        invocation_timeout: Duration::from_secs(20),
        ..ClientConfig::default()
    }
}

/// A map name no other test (or earlier run against an external member) uses.
pub fn map_name(test: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{test}-{}-{nanos}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}
