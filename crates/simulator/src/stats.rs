//! Latency recording (HdrHistogram) and the numbers a probe reports.
//!
//! Each worker task owns a [`Recorder`] (no sharing on the hot path); the driver merges them
//! when the measurement ends. Latencies are recorded in nanoseconds, 3 significant digits,
//! up to [`MAX_LATENCY_NS`] (longer ones are clamped to it and counted in `clamped`); results
//! are in microseconds.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Longest latency recorded as is: 60 s (above the client's invocation timeout).
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;
/// Distinct error messages kept per recorder (the rest are counted under "other errors").
const MAX_ERROR_MESSAGES: usize = 16;
/// Percentile plot points: 1 − 10^(−k / POINTS_PER_DECADE) for k = 0, 1, …
const POINTS_PER_DECADE: i32 = 5;
const OTHER_ERRORS: &str = "other errors";

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGNIFICANT_DIGITS).expect("valid histogram bounds")
}

/// What one worker measured (only operations inside the measure window).
#[derive(Debug)]
pub struct Recorder {
    /// One histogram per probe, created on first use.
    latencies: Vec<Option<Histogram<u64>>>,
    errors: Vec<u64>,
    error_messages: BTreeMap<String, u64>,
    /// Open loop: how late each operation started against its intended start.
    pub start_delay: Option<Histogram<u64>>,
    /// Latencies above [`MAX_LATENCY_NS`].
    pub clamped: u64,
    /// Operations scheduled (open loop) that were never sent: the run's drain limit passed.
    pub missed: u64,
    /// Completion time of the last measured operation.
    pub last_completion: Option<Instant>,
}

impl Recorder {
    pub fn new(probes: usize) -> Recorder {
        Recorder {
            latencies: (0..probes).map(|_| None).collect(),
            errors: vec![0; probes],
            error_messages: BTreeMap::new(),
            start_delay: None,
            clamped: 0,
            missed: 0,
            last_completion: None,
        }
    }

    pub fn record(&mut self, probe: usize, latency: Duration, completed: Instant) {
        let histogram = self.latencies[probe].get_or_insert_with(new_histogram);
        self.clamped += u64::from(record_clamped(histogram, latency));
        self.completed(completed);
    }

    pub fn record_error(&mut self, probe: usize, message: String, completed: Instant) {
        self.errors[probe] += 1;
        self.count_message(message, 1);
        self.completed(completed);
    }

    pub fn record_start_delay(&mut self, delay: Duration) {
        let histogram = self.start_delay.get_or_insert_with(new_histogram);
        self.clamped += u64::from(record_clamped(histogram, delay));
    }

    fn completed(&mut self, completed: Instant) {
        self.last_completion = Some(self.last_completion.map_or(completed, |last| last.max(completed)));
    }

    fn count_message(&mut self, message: String, count: u64) {
        if self.error_messages.len() >= MAX_ERROR_MESSAGES && !self.error_messages.contains_key(&message) {
            *self.error_messages.entry(OTHER_ERRORS.to_owned()).or_default() += count;
        } else {
            *self.error_messages.entry(message).or_default() += count;
        }
    }

    /// Adds `other`'s counts to this one.
    pub fn merge(&mut self, other: Recorder) {
        for (mine, theirs) in self.latencies.iter_mut().zip(other.latencies) {
            merge_histogram(mine, theirs);
        }
        for (mine, theirs) in self.errors.iter_mut().zip(other.errors) {
            *mine += theirs;
        }
        for (message, count) in other.error_messages {
            self.count_message(message, count);
        }
        merge_histogram(&mut self.start_delay, other.start_delay);
        self.clamped += other.clamped;
        self.missed += other.missed;
        if let Some(completed) = other.last_completion {
            self.completed(completed);
        }
    }

    /// Successful measured operations.
    pub fn operations(&self) -> u64 {
        self.latencies.iter().flatten().map(Histogram::len).sum()
    }

    pub fn error_count(&self) -> u64 {
        self.errors.iter().sum::<u64>() + self.missed
    }

