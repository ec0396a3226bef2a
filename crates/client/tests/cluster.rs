//! Three ferrogrid members in this process form a cluster; the Rust client (smart and
//! unisocket) writes through them while members crash (stopped without leaving: their links
//! drop and their ports refuse, as after `kill -9`) or leave gracefully. The multi-process
//! versions with the official Python client are in `tests/python/cluster/`.

mod support;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use ferrogrid_client::{serialize_string, Client};
use ferrogrid_config::MemberConfig;
use ferrogrid_member::Member;
use support::{config, free_port, map_name, skip_with_external_member};
use tokio::time::Instant;

const ENTRIES: usize = 3_000;

/// Starts `count` members that list each other, concurrently (as a cluster is started).
fn start_cluster(count: usize) -> Vec<Member> {
    start_cluster_with(count, |_| {})
}

fn start_cluster_with(count: usize, customize: fn(&mut MemberConfig)) -> Vec<Member> {
    // FERROGRID_LOG=info shows the members' logs.
    if let Ok(filter) = std::env::var("FERROGRID_LOG") {
        let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
    }
    let ports: Vec<u16> = (0..count).map(|_| free_port()).collect();
    let seeds: Vec<String> = ports.iter().map(|port| format!("127.0.0.1:{port}")).collect();
    let threads: Vec<_> = ports
        .iter()
        .map(|port| {
            let mut config = MemberConfig::default();
            config.network.port = *port;
            config.network.port_auto_increment = false;
            config.network.member_list = seeds.clone();
            config.reactor_threads = 2;
            // Both reactors read, so requests also cross between them (packed placement keeps
            // every connection on one reactor until it saturates).
            config.io.initial_placement = ferrogrid_config::Placement::LeastConnections;
            config.metrics.enabled = false;
            config.io.balancer_interval_seconds = -1;
            config.cluster.heartbeat_interval_ms = 200;
            config.cluster.max_no_heartbeat_ms = 3_000;
            config.cluster.join_wait_ms = 500;
            customize(&mut config);
            std::thread::spawn(move || Member::start(config).expect("member starts"))
        })
        .collect();
    threads.into_iter().map(|thread| thread.join().expect("start thread")).collect()
}

fn entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..ENTRIES).map(|i| (serialize_string(&format!("k{i}")), serialize_string(&format!("v{i}")))).collect()
}

