//! Property tests of the crate's contract with its callers.
//!
//! - The stream decoder never panics, never reports more bytes than it was given, keeps every
//!   message and frame within [`StreamLimits`], and errors as soon as a frame header crosses
//!   a limit instead of asking for bytes it will never accept.
//! - However a connection's bytes are chunked, the decoder yields exactly the messages sent,
//!   in order, and reassembles fragmented messages (client-protocol.md §2.7) even when the
//!   pieces of two messages interleave.
//! - Codecs round-trip arbitrary field values, and no codec panics on arbitrary frames.
//! - `partition_for` always lands inside the partition count.
//!
//! Case counts are kept small so the whole file runs in a few seconds in a debug build.

#[path = "support/every_codec.rs"]
mod every_codec;

use every_codec::{decode_with_every_codec, every_codec_name};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::frame::*;
use ferrogrid_protocol::message::{write_frame, Bytes, Packed};
use ferrogrid_protocol::{partition_for, Data, Message, MessageType, Uuid};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

// ---------------------------------------------------------------------------------------
// Frames and a simulated connection.

/// The frames of `bytes` as (flags, whole frame bytes), or None if they are not whole frames.
fn split_frames(bytes: &[u8]) -> Option<Vec<(u16, &[u8])>> {
    let mut frames = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        if rest.len() < FRAME_HEADER_SIZE {
            return None;
        }
        let (length, flags) = frame_header(rest, 0);
        let length = usize::try_from(length).ok()?;
        if length < FRAME_HEADER_SIZE || length > rest.len() {
            return None;
        }
        frames.push((flags, &rest[..length]));
        rest = &rest[length..];
    }
    Some(frames)
}

fn set_flags(frame: &mut [u8], flags: u16) {
    frame[4..6].copy_from_slice(&flags.to_le_bytes());
}

/// What a connection received: the messages cut, in order, and the error that closed it.
#[derive(Debug, Default)]
struct Received {
    messages: Vec<Vec<u8>>,
    error: Option<DecodeError>,
}

/// Does what a connection does with inbound bytes: appends each chunk (sizes taken from
/// `chunk_lengths` in a cycle) to a buffer, then cuts messages off its front until the
/// decoder needs more. Stops at the first error. Checks the decoder's side of the contract
/// on every call: progress, nothing beyond the input, every message within the limits.
fn receive(limits: StreamLimits, stream: &[u8], chunk_lengths: &[usize]) -> Result<Received, TestCaseError> {
    assert!(!chunk_lengths.is_empty() && !chunk_lengths.contains(&0));
    let mut decoder = StreamDecoder::new(limits);
    let mut received = Received::default();
    let mut buffer = Vec::new();
    let mut chunks = chunk_lengths.iter().cycle();
    let mut offset = 0;
    while offset < stream.len() {
        let end = stream.len().min(offset + chunks.next().expect("cycle of a non-empty list"));
        buffer.extend_from_slice(&stream[offset..end]);
        offset = end;
        loop {
            let (consumed, message) = match decoder.decode(&buffer) {
                Err(error) => {
                    received.error = Some(error);
                    return Ok(received);
                }
                Ok(Decoded::NeedMore) => break,
                Ok(Decoded::Message { length }) => {
                    prop_assert!(length <= buffer.len());
                    (length, Some(buffer[..length].to_vec()))
                }
                Ok(Decoded::Reassembled { consumed, message }) => (consumed, Some(message)),
                Ok(Decoded::Absorbed { consumed }) => (consumed, None),
            };
            prop_assert!(consumed > 0 && consumed <= buffer.len());
            if let Some(message) = message {
                assert_within_limits(&message, limits)?;
                received.messages.push(message);
            }
            buffer.drain(..consumed);
        }
    }
    Ok(received)
}

/// A message the decoder hands out is whole frames, each and all within the limits, the last
/// (and only the last) flagged IS_FINAL.
fn assert_within_limits(message: &[u8], limits: StreamLimits) -> Result<(), TestCaseError> {
    prop_assert!(message.len() <= limits.max_message_bytes as usize);
    let frames = split_frames(message);
    prop_assert!(frames.is_some(), "not whole frames: {:02x?}", message);
    let frames = frames.expect("checked");
    for (index, (flags, frame)) in frames.iter().enumerate() {
        prop_assert!(frame.len() <= limits.max_frame_bytes as usize);
        prop_assert_eq!(flags & IS_FINAL != 0, index + 1 == frames.len());
    }
    Ok(())
}

/// A fresh decoder cuts `bytes` as exactly one message, and asks for more before its end.
fn assert_cut_whole(bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut decoder = StreamDecoder::default();
    prop_assert_eq!(decoder.decode(bytes)?, Decoded::Message { length: bytes.len() });
    prop_assert_eq!(decoder.decode(&bytes[..bytes.len() - 1])?, Decoded::NeedMore);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Strategies for bytes.

fn small_limits() -> impl Strategy<Value = StreamLimits> {
    (6u32..64, 6u32..256, 0u32..4).prop_map(|(frame, message, pending)| StreamLimits {
        max_frame_bytes: frame,
        max_message_bytes: message,
        max_pending_fragmented: pending,
    })
}

fn any_limits() -> impl Strategy<Value = StreamLimits> {
    prop_oneof![Just(StreamLimits::default()), small_limits()]
}

/// How a connection's bytes arrive: chunk sizes, used in a cycle.
fn chunking() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![vec(1usize..8, 1..8), vec(1usize..300, 1..8)]
}

fn any_flags() -> impl Strategy<Value = u16> {
    prop_oneof![
        Just(0),
        Just(IS_FINAL),
        Just(UNFRAGMENTED),
        Just(UNFRAGMENTED | IS_FINAL),
        Just(BEGIN_FRAGMENT),
        Just(END_FRAGMENT),
        Just(BEGIN_DATA_STRUCTURE),
        Just(END_DATA_STRUCTURE),
        Just(END_DATA_STRUCTURE | IS_FINAL),
        Just(IS_NULL),
        any::<u16>(),
    ]
}

/// Bytes that look like frames often enough to reach every branch of the decoder: mostly
/// true lengths, sometimes a wrong or absurd one; contents include fragmentation ids.
fn frame_soup() -> impl Strategy<Value = Vec<u8>> {
    let length = prop_oneof![
        8 => Just(None),
        1 => (-8i32..80).prop_map(Some),
        1 => any::<i32>().prop_map(Some),
    ];
    let content = prop_oneof![vec(any::<u8>(), 0..24), (0i64..3).prop_map(|id| id.to_le_bytes().to_vec()),];
    let frame = (length, any_flags(), content).prop_map(|(length, flags, content)| {
        let mut out = Vec::new();
        write_frame(&mut out, flags, &content);
        if let Some(length) = length {
            out[..4].copy_from_slice(&length.to_le_bytes());
        }
        out
    });
    let soup = (vec(frame, 0..12), vec(any::<u8>(), 0..8)).prop_map(|(frames, tail)| {
        let mut out = frames.concat();
        out.extend(tail);
        out
    });
    prop_oneof![3 => soup, 1 => vec(any::<u8>(), 0..200)]
}

