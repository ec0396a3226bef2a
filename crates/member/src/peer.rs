//! The member-to-member protocol: the client protocol's frames with ferrogrid's own message
//! types (service 0x7F, which Hazelcast does not use), on connections that start with `FGM`
//! instead of `CP2`. Both sides send `FGM` and a [`Hello`] first.
//!
//! Besides these types, a member link carries the answers to forwarded client requests (and
//! to WIDE requests), as a client connection would.

use crate::locks::{LockImage, LockOwner};
use crate::store::Record;
use ferrogrid_protocol::message::MessageWriter;
use ferrogrid_protocol::Uuid;
use ferrogrid_protocol::{DecodeError, Message, MessageType};

pub const MEMBER_PROTOCOL_HEADER: &[u8; 3] = b"FGM";

/// First message on a link, both ways: identity and what must match.
pub const HELLO: MessageType = MessageType(0x7F_0001);
/// A membership message (`ferrogrid_cluster::wire`).
pub const CONTROL: MessageType = MessageType(0x7F_0002);
/// Backup records from a partition owner.
pub const BACKUP: MessageType = MessageType(0x7F_0003);
/// Acknowledgements of backup sequence numbers.
pub const BACKUP_ACK: MessageType = MessageType(0x7F_0004);
/// A chunk of a partition's whole data, for a new replica.
pub const SNAPSHOT: MessageType = MessageType(0x7F_0005);
/// A map-wide client request to run over this member's own partitions only.
pub const WIDE: MessageType = MessageType(0x7F_0006);
/// A client's partition request for the owner: the client's uuid (16 bytes LE), then the
/// request; answered like the request, under the outer correlation id.
pub const FORWARD: MessageType = MessageType(0x7F_0007);
/// A client has had no connection to the sender for the cleanup period (uuid, 16 bytes LE):
/// release its locks unless it is connected here.
pub const CLIENT_GONE: MessageType = MessageType(0x7F_0008);
/// A replica still waiting for a partition's data asks for it again (partition, `u16` LE).
pub const SNAPSHOT_REQUEST: MessageType = MessageType(0x7F_0009);
/// A FORWARD sent on by a member that no longer owns the partition (its table is newer than
/// the first forwarder's), to the owner it knows; the same payload. Never forwarded again.
pub const FORWARD_AGAIN: MessageType = MessageType(0x7F_000A);

pub fn is_member_type(ty: MessageType) -> bool {
    ty.0 >> 16 == 0x7F
}

/// Whether a message on a member link is a request (a forwarded client request ends in 0x00;
/// responses, errors and events do not, except the Error response, type 0).
pub fn is_request(ty: MessageType) -> bool {
    ty.0 != 0 && ty.0 & 0xff == 0
}

/// Appends a member message: a request header and one frame holding `payload`.
pub fn write(out: &mut Vec<u8>, ty: MessageType, correlation_id: i64, payload: &[u8]) {
    let mut writer = MessageWriter::request(out, ty, correlation_id, -1, 0);
    writer.frame(payload);
    writer.finish();
}

/// The payload of a member message.
pub fn payload<'a>(message: &Message<'a>) -> Result<&'a [u8], DecodeError> {
    message.reader().value_frame("member message payload")
}

/// Who is at the other end of a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    pub member: u128,
    pub address: String,
    pub cluster_name: String,
    pub partition_count: u16,
}

impl Hello {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.member.to_le_bytes());
        out.extend_from_slice(&self.partition_count.to_le_bytes());
        put_str(&mut out, &self.address);
        put_str(&mut out, &self.cluster_name);
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Hello, String> {
        let mut reader = Reader(bytes);
        let hello = Hello {
            member: reader.u128()?,
            partition_count: reader.u16()?,
            address: reader.str()?.to_owned(),
            cluster_name: reader.str()?.to_owned(),
        };
        reader.finish()?;
        Ok(hello)
    }
}

/// What a backup or snapshot record does to one map of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change<'a> {
    Put {
        key: &'a [u8],
        record: Record,
    },
    Remove {
        key: &'a [u8],
    },
    /// The key's lock as the owner holds it.
    Lock {
        key: &'a [u8],
        image: LockImage,
    },
    Unlock {
        key: &'a [u8],
    },
}

const PUT: u8 = 1;
const REMOVE: u8 = 2;
const LOCK: u8 = 3;
const UNLOCK: u8 = 4;

/// The header of a backup record: which partition, from which table version of the owner, and
/// the sequence number to acknowledge (0: asynchronous, no acknowledgement).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackupHeader {
    pub partition: u16,
    pub table_version: u64,
    pub sequence: u64,
}

pub fn put_backup(out: &mut Vec<u8>, header: BackupHeader, map: &str, change: &Change<'_>) {
    out.extend_from_slice(&header.partition.to_le_bytes());
    out.extend_from_slice(&header.table_version.to_le_bytes());
    out.extend_from_slice(&header.sequence.to_le_bytes());
    put_change(out, map, change);
}

