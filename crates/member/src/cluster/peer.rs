//! The member-to-member protocol: the client protocol's frames with ferrogrid's own message
//! types (service 0x7F, which Hazelcast does not use), on connections that start with `FGM`
//! instead of `CP2`. Both sides send `FGM` and a [`Hello`] first.
//!
//! Besides these types, a member link carries the answers to forwarded client requests (and
//! to WIDE requests), as a client connection would.
//!
//! BACKUP and SNAPSHOT carry partition objects of any kind in one record format (integers
//! little-endian, strings and byte strings as a `u32` length and the bytes):
//!
//! ```text
//! BACKUP   payload: { partition u16 | table version u64 | sequence u64 | object }*
//! SNAPSHOT payload:   partition u16 | table version u64 | flags u8 (1 first, 2 last) | { object }*
//! object:           kind u8 | name str | body bytes
//! ```
//!
//! PN counters are not partition objects: every replica member holds each counter, and its
//! replicas exchange whole states (`engine/pn_counter/`):
//!
//! ```text
//! PN_COUNTER_STATE payload: { sequence u64 | name str | state bytes }*
//! ```
//!
//! The body is the object kind's own encoding (`PartitionObject` in `object.rs`): the
//! changes of one operation in a backup, a run of whole entries in a snapshot. This module
//! frames records and never looks into a body, so a new kind needs no new message type.
//! Every read is bounds-checked: a malformed record is a [`Malformed`] error, never a panic.

mod records;

use crate::engine::structures::ObjectKind;
use ferrogrid_protocol::message::MessageWriter;
use ferrogrid_protocol::{DecodeError, Message, MessageType};

/// A Hazelcast service whose proxies clients create, list and destroy: the kinds of partition
/// objects, the topics, which store nothing (a reliable topic is its clients' reading of
/// the ringbuffer `_hz_rb_<name>`), the PN counters, which every replica member holds outside
/// the partitions (`engine/pn_counter/`), the flake id generators, whose state is per member
/// (`engine/flake_id/`), in no partition, the executors, which hold nothing, and the XA
/// resource (its transactions are `transaction/xa.rs`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    Object(ObjectKind),
    Topic,
    ReliableTopic,
    PnCounter,
    FlakeIdGenerator,
    /// The executors (plain, durable, scheduled): proxies, and the shutdowns each reactor records (`engine/executor/`).
    Executor,
    DurableExecutor,
    ScheduledExecutor,
    /// `HazelcastXAResource`: a proxy only.
    Xa,
}

impl Service {
    /// The service a client names by `name` (None: a service ferrogrid lacks).
    pub(crate) fn from_name(name: &str) -> Option<Service> {
        match name {
            "hz:impl:topicService" => Some(Service::Topic),
            "hz:impl:reliableTopicService" => Some(Service::ReliableTopic),
            "hz:impl:PNCounterService" => Some(Service::PnCounter),
            crate::engine::flake_id::store::SERVICE_NAME => Some(Service::FlakeIdGenerator),
            "hz:impl:executorService" => Some(Service::Executor),
            "hz:impl:durableExecutorService" => Some(Service::DurableExecutor),
            "hz:impl:scheduledExecutorService" => Some(Service::ScheduledExecutor),
            "hz:impl:xaService" => Some(Service::Xa),
            _ => ObjectKind::ALL.iter().find(|kind| kind.service_name() == name).copied().map(Service::Object),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Service::Object(kind) => kind.service_name(),
            Service::Topic => "hz:impl:topicService",
            Service::ReliableTopic => "hz:impl:reliableTopicService",
            Service::PnCounter => "hz:impl:PNCounterService",
            Service::FlakeIdGenerator => crate::engine::flake_id::store::SERVICE_NAME,
            Service::Executor => "hz:impl:executorService",
            Service::DurableExecutor => "hz:impl:durableExecutorService",
            Service::ScheduledExecutor => "hz:impl:scheduledExecutorService",
            Service::Xa => "hz:impl:xaService",
        }
    }
}

pub const MEMBER_PROTOCOL_HEADER: &[u8; 3] = b"FGM";

