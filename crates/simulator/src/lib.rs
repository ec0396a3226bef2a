//! The Simulator: load and performance tests that drive ferrogrid and Hazelcast with the same
//! driver, so their numbers can be compared.
//!
//! A test is a Simulator test file (`class=StringStringMapTest`, `QueueTest`, `TopicTest`, …)
//! or a YCSB core workload file read as YCSB ships it. A run loads the data set, verifies it
//! (`size()` and sampled gets), warms up, then measures for a fixed time, closed loop or open
//! loop at a target rate (latency from the intended start: no coordinated omission). A queue
//! test empties its queues instead of loading and checks at the end that every item offered
//! was polled or is still there; a topic test subscribes its listener clients before the
//! warm-up and reports delivery latency and lost messages per listener. Targets are an existing
//! cluster or a fresh one started per run; two targets can be compared over repeated runs,
//! and the highest rate that keeps p99 under a bound can be searched for.
//!
//! # Life of a run, file by file
//! 1. `properties.rs` reads the file; `definition.rs` (map tests), `queue.rs`, `topic.rs` or
//!    `ycsb.rs` (YCSB workloads) checks every key (within `test_file.rs`' bounds) and builds a
//!    [`TestDefinition`].
//! 2. `workload.rs` turns it into a [`workload::Workload`]: the serialized keys and values,
//!    the load entries, each worker's role, the choice of each operation (with
//!    `generators.rs`' YCSB distributions) and its execution on the client's proxies
//!    ([`workload::Proxies`]: a map, queues or topics); `queue.rs` keeps a queue test's
//!    counts and `topic.rs` its message stamps, listener clients and delivery counts.
//! 3. `cluster.rs` starts fresh members (ferrogrid or Hazelcast processes) and waits for them.
//! 4. `driver.rs` connects the clients, loads and verifies, then runs the worker tasks
//!    through warm-up and the measure window, with `stats.rs` recording latencies
//!    (HdrHistogram) and `system.rs` reading server CPU from `/proc`.
//! 5. `runner.rs` sequences runs and targets, ends each run with its test's outcome (a queue
//!    test's check, a topic test's deliveries) and writes `results.rs`' JSON and CSV;
//!    `report.rs` draws the HTML report; `search.rs` searches the maximum throughput.
//! 6. `tenants.rs` runs several tenants (own credentials, test, rate) over one shared window;
//!    `scaling.rs` runs the same test from 1, 2, 4, … processes of this binary (coordinated
//!    `run`s started together) and sums their throughput.
//!
//! # Tasks and threads
//! The tokio runtime runs the worker tasks (one per test thread), the clients' connection
//! tasks, a once-a-second sampler (progress line, timeline) and a CPU reading at the window's
//! start. Open loop adds one plain OS thread, the pacer, which owns the schedule and hands
//! start tokens to the workers through bounded channels. Workers own their random generator,
//! key chooser, role and latency recorder; they share only counters (progress, YCSB's insert
//! sequence, a queue test's per-queue counts, a topic test's publish counts). A topic test adds
//! one task per listener client and topic, which takes the messages its listener's bounded
//! channel receives and owns that subscription's delivery histogram.
//!
//! # Bounds
//! Threads ≤ 10 000, clients ≤ 64, runs ≤ 100, search steps ≤ 64, tenants ≤ 64, scaling steps
//! ≤ 64 of ≤ 256 processes and ≤ 100 repeats; keys and values ≤ 50 M distinct, values ≤ 16 MiB;
//! 256 start tokens queued per open-loop worker; an open-loop drain of at most
//! `max(duration, 5 s)` after the window; latencies recorded up to 60 s; 16 distinct error
//! messages kept per worker. Queue tests: ≤ 1000 queues, a driver-side backlog of ≤ 10 M items
//! per queue (`maxBacklog`). Topic tests: ≤ 64 listener clients, ≤ 1000 topics, ≤ 1 Mi
//! messages per listener channel and 16 Mi over all of them (a full channel drops and counts),
//! a delivery drain of ≤ 10 s after the publishers stop.

pub mod cluster;
pub mod definition;
pub mod driver;
pub mod error;
pub mod generators;
pub mod properties;
pub mod queue;
pub mod report;
pub mod results;
pub mod runner;
pub mod scaling;
pub mod search;
pub mod stats;
pub mod system;
pub mod tenants;
pub mod test_file;
pub mod topic;
pub mod workload;
pub mod ycsb;

pub use definition::TestDefinition;
pub use driver::Credentials;
pub use error::SimulatorError;
pub use results::RunResult;
pub use runner::{RunSettings, Target};
