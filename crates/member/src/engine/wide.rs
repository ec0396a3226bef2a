//! Work over every partition of an object (a map's size, clear, keySet, queries, listener
//! registration, …), as each structure implements it: [`WideOperation`], a per-partition step
//! that adds to a typed [`Partial`]; partials merge (a reactor's partitions, then the reactors,
//! then the members) and the merged one gives the client's [`Reply`] once, which the Hazelcast
//! adapter (`route/wire.rs`) encodes: no operation writes a client response. The partials
//! most operations merge are here too ([`Count`], [`Found`], [`Items`], `()`); operations every
//! kind of object shares (listener registration, destroy) are in `objects.rs`, each structure's
//! own in its folder (`map/wide.rs`, `multimap/wide.rs`, `replicated_map/wide.rs`). What runs
//! them, the fan-out job, is routing's (`route/fanout.rs`).
//!
//! To add one: a struct holding what the request asked (decoded once by its classifier), its
//! step over one partition, its partial (one of these, or a new type implementing [`Partial`],
//! with tests of its merge and its member encoding), and its reply.

pub(crate) mod objects;

use crate::engine::listeners::{ClearInvalidation, Event, EventKind, Listeners, Registry};
use crate::engine::pn_counter::state::PnCounters;
use crate::engine::request::{ErrorKind, OpError, Replies, Reply};
use crate::net::connection::ConnectionShared;
use crate::net::outbox::Outbox;
use crate::partition::objects::PartitionStore;
use crate::route::wire::{self, HazelcastReply};
use ferrogrid_protocol::message::{MessageReader, MessageWriter, RESPONSE_HEADER_SIZE};
use ferrogrid_protocol::{DecodeError, Message, MessageType, Uuid};
use parking_lot::Mutex;
use std::fmt;
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
    /// Every partition of the reactor, owned or not: a replicated map's reads, over the copy
    /// of every partition each member holds.
    Every,
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
    /// with every member themselves, and a listener belongs to one member (a unisocket
    /// client's registration overrides [`WideOperation::cluster_wide`]: see `relays.rs`).
    const CLUSTER_WIDE: bool = true;

    /// [`WideOperation::CLUSTER_WIDE`] for this request.
    fn cluster_wide(&self) -> bool {
        Self::CLUSTER_WIDE
    }

    /// A registration whose events every member relays to the client through this member:
    /// its registration id.
    fn relayed_registration(&self) -> Option<Uuid> {
        None
    }

    /// A registration this request removes (whose relays go too).
    fn removed_registration(&self) -> Option<Uuid> {
        None
    }

    /// The member the client sent the request for (it runs there alone; another member
    /// forwards it there): None for a request any member answers for the cluster.
    fn target(&self) -> Option<Uuid> {
        None
    }

    /// What a share starts from (and what a share with nothing to contribute adds).
    fn empty(&self) -> Self::Partial;

    /// Once per reactor, before its partitions: work on the reactor's own copy of the
    /// listener registrations.
    fn on_reactor(&self, _map: &str, _listeners: &mut Listeners, _partial: &mut Self::Partial) {}

    /// Once per reactor: work on the PN counter replicas it holds (which live outside the
    /// partitions).
    fn on_counters(&self, _name: &str, _counters: &mut PnCounters, _partial: &mut Self::Partial) {}

    /// One partition's step: read the map's entries there (or change them), adding to
    /// `partial`. `owned`: this member owns the partition (always, unless `PARTITIONS` is
    /// `Replicas` or `Every`; a change counts only what it did to owned partitions, as a
    /// backup's copy would count twice). Entries expired at `now_ms` are invisible. None by
    /// default: for an operation that touches no partition, or does its share in `on_share`.
    fn on_partition(
        &self,
        _map: &str,
        _partition: &mut PartitionStore,
        _owned: bool,
        _now_ms: i64,
        _partial: &mut Self::Partial,
    ) {
    }

    /// This reactor's share: by default [`WideOperation::on_partition`] over each partition
    /// that [`WideOperation::PARTITIONS`] names. An operation that needs more of the reactor
    /// than one partition at a time (a replicated map's putAll and clear: the events they
    /// publish and the changes they send every other member) does its share here instead.
    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Self::Partial)
    where
        Self: Sized,
    {
        if Self::PARTITIONS == Partitions::None {
            return;
        }
        for (index, partition) in share.partitions.iter_mut().enumerate() {
            let owned = share.owned.get(index).copied().unwrap_or(true);
            if Self::PARTITIONS == Partitions::Owned && !owned {
                continue;
            }
            self.on_partition(map, partition, owned, share.now_ms, partial);
        }
    }

    /// The map-wide event the answering share publishes once per request, with how many
    /// entries the request affected, and to which registry's listeners.
    fn map_event(&self, _partial: &Self::Partial) -> Option<(Registry, EventKind, u64)> {
        None
    }

    /// What the map event's near-cache invalidation names (a clear's: the map name's
    /// partition, its uuid and sequence), if a share took it.
    fn clear_invalidation(&self, _partial: &Self::Partial) -> Option<ClearInvalidation> {
        None
    }

    /// The client's answer from the merged partial (once per request), which the front end
    /// encodes. It borrows from the operation and the partial, and may take from the partial
    /// what it consumes (an aggregation's accumulators).
    fn reply<'p>(&'p self, partial: &'p mut Self::Partial) -> Result<Reply<'p>, OpError>;

    /// The failure to answer instead of a reply that encodes to `bytes` bytes, if that is more
    /// than the request may answer (a query's answer beyond max-message-bytes).
    fn oversized(&self, _partial: &Self::Partial, _bytes: usize) -> Option<OpError> {
        None
    }
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
    /// The reactor's PN counter replicas.
    pub counters: &'a mut PnCounters,
    /// The executors shut down, as this reactor's copy records them.
    pub executors: &'a mut crate::engine::executor::shutdowns::Shutdowns,
    /// The reactor's replicated-map versions and outgoing changes.
    pub replicated: &'a mut crate::engine::replicated_map::store::Shares,
    /// Settings of objects a share creates.
    pub settings: &'a mut crate::engine::settings::SettingsCache,
    /// The cluster's Compact schemas (queries read values with them).
    pub schemas: &'a Arc<crate::engine::schemas::Schemas>,
    /// This reactor's index and the member's reactor count: partition `local` of `partitions`
    /// is partition `index + local × count` of the map.
    pub reactor: (usize, usize),
    /// The cluster's partition count.
    pub partition_count: u16,
    /// Requests released from key locks by this share (a transaction's end): the reactor
    /// re-runs them after it.
    pub released: &'a mut Vec<crate::engine::locks::Parked>,
    /// Partitions (indexes into `partitions`) whose objects this share changed as their owner
    /// would a request's (a transaction's commit): the reactor sends their changes to the
    /// backups after it.
    pub touched: &'a mut Vec<usize>,
}

