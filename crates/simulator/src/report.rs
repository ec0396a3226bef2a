//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, nothing fetched).
//!
//! Charts: throughput over time (every run of every target on one chart, warm-up shaded),
//! latency percentiles per probe (log–log, every run of every target), run-to-run bars of
//! throughput and p99, and, when two targets are compared, their averages side by side.

use std::fmt::Write as _;

use crate::results::{thousands, Comparison, RunResult, SeriesSummary};

const WIDTH: f64 = 820.0;
const HEIGHT: f64 = 330.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 46.0;
/// Colours of the targets, in order (ferrogrid first in a comparison).
const PALETTE: [&str; 6] = ["#d9480f", "#1c7ed6", "#2b8a3e", "#7048e8", "#c2255c", "#495057"];
const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

/// One polyline of a chart.
#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
    pub color: &'static str,
    pub dash: &'static str,
    /// Chart coordinates (already log-transformed where the axis is logarithmic).
    pub points: Vec<(f64, f64)>,
}

/// An axis: its range in chart coordinates and labelled ticks.
#[derive(Debug, Clone)]
pub struct Axis {
    pub label: String,
    pub min: f64,
    pub max: f64,
    pub ticks: Vec<(f64, String)>,
}

/// The report for `series` (each target's runs) with their summaries.
pub fn html(
    test_name: &str,
    test: &serde_json::Value,
    summaries: &[SeriesSummary],
    series: &[(String, Vec<RunResult>)],
    comparison: Option<&Comparison>,
) -> String {
    let mut page = String::new();
    let title = format!("Simulator report: {test_name}");
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{}</style></head><body>\n",
        escape(&title),
        STYLE
    );
    let _ = writeln!(page, "<h1>{}</h1>", escape(&title));
    if let Some(first) = series.first().and_then(|(_, runs)| runs.first()) {
        let _ = writeln!(
            page,
            "<p>{} · {} threads · {} client(s) · warm-up {} s · measure {} s · {} · started {}</p>",
            escape(&first.mode),
            first.threads,
            first.clients,
            first.warmup_seconds,
            first.duration_seconds,
            first
                .target_ops_per_second
                .map_or("no rate limit".to_owned(), |rate| format!("target {} ops/s", thousands(rate))),
            escape(&first.started_at)
        );
    }
    if let Some(comparison) = comparison {
        page.push_str(&comparison_section(comparison));
    }
    page.push_str(&summary_table(summaries));
    page.push_str("<h2>Throughput over time</h2>\n");
    page.push_str(&throughput_chart(series));
    page.push_str("<h2>Latency distribution</h2>\n");
    for probe in probe_names(series) {
        page.push_str(&percentile_chart(series, &probe));
    }
    page.push_str("<h2>Run to run</h2>\n");
    page.push_str(&run_bars(series, "Throughput per run", "ops/s", |run| run.ops_per_second));
    page.push_str(&run_bars(series, "p99 latency per run (all operations)", "µs", |run| run.all.p99_us));
    page.push_str(&runs_table(series));
    let _ = writeln!(
        page,
        "<h2>Test</h2>\n<pre>{}</pre>\n</body></html>",
        escape(&serde_json::to_string_pretty(test).unwrap_or_default())
    );
    page
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#212529}\
    table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #dee2e6;padding:4px 8px;text-align:right}\
    th{background:#f1f3f5}td:first-child,th:first-child{text-align:left}svg{display:block;margin:8px 0 20px}\
    pre{background:#f8f9fa;padding:8px;overflow:auto}.better{color:#2b8a3e}.worse{color:#c92a2a}";

fn color_of(series_index: usize) -> &'static str {
    PALETTE[series_index % PALETTE.len()]
}

fn comparison_section(comparison: &Comparison) -> String {
    let (a, b) = (&comparison.a, &comparison.b);
    let mut html = format!(
        "<h2>{} vs {}</h2>\n<table><tr><th></th><th>{}</th><th>{}</th><th>{} / {}</th><th></th></tr>\n",
        escape(&a.target),
        escape(&b.target),
        escape(&a.target),
        escape(&b.target),
        escape(&a.target),
        escape(&b.target)
    );
    let cpu =
        |s: &SeriesSummary| s.server_cpu_seconds_per_million_ops.map_or("n/a".into(), |c| format!("{:.2}", c.average));
    let rows: [(&str, String, String, Option<f64>, bool); 4] = [
        (
            "throughput, average ops/s",
            thousands(a.ops_per_second.average),
            thousands(b.ops_per_second.average),
            Some(comparison.throughput_ratio),
            true,
        ),
        (
            "p99 latency, average of runs (µs)",
            format!("{:.0}", a.p99_us.average),
            format!("{:.0}", b.p99_us.average),
            Some(comparison.p99_ratio),
            false,
        ),
        ("server CPU-s per million ops", cpu(a), cpu(b), comparison.server_cpu_per_op_ratio, false),
        (
            "run-to-run spread (max−min)/min",
            format!("{:.1}%", a.throughput_spread * 100.0),
            format!("{:.1}%", b.throughput_spread * 100.0),
            comparison.spread_ratio,
            false,
        ),
    ];
    for (name, x, y, ratio, higher_is_better) in rows {
        let (ratio_text, class) = match ratio {
            Some(ratio) if ratio.is_finite() => {
                let good = if higher_is_better { ratio >= 1.0 } else { ratio <= 1.0 };
                (format!("{ratio:.2}×"), if good { "better" } else { "worse" })
            }
            _ => ("n/a".to_owned(), ""),
        };
        let direction = if higher_is_better { "higher is better" } else { "lower is better" };
        let _ = writeln!(
            html,
            "<tr><td>{name}</td><td>{x}</td><td>{y}</td><td class=\"{class}\">{ratio_text}</td><td>{direction}</td></tr>"
        );
    }
    html.push_str("</table>\n");
    let targets = [a, b];
    html.push_str(&average_bars("Average throughput", "ops/s", &targets, |s| Some(s.ops_per_second.average)));
    html.push_str(&average_bars("Average p99 latency", "µs", &targets, |s| Some(s.p99_us.average)));
    html.push_str(&average_bars("Server CPU seconds per million operations", "CPU-s", &targets, |s| {
        s.server_cpu_seconds_per_million_ops.map(|cpu| cpu.average)
    }));
    html
}

fn summary_table(summaries: &[SeriesSummary]) -> String {
    let mut html = String::from(
        "<h2>Summary</h2>\n<table><tr><th>target</th><th>runs</th><th>ops/s min</th><th>avg</th><th>max</th>\
         <th>spread</th><th>p99 µs (avg)</th><th>CPU-s / M ops</th><th>errors</th></tr>\n",
    );
    for summary in summaries {
        let ops = &summary.ops_per_second;
        let cpu =
            summary.server_cpu_seconds_per_million_ops.map_or("n/a".to_owned(), |cpu| format!("{:.2}", cpu.average));
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{:.0}</td><td>{cpu}</td><td>{}</td></tr>",
            escape(&summary.target),
            summary.runs,
            thousands(ops.min),
            thousands(ops.average),
            thousands(ops.max),
            summary.throughput_spread * 100.0,
            summary.p99_us.average,
            summary.errors
        );
    }
    html.push_str("</table>\n");
    html
}

