//! `tenants`: several tenants, each with its own credentials, test file, threads and rate,
//! driven against one cluster at the same time.
//!
//! Every tenant gets its own clients (authenticated with its username and password), loads
//! and verifies its own data set, and then all tenants warm up and measure over **the same
//! window** (one start instant shared by every measurement). A member with tenants keeps each
//! tenant's maps apart, so tenants may use the same map names; on a member without tenants
//! they share maps, so two tenants with the same credentials and the same map are refused.
//! Operations a member refuses (a tenant over its quota) are counted as errors by message,
//! never fatal.
//!
//! ```text
//! <out>/tenants.json            the summary: per tenant ops/s, percentiles per probe, errors
//! <out>/summary.csv             one row per tenant and probe
//! <out>/report.html             the usual report, one series per tenant
//! <out>/<tenant>/result.json    the tenant's full result (as `run` writes it)
//! <out>/member-<k>.log          with --start
//! ```
//!
//! Server CPU is the cluster's, over the shared window, so it is reported for all tenants
//! together (and the driver's CPU likewise), not per tenant.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;

use crate::definition::TestDefinition;
use crate::driver::{Credentials, MeasureSettings, Measurement};
use crate::error::SimulatorError;
use crate::report;
use crate::results::{self, thousands, LatencySummary, RunResult, SeriesSummary};
use crate::runner::{self, RunContext, RunSettings, Session, Target};
use crate::stats::ErrorCount;
use crate::system;

/// Most tenants in one run.
pub const MAX_TENANTS: usize = 64;
/// Time between the last tenant's load and the shared start, so every measurement is waiting.
const START_MARGIN: Duration = Duration::from_millis(200);

/// One `--tenant NAME:USERNAME:PASSWORD:TEST_FILE[:RATE]`.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantSpec {
    /// Letters, digits, `-`, `_`, `.` (not first), at most 64: also its results directory.
    pub name: String,
    /// None: no credentials (a member without security or tenants).
    pub username: Option<String>,
    pub password: Option<String>,
    pub file: PathBuf,
    /// Open loop at this rate; None: the file's `target`, else closed loop.
    pub rate: Option<f64>,
    /// `--tenant-threads NAME:N`; None: the file's thread count.
    pub threads: Option<u32>,
}

impl TenantSpec {
    /// Parses `NAME:USERNAME:PASSWORD:TEST_FILE[:RATE]`. USERNAME and PASSWORD may be empty
    /// (`NAME:::FILE`: no credentials); the password cannot contain `:`. A last field that is
    /// a number is the rate.
    pub fn parse(text: &str) -> Result<TenantSpec, SimulatorError> {
        let bad = |why: &str| {
            SimulatorError::Input(format!(
                "--tenant {text:?}: {why} (expected NAME:USERNAME:PASSWORD:TEST_FILE[:RATE])"
            ))
        };
        let mut fields = text.splitn(4, ':');
        let (Some(name), Some(username), Some(password), Some(rest)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(bad("too few fields"));
        };
        let valid_name = name.len() <= 64
            && name.chars().next().is_some_and(|first| first.is_ascii_alphanumeric())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid_name {
            return Err(bad("NAME: 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit"));
        }
        let (file, rate) = match rest.rsplit_once(':') {
            Some((file, rate)) if rate.parse::<f64>().is_ok() => (file, Some(rate.parse::<f64>().expect("checked"))),
            _ => (rest, None),
        };
        if file.is_empty() {
            return Err(bad("TEST_FILE is empty"));
        }
        if rate.is_some_and(|rate| !(rate.is_finite() && rate > 0.0)) {
            return Err(bad("RATE: operations per second above 0"));
        }
        let credentials =
            Credentials::new("dev", Some(username), Some(password)).map_err(|error| bad(&error.to_string()))?;
        Ok(TenantSpec {
            name: name.to_owned(),
            username: credentials.username,
            password: credentials.password,
            file: PathBuf::from(file),
            rate,
            threads: None,
        })
    }

    fn credentials(&self, cluster_name: &str) -> Credentials {
        Credentials {
            cluster_name: cluster_name.to_owned(),
            username: self.username.clone(),
            password: self.password.clone(),
        }
    }
}

