//! Reading and writing one message's frames.
//!
//! [`Message`] is a view over a complete message's bytes (as cut by the stream decoder).
//! [`MessageReader`] walks its frames after the initial one; [`FixedReader`] reads the packed
//! fixed-size fields of an initial frame or struct frame. [`MessageWriter`] appends a message
//! to an output buffer frame by frame, patching lengths in place: no intermediate allocation.

use crate::data::Data;
use crate::frame::*;
use crate::types::{MessageType, Uuid};

/// Request and event headers: type, correlation id, partition id.
pub const REQUEST_HEADER_SIZE: usize = 16;
/// Response header: type, correlation id, backup-ack count.
pub const RESPONSE_HEADER_SIZE: usize = 13;

/// One frame: flags and content (without the 6 header bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub flags: u16,
    pub content: &'a [u8],
}

impl Frame<'_> {
    pub fn is_null(&self) -> bool {
        self.flags & IS_NULL != 0
    }
    pub fn is_begin(&self) -> bool {
        self.flags & BEGIN_DATA_STRUCTURE != 0
    }
    pub fn is_end(&self) -> bool {
        self.flags & END_DATA_STRUCTURE != 0
    }
}

/// A complete message: a sequence of well-formed frames, the first being the initial frame.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    bytes: &'a [u8],
    initial: Frame<'a>,
}

impl<'a> Message<'a> {
    /// Checks that `bytes` is a sequence of whole frames whose initial frame holds at least a
    /// response header (13 bytes), and returns a view over it.
    pub fn parse(bytes: &'a [u8]) -> Result<Message<'a>, DecodeError> {
        let mut offset = 0;
        while offset < bytes.len() {
            if bytes.len() - offset < FRAME_HEADER_SIZE {
                return Err(DecodeError::Truncated("a frame header"));
            }
            let (length, _) = frame_header(bytes, offset);
            if length < FRAME_HEADER_SIZE as i32 {
                return Err(DecodeError::FrameTooShort(length as i64));
            }
            if bytes.len() - offset < length as usize {
                return Err(DecodeError::Truncated("frame content"));
            }
            offset += length as usize;
        }
        let mut reader = MessageReader { rest: bytes };
        let initial = reader.next_frame()?;
        if initial.content.len() < RESPONSE_HEADER_SIZE {
            return Err(DecodeError::InitialFrameTooShort {
                needed: RESPONSE_HEADER_SIZE,
                actual: initial.content.len(),
            });
        }
        Ok(Message { bytes, initial })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    pub fn initial_flags(&self) -> u16 {
        self.initial.flags
    }
    pub fn message_type(&self) -> MessageType {
        MessageType(i32::from_le_bytes(self.initial.content[0..4].try_into().expect("checked")))
    }
    pub fn correlation_id(&self) -> i64 {
        i64::from_le_bytes(self.initial.content[4..12].try_into().expect("checked"))
    }
    /// The partition id of a request or event (−1 = not partition-bound). A request whose
    /// initial frame is too short for it reads as −1.
    pub fn partition_id(&self) -> i32 {
        match self.initial.content.get(12..16) {
            Some(bytes) => i32::from_le_bytes(bytes.try_into().expect("4 bytes")),
            None => -1,
        }
    }
    /// The backup-ack count of a response.
    pub fn backup_acks(&self) -> u8 {
        self.initial.content[12]
    }
    /// The fixed fields after a header of `header_size` bytes.
    pub fn fixed(&self, header_size: usize) -> Result<FixedReader<'a>, DecodeError> {
        match self.initial.content.get(header_size..) {
            Some(bytes) => Ok(FixedReader { bytes }),
            None => Err(DecodeError::InitialFrameTooShort { needed: header_size, actual: self.initial.content.len() }),
        }
    }
    /// A reader positioned on the first frame after the initial frame.
    pub fn reader(&self) -> MessageReader<'a> {
        let skip = FRAME_HEADER_SIZE + self.initial.content.len();
        MessageReader { rest: &self.bytes[skip..] }
    }
}

/// The header of a request's initial frame: what routing needs, read without walking the rest
/// of the message (a reactor that hands a request on leaves the parsing to the one that runs
/// it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHeader {
    pub message_type: MessageType,
    pub correlation_id: i64,
    /// −1: not partition-bound.
    pub partition_id: i32,
}