    /// One summary per probe that saw operations or errors, and one over all of them.
    pub fn summaries(&self, names: &[&str]) -> (ProbeSummary, Vec<ProbeSummary>) {
        let mut all = new_histogram();
        let mut probes = Vec::new();
        for (index, name) in names.iter().enumerate() {
            let errors = self.errors[index];
            if let Some(histogram) = &self.latencies[index] {
                all.add(histogram).expect("histograms of equal bounds merge");
                probes.push(ProbeSummary::of(name, histogram, errors));
            } else if errors > 0 {
                probes.push(ProbeSummary::of(name, &new_histogram(), errors));
            }
        }
        (ProbeSummary::of("all", &all, self.errors.iter().sum()), probes)
    }

    /// The latencies of every probe in one histogram.
    pub fn all_histogram(&self) -> Histogram<u64> {
        let mut all = new_histogram();
        for histogram in self.latencies.iter().flatten() {
            all.add(histogram).expect("histograms of equal bounds merge");
        }
        all
    }

    pub fn error_messages(&self) -> Vec<ErrorCount> {
        let mut messages: Vec<ErrorCount> = self
            .error_messages
            .iter()
            .map(|(message, &count)| ErrorCount { message: message.clone(), count })
            .collect();
        if self.missed > 0 {
            let message = "scheduled but never sent: the driver's backlog outlasted the drain limit".to_owned();
            messages.push(ErrorCount { message, count: self.missed });
        }
        messages.sort_by_key(|message| std::cmp::Reverse(message.count));
        messages
    }
}

fn merge_histogram(mine: &mut Option<Histogram<u64>>, theirs: Option<Histogram<u64>>) {
    match (mine.as_mut(), theirs) {
        (Some(mine), Some(theirs)) => mine.add(theirs).expect("histograms of equal bounds merge"),
        (None, Some(theirs)) => *mine = Some(theirs),
        (_, None) => {}
    }
}

/// `value` rounded to 1/`scale` (short, stable numbers in JSON).
fn round_to(value: f64, scale: f64) -> f64 {
    (value * scale).round() / scale
}

/// Records `latency`; true if it was clamped to [`MAX_LATENCY_NS`].
fn record_clamped(histogram: &mut Histogram<u64>, latency: Duration) -> bool {
    let nanoseconds = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX).max(1);
    let clamped = nanoseconds > MAX_LATENCY_NS;
    histogram.record(nanoseconds.min(MAX_LATENCY_NS)).expect("value within the histogram's bounds");
    clamped
}

/// A histogram as `[nanoseconds, count]` pairs, one per recorded bucket: what a `scaling`
/// child writes so the parent can merge the processes' distributions exactly.
pub fn histogram_points(histogram: &Histogram<u64>) -> Vec<[u64; 2]> {
    histogram.iter_recorded().map(|value| [value.value_iterated_to(), value.count_at_value()]).collect()
}

/// Adds [`histogram_points`] to `histogram` (made by [`new_histogram`]).
pub fn add_points(histogram: &mut Histogram<u64>, points: &[[u64; 2]]) {
    for &[nanoseconds, count] in points {
        histogram.record_n(nanoseconds.clamp(1, MAX_LATENCY_NS), count).expect("value within the histogram's bounds");
    }
}

/// Adds `counts` to `into`, message by message, most frequent first.
pub fn merge_error_counts(into: &mut Vec<ErrorCount>, counts: &[ErrorCount]) {
    for count in counts {
        match into.iter_mut().find(|known| known.message == count.message) {
            Some(known) => known.count += count.count,
            None => into.push(count.clone()),
        }
    }
    into.sort_by_key(|message| std::cmp::Reverse(message.count));
}

/// A count of one error message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCount {
    pub message: String,
    pub count: u64,
}

/// The latency of one probe over the measure window, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeSummary {
    pub name: String,
    /// Successful operations.
    pub count: u64,
    pub errors: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub p9999_us: f64,
    pub max_us: f64,
    /// `[percentile, latency_us]` points for a percentile plot, up to the max (100).
    pub percentiles: Vec<(f64, f64)>,
}

