//! Frames and the stream decoder.
//!
//! A frame is `length: i32 LE` (including the 6 header bytes), `flags: u16 LE`, content. A
//! message is an initial frame plus the frames after it, up to the one flagged IS_FINAL.
//! [`StreamDecoder`] cuts a connection's byte stream into messages. Unfragmented messages are
//! returned as a length into the caller's buffer (zero copy); fragmented ones are reassembled
//! into an owned buffer. Every frame, message and pending reassembly is bounded by
//! [`StreamLimits`]; exceeding a bound is a [`DecodeError`] and the caller closes the connection.

use std::collections::HashMap;

pub const FRAME_HEADER_SIZE: usize = 6;

pub const BEGIN_FRAGMENT: u16 = 0x8000;
pub const END_FRAGMENT: u16 = 0x4000;
pub const UNFRAGMENTED: u16 = BEGIN_FRAGMENT | END_FRAGMENT;
pub const IS_FINAL: u16 = 0x2000;
pub const BEGIN_DATA_STRUCTURE: u16 = 0x1000;
pub const END_DATA_STRUCTURE: u16 = 0x0800;
pub const IS_NULL: u16 = 0x0400;
pub const IS_EVENT: u16 = 0x0200;
pub const BACKUP_AWARE: u16 = 0x0100;
pub const BACKUP_EVENT: u16 = 0x0080;
/// ferrogrid's own, on a request's initial frame: a transactional key request the coordinator
/// routed for a TWO_PHASE transaction, whose key locks make plain reads of the key wait (as
/// Hazelcast's do). No client sets it; one that did would only make reads of its own
/// transaction's keys wait.
pub const TXN_BLOCKS_READS: u16 = 0x0001;

/// The 3-byte protocol header a client sends first.
pub const CLIENT_PROTOCOL_HEADER: &[u8; 3] = b"CP2";

/// Malformed or out-of-bounds input. The connection it came from is closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("frame length {0} is below the 6-byte minimum")]
    FrameTooShort(i64),
    #[error("frame length {length} exceeds the limit of {limit} bytes")]
    FrameTooLong { length: i64, limit: u32 },
    #[error("message of at least {length} bytes exceeds the limit of {limit} bytes")]
    MessageTooLong { length: usize, limit: u32 },
    #[error("fragmented message: {0}")]
    Fragment(&'static str),
    #[error("too many fragmented messages in progress (limit {0})")]
    TooManyFragments(u32),
    #[error("message ended early: expected {0}")]
    Truncated(&'static str),
    #[error("unexpected frame: expected {0}")]
    UnexpectedFrame(&'static str),
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    #[error("initial frame of {actual} bytes is shorter than the {needed} the message type needs")]
    InitialFrameTooShort { needed: usize, actual: usize },
    #[error("list frame of {length} bytes is not a multiple of the item size {item}")]
    BadListLength { length: usize, item: usize },
    #[error("invalid value: expected {0}")]
    InvalidValue(&'static str),
}

/// Bounds applied while decoding one connection's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    pub max_frame_bytes: u32,
    pub max_message_bytes: u32,
    pub max_pending_fragmented: u32,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits { max_frame_bytes: 64 << 20, max_message_bytes: 256 << 20, max_pending_fragmented: 64 }
    }
}

/// What [`StreamDecoder::decode`] found at the start of the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A whole unfragmented message occupies `input[..length]`.
    Message { length: usize },
    /// A fragment completed a message; `consumed` input bytes were used.
    Reassembled { consumed: usize, message: Vec<u8> },
    /// A fragment was absorbed into a pending message; skip `consumed` bytes.
    Absorbed { consumed: usize },
    /// The input does not yet hold a whole message (or fragment piece).
    NeedMore,
}

/// Reads the frame header at `offset`: (length, flags). The caller checked 6 bytes are there.
pub fn frame_header(bytes: &[u8], offset: usize) -> (i32, u16) {
    let length = i32::from_le_bytes([bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]]);
    let flags = u16::from_le_bytes([bytes[offset + 4], bytes[offset + 5]]);
    (length, flags)
}

/// Splits one connection's inbound stream into messages. Owned by that connection's reactor.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    limits: StreamLimits,
    /// Fragmented messages being reassembled, by fragmentation id.
    pending: HashMap<i64, Vec<u8>>,
    /// Offset of the first frame of the current partial message not yet seen whole, so a
    /// message arriving in many reads is scanned once, not once per read.
    scanned: usize,
    /// Frame headers read so far (scanning and reassembly): a measure of the work done, so
    /// tests can check it stays linear in the input.
    frames_examined: u64,
}

