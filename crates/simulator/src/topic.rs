//! `TopicTest`: publisher workers publish messages stamped with their send time; listener
//! clients, each subscribed to every topic, measure delivery latency (publish → receipt) and
//! count what they did not receive.
//!
//! # Test file
//! | key | default | meaning |
//! |---|---|---|
//! | `class` | required | `TopicTest` |
//! | `threadCount` | 4 | publisher workers (probe `publishLatency`); worker i publishes on topic `i mod topicCount` |
//! | `listenerCount` | 2 | listener clients (each its own client and connections), each subscribed to every topic |
//! | `topicCount` | 1 | topics `<basename>-0` … |
//! | `valueLength` | 100 | bytes per message (a `byte[]`, type −12); at least 24, the stamp |
//! | `listenerQueueCapacity` | 16 384 | messages each subscription's channel holds; a message that finds it full is dropped and counted |
//! | `basename` | `TopicTest` | topic name prefix |
//! | `logFrequency` | — | accepted |
//! | `probe-publishLatency` | — | `latency` or `hdr`; always recorded |
//!
//! # Messages and what is measured
//! A message's first 24 bytes are its stamp: the send time (nanoseconds since the workload's
//! epoch, an `Instant` of this process: listeners and publishers share one clock, so the test
//! runs in one process), the run's tag (messages of another run are counted as foreign and
//! otherwise ignored), the publisher (the worker index) and its sequence number. The rest is
//! random filler. Delivery latency is the time between the stamp, taken just before the publish
//! request is encoded, and the moment the listener's client read the event (before the channel):
//! it is recorded for messages *sent* inside the measure window, per listener and over all.
//!
//! # Counting what arrived
//! Listeners subscribe before the warm-up; every message published from then on (warm-up
//! included) is expected by every listener. After the publishers stop, the listeners get up to
//! [`DELIVERY_DRAIN`] to catch up; then `lost = expected − received` per listener, where
//! received counts events the client read (also those the full channel then dropped, which
//! are counted apart as `dropped` and have no latency). A publish that failed may or may not
//! have gone out: such messages are not expected, and if they arrive they count as `extra`.
//! A message whose sequence number is not above its publisher's last one counts as
//! `reordered` (or duplicated).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferrogrid_client::{deserialize_bytes, serialize_bytes, Client, MessageListener, Topic, TopicMessage};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::{OperationError, SimulatorError};
use crate::generators::{mix64, Rng};
use crate::properties::Properties;
use crate::stats::{new_histogram, ProbeSummary, MAX_LATENCY_NS};
use crate::test_file::{check_class_keys, MAX_THREADS, MAX_VALUE_LENGTH};

/// The probes of a topic test, in their order in results.
pub const TOPIC_TEST_PROBES: [&str; 1] = ["publishLatency"];
pub const PUBLISH: usize = 0;

const KEYS: [&str; 7] =
    ["threadCount", "listenerCount", "topicCount", "valueLength", "listenerQueueCapacity", "basename", "logFrequency"];
/// Bytes of a message's stamp: send time, run tag, publisher, sequence.
pub const STAMP_BYTES: usize = 24;
/// Largest `listenerCount` (each is a client with its own connections).
pub const MAX_LISTENERS: u32 = 64;
/// Largest `topicCount`.
pub const MAX_TOPICS: u32 = 1_000;
/// Largest `listenerQueueCapacity`.
pub const MAX_LISTENER_QUEUE: u32 = 1 << 20;
/// Bound on the messages all subscriptions' channels may hold together.
const MAX_QUEUED_MESSAGES: u64 = 16 << 20;
/// How long listeners get, after the publishers stop, to receive what was published.
pub const DELIVERY_DRAIN: Duration = Duration::from_secs(10);
/// How often the drain looks at the counts.
const DRAIN_POLL: Duration = Duration::from_millis(10);

/// A topic test as its file defines it.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicTest {
    pub publisher_threads: u32,
    pub listener_count: u32,
    pub topic_count: u32,
    pub value_length: u32,
    pub listener_queue_capacity: u32,
    pub basename: String,
}

impl TopicTest {
    pub const CLASS: &'static str = "TopicTest";

