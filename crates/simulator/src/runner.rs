//! Runs: one run = (fresh cluster) → connect → load and verify → warm up and measure →
//! disconnect → (stop cluster) → `result.json`. Series of runs per target, the interleaved
//! comparison of two targets, and the summary files of a results directory:
//!
//! ```text
//! <out>/summary.json      every series' summary (+ the comparison)
//! <out>/summary.csv       one row per run and probe
//! <out>/report.html       charts and tables, self-contained
//! <out>/<target>/run-<n>/result.json, member-<k>.log, hazelcast-<k>.yaml
//! ```
//!
//! A *coordinated* run is one process of `scaling` (`scaling.rs` starts them): it does not load
//! (its parent did), writes `ready` into its run directory once connected, reads the start of
//! its warm-up (Unix time in milliseconds) from stdin, and writes `histogram.json` (every
//! probe's latencies, mergeable) beside `result.json`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferrogrid_client::{Client, Map};

use crate::cluster::{Cluster, ClusterSettings};
use crate::definition::TestDefinition;
use crate::driver::{self, Credentials, LoadSummary, MeasureSettings, Measurement};
use crate::error::SimulatorError;
use crate::report;
pub use crate::results::Outcome;
use crate::results::{self, Comparison, RunResult, SeriesSummary};
use crate::topic::Listeners;
use crate::workload::{Proxies, Workload};

/// Largest `--runs`.
pub const MAX_RUNS: u32 = 100;
/// Largest `--clients`.
pub const MAX_CLIENTS: u32 = 64;

/// Where a run sends its operations.
#[derive(Debug, Clone)]
pub enum Target {
    /// A cluster that is already running; its CPU is read from `server_pids` if given.
    Existing { addresses: Vec<SocketAddr>, server_pids: Vec<u32> },
    /// A fresh cluster started for each run.
    Start(ClusterSettings),
}

impl Target {
    /// `ferrogrid`, `hazelcast`, or the first address.
    pub fn label(&self) -> String {
        match self {
            Target::Existing { addresses, .. } => addresses[0].to_string(),
            Target::Start(settings) => settings.product.name().to_owned(),
        }
    }

    fn members(&self) -> u32 {
        match self {
            Target::Existing { addresses, .. } => addresses.len() as u32,
            Target::Start(settings) => settings.members,
        }
    }

    /// The target's members: started in `directory` (they run while the returned cluster lives,
    /// announced by a line starting with `prefix`) or existing; with their addresses and server
    /// processes.
    pub(crate) async fn start_members(
        &self,
        prefix: &str,
        directory: &Path,
    ) -> Result<(Option<Cluster>, Vec<SocketAddr>, Vec<u32>), SimulatorError> {
        let label = self.label();
        let cluster = match self {
            Target::Start(cluster_settings) => {
                eprintln!("{prefix}starting {} {label} member(s)…", cluster_settings.members);
                Some(Cluster::start(cluster_settings, directory).await?)
            }
            Target::Existing { .. } => None,
        };
        let (addresses, server_pids) = match (&cluster, self) {
            (Some(cluster), _) => (cluster.addresses.clone(), cluster.pids()),
            (None, Target::Existing { addresses, server_pids }) => (addresses.clone(), server_pids.clone()),
            (None, Target::Start(_)) => unreachable!("a started target has a cluster"),
        };
        Ok((cluster, addresses, server_pids))
    }

    /// Checks the target, fetching a missing Hazelcast jar first.
    pub fn prepare(&self) -> Result<(), SimulatorError> {
        if let Target::Start(settings) = self {
            settings.fetch_missing_jar()?;
        }
        self.validate()
    }

    fn validate(&self) -> Result<(), SimulatorError> {
        match self {
            Target::Existing { addresses, .. } if addresses.is_empty() => {
                Err(SimulatorError::Input("--address: at least one".into()))
            }
            Target::Existing { .. } => Ok(()),
            Target::Start(settings) => settings.validate(),
        }
    }
}

