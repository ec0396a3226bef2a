//! Map-wide operations (size, clear, keySet, …): every reactor runs its share over the
//! partitions it owns, and the share that finishes last writes the combined response.
//!
//! The origin reactor hands the same `Arc<FanOut>` to every other reactor (one hop each) and
//! runs its own share inline. No thread waits for another: shares merge into `partial` under
//! a short lock, and `remaining` counts down to the one that answers.

use crate::connection::ConnectionShared;
use crate::store::PartitionStore;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorHolder};
use ferrogrid_protocol::message::{write_frame, MessageWriter};
use ferrogrid_protocol::{DecodeError, Message, MessageType};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The map-wide request kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WideOperation {
    Size,
    IsEmpty,
    ContainsValue(Box<[u8]>),
    Clear,
    KeySet,
    Values,
    EntrySet,
    EvictAll,
    Flush,
    /// Drop the map's data everywhere (Client.DestroyProxy of a map).
    Destroy,
}

/// One map-wide request in flight, shared by all reactors until the last share answers.
#[derive(Debug)]
pub struct FanOut {
    pub connection: Arc<ConnectionShared>,
    correlation_id: i64,
    response_type: MessageType,
    name: Box<str>,
    operation: WideOperation,
    remaining: AtomicUsize,
    partial: Mutex<Partial>,
}

#[derive(Debug, Default)]
struct Partial {
    count: u64,
    found: bool,
    /// Encoded list items (keys, values or key/value pairs) from the shares so far.
    frames: Vec<u8>,
}

/// The outcome of looking at a request that might be map-wide.
#[derive(Debug)]
pub enum Classified {
    NotWide,
    Wide(WideOperation, Box<str>),
    /// Well-formed but refused (e.g. a null value for containsValue): answer with this error.
    Refused(&'static str),
}

/// Recognises map-wide requests and decodes what the shares need.
pub fn classify(message: &Message<'_>) -> Result<Classified, DecodeError> {
    let name_only = |operation| -> Result<Classified, DecodeError> {
        let mut reader = message.reader();
        Ok(Classified::Wide(operation, reader.string()?.into()))
    };
    match message.message_type() {
        MapSize::TYPE => name_only(WideOperation::Size),
        MapIsEmpty::TYPE => name_only(WideOperation::IsEmpty),
        MapClear::TYPE => name_only(WideOperation::Clear),
        MapKeySet::TYPE => name_only(WideOperation::KeySet),
        MapValues::TYPE => name_only(WideOperation::Values),
        MapEntrySet::TYPE => name_only(WideOperation::EntrySet),
        MapEvictAll::TYPE => name_only(WideOperation::EvictAll),
        MapFlush::TYPE => name_only(WideOperation::Flush),
        MapContainsValue::TYPE => {
            let request = MapContainsValue::decode(message)?;
            if request.value.type_id().unwrap_or(0) == 0 {
                return Ok(Classified::Refused("Null value is not allowed!"));
            }
            Ok(Classified::Wide(WideOperation::ContainsValue(request.value.0.into()), request.name.into()))
        }
        _ => Ok(Classified::NotWide),
    }
}

/// Writes the error for a refused map-wide request.
pub fn write_refusal(out: &mut Vec<u8>, correlation_id: i64, message: &str) {
    write_error_response(out, correlation_id, &[ErrorHolder { code: error::NULL_POINTER, message: Some(message) }]);
}

impl FanOut {
    pub fn new(
        connection: Arc<ConnectionShared>,
        correlation_id: i64,
        response_type: MessageType,
        name: Box<str>,
        operation: WideOperation,
        shares: usize,
    ) -> FanOut {
        assert!(shares > 0);
        FanOut {
            connection,
            correlation_id,
            response_type,
            name,
            operation,
            remaining: AtomicUsize::new(shares),
            partial: Mutex::new(Partial::default()),
        }
    }

    /// Runs one reactor's share over its partitions. Returns the encoded response when this
    /// was the last share (the caller sends it), otherwise None.
    pub fn run_share(&self, partitions: &mut [PartitionStore]) -> Option<Vec<u8>> {
        let mut local = Partial::default();
        for partition in partitions.iter_mut() {
            self.run_partition(partition, &mut local);
        }
        {
            let mut partial = self.partial.lock();
            partial.count += local.count;
            partial.found |= local.found;
            partial.frames.extend_from_slice(&local.frames);
        }
        if self.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
            return None;
        }
        let partial = std::mem::take(&mut *self.partial.lock());
        let mut out = Vec::with_capacity(partial.frames.len() + 64);
        self.write_response(&partial, &mut out);
        Some(out)
    }

    fn run_partition(&self, partition: &mut PartitionStore, local: &mut Partial) {
        let name = &*self.name;
        match &self.operation {
            WideOperation::Clear | WideOperation::EvictAll => {
                local.count += partition.map_mut(name).clear() as u64;
            }
            WideOperation::Destroy => {
                local.count += partition.drop_map(name) as u64;
            }
            WideOperation::Flush => {}
            operation => {
                let Some(map) = partition.map(name) else {
                    return;
                };
                match operation {
                    WideOperation::Size | WideOperation::IsEmpty => local.count += map.len() as u64,
                    WideOperation::ContainsValue(value) => {
                        local.found |= map.iter().any(|(_, record)| record.value == *value);
                    }
                    WideOperation::KeySet => map.iter().for_each(|(key, _)| write_frame(&mut local.frames, 0, key)),
                    WideOperation::Values => {
                        map.iter().for_each(|(_, record)| write_frame(&mut local.frames, 0, &record.value));
                    }
                    WideOperation::EntrySet => map.iter().for_each(|(key, record)| {
                        write_frame(&mut local.frames, 0, key);
                        write_frame(&mut local.frames, 0, &record.value);
                    }),
                    _ => unreachable!("handled above"),
                }
            }
        }
    }

    fn write_response(&self, partial: &Partial, out: &mut Vec<u8>) {
        let (ty, corr) = (self.response_type, self.correlation_id);
        match self.operation {
            WideOperation::Size => {
                IntResponse { response: partial.count.min(i32::MAX as u64) as i32 }.encode(out, ty, corr, 0);
            }
            WideOperation::IsEmpty => {
                BoolResponse { response: partial.count == 0 }.encode(out, ty, corr, 0);
            }
            WideOperation::ContainsValue(_) => {
                BoolResponse { response: partial.found }.encode(out, ty, corr, 0);
            }
            WideOperation::KeySet | WideOperation::Values | WideOperation::EntrySet => {
                let mut writer = MessageWriter::response(out, ty, corr, 0);
                writer.begin().append_frames(&partial.frames).end();
                writer.finish();
            }
            WideOperation::Clear | WideOperation::EvictAll | WideOperation::Flush | WideOperation::Destroy => {
                EmptyResponse {}.encode(out, ty, corr, 0);
            }
        }
    }
}