    pub fn from_properties(properties: &Properties) -> Result<TopicTest, SimulatorError> {
        check_class_keys(properties, Self::CLASS, &KEYS, &TOPIC_TEST_PROBES)?;
        let whole = "a whole number";
        let test = TopicTest {
            publisher_threads: properties.parsed_or("threadCount", 4, whole)?,
            listener_count: properties.parsed_or("listenerCount", 2, whole)?,
            topic_count: properties.parsed_or("topicCount", 1, whole)?,
            value_length: properties.parsed_or("valueLength", 100, whole)?,
            listener_queue_capacity: properties.parsed_or("listenerQueueCapacity", 16_384, whole)?,
            basename: properties.get("basename").unwrap_or(Self::CLASS).to_owned(),
        };
        let check =
            |ok: bool, key: &str, expected: &str| if ok { Ok(()) } else { Err(properties.invalid(key, expected)) };
        check((1..=MAX_THREADS).contains(&test.publisher_threads), "threadCount", "1..=10000")?;
        check((1..=MAX_LISTENERS).contains(&test.listener_count), "listenerCount", "1..=64")?;
        check((1..=MAX_TOPICS).contains(&test.topic_count), "topicCount", "1..=1000")?;
        check(
            (STAMP_BYTES as u32..=MAX_VALUE_LENGTH).contains(&test.value_length),
            "valueLength",
            "24 (the stamp) ..= 16 MiB",
        )?;
        check(
            (1..=MAX_LISTENER_QUEUE).contains(&test.listener_queue_capacity),
            "listenerQueueCapacity",
            "1..=1048576",
        )?;
        let queued =
            u64::from(test.listener_count) * u64::from(test.topic_count) * u64::from(test.listener_queue_capacity);
        check(
            queued <= MAX_QUEUED_MESSAGES,
            "listenerQueueCapacity",
            "at most 16 Mi messages queued over all listeners and topics",
        )?;
        check(!test.basename.is_empty(), "basename", "a topic name prefix")?;
        Ok(test)
    }

    pub fn topic_names(&self) -> Vec<String> {
        (0..self.topic_count).map(|index| format!("{}-{index}", self.basename)).collect()
    }

    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "class": Self::CLASS,
            "threadCount": self.publisher_threads,
            "listenerCount": self.listener_count,
            "topicCount": self.topic_count,
            "valueLength": self.value_length,
            "listenerQueueCapacity": self.listener_queue_capacity,
            "basename": self.basename,
        })
    }
}

/// One topic's publishing counts over the whole run.
#[derive(Debug, Default)]
struct Counters {
    published: AtomicU64,
    /// Publishes that failed: the message may or may not have gone out.
    publishes_unknown: AtomicU64,
}

/// A message's stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    sent_ns: u64,
    run_tag: u32,
    publisher: u32,
    sequence: u64,
}

impl Stamp {
    fn write(&self, payload: &mut [u8]) {
        payload[0..8].copy_from_slice(&self.sent_ns.to_be_bytes());
        payload[8..12].copy_from_slice(&self.run_tag.to_be_bytes());
        payload[12..16].copy_from_slice(&self.publisher.to_be_bytes());
        payload[16..24].copy_from_slice(&self.sequence.to_be_bytes());
    }

    fn read(payload: &[u8]) -> Option<Stamp> {
        let field = |range: std::ops::Range<usize>| payload.get(range);
        Some(Stamp {
            sent_ns: u64::from_be_bytes(field(0..8)?.try_into().ok()?),
            run_tag: u32::from_be_bytes(field(8..12)?.try_into().ok()?),
            publisher: u32::from_be_bytes(field(12..16)?.try_into().ok()?),
            sequence: u64::from_be_bytes(field(16..24)?.try_into().ok()?),
        })
    }
}

/// A topic test made runnable: names, the clock messages are stamped by, counters. Shared
/// read-only by every worker and listener task but for the atomics.
#[derive(Debug)]
pub struct TopicData {
    pub test: TopicTest,
    pub names: Vec<String>,
    /// The time stamps count from here.
    epoch: Instant,
    /// Tells this run's messages from others' (a mix of the seed and the start time).
    run_tag: u32,
    /// The message bytes after the stamp.
    filler: Vec<u8>,
    counters: Vec<Counters>,
    /// The measure window, in nanoseconds since `epoch`: [start, end). Empty until set.
    window_start_ns: AtomicU64,
    window_end_ns: AtomicU64,
}