/// First message on a link, both ways: identity and what must match.
pub const HELLO: MessageType = MessageType(0x7F_0001);
/// A membership message (`ferrogrid_cluster::wire`).
pub const CONTROL: MessageType = MessageType(0x7F_0002);
/// Backup records from a partition owner: the changes of its operations, per object.
pub const BACKUP: MessageType = MessageType(0x7F_0003);
/// Acknowledgements of backup sequence numbers.
pub const BACKUP_ACK: MessageType = MessageType(0x7F_0004);
/// A partition's owner asks a replica to acknowledge held writes whose backup member left:
/// `{ partition u16 | table version u64 | sequence u64 }*` ([`put_backup_sync`]). Everything the
/// owner sent the replica before (the writes' records, or a snapshot holding them) is on the
/// same link ahead of it, so the replica acknowledges (BACKUP_ACK) once that is applied.
pub const BACKUP_SYNC: MessageType = MessageType(0x7F_0011);
/// A chunk of a partition's whole data (every object's entries), for a new replica.
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

/// Messages published to a topic, from the owner of its name's partition, for this member's
/// listeners that are not local-only ([`TopicRelay`]).
pub const TOPIC: MessageType = MessageType(0x7F_000B);

/// A proxy created or destroyed on the sending member, for this member's listing and its
/// distributed-object listeners (`ObjectEvent`, `events.rs`).
pub const OBJECT: MessageType = MessageType(0x7F_0016);

/// Partitions whose owner died, from the master, for this member's partition-lost listeners
/// (`PartitionLoss`, `events.rs`).
pub const PARTITION_LOST: MessageType = MessageType(0x7F_0019);

/// The sender's listing of proxies, for a member it has just linked to (which merges it into
/// its own without announcing anything): `{ service str | name str }*`, in messages of at
/// most [`LISTING_CHUNK_BYTES`].
pub const OBJECTS: MessageType = MessageType(0x7F_001A);

/// The most bytes of names one OBJECTS message carries.
pub const LISTING_CHUNK_BYTES: usize = 64 << 10;

/// Compact schemas for the receiver to keep (`schemas.rs`): from the member a client sent
/// one to, or, all of them, from a member the receiver has just linked to. Acknowledged with
/// SCHEMAS_ACK.
pub const SCHEMAS: MessageType = MessageType(0x7F_001B);

/// The ids of the schemas of a SCHEMAS message, now held by the sender (`i64` LE each).
pub const SCHEMAS_ACK: MessageType = MessageType(0x7F_001C);

/// The sender's index definitions (`index::Registry::encode`), for a member it has just linked
/// to: the partitions that member receives build them.
pub const INDEXES: MessageType = MessageType(0x7F_001D);

/// The sender's SQL mappings as DDL texts (`sql::encode_catalog`), for a member it has just
/// linked to: a joining member learns the mappings made before it joined.
pub const MAPPINGS: MessageType = MessageType(0x7F_001E);

/// The sender's dynamic configurations (`DynamicConfig.add*Config` requests as clients sent
/// them: `{ request bytes }*`), for a member it has just linked to
/// (`engine/dynamic_config.rs`).
pub const CONFIGS: MessageType = MessageType(0x7F_001F);

/// A listener registration a unisocket client made through the sending member, for a member
/// that joined after it: the client's request with the relay id as its correlation id
/// (`relays.rs`).
pub const LISTEN: MessageType = MessageType(0x7F_0017);

/// A relayed registration withdrawn: `relay id i64` (`relays.rs`).
pub const UNLISTEN: MessageType = MessageType(0x7F_0018);

/// PN counter states from a replica, to merge into this member's replicas: each record is
/// one counter's whole state, acknowledged (BACKUP_ACK) when its sequence is not 0 (a change
/// whose answer waits for the other replicas; 0: the periodic exchange).
pub const PN_COUNTER_STATE: MessageType = MessageType(0x7F_0010);

/// Appends one PN_COUNTER_STATE record: `sequence u64 | name str | state bytes`.
pub(crate) fn put_counter_state(out: &mut Vec<u8>, sequence: u64, name: &str, state: &[u8]) {
    out.extend_from_slice(&sequence.to_le_bytes());
    put_str(out, name);
    put_bytes(out, state);
}

/// One PN_COUNTER_STATE record as read, with its bytes (to hand to another reactor as they are).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CounterState<'a> {
    pub(crate) sequence: u64,
    pub(crate) name: &'a str,
    pub(crate) state: &'a [u8],
    pub(crate) raw: &'a [u8],
}

