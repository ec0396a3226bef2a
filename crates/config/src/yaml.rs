//! Reads a Hazelcast-shaped YAML document into a [`MemberConfig`]; an XML document is first
//! translated into the same tree (`xml.rs`), and overrides are applied onto the tree
//! (`overrides.rs`), so this one walker reads every source.
//!
//! The document is walked by hand rather than deserialised so that every key is accounted for:
//! each mapping is read through a [`Section`], which hands out the keys ferrogrid knows (a bad
//! value is a [`ConfigError::InvalidValue`] naming its dotted path) and, when dropped, records
//! every key nobody asked for as unsupported, without looking beneath it. No section can forget
//! to report. To support a new key, read it from the section that holds it.
//!
//! As in Hazelcast, where every value is text, integers and booleans may also be written as strings.

mod settings;
mod structures;
mod values;

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use serde_yaml::Value;

use crate::error::ConfigError;
use crate::{LoadedConfig, MemberConfig};

use settings::{
    fsync_policy, read_advanced_network, read_limits, read_network, read_persistence, read_properties, read_security,
    read_tenant,
};
use structures::read_structures;
use values::{boolean, describe, expected, optional_text, placement, text, unsigned};

type Result<T> = std::result::Result<T, ConfigError>;

/// Parses `text` as YAML into the tree [`read`] walks.
pub(crate) fn parse(text: &str) -> Result<Value> {
    Ok(serde_yaml::from_str(text)?)
}

/// Reads `document` into a configuration that has not yet been validated. `lenient` holds the
/// dotted paths (dashes removed) of keys an override added: each matches a key of the walker that reads the same
/// with its dashes removed (`backupcount` is `backup-count`), as Hazelcast matches overrides.
pub(crate) fn read(document: &Value, lenient: HashSet<String>) -> Result<LoadedConfig> {
    read_walk(document, Rc::new(Walk { unsupported: RefCell::new(Vec::new()), lenient, asked: RefCell::default() }))
}

/// Reads `document` with `walk`, which the caller may inspect afterwards.
fn read_walk(document: &Value, walk: Rc<Walk>) -> Result<LoadedConfig> {
    let mut config = MemberConfig::default();
    {
        let mut root = Section::new(document, String::new(), &walk)?;
        if let Some(hazelcast) = root.section("hazelcast")? {
            read_hazelcast(hazelcast, &mut config)?;
        }
        if let Some(mut ferrogrid) = root.section("ferrogrid")? {
            ferrogrid.set("reactor-threads", &mut config.reactor_threads, unsigned)?;
            ferrogrid.set("reactor-spin-micros", &mut config.reactor_spin_micros, unsigned)?;
            if let Some(limits) = ferrogrid.section("limits")? {
                read_limits(limits, &mut config)?;
            }
            if let Some(mut metrics) = ferrogrid.section("metrics")? {
                let config = &mut config.metrics;
                // `file: ''` (or an empty `<file/>`) turns the file off.
                if let Some(file) = metrics.read("file", optional_text)? {
                    config.file = (!file.is_empty()).then(|| file.into());
                }
                metrics.set("max-file-bytes", &mut config.max_file_bytes, unsigned)?;
                metrics.set("http-enabled", &mut config.http_enabled, boolean)?;
                metrics.set("http-port", &mut config.http_port, unsigned)?;
            }
            if let Some(mut io) = ferrogrid.section("io")? {
                io.set("initial-placement", &mut config.io.initial_placement, placement)?;
                if let Some(mut packing) = io.section("packing")? {
                    let config = &mut config.io.packing;
                    packing.set("period-millis", &mut config.period_millis, unsigned)?;
                    packing.set("saturated-percent", &mut config.saturated_percent, unsigned)?;
                    packing.set("spare-cores-percent", &mut config.spare_cores_percent, unsigned)?;
                    packing.set("shrink-below-percent", &mut config.shrink_below_percent, unsigned)?;
                }
            }
            if let Some(mut persistence) = ferrogrid.section("persistence")? {
                persistence.set("fsync-policy", &mut config.persistence.fsync_policy, fsync_policy)?;
                persistence.set("compact-log-bytes", &mut config.persistence.compact_log_bytes, unsigned)?;
            }
            ferrogrid.set("fair-scheduling", &mut config.tenants.fair_scheduling, boolean)?;
            for mut section in ferrogrid.list("tenants")? {
                config.tenants.tenants.push(read_tenant(&mut section)?);
            }
        }
    }
    let mut unsupported_keys = walk.unsupported.take();
    unsupported_keys.sort();
    Ok(LoadedConfig { config, unsupported_keys, overrides: Vec::new() })
}

/// What every section of one walk shares.
struct Walk {
    /// Paths of the keys nobody read.
    unsupported: RefCell<Vec<String>>,
    /// Paths of the keys overrides added, matched without their dashes.
    lenient: HashSet<String>,
    /// Every path a section was asked for, present or not: the keys the walker accepts.
    asked: RefCell<std::collections::BTreeSet<String>>,
}

/// One YAML mapping being read. On drop, its keys not read are added to `walk.unsupported`.
struct Section<'a> {
    path: String,
    /// Key, value, and whether the key has been read.
    entries: Vec<(String, &'a Value, bool)>,
    walk: Rc<Walk>,
}

