//! The maximum throughput whose p99 stays under a bound: open-loop steps of rising target
//! rate on one cluster (started once, or an existing one) with the data set loaded once.
//!
//! A step passes when it had no errors, its p99 (all operations, measured from the intended
//! start) is within the bound, and it achieved at least [`MIN_ACHIEVED_FRACTION`] of its target
//! rate. The rate doubles from `start_rate` until a step fails (or halves until one passes),
//! then a binary search between the last pass and the first failure narrows the gap to
//! `precision` (relative) or stops after `max_steps` steps.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::cluster::Cluster;
use crate::definition::TestDefinition;
use crate::driver::MeasureSettings;
use crate::error::SimulatorError;
use crate::report::{self, Axis, Line};
use crate::results::{self, thousands};
use crate::runner::{RunSettings, Session, Target};

/// A step must reach this share of its target rate to pass.
pub const MIN_ACHIEVED_FRACTION: f64 = 0.95;
/// Largest `--max-steps`.
pub const MAX_STEPS: u32 = 64;

/// How to search.
#[derive(Debug, Clone)]
pub struct SearchSettings {
    pub p99_bound_us: f64,
    pub start_rate: f64,
    pub step_warmup: Duration,
    pub step_duration: Duration,
    pub max_steps: u32,
    /// Stop when (first failing rate − best passing rate) / best passing rate is below this.
    pub precision: f64,
}

impl SearchSettings {
    pub fn validate(&self) -> Result<(), SimulatorError> {
        let fail = |message: &str| Err(SimulatorError::Input(message.to_owned()));
        if !(self.p99_bound_us.is_finite() && self.p99_bound_us > 0.0) {
            return fail("--p99-bound-us: above 0");
        }
        if !(self.start_rate.is_finite() && self.start_rate >= 1.0) {
            return fail("--start-rate: at least 1 op/s");
        }
        if !(1..=MAX_STEPS).contains(&self.max_steps) {
            return fail("--max-steps: 1..=64");
        }
        if !(self.precision > 0.0 && self.precision < 1.0) {
            return fail("--precision: between 0 and 1");
        }
        if self.step_duration < Duration::from_millis(500) {
            return fail("--step-duration: at least 0.5 s");
        }
        Ok(())
    }
}

/// One measured rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchStep {
    pub target_ops_per_second: f64,
    pub ops_per_second: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub errors: u64,
    pub passed: bool,
    /// Why it failed (empty when it passed).
    pub reason: String,
}

/// The outcome of a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    pub target: String,
    pub test: serde_json::Value,
    pub p99_bound_us: f64,
    /// The highest passing step.
    pub best: Option<SearchStep>,
    pub steps: Vec<SearchStep>,
}