/// Applies one `--tenant-threads NAME:N` to the tenant named.
pub fn set_threads(tenants: &mut [TenantSpec], text: &str) -> Result<(), SimulatorError> {
    let bad = |why: String| SimulatorError::Input(format!("--tenant-threads {text:?}: {why} (expected NAME:N)"));
    let (name, threads) = text.rsplit_once(':').ok_or_else(|| bad("no ':'".into()))?;
    let threads: u32 = threads.parse().map_err(|_| bad("N: a number of threads".into()))?;
    let tenant =
        tenants.iter_mut().find(|tenant| tenant.name == name).ok_or_else(|| bad(format!("no tenant {name:?}")))?;
    tenant.threads = Some(threads);
    Ok(())
}

/// What every tenant shares.
#[derive(Debug, Clone)]
pub struct TenantsSettings {
    pub tenants: Vec<TenantSpec>,
    pub cluster_name: String,
    /// Client instances per tenant.
    pub clients: u32,
    pub warmup: Duration,
    pub duration: Duration,
    /// Tenant `i` (0-based) uses seed + i.
    pub seed: u64,
    pub smart_routing: bool,
}

impl TenantsSettings {
    fn run_settings(&self, index: usize) -> RunSettings {
        let tenant = &self.tenants[index];
        RunSettings {
            threads: tenant.threads,
            clients: self.clients,
            warmup: self.warmup,
            duration: self.duration,
            rate: tenant.rate,
            seed: self.seed.wrapping_add(index as u64),
            smart_routing: self.smart_routing,
            credentials: tenant.credentials(&self.cluster_name),
            coordinated: false,
        }
    }

    /// Checks the settings and reads every tenant's test file.
    pub fn prepare(&self) -> Result<Vec<TestDefinition>, SimulatorError> {
        if self.tenants.is_empty() {
            return Err(SimulatorError::Input("tenants: at least one --tenant".into()));
        }
        if self.tenants.len() > MAX_TENANTS {
            return Err(SimulatorError::Input(format!("tenants: at most {MAX_TENANTS} --tenant")));
        }
        let mut names = HashSet::new();
        for tenant in &self.tenants {
            if !names.insert(tenant.name.as_str()) {
                return Err(SimulatorError::Input(format!("--tenant {}: the name is given twice", tenant.name)));
            }
        }
        let mut definitions = Vec::with_capacity(self.tenants.len());
        for (index, tenant) in self.tenants.iter().enumerate() {
            let in_tenant = |source| SimulatorError::Tenant { tenant: tenant.name.clone(), source: Box::new(source) };
            self.run_settings(index).validate().map_err(in_tenant)?;
            let definition = TestDefinition::read(&tenant.file).map_err(in_tenant)?;
            definition.require_map_data("tenants").map_err(in_tenant)?;
            definitions.push(definition);
        }
        let mut maps = HashSet::new();
        for (tenant, definition) in self.tenants.iter().zip(&definitions) {
            if !maps.insert((tenant.username.as_deref(), definition.map_name())) {
                return Err(SimulatorError::Input(format!(
                    "--tenant {}: another tenant with the same username uses map {:?}: they would load and \
                     clear the same map (give the tests different `basename`/`table`, or the tenants their own users)",
                    tenant.name,
                    definition.map_name()
                )));
            }
        }
        Ok(definitions)
    }
}

/// One tenant in `tenants.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TenantSummary {
    pub name: String,
    pub username: Option<String>,
    pub file: String,
    pub map: String,
    /// `closed-loop` or `open-loop`.
    pub mode: String,
    pub target_ops_per_second: Option<f64>,
    pub threads: u32,
    pub clients: u32,
    pub loaded_entries: u64,
    /// Successful operations in the window.
    pub ops: u64,
    /// The window, or longer: until the tenant's last measured completion.
    pub measure_seconds: f64,
    pub ops_per_second: f64,
    pub errors: u64,
    /// `all` first, then each probe (latency from the intended start in open loop).
    pub latency: Vec<LatencySummary>,
    pub error_messages: Vec<ErrorCount>,
    /// The tenant's `result.json`, relative to the results directory.
    pub result: String,
}

/// `tenants.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TenantsResult {
    pub started_at: String,
    /// `ferrogrid`, `hazelcast`, or the first address.
    pub target: String,
    pub members: u32,
    pub cluster_name: String,
    pub warmup_seconds: f64,
    pub duration_seconds: f64,
    pub tenants: Vec<TenantSummary>,
    pub total_ops: u64,
    /// The sum of the tenants' ops/s.
    pub total_ops_per_second: f64,
    pub total_errors: u64,
    pub server_pids: Vec<u32>,
    /// The members' CPU over the shared window, all tenants together.
    pub server_cpu_seconds: Option<f64>,
    pub server_cpu_seconds_per_million_ops: Option<f64>,
    pub driver_cpu_seconds: Option<f64>,
    pub driver_cpu_seconds_per_million_ops: Option<f64>,
}

