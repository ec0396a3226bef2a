//! A live member driven over real sockets: semantics across reactors, the connection life
//! cycle, and bad input that must close one connection and leave everyone else served.

mod support;

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{read_error_response, ERROR_RESPONSE};
use ferrogrid_protocol::frame::{BEGIN_FRAGMENT, END_FRAGMENT, IS_FINAL};
use ferrogrid_protocol::message::write_frame;
use ferrogrid_protocol::{partition_for, Data, Message};
use std::collections::HashSet;
use std::time::{Duration, Instant};
use support::{start_member, string_data, WireClient};

fn error_chain(bytes: &[u8]) -> Vec<(i32, String)> {
    let message = Message::parse(bytes).unwrap();
    assert_eq!(message.message_type(), ERROR_RESPONSE, "expected an error response");
    read_error_response(&message).unwrap().into_iter().map(|e| (e.code, e.class_name)).collect()
}

#[test]
fn keys_in_every_partition_are_stored_and_counted_across_reactors() {
    let member = start_member(|_| {});
    let mut client = WireClient::connect(member.address());
    let mut partitions = HashSet::new();
    let mut keys = Vec::new();
    for index in 0.. {
        let key = string_data(&format!("key-{index}"));
        partitions.insert(partition_for(Data(&key), 271));
        keys.push(key);
        if partitions.len() == 271 {
            break;
        }
    }
    for (index, key) in keys.iter().enumerate() {
        assert_eq!(client.put("spread", key, &string_data(&index.to_string())), None);
    }
    for (index, key) in keys.iter().enumerate() {
        assert_eq!(client.get("spread", key), Some(string_data(&index.to_string())));
    }
    assert_eq!(client.size("spread"), keys.len() as i32);
    assert_eq!(client.size("another-map"), 0);
    member.shutdown();
}

/// Sends `count` Map.Set requests in one write and checks that each gets exactly one response.
fn pipeline_sets(client: &mut WireClient, map: &str, count: usize) {
    let mut out = Vec::new();
    let mut expected = HashSet::new();
    for index in 0..count {
        let key = string_data(&format!("k{index}"));
        let partition = partition_for(Data(&key), 271).0 as i32;
        let corr = client.correlation_id();
        expected.insert(corr);
        MapSet { thread_id: 1, ttl: -1, name: map, key: Data(&key), value: Data(&key) }
            .encode(&mut out, corr, partition, 0);
    }
    client.send_bytes(&out);
    while !expected.is_empty() {
        let bytes = client.read_message();
        let message = Message::parse(&bytes).unwrap();
        assert_eq!(message.message_type(), MapSet::RESPONSE);
        assert!(expected.remove(&message.correlation_id()), "one response per request");
    }
    assert_eq!(client.size(map), count as i32);
}

#[test]
fn pipelined_requests_each_get_exactly_one_response() {
    let member = start_member(|_| {});
    let mut client = WireClient::connect(member.address());
    pipeline_sets(&mut client, "pipelined", 2000);
    member.shutdown();
}

/// A tenant's burst larger than its fair share of a round (64 requests per weight), sent at
/// once so that the member reads it all in one go: the rest waits for later rounds and is not
/// forgotten when the socket has nothing more to report (it used to stall until the client
/// sent something else). The same with a rate quota that throttles.
#[test]
fn a_tenants_burst_beyond_its_fair_share_is_answered_whole() {
    for max_ops_per_second in [None, Some(20_000)] {
        let member = start_member(|config| {
            config.reactor_threads = 1;
            let mut alice = ferrogrid_config::TenantConfig::new("a", "alice", "a-secret");
            alice.max_ops_per_second = max_ops_per_second;
            let bob = ferrogrid_config::TenantConfig::new("b", "bob", "b-secret");
            config.tenants.tenants = vec![alice, bob];
            config.tenants.fair_scheduling = true;
        });
        let mut client = WireClient::connect_raw(member.address());
        client.send_bytes(b"CP2");
        assert_eq!(client.authenticate("dev", Some("alice"), Some("a-secret")), 0);
        pipeline_sets(&mut client, "burst", 1000);
        member.shutdown();
    }
}