impl TopicData {
    pub fn build(test: &TopicTest, seed: u64) -> TopicData {
        let mut rng = Rng::new(seed);
        let filler = (STAMP_BYTES..test.value_length as usize).map(|_| rng.next_u64() as u8).collect();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        TopicData {
            test: test.clone(),
            names: test.topic_names(),
            epoch: Instant::now(),
            run_tag: mix64(seed ^ now.as_nanos() as u64) as u32,
            filler,
            counters: (0..test.topic_count).map(|_| Counters::default()).collect(),
            window_start_ns: AtomicU64::new(u64::MAX),
            window_end_ns: AtomicU64::new(0),
        }
    }

    /// The topic worker `worker` publishes on.
    pub fn topic_of(&self, worker: u32) -> usize {
        (worker % self.test.topic_count) as usize
    }

    /// Sets the window whose messages' delivery latency is recorded.
    pub fn set_window(&self, start: Instant, end: Instant) {
        self.window_start_ns.store(self.nanos(start), Ordering::Relaxed);
        self.window_end_ns.store(self.nanos(end), Ordering::Relaxed);
    }

    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
    }

    /// The serialized message: stamp, then filler.
    fn message(&self, stamp: Stamp) -> Vec<u8> {
        let mut payload = vec![0u8; STAMP_BYTES + self.filler.len()];
        stamp.write(&mut payload);
        payload[STAMP_BYTES..].copy_from_slice(&self.filler);
        serialize_bytes(&payload)
    }

    /// Publishes message `sequence` of `publisher` on `topic` (index `index`), stamped now.
    pub async fn publish(
        &self,
        topic: &Topic,
        index: usize,
        publisher: u32,
        sequence: u64,
    ) -> Result<(), OperationError> {
        let stamp = Stamp { sent_ns: self.nanos(Instant::now()), run_tag: self.run_tag, publisher, sequence };
        let counters = &self.counters[index];
        match topic.publish(&self.message(stamp)).await {
            Ok(()) => {
                counters.published.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(error) => {
                counters.publishes_unknown.fetch_add(1, Ordering::Relaxed);
                Err(error.into())
            }
        }
    }

    fn published(&self, index: usize) -> u64 {
        self.counters[index].published.load(Ordering::Relaxed)
    }
}

/// What one subscription's task counted.
#[derive(Debug)]
struct Deliveries {
    /// Events of this run that reached the task.
    received: u64,
    /// Events that are not this run's messages (or not messages of this test at all).
    foreign: u64,
    reordered: u64,
    /// Latency of messages sent in the window.
    latency: Histogram<u64>,
    clamped: u64,
    /// The last sequence number seen per publisher (index = publisher, ≤ MAX_THREADS).
    last_sequence: Vec<Option<u64>>,
}

impl Deliveries {
    fn new() -> Deliveries {
        Deliveries {
            received: 0,
            foreign: 0,
            reordered: 0,
            latency: new_histogram(),
            clamped: 0,
            last_sequence: Vec::new(),
        }
    }

    fn on_message(&mut self, data: &TopicData, message: &TopicMessage) {
        let stamp = deserialize_bytes(&message.item)
            .filter(|payload| payload.len() == data.test.value_length as usize)
            .and_then(|payload| Stamp::read(&payload))
            .filter(|stamp| stamp.run_tag == data.run_tag && stamp.publisher < MAX_THREADS);
        let Some(stamp) = stamp else {
            self.foreign += 1;
            return;
        };
        self.received += 1;
        let publisher = stamp.publisher as usize;
        if self.last_sequence.len() <= publisher {
            self.last_sequence.resize(publisher + 1, None);
        }
        if self.last_sequence[publisher].is_some_and(|last| stamp.sequence <= last) {
            self.reordered += 1;
        } else {
            self.last_sequence[publisher] = Some(stamp.sequence);
        }
        let (start, end) = (data.window_start_ns.load(Ordering::Relaxed), data.window_end_ns.load(Ordering::Relaxed));
        if (start..end).contains(&stamp.sent_ns) {
            let sent = data.epoch + Duration::from_nanos(stamp.sent_ns);
            let nanoseconds = u64::try_from(message.received_at.saturating_duration_since(sent).as_nanos())
                .unwrap_or(u64::MAX)
                .max(1);
            self.clamped += u64::from(nanoseconds > MAX_LATENCY_NS);
            self.latency.record(nanoseconds.min(MAX_LATENCY_NS)).expect("within the histogram's bounds");
        }
    }

