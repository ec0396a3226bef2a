//! `scaling`: aggregate throughput as the number of client *processes* grows (1 → 2 → 4 → …)
//! at a fixed total number of worker threads.
//!
//! For every step (a process count `p`) and repeat, the parent process:
//! 1. clears the map and loads and verifies the data set (its own client, then closed), so
//!    every step starts from the same data;
//! 2. spawns `p` processes of this binary, each `run FILE --address … --threads T_i --runs 1
//!    --coordinated` (T_i: the total split evenly, the first `total mod p` processes one more;
//!    a total `--rate` split evenly too; process `i` seeds with seed + i). A coordinated run
//!    does not load; it connects, writes `ready` into its run directory and waits for a start
//!    time on stdin;
//! 3. once every process is ready, sends them all the same start time (now + 0.5 s, Unix ms),
//!    so their warm-ups and measure windows coincide;
//! 4. waits for all of them and reads their `result.json` and `histogram.json`: ops/s are
//!    summed, p99 is reported as the maximum over the processes and from the merged
//!    distribution (the processes' histograms added), errors are summed by message. With
//!    `--start` or `--server-pid`, the members' CPU is read over the shared measure window.
//!
//! A process that fails, or does not get ready within the ready timeout, fails the command
//! (the end of its log is shown); the processes of the step are killed then, and on Ctrl-C.
//!
//! ```text
//! <out>/scaling.json       every step: min/avg/max over repeats, each repeat, each process
//! <out>/scaling.csv        one row per step (min/avg/max)
//! <out>/scaling-runs.csv   one row per step and repeat
//! <out>/step-<p>/repeat-<r>/process-<i>/process.log, <address>/run-1/result.json, histogram.json
//! <out>/cluster/member-<k>.log                                          with --start
//! ```

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::cluster;
use crate::definition::TestDefinition;
use crate::driver::Credentials;
use crate::error::SimulatorError;
use crate::results::{self, thousands, LatencySummary, RunResult, Spread};
use crate::runner::{self, RunSettings, Session, Target};
use crate::stats::{self, ErrorCount, ProbeSummary};
use crate::system;

/// Most processes in one step.
pub const MAX_PROCESSES: u32 = 256;
/// Most steps.
pub const MAX_STEPS: usize = 64;
/// Largest `--repeat`.
pub const MAX_REPEAT: u32 = 100;
/// From "everyone is ready" to the shared start.
const START_MARGIN: Duration = Duration::from_millis(500);
/// How long after its window (and the longest drain) a process may take to finish.
const FINISH_GRACE: Duration = Duration::from_secs(60);
/// Pause between checks of the processes.
const POLL: Duration = Duration::from_millis(50);

/// How to run the steps.
#[derive(Debug, Clone)]
pub struct ScalingSettings {
    /// Process counts, one step each, in order.
    pub processes: Vec<u32>,
    /// Worker threads over all processes of a step.
    pub total_threads: u32,
    /// Runs per step.
    pub repeat: u32,
    /// Client instances per process.
    pub clients: u32,
    pub warmup: Duration,
    pub duration: Duration,
    /// Open loop at this total rate (split over the processes); None: the workload's `target`
    /// (also a total), else closed loop.
    pub rate: Option<f64>,
    pub seed: u64,
    pub smart_routing: bool,
    pub credentials: Credentials,
    /// The Simulator binary the processes run (`std::env::current_exe()`).
    pub program: PathBuf,
    /// How long the processes of a step get to connect.
    pub ready_timeout: Duration,
}

