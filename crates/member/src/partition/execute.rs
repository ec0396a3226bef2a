//! Running a typed request on its structure's engine, as the owner of its partition: the
//! partition checked once more against the table (a request handed over or forwarded may arrive
//! after its partition moved), the engine's outcome answered, its parked waiters registered,
//! its changes queued for the backups and its events published.

use crate::clock::NEVER;
use crate::cluster::peer::ObjectKind;
use crate::engine::collection::request::CollectionRequest;
use crate::engine::collection::store::{self as collection, CollectionContext};
use crate::engine::locks::Waiting;
use crate::engine::map::ops::{self as map_ops, Done, OpContext};
use crate::engine::map::request::MapRequest;
use crate::engine::multimap::request::MultiMapRequest;
use crate::engine::multimap::store::{self as multimap, MultiDone};
use crate::engine::queue::request::QueueRequest;
use crate::engine::queue::store::{self as queue, QueueContext, QueueDone};
use crate::engine::request::{ErrorKind, OpError, Replies, Reply};
use crate::engine::ringbuffer::request::{RingbufferOp, RingbufferRequest};
use crate::engine::ringbuffer::store::{self as ringbuffer, RingDone};
use crate::engine::topic::request::TopicRequest;
use crate::partition::owner::{Call, PartitionOwner, Timer};
use crate::route::row::Request;
use crate::route::wire::{self, HazelcastReply};
use ferrogrid_protocol::{Data, PartitionId};
use std::cmp::Reverse;

impl PartitionOwner {
    /// Runs a partition-bound request for a partition this reactor owns, on its structure's
    /// engine; the answer goes to `out` (or later, to its connection, if it waits: on a lock,
    /// for a queue item or room, or for backups).
    pub fn execute(&mut self, call: &Call<'_>, request: &Request<'_>, out: &mut Vec<u8>) {
        match request {
            Request::Map(request) => self.execute_map(call, request, out),
            Request::Queue(request) => self.execute_queue(call, request, out),
            Request::Ringbuffer(request) => self.execute_ringbuffer(call, request, out),
            Request::Topic(request) => self.execute_topic(call, request, out),
            Request::Collection(request) => self.execute_collection(call, request, out),
            Request::MultiMap(request) => self.execute_multimap(call, request, out),
            Request::PnCounter(request) => self.execute_pn_counter(call, request, out),
            Request::ReplicatedMap(request) => self.execute_replicated(call, request, out),
        }
    }

    /// The local index of the call's partition if this member serves it; else answers
    /// PartitionMigrating and returns None.
    pub(crate) fn check_serves(&self, call: &Call<'_>, out: &mut Vec<u8>) -> Option<usize> {
        if call.serves.is_some() {
            return call.serves;
        }
        let partition_id = call.partition_id;
        if self.replication.serves(partition_id) {
            return Some(self.replication.local(partition_id.0 as usize));
        }
        let text = format!("partition {} is migrating or not owned by this member; retry", partition_id.0);
        wire::write_error(out, call.correlation_id, &OpError::new(ErrorKind::PartitionMigrating, text));
        None
    }

    /// A queue request: run, or parked as a waiter (with a timer if it has a deadline).
    pub(crate) fn execute_queue(&mut self, call: &Call<'_>, request: &QueueRequest<'_>, out: &mut Vec<u8>) {
        let Some(local) = self.check_serves(call, out) else { return };
        let partition_id = call.partition_id;
        let start = out.len();
        let name = &*request.name;
        let max_waiters = self.settings.max_parked_per_key();
        let (queue, waiters) = self.partitions[local].queue_mut(name, &mut self.settings);
        let mut others = Vec::new();
        let mut answering = waiters.answering(&mut others);
        let mut ctx = QueueContext {
            name,
            member: self.member,
            source: call.source,
            partition_id,
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            waiters: &mut answering,
        };
        let mut reply = HazelcastReply { out, response_type: call.response_type, correlation_id: call.correlation_id };
        let timers = &mut self.timers;
        let outcome = match queue::execute(queue, &mut ctx, &request.op, self.now_ms, &mut |answer| reply.reply(answer))
        {
            Ok(QueueDone::Wait { deadline_ms }) => {
                let waiter = |id| call.waiter(&request.op, deadline_ms, id);
                let parked =
                    answering.park(call.reply_to(), |id, waiters| queue.wait(waiter(id), max_waiters, waiters));
                parked.map(|()| {
                    if deadline_ms != NEVER {
                        timers
                            .push(Reverse((deadline_ms, Timer::Queue { partition: partition_id, name: name.into() })));
                    }
                })
            }
            Ok(QueueDone::Answered) => Ok(()),
            Err(failure) => Err(failure),
        };
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        // Held with the answer while backups are pending; sent at once otherwise.
        self.replicate(partition_id, call, out, start, others);
    }

