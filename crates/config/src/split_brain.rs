//! Split-brain protection, as Hazelcast configures it: named rules under
//! `hazelcast.split-brain-protection.<name>` (`enabled`, `minimum-cluster-size`, `protect-on`,
//! and the function: member count by default, `recently-active-split-brain-protection` or
//! `probabilistic-split-brain-protection`), attached to a structure by its
//! `split-brain-protection-ref`. An operation on an object whose rule is not met (fewer members
//! than the minimum in this member's view) fails with `SplitBrainProtectionException`.

use std::collections::BTreeMap;

use crate::error::{invalid, ConfigError};
use crate::map::NamedConfigs;

/// The most rules a configuration may define.
pub const MAX_SPLIT_BRAIN_PROTECTIONS: usize = 1024;

/// The largest `minimum-cluster-size` accepted.
pub const MAX_MINIMUM_CLUSTER_SIZE: u32 = 10_000;

/// Which operations a rule guards. `protect-on`, default `READ_WRITE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectOn {
    Read,
    Write,
    ReadWrite,
}

impl ProtectOn {
    /// Whether an operation that writes (`write`) or only reads is guarded.
    pub fn guards(self, write: bool) -> bool {
        match self {
            ProtectOn::Read => !write,
            ProtectOn::Write => write,
            ProtectOn::ReadWrite => true,
        }
    }
}

/// How a rule counts the members present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectionFunction {
    /// Every member of this member's member list (Hazelcast's default function).
    MemberCount,
    /// Members heard from (a heartbeat or any message) within the tolerance; this member always
    /// counts. `recently-active-split-brain-protection.heartbeat-tolerance-millis`, default
    /// 5 000. Hazelcast's `probabilistic-split-brain-protection` is read as this function with
    /// its `acceptable-heartbeat-pause-millis` (default 60 000) as the tolerance: a member
    /// silent for longer than that is the one the phi-accrual detector would suspect.
    RecentlyActive { heartbeat_tolerance_ms: u64 },
}

/// One named rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitBrainProtectionConfig {
    /// `enabled`, default false (as Hazelcast): a disabled rule guards nothing.
    pub enabled: bool,
    /// `minimum-cluster-size`: at least 2 (Hazelcast refuses less), at most
    /// [`MAX_MINIMUM_CLUSTER_SIZE`].
    pub minimum_cluster_size: u32,
    pub protect_on: ProtectOn,
    pub function: ProtectionFunction,
}

impl SplitBrainProtectionConfig {
    pub const DEFAULT: SplitBrainProtectionConfig = SplitBrainProtectionConfig {
        enabled: false,
        minimum_cluster_size: 2,
        protect_on: ProtectOn::ReadWrite,
        function: ProtectionFunction::MemberCount,
    };
}

/// The structures a rule may be attached to, by their section of the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProtectedStructure {
    Map,
    MultiMap,
    Queue,
    List,
    Set,
    ReplicatedMap,
    Ringbuffer,
    CardinalityEstimator,
    PnCounter,
    /// JCache caches (no `cache` section is read yet: none is guarded).
    Cache,
}

impl ProtectedStructure {
    /// The structure's section under `hazelcast`.
    pub fn section(self) -> &'static str {
        match self {
            ProtectedStructure::Map => "map",
            ProtectedStructure::MultiMap => "multimap",
            ProtectedStructure::Queue => "queue",
            ProtectedStructure::List => "list",
            ProtectedStructure::Set => "set",
            ProtectedStructure::ReplicatedMap => "replicatedmap",
            ProtectedStructure::Ringbuffer => "ringbuffer",
            ProtectedStructure::CardinalityEstimator => "cardinality-estimator",
            ProtectedStructure::PnCounter => "pn-counter",
            ProtectedStructure::Cache => "cache",
        }
    }
}

/// Every rule, and each structure entry's `split-brain-protection-ref` (None for an entry
/// without one: it still decides which entry an object's name resolves to).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitBrainProtections {
    rules: BTreeMap<String, SplitBrainProtectionConfig>,
    refs: BTreeMap<ProtectedStructure, NamedConfigs<Option<String>>>,
}

impl SplitBrainProtections {
    /// Adds or replaces the rule `name`.
    pub fn insert(&mut self, name: impl Into<String>, rule: SplitBrainProtectionConfig) {
        self.rules.insert(name.into(), rule);
    }

    /// Notes the configured entry `name_or_pattern` of `structure` and its reference.
    pub fn refer(&mut self, structure: ProtectedStructure, name_or_pattern: impl Into<String>, rule: Option<String>) {
        self.refs.entry(structure).or_default().insert(name_or_pattern, rule);
    }

    /// Whether any enabled rule is attached to anything: when not, no operation is checked.
    pub fn is_active(&self) -> bool {
        let enabled = |name: &String| self.rules.get(name).is_some_and(|rule| rule.enabled);
        self.refs.values().any(|refs| refs.iter().any(|(_, rule)| rule.as_ref().is_some_and(enabled)))
    }

    /// The enabled rule guarding the object `name` of `structure`, with its name: the
    /// reference of the entry the name resolves to (Hazelcast's rules: exact, pattern, default).
    pub fn for_object(&self, structure: ProtectedStructure, name: &str) -> Option<(&str, &SplitBrainProtectionConfig)> {
        let reference = self.refs.get(&structure)?.resolve(name, &None).as_deref()?;
        let (name, rule) = self.rules.get_key_value(reference)?;
        rule.enabled.then_some((name.as_str(), rule))
    }

