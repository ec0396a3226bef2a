//! Map-wide operations (size, clear, keySet, …): work over every partition of a map, done as
//! one share per reactor (and, for cluster-wide work, one per other member) and answered once.
//!
//! The interface is [`WideOperation`]: a per-partition step that adds to a typed [`Partial`];
//! partials merge (a reactor's partitions, then the reactors, then the members) and the merged
//! one is encoded into the client response once. The operations themselves are in
//! [`operations`]; this module is the engine that runs any of them, and [`classify`], which
//! decodes a request into one.
//!
//! The origin reactor hands the same `Arc<FanOut>` to every other reactor (one hop each) and
//! runs its own share inline. Cluster-wide work also goes to every other member as
//! `peer::WIDE` (the client's request bytes); each runs its own fan-out and answers with its
//! merged partial ([`Partial::write_to`]), not a client response, so a member's answer keeps
//! what merging needs (a top-N list with its order, an average's sum and count). No thread
//! waits for another: shares merge into the job under a short lock, and `remaining` counts
//! down to the share that answers.
//!
//! Invariants: every reactor runs exactly one share of each job it is handed, and the job is
//! answered exactly once, by the share that brings `remaining` to zero.

pub(crate) mod operations;

use crate::connection::ConnectionShared;
use crate::listeners::{Event, EventKind, Listener, Listeners};
use crate::outbox::Outbox;
use crate::store::PartitionStore;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorCode, ErrorHolder};
use ferrogrid_protocol::message::{MessageReader, MessageWriter};
use ferrogrid_protocol::{DecodeError, Message, MessageType, Uuid};
use operations::{Clear, ContainsValue, Destroy, Flush, IsEmpty, List, Listed, Size};
use parking_lot::Mutex;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Which partitions a share's per-partition step visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Partitions {
    /// The partitions this member owns: reads, which would count a backup's copy twice.
    Owned,
    /// Every replica held here, owned or backup: changes that are not replicated as records
    /// (clear, evictAll, destroy), so every member applies them to each copy it holds.
    Replicas,
    /// None: the work is on each reactor's own state only (listener registrations).
    None,
}

/// What a share contributes: a partition's, a reactor's or a member's part of the result, and
/// the merge of any number of them. Merging is associative and commutative (list operations
/// keep items in arrival order, which clients do not rely on), so shares may merge in any order
/// and grouping.
pub(crate) trait Partial: fmt::Debug + Send + Sized + 'static {
    /// Adds another share's partial to this one.
    fn merge(&mut self, other: Self);
    /// Encodes this partial as the body of a member's answer to a WIDE request: fixed-size
    /// fields into the open initial frame, then any frames.
    fn write_to(&self, writer: &mut MessageWriter<'_>);
    /// Decodes what [`Partial::write_to`] wrote.
    fn read_from(message: &Message<'_>) -> Result<Self, DecodeError>;
}

/// One kind of map-wide work. An implementation says what one partition contributes and how
/// the merged result is answered; the engine ([`FanOut`]) does the rest: running the step on
/// every reactor's partitions, merging, sending the request to other members and merging
/// their answers, publishing the map event, and answering exactly once.
pub(crate) trait WideOperation: fmt::Debug + Send + Sync + 'static {
    /// The share result this operation merges.
    type Partial: Partial;
    /// Which partitions [`WideOperation::on_partition`] visits.
    const PARTITIONS: Partitions;
    /// Whether other members run a share too. Listener changes do not: smart clients register
    /// with every member themselves, and a listener belongs to one member.
    const CLUSTER_WIDE: bool = true;

    /// What a share starts from (and what a share with nothing to contribute adds).
    fn empty(&self) -> Self::Partial;

    /// Once per reactor, before its partitions: work on the reactor's own copy of the
    /// listener registrations.
    fn on_reactor(&self, _map: &str, _listeners: &mut Listeners, _partial: &mut Self::Partial) {}

    /// One partition's step: read the map's entries there (or change them), adding to
    /// `partial`. Entries expired at `now_ms` are invisible.
    fn on_partition(&self, map: &str, partition: &mut PartitionStore, now_ms: i64, partial: &mut Self::Partial);

    /// The map-wide event the answering share publishes once per request, with how many
    /// entries the request affected (none is published for 0).
    fn map_event(&self, _partial: &Self::Partial) -> Option<(EventKind, u64)> {
        None
    }

    /// Encodes the client response from the merged partial (once per request).
    fn write_response(
        &self,
        partial: Self::Partial,
        out: &mut Vec<u8>,
        response_type: MessageType,
        correlation_id: i64,
    );
}

