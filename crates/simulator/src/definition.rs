//! Test definitions: a Simulator test file (`class=…`) or a YCSB core workload file
//! (`workload=site.ycsb.workloads.CoreWorkload`), read from Java properties.
//!
//! # Simulator test files
//! | key | StringStringMapTest | IntByteMapTest | meaning |
//! |---|---|---|---|
//! | `class` | required | required | the test class |
//! | `threadCount` | 10 | 10 | worker tasks (`--threads` overrides) |
//! | `keyCount` | 10 000 | 1 000 | distinct keys, loaded before measuring |
//! | `keyLength` | 10 | — | characters per key: the key number, zero-padded |
//! | `valueLength` | 10 | 100 | characters (String) or bytes (`byte[]`) per value |
//! | `valueCount` | 10 000 | 1 000 | distinct values, random, drawn per write |
//! | `putProb` | 0.1 | 0.1 | share of writes (`IMap.set`, probe `putLatency`); the rest are gets (`getLatency`) |
//! | `keyLocality` | `Random` | `Random` | `Random` or `Shared`: keys drawn uniformly from all of them (the others need member-side knowledge) |
//! | `basename` | the class | the class | map name |
//! | `logFrequency` | — | — | accepted; progress is printed every second instead |
//! | `probe-<name>` | — | — | `latency` or `hdr` for `getLatency`/`putLatency`; both are always recorded |
//!
//! Any other key is an error naming it. Keys are Java Strings (type −11) for
//! StringStringMapTest and Java Integers (type −7, 4 bytes big-endian) for IntByteMapTest;
//! values are Strings and `byte[]` (type −12).
//!
//! `QueueTest` and `TopicTest` files: see [`crate::queue`] and [`crate::topic`].
//!
//! YCSB files: see [`crate::ycsb`].

use crate::error::SimulatorError;
use crate::properties::Properties;
use crate::queue::QueueTest;
use crate::test_file::PROBE_TYPES;
pub use crate::test_file::{MAX_THREADS, MAX_VALUE_LENGTH};
use crate::topic::TopicTest;
use crate::ycsb::YcsbWorkload;

/// The probes of the map tests, in their order in results.
pub const MAP_TEST_PROBES: [&str; 2] = ["getLatency", "putLatency"];

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub enum TestDefinition {
    Map(MapTest),
    Ycsb(YcsbWorkload),
    Queue(QueueTest),
    Topic(TopicTest),
}

impl TestDefinition {
    /// Reads a Simulator test file or a YCSB workload file (told apart by `class` / `workload`).
    pub fn from_properties(properties: &Properties) -> Result<TestDefinition, SimulatorError> {
        if properties.get("class") == Some(QueueTest::CLASS) {
            Ok(TestDefinition::Queue(QueueTest::from_properties(properties)?))
        } else if properties.get("class") == Some(TopicTest::CLASS) {
            Ok(TestDefinition::Topic(TopicTest::from_properties(properties)?))
        } else if properties.get("class").is_some() {
            Ok(TestDefinition::Map(MapTest::from_properties(properties)?))
        } else if properties.get("workload").is_some() {
            Ok(TestDefinition::Ycsb(YcsbWorkload::from_properties(properties)?))
        } else {
            Err(SimulatorError::Input(format!(
                "{}: neither a Simulator test (no `class=` key) nor a YCSB workload (no `workload=` key)",
                properties.source
            )))
        }
    }

    pub fn read(path: &std::path::Path) -> Result<TestDefinition, SimulatorError> {
        TestDefinition::from_properties(&Properties::read(path)?)
    }

    /// A short name for output: the class, or `ycsb`.
    pub fn name(&self) -> String {
        match self {
            TestDefinition::Map(test) => test.class.name().to_owned(),
            TestDefinition::Ycsb(_) => "ycsb".to_owned(),
            TestDefinition::Queue(_) => QueueTest::CLASS.to_owned(),
            TestDefinition::Topic(_) => TopicTest::CLASS.to_owned(),
        }
    }