impl StreamDecoder {
    pub fn new(limits: StreamLimits) -> StreamDecoder {
        assert!(limits.max_frame_bytes as usize >= FRAME_HEADER_SIZE);
        StreamDecoder { limits, pending: HashMap::new(), scanned: 0, frames_examined: 0 }
    }

    /// Frame headers read so far (scanning and reassembly together).
    pub fn frames_examined(&self) -> u64 {
        self.frames_examined
    }

    pub fn set_limits(&mut self, limits: StreamLimits) {
        self.limits = limits;
    }

    /// Looks for one message (or fragment piece) at the start of `input`.
    ///
    /// Errors as soon as a bound is crossed, even before the offending bytes have all
    /// arrived, so a peer cannot make the caller buffer more than the limits allow.
    ///
    /// Contract: after `NeedMore`, the next call's `input` starts at the same byte (the caller
    /// only appends); the decoder resumes where it stopped instead of re-scanning.
    pub fn decode(&mut self, input: &[u8]) -> Result<Decoded, DecodeError> {
        let Some(end) = self.scan_message(input)? else {
            return Ok(Decoded::NeedMore);
        };
        let (_, flags) = frame_header(input, 0);
        if flags & UNFRAGMENTED == UNFRAGMENTED {
            return Ok(Decoded::Message { length: end });
        }
        self.absorb_fragment(&input[..end], flags)
    }

    /// Returns the end of the message starting at `input[0]` once its IS_FINAL frame is
    /// complete, checking every frame's length against the limits.
    fn scan_message(&mut self, input: &[u8]) -> Result<Option<usize>, DecodeError> {
        let mut offset = self.scanned;
        self.scanned = 0;
        loop {
            if input.len() < offset + FRAME_HEADER_SIZE {
                self.scanned = offset;
                return Ok(None);
            }
            let (length, flags) = frame_header(input, offset);
            self.frames_examined += 1;
            if length < FRAME_HEADER_SIZE as i32 {
                return Err(DecodeError::FrameTooShort(length as i64));
            }
            if length as u32 > self.limits.max_frame_bytes {
                return Err(DecodeError::FrameTooLong { length: length as i64, limit: self.limits.max_frame_bytes });
            }
            let frame_end = offset + length as usize;
            if frame_end > self.limits.max_message_bytes as usize {
                return Err(DecodeError::MessageTooLong { length: frame_end, limit: self.limits.max_message_bytes });
            }
            if input.len() < frame_end {
                self.scanned = offset;
                return Ok(None);
            }
            if flags & IS_FINAL != 0 {
                return Ok(Some(frame_end));
            }
            offset = frame_end;
        }
    }

    fn absorb_fragment(&mut self, piece: &[u8], flags: u16) -> Result<Decoded, DecodeError> {
        let (first_length, _) = frame_header(piece, 0);
        if first_length as usize != FRAME_HEADER_SIZE + 8 {
            return Err(DecodeError::Fragment("fragmentation frame must hold an 8-byte id"));
        }
        let id = i64::from_le_bytes(piece[6..14].try_into().expect("8 bytes checked above"));
        let frames = &piece[FRAME_HEADER_SIZE + 8..];
        if frames.is_empty() {
            return Err(DecodeError::Fragment("fragment carries no frames"));
        }
        let consumed = piece.len();
        if flags & BEGIN_FRAGMENT != 0 {
            if self.pending.contains_key(&id) {
                return Err(DecodeError::Fragment("fragmentation id begun twice"));
            }
            if self.pending.len() >= self.limits.max_pending_fragmented as usize {
                return Err(DecodeError::TooManyFragments(self.limits.max_pending_fragmented));
            }
            self.pending.insert(id, Vec::with_capacity(frames.len()));
        }
        let buffer =
            self.pending.get_mut(&id).ok_or(DecodeError::Fragment("continuation of an unknown fragmentation id"))?;
        if buffer.len() + frames.len() > self.limits.max_message_bytes as usize {
            return Err(DecodeError::MessageTooLong {
                length: buffer.len() + frames.len(),
                limit: self.limits.max_message_bytes,
            });
        }
        let piece_start = buffer.len();
        buffer.extend_from_slice(frames);
        if flags & END_FRAGMENT == 0 {
            // Each piece ends with its own IS_FINAL frame: clear it, the message is not over
            // yet. Walk only this piece's frames, so reassembly stays linear in its size.
            self.frames_examined += clear_final_flag_of_last_frame(&mut buffer[piece_start..]);
            return Ok(Decoded::Absorbed { consumed });
        }
        let message = self.pending.remove(&id).expect("present: looked up above");
        Ok(Decoded::Reassembled { consumed, message })
    }
}

