//! What every test file shares, whichever test it runs: the bounds on threads and value
//! lengths, and the check of a Simulator test file's keys. The modules of the tests
//! (`definition`'s map tests, `queue`, `topic`, `ycsb`) read their files with these.

use crate::error::SimulatorError;
use crate::properties::Properties;

/// Largest `valueLength` and `keyLength` (a value travels in one message).
pub const MAX_VALUE_LENGTH: u32 = 16 << 20;
/// Largest `threadCount`.
pub const MAX_THREADS: u32 = 10_000;
/// The values a `probe-<name>` key may take.
pub(crate) const PROBE_TYPES: [&str; 2] = ["latency", "hdr"];

/// Every key of a `class` test file must be `class`, one of `known`, or `probe-<name>` with
/// `<name>` one of `probes` and the value `latency` or `hdr`.
pub(crate) fn check_class_keys(
    properties: &Properties,
    class: &str,
    known: &[&str],
    probes: &[&str],
) -> Result<(), SimulatorError> {
    for key in properties.keys() {
        if key == "class" || known.contains(&key) {
            continue;
        }
        let Some(probe) = key.strip_prefix("probe-") else {
            return Err(SimulatorError::Input(format!(
                "{}: unknown key {key:?} for {class} (known: class, {}, probe-<{}>)",
                properties.location(key),
                known.join(", "),
                probes.join("|")
            )));
        };
        if !probes.contains(&probe) {
            return Err(SimulatorError::Input(format!(
                "{}: {key}: {class} has no probe {probe:?} (its probes: {})",
                properties.location(key),
                probes.join(", ")
            )));
        }
        if !PROBE_TYPES.contains(&properties.get(key).unwrap_or("")) {
            return Err(properties.invalid(key, "latency or hdr"));
        }
    }
    Ok(())
}