impl ScalingSettings {
    pub fn validate(&self) -> Result<(), SimulatorError> {
        let fail = |message: String| Err(SimulatorError::Input(message));
        if self.processes.is_empty() || self.processes.len() > MAX_STEPS {
            return fail(format!("--processes: 1..={MAX_STEPS} process counts"));
        }
        if self.processes.iter().any(|&processes| !(1..=MAX_PROCESSES).contains(&processes)) {
            return fail(format!("--processes: each 1..={MAX_PROCESSES}"));
        }
        let most = self.processes.iter().copied().max().unwrap_or(1);
        if self.total_threads < most || self.total_threads > crate::test_file::MAX_THREADS {
            return fail(format!(
                "--total-threads {}: at least the largest process count ({most}) and at most {}",
                self.total_threads,
                crate::test_file::MAX_THREADS
            ));
        }
        if !(1..=MAX_REPEAT).contains(&self.repeat) {
            return fail(format!("--repeat: 1..={MAX_REPEAT}"));
        }
        self.run_settings(None).validate()
    }

    /// The parent's settings (loading), or a process's with `threads`.
    fn run_settings(&self, threads: Option<u32>) -> RunSettings {
        RunSettings {
            threads,
            clients: self.clients,
            warmup: self.warmup,
            duration: self.duration,
            rate: self.rate,
            seed: self.seed,
            smart_routing: self.smart_routing,
            credentials: self.credentials.clone(),
            coordinated: false,
        }
    }
}

/// Worker threads of each of `processes` processes sharing `total`.
pub fn split_threads(total: u32, processes: u32) -> Vec<u32> {
    (0..processes).map(|index| total / processes + u32::from(index < total % processes)).collect()
}

/// One process of one repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessResult {
    /// 1-based.
    pub process: u32,
    pub threads: u32,
    pub ops: u64,
    pub ops_per_second: f64,
    pub errors: u64,
    pub p99_us: f64,
    pub max_us: f64,
    /// Its `result.json`, relative to the results directory.
    pub result: String,
}

/// One repeat of a step: every process together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingRun {
    /// 1-based.
    pub repeat: u32,
    pub ops: u64,
    /// The sum of the processes' ops/s.
    pub ops_per_second: f64,
    pub errors: u64,
    /// The highest p99 of the processes.
    pub p99_max_us: f64,
    /// Every operation of every process (the histograms merged).
    pub merged: LatencySummary,
    /// The member processes' CPU over the measure window (with --start or --server-pid).
    pub server_cpu_seconds: Option<f64>,
    pub server_cpu_seconds_per_million_ops: Option<f64>,
    pub error_messages: Vec<ErrorCount>,
    pub processes: Vec<ProcessResult>,
}

/// One process count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingStep {
    pub processes: u32,
    pub threads_per_process: Vec<u32>,
    /// Over the repeats.
    pub ops_per_second: Spread,
    pub p99_max_us: Spread,
    pub p99_merged_us: Spread,
    /// Over every repeat.
    pub errors: u64,
    /// Average ops/s ÷ the first step's.
    pub relative_to_first: f64,
    /// Over the repeats, when the members' CPU was read.
    pub server_cpu_seconds_per_million_ops: Option<Spread>,
    pub runs: Vec<ScalingRun>,
}

/// `scaling.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingResult {
    pub started_at: String,
    pub test: serde_json::Value,
    pub file: String,
    /// `ferrogrid`, `hazelcast`, or the first address.
    pub target: String,
    pub total_threads: u32,
    pub clients_per_process: u32,
    pub warmup_seconds: f64,
    pub duration_seconds: f64,
    /// `closed-loop` or `open-loop`.
    pub mode: String,
    /// Open loop: the total rate over all processes.
    pub target_ops_per_second: Option<f64>,
    pub repeat: u32,
    pub steps: Vec<ScalingStep>,
}

