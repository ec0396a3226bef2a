//! The load generator: connect, load and verify the data set, then warm up and measure.
//!
//! # Measurement
//! Worker tasks (the test's threads) run on the tokio runtime over one or more clients
//! (worker `i` uses client `i mod clients`). One continuous phase: `warmup`, then the measure
//! window of `duration`. Operations count in the results when they *start* inside the window
//! (open loop: when they were *intended* to start), wherever they end; throughput is measured
//! operations ÷ the longer of the window and (last measured completion − window start).
//! - Closed loop: each worker sends its next operation when the previous one answered;
//!   latency = answer − send.
//! - Open loop (`rate`): a pacer thread releases start tokens at the target rate, round robin
//!   over the workers, each stamped with its intended start time (start + k / rate). Latency =
//!   answer − *intended* start, so a stalled member is charged for every operation it delayed
//!   (no coordinated omission). Tokens are never dropped: a worker behind its schedule sends
//!   its queued tokens back to back. After the window the workers drain what was scheduled, for
//!   at most `max(duration, 5 s)`; tokens still unsent then count as `missed` errors. The pacer
//!   sleeps with `std::thread::sleep` (tens of µs of slack, unlike tokio's 1 ms timer), so an
//!   idle driver adds little delay; `start_delay` reports how late operations really started.
//!
//! A queue test's producer whose queue is at its backlog bound waits before its next
//! operation: in closed loop before the operation is timed, in open loop after its start
//! token (so the wait counts, from the intended start).
//!
//! A sampler task prints a progress line each second (stderr) and builds the per-second
//! timeline; server CPU (user + system, `/proc/<pid>/stat`) is read at the window's start and
//! after the last worker finished.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferrogrid_client::{Client, ClientConfig, ClientError, Map};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinSet;

use crate::error::SimulatorError;
use crate::generators::Rng;
use crate::stats::Recorder;
use crate::system;
use crate::workload::{Proxies, Worker, Workload};

/// Entries per `putAll` of the load phase.
const LOAD_BATCH: u64 = 2_000;
/// `putAll` requests in flight during the load phase.
const LOAD_CONCURRENCY: usize = 8;
/// How long a load request the member refuses (a tenant over its rate quota) is retried.
pub const LOAD_RETRY_FOR: Duration = Duration::from_secs(30);
/// Longest pause between those retries.
const LOAD_RETRY_MAX_PAUSE: Duration = Duration::from_millis(200);
/// Gets that check loaded values before measuring.
const VERIFY_SAMPLES: u64 = 1_000;
/// Start tokens queued per open-loop worker; the pacer keeps the rest until there is room.
const TOKEN_QUEUE: usize = 256;
/// Shortest pacer sleep, and its sleep while every queue is full.
const PACER_MIN_SLEEP: Duration = Duration::from_micros(20);
const PACER_BACKLOG_SLEEP: Duration = Duration::from_micros(200);
/// Shortest drain allowed after an open-loop window.
const MIN_DRAIN: Duration = Duration::from_secs(5);
/// A non-terminal stderr gets a progress line this often.
const PLAIN_PROGRESS_EVERY_SECONDS: u64 = 5;
/// Invocation timeout of the driver's clients (an operation slower than this is an error).
const INVOCATION_TIMEOUT: Duration = Duration::from_secs(30);

/// Who the clients say they are: the cluster name and, for members with security or tenants,
/// a username and password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// Default `dev`.
    pub cluster_name: String,
    /// None: no credentials are sent (what a member without security or tenants accepts).
    pub username: Option<String>,
    pub password: Option<String>,
}

impl Default for Credentials {
    fn default() -> Self {
        Credentials { cluster_name: "dev".to_owned(), username: None, password: None }
    }
}