impl TenantsResult {
    /// The table printed at the end: one row per tenant and probe, then the error messages.
    pub fn text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "{:<16} {:<12} {:<11} {:>10} {:>7} {:<18} {:>12} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8}",
            "tenant",
            "user",
            "mode",
            "rate",
            "threads",
            "probe",
            "ops/s",
            "p50 µs",
            "p90 µs",
            "p99 µs",
            "p99.9 µs",
            "max µs",
            "errors"
        );
        for tenant in &self.tenants {
            let seconds = tenant.measure_seconds;
            for (index, probe) in tenant.latency.iter().enumerate() {
                let ops_per_second = if seconds > 0.0 { probe.count as f64 / seconds } else { 0.0 };
                let (name, user, mode, rate, threads) = if index == 0 {
                    (
                        tenant.name.as_str(),
                        tenant.username.as_deref().unwrap_or("-"),
                        tenant.mode.as_str(),
                        tenant.target_ops_per_second.map_or("-".to_owned(), thousands),
                        tenant.threads.to_string(),
                    )
                } else {
                    ("", "", "", String::new(), String::new())
                };
                let _ = writeln!(
                    text,
                    "{name:<16} {user:<12} {mode:<11} {rate:>10} {threads:>7} {:<18} {:>12} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>10.0} {:>8}",
                    probe.name,
                    thousands(ops_per_second),
                    probe.p50_us,
                    probe.p90_us,
                    probe.p99_us,
                    probe.p999_us,
                    probe.max_us,
                    probe.errors
                );
            }
        }
        let server = self
            .server_cpu_seconds_per_million_ops
            .map_or(String::new(), |cpu| format!(", server {cpu:.2} CPU-s per million ops"));
        let _ = writeln!(
            text,
            "total: {} ops/s, {} errors{server}",
            thousands(self.total_ops_per_second),
            self.total_errors
        );
        for tenant in self.tenants.iter().filter(|tenant| !tenant.error_messages.is_empty()) {
            let _ = writeln!(text, "errors of {}:", tenant.name);
            for error in &tenant.error_messages {
                let _ = writeln!(text, "  {:>10} × {}", error.count, error.message);
            }
        }
        text
    }
}

/// Runs every tenant against `target` into `out`; returns the summary and each tenant's
/// result (in the order of `settings.tenants`).
pub async fn run(
    settings: &TenantsSettings,
    target: &Target,
    out: &Path,
) -> Result<(TenantsResult, Vec<RunResult>), SimulatorError> {
    let definitions = settings.prepare()?;
    let target = authenticated_as_first_tenant(settings, target);
    target.prepare()?;
    std::fs::create_dir_all(out).map_err(SimulatorError::io(out))?;
    let label = target.label();
    let started_at = results::now_utc();
    let (cluster, addresses, server_pids) = target.start_members("", out).await?;

    let sessions = open_sessions(settings, &definitions, &addresses).await?;
    let (measured, server_cpu_seconds, driver_cpu_seconds) =
        measure_together(settings, &definitions, sessions, &server_pids).await;

    let members = addresses.len() as u32;
    let mut runs = Vec::with_capacity(settings.tenants.len());
    let mut summaries = Vec::with_capacity(settings.tenants.len());
    for (index, entry) in measured.into_iter().enumerate() {
        let entry = entry.expect("every tenant was measured");
        let result = tenant_result(settings, index, &definitions[index], entry, &started_at, members, out).await?;
        summaries.push(summary_of(&settings.tenants[index], &definitions[index], &result));
        runs.push(result);
    }
    drop(cluster);

    let total_ops: u64 = runs.iter().map(|run| run.ops).sum();
    let per_million = |cpu: f64| (total_ops > 0).then(|| cpu / (total_ops as f64 / 1e6));
    let result = TenantsResult {
        started_at,
        target: label,
        members,
        cluster_name: settings.cluster_name.clone(),
        warmup_seconds: settings.warmup.as_secs_f64(),
        duration_seconds: settings.duration.as_secs_f64(),
        total_ops,
        total_ops_per_second: runs.iter().map(|run| run.ops_per_second).sum(),
        total_errors: runs.iter().map(|run| run.errors).sum(),
        tenants: summaries,
        server_pids,
        server_cpu_seconds,
        server_cpu_seconds_per_million_ops: server_cpu_seconds.and_then(per_million),
        driver_cpu_seconds,
        driver_cpu_seconds_per_million_ops: driver_cpu_seconds.and_then(per_million),
    };
    write_files(out, settings, &definitions, &result, &runs)?;
    Ok((result, runs))
}

