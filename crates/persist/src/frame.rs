//! The bytes of log and snapshot files: the file header, record frames and the snapshot
//! trailer (laid out in the crate's doc), and a reader that walks a file frame by frame.
//!
//! The reader only classifies what it finds (a valid record, a bad checksum, the trailer,
//! bytes that cannot be a frame, the end); deciding which of those is a torn tail and which is
//! damage is recovery's job, as the rules differ between logs and snapshots.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::PersistError;

/// Version of the layout below; a file of another version is refused, not guessed at.
pub(crate) const FORMAT_VERSION: u16 = 1;

/// Bytes of a file header: magic, version, partition id, generation, checksum.
pub(crate) const FILE_HEADER_BYTES: u64 = 20;

/// Bytes before a record's body: its length and its checksum.
pub(crate) const FRAME_HEADER_BYTES: usize = 8;

/// The length slot of a snapshot's trailer: larger than any record may be
/// ([`crate::limits::MAX_RECORD_BYTES`]), so it cannot be mistaken for a chunk.
pub(crate) const TRAILER_MARK: u32 = u32::MAX;

/// Bytes of a trailer's body: the chunk count.
const TRAILER_BODY_BYTES: u32 = 8;

/// Which file a header starts: each kind has its own magic so one is never read as another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Log,
    Snapshot,
}

impl FileKind {
    fn magic(self) -> [u8; 4] {
        match self {
            FileKind::Log => *b"FGlg",
            FileKind::Snapshot => *b"FGsn",
        }
    }

    fn name(self) -> &'static str {
        match self {
            FileKind::Log => "log",
            FileKind::Snapshot => "snapshot",
        }
    }
}

/// The header of a file of `kind` for `partition_id` and `generation`.
pub(crate) fn encode_header(kind: FileKind, partition_id: u16, generation: u64) -> [u8; FILE_HEADER_BYTES as usize] {
    let mut header = [0u8; FILE_HEADER_BYTES as usize];
    header[0..4].copy_from_slice(&kind.magic());
    header[4..6].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[6..8].copy_from_slice(&partition_id.to_le_bytes());
    header[8..16].copy_from_slice(&generation.to_le_bytes());
    let crc = crc32fast::hash(&header[0..16]);
    header[16..20].copy_from_slice(&crc.to_le_bytes());
    header
}

/// Checks `header` (read from `path`) is the header [`encode_header`] writes for these values,
/// naming the first field that differs and its offset.
fn check_header(
    header: &[u8; FILE_HEADER_BYTES as usize],
    path: &Path,
    kind: FileKind,
    partition_id: u16,
    generation: u64,
) -> Result<(), PersistError> {
    let field = |range: std::ops::Range<usize>| -> u64 {
        let mut bytes = [0u8; 8];
        bytes[..range.len()].copy_from_slice(&header[range]);
        u64::from_le_bytes(bytes)
    };
    let fail = |offset, reason: String| Err(PersistError::corrupt(path, offset, reason));
    if header[0..4] != kind.magic() {
        return fail(0, format!("not a ferrogrid {} file (bad magic)", kind.name()));
    }
    if field(16..20) != u64::from(crc32fast::hash(&header[0..16])) {
        return fail(16, "header checksum mismatch".to_string());
    }
    if field(4..6) != u64::from(FORMAT_VERSION) {
        return fail(4, format!("format version {}, this build reads version {FORMAT_VERSION}", field(4..6)));
    }
    if field(6..8) != u64::from(partition_id) {
        return fail(6, format!("written for partition {}, opened as partition {partition_id}", field(6..8)));
    }
    if field(8..16) != generation {
        return fail(8, format!("holds generation {}, its name says {generation}", field(8..16)));
    }
    Ok(())
}

/// The bytes before `body` in its frame: its length and checksum.
pub(crate) fn frame_header(body: &[u8]) -> [u8; FRAME_HEADER_BYTES] {
    let len = u32::try_from(body.len()).expect("record bodies are bounded by max_record_bytes");
    let mut header = [0u8; FRAME_HEADER_BYTES];
    header[0..4].copy_from_slice(&len.to_le_bytes());
    header[4..8].copy_from_slice(&crc32fast::hash(body).to_le_bytes());
    header
}

/// Appends the frame of one record to `buffer`.
pub(crate) fn encode_frame(buffer: &mut Vec<u8>, body: &[u8]) {
    buffer.extend_from_slice(&frame_header(body));
    buffer.extend_from_slice(body);
}

/// A snapshot's trailer, counting `chunk_count` chunks.
pub(crate) fn encode_trailer(chunk_count: u64) -> [u8; FRAME_HEADER_BYTES + TRAILER_BODY_BYTES as usize] {
    let body = chunk_count.to_le_bytes();
    let mut trailer = [0u8; FRAME_HEADER_BYTES + TRAILER_BODY_BYTES as usize];
    trailer[0..4].copy_from_slice(&TRAILER_MARK.to_le_bytes());
    trailer[4..8].copy_from_slice(&crc32fast::hash(&body).to_le_bytes());
    trailer[8..16].copy_from_slice(&body);
    trailer
}

