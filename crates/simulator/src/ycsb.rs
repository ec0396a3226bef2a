//! YCSB core workload files (`workload=site.ycsb.workloads.CoreWorkload`), read as YCSB
//! ships them (`simulator/ycsb/workloada` … `workloadf`, `workload_template`).
//!
//! Mapping onto an `IMap` (named by `table`, default `usertable`):
//! - a record is one entry: key = the Java String `"user" + number` (YCSB's `buildKeyName`:
//!   the number is FNV-hashed unless `insertorder=ordered`, left-padded with zeros to
//!   `zeropadding` digits); value = one `byte[]` blob (type −12) of `fieldcount × fieldlength`
//!   random printable bytes: the fields are not stored separately;
//! - read → `get` (probe `READ`); update → `set` of a whole new record (`UPDATE`; YCSB's
//!   `writeallfields=false` would write one field: a single blob has no fields); insert →
//!   `set` of the next record number (`INSERT`); read-modify-write → `get` then `set`
//!   (`READ-MODIFY-WRITE`, timed as one); scan (workload E) → the first page of a paging
//!   predicate `__key >= startkey` of `scanlength` entries in key order (`SCAN`), answered from
//!   a sorted index on `__key` that the load phase adds (YCSB's `scan(table, startkey, n)`:
//!   the `n` records from `startkey` on).
//! - keys are chosen as YCSB's `CoreWorkload.nextKeynum` does: uniform over the loaded
//!   records, scrambled zipfian over the loaded records plus 2 × the expected inserts
//!   (retrying numbers not inserted yet), or skewed-latest over the insert sequence.
//! - the measurement is time based (`--duration`): `operationcount` only sizes the zipfian
//!   key space, as in YCSB. `threadcount` and `target` are read from the file as YCSB reads
//!   them from the command line; `--threads` and `--rate` override them.
//!
//! Keys that only matter to features not offered here (field-level reads, measurement
//! and export settings) are accepted without effect; see [`IGNORED_KEYS`]. Any other key is an
//! error naming it.

use crate::error::SimulatorError;
use crate::generators::fnv_hash64;
use crate::properties::Properties;

/// The workload classes accepted in `workload=` (YCSB's current and pre-0.14 package names).
const WORKLOAD_CLASSES: [&str; 2] = ["site.ycsb.workloads.CoreWorkload", "com.yahoo.ycsb.workloads.CoreWorkload"];

/// Keys read and used.
const USED_KEYS: [&str; 22] = [
    "workload",
    "recordcount",
    "operationcount",
    "insertstart",
    "insertcount",
    "fieldcount",
    "fieldlength",
    "fieldlengthdistribution",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "readmodifywriteproportion",
    "scanproportion",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "requestdistribution",
    "insertorder",
    "zeropadding",
    "threadcount",
    "target",
    "table",
];

/// Keys accepted without effect: they tune features a single-blob `IMap` record does not
/// have (fields, a scan's rate and time limits) or YCSB's own measurement and export, replaced
/// by the Simulator's.
pub const IGNORED_KEYS: [&str; 19] = [
    "readallfields",
    "readallfieldsbyname",
    "writeallfields",
    "dataintegrity",
    "fieldnameprefix",
    "minfieldlength",
    "maxscanrate",
    "scanoptimelimit",
    "discardscannedrecord",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "measurementtype",
    "histogram.buckets",
    "timeseries.granularity",
    "measurement.interval",
    "status.interval",
    "maxexecutiontime",
    "core_workload_insertion_retry_limit",
    "core_workload_insertion_retry_interval",
];

/// Largest `recordcount` loaded (the data set's keys are generated in the driver).
pub const MAX_RECORD_COUNT: i64 = 100_000_000;
/// Longest scan (entries in one page of the answer).
pub const MAX_SCAN_LENGTH: u32 = 100_000;
/// Largest record, `fieldcount × fieldlength`.
pub const MAX_RECORD_BYTES: u64 = 16 << 20;

/// How reads, updates and read-modify-writes pick their record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestDistribution {
    Uniform,
    Zipfian,
    Latest,
}

/// How a scan picks its length (YCSB's `scanlengthdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanLengthDistribution {
    Uniform,
    Zipfian,
}

/// A YCSB core workload.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbWorkload {
    pub record_count: i64,
    pub operation_count: i64,
    pub insert_start: i64,
    pub insert_count: i64,
    pub field_count: u32,
    pub field_length: u32,
    pub read_proportion: f64,
    pub update_proportion: f64,
    pub insert_proportion: f64,
    pub read_modify_write_proportion: f64,
    pub scan_proportion: f64,
    pub min_scan_length: u32,
    pub max_scan_length: u32,
    pub scan_length_distribution: ScanLengthDistribution,
    pub request_distribution: RequestDistribution,
    pub ordered_inserts: bool,
    pub zero_padding: u32,
    pub thread_count: u32,
    pub target_ops_per_second: Option<f64>,
    pub table: String,
}

