//! Small member-wide files written whole (the partition table a member's data was written
//! under): `magic "FGbl" | version u16 | length u32 | body | CRC-32 of everything before`,
//! written atomically (temp file, sync, rename, directory sync), so a crash leaves the old
//! file or the new one, and a damaged one is refused, never read as something else.

use std::path::{Path, PathBuf};

use crate::error::PersistError;
use crate::frame::FORMAT_VERSION;
use crate::fsio;

const MAGIC: [u8; 4] = *b"FGbl";
const HEADER_BYTES: usize = 10;

/// Replaces the file `name` under `dir` by one holding `body`.
pub fn save_blob(dir: &Path, name: &str, body: &[u8]) -> Result<(), PersistError> {
    let length = u32::try_from(body.len()).expect("a member-wide file is far below 4 GiB");
    let mut bytes = Vec::with_capacity(HEADER_BYTES + body.len() + 4);
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&length.to_le_bytes());
    bytes.extend_from_slice(body);
    let crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    fsio::write_atomically(dir, name, |writer| writer.put(&bytes))?;
    Ok(())
}

/// The body of the file `name` under `dir`, None when there is none; a damaged file is
/// [`PersistError::Corrupt`].
pub fn load_blob(dir: &Path, name: &str) -> Result<Option<Vec<u8>>, PersistError> {
    let path = dir.join(name);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(PersistError::io("read", &path, error)),
    };
    let corrupt = |offset: usize, reason: String| PersistError::corrupt(PathBuf::from(&path), offset as u64, reason);
    if bytes.len() < HEADER_BYTES + 4 || bytes[..4] != MAGIC {
        return Err(corrupt(0, "not a ferrogrid file (bad magic or too short)".into()));
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != FORMAT_VERSION {
        return Err(corrupt(4, format!("format version {version}, this build reads version {FORMAT_VERSION}")));
    }
    let length = u32::from_le_bytes(bytes[6..10].try_into().expect("four bytes")) as usize;
    if bytes.len() != HEADER_BYTES + length + 4 {
        return Err(corrupt(6, format!("{} bytes, its header says {}", bytes.len(), HEADER_BYTES + length + 4)));
    }
    let (content, crc) = bytes.split_at(HEADER_BYTES + length);
    if crc != crc32fast::hash(content).to_le_bytes() {
        return Err(corrupt(content.len(), "checksum mismatch".into()));
    }
    Ok(Some(content[HEADER_BYTES..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_reads_back_and_any_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_blob(dir.path(), "table").unwrap(), None);
        save_blob(dir.path(), "table", b"partition table bytes").unwrap();
        save_blob(dir.path(), "table", b"a newer table").unwrap();
        assert_eq!(load_blob(dir.path(), "table").unwrap().unwrap(), b"a newer table");
        let path = dir.path().join("table");
        let good = std::fs::read(&path).unwrap();
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            std::fs::write(&path, &bad).unwrap();
            let error = load_blob(dir.path(), "table").unwrap_err();
            assert!(matches!(error, PersistError::Corrupt { .. }), "byte {at}: {error}");
        }
        for cut in 0..good.len() {
            std::fs::write(&path, &good[..cut]).unwrap();
            assert!(load_blob(dir.path(), "table").is_err(), "cut at {cut}");
        }
    }
}