/// What the bytes at one offset of a file are.
#[derive(Debug)]
pub(crate) enum Frame {
    /// A record (or chunk) whose checksum matches its body.
    Valid(Vec<u8>),
    /// A complete frame whose checksum does not match its body. The next frame follows it.
    BadChecksum,
    /// A snapshot's trailer, checksum checked, with the chunk count it records.
    Trailer(u64),
    /// A length over `max_record_bytes` whose body would still end within the file, and why:
    /// not what a torn write leaves (that is zeros or a cut-short frame), nor anything this
    /// crate writes under that bound. Nothing after it can be framed.
    TooLong(String),
    /// Bytes that cannot be a frame (too few for a header or for the body the length
    /// promises, or a log record of length 0), and why; nothing after them can be framed
    /// either.
    Unframed(String),
    /// The end of the file, exactly at a frame boundary.
    End,
}

/// Walks the frames of one file after checking its header. Recovery reads each file once, in
/// order; bodies are read into fresh vectors as they are returned to the caller anyway.
#[derive(Debug)]
pub(crate) struct FrameReader {
    reader: BufReader<File>,
    path: PathBuf,
    kind: FileKind,
    /// Offset of the next frame.
    offset: u64,
    file_len: u64,
    max_record_bytes: u32,
}

impl FrameReader {
    /// Opens `path` and checks its header against `kind`, `partition_id` and `generation`. A
    /// file shorter than a header is damage: headers are synced before a file gets its name.
    pub(crate) fn open(
        path: &Path,
        kind: FileKind,
        partition_id: u16,
        generation: u64,
        max_record_bytes: u32,
    ) -> Result<FrameReader, PersistError> {
        let file = File::open(path).map_err(|error| PersistError::io("open", path, error))?;
        let file_len = file.metadata().map_err(|error| PersistError::io("read the length of", path, error))?.len();
        if file_len < FILE_HEADER_BYTES {
            return Err(PersistError::corrupt(path, 0, format!("{file_len} bytes, shorter than a file header")));
        }
        let mut reader = FrameReader {
            reader: BufReader::new(file),
            path: path.to_path_buf(),
            kind,
            offset: 0,
            file_len,
            max_record_bytes,
        };
        let mut header = [0u8; FILE_HEADER_BYTES as usize];
        reader.read_exact(&mut header)?;
        check_header(&header, path, kind, partition_id, generation)?;
        Ok(reader)
    }

    /// Offset of the next frame: after a [`Frame::Valid`], [`Frame::BadChecksum`] or
    /// [`Frame::Trailer`], the end of that frame.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    pub(crate) fn file_len(&self) -> u64 {
        self.file_len
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The frame at [`FrameReader::offset`]. [`Frame::TooLong`], [`Frame::Unframed`] and
    /// [`Frame::End`] end the walk: the offset stays at the start of what could not be framed,
    /// and the reader is not asked again.
    pub(crate) fn next_frame(&mut self) -> Result<Frame, PersistError> {
        let remaining = self.file_len - self.offset;
        if remaining == 0 {
            return Ok(Frame::End);
        }
        if remaining < FRAME_HEADER_BYTES as u64 {
            return Ok(Frame::Unframed(format!("{remaining} bytes, fewer than a record header")));
        }
        let mut frame_header = [0u8; FRAME_HEADER_BYTES];
        self.read_exact(&mut frame_header)?;
        let len = u32::from_le_bytes(frame_header[0..4].try_into().expect("four bytes"));
        let crc = u32::from_le_bytes(frame_header[4..8].try_into().expect("four bytes"));
        let is_trailer = self.kind == FileKind::Snapshot && len == TRAILER_MARK;
        let body_len = if is_trailer { TRAILER_BODY_BYTES } else { len };
        let left = remaining - FRAME_HEADER_BYTES as u64;
        if u64::from(body_len) > left {
            self.offset -= FRAME_HEADER_BYTES as u64;
            return Ok(Frame::Unframed(format!("record length {body_len} runs past the end of the file")));
        }
        if !is_trailer && body_len > self.max_record_bytes {
            self.offset -= FRAME_HEADER_BYTES as u64;
            let bound = self.max_record_bytes;
            let reason = format!("record length {body_len} is over max-record-bytes ({bound}): was the bound lowered?");
            return Ok(Frame::TooLong(reason));
        }
        if body_len == 0 && self.kind == FileKind::Log {
            // What a zeroed region (a crash after the file grew, before its data was written)
            // reads as; nothing after it can be framed.
            self.offset -= FRAME_HEADER_BYTES as u64;
            return Ok(Frame::Unframed("a record of length 0 (log records are never empty)".to_string()));
        }
        let mut body = vec![0u8; body_len as usize];
        self.read_exact(&mut body)?;
        Ok(match (crc32fast::hash(&body) == crc, is_trailer) {
            (false, _) => Frame::BadChecksum,
            (true, false) => Frame::Valid(body),
            (true, true) => Frame::Trailer(u64::from_le_bytes(body[..].try_into().expect("eight bytes"))),
        })
    }

    fn read_exact(&mut self, buffer: &mut [u8]) -> Result<(), PersistError> {
        self.reader.read_exact(buffer).map_err(|error| PersistError::io("read", &self.path, error))?;
        self.offset += buffer.len() as u64;
        Ok(())
    }
}