/// Reads PN_COUNTER_STATE records one by one.
#[derive(Debug)]
pub(crate) struct CounterStates<'a>(Reader<'a>);

impl<'a> CounterStates<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        CounterStates(Reader(bytes))
    }

    pub(crate) fn next_record(&mut self) -> Result<Option<CounterState<'a>>, Malformed> {
        if self.0.is_empty() {
            return Ok(None);
        }
        let start = self.0 .0;
        let (sequence, name, state) = (self.0.u64()?, self.0.str()?, self.0.bytes()?);
        let raw = &start[..start.len() - self.0 .0.len()];
        Ok(Some(CounterState { sequence, name, state, raw }))
    }
}

/// Replicated maps (`engine/replicated_map/`): the changes a partition's owner made, for every
/// other member, in the owner's order: `{ partition u16 | epoch u64 | sequence u64 | changes
/// bytes }*` (one record per operation and partition; `changes` is the kind's own encoding).
pub const REPLICATED_CHANGES: MessageType = MessageType(0x7F_000C);
/// A partition's whole replicated-map copy from a member that holds one: `partition u16 |
/// epoch u64 | sequence u64 | flags u8 (1 first, 2 last) | entries`, in bounded chunks.
pub const REPLICATED_SYNC: MessageType = MessageType(0x7F_000D);
/// An owner's versions of its partitions' replicated-map copies, sent every second (anti-
/// entropy): `{ partition u16 | epoch u64 | sequence u64 }*`. A member whose copy is older asks
/// for the partition.
pub const REPLICATED_VERSIONS: MessageType = MessageType(0x7F_000E);
/// Asks the receiver for REPLICATED_SYNC of these partitions: `{ partition u16 }*`.
pub const REPLICATED_SYNC_REQUEST: MessageType = MessageType(0x7F_000F);
/// Answers to replicated-map writes the receiver forwarded here, sent after the changes they
/// made (`{ partition u16 | response bytes }*`): the receiver's copy applies the changes
/// before the answer goes on to the client, so a client that reads the member it asked reads
/// its own write (Hazelcast updates the caller's copy before it answers, too).
pub const REPLICATED_REPLY: MessageType = MessageType(0x7F_0020);

/// TWO_PHASE transaction logs for the receiver to hold for their coordinator, the sender
/// (`transaction/backup_log.rs`: `Record`s); a committing one is acknowledged with TXN_LOG_ACK.
pub const TXN_LOG: MessageType = MessageType(0x7F_0021);

/// A committing transaction log held (or refused: the holder's table is full):
/// `txn u128 | kept u8`.
pub const TXN_LOG_ACK: MessageType = MessageType(0x7F_0022);

/// An XA transaction the sender prepared, for every member to list and be able to finalize
/// (`transaction/xa.rs`): `txn u128 | format id i32 | global transaction id bytes | branch
/// qualifier bytes`.
pub const XA_PREPARED: MessageType = MessageType(0x7F_0023);

/// XA transactions ended (finalized, committed, rolled back or cleared) by the sender:
/// `{ txn u128 }*`.
pub const XA_ENDED: MessageType = MessageType(0x7F_0024);

/// An XA_PREPARED listed (or refused: the receiver's table is full), for the preparing
/// member to answer its client: `txn u128 | kept u8`.
pub const XA_PREPARED_ACK: MessageType = MessageType(0x7F_0025);

/// The query caches' publishers the sender holds, for a member that joined to publish their
/// events too (`cluster/query_caches.rs`): `{ publishable u8 | publisherCreate bytes }*`.
pub const QUERY_CACHES: MessageType = MessageType(0x7F_0026);

/// An SQL statement its client closed through the sender (Sql.Close), for the receiver's
/// shares of it to stop (`sql/service.rs`): the query id, `member high i64 | member low i64 |
/// local high i64 | local low i64` (little-endian).
pub const SQL_CLOSED: MessageType = MessageType(0x7F_0027);

/// What TOPIC carries: `name str | partition u16 | publisher u128 | publish time i64 |
/// { message bytes }*` (the partition of the topic's name, which its events carry: the Java
/// client orders the events of one partition id, and runs those of -1 in any order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TopicRelay<'a> {
    pub name: &'a str,
    pub partition: u16,
    pub publisher: ferrogrid_protocol::Uuid,
    pub publish_time_ms: i64,
    pub messages: Vec<&'a [u8]>,
}