/// Runs the search against `target`; writes `search.json` and `search.html` into `out`.
pub async fn search(
    definition: &TestDefinition,
    target: &Target,
    run_settings: &RunSettings,
    settings: &SearchSettings,
    out: &Path,
) -> Result<SearchResult, SimulatorError> {
    definition.require_map_data("max-throughput")?;
    run_settings.validate()?;
    settings.validate()?;
    target.prepare()?;
    std::fs::create_dir_all(out).map_err(SimulatorError::io(out))?;
    let label = target.label();
    let cluster = match target {
        Target::Start(cluster_settings) => Some(Cluster::start(cluster_settings, &out.join("cluster")).await?),
        Target::Existing { .. } => None,
    };
    let (addresses, server_pids) = match (&cluster, target) {
        (Some(cluster), _) => (cluster.addresses.clone(), cluster.pids()),
        (None, Target::Existing { addresses, server_pids }) => (addresses.clone(), server_pids.clone()),
        (None, Target::Start(_)) => unreachable!("a started target has a cluster"),
    };
    let session = Session::open(definition, &addresses, run_settings, "").await?;
    let threads = run_settings.threads.unwrap_or_else(|| definition.thread_count());
    let mut steps: Vec<SearchStep> = Vec::new();
    let mut planner = Planner::new(settings.start_rate, settings.precision);
    while let Some(rate) = planner.next_rate() {
        if steps.len() as u32 >= settings.max_steps {
            break;
        }
        let measure = MeasureSettings {
            threads,
            warmup: settings.step_warmup,
            duration: settings.step_duration,
            rate: Some(rate),
            label: format!("[{label} step {} at {} ops/s]", steps.len() + 1, thousands(rate)),
            server_pids: server_pids.clone(),
            start: None,
            plain_progress: false,
        };
        let step = judge(&session.measure(&measure).await, session.probes(), rate, settings.p99_bound_us);
        eprintln!(
            "step {}: target {} ops/s → {} ops/s, p99 {:.0} µs, {} errors: {}",
            steps.len() + 1,
            thousands(rate),
            thousands(step.ops_per_second),
            step.p99_us,
            step.errors,
            if step.passed { "pass".to_owned() } else { format!("fail ({})", step.reason) }
        );
        planner.record(rate, step.passed);
        steps.push(step);
    }
    session.close().await;
    drop(cluster);
    let best = steps
        .iter()
        .filter(|step| step.passed)
        .max_by(|a, b| a.target_ops_per_second.total_cmp(&b.target_ops_per_second))
        .cloned();
    let result =
        SearchResult { target: label, test: definition.describe(), p99_bound_us: settings.p99_bound_us, best, steps };
    results::write_json(&out.join("search.json"), &result)?;
    let path = out.join("search.html");
    std::fs::write(&path, html(&result)).map_err(SimulatorError::io(&path))?;
    Ok(result)
}

fn judge(measurement: &crate::driver::Measurement, probes: &[&str], rate: f64, bound_us: f64) -> SearchStep {
    let recorder = &measurement.recorder;
    let (all, _) = recorder.summaries(probes);
    let ops = recorder.operations();
    let ops_per_second = ops as f64 / measurement.measure_seconds.max(f64::MIN_POSITIVE);
    let errors = recorder.error_count();
    let mut reasons = Vec::new();
    if errors > 0 {
        reasons.push(format!("{errors} errors"));
    }
    if all.p99_us > bound_us {
        reasons.push(format!("p99 {:.0} µs above {:.0} µs", all.p99_us, bound_us));
    }
    if ops_per_second < MIN_ACHIEVED_FRACTION * rate {
        reasons.push(format!("achieved {:.0}% of the target rate", 100.0 * ops_per_second / rate));
    }
    SearchStep {
        target_ops_per_second: rate,
        ops_per_second,
        p50_us: all.p50_us,
        p99_us: all.p99_us,
        max_us: all.max_us,
        errors,
        passed: reasons.is_empty(),
        reason: reasons.join("; "),
    }
}

/// Chooses the next rate from the passes and failures so far.
#[derive(Debug, Clone)]
struct Planner {
    next: Option<f64>,
    best_pass: Option<f64>,
    first_fail: Option<f64>,
    precision: f64,
}

impl Planner {
    fn new(start_rate: f64, precision: f64) -> Planner {
        Planner { next: Some(start_rate), best_pass: None, first_fail: None, precision }
    }

    fn next_rate(&self) -> Option<f64> {
        self.next
    }

    fn record(&mut self, rate: f64, passed: bool) {
        if passed {
            self.best_pass = Some(self.best_pass.map_or(rate, |best| best.max(rate)));
        } else {
            self.first_fail = Some(self.first_fail.map_or(rate, |fail| fail.min(rate)));
        }
        self.next = match (self.best_pass, self.first_fail) {
            (Some(pass), None) => Some(pass * 2.0),
            (None, Some(fail)) if fail / 2.0 >= 1.0 => Some(fail / 2.0),
            (None, Some(_)) => None,
            (Some(pass), Some(fail)) if (fail - pass) / pass > self.precision => Some((pass + fail) / 2.0),
            (Some(_), Some(_)) => None,
            (None, None) => unreachable!("a step was just recorded"),
        };
    }
}

