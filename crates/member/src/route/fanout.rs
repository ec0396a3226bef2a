//! Map-wide operations (size, clear, keySet, …): work over every partition of a map, done as
//! one share per reactor (and, for cluster-wide work, one per other member) and answered once.
//!
//! The interface is [`WideOperation`]: a per-partition step that adds to a typed [`Partial`];
//! partials merge (a reactor's partitions, then the reactors, then the members) and the merged
//! one gives the client's reply once ([`WideOperation::reply`], encoded by `route/wire.rs`).
//! The operations themselves are in structures (`engine/wide.rs` and each structure's
//! `wide.rs`), and a row's classifier decodes a request into one (`route/row.rs`); this module
//! is the engine that runs any of them.
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

use crate::engine::structures::ObjectKind;
use crate::engine::wide::{Answer, Requester, ShareContext, Shares, WideRequest};
use crate::net::connection::ConnectionShared;
use ferrogrid_protocol::{Message, MessageType};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One map-wide request in flight, shared by all reactors until the last share answers.
#[derive(Debug)]
pub struct FanOut {
    /// Who the answer goes to (None: work the member started itself, answered to no one).
    pub connection: Option<Arc<ConnectionShared>>,
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
        connection: Option<Arc<ConnectionShared>>,
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
    /// the last share (the caller sends it), otherwise None. (The member runs and counts a
    /// share in two steps, `PartitionOwner::run_share`.)
    #[cfg(test)]
    pub fn run_share(&self, share: &mut ShareContext<'_>) -> Option<Vec<u8>> {
        self.run_only(share);
        self.finish_share(share)
    }

    /// Runs one reactor's share without counting it done: the caller makes what it changed
    /// durable first (a persisting member's logs), then calls [`FanOut::finish_local`].
    pub fn run_only(&self, share: &mut ShareContext<'_>) {
        self.shares.run(&self.name, share);
    }

    /// Counts a share [`FanOut::run_only`] ran as done; the answer when it was the last.
    pub fn finish_local(&self, share: &mut ShareContext<'_>) -> Option<Vec<u8>> {
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
        self.shares.write_answer(&self.requester(), share, &mut out);
        Some(out)
    }

    /// Sends the answer the last share wrote to the requester (if any), ending its request in
    /// flight; returns the bytes sent.
    pub fn deliver(&self, response: &[u8]) -> usize {
        let Some(connection) = &self.connection else { return 0 };
        let sent = connection.send(response);
        connection.end_in_flight(1);
        sent
    }

    /// Whether other members run a share of this request: not for listener changes, and
    /// never for a member's share (which would send it round again).
    pub fn is_cluster_wide(&self) -> bool {
        self.answer == Answer::Client && self.shares.is_cluster_wide()
    }

    /// What answering this job needs of it.
    fn requester(&self) -> Requester<'_> {
        Requester {
            connection: self.connection.as_ref(),
            name: &self.name,
            answer: self.answer,
            response_type: self.response_type,
            correlation_id: self.correlation_id,
        }
    }

    /// Adds `count` shares (other members') to wait for. Call before any share can finish.
    pub fn add_shares(&self, count: usize) {
        self.remaining.fetch_add(count, Ordering::AcqRel);
    }
}

/// Destroy of an object of `service`: its data and listeners dropped everywhere.
pub(crate) fn destroy(service: crate::cluster::peer::Service) -> WideRequest {
    use crate::cluster::peer::Service;
    use crate::engine::executor::shutdowns::ExecutorKind;
    use crate::engine::listeners::Registry;
    use crate::engine::wide::objects::{destroy_object, DestroyPnCounter, ForgetShutdown};
    match service {
        Service::Object(kind) => destroy_object_of(kind),
        Service::Topic => destroy_object(None, Some(Registry::Messages)),
        Service::PnCounter => WideRequest::new(DestroyPnCounter),
        // An executor's shutdown is forgotten, as Hazelcast's services forget it.
        Service::Executor => WideRequest::new(ForgetShutdown(ExecutorKind::Plain)),
        Service::DurableExecutor => WideRequest::new(ForgetShutdown(ExecutorKind::Durable)),
        Service::ScheduledExecutor => WideRequest::new(ForgetShutdown(ExecutorKind::Scheduled)),
        // (A generator's state is dropped by `Shared::forget_object` on each member.)
        Service::ReliableTopic | Service::FlakeIdGenerator | Service::Xa => destroy_object(None, None),
    }
}