/// How each run drives the target.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Worker tasks; None: the test's `threadCount` / `threadcount`.
    pub threads: Option<u32>,
    pub clients: u32,
    pub warmup: Duration,
    pub duration: Duration,
    /// Open-loop rate; None: the workload's `target`, else closed loop.
    pub rate: Option<f64>,
    pub seed: u64,
    pub smart_routing: bool,
    /// Cluster name and credentials of the clients.
    pub credentials: Credentials,
    /// A `scaling` child: no load, start signalled on stdin (see the module docs).
    pub coordinated: bool,
}

impl RunSettings {
    pub fn validate(&self) -> Result<(), SimulatorError> {
        let fail = |message: &str| Err(SimulatorError::Input(message.to_owned()));
        if !(1..=MAX_CLIENTS).contains(&self.clients) {
            return fail("--clients: 1..=64");
        }
        if self.threads.is_some_and(|threads| !(1..=crate::test_file::MAX_THREADS).contains(&threads)) {
            return fail("--threads: 1..=10000");
        }
        if self.duration < Duration::from_millis(100) {
            return fail("--duration: at least 0.1 s");
        }
        if self.rate.is_some_and(|rate| !(rate.is_finite() && rate > 0.0)) {
            return fail("--rate: operations per second above 0");
        }
        Ok(())
    }

    pub fn threads_for(&self, definition: &TestDefinition) -> u32 {
        self.threads.unwrap_or_else(|| definition.thread_count())
    }

    pub fn rate_for(&self, definition: &TestDefinition) -> Option<f64> {
        self.rate.or_else(|| definition.target_ops_per_second())
    }
}

/// Connected clients with the data set loaded (a map test), the queues emptied (a queue
/// test) or the listeners subscribed (a topic test), ready for measurements.
#[derive(Debug)]
pub struct Session {
    clients: Vec<Client>,
    proxies: Vec<Proxies>,
    workload: Arc<Workload>,
    /// A topic test's listener clients, subscribed; taken by [`Session::finish`].
    listeners: Option<Listeners>,
    pub load: LoadSummary,
}

impl Session {
    /// Connects, then loads and verifies the data set; `label` starts the progress lines.
    pub async fn open(
        definition: &TestDefinition,
        addresses: &[SocketAddr],
        settings: &RunSettings,
        label: &str,
    ) -> Result<Session, SimulatorError> {
        let mut session = Session::connect(definition, addresses, settings).await?;
        session.load(settings.seed, label).await?;
        Ok(session)
    }

    /// Connects without loading: the data set is there already.
    pub async fn connect(
        definition: &TestDefinition,
        addresses: &[SocketAddr],
        settings: &RunSettings,
    ) -> Result<Session, SimulatorError> {
        let workload = Arc::new(Workload::build(definition, settings.seed));
        let clients =
            driver::connect(addresses, settings.clients, settings.smart_routing, &settings.credentials).await?;
        let mut proxies = Vec::with_capacity(clients.len());
        for client in &clients {
            proxies.push(workload.proxies(client).await?);
        }
        let listeners = match workload.topic_data() {
            Some(data) => {
                let count = data.test.listener_count;
                let listening =
                    driver::connect(addresses, count, settings.smart_routing, &settings.credentials).await?;
                eprintln!("subscribing {count} listener client(s) to {} topic(s)…", data.names.len());
                Some(Listeners::start(data.clone(), listening).await?)
            }
            None => None,
        };
        let load = LoadSummary::loaded_elsewhere(workload.load_count());
        Ok(Session { clients, proxies, workload, listeners, load })
    }

    /// Clears the map, loads the data set and verifies it; empties a queue test's queues.
    pub async fn load(&mut self, seed: u64, label: &str) -> Result<(), SimulatorError> {
        let prefix = if label.is_empty() { String::new() } else { format!("{label} ") };
        if let (Some(data), Some(Proxies::Queues(queues))) = (self.workload.queue_data(), self.proxies.first()) {
            data.prepare(queues).await?;
            eprintln!("{prefix}cleared {} queue(s); verified: size() = 0", queues.len());
            return Ok(());
        }
        let maps: Vec<Map> = self.proxies.iter().filter_map(Proxies::map).cloned().collect();
        if maps.is_empty() {
            return Ok(());
        }
        eprintln!("{prefix}loading {} entries into map {:?}…", self.workload.load_count(), self.workload.map_name);
        self.load = driver::load(&self.workload, &maps, seed).await?;
        eprintln!(
            "{prefix}loaded in {:.1} s; verified: size() = {}, {} sampled gets returned the loaded values",
            self.load.seconds, self.load.size, self.load.verified_gets
        );
        Ok(())
    }