fn put_change(out: &mut Vec<u8>, map: &str, change: &Change<'_>) {
    match change {
        Change::Put { key, record } => {
            out.push(PUT);
            put_str(out, map);
            put_bytes(out, key);
            put_bytes(out, &record.value);
            for field in [
                record.version,
                record.creation_time_ms,
                record.last_update_time_ms,
                record.last_access_time_ms,
                record.hits,
                record.ttl_ms,
                record.ttl_base_ms,
                record.max_idle_ms,
            ] {
                out.extend_from_slice(&field.to_le_bytes());
            }
        }
        Change::Remove { key } => {
            out.push(REMOVE);
            put_str(out, map);
            put_bytes(out, key);
        }
        Change::Lock { key, image } => {
            out.push(LOCK);
            put_str(out, map);
            put_bytes(out, key);
            out.extend_from_slice(&image.owner.client.as_u128().to_le_bytes());
            out.extend_from_slice(&image.owner.thread_id.to_le_bytes());
            out.extend_from_slice(&image.count.to_le_bytes());
            out.extend_from_slice(&image.lease_deadline_ms.to_le_bytes());
        }
        Change::Unlock { key } => {
            out.push(UNLOCK);
            put_str(out, map);
            put_bytes(out, key);
        }
    }
}

/// One backup record as read, with its bytes.
#[derive(Debug)]
pub struct BackupRecord<'a> {
    pub header: BackupHeader,
    pub map: &'a str,
    pub change: Change<'a>,
    pub raw: &'a [u8],
}

/// A snapshot chunk's entries: (map, put or lock).
pub type SnapshotEntries<'a> = Vec<(&'a str, Change<'a>)>;

/// Reads backup records one by one.
#[derive(Debug)]
pub struct Backups<'a>(Reader<'a>);

impl<'a> Backups<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Backups(Reader(bytes))
    }

    /// The next record, with its raw bytes (to hand to another reactor as they are).
    pub fn next_record(&mut self) -> Result<Option<BackupRecord<'a>>, String> {
        if self.0 .0.is_empty() {
            return Ok(None);
        }
        let start = self.0 .0;
        let header = BackupHeader { partition: self.0.u16()?, table_version: self.0.u64()?, sequence: self.0.u64()? };
        let (map, change) = read_change(&mut self.0)?;
        let raw = &start[..start.len() - self.0 .0.len()];
        Ok(Some(BackupRecord { header, map, change, raw }))
    }
}

fn read_change<'a>(reader: &mut Reader<'a>) -> Result<(&'a str, Change<'a>), String> {
    let kind = reader.u8()?;
    let map = reader.str()?;
    let key = reader.bytes()?;
    let change = match kind {
        PUT => {
            let value = reader.bytes()?.into();
            let mut fields = [0i64; 8];
            for field in &mut fields {
                *field = reader.u64()? as i64;
            }
            let record = Record {
                value,
                version: fields[0],
                creation_time_ms: fields[1],
                last_update_time_ms: fields[2],
                last_access_time_ms: fields[3],
                hits: fields[4],
                ttl_ms: fields[5],
                ttl_base_ms: fields[6],
                max_idle_ms: fields[7],
            };
            Change::Put { key, record }
        }
        REMOVE => Change::Remove { key },
        LOCK => {
            let client = Uuid::from_u128(reader.u128()?);
            let thread_id = reader.u64()? as i64;
            let count = u32::from_le_bytes(reader.take(4)?.try_into().expect("4 bytes"));
            let lease_deadline_ms = reader.u64()? as i64;
            Change::Lock { key, image: LockImage { owner: LockOwner { client, thread_id }, count, lease_deadline_ms } }
        }
        UNLOCK => Change::Unlock { key },
        other => return Err(format!("unknown backup record kind {other}")),
    };
    Ok((map, change))
}

/// A snapshot chunk: partition, the table version it is for, whether it is the first (the
/// receiver drops what it held) and the last (the replica is complete), then entries.
#[derive(Debug)]
pub struct SnapshotHeader {
    pub partition: u16,
    pub table_version: u64,
    pub first: bool,
    pub last: bool,
}

pub fn put_snapshot_header(out: &mut Vec<u8>, header: &SnapshotHeader) {
    out.extend_from_slice(&header.partition.to_le_bytes());
    out.extend_from_slice(&header.table_version.to_le_bytes());
    out.push(u8::from(header.first) | u8::from(header.last) << 1);
}

pub fn put_snapshot_entry(out: &mut Vec<u8>, map: &str, key: &[u8], record: &Record) {
    put_change(out, map, &Change::Put { key, record: record.clone() });
}

pub fn put_snapshot_lock(out: &mut Vec<u8>, map: &str, key: &[u8], image: LockImage) {
    put_change(out, map, &Change::Lock { key, image });
}