    fn merge(&mut self, other: Deliveries) {
        self.received += other.received;
        self.foreign += other.foreign;
        self.reordered += other.reordered;
        self.clamped += other.clamped;
        self.latency.add(&other.latency).expect("histograms of equal bounds merge");
    }
}

/// One listener client's subscription to one topic.
#[derive(Debug)]
struct Subscription {
    listener: usize,
    topic_index: usize,
    topic: Topic,
    registration: MessageListener,
    /// Events of this run the task has taken from the channel so far.
    received: Arc<AtomicU64>,
    task: JoinHandle<Deliveries>,
}

impl Subscription {
    /// Events the client read: taken by the task, or dropped at the full channel.
    fn arrived(&self) -> u64 {
        self.received.load(Ordering::Relaxed) + self.registration.dropped()
    }
}

/// The listener clients of a run, subscribed to every topic.
#[derive(Debug)]
pub struct Listeners {
    data: Arc<TopicData>,
    clients: Vec<Client>,
    subscriptions: Vec<Subscription>,
}

impl Listeners {
    /// Subscribes each of `clients` (one per listener) to every topic.
    pub async fn start(data: Arc<TopicData>, clients: Vec<Client>) -> Result<Listeners, SimulatorError> {
        let mut subscriptions = Vec::with_capacity(clients.len() * data.names.len());
        for (listener, client) in clients.iter().enumerate() {
            for (topic_index, name) in data.names.iter().enumerate() {
                let topic = client.topic(name).await?;
                let (registration, messages) = topic.subscribe(data.test.listener_queue_capacity as usize).await?;
                let received = Arc::new(AtomicU64::new(0));
                let task = tokio::spawn(take_deliveries(data.clone(), messages, received.clone()));
                subscriptions.push(Subscription { listener, topic_index, topic, registration, received, task });
            }
        }
        Ok(Listeners { data, clients, subscriptions })
    }

    /// After the publishers stopped: waits up to [`DELIVERY_DRAIN`] for every listener to
    /// receive what was published, removes the listeners, and counts. The listener clients
    /// are shut down.
    pub async fn finish(self) -> Result<TopicOutcome, SimulatorError> {
        let started = Instant::now();
        let deadline = started + DELIVERY_DRAIN;
        let caught_up = |subscription: &Subscription| {
            subscription.arrived() >= self.data.published(subscription.topic_index)
                || !subscription.registration.is_active()
        };
        while !self.subscriptions.iter().all(caught_up) && Instant::now() < deadline {
            tokio::time::sleep(DRAIN_POLL).await;
        }
        let drain_seconds = started.elapsed().as_secs_f64();
        let listener_count = self.clients.len();
        let mut per_listener: Vec<(Deliveries, ListenerCounts)> =
            (0..listener_count).map(|_| (Deliveries::new(), ListenerCounts::default())).collect();
        for subscription in self.subscriptions {
            let Subscription { listener, topic_index, topic, registration, received: _, task } = subscription;
            let counts = &mut per_listener[listener].1;
            counts.expected += self.data.published(topic_index);
            counts.dropped += registration.dropped();
            counts.inactive |= !registration.is_active();
            // Removing the listener closes its channel; the task ends once it has emptied it.
            if registration.is_active() {
                topic.remove_message_listener(registration).await?;
            } else {
                drop(registration);
            }
            let deliveries = task.await.expect("delivery tasks do not panic");
            per_listener[listener].0.merge(deliveries);
        }
        for client in &self.clients {
            client.shutdown().await;
        }
        let publishes_unknown =
            self.data.counters.iter().map(|counters| counters.publishes_unknown.load(Ordering::Relaxed)).sum();
        let published = (0..self.data.names.len()).map(|index| self.data.published(index)).sum();
        Ok(TopicOutcome::of(self.data.names.len() as u32, published, publishes_unknown, per_listener, drain_seconds))
    }
}

impl Listeners {
    /// Shuts the listener clients down without counting (a run that ended early).
    pub async fn close(self) {
        for client in &self.clients {
            client.shutdown().await;
        }
    }
}

/// A subscription's task: takes its messages until the channel closes.
async fn take_deliveries(
    data: Arc<TopicData>,
    mut messages: mpsc::Receiver<TopicMessage>,
    received: Arc<AtomicU64>,
) -> Deliveries {
    let mut deliveries = Deliveries::new();
    while let Some(message) = messages.recv().await {
        deliveries.on_message(&data, &message);
        received.store(deliveries.received, Ordering::Relaxed);
    }
    deliveries
}

