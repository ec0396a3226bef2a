//! Flake id generators on a live member: clients on every reactor asking one generator for
//! batches at once never get an id twice, the metrics count what was issued, and destroy drops
//! the generator's figures.

mod support;

use ferrogrid_config::FlakeIdGeneratorConfig;
use ferrogrid_member::Member;
use ferrogrid_protocol::codec::{ClientDestroyProxy, FlakeIdGeneratorNewIdBatch, FlakeIdGeneratorNewIdBatchResponse};
use ferrogrid_protocol::Message;
use std::collections::HashSet;
use support::{start_member, WireClient};

const CLIENTS: usize = 6;
const REQUESTS: usize = 2_000;

fn probe(member: &Member, dotted: &str) -> Option<f64> {
    member.probes().iter().find(|probe| probe.dotted_name() == dotted).map(|probe| probe.value)
}

/// Sends `REQUESTS` NewIdBatch requests in one write (sizes 1..=50) and returns every id.
fn take_batches(client: &mut WireClient, name: &str) -> Vec<i64> {
    let mut out = Vec::new();
    let mut sizes = Vec::new();
    for index in 0..REQUESTS {
        let correlation_id = client.correlation_id();
        let batch_size = 1 + (index % 50) as i32;
        FlakeIdGeneratorNewIdBatch { batch_size, name }.encode(&mut out, correlation_id, -1, 0);
        sizes.push((correlation_id, batch_size));
    }
    client.send_bytes(&out);
    let mut ids = Vec::new();
    for (correlation_id, batch_size) in sizes {
        let bytes = client.response_to(correlation_id);
        let response = FlakeIdGeneratorNewIdBatchResponse::decode(&Message::parse(&bytes).unwrap()).unwrap();
        assert_eq!(response.batch_size, batch_size);
        assert_eq!(response.increment, 1 << 16);
        assert_eq!(response.base & 0xFFFF, 1, "the only member joined at version 1");
        ids.extend((0..i64::from(batch_size)).map(|i| response.base + i * response.increment));
    }
    ids
}

#[test]
fn clients_on_every_reactor_never_get_an_id_twice() {
    let member = start_member(|config| {
        // Every id ahead of the clock is fine here: the test is about overlap, not pacing.
        let eager = FlakeIdGeneratorConfig { allowed_future_millis: 1_000_000, ..FlakeIdGeneratorConfig::DEFAULT };
        config.flake_id_generators.insert("shared", eager);
    });
    let address = member.address();
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            std::thread::spawn(move || {
                let mut client = WireClient::connect(address);
                take_batches(&mut client, "shared")
            })
        })
        .collect();
    let mut all = HashSet::new();
    let mut count = 0;
    for thread in threads {
        let ids = thread.join().unwrap();
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "one connection's batches increase");
        count += ids.len();
        all.extend(ids);
    }
    assert_eq!(all.len(), count, "no id was issued twice");
    let expected_ids = (CLIENTS * (0..REQUESTS).map(|index| 1 + index % 50).sum::<usize>()) as f64;
    assert_eq!(probe(&member, "flakeIdGenerator-shared.idCount"), Some(expected_ids));
    assert_eq!(probe(&member, "flakeIdGenerator-shared.batchCount"), Some((CLIENTS * REQUESTS) as f64));

    // Destroy drops its state (and figures); the name used again goes on after its last id.
    let mut client = WireClient::connect(address);
    let correlation_id = client.correlation_id();
    let mut out = Vec::new();
    let service_name = "hz:impl:flakeIdGeneratorService";
    ClientDestroyProxy { name: "shared", service_name }.encode(&mut out, correlation_id, -1, 0);
    client.send_bytes(&out);
    client.response_to(correlation_id);
    assert_eq!(probe(&member, "flakeIdGenerator-shared.idCount"), None);
    let again = take_batches(&mut client, "shared");
    assert!(again.iter().all(|id| !all.contains(id)), "ids after the destroy are new");
    member.shutdown();
}

/// A member that has not joined a cluster yet has no node id: NewIdBatch is answered with a
/// retryable error (the client tries again), and served once it has joined.
#[test]
fn a_member_that_has_not_joined_refuses_clients_until_it_has() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // A seed that refuses: the member looks for a cluster for the join wait, then founds one.
    let refusing = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let starting = std::thread::spawn(move || {
        start_member(|config| {
            config.network.port = port;
            config.network.port_count = 1;
            config.network.member_list = vec![format!("127.0.0.1:{refusing}")];
            config.cluster.join_wait_ms = 3_000;
        })
    });
    let address: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(address).is_err() {
        assert!(std::time::Instant::now() < deadline, "the member accepts connections while it starts");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Before it is in a cluster the member would name itself as the cluster: a client is told
    // to come back (a retryable error), and the connection closes.
    let mut early = WireClient::connect_raw(address);
    early.send_bytes(b"CP2");
    let refused = early.authentication_answer("dev", None, None);
    let message = Message::parse(&refused).unwrap();
    assert_eq!(message.message_type(), ferrogrid_protocol::error::ERROR_RESPONSE, "refused before the join");
    let errors = ferrogrid_protocol::error::read_error_response(&message).unwrap();
    assert_eq!(errors[0].code, ferrogrid_protocol::error::INSTANCE_NOT_ACTIVE.code);
    assert!(errors[0].message.as_deref().unwrap_or("").contains("not joined"), "{errors:?}");
    assert!(early.try_read_message().is_none(), "the connection closes");
    let member = starting.join().unwrap();
    let mut client = WireClient::connect(address);
    let correlation_id = client.correlation_id();
    let mut out = Vec::new();
    FlakeIdGeneratorNewIdBatch { batch_size: 10, name: "early" }.encode(&mut out, correlation_id, -1, 0);
    client.send_bytes(&out);
    let joined = client.response_to(correlation_id);
    let response = FlakeIdGeneratorNewIdBatchResponse::decode(&Message::parse(&joined).unwrap()).unwrap();
    assert_eq!((response.batch_size, response.base & 0xFFFF), (10, 1));
    member.shutdown();
}