    /// A ringbuffer request: run, or parked until items arrive; an add answers the reads it
    /// makes possible (held with its own answer while its backups are pending).
    pub(crate) fn execute_ringbuffer(&mut self, call: &Call<'_>, request: &RingbufferRequest<'_>, out: &mut Vec<u8>) {
        let Some(local) = self.check_serves(call, out) else { return };
        let partition_id = call.partition_id;
        let start = out.len();
        let max_waiters = self.settings.max_parked_per_key();
        let (ring, waiters) = self.partitions[local].ringbuffer_mut(&request.name, &mut self.settings);
        let mut others = Vec::new();
        let mut answering = waiters.answering(&mut others);
        let mut reply = HazelcastReply { out, response_type: call.response_type, correlation_id: call.correlation_id };
        let outcome = match ringbuffer::execute(ring, &request.op, self.now_ms, &mut |answer| reply.reply(answer)) {
            Ok(RingDone::Wait(pending)) => {
                answering.park(call.reply_to(), |id, waiters| ring.wait(id, pending, max_waiters, waiters))
            }
            Ok(RingDone::Answered) => Ok(()),
            Err(failure) => Err(failure),
        };
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        if !matches!(request.op, RingbufferOp::Add { .. }) {
            return self.hold_behind_writes(partition_id, call.connection, out, start);
        }
        ring.serve_waiters(&mut answering);
        self.replicate(partition_id, call, out, start, others);
    }

    /// A multimap key request: run, or parked on its key's lock.
    pub(crate) fn execute_multimap(&mut self, call: &Call<'_>, request: &MultiMapRequest<'_>, out: &mut Vec<u8>) {
        let Some(local) = self.check_serves(call, out) else { return };
        let partition_id = call.partition_id;
        let start = out.len();
        let name = &*request.name;
        let max_parked = self.settings.max_parked_per_key();
        let (store, waiters) = self.partitions[local].multimap_mut(name, &mut self.settings);
        let mut ctx = multimap::MultiMapContext {
            name,
            member: self.member,
            source: call.source,
            partition_id,
            now_ms: self.now_ms,
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            released: &mut self.released,
            deadlines: &mut self.deadlines,
        };
        let mut reply = HazelcastReply { out, response_type: call.response_type, correlation_id: call.correlation_id };
        let outcome = match multimap::execute(store, &mut ctx, &request.op, &mut |answer| reply.reply(answer)) {
            Ok(MultiDone::Park { wait_ms }) => {
                let key: Box<[u8]> = request.key().expect("only key requests park").into();
                let request = Waiting::MultiMap(request.clone().into_owned());
                let deadline_ms = crate::clock::deadline_after(self.now_ms, wait_ms);
                waiters.park(call.reply_to(), |id| {
                    let parked = call.park(request, self.now_ms, wait_ms, id);
                    if !store.locks.park(&key, parked, max_parked) {
                        let text = "too many operations are waiting for this key's lock";
                        return Err(OpError::new(ErrorKind::Refused, text));
                    }
                    if deadline_ms != NEVER {
                        ctx.deadlines.push((deadline_ms, name.into(), key));
                    }
                    Ok(())
                })
            }
            Ok(MultiDone::Answered) => Ok(()),
            Err(failure) => Err(failure),
        };
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        self.replicate(partition_id, call, out, start, Vec::new());
        for (deadline, map, key) in self.deadlines.drain(..) {
            let timer = Timer::Key { partition: partition_id, kind: ObjectKind::MultiMap, map, key };
            self.timers.push(Reverse((deadline, timer)));
        }
        if !self.released.is_empty() {
            self.rerun_released();
        }
    }