/// What a share needs besides the job: the reactor's partitions, listeners and outbox.
#[derive(Debug)]
pub struct ShareContext<'a> {
    pub partitions: &'a mut [PartitionStore],
    pub listeners: &'a mut Listeners,
    pub outbox: &'a mut Outbox,
    pub now_ms: i64,
    pub member: Uuid,
    /// Per partition of `partitions`: this member owns it ([`Partitions::Owned`] steps skip
    /// the others).
    pub owned: &'a [bool],
}

/// Which share of a job a reactor completes.
#[derive(Debug, Clone, Copy)]
pub enum Share<'a> {
    /// Its own: the step over this reactor's partitions.
    Here,
    /// Another member's answer to its WIDE request (None: the member left before answering).
    Member(Option<Message<'a>>),
}

/// Who the merged result goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// The client: the response, and the map event.
    Client,
    /// The member that sent the WIDE request: this member's merged partial.
    Member,
}

/// A decoded map-wide request: one [`WideOperation`] and the partial its shares merge into.
#[derive(Debug)]
pub struct WideRequest {
    shares: Box<dyn Shares>,
    answer: Answer,
}

impl WideRequest {
    pub(crate) fn new<W: WideOperation>(operation: W) -> WideRequest {
        WideRequest { shares: Box::new(Merged { operation, partial: Mutex::new(None) }), answer: Answer::Client }
    }

    /// Drops a map's data and listeners everywhere (Client.DestroyProxy of a map).
    pub(crate) fn destroy() -> WideRequest {
        WideRequest::new(Destroy)
    }

    /// The same request run as another member's share of it: answered with this member's
    /// merged partial, and never sent on to other members.
    pub(crate) fn for_member(self) -> WideRequest {
        WideRequest { answer: Answer::Member, ..self }
    }
}

