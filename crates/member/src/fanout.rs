//! Map-wide operations (size, clear, keySet, …): every reactor runs its share over the
//! partitions it owns, and the share that finishes last writes the combined response.
//!
//! The origin reactor hands the same `Arc<FanOut>` to every other reactor (one hop each) and
//! runs its own share inline. No thread waits for another: shares merge into `partial` under
//! a short lock, and `remaining` counts down to the one that answers.

use crate::connection::ConnectionShared;
use crate::listeners::{Event, EventKind, Listener, Listeners};
use crate::outbox::Outbox;
use crate::store::PartitionStore;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorCode, ErrorHolder};
use ferrogrid_protocol::message::{write_frame, MessageWriter};
use ferrogrid_protocol::{DecodeError, Message, MessageType, Uuid};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The map-wide request kinds.
#[derive(Debug, Clone)]
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
    /// Drop the map's data and listeners everywhere (Client.DestroyProxy of a map).
    Destroy,
    /// Register an entry listener on every reactor.
    AddListener(Box<Listener>),
    /// Remove an entry listener from every reactor.
    RemoveListener(Uuid),
}

/// What a share needs besides the job: the reactor's partitions, listeners and outbox.
#[derive(Debug)]
pub struct ShareContext<'a> {
    pub partitions: &'a mut [PartitionStore],
    pub listeners: &'a mut Listeners,
    pub outbox: &'a mut Outbox,
    pub now_ms: i64,
    pub member: Uuid,
    /// Per partition of `partitions`: this member owns it. Reads (size, keySet, …) count only
    /// owned partitions; clear, evictAll and destroy act on every replica held here.
    pub owned: &'a [bool],
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
    Refused(ErrorCode, String),
}

/// Recognises map-wide requests (including listener registration, which every reactor must
/// apply) and decodes what the shares need.
pub fn classify(message: &Message<'_>, connection: &Arc<ConnectionShared>) -> Result<Classified, DecodeError> {
    let name_only = |operation| -> Result<Classified, DecodeError> {
        let mut reader = message.reader();
        Ok(Classified::Wide(operation, reader.string()?.into()))
    };
    let ty = message.message_type();
    let listener = |name: &str, include_value: bool, flags: i32, key: Option<&[u8]>, invalidation: bool| {
        let listener = Listener {
            id: Uuid::from_u128(uuid::Uuid::new_v4().as_u128()),
            connection: connection.clone(),
            correlation_id: message.correlation_id(),
            event_type: MessageType((ty.0 & !0xff) | 0x02),
            include_value,
            flags,
            key: key.map(Into::into),
            invalidation,
        };
        Classified::Wide(WideOperation::AddListener(Box::new(listener)), name.into())
    };
    match ty {
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
                return Ok(Classified::Refused(error::NULL_POINTER, "Null value is not allowed!".into()));
            }
            Ok(Classified::Wide(WideOperation::ContainsValue(request.value.0.into()), request.name.into()))
        }
        MapAddEntryListener::TYPE => {
            let r = MapAddEntryListener::decode(message)?;
            Ok(listener(r.name, r.include_value, r.listener_flags, None, false))
        }
        MapAddNearCacheInvalidationListener::TYPE => {
            let r = MapAddNearCacheInvalidationListener::decode(message)?;
            Ok(listener(r.name, false, r.listener_flags, None, true))
        }
        MapAddEntryListenerToKey::TYPE => {
            let r = MapAddEntryListenerToKey::decode(message)?;
            if r.key.type_id().unwrap_or(0) == 0 {
                return Ok(Classified::Refused(error::NULL_POINTER, "Null key is not allowed!".into()));
            }
            Ok(listener(r.name, r.include_value, r.listener_flags, Some(r.key.0), false))
        }
        MapAddEntryListenerWithPredicate::TYPE | MapAddEntryListenerToKeyWithPredicate::TYPE => {
            let text = format!(
                "ferrogrid does not evaluate predicates yet: an entry listener with a predicate ({}) is not supported",
                ty.describe()
            );
            Ok(Classified::Refused(error::UNSUPPORTED_OPERATION, text))
        }
        MapRemoveEntryListener::TYPE => {
            let r = MapRemoveEntryListener::decode(message)?;
            let id = r.registration_id.unwrap_or_default();
            Ok(Classified::Wide(WideOperation::RemoveListener(id), r.name.into()))
        }
        _ => Ok(Classified::NotWide),
    }
}