fn runs_table(series: &[(String, Vec<RunResult>)]) -> String {
    let mut html = String::from(
        "<table><tr><th>target</th><th>run</th><th>ops/s</th><th>ops</th><th>errors</th><th>p50 µs</th>\
         <th>p99 µs</th><th>p99.9 µs</th><th>max µs</th><th>server CPU-s</th><th>server CPU-s / M ops</th>\
         <th>driver CPU-s / M ops</th></tr>\n",
    );
    for (label, runs) in series {
        for run in runs {
            let cpu = run.server_cpu_seconds.map_or("n/a".to_owned(), |cpu| format!("{cpu:.2}"));
            let per_op = run.server_cpu_seconds_per_million_ops.map_or("n/a".to_owned(), |cpu| format!("{cpu:.2}"));
            let driver = run.driver_cpu_seconds_per_million_ops.map_or("n/a".to_owned(), |cpu| format!("{cpu:.2}"));
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.0}</td>\
                 <td>{:.0}</td><td>{cpu}</td><td>{per_op}</td><td>{driver}</td></tr>",
                escape(label),
                run.run,
                thousands(run.ops_per_second),
                run.ops,
                run.errors,
                run.all.p50_us,
                run.all.p99_us,
                run.all.p999_us,
                run.all.max_us
            );
        }
    }
    html.push_str("</table>\n");
    html
}

