//! What a reactor does with the PN counter replicas it holds (`pn_counter.rs` has the state
//! and its rules): answers a client's get and add, holds an add's answer until the other
//! replicas acknowledged the counter's new state, merges the states other replicas send, and
//! sends its own every replication period.

use crate::connection::ConnectionShared;
use crate::owner::{Call, PartitionOwner};
use crate::peer;
use crate::pn_counter::{read_state, replicas, ENTRY_BYTES};
use crate::probes::ObjectFigures;
use crate::replication::PendingWrite;
use crate::request::{ErrorKind, OpError, PnCounterOp, PnCounterRequest};
use crate::wire;
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::codec::PnCounterResponse;
use ferrogrid_protocol::message::Packed;
use std::sync::Arc;
use tracing::warn;

impl PartitionOwner {
    /// A PN counter get or add for this member's replica (the request named it): answered with
    /// the value and the clock, an add only once the other replicas acknowledged it, a get
    /// behind the counter's last add still waiting.
    pub(crate) fn execute_pn_counter(&mut self, call: &Call<'_>, request: &PnCounterRequest<'_>, out: &mut Vec<u8>) {
        let name = &*request.name;
        let config = self.settings.pn_counter(name);
        let state = self.replication.state.clone();
        let replicas = replicas(&state.members, state.me, config.replica_count);
        if !replicas.contains(&state.me) {
            let shown = crate::tenants::display(name);
            let text = format!("This member is not a CRDT replica for the {shown} + PN counter");
            let failure = OpError::new(ErrorKind::TargetNotReplica, text);
            return wire::write_error(out, call.correlation_id, &failure);
        }
        let new_id = crate::client::random_uuid;
        let answer = match self.pn_counters.execute(name, request.op, &request.observed, new_id) {
            Ok(answer) => answer,
            Err(failure) => return wire::write_error(out, call.correlation_id, &failure),
        };
        let start = out.len();
        let response = PnCounterResponse {
            value: answer.value,
            replica_count: config.replica_count as i32,
            replica_timestamps: Packed(answer.clock),
        };
        response.encode(out, call.response_type, call.correlation_id, 0);
        match request.op {
            PnCounterOp::Get => self.hold_behind_counter(name, call.connection, out, start),
            PnCounterOp::Add { .. } => {
                let peers =
                    replicas.into_iter().filter(|member| *member != state.me && state.links.contains_key(member));
                self.replicate_counter(name, peers.collect(), call, out, start);
            }
        }
    }

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
            waiting: peers,
            refused: false,
            deadline_ms: self.now_ms + self.replication.backup_timeout_ms,
            others: Vec::new(),
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
                    self.pn_counters.merge(record.name, &entries, crate::client::random_uuid);
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