    /// The map the test loads and uses; for a queue or topic test, its name prefix.
    pub fn map_name(&self) -> &str {
        match self {
            TestDefinition::Map(test) => &test.map_name,
            TestDefinition::Ycsb(workload) => &workload.table,
            TestDefinition::Queue(test) => &test.basename,
            TestDefinition::Topic(test) => &test.basename,
        }
    }

    /// Worker tasks the definition asks for.
    pub fn thread_count(&self) -> u32 {
        match self {
            TestDefinition::Map(test) => test.thread_count,
            TestDefinition::Ycsb(workload) => workload.thread_count,
            TestDefinition::Queue(test) => test.thread_count(),
            TestDefinition::Topic(test) => test.publisher_threads,
        }
    }

    /// The open-loop target rate the definition asks for (YCSB's `target`), if any.
    pub fn target_ops_per_second(&self) -> Option<f64> {
        match self {
            TestDefinition::Ycsb(workload) => workload.target_ops_per_second,
            TestDefinition::Map(_) | TestDefinition::Queue(_) | TestDefinition::Topic(_) => None,
        }
    }

    /// Refuses a queue or topic test for `command`: it runs map and YCSB tests only (their
    /// data set can be loaded once and measured by several processes, tenants or steps; a
    /// queue test's end-of-run check and a topic test's listeners belong to one run).
    pub fn require_map_data(&self, command: &str) -> Result<(), SimulatorError> {
        match self {
            TestDefinition::Map(_) | TestDefinition::Ycsb(_) => Ok(()),
            TestDefinition::Queue(_) | TestDefinition::Topic(_) => Err(SimulatorError::Input(format!(
                "{command} runs map and YCSB tests; run {} with `run` or `compare`",
                self.name()
            ))),
        }
    }

    /// Every setting, as JSON for the results.
    pub fn describe(&self) -> serde_json::Value {
        match self {
            TestDefinition::Map(test) => serde_json::json!({
                "class": test.class.name(),
                "threadCount": test.thread_count,
                "keyCount": test.key_count,
                "keyLength": test.key_length,
                "valueLength": test.value_length,
                "valueCount": test.value_count,
                "putProb": test.put_probability,
                "keyLocality": test.key_locality,
                "basename": test.map_name,
            }),
            TestDefinition::Ycsb(workload) => workload.describe(),
            TestDefinition::Queue(test) => test.describe(),
            TestDefinition::Topic(test) => test.describe(),
        }
    }
}

/// The built-in map test classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapTestClass {
    StringStringMap,
    IntByteMap,
}

impl MapTestClass {
    pub fn name(self) -> &'static str {
        match self {
            MapTestClass::StringStringMap => "StringStringMapTest",
            MapTestClass::IntByteMap => "IntByteMapTest",
        }
    }

    /// True for the keys this class reads (besides `class` and `probe-…`).
    fn reads(self, key: &str) -> bool {
        COMMON_KEYS.contains(&key) || (self == MapTestClass::StringStringMap && key == "keyLength")
    }

    fn key_list(self) -> String {
        let mut keys = COMMON_KEYS.to_vec();
        if self == MapTestClass::StringStringMap {
            keys.push("keyLength");
        }
        keys.join(", ")
    }
}

/// The keys both map test classes read.
const COMMON_KEYS: [&str; 8] =
    ["threadCount", "keyCount", "valueLength", "valueCount", "putProb", "keyLocality", "basename", "logFrequency"];

/// A Simulator map test: load `key_count` keys, then gets and sets.
#[derive(Debug, Clone, PartialEq)]
pub struct MapTest {
    pub class: MapTestClass,
    pub thread_count: u32,
    pub key_count: u32,
    /// Characters per String key (StringStringMapTest only; 0 for IntByteMapTest).
    pub key_length: u32,
    pub value_length: u32,
    pub value_count: u32,
    pub put_probability: f64,
    pub key_locality: String,
    pub map_name: String,
}

/// Largest `keyCount`, `valueCount`: the data set is built in the driver's memory.
pub const MAX_KEY_COUNT: u32 = 50_000_000;

