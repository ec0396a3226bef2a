//! Every call into the file system, in one place: the open log file behind a small trait (so
//! tests can put a failing disk in its place), atomic creation of whole files, directory syncs
//! and removals. Every error is mapped here to a [`PersistError`] naming the path.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::PersistError;

/// Suffix of a file being written before it is renamed into place. Such a file is never part of
/// the persisted state: recovery removes it.
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// The log file a [`crate::PartitionLog`] appends to. Opened in append mode, so after
/// `set_len` the next write lands at the new end.
pub(crate) trait LogFile: fmt::Debug + Send {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// fdatasync: the data written so far (and the length) is on the device.
    fn sync_data(&mut self) -> io::Result<()>;
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

impl LogFile for File {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        Write::write_all(self, bytes)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
}

/// Opens the existing file at `path` for appending.
pub(crate) fn open_append(path: &Path) -> Result<File, PersistError> {
    OpenOptions::new().append(true).open(path).map_err(|error| PersistError::io("open for appending", path, error))
}

/// Makes the entries of `dir` (created, renamed, removed files) durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), PersistError> {
    File::open(dir).and_then(|handle| handle.sync_all()).map_err(|error| PersistError::io("sync directory", dir, error))
}

/// Creates `dir` and its parents if missing.
pub(crate) fn create_dir(dir: &Path) -> Result<(), PersistError> {
    fs::create_dir_all(dir).map_err(|error| PersistError::io("create directory", dir, error))
}

/// Removes the file at `path`; one already gone is not an error.
pub(crate) fn remove(path: &Path) -> Result<(), PersistError> {
    match fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(PersistError::io("remove", path, error)),
        _ => Ok(()),
    }
}

/// Cuts the file at `path` to `len` bytes and syncs it (recovery dropping a torn tail).
pub(crate) fn truncate(path: &Path, len: u64) -> Result<(), PersistError> {
    let file = OpenOptions::new().write(true).open(path).map_err(|error| PersistError::io("open", path, error))?;
    file.set_len(len).and_then(|()| file.sync_all()).map_err(|error| PersistError::io("truncate", path, error))
}

/// The file being written by [`write_atomically`], with its errors mapped to its path.
#[derive(Debug)]
pub(crate) struct TempWriter {
    writer: BufWriter<File>,
    path: PathBuf,
    len_bytes: u64,
}

impl TempWriter {
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), PersistError> {
        self.writer.write_all(bytes).map_err(|error| PersistError::io("write", &self.path, error))?;
        self.len_bytes += bytes.len() as u64;
        Ok(())
    }
}

/// Writes the file `dir/name` whole or not at all: `fill` writes a temp file beside it, which is
/// synced, renamed to `name` and the directory synced. A crash leaves either no file `name` (or
/// the one it had) or the complete new one; at worst a temp file, which recovery removes. On an
/// error the temp file is removed. Returns the file's length.
pub(crate) fn write_atomically(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut TempWriter) -> Result<(), PersistError>,
) -> Result<u64, PersistError> {
    let temp = dir.join(format!("{name}{TEMP_SUFFIX}"));
    let result = write_temp(&temp, fill).and_then(|len_bytes| {
        let target = dir.join(name);
        fs::rename(&temp, &target).map_err(|error| PersistError::io("rename into place", &target, error))?;
        sync_dir(dir)?;
        Ok(len_bytes)
    });
    if result.is_err() {
        let _ = fs::remove_file(&temp); // best effort: recovery removes temp files too
    }
    result
}

/// Creates `temp`, lets `fill` write it, and syncs it. Returns its length.
fn write_temp(
    temp: &Path,
    fill: impl FnOnce(&mut TempWriter) -> Result<(), PersistError>,
) -> Result<u64, PersistError> {
    let file = File::create(temp).map_err(|error| PersistError::io("create", temp, error))?;
    let mut writer = TempWriter { writer: BufWriter::new(file), path: temp.to_path_buf(), len_bytes: 0 };
    fill(&mut writer)?;
    let file = writer.writer.into_inner().map_err(|error| PersistError::io("write", temp, error.into_error()))?;
    file.sync_all().map_err(|error| PersistError::io("sync", temp, error))?;
    Ok(writer.len_bytes)
}
