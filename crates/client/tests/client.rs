//! The client against a real member: a ferrogrid member started in-process, or the member at
//! `FERROGRID_CLIENT_TEST_ADDRESS` (e.g. Hazelcast 5.6, cluster `dev`); the tests that start
//! and stop members themselves are skipped then.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use ferrogrid_client::{
    deserialize_string, serialize_bytes, serialize_string, AuthenticationStatus, Client, ClientConfig, ClientError,
};
use support::{config, free_port, map_name, skip_with_external_member, start_member, TestMember};
use tokio::task::JoinSet;
use tokio::time::{timeout, Instant};

fn key(index: usize) -> Vec<u8> {
    serialize_string(&format!("key-{index}"))
}

fn value(index: usize) -> Vec<u8> {
    serialize_string(&format!("value-{index}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_with_smart_routing_and_unisocket() {
    let member = TestMember::start();
    for smart_routing in [true, false] {
        let client = Client::connect(config(member.address, smart_routing)).await.expect("connects");
        assert_eq!(client.partition_count(), 271);
        assert_eq!(client.members().len(), 1, "one member listed");
        assert_eq!(client.stats().connections, 1);
        let map = client.map(&map_name("connect")).await.unwrap();
        map.set(&key(1), &value(1)).await.unwrap();
        assert_eq!(map.get(&key(1)).await.unwrap(), Some(value(1)));
        client.shutdown().await;
        assert_eq!(client.stats().connections, 0);
        assert!(matches!(map.get(&key(1)).await, Err(ClientError::Shutdown)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn map_operations_have_imap_semantics() {
    let member = TestMember::start();
    for smart_routing in [true, false] {
        let client = Client::connect(config(member.address, smart_routing)).await.unwrap();
        let map = client.map(&map_name("semantics")).await.unwrap();
        check_single_key_operations(&map).await;
        check_bulk_operations(&map).await;
        client.shutdown().await;
    }
}

async fn check_single_key_operations(map: &ferrogrid_client::Map) {
    let (k, absent) = (serialize_string("k"), serialize_string("absent"));
    assert_eq!(map.get(&absent).await.unwrap(), None);
    assert_eq!(map.put(&k, &serialize_string("v1")).await.unwrap(), None);
    assert_eq!(map.put(&k, &serialize_string("v2")).await.unwrap(), Some(serialize_string("v1")));
    assert_eq!(map.get(&k).await.unwrap().as_deref().and_then(deserialize_string).as_deref(), Some("v2"));
    map.set(&k, &serialize_bytes(&[1, 2, 3])).await.unwrap();
    assert_eq!(map.get(&k).await.unwrap(), Some(serialize_bytes(&[1, 2, 3])));
    assert!(map.contains_key(&k).await.unwrap());
    assert!(!map.contains_key(&absent).await.unwrap());
    assert_eq!(map.size().await.unwrap(), 1);
    assert_eq!(map.remove(&k).await.unwrap(), Some(serialize_bytes(&[1, 2, 3])));
    assert_eq!(map.remove(&k).await.unwrap(), None);
    assert!(!map.contains_key(&k).await.unwrap());
    map.set(&k, &serialize_string("v3")).await.unwrap();
    map.delete(&k).await.unwrap();
    map.delete(&absent).await.unwrap();
    assert_eq!(map.get(&k).await.unwrap(), None);
    assert_eq!(map.size().await.unwrap(), 0);
    let previous = map.put_with_ttl(&k, &serialize_string("short-lived"), Duration::from_secs(1)).await.unwrap();
    assert_eq!(previous, None);
    assert_eq!(map.get(&k).await.unwrap(), Some(serialize_string("short-lived")));
    let expired_by = Instant::now() + Duration::from_secs(10);
    while map.get(&k).await.unwrap().is_some() {
        assert!(Instant::now() < expired_by, "an entry with a 1 s TTL is gone within 10 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn check_bulk_operations(map: &ferrogrid_client::Map) {
    map.put_all(Vec::new()).await.unwrap();
    assert_eq!(map.get_all(&[]).await.unwrap(), Vec::new());
    let entries: Vec<_> = (0..300).map(|index| (key(index), value(index))).collect();
    map.put_all(entries).await.unwrap();
    assert_eq!(map.size().await.unwrap(), 300);
    let keys: Vec<_> = (250..350).map(key).collect();
    let found: HashMap<_, _> = map.get_all(&keys).await.unwrap().into_iter().collect();
    let expected: HashMap<_, _> = (250..300).map(|index| (key(index), value(index))).collect();
    assert_eq!(found, expected, "get_all returns exactly the keys that exist");
    map.put_all(vec![(key(0), value(1000))]).await.unwrap();
    assert_eq!(map.get(&key(0)).await.unwrap(), Some(value(1000)), "put_all overwrites");
    map.clear().await.unwrap();
    assert_eq!(map.size().await.unwrap(), 0);
    assert_eq!(map.get(&key(1)).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_gets_from_64_tasks_all_succeed() {
    const KEYS: usize = 1000;
    const TASKS: usize = 64;
    const GETS: usize = 10_000;
    let member = TestMember::start();
    let client = Client::connect(config(member.address, true)).await.unwrap();
    let map = client.map(&map_name("concurrent")).await.unwrap();
    map.put_all((0..KEYS).map(|index| (key(index), value(index))).collect()).await.unwrap();
    let mut tasks = JoinSet::new();
    for task in 0..TASKS {
        let map = map.clone();
        tasks.spawn(async move {
            let mut gets = JoinSet::new();
            for get in (task..GETS).step_by(TASKS) {
                let map = map.clone();
                gets.spawn(async move { (get, map.get(&key(get % KEYS)).await) });
            }
            let mut answered = 0;
            while let Some(joined) = gets.join_next().await {
                let (get, result) = joined.unwrap();
                assert_eq!(result.expect("get succeeds"), Some(value(get % KEYS)), "get {get} got its own answer");
                answered += 1;
            }
            answered
        });
    }
    let mut answered = 0;
    while let Some(joined) = tasks.join_next().await {
        answered += joined.unwrap();
    }
    assert_eq!(answered, GETS);
    let stats = client.stats();
    assert_eq!(stats.in_flight, 0, "every request was answered");
    assert_eq!(stats.unmatched_responses, 0, "no response arrived twice or for an unknown id");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_cluster_name_fails_with_a_clear_error() {
    let member = TestMember::start();
    let config = ClientConfig { cluster_name: "not-this-cluster".into(), ..config(member.address, true) };
    let started = Instant::now();
    let error = Client::connect(config).await.expect_err("refused");
    assert!(
        matches!(
            &error,
            ClientError::Authentication { status: AuthenticationStatus::CredentialsFailed, cluster_name, .. }
                if cluster_name == "not-this-cluster"
        ),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.contains("not-this-cluster") && text.contains("wrong cluster name"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(2), "refused at once, without retrying");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invocations_fail_within_a_bounded_time_when_the_member_shuts_down() {
    if skip_with_external_member("invocations_fail_within_a_bounded_time_when_the_member_shuts_down") {
        return;
    }
    let mut member = TestMember::start();
    let config = ClientConfig { invocation_timeout: Duration::from_secs(2), ..config(member.address, true) };
    let client = Client::connect(config).await.unwrap();
    let map = client.map(&map_name("shutdown")).await.unwrap();
    map.set(&key(1), &value(1)).await.unwrap();
    let mut load = JoinSet::new();
    for task in 0..16 {
        let map = map.clone();
        load.spawn(async move {
            loop {
                let result = if task % 2 == 0 {
                    map.get(&key(task)).await.map(drop)
                } else {
                    map.set(&key(task), &value(task)).await
                };
                if let Err(error) = result {
                    return error;
                }
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    tokio::task::spawn_blocking(move || member.shutdown()).await.unwrap();
    let stopped = Instant::now();
    let errors = timeout(Duration::from_secs(10), async {
        let mut errors = Vec::new();
        while let Some(joined) = load.join_next().await {
            errors.push(joined.unwrap());
        }
        errors
    })
    .await
    .expect("every in-flight caller gets an error within 10 s");
    assert_eq!(errors.len(), 16);
    assert!(
        errors.iter().all(|error| matches!(error, ClientError::Timeout { .. } | ClientError::ConnectionClosed { .. })),
        "{errors:?}"
    );
    let new_call = timeout(Duration::from_secs(5), map.get(&key(1))).await.expect("a new call fails within 5 s");
    assert!(matches!(new_call, Err(ClientError::Timeout { .. })), "{new_call:?}");
    assert!(stopped.elapsed() < Duration::from_secs(15));
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_to_a_member_started_after_a_failed_attempt() {
    if skip_with_external_member("connects_to_a_member_started_after_a_failed_attempt") {
        return;
    }
    let port = free_port();
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let config = ClientConfig { connect_timeout: Duration::from_secs(10), ..config(address, true) };
    let connecting = tokio::spawn(Client::connect(config));
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!connecting.is_finished(), "still trying while nothing listens");
    let member = tokio::task::spawn_blocking(move || start_member(port, false)).await.unwrap();
    let client =
        timeout(Duration::from_secs(10), connecting).await.unwrap().unwrap().expect("connects once the member is up");
    let map = client.map(&map_name("late")).await.unwrap();
    assert_eq!(map.put(&key(1), &value(1)).await.unwrap(), None);
    client.shutdown().await;
    tokio::task::spawn_blocking(move || member.shutdown()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_gives_up_after_the_connect_timeout() {
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()));
    let config = ClientConfig { connect_timeout: Duration::from_secs(1), ..config(address, true) };
    let started = Instant::now();
    let error = Client::connect(config).await.expect_err("nothing listens");
    assert!(matches!(error, ClientError::ConnectFailed { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "gave up after {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_when_the_member_comes_back() {
    if skip_with_external_member("reconnects_when_the_member_comes_back") {
        return;
    }
    let port = free_port();
    let member = start_member(port, false);
    let config = ClientConfig { invocation_timeout: Duration::from_secs(15), ..config(member.address(), true) };
    let client = Client::connect(config).await.unwrap();
    let map = client.map(&map_name("restart")).await.unwrap();
    map.set(&key(1), &value(1)).await.unwrap();
    let before = client.members();
    tokio::task::spawn_blocking(move || member.shutdown()).await.unwrap();
    let restarted = tokio::task::spawn_blocking(move || start_member(port, false)).await.unwrap();
    // A read is retried until a connection to the restarted (empty) member is up.
    assert_eq!(map.get(&key(1)).await.unwrap(), None, "the new member starts empty");
    map.set(&key(1), &value(2)).await.unwrap();
    assert_eq!(map.get(&key(1)).await.unwrap(), Some(value(2)));
    let after = client.members();
    assert_eq!(after.len(), 1);
    assert_ne!(after[0].uuid, before[0].uuid, "the view follows the new member");
    client.shutdown().await;
    tokio::task::spawn_blocking(move || restarted.shutdown()).await.unwrap();
}