    pub async fn measure(&self, settings: &MeasureSettings) -> Measurement {
        let mut settings = settings.clone();
        if let Some(data) = self.workload.topic_data() {
            // The listeners record the delivery of messages sent in the same window.
            let start = *settings.start.get_or_insert_with(Instant::now);
            let measure_start = start + settings.warmup;
            data.set_window(measure_start, measure_start + settings.duration);
        }
        driver::measure(self.workload.clone(), &self.proxies, &settings).await
    }

    /// After the last measurement: a queue test's end-of-run check (every queue's size against
    /// the counts), a topic test's delivery counts (the listeners catch up, then are removed).
    pub async fn finish(&mut self) -> Result<Outcome, SimulatorError> {
        let mut outcome = Outcome::default();
        if let (Some(data), Some(Proxies::Queues(queues))) = (self.workload.queue_data(), self.proxies.first()) {
            outcome.queue = Some(data.check(queues).await?);
        }
        if let Some(listeners) = self.listeners.take() {
            outcome.topic = Some(listeners.finish().await?);
        }
        Ok(outcome)
    }

    /// The workload's probe names.
    pub fn probes(&self) -> &'static [&'static str] {
        self.workload.probes
    }

    pub async fn close(self) {
        for client in self.clients {
            client.shutdown().await;
        }
        if let Some(listeners) = self.listeners {
            listeners.close().await;
        }
    }
}

/// One run in `directory`: a fresh cluster if the target starts one; writes `result.json`.
pub async fn run_once(
    definition: &TestDefinition,
    target: &Target,
    settings: &RunSettings,
    run: u32,
    runs: u32,
    directory: &Path,
) -> Result<RunResult, SimulatorError> {
    std::fs::create_dir_all(directory).map_err(SimulatorError::io(directory))?;
    let label = target.label();
    let started_at = results::now_utc();
    let progress_label = format!("[{label} run {run}/{runs}]");
    let (mut cluster, addresses, server_pids) = target.start_members(&format!("{progress_label} "), directory).await?;
    let (mut session, start) = if settings.coordinated {
        let session = Session::connect(definition, &addresses, settings).await?;
        (session, Some(await_start_signal(directory).await?))
    } else {
        (Session::open(definition, &addresses, settings, "").await?, None)
    };
    let rate = settings.rate_for(definition);
    let measure_settings = MeasureSettings {
        threads: settings.threads_for(definition),
        warmup: settings.warmup,
        duration: settings.duration,
        rate,
        label: progress_label,
        server_pids: server_pids.clone(),
        start,
        plain_progress: false,
    };
    let measurement = session.measure(&measure_settings).await;
    let outcome = session.finish().await?;
    if settings.coordinated {
        let histogram =
            serde_json::json!({ "all_ns": crate::stats::histogram_points(&measurement.recorder.all_histogram()) });
        results::write_json(&directory.join(HISTOGRAM_FILE), &histogram)?;
    }
    let load = session.load.clone();
    let probes = session.workload.probes;
    session.close().await;
    if let Some(cluster) = cluster.as_mut() {
        cluster.stop();
    }
    let failure = outcome.failure();
    let result = run_result(RunContext {
        definition,
        target: label,
        run,
        started_at,
        settings,
        measure: &measure_settings,
        members: target.members(),
        load,
        probes,
        server_pids,
        measurement,
        outcome,
    });
    results::write_json(&directory.join("result.json"), &result)?;
    eprintln!("{}", run_line(&result));
    if let Some(failure) = failure {
        return Err(SimulatorError::Check(format!("{} run {run}: {failure}", result.target)));
    }
    Ok(result)
}