impl Credentials {
    /// Credentials from command-line text: an empty or missing username sends none; a
    /// password needs a username.
    pub fn new(
        cluster_name: &str,
        username: Option<&str>,
        password: Option<&str>,
    ) -> Result<Credentials, SimulatorError> {
        let username = username.filter(|name| !name.is_empty()).map(str::to_owned);
        let password = password.filter(|password| !password.is_empty()).map(str::to_owned);
        if username.is_none() && password.is_some() {
            return Err(SimulatorError::Input("a password needs a username".into()));
        }
        if cluster_name.is_empty() {
            return Err(SimulatorError::Input("--cluster-name: not empty".into()));
        }
        // A member with security or tenants compares the password exactly: a username alone
        // is sent with an empty password.
        let password = username.as_ref().map(|_| password.unwrap_or_default());
        Ok(Credentials { cluster_name: cluster_name.to_owned(), username, password })
    }

    /// `config` with these credentials.
    pub fn apply(&self, config: ClientConfig) -> ClientConfig {
        ClientConfig {
            cluster_name: self.cluster_name.clone(),
            username: self.username.clone(),
            password: self.password.clone(),
            ..config
        }
    }
}

/// Connects `count` clients to the members at `addresses`, authenticated with `credentials`.
pub async fn connect(
    addresses: &[SocketAddr],
    count: u32,
    smart_routing: bool,
    credentials: &Credentials,
) -> Result<Vec<Client>, SimulatorError> {
    let config = credentials.apply(ClientConfig {
        addresses: addresses.to_vec(),
        smart_routing,
        invocation_timeout: INVOCATION_TIMEOUT,
        connect_timeout: Duration::from_secs(10),
        ..Default::default()
    });
    let mut clients = Vec::with_capacity(count as usize);
    for _ in 0..count {
        clients.push(Client::connect(config.clone()).await?);
    }
    Ok(clients)
}

/// What the load phase did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSummary {
    pub entries: u64,
    pub seconds: f64,
    /// `size()` after loading (equal to `entries`, or the load failed).
    pub size: u64,
    /// Gets that returned exactly the loaded value.
    pub verified_gets: u64,
}

impl LoadSummary {
    /// A data set this process did not load (a `scaling` child: its parent loaded it).
    pub fn loaded_elsewhere(entries: u64) -> LoadSummary {
        LoadSummary { entries, seconds: 0.0, size: 0, verified_gets: 0 }
    }
}

/// Empties the map, adds the workload's index (if it has one), writes the workload's data set with `putAll` batches, then checks that
/// `size()` equals the entry count and that sampled gets return the written values. A request
/// the member refuses with an error (a tenant over its rate quota) is retried, for at most
/// [`LOAD_RETRY_FOR`] per request.
pub async fn load(workload: &Arc<Workload>, maps: &[Map], seed: u64) -> Result<LoadSummary, SimulatorError> {
    let started = Instant::now();
    patiently(|| maps[0].clear()).await?;
    if let Some(attribute) = workload.sorted_index() {
        let attributes = [attribute];
        patiently(|| maps[0].add_index(true, &attributes)).await?;
    }
    let count = workload.load_count();
    let mut in_flight = JoinSet::new();
    let mut next = 0u64;
    while next < count || !in_flight.is_empty() {
        while next < count && in_flight.len() < LOAD_CONCURRENCY {
            let end = (next + LOAD_BATCH).min(count);
            let map = maps[((next / LOAD_BATCH) % maps.len() as u64) as usize].clone();
            let workload = workload.clone();
            in_flight.spawn(async move {
                patiently(|| {
                    let entries = (next..end)
                        .map(|index| {
                            let (key, value) = workload.load_entry(index);
                            (key.into_owned(), value.to_vec())
                        })
                        .collect();
                    map.put_all(entries)
                })
                .await
            });
            next = end;
        }
        if let Some(joined) = in_flight.join_next().await {
            joined.expect("load tasks do not panic")?;
        }
    }
    let size = patiently(|| maps[0].size()).await? as u64;
    if size != count {
        return Err(SimulatorError::Verification(format!(
            "map {} has {size} entries, {count} were loaded",
            maps[0].name()
        )));
    }
    let mut rng = Rng::new(seed ^ 0x5EED);
    let samples = VERIFY_SAMPLES.min(count);
    for _ in 0..samples {
        let index = rng.below(count);
        let (key, expected) = workload.load_entry(index);
        let found = patiently(|| maps[0].get(&key)).await?;
        if found.as_deref() != Some(expected) {
            let what = if found.is_none() { "missing" } else { "has another value" };
            return Err(SimulatorError::Verification(format!("loaded entry {index} is {what}")));
        }
    }
    Ok(LoadSummary { entries: count, seconds: started.elapsed().as_secs_f64(), size, verified_gets: samples })
}