async fn wait_for_members(client: &Client, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.members().len() != count {
        assert!(Instant::now() < deadline, "the client saw {} members, not {count}", client.members().len());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn assert_all_present(client: &Client, name: &str, expected: &[(Vec<u8>, Vec<u8>)]) {
    let map = client.map(name).await.unwrap();
    let keys: Vec<Vec<u8>> = expected.iter().map(|(key, _)| key.clone()).collect();
    let found: HashMap<Vec<u8>, Vec<u8>> = map.get_all(&keys).await.unwrap().into_iter().collect();
    let missing = expected.iter().filter(|(key, value)| found.get(key) != Some(value)).count();
    assert_eq!(missing, 0, "{missing} of {} acknowledged entries lost or wrong", expected.len());
    assert_eq!(map.size().await.unwrap(), expected.len());
}

fn addresses(members: &[Member]) -> Vec<SocketAddr> {
    members.iter().map(Member::address).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_two_crashes_one_after_the_other() {
    if skip_with_external_member("acknowledged_writes_survive_two_crashes_one_after_the_other") {
        return;
    }
    let mut members = start_cluster(3);
    for smart_routing in [true, false] {
        let mut client_config = config(members[0].address(), smart_routing);
        client_config.addresses = addresses(&members);
        let client = Client::connect(client_config).await.expect("connects");
        wait_for_members(&client, members.len()).await;
        let name = map_name("crash");
        let map = client.map(&name).await.unwrap();
        let expected = entries();
        map.put_all(expected.clone()).await.unwrap();
        if members.len() == 3 {
            // The master crashes first, then (once the backups are re-created) another member.
            let master = members.remove(0);
            tokio::task::spawn_blocking(move || master.shutdown()).await.unwrap();
            wait_for_members(&client, 2).await;
            assert_all_present(&client, &name, &expected).await;
            tokio::time::sleep(Duration::from_secs(2)).await;
            let second = members.remove(0);
            tokio::task::spawn_blocking(move || second.shutdown()).await.unwrap();
            wait_for_members(&client, 1).await;
        }
        assert_all_present(&client, &name, &expected).await;
        client.shutdown().await;
    }
    for member in members {
        member.shutdown();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaving_member_hands_its_partitions_off_and_wide_operations_span_the_cluster() {
    if skip_with_external_member("a_leaving_member_hands_its_partitions_off") {
        return;
    }
    let mut members = start_cluster(3);
    // A unisocket client on the member that will stay: every request for another member's
    // partitions is forwarded.
    let client = Client::connect(config(members[2].address(), false)).await.expect("connects");
    wait_for_members(&client, 3).await;
    let name = map_name("leave");
    let map = client.map(&name).await.unwrap();
    let expected = entries();
    map.put_all(expected.clone()).await.unwrap();
    assert_eq!(map.size().await.unwrap(), ENTRIES, "size counts every member's partitions once");
    let leaver = members.remove(1);
    tokio::task::spawn_blocking(move || leaver.leave(Duration::from_secs(30))).await.unwrap();
    wait_for_members(&client, 2).await;
    assert_all_present(&client, &name, &expected).await;
    map.clear().await.unwrap();
    assert_eq!(map.size().await.unwrap(), 0, "clear reaches every member");
    client.shutdown().await;
    for member in members {
        member.shutdown();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_stay_isolated_across_members_backups_and_failover() {
    if skip_with_external_member("tenants_stay_isolated_across_members_backups_and_failover") {
        return;
    }
    let mut members = start_cluster_with(3, |config| {
        use ferrogrid_config::TenantConfig;
        config.tenants.tenants = vec![TenantConfig::new("a", "alice", "pa"), TenantConfig::new("b", "bob", "pb")];
    });
    let connect = |address, user: &str, password: &str| {
        let mut config = config(address, false);
        config.username = Some(user.into());
        config.password = Some(password.into());
        Client::connect(config)
    };
    // Unisocket clients on different members: most requests are forwarded to their owners.
    let alice = connect(members[2].address(), "alice", "pa").await.expect("alice connects");
    let bob = connect(members[1].address(), "bob", "pb").await.expect("bob connects");
    wait_for_members(&alice, 3).await;
    let a_map = alice.map("orders").await.unwrap();
    let b_map = bob.map("orders").await.unwrap();
    let expected = entries();
    a_map.put_all(expected.clone()).await.unwrap();
    assert_eq!(b_map.size().await.unwrap(), 0, "bob's orders is another map");
    assert_eq!(b_map.get(&expected[0].0).await.unwrap(), None);
    b_map.put_all(vec![(expected[0].0.clone(), serialize_string("bob's"))]).await.unwrap();
    // The owner of many of alice's partitions crashes: backups take over, still per tenant.
    let crashed = members.remove(0);
    tokio::task::spawn_blocking(move || crashed.shutdown()).await.unwrap();
    wait_for_members(&alice, 2).await;
    assert_all_present(&alice, "orders", &expected).await;
    assert_eq!(b_map.size().await.unwrap(), 1);
    assert_eq!(b_map.get(&expected[0].0).await.unwrap(), Some(serialize_string("bob's")));
    b_map.clear().await.unwrap();
    assert_eq!(a_map.size().await.unwrap(), ENTRIES, "bob's clear leaves alice's map alone");
    alice.shutdown().await;
    bob.shutdown().await;
    for member in members {
        member.shutdown();
    }
}