impl MapTest {
    pub fn from_properties(properties: &Properties) -> Result<MapTest, SimulatorError> {
        let class = match properties.get("class").unwrap_or("") {
            "StringStringMapTest" => MapTestClass::StringStringMap,
            "IntByteMapTest" => MapTestClass::IntByteMap,
            other => {
                return Err(SimulatorError::Input(format!(
                    "{}: class={other}: unknown test class (built in: StringStringMapTest, IntByteMapTest, QueueTest, \
                     TopicTest)",
                    properties.location("class")
                )))
            }
        };
        check_keys(properties, class)?;
        let (default_keys, default_value_length, default_values) = match class {
            MapTestClass::StringStringMap => (10_000, 10, 10_000),
            MapTestClass::IntByteMap => (1_000, 100, 1_000),
        };
        let whole = "a whole number";
        let test = MapTest {
            class,
            thread_count: properties.parsed_or("threadCount", 10, whole)?,
            key_count: properties.parsed_or("keyCount", default_keys, whole)?,
            key_length: match class {
                MapTestClass::StringStringMap => properties.parsed_or("keyLength", 10, whole)?,
                MapTestClass::IntByteMap => 0,
            },
            value_length: properties.parsed_or("valueLength", default_value_length, whole)?,
            value_count: properties.parsed_or("valueCount", default_values, whole)?,
            put_probability: properties.parsed_or("putProb", 0.1, "a probability between 0 and 1")?,
            key_locality: properties.get("keyLocality").unwrap_or("Random").to_owned(),
            map_name: properties.get("basename").unwrap_or(class.name()).to_owned(),
        };
        test.validate(properties)?;
        Ok(test)
    }

    fn validate(&self, properties: &Properties) -> Result<(), SimulatorError> {
        let check =
            |ok: bool, key: &str, expected: &str| if ok { Ok(()) } else { Err(properties.invalid(key, expected)) };
        check((1..=MAX_THREADS).contains(&self.thread_count), "threadCount", "1..=10000")?;
        check((1..=MAX_KEY_COUNT).contains(&self.key_count), "keyCount", "1..=50000000")?;
        check((1..=MAX_KEY_COUNT).contains(&self.value_count), "valueCount", "1..=50000000")?;
        check(self.value_length <= MAX_VALUE_LENGTH, "valueLength", "at most 16 MiB")?;
        check((0.0..=1.0).contains(&self.put_probability), "putProb", "a probability between 0 and 1")?;
        let locality = self.key_locality.to_ascii_lowercase();
        check(
            locality == "random" || locality == "shared",
            "keyLocality",
            "Random or Shared (Local, Remote and SinglePartition need member-side key placement, not supported)",
        )?;
        check(!self.map_name.is_empty(), "basename", "a map name")?;
        if self.class == MapTestClass::StringStringMap {
            let digits = (self.key_count - 1).to_string().len() as u32;
            check(
                (digits..=MAX_VALUE_LENGTH).contains(&self.key_length),
                "keyLength",
                &format!("at least {digits} characters, to number {} keys", self.key_count),
            )?;
        }
        if let Some(text) = properties.get("logFrequency") {
            text.parse::<u64>().map_err(|_| properties.invalid("logFrequency", "a whole number"))?;
        }
        Ok(())
    }
}

