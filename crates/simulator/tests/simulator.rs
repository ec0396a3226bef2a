//! Short Simulator runs (seconds) against a ferrogrid member started in-process; each checks
//! that the `result.json` it wrote holds sane numbers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ferrogrid_config::MemberConfig;
use ferrogrid_member::Member;
use ferrogrid_simulator::properties::Properties;
use ferrogrid_simulator::runner::{self, RunSettings, Target};
use ferrogrid_simulator::{RunResult, TestDefinition};

fn start_member() -> Member {
    let mut config = MemberConfig::default();
    config.network.port = 18_701;
    config.network.port_count = 500;
    config.reactor_threads = 2;
    config.metrics.file = None;
    config.metrics.http_enabled = false;
    config.io.balancer_interval_seconds = -1;
    Member::start(config).expect("member starts")
}

fn scratch_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("ferrogrid-simulator-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

fn settings(rate: Option<f64>) -> RunSettings {
    RunSettings {
        threads: Some(8),
        clients: 2,
        warmup: Duration::from_secs(1),
        duration: Duration::from_secs(2),
        rate,
        seed: 7,
        smart_routing: true,
        credentials: Default::default(),
        coordinated: false,
    }
}

fn definition(text: &str) -> TestDefinition {
    TestDefinition::from_properties(&Properties::parse("test", text).unwrap()).unwrap()
}

/// Reads back the file the run wrote and checks its numbers; returns it.
fn check_result_file(directory: &Path, returned: &RunResult) -> RunResult {
    let text = std::fs::read_to_string(directory.join("result.json")).expect("result.json written");
    let result: RunResult = serde_json::from_str(&text).expect("result.json parses");
    assert_eq!(
        (result.ops, result.errors, result.load.entries),
        (returned.ops, returned.errors, returned.load.entries)
    );
    assert_eq!((result.all.count, result.probes.len()), (returned.all.count, returned.probes.len()));
    assert!(result.ops > 0, "operations were measured");
    assert_eq!(result.errors, 0, "{:?}", result.error_messages);
    assert_eq!(result.load.size, result.load.entries);
    assert!(result.load.verified_gets > 0);
    let all = &result.all;
    assert_eq!(all.count, result.ops);
    assert!(0.0 < all.p50_us && all.p50_us <= all.p99_us && all.p99_us <= all.max_us, "{all:?}");
    assert!(all.min_us <= all.p50_us && all.p99_us <= all.p999_us && all.p999_us <= all.max_us);
    assert!(result.measure_seconds >= 2.0 && result.measure_seconds < 3.0, "{}", result.measure_seconds);
    let expected = result.ops as f64 / result.measure_seconds;
    assert!((result.ops_per_second - expected).abs() <= 1e-6 * expected, "ops/s = ops / measure seconds");
    assert_eq!(result.probes.iter().map(|probe| probe.count).sum::<u64>(), result.ops);
    assert!(result.timeline.iter().any(|point| point.phase == "measure" && point.ops_per_second > 0.0));
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_runs_against_a_live_member_write_sane_results() {
    let member = start_member();
    let target = Target::Existing { addresses: vec![member.address()], server_pids: vec![std::process::id()] };

    // Closed loop, the seeds' test shape (smaller), gets and sets.
    let map_test = definition(
        "class=StringStringMapTest\nthreadCount=40\nkeyLength=20\nvalueLength=100\nkeyCount=2000\n\
         valueCount=100\nputProb=0.2\nbasename=map\nprobe-getLatency=latency\n",
    );
    let directory = scratch_directory("closed");
    let returned = runner::run_once(&map_test, &target, &settings(None), 1, 1, &directory).await.unwrap();
    let closed = check_result_file(&directory, &returned);
    assert_eq!((closed.mode.as_str(), closed.threads, closed.load.entries), ("closed-loop", 8, 2000));
    let names: Vec<&str> = closed.probes.iter().map(|probe| probe.name.as_str()).collect();
    assert_eq!(names, ["getLatency", "putLatency"]);
    assert!(closed.server_cpu_seconds_per_million_ops.is_some_and(|cpu| cpu > 0.0));

    // Open loop at a fixed rate: throughput follows the rate, latency counts from the schedule.
    let int_test = definition("class=IntByteMapTest\nkeyCount=500\nvalueLength=64\nputProb=0.5\n");
    let directory = scratch_directory("open");
    let returned = runner::run_once(&int_test, &target, &settings(Some(2_000.0)), 1, 1, &directory).await.unwrap();
    let open = check_result_file(&directory, &returned);
    assert_eq!(open.mode, "open-loop");
    assert!((3_400..=4_600).contains(&open.ops), "about 2 s × 2000 ops/s, got {}", open.ops);
    assert!(open.start_delay.as_ref().is_some_and(|delay| delay.count == open.ops));

    // A YCSB workload file as shipped (zipfian reads and updates).
    let workload_a = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../simulator/ycsb/workloada");
    let ycsb = TestDefinition::read(&workload_a).unwrap();
    let directory = scratch_directory("ycsb");
    let returned = runner::run_once(&ycsb, &target, &settings(None), 1, 1, &directory).await.unwrap();
    let result = check_result_file(&directory, &returned);
    let names: Vec<&str> = result.probes.iter().map(|probe| probe.name.as_str()).collect();
    assert_eq!(names, ["READ", "UPDATE"]);
    assert_eq!(result.load.entries, 1000);

    // The summaries and the report of a series.
    let out = scratch_directory("summary");
    std::fs::create_dir_all(&out).unwrap();
    runner::write_summaries(&out, &map_test, &[("ferrogrid".into(), vec![closed])]).unwrap();
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<svg") && !report.contains("<script") && !report.contains("http://cdn"));
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3, "a header, then all + two probes");
    for directory in ["closed", "open", "ycsb", "summary"] {
        let _ = std::fs::remove_dir_all(scratch_directory(directory));
    }
    member.shutdown();
}
