//! What a reactor does with the PN counter replicas it holds (`state.rs` has the state
//! and its rules): answers a client's get and add, holds an add's answer until the other
//! replicas acknowledged the counter's new state, merges the states other replicas send, and
//! sends its own every replication period.

use crate::cluster::peer;
use crate::cluster::replication::state::PendingWrite;
use crate::engine::pn_counter::request::{PnCounterOp, PnCounterRequest};
use crate::engine::pn_counter::state::{read_state, replicas, ENTRY_BYTES};
use crate::engine::request::{ErrorKind, OpError, Replies, Reply};
use crate::net::connection::ConnectionShared;
use crate::obs::probes::ObjectFigures;
use crate::partition::owner::Execute;
use crate::partition::owner::{Call, PartitionOwner};
use crate::route::wire;
use ferrogrid_cluster::MemberId;
use std::sync::Arc;
use tracing::warn;

/// A PN counter get or add for this member's replica (the request named it): answered with
/// the value and the clock, an add only once the other replicas acknowledged it, a get
/// behind the counter's last add still waiting.
impl Execute for PnCounterRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let request = self;
        let name = &*request.name;
        let config = owner.settings.pn_counter(name);
        let state = owner.replication.state.clone();
        let replicas = replicas(&state.members, state.me, config.replica_count);
        if replicas.is_empty() {
            let text = "Cannot invoke operations on a CRDT because the cluster does not contain any data members";
            return wire::write_error(out, call.correlation_id, &OpError::new(ErrorKind::NoDataMember, text));
        }
        if !replicas.contains(&state.me) {
            let shown = crate::tenants::display(name);
            let text = format!("This member is not a CRDT replica for the {shown} + PN counter");
            let failure = OpError::new(ErrorKind::TargetNotReplica, text);
            return wire::write_error(out, call.correlation_id, &failure);
        }
        let new_id = crate::route::client::service::random_uuid;
        let answer = match owner.pn_counters.execute(name, request.op, &request.observed, new_id) {
            Ok(answer) => answer,
            Err(failure) => return wire::write_error(out, call.correlation_id, &failure),
        };
        let start = out.len();
        let reply =
            Reply::Counter { value: answer.value, clock: answer.clock, replica_count: config.replica_count as i32 };
        call.replies(&mut *out).reply(reply);
        match request.op {
            PnCounterOp::Get => owner.hold_behind_counter(name, call.connection, out, start),
            PnCounterOp::Add { .. } => {
                let peers =
                    replicas.into_iter().filter(|member| *member != state.me && state.links.contains_key(member));
                owner.replicate_counter(name, peers.collect(), call, out, start);
            }
        }
    }
}

impl PartitionOwner {
    /// Sends the changed counter's state to `peers` and holds the answer (`out[start..]`) until
    /// they acknowledged it.
    fn replicate_counter(
        &mut self,
        name: &str,
        peers: Vec<MemberId>,
        call: &Call<'_>,
        out: &mut Vec<u8>,
        start: usize,
    ) {
        if peers.is_empty() {
            return;
        }
        let sequence = self.replication.next_held_sequence();
        let counter = self.pn_counters.counters.get_mut(name).expect("the add just ran on it");
        counter.held = sequence;
        let mut state = Vec::with_capacity(counter.entries.len() * ENTRY_BYTES);
        counter.write_state(&mut state);
        for peer in &peers {
            peer::put_counter_state(self.replication.counter_states.entry(*peer).or_default(), sequence, name, &state);
        }
        let pending = PendingWrite {
            connection: call.connection.clone(),
            correlation_id: call.correlation_id,
            response: out.split_off(start),
            awaited: peers.len(),
            asked: peers,
            refused: false,
            deadline_ms: self.now_ms + self.replication.backup_timeout_ms,
            others: Vec::new(),
            // Answered once the other replicas have the add, whatever the client asked for.
            client_acks: None,
            partition: None,
            lost: 0,
        };
        self.replication.pending.insert(sequence, pending);
    }

    /// Holds a get's answer (`out[start..]`) behind the counter's last add still waiting for
    /// the other replicas, if any.
    fn hold_behind_counter(&mut self, name: &str, connection: &Arc<ConnectionShared>, out: &mut Vec<u8>, start: usize) {
        let Some(held) = self.pn_counters.get(name).map(|counter| counter.held).filter(|held| *held != 0) else {
            return;
        };
        if let Some(pending) = self.replication.pending.get_mut(&held) {
            pending.others.push((connection.clone(), out.split_off(start)));
        }
    }