impl YcsbWorkload {
    pub fn from_properties(properties: &Properties) -> Result<YcsbWorkload, SimulatorError> {
        check_keys(properties)?;
        let class = properties.get("workload").unwrap_or("");
        if !WORKLOAD_CLASSES.contains(&class) {
            return Err(properties.invalid("workload", "site.ycsb.workloads.CoreWorkload (only the core workload)"));
        }
        let whole = "a whole number";
        let fraction = "a proportion (a number ≥ 0)";
        let record_count: i64 = match properties.get("recordcount") {
            None => return Err(SimulatorError::Input(format!("{}: recordcount is required", properties.source))),
            Some(_) => properties.parsed_or("recordcount", 0, whole)?,
        };
        if record_count == 0 {
            let reason = "at least 1 (YCSB reads 0 as 2^31 − 1 records, too many to load here)";
            return Err(properties.invalid("recordcount", reason));
        }
        let insert_start: i64 = properties.parsed_or("insertstart", 0, whole)?;
        let workload = YcsbWorkload {
            record_count,
            operation_count: properties.parsed_or("operationcount", 0, whole)?,
            insert_start,
            insert_count: properties.parsed_or("insertcount", record_count - insert_start, whole)?,
            field_count: properties.parsed_or("fieldcount", 10, whole)?,
            field_length: properties.parsed_or("fieldlength", 100, whole)?,
            read_proportion: properties.parsed_or("readproportion", 0.95, fraction)?,
            update_proportion: properties.parsed_or("updateproportion", 0.05, fraction)?,
            insert_proportion: properties.parsed_or("insertproportion", 0.0, fraction)?,
            read_modify_write_proportion: properties.parsed_or("readmodifywriteproportion", 0.0, fraction)?,
            scan_proportion: properties.parsed_or("scanproportion", 0.0, fraction)?,
            min_scan_length: properties.parsed_or("minscanlength", 1, whole)?,
            max_scan_length: properties.parsed_or("maxscanlength", 1000, whole)?,
            scan_length_distribution: match properties.get("scanlengthdistribution").unwrap_or("uniform") {
                "uniform" => ScanLengthDistribution::Uniform,
                "zipfian" => ScanLengthDistribution::Zipfian,
                _ => return Err(properties.invalid("scanlengthdistribution", "uniform or zipfian")),
            },
            request_distribution: match properties.get("requestdistribution").unwrap_or("uniform") {
                "uniform" => RequestDistribution::Uniform,
                "zipfian" => RequestDistribution::Zipfian,
                "latest" => RequestDistribution::Latest,
                _ => return Err(properties.invalid("requestdistribution", "uniform, zipfian or latest")),
            },
            ordered_inserts: match properties.get("insertorder").unwrap_or("hashed") {
                "hashed" => false,
                "ordered" => true,
                _ => return Err(properties.invalid("insertorder", "hashed or ordered")),
            },
            zero_padding: properties.parsed_or("zeropadding", 1, whole)?,
            thread_count: properties.parsed_or("threadcount", 1, whole)?,
            target_ops_per_second: match properties.parsed_or("target", 0.0, "operations per second (0 = no target)")? {
                rate if rate > 0.0 => Some(rate),
                _ => None,
            },
            table: properties.get("table").unwrap_or("usertable").to_owned(),
        };
        workload.validate(properties)?;
        Ok(workload)
    }