/// The object-safe face of a [`WideOperation`] with its merged partial, so that one `FanOut`
/// type (in reactor inboxes and forward tables) runs any operation.
trait Shares: fmt::Debug + Send + Sync {
    /// Runs this reactor's share and merges it.
    fn run(&self, map: &str, share: &mut ShareContext<'_>);
    /// Merges another member's answer (its merged partial).
    fn merge_answer(&self, message: &Message<'_>) -> Result<(), DecodeError>;
    /// Takes the merged partial and writes the answer to `job`'s requester into `out`.
    fn write_answer(&self, job: &FanOut, share: &mut ShareContext<'_>, out: &mut Vec<u8>);
    fn is_cluster_wide(&self) -> bool;
}

/// An operation and the merge of the shares so far (None until the first share merges).
#[derive(Debug)]
struct Merged<W: WideOperation> {
    operation: W,
    partial: Mutex<Option<W::Partial>>,
}

impl<W: WideOperation> Merged<W> {
    fn merge(&self, other: W::Partial) {
        let mut partial = self.partial.lock();
        match &mut *partial {
            Some(partial) => partial.merge(other),
            None => *partial = Some(other),
        }
    }
}

impl<W: WideOperation> Shares for Merged<W> {
    fn run(&self, map: &str, share: &mut ShareContext<'_>) {
        let mut local = self.operation.empty();
        self.operation.on_reactor(map, share.listeners, &mut local);
        if W::PARTITIONS != Partitions::None {
            for (index, partition) in share.partitions.iter_mut().enumerate() {
                if W::PARTITIONS == Partitions::Owned && !share.owned.get(index).copied().unwrap_or(true) {
                    continue;
                }
                self.operation.on_partition(map, partition, share.now_ms, &mut local);
            }
        }
        self.merge(local);
    }

    fn merge_answer(&self, message: &Message<'_>) -> Result<(), DecodeError> {
        self.merge(W::Partial::read_from(message)?);
        Ok(())
    }

    fn write_answer(&self, job: &FanOut, share: &mut ShareContext<'_>, out: &mut Vec<u8>) {
        let partial = self.partial.lock().take().expect("every reactor's share merged before the last share");
        match job.answer {
            Answer::Member => {
                let mut writer = MessageWriter::response(out, job.response_type, job.correlation_id, 0);
                partial.write_to(&mut writer);
                writer.finish();
            }
            Answer::Client => {
                if let Some((kind, count)) = self.operation.map_event(&partial) {
                    publish_map_event(share, &job.name, job.connection.client_uuid(), kind, count);
                }
                self.operation.write_response(partial, out, job.response_type, job.correlation_id);
            }
        }
    }

    fn is_cluster_wide(&self) -> bool {
        W::CLUSTER_WIDE
    }
}

/// CLEAR_ALL / EVICT_ALL for `map`, from the share that answers the request.
fn publish_map_event(share: &mut ShareContext<'_>, map: &str, source: Uuid, kind: EventKind, count: u64) {
    // Hazelcast publishes nothing when nothing was cleared or evicted.
    if count == 0 || !share.listeners.has(map) {
        return;
    }
    let event = Event {
        kind,
        partition_id: -1,
        key: None,
        value: None,
        old_value: None,
        affected_entries: count.min(i32::MAX as u64) as i32,
        source,
    };
    share.listeners.publish(share.outbox, share.member, map, event);
}

/// One map-wide request in flight, shared by all reactors until the last share answers.
#[derive(Debug)]
pub struct FanOut {
    pub connection: Arc<ConnectionShared>,
    correlation_id: i64,
    response_type: MessageType,
    name: Box<str>,
    answer: Answer,
    shares: Box<dyn Shares>,
    remaining: AtomicUsize,
}

impl FanOut {
    /// A job of `shares` shares (this member's reactors); add other members' with
    /// [`FanOut::add_shares`] before any share runs.
    pub fn new(
        connection: Arc<ConnectionShared>,
        correlation_id: i64,
        response_type: MessageType,
        name: Box<str>,
        request: WideRequest,
        shares: usize,
    ) -> FanOut {
        assert!(shares > 0, "a fan-out has at least the origin reactor's share");
        FanOut {
            connection,
            correlation_id,
            response_type,
            name,
            answer: request.answer,
            shares: request.shares,
            remaining: AtomicUsize::new(shares),
        }
    }

    /// Runs one reactor's share over its partitions. Returns the encoded answer when this was
    /// the last share (the caller sends it), otherwise None.
    pub fn run_share(&self, share: &mut ShareContext<'_>) -> Option<Vec<u8>> {
        self.shares.run(&self.name, share);
        self.finish_share(share)
    }

    /// Merges another member's answer to its share (None: that member left; an error answer
    /// or a malformed one counts as an empty share). Returns the answer when this was the last
    /// share; `share` is the reactor that received it, which publishes the map event.
    pub fn merge_remote(&self, answer: Option<&Message<'_>>, share: &mut ShareContext<'_>) -> Option<Vec<u8>> {
        match answer {
            Some(message) if message.message_type() == self.response_type => {
                if let Err(error) = self.shares.merge_answer(message) {
                    tracing::warn!(%error, "malformed share answer from a member: ignored");
                }
            }
            Some(message) => {
                tracing::warn!(ty = %message.message_type(), "a member answered its share with an error: ignored");
            }
            None => {}
        }
        self.finish_share(share)
    }

    /// Counts one share done; the last one writes the answer.
    fn finish_share(&self, share: &mut ShareContext<'_>) -> Option<Vec<u8>> {
        let before = self.remaining.fetch_sub(1, Ordering::AcqRel);
        assert!(before > 0, "more shares finished than the job has");
        if before != 1 {
            return None;
        }
        let mut out = Vec::new();
        self.shares.write_answer(self, share, &mut out);
        Some(out)
    }

    /// Whether other members run a share of this request: not for listener changes, and
    /// never for a member's share (which would send it round again).
    pub fn is_cluster_wide(&self) -> bool {
        self.answer == Answer::Client && self.shares.is_cluster_wide()
    }

    /// Adds `count` shares (other members') to wait for. Call before any share can finish.
    pub fn add_shares(&self, count: usize) {
        self.remaining.fetch_add(count, Ordering::AcqRel);
    }

    pub fn correlation_id(&self) -> i64 {
        self.correlation_id
    }
}

/// The outcome of looking at a request that might be map-wide.
#[derive(Debug)]
pub enum Classified {
    NotWide,
    /// A map-wide request and the map it names.
    Wide(WideRequest, Box<str>),
    /// Well-formed but refused (e.g. a null value for containsValue): answer with this error.
    Refused(ErrorCode, String),
}

/// Recognises map-wide requests (including listener registration, which every reactor must
/// apply) and decodes each into its operation.
pub fn classify(message: &Message<'_>, connection: &Arc<ConnectionShared>) -> Result<Classified, DecodeError> {
    let name_only = |operation: WideRequest| -> Result<Classified, DecodeError> {
        Ok(Classified::Wide(operation, message.reader().string()?.into()))
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
        Classified::Wide(WideRequest::new(operations::AddListener::new(listener)), name.into())
    };
    match ty {
        MapSize::TYPE => name_only(WideRequest::new(Size)),
        MapIsEmpty::TYPE => name_only(WideRequest::new(IsEmpty)),
        MapClear::TYPE => name_only(WideRequest::new(Clear::new(EventKind::ClearAll))),
        MapKeySet::TYPE => name_only(WideRequest::new(List(Listed::Keys))),
        MapValues::TYPE => name_only(WideRequest::new(List(Listed::Values))),
        MapEntrySet::TYPE => name_only(WideRequest::new(List(Listed::Entries))),
        MapEvictAll::TYPE => name_only(WideRequest::new(Clear::new(EventKind::EvictAll))),
        MapFlush::TYPE => name_only(WideRequest::new(Flush)),
        MapContainsValue::TYPE => {
            let request = MapContainsValue::decode(message)?;
            if request.value.type_id().unwrap_or(0) == 0 {
                return Ok(Classified::Refused(error::NULL_POINTER, "Null value is not allowed!".into()));
            }
            let operation = WideRequest::new(ContainsValue::new(request.value.0));
            Ok(Classified::Wide(operation, request.name.into()))
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
            let operation = operations::RemoveListener::new(r.registration_id.unwrap_or_default());
            Ok(Classified::Wide(WideRequest::new(operation), r.name.into()))
        }
        _ => Ok(Classified::NotWide),
    }
}

/// Writes the error for a refused map-wide request.
pub fn write_refusal(out: &mut Vec<u8>, correlation_id: i64, code: ErrorCode, message: &str) {
    write_error_response(out, correlation_id, &[ErrorHolder { code, message: Some(message) }]);
}

/// The raw item frames of a list (from just after its BEGIN frame to just before its END
/// frame); `reader` moves past the END frame.
pub(crate) fn list_frames<'a>(reader: &mut MessageReader<'a>) -> Result<&'a [u8], DecodeError> {
    reader.begin()?;
    let items = reader.remaining();
    reader.skip_to_end()?;
    let length = items.len() - reader.remaining().len();
    // The END frame (header only) closes the list.
    Ok(&items[..length.saturating_sub(ferrogrid_protocol::frame::FRAME_HEADER_SIZE)])
}

/// Fixtures shared by the engine's and the operations' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::connection::ConnectionId;
    use crate::store::MapSettings;

