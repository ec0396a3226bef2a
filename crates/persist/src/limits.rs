//! The bounds of a partition log and when it waits for the disk.

use crate::error::PersistError;

const MEBIBYTE: u32 = 1024 * 1024;

/// Largest accepted `max_record_bytes`: recovery allocates a record's body before reading it,
/// so a length past this is refused rather than trusted; it also keeps every length below the
/// snapshot trailer's marker (`u32::MAX`).
pub const MAX_RECORD_BYTES: u32 = 1024 * MEBIBYTE;

/// Smallest accepted `max_batch_bytes`: a page. Smaller batches would only write partial pages
/// more often.
pub const MIN_BATCH_BYTES: u32 = 4096;

/// Largest accepted `max_batch_bytes`: one write of the batch buffer.
pub const MAX_BATCH_BYTES: u32 = 1024 * MEBIBYTE;

/// When a log's writes wait for the disk, as Redis' `appendfsync`. Applies to log records only:
/// headers and snapshots, which a crash must never leave half-visible, are always synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncPolicy {
    /// `flush` returns after fdatasync: an acknowledged write survives a power loss. The cost is
    /// one fdatasync per batch, not per record.
    Always,
    /// At most one fdatasync per second, done by `flush` or `tick` once a second has passed
    /// since the last and bytes were written since: a power loss loses at most about a second.
    EverySec,
    /// Never; the operating system writes back when it likes. A killed process loses nothing
    /// (the page cache survives it), a power loss loses what the OS had not written.
    No,
}

/// Bounds of one partition log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest record body (a log record or a snapshot chunk); a longer one is refused with
    /// [`PersistError::RecordTooLarge`], and a longer length read back from disk is damage.
    /// Default 64 MiB (a change record carries at most one client message, whose frames are at
    /// most 64 MiB by default), in `1..=MAX_RECORD_BYTES`.
    pub max_record_bytes: u32,
    /// Bytes a batch buffers before `append` writes it out on its own: what one group commit
    /// writes at most, and what the buffer keeps allocated between batches. A single record
    /// larger than this is a batch of its own. Default 1 MiB, in
    /// `MIN_BATCH_BYTES..=MAX_BATCH_BYTES`.
    pub max_batch_bytes: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_record_bytes: 64 * MEBIBYTE, max_batch_bytes: MEBIBYTE }
    }
}

impl Limits {
    /// Checks every bound is in its range, naming the first that is not.
    pub fn validate(&self) -> Result<(), PersistError> {
        if self.max_record_bytes == 0 || self.max_record_bytes > MAX_RECORD_BYTES {
            return Err(PersistError::InvalidLimits(format!(
                "max-record-bytes must be in 1..={MAX_RECORD_BYTES}, got {}",
                self.max_record_bytes
            )));
        }
        if !(MIN_BATCH_BYTES..=MAX_BATCH_BYTES).contains(&self.max_batch_bytes) {
            return Err(PersistError::InvalidLimits(format!(
                "max-batch-bytes must be in {MIN_BATCH_BYTES}..={MAX_BATCH_BYTES}, got {}",
                self.max_batch_bytes
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Limits::default().validate().unwrap();
    }

    #[test]
    fn zero_and_absurd_bounds_are_refused_by_name() {
        let cases = [
            (Limits { max_record_bytes: 0, ..Limits::default() }, "max-record-bytes"),
            (Limits { max_record_bytes: MAX_RECORD_BYTES + 1, ..Limits::default() }, "max-record-bytes"),
            (Limits { max_batch_bytes: 0, ..Limits::default() }, "max-batch-bytes"),
            (Limits { max_batch_bytes: MIN_BATCH_BYTES - 1, ..Limits::default() }, "max-batch-bytes"),
            (Limits { max_batch_bytes: MAX_BATCH_BYTES + 1, ..Limits::default() }, "max-batch-bytes"),
        ];
        for (limits, name) in cases {
            let message = limits.validate().unwrap_err().to_string();
            assert!(message.contains(name), "{message}");
        }
    }
}