    /// A list or set request.
    pub(crate) fn execute_collection(&mut self, call: &Call<'_>, request: &CollectionRequest<'_>, out: &mut Vec<u8>) {
        let Some(local) = self.check_serves(call, out) else { return };
        let partition_id = call.partition_id;
        let start = out.len();
        let name = &*request.name;
        let store = self.partitions[local].collection_mut(name, request.set, &mut self.settings);
        let (listeners, outbox) = (&mut self.listeners, &mut self.outbox);
        let mut ctx = CollectionContext { name, member: self.member, partition_id, listeners, outbox };
        let mut reply = HazelcastReply { out, response_type: call.response_type, correlation_id: call.correlation_id };
        if let Err(failure) = collection::execute(store, &mut ctx, &request.op, &mut |answer| reply.reply(answer)) {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        self.replicate(partition_id, call, out, start, Vec::new());
    }

    /// A topic's publish or publishAll, run by the owner of its name's partition, so that
    /// every listener hears one order: delivered to this member's listeners and relayed to
    /// every other member for theirs (a unisocket client's).
    pub(crate) fn execute_topic(&mut self, call: &Call<'_>, request: &TopicRequest<'_>, out: &mut Vec<u8>) {
        if self.check_serves(call, out).is_none() {
            return;
        }
        if request.messages.iter().any(|message| Data(message).type_id().unwrap_or(0) == 0) {
            let failure = OpError::new(ErrorKind::NullArgument, "Null message is not allowed!");
            return wire::write_error(out, call.correlation_id, &failure);
        }
        let messages: Vec<&[u8]> = request.messages.iter().map(|message| &**message).collect();
        let (name, partition) = (&*request.name, call.partition_id.0);
        let relay = crate::cluster::peer::TopicRelay {
            name,
            partition,
            publisher: self.member,
            publish_time_ms: self.now_ms,
            messages,
        };
        let receives = self.listeners.publish_messages(&mut self.outbox, &relay, false);
        self.count_topic(name, relay.messages.len() as u64, receives);
        self.replication.relay_topic(&relay);
        HazelcastReply { out, response_type: call.response_type, correlation_id: call.correlation_id }
            .reply(Reply::Empty);
    }

    /// Answers the waiters of a queue whose deadline passed.
    pub(crate) fn check_queue(&mut self, partition_id: PartitionId, name: &str) {
        let local = self.replication.local(partition_id.0 as usize);
        let Some((queue, waiters)) = self.partitions[local].existing_queue_mut(name) else { return };
        let mut answers = Vec::new();
        let mut answering = waiters.answering(&mut answers);
        let mut ctx = QueueContext {
            name,
            member: self.member,
            source: self.member,
            partition_id,
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            waiters: &mut answering,
        };
        queue.expire_waiters(self.now_ms, &mut ctx);
        self.send_others(answers);
    }

    /// A map request.
    pub(crate) fn execute_map(&mut self, call: &Call<'_>, request: &MapRequest<'_>, out: &mut Vec<u8>) {
        let Some(local) = self.check_serves(call, out) else { return };
        let partition_id = call.partition_id;
        let start = out.len();
        let mut ctx = OpContext {
            now_ms: self.now_ms,
            member: self.member,
            source: call.source,
            partition_id,
            counter_slot: call.counter_slot,
            settings: &mut self.settings,
            listeners: &mut self.listeners,
            outbox: &mut self.outbox,
            released: &mut self.released,
            deadlines: &mut self.deadlines,
        };
        let partition = &mut self.partitions[local];
        let mut reply = HazelcastReply { out, response_type: call.response_type, correlation_id: call.correlation_id };
        let outcome = match map_ops::execute(partition, &mut ctx, request, &mut reply) {
            Ok(Done::Park { wait_ms }) => match partition.waiters.register(call.reply_to()) {
                Ok(id) => {
                    let parked = call.park(Waiting::Map(request.clone().into_owned()), self.now_ms, wait_ms, id);
                    map_ops::park(partition, &mut ctx, parked).inspect_err(|_| {
                        partition.waiters.take(id);
                    })
                }
                Err(failure) => Err(failure),
            },
            Ok(Done::Answered) => Ok(()),
            Err(failure) => Err(failure),
        };
        if let Err(failure) = outcome {
            wire::replace_with_error(out, start, call.correlation_id, &failure);
        }
        if self.partitions[local].tracks_changes() {
            self.replicate(partition_id, call, out, start, Vec::new());
        }
        for (deadline, map, key) in self.deadlines.drain(..) {
            let timer = Timer::Key { partition: partition_id, kind: ObjectKind::Map, map, key };
            self.timers.push(Reverse((deadline, timer)));
        }
        if !self.released.is_empty() {
            self.rerun_released();
        }
    }
}
