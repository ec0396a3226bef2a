//! What the fuzz targets do, as plain functions (so the corpus can be replayed by tests).
//!
//! The property under test is the protocol crate's invariant: nothing panics on input bytes.
//! A panic, an overflow or an out-of-bounds access here is a crash libFuzzer reports. The
//! drivers also assert the decoder's side of its contract (progress, nothing beyond the input,
//! messages within the limits), so a violation of it is a crash too.

use ferrogrid_protocol::frame::{Decoded, StreamDecoder, StreamLimits};
use ferrogrid_protocol::Message;

#[path = "../../crates/protocol/tests/support/every_codec.rs"]
mod every_codec;

pub use every_codec::decode_with_every_codec;

/// The limits a member applies before authentication (`max.message.bytes` 4096 in Hazelcast)
/// shrunk further, so inputs of a few hundred bytes reach every bound.
const SMALL_LIMITS: StreamLimits =
    StreamLimits { max_frame_bytes: 64, max_message_bytes: 512, max_pending_fragmented: 2 };

/// Chunk sizes in which the stream arrives, picked by the first input byte.
const CHUNK_BYTES: [usize; 8] = [1, 2, 3, 7, 16, 64, 1024, usize::MAX];

/// Treats `data[1..]` as a connection's inbound stream and does what a member's reactor does:
/// append what a read returned to a buffer, cut messages off its front until the decoder needs
/// more, handle each (here: parse it and decode it with every codec), stop at the first error.
///
/// `data[0]` picks the setup: bits 0–2 the read size, bit 3 small limits throughout, bit 4
/// small limits until the first message and default limits after it (as a member switches
/// after authentication).
pub fn drive_stream(data: &[u8]) {
    let Some((&setup, stream)) = data.split_first() else {
        return;
    };
    let chunk_bytes = CHUNK_BYTES[usize::from(setup & 0x07)];
    let mut limits = if setup & 0x18 != 0 { SMALL_LIMITS } else { StreamLimits::default() };
    let mut decoder = StreamDecoder::new(limits);
    let mut buffer = Vec::new();
    for chunk in stream.chunks(chunk_bytes.min(stream.len().max(1))) {
        buffer.extend_from_slice(chunk);
        loop {
            let (consumed, message) = match decoder.decode(&buffer) {
                Err(_) => return,
                Ok(Decoded::NeedMore) => break,
                Ok(Decoded::Message { length }) => {
                    assert!(length <= buffer.len(), "message of {length} bytes in {}", buffer.len());
                    (length, buffer[..length].to_vec())
                }
                Ok(Decoded::Reassembled { consumed, message }) => (consumed, message),
                Ok(Decoded::Absorbed { consumed }) => (consumed, Vec::new()),
            };
            assert!(consumed > 0 && consumed <= buffer.len(), "consumed {consumed} of {}", buffer.len());
            if !message.is_empty() {
                assert!(message.len() <= limits.max_message_bytes as usize);
                parse_and_decode(&message);
                if setup & 0x18 == 0x10 {
                    limits = StreamLimits::default();
                    decoder.set_limits(limits);
                }
            }
            buffer.drain(..consumed);
        }
    }
}

/// Parses `data` as one message and, if it parses, decodes it with every codec.
pub fn parse_and_decode(data: &[u8]) {
    if let Ok(message) = Message::parse(data) {
        decode_with_every_codec(&message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Captured(Vec<u8>);

    fn captured() -> Vec<Captured> {
        let text = include_str!("../../crates/protocol/tests/fixtures/captured-messages.json");
        let records: Vec<serde_json::Value> = serde_json::from_str(text).expect("fixture parses");
        records
            .iter()
            .map(|record| Captured(hex::decode(record["hex"].as_str().expect("hex field")).expect("fixture hex")))
            .collect()
    }

    #[test]
    fn replays_the_captured_messages() {
        let messages = captured();
        assert!(messages.len() > 10);
        let stream: Vec<u8> = messages.iter().flat_map(|m| m.0.iter().copied()).collect();
        for setup in 0..=0x1f {
            let mut input = vec![setup];
            input.extend_from_slice(&stream);
            drive_stream(&input);
        }
        let decoded: usize = messages.iter().map(|m| decode_with_every_codec(&Message::parse(&m.0).unwrap())).sum();
        assert!(decoded >= messages.len());
        messages.iter().for_each(|m| parse_and_decode(&m.0));
    }

    /// Replays whatever is in `corpus/` and `artifacts/` (after a fuzzing run), so a crash
    /// found by libFuzzer can be debugged with an ordinary `cargo test`.
    #[test]
    fn replays_the_local_corpus() {
        for (directory, run) in [
            ("corpus/stream_decoder", drive_stream as fn(&[u8])),
            ("corpus/codecs", parse_and_decode),
            ("artifacts/stream_decoder", drive_stream),
            ("artifacts/codecs", parse_and_decode),
        ] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(directory);
            let Ok(entries) = std::fs::read_dir(&path) else {
                continue;
            };
            for entry in entries.flatten() {
                if let Ok(bytes) = std::fs::read(entry.path()) {
                    run(&bytes);
                }
            }
        }
    }
}