/// Makes [`destroy_object_of`] from the table of structures (`engine/structures.rs`).
macro_rules! destroyers {
    ($($kind:ident = $code:literal, $service:literal, $label:literal, $held:ident:
        $($store:ident)::+, [$($($rows:ident)::+),+], $($destroy:ident)::+;)+) => {
        /// Destroy of an object of `kind`: its structure's own.
        fn destroy_object_of(kind: ObjectKind) -> WideRequest {
            match kind {
                $(ObjectKind::$kind => crate::engine::$($destroy)::+(kind),)+
                #[cfg(test)]
                ObjectKind::Probe => crate::engine::wide::objects::destroy_object(Some(kind), None),
            }
        }
    };
}

crate::engine::structures::with_structures!(destroyers);

/// Fixtures shared by the engine's and the operations' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::engine::listeners::Listener;
    use crate::engine::settings::MapSettings;
    use crate::engine::wide::{Partial, WideOperation};
    use crate::net::connection::ConnectionId;
    use crate::partition::objects::PartitionStore;
    use ferrogrid_protocol::message::MessageWriter;
    use ferrogrid_protocol::Uuid;

    pub(crate) const MAP: &str = "m";
    pub(crate) const RESPONSE: MessageType = MessageType(0x01_2A01);

    /// A connection over loopback, and the socket at the client's end.
    pub(crate) fn loopback() -> (Arc<ConnectionShared>, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let client = std::net::TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (server, peer) = listener.accept().expect("accept");
        server.set_nonblocking(true).expect("non-blocking");
        let stream = mio::net::TcpStream::from_std(server);
        (Arc::new(ConnectionShared::new(ConnectionId(1), peer, stream)), client)
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
            operation.on_partition(MAP, partition, true, now_ms, &mut partial);
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

    /// The client response to `operation` for `partial`, as the Hazelcast adapter encodes it.
    pub(crate) fn response<W: WideOperation>(operation: &W, mut partial: W::Partial) -> Vec<u8> {
        let mut out = Vec::new();
        crate::engine::wide::write_reply(operation, &mut partial, &mut out, (RESPONSE, 9));
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
            local_only: false,
            predicate: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use crate::engine::listeners::EventKind;
    use crate::engine::listeners::Listeners;
    use crate::engine::map::store::Entry;
    use crate::engine::map::wide::Size;
    use crate::engine::pn_counter::state::PnCounters;
    use crate::engine::request::{OpError, Reply};
    use crate::engine::wide::{Count, Partial, Partitions, WideOperation};
    use crate::net::outbox::Outbox;
    use crate::partition::objects::PartitionStore;
    use ferrogrid_protocol::codec::*;
    use ferrogrid_protocol::frame::IS_FINAL;
    use ferrogrid_protocol::message::MessageWriter;
    use ferrogrid_protocol::message::RESPONSE_HEADER_SIZE;
    use ferrogrid_protocol::DecodeError;
    use ferrogrid_protocol::Uuid;
    use std::io::Read;

    /// One reactor's state, as `PartitionOwner` lends it to a share.
    struct Reactor {
        partitions: Vec<PartitionStore>,
        owned: Vec<bool>,
        listeners: Listeners,
        outbox: Outbox,
        counters: PnCounters,
        executors: crate::engine::executor::shutdowns::Shutdowns,
        replicated: crate::engine::replicated_map::store::Shares,
        settings: crate::engine::settings::SettingsCache,
        schemas: Arc<crate::engine::schemas::Schemas>,
        released: Vec<crate::engine::locks::Parked>,
        touched: Vec<usize>,
    }

    impl Reactor {
        fn new(entries: &[(&[u8], &[u8], usize)], owned: Vec<bool>) -> Reactor {
            let partitions = partitions(owned.len(), entries);
            let replicated = crate::engine::replicated_map::store::Shares::new(0, 1, owned.len(), owned.len() as u16);
            let settings = crate::engine::settings::SettingsCache::new(Default::default(), owned.len() as u16);
            Reactor {
                partitions,
                owned,
                listeners: Listeners::default(),
                outbox: Outbox::default(),
                counters: PnCounters::default(),
                executors: Default::default(),
                replicated,
                settings,
                schemas: Default::default(),
                released: Vec::new(),
                touched: Vec::new(),
            }
        }

        fn context(&mut self) -> ShareContext<'_> {
            ShareContext {
                partitions: &mut self.partitions,
                listeners: &mut self.listeners,
                outbox: &mut self.outbox,
                now_ms: 0,
                member: Uuid { most: 1, least: 1 },
                owned: &self.owned,
                counters: &mut self.counters,
                executors: &mut self.executors,
                replicated: &mut self.replicated,
                settings: &mut self.settings,
                schemas: &self.schemas,
                reactor: (0, 1),
                partition_count: self.owned.len() as u16,
                released: &mut self.released,
                touched: &mut self.touched,
            }
        }
    }

    /// Runs `request` as another member would for a WIDE request (all its shares on
    /// `reactors`) and returns its answer.
    fn member_answer(connection: &Arc<ConnectionShared>, request: WideRequest, reactors: &mut [Reactor]) -> Vec<u8> {
        let job = FanOut::new(Some(connection.clone()), 9, RESPONSE, MAP.into(), request.for_member(), reactors.len());
        assert!(!job.is_cluster_wide(), "a member's share is never sent on");
        let answers: Vec<_> = reactors.iter_mut().filter_map(|reactor| job.run_share(&mut reactor.context())).collect();
        assert_eq!(answers.len(), 1, "exactly the last share answers");
        answers.into_iter().next().expect("one answer")
    }

    #[test]
    fn the_last_share_answers_once_with_every_share_merged() {
        let (connection, _client) = loopback();
        let mut reactors = [
            Reactor::new(&[(b"a", b"1", 0), (b"b", b"1", 1)], vec![true, true]),
            // Partition 1 here is a backup: a read must not count it.
            Reactor::new(&[(b"c", b"1", 0), (b"a", b"1", 1)], vec![true, false]),
        ];
        let mut other_member = [Reactor::new(&[(b"x", b"1", 0), (b"y", b"1", 0), (b"z", b"1", 1)], vec![true, true])];
        let answer = member_answer(&connection, WideRequest::new(Size), &mut other_member);
        assert_eq!(Count::read_from(&Message::parse(&answer).unwrap()).unwrap(), Count(3));

        let job = FanOut::new(Some(connection.clone()), 9, RESPONSE, MAP.into(), WideRequest::new(Size), 2);
        assert!(job.is_cluster_wide());
        job.add_shares(3);
        let mut error_answer = Vec::new();
        let refusal = crate::engine::request::OpError::new(crate::engine::request::ErrorKind::Refused, "refused");
        crate::route::wire::write_error(&mut error_answer, 9, &refusal);
        let [first, second] = &mut reactors;
        assert!(job.run_share(&mut first.context()).is_none());
        assert!(job.merge_remote(Some(&Message::parse(&answer).unwrap()), &mut first.context()).is_none());
        assert!(job.merge_remote(None, &mut second.context()).is_none(), "a member that left adds nothing");
        assert!(job.merge_remote(Some(&Message::parse(&error_answer).unwrap()), &mut first.context()).is_none());
        let response = job.run_share(&mut second.context()).expect("the last share answers");
        let size = IntResponse::decode(&Message::parse(&response).unwrap()).unwrap().response;
        assert_eq!(size, 2 + 1 + 3, "both reactors' owned partitions and the other member's");
    }

    /// The event messages `client` received (whole messages end at an IS_FINAL frame).
    fn events_received(client: &mut std::net::TcpStream) -> Vec<Vec<u8>> {
        client.set_read_timeout(Some(std::time::Duration::from_millis(200))).unwrap();
        let mut bytes = vec![0; 64 << 10];
        let length = client.read(&mut bytes).unwrap_or(0);
        let (mut messages, mut start, mut offset) = (Vec::new(), 0, 0);
        while offset < length {
            let frame_length = i32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap()) as usize;
            let flags = u16::from_le_bytes([bytes[offset + 4], bytes[offset + 5]]);
            offset += frame_length;
            if flags & IS_FINAL != 0 {
                messages.push(bytes[start..offset].to_vec());
                start = offset;
            }
        }
        messages
    }

    #[test]
    fn clear_publishes_one_event_from_the_answering_share() {
        let (connection, mut client) = loopback();
        let mut reactors = [
            Reactor::new(&[(b"a", b"1", 0)], vec![true]),
            // A backup replica is cleared too, but only the owner's copy counts.
            Reactor::new(&[(b"b", b"1", 0), (b"c", b"1", 1)], vec![true, false]),
        ];
        for reactor in &mut reactors {
            reactor.listeners.add(MAP, listener(&connection));
        }
        let mut other_member = [Reactor::new(&[(b"x", b"1", 0)], vec![true])];
        other_member[0].listeners.add(MAP, listener(&connection));
        let clear = || WideRequest::new(crate::engine::map::wide::Clear::new(EventKind::ClearAll));
        let answer = member_answer(&connection, clear(), &mut other_member);
        assert_eq!(other_member[0].outbox.flush(), 0, "a member's share publishes nothing");

        let job = FanOut::new(Some(connection.clone()), 9, RESPONSE, MAP.into(), clear(), 2);
        job.add_shares(1);
        let [first, second] = &mut reactors;
        assert!(job.run_share(&mut first.context()).is_none());
        assert!(job.run_share(&mut second.context()).is_none());
        assert_eq!(first.outbox.flush() + second.outbox.flush(), 0, "nothing before the last share");
        let response = job.merge_remote(Some(&Message::parse(&answer).unwrap()), &mut first.context());
        assert!(EmptyResponse::decode(&Message::parse(&response.expect("answered")).unwrap()).is_ok());
        assert!(first.outbox.flush() > 0);
        let events = events_received(&mut client);
        assert_eq!(events.len(), 1, "one CLEAR_ALL per request");
        let event = EntryEvent::decode(&Message::parse(&events[0]).unwrap()).unwrap();
        assert_eq!((event.event_type, event.number_of_affected_entries), (EventKind::ClearAll as i32, 3));
        assert!(second.partitions[1].map(MAP).unwrap().is_empty(), "the backup replica is cleared");

        let job = FanOut::new(Some(connection.clone()), 9, RESPONSE, MAP.into(), clear(), 2);
        assert!(job.run_share(&mut first.context()).is_none());
        assert!(job.run_share(&mut second.context()).is_some());
        assert_eq!(first.outbox.flush() + second.outbox.flush(), 0, "no event when nothing was cleared");
    }

    /// A page of a sorted listing, as a paging predicate needs: the `limit` items that sort
    /// first, each with the key it sorts by. Test-only: it shows what [`Partial`] can carry.
    #[derive(Debug, Clone, PartialEq)]
    struct TopN {
        limit: usize,
        /// Sorted by the first element; at most `limit`.
        items: Vec<(Vec<u8>, Vec<u8>)>,
    }

    impl Partial for TopN {
        fn merge(&mut self, other: TopN) {
            self.limit = self.limit.min(other.limit);
            self.items.extend(other.items);
            self.items.sort();
            self.items.truncate(self.limit);
        }

        fn write_to(&self, writer: &mut MessageWriter<'_>) {
            writer.fixed(&(self.limit as i32)).begin();
            for (sort_key, item) in &self.items {
                writer.frame(sort_key).frame(item);
            }
            writer.end();
        }

        fn read_from(message: &Message<'_>) -> Result<TopN, DecodeError> {
            let limit: i32 = message.fixed(RESPONSE_HEADER_SIZE)?.read()?;
            let mut reader = message.reader();
            reader.begin()?;
            let mut items = Vec::new();
            while !reader.at_end()? {
                items.push((reader.value_frame("a sort key")?.to_vec(), reader.value_frame("an item")?.to_vec()));
            }
            Ok(TopN { limit: limit.max(0) as usize, items })
        }
    }

    /// The first `limit` keys in the order of `sort_key` (a paging predicate's first page).
    #[derive(Debug)]
    struct FirstKeys {
        limit: usize,
        sort_key: fn(&[u8], &Entry) -> Vec<u8>,
    }

    impl WideOperation for FirstKeys {
        type Partial = TopN;
        const PARTITIONS: Partitions = Partitions::Owned;

        fn empty(&self) -> TopN {
            TopN { limit: self.limit, items: Vec::new() }
        }

        fn on_partition(
            &self,
            map: &str,
            partition: &mut PartitionStore,
            _owned: bool,
            now_ms: i64,
            partial: &mut TopN,
        ) {
            let Some(store) = partition.map(map) else { return };
            let items = store.iter(now_ms).map(|(key, record)| ((self.sort_key)(key, record), key.to_vec()));
            partial.merge(TopN { limit: self.limit, items: items.collect() });
        }

        fn reply<'p>(&'p self, partial: &'p mut TopN) -> Result<Reply<'p>, OpError> {
            Ok(Reply::Values(partial.items.iter().map(|(_, key)| &key[..]).collect()))
        }
    }

    /// Keys and values.
    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    /// Entries with distinct keys and values, spread over `reactors` reactors of 3 partitions.
    fn spread(seed: u64, count: usize, reactors: usize) -> (Vec<Reactor>, Entries) {
        let mut random = seed;
        let mut entries: Vec<(Vec<u8>, Vec<u8>, usize)> = Vec::new();
        for index in 0..count {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            let value = ((random % 1_000_000) as i64 * 1_000 + index as i64).to_be_bytes().to_vec();
            entries.push((format!("k{index}").into_bytes(), value, (random % (3 * reactors as u64)) as usize));
        }
        let all = entries.iter().map(|(key, value, _)| (key.clone(), value.clone())).collect();
        let reactors = (0..reactors)
            .map(|reactor| {
                let mine: Vec<(&[u8], &[u8], usize)> = entries
                    .iter()
                    .filter(|(_, _, spot)| spot / 3 == reactor)
                    .map(|(key, value, spot)| (&key[..], &value[..], spot % 3))
                    .collect();
                Reactor::new(&mine, vec![true; 3])
            })
            .collect();
        (reactors, all)
    }

    #[test]
    fn a_top_n_partial_merged_over_reactors_and_members_is_the_global_top_n() {
        let (connection, _client) = loopback();
        let by_value: fn(&[u8], &Entry) -> Vec<u8> = |_, record| record.value().to_vec();
        let first_keys = || WideRequest::new(FirstKeys { limit: 10, sort_key: by_value });
        for seed in [1, 7, 42, 1_000_003] {
            let (mut here, mut entries) = spread(seed, 200, 3);
            let (mut there, there_entries) = spread(seed * 31, 150, 2);
            entries.extend(there_entries);
            entries.sort_by(|a, b| a.1.cmp(&b.1));
            let expected: Vec<Vec<u8>> = entries.iter().take(10).map(|(key, _)| key.clone()).collect();

            let answer = member_answer(&connection, first_keys(), &mut there);
            let job = FanOut::new(Some(connection.clone()), 9, RESPONSE, MAP.into(), first_keys(), here.len());
            job.add_shares(1);
            let mut answers: Vec<_> =
                here.iter_mut().filter_map(|reactor| job.run_share(&mut reactor.context())).collect();
            answers.extend(job.merge_remote(Some(&Message::parse(&answer).unwrap()), &mut here[0].context()));
            assert_eq!(answers.len(), 1);
            assert_eq!(list_items(&answers[0]), expected, "seed {seed}: the global first page, in order");
        }
    }

    /// An aggregation's state: what an average needs to merge (an average of averages would
    /// weigh a small share like a large one). Test-only, as [`TopN`].
    #[derive(Debug, Default, Clone, Copy, PartialEq)]
    struct Sum {
        count: i64,
        total: i64,
    }

    impl Partial for Sum {
        fn merge(&mut self, other: Sum) {
            self.count += other.count;
            self.total += other.total;
        }

        fn write_to(&self, writer: &mut MessageWriter<'_>) {
            writer.fixed(&self.count).fixed(&self.total);
        }

        fn read_from(message: &Message<'_>) -> Result<Sum, DecodeError> {
            let mut fixed = message.fixed(RESPONSE_HEADER_SIZE)?;
            Ok(Sum { count: fixed.read()?, total: fixed.read()? })
        }
    }

    /// The average of the values, read as big-endian integers.
    #[derive(Debug)]
    struct AverageValue;

    impl WideOperation for AverageValue {
        type Partial = Sum;
        const PARTITIONS: Partitions = Partitions::Owned;

        fn empty(&self) -> Sum {
            Sum::default()
        }

        fn on_partition(
            &self,
            map: &str,
            partition: &mut PartitionStore,
            _owned: bool,
            now_ms: i64,
            partial: &mut Sum,
        ) {
            let Some(store) = partition.map(map) else { return };
            for (_, record) in store.iter(now_ms) {
                partial.merge(Sum { count: 1, total: i64::from_be_bytes(record.value().try_into().unwrap()) });
            }
        }

        fn reply<'p>(&'p self, partial: &'p mut Sum) -> Result<Reply<'p>, OpError> {
            Ok(Reply::Long(if partial.count == 0 { 0 } else { partial.total / partial.count }))
        }
    }

    #[test]
    fn an_aggregation_merges_its_state_over_reactors_and_members() {
        let mut sum = Sum { count: 2, total: 10 };
        sum.merge(Sum { count: 1, total: 2 });
        assert_eq!(sum, Sum { count: 3, total: 12 });
        let (connection, _client) = loopback();
        let values = |values: &[i64]| -> Vec<Vec<u8>> { values.iter().map(|v| v.to_be_bytes().to_vec()).collect() };
        let (here, there) = (values(&[10, 20, 30, 40]), values(&[1_000]));
        let mut reactors = [
            Reactor::new(&[(b"a", &here[0], 0), (b"b", &here[1], 1)], vec![true, true]),
            Reactor::new(&[(b"c", &here[2], 0), (b"d", &here[3], 0)], vec![true]),
        ];
        let mut other_member = [Reactor::new(&[(b"e", &there[0], 0)], vec![true])];
        let answer = member_answer(&connection, WideRequest::new(AverageValue), &mut other_member);
        assert_eq!(Sum::read_from(&Message::parse(&answer).unwrap()).unwrap(), Sum { count: 1, total: 1_000 });
        let job = FanOut::new(Some(connection.clone()), 9, RESPONSE, MAP.into(), WideRequest::new(AverageValue), 2);
        job.add_shares(1);
        let [first, second] = &mut reactors;
        assert!(job.merge_remote(Some(&Message::parse(&answer).unwrap()), &mut second.context()).is_none());
        assert!(job.run_share(&mut first.context()).is_none());
        let response = job.run_share(&mut second.context()).expect("answered");
        let average: i64 = Message::parse(&response).unwrap().fixed(RESPONSE_HEADER_SIZE).unwrap().read().unwrap();
        assert_eq!(average, (10 + 20 + 30 + 40 + 1_000) / 5, "not the average of the members' averages (512)");
    }
}
