//! The records backups, replica snapshots and their acknowledgements carry between members: one
//! object's state per record, batched per partition.

use super::{length_u32, put_bytes, put_str, write, Malformed, ObjectKind, Reader, SNAPSHOT};

/// The header of a backup record: which partition, from which table version of the owner, and
/// the sequence number to acknowledge (0: asynchronous, no acknowledgement).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackupHeader {
    pub partition: u16,
    pub table_version: u64,
    pub sequence: u64,
}

/// One object's part of a BACKUP or SNAPSHOT record: which object, and a body that only its
/// kind reads (what its `PartitionObject::write_changes` or `write_snapshot` wrote).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ObjectRecord<'a> {
    pub(crate) kind: ObjectKind,
    pub(crate) name: &'a str,
    pub(crate) body: &'a [u8],
}

pub(crate) fn put_object(out: &mut Vec<u8>, object: &ObjectRecord<'_>) {
    out.push(object.kind.code());
    put_str(out, object.name);
    put_bytes(out, object.body);
}

pub(crate) fn read_object<'a>(reader: &mut Reader<'a>) -> Result<ObjectRecord<'a>, Malformed> {
    let code = reader.u8()?;
    let kind = ObjectKind::from_code(code).ok_or(Malformed::UnknownKind(code))?;
    Ok(ObjectRecord { kind, name: reader.str()?, body: reader.bytes()? })
}

/// Appends one backup record: `header`, then the object's kind, name and change body.
pub(crate) fn put_backup(out: &mut Vec<u8>, header: BackupHeader, object: &ObjectRecord<'_>) {
    out.extend_from_slice(&header.partition.to_le_bytes());
    out.extend_from_slice(&header.table_version.to_le_bytes());
    out.extend_from_slice(&header.sequence.to_le_bytes());
    put_object(out, object);
}

/// One backup record as read, with its bytes.
#[derive(Debug)]
pub(crate) struct BackupRecord<'a> {
    pub(crate) header: BackupHeader,
    pub(crate) object: ObjectRecord<'a>,
    pub(crate) raw: &'a [u8],
}

/// Reads backup records one by one.
#[derive(Debug)]
pub(crate) struct Backups<'a>(Reader<'a>);

impl<'a> Backups<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Backups(Reader(bytes))
    }

    /// The next record, with its raw bytes (to hand to another reactor as they are). The body
    /// is not looked into: its object's kind reads it.
    pub(crate) fn next_record(&mut self) -> Result<Option<BackupRecord<'a>>, Malformed> {
        if self.0.is_empty() {
            return Ok(None);
        }
        let start = self.0 .0;
        let header = BackupHeader { partition: self.0.u16()?, table_version: self.0.u64()?, sequence: self.0.u64()? };
        let object = read_object(&mut self.0)?;
        let raw = &start[..start.len() - self.0 .0.len()];
        Ok(Some(BackupRecord { header, object, raw }))
    }
}

/// A snapshot chunk: partition, the table version it is for, whether it is the first (the
/// receiver drops what it held) and the last (the replica is complete), then object records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotHeader {
    pub partition: u16,
    pub table_version: u64,
    pub first: bool,
    pub last: bool,
}

pub(crate) const SNAPSHOT_HEADER_BYTES: usize = 11;

impl SnapshotHeader {
    fn encode(&self) -> [u8; SNAPSHOT_HEADER_BYTES] {
        let mut bytes = [0; SNAPSHOT_HEADER_BYTES];
        bytes[..2].copy_from_slice(&self.partition.to_le_bytes());
        bytes[2..10].copy_from_slice(&self.table_version.to_le_bytes());
        bytes[10] = u8::from(self.first) | u8::from(self.last) << 1;
        bytes
    }
}

/// Writes one partition's snapshot for one member as SNAPSHOT messages of about `chunk_bytes`
/// each, cut between entries (an entry is never split: one larger than the bound makes a larger
/// chunk). The caller names each object with [`SnapshotWriter::begin_object`]; the object
/// then calls [`SnapshotWriter::entry`] once per entry. An object whose entries span chunks
/// has one record in each. Used by the partition's reactor, for the length of one snapshot.
#[derive(Debug)]
pub(crate) struct SnapshotWriter<'a> {
    /// Where the chunks go.
    out: ChunkSink<'a>,
    header: SnapshotHeader,
    chunk_bytes: usize,
    /// The chunk being filled; starts with room for its header.
    chunk: Vec<u8>,
    /// Kind code and name of the object being written: how its record starts in each chunk.
    object: Vec<u8>,
    /// Where the open record's body length goes in `chunk` (once the object has an entry there).
    body_length_at: Option<usize>,
    chunks: usize,
    entries: usize,
}

