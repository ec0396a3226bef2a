//! Results: one [`RunResult`] per run (`result.json`), a [`SeriesSummary`] per target over its
//! runs, a [`Comparison`] of two targets, and the files they are written to.
//!
//! Units are in the names: `_us` microseconds, `_seconds`, `ops_per_second`. Spread is
//! `(max − min) / min` of the runs' throughput.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::driver::{LoadSummary, TimelinePoint};
use crate::error::SimulatorError;
use crate::queue::QueueOutcome;
use crate::stats::{ErrorCount, ProbeSummary};
use crate::topic::TopicOutcome;

/// Everything one run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// `ferrogrid`, `hazelcast`, or the address of an existing cluster.
    pub target: String,
    /// 1-based.
    pub run: u32,
    pub started_at: String,
    pub test: serde_json::Value,
    /// `closed-loop` or `open-loop`.
    pub mode: String,
    pub target_ops_per_second: Option<f64>,
    pub threads: u32,
    pub clients: u32,
    pub members: u32,
    pub warmup_seconds: f64,
    pub duration_seconds: f64,
    pub load: LoadSummary,
    /// Successful operations in the measure window.
    pub ops: u64,
    /// Failed operations in the measure window (plus open-loop operations never sent).
    pub errors: u64,
    /// The measure window, or longer: from its start to the last measured completion.
    pub measure_seconds: f64,
    pub ops_per_second: f64,
    /// Latency over every probe.
    pub all: ProbeSummary,
    pub probes: Vec<ProbeSummary>,
    /// Open loop: how late operations started against their schedule.
    pub start_delay: Option<ProbeSummary>,
    /// Latencies above 60 s, recorded as 60 s.
    pub clamped_latencies: u64,
    pub timeline: Vec<TimelinePoint>,
    pub server_pids: Vec<u32>,
    pub server_cpu_seconds: Option<f64>,
    pub server_cpu_seconds_per_million_ops: Option<f64>,
    pub driver_cpu_seconds: Option<f64>,
    /// The Simulator's own CPU per million operations: when it approaches the server's, the
    /// driver, not the server, limits a closed-loop run.
    pub driver_cpu_seconds_per_million_ops: Option<f64>,
    pub error_messages: Vec<ErrorCount>,
    /// A queue test's end-of-run check (`queue`) or a topic test's deliveries (`topic`).
    #[serde(default, flatten)]
    pub outcome: Outcome,
}

/// What a queue or topic test found after its measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<TopicOutcome>,
}

impl Outcome {
    /// Why the run fails, if its end-of-run check did not pass (a queue's counts do not add
    /// up). Lost topic messages are measured, not failures: a Hazelcast topic may drop
    /// messages by design (its event queue is bounded).
    pub fn failure(&self) -> Option<String> {
        self.queue.as_ref().and_then(QueueOutcome::failure)
    }

    /// Lines for the terminal (empty for map tests).
    pub fn text(&self) -> String {
        let lines: Vec<String> =
            [self.queue.as_ref().map(QueueOutcome::text), self.topic.as_ref().map(TopicOutcome::text)]
                .into_iter()
                .flatten()
                .collect();
        lines.join("\n")
    }
}

/// The percentiles of one probe, without the plot points (for the `tenants` and `scaling`
/// summaries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub name: String,
    pub count: u64,
    pub errors: u64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl LatencySummary {
    pub fn of(probe: &ProbeSummary) -> LatencySummary {
        LatencySummary {
            name: probe.name.clone(),
            count: probe.count,
            errors: probe.errors,
            p50_us: probe.p50_us,
            p90_us: probe.p90_us,
            p99_us: probe.p99_us,
            p999_us: probe.p999_us,
            max_us: probe.max_us,
        }
    }
}

/// min / average / max of one number over runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub average: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let values: Vec<f64> = values.into_iter().collect();
        if values.is_empty() {
            return None;
        }
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let average = values.iter().sum::<f64>() / values.len() as f64;
        Some(Spread { min, average, max })
    }

    /// `(max − min) / min`; 0 for a single value.
    pub fn relative(&self) -> f64 {
        if self.min > 0.0 {
            (self.max - self.min) / self.min
        } else {
            0.0
        }
    }
}

