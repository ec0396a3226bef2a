//! Errors of the storage layer. Each names the file it concerns and what went wrong, so the
//! member can print it as it is and an operator knows which file to look at.

use std::io;
use std::path::PathBuf;

/// Why a persistence operation failed.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// The device has no space left (ENOSPC). Nothing half-written stays behind: the file was
    /// cut back to its last good length, reads of what is in memory go on, and a later write
    /// succeeds once space is freed.
    #[error("disk full writing {}: {source}", path.display())]
    DiskFull {
        /// The file being written.
        path: PathBuf,
        /// What the operating system reported.
        source: io::Error,
    },
    /// Any other failure of the operating system.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done, as a verb phrase ("write", "rename into place").
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// What the operating system reported.
        source: io::Error,
    },
    /// A file's content cannot be what this crate wrote: a bad header, a record with a bad
    /// checksum followed by a valid one, a snapshot without its trailer. Recovery never guesses
    /// past such damage; the member refuses to start.
    #[error("corrupt {} at offset {offset}: {reason}", path.display())]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// Byte offset of the first damaged structure.
        offset: u64,
        /// What is wrong there.
        reason: String,
    },
    /// The data on disk was written for another partition count; its partitions would map keys
    /// to the wrong places.
    #[error("{}: persisted with {stored} partitions, configured {configured}: refusing to start", path.display())]
    PartitionCountMismatch {
        /// The manifest.
        path: PathBuf,
        /// The partition count recorded in the manifest.
        stored: u16,
        /// The partition count of the configuration.
        configured: u16,
    },
    /// Partition files are there but the manifest, written before any of them, is not: what
    /// they were written for is unknown.
    #[error("{} is missing beside partition files: refusing to start", path.display())]
    MissingManifest {
        /// Where the manifest should be.
        path: PathBuf,
    },
    /// A record or snapshot chunk is larger than the configured `max_record_bytes`.
    #[error("record of {len_bytes} bytes is larger than max-record-bytes ({max_bytes})")]
    RecordTooLarge {
        /// The record's length.
        len_bytes: usize,
        /// The configured bound.
        max_bytes: u32,
    },
    /// A log record must carry at least one byte: a zeroed region (what a crash may leave past
    /// the last write) would otherwise read as a run of valid empty records.
    #[error("a log record must not be empty")]
    EmptyRecord,
    /// A bound of [`crate::Limits`] is out of its accepted range.
    #[error("invalid persistence limit: {0}")]
    InvalidLimits(String),
}

/// ENOSPC on Linux and the BSDs: the raw code, because `io::ErrorKind::StorageFull` is newer than
/// the workspace's minimum Rust version.
const ENOSPC: i32 = 28;

impl PersistError {
    /// The error for `source` from `action` on `path`: [`PersistError::DiskFull`] when the device
    /// is full, [`PersistError::Io`] otherwise.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> PersistError {
        let path = path.into();
        if source.raw_os_error() == Some(ENOSPC) {
            PersistError::DiskFull { path, source }
        } else {
            PersistError::Io { action, path, source }
        }
    }

    /// A [`PersistError::Corrupt`] for `path` at `offset`.
    pub(crate) fn corrupt(path: impl Into<PathBuf>, offset: u64, reason: impl Into<String>) -> PersistError {
        PersistError::Corrupt { path: path.into(), offset, reason: reason.into() }
    }

    /// Whether this is [`PersistError::DiskFull`].
    pub fn is_disk_full(&self) -> bool {
        matches!(self, PersistError::DiskFull { .. })
    }
}
