//! Storage for persistence, with no member logic: per partition replica, an append-only log of
//! the change records backups carry, with checksums, compacted by snapshots; and the member's
//! manifest. The member decides what the records and chunks mean; this crate only keeps them.
//!
//! - [`PartitionLog`]: one partition replica's snapshot and log; group commit per batch, synced
//!   as the [`FsyncPolicy`] says; recovery at open.
//! - [`Manifest`]: the partition count and member uuid the data was written for; another
//!   partition count is refused.
//! - [`Limits`]: the bounds of a log, checked by [`Limits::validate`].
//!
//! What survives what: a torn last write after `kill -9` or a power loss is detected and
//! dropped (never a panic); damage (a bad checksum with valid records after it, a bad header, a
//! snapshot without its trailer) fails the open with [`PersistError::Corrupt`] naming the file
//! and offset; a full disk fails writes with [`PersistError::DiskFull`], leaving the files as
//! they were before the failed write.
//!
//! # File formats
//!
//! All integers little-endian; checksums are CRC-32 (IEEE, as `crc32fast` computes it). Where
//! the files are is in [`layout`].
//!
//! Every log and snapshot file starts with a 20-byte header:
//!
//! ```text
//! offset 0  magic        4 bytes  "FGlg" (log) or "FGsn" (snapshot)
//! offset 4  version      u16      1
//! offset 6  partition id u16
//! offset 8  generation   u64      the same as in the file's name
//! offset 16 checksum     u32      CRC-32 of bytes 0..16
//! ```
//!
//! then frames, each `[u32 length][u32 CRC-32 of the body][body]`. A log's frames are its
//! records (length 1..=`max_record_bytes`). A snapshot's are its chunks
//! (0..=`max_record_bytes` bytes), then a trailer, which must end the file: the length slot holds
//! `0xFFFF_FFFF` (more than any record may be), the checksum is that of its 8-byte body, and the
//! body is the chunk count as a u64. A snapshot cut short anywhere lacks its trailer or has one
//! counting other than the chunks, so it is never mistaken for a whole one.
//!
//! The manifest is 28 bytes: magic `"FGmf"`, version u16 (1), partition count u16, the member
//! uuid (16 bytes), CRC-32 of bytes 0..24.
//!
//! Every file but an open log is written whole before it gets its name (temp file, sync,
//! rename, directory sync), so only a log can be torn, and only at its end.

mod blob;
mod error;
mod frame;
mod fsio;
pub mod layout;
mod limits;
mod log;
mod manifest;
mod recovery;

pub use blob::{load_blob, save_blob};
pub use error::PersistError;
pub use layout::partition_dir;
pub use limits::{FsyncPolicy, Limits, MAX_BATCH_BYTES, MAX_RECORD_BYTES, MIN_BATCH_BYTES};
pub use log::{PartitionLog, Recovered};
pub use manifest::{Manifest, MANIFEST_NAME};