/// Clears IS_FINAL on the last frame of a well-formed frame sequence (no-op when empty);
/// returns how many frame headers it read.
fn clear_final_flag_of_last_frame(frames: &mut [u8]) -> u64 {
    let mut offset = 0usize;
    let mut last = None;
    let mut examined = 0;
    while offset + FRAME_HEADER_SIZE <= frames.len() {
        examined += 1;
        last = Some(offset);
        let (length, _) = frame_header(frames, offset);
        offset += length as usize;
    }
    if let Some(at) = last {
        let flags = u16::from_le_bytes([frames[at + 4], frames[at + 5]]) & !IS_FINAL;
        frames[at + 4..at + 6].copy_from_slice(&flags.to_le_bytes());
    }
    examined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(flags: u16, content: &[u8]) -> Vec<u8> {
        let mut out = ((content.len() + 6) as i32).to_le_bytes().to_vec();
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(content);
        out
    }

    #[test]
    fn whole_message_in_one_buffer() {
        let mut bytes = frame(UNFRAGMENTED, &[1; 16]);
        bytes.extend(frame(IS_FINAL, b"abc"));
        let mut decoder = StreamDecoder::default();
        assert_eq!(decoder.decode(&bytes).unwrap(), Decoded::Message { length: bytes.len() });
        assert_eq!(decoder.decode(&bytes[..bytes.len() - 1]).unwrap(), Decoded::NeedMore);
        assert_eq!(decoder.decode(&bytes[..3]).unwrap(), Decoded::NeedMore);
    }

    #[test]
    fn rejects_short_and_oversized_frames() {
        let mut decoder = StreamDecoder::new(StreamLimits { max_frame_bytes: 100, ..Default::default() });
        let mut short = frame(UNFRAGMENTED | IS_FINAL, &[]);
        short[0] = 5;
        assert_eq!(decoder.decode(&short), Err(DecodeError::FrameTooShort(5)));
        let mut negative = short.clone();
        negative[..4].copy_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(decoder.decode(&negative), Err(DecodeError::FrameTooShort(-1)));
        let mut long = short;
        long[..4].copy_from_slice(&101i32.to_le_bytes());
        assert!(matches!(decoder.decode(&long), Err(DecodeError::FrameTooLong { .. })));
    }

    #[test]
    fn bounds_a_message_before_it_has_arrived() {
        let limits = StreamLimits { max_frame_bytes: 100, max_message_bytes: 150, max_pending_fragmented: 1 };
        let mut decoder = StreamDecoder::new(limits);
        let mut bytes = frame(UNFRAGMENTED, &[0; 90]);
        bytes.extend(frame(0, &[0; 90]));
        assert!(matches!(decoder.decode(&bytes[..110]), Err(DecodeError::MessageTooLong { .. })));
    }

    #[test]
    fn a_message_in_many_reads_is_scanned_once() {
        // 200,000 empty frames fed 60 bytes at a time: linear, not quadratic, work.
        let mut bytes = frame(UNFRAGMENTED, &[0; 16]);
        for _ in 0..200_000 {
            bytes.extend(frame(0, &[]));
        }
        bytes.extend(frame(IS_FINAL, &[]));
        let mut decoder = StreamDecoder::default();
        let mut end = 0;
        let result = loop {
            end = (end + 60).min(bytes.len());
            match decoder.decode(&bytes[..end]).unwrap() {
                Decoded::NeedMore => continue,
                other => break other,
            }
        };
        assert_eq!(result, Decoded::Message { length: bytes.len() });
        let frames = 200_002;
        assert!(decoder.frames_examined() <= 2 * frames, "{} frame headers read", decoder.frames_examined());
    }

    #[test]
    fn reassembles_two_fragments() {
        let initial = frame(0, &[7; 16]);
        let tail = frame(IS_FINAL, b"tail");
        let mut first = frame(BEGIN_FRAGMENT, &42i64.to_le_bytes());
        first.extend(&initial);
        let last_initial_flags = IS_FINAL;
        first.extend(frame(last_initial_flags, b"mid"));
        let mut second = frame(END_FRAGMENT, &42i64.to_le_bytes());
        second.extend(&tail);
        let mut decoder = StreamDecoder::default();
        assert_eq!(decoder.decode(&first).unwrap(), Decoded::Absorbed { consumed: first.len() });
        let Decoded::Reassembled { consumed, message } = decoder.decode(&second).unwrap() else {
            panic!("expected a reassembled message");
        };
        assert_eq!(consumed, second.len());
        let mut expected = initial;
        expected.extend(frame(0, b"mid"));
        expected.extend(tail);
        assert_eq!(message, expected);
    }

    #[test]
    fn rejects_continuation_without_beginning() {
        let mut piece = frame(END_FRAGMENT, &9i64.to_le_bytes());
        piece.extend(frame(IS_FINAL, &[0; 16]));
        assert!(matches!(StreamDecoder::default().decode(&piece), Err(DecodeError::Fragment(_))));
    }
}