impl RequestHeader {
    /// Reads the header; None if `bytes` does not start with an initial frame holding one.
    pub fn peek(bytes: &[u8]) -> Option<RequestHeader> {
        let length = i32::from_le_bytes(bytes.get(..4)?.try_into().expect("4 bytes"));
        if length < (FRAME_HEADER_SIZE + REQUEST_HEADER_SIZE) as i32 || length as usize > bytes.len() {
            return None;
        }
        let content = &bytes[FRAME_HEADER_SIZE..];
        let field = |range: std::ops::Range<usize>| &content[range];
        Some(RequestHeader {
            message_type: MessageType(i32::from_le_bytes(field(0..4).try_into().expect("4 bytes"))),
            correlation_id: i64::from_le_bytes(field(4..12).try_into().expect("8 bytes")),
            partition_id: i32::from_le_bytes(field(12..16).try_into().expect("4 bytes")),
        })
    }
}

/// Reads packed fixed-size fields from the front of a byte slice.
#[derive(Debug, Clone, Copy)]
pub struct FixedReader<'a> {
    bytes: &'a [u8],
}

impl<'a> FixedReader<'a> {
    pub fn new(bytes: &'a [u8]) -> FixedReader<'a> {
        FixedReader { bytes }
    }
    /// Reads a field that must be present.
    pub fn read<T: Fixed>(&mut self) -> Result<T, DecodeError> {
        self.read_optional().ok_or(DecodeError::Truncated("a fixed-size field"))
    }
    /// Reads a trailing field that older peers do not send.
    pub fn read_optional<T: Fixed>(&mut self) -> Option<T> {
        let bytes = self.bytes.get(..T::SIZE)?;
        self.bytes = &self.bytes[T::SIZE..];
        Some(T::read(bytes))
    }
    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }
}

/// Walks the frames of a message (or of a nested structure).
#[derive(Debug, Clone)]
pub struct MessageReader<'a> {
    rest: &'a [u8],
}

impl<'a> MessageReader<'a> {
    /// A reader over frames already validated by [`Message::parse`].
    pub fn has_more(&self) -> bool {
        !self.rest.is_empty()
    }

    /// The frames not read yet, as bytes.
    pub fn remaining(&self) -> &'a [u8] {
        self.rest
    }

    pub fn peek(&self) -> Option<Frame<'a>> {
        self.clone().next_frame().ok()
    }

    pub fn next_frame(&mut self) -> Result<Frame<'a>, DecodeError> {
        if self.rest.len() < FRAME_HEADER_SIZE {
            return Err(DecodeError::Truncated("another frame"));
        }
        let (length, flags) = frame_header(self.rest, 0);
        let length = length as usize;
        if length < FRAME_HEADER_SIZE || length > self.rest.len() {
            return Err(DecodeError::Truncated("frame content"));
        }
        let frame = Frame { flags, content: &self.rest[FRAME_HEADER_SIZE..length] };
        self.rest = &self.rest[length..];
        Ok(frame)
    }

    /// A frame that carries a value (not a marker).
    pub fn value_frame(&mut self, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let frame = self.next_frame()?;
        if frame.flags & (IS_NULL | BEGIN_DATA_STRUCTURE | END_DATA_STRUCTURE) != 0 {
            return Err(DecodeError::UnexpectedFrame(what));
        }
        Ok(frame.content)
    }

    pub fn string(&mut self) -> Result<&'a str, DecodeError> {
        let content = self.value_frame("a string")?;
        std::str::from_utf8(content).map_err(|_| DecodeError::InvalidUtf8)
    }

    /// True (and the NULL frame consumed) when the next frame stands for null.
    pub fn next_is_null(&mut self) -> bool {
        match self.peek() {
            Some(frame) if frame.is_null() => {
                self.rest = &self.rest[FRAME_HEADER_SIZE + frame.content.len()..];
                true
            }
            _ => false,
        }
    }

    pub fn begin(&mut self) -> Result<(), DecodeError> {
        if self.next_frame()?.is_begin() {
            Ok(())
        } else {
            Err(DecodeError::UnexpectedFrame("BEGIN of a structure"))
        }
    }

    /// True (and consumed) when the next frame is the END of the current structure.
    pub fn at_end(&mut self) -> Result<bool, DecodeError> {
        match self.peek() {
            Some(frame) if frame.is_end() => {
                self.next_frame()?;
                Ok(true)
            }
            Some(_) => Ok(false),
            None => Err(DecodeError::Truncated("END of a structure")),
        }
    }

    /// Skips to just after the END of the current structure, over nested structures and any
    /// trailing fields a newer peer added.
    pub fn skip_to_end(&mut self) -> Result<(), DecodeError> {
        let mut depth = 1usize;
        while depth > 0 {
            let frame = self.next_frame()?;
            if frame.is_begin() {
                depth += 1;
            } else if frame.is_end() {
                depth -= 1;
            }
        }
        Ok(())
    }
}

