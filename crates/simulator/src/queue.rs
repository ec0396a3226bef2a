//! `QueueTest`: producer workers offer items, consumer workers poll them, over one or more
//! queues; the run ends with a check that nothing was lost or made up.
//!
//! # Test file
//! | key | default | meaning |
//! |---|---|---|
//! | `class` | required | `QueueTest` |
//! | `producerThreadCount` | 4 | workers that offer (probe `offerLatency`) |
//! | `consumerThreadCount` | 4 | workers that poll (probe `pollLatency` when a poll returns an item, `emptyPollLatency` when it returns none) |
//! | `queueCount` | 1 | queues `<basename>-0` … ; producer i and consumer i use queue `i mod queueCount`, so each count must be at least `queueCount` |
//! | `valueLength` | 100 | bytes per item (a `byte[]`, type −12) |
//! | `pollTimeoutMs` | 0 | 0: `poll()` answers at once; above 0: `poll(timeout)` waits that long for an item |
//! | `maxBacklog` | 10 000 | items a queue may hold (by the driver's count): a producer waits, unmeasured in closed loop, while its queue holds this many |
//! | `basename` | `QueueTest` | queue name prefix |
//! | `logFrequency` | — | accepted; progress is printed every second |
//! | `probe-<name>` | — | `latency` or `hdr` for the three probes; all are always recorded |
//!
//! # The end-of-run check
//! Over the whole run (warm-up included) the workers count offers the member accepted,
//! polls that returned an item, and operations whose outcome is unknown (an error: the member
//! may or may not have applied it). At the end, every queue's `size()` is read and
//! `polled + left` must equal `offered`, give or take the unknown outcomes: a lost or
//! duplicated item fails the run (after `result.json` is written).
//!
//! # Shared state
//! The per-queue counters are the only state workers share (atomics); the backlog bound
//! reads them, so it holds only as well as the driver can count (it does not see other
//! clients' items).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ferrogrid_client::{serialize_bytes, Queue};
use serde::{Deserialize, Serialize};

pub use crate::error::QueueError;
use crate::error::{OperationError, SimulatorError};
use crate::generators::Rng;
use crate::properties::Properties;
use crate::test_file::{check_class_keys, MAX_THREADS, MAX_VALUE_LENGTH};

/// The probes of a queue test, in their order in results.
pub const QUEUE_TEST_PROBES: [&str; 3] = ["offerLatency", "pollLatency", "emptyPollLatency"];
pub const OFFER: usize = 0;
pub const POLL: usize = 1;
pub const EMPTY_POLL: usize = 2;

const KEYS: [&str; 8] = [
    "producerThreadCount",
    "consumerThreadCount",
    "queueCount",
    "valueLength",
    "pollTimeoutMs",
    "maxBacklog",
    "basename",
    "logFrequency",
];
/// Largest `queueCount`.
pub const MAX_QUEUES: u32 = 1_000;
/// Largest `pollTimeoutMs` (below the driver's invocation timeout, so a waiting poll is not
/// an error).
pub const MAX_POLL_TIMEOUT_MS: u32 = 10_000;
/// Largest `maxBacklog`: items held by one queue.
pub const MAX_BACKLOG: u32 = 10_000_000;
/// Distinct item values kept in memory (producers pick one per offer).
const VALUE_POOL: usize = 64;
/// How long a producer sleeps while its queue is at the backlog bound.
const BACKLOG_PAUSE: Duration = Duration::from_millis(1);

/// A queue test as its file defines it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueTest {
    pub producer_threads: u32,
    pub consumer_threads: u32,
    pub queue_count: u32,
    pub value_length: u32,
    pub poll_timeout_ms: u32,
    pub max_backlog: u32,
    pub basename: String,
}

impl QueueTest {
    pub const CLASS: &'static str = "QueueTest";