    /// Merges the PN counter states another member sent (all for this reactor's counters) and
    /// acknowledges those that carry a sequence number.
    pub(crate) fn apply_counter_states(&mut self, from: MemberId, records: &[u8]) {
        let mut reader = peer::CounterStates::new(records);
        loop {
            let record = match reader.next_record() {
                Ok(Some(record)) => record,
                Ok(None) => break,
                Err(error) => {
                    warn!(%error, ?from, "malformed PN counter states from a member: rest ignored");
                    break;
                }
            };
            let applied = match read_state(record.state) {
                Ok(entries) => {
                    self.pn_counters.merge(record.name, &entries, crate::route::client::service::random_uuid);
                    true
                }
                Err(error) => {
                    warn!(%error, ?from, "malformed PN counter state from a member: refused");
                    false
                }
            };
            self.replication.acknowledge(from, record.sequence, applied);
        }
    }

    /// Every replication period: sends the next batch of this reactor's counters, whole, to
    /// their other replicas (a counter this member holds without being one of its replicas
    /// goes to all of them), so that a replica that missed changes catches up.
    pub(crate) fn exchange_counters(&mut self) {
        if self.now_ms < self.pn_counters.next_exchange_ms {
            return;
        }
        self.pn_counters.next_exchange_ms = self.now_ms + self.settings.crdt_replication_period_ms();
        let state = self.replication.state.clone();
        if state.links.is_empty() {
            return;
        }
        let limit = self.settings.crdt_replication_batch();
        let settings = &self.settings;
        let outgoing = &mut self.replication.counter_states;
        let mut body = Vec::new();
        for (name, counter) in self.pn_counters.next_batch(limit) {
            let replicas = replicas(&state.members, state.me, settings.pn_counter(name).replica_count);
            let peers = replicas.iter().filter(|member| **member != state.me && state.links.contains_key(member));
            body.clear();
            counter.write_state(&mut body);
            for peer in peers {
                peer::put_counter_state(outgoing.entry(*peer).or_default(), 0, name, &body);
            }
        }
    }

    /// Value and operation counts of the counters held here whose statistics are enabled.
    pub(crate) fn counter_figures(
        &self,
        objects: &mut std::collections::HashMap<(&'static str, String), ObjectFigures>,
    ) {
        for (name, counter) in &self.pn_counters.counters {
            if !self.settings.pn_counter(name).statistics_enabled {
                continue;
            }
            let figures = objects.entry(("pncounter", name.to_string())).or_default();
            figures.value = figures.value.wrapping_add(counter.value());
            figures.increments += counter.increments;
            figures.decrements += counter.decrements;
        }
    }
}

#[cfg(test)]
mod tests {
    //! Two members' reactors (one each) wired by hand: what one queues for the other is
    //! delivered by the test.
    use super::*;
    use crate::cluster::replication::state::ClusterState;
    use crate::net::connection::ConnectionId;
    use ferrogrid_cluster::{MemberEntry, PartitionTable};
    use ferrogrid_config::{MemberConfig, PnCounterConfig};
    use ferrogrid_protocol::codec::{PnCounterAdd, PnCounterResponse};
    use ferrogrid_protocol::{Message, PartitionId, Uuid};
    use std::collections::HashMap;

    const A: MemberId = MemberId(1);
    const B: MemberId = MemberId(2);

    fn connection() -> Arc<ConnectionShared> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let stream = mio::net::TcpStream::from_std(stream);
        Arc::new(ConnectionShared::new(ConnectionId(1), listener.local_addr().unwrap(), stream))
    }

    /// `me`'s reactor in a cluster of A and B, with a link to the other; `one-*` counters have
    /// one replica (A).
    fn member(me: MemberId) -> PartitionOwner {
        let mut config = MemberConfig::default();
        config.pn_counters.insert("one-*", PnCounterConfig { replica_count: 1, ..PnCounterConfig::DEFAULT });
        let other = if me == A { B } else { A };
        let members = [A, B].map(|id| MemberEntry::new(id, String::new())).to_vec();
        let links = HashMap::from([(other, connection())]);
        let table = PartitionTable::empty(1);
        let state = ClusterState { me, members, members_version: 1, cluster_id: A, table, links, kept: false };
        let member = Uuid::from_u128(me.0);
        let probe = Arc::new(crate::obs::probes::Counter::default());
        PartitionOwner::new(0, 1, member, Arc::new(config), 1, Arc::new(state), probe)
    }