/// Every key must be one the class reads, or a `probe-` key naming one of its probes.
fn check_keys(properties: &Properties, class: MapTestClass) -> Result<(), SimulatorError> {
    for key in properties.keys() {
        if key == "class" || class.reads(key) {
            continue;
        }
        if let Some(probe) = key.strip_prefix("probe-") {
            if !MAP_TEST_PROBES.contains(&probe) {
                return Err(SimulatorError::Input(format!(
                    "{}: {key}: {} has no probe {probe:?} (its probes: {})",
                    properties.location(key),
                    class.name(),
                    MAP_TEST_PROBES.join(", ")
                )));
            }
            let kind = properties.get(key).unwrap_or("");
            if !PROBE_TYPES.contains(&kind) {
                return Err(properties.invalid(key, "latency or hdr"));
            }
            continue;
        }
        return Err(SimulatorError::Input(format!(
            "{}: unknown key {key:?} for {} (known: class, {}, probe-<{}>)",
            properties.location(key),
            class.name(),
            class.key_list(),
            MAP_TEST_PROBES.join("|")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEEDS_TEST: &str = "class=StringStringMapTest\nthreadCount=40\nkeyLocality=Random\nkeyLength=20\n\
        valueLength=100\nkeyCount=10000\nvalueCount=1000\nputProb=0.0\nbasename=map\nlogFrequency=100000\n\
        probe-getLatency=latency\nprobe-putLatency=latency\n";

    fn definition(text: &str) -> Result<TestDefinition, SimulatorError> {
        TestDefinition::from_properties(&Properties::parse("test.properties", text).unwrap())
    }

    #[test]
    fn reads_the_seeds_string_string_test() {
        let TestDefinition::Map(test) = definition(SEEDS_TEST).unwrap() else { panic!("a map test") };
        assert_eq!(
            test,
            MapTest {
                class: MapTestClass::StringStringMap,
                thread_count: 40,
                key_count: 10_000,
                key_length: 20,
                value_length: 100,
                value_count: 1_000,
                put_probability: 0.0,
                key_locality: "Random".into(),
                map_name: "map".into(),
            }
        );
    }

    #[test]
    fn int_byte_test_with_defaults() {
        let TestDefinition::Map(test) = definition("class=IntByteMapTest\nputProb=0.25\n").unwrap() else {
            panic!("a map test")
        };
        assert_eq!(test.class, MapTestClass::IntByteMap);
        assert_eq!((test.key_count, test.value_length, test.put_probability), (1_000, 100, 0.25));
        assert_eq!(test.map_name, "IntByteMapTest");
    }

    #[test]
    fn the_sample_files_parse() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../simulator");
        for file in ["string-string-map.properties", "int-byte-map.properties"] {
            let definition = TestDefinition::read(&root.join(file)).unwrap();
            assert!(matches!(definition, TestDefinition::Map(_)), "{file}");
        }
        let queue = TestDefinition::read(&root.join("queue.properties")).unwrap();
        assert!(matches!(queue, TestDefinition::Queue(_)) && queue.require_map_data("scaling").is_err());
        let topic = TestDefinition::read(&root.join("topic.properties")).unwrap();
        assert!(matches!(topic, TestDefinition::Topic(_)) && topic.require_map_data("tenants").is_err());
    }

    #[test]
    fn unknown_keys_are_named() {
        let error = definition("class=StringStringMapTest\nkeyCont=10\n").unwrap_err().to_string();
        assert!(error.contains("unknown key \"keyCont\"") && error.contains("test.properties:2"), "{error}");
        let error = definition("class=IntByteMapTest\nkeyLength=10\n").unwrap_err().to_string();
        assert!(error.contains("unknown key \"keyLength\" for IntByteMapTest"), "{error}");
        let error = definition("class=StringStringMapTest\nprobe-setLatency=latency\n").unwrap_err().to_string();
        assert!(error.contains("probe-setLatency"), "{error}");
        let error = definition("class=StringStringMapTest\nprobe-getLatency=throughput\n").unwrap_err().to_string();
        assert!(error.contains("probe-getLatency=throughput: expected latency or hdr"), "{error}");
    }

    #[test]
    fn bad_values_are_named() {
        for (text, needle) in [
            ("class=NoSuchTest\n", "unknown test class"),
            ("class=StringStringMapTest\nputProb=1.5\n", "putProb=1.5"),
            ("class=StringStringMapTest\nthreadCount=0\n", "threadCount=0"),
            ("class=StringStringMapTest\nkeyCount=100000\nkeyLength=3\n", "keyLength=3: expected at least 5"),
            ("class=StringStringMapTest\nkeyLocality=Local\n", "keyLocality=Local"),
            ("class=StringStringMapTest\nlogFrequency=often\n", "logFrequency=often"),
            ("threadCount=1\n", "neither a Simulator test"),
        ] {
            let error = definition(text).unwrap_err().to_string();
            assert!(error.contains(needle), "{text:?}: {error}");
        }
    }
}
