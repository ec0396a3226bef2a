//! A unisocket client's listener covers the cluster: its member relays the registration to
//! every other member. When the client's connection closes, its member and the others drop
//! the registration at once (not at the next event, which may never come).

mod support;

use ferrogrid_member::Member;
use ferrogrid_protocol::codec::{QueueAddListener, UuidResponse};
use ferrogrid_protocol::Message;
use std::time::{Duration, Instant};
use support::{start_cluster, WireClient};

/// The listeners `member` counts on queue `name` (0 when it has no figures for it).
fn queue_listeners(member: &Member, name: &str) -> f64 {
    let probes = member.probes();
    let listeners =
        probes.iter().find(|probe| probe.name == "listeners" && probe.labels.iter().any(|(_, value)| value == name));
    listeners.map_or(0.0, |probe| probe.value)
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !done() {
        assert!(Instant::now() < deadline, "not within 15 s: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_gone_clients_relayed_listeners_are_dropped_on_every_member() {
    let members = start_cluster(2, |_, _| {});
    let mut client = WireClient::connect(members[0].address());
    let correlation_id = client.correlation_id();
    let mut out = Vec::new();
    QueueAddListener { include_value: true, local_only: false, name: "jobs" }.encode(&mut out, correlation_id, -1, 0);
    client.send_bytes(&out);
    let answer = client.response_to(correlation_id);
    UuidResponse::decode(&Message::parse(&answer).unwrap()).expect("registered");
    wait_for("the registration on both members", || {
        members.iter().all(|member| queue_listeners(member, "jobs") == 1.0)
    });
    drop(client);
    wait_for("the registration dropped on both members", || {
        members.iter().all(|member| queue_listeners(member, "jobs") == 0.0)
    });
    for member in members {
        member.shutdown();
    }
}