/// Sends `request` again, after a growing pause, while the member answers it with an error
/// (`ClientError::Server`) and [`LOAD_RETRY_FOR`] has not passed.
async fn patiently<T, F, R>(mut request: F) -> Result<T, ClientError>
where
    F: FnMut() -> R,
    R: std::future::Future<Output = Result<T, ClientError>>,
{
    let deadline = Instant::now() + LOAD_RETRY_FOR;
    let mut pause = Duration::from_millis(1);
    loop {
        match request().await {
            Err(ClientError::Server { .. }) if Instant::now() + pause < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(LOAD_RETRY_MAX_PAUSE);
            }
            outcome => return outcome,
        }
    }
}

/// How to measure.
#[derive(Debug, Clone)]
pub struct MeasureSettings {
    pub threads: u32,
    pub warmup: Duration,
    pub duration: Duration,
    /// Open loop at this many operations per second; None: closed loop.
    pub rate: Option<f64>,
    /// Shown at the start of progress lines.
    pub label: String,
    /// Processes whose CPU time is the "server CPU".
    pub server_pids: Vec<u32>,
    /// When the warm-up begins (measuring waits for it); None: now. Measurements that run
    /// side by side share their window this way.
    pub start: Option<Instant>,
    /// Progress as a line every few seconds even on a terminal (several measurements print
    /// side by side).
    pub plain_progress: bool,
}

/// One second of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds since the warm-up started, at the end of this interval.
    pub second: f64,
    /// `warmup`, `measure` or `drain`.
    pub phase: String,
    /// Completed operations per second over the interval (all phases counted).
    pub ops_per_second: f64,
    pub errors: u64,
}

/// What a measurement produced.
#[derive(Debug)]
pub struct Measurement {
    pub recorder: Recorder,
    /// The window, or longer: until the last measured completion.
    pub measure_seconds: f64,
    pub timeline: Vec<TimelinePoint>,
    pub server_cpu_seconds: Option<f64>,
    pub driver_cpu_seconds: Option<f64>,
}

/// When the phases begin and end.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: Instant,
    measure_start: Instant,
    measure_end: Instant,
    drain_deadline: Instant,
}

impl Window {
    fn phase_at(&self, at: Instant) -> &'static str {
        if at <= self.measure_start {
            "warmup"
        } else if at <= self.measure_end {
            "measure"
        } else {
            "drain"
        }
    }
}

/// Counters every worker bumps; the sampler reads them.
#[derive(Debug, Default)]
struct Progress {
    completed: AtomicU64,
    errors: AtomicU64,
    /// Woken once when every worker has finished.
    done: Notify,
}