    /// The rules' bounds, and that every reference names a rule.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rules.len() > MAX_SPLIT_BRAIN_PROTECTIONS {
            let expected = format!("at most {MAX_SPLIT_BRAIN_PROTECTIONS} rules, got {}", self.rules.len());
            return Err(invalid("hazelcast.split-brain-protection", expected));
        }
        for (name, rule) in &self.rules {
            let size = rule.minimum_cluster_size;
            if !(2..=MAX_MINIMUM_CLUSTER_SIZE).contains(&size) {
                let key = format!("hazelcast.split-brain-protection.{name}.minimum-cluster-size");
                return Err(invalid(&key, format!("expected 2..={MAX_MINIMUM_CLUSTER_SIZE}, got {size}")));
            }
        }
        for (structure, refs) in &self.refs {
            for (entry, reference) in refs.iter() {
                let Some(reference) = reference else { continue };
                if !self.rules.contains_key(reference) {
                    let key = format!("hazelcast.{}.{entry}.split-brain-protection-ref", structure.section());
                    let expected = format!("the name of a split-brain-protection rule, got {reference:?}");
                    return Err(invalid(&key, expected));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemberConfig;

    const DOCUMENT: &str = "hazelcast:
  split-brain-protection:
    two:
      enabled: true
      minimum-cluster-size: 2
      protect-on: WRITE
    three-active:
      enabled: true
      minimum-cluster-size: 3
      recently-active-split-brain-protection:
        heartbeat-tolerance-millis: 2500
    off:
      minimum-cluster-size: 5
  map:
    guarded-*:
      split-brain-protection-ref: two
    guarded-but-not:
      backup-count: 1
    off-map:
      split-brain-protection-ref: off
  queue:
    default:
      split-brain-protection-ref: three-active
";

    #[test]
    fn rules_are_read_and_resolved_by_the_structure_entry_of_the_name() {
        let loaded = MemberConfig::from_yaml_str(DOCUMENT).unwrap();
        assert_eq!(loaded.unsupported_keys, Vec::<String>::new());
        let protections = &loaded.config.split_brain_protections;
        assert!(protections.is_active());
        let (name, rule) = protections.for_object(ProtectedStructure::Map, "guarded-orders").unwrap();
        assert_eq!((name, rule.minimum_cluster_size, rule.protect_on), ("two", 2, ProtectOn::Write));
        assert!(rule.protect_on.guards(true) && !rule.protect_on.guards(false));
        assert_eq!(protections.for_object(ProtectedStructure::Map, "guarded-but-not"), None, "the exact entry wins");
        assert_eq!(protections.for_object(ProtectedStructure::Map, "off-map"), None, "a disabled rule");
        assert_eq!(protections.for_object(ProtectedStructure::Map, "other"), None);
        let (_, queue) = protections.for_object(ProtectedStructure::Queue, "any-queue").unwrap();
        assert_eq!(queue.function, ProtectionFunction::RecentlyActive { heartbeat_tolerance_ms: 2500 });
        assert_eq!(queue.protect_on, ProtectOn::ReadWrite);
        assert_eq!(protections.for_object(ProtectedStructure::List, "any"), None);
        assert!(!MemberConfig::default().split_brain_protections.is_active());
    }

    #[test]
    fn a_bad_rule_or_reference_fails_with_its_key() {
        let dangling = "hazelcast:\n  map:\n    m:\n      split-brain-protection-ref: nowhere\n";
        let error = MemberConfig::from_yaml_str(dangling).unwrap_err().to_string();
        assert!(error.contains("hazelcast.map.m.split-brain-protection-ref") && error.contains("nowhere"), "{error}");
        let small =
            "hazelcast:\n  split-brain-protection:\n    one:\n      enabled: true\n      minimum-cluster-size: 1\n";
        let error = MemberConfig::from_yaml_str(small).unwrap_err().to_string();
        assert!(error.contains("hazelcast.split-brain-protection.one.minimum-cluster-size"), "{error}");
        let protect = "hazelcast:\n  split-brain-protection:\n    p:\n      protect-on: SOMETIMES\n";
        let error = MemberConfig::from_yaml_str(protect).unwrap_err().to_string();
        assert!(error.contains("hazelcast.split-brain-protection.p.protect-on"), "{error}");
    }

    #[test]
    fn the_xml_form_reads_the_same() {
        let xml = r#"<hazelcast>
  <split-brain-protection name="two" enabled="true">
    <minimum-cluster-size>2</minimum-cluster-size>
    <protect-on>WRITE</protect-on>
  </split-brain-protection>
  <split-brain-protection name="three-active" enabled="true">
    <minimum-cluster-size>3</minimum-cluster-size>
    <recently-active-split-brain-protection heartbeat-tolerance-millis="2500"/>
  </split-brain-protection>
  <split-brain-protection name="off">
    <minimum-cluster-size>5</minimum-cluster-size>
  </split-brain-protection>
  <map name="guarded-*"><split-brain-protection-ref>two</split-brain-protection-ref></map>
  <map name="guarded-but-not"><backup-count>1</backup-count></map>
  <map name="off-map"><split-brain-protection-ref>off</split-brain-protection-ref></map>
  <queue name="default"><split-brain-protection-ref>three-active</split-brain-protection-ref></queue>
</hazelcast>"#;
        let from_xml = MemberConfig::from_xml_str(xml).unwrap();
        assert_eq!(from_xml.unsupported_keys, Vec::<String>::new());
        let from_yaml = MemberConfig::from_yaml_str(DOCUMENT).unwrap();
        assert_eq!(from_xml.config.split_brain_protections, from_yaml.config.split_brain_protections);
    }
}