/// The counts of one listener over its subscriptions.
#[derive(Debug, Default)]
struct ListenerCounts {
    expected: u64,
    dropped: u64,
    inactive: bool,
}

/// What one listener received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListenerOutcome {
    /// 0-based.
    pub listener: u32,
    /// Messages published while it listened (successful publishes, warm-up included).
    pub expected: u64,
    /// Messages of this run its client read (dropped ones included).
    pub received: u64,
    /// Of those, dropped at its full channel (no latency recorded for them).
    pub dropped: u64,
    /// `expected − received`, if positive.
    pub lost: u64,
    /// `received − expected`, if positive (duplicates, or failed publishes that went out).
    pub extra: u64,
    /// Messages not after their publisher's previous one.
    pub reordered: u64,
    /// Events that were not this run's messages.
    pub foreign: u64,
    /// Its connection closed during the run (the member dropped the registration).
    pub inactive: bool,
    /// Publish → receipt, for messages sent in the measure window.
    pub delivery: ProbeSummary,
    pub clamped_latencies: u64,
}

/// The delivery side of a topic run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicOutcome {
    pub topics: u32,
    /// Successful publishes over the whole run (warm-up included).
    pub published: u64,
    /// Failed publishes (the message may or may not have gone out).
    pub publishes_unknown: u64,
    pub listeners: Vec<ListenerOutcome>,
    /// Delivery latency over every listener.
    pub delivery: ProbeSummary,
    /// Summed over the listeners.
    pub lost: u64,
    pub dropped: u64,
    /// How long the listeners took to catch up after the publishers stopped (at most 10 s).
    pub drain_seconds: f64,
}

impl TopicOutcome {
    fn of(
        topics: u32,
        published: u64,
        publishes_unknown: u64,
        per_listener: Vec<(Deliveries, ListenerCounts)>,
        drain_seconds: f64,
    ) -> TopicOutcome {
        let mut all = new_histogram();
        let mut listeners = Vec::with_capacity(per_listener.len());
        for (index, (deliveries, counts)) in per_listener.into_iter().enumerate() {
            all.add(&deliveries.latency).expect("histograms of equal bounds merge");
            let received = deliveries.received + counts.dropped;
            listeners.push(ListenerOutcome {
                listener: index as u32,
                expected: counts.expected,
                received,
                dropped: counts.dropped,
                lost: counts.expected.saturating_sub(received),
                extra: received.saturating_sub(counts.expected),
                reordered: deliveries.reordered,
                foreign: deliveries.foreign,
                inactive: counts.inactive,
                delivery: ProbeSummary::of(&format!("delivery-{index}"), &deliveries.latency, 0),
                clamped_latencies: deliveries.clamped,
            });
        }
        TopicOutcome {
            topics,
            published,
            publishes_unknown,
            lost: listeners.iter().map(|listener| listener.lost).sum(),
            dropped: listeners.iter().map(|listener| listener.dropped).sum(),
            listeners,
            delivery: ProbeSummary::of("delivery", &all, 0),
            drain_seconds,
        }
    }