/// Appends one standalone frame.
pub fn write_frame(out: &mut Vec<u8>, flags: u16, content: &[u8]) {
    out.extend_from_slice(&((content.len() + FRAME_HEADER_SIZE) as i32).to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(content);
}

/// A fixed-size field type.
pub trait Fixed: Sized {
    const SIZE: usize;
    /// Decodes from exactly `SIZE` bytes.
    fn read(bytes: &[u8]) -> Self;
    fn write(&self, out: &mut Vec<u8>);
}

/// Integers and IEEE floats: little-endian, as Java's `Bits.write*L` writes them.
macro_rules! fixed_number {
    ($($ty:ty),*) => {$(
        impl Fixed for $ty {
            const SIZE: usize = std::mem::size_of::<$ty>();
            fn read(bytes: &[u8]) -> Self {
                <$ty>::from_le_bytes(bytes.try_into().expect("caller passes SIZE bytes"))
            }
            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
fixed_number!(i8, u8, i16, i32, i64, u32, f32, f64);

impl Fixed for bool {
    const SIZE: usize = 1;
    fn read(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
}

/// A UUID that may be null on the wire; ferrogrid's own UUIDs are never null.
impl Fixed for Option<Uuid> {
    const SIZE: usize = Uuid::WIRE_SIZE;
    fn read(bytes: &[u8]) -> Self {
        if bytes[0] != 0 {
            return None;
        }
        Some(Uuid {
            most: u64::from_le_bytes(bytes[1..9].try_into().expect("17 bytes")),
            least: u64::from_le_bytes(bytes[9..17].try_into().expect("17 bytes")),
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            None => {
                out.push(1);
                out.resize(out.len() + 16, 0);
            }
            Some(uuid) => {
                out.push(0);
                out.extend_from_slice(&uuid.most.to_le_bytes());
                out.extend_from_slice(&uuid.least.to_le_bytes());
            }
        }
    }
}

/// Two fixed-size fields back to back: an entry of a packed entry list (`EntryList<UUID, Long>`
/// is one frame of 25-byte (uuid, long) entries).
impl<A: Fixed, B: Fixed> Fixed for (A, B) {
    const SIZE: usize = A::SIZE + B::SIZE;
    fn read(bytes: &[u8]) -> Self {
        (A::read(&bytes[..A::SIZE]), B::read(&bytes[A::SIZE..]))
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.0.write(out);
        self.1.write(out);
    }
}

/// A variable-size field: one or more frames.
pub trait VarField<'a>: Sized {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError>;
    fn write(&self, writer: &mut MessageWriter<'_>);
}

impl<'a> VarField<'a> for &'a str {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.string()
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.frame(self.as_bytes());
    }
}

impl<'a> VarField<'a> for Data<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.value_frame("a Data blob").map(Data)
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.frame(self.0);
    }
}

/// A raw byte array (`byte[]`), distinct from a serialized Data blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes<'a>(pub &'a [u8]);

impl<'a> VarField<'a> for Bytes<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.value_frame("a byte array").map(Bytes)
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.frame(self.0);
    }
}

impl<'a, T: VarField<'a>> VarField<'a> for Option<T> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        if reader.next_is_null() {
            return Ok(None);
        }
        T::read(reader).map(Some)
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        match self {
            None => {
                writer.null();
            }
            Some(value) => value.write(writer),
        }
    }
}

/// `List<T>` of variable-size items, and `EntryList<K, V>` / `Map<K, V>` as pairs.
impl<'a, T: VarField<'a>> VarField<'a> for Vec<T> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut items = Vec::new();
        while !reader.at_end()? {
            items.push(T::read(reader)?);
        }
        Ok(items)
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin();
        for item in self {
            item.write(writer);
        }
        writer.end();
    }
}

impl<'a, K: VarField<'a>, V: VarField<'a>> VarField<'a> for (K, V) {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        Ok((K::read(reader)?, V::read(reader)?))
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        self.0.write(writer);
        self.1.write(writer);
    }
}

/// `List<int>` / `List<long>` / `List<UUID>`: one frame of packed items.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packed<T>(pub Vec<T>);

impl<'a, T: Fixed> VarField<'a> for Packed<T> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        let content = reader.value_frame("a packed list")?;
        if content.len() % T::SIZE != 0 {
            return Err(DecodeError::BadListLength { length: content.len(), item: T::SIZE });
        }
        Ok(Packed(content.chunks_exact(T::SIZE).map(T::read).collect()))
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.open_frame(0);
        for item in &self.0 {
            item.write(writer.out);
        }
    }
}

