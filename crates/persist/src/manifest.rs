//! The member-wide manifest at `<base>/manifest`: what the partition files were written for.
//!
//! A member restarted with another partition count would map keys to other partitions than the
//! ones their records are in, so it is refused before any partition is read. The member's uuid
//! is kept so a restarted member comes back as the same member.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::PersistError;
use crate::frame::FORMAT_VERSION;
use crate::fsio;

/// The manifest's file name under the base directory.
pub const MANIFEST_NAME: &str = "manifest";

const MAGIC: [u8; 4] = *b"FGmf";

/// Bytes of the manifest: magic, version, partition count, uuid, checksum.
const MANIFEST_BYTES: usize = 28;

/// What a member's persisted data was written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Manifest {
    /// The partition count of the cluster the data belongs to.
    pub partition_count: u16,
    /// The member's uuid when the data was first written.
    pub member_uuid: [u8; 16],
}

impl Manifest {
    /// Reads the manifest under `base`, or, when there is none, writes one for
    /// `partition_count` and `member_uuid` (atomically: a crash leaves no manifest or a whole
    /// one). A stored partition count other than `partition_count` is refused with
    /// [`PersistError::PartitionCountMismatch`]. The uuid returned is the stored one: the
    /// `member_uuid` given is used only for a new manifest. Partition files without a manifest
    /// (it is written before any of them) are refused: what they were written for is unknown.
    pub fn open_or_create(base: &Path, partition_count: u16, member_uuid: [u8; 16]) -> Result<Manifest, PersistError> {
        assert!(partition_count > 0, "the configuration's partition count is validated as at least 1");
        fsio::create_dir(base)?;
        let path = base.join(MANIFEST_NAME);
        fsio::remove(&base.join(format!("{MANIFEST_NAME}{}", fsio::TEMP_SUFFIX)))?; // a crash's leftover
        if !path.exists() {
            refuse_orphan_partitions(base, &path)?;
            let manifest = Manifest { partition_count, member_uuid };
            fsio::write_atomically(base, MANIFEST_NAME, |writer| writer.put(&manifest.encode()))?;
            return Ok(manifest);
        }
        let stored = Manifest::read(&path)?;
        if stored.partition_count != partition_count {
            return Err(PersistError::PartitionCountMismatch {
                path,
                stored: stored.partition_count,
                configured: partition_count,
            });
        }
        Ok(stored)
    }

    fn encode(&self) -> [u8; MANIFEST_BYTES] {
        let mut bytes = [0u8; MANIFEST_BYTES];
        bytes[0..4].copy_from_slice(&MAGIC);
        bytes[4..6].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes[6..8].copy_from_slice(&self.partition_count.to_le_bytes());
        bytes[8..24].copy_from_slice(&self.member_uuid);
        let crc = crc32fast::hash(&bytes[0..24]);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// Reads and checks the manifest at `path`.
    fn read(path: &Path) -> Result<Manifest, PersistError> {
        let corrupt = |offset, reason: String| Err(PersistError::corrupt(PathBuf::from(path), offset, reason));
        let mut bytes = Vec::with_capacity(MANIFEST_BYTES + 1);
        let file = File::open(path).map_err(|error| PersistError::io("open", path, error))?;
        // One byte more than a manifest has, to tell a longer file from a whole one.
        file.take(MANIFEST_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| PersistError::io("read", path, error))?;
        if bytes.len() > MANIFEST_BYTES {
            return corrupt(0, format!("longer than a manifest ({MANIFEST_BYTES} bytes)"));
        }
        if bytes.len() < MANIFEST_BYTES {
            return corrupt(0, format!("{} bytes, shorter than a manifest ({MANIFEST_BYTES} bytes)", bytes.len()));
        }
        let word = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        if bytes[0..4] != MAGIC {
            return corrupt(0, "not a ferrogrid manifest (bad magic)".to_string());
        }
        if bytes[24..28] != crc32fast::hash(&bytes[0..24]).to_le_bytes() {
            return corrupt(24, "checksum mismatch".to_string());
        }
        if word(4) != FORMAT_VERSION {
            return corrupt(4, format!("format version {}, this build reads version {FORMAT_VERSION}", word(4)));
        }
        let member_uuid = bytes[8..24].try_into().expect("sixteen bytes");
        Ok(Manifest { partition_count: word(6), member_uuid })
    }
}

/// Fails when `base` holds a partition directory: the manifest `path` is missing beside
/// partition files only if someone removed it.
fn refuse_orphan_partitions(base: &Path, path: &Path) -> Result<(), PersistError> {
    let entries = std::fs::read_dir(base).map_err(|error| PersistError::io("list", base, error))?;
    for entry in entries {
        let name = entry.map_err(|error| PersistError::io("list", base, error))?.file_name();
        if name.to_string_lossy().starts_with("partition-") {
            return Err(PersistError::MissingManifest { path: path.to_path_buf() });
        }
    }
    Ok(())
}