/// Where a [`SnapshotWriter`]'s chunks go.
#[derive(Debug)]
enum ChunkSink<'a> {
    /// Whole member messages for the receiver.
    Messages(&'a mut Vec<u8>),
    /// The chunks themselves (a persisted snapshot, `persistence/logs.rs`).
    Chunks(&'a mut Vec<Vec<u8>>),
}

impl<'a> SnapshotWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>, partition: u16, table_version: u64, chunk_bytes: usize) -> Self {
        Self::to_sink(ChunkSink::Messages(out), partition, table_version, chunk_bytes)
    }

    /// A writer whose chunks (each as [`read_snapshot`] reads it) are pushed to `out`.
    pub(crate) fn chunks(out: &'a mut Vec<Vec<u8>>, partition: u16, chunk_bytes: usize) -> Self {
        Self::to_sink(ChunkSink::Chunks(out), partition, 0, chunk_bytes)
    }

    fn to_sink(out: ChunkSink<'a>, partition: u16, table_version: u64, chunk_bytes: usize) -> Self {
        let header = SnapshotHeader { partition, table_version, first: true, last: false };
        let chunk = header.encode().to_vec();
        SnapshotWriter {
            out,
            header,
            chunk_bytes,
            chunk,
            object: Vec::new(),
            body_length_at: None,
            chunks: 0,
            entries: 0,
        }
    }

    /// The entries that follow belong to this object.
    pub(crate) fn begin_object(&mut self, kind: ObjectKind, name: &str) {
        self.close_record();
        self.object.clear();
        self.object.push(kind.code());
        put_str(&mut self.object, name);
    }

    /// Appends one entry of the current object; `write` encodes it as the object's kind reads
    /// it back (`PartitionObject::apply_snapshot`).
    pub(crate) fn entry(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        assert!(!self.object.is_empty(), "an entry belongs to an object: begin_object comes first");
        if self.body_length_at.is_none() {
            self.chunk.extend_from_slice(&self.object);
            self.body_length_at = Some(self.chunk.len());
            self.chunk.extend_from_slice(&0u32.to_le_bytes());
        }
        write(&mut self.chunk);
        self.entries += 1;
        if self.chunk.len() >= self.chunk_bytes {
            self.close_record();
            self.write_chunk();
            self.header.first = false;
            self.chunk.extend_from_slice(&self.header.encode());
        }
    }

    /// Writes the last chunk (marked last, and first if it is the only one); returns how many
    /// chunks and entries the snapshot has.
    pub(crate) fn finish(mut self) -> (usize, usize) {
        self.close_record();
        self.header.last = true;
        self.write_chunk();
        (self.chunks, self.entries)
    }

    fn close_record(&mut self) {
        if let Some(at) = self.body_length_at.take() {
            let length = length_u32(self.chunk.len() - at - 4);
            self.chunk[at..at + 4].copy_from_slice(&length.to_le_bytes());
        }
    }

    fn write_chunk(&mut self) {
        self.chunk[..SNAPSHOT_HEADER_BYTES].copy_from_slice(&self.header.encode());
        match &mut self.out {
            ChunkSink::Messages(out) => write(out, SNAPSHOT, 0, &self.chunk),
            ChunkSink::Chunks(out) => out.push(self.chunk.clone()),
        }
        self.chunks += 1;
        self.chunk.clear();
    }
}

/// Splits a snapshot chunk into its header and object records. The whole chunk's framing is
/// checked before anything is returned; the bodies are their kinds' to read.
pub(crate) fn read_snapshot(bytes: &[u8]) -> Result<(SnapshotHeader, Vec<ObjectRecord<'_>>), Malformed> {
    let mut reader = Reader(bytes);
    let partition = reader.u16()?;
    let table_version = reader.u64()?;
    let flags = reader.u8()?;
    let header = SnapshotHeader { partition, table_version, first: flags & 1 != 0, last: flags & 2 != 0 };
    let mut objects = Vec::new();
    while !reader.is_empty() {
        objects.push(read_object(&mut reader)?);
    }
    Ok((header, objects))
}

/// Appends one BACKUP_SYNC entry: a backup header with no object.
pub(crate) fn put_backup_sync(out: &mut Vec<u8>, header: BackupHeader) {
    out.extend_from_slice(&header.partition.to_le_bytes());
    out.extend_from_slice(&header.table_version.to_le_bytes());
    out.extend_from_slice(&header.sequence.to_le_bytes());
}

/// The entries of a BACKUP_SYNC payload.
pub(crate) fn read_backup_syncs(bytes: &[u8]) -> Result<Vec<BackupHeader>, Malformed> {
    let mut reader = Reader(bytes);
    let mut syncs = Vec::with_capacity(bytes.len() / 18);
    while !reader.is_empty() {
        syncs.push(BackupHeader { partition: reader.u16()?, table_version: reader.u64()?, sequence: reader.u64()? });
    }
    Ok(syncs)
}

/// Acknowledgements: (sequence, applied) pairs.
pub fn put_ack(out: &mut Vec<u8>, sequence: u64, applied: bool) {
    out.extend_from_slice(&sequence.to_le_bytes());
    out.push(u8::from(applied));
}

pub fn read_acks(bytes: &[u8]) -> Result<Vec<(u64, bool)>, Malformed> {
    let mut reader = Reader(bytes);
    let mut acks = Vec::with_capacity(bytes.len() / 9);
    while !reader.is_empty() {
        acks.push((reader.u64()?, reader.u8()? != 0));
    }
    Ok(acks)
}