impl<'a> TopicRelay<'a> {
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        put_str(out, self.name);
        out.extend_from_slice(&self.partition.to_le_bytes());
        out.extend_from_slice(&self.publisher.as_u128().to_le_bytes());
        out.extend_from_slice(&self.publish_time_ms.to_le_bytes());
        for message in &self.messages {
            put_bytes(out, message);
        }
    }

    pub(crate) fn decode(payload: &'a [u8]) -> Result<TopicRelay<'a>, Malformed> {
        let mut reader = Reader::new(payload);
        let (name, partition) = (reader.str()?, reader.u16()?);
        let publisher = ferrogrid_protocol::Uuid::from_u128(reader.u128()?);
        let publish_time_ms = reader.i64()?;
        let mut messages = Vec::new();
        while !reader.is_empty() {
            messages.push(reader.bytes()?);
        }
        Ok(TopicRelay { name, partition, publisher, publish_time_ms, messages })
    }
}

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

    pub fn decode(bytes: &[u8]) -> Result<Hello, Malformed> {
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

pub(crate) use records::*;

/// Why a member message could not be read: the sender is broken, or the bytes were cut. The
/// receiver logs it and ignores the rest of the message; nothing panics on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("member message truncated: {wanted} bytes wanted, {left} left")]
    Truncated { wanted: usize, left: usize },
    #[error("a member message string is not UTF-8")]
    NotUtf8,
    #[error("{0} bytes after a member message")]
    Trailing(usize),
    #[error("unknown object kind {0}")]
    UnknownKind(u8),
    #[error("unknown change {0} in an object record")]
    UnknownChange(u8),
    /// Well-formed bytes that an object's kind refuses (e.g. a removal in a snapshot).
    #[error("{0}")]
    Refused(&'static str),
}

/// Appends a string as `u32` LE length and UTF-8 bytes.
pub(crate) fn put_str(out: &mut Vec<u8>, text: &str) {
    put_bytes(out, text.as_bytes());
}

/// Appends bytes as `u32` LE length and the bytes.
pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&length_u32(bytes.len()).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// A length as the `u32` the format carries. Member messages are bounded by the frame and
/// message limits, far below 4 GiB: a longer field is a broken invariant.
fn length_u32(length: usize) -> u32 {
    u32::try_from(length).expect("a member message field is shorter than 4 GiB")
}

/// Reads the fields of a member message (little-endian), checking every length against what
/// is left: a short or lying message is a [`Malformed`] error, never a panic.
#[derive(Debug)]
pub(crate) struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader(bytes)
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// What is left to read.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.0
    }
    pub(crate) fn take(&mut self, count: usize) -> Result<&'a [u8], Malformed> {
        if self.0.len() < count {
            return Err(Malformed::Truncated { wanted: count, left: self.0.len() });
        }
        let (head, rest) = self.0.split_at(count);
        self.0 = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        Ok(self.take(N)?.try_into().expect("take returns the length asked for"))
    }
    pub(crate) fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, Malformed> {
        self.array().map(u16::from_le_bytes)
    }
    pub(crate) fn u32(&mut self) -> Result<u32, Malformed> {
        self.array().map(u32::from_le_bytes)
    }
    pub(crate) fn u64(&mut self) -> Result<u64, Malformed> {
        self.array().map(u64::from_le_bytes)
    }
    pub(crate) fn i64(&mut self) -> Result<i64, Malformed> {
        self.array().map(i64::from_le_bytes)
    }
    pub(crate) fn u128(&mut self) -> Result<u128, Malformed> {
        self.array().map(u128::from_le_bytes)
    }
    /// A `u32` LE length and that many bytes.
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let length = self.u32()? as usize;
        self.take(length)
    }
    pub(crate) fn str(&mut self) -> Result<&'a str, Malformed> {
        std::str::from_utf8(self.bytes()?).map_err(|_| Malformed::NotUtf8)
    }
    pub(crate) fn finish(&self) -> Result<(), Malformed> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Malformed::Trailing(self.0.len()))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_topic_relay_keeps_its_partition_and_a_cut_one_is_refused() {
        let relay = TopicRelay {
            name: "news",
            partition: 230,
            publisher: ferrogrid_protocol::Uuid::from_u128(7),
            publish_time_ms: 42,
            messages: vec![b"a", b"bc"],
        };
        let mut bytes = Vec::new();
        relay.encode(&mut bytes);
        assert_eq!(TopicRelay::decode(&bytes), Ok(relay));
        for cut in 1..bytes.len() {
            let _ = TopicRelay::decode(&bytes[..cut]); // an error or fewer messages, never a panic
        }
        assert!(TopicRelay::decode(&bytes[..8]).is_err(), "cut inside the header");
    }
    use ferrogrid_protocol::frame::{Decoded, StreamDecoder};

    /// The member messages written to `stream`, in order: (type, payload).
    pub(crate) fn messages(stream: &[u8]) -> Vec<(MessageType, Vec<u8>)> {
        let mut decoder = StreamDecoder::default();
        let (mut rest, mut found) = (stream, Vec::new());
        while !rest.is_empty() {
            let Ok(Decoded::Message { length }) = decoder.decode(rest) else { panic!("whole messages") };
            let message = Message::parse(&rest[..length]).expect("a member message");
            found.push((message.message_type(), payload(&message).expect("one payload frame").to_vec()));
            rest = &rest[length..];
        }
        found
    }

    /// The payloads of the SNAPSHOT messages written to `stream`, in order.
    pub(crate) fn snapshot_chunks(stream: &[u8]) -> Vec<Vec<u8>> {
        let messages = messages(stream);
        assert!(messages.iter().all(|(ty, _)| *ty == SNAPSHOT), "only snapshots were written");
        messages.into_iter().map(|(_, payload)| payload).collect()
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
    fn backup_records_of_any_kind_round_trip_with_their_raw_bytes() {
        let mut out = Vec::new();
        let header = BackupHeader { partition: 17, table_version: 9, sequence: 1 << 56 | 5 };
        let map = ObjectRecord { kind: ObjectKind::Map, name: "orders", body: b"map body" };
        put_backup(&mut out, header, &map);
        let asynchronous = BackupHeader { sequence: 0, ..header };
        let probe = ObjectRecord { kind: ObjectKind::Probe, name: "orders", body: b"" };
        put_backup(&mut out, asynchronous, &probe);
        let mut reader = Backups::new(&out);
        let first = reader.next_record().unwrap().unwrap();
        assert_eq!((first.header, first.object), (header, map));
        let second = reader.next_record().unwrap().unwrap();
        assert_eq!((second.header, second.object), (asynchronous, probe));
        assert_eq!(first.raw.len() + second.raw.len(), out.len());
        assert_eq!([first.raw, second.raw].concat(), out);
        assert!(reader.next_record().unwrap().is_none());
    }

    #[test]
    fn a_cut_or_unknown_backup_record_is_an_error() {
        let mut one = Vec::new();
        let header = BackupHeader { partition: 1, table_version: 2, sequence: 3 };
        put_backup(&mut one, header, &ObjectRecord { kind: ObjectKind::Map, name: "m", body: b"xyz" });
        for cut in 1..one.len() {
            assert!(Backups::new(&one[..cut]).next_record().is_err(), "cut at {cut}");
        }
        let mut two = one.clone();
        two.extend_from_slice(&one);
        let mut reader = Backups::new(&two[..two.len() - 1]);
        assert!(reader.next_record().unwrap().is_some(), "the whole first record reads");
        assert!(reader.next_record().is_err(), "the cut second one does not");
        let kind_at = 2 + 8 + 8;
        one[kind_at] = 0xEE;
        assert_eq!(Backups::new(&one).next_record().unwrap_err(), Malformed::UnknownKind(0xEE));
    }

    /// Each object's entries, concatenated over the chunks of a snapshot (an entry here is
    /// a `u32` length and its bytes, as a kind might write it).
    fn snapshot_objects(chunks: &[Vec<u8>]) -> Vec<(ObjectKind, String, Vec<u8>)> {
        let mut objects: Vec<(ObjectKind, String, Vec<u8>)> = Vec::new();
        for chunk in chunks {
            for object in read_snapshot(chunk).unwrap().1 {
                match objects.last_mut() {
                    Some((kind, name, body)) if *kind == object.kind && name == object.name => {
                        body.extend_from_slice(object.body);
                    }
                    _ => objects.push((object.kind, object.name.into(), object.body.to_vec())),
                }
            }
        }
        objects
    }

    #[test]
    fn snapshot_writer_cuts_chunks_between_entries_and_marks_first_and_last() {
        let mut out = Vec::new();
        let mut writer = SnapshotWriter::new(&mut out, 3, 7, 48);
        let entry = |byte: u8| move |out: &mut Vec<u8>| put_bytes(out, &[byte; 10]);
        writer.begin_object(ObjectKind::Map, "m");
        (0..5).for_each(|index| writer.entry(entry(index)));
        writer.begin_object(ObjectKind::Probe, "empty");
        writer.begin_object(ObjectKind::Probe, "m");
        (5..7).for_each(|index| writer.entry(entry(index)));
        let (chunk_count, entries) = writer.finish();
        let chunks = snapshot_chunks(&out);
        assert_eq!((chunks.len(), entries), (chunk_count, 7));
        assert!(chunks.len() >= 3, "48-byte chunks hold 14-byte entries a few at a time");
        for (index, chunk) in chunks.iter().enumerate() {
            let (header, _) = read_snapshot(chunk).unwrap();
            assert_eq!((header.partition, header.table_version), (3, 7));
            assert_eq!((header.first, header.last), (index == 0, index == chunks.len() - 1));
            assert!(index == chunks.len() - 1 || chunk.len() >= 48, "a chunk is cut once it reaches the bound");
        }
        let expected_body = |range: std::ops::Range<u8>| {
            let mut body = Vec::new();
            range.for_each(|byte| put_bytes(&mut body, &[byte; 10]));
            body
        };
        let objects = snapshot_objects(&chunks);
        assert_eq!(
            objects,
            vec![
                (ObjectKind::Map, "m".into(), expected_body(0..5)),
                (ObjectKind::Probe, "m".into(), expected_body(5..7))
            ],
            "entries arrive whole and in order; an object without entries has no record"
        );
    }

    #[test]
    fn an_empty_snapshot_is_one_chunk_both_first_and_last() {
        let mut out = Vec::new();
        assert_eq!(SnapshotWriter::new(&mut out, 9, 1, 512).finish(), (1, 0));
        let chunks = snapshot_chunks(&out);
        let (header, objects) = read_snapshot(&chunks[0]).unwrap();
        assert_eq!(header, SnapshotHeader { partition: 9, table_version: 1, first: true, last: true });
        assert!(objects.is_empty());
    }

    #[test]
    fn a_cut_snapshot_chunk_is_an_error() {
        let mut out = Vec::new();
        let mut writer = SnapshotWriter::new(&mut out, 3, 7, 1 << 20);
        writer.begin_object(ObjectKind::Map, "m");
        writer.entry(|out| put_bytes(out, b"entry"));
        writer.finish();
        let chunk = &snapshot_chunks(&out)[0];
        for cut in (0..chunk.len()).filter(|cut| *cut != SNAPSHOT_HEADER_BYTES) {
            assert!(read_snapshot(&chunk[..cut]).is_err(), "cut at {cut}");
        }
        assert!(read_snapshot(&chunk[..SNAPSHOT_HEADER_BYTES]).unwrap().1.is_empty(), "a header alone is a chunk");
    }

    #[test]
    fn counter_state_records_round_trip_and_reject_truncation() {
        let mut out = Vec::new();
        put_counter_state(&mut out, 1 << 56 | 3, "hits", b"state");
        put_counter_state(&mut out, 0, "tenant\0misses", b"");
        let mut reader = CounterStates::new(&out);
        let first = reader.next_record().unwrap().unwrap();
        assert_eq!((first.sequence, first.name, first.state), (1 << 56 | 3, "hits", b"state".as_slice()));
        let second = reader.next_record().unwrap().unwrap();
        assert_eq!((second.sequence, second.name, second.state), (0, "tenant\0misses", b"".as_slice()));
        assert_eq!([first.raw, second.raw].concat(), out);
        assert!(reader.next_record().unwrap().is_none());
        let one = first.raw.len();
        for cut in 1..one {
            assert!(CounterStates::new(&out[..cut]).next_record().is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn acks_round_trip() {
        let mut acks = Vec::new();
        put_ack(&mut acks, 77, true);
        put_ack(&mut acks, 78, false);
        assert_eq!(read_acks(&acks).unwrap(), vec![(77, true), (78, false)]);
        assert!(read_acks(&acks[..5]).is_err());
    }
}