/// Records in `touched` that local partition `local` changed, once ([`ShareContext::touch`],
/// for a share that holds one of `partitions`' stores while it records the change).
pub fn touch(touched: &mut Vec<usize>, local: usize) {
    if !touched.contains(&local) {
        touched.push(local);
    }
}

impl ShareContext<'_> {
    /// Records that `partitions[local]` changed (once), for the reactor to back it up after.
    pub fn touch(&mut self, local: usize) {
        touch(self.touched, local);
    }

    /// The map's partition id of `partitions[local]`.
    pub fn partition_id(&self, local: usize) -> u16 {
        (self.reactor.0 + local * self.reactor.1) as u16
    }

    /// The partition id of `key` and its index in `partitions`, if it is this reactor's.
    pub fn local_of(&self, key: &[u8]) -> Option<(u16, usize)> {
        let partition_id =
            ferrogrid_protocol::data::partition_for(ferrogrid_protocol::Data(key), self.partition_count).0;
        let (reactor, count) = self.reactor;
        (partition_id as usize % count == reactor).then_some((partition_id, partition_id as usize / count))
    }
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
pub(crate) enum Answer {
    /// The client: the response, and the map event.
    Client,
    /// The member that sent the WIDE request: this member's merged partial.
    Member,
}

/// A decoded map-wide request: one [`WideOperation`] and the partial its shares merge into.
#[derive(Debug)]
pub struct WideRequest {
    pub(crate) shares: Box<dyn Shares>,
    pub(crate) answer: Answer,
}

impl WideRequest {
    pub(crate) fn new<W: WideOperation>(operation: W) -> WideRequest {
        WideRequest { shares: Box::new(Merged { operation, partial: Mutex::new(None) }), answer: Answer::Client }
    }

    /// See [`WideOperation::relayed_registration`].
    pub(crate) fn relayed_registration(&self) -> Option<Uuid> {
        self.shares.relayed_registration()
    }

    /// See [`WideOperation::removed_registration`].
    pub(crate) fn removed_registration(&self) -> Option<Uuid> {
        self.shares.removed_registration()
    }