    pub fn from_properties(properties: &Properties) -> Result<QueueTest, SimulatorError> {
        check_class_keys(properties, Self::CLASS, &KEYS, &QUEUE_TEST_PROBES)?;
        let whole = "a whole number";
        let test = QueueTest {
            producer_threads: properties.parsed_or("producerThreadCount", 4, whole)?,
            consumer_threads: properties.parsed_or("consumerThreadCount", 4, whole)?,
            queue_count: properties.parsed_or("queueCount", 1, whole)?,
            value_length: properties.parsed_or("valueLength", 100, whole)?,
            poll_timeout_ms: properties.parsed_or("pollTimeoutMs", 0, whole)?,
            max_backlog: properties.parsed_or("maxBacklog", 10_000, whole)?,
            basename: properties.get("basename").unwrap_or(Self::CLASS).to_owned(),
        };
        let check =
            |ok: bool, key: &str, expected: &str| if ok { Ok(()) } else { Err(properties.invalid(key, expected)) };
        check((1..=MAX_QUEUES).contains(&test.queue_count), "queueCount", "1..=1000")?;
        let threads = format!("{}..=10000 (at least queueCount: every queue needs both roles)", test.queue_count);
        check((test.queue_count..=MAX_THREADS).contains(&test.producer_threads), "producerThreadCount", &threads)?;
        check((test.queue_count..=MAX_THREADS).contains(&test.consumer_threads), "consumerThreadCount", &threads)?;
        check(
            test.producer_threads + test.consumer_threads <= MAX_THREADS,
            "consumerThreadCount",
            "10000 threads in all",
        )?;
        check(test.value_length <= MAX_VALUE_LENGTH, "valueLength", "at most 16 MiB")?;
        check(test.poll_timeout_ms <= MAX_POLL_TIMEOUT_MS, "pollTimeoutMs", "0..=10000")?;
        check((1..=MAX_BACKLOG).contains(&test.max_backlog), "maxBacklog", "1..=10000000")?;
        check(!test.basename.is_empty(), "basename", "a queue name prefix")?;
        Ok(test)
    }

    pub fn thread_count(&self) -> u32 {
        self.producer_threads + self.consumer_threads
    }

    pub fn queue_names(&self) -> Vec<String> {
        (0..self.queue_count).map(|index| format!("{}-{index}", self.basename)).collect()
    }

    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "class": Self::CLASS,
            "producerThreadCount": self.producer_threads,
            "consumerThreadCount": self.consumer_threads,
            "queueCount": self.queue_count,
            "valueLength": self.value_length,
            "pollTimeoutMs": self.poll_timeout_ms,
            "maxBacklog": self.max_backlog,
            "basename": self.basename,
        })
    }
}

/// What a worker of a queue test does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueRole {
    Producer { queue: usize },
    Consumer { queue: usize },
}

/// One queue's counts over the whole run.
#[derive(Debug, Default)]
struct Counters {
    /// Offers the member accepted.
    offered: AtomicU64,
    /// Offers that failed: the item may or may not be in the queue.
    offers_unknown: AtomicU64,
    /// Offers the member refused (a full queue: `offer` returned false).
    offers_refused: AtomicU64,
    /// Polls that returned an item.
    polled: AtomicU64,
    /// Polls that failed: an item may or may not have been taken.
    polls_unknown: AtomicU64,
    /// Polled items that are not items this test offers.
    foreign: AtomicU64,
    /// Pauses of producers at the backlog bound.
    backlog_pauses: AtomicU64,
}

/// A queue test made runnable: names, item values, counters. Shared read-only by every
/// worker but for the atomic counters.
#[derive(Debug)]
pub struct QueueData {
    pub test: QueueTest,
    pub names: Vec<String>,
    values: Vec<Vec<u8>>,
    counters: Vec<Counters>,
}