/// A client keeping far more requests in flight than one turn (256 requests) is served in
/// slices: another client's requests are answered between them, not after the whole
/// pipeline. (A turn used to be 16 reads, thousands of requests, so the other client's 50
/// round trips finished only after the flood's 200,000.)
#[test]
fn a_pipelining_client_does_not_hold_up_another() {
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    const BURST: usize = 200_000;
    let member = start_member(|config| config.reactor_threads = 1);
    let mut flooder = WireClient::connect(member.address());
    let mut other = WireClient::connect(member.address());
    let key = string_data("k");
    let partition = partition_for(Data(&key), 271).0 as i32;
    let mut out = Vec::new();
    for corr in 0..BURST {
        MapGet { thread_id: 1, name: "flood", key: Data(&key) }.encode(&mut out, 1_000 + corr as i64, partition, 0);
    }
    let mut stream = flooder.stream.try_clone().unwrap();
    let writer = std::thread::spawn(move || stream.write_all(&out).unwrap());
    let answered = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = answered.clone();
    let reader = std::thread::spawn(move || {
        for _ in 0..BURST {
            flooder.read_message();
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    while answered.load(Ordering::Relaxed) < 1_000 {
        std::thread::sleep(Duration::from_millis(1));
    }
    for _ in 0..50 {
        other.ping();
    }
    let flood_answered = answered.load(Ordering::Relaxed);
    writer.join().unwrap();
    reader.join().unwrap();
    assert!(
        flood_answered < BURST / 2,
        "the other client's 50 pings were answered only after {flood_answered} of the flood's {BURST} requests"
    );
    member.shutdown();
}

#[test]
fn wrong_cluster_name_is_refused_with_status_one_and_the_connection_stays_open() {
    let member = start_member(|_| {});
    let mut client = WireClient::connect_raw(member.address());
    client.send_bytes(b"CP2");
    assert_eq!(client.authenticate("not-dev", None, None), 1);
    assert_eq!(client.authenticate("dev", None, None), 0, "a retry on the same connection works");
    member.shutdown();
}

#[test]
fn credentials_are_checked_against_the_configured_users() {
    let open = start_member(|_| {});
    let mut client = WireClient::connect_raw(open.address());
    client.send_bytes(b"CP2");
    assert_eq!(client.authenticate("dev", Some("user"), Some("pw")), 1, "no security: credentials rejected");
    open.shutdown();

    let secured = start_member(|config| {
        config.security.enabled = true;
        config.security.users = vec![ferrogrid_config::User { username: "alice".into(), password: "s3cret".into() }];
    });
    let mut client = WireClient::connect_raw(secured.address());
    client.send_bytes(b"CP2");
    assert_eq!(client.authenticate("dev", None, None), 1);
    assert_eq!(client.authenticate("dev", Some("alice"), Some("wrong")), 1);
    assert_eq!(client.authenticate("dev", Some("alice"), Some("s3cret")), 0);
    secured.shutdown();
}

#[test]
fn a_request_before_authentication_gets_an_error_then_the_connection_closes() {
    let member = start_member(|_| {});
    let mut client = WireClient::connect_raw(member.address());
    client.send_bytes(b"CP2");
    let key = string_data("k");
    let mut out = Vec::new();
    MapGet { thread_id: 1, name: "m", key: Data(&key) }.encode(&mut out, 9, 0, 0);
    client.send_bytes(&out);
    let chain = error_chain(&client.read_message());
    assert_eq!(chain[0].0, 46);
    assert_eq!(chain[1], (3, "com.hazelcast.client.AuthenticationException".into()));
    assert!(client.try_read_message().is_none(), "connection closed");
    member.shutdown();
}

#[test]
fn unknown_message_type_gets_error_61_and_the_connection_stays_usable() {
    let member = start_member(|_| {});
    let mut client = WireClient::connect(member.address());
    let mut out = Vec::new();
    let mut writer =
        ferrogrid_protocol::MessageWriter::request(&mut out, ferrogrid_protocol::MessageType(0x7f0100), 77, -1, 0);
    writer.frame(b"whatever");
    writer.finish();
    client.send_bytes(&out);
    let bytes = client.response_to(77);
    assert_eq!(error_chain(&bytes)[0], (61, "java.lang.UnsupportedOperationException".into()));
    client.ping();
    member.shutdown();
}

#[test]
fn partition_bound_request_without_a_partition_gets_error_23() {
    let member = start_member(|_| {});
    let mut client = WireClient::connect(member.address());
    let key = string_data("k");
    let mut out = Vec::new();
    MapPut { thread_id: 1, ttl: -1, name: "m", key: Data(&key), value: Data(&key) }.encode(&mut out, 5, -1, 0);
    client.send_bytes(&out);
    assert_eq!(error_chain(&client.response_to(5))[0].0, 23);
    client.ping();
    member.shutdown();
}

#[test]
fn a_fragmented_put_is_reassembled_and_applied() {
    let member = start_member(|_| {});
    let mut client = WireClient::connect(member.address());
    let key = string_data("fragmented");
    let value = string_data(&"x".repeat(10_000));
    let mut whole = Vec::new();
    let partition = partition_for(Data(&key), 271).0 as i32;
    MapPut { thread_id: 1, ttl: -1, name: "frag", key: Data(&key), value: Data(&value) }
        .encode(&mut whole, 42, partition, 0);
    // Split after the initial frame: piece one = initial frame + name, piece two = key + value.
    let message = Message::parse(&whole).unwrap();
    let initial_length = i32::from_le_bytes(whole[0..4].try_into().unwrap()) as usize;
    let name_length = i32::from_le_bytes(whole[initial_length..initial_length + 4].try_into().unwrap()) as usize;
    let split = initial_length + name_length;
    let mut first = Vec::new();
    write_frame(&mut first, BEGIN_FRAGMENT, &7i64.to_le_bytes());
    let mut initial = whole[..split].to_vec();
    initial[4..6].copy_from_slice(&0u16.to_le_bytes());
    let last_frame_flags = initial_length + 4;
    initial[last_frame_flags..last_frame_flags + 2].copy_from_slice(&IS_FINAL.to_le_bytes());
    first.extend_from_slice(&initial);
    let mut second = Vec::new();
    write_frame(&mut second, END_FRAGMENT, &7i64.to_le_bytes());
    second.extend_from_slice(&whole[split..]);
    assert_eq!(message.correlation_id(), 42);
    client.send_bytes(&first);
    client.send_bytes(&second);
    let response = client.response_to(42);
    assert_eq!(Message::parse(&response).unwrap().message_type(), MapPut::RESPONSE);
    assert_eq!(client.get("frag", &key), Some(value));
    member.shutdown();
}

#[test]
fn garbage_closes_only_the_offending_connection() {
    let member = start_member(|_| {});
    let mut good = WireClient::connect(member.address());
    good.put("survivor", &string_data("k"), &string_data("v"));

    let attacks: Vec<(&str, Vec<u8>)> = vec![
        ("random bytes", (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect()),
        ("wrong protocol header", b"GET / HTTP/1.1\r\n\r\n".to_vec()),
        ("negative frame length", [b"CP2".as_slice(), &(-5i32).to_le_bytes(), &[0, 0xc0]].concat()),
        ("2 GiB frame before authentication", [b"CP2".as_slice(), &i32::MAX.to_le_bytes(), &[0, 0xc0]].concat()),
        ("frame length below the header", [b"CP2".as_slice(), &3i32.to_le_bytes(), &[0, 0xe0]].concat()),
        ("initial frame too short for a header", {
            let mut bytes = b"CP2".to_vec();
            write_frame(&mut bytes, 0xe000, &[1, 2, 3]);
            bytes
        }),
    ];
    for (name, bytes) in attacks {
        let mut attacker = WireClient::connect_raw(member.address());
        attacker.send_bytes(&bytes);
        assert!(attacker.try_read_message().is_none(), "{name}: connection closed without a reply");
        assert_eq!(good.get("survivor", &string_data("k")), Some(string_data("v")), "{name}: others still served");
    }
    // A truncated frame then a close: nothing to answer, nothing lost.
    let mut truncated = WireClient::connect_raw(member.address());
    truncated.send_bytes(&[b"CP2".as_slice(), &100i32.to_le_bytes(), &[0, 0xe0, 1, 2]].concat());
    drop(truncated);
    let mut fresh = WireClient::connect(member.address());
    assert_eq!(fresh.get("survivor", &string_data("k")), Some(string_data("v")));
    member.shutdown();
}

#[test]
fn oversized_frames_close_the_connection_after_authentication_too() {
    let member = start_member(|config| {
        config.limits.max_frame_bytes = 64 << 10;
        // Snapshot chunks travel as one frame: validate() wants them at most half of it.
        config.limits.snapshot_chunk_bytes = 32 << 10;
    });
    let mut client = WireClient::connect(member.address());
    let mut frame = Vec::new();
    frame.extend_from_slice(&(128i32 << 10).to_le_bytes());
    frame.extend_from_slice(&0xc000u16.to_le_bytes());
    client.send_bytes(&frame);
    assert!(client.try_read_message().is_none());
    let mut other = WireClient::connect(member.address());
    other.ping();
    member.shutdown();
}

#[test]
fn silent_clients_are_dropped_after_the_heartbeat_timeout() {
    let member = start_member(|config| config.client_heartbeat_timeout_ms = 1000);
    let mut silent = WireClient::connect(member.address());
    let started = Instant::now();
    assert!(silent.is_closed_by_member());
    assert!(started.elapsed() >= Duration::from_millis(900), "not before the timeout");
    member.shutdown();
}

#[test]
fn a_client_that_does_not_read_is_throttled_and_others_are_served() {
    let member = start_member(|config| config.limits.connection_write_buffer_bytes = 1 << 20);
    let mut writer = WireClient::connect(member.address());
    let key = string_data("big");
    let value = string_data(&"v".repeat(100_000));
    writer.put("flood", &key, &value);
    // Gets of a 100 KB value that the flooder never reads: up to 50 GB of responses if the
    // member kept serving, far beyond any socket buffer; it must stop reading instead.
    let flooder = WireClient::connect(member.address());
    let flood_thread = std::thread::spawn(move || {
        let mut flooder = flooder;
        flooder.stream.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
        let partition = partition_for(Data(&key), 271).0 as i32;
        let mut batch = Vec::new();
        for corr in 0..1000 {
            MapGet { thread_id: 1, name: "flood", key: Data(&key) }.encode(&mut batch, corr, partition, 0);
        }
        for _ in 0..500 {
            if std::io::Write::write_all(&mut flooder.stream, &batch).is_err() {
                return true; // The member stopped reading: our send buffer filled up.
            }
        }
        false
    });
    let throttled = flood_thread.join().unwrap();
    assert!(throttled, "the member stopped reading a client that does not read its responses");
    writer.ping();
    assert_eq!(writer.get("flood", &string_data("big")).map(|v| v.len()), Some(value.len()));
    member.shutdown();
}

/// Pipelines, for every key in turn, twenty sets and then a get, on `map`: each get must see its key's
/// last set, whichever reactor's partition the key is in. Returns the keys that did not.
fn pipelined_sets_then_gets(address: std::net::SocketAddr, map: &str, keys: &[Vec<u8>]) -> Vec<String> {
    const ROUNDS: usize = 20;
    let mut client = WireClient::connect(address);
    let (mut out, mut gets) = (Vec::new(), std::collections::HashMap::new());
    for (index, key) in keys.iter().enumerate() {
        let partition = partition_for(Data(key), 271).0 as i32;
        for round in 0..ROUNDS {
            let value = string_data(&format!("{map}-{round}"));
            let corr = client.correlation_id();
            MapSet { thread_id: 1, ttl: -1, name: map, key: Data(key), value: Data(&value) }
                .encode(&mut out, corr, partition, 0);
        }
        let corr = client.correlation_id();
        gets.insert(corr, index);
        MapGet { thread_id: 1, name: map, key: Data(key) }.encode(&mut out, corr, partition, 0);
    }
    client.send_bytes(&out);
    let last = string_data(&format!("{map}-{}", ROUNDS - 1));
    let mut stale = Vec::new();
    let mut answers = 0;
    while answers < ROUNDS * keys.len() + keys.len() {
        let bytes = client.read_message();
        let message = Message::parse(&bytes).unwrap();
        answers += 1;
        if let Some(index) = gets.remove(&message.correlation_id()) {
            let value = NullableDataResponse::decode(&message).unwrap().response.map(|data| data.0.to_vec());
            if value.as_deref() != Some(&last[..]) {
                stale.push(format!("key {index}: {value:?}"));
            }
        }
    }
    stale
}

/// A reactor runs requests for another reactor's partitions itself when it can take them, and
/// hands them over when that reactor holds them; two connections on two reactors pipelining
/// into every partition mix both. A connection's requests for one partition still run in the
/// order it sent them.
#[test]
fn requests_for_another_reactors_partitions_keep_their_order_run_there_or_handed_over() {
    let member = start_member(|config| {
        config.reactor_threads = 2;
        // Both reactors read (packed placement would keep every connection on one).
        config.io.initial_placement = ferrogrid_config::Placement::LeastConnections;
    });
    let keys: Vec<Vec<u8>> = (0..2000).map(|index| string_data(&format!("ordered-{index}"))).collect();
    let runs: Vec<_> = ["first", "second", "third", "fourth"]
        .into_iter()
        .map(|map| {
            let (address, keys) = (member.address(), keys.clone());
            std::thread::spawn(move || pipelined_sets_then_gets(address, map, &keys))
        })
        .collect();
    for run in runs {
        assert_eq!(run.join().unwrap(), Vec::<String>::new(), "gets that missed an earlier set");
    }
    let probe = |name: &str| -> f64 {
        member.probes().iter().filter(|probe| probe.name == name).map(|probe| probe.value).sum()
    };
    assert!(probe("borrowedOps") > 0.0, "requests ran on the other reactor's partitions where they were read");
    member.shutdown();
}