fn html(result: &SearchResult) -> String {
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Max throughput under p99 ≤ {:.0} µs</title>\
         <style>body{{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px}}td,th{{border:1px solid #dee2e6;\
         padding:4px 8px;text-align:right}}table{{border-collapse:collapse}}</style></head><body>\n\
         <h1>{}: maximum throughput with p99 ≤ {:.0} µs</h1>\n",
        result.p99_bound_us,
        report::escape(&result.target),
        result.p99_bound_us
    );
    let _ = writeln!(
        page,
        "<p>{}</p>",
        match &result.best {
            Some(best) => format!(
                "Best passing step: target {} ops/s, achieved {} ops/s, p99 {:.0} µs.",
                thousands(best.target_ops_per_second),
                thousands(best.ops_per_second),
                best.p99_us
            ),
            None => "No step passed.".to_owned(),
        }
    );
    let mut sorted = result.steps.clone();
    sorted.sort_by(|a, b| a.target_ops_per_second.total_cmp(&b.target_ops_per_second));
    let max_rate = sorted.last().map_or(1.0, |step| step.target_ops_per_second) * 1.05;
    let p99 = Line {
        label: "p99 at the step".into(),
        color: "#d9480f",
        dash: "",
        points: sorted.iter().map(|step| (step.target_ops_per_second, step.p99_us.max(0.001).log10())).collect(),
    };
    let bound = Line {
        label: "bound".into(),
        color: "#495057",
        dash: "6 3",
        points: vec![(0.0, result.p99_bound_us.log10()), (max_rate, result.p99_bound_us.log10())],
    };
    let (low, high) = p99
        .points
        .iter()
        .chain(&bound.points)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let x: Axis = report::linear_axis("target ops/s", 0.0, max_rate, thousands);
    let y = report::log_axis("p99 latency", low.floor(), high.ceil().max(low.floor() + 1.0));
    page.push_str(&report::line_chart("p99 by target rate", &[p99, bound], &x, &y, None));
    page.push_str("<table><tr><th>step</th><th>target ops/s</th><th>achieved ops/s</th><th>p50 µs</th><th>p99 µs</th><th>max µs</th><th>errors</th><th>result</th></tr>\n");
    for (index, step) in result.steps.iter().enumerate() {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td><td>{}</td></tr>",
            index + 1,
            thousands(step.target_ops_per_second),
            thousands(step.ops_per_second),
            step.p50_us,
            step.p99_us,
            step.max_us,
            step.errors,
            if step.passed { "pass".to_owned() } else { report::escape(&step.reason) }
        );
    }
    page.push_str("</table></body></html>\n");
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives the planner against a system that passes up to `capacity`.
    fn rates_tried(start: f64, capacity: f64) -> (Vec<f64>, Option<f64>) {
        let mut planner = Planner::new(start, 0.05);
        let mut tried = Vec::new();
        while let Some(rate) = planner.next_rate() {
            assert!(tried.len() < 40, "the search ends");
            tried.push(rate);
            planner.record(rate, rate <= capacity);
        }
        (tried, planner.best_pass)
    }

    #[test]
    fn doubles_then_bisects_to_the_capacity() {
        let (tried, best) = rates_tried(1000.0, 37_000.0);
        assert_eq!(&tried[..7], &[1000.0, 2000.0, 4000.0, 8000.0, 16000.0, 32000.0, 64000.0]);
        let best = best.unwrap();
        assert!(best <= 37_000.0 && best > 37_000.0 / 1.05, "{best}");
    }

    #[test]
    fn halves_when_the_first_rate_fails() {
        let (tried, best) = rates_tried(10_000.0, 3_000.0);
        assert_eq!(&tried[..3], &[10_000.0, 5_000.0, 2_500.0]);
        assert!(best.unwrap() > 3_000.0 / 1.05);
        let (_, none) = rates_tried(4.0, 0.5);
        assert_eq!(none, None);
    }
}