/// A message of whole frames with codec-shaped contents (strings, fixed fields, markers), so
/// decoders get past their first frames.
fn frames_message() -> impl Strategy<Value = Vec<u8>> {
    let flags = prop_oneof![
        4 => Just(0u16),
        2 => Just(BEGIN_DATA_STRUCTURE),
        2 => Just(END_DATA_STRUCTURE),
        1 => Just(IS_NULL),
        1 => any::<u16>(),
    ];
    let content = prop_oneof![
        3 => "[a-z]{0,6}".prop_map(String::into_bytes),
        2 => vec(any::<u8>(), 0..40),
        1 => prop::sample::select(vec![4usize, 8, 17, 18, 80]).prop_map(|size| vec![0; size]),
    ];
    (vec(any::<u8>(), 0..64), vec((flags, content), 0..24)).prop_map(|(initial, frames)| {
        let mut out = Vec::new();
        write_frame(&mut out, UNFRAGMENTED, &initial);
        let mut last = 0;
        for (flags, content) in frames {
            last = out.len();
            write_frame(&mut out, flags, &content);
        }
        let flags = frame_header(&out, last).1 | IS_FINAL;
        set_flags(&mut out[last..], flags);
        out
    })
}

// ---------------------------------------------------------------------------------------
// Strategies for field values, and requests built from them.

fn text() -> impl Strategy<Value = String> {
    "(?s:.){0,10}"
}

fn blob() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..32)
}

fn uuid() -> impl Strategy<Value = Uuid> {
    any::<u128>().prop_map(Uuid::from_u128)
}

/// Trailing fixed fields are optional from the end: a later one is present only if the
/// earlier one is (the encoding cannot say "first absent, second present").
fn trailing_pair<A, B>() -> impl Strategy<Value = (Option<A>, Option<B>)>
where
    A: Arbitrary + Clone + std::fmt::Debug,
    B: Arbitrary + Clone + std::fmt::Debug,
{
    prop_oneof![
        Just((None, None)),
        any::<A>().prop_map(|a| (Some(a), None)),
        any::<(A, B)>().prop_map(|(a, b)| (Some(a), Some(b))),
    ]
}

#[derive(Debug, Clone)]
struct AuthenticationFields {
    uuid: Option<Uuid>,
    serialization_version: i8,
    trailing: (Option<i8>, Option<bool>),
    cluster_name: String,
    username: Option<String>,
    password: Option<String>,
    client_type: String,
    client_hazelcast_version: String,
    client_name: String,
    labels: Vec<String>,
}

/// A request with owned field values; [`Sample::view`] borrows them as the codec struct.
#[derive(Debug, Clone)]
enum Sample {
    Put { thread_id: i64, ttl: i64, name: String, key: Vec<u8>, value: Vec<u8> },
    Get { thread_id: i64, name: String, key: Vec<u8> },
    PutAll { trigger_map_loader: Option<bool>, name: String, entries: Vec<(Vec<u8>, Vec<u8>)> },
    Authentication(Box<AuthenticationFields>),
}

fn authentication_fields() -> impl Strategy<Value = AuthenticationFields> {
    let fixed = (proptest::option::of(uuid()), any::<i8>(), trailing_pair());
    let names = (text(), proptest::option::of(text()), proptest::option::of(text()));
    let client = (text(), text(), text(), vec(text(), 0..4));
    (fixed, names, client).prop_map(|(fixed, names, client)| AuthenticationFields {
        uuid: fixed.0,
        serialization_version: fixed.1,
        trailing: fixed.2,
        cluster_name: names.0,
        username: names.1,
        password: names.2,
        client_type: client.0,
        client_hazelcast_version: client.1,
        client_name: client.2,
        labels: client.3,
    })
}

fn sample() -> impl Strategy<Value = Sample> {
    prop_oneof![
        (any::<i64>(), any::<i64>(), text(), blob(), blob())
            .prop_map(|(thread_id, ttl, name, key, value)| Sample::Put { thread_id, ttl, name, key, value }),
        (any::<i64>(), text(), blob()).prop_map(|(thread_id, name, key)| Sample::Get { thread_id, name, key }),
        (any::<Option<bool>>(), text(), vec((blob(), blob()), 0..6))
            .prop_map(|(trigger_map_loader, name, entries)| Sample::PutAll { trigger_map_loader, name, entries }),
        authentication_fields().prop_map(|fields| Sample::Authentication(Box::new(fields))),
    ]
}

/// A sample with the header values it is sent with.
#[derive(Debug, Clone)]
struct Sent {
    sample: Sample,
    correlation_id: i64,
    partition_id: i32,
}

fn sent() -> impl Strategy<Value = Sent> {
    (sample(), any::<i64>(), -1i32..271).prop_map(|(sample, correlation_id, partition_id)| Sent {
        sample,
        correlation_id,
        partition_id,
    })
}