impl QueueData {
    pub fn build(test: &QueueTest, seed: u64) -> QueueData {
        let mut rng = Rng::new(seed);
        let values = (0..VALUE_POOL)
            .map(|_| serialize_bytes(&(0..test.value_length).map(|_| rng.next_u64() as u8).collect::<Vec<_>>()))
            .collect();
        let counters = (0..test.queue_count).map(|_| Counters::default()).collect();
        QueueData { test: test.clone(), names: test.queue_names(), values, counters }
    }

    /// Workers `0..producers` produce, the rest consume; each uses queue `ordinal mod queues`.
    pub fn role(&self, worker: u32) -> QueueRole {
        let queues = self.test.queue_count;
        if worker < self.test.producer_threads {
            QueueRole::Producer { queue: (worker % queues) as usize }
        } else {
            QueueRole::Consumer { queue: ((worker - self.test.producer_threads) % queues) as usize }
        }
    }

    pub fn value(&self, rng: &mut Rng) -> &[u8] {
        &self.values[rng.below(self.values.len() as u64) as usize]
    }

    pub fn poll_timeout(&self) -> Duration {
        Duration::from_millis(u64::from(self.test.poll_timeout_ms))
    }

    /// Waits while `queue` holds `maxBacklog` items (by the driver's count), until `deadline`.
    pub async fn wait_for_room(&self, queue: usize, deadline: Instant) {
        let counters = &self.counters[queue];
        let bound = u64::from(self.test.max_backlog);
        while backlog(counters) >= bound && Instant::now() < deadline {
            counters.backlog_pauses.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(BACKLOG_PAUSE).await;
        }
    }