/// Warms up and measures `workload` through `proxies`, one per client (the data set must be
/// loaded).
pub async fn measure(workload: Arc<Workload>, proxies: &[Proxies], settings: &MeasureSettings) -> Measurement {
    assert!(settings.threads >= 1 && !proxies.is_empty(), "at least one worker and one client");
    let start = match settings.start {
        Some(start) => {
            tokio::time::sleep_until(start.into()).await;
            start
        }
        None => Instant::now(),
    };
    let measure_start = start + settings.warmup;
    let measure_end = measure_start + settings.duration;
    let drain_deadline = measure_end + settings.duration.max(MIN_DRAIN);
    let window = Window { start, measure_start, measure_end, drain_deadline };
    let progress = Arc::new(Progress::default());
    let mut workers = JoinSet::new();
    let mut senders = Vec::new();
    for index in 0..settings.threads {
        let proxies = proxies[index as usize % proxies.len()].clone();
        let (workload, progress, worker) = (workload.clone(), progress.clone(), workload.worker(index));
        if settings.rate.is_some() {
            let (sender, tokens) = mpsc::channel(TOKEN_QUEUE);
            senders.push(sender);
            workers.spawn(open_loop(workload, proxies, worker, tokens, window, progress));
        } else {
            workers.spawn(closed_loop(workload, proxies, worker, window, progress));
        }
    }
    let pacer = settings.rate.map(|rate| std::thread::spawn(move || pace(senders, rate, window)));
    let pids = settings.server_pids.clone();
    let cpu_at_start = tokio::spawn(async move {
        tokio::time::sleep_until(measure_start.into()).await;
        (system::cpu_of(&pids), system::own_cpu())
    });
    let sampler = tokio::spawn(sample(progress.clone(), window, settings.label.clone(), settings.plain_progress));
    let mut recorder = Recorder::new(workload.probes.len());
    while let Some(joined) = workers.join_next().await {
        recorder.merge(joined.expect("worker tasks do not panic"));
    }
    let (server_end, driver_end) = (system::cpu_of(&settings.server_pids), system::own_cpu());
    progress.done.notify_one();
    if let Some(pacer) = pacer {
        pacer.join().expect("the pacer does not panic");
    }
    let timeline = sampler.await.expect("the sampler does not panic");
    let (server_start, driver_start) = cpu_at_start.await.expect("the CPU reading does not panic");
    let last_completion =
        recorder.last_completion.map_or(Duration::ZERO, |last| last.saturating_duration_since(measure_start));
    let measure_seconds = last_completion.max(settings.duration).as_secs_f64();
    Measurement {
        recorder,
        measure_seconds,
        timeline,
        server_cpu_seconds: system::cpu_difference(server_start, server_end),
        driver_cpu_seconds: system::cpu_difference(driver_start, driver_end),
    }
}

async fn closed_loop(
    workload: Arc<Workload>,
    proxies: Proxies,
    mut worker: Worker,
    window: Window,
    progress: Arc<Progress>,
) -> Recorder {
    let mut recorder = Recorder::new(workload.probes.len());
    while Instant::now() < window.measure_end {
        // A producer at its queue's backlog bound waits here, before its operation is timed.
        workload.wait_for_room(&worker, window.measure_end).await;
        let operation = workload.next_operation(&mut worker);
        let probe = operation.probe();
        let sent = Instant::now();
        let result = workload.execute(&proxies, operation).await;
        let answered = Instant::now();
        account(&mut recorder, &progress, probe, result, sent, answered, sent >= window.measure_start);
    }
    recorder
}

async fn open_loop(
    workload: Arc<Workload>,
    proxies: Proxies,
    mut worker: Worker,
    mut tokens: mpsc::Receiver<Instant>,
    window: Window,
    progress: Arc<Progress>,
) -> Recorder {
    let mut recorder = Recorder::new(workload.probes.len());
    while let Some(intended) = tokens.recv().await {
        if Instant::now() > window.drain_deadline {
            recorder.missed += 1;
            while tokens.try_recv().is_ok() {
                recorder.missed += 1;
            }
            break;
        }
        // Waiting at a backlog bound delays the operation past its intended start: it counts.
        workload.wait_for_room(&worker, window.drain_deadline).await;
        let operation = workload.next_operation(&mut worker);
        let probe = operation.probe();
        let sent = Instant::now();
        let measured = intended >= window.measure_start;
        if measured {
            recorder.record_start_delay(sent.saturating_duration_since(intended));
        }
        let result = workload.execute(&proxies, operation).await;
        account(&mut recorder, &progress, probe, result, intended, Instant::now(), measured);
    }
    recorder
}