    fn validate(&self, properties: &Properties) -> Result<(), SimulatorError> {
        let check =
            |ok: bool, key: &str, expected: &str| if ok { Ok(()) } else { Err(properties.invalid(key, expected)) };
        check((1..=MAX_RECORD_COUNT).contains(&self.record_count), "recordcount", "1..=100000000")?;
        check(self.insert_start >= 0, "insertstart", "a number ≥ 0")?;
        check(
            self.insert_count >= 1 && self.insert_start + self.insert_count <= self.record_count,
            "insertcount",
            "at least 1, with insertstart + insertcount ≤ recordcount",
        )?;
        check(self.operation_count >= 0, "operationcount", "a number ≥ 0")?;
        check(self.field_count >= 1, "fieldcount", "at least 1")?;
        check(self.field_length >= 1, "fieldlength", "at least 1")?;
        check(self.record_bytes() <= MAX_RECORD_BYTES, "fieldlength", "fieldcount × fieldlength ≤ 16 MiB")?;
        let distribution = properties.get("fieldlengthdistribution").unwrap_or("constant");
        check(distribution == "constant", "fieldlengthdistribution", "constant (the only one supported)")?;
        for (key, value) in [
            ("readproportion", self.read_proportion),
            ("updateproportion", self.update_proportion),
            ("insertproportion", self.insert_proportion),
            ("readmodifywriteproportion", self.read_modify_write_proportion),
            ("scanproportion", self.scan_proportion),
        ] {
            check(value.is_finite() && value >= 0.0, key, "a proportion (a number ≥ 0)")?;
        }
        let total = self.read_proportion
            + self.update_proportion
            + self.insert_proportion
            + self.read_modify_write_proportion
            + self.scan_proportion;
        if total <= 0.0 {
            return Err(SimulatorError::Input(format!("{}: every operation proportion is 0", properties.source)));
        }
        check((1..=crate::test_file::MAX_THREADS).contains(&self.thread_count), "threadcount", "1..=10000")?;
        check(self.zero_padding <= 64, "zeropadding", "at most 64")?;
        check(self.min_scan_length >= 1, "minscanlength", "at least 1")?;
        check(
            (self.min_scan_length..=MAX_SCAN_LENGTH).contains(&self.max_scan_length),
            "maxscanlength",
            "minscanlength..=100000",
        )?;
        check(!self.table.is_empty(), "table", "a map name")?;
        if properties.get("dataintegrity").is_some_and(|value| value.eq_ignore_ascii_case("true")) {
            return Err(properties.invalid("dataintegrity", "false (values are random blobs, not checkable fields)"));
        }
        Ok(())
    }

    /// Bytes of one record's value blob payload.
    pub fn record_bytes(&self) -> u64 {
        u64::from(self.field_count) * u64::from(self.field_length)
    }

    /// YCSB's `buildKeyName(keynum, zeropadding, orderedinserts)`.
    pub fn key_name(&self, key_number: i64) -> String {
        let number = if self.ordered_inserts { key_number } else { fnv_hash64(key_number) };
        format!("user{:0>width$}", number, width = self.zero_padding as usize)
    }

    /// The key space of the zipfian chooser: YCSB's `insertstart + insertcount +
    /// expectednewkeys` (upper bound, inclusive), with `expectednewkeys = (int)(operationcount ×
    /// insertproportion × 2.0)` where insertproportion is the raw (unnormalised) property.
    pub fn zipfian_max_key(&self) -> i64 {
        let expected_new_keys = (self.operation_count as f64 * self.insert_proportion * 2.0) as i64;
        self.insert_start + self.insert_count + expected_new_keys
    }

    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "workload": "site.ycsb.workloads.CoreWorkload",
            "recordcount": self.record_count,
            "operationcount": self.operation_count,
            "insertstart": self.insert_start,
            "insertcount": self.insert_count,
            "fieldcount": self.field_count,
            "fieldlength": self.field_length,
            "readproportion": self.read_proportion,
            "updateproportion": self.update_proportion,
            "insertproportion": self.insert_proportion,
            "readmodifywriteproportion": self.read_modify_write_proportion,
            "scanproportion": self.scan_proportion,
            "minscanlength": self.min_scan_length,
            "maxscanlength": self.max_scan_length,
            "scanlengthdistribution": self.scan_length_distribution,
            "requestdistribution": self.request_distribution,
            "insertorder": if self.ordered_inserts { "ordered" } else { "hashed" },
            "zeropadding": self.zero_padding,
            "threadcount": self.thread_count,
            "target": self.target_ops_per_second,
            "table": self.table,
            "record_value": "one byte[] blob of fieldcount × fieldlength bytes",
        })
    }
}