    /// Offers an item on `queue`, counting the outcome.
    pub async fn offer(&self, queue: &Queue, index: usize, item: &[u8]) -> Result<(), OperationError> {
        let counters = &self.counters[index];
        match queue.offer(item).await {
            Ok(true) => {
                counters.offered.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Ok(false) => {
                counters.offers_refused.fetch_add(1, Ordering::Relaxed);
                Err(QueueError::Full.into())
            }
            Err(error) => {
                counters.offers_unknown.fetch_add(1, Ordering::Relaxed);
                Err(error.into())
            }
        }
    }

    /// Polls `queue`, counting the outcome; returns the probe: [`POLL`] or [`EMPTY_POLL`].
    pub async fn poll(&self, queue: &Queue, index: usize) -> Result<usize, OperationError> {
        let counters = &self.counters[index];
        let polled = if self.test.poll_timeout_ms == 0 {
            queue.poll().await
        } else {
            queue.poll_with_timeout(self.poll_timeout()).await
        };
        match polled {
            Ok(Some(item)) => {
                counters.polled.fetch_add(1, Ordering::Relaxed);
                if item.len() == self.values[0].len() {
                    Ok(POLL)
                } else {
                    counters.foreign.fetch_add(1, Ordering::Relaxed);
                    Err(QueueError::Foreign.into())
                }
            }
            Ok(None) => Ok(EMPTY_POLL),
            Err(error) => {
                counters.polls_unknown.fetch_add(1, Ordering::Relaxed);
                Err(error.into())
            }
        }
    }

    /// Empties every queue and checks that each is empty; resets the counters.
    pub async fn prepare(&self, queues: &[Queue]) -> Result<(), SimulatorError> {
        for queue in queues {
            queue.clear().await?;
            let size = queue.size().await?;
            if size != 0 {
                return Err(SimulatorError::Verification(format!(
                    "queue {} holds {size} items after clear()",
                    queue.name()
                )));
            }
        }
        for counters in &self.counters {
            for counter in [
                &counters.offered,
                &counters.offers_unknown,
                &counters.offers_refused,
                &counters.polled,
                &counters.polls_unknown,
                &counters.foreign,
                &counters.backlog_pauses,
            ] {
                counter.store(0, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Reads every queue's size (after the workers have stopped) and checks the counts.
    pub async fn check(&self, queues: &[Queue]) -> Result<QueueOutcome, SimulatorError> {
        assert_eq!(queues.len(), self.counters.len(), "one handle per queue");
        let mut outcome = QueueOutcome::default();
        for (queue, counters) in queues.iter().zip(&self.counters) {
            let left = queue.size().await? as u64;
            let (offered, polled) = (counters.offered.load(Ordering::Relaxed), counters.polled.load(Ordering::Relaxed));
            let (offers_unknown, polls_unknown) =
                (counters.offers_unknown.load(Ordering::Relaxed), counters.polls_unknown.load(Ordering::Relaxed));
            if !adds_up(offered, offers_unknown, polled + left, polls_unknown) {
                outcome.unbalanced_queues.push(queue.name().to_owned());
            }
            outcome.offered += offered;
            outcome.offers_unknown += offers_unknown;
            outcome.offers_refused += counters.offers_refused.load(Ordering::Relaxed);
            outcome.polled += polled;
            outcome.polls_unknown += polls_unknown;
            outcome.left += left;
            outcome.foreign += counters.foreign.load(Ordering::Relaxed);
            outcome.backlog_pauses += counters.backlog_pauses.load(Ordering::Relaxed);
        }
        outcome.queues = queues.len() as u32;
        outcome.balanced = outcome.unbalanced_queues.is_empty() && outcome.foreign == 0;
        Ok(outcome)
    }
}

/// Whether the items found (`polled + left`) match the items `offered`: at most the offers
/// with an unknown outcome more, at most the polls with an unknown outcome fewer.
fn adds_up(offered: u64, offers_unknown: u64, found: u64, polls_unknown: u64) -> bool {
    found <= offered + offers_unknown && offered <= found + polls_unknown
}

fn backlog(counters: &Counters) -> u64 {
    counters.offered.load(Ordering::Relaxed).saturating_sub(counters.polled.load(Ordering::Relaxed))
}

/// The end-of-run check of a queue test, over the whole run (warm-up included).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueOutcome {
    pub queues: u32,
    /// Offers the member accepted.
    pub offered: u64,
    /// Failed offers (the item may or may not be there).
    pub offers_unknown: u64,
    /// Offers refused by a full queue.
    pub offers_refused: u64,
    /// Polls that returned an item.
    pub polled: u64,
    /// Failed polls (an item may or may not have been taken).
    pub polls_unknown: u64,
    /// Items left in the queues at the end (`size()`).
    pub left: u64,
    /// Polled items of another length than this test's.
    pub foreign: u64,
    /// Times a producer paused at `maxBacklog`.
    pub backlog_pauses: u64,
    /// `polled + left == offered` on every queue, within the unknown outcomes, and no
    /// foreign item.
    pub balanced: bool,
    pub unbalanced_queues: Vec<String>,
}

impl QueueOutcome {
    /// One line for the terminal.
    pub fn text(&self) -> String {
        let verdict = if self.balanced { "balanced" } else { "NOT BALANCED" };
        let mut text =
            format!("queues: offered {} = polled {} + left {} ({verdict})", self.offered, self.polled, self.left);
        if self.offers_unknown + self.polls_unknown > 0 {
            text += &format!(", unknown outcomes: {} offers, {} polls", self.offers_unknown, self.polls_unknown);
        }
        if self.offers_refused + self.foreign + self.backlog_pauses > 0 {
            text += &format!(
                ", refused offers {}, foreign items {}, backlog pauses {}",
                self.offers_refused, self.foreign, self.backlog_pauses
            );
        }
        text
    }

    /// The failure to report, if the counts do not add up.
    pub fn failure(&self) -> Option<String> {
        if self.balanced {
            return None;
        }
        Some(format!(
            "{}; queues that do not add up: {}",
            self.text(),
            if self.unbalanced_queues.is_empty() { "none".to_owned() } else { self.unbalanced_queues.join(", ") }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(text: &str) -> Result<QueueTest, SimulatorError> {
        QueueTest::from_properties(&Properties::parse("queue.properties", text).unwrap())
    }

    #[test]
    fn reads_a_test_file_with_defaults() {
        let defaults = test("class=QueueTest\n").unwrap();
        assert_eq!((defaults.producer_threads, defaults.consumer_threads, defaults.queue_count), (4, 4, 1));
        assert_eq!((defaults.value_length, defaults.poll_timeout_ms, defaults.max_backlog), (100, 0, 10_000));
        assert_eq!(defaults.queue_names(), ["QueueTest-0"]);
        let custom = test(
            "class=QueueTest\nproducerThreadCount=6\nconsumerThreadCount=3\nqueueCount=3\nvalueLength=8\n\
             pollTimeoutMs=50\nmaxBacklog=100\nbasename=jobs\nprobe-offerLatency=hdr\n",
        )
        .unwrap();
        assert_eq!(custom.thread_count(), 9);
        assert_eq!(custom.queue_names(), ["jobs-0", "jobs-1", "jobs-2"]);
        assert_eq!((custom.poll_timeout_ms, custom.max_backlog), (50, 100));
    }

    #[test]
    fn bad_files_are_named() {
        for (text, needle) in [
            ("class=QueueTest\nkeyCount=10\n", "unknown key \"keyCount\" for QueueTest"),
            ("class=QueueTest\nqueueCount=2\nproducerThreadCount=1\n", "producerThreadCount=1"),
            ("class=QueueTest\nconsumerThreadCount=0\n", "consumerThreadCount=0"),
            ("class=QueueTest\npollTimeoutMs=60000\n", "pollTimeoutMs=60000"),
            ("class=QueueTest\nmaxBacklog=0\n", "maxBacklog=0"),
            ("class=QueueTest\nprobe-getLatency=latency\n", "probe-getLatency"),
        ] {
            let error = test(text).unwrap_err().to_string();
            assert!(error.contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn every_queue_gets_producers_and_consumers() {
        let data = QueueData::build(
            &test("class=QueueTest\nproducerThreadCount=5\nconsumerThreadCount=3\nqueueCount=3\n").unwrap(),
            1,
        );
        let roles: Vec<QueueRole> = (0..8).map(|worker| data.role(worker)).collect();
        let producers: Vec<usize> =
            roles.iter().filter_map(|role| matches!(role, QueueRole::Producer { .. }).then_some(0)).collect();
        assert_eq!(producers.len(), 5);
        for queue in 0..3 {
            assert!(roles.contains(&QueueRole::Producer { queue }), "{roles:?}");
            assert!(roles.contains(&QueueRole::Consumer { queue }), "{roles:?}");
        }
        assert_eq!(data.value(&mut Rng::new(3)).len(), 12 + 100, "a byte[] blob of valueLength bytes");
    }

    #[test]
    fn counts_add_up_within_the_unknown_outcomes() {
        assert!(adds_up(10, 0, 10, 0));
        assert!(!adds_up(10, 0, 9, 0), "an item lost");
        assert!(!adds_up(10, 0, 11, 0), "an item made up (or delivered twice)");
        assert!(adds_up(10, 2, 12, 0) && adds_up(10, 2, 10, 0), "failed offers may or may not have landed");
        assert!(!adds_up(10, 2, 13, 0));
        assert!(adds_up(10, 0, 9, 1) && !adds_up(10, 0, 8, 1), "a failed poll may have taken one item");
    }

    #[test]
    fn the_outcome_fails_when_counts_do_not_add_up() {
        let good = QueueOutcome { queues: 1, offered: 10, polled: 7, left: 3, balanced: true, ..Default::default() };
        assert_eq!(good.failure(), None);
        let bad = QueueOutcome {
            queues: 1,
            offered: 10,
            polled: 7,
            left: 2,
            balanced: false,
            unbalanced_queues: vec!["q-0".into()],
            ..Default::default()
        };
        let failure = bad.failure().unwrap();
        assert!(failure.contains("NOT BALANCED") && failure.contains("q-0"), "{failure}");
    }
}