/// Appends one message to an output buffer.
///
/// Frames are written in place; the open frame's length is patched when the next frame
/// starts, and [`MessageWriter::finish`] marks the last frame IS_FINAL.
#[derive(Debug)]
pub struct MessageWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Offset in `out` where this message starts.
    start: usize,
    /// Offset in `out` of the frame currently being written.
    open_frame: usize,
}

impl<'a> MessageWriter<'a> {
    /// Starts a request (or event, with `IS_EVENT` in `extra_flags`): 16-byte header.
    pub fn request(
        out: &'a mut Vec<u8>,
        message_type: MessageType,
        correlation_id: i64,
        partition_id: i32,
        extra_flags: u16,
    ) -> MessageWriter<'a> {
        let writer = MessageWriter::start(out, message_type, correlation_id, extra_flags);
        writer.out.extend_from_slice(&partition_id.to_le_bytes());
        writer
    }

    /// Starts a response: 13-byte header.
    pub fn response(
        out: &'a mut Vec<u8>,
        message_type: MessageType,
        correlation_id: i64,
        backup_acks: u8,
    ) -> MessageWriter<'a> {
        let writer = MessageWriter::start(out, message_type, correlation_id, 0);
        writer.out.push(backup_acks);
        writer
    }

    /// Starts an event: 16-byte header with `IS_EVENT`.
    pub fn event(
        out: &'a mut Vec<u8>,
        message_type: MessageType,
        correlation_id: i64,
        partition_id: i32,
    ) -> MessageWriter<'a> {
        MessageWriter::request(out, message_type, correlation_id, partition_id, IS_EVENT)
    }

    fn start(out: &'a mut Vec<u8>, message_type: MessageType, correlation_id: i64, flags: u16) -> Self {
        let open_frame = out.len();
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&(UNFRAGMENTED | flags).to_le_bytes());
        out.extend_from_slice(&message_type.0.to_le_bytes());
        out.extend_from_slice(&correlation_id.to_le_bytes());
        MessageWriter { out, start: open_frame, open_frame }
    }

    /// Appends a fixed-size field to the open frame (the initial frame or a struct's fixed
    /// frame).
    pub fn fixed<T: Fixed>(&mut self, value: &T) -> &mut Self {
        value.write(self.out);
        self
    }

    fn close_frame(&mut self) {
        let length = (self.out.len() - self.open_frame) as i32;
        self.out[self.open_frame..self.open_frame + 4].copy_from_slice(&length.to_le_bytes());
    }

    /// Closes the open frame and opens a new one with `flags`.
    pub fn open_frame(&mut self, flags: u16) -> &mut Self {
        self.close_frame();
        self.open_frame = self.out.len();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        self.out.extend_from_slice(&flags.to_le_bytes());
        self
    }

    /// Appends raw bytes to the open frame (a variable-size field packed with fixed ones).
    pub fn bytes(&mut self, content: &[u8]) -> &mut Self {
        self.out.extend_from_slice(content);
        self
    }

    /// A frame holding `content`.
    pub fn frame(&mut self, content: &[u8]) -> &mut Self {
        self.open_frame(0);
        self.out.extend_from_slice(content);
        self
    }

    pub fn null(&mut self) -> &mut Self {
        self.open_frame(IS_NULL)
    }
    pub fn begin(&mut self) -> &mut Self {
        self.open_frame(BEGIN_DATA_STRUCTURE)
    }
    pub fn end(&mut self) -> &mut Self {
        self.open_frame(END_DATA_STRUCTURE)
    }

    /// Appends frames already encoded with [`write_frame`] (e.g. list items gathered by
    /// several threads).
    pub fn append_frames(&mut self, frames: &[u8]) -> &mut Self {
        if frames.is_empty() {
            return self;
        }
        self.close_frame();
        let base = self.out.len();
        self.out.extend_from_slice(frames);
        let mut offset = 0;
        loop {
            let (length, _) = frame_header(frames, offset);
            assert!(length as usize >= FRAME_HEADER_SIZE, "append_frames takes well-formed frames");
            if offset + length as usize >= frames.len() {
                break;
            }
            offset += length as usize;
        }
        self.open_frame = base + offset;
        self
    }

    pub fn var<'v, T: VarField<'v>>(&mut self, value: &T) -> &mut Self {
        value.write(self);
        self
    }

    /// Closes the last frame with IS_FINAL; returns the message's length in bytes.
    pub fn finish(mut self) -> usize {
        self.close_frame();
        let flags_at = self.open_frame + 4;
        let flags = u16::from_le_bytes([self.out[flags_at], self.out[flags_at + 1]]) | IS_FINAL;
        self.out[flags_at..flags_at + 2].copy_from_slice(&flags.to_le_bytes());
        self.out.len() - self.start
    }
}