fn check_keys(properties: &Properties) -> Result<(), SimulatorError> {
    for key in properties.keys() {
        if !USED_KEYS.contains(&key) && !IGNORED_KEYS.contains(&key) {
            return Err(SimulatorError::Input(format!(
                "{}: unknown key {key:?} for a YCSB core workload (read: {}; accepted without effect: {})",
                properties.location(key),
                USED_KEYS.join(", "),
                IGNORED_KEYS.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::TestDefinition;
    use std::path::{Path, PathBuf};

    /// The workload files as YCSB ships them: the repository's copies, and the shared
    /// originals when they sit beside the repository.
    fn workload_directories() -> Vec<PathBuf> {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut directories = vec![manifest.join("../../simulator/ycsb")];
        let shared = manifest.join("../../../shared/ycsb-workloads");
        if shared.is_dir() {
            directories.push(shared);
        }
        directories
    }

    fn parse(text: &str) -> Result<YcsbWorkload, SimulatorError> {
        YcsbWorkload::from_properties(&Properties::parse("workload", text).unwrap())
    }

    #[test]
    fn every_shipped_workload_parses() {
        for directory in workload_directories() {
            for name in
                ["workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf", "workload_template"]
            {
                let path = directory.join(name);
                match TestDefinition::read(&path) {
                    Ok(TestDefinition::Ycsb(_)) => {}
                    other => panic!("{}: {other:?}", path.display()),
                }
            }
        }
    }

    #[test]
    fn workload_values_are_read() {
        let directory = &workload_directories()[0];
        let Ok(TestDefinition::Ycsb(a)) = TestDefinition::read(&directory.join("workloada")) else { panic!() };
        assert_eq!((a.record_count, a.operation_count), (1000, 1000));
        assert_eq!((a.read_proportion, a.update_proportion), (0.5, 0.5));
        assert_eq!(a.request_distribution, RequestDistribution::Zipfian);
        assert_eq!((a.field_count, a.field_length, a.record_bytes()), (10, 100, 1000));
        assert_eq!((a.thread_count, a.target_ops_per_second, a.table.as_str()), (1, None, "usertable"));
        let Ok(TestDefinition::Ycsb(d)) = TestDefinition::read(&directory.join("workloadd")) else { panic!() };
        assert_eq!(d.request_distribution, RequestDistribution::Latest);
        assert_eq!(d.insert_proportion, 0.05);
        let Ok(TestDefinition::Ycsb(e)) = TestDefinition::read(&directory.join("workloade")) else { panic!() };
        assert_eq!((e.scan_proportion, e.insert_proportion, e.read_proportion), (0.95, 0.05, 0.0));
        assert_eq!((e.min_scan_length, e.max_scan_length), (1, 100));
        assert_eq!(e.scan_length_distribution, ScanLengthDistribution::Uniform);
        let Ok(TestDefinition::Ycsb(f)) = TestDefinition::read(&directory.join("workloadf")) else { panic!() };
        assert_eq!(f.read_modify_write_proportion, 0.5);
        let Ok(TestDefinition::Ycsb(t)) = TestDefinition::read(&directory.join("workload_template")) else { panic!() };
        assert_eq!((t.record_count, t.operation_count, t.ordered_inserts), (1_000_000, 3_000_000, false));
    }

    #[test]
    fn key_names_follow_build_key_name() {
        let mut workload = parse("workload=site.ycsb.workloads.CoreWorkload\nrecordcount=10\n").unwrap();
        assert_eq!(workload.key_name(0), "user6284781860667377211");
        workload.ordered_inserts = true;
        assert_eq!(workload.key_name(42), "user42");
        workload.zero_padding = 5;
        assert_eq!(workload.key_name(42), "user00042");
    }

    #[test]
    fn threadcount_target_and_zipfian_key_space() {
        let text = "workload=site.ycsb.workloads.CoreWorkload\nrecordcount=1000\noperationcount=1000\n\
                    insertproportion=0.05\nthreadcount=8\ntarget=5000\nrequestdistribution=zipfian\n";
        let workload = parse(text).unwrap();
        assert_eq!((workload.thread_count, workload.target_ops_per_second), (8, Some(5000.0)));
        assert_eq!(workload.zipfian_max_key(), 1000 + 100);
    }

    #[test]
    fn errors_name_the_key() {
        let base = "workload=site.ycsb.workloads.CoreWorkload\nrecordcount=100\n";
        for (extra, needle) in [
            ("requestdistribution=hotspot\n", "requestdistribution=hotspot: expected uniform, zipfian or latest"),
            ("insertorder=random\n", "insertorder=random"),
            ("fieldlengthdistribution=zipfian\n", "fieldlengthdistribution=zipfian"),
            ("recordcnt=5\n", "unknown key \"recordcnt\""),
            ("readproportion=-1\n", "readproportion=-1"),
            ("insertcount=500\n", "insertcount=500"),
            ("dataintegrity=true\n", "dataintegrity=true"),
        ] {
            let error = parse(&format!("{base}{extra}")).unwrap_err().to_string();
            assert!(error.contains(needle), "{extra:?}: {error}");
        }
        let error = parse("workload=site.ycsb.workloads.CoreWorkload\n").unwrap_err().to_string();
        assert!(error.contains("recordcount is required"), "{error}");
        let error = parse("workload=site.ycsb.workloads.TimeSeriesWorkload\nrecordcount=1\n").unwrap_err();
        assert!(error.to_string().contains("only the core workload"), "{error}");
    }
}
