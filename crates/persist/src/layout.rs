//! Where a member's files live and what their names say.
//!
//! ```text
//! <base>/manifest                                  partition count and member uuid
//! <base>/partition-<id>/snapshot-<generation>.snap the state as of that generation (none for 0)
//! <base>/partition-<id>/log-<generation>.log       records written after that snapshot
//! <base>/partition-<id>/<name>.tmp                 a file being written; never part of the state
//! ```
//!
//! Generations are zero-padded to 20 digits so names sort as numbers. Files of other names in a
//! partition's directory are left alone.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::PersistError;
use crate::fsio::TEMP_SUFFIX;

/// The directory of partition `partition_id`'s files under `base`.
pub fn partition_dir(base: &Path, partition_id: u16) -> PathBuf {
    base.join(format!("partition-{partition_id}"))
}

pub(crate) fn snapshot_name(generation: u64) -> String {
    format!("snapshot-{generation:020}.snap")
}

pub(crate) fn log_name(generation: u64) -> String {
    format!("log-{generation:020}.log")
}

/// The generation in `name` if it is `<prefix><20 digits><suffix>`.
fn generation_of(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    let digits = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    if digits.len() == 20 && digits.bytes().all(|byte| byte.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}

/// The files of one partition's directory, by kind.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Generations with a snapshot file, ascending.
    pub(crate) snapshots: Vec<u64>,
    /// Generations with a log file, ascending.
    pub(crate) logs: Vec<u64>,
    /// Temp files left by an interrupted write.
    pub(crate) temps: Vec<PathBuf>,
}

/// Lists the snapshot, log and temp files in `dir`.
pub(crate) fn list(dir: &Path) -> Result<Listing, PersistError> {
    let mut listing = Listing::default();
    let entries = fs::read_dir(dir).map_err(|error| PersistError::io("list", dir, error))?;
    for entry in entries {
        let entry = entry.map_err(|error| PersistError::io("list", dir, error))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        let (stem, temp) = match name.strip_suffix(TEMP_SUFFIX) {
            Some(stem) => (stem, true),
            None => (name.as_str(), false),
        };
        let snapshot = generation_of(stem, "snapshot-", ".snap");
        let log = generation_of(stem, "log-", ".log");
        match (temp, snapshot, log) {
            (true, Some(_), _) | (true, _, Some(_)) => listing.temps.push(entry.path()),
            (false, Some(generation), _) => listing.snapshots.push(generation),
            (false, _, Some(generation)) => listing.logs.push(generation),
            _ => {}
        }
    }
    listing.snapshots.sort_unstable();
    listing.logs.sort_unstable();
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_to_their_generation() {
        for generation in [0, 1, 42, u64::MAX] {
            assert_eq!(generation_of(&snapshot_name(generation), "snapshot-", ".snap"), Some(generation));
            assert_eq!(generation_of(&log_name(generation), "log-", ".log"), Some(generation));
        }
        assert_eq!(generation_of("log-1.log", "log-", ".log"), None);
        assert_eq!(generation_of("log-0000000000000000000x.log", "log-", ".log"), None);
    }
}
