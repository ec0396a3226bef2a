//! Retries, timeouts and heartbeats against a scripted member (`support/fake.rs`), which can
//! fail on demand in the ways client-protocol.md §3.4 and §7.6 describe.

mod support;

use std::collections::HashSet;
use std::time::Duration;

use ferrogrid_client::{serialize_string, Client, ClientConfig, ClientError};
use ferrogrid_protocol::codec::{MapGet, MapSet};
use support::fake::FakeMember;
use tokio::time::Instant;

fn config(fake: &FakeMember) -> ClientConfig {
    ClientConfig { addresses: vec![fake.address], invocation_timeout: Duration::from_secs(5), ..Default::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retryable_error_codes_are_retried_with_fresh_correlation_ids() {
    let fake = FakeMember::start().await;
    let client = Client::connect(config(&fake)).await.unwrap();
    let map = client.map("retry").await.unwrap();
    fake.script(|script| script.errors.extend([46, 62, 19]));
    let started = Instant::now();
    assert_eq!(map.get(&serialize_string("k")).await.unwrap(), None);
    assert!(started.elapsed() >= Duration::from_millis(700), "paused 100 + 200 + 400 ms between attempts");
    let received = fake.received();
    assert_eq!(received.len(), 4);
    assert!(received.iter().all(|request| request.message_type == MapGet::TYPE));
    assert!(received
        .iter()
        .all(|request| request.partition_id == i32::from(client.partition_of(&serialize_string("k")).0)));
    let ids: HashSet<_> = received.iter().map(|request| request.correlation_id).collect();
    assert_eq!(ids.len(), 4, "each attempt has its own correlation id");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_error_codes_fail_at_once_with_the_server_error() {
    let fake = FakeMember::start().await;
    let client = Client::connect(config(&fake)).await.unwrap();
    let map = client.map("final").await.unwrap();
    fake.script(|script| script.errors.extend([61]));
    let error = map.set(&serialize_string("k"), &serialize_string("v")).await.unwrap_err();
    let ClientError::Server { code, class_name, message } = &error else { panic!("{error:?}") };
    assert_eq!(
        (*code, class_name.as_str(), message.as_deref()),
        (61, "com.example.InjectedException", Some("injected"))
    );
    assert_eq!(error.server_code(), Some(61));
    // Target disconnected (52): final for a write, retried for a read.
    fake.script(|script| script.errors.extend([52]));
    let error = map.put(&serialize_string("k"), &serialize_string("v")).await.unwrap_err();
    assert_eq!(error.server_code(), Some(52));
    fake.script(|script| script.errors.extend([52]));
    assert_eq!(map.get(&serialize_string("k")).await.unwrap(), None);
    assert_eq!(fake.received().len(), 4);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_lost_with_its_connection_fails_but_a_read_is_retried_after_reconnecting() {
    let fake = FakeMember::start().await;
    let client = Client::connect(config(&fake)).await.unwrap();
    let map = client.map("lost").await.unwrap();
    fake.script(|script| script.close_on_next = 1);
    let error = map.set(&serialize_string("k"), &serialize_string("v")).await.unwrap_err();
    assert!(matches!(error, ClientError::ConnectionClosed { address } if address == fake.address), "{error:?}");
    fake.script(|script| script.close_on_next = 1);
    assert_eq!(map.get(&serialize_string("k")).await.unwrap(), None, "the read is sent again on a new connection");
    let received = fake.received();
    assert_eq!(received.iter().map(|r| r.message_type).collect::<Vec<_>>(), [MapSet::TYPE, MapGet::TYPE, MapGet::TYPE]);
    assert_eq!(client.stats().connections_opened, 3, "reconnected after each loss");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_request_fails_at_the_invocation_timeout() {
    let fake = FakeMember::start().await;
    let config = ClientConfig { invocation_timeout: Duration::from_secs(1), ..config(&fake) };
    let client = Client::connect(config).await.unwrap();
    let map = client.map("silent").await.unwrap();
    fake.script(|script| script.silent = true);
    let started = Instant::now();
    let error = map.get(&serialize_string("k")).await.unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        matches!(&error, ClientError::Timeout { last, .. } if matches!(**last, ClientError::NoResponse)),
        "{error:?}"
    );
    assert!(elapsed >= Duration::from_secs(1) && elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert_eq!(client.stats().in_flight, 1, "the request stays pending until answered or its connection closes");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_keep_a_quiet_connection_and_drop_a_silent_one() {
    let fake = FakeMember::start().await;
    let config = ClientConfig {
        heartbeat_interval: Duration::from_millis(100),
        heartbeat_timeout: Duration::from_millis(600),
        ..config(&fake)
    };
    let client = Client::connect(config).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(client.stats().connections_opened, 1, "answered pings keep the connection");
    fake.script(|script| script.ignore_pings = true);
    let deadline = Instant::now() + Duration::from_secs(5);
    while client.stats().connections_opened < 2 {
        assert!(Instant::now() < deadline, "a connection silent for 600 ms is closed and replaced");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(fake.connections() >= 2);
    client.shutdown().await;
}