/// One target over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    pub target: String,
    pub runs: usize,
    pub ops_per_second: Spread,
    /// `(max − min) / min` of the runs' ops/s.
    pub throughput_spread: f64,
    /// p50 / p99 / p99.9 / max of all operations, per run.
    pub p50_us_per_run: Vec<f64>,
    pub p99_us_per_run: Vec<f64>,
    pub p999_us_per_run: Vec<f64>,
    pub max_us_per_run: Vec<f64>,
    pub p99_us: Spread,
    pub server_cpu_seconds_per_million_ops: Option<Spread>,
    pub errors: u64,
    /// Successful operations per second of each probe, averaged over the runs, in probe order
    /// (a queue test's offers, polls and empty polls apart).
    #[serde(default)]
    pub probe_ops_per_second: Vec<ProbeRate>,
    /// Topic tests: delivery latency (publish → receipt, every listener) p99 per run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivery_p99_us_per_run: Vec<f64>,
    /// Topic tests: messages lost and dropped by the driver, over every run and listener.
    #[serde(default)]
    pub delivery_lost: u64,
    #[serde(default)]
    pub delivery_dropped: u64,
}

/// The throughput of one probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRate {
    pub name: String,
    pub ops_per_second: f64,
}

impl SeriesSummary {
    /// Summarises `runs` (at least one).
    pub fn of(target: &str, runs: &[RunResult]) -> SeriesSummary {
        assert!(!runs.is_empty(), "a series has runs");
        let ops_per_second = Spread::of(runs.iter().map(|run| run.ops_per_second)).expect("runs");
        let per_run = |read: fn(&ProbeSummary) -> f64| runs.iter().map(|run| read(&run.all)).collect::<Vec<_>>();
        let p99_us_per_run = per_run(|all| all.p99_us);
        let cpu: Vec<f64> = runs.iter().filter_map(|run| run.server_cpu_seconds_per_million_ops).collect();
        let topic_runs = runs.iter().filter_map(|run| run.outcome.topic.as_ref());
        SeriesSummary {
            target: target.to_owned(),
            runs: runs.len(),
            throughput_spread: ops_per_second.relative(),
            ops_per_second,
            p50_us_per_run: per_run(|all| all.p50_us),
            p99_us: Spread::of(p99_us_per_run.iter().copied()).expect("runs"),
            p99_us_per_run,
            p999_us_per_run: per_run(|all| all.p999_us),
            max_us_per_run: per_run(|all| all.max_us),
            server_cpu_seconds_per_million_ops: if cpu.len() == runs.len() { Spread::of(cpu) } else { None },
            errors: runs.iter().map(|run| run.errors).sum(),
            probe_ops_per_second: probe_rates(runs),
            delivery_p99_us_per_run: topic_runs.clone().map(|topic| topic.delivery.p99_us).collect(),
            delivery_lost: topic_runs.clone().map(|topic| topic.lost).sum(),
            delivery_dropped: topic_runs.map(|topic| topic.dropped).sum(),
        }
    }

    /// A few lines for the terminal.
    pub fn text(&self) -> String {
        let mut text = String::new();
        let ops = &self.ops_per_second;
        let _ = writeln!(
            text,
            "{}: {} run(s), ops/s min {} avg {} max {} (spread {:.1}%), errors {}",
            self.target,
            self.runs,
            thousands(ops.min),
            thousands(ops.average),
            thousands(ops.max),
            self.throughput_spread * 100.0,
            self.errors
        );
        let p99: Vec<String> = self.p99_us_per_run.iter().map(|us| format!("{us:.0}")).collect();
        let _ = write!(text, "  p99 per run (µs): {}", p99.join(", "));
        if let Some(cpu) = &self.server_cpu_seconds_per_million_ops {
            let _ = write!(text, "; server CPU-s per million ops: avg {:.2}", cpu.average);
        }
        if self.probe_ops_per_second.len() > 1 {
            let rates: Vec<String> = self
                .probe_ops_per_second
                .iter()
                .map(|rate| format!("{} {}", rate.name, thousands(rate.ops_per_second)))
                .collect();
            let _ = write!(text, "\n  avg ops/s per probe: {}", rates.join(", "));
        }
        if !self.delivery_p99_us_per_run.is_empty() {
            let p99: Vec<String> = self.delivery_p99_us_per_run.iter().map(|us| format!("{us:.0}")).collect();
            let _ = write!(
                text,
                "\n  topic delivery p99 per run (µs): {}; lost {}, dropped by the driver {}",
                p99.join(", "),
                self.delivery_lost,
                self.delivery_dropped
            );
        }
        text
    }
}