/// `target`, with a started cluster's readiness check authenticating as the first tenant: a
/// member with tenants may refuse clients without credentials.
fn authenticated_as_first_tenant(settings: &TenantsSettings, target: &Target) -> Target {
    match target {
        Target::Start(cluster) => {
            let mut cluster = cluster.clone();
            cluster.credentials = settings.tenants[0].credentials(&settings.cluster_name);
            Target::Start(cluster)
        }
        existing => existing.clone(),
    }
}

/// One tenant's session, measure settings and measurement.
type Measured = (Session, MeasureSettings, Measurement);

/// Measures every tenant's session over one shared window. Returns each tenant's measurement
/// (by index), and the CPU seconds the servers and this process spent in the measure window.
async fn measure_together(
    settings: &TenantsSettings,
    definitions: &[TestDefinition],
    sessions: Vec<Session>,
    server_pids: &[u32],
) -> (Vec<Option<Measured>>, Option<f64>, Option<f64>) {
    let start = Instant::now() + START_MARGIN;
    let measure_start = start + settings.warmup;
    let pids = server_pids.to_vec();
    let cpu_at_start = tokio::spawn(async move {
        tokio::time::sleep_until(measure_start.into()).await;
        (system::cpu_of(&pids), system::own_cpu())
    });
    let mut measuring = JoinSet::new();
    for (index, session) in sessions.into_iter().enumerate() {
        let run_settings = settings.run_settings(index);
        let measure = MeasureSettings {
            threads: run_settings.threads_for(&definitions[index]),
            warmup: settings.warmup,
            duration: settings.duration,
            rate: run_settings.rate_for(&definitions[index]),
            label: format!("[tenant {}]", settings.tenants[index].name),
            server_pids: Vec::new(),
            start: Some(start),
            plain_progress: true,
        };
        measuring.spawn(async move {
            let measurement = session.measure(&measure).await;
            (index, session, measure, measurement)
        });
    }
    let mut measured: Vec<Option<Measured>> = (0..settings.tenants.len()).map(|_| None).collect();
    while let Some(joined) = measuring.join_next().await {
        let (index, session, measure, measurement) = joined.expect("measurements do not panic");
        measured[index] = Some((session, measure, measurement));
    }
    let (server_end, driver_end) = (system::cpu_of(server_pids), system::own_cpu());
    let (server_start, driver_start) = cpu_at_start.await.expect("the CPU reading does not panic");
    (measured, system::cpu_difference(server_start, server_end), system::cpu_difference(driver_start, driver_end))
}

/// Tenant `index`'s result, its session closed, written to `<out>/<tenant>/result.json`.
async fn tenant_result(
    settings: &TenantsSettings,
    index: usize,
    definition: &TestDefinition,
    (session, measure, measurement): Measured,
    started_at: &str,
    members: u32,
    out: &Path,
) -> Result<RunResult, SimulatorError> {
    let tenant = &settings.tenants[index];
    let run_settings = settings.run_settings(index);
    let load = session.load.clone();
    let probes = session.probes();
    session.close().await;
    let mut result = runner::run_result(RunContext {
        definition,
        target: tenant.name.clone(),
        run: 1,
        started_at: started_at.to_owned(),
        settings: &run_settings,
        measure: &measure,
        members,
        load,
        probes,
        server_pids: Vec::new(),
        measurement,
        outcome: Default::default(),
    });
    // The process's CPU is every tenant's: reported once, in tenants.json.
    result.driver_cpu_seconds = None;
    result.driver_cpu_seconds_per_million_ops = None;
    let directory = out.join(&tenant.name);
    std::fs::create_dir_all(&directory).map_err(SimulatorError::io(&directory))?;
    results::write_json(&directory.join("result.json"), &result)?;
    Ok(result)
}