    /// See [`WideOperation::target`].
    pub(crate) fn target(&self) -> Option<Uuid> {
        self.shares.target()
    }

    /// Whether it reads the partitions' owners' data (a size, a query): in a cluster with no
    /// data member there is none to read, and Hazelcast refuses it.
    pub(crate) fn reads_owned_partitions(&self) -> bool {
        self.shares.partitions() == Partitions::Owned
    }

    /// The same request run as another member's share of it: answered with this member's
    /// merged partial, and never sent on to other members.
    pub(crate) fn for_member(self) -> WideRequest {
        WideRequest { answer: Answer::Member, ..self }
    }
}

/// The object-safe face of a [`WideOperation`] with its merged partial, so that one `FanOut`
/// type (in reactor inboxes and forward tables) runs any operation.
pub(crate) trait Shares: fmt::Debug + Send + Sync {
    /// Runs this reactor's share and merges it.
    fn run(&self, map: &str, share: &mut ShareContext<'_>);
    /// Merges another member's answer (its merged partial).
    fn merge_answer(&self, message: &Message<'_>) -> Result<(), DecodeError>;
    /// Takes the merged partial and writes the answer to `job`'s requester into `out`.
    fn write_answer(&self, job: &Requester<'_>, share: &mut ShareContext<'_>, out: &mut Vec<u8>);
    fn is_cluster_wide(&self) -> bool;
    fn relayed_registration(&self) -> Option<Uuid>;
    fn removed_registration(&self) -> Option<Uuid>;
    fn target(&self) -> Option<Uuid>;
    fn partitions(&self) -> Partitions;
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
        self.operation.on_counters(map, share.counters, &mut local);
        self.operation.on_share(map, share, &mut local);
        self.merge(local);
    }

    fn merge_answer(&self, message: &Message<'_>) -> Result<(), DecodeError> {
        self.merge(W::Partial::read_from(message)?);
        Ok(())
    }

    fn write_answer(&self, job: &Requester<'_>, share: &mut ShareContext<'_>, out: &mut Vec<u8>) {
        let mut partial = self.partial.lock().take().expect("every reactor's share merged before the last share");
        match job.answer {
            Answer::Member => {
                // Member to member, not a client response: the partial's own encoding, kept
                // beside the partials (only members read it).
                let mut writer = MessageWriter::response(out, job.response_type, job.correlation_id, 0);
                partial.write_to(&mut writer);
                writer.finish();
            }
            Answer::Client => {
                if let Some((registry, kind, count)) = self.operation.map_event(&partial) {
                    let source = job.connection.map_or(share.member, |connection| connection.client_uuid());
                    let clear = self.operation.clear_invalidation(&partial);
                    publish_map_event(share, (registry, job.name), source, (kind, count), clear);
                }
                write_reply(&self.operation, &mut partial, out, (job.response_type, job.correlation_id));
            }
        }
    }

    fn is_cluster_wide(&self) -> bool {
        self.operation.cluster_wide()
    }

    fn relayed_registration(&self) -> Option<Uuid> {
        self.operation.relayed_registration()
    }

    fn removed_registration(&self) -> Option<Uuid> {
        self.operation.removed_registration()
    }

    fn target(&self) -> Option<Uuid> {
        self.operation.target()
    }

    fn partitions(&self) -> Partitions {
        W::PARTITIONS
    }
}

/// Writes `operation`'s answer to the client from the merged `partial`, to the request
/// (`response_type`, `correlation_id`): its reply as the Hazelcast adapter encodes it, or its
/// failure, or the failure for a reply too large to send.
pub(crate) fn write_reply<W: WideOperation>(
    operation: &W,
    partial: &mut W::Partial,
    out: &mut Vec<u8>,
    (response_type, correlation_id): (MessageType, i64),
) {
    let start = out.len();
    match operation.reply(partial) {
        Ok(reply) => {
            HazelcastReply { out, response_type, correlation_id }.reply(reply);
            if let Some(failure) = operation.oversized(partial, out.len() - start) {
                wire::replace_with_error(out, start, correlation_id, &failure);
            }
        }
        Err(failure) => wire::write_error(out, correlation_id, &failure),
    }
}

/// CLEAR_ALL / EVICT_ALL for `map` (a map's or a multimap's: `registry`), from the share that
/// answers the request; a map's near-cache invalidation names `clear`.
fn publish_map_event(
    share: &mut ShareContext<'_>,
    (registry, map): (Registry, &str),
    source: Uuid,
    (kind, count): (EventKind, u64),
    clear: Option<ClearInvalidation>,
) {
    let event = Event {
        kind,
        partition_id: None,
        key: None,
        value: None,
        old_value: None,
        affected_entries: count.min(i32::MAX as u64) as i32,
        source,
    };
    match registry {
        Registry::Entries => share.listeners.publish_map_wide(share.outbox, share.member, map, event, clear),
        other => share.listeners.publish_to(other, share.outbox, share.member, map, event),
    }
}

/// The outcome of looking at a request that might be map-wide.
#[derive(Debug)]
pub enum Classified {
    NotWide,
    /// A map-wide request and the map it names.
    Wide(WideRequest, Box<str>),
    /// Well-formed but refused (e.g. a null value for containsValue): answer with this error.
    Refused(OpError),
}

impl Classified {
    /// `operation` over every partition of the object `name`.
    pub(crate) fn wide<W: WideOperation>(operation: W, name: &str) -> Result<Classified, DecodeError> {
        Ok(Classified::Wide(WideRequest::new(operation), name.into()))
    }