/// Each probe's successful operations per second, averaged over `runs`, in the first run's
/// probe order.
fn probe_rates(runs: &[RunResult]) -> Vec<ProbeRate> {
    let names = runs.first().map_or(Vec::new(), |run| run.probes.iter().map(|probe| probe.name.clone()).collect());
    names
        .into_iter()
        .map(|name| {
            let rate = |run: &RunResult| {
                let count = run.probes.iter().find(|probe| probe.name == name).map_or(0, |probe| probe.count);
                count as f64 / run.measure_seconds.max(f64::MIN_POSITIVE)
            };
            let ops_per_second = runs.iter().map(rate).sum::<f64>() / runs.len() as f64;
            ProbeRate { name, ops_per_second }
        })
        .collect()
}

/// Target A against target B over the same test and driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: SeriesSummary,
    pub b: SeriesSummary,
    /// A's average ops/s ÷ B's (above 1: A is faster).
    pub throughput_ratio: f64,
    /// A's average p99 ÷ B's (below 1: A answers faster).
    pub p99_ratio: f64,
    /// A's server CPU per op ÷ B's (below 1: A needs less CPU per operation).
    pub server_cpu_per_op_ratio: Option<f64>,
    /// A's throughput spread ÷ B's (below 1: A is steadier).
    pub spread_ratio: Option<f64>,
}

impl Comparison {
    pub fn of(a: SeriesSummary, b: SeriesSummary) -> Comparison {
        let ratio = |x: f64, y: f64| if y > 0.0 { x / y } else { f64::NAN };
        let cpu = match (&a.server_cpu_seconds_per_million_ops, &b.server_cpu_seconds_per_million_ops) {
            (Some(x), Some(y)) => Some(ratio(x.average, y.average)),
            _ => None,
        };
        Comparison {
            throughput_ratio: ratio(a.ops_per_second.average, b.ops_per_second.average),
            p99_ratio: ratio(a.p99_us.average, b.p99_us.average),
            server_cpu_per_op_ratio: cpu,
            spread_ratio: (b.throughput_spread > 0.0).then(|| a.throughput_spread / b.throughput_spread),
            a,
            b,
        }
    }

