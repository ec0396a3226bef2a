//! The `ferrogrid-simulator` command end to end: a short run of a sample test file against an
//! in-process member, and the errors a user sees for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ferrogrid_config::MemberConfig;
use ferrogrid_member::Member;

fn simulator(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferrogrid-simulator")).args(args).output().expect("the binary runs")
}

fn repository_file(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).display().to_string()
}

#[test]
fn runs_a_sample_test_file_against_an_address() {
    let mut config = MemberConfig::default();
    config.network.port = 19_701;
    config.network.port_count = 500;
    config.reactor_threads = 1;
    config.metrics.file = None;
    config.metrics.http_enabled = false;
    let member = Member::start(config).expect("member starts");
    let out: PathBuf = std::env::temp_dir().join(format!("ferrogrid-simulator-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = simulator(&[
        "run",
        &repository_file("simulator/int-byte-map.properties"),
        "--address",
        &member.address().to_string(),
        "--warmup",
        "0.5",
        "--duration",
        "1",
        "--threads",
        "4",
        "--runs",
        "2",
        "--out",
        &out.display().to_string(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("2 run(s), ops/s min"), "{stdout}");
    for file in ["summary.json", "summary.csv", "report.html"] {
        assert!(out.join(file).is_file(), "{file} written");
    }
    let target_directory = out.join(member.address().to_string().replace(':', "_"));
    assert!(
        target_directory.join("run-1/result.json").is_file() && target_directory.join("run-2/result.json").is_file()
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let series = &summary["series"][0];
    assert_eq!(series["runs"], 2);
    assert!(series["ops_per_second"]["min"].as_f64().unwrap() > 0.0);
    assert_eq!(series["p99_us_per_run"].as_array().unwrap().len(), 2);
    let _ = std::fs::remove_dir_all(&out);
    member.shutdown();
}

#[test]
fn bad_input_is_reported_by_name() {
    let directory = std::env::temp_dir().join(format!("ferrogrid-simulator-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let file = directory.join("typo.properties");
    std::fs::write(&file, "class=StringStringMapTest\nthreadCont=4\n").unwrap();
    let output = simulator(&["run", &file.display().to_string(), "--address", "127.0.0.1:1"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("typo.properties:2: unknown key \"threadCont\""), "{stderr}");

    let scans = directory.join("scans");
    let text =
        "workload=site.ycsb.workloads.CoreWorkload\nrecordcount=10\nscanproportion=1\nscanlengthdistribution=hotspot\n";
    std::fs::write(&scans, text).unwrap();
    let output = simulator(&["run", &scans.display().to_string(), "--start", "ferrogrid"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("scans:4: scanlengthdistribution") && stderr.contains("uniform or zipfian"), "{stderr}");

    let sample = repository_file("simulator/string-string-map.properties");
    let output = simulator(&["run", &sample, "--start", "ferrogrid", "--members", "0"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("--members: at least 1"));

    let output = simulator(&["run", &sample]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("name a target"));
    let _ = std::fs::remove_dir_all(&directory);
}
