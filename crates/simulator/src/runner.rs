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

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ferrogrid_client::{Client, Map};

use crate::cluster::{Cluster, ClusterSettings};
use crate::definition::TestDefinition;
use crate::driver::{self, LoadSummary, MeasureSettings, Measurement};
use crate::error::SimulatorError;
use crate::report;
use crate::results::{self, Comparison, RunResult, SeriesSummary};
use crate::workload::Workload;

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
}

impl RunSettings {
    pub fn validate(&self) -> Result<(), SimulatorError> {
        let fail = |message: &str| Err(SimulatorError::Input(message.to_owned()));
        if !(1..=MAX_CLIENTS).contains(&self.clients) {
            return fail("--clients: 1..=64");
        }
        if self.threads.is_some_and(|threads| !(1..=crate::definition::MAX_THREADS).contains(&threads)) {
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

    fn threads_for(&self, definition: &TestDefinition) -> u32 {
        self.threads.unwrap_or_else(|| definition.thread_count())
    }

    fn rate_for(&self, definition: &TestDefinition) -> Option<f64> {
        self.rate.or_else(|| definition.target_ops_per_second())
    }
}

/// Connected clients with the data set loaded, ready for measurements.
#[derive(Debug)]
pub struct Session {
    clients: Vec<Client>,
    maps: Vec<Map>,
    workload: Arc<Workload>,
    pub load: LoadSummary,
}

impl Session {
    /// Connects, then loads and verifies the data set.
    pub async fn open(
        definition: &TestDefinition,
        addresses: &[SocketAddr],
        settings: &RunSettings,
    ) -> Result<Session, SimulatorError> {
        let workload = Arc::new(Workload::build(definition, settings.seed));
        let clients = driver::connect(addresses, settings.clients, settings.smart_routing).await?;
        let mut maps = Vec::with_capacity(clients.len());
        for client in &clients {
            maps.push(client.map(&workload.map_name).await?);
        }
        eprintln!("loading {} entries into map {:?}…", workload.load_count(), workload.map_name);
        let load = driver::load(&workload, &maps, settings.seed).await?;
        eprintln!(
            "loaded in {:.1} s; verified: size() = {}, {} sampled gets returned the loaded values",
            load.seconds, load.size, load.verified_gets
        );
        Ok(Session { clients, maps, workload, load })
    }

    pub async fn measure(&self, settings: &MeasureSettings) -> Measurement {
        driver::measure(self.workload.clone(), &self.maps, settings).await
    }

    /// The workload's probe names.
    pub fn probes(&self) -> &'static [&'static str] {
        self.workload.probes
    }

    pub async fn close(self) {
        for client in self.clients {
            client.shutdown().await;
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
    let mut cluster = match target {
        Target::Start(cluster_settings) => {
            eprintln!("[{label} run {run}/{runs}] starting {} {label} member(s)…", cluster_settings.members);
            Some(Cluster::start(cluster_settings, directory).await?)
        }
        Target::Existing { .. } => None,
    };
    let (addresses, server_pids) = match (&cluster, target) {
        (Some(cluster), _) => (cluster.addresses.clone(), cluster.pids()),
        (None, Target::Existing { addresses, server_pids }) => (addresses.clone(), server_pids.clone()),
        (None, Target::Start(_)) => unreachable!("a started target has a cluster"),
    };
    let session = Session::open(definition, &addresses, settings).await?;
    let rate = settings.rate_for(definition);
    let measure_settings = MeasureSettings {
        threads: settings.threads_for(definition),
        warmup: settings.warmup,
        duration: settings.duration,
        rate,
        label: format!("[{label} run {run}/{runs}]"),
        server_pids: server_pids.clone(),
    };
    let measurement = session.measure(&measure_settings).await;
    let load = session.load.clone();
    let probes = session.workload.probes;
    session.close().await;
    if let Some(cluster) = cluster.as_mut() {
        cluster.stop();
    }
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
    });
    results::write_json(&directory.join("result.json"), &result)?;
    eprintln!("{}", run_line(&result));
    Ok(result)
}

/// What a [`RunResult`] is made from.
struct RunContext<'a> {
    definition: &'a TestDefinition,
    target: String,
    run: u32,
    started_at: String,
    settings: &'a RunSettings,
    measure: &'a MeasureSettings,
    members: u32,
    load: LoadSummary,
    probes: &'static [&'static str],
    server_pids: Vec<u32>,
    measurement: Measurement,
}

fn run_result(context: RunContext<'_>) -> RunResult {
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
    }
}

/// The one-line summary of a run printed after it.
pub fn run_line(result: &RunResult) -> String {
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
    let mut series: Vec<(String, Vec<RunResult>)> = targets.iter().map(|target| (target.label(), Vec::new())).collect();
    for run in 1..=runs {
        for (target, (label, results)) in targets.iter().zip(series.iter_mut()) {
            let directory = out.join(label.replace([':', '/'], "_")).join(format!("run-{run}"));
            results.push(run_once(definition, target, settings, run, runs, &directory).await?);
        }
    }
    Ok(series)
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