    fn run(owner: &mut PartitionOwner, client: &Arc<ConnectionShared>, name: &str, op: PnCounterOp) -> Vec<u8> {
        let call = Call {
            connection: client,
            correlation_id: 7,
            response_type: PnCounterAdd::RESPONSE,
            source: Uuid::default(),
            counter_slot: 0,
            partition_id: PartitionId(0),
            backup_aware: false,
            local: 0,
        };
        let request = PnCounterRequest { name: name.into(), op, observed: Vec::new(), target: None };
        let mut out = Vec::new();
        request.execute(owner, &call, &mut out);
        out
    }

    /// The whole messages in `stream`.
    fn messages(stream: &[u8]) -> Vec<Vec<u8>> {
        use ferrogrid_protocol::frame::{Decoded, StreamDecoder};
        let (mut decoder, mut rest, mut found) = (StreamDecoder::default(), stream, Vec::new());
        while !rest.is_empty() {
            let Ok(Decoded::Message { length }) = decoder.decode(rest) else { panic!("whole messages") };
            found.push(rest[..length].to_vec());
            rest = &rest[length..];
        }
        found
    }

    fn value(answer: &[u8]) -> i64 {
        PnCounterResponse::decode(&Message::parse(answer).unwrap()).unwrap().value
    }

    #[test]
    fn an_add_is_answered_once_the_other_replica_acknowledged_it_and_a_get_waits_behind_it() {
        let (mut a, mut b, client) = (member(A), member(B), connection());
        let add = PnCounterOp::Add { delta: 5, get_before_update: false };
        assert!(run(&mut a, &client, "hits", add).is_empty(), "held for B");
        assert!(run(&mut a, &client, "hits", PnCounterOp::Get).is_empty(), "a get waits behind it");
        a.replication.seal();
        let to_b = a.replication.out.remove(&B).expect("the state for B");
        let [(ty, payload)] = &crate::cluster::peer::tests::messages(&to_b)[..] else { panic!("one message") };
        assert_eq!(*ty, peer::PN_COUNTER_STATE);
        b.apply_counter_states(A, payload);
        assert_eq!(b.pn_counters.get("hits").unwrap().value(), 5, "B merged A's state");
        let acks = peer::read_acks(&b.replication.acks.remove(&A).unwrap()).unwrap();
        a.on_acks(B, &acks);
        let answers = messages(&std::mem::take(a.outbox.buffer(&client)));
        assert_eq!(answers.iter().map(|answer| value(answer)).collect::<Vec<_>>(), [5, 5], "both released");
    }

    #[test]
    fn a_member_that_is_not_a_replica_refuses_and_a_lone_replica_answers_at_once() {
        let (mut a, mut b, client) = (member(A), member(B), connection());
        let refused = run(&mut b, &client, "one-hits", PnCounterOp::Get);
        let chain = ferrogrid_protocol::error::read_error_response(&Message::parse(&refused).unwrap()).unwrap();
        assert_eq!(chain[0].code, ferrogrid_protocol::error::TARGET_NOT_REPLICA.code);
        assert!(b.pn_counters.get("one-hits").is_none());
        let add = PnCounterOp::Add { delta: -2, get_before_update: true };
        assert_eq!(value(&run(&mut a, &client, "one-hits", add)), 0, "no other replica to wait for");
        assert!(a.replication.counter_states.values().all(Vec::is_empty));
    }

    #[test]
    fn the_periodic_exchange_sends_each_counter_to_its_other_replicas() {
        let (mut a, client) = (member(A), connection());
        let add = PnCounterOp::Add { delta: 1, get_before_update: false };
        run(&mut a, &client, "one-hits", add);
        a.replication.pending.clear();
        a.replication.counter_states.clear();
        run(&mut a, &client, "hits", add);
        a.replication.counter_states.clear();
        a.exchange_counters();
        let records = a.replication.counter_states.remove(&B).expect("states for B");
        let mut reader = peer::CounterStates::new(&records);
        let record = reader.next_record().unwrap().expect("one record");
        assert_eq!((record.sequence, record.name), (0, "hits"), "one-hits has no other replica");
        assert!(reader.next_record().unwrap().is_none());
        a.exchange_counters();
        assert!(a.replication.counter_states.values().all(Vec::is_empty), "not before the next period");
    }
}