/// A sample borrowed as its codec struct.
#[derive(Debug)]
enum View<'a> {
    Put(MapPut<'a>),
    Get(MapGet<'a>),
    PutAll(MapPutAll<'a>),
    Authentication(ClientAuthentication<'a>),
}

impl Sample {
    fn view(&self) -> View<'_> {
        match self {
            Sample::Put { thread_id, ttl, name, key, value } => {
                View::Put(MapPut { thread_id: *thread_id, ttl: *ttl, name, key: Data(key), value: Data(value) })
            }
            Sample::Get { thread_id, name, key } => View::Get(MapGet { thread_id: *thread_id, name, key: Data(key) }),
            Sample::PutAll { trigger_map_loader, name, entries } => View::PutAll(MapPutAll {
                trigger_map_loader: *trigger_map_loader,
                name,
                entries: entries.iter().map(|(k, v)| (Data(k), Data(v))).collect(),
            }),
            Sample::Authentication(fields) => View::Authentication(fields.view()),
        }
    }
}

impl AuthenticationFields {
    fn view(&self) -> ClientAuthentication<'_> {
        ClientAuthentication {
            uuid: self.uuid,
            serialization_version: self.serialization_version,
            routing_mode: self.trailing.0,
            cp_direct_to_leader_routing: self.trailing.1,
            cluster_name: &self.cluster_name,
            username: self.username.as_deref(),
            password: self.password.as_deref(),
            client_type: &self.client_type,
            client_hazelcast_version: &self.client_hazelcast_version,
            client_name: &self.client_name,
            labels: self.labels.iter().map(String::as_str).collect(),
        }
    }
}

impl Sent {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let (correlation_id, partition_id) = (self.correlation_id, self.partition_id);
        let length = match self.sample.view() {
            View::Put(m) => m.encode(&mut out, correlation_id, partition_id, BACKUP_AWARE),
            View::Get(m) => m.encode(&mut out, correlation_id, partition_id, BACKUP_AWARE),
            View::PutAll(m) => m.encode(&mut out, correlation_id, partition_id, 0),
            View::Authentication(m) => m.encode(&mut out, correlation_id, partition_id, 0),
        };
        assert_eq!(length, out.len());
        out
    }

    /// `message` is this request: its header and, decoded with its codec, its fields.
    fn assert_is(&self, message: &Message<'_>) -> Result<(), TestCaseError> {
        prop_assert_eq!(message.correlation_id(), self.correlation_id);
        prop_assert_eq!(message.partition_id(), self.partition_id);
        match self.sample.view() {
            View::Put(expected) => {
                prop_assert_eq!(message.message_type(), MapPut::TYPE);
                prop_assert_eq!(MapPut::decode(message)?, expected);
            }
            View::Get(expected) => {
                prop_assert_eq!(message.message_type(), MapGet::TYPE);
                prop_assert_eq!(MapGet::decode(message)?, expected);
            }
            View::PutAll(expected) => {
                prop_assert_eq!(message.message_type(), MapPutAll::TYPE);
                prop_assert_eq!(MapPutAll::decode(message)?, expected);
            }
            View::Authentication(expected) => {
                prop_assert_eq!(message.message_type(), ClientAuthentication::TYPE);
                prop_assert_eq!(ClientAuthentication::decode(message)?, expected);
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Fragmentation (client-protocol.md §2.7).

/// Splits `message` before the frames at `cuts` (indices into its frames, at least one, none
/// zero) into pieces: a fragmentation frame (`id`; BEGIN_FRAGMENT on the first piece,
/// END_FRAGMENT on the last, 0 between), then that piece's frames, the last flagged IS_FINAL.
/// A sender following §2.7 clears the fragment bits of the real initial frame; one that
/// does not (`clear_initial_bits` false) is tolerated by the decoder too.
fn fragment(message: &[u8], id: i64, cuts: &[usize], clear_initial_bits: bool) -> Vec<Vec<u8>> {
    let mut frames: Vec<Vec<u8>> = split_frames(message)
        .expect("an encoded message is whole frames")
        .into_iter()
        .map(|(_, frame)| frame.to_vec())
        .collect();
    if clear_initial_bits {
        let flags = frame_header(&frames[0], 0).1 & !UNFRAGMENTED;
        set_flags(&mut frames[0], flags);
    }
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(frames.len());
    let last_piece = bounds.len() - 2;
    (0..=last_piece)
        .map(|index| {
            let mut flags = 0;
            if index == 0 {
                flags |= BEGIN_FRAGMENT;
            }
            if index == last_piece {
                flags |= END_FRAGMENT;
            }
            let mut piece = Vec::new();
            write_frame(&mut piece, flags, &id.to_le_bytes());
            let piece_frames = &frames[bounds[index]..bounds[index + 1]];
            let (last, whole) = piece_frames.split_last().expect("cuts are distinct");
            whole.iter().for_each(|frame| piece.extend_from_slice(frame));
            let at = piece.len();
            piece.extend_from_slice(last);
            let flags = frame_header(&piece, at).1 | IS_FINAL;
            set_flags(&mut piece[at..], flags);
            piece
        })
        .collect()
}

/// Distinct cut points in `1..frame_count` chosen by `picks` (at least one: every sampled
/// message has two frames or more).
fn cut_points(frame_count: usize, picks: &[Index]) -> Vec<usize> {
    let mut cuts: Vec<usize> = picks.iter().map(|pick| 1 + pick.index(frame_count - 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// What the sender put on the wire, piece by piece, and the messages the receiver must
/// produce, in the order their last piece arrives.
#[derive(Debug, Default)]
struct Interleaving {
    stream: Vec<u8>,
    expected: Vec<usize>,
}

/// Interleaves the pieces of several messages, taking the next piece of message
/// `choices[k] % count` (skipping finished ones) at step k.
fn interleave(pieces: &[Vec<Vec<u8>>], choices: &[usize]) -> Interleaving {
    let mut next = vec![0usize; pieces.len()];
    let mut out = Interleaving::default();
    let total: usize = pieces.iter().map(Vec::len).sum();
    for step in 0..total {
        let choice = choices.get(step).copied().unwrap_or(0);
        let message = (0..pieces.len())
            .map(|offset| (choice + offset) % pieces.len())
            .find(|&m| next[m] < pieces[m].len())
            .expect("a message has pieces left while steps remain");
        out.stream.extend_from_slice(&pieces[message][next[message]]);
        next[message] += 1;
        if next[message] == pieces[message].len() {
            out.expected.push(message);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// The stream decoder.

/// Mirrors the framing rule of §2.3 and the bounds of [`StreamLimits`]: the verdict on the
/// first message of `input`, reading only whole frame headers.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// A header crosses a limit: the decoder must error without waiting for more bytes.
    OverLimit,
    /// The first message ends at this offset (its IS_FINAL frame is complete).
    Complete(usize),
    /// Neither yet: more bytes are needed.
    Pending,
}

fn verdict(input: &[u8], limits: StreamLimits) -> Verdict {
    let mut offset = 0usize;
    while input.len() >= offset + FRAME_HEADER_SIZE {
        let (length, flags) = frame_header(input, offset);
        if length < FRAME_HEADER_SIZE as i32 || length as u32 > limits.max_frame_bytes {
            return Verdict::OverLimit;
        }
        let end = offset + length as usize;
        if end > limits.max_message_bytes as usize {
            return Verdict::OverLimit;
        }
        if input.len() < end {
            return Verdict::Pending;
        }
        if flags & IS_FINAL != 0 {
            return Verdict::Complete(end);
        }
        offset = end;
    }
    Verdict::Pending
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// Arbitrary bytes, arbitrarily chunked, under small or default limits: no panic, and
    /// the contract checks of `receive` hold; every message cut parses (unless its initial
    /// frame is too short for a header) and survives every codec.
    #[test]
    fn stream_decoder_survives_arbitrary_bytes(
        limits in any_limits(),
        stream in frame_soup(),
        chunk_lengths in chunking(),
    ) {
        let received = receive(limits, &stream, &chunk_lengths)?;
        for bytes in &received.messages {
            let header = ferrogrid_protocol::message::RequestHeader::peek(bytes);
            match Message::parse(bytes) {
                Ok(message) => {
                    decode_with_every_codec(&message);
                    // The header a reactor routes by is the one the parsed message holds.
                    if let Some(header) = header {
                        prop_assert_eq!(header.message_type, message.message_type());
                        prop_assert_eq!(header.correlation_id, message.correlation_id());
                        prop_assert_eq!(header.partition_id, message.partition_id());
                    } else {
                        prop_assert!(message.fixed(ferrogrid_protocol::message::REQUEST_HEADER_SIZE).is_err());
                    }
                }
                Err(error) => prop_assert!(
                    matches!(error, DecodeError::InitialFrameTooShort { .. }),
                    "{:?}",
                    error
                ),
            }
        }
    }

    /// One decode call on a fresh decoder agrees with the framing rule: it asks for more
    /// input only when no complete header crosses a limit, and it cuts (or absorbs) exactly
    /// the first message once that is complete.
    #[test]
    fn stream_decoder_errors_once_a_header_crosses_the_limits(
        limits in any_limits(),
        input in frame_soup(),
    ) {
        let decoded = StreamDecoder::new(limits).decode(&input);
        match verdict(&input, limits) {
            Verdict::OverLimit => prop_assert!(decoded.is_err(), "{:?}", decoded),
            Verdict::Pending => prop_assert_eq!(decoded, Ok(Decoded::NeedMore)),
            Verdict::Complete(end) => match decoded {
                Ok(Decoded::Message { length }) => prop_assert_eq!(length, end),
                Ok(Decoded::Absorbed { consumed }) => prop_assert_eq!(consumed, end),
                Ok(Decoded::Reassembled { consumed, .. }) => prop_assert_eq!(consumed, end),
                Ok(Decoded::NeedMore) => prop_assert!(false, "complete message, yet NeedMore"),
                // A first piece that is not a valid fragment (or exceeds pending limits).
                Err(error) => prop_assert!(
                    matches!(error, DecodeError::Fragment(_) | DecodeError::TooManyFragments(_)),
                    "{:?}",
                    error
                ),
            },
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whole frames within the limits, then a frame header whose length crosses the frame or
    /// the message limit, followed by only part of its content: the decoder errors now.
    #[test]
    fn rejects_a_frame_over_the_limits_before_its_content_arrives(
        limits in small_limits(),
        leading in vec(0usize..32, 0..4),
        excess in prop_oneof![1i64..64, Just(i64::from(i32::MAX))],
        crosses_message_limit in any::<bool>(),
        flags in any_flags(),
        arrived in 0usize..64,
    ) {
        let mut input = Vec::new();
        for content in leading {
            let length = FRAME_HEADER_SIZE + content;
            if length > limits.max_frame_bytes as usize
                || input.len() + length > limits.max_message_bytes as usize
            {
                continue;
            }
            let flags = if input.is_empty() { UNFRAGMENTED } else { 0 };
            write_frame(&mut input, flags, &vec![0; content]);
        }
        let room = if crosses_message_limit {
            i64::from(limits.max_message_bytes) - input.len() as i64
        } else {
            i64::from(limits.max_frame_bytes)
        };
        let length = (room + excess).clamp(FRAME_HEADER_SIZE as i64 + 1, i64::from(i32::MAX));
        let at = input.len();
        write_frame(&mut input, flags, &[]);
        input[at..at + 4].copy_from_slice(&(length as i32).to_le_bytes());
        let content_arrived = arrived.min(length as usize - FRAME_HEADER_SIZE - 1);
        input.extend(vec![0xA5; content_arrived]);
        let decoded = StreamDecoder::new(limits).decode(&input);
        prop_assert!(
            matches!(
                decoded,
                Err(DecodeError::FrameTooLong { .. } | DecodeError::MessageTooLong { .. })
            ),
            "{:?}",
            decoded
        );
    }

    /// Valid requests, sent back to back and arriving in arbitrary chunks, come out whole,
    /// in order, byte for byte, and decode to the values sent.
    #[test]
    fn chunked_messages_arrive_whole_and_in_order(
        sent in vec(sent(), 1..6),
        chunk_lengths in chunking(),
    ) {
        let encoded: Vec<Vec<u8>> = sent.iter().map(Sent::encode).collect();
        let received = receive(StreamLimits::default(), &encoded.concat(), &chunk_lengths)?;
        prop_assert_eq!(received.error, None);
        prop_assert_eq!(&received.messages, &encoded);
        for (request, bytes) in sent.iter().zip(&received.messages) {
            request.assert_is(&Message::parse(bytes)?)?;
        }
    }

    /// Two requests split into fragments whose pieces interleave, with an unfragmented
    /// request among them, arriving in arbitrary chunks, under limits that allow exactly two
    /// messages in reassembly: all three come out, each when its last piece arrives. A
    /// reassembled message is the original frames with no IS_FINAL but on the last frame;
    /// its initial frame keeps the flags the sender gave it. It parses and decodes to the
    /// values sent.
    #[test]
    fn interleaved_fragments_reassemble_both_messages(
        sent in [sent(), sent(), sent()],
        ids in (any::<i64>(), any::<i64>()).prop_filter("distinct ids", |(a, b)| a != b),
        cuts in [vec(any::<Index>(), 1..5), vec(any::<Index>(), 1..5)],
        clear_initial_bits in any::<bool>(),
        choices in vec(0usize..3, 0..12),
        chunk_lengths in chunking(),
    ) {
        let encoded: Vec<Vec<u8>> = sent.iter().map(Sent::encode).collect();
        let mut originals = encoded.clone();
        let mut pieces = Vec::new();
        for (index, id) in [ids.0, ids.1].into_iter().enumerate() {
            let frame_count = split_frames(&encoded[index]).expect("whole frames").len();
            let cuts = cut_points(frame_count, &cuts[index]);
            pieces.push(fragment(&encoded[index], id, &cuts, clear_initial_bits));
            if clear_initial_bits {
                let flags = frame_header(&originals[index], 0).1 & !UNFRAGMENTED;
                set_flags(&mut originals[index], flags);
            }
        }
        pieces.push(vec![encoded[2].clone()]);
        let interleaving = interleave(&pieces, &choices);
        let limits = StreamLimits { max_pending_fragmented: 2, ..StreamLimits::default() };
        let received = receive(limits, &interleaving.stream, &chunk_lengths)?;
        prop_assert_eq!(received.error, None);
        let expected: Vec<&Vec<u8>> = interleaving.expected.iter().map(|&m| &originals[m]).collect();
        prop_assert_eq!(received.messages.iter().collect::<Vec<_>>(), expected);
        for (&index, bytes) in interleaving.expected.iter().zip(&received.messages) {
            sent[index].assert_is(&Message::parse(bytes)?)?;
        }
    }
}

/// Reassembly costs time linear in the bytes received, however small the pieces: a peer
/// sending a message as many one-frame pieces must not make the decoder rescan what it has
/// already buffered for every piece. (It did: 80 000 pieces, 1.6 MB, took 21 s in release.)
/// The bound is loose: linear work is a few milliseconds here even in a debug build.
#[test]
fn many_small_pieces_reassemble_with_linear_work() {
    const PIECES: usize = 50_000;
    let mut decoder = StreamDecoder::default();
    let mut piece = Vec::new();
    let mut reassembled = None;
    for index in 0..PIECES {
        piece.clear();
        let flags = match index {
            0 => BEGIN_FRAGMENT,
            _ if index == PIECES - 1 => END_FRAGMENT,
            _ => 0,
        };
        write_frame(&mut piece, flags, &7i64.to_le_bytes());
        write_frame(&mut piece, IS_FINAL, &[]);
        match decoder.decode(&piece) {
            Ok(Decoded::Absorbed { consumed }) => assert_eq!(consumed, piece.len()),
            Ok(Decoded::Reassembled { message, .. }) => reassembled = Some(message),
            other => panic!("piece {index}: {other:?}"),
        }
    }
    let message = reassembled.expect("the last piece completes the message");
    let frames = split_frames(&message).expect("whole frames");
    assert_eq!(frames.len(), PIECES);
    assert!(frames.iter().rev().skip(1).all(|(flags, _)| flags & IS_FINAL == 0));
    // Linear work: each piece's two frames are read a bounded number of times.
    let examined = decoder.frames_examined();
    assert!(examined <= 4 * 2 * PIECES as u64, "{examined} frame headers read for {PIECES} pieces");
}

// ---------------------------------------------------------------------------------------
// Codecs.

/// Encodes `$value` with `encode($argument, …)`, then checks that the bytes are one whole
/// message with the given type and correlation id, and that `$codec` decodes them back to
/// `$value`.
macro_rules! assert_round_trip {
    ($codec:ident, $value:expr, $message_type:expr, $correlation_id:expr; $($argument:expr),*) => {{
        let value = $value;
        let mut bytes = Vec::new();
        let length = value.encode(&mut bytes, $($argument),*);
        prop_assert_eq!(length, bytes.len());
        assert_cut_whole(&bytes)?;
        let message = Message::parse(&bytes)?;
        prop_assert_eq!(message.message_type(), $message_type);
        prop_assert_eq!(message.correlation_id(), $correlation_id);
        prop_assert_eq!(&$codec::decode(&message)?, &value);
    }};
}

#[derive(Debug, Clone)]
struct OwnedAddress {
    host: String,
    port: i32,
}

impl OwnedAddress {
    fn view(&self) -> Address<'_> {
        Address { host: &self.host, port: self.port }
    }
}

fn address() -> impl Strategy<Value = OwnedAddress> {
    (text(), any::<i32>()).prop_map(|(host, port)| OwnedAddress { host, port })
}

#[derive(Debug, Clone)]
struct OwnedMember {
    uuid: Uuid,
    lite_member: bool,
    address: OwnedAddress,
    attributes: Vec<(String, String)>,
    version: MemberVersion,
    address_map: Vec<(i32, Option<String>, OwnedAddress)>,
}

fn member() -> impl Strategy<Value = OwnedMember> {
    let version = any::<(i8, i8, i8)>().prop_map(|(major, minor, patch)| MemberVersion { major, minor, patch });
    let qualified = (any::<i32>(), proptest::option::of(text()), address());
    ((uuid(), any::<bool>(), address()), vec((text(), text()), 0..3), version, vec(qualified, 0..3)).prop_map(
        |(fixed, attributes, version, address_map)| OwnedMember {
            uuid: fixed.0,
            lite_member: fixed.1,
            address: fixed.2,
            attributes,
            version,
            address_map,
        },
    )
}

impl OwnedMember {
    fn view(&self) -> MemberInfo<'_> {
        MemberInfo {
            uuid: self.uuid,
            lite_member: self.lite_member,
            address: self.address.view(),
            attributes: pairs(&self.attributes),
            version: self.version,
            address_map: self
                .address_map
                .iter()
                .map(|(endpoint_type, identifier, address)| {
                    let qualifier =
                        EndpointQualifier { endpoint_type: *endpoint_type, identifier: identifier.as_deref() };
                    (qualifier, address.view())
                })
                .collect(),
        }
    }
}

fn pairs(owned: &[(String, String)]) -> Vec<(&str, &str)> {
    owned.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn partition_table() -> impl Strategy<Value = PartitionTable> {
    vec((uuid(), vec(any::<i32>(), 0..6)), 0..4).prop_map(PartitionTable)
}

fn entry_view_fields() -> impl Strategy<Value = Option<([i64; 10], Vec<u8>, Vec<u8>)>> {
    proptest::option::of((any::<[i64; 10]>(), blob(), blob()))
}

fn entry_view(fields: &([i64; 10], Vec<u8>, Vec<u8>)) -> EntryView<'_> {
    let ([cost, creation, expiration, hits, access, stored, update, version, ttl, idle], key, value) = fields;
    EntryView {
        key: Data(key),
        value: Data(value),
        cost: *cost,
        creation_time: *creation,
        expiration_time: *expiration,
        hits: *hits,
        last_access_time: *access,
        last_stored_time: *stored,
        last_update_time: *update,
        version: *version,
        ttl: *ttl,
        max_idle: *idle,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// MapPut, MapGet, MapPutAll and ClientAuthentication with arbitrary fields.
    #[test]
    fn sampled_requests_round_trip(sent in sent()) {
        let bytes = sent.encode();
        assert_cut_whole(&bytes)?;
        sent.assert_is(&Message::parse(&bytes)?)?;
    }

    #[test]
    fn client_requests_round_trip(
        fixed in (proptest::option::of(uuid()), any::<i8>(), trailing_pair::<i8, bool>()),
        strings in [text(), text(), text(), text()],
        labels in vec(text(), 0..3),
        credentials in blob(),
        proxies in vec((text(), text()), 0..4),
        timestamp in any::<i64>(),
        correlation_id in any::<i64>(),
    ) {
        let custom = ClientAuthenticationCustom {
            uuid: fixed.0,
            serialization_version: fixed.1,
            routing_mode: fixed.2.0,
            cp_direct_to_leader_routing: fixed.2.1,
            cluster_name: &strings[0],
            credentials: Bytes(&credentials),
            client_type: &strings[1],
            client_hazelcast_version: &strings[2],
            client_name: &strings[3],
            labels: labels.iter().map(String::as_str).collect(),
        };
        let custom_type = ClientAuthenticationCustom::TYPE;
        assert_round_trip!(ClientAuthenticationCustom, custom, custom_type, correlation_id; correlation_id, -1, 0);
        let statistics = ClientStatistics {
            timestamp,
            client_attributes: &strings[0],
            metrics_blob: Bytes(&credentials),
        };
        let statistics_type = ClientStatistics::TYPE;
        assert_round_trip!(ClientStatistics, statistics, statistics_type, correlation_id; correlation_id, -1, 0);
        let create = ClientCreateProxies { proxies: pairs(&proxies) };
        let create_type = ClientCreateProxies::TYPE;
        assert_round_trip!(ClientCreateProxies, create, create_type, correlation_id; correlation_id, -1, 0);
    }

    #[test]
    fn query_messages_round_trip(
        name in text(),
        blobs in vec(blob(), 1..5),
        fixed in (any::<i32>(), any::<i32>(), any::<i8>()),
        nulls in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        attributes in vec(text(), 0..3),
        correlation_id in any::<i64>(),
    ) {
        let data = |index: usize| Data(&blobs[index % blobs.len()]);
        let maybe = |null: bool, index: usize| (!null).then(|| data(index));
        let pages = Packed((0..blobs.len() as i32).collect());
        let anchors = AnchorList { pages, anchors: (0..blobs.len()).map(|i| (data(i), data(i + 1))).collect() };
        let holder = PagingPredicateHolder {
            page_size: fixed.0,
            page: fixed.1,
            iteration_type: fixed.2,
            anchors: anchors.clone(),
            predicate: maybe(nulls.0, 0),
            comparator: maybe(nulls.1, 1),
            partition_key: maybe(nulls.2, 2),
            partition_keys: (!nulls.3).then(|| blobs.iter().map(|blob| Data(blob)).collect()),
        };
        let request = MapEntriesWithPagingPredicate { name: &name, predicate: holder };
        let ty = MapEntriesWithPagingPredicate::TYPE;
        assert_round_trip!(MapEntriesWithPagingPredicate, request, ty, correlation_id; correlation_id, -1, 0);
        let index = IndexConfig {
            index_type: fixed.0,
            name: (!nulls.0).then_some(name.as_str()),
            attributes: attributes.iter().map(String::as_str).collect(),
            bitmap: (!nulls.1).then_some((name.as_str(), fixed.1)),
        };
        let add = MapAddIndex { name: &name, index };
        assert_round_trip!(MapAddIndex, add, MapAddIndex::TYPE, correlation_id; correlation_id, -1, 0);
        let aggregate = MapAggregateWithPredicate { name: &name, aggregator: data(0), predicate: data(1) };
        let ty = MapAggregateWithPredicate::TYPE;
        assert_round_trip!(MapAggregateWithPredicate, aggregate, ty, correlation_id; correlation_id, -1, 0);
        let page = EntryListPageResponse { response: anchors.anchors.clone(), anchors: anchors.clone() };
        let ty = MapEntriesWithPagingPredicate::TYPE.response();
        assert_round_trip!(EntryListPageResponse, page, ty, correlation_id; ty, correlation_id, 0);
        let projected = NullableDataListResponse { response: (0..blobs.len()).map(|i| maybe(i % 2 == 0, i)).collect() };
        let ty = MapProject::TYPE.response();
        assert_round_trip!(NullableDataListResponse, projected, ty, correlation_id; ty, correlation_id, 0);
    }

    #[test]
    fn schema_messages_round_trip(
        schemas in vec((text(), vec((text(), any::<i32>()), 0..5)), 0..4),
        members in vec(proptest::option::of(uuid()), 0..4),
        schema_id in any::<i64>(),
        correlation_id in any::<i64>(),
    ) {
        let wire: Vec<CompactSchema<'_>> = schemas
            .iter()
            .map(|(type_name, fields)| CompactSchema {
                type_name,
                fields: fields.iter().map(|(name, kind)| SchemaField { name, kind: *kind }).collect(),
            })
            .collect();
        let all = ClientSendAllSchemas { schemas: wire.clone() };
        assert_round_trip!(ClientSendAllSchemas, all, ClientSendAllSchemas::TYPE, correlation_id; correlation_id, -1, 0);
        let fetch = ClientFetchSchema { schema_id };
        assert_round_trip!(ClientFetchSchema, fetch, ClientFetchSchema::TYPE, correlation_id; correlation_id, -1, 0);
        let fetched = SchemaResponse { schema: wire.first().cloned() };
        let response_type = ClientFetchSchema::TYPE.response();
        assert_round_trip!(SchemaResponse, fetched, response_type, correlation_id; response_type, correlation_id, 0);
        if let Some(schema) = wire.first() {
            let send = ClientSendSchema { schema: schema.clone() };
            assert_round_trip!(ClientSendSchema, send, ClientSendSchema::TYPE, correlation_id; correlation_id, -1, 0);
        }
        let replicated = SchemaReplicatedResponse { replicated_members: Packed(members) };
        let response_type = ClientSendSchema::TYPE.response();
        assert_round_trip!(SchemaReplicatedResponse, replicated, response_type, correlation_id; response_type, correlation_id, 0);
    }

    #[test]
    fn xa_transaction_messages_round_trip(
        xids in vec((any::<i32>(), blob(), blob()), 1..4),
        timeout in any::<i64>(),
        is_commit in any::<bool>(),
        txn in proptest::option::of(uuid()),
        correlation_id in any::<i64>(),
    ) {
        let wire: Vec<Xid<'_>> = xids
            .iter()
            .map(|(format_id, global, branch)| Xid { format_id: *format_id, global_transaction_id: global, branch_qualifier: branch })
            .collect();
        let xid = wire[0];
        let create = XATransactionCreate { timeout, xid };
        assert_round_trip!(XATransactionCreate, create, XATransactionCreate::TYPE, correlation_id; correlation_id, -1, 0);
        let finalize = XATransactionFinalize { is_commit, xid };
        assert_round_trip!(XATransactionFinalize, finalize, XATransactionFinalize::TYPE, correlation_id; correlation_id, 7, 0);
        let clear = XATransactionClearRemote { xid };
        assert_round_trip!(XATransactionClearRemote, clear, XATransactionClearRemote::TYPE, correlation_id; correlation_id, 7, 0);
        let commit = XATransactionCommit { transaction_id: txn, one_phase: is_commit };
        assert_round_trip!(XATransactionCommit, commit, XATransactionCommit::TYPE, correlation_id; correlation_id, -1, 0);
        let collected = XidListResponse { response: wire.clone() };
        let response_type = XATransactionCollectTransactions::RESPONSE;
        assert_round_trip!(XidListResponse, collected, response_type, correlation_id; response_type, correlation_id, 0);
    }

    #[test]
    fn cache_events_and_a_config_holder_round_trip(
        events in vec((proptest::option::of(blob()), proptest::option::of(blob()), proptest::option::of(blob()), any::<bool>()), 1..4),
        name in text(),
        (event_type, completion_id, partition_id) in (any::<i32>(), any::<i32>(), any::<i32>()),
        correlation_id in any::<i64>(),
    ) {
        let keys: Vec<CacheEventData<'_>> = events
            .iter()
            .map(|(key, value, old_value, old_value_available)| CacheEventData {
                name: &name,
                event_type,
                key: key.as_deref().map(Data),
                value: value.as_deref().map(Data),
                old_value: old_value.as_deref().map(Data),
                old_value_available: *old_value_available,
            })
            .collect();
        let event = CacheEvent { event_type, completion_id, keys };
        assert_round_trip!(CacheEvent, event, CacheEvent::TYPE, correlation_id; correlation_id, partition_id);
    }

    #[test]
    fn query_cache_messages_round_trip(
        events in vec((proptest::option::of(blob()), proptest::option::of(blob()), any::<i64>(), any::<i32>()), 1..4),
        (map, cache) in (text(), text()),
        predicate in blob(),
        fixed in (any::<i32>(), any::<i32>(), any::<i64>(), any::<bool>(), any::<bool>()),
        partition_id in any::<i32>(),
        correlation_id in any::<i64>(),
    ) {
        let (batch_size, buffer_size, delay_seconds, populate, coalesce) = fixed;
        let wire: Vec<QueryCacheEventData<'_>> = events
            .iter()
            .map(|(key, value, sequence, event_type)| QueryCacheEventData {
                key: key.as_deref().map(Data),
                value: value.as_deref().map(Data),
                sequence: *sequence,
                event_type: *event_type,
                partition_id,
                map_name: &map,
            })
            .collect();
        let predicate = Data(&predicate);
        let create = ContinuousQueryPublisherCreateWithValue {
            batch_size, buffer_size, delay_seconds, populate, coalesce, map_name: &map, cache_name: &cache, predicate,
        };
        assert_round_trip!(ContinuousQueryPublisherCreateWithValue, create, ContinuousQueryPublisherCreateWithValue::TYPE, correlation_id; correlation_id, -1, 0);
        let keys = ContinuousQueryPublisherCreate {
            batch_size, buffer_size, delay_seconds, populate, coalesce, map_name: &map, cache_name: &cache, predicate,
        };
        assert_round_trip!(ContinuousQueryPublisherCreate, keys, ContinuousQueryPublisherCreate::TYPE, correlation_id; correlation_id, -1, 0);
        let cursor = ContinuousQuerySetReadCursor { sequence: delay_seconds, map_name: &map, cache_name: &cache };
        assert_round_trip!(ContinuousQuerySetReadCursor, cursor, ContinuousQuerySetReadCursor::TYPE, correlation_id; correlation_id, partition_id, 0);
        let single = QueryCacheSingleEvent { data: wire[0].clone() };
        assert_round_trip!(QueryCacheSingleEvent, single, QueryCacheSingleEvent::TYPE, correlation_id; correlation_id, partition_id);
        let batch = QueryCacheBatchEvent { partition_id, events: wire.clone(), source: &cache };
        assert_round_trip!(QueryCacheBatchEvent, batch, QueryCacheBatchEvent::TYPE, correlation_id; correlation_id, partition_id);
    }

    #[test]
    fn authentication_response_round_trips(
        fixed in (any::<u8>(), proptest::option::of(uuid()), any::<i8>(), any::<i32>(),
            proptest::option::of(uuid()), any::<bool>(), trailing_pair::<i32, i32>()),
        address in proptest::option::of(address()),
        version in text(),
        tpc in (proptest::option::of(vec(any::<i32>(), 0..4)), proptest::option::of(blob())),
        members in vec(member(), 0..3),
        partitions in partition_table(),
        key_value_pairs in vec((text(), text()), 0..3),
        backup_acks in any::<u8>(),
        correlation_id in any::<i64>(),
    ) {
        let response = AuthenticationResponse {
            status: fixed.0,
            member_uuid: fixed.1,
            serialization_version: fixed.2,
            partition_count: fixed.3,
            cluster_id: fixed.4,
            failover_supported: fixed.5,
            member_list_version: fixed.6.0,
            partition_list_version: fixed.6.1,
            address: address.as_ref().map(OwnedAddress::view),
            server_hazelcast_version: &version,
            tpc_ports: tpc.0.map(Packed),
            tpc_token: tpc.1.as_deref().map(Bytes),
            member_infos: members.iter().map(OwnedMember::view).collect(),
            partitions,
            key_value_pairs: pairs(&key_value_pairs),
        };
        let response_type = ClientAuthentication::RESPONSE;
        assert_round_trip!(AuthenticationResponse, response, response_type, correlation_id;
            response_type, correlation_id, backup_acks);
    }

    #[test]
    fn cluster_view_events_round_trip(
        version in any::<i32>(),
        members in vec(member(), 0..3),
        partitions in partition_table(),
        groups in vec(vec(proptest::option::of(uuid()), 0..4), 0..3),
        cluster_version in any::<(i8, i8)>(),
        source in any::<i64>(),
        correlation_id in any::<i64>(),
        partition_id in -1i32..271,
    ) {
        let members_view = MembersViewEvent {
            version,
            member_infos: members.iter().map(OwnedMember::view).collect(),
        };
        assert_round_trip!(MembersViewEvent, members_view, MembersViewEvent::TYPE, correlation_id;
            correlation_id, partition_id);
        let partitions_view = PartitionsViewEvent { version, partitions };
        assert_round_trip!(PartitionsViewEvent, partitions_view, PartitionsViewEvent::TYPE,
            correlation_id; correlation_id, partition_id);
        let groups_view = MemberGroupsViewEvent {
            version,
            member_groups: groups.into_iter().map(Packed).collect(),
        };
        assert_round_trip!(MemberGroupsViewEvent, groups_view, MemberGroupsViewEvent::TYPE,
            correlation_id; correlation_id, partition_id);
        let (major, minor) = cluster_version;
        let cluster = ClusterVersionEvent { version: ClusterVersion { major, minor } };
        assert_round_trip!(ClusterVersionEvent, cluster, ClusterVersionEvent::TYPE, correlation_id;
            correlation_id, partition_id);
        let backup = BackupEvent { source_invocation_correlation_id: source };
        assert_round_trip!(BackupEvent, backup, BackupEvent::TYPE, correlation_id;
            correlation_id, partition_id);
        let lost = PartitionLostEvent { partition_id, lost_backup_count: minor as i32, source: Some(Uuid::from_u128(source as u128)) };
        assert_round_trip!(PartitionLostEvent, lost, PartitionLostEvent::TYPE, correlation_id;
            correlation_id, partition_id);
        let map_lost = MapPartitionLostEvent { partition_id, uuid: Some(Uuid::from_u128(source as u128)) };
        assert_round_trip!(MapPartitionLostEvent, map_lost, MapPartitionLostEvent::TYPE, correlation_id;
            correlation_id, partition_id);
    }

    #[test]
    fn map_responses_round_trip(
        max_idle in any::<i64>(),
        view_fields in entry_view_fields(),
        value in proptest::option::of(blob()),
        entries in vec((blob(), blob()), 0..5),
        objects in vec((text(), text()), 0..4),
        flag in any::<Option<bool>>(),
        uuid_value in proptest::option::of(uuid()),
        backup_acks in any::<u8>(),
        correlation_id in any::<i64>(),
    ) {
        let get_view = MapGetEntryView::RESPONSE;
        let view = EntryViewResponse { max_idle, response: view_fields.as_ref().map(entry_view) };
        assert_round_trip!(EntryViewResponse, view, get_view, correlation_id;
            get_view, correlation_id, backup_acks);
        let get = MapGet::RESPONSE;
        let nullable = NullableDataResponse { response: value.as_deref().map(Data) };
        assert_round_trip!(NullableDataResponse, nullable, get, correlation_id;
            get, correlation_id, backup_acks);
        let entry_set = MapEntrySet::RESPONSE;
        let listed = EntryListResponse {
            response: entries.iter().map(|(k, v)| (Data(k), Data(v))).collect(),
        };
        assert_round_trip!(EntryListResponse, listed, entry_set, correlation_id;
            entry_set, correlation_id, backup_acks);
        let delete = MapDelete::RESPONSE;
        assert_round_trip!(DeleteResponse, DeleteResponse { response: flag }, delete, correlation_id;
            delete, correlation_id, backup_acks);
        let listener = ClientLocalBackupListener::RESPONSE;
        assert_round_trip!(UuidResponse, UuidResponse { response: uuid_value }, listener,
            correlation_id; listener, correlation_id, backup_acks);
        let objects_type = ClientGetDistributedObjects::RESPONSE;
        let distributed = DistributedObjectsResponse {
            response: objects
                .iter()
                .map(|(service_name, name)| DistributedObjectInfo { service_name, name })
                .collect(),
        };
        assert_round_trip!(DistributedObjectsResponse, distributed, objects_type, correlation_id;
            objects_type, correlation_id, backup_acks);
    }

    #[test]
    fn near_cache_metadata_codecs_round_trip(
        names in prop::collection::vec(text(), 0..4),
        member in uuid(),
        pairs in prop::collection::vec(any::<(i32, i64)>(), 0..8),
        uuids in prop::collection::vec((any::<i32>(), prop::option::of(uuid())), 0..8),
        correlation_id in any::<i64>(),
        backup_acks in any::<u8>(),
    ) {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let request = MapFetchNearCacheInvalidationMetadata { uuid: Some(member), names: names.clone() };
        let request_type = MapFetchNearCacheInvalidationMetadata::TYPE;
        assert_round_trip!(MapFetchNearCacheInvalidationMetadata, request, request_type, correlation_id;
            correlation_id, -1, 0);
        let name_partition_sequence_list = names.iter().map(|name| (*name, Packed(pairs.clone()))).collect();
        let response = MapFetchNearCacheInvalidationMetadataResponse {
            name_partition_sequence_list,
            partition_uuid_list: Packed(uuids),
        };
        let response_type = MapFetchNearCacheInvalidationMetadata::RESPONSE;
        assert_round_trip!(MapFetchNearCacheInvalidationMetadataResponse, response, response_type, correlation_id;
            response_type, correlation_id, backup_acks);
    }

    #[test]
    fn flake_id_codecs_round_trip(
        name in text(),
        batch in any::<(i64, i64, i32)>(),
        correlation_id in any::<i64>(),
        backup_acks in any::<u8>(),
    ) {
        let (base, increment, batch_size) = batch;
        let request = FlakeIdGeneratorNewIdBatch { batch_size, name: &name };
        let request_type = FlakeIdGeneratorNewIdBatch::TYPE;
        assert_round_trip!(FlakeIdGeneratorNewIdBatch, request, request_type, correlation_id;
            correlation_id, -1, 0);
        let response = FlakeIdGeneratorNewIdBatchResponse { base, increment, batch_size };
        let response_type = FlakeIdGeneratorNewIdBatch::RESPONSE;
        assert_round_trip!(FlakeIdGeneratorNewIdBatchResponse, response, response_type, correlation_id;
            response_type, correlation_id, backup_acks);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn lock_and_listener_codecs_round_trip(
        numbers in any::<(i64, i64, i64, i64)>(),
        listener in any::<(bool, i32, bool)>(),
        event in (any::<i32>(), proptest::option::of(uuid()), any::<i32>()),
        blobs in [proptest::option::of(blob()), proptest::option::of(blob()),
            proptest::option::of(blob()), proptest::option::of(blob())],
        name in text(),
        key in blob(),
        correlation_id in any::<i64>(),
        partition_id in -1i32..271,
    ) {
        let (thread_id, lease, timeout, reference_id) = numbers;
        let try_lock = MapTryLock { thread_id, lease, timeout, reference_id, name: &name, key: Data(&key) };
        assert_round_trip!(MapTryLock, try_lock, MapTryLock::TYPE, correlation_id;
            correlation_id, partition_id, BACKUP_AWARE);
        let (include_value, listener_flags, local_only) = listener;
        let add = MapAddEntryListenerToKeyWithPredicate {
            include_value, listener_flags, local_only, name: &name, key: Data(&key), predicate: Data(&key),
        };
        let add_type = MapAddEntryListenerToKeyWithPredicate::TYPE;
        assert_round_trip!(MapAddEntryListenerToKeyWithPredicate, add, add_type, correlation_id;
            correlation_id, -1, 0);
        let event_type = MessageType(add_type.0 | 2);
        let [key, value, old_value, merging_value] = &blobs;
        let entry = EntryEvent {
            event_type: event.0,
            uuid: event.1,
            number_of_affected_entries: event.2,
            key: key.as_deref().map(Data),
            value: value.as_deref().map(Data),
            old_value: old_value.as_deref().map(Data),
            merging_value: merging_value.as_deref().map(Data),
        };
        assert_round_trip!(EntryEvent, entry, event_type, correlation_id;
            event_type, correlation_id, partition_id);
    }
}

// ---------------------------------------------------------------------------------------
// Codecs on hostile input.

/// One edit of a valid message's bytes.
#[derive(Debug, Clone)]
enum Mutation {
    Overwrite(Index, u8),
    SetFlags(Index, u16),
    DropFrame(Index),
    DuplicateFrame(Index),
    Truncate(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Overwrite(at, byte)),
        (any::<Index>(), any_flags()).prop_map(|(at, flags)| Mutation::SetFlags(at, flags)),
        any::<Index>().prop_map(Mutation::DropFrame),
        any::<Index>().prop_map(Mutation::DuplicateFrame),
        any::<Index>().prop_map(Mutation::Truncate),
    ]
}

/// Applies `mutation`; frame-wise edits apply only while `bytes` is still whole frames.
fn mutate(bytes: &mut Vec<u8>, mutation: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let frames: Option<Vec<(usize, usize)>> = split_frames(bytes).map(|frames| {
        let mut start = 0;
        frames
            .iter()
            .map(|(_, frame)| {
                start += frame.len();
                (start - frame.len(), frame.len())
            })
            .collect()
    });
    let frame = |at: &Index| frames.as_ref().map(|frames| frames[at.index(frames.len())]);
    match mutation {
        Mutation::Overwrite(at, byte) => {
            let at = at.index(bytes.len());
            bytes[at] = *byte;
        }
        Mutation::SetFlags(at, flags) => {
            if let Some((start, _)) = frame(at) {
                set_flags(&mut bytes[start..], *flags);
            }
        }
        Mutation::DropFrame(at) => {
            if let Some((start, length)) = frame(at) {
                bytes.drain(start..start + length);
            }
        }
        Mutation::DuplicateFrame(at) => {
            if let Some((start, length)) = frame(at) {
                let copy = bytes[start..start + length].to_vec();
                bytes.splice(start..start, copy);
            }
        }
        Mutation::Truncate(at) => {
            let at = at.index(bytes.len());
            bytes.truncate(at);
        }
    }
}

#[derive(serde::Deserialize)]
struct Captured {
    hex: String,
}

/// The captured messages (`tests/fixtures/`), decoded once for all cases.
fn captured_messages() -> &'static [Vec<u8>] {
    static MESSAGES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    MESSAGES.get_or_init(|| {
        let text = include_str!("fixtures/captured-messages.json");
        let records: Vec<Captured> = serde_json::from_str(text).expect("fixture parses");
        records.iter().map(|record| hex::decode(&record.hex).expect("fixture hex")).collect()
    })
}

/// Parses `bytes` and, if that succeeds, decodes them with every codec.
fn parse_and_decode_all(bytes: &[u8]) {
    if let Ok(message) = Message::parse(bytes) {
        decode_with_every_codec(&message);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_codec_survives_arbitrary_bytes(bytes in frame_soup()) {
        parse_and_decode_all(&bytes);
    }

    #[test]
    fn every_codec_survives_arbitrary_frames(bytes in frames_message()) {
        parse_and_decode_all(&bytes);
    }

    /// Captured and sampled messages, edited: bytes overwritten, flags changed, frames dropped
    /// or duplicated, the end cut off. These reach deep into nested structures.
    #[test]
    fn every_codec_survives_mutated_messages(
        pick in any::<Index>(),
        sent in sent(),
        mutations in vec(mutation(), 1..5),
    ) {
        let corpus = captured_messages();
        let mut bytes = match pick.index(corpus.len() + 1) {
            index if index < corpus.len() => corpus[index].clone(),
            _ => sent.encode(),
        };
        for mutation in &mutations {
            mutate(&mut bytes, mutation);
        }
        parse_and_decode_all(&bytes);
    }

    /// Whatever the blob (explicit hash included, `i32::MIN` too) and the partition count.
    #[test]
    fn partition_is_below_the_partition_count(
        hash in prop_oneof![Just(None), Just(Some(i32::MIN)), any::<i32>().prop_map(Some)],
        mut blob in vec(any::<u8>(), 0..64),
        partition_count in 1u16..=10_000,
    ) {
        if let (Some(hash), Some(header)) = (hash, blob.get_mut(..4)) {
            header.copy_from_slice(&hash.to_be_bytes());
        }
        prop_assert!(partition_for(Data(&blob), partition_count).0 < partition_count);
    }
}

/// The codec list the property tests and fuzz targets use is the whole `messages!` table.
#[test]
fn every_codec_in_the_table_is_exercised() {
    let mut declared: Vec<&str> = [include_str!("../src/codec.rs"), include_str!("../src/codec/cache.rs")]
        .into_iter()
        .map(|source| source.split_once("\nmessages! {").expect("the file invokes messages!").1)
        .flat_map(str::lines)
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let kind = words.next()?;
            let name = words.next()?;
            ["Request", "Response", "Event"].contains(&kind).then(|| name.split(['<', '{']).next().unwrap_or(name))
        })
        .collect();
    let mut exercised = every_codec_name();
    declared.sort_unstable();
    exercised.sort_unstable();
    assert_eq!(declared, exercised);
    assert!(declared.len() > 50, "found the table: {declared:?}");
}

/// A paging query as the Python client 5.7 writes it (protocol 2.x before partitionKeysData:
/// the holder ends after its partition key).
#[test]
fn a_paging_holder_without_partition_keys_decodes() {
    let bytes = hex::decode("1600000000c0003501000000000000000000ffffffff08000000000070670600000000100f000000000007000000000000000206000000001006000000000006000000001006000000000806000000000829000000000000000000fffffffe01ffffffec000000040000000474686973fffffff9000000090000060000000004060000000004060000000028").unwrap();
    let message = Message::parse(&bytes).unwrap();
    let request = MapValuesWithPagingPredicate::decode(&message).unwrap();
    assert_eq!(request.name, "pg");
    let holder = request.predicate;
    assert_eq!((holder.page_size, holder.page, holder.iteration_type), (7, 0, 2));
    assert!(holder.anchors.anchors.is_empty() && holder.comparator.is_none() && holder.partition_key.is_none());
    assert!(holder.predicate.is_some() && holder.partition_keys.is_none());
}