    /// `operation` over every partition of the object a request names in its first frame, its
    /// only field (size, clear, keySet, …).
    pub(crate) fn named<W: WideOperation>(operation: W, message: &Message<'_>) -> Result<Classified, DecodeError> {
        let operation = WideRequest::new(operation);
        Ok(Classified::Wide(operation, message.reader().string()?.into()))
    }

    /// Refused as a null argument, with `text` (a null key or value).
    pub(crate) fn null(text: &str) -> Result<Classified, DecodeError> {
        Ok(Classified::Refused(OpError::new(ErrorKind::NullArgument, text)))
    }
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

/// What answering a job needs of it: who asked, for which object, and how.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Requester<'a> {
    /// Who the answer goes to (None: work the member started itself, answered to no one).
    pub connection: Option<&'a Arc<ConnectionShared>>,
    pub name: &'a str,
    pub answer: Answer,
    pub response_type: MessageType,
    pub correlation_id: i64,
}

/// A number of entries (counted, cleared, evicted or dropped).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Count(pub u64);

impl Partial for Count {
    fn merge(&mut self, other: Count) {
        self.0 += other.0;
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&(self.0.min(i64::MAX as u64) as i64));
    }

    fn read_from(message: &Message<'_>) -> Result<Count, DecodeError> {
        let count: i64 = message.fixed(RESPONSE_HEADER_SIZE)?.read()?;
        Ok(Count(count.max(0) as u64))
    }
}

impl Count {
    /// The count as a Java int (a size), capped at Integer.MAX_VALUE.
    pub(crate) fn int(self) -> Reply<'static> {
        Reply::Int(self.0.min(i32::MAX as u64) as i32)
    }
}

/// Whether any share found what it looked for.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found(pub bool);

impl Partial for Found {
    fn merge(&mut self, other: Found) {
        self.0 |= other.0;
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&self.0);
    }

    fn read_from(message: &Message<'_>) -> Result<Found, DecodeError> {
        Ok(Found(message.fixed(RESPONSE_HEADER_SIZE)?.read()?))
    }
}

/// List items already encoded as frames (keys, values, or key and value pairs), in the order
/// the shares merged: the frames are the member answer's list as they are, and the client's
/// answer copies them once ([`Reply::FramedList`]), without re-encoding.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Items(pub Vec<u8>);

impl Partial for Items {
    fn merge(&mut self, other: Items) {
        if self.0.is_empty() {
            self.0 = other.0;
        } else {
            self.0.extend_from_slice(&other.0);
        }
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().append_frames(&self.0).end();
    }

    fn read_from(message: &Message<'_>) -> Result<Items, DecodeError> {
        Ok(Items(list_frames(&mut message.reader())?.to_vec()))
    }
}

impl Items {
    /// The items as one list (keySet, values, entrySet).
    pub(crate) fn list(&self) -> Reply<'_> {
        Reply::FramedList(&self.0)
    }
}

/// Nothing to merge: the work is done by the steps themselves.
impl Partial for () {
    fn merge(&mut self, _other: ()) {}
    fn write_to(&self, _writer: &mut MessageWriter<'_>) {}
    fn read_from(_message: &Message<'_>) -> Result<(), DecodeError> {
        Ok(())
    }
}

/// What a listing returns of each entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    Keys,
    Values,
    Entries,
}