impl ScalingResult {
    /// The table printed at the end.
    pub fn text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "{:>9} {:>15} {:>12} {:>12} {:>12} {:>9} {:>16} {:>16} {:>8} {:>16}",
            "processes",
            "threads/proc",
            "ops/s min",
            "avg",
            "max",
            "vs first",
            "p99 µs max/proc",
            "p99 µs merged",
            "errors",
            "server CPU-s/M"
        );
        for step in &self.steps {
            let (low, high) = (
                step.threads_per_process.iter().min().copied().unwrap_or(0),
                step.threads_per_process.iter().max().copied().unwrap_or(0),
            );
            let threads = if low == high { low.to_string() } else { format!("{low}-{high}") };
            let cpu =
                step.server_cpu_seconds_per_million_ops.map_or("n/a".to_owned(), |cpu| format!("{:.2}", cpu.average));
            let _ = writeln!(
                text,
                "{:>9} {threads:>15} {:>12} {:>12} {:>12} {:>8.2}x {:>16.0} {:>16.0} {:>8} {cpu:>16}",
                step.processes,
                thousands(step.ops_per_second.min),
                thousands(step.ops_per_second.average),
                thousands(step.ops_per_second.max),
                step.relative_to_first,
                step.p99_max_us.average,
                step.p99_merged_us.average,
                step.errors
            );
        }
        let _ = write!(
            text,
            "{} total threads, {} s warm-up, {} s measured, {} repeat(s) per step; p99 columns: average over repeats",
            self.total_threads, self.warmup_seconds, self.duration_seconds, self.repeat
        );
        text
    }
}

/// Child processes, killed if still running when dropped (an error, Ctrl-C).
struct Processes {
    children: Vec<Child>,
    logs: Vec<PathBuf>,
}

impl Processes {
    fn failure(&self, index: usize, what: &str) -> SimulatorError {
        let log = &self.logs[index];
        SimulatorError::Scaling(format!(
            "process {} {what}; end of {}:\n{}",
            index + 1,
            log.display(),
            cluster::log_tail(log)
        ))
    }