/// What a coordinated run writes once it is connected.
pub const READY_FILE: &str = "ready";
/// What a coordinated run writes beside `result.json`: `{"all_ns": [[nanoseconds, count], …]}`.
pub const HISTOGRAM_FILE: &str = "histogram.json";

/// Writes [`READY_FILE`] into `directory`, then reads the start time (Unix milliseconds) from
/// stdin and returns it as an instant (now, if it has passed).
async fn await_start_signal(directory: &Path) -> Result<Instant, SimulatorError> {
    let ready = directory.join(READY_FILE);
    std::fs::write(&ready, b"ready\n").map_err(SimulatorError::io(&ready))?;
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await
    .expect("reading stdin does not panic")
    .map_err(SimulatorError::io("stdin"))?;
    let millis: u64 = line.trim().parse().map_err(|_| {
        SimulatorError::Input(format!("--coordinated: expected a start time (Unix ms) on stdin, got {line:?}"))
    })?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let wait = Duration::from_millis(millis).saturating_sub(now);
    if wait.is_zero() {
        eprintln!("the start time had passed when it arrived: starting now");
    }
    Ok(Instant::now() + wait)
}

/// What a [`RunResult`] is made from.
pub(crate) struct RunContext<'a> {
    pub definition: &'a TestDefinition,
    pub target: String,
    pub run: u32,
    pub started_at: String,
    pub settings: &'a RunSettings,
    pub measure: &'a MeasureSettings,
    pub members: u32,
    pub load: LoadSummary,
    pub probes: &'static [&'static str],
    pub server_pids: Vec<u32>,
    pub measurement: Measurement,
    pub outcome: Outcome,
}

pub(crate) fn run_result(context: RunContext<'_>) -> RunResult {
    let measurement = context.measurement;
    let recorder = &measurement.recorder;
    let (all, probes) = recorder.summaries(context.probes);
    let ops = recorder.operations();
    let per_million = |cpu: f64| if ops > 0 { Some(cpu / (ops as f64 / 1e6)) } else { None };
    RunResult {
        target: context.target,
        run: context.run,
        started_at: context.started_at,
        test: context.definition.describe(),
        mode: if context.measure.rate.is_some() { "open-loop" } else { "closed-loop" }.to_owned(),
        target_ops_per_second: context.measure.rate,
        threads: context.measure.threads,
        clients: context.settings.clients,
        members: context.members,
        warmup_seconds: context.measure.warmup.as_secs_f64(),
        duration_seconds: context.measure.duration.as_secs_f64(),
        load: context.load,
        ops,
        errors: recorder.error_count(),
        measure_seconds: measurement.measure_seconds,
        ops_per_second: ops as f64 / measurement.measure_seconds.max(f64::MIN_POSITIVE),
        all,
        probes,
        start_delay: recorder
            .start_delay
            .as_ref()
            .map(|histogram| crate::stats::ProbeSummary::of("startDelay", histogram, 0)),
        clamped_latencies: recorder.clamped,
        timeline: measurement.timeline,
        server_pids: context.server_pids,
        server_cpu_seconds: measurement.server_cpu_seconds,
        server_cpu_seconds_per_million_ops: measurement.server_cpu_seconds.and_then(per_million),
        driver_cpu_seconds: measurement.driver_cpu_seconds,
        driver_cpu_seconds_per_million_ops: measurement.driver_cpu_seconds.and_then(per_million),
        error_messages: recorder.error_messages(),
        outcome: context.outcome,
    }
}

/// The summary of a run printed after it: one line, then per-probe throughput when there are
/// several probes, then a queue or topic test's outcome.
pub fn run_line(result: &RunResult) -> String {
    let mut text = run_first_line(result);
    if result.probes.len() > 1 {
        let rates: Vec<String> = result
            .probes
            .iter()
            .map(|probe| {
                let ops_per_second = probe.count as f64 / result.measure_seconds.max(f64::MIN_POSITIVE);
                format!("{} {} ops/s (p99 {:.0} µs)", probe.name, results::thousands(ops_per_second), probe.p99_us)
            })
            .collect();
        text += &format!("\n  {}", rates.join(", "));
    }
    let outcome = result.outcome.text();
    if !outcome.is_empty() {
        text += &format!("\n  {}", outcome.replace('\n', "\n  "));
    }
    text
}