    pub(crate) const MAP: &str = "m";
    pub(crate) const RESPONSE: MessageType = MessageType(0x01_2A01);

    /// A connection over loopback, and the socket at the client's end.
    pub(crate) fn loopback() -> (Arc<ConnectionShared>, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let client = std::net::TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (server, peer) = listener.accept().expect("accept");
        server.set_nonblocking(true).expect("non-blocking");
        let stream = mio::net::TcpStream::from_std(server);
        (Arc::new(ConnectionShared::new(ConnectionId(1), peer, 0, stream)), client)
    }

    /// Partitions holding `entries` of [`MAP`] (key, value, partition index), never expiring
    /// unless the value is `b"expired"` (which expires at time 5).
    pub(crate) fn partitions(count: usize, entries: &[(&[u8], &[u8], usize)]) -> Vec<PartitionStore> {
        let mut partitions: Vec<PartitionStore> = (0..count).map(|_| PartitionStore::default()).collect();
        for (key, value, index) in entries {
            let store = partitions[*index].map_mut(MAP, || Arc::new(MapSettings::default()));
            let ttl_ms = if *value == b"expired" { 5 } else { 0 };
            store.put(key, value, 0, ttl_ms, 0);
        }
        partitions
    }

    /// `operation`'s step over every partition (as one share would, all owned).
    pub(crate) fn share<W: WideOperation>(operation: &W, partitions: &mut [PartitionStore], now_ms: i64) -> W::Partial {
        let mut partial = operation.empty();
        for partition in partitions {
            operation.on_partition(MAP, partition, now_ms, &mut partial);
        }
        partial
    }

    /// `partial` as a member sends it and as the origin reads it back.
    pub(crate) fn over_the_hop<P: Partial>(partial: &P) -> P {
        let mut out = Vec::new();
        let mut writer = MessageWriter::response(&mut out, RESPONSE, 9, 0);
        partial.write_to(&mut writer);
        writer.finish();
        P::read_from(&Message::parse(&out).expect("well-formed")).expect("decodes")
    }

    /// The client response `operation` writes for `partial`.
    pub(crate) fn response<W: WideOperation>(operation: &W, partial: W::Partial) -> Vec<u8> {
        let mut out = Vec::new();
        operation.write_response(partial, &mut out, RESPONSE, 9);
        out
    }

    /// The items of a list response (or of a list after the initial frame).
    pub(crate) fn list_items(bytes: &[u8]) -> Vec<Vec<u8>> {
        let message = Message::parse(bytes).expect("well-formed");
        assert_eq!(message.correlation_id(), 9);
        let mut reader = message.reader();
        reader.begin().expect("a list");
        let mut items = Vec::new();
        while !reader.at_end().expect("a closed list") {
            items.push(reader.value_frame("an item").expect("an item").to_vec());
        }
        items
    }

    /// A listener of every event of [`MAP`] on `connection`.
    pub(crate) fn listener(connection: &Arc<ConnectionShared>) -> Listener {
        Listener {
            id: Uuid { most: 7, least: 7 },
            connection: connection.clone(),
            correlation_id: 3,
            event_type: MessageType(0x01_1902),
            include_value: false,
            flags: -1,
            key: None,
            invalidation: false,
        }
    }
}
