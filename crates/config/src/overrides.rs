//! Configuration overrides from environment variables and system properties, by Hazelcast 5's
//! rules (`com.hazelcast.internal.config.override`: `EnvVariablesConfigParser`,
//! `SystemPropertiesConfigParser`, `ConfigOverrideValidator`, `ExternalConfigurationOverride`):
//!
//! - an environment variable `HZ_A_B_C` (except `HZ_HOME` and `HZ_LICENSE_KEY`) is the key
//!   `hazelcast.a.b.c`: `HZ_` becomes `hazelcast.`, each `_` a level, spaces are dropped and the
//!   whole is lower-cased (`HZ_MAP_ORDERS_BACKUPCOUNT` is `hazelcast.map.orders.backupcount`);
//! - a system property `hz.a.b-c` is the key `hazelcast.a.b-c`, spaces dropped, lower-cased;
//! - a level matches a key of the document that reads the same with its dashes removed
//!   (`backupcount` matches `backup-count`); a level that matches none is added, and the walker
//!   then matches it the same way (so a bad value is refused with the usual dotted path);
//! - two entries naming the same key (dashes aside), whether from the environment or system
//!   properties, are a conflict and refused, as Hazelcast refuses them;
//! - environment variables are applied first, then system properties.
//!
//! Unlike Hazelcast, which rebuilds the block an override lands in (its other settings falling
//! back to their defaults), an override here replaces one value and keeps its neighbours. A list's
//! items cannot be named (as in Hazelcast): `hazelcast.network.join.tcp-ip.members` takes a
//! comma-separated list. Only the `hazelcast` section can be overridden.

use std::collections::HashSet;

use serde_yaml::{Mapping, Value};

use crate::error::{invalid, ConfigError};

/// Environment variables Hazelcast never reads as overrides.
const EXCLUDED_VARIABLES: [&str; 2] = ["HZ_HOME", "HZ_LICENSE_KEY"];

/// Overrides collected from the environment and system properties, not yet applied.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    entries: Vec<Override>,
}

#[derive(Debug, Clone, PartialEq)]
struct Override {
    /// The levels below `hazelcast`, lower-case.
    levels: Vec<String>,
    value: String,
    source: String,
}

/// One override as applied, for the start-up log.
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedOverride {
    /// Dotted key as the override names it, such as `hazelcast.map.orders.backupcount`.
    pub key: String,
    /// Where it came from, such as `environment variable HZ_MAP_ORDERS_BACKUPCOUNT`.
    pub source: String,
    /// The value, or `****` under `security` and for a license key.
    pub shown_value: String,
}

impl Overrides {
    /// The overrides among `variables` (`HZ_*`) and `properties` (`hz.*`); other names are
    /// ignored. Refuses two entries that name the same key.
    pub fn new<V, P>(variables: V, properties: P) -> Result<Self, ConfigError>
    where
        V: IntoIterator<Item = (String, String)>,
        P: IntoIterator<Item = (String, String)>,
    {
        let mut entries = Vec::new();
        let mut variables: Vec<(String, String)> = variables.into_iter().collect();
        variables.sort();
        for (name, value) in variables {
            let Some(rest) = name.strip_prefix("HZ_") else { continue };
            if EXCLUDED_VARIABLES.contains(&name.replace(' ', "").as_str()) {
                continue;
            }
            let key = rest.replace('_', ".").replace(' ', "").to_lowercase();
            entries.push(Override::new(&key, value, format!("environment variable {name}")));
        }
        let mut properties: Vec<(String, String)> = properties.into_iter().collect();
        properties.sort();
        for (name, value) in properties {
            let Some(rest) = name.replace(' ', "").strip_prefix("hz.").map(str::to_lowercase) else { continue };
            entries.push(Override::new(&rest, value, format!("system property {name}")));
        }
        let mut seen = HashSet::new();
        for entry in &entries {
            if !seen.insert(entry.levels.join(".").replace('-', "")) {
                let key = format!("hazelcast.{}", entry.levels.join("."));
                let message = "set more than once by environment variables and system properties (Hazelcast refuses \
                               conflicting entries too)";
                return Err(invalid(key, message));
            }
        }
        Ok(Self { entries })
    }

    /// True when there is nothing to apply.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Applies every override onto `document` (a YAML tree) and returns what was applied and the
    /// paths of the keys it added (dashes removed), which the walker matches without dashes.
    pub(crate) fn apply(&self, document: &mut Value) -> Result<(Vec<AppliedOverride>, HashSet<String>), ConfigError> {
        let mut added = HashSet::new();
        let mut applied = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            entry.apply(document, &mut added)?;
            let key = format!("hazelcast.{}", entry.levels.join("."));
            let secret = entry.levels.first().is_some_and(|level| level == "security" || level == "licensekey");
            let shown_value = if secret { "****".to_owned() } else { entry.value.clone() };
            applied.push(AppliedOverride { key, source: entry.source.clone(), shown_value });
        }
        Ok((applied, added))
    }
}

impl Override {
    fn new(key: &str, value: String, source: String) -> Self {
        Self { levels: key.split('.').map(str::to_owned).collect(), value, source }
    }

    /// Sets this override's value in `document`, adding the levels it lacks.
    fn apply(&self, document: &mut Value, added: &mut HashSet<String>) -> Result<(), ConfigError> {
        let mut path = "hazelcast".to_owned();
        let mut node = level(document, "hazelcast", "", added)?;
        for name in &self.levels {
            if name.is_empty() {
                let message = format!("{} names an empty level", self.source);
                return Err(invalid(format!("hazelcast.{}", self.levels.join(".")), message));
            }
            let (child, key) = child(node, name, &path, added)?;
            path = format!("{path}.{key}");
            node = child;
        }
        *node = Value::String(self.value.clone());
        Ok(())
    }
}

/// The document's mapping under `name` (added if missing).
fn level<'a>(
    document: &'a mut Value,
    name: &str,
    path: &str,
    added: &mut HashSet<String>,
) -> Result<&'a mut Value, ConfigError> {
    Ok(child(document, name, path, added)?.0)
}

/// The value under the key of `node` that reads `name` without dashes, and that key; added when
/// missing. A scalar `node` becomes a mapping that keeps the scalar under its own name (as
/// `port: 5701` is `port: {port: 5701}`).
fn child<'a>(
    node: &'a mut Value,
    name: &str,
    path: &str,
    added: &mut HashSet<String>,
) -> Result<(&'a mut Value, String), ConfigError> {
    let own_name = path.rsplit('.').next().unwrap_or_default().to_owned();
    match node {
        Value::Mapping(_) => {}
        Value::Null => *node = Value::Mapping(Mapping::new()),
        Value::Sequence(_) => return Err(invalid(path, "an override cannot name an item of a list")),
        _ => {
            let kept = std::mem::take(&mut *node);
            let mut mapping = Mapping::new();
            mapping.insert(Value::String(own_name), kept);
            *node = Value::Mapping(mapping);
        }
    }
    let Value::Mapping(mapping) = node else { unreachable!("made a mapping above") };
    let existing = mapping.keys().find_map(|key| key.as_str().filter(|key| key.replace('-', "") == name));
    let key = match existing {
        Some(key) => key.to_owned(),
        None => {
            mapping.insert(Value::String(name.to_owned()), Value::Null);
            let added_path = if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") };
            added.insert(added_path.replace('-', ""));
            name.to_owned()
        }
    };
    let value = mapping.get_mut(key.as_str()).expect("present or just added");
    Ok((value, key))
}

#[cfg(test)]
mod tests;