impl ProbeSummary {
    pub fn of(name: &str, histogram: &Histogram<u64>, errors: u64) -> ProbeSummary {
        let us = |nanoseconds: u64| nanoseconds as f64 / 1000.0;
        let at = |quantile: f64| us(histogram.value_at_quantile(quantile));
        let count = histogram.len();
        let mut percentiles = Vec::new();
        if count > 0 {
            for step in 0.. {
                let quantile = 1.0 - 10f64.powf(-f64::from(step) / f64::from(POINTS_PER_DECADE));
                if 1.0 / (1.0 - quantile) > count as f64 {
                    break;
                }
                percentiles.push((round_to(quantile * 100.0, 1e6), at(quantile)));
            }
            percentiles.push((100.0, us(histogram.max())));
        }
        ProbeSummary {
            name: name.to_owned(),
            count,
            errors,
            min_us: if count > 0 { us(histogram.min()) } else { 0.0 },
            mean_us: if count > 0 { histogram.mean() / 1000.0 } else { 0.0 },
            p50_us: at(0.5),
            p90_us: at(0.9),
            p99_us: at(0.99),
            p999_us: at(0.999),
            p9999_us: at(0.9999),
            max_us: us(histogram.max()),
            percentiles,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_are_ordered_and_in_microseconds() {
        let mut recorder = Recorder::new(2);
        let now = Instant::now();
        for micros in 1..=1000u64 {
            recorder.record(0, Duration::from_micros(micros), now);
        }
        recorder.record_error(1, "boom".into(), now);
        let (all, probes) = recorder.summaries(&["get", "put"]);
        assert_eq!((all.count, all.errors), (1000, 1));
        let get = &probes[0];
        assert!((get.p50_us - 500.0).abs() < 1.0 && (get.p99_us - 990.0).abs() < 1.0, "{get:?}");
        assert!(get.min_us <= get.p50_us && get.p50_us <= get.p99_us && get.p99_us <= get.max_us);
        assert_eq!(get.percentiles.last().unwrap().0, 100.0);
        assert!(get.percentiles.windows(2).all(|pair| pair[0].0 < pair[1].0 && pair[0].1 <= pair[1].1));
        assert_eq!((probes[1].name.as_str(), probes[1].count, probes[1].errors), ("put", 0, 1));
        assert_eq!(recorder.error_messages(), vec![ErrorCount { message: "boom".into(), count: 1 }]);
    }

    #[test]
    fn merging_adds_counts_and_bounds_messages() {
        let now = Instant::now();
        let mut total = Recorder::new(1);
        for worker in 0..3u32 {
            let mut recorder = Recorder::new(1);
            recorder.record(0, Duration::from_millis(1), now + Duration::from_secs(u64::from(worker)));
            for message in 0..10 {
                recorder.record_error(0, format!("error {worker}-{message}"), now);
            }
            total.merge(recorder);
        }
        assert_eq!((total.operations(), total.error_count()), (3, 30));
        assert_eq!(total.last_completion, Some(now + Duration::from_secs(2)));
        let messages = total.error_messages();
        assert_eq!(messages.iter().map(|m| m.count).sum::<u64>(), 30);
        assert!(messages.len() <= MAX_ERROR_MESSAGES + 1);
    }

    #[test]
    fn histogram_points_merge_exactly() {
        let mut first = new_histogram();
        let mut second = new_histogram();
        for micros in 1..=1000u64 {
            first.record(micros * 1000).unwrap();
            second.record(micros * 3000).unwrap();
        }
        let mut merged = new_histogram();
        add_points(&mut merged, &histogram_points(&first));
        add_points(&mut merged, &histogram_points(&second));
        let mut expected = first.clone();
        expected.add(&second).unwrap();
        assert_eq!(merged.len(), 2000);
        for quantile in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.value_at_quantile(quantile), expected.value_at_quantile(quantile), "{quantile}");
        }
        let mut counts = vec![ErrorCount { message: "a".into(), count: 1 }];
        merge_error_counts(
            &mut counts,
            &[ErrorCount { message: "b".into(), count: 5 }, ErrorCount { message: "a".into(), count: 2 }],
        );
        assert_eq!(
            counts,
            [ErrorCount { message: "b".into(), count: 5 }, ErrorCount { message: "a".into(), count: 3 }]
        );
    }

    #[test]
    fn huge_latencies_are_clamped_and_counted() {
        let mut recorder = Recorder::new(1);
        recorder.record(0, Duration::from_secs(3600), Instant::now());
        assert_eq!(recorder.clamped, 1);
        let (all, _) = recorder.summaries(&["x"]);
        assert!(all.max_us >= 59_000_000.0);
    }
}