    /// The ratios table for the terminal.
    pub fn text(&self) -> String {
        let (a, b) = (&self.a, &self.b);
        let mut text = String::new();
        let _ =
            writeln!(text, "{:<34} {:>14} {:>14} {:>22}", "", a.target, b.target, format!("{}/{}", a.target, b.target));
        let row = |text: &mut String, name: &str, x: String, y: String, ratio: Option<f64>, better: &str| {
            let ratio = ratio.map_or("n/a".to_owned(), |ratio| format!("{ratio:.2}x"));
            let _ = writeln!(text, "{name:<34} {x:>14} {y:>14} {ratio:>22}  ({better})");
        };
        row(
            &mut text,
            "throughput, avg ops/s",
            thousands(a.ops_per_second.average),
            thousands(b.ops_per_second.average),
            Some(self.throughput_ratio),
            "higher is better",
        );
        row(
            &mut text,
            "p99 latency, avg over runs (µs)",
            format!("{:.0}", a.p99_us.average),
            format!("{:.0}", b.p99_us.average),
            Some(self.p99_ratio),
            "lower is better",
        );
        let cpu = |series: &SeriesSummary| {
            series.server_cpu_seconds_per_million_ops.map_or("n/a".to_owned(), |cpu| format!("{:.2}", cpu.average))
        };
        row(&mut text, "server CPU-s per million ops", cpu(a), cpu(b), self.server_cpu_per_op_ratio, "lower is better");
        row(
            &mut text,
            "run-to-run spread (max-min)/min",
            format!("{:.1}%", a.throughput_spread * 100.0),
            format!("{:.1}%", b.throughput_spread * 100.0),
            self.spread_ratio,
            "lower is better",
        );
        if a.probe_ops_per_second.len() > 1 {
            for rate in &a.probe_ops_per_second {
                let Some(other) = b.probe_ops_per_second.iter().find(|other| other.name == rate.name) else { continue };
                let ratio = (other.ops_per_second > 0.0).then(|| rate.ops_per_second / other.ops_per_second);
                let (x, y) = (thousands(rate.ops_per_second), thousands(other.ops_per_second));
                row(&mut text, &format!("  {}, avg ops/s", rate.name), x, y, ratio, "of this probe");
            }
        }
        if !a.delivery_p99_us_per_run.is_empty() && !b.delivery_p99_us_per_run.is_empty() {
            let average = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
            let (x, y) = (average(&a.delivery_p99_us_per_run), average(&b.delivery_p99_us_per_run));
            let ratio = (y > 0.0).then(|| x / y);
            row(
                &mut text,
                "topic delivery p99, avg (µs)",
                format!("{x:.0}"),
                format!("{y:.0}"),
                ratio,
                "lower is better",
            );
            let lost = |series: &SeriesSummary| format!("{}", series.delivery_lost);
            row(&mut text, "topic messages lost", lost(a), lost(b), None, "0 expected");
        }
        text
    }
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<(), SimulatorError> {
    let text = serde_json::to_string_pretty(value).expect("results serialize");
    std::fs::write(path, text + "\n").map_err(SimulatorError::io(path))
}

/// One CSV row per run and probe (the `all` probe included).
pub fn write_csv(path: &Path, runs: &[RunResult]) -> Result<(), SimulatorError> {
    let mut csv = String::from(
        "target,run,mode,threads,probe,ops,errors,measure_seconds,ops_per_second,mean_us,p50_us,p90_us,p99_us,\
         p999_us,max_us,server_cpu_seconds_per_million_ops\n",
    );
    for run in runs {
        for probe in std::iter::once(&run.all).chain(&run.probes) {
            let cpu = run.server_cpu_seconds_per_million_ops.map_or(String::new(), |cpu| format!("{cpu:.4}"));
            let ops_per_second = probe.count as f64 / run.measure_seconds.max(f64::MIN_POSITIVE);
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{},{:.3},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{cpu}",
                run.target,
                run.run,
                run.mode,
                run.threads,
                probe.name,
                probe.count,
                probe.errors,
                run.measure_seconds,
                ops_per_second,
                probe.mean_us,
                probe.p50_us,
                probe.p90_us,
                probe.p99_us,
                probe.p999_us,
                probe.max_us
            );
        }
    }
    std::fs::write(path, csv).map_err(SimulatorError::io(path))
}

/// `1234567.8` as `1,234,568`.
pub fn thousands(value: f64) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if value < 0.0 && digits != "0" {
        out.insert(0, '-');
    }
    out
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn utc_timestamp(seconds_since_epoch: u64) -> String {
    let days = (seconds_since_epoch / 86_400) as i64;
    let seconds_of_day = seconds_since_epoch % 86_400;
    // Civil-from-days (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds_of_day / 3600,
        seconds_of_day % 3600 / 60,
        seconds_of_day % 60
    )
}

/// Now as [`utc_timestamp`].
pub fn now_utc() -> String {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_secs());
    utc_timestamp(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_and_thousands() {
        let spread = Spread::of([100.0, 110.0, 120.0]).unwrap();
        assert_eq!((spread.min, spread.average, spread.max), (100.0, 110.0, 120.0));
        assert!((spread.relative() - 0.2).abs() < 1e-9);
        assert_eq!(Spread::of([]), None);
        assert_eq!(thousands(1_234_567.8), "1,234,568");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(-1000.0), "-1,000");
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_795_833_296), "2026-11-28T02:34:56Z");
    }
}