    /// Waits until every process wrote its ready file; fails if one exits or `timeout` passes.
    async fn wait_ready(&mut self, ready: &[PathBuf], timeout: Duration) -> Result<(), SimulatorError> {
        let deadline = Instant::now() + timeout;
        loop {
            for index in 0..self.children.len() {
                if let Ok(Some(status)) = self.children[index].try_wait() {
                    return Err(self.failure(index, &format!("exited before it was ready ({status})")));
                }
            }
            if ready.iter().all(|file| file.is_file()) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let waiting = ready.iter().position(|file| !file.is_file()).unwrap_or(0);
                return Err(self.failure(waiting, &format!("was not ready within {timeout:?}")));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Sends every process the start time, then closes their stdin.
    fn start_at(&mut self, unix_millis: u128) -> Result<(), SimulatorError> {
        for index in 0..self.children.len() {
            let mut stdin = self.children[index].stdin.take().expect("stdin is piped");
            if let Err(error) = writeln!(stdin, "{unix_millis}") {
                return Err(self.failure(index, &format!("did not take its start time ({error})")));
            }
        }
        Ok(())
    }

    /// Waits for every process to exit successfully by `deadline`.
    async fn wait_finished(&mut self, deadline: Instant) -> Result<(), SimulatorError> {
        let mut finished = vec![false; self.children.len()];
        while !finished.iter().all(|&done| done) {
            let mut failed = None;
            for (index, (child, done)) in self.children.iter_mut().zip(finished.iter_mut()).enumerate() {
                match child.try_wait() {
                    Ok(Some(status)) if !status.success() => {
                        failed = Some((index, status));
                        break;
                    }
                    Ok(Some(_)) => *done = true,
                    _ => {}
                }
            }
            if let Some((index, status)) = failed {
                return Err(self.failure(index, &format!("failed ({status})")));
            }
            if Instant::now() >= deadline {
                let late = finished.iter().position(|&done| !done).unwrap_or(0);
                return Err(self.failure(late, "did not finish in time"));
            }
            tokio::time::sleep(POLL).await;
        }
        Ok(())
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.children {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// Runs the steps of `settings` with the test in `file` against `target`; writes the files
/// into `out` (after every step, so an interrupted command keeps the finished steps).
pub async fn scaling(
    file: &Path,
    definition: &TestDefinition,
    target: &Target,
    settings: &ScalingSettings,
    out: &Path,
) -> Result<ScalingResult, SimulatorError> {
    definition.require_map_data("scaling")?;
    settings.validate()?;
    let target = match target {
        Target::Start(cluster) => {
            let mut cluster = cluster.clone();
            cluster.credentials = settings.credentials.clone();
            Target::Start(cluster)
        }
        existing => existing.clone(),
    };
    target.prepare()?;
    std::fs::create_dir_all(out).map_err(SimulatorError::io(out))?;
    let file = std::path::absolute(file).map_err(SimulatorError::io(file))?;
    let label = target.label();
    let (cluster, addresses, server_pids) = target.start_members("", &out.join("cluster")).await?;
    let rate = settings.rate.or_else(|| definition.target_ops_per_second());
    let mut result = ScalingResult {
        started_at: results::now_utc(),
        test: definition.describe(),
        file: file.display().to_string(),
        target: label,
        total_threads: settings.total_threads,
        clients_per_process: settings.clients,
        warmup_seconds: settings.warmup.as_secs_f64(),
        duration_seconds: settings.duration.as_secs_f64(),
        mode: if rate.is_some() { "open-loop" } else { "closed-loop" }.to_owned(),
        target_ops_per_second: rate,
        repeat: settings.repeat,
        steps: Vec::new(),
    };
    for &processes in &settings.processes {
        let threads = split_threads(settings.total_threads, processes);
        let mut runs = Vec::new();
        for repeat in 1..=settings.repeat {
            let label = format!("[{processes} process(es), repeat {repeat}/{}]", settings.repeat);
            let loader = Session::open(definition, &addresses, &settings.run_settings(None), &label).await?;
            loader.close().await;
            let directory = out.join(format!("step-{processes}")).join(format!("repeat-{repeat}"));
            let step = Step { file: &file, addresses: &addresses, server_pids: &server_pids, rate, threads: &threads };
            let run = run_processes(&step, settings, repeat, out, &directory).await?;
            eprintln!(
                "{label} {} ops/s ({} ops, {} errors), p99 max over processes {:.0} µs, merged p99 {:.0} µs",
                thousands(run.ops_per_second),
                run.ops,
                run.errors,
                run.p99_max_us,
                run.merged.p99_us
            );
            runs.push(run);
        }
        let first_average = result.steps.first().map(|step| step.ops_per_second.average);
        result.steps.push(step_of(processes, threads, runs, first_average));
        write_files(out, &result)?;
    }
    drop(cluster);
    Ok(result)
}

/// What every repeat of a step shares.
struct Step<'a> {
    file: &'a Path,
    addresses: &'a [SocketAddr],
    server_pids: &'a [u32],
    /// The total rate.
    rate: Option<f64>,
    threads: &'a [u32],
}

/// One repeat of one step: spawns the processes, starts them together, collects their results.
async fn run_processes(
    step: &Step<'_>,
    settings: &ScalingSettings,
    repeat: u32,
    out: &Path,
    directory: &Path,
) -> Result<ScalingRun, SimulatorError> {
    let (mut processes, run_directories) = spawn_processes(step, settings, directory)?;
    let ready: Vec<PathBuf> = run_directories.iter().map(|run| run.join(runner::READY_FILE)).collect();
    processes.wait_ready(&ready, settings.ready_timeout).await?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    processes.start_at((now + START_MARGIN).as_millis())?;
    let measure_start = Instant::now() + START_MARGIN + settings.warmup;
    let pids = step.server_pids.to_vec();
    let duration = settings.duration;
    let server_cpu = tokio::spawn(async move {
        tokio::time::sleep_until(measure_start.into()).await;
        let start = system::cpu_of(&pids);
        tokio::time::sleep_until((measure_start + duration).into()).await;
        system::cpu_difference(start, system::cpu_of(&pids))
    });
    let deadline = measure_start + settings.duration + settings.duration.max(Duration::from_secs(5)) + FINISH_GRACE;
    processes.wait_finished(deadline).await?;
    let server_cpu_seconds = server_cpu.await.expect("the CPU reading does not panic");

    collect_results(&run_directories, repeat, server_cpu_seconds, settings, out)
}

/// Starts one process per entry of `step.threads`, each logging into its own directory under
/// `directory`; returns them and the run directory each will write.
fn spawn_processes(
    step: &Step<'_>,
    settings: &ScalingSettings,
    directory: &Path,
) -> Result<(Processes, Vec<PathBuf>), SimulatorError> {
    let Step { file, addresses, threads, .. } = *step;
    let count = threads.len();
    let address_label = addresses[0].to_string();
    let mut processes = Processes { children: Vec::with_capacity(count), logs: Vec::with_capacity(count) };
    let mut run_directories = Vec::with_capacity(count);
    for (index, &process_threads) in threads.iter().enumerate() {
        let process_out = directory.join(format!("process-{}", index + 1));
        let _ = std::fs::remove_dir_all(&process_out);
        std::fs::create_dir_all(&process_out).map_err(SimulatorError::io(&process_out))?;
        let log = process_out.join("process.log");
        let output = std::fs::File::create(&log).map_err(SimulatorError::io(&log))?;
        let errors = output.try_clone().map_err(SimulatorError::io(&log))?;
        let mut command = Command::new(&settings.program);
        let rate = step.rate.map(|rate| rate / count as f64);
        command.args(child_arguments(file, addresses, settings, rate, process_threads, index, &process_out));
        command.stdin(Stdio::piped()).stdout(output).stderr(errors);
        let child = command.spawn().map_err(|error| {
            SimulatorError::Scaling(format!("cannot start {}: {error}", settings.program.display()))
        })?;
        processes.children.push(child);
        processes.logs.push(log);
        run_directories.push(runner::run_directory(&process_out, &address_label, 1));
    }
    Ok((processes, run_directories))
}

/// The processes' results of one repeat, read from their run directories and summed; their
/// histograms merged.
fn collect_results(
    run_directories: &[PathBuf],
    repeat: u32,
    server_cpu_seconds: Option<f64>,
    settings: &ScalingSettings,
    out: &Path,
) -> Result<ScalingRun, SimulatorError> {
    let count = run_directories.len();
    let mut merged = stats::new_histogram();
    let mut run = ScalingRun {
        repeat,
        ops: 0,
        ops_per_second: 0.0,
        errors: 0,
        p99_max_us: 0.0,
        merged: LatencySummary::of(&ProbeSummary::of("all", &merged, 0)),
        server_cpu_seconds,
        server_cpu_seconds_per_million_ops: None,
        error_messages: Vec::new(),
        processes: Vec::with_capacity(count),
    };
    for (index, run_directory) in run_directories.iter().enumerate() {
        let result_file = run_directory.join("result.json");
        let result: RunResult = read_json(&result_file)?;
        let histogram: serde_json::Value = read_json(&run_directory.join(runner::HISTOGRAM_FILE))?;
        let points: Vec<[u64; 2]> = serde_json::from_value(histogram["all_ns"].clone()).map_err(|error| {
            SimulatorError::Scaling(format!("{}: {error}", run_directory.join(runner::HISTOGRAM_FILE).display()))
        })?;
        stats::add_points(&mut merged, &points);
        run.ops += result.ops;
        run.ops_per_second += result.ops_per_second;
        run.errors += result.errors;
        run.p99_max_us = run.p99_max_us.max(result.all.p99_us);
        stats::merge_error_counts(&mut run.error_messages, &result.error_messages);
        run.processes.push(ProcessResult {
            process: index as u32 + 1,
            threads: result.threads,
            ops: result.ops,
            ops_per_second: result.ops_per_second,
            errors: result.errors,
            p99_us: result.all.p99_us,
            max_us: result.all.max_us,
            result: result_file.strip_prefix(out).unwrap_or(&result_file).display().to_string(),
        });
    }
    run.merged = LatencySummary::of(&ProbeSummary::of("all", &merged, run.errors));
    // Operations counted over the window, CPU read over the window.
    let window_ops = run.ops_per_second * settings.duration.as_secs_f64();
    run.server_cpu_seconds_per_million_ops =
        server_cpu_seconds.filter(|_| window_ops > 0.0).map(|cpu| cpu / (window_ops / 1e6));
    Ok(run)
}

/// `run FILE --address … --threads N … --coordinated` for process `index` (0-based).
fn child_arguments(
    file: &Path,
    addresses: &[SocketAddr],
    settings: &ScalingSettings,
    rate: Option<f64>,
    threads: u32,
    index: usize,
    out: &Path,
) -> Vec<String> {
    let mut arguments = vec!["run".to_owned(), file.display().to_string()];
    for address in addresses {
        arguments.extend(["--address".to_owned(), address.to_string()]);
    }
    arguments.extend([
        "--threads".to_owned(),
        threads.to_string(),
        "--clients".to_owned(),
        settings.clients.to_string(),
        "--warmup".to_owned(),
        settings.warmup.as_secs_f64().to_string(),
        "--duration".to_owned(),
        settings.duration.as_secs_f64().to_string(),
        "--seed".to_owned(),
        settings.seed.wrapping_add(index as u64).to_string(),
        "--runs".to_owned(),
        "1".to_owned(),
        "--cluster-name".to_owned(),
        settings.credentials.cluster_name.clone(),
        "--out".to_owned(),
        out.display().to_string(),
        "--coordinated".to_owned(),
    ]);
    if let Some(rate) = rate {
        arguments.extend(["--rate".to_owned(), rate.to_string()]);
    }
    if let Some(username) = &settings.credentials.username {
        arguments.extend(["--username".to_owned(), username.clone()]);
    }
    if let Some(password) = &settings.credentials.password {
        arguments.extend(["--password".to_owned(), password.clone()]);
    }
    if !settings.smart_routing {
        arguments.push("--unisocket".to_owned());
    }
    arguments
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, SimulatorError> {
    let text = std::fs::read_to_string(path).map_err(SimulatorError::io(path))?;
    serde_json::from_str(&text).map_err(|error| SimulatorError::Scaling(format!("{}: {error}", path.display())))
}

fn step_of(processes: u32, threads: Vec<u32>, runs: Vec<ScalingRun>, first_average: Option<f64>) -> ScalingStep {
    let ops_per_second = Spread::of(runs.iter().map(|run| run.ops_per_second)).expect("a step has runs");
    let first = first_average.unwrap_or(ops_per_second.average);
    let cpu: Vec<f64> = runs.iter().filter_map(|run| run.server_cpu_seconds_per_million_ops).collect();
    ScalingStep {
        processes,
        threads_per_process: threads,
        p99_max_us: Spread::of(runs.iter().map(|run| run.p99_max_us)).expect("a step has runs"),
        p99_merged_us: Spread::of(runs.iter().map(|run| run.merged.p99_us)).expect("a step has runs"),
        errors: runs.iter().map(|run| run.errors).sum(),
        relative_to_first: if first > 0.0 { ops_per_second.average / first } else { f64::NAN },
        server_cpu_seconds_per_million_ops: if cpu.len() == runs.len() { Spread::of(cpu) } else { None },
        ops_per_second,
        runs,
    }
}

/// `scaling.json`, `scaling.csv` and `scaling-runs.csv`.
fn write_files(out: &Path, result: &ScalingResult) -> Result<(), SimulatorError> {
    results::write_json(&out.join("scaling.json"), result)?;
    let mut steps = String::from(
        "processes,threads_per_process,repeats,ops_per_second_min,ops_per_second_avg,ops_per_second_max,\
         relative_to_first,p99_max_us_avg,p99_merged_us_avg,errors,server_cpu_seconds_per_million_ops_avg\n",
    );
    let mut runs = String::from(
        "processes,threads_per_process,repeat,ops,ops_per_second,errors,p99_max_us,p50_merged_us,p90_merged_us,\
         p99_merged_us,p999_merged_us,max_merged_us,server_cpu_seconds_per_million_ops\n",
    );
    for step in &result.steps {
        let threads: Vec<String> = step.threads_per_process.iter().map(u32::to_string).collect();
        let threads = threads.join(" ");
        let ops = &step.ops_per_second;
        let cpu = step.server_cpu_seconds_per_million_ops.map_or(String::new(), |cpu| format!("{:.4}", cpu.average));
        let _ = writeln!(
            steps,
            "{},{threads},{},{:.1},{:.1},{:.1},{:.4},{:.1},{:.1},{},{cpu}",
            step.processes,
            step.runs.len(),
            ops.min,
            ops.average,
            ops.max,
            step.relative_to_first,
            step.p99_max_us.average,
            step.p99_merged_us.average,
            step.errors
        );
        for run in &step.runs {
            let merged = &run.merged;
            let cpu = run.server_cpu_seconds_per_million_ops.map_or(String::new(), |cpu| format!("{cpu:.4}"));
            let _ = writeln!(
                runs,
                "{},{threads},{},{},{:.1},{},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{cpu}",
                step.processes,
                run.repeat,
                run.ops,
                run.ops_per_second,
                run.errors,
                run.p99_max_us,
                merged.p50_us,
                merged.p90_us,
                merged.p99_us,
                merged.p999_us,
                merged.max_us
            );
        }
    }
    let path = out.join("scaling.csv");
    std::fs::write(&path, steps).map_err(SimulatorError::io(&path))?;
    let path = out.join("scaling-runs.csv");
    std::fs::write(&path, runs).map_err(SimulatorError::io(&path))
}

/// The default results directory: `simulator-results/<UTC time>-scaling-<test name>`.
pub fn default_output_directory(definition: &TestDefinition) -> PathBuf {
    let stamp = results::now_utc().replace(':', "");
    PathBuf::from("simulator-results").join(format!("{stamp}-scaling-{}", definition.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_split_with_the_remainder_first() {
        assert_eq!(split_threads(48, 1), [48]);
        assert_eq!(split_threads(48, 8), [6; 8]);
        assert_eq!(split_threads(10, 4), [3, 3, 2, 2]);
        assert_eq!(split_threads(48, 12).iter().sum::<u32>(), 48);
    }

    #[test]
    fn bad_settings_are_refused() {
        let settings = ScalingSettings {
            processes: vec![1, 2, 4],
            total_threads: 4,
            repeat: 1,
            clients: 1,
            warmup: Duration::ZERO,
            duration: Duration::from_secs(1),
            rate: None,
            seed: 1,
            smart_routing: true,
            credentials: Credentials::default(),
            program: "/bin/true".into(),
            ready_timeout: Duration::from_secs(1),
        };
        settings.validate().unwrap();
        let too_few_threads = ScalingSettings { total_threads: 3, ..settings.clone() };
        assert!(too_few_threads.validate().unwrap_err().to_string().contains("--total-threads"));
        let no_steps = ScalingSettings { processes: vec![], ..settings.clone() };
        assert!(no_steps.validate().is_err());
        let zero = ScalingSettings { processes: vec![0], ..settings.clone() };
        assert!(zero.validate().is_err());
        let repeat = ScalingSettings { repeat: 0, ..settings };
        assert!(repeat.validate().is_err());
    }

    #[test]
    fn children_run_the_test_coordinated() {
        let settings = ScalingSettings {
            processes: vec![2],
            total_threads: 8,
            repeat: 1,
            clients: 2,
            warmup: Duration::from_millis(1500),
            duration: Duration::from_secs(3),
            rate: None,
            seed: 10,
            smart_routing: false,
            credentials: Credentials::new("grid", Some("alice"), Some("pw")).unwrap(),
            program: "/bin/true".into(),
            ready_timeout: Duration::from_secs(1),
        };
        let address: SocketAddr = "127.0.0.1:5701".parse().unwrap();
        let arguments =
            child_arguments(Path::new("/t/a.properties"), &[address], &settings, Some(500.0), 4, 1, Path::new("/o"));
        let expected =
            "run /t/a.properties --address 127.0.0.1:5701 --threads 4 --clients 2 --warmup 1.5 --duration 3 \
                        --seed 11 --runs 1 --cluster-name grid --out /o --coordinated --rate 500 --username alice \
                        --password pw --unisocket";
        assert_eq!(arguments.join(" "), expected);
    }
}