fn run_first_line(result: &RunResult) -> String {
    let server =
        result.server_cpu_seconds_per_million_ops.map_or(String::new(), |cpu| format!(", server {cpu:.2} CPU-s/M ops"));
    let driver = result.driver_cpu_seconds_per_million_ops.map_or(String::new(), |cpu| format!(" (driver {cpu:.2})"));
    format!(
        "[{} run {}] {} ops/s ({} ops in {:.2} s, {} errors), p50 {:.0} µs, p99 {:.0} µs, p99.9 {:.0} µs, max {:.0} µs{server}{driver}",
        result.target,
        result.run,
        results::thousands(result.ops_per_second),
        result.ops,
        result.measure_seconds,
        result.errors,
        result.all.p50_us,
        result.all.p99_us,
        result.all.p999_us,
        result.all.max_us
    )
}

/// `runs` runs against each target, interleaved (A1, B1, A2, B2, …) so slow drift of a shared
/// machine hits every target alike. Returns each target's runs, in target order.
pub async fn run_series(
    definition: &TestDefinition,
    targets: &[Target],
    settings: &RunSettings,
    runs: u32,
    out: &Path,
) -> Result<Vec<(String, Vec<RunResult>)>, SimulatorError> {
    settings.validate()?;
    if !(1..=MAX_RUNS).contains(&runs) {
        return Err(SimulatorError::Input("--runs: 1..=100".into()));
    }
    for target in targets {
        target.prepare()?;
    }
    if let (TestDefinition::Queue(test), Some(_)) = (definition, settings.threads) {
        return Err(SimulatorError::Input(format!(
            "--threads: a {} sets its workers with producerThreadCount ({}) and consumerThreadCount ({})",
            crate::queue::QueueTest::CLASS,
            test.producer_threads,
            test.consumer_threads
        )));
    }
    let mut series: Vec<(String, Vec<RunResult>)> = targets.iter().map(|target| (target.label(), Vec::new())).collect();
    for run in 1..=runs {
        for (target, (label, results)) in targets.iter().zip(series.iter_mut()) {
            let directory = run_directory(out, label, run);
            results.push(run_once(definition, target, settings, run, runs, &directory).await?);
        }
    }
    Ok(series)
}

/// Where run `run` of the target labelled `label` writes its files: `<out>/<label>/run-<run>`
/// (`:` and `/` in the label replaced by `_`).
pub fn run_directory(out: &Path, label: &str, run: u32) -> PathBuf {
    out.join(label.replace([':', '/'], "_")).join(format!("run-{run}"))
}

/// Writes `summary.json`, `summary.csv` and `report.html` for `series` into `out`; returns the
/// comparison when there are two targets.
pub fn write_summaries(
    out: &Path,
    definition: &TestDefinition,
    series: &[(String, Vec<RunResult>)],
) -> Result<Option<Comparison>, SimulatorError> {
    let summaries: Vec<SeriesSummary> = series.iter().map(|(label, runs)| SeriesSummary::of(label, runs)).collect();
    let comparison = match summaries.as_slice() {
        [a, b] => Some(Comparison::of(a.clone(), b.clone())),
        _ => None,
    };
    let summary = serde_json::json!({
        "test": definition.describe(),
        "series": summaries,
        "comparison": comparison,
    });
    results::write_json(&out.join("summary.json"), &summary)?;
    let all_runs: Vec<RunResult> = series.iter().flat_map(|(_, runs)| runs.iter().cloned()).collect();
    results::write_csv(&out.join("summary.csv"), &all_runs)?;
    let html = report::html(&definition.name(), &definition.describe(), &summaries, series, comparison.as_ref());
    let path = out.join("report.html");
    std::fs::write(&path, html).map_err(SimulatorError::io(&path))?;
    Ok(comparison)
}

/// The default results directory: `simulator-results/<UTC time>-<test name>`.
pub fn default_output_directory(definition: &TestDefinition) -> PathBuf {
    let stamp = results::now_utc().replace(':', "");
    PathBuf::from("simulator-results").join(format!("{stamp}-{}", definition.name()))
}