/// "all" first, then every probe some run reported, in order of first appearance.
fn probe_names(series: &[(String, Vec<RunResult>)]) -> Vec<String> {
    let mut names = vec!["all".to_owned()];
    for run in series.iter().flat_map(|(_, runs)| runs) {
        for probe in &run.probes {
            if probe.count > 0 && !names.contains(&probe.name) {
                names.push(probe.name.clone());
            }
        }
    }
    names
}

fn throughput_chart(series: &[(String, Vec<RunResult>)]) -> String {
    let mut lines = Vec::new();
    let mut warmup: f64 = 0.0;
    for (index, (label, runs)) in series.iter().enumerate() {
        for run in runs {
            warmup = warmup.max(run.warmup_seconds);
            lines.push(Line {
                label: format!("{label} run {}", run.run),
                color: color_of(index),
                dash: DASHES[(run.run as usize - 1) % DASHES.len()],
                points: run.timeline.iter().map(|point| (point.second, point.ops_per_second)).collect(),
            });
        }
    }
    let x_max = lines.iter().flat_map(|line| line.points.iter().map(|p| p.0)).fold(1.0, f64::max);
    let y_max = lines.iter().flat_map(|line| line.points.iter().map(|p| p.1)).fold(1.0, f64::max) * 1.05;
    let x = linear_axis("seconds since the warm-up started", 0.0, x_max, |v| format!("{v:.0}"));
    let y = linear_axis("ops/s", 0.0, y_max, short_number);
    line_chart("Completed operations per second (shaded: warm-up)", &lines, &x, &y, Some((0.0, warmup)))
}