impl<'a> Section<'a> {
    /// The mapping `value` found at `path`; an empty value (`null`) is an empty mapping.
    fn new(value: &'a Value, path: String, walk: &Rc<Walk>) -> Result<Self> {
        let key = if path.is_empty() { "(document)" } else { &path };
        let mut entries = Vec::new();
        match value {
            Value::Null => {}
            Value::Mapping(mapping) => {
                for (name, value) in mapping {
                    let name = match name {
                        Value::String(name) => name.clone(),
                        Value::Number(_) | Value::Bool(_) => describe(name),
                        other => return Err(expected(key, "text keys", other)),
                    };
                    entries.push((name, value, false));
                }
            }
            other => return Err(expected(key, "a mapping", other)),
        }
        Ok(Self { path, entries, walk: Rc::clone(walk) })
    }

    fn child_path(&self, key: &str) -> String {
        match self.path.as_str() {
            "" => key.to_owned(),
            path => format!("{path}.{key}"),
        }
    }

    /// Marks `key` as read and returns its dotted path and value, if present. A key an
    /// override added matches `key` without its dashes.
    fn take(&mut self, key: &str) -> Option<(String, &'a Value)> {
        self.walk.asked.borrow_mut().insert(self.child_path(key));
        let index = match self.entries.iter().position(|(name, _, _)| name == key) {
            Some(index) => index,
            None => {
                let undashed = key.replace('-', "");
                let lenient = |name: &String| self.walk.lenient.contains(&self.child_path(name).replace('-', ""));
                let added = |name: &String| *name == undashed && lenient(name);
                self.entries.iter().position(|(name, _, read)| !read && added(name))?
            }
        };
        let entry = &mut self.entries[index];
        entry.2 = true;
        let value = entry.1;
        Some((self.child_path(key), value))
    }

    /// Parses `key`, if present.
    fn read<T>(&mut self, key: &str, parse: Parser<T>) -> Result<Option<T>> {
        let entry = self.take(key);
        entry.map(|(path, value)| parse(value, &path)).transpose()
    }

    /// Parses `key`, if present, into `field`.
    fn set<T>(&mut self, key: &str, field: &mut T, parse: Parser<T>) -> Result<()> {
        if let Some(value) = self.read(key, parse)? {
            *field = value;
        }
        Ok(())
    }

    /// The mapping under `key`, if present.
    fn section(&mut self, key: &str) -> Result<Option<Section<'a>>> {
        let entry = self.take(key);
        entry.map(|(path, value)| Section::new(value, path, &self.walk)).transpose()
    }

    /// Marks every key as read and returns each with the section under it.
    fn sections(&mut self) -> Result<Vec<(String, Section<'a>)>> {
        let names: Vec<String> = self.entries.iter().map(|entry| entry.0.clone()).collect();
        let mut sections = Vec::with_capacity(names.len());
        for name in names {
            let section = self.section(&name)?.expect("the name was just listed");
            sections.push((name, section));
        }
        Ok(sections)
    }

    /// The sections of the list under `key`, if present, with paths like `realms[0]`.
    fn list(&mut self, key: &str) -> Result<Vec<Section<'a>>> {
        let Some((path, value)) = self.take(key) else {
            return Ok(Vec::new());
        };
        let items = match value {
            Value::Null => &[][..],
            Value::Sequence(items) => items,
            other => return Err(expected(&path, "a list", other)),
        };
        let item_path = |index| format!("{path}[{index}]");
        let items = items.iter().enumerate();
        items.map(|(index, item)| Section::new(item, item_path(index), &self.walk)).collect()
    }
}

impl Drop for Section<'_> {
    fn drop(&mut self) {
        let unread = self.entries.iter().filter(|(_, _, read)| !read);
        let paths: Vec<String> = unread.map(|(name, _, _)| self.child_path(name)).collect();
        self.walk.unsupported.borrow_mut().extend(paths);
    }
}

/// Turns the value at a dotted path into a setting.
type Parser<T> = fn(&Value, &str) -> Result<T>;

fn read_hazelcast(mut hazelcast: Section, config: &mut MemberConfig) -> Result<()> {
    hazelcast.set("cluster-name", &mut config.cluster_name, text)?;
    let network = hazelcast.section("network")?;
    let network_present = network.is_some();
    if let Some(network) = network {
        read_network(network, &mut config.network)?;
    }
    if let Some(advanced) = hazelcast.section("advanced-network")? {
        let http_port = &mut config.metrics.http_port;
        read_advanced_network(advanced, &mut config.network, http_port, network_present)?;
    }
    if let Some(mut lite_member) = hazelcast.section("lite-member")? {
        lite_member.set("enabled", &mut config.lite_member, boolean)?;
    }
    read_structures(&mut hazelcast, config)?;
    if let Some(properties) = hazelcast.section("properties")? {
        read_properties(properties, config)?;
    }
    if let Some(security) = hazelcast.section("security")? {
        read_security(security, &mut config.security)?;
    }
    if let Some(persistence) = hazelcast.section("persistence")? {
        read_persistence(persistence, &mut config.persistence)?;
    }
    if let Some(mut metrics) = hazelcast.section("metrics")? {
        metrics.set("enabled", &mut config.metrics.enabled, boolean)?;
        let frequency = &mut config.metrics.collection_frequency_seconds;
        metrics.set("collection-frequency-seconds", frequency, unsigned)?;
    }
    Ok(())
}

/// Every key the walker asks for while reading `document`, with the paths it reads them at.
#[cfg(test)]
pub(crate) fn accepted_keys(document: &Value) -> std::collections::BTreeSet<String> {
    let walk = Rc::new(Walk { unsupported: RefCell::default(), lenient: HashSet::new(), asked: RefCell::default() });
    read_walk(document, Rc::clone(&walk)).expect("the document reads");
    walk.asked.take()
}

#[cfg(test)]
pub(crate) mod tests;