    /// A few lines for the terminal.
    pub fn text(&self) -> String {
        let delivery = &self.delivery;
        let mut text = format!(
            "topics: {} published ({} failed); delivery over {} listener(s): p50 {:.0} µs, p99 {:.0} µs, \
             max {:.0} µs; lost {}, dropped by the driver {}",
            self.published,
            self.publishes_unknown,
            self.listeners.len(),
            delivery.p50_us,
            delivery.p99_us,
            delivery.max_us,
            self.lost,
            self.dropped
        );
        for listener in &self.listeners {
            text += &format!(
                "\n  listener {}: expected {}, received {}, lost {}, dropped {}, extra {}, reordered {}, \
                 foreign {}{}; delivery p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
                listener.listener,
                listener.expected,
                listener.received,
                listener.lost,
                listener.dropped,
                listener.extra,
                listener.reordered,
                listener.foreign,
                if listener.inactive { ", connection lost" } else { "" },
                listener.delivery.p50_us,
                listener.delivery.p99_us,
                listener.delivery.max_us
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(text: &str) -> Result<TopicTest, SimulatorError> {
        TopicTest::from_properties(&Properties::parse("topic.properties", text).unwrap())
    }

    fn message_at(data: &TopicData, stamp: Stamp, received_at: Instant) -> TopicMessage {
        TopicMessage { item: data.message(stamp), publish_time_ms: 0, publishing_member: None, received_at }
    }

    #[test]
    fn reads_a_test_file_with_defaults() {
        let defaults = test("class=TopicTest\n").unwrap();
        assert_eq!((defaults.publisher_threads, defaults.listener_count, defaults.topic_count), (4, 2, 1));
        assert_eq!((defaults.value_length, defaults.listener_queue_capacity), (100, 16_384));
        assert_eq!(defaults.topic_names(), ["TopicTest-0"]);
        for (text, needle) in [
            ("class=TopicTest\nvalueLength=23\n", "valueLength=23"),
            ("class=TopicTest\nlistenerCount=0\n", "listenerCount=0"),
            ("class=TopicTest\nlistenerCount=64\ntopicCount=1000\n", "listenerQueueCapacity"),
            ("class=TopicTest\nputProb=0.5\n", "unknown key \"putProb\" for TopicTest"),
        ] {
            let error = test(text).unwrap_err().to_string();
            assert!(error.contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn stamps_round_trip_through_a_message() {
        let data = TopicData::build(&test("class=TopicTest\nvalueLength=40\n").unwrap(), 5);
        let stamp = Stamp { sent_ns: 123_456_789, run_tag: data.run_tag, publisher: 3, sequence: 99 };
        let message = data.message(stamp);
        assert_eq!(message.len(), 12 + 40, "a byte[] blob of valueLength bytes");
        assert_eq!(Stamp::read(&deserialize_bytes(&message).unwrap()), Some(stamp));
    }

    #[test]
    fn deliveries_count_latency_in_the_window_order_and_strangers() {
        let data = TopicData::build(&test("class=TopicTest\nvalueLength=24\n").unwrap(), 5);
        let epoch = data.epoch;
        data.set_window(epoch + Duration::from_secs(1), epoch + Duration::from_secs(2));
        let stamp = |sent_ms: u64, sequence: u64| Stamp {
            sent_ns: sent_ms * 1_000_000,
            run_tag: data.run_tag,
            publisher: 1,
            sequence,
        };
        let mut deliveries = Deliveries::new();
        let receipts = [(500, 1), (1_200, 2), (1_500, 3), (1_400, 3), (2_100, 4)];
        for (sent_ms, sequence) in receipts {
            let received_at = epoch + Duration::from_millis(sent_ms + 7);
            deliveries.on_message(&data, &message_at(&data, stamp(sent_ms, sequence), received_at));
        }
        let stranger = Stamp { run_tag: data.run_tag ^ 1, ..stamp(1_300, 9) };
        deliveries.on_message(&data, &message_at(&data, stranger, epoch));
        let not_ours = TopicMessage {
            item: serialize_bytes(b"hello"),
            publish_time_ms: 0,
            publishing_member: None,
            received_at: epoch,
        };
        deliveries.on_message(&data, &not_ours);
        assert_eq!((deliveries.received, deliveries.foreign, deliveries.reordered), (5, 2, 1));
        assert_eq!(deliveries.latency.len(), 3, "sent at 1.2, 1.5 and 1.4 s: inside the window");
        let latency_ms = deliveries.latency.value_at_quantile(0.5) as f64 / 1e6;
        assert!((latency_ms - 7.0).abs() < 0.01, "{latency_ms}");
    }

    #[test]
    fn the_outcome_counts_lost_and_extra_messages_per_listener() {
        let mut short = Deliveries::new();
        short.received = 90;
        let mut long = Deliveries::new();
        long.received = 101;
        let counts = |dropped| ListenerCounts { expected: 100, dropped, inactive: false };
        let outcome = TopicOutcome::of(1, 100, 0, vec![(short, counts(5)), (long, counts(0))], 0.1);
        let per_listener: Vec<(u64, u64, u64)> =
            outcome.listeners.iter().map(|listener| (listener.received, listener.lost, listener.extra)).collect();
        assert_eq!(per_listener, [(95, 5, 0), (101, 0, 1)]);
        assert_eq!((outcome.lost, outcome.dropped), (5, 5));
        assert!(
            outcome.text().contains("listener 0: expected 100, received 95, lost 5, dropped 5"),
            "{}",
            outcome.text()
        );
    }
}