fn percentile_chart(series: &[(String, Vec<RunResult>)], probe: &str) -> String {
    let mut lines = Vec::new();
    for (index, (label, runs)) in series.iter().enumerate() {
        for run in runs {
            let summary = if probe == "all" { Some(&run.all) } else { run.probes.iter().find(|p| p.name == probe) };
            let Some(summary) = summary.filter(|summary| summary.count > 0) else { continue };
            let mut points: Vec<(f64, f64)> = Vec::new();
            for &(percentile, latency_us) in &summary.percentiles {
                let x = if percentile >= 100.0 {
                    points.last().map_or(0.0, |last| last.0) + 0.5
                } else {
                    -(1.0 - percentile / 100.0).log10()
                };
                points.push((x, latency_us.max(0.001).log10()));
            }
            lines.push(Line {
                label: format!("{label} run {}", run.run),
                color: color_of(index),
                dash: DASHES[(run.run as usize - 1) % DASHES.len()],
                points,
            });
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let x_max = lines.iter().flat_map(|line| line.points.iter().map(|p| p.0)).fold(1.0, f64::max);
    let decades = x_max.floor() as i32;
    let names = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%"];
    let ticks = (0..=decades.min(7)).map(|decade| (f64::from(decade), names[decade as usize].to_owned())).collect();
    let x = Axis { label: "percentile (the last point of each line is the max)".into(), min: 0.0, max: x_max, ticks };
    let (y_min, y_max) = lines
        .iter()
        .flat_map(|line| line.points.iter().map(|p| p.1))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let y = log_axis("latency", y_min.floor(), y_max.ceil().max(y_min.floor() + 1.0));
    line_chart(&format!("Latency by percentile: {probe}"), &lines, &x, &y, None)
}

/// Bars per run, grouped by target.
fn run_bars(series: &[(String, Vec<RunResult>)], title: &str, unit: &str, value: fn(&RunResult) -> f64) -> String {
    let bars: Vec<(String, f64, &'static str)> = series
        .iter()
        .enumerate()
        .flat_map(|(index, (label, runs))| {
            runs.iter().map(move |run| (format!("{label} {}", run.run), value(run), color_of(index)))
        })
        .collect();
    bar_chart(title, unit, &bars)
}

fn average_bars(
    title: &str,
    unit: &str,
    targets: &[&SeriesSummary],
    value: fn(&SeriesSummary) -> Option<f64>,
) -> String {
    let bars: Vec<(String, f64, &'static str)> = targets
        .iter()
        .enumerate()
        .filter_map(|(index, summary)| value(summary).map(|v| (summary.target.clone(), v, color_of(index))))
        .collect();
    if bars.len() < targets.len() {
        return String::new();
    }
    bar_chart(title, unit, &bars)
}

/// A vertical bar chart, one labelled bar per entry.
pub fn bar_chart(title: &str, unit: &str, bars: &[(String, f64, &'static str)]) -> String {
    let height = 240.0;
    let plot_width = (bars.len() as f64 * 64.0).clamp(160.0, WIDTH - LEFT - 20.0);
    let width = LEFT + plot_width + 20.0;
    let max = bars.iter().map(|bar| bar.1).fold(0.0, f64::max).max(f64::MIN_POSITIVE) * 1.1;
    let y = linear_axis(unit, 0.0, max, short_number);
    let plot_height = height - TOP - BOTTOM;
    let to_y = |v: f64| TOP + plot_height * (1.0 - (v - y.min) / (y.max - y.min));
    let mut svg = svg_open(width, height, title);
    for (value, label) in &y.ticks {
        let py = to_y(*value);
        let _ = write!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"#e9ecef\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT + plot_width,
            LEFT - 6.0,
            py + 4.0,
            escape(label)
        );
    }
    let slot = plot_width / bars.len().max(1) as f64;
    for (index, (label, value, color)) in bars.iter().enumerate() {
        let x = LEFT + slot * index as f64 + slot * 0.15;
        let top = to_y(*value);
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"><title>{}: {}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            slot * 0.7,
            (TOP + plot_height - top).max(0.0),
            escape(label),
            short_number(*value),
            x + slot * 0.35,
            top - 4.0,
            short_number(*value),
            x + slot * 0.35,
            TOP + plot_height + 16.0,
            escape(label)
        );
    }
    let _ = write!(
        svg,
        "<text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        TOP + plot_height / 2.0,
        TOP + plot_height / 2.0,
        escape(unit)
    );
    svg.push_str("</svg>\n");
    svg
}

/// A line chart with a legend on the right; `shade` greys an x range.
pub fn line_chart(title: &str, lines: &[Line], x: &Axis, y: &Axis, shade: Option<(f64, f64)>) -> String {
    let (plot_width, plot_height) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let span = |axis: &Axis| (axis.max - axis.min).max(f64::MIN_POSITIVE);
    let to_x = |v: f64| LEFT + plot_width * (v - x.min) / span(x);
    let to_y = |v: f64| TOP + plot_height * (1.0 - (v - y.min) / span(y));
    let mut svg = svg_open(WIDTH, HEIGHT, title);
    if let Some((from, to)) = shade.filter(|(from, to)| to > from) {
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{plot_height}\" fill=\"#f1f3f5\"/>",
            to_x(from),
            (to_x(to.min(x.max)) - to_x(from)).max(0.0)
        );
    }
    axes(&mut svg, x, y, &to_x, &to_y);
    for (index, line) in lines.iter().enumerate() {
        let points: Vec<String> =
            line.points.iter().map(|&(px, py)| format!("{:.1},{:.1}", to_x(px), to_y(py))).collect();
        let _ = write!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" stroke-dasharray=\"{}\"><title>{}</title></polyline>",
            points.join(" "),
            line.color,
            line.dash,
            escape(&line.label)
        );
        let legend_y = TOP + 14.0 + 18.0 * index as f64;
        if legend_y < HEIGHT - 10.0 {
            let legend_x = LEFT + plot_width + 14.0;
            let _ = write!(
                svg,
                "<line x1=\"{legend_x:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"2\" \
                 stroke-dasharray=\"{}\"/><text x=\"{:.1}\" y=\"{legend_y:.1}\">{}</text>",
                legend_y - 4.0,
                legend_x + 26.0,
                legend_y - 4.0,
                line.color,
                line.dash,
                legend_x + 32.0,
                escape(&line.label)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// The grid lines and tick labels of both axes, the plot's frame and the axes' labels.
fn axes(svg: &mut String, x: &Axis, y: &Axis, to_x: &dyn Fn(f64) -> f64, to_y: &dyn Fn(f64) -> f64) {
    let (plot_width, plot_height) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    for (value, label) in &y.ticks {
        let py = to_y(*value);
        let _ = write!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"#e9ecef\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT + plot_width,
            LEFT - 6.0,
            py + 4.0,
            escape(label)
        );
    }
    for (value, label) in &x.ticks {
        let px = to_x(*value);
        let _ = write!(
            svg,
            "<line x1=\"{px:.1}\" y1=\"{TOP}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#e9ecef\"/>\
             <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            TOP + plot_height,
            TOP + plot_height + 16.0,
            escape(label)
        );
    }
    let _ = write!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{plot_width}\" height=\"{plot_height}\" fill=\"none\" stroke=\"#adb5bd\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        LEFT + plot_width / 2.0,
        HEIGHT - 8.0,
        escape(&x.label),
        TOP + plot_height / 2.0,
        TOP + plot_height / 2.0,
        escape(&y.label)
    );
}

fn svg_open(width: f64, height: f64, title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" \
         font-family=\"system-ui,sans-serif\" font-size=\"11\" role=\"img\"><title>{t}</title>\
         <text x=\"{LEFT}\" y=\"20\" font-size=\"13\" font-weight=\"600\">{t}</text>",
        t = escape(title)
    )
}

/// An axis from `min` to `max` with ticks at 1, 2 or 5 × 10^k steps.
pub fn linear_axis(label: &str, min: f64, max: f64, format: impl Fn(f64) -> String) -> Axis {
    let max = if max > min { max } else { min + 1.0 };
    let raw_step = (max - min) / 5.0;
    let magnitude = 10f64.powf(raw_step.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|&s| s >= raw_step).unwrap_or(10.0 * magnitude);
    let mut ticks = Vec::new();
    let mut value = (min / step).ceil() * step;
    while value <= max + step * 1e-9 && ticks.len() < 20 {
        ticks.push((value, format(value)));
        value += step;
    }
    Axis { label: label.to_owned(), min, max, ticks }
}

/// A log10 axis of microseconds from 10^`min_decade` to 10^`max_decade`.
pub fn log_axis(label: &str, min_decade: f64, max_decade: f64) -> Axis {
    let ticks = (min_decade as i32..=max_decade as i32)
        .map(|decade| (f64::from(decade), duration_label(10f64.powi(decade))))
        .collect();
    Axis { label: label.to_owned(), min: min_decade, max: max_decade, ticks }
}

/// Microseconds as `100 µs`, `1 ms`, `10 s`.
fn duration_label(micros: f64) -> String {
    if micros >= 1e6 {
        format!("{} s", short_number(micros / 1e6))
    } else if micros >= 1e3 {
        format!("{} ms", short_number(micros / 1e3))
    } else {
        format!("{} µs", short_number(micros))
    }
}

/// `1500` as `1.5k`, `2000000` as `2M`.
fn short_number(value: f64) -> String {
    let (scaled, suffix) = if value.abs() >= 1e6 {
        (value / 1e6, "M")
    } else if value.abs() >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    let text =
        if scaled.abs() >= 100.0 || scaled.fract() == 0.0 { format!("{scaled:.0}") } else { format!("{scaled:.2}") };
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text };
    format!("{text}{suffix}")
}

/// Escapes text for HTML and SVG.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_have_round_ticks() {
        let axis = linear_axis("ops/s", 0.0, 437_000.0, short_number);
        let labels: Vec<&str> = axis.ticks.iter().map(|(_, label)| label.as_str()).collect();
        assert_eq!(labels, ["0", "100k", "200k", "300k", "400k"]);
        let log = log_axis("latency", 1.0, 4.0);
        let labels: Vec<&str> = log.ticks.iter().map(|(_, label)| label.as_str()).collect();
        assert_eq!(labels, ["10 µs", "100 µs", "1 ms", "10 ms"]);
        assert_eq!(short_number(1_500.0), "1.5k");
        assert_eq!(short_number(12.345), "12.35");
    }

    #[test]
    fn charts_are_plain_svg_with_escaped_labels() {
        let line = Line { label: "a<b".into(), color: PALETTE[0], dash: "", points: vec![(0.0, 1.0), (1.0, 2.0)] };
        let x = linear_axis("x", 0.0, 1.0, |v| format!("{v}"));
        let y = linear_axis("y", 0.0, 2.0, |v| format!("{v}"));
        let svg = line_chart("t & u", &[line], &x, &y, Some((0.0, 0.5)));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("a&lt;b") && svg.contains("t &amp; u") && svg.contains("<polyline"));
        let bars = bar_chart("bars", "ops/s", &[("ferrogrid 1".into(), 10.0, PALETTE[0])]);
        assert!(bars.contains("<rect") && !bars.contains("<script"));
    }
}