/// Counts one finished operation in the progress counters and, if `measured`, the recorder:
/// a success under the probe the execution returned, an error under the operation's `probe`.
fn account(
    recorder: &mut Recorder,
    progress: &Progress,
    probe: usize,
    result: Result<usize, crate::error::OperationError>,
    started: Instant,
    answered: Instant,
    measured: bool,
) {
    progress.completed.fetch_add(1, Ordering::Relaxed);
    match result {
        Ok(counted) if measured => recorder.record(counted, answered - started, answered),
        Ok(_) => {}
        Err(error) => {
            progress.errors.fetch_add(1, Ordering::Relaxed);
            if measured {
                recorder.record_error(probe, error.to_string(), answered);
            }
        }
    }
}

/// The open-loop pacer (a plain thread): releases token k, stamped `start + k / rate`, to
/// worker `k mod workers` once its time has come; keeps tokens that do not fit a full queue
/// and sends them as room appears. Ends when every token of the window is handed over, the
/// drain deadline passes, or the workers are gone.
fn pace(senders: Vec<mpsc::Sender<Instant>>, rate: f64, window: Window) {
    let workers = senders.len() as u64;
    let interval_ns = 1e9 / rate;
    let window_ns = (window.measure_end - window.start).as_nanos() as f64;
    let total = (window_ns / interval_ns).ceil() as u64;
    let intended = |token: u64| window.start + Duration::from_nanos((token as f64 * interval_ns) as u64);
    let mut next: Vec<u64> = (0..workers).collect();
    let mut open = vec![true; senders.len()];
    loop {
        let now = Instant::now();
        let elapsed_ns = now.saturating_duration_since(window.start).as_nanos() as f64;
        let due = ((elapsed_ns / interval_ns) as u64 + 1).min(total);
        let mut backlog = false;
        for (worker, sender) in senders.iter().enumerate() {
            while open[worker] && next[worker] < due {
                match sender.try_send(intended(next[worker])) {
                    Ok(()) => next[worker] += workers,
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        backlog = true;
                        break;
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => open[worker] = false,
                }
            }
        }
        let finished = next.iter().zip(&open).all(|(&token, &open)| !open || token >= total);
        if finished || now > window.drain_deadline {
            return;
        }
        let pause = if backlog {
            PACER_BACKLOG_SLEEP
        } else {
            intended(due).saturating_duration_since(Instant::now()).max(PACER_MIN_SLEEP)
        };
        std::thread::sleep(pause);
    }
}

/// Prints progress each second and returns the timeline, until the workers are done. Each
/// point covers the second before it; its phase is the one at the second's middle.
async fn sample(progress: Arc<Progress>, window: Window, label: String, plain: bool) -> Vec<TimelinePoint> {
    let terminal = !plain && std::io::stderr().is_terminal();
    let mut ticker = tokio::time::interval_at((window.start + Duration::from_secs(1)).into(), Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (mut last_completed, mut last_errors, mut last_at) = (0, 0, window.start);
    let mut timeline = Vec::new();
    let total_seconds = (window.measure_end - window.start).as_secs_f64();
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = progress.done.notified() => break,
        }
        let now = Instant::now();
        let completed = progress.completed.load(Ordering::Relaxed);
        let errors = progress.errors.load(Ordering::Relaxed);
        let seconds = (now - last_at).as_secs_f64();
        let point = TimelinePoint {
            second: (now - window.start).as_secs_f64(),
            phase: window.phase_at(now - (now - last_at) / 2).to_owned(),
            ops_per_second: (completed - last_completed) as f64 / seconds,
            errors: errors - last_errors,
        };
        let line = format!(
            "{label}: {} {:>5.0}/{total_seconds:.0} s  {:>10.0} ops/s  {} errors",
            point.phase, point.second, point.ops_per_second, errors
        );
        if terminal {
            eprint!("\r{line}   ");
        } else if timeline.len() as u64 % PLAIN_PROGRESS_EVERY_SECONDS == PLAIN_PROGRESS_EVERY_SECONDS - 1 {
            eprintln!("{line}");
        }
        timeline.push(point);
        (last_completed, last_errors, last_at) = (completed, errors, now);
    }
    if terminal {
        eprintln!();
    }
    let _ = std::io::stderr().flush();
    timeline
}