/// Writes the error for a refused map-wide request.
pub fn write_refusal(out: &mut Vec<u8>, correlation_id: i64, code: ErrorCode, message: &str) {
    write_error_response(out, correlation_id, &[ErrorHolder { code, message: Some(message) }]);
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
    pub fn run_share(&self, share: &mut ShareContext<'_>) -> Option<Vec<u8>> {
        let mut local = Partial::default();
        match &self.operation {
            WideOperation::AddListener(listener) => share.listeners.add(&self.name, (**listener).clone()),
            WideOperation::RemoveListener(id) => local.found = share.listeners.remove(&self.name, *id),
            WideOperation::Destroy => share.listeners.drop_map(&self.name),
            _ => {}
        }
        let reads = !matches!(self.operation, WideOperation::Clear | WideOperation::EvictAll | WideOperation::Destroy);
        for (index, partition) in share.partitions.iter_mut().enumerate() {
            if reads && !share.owned.get(index).copied().unwrap_or(true) {
                continue;
            }
            self.run_partition(partition, share.now_ms, &mut local);
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
        self.publish_map_event(share, partial.count);
        let mut out = Vec::with_capacity(partial.frames.len() + 64);
        self.write_response(&partial, &mut out);
        Some(out)
    }

    /// Whether other members run a share of this request (listener changes stay on this
    /// member: smart clients register with every member themselves).
    pub fn is_cluster_wide(&self) -> bool {
        !matches!(self.operation, WideOperation::AddListener(_) | WideOperation::RemoveListener(_))
    }

    /// Adds `count` shares (other members') to wait for. Call before any share can finish.
    pub fn add_shares(&self, count: usize) {
        self.remaining.fetch_add(count, Ordering::AcqRel);
    }

    /// Merges another member's answer to its share (None: that member left or failed, its
    /// share counts as empty). Returns the response when this was the last share.
    pub fn merge_remote(&self, answer: Option<&Message<'_>>) -> Option<Vec<u8>> {
        if let Some(message) = answer.filter(|message| message.message_type() == self.response_type) {
            let mut partial = self.partial.lock();
            let merged = match self.operation {
                WideOperation::Size => IntResponse::decode(message).map(|r| partial.count += r.response.max(0) as u64),
                WideOperation::IsEmpty => {
                    BoolResponse::decode(message).map(|r| partial.count += u64::from(!r.response))
                }
                WideOperation::ContainsValue(_) => BoolResponse::decode(message).map(|r| partial.found |= r.response),
                WideOperation::KeySet | WideOperation::Values | WideOperation::EntrySet => {
                    list_frames(message).map(|frames| partial.frames.extend_from_slice(frames))
                }
                _ => Ok(()),
            };
            if let Err(error) = merged {
                tracing::warn!(%error, "malformed share answer from a member: ignored");
            }
        } else if let Some(message) = answer {
            tracing::warn!(ty = %message.message_type(), "a member answered its share with an error: ignored");
        }
        if self.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
            return None;
        }
        let partial = std::mem::take(&mut *self.partial.lock());
        let mut out = Vec::with_capacity(partial.frames.len() + 64);
        self.write_response(&partial, &mut out);
        Some(out)
    }

    /// CLEAR_ALL / EVICT_ALL, once per request, from the share that answers it.
    fn publish_map_event(&self, share: &mut ShareContext<'_>, count: u64) {
        let kind = match self.operation {
            WideOperation::Clear => EventKind::ClearAll,
            WideOperation::EvictAll => EventKind::EvictAll,
            _ => return,
        };
        // Hazelcast publishes nothing when nothing was cleared or evicted.
        if count == 0 || !share.listeners.has(&self.name) {
            return;
        }
        let event = Event {
            kind,
            partition_id: -1,
            key: None,
            value: None,
            old_value: None,
            affected_entries: count.min(i32::MAX as u64) as i32,
            source: self.connection.client_uuid(),
        };
        share.listeners.publish(share.outbox, share.member, &self.name, event);
    }

    fn run_partition(&self, partition: &mut PartitionStore, now_ms: i64, local: &mut Partial) {
        let name = &*self.name;
        match &self.operation {
            WideOperation::Clear | WideOperation::EvictAll => {
                if let Some(map) = partition.existing_mut(name) {
                    local.count += map.clear(now_ms) as u64;
                }
            }
            WideOperation::Destroy => {
                local.count += partition.drop_map(name) as u64;
            }
            WideOperation::Flush | WideOperation::AddListener(_) | WideOperation::RemoveListener(_) => {}
            operation => {
                let Some(map) = partition.map(name) else { return };
                match operation {
                    WideOperation::Size | WideOperation::IsEmpty => local.count += map.live_len(now_ms) as u64,
                    WideOperation::ContainsValue(value) => {
                        local.found |= map.iter(now_ms).any(|(_, record)| record.value == *value);
                    }
                    WideOperation::KeySet => {
                        map.iter(now_ms).for_each(|(key, _)| write_frame(&mut local.frames, 0, key))
                    }
                    WideOperation::Values => {
                        map.iter(now_ms).for_each(|(_, record)| write_frame(&mut local.frames, 0, &record.value));
                    }
                    WideOperation::EntrySet => map.iter(now_ms).for_each(|(key, record)| {
                        write_frame(&mut local.frames, 0, key);
                        write_frame(&mut local.frames, 0, &record.value);
                    }),
                    _ => unreachable!("handled above"),
                }
            }
        }
    }

    pub fn correlation_id(&self) -> i64 {
        self.correlation_id
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
            WideOperation::AddListener(ref listener) => {
                UuidResponse { response: Some(listener.id) }.encode(out, ty, corr, 0);
            }
            WideOperation::RemoveListener(_) => {
                BoolResponse { response: partial.found }.encode(out, ty, corr, 0);
            }
        }
    }
}

/// The raw item frames of a list response (between its BEGIN and END frames).
fn list_frames<'a>(message: &Message<'a>) -> Result<&'a [u8], DecodeError> {
    let mut reader = message.reader();
    reader.begin()?;
    let items = reader.remaining();
    reader.skip_to_end()?;
    let after = reader.remaining();
    let length = items.len() - after.len();
    // The END frame (header only) closes the list.
    Ok(&items[..length.saturating_sub(ferrogrid_protocol::frame::FRAME_HEADER_SIZE)])
}