/// Splits a snapshot chunk into its header and entries (puts and locks).
pub fn read_snapshot(bytes: &[u8]) -> Result<(SnapshotHeader, SnapshotEntries<'_>), String> {
    let mut reader = Reader(bytes);
    let partition = reader.u16()?;
    let table_version = reader.u64()?;
    let flags = reader.u8()?;
    let header = SnapshotHeader { partition, table_version, first: flags & 1 != 0, last: flags & 2 != 0 };
    let mut entries = Vec::new();
    while !reader.0.is_empty() {
        match read_change(&mut reader)? {
            (_, Change::Remove { .. } | Change::Unlock { .. }) => return Err("a snapshot holds a removal".into()),
            entry => entries.push(entry),
        }
    }
    Ok((header, entries))
}

/// Acknowledgements: (sequence, applied) pairs.
pub fn put_ack(out: &mut Vec<u8>, sequence: u64, applied: bool) {
    out.extend_from_slice(&sequence.to_le_bytes());
    out.push(u8::from(applied));
}

pub fn read_acks(bytes: &[u8]) -> Result<Vec<(u64, bool)>, String> {
    let mut reader = Reader(bytes);
    let mut acks = Vec::with_capacity(bytes.len() / 9);
    while !reader.0.is_empty() {
        acks.push((reader.u64()?, reader.u8()? != 0));
    }
    Ok(acks)
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    put_bytes(out, text.as_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

#[derive(Debug)]
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8], String> {
        if self.0.len() < count {
            return Err(format!("member message truncated: {count} bytes wanted, {} left", self.0.len()));
        }
        let (head, rest) = self.0.split_at(count);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn u128(&mut self) -> Result<u128, String> {
        Ok(u128::from_le_bytes(self.take(16)?.try_into().expect("16 bytes")))
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let length = u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")) as usize;
        self.take(length)
    }
    fn str(&mut self) -> Result<&'a str, String> {
        std::str::from_utf8(self.bytes()?).map_err(|_| "a member message string is not UTF-8".to_owned())
    }
    fn finish(&self) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(format!("{} bytes after a member message", self.0.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            value: b"value".as_slice().into(),
            version: 3,
            creation_time_ms: 10,
            last_update_time_ms: 20,
            last_access_time_ms: 30,
            hits: 4,
            ttl_ms: crate::store::NEVER,
            ttl_base_ms: 20,
            max_idle_ms: 5_000,
        }
    }

    #[test]
    fn hello_round_trips_and_rejects_truncation() {
        let hello = Hello {
            member: 42 << 70,
            address: "127.0.0.1:5702".into(),
            cluster_name: "dev".into(),
            partition_count: 271,
        };
        let bytes = hello.encode();
        assert_eq!(Hello::decode(&bytes).unwrap(), hello);
        assert!((0..bytes.len()).all(|cut| Hello::decode(&bytes[..cut]).is_err()));
    }

    #[test]
    fn backup_records_round_trip_with_their_raw_bytes() {
        let mut out = Vec::new();
        let header = BackupHeader { partition: 17, table_version: 9, sequence: 1 << 56 | 5 };
        put_backup(&mut out, header, "orders", &Change::Put { key: b"k1", record: record() });
        let removal = BackupHeader { sequence: 0, ..header };
        put_backup(&mut out, removal, "orders", &Change::Remove { key: b"k2" });
        let owner = LockOwner { client: Uuid::from_u128(9), thread_id: -3 };
        let lock = Change::Lock { key: b"k3", image: LockImage { owner, count: 2, lease_deadline_ms: 99 } };
        put_backup(&mut out, removal, "orders", &lock);
        let mut reader = Backups::new(&out);
        let first = reader.next_record().unwrap().unwrap();
        assert_eq!((first.header, first.map), (header, "orders"));
        assert_eq!(first.change, Change::Put { key: b"k1", record: record() });
        let second = reader.next_record().unwrap().unwrap();
        assert_eq!((second.header, second.change), (removal, Change::Remove { key: b"k2" }));
        let third = reader.next_record().unwrap().unwrap();
        assert_eq!(third.change, lock);
        assert_eq!(first.raw.len() + second.raw.len() + third.raw.len(), out.len());
        assert!(reader.next_record().unwrap().is_none());
        let mut truncated = Backups::new(&out[..out.len() - 1]);
        truncated.next_record().unwrap();
        truncated.next_record().unwrap();
        assert!(truncated.next_record().is_err(), "a cut record is an error");
    }

    #[test]
    fn snapshot_chunks_and_acks_round_trip() {
        let mut out = Vec::new();
        put_snapshot_header(&mut out, &SnapshotHeader { partition: 3, table_version: 7, first: true, last: false });
        put_snapshot_entry(&mut out, "m", b"key", &record());
        let (header, entries) = read_snapshot(&out).unwrap();
        assert!(header.first && !header.last && header.partition == 3 && header.table_version == 7);
        assert_eq!(entries, vec![("m", Change::Put { key: b"key", record: record() })]);
        let mut acks = Vec::new();
        put_ack(&mut acks, 77, true);
        put_ack(&mut acks, 78, false);
        assert_eq!(read_acks(&acks).unwrap(), vec![(77, true), (78, false)]);
        assert!(read_acks(&acks[..5]).is_err());
    }
}
