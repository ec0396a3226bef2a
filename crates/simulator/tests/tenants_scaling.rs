//! `ferrogrid-simulator tenants` and `scaling` end to end, for a few seconds each, against a
//! ferrogrid member started in-process (without tenants or security: the tenants present no
//! credentials, `NAME:::FILE`). Each checks the files the command wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ferrogrid_config::{MemberConfig, OverQuota, TenantConfig};
use ferrogrid_member::Member;
use serde_json::Value;

fn simulator(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferrogrid-simulator")).args(args).output().expect("the binary runs")
}

fn start_member(port: u16) -> Member {
    Member::start(member_config(port)).expect("member starts")
}

fn member_config(port: u16) -> MemberConfig {
    let mut config = MemberConfig::default();
    config.network.port = port;
    config.network.port_count = 500;
    config.reactor_threads = 1;
    config.metrics.file = None;
    config.metrics.http_enabled = false;
    config.io.balancer_interval_seconds = -1;
    config
}

fn scratch_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("ferrogrid-simulator-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    directory
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn succeeded(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout
}

#[test]
fn tenants_measure_side_by_side() {
    let member = start_member(21_701);
    let directory = scratch_directory("tenants");
    let alpha_file = directory.join("alpha.properties");
    std::fs::write(
        &alpha_file,
        "class=StringStringMapTest\nthreadCount=8\nkeyCount=500\nputProb=0.2\nbasename=alpha\n",
    )
    .unwrap();
    let beta_file = directory.join("beta.properties");
    std::fs::write(&beta_file, "class=IntByteMapTest\nthreadCount=2\nkeyCount=300\nvalueLength=32\nbasename=beta\n")
        .unwrap();
    let out = directory.join("out");
    let output = simulator(&[
        "tenants",
        "--tenant",
        &format!("alpha:::{}", alpha_file.display()),
        "--tenant",
        &format!("beta:::{}:400", beta_file.display()),
        "--tenant-threads",
        "alpha:3",
        "--address",
        &member.address().to_string(),
        "--warmup",
        "0.5",
        "--duration",
        "1.5",
        "--out",
        &out.display().to_string(),
    ]);
    let stdout = succeeded(&output);
    assert!(stdout.contains("tenant") && stdout.contains("p99.9 µs") && stdout.contains("total:"), "{stdout}");
    assert!(stdout.contains("alpha") && stdout.contains("beta") && stdout.contains("getLatency"), "{stdout}");

    let summary = read_json(&out.join("tenants.json"));
    let tenants = summary["tenants"].as_array().unwrap();
    assert_eq!(tenants.len(), 2);
    let (alpha, beta) = (&tenants[0], &tenants[1]);
    assert_eq!((alpha["name"].as_str(), beta["name"].as_str()), (Some("alpha"), Some("beta")));
    assert_eq!((alpha["mode"].as_str(), alpha["threads"].as_u64()), (Some("closed-loop"), Some(3)));
    assert_eq!((beta["mode"].as_str(), beta["threads"].as_u64()), (Some("open-loop"), Some(2)));
    assert_eq!(beta["target_ops_per_second"].as_f64(), Some(400.0));
    assert_eq!(alpha["username"], Value::Null);
    for tenant in tenants {
        let ops = tenant["ops"].as_u64().unwrap();
        assert!(ops > 0 && tenant["ops_per_second"].as_f64().unwrap() > 0.0, "{tenant}");
        assert_eq!(tenant["errors"].as_u64(), Some(0), "{tenant}");
        let latency = tenant["latency"].as_array().unwrap();
        assert_eq!(latency[0]["name"].as_str(), Some("all"));
        assert_eq!(latency[0]["count"].as_u64(), Some(ops));
        let all = &latency[0];
        let (p50, p90, p99, p999, max) = (
            all["p50_us"].as_f64().unwrap(),
            all["p90_us"].as_f64().unwrap(),
            all["p99_us"].as_f64().unwrap(),
            all["p999_us"].as_f64().unwrap(),
            all["max_us"].as_f64().unwrap(),
        );
        assert!(0.0 < p50 && p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= max, "{all}");
        let result = read_json(&out.join(tenant["result"].as_str().unwrap()));
        assert_eq!(result["target"], tenant["name"]);
        assert_eq!(result["ops"].as_u64(), Some(ops));
        assert_eq!(result["load"]["size"], result["load"]["entries"]);
    }
    // Open loop at 400 ops/s for 1.5 s.
    assert!((400..=800).contains(&beta["ops"].as_u64().unwrap()), "{beta}");
    assert_eq!(alpha["loaded_entries"].as_u64(), Some(500));
    assert_eq!(beta["loaded_entries"].as_u64(), Some(300));
    let total = summary["total_ops"].as_u64().unwrap();
    assert_eq!(total, alpha["ops"].as_u64().unwrap() + beta["ops"].as_u64().unwrap());
    for file in ["summary.csv", "report.html"] {
        assert!(out.join(file).is_file(), "{file} written");
    }

    // Bad input names the option.
    let output = simulator(&["tenants", "--tenant", "gold:alice", "--address", "127.0.0.1:1"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("NAME:USERNAME:PASSWORD:TEST_FILE"));
    let twice = format!("one:::{}", alpha_file.display());
    let output = simulator(&["tenants", "--tenant", &twice, "--tenant", &twice, "--address", "127.0.0.1:1"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("the name is given twice"));
    let same_map = format!("two:::{}", alpha_file.display());
    let output = simulator(&["tenants", "--tenant", &twice, "--tenant", &same_map, "--address", "127.0.0.1:1"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("uses map \"alpha\""));
    let _ = std::fs::remove_dir_all(&directory);
    member.shutdown();
}

/// A member with tenants: both use the same map name (each sees its own), and the refusals of
/// the tenant over its rate quota are counted as errors, by message, without ending the run.
#[test]
fn tenants_over_quota_count_errors() {
    let mut config = member_config(23_701);
    let mut free = TenantConfig::new("free", "free-app", "free-secret");
    free.max_ops_per_second = Some(200);
    free.over_quota = OverQuota::Reject;
    config.tenants.tenants = vec![TenantConfig::new("gold", "gold-app", "gold-secret"), free];
    let member = Member::start(config).expect("member starts");
    let directory = scratch_directory("tenants-quota");
    let test = directory.join("shared.properties");
    std::fs::write(&test, "class=StringStringMapTest\nthreadCount=2\nkeyCount=100\nbasename=shared\n").unwrap();
    let out = directory.join("out");
    let output = simulator(&[
        "tenants",
        "--tenant",
        &format!("gold:gold-app:gold-secret:{}", test.display()),
        "--tenant",
        &format!("free:free-app:free-secret:{}", test.display()),
        "--address",
        &member.address().to_string(),
        "--warmup",
        "0.3",
        "--duration",
        "1",
        "--out",
        &out.display().to_string(),
    ]);
    let stdout = succeeded(&output);
    assert!(stdout.contains("errors of free:") && stdout.contains("operation quota"), "{stdout}");
    let summary = read_json(&out.join("tenants.json"));
    let (gold, free) = (&summary["tenants"][0], &summary["tenants"][1]);
    assert_eq!((gold["username"].as_str(), free["username"].as_str()), (Some("gold-app"), Some("free-app")));
    assert!(gold["ops"].as_u64().unwrap() > 0 && gold["errors"].as_u64() == Some(0), "{gold}");
    let free_errors = free["errors"].as_u64().unwrap();
    assert!(free["ops"].as_u64().unwrap() > 0 && free_errors > 0, "{free}");
    let messages = free["error_messages"].as_array().unwrap();
    assert!(messages[0]["message"].as_str().unwrap().contains("quota"), "{free}");
    assert_eq!(messages.iter().map(|message| message["count"].as_u64().unwrap()).sum::<u64>(), free_errors);
    assert_eq!(summary["total_errors"].as_u64(), Some(free_errors));
    let _ = std::fs::remove_dir_all(&directory);
    member.shutdown();
}

#[test]
fn scaling_steps_sum_their_processes() {
    let member = start_member(22_701);
    let directory = scratch_directory("scaling");
    let test = directory.join("map.properties");
    std::fs::write(&test, "class=StringStringMapTest\nkeyCount=500\nputProb=0.1\nbasename=scaling\n").unwrap();
    let out = directory.join("out");
    let output = simulator(&[
        "scaling",
        &test.display().to_string(),
        "--processes",
        "1,3",
        "--total-threads",
        "4",
        "--repeat",
        "2",
        "--address",
        &member.address().to_string(),
        "--server-pid",
        &std::process::id().to_string(),
        "--warmup",
        "0.3",
        "--duration",
        "1",
        "--out",
        &out.display().to_string(),
    ]);
    let stdout = succeeded(&output);
    assert!(stdout.contains("processes") && stdout.contains("p99 µs merged"), "{stdout}");

    let result = read_json(&out.join("scaling.json"));
    let steps = result["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "one entry per step");
    assert_eq!(steps[0]["processes"].as_u64(), Some(1));
    assert_eq!(steps[1]["processes"].as_u64(), Some(3));
    assert_eq!(steps[0]["threads_per_process"], serde_json::json!([4]));
    assert_eq!(steps[1]["threads_per_process"], serde_json::json!([2, 1, 1]));
    for step in steps {
        let processes = step["processes"].as_u64().unwrap() as usize;
        let ops = &step["ops_per_second"];
        let (min, average, max) =
            (ops["min"].as_f64().unwrap(), ops["average"].as_f64().unwrap(), ops["max"].as_f64().unwrap());
        assert!(0.0 < min && min <= average && average <= max, "{step}");
        assert_eq!(step["errors"].as_u64(), Some(0), "{step}");
        let runs = step["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "two repeats");
        for run in runs {
            let per_process = run["processes"].as_array().unwrap();
            assert_eq!(per_process.len(), processes);
            let summed: f64 = per_process.iter().map(|process| process["ops_per_second"].as_f64().unwrap()).sum();
            assert!((run["ops_per_second"].as_f64().unwrap() - summed).abs() < 1e-6 * summed.max(1.0));
            let ops: u64 = per_process.iter().map(|process| process["ops"].as_u64().unwrap()).sum();
            assert!(ops > 0 && run["ops"].as_u64() == Some(ops), "{run}");
            assert_eq!(run["merged"]["count"].as_u64(), Some(ops), "the merged distribution has every operation");
            let p99_max = run["p99_max_us"].as_f64().unwrap();
            let merged_p99 = run["merged"]["p99_us"].as_f64().unwrap();
            let largest_max = per_process.iter().map(|process| process["max_us"].as_f64().unwrap()).fold(0.0, f64::max);
            assert!(0.0 < merged_p99 && merged_p99 <= p99_max * 1.01 && p99_max <= largest_max, "{run}");
            assert!(run["server_cpu_seconds_per_million_ops"].as_f64().is_some_and(|cpu| cpu > 0.0), "{run}");
            for process in per_process {
                assert!(process["ops"].as_u64().unwrap() > 0, "{process}");
                assert!(out.join(process["result"].as_str().unwrap()).is_file());
            }
        }
    }
    assert_eq!(steps[0]["relative_to_first"].as_f64(), Some(1.0));
    let csv = std::fs::read_to_string(out.join("scaling.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2, "a header, then one row per step");
    let runs_csv = std::fs::read_to_string(out.join("scaling-runs.csv")).unwrap();
    assert_eq!(runs_csv.lines().count(), 1 + 4, "a header, then one row per step and repeat");

    let output = simulator(&[
        "scaling",
        &test.display().to_string(),
        "--processes",
        "8",
        "--total-threads",
        "4",
        "--address",
        "127.0.0.1:1",
    ]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("--total-threads 4"));
    let _ = std::fs::remove_dir_all(&directory);
    member.shutdown();
}