/// Connects every tenant's clients and loads every tenant's data set, all at once.
async fn open_sessions(
    settings: &TenantsSettings,
    definitions: &[TestDefinition],
    addresses: &[SocketAddr],
) -> Result<Vec<Session>, SimulatorError> {
    let mut opening = JoinSet::new();
    for (index, definition) in definitions.iter().enumerate() {
        let (definition, addresses, run_settings) =
            (definition.clone(), addresses.to_vec(), settings.run_settings(index));
        let tenant = settings.tenants[index].name.clone();
        opening.spawn(async move {
            let label = format!("[tenant {tenant}]");
            let opened = Session::open(&definition, &addresses, &run_settings, &label).await;
            (index, opened.map_err(|source| SimulatorError::Tenant { tenant, source: Box::new(source) }))
        });
    }
    let mut sessions: Vec<Option<Session>> = (0..definitions.len()).map(|_| None).collect();
    let mut failure = None;
    while let Some(joined) = opening.join_next().await {
        match joined.expect("loading does not panic") {
            (index, Ok(session)) => sessions[index] = Some(session),
            (_, Err(error)) => {
                failure.get_or_insert(error);
            }
        }
    }
    if let Some(error) = failure {
        for session in sessions.into_iter().flatten() {
            session.close().await;
        }
        return Err(error);
    }
    Ok(sessions.into_iter().map(|session| session.expect("every tenant connected")).collect())
}

fn summary_of(tenant: &TenantSpec, definition: &TestDefinition, result: &RunResult) -> TenantSummary {
    TenantSummary {
        name: tenant.name.clone(),
        username: tenant.username.clone(),
        file: tenant.file.display().to_string(),
        map: definition.map_name().to_owned(),
        mode: result.mode.clone(),
        target_ops_per_second: result.target_ops_per_second,
        threads: result.threads,
        clients: result.clients,
        loaded_entries: result.load.entries,
        ops: result.ops,
        measure_seconds: result.measure_seconds,
        ops_per_second: result.ops_per_second,
        errors: result.errors,
        latency: std::iter::once(&result.all).chain(&result.probes).map(LatencySummary::of).collect(),
        error_messages: result.error_messages.clone(),
        result: format!("{}/result.json", tenant.name),
    }
}

/// `tenants.json`, `summary.csv` and `report.html`.
fn write_files(
    out: &Path,
    settings: &TenantsSettings,
    definitions: &[TestDefinition],
    result: &TenantsResult,
    runs: &[RunResult],
) -> Result<(), SimulatorError> {
    results::write_json(&out.join("tenants.json"), result)?;
    results::write_csv(&out.join("summary.csv"), runs)?;
    let series: Vec<(String, Vec<RunResult>)> =
        runs.iter().map(|run| (run.target.clone(), vec![run.clone()])).collect();
    let summaries: Vec<SeriesSummary> = series.iter().map(|(name, runs)| SeriesSummary::of(name, runs)).collect();
    let tests: serde_json::Map<String, serde_json::Value> = settings
        .tenants
        .iter()
        .zip(definitions)
        .map(|(tenant, definition)| (tenant.name.clone(), definition.describe()))
        .collect();
    let html = report::html("tenants", &serde_json::Value::Object(tests), &summaries, &series, None);
    let path = out.join("report.html");
    std::fs::write(&path, html).map_err(SimulatorError::io(&path))
}

/// The default results directory: `simulator-results/<UTC time>-tenants`.
pub fn default_output_directory() -> PathBuf {
    let stamp = results::now_utc().replace(':', "");
    PathBuf::from("simulator-results").join(format!("{stamp}-tenants"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_specs_parse() {
        let spec = TenantSpec::parse("gold:alice:s3cret:simulator/a.properties:2500").unwrap();
        assert_eq!(
            (spec.name.as_str(), spec.username.as_deref(), spec.password.as_deref()),
            ("gold", Some("alice"), Some("s3cret"))
        );
        assert_eq!((spec.file.as_path(), spec.rate), (Path::new("simulator/a.properties"), Some(2500.0)));
        let anonymous = TenantSpec::parse("free:::simulator/ycsb/workloada").unwrap();
        assert_eq!((anonymous.username, anonymous.password, anonymous.rate), (None, None, None));
        assert_eq!(anonymous.file, PathBuf::from("simulator/ycsb/workloada"));
        let no_password = TenantSpec::parse("t:bob::f").unwrap();
        assert_eq!((no_password.username.as_deref(), no_password.password.as_deref()), (Some("bob"), Some("")));
        for bad in ["gold:alice:f", "../x:a:b:f", ":a:b:f", "t:a:b:", "t:a:b:f:0", "t::pw:f"] {
            assert!(TenantSpec::parse(bad).is_err(), "{bad}");
        }
        let mut tenants = vec![spec.clone(), TenantSpec { name: "free".into(), ..spec }];
        set_threads(&mut tenants, "free:12").unwrap();
        assert_eq!((tenants[0].threads, tenants[1].threads), (None, Some(12)));
        assert!(set_threads(&mut tenants, "nobody:3").is_err() && set_threads(&mut tenants, "free:x").is_err());
    }
}
