//! Short QueueTest and TopicTest runs (seconds) against a ferrogrid member started in-process:
//! the counts must add up, and an item or message the test did not send must be noticed.

use std::path::PathBuf;
use std::time::Duration;

use ferrogrid_client::{serialize_bytes, serialize_string, Client, ClientConfig};
use ferrogrid_config::MemberConfig;
use ferrogrid_member::Member;
use ferrogrid_simulator::properties::Properties;
use ferrogrid_simulator::runner::{self, RunSettings, Target};
use ferrogrid_simulator::{RunResult, SimulatorError, TestDefinition};

fn start_member(port: u16) -> Member {
    let mut config = MemberConfig::default();
    config.network.port = port;
    config.network.port_count = 500;
    config.reactor_threads = 2;
    config.metrics.file = None;
    config.metrics.http_enabled = false;
    config.io.balancer_interval_seconds = -1;
    Member::start(config).expect("member starts")
}

fn scratch_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("ferrogrid-simulator-queue-topic-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

fn settings() -> RunSettings {
    RunSettings {
        threads: None,
        clients: 2,
        warmup: Duration::from_secs(1),
        duration: Duration::from_secs(2),
        rate: None,
        seed: 11,
        smart_routing: true,
        credentials: Default::default(),
        coordinated: false,
    }
}

fn definition(text: &str) -> TestDefinition {
    TestDefinition::from_properties(&Properties::parse("test", text).unwrap()).unwrap()
}

fn read_result(directory: &std::path::Path) -> RunResult {
    let text = std::fs::read_to_string(directory.join("result.json")).expect("result.json written");
    serde_json::from_str(&text).expect("result.json parses")
}

/// Runs `test` on `member`, offering one item of another length into `queue` half-way through
/// when `intruder` names one.
async fn run_queue_test(
    member: &Member,
    test: &TestDefinition,
    name: &str,
    intruder: Option<&str>,
) -> (PathBuf, Result<RunResult, SimulatorError>) {
    let target = Target::Existing { addresses: vec![member.address()], server_pids: vec![std::process::id()] };
    let directory = scratch_directory(name);
    let intrusion = intruder.map(|queue| {
        let (address, queue) = (member.address(), queue.to_owned());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            let client =
                Client::connect(ClientConfig { addresses: vec![address], ..Default::default() }).await.unwrap();
            assert!(client.queue(&queue).await.unwrap().offer(&serialize_string("intruder")).await.unwrap());
            client.shutdown().await;
        })
    });
    let result = runner::run_once(test, &target, &settings(), 1, 1, &directory).await;
    if let Some(intrusion) = intrusion {
        intrusion.await.unwrap();
    }
    (directory, result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_runs_balance_and_notice_an_item_they_did_not_offer() {
    let member = start_member(18_901);
    let test = definition(
        "class=QueueTest\nproducerThreadCount=4\nconsumerThreadCount=3\nqueueCount=2\nvalueLength=64\n\
         maxBacklog=500\nbasename=simulated\n",
    );
    let (directory, result) = run_queue_test(&member, &test, "queue", None).await;
    let result = result.expect("a clean run passes its check");
    let written = read_result(&directory);
    assert_eq!((written.ops, &written.outcome.queue), (result.ops, &result.outcome.queue), "result.json holds the run");
    assert_eq!((result.threads, result.errors), (7, 0), "{:?}", result.error_messages);
    let names: Vec<&str> = result.probes.iter().map(|probe| probe.name.as_str()).collect();
    assert!(names.starts_with(&["offerLatency", "pollLatency"]), "{names:?}");
    let queue = result.outcome.queue.as_ref().expect("a queue outcome");
    assert!(queue.balanced && queue.offered > 1_000 && queue.polled > 1_000, "{queue:?}");
    assert_eq!(queue.offered, queue.polled + queue.left, "{queue:?}");
    assert!(queue.left <= 2 * 500, "the backlog bound holds per queue: {queue:?}");
    assert_eq!((queue.offers_unknown, queue.polls_unknown, queue.foreign), (0, 0, 0));
    assert!(result.outcome.topic.is_none());

    // An item the test did not offer is polled (foreign) or left behind: either way the
    // counts no longer add up, the run fails, and result.json says why.
    let (directory, result) = run_queue_test(&member, &test, "intruded", Some("simulated-1")).await;
    let error = result.expect_err("an intruding item fails the check").to_string();
    assert!(error.contains("end-of-run check failed") && error.contains("NOT BALANCED"), "{error}");
    let queue = read_result(&directory).outcome.queue.expect("a queue outcome");
    assert!(!queue.balanced && queue.offered + 1 == queue.polled + queue.left, "{queue:?}");
    assert_eq!(queue.unbalanced_queues, ["simulated-1"]);
    for name in ["queue", "intruded"] {
        let _ = std::fs::remove_dir_all(scratch_directory(name));
    }
    member.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_runs_deliver_every_message_to_every_listener() {
    let member = start_member(19_401);
    let test =
        definition("class=TopicTest\nthreadCount=3\nlistenerCount=3\ntopicCount=2\nvalueLength=48\nbasename=news\n");
    let target = Target::Existing { addresses: vec![member.address()], server_pids: vec![std::process::id()] };
    let directory = scratch_directory("topic");
    // A message of someone else on one of the topics: counted as foreign, not as a delivery.
    let address = member.address();
    let stranger = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let client = Client::connect(ClientConfig { addresses: vec![address], ..Default::default() }).await.unwrap();
        client.topic("news-1").await.unwrap().publish(&serialize_bytes(b"not a stamped message")).await.unwrap();
        client.shutdown().await;
    });
    let result = runner::run_once(&test, &target, &settings(), 1, 1, &directory).await.unwrap();
    stranger.await.unwrap();
    let written = read_result(&directory).outcome.topic.expect("result.json holds the deliveries");
    let received = |topic: &ferrogrid_simulator::topic::TopicOutcome| {
        topic.listeners.iter().map(|listener| listener.received).collect::<Vec<_>>()
    };
    assert_eq!((result.threads, result.errors), (3, 0), "{:?}", result.error_messages);
    assert_eq!(result.probes.iter().map(|probe| probe.name.as_str()).collect::<Vec<_>>(), ["publishLatency"]);
    let topic = result.outcome.topic.as_ref().expect("a topic outcome");
    assert_eq!((written.published, received(&written)), (topic.published, received(topic)));
    assert!(topic.published > 1_000, "{}", topic.published);
    assert_eq!((topic.topics, topic.publishes_unknown, topic.lost, topic.dropped), (2, 0, 0, 0));
    assert_eq!(topic.listeners.len(), 3);
    for listener in &topic.listeners {
        assert_eq!((listener.expected, listener.received), (topic.published, topic.published), "{listener:?}");
        assert_eq!((listener.extra, listener.reordered, listener.foreign), (0, 0, 1), "{listener:?}");
        assert!(!listener.inactive);
        let delivery = &listener.delivery;
        assert!(delivery.count > 0 && delivery.count < listener.received, "only the window's messages are timed");
        assert!(0.0 < delivery.p50_us && delivery.p50_us <= delivery.p99_us && delivery.p99_us <= delivery.max_us);
    }
    let merged: u64 = topic.listeners.iter().map(|listener| listener.delivery.count).sum();
    assert_eq!(topic.delivery.count, merged);
    assert!(topic.drain_seconds < 10.0, "the listeners caught up: {}", topic.drain_seconds);
    let _ = std::fs::remove_dir_all(&directory);
    member.shutdown();
}
