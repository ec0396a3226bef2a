//! PN counters (`hz:impl:PNCounterService`): CRDT counters kept by the first `replica-count`
//! members of the member list (`hazelcast.pn-counter`), outside the partitions.
//!
//! A client picks one replica and sends it its requests, with the vector clock it observed
//! last; the replica refuses with TargetNotReplicaException if it is not one of the first
//! `replica-count` members, and with ConsistencyLostException if the client has seen more than
//! this replica holds. Each replica counts its own increments and decrements (one
//! [`ReplicaEntry`] per replica, under a replica id drawn at random when the counter is created
//! on that member, as in Hazelcast); the value is the sum over replicas of added − removed,
//! in wrapping 64-bit arithmetic, as Java's `long`. States merge entry by entry, the entry with
//! the higher timestamp winning (Hazelcast takes the maximum of each number, which is the same
//! until a replica's sum wraps around).
//!
//! **Where a counter lives.** On each replica member, on the reactor of its name's partition
//! ([`partition_of`]): that reactor's [`PnCounters`] owns it, so one thread runs every request
//! and merge of a counter, with no lock. A request that reaches another reactor is handed to
//! that one, and one that reaches another member is forwarded to the member it names
//! (`dispatch.rs`, `Route::Replica`), as Hazelcast forwards a unisocket client's request.
//!
//! **Replication.** Hazelcast replicates CRDT states asynchronously, once a second, so a
//! member killed before its next round loses the increments only it held, acknowledged or not.
//! ferrogrid does not answer an add until every other replica it has a link to acknowledged
//! the counter's new state (a PN_COUNTER_STATE record with a sequence number, acknowledged with
//! BACKUP_ACK; bounded by `hazelcast.operation.backup.timeout.millis`, and a replica that
//! leaves is not waited for), so an acknowledged add survives the loss of any replica but the
//! last. A get's answer waits behind the counter's last add still waiting (a reader never sees
//! a value a failure could take back). Every `replication-period-millis` each reactor also
//! sends its counters' whole states to the other replicas (at most
//! `ferrogrid.limits.crdt-replication-batch` counters per period, going on where the last
//! period stopped), so a member that joined or missed changes catches up.
//!
//! This module is the state and its rules, with no IO; what a reactor does with it (answering,
//! replicating, merging, exchanging) is `replicas.rs`.
//!
//! Invariants: a counter's own entry is always present and only this member changes it (its
//! timestamp grows by one per add); merging never lowers an entry's timestamp.

use crate::cluster::peer::{Malformed, Reader};
use crate::engine::pn_counter::request::PnCounterOp;
use crate::engine::request::{ErrorKind, OpError};
use ferrogrid_cluster::{MemberEntry, MemberId};
use ferrogrid_protocol::data::{murmur3_x86_32, MURMUR_SEED};
use ferrogrid_protocol::{PartitionId, Uuid};
use std::collections::BTreeMap;
use std::ops::Bound;

/// A vector clock as the protocol carries it: (replica, timestamp) pairs.
pub(crate) type VectorClock = Vec<(Option<Uuid>, i64)>;

/// The partition whose reactor holds the counter called `name` on every member: murmur3 of
/// the name's UTF-8 bytes, mapped to a partition as Hazelcast maps a key's hash.
pub(crate) fn partition_of(name: &str, partition_count: u16) -> PartitionId {
    assert!(partition_count > 0, "partition count is validated to be positive");
    let hash = murmur3_x86_32(name.as_bytes(), MURMUR_SEED) as i32;
    let index = if hash == i32::MIN { 0 } else { hash.unsigned_abs() % partition_count as u32 };
    PartitionId(index as u16)
}

/// The replicas of a counter with `replica_count`: the first that many data members of the
/// member list (all of them by default; lite members hold none, as in Hazelcast, so a cluster
/// of only lite members has none); this member (`me`) alone before it has a member list.
pub(crate) fn replicas(members: &[MemberEntry], me: MemberId, replica_count: u32) -> Vec<MemberId> {
    if members.is_empty() {
        return vec![me];
    }
    let data_members = members.iter().filter(|member| !member.lite);
    data_members.take(replica_count as usize).map(|member| member.id).collect()
}

/// One replica's share of a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplicaEntry {
    pub(crate) replica: Uuid,
    /// Grows by one with each of the replica's adds; starts at `i64::MIN`, as in Hazelcast.
    pub(crate) timestamp: i64,
    /// The sum of its positive deltas (wrapping).
    pub(crate) added: i64,
    /// The sum of its negated negative deltas (wrapping).
    pub(crate) removed: i64,
}

/// Bytes of one entry in a state body: replica u128, timestamp, added, removed.
pub(crate) const ENTRY_BYTES: usize = 16 + 8 + 8 + 8;

impl ReplicaEntry {
    fn new(replica: Uuid) -> ReplicaEntry {
        ReplicaEntry { replica, timestamp: i64::MIN, added: 0, removed: 0 }
    }
}

/// One member's replica of one counter. Owned by the reactor of its name's partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PnCounter {
    /// This member's replica id for the counter (its entry is `entries[0]`).
    own: Uuid,
    /// Every replica's entry known here, this member's first.
    pub(crate) entries: Vec<ReplicaEntry>,
    /// The sequence of the last add whose answer waits for the other replicas (0: none): reads
    /// are answered behind it.
    pub(crate) held: u64,
    /// Adds with a positive delta run here (the metrics' increments).
    pub(crate) increments: u64,
    /// Adds with a negative delta run here.
    pub(crate) decrements: u64,
}

impl PnCounter {
    fn new(own: Uuid) -> PnCounter {
        PnCounter { own, entries: vec![ReplicaEntry::new(own)], held: 0, increments: 0, decrements: 0 }
    }

    /// Σ added − Σ removed over every replica, wrapping as Java's `long` does.
    pub(crate) fn value(&self) -> i64 {
        self.entries.iter().fold(0i64, |sum, entry| sum.wrapping_add(entry.added).wrapping_sub(entry.removed))
    }

    /// The counter's vector clock: every replica's timestamp.
    pub(crate) fn clock(&self) -> VectorClock {
        self.entries.iter().map(|entry| (Some(entry.replica), entry.timestamp)).collect()
    }

    /// Whether `observed` is causally after this replica's clock (Hazelcast's
    /// `VectorClock.isAfter`): it has every replica of this clock at least as far, and one
    /// further or a replica this clock lacks. Then this replica cannot give the client the
    /// session guarantees (read your writes, monotonic reads).
    fn is_behind(&self, observed: &[(Option<Uuid>, i64)]) -> bool {
        let observed_of =
            |replica: Uuid| observed.iter().rev().find(|(id, _)| *id == Some(replica)).map(|(_, time)| *time);
        let mut further = false;
        for entry in &self.entries {
            match observed_of(entry.replica) {
                Some(time) if time >= entry.timestamp => further |= time > entry.timestamp,
                _ => return false,
            }
        }
        let mut distinct: Vec<Option<Uuid>> = observed.iter().map(|(id, _)| *id).collect();
        distinct.sort_unstable_by_key(|id| id.map(Uuid::as_u128));
        distinct.dedup();
        further || self.entries.len() < distinct.len()
    }

    /// Applies one add to this member's entry; returns the value before and after it.
    fn add(&mut self, delta: i64) -> Result<(i64, i64), OpError> {
        if delta == i64::MIN {
            // Hazelcast negates a negative delta and calls the subtraction, which negates it
            // back: −Long.MIN_VALUE is itself, so it recurses until the stack overflows.
            let text = "adding Long.MIN_VALUE: Hazelcast negates it back and forth until its stack overflows";
            return Err(OpError::new(ErrorKind::StackOverflow, text));
        }
        let own = &mut self.entries[0];
        debug_assert_eq!(own.replica, self.own);
        if delta >= 0 {
            own.added = own.added.wrapping_add(delta);
        } else {
            own.removed = own.removed.wrapping_add(delta.wrapping_neg());
        }
        own.timestamp = own.timestamp.wrapping_add(1);
        match delta.signum() {
            1 => self.increments += 1,
            -1 => self.decrements += 1,
            _ => {}
        }
        let after = self.value();
        Ok((after.wrapping_sub(delta), after))
    }

    /// Merges another replica's state: each entry is replaced by a newer one (higher
    /// timestamp); entries of replicas unknown here are added.
    fn merge(&mut self, others: &[ReplicaEntry]) {
        for other in others {
            match self.entries.iter_mut().find(|entry| entry.replica == other.replica) {
                Some(entry) if other.timestamp > entry.timestamp => *entry = *other,
                Some(_) => {}
                None => self.entries.push(*other),
            }
        }
    }

    /// Appends the whole state: every entry (`ENTRY_BYTES` each).
    pub(crate) fn write_state(&self, out: &mut Vec<u8>) {
        for entry in &self.entries {
            out.extend_from_slice(&entry.replica.as_u128().to_le_bytes());
            out.extend_from_slice(&entry.timestamp.to_le_bytes());
            out.extend_from_slice(&entry.added.to_le_bytes());
            out.extend_from_slice(&entry.removed.to_le_bytes());
        }
    }
}

/// Reads a state body ([`PnCounter::write_state`]).
pub(crate) fn read_state(bytes: &[u8]) -> Result<Vec<ReplicaEntry>, Malformed> {
    let mut reader = Reader::new(bytes);
    let mut entries = Vec::with_capacity(bytes.len() / ENTRY_BYTES);
    while !reader.is_empty() {
        let replica = Uuid::from_u128(reader.u128()?);
        let (timestamp, added, removed) = (reader.i64()?, reader.i64()?, reader.i64()?);
        entries.push(ReplicaEntry { replica, timestamp, added, removed });
    }
    Ok(entries)
}

/// What a get or an add answers: the value and the replica's clock after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) value: i64,
    pub(crate) clock: VectorClock,
}

/// The replicas of PN counters one reactor holds (the counters whose name's partition is this
/// reactor's). Owned by that reactor.
#[derive(Debug, Default)]
pub struct PnCounters {
    pub(crate) counters: BTreeMap<Box<str>, PnCounter>,
    /// The name the next periodic exchange starts after (None: from the first).
    cursor: Option<Box<str>>,
    /// When the next periodic exchange is due.
    pub(crate) next_exchange_ms: i64,
}

impl PnCounters {
    pub(crate) fn get(&self, name: &str) -> Option<&PnCounter> {
        self.counters.get(name)
    }

    /// Runs a get or an add on this member's replica of `name` (created, under the replica id
    /// `new_id` gives, if absent). A client that observed some replica's clock finds no counter
    /// on a member that never had one (Hazelcast's ConsistencyLostException), as it would
    /// one behind what it saw.
    pub(crate) fn execute(
        &mut self,
        name: &str,
        op: PnCounterOp,
        observed: &[(Option<Uuid>, i64)],
        new_id: impl FnOnce() -> Uuid,
    ) -> Result<Answer, OpError> {
        let stale = || {
            let text =
                "This replica cannot provide the session guarantees for the PN counter since it's state is stale";
            OpError::new(ErrorKind::ConsistencyLost, text)
        };
        if !observed.is_empty() && !self.counters.contains_key(name) {
            return Err(stale());
        }
        let counter = self.counters.entry(name.into()).or_insert_with(|| PnCounter::new(new_id()));
        if counter.is_behind(observed) {
            return Err(stale());
        }
        let value = match op {
            PnCounterOp::Get => counter.value(),
            PnCounterOp::Add { delta, get_before_update } => {
                let (before, after) = counter.add(delta)?;
                if get_before_update {
                    before
                } else {
                    after
                }
            }
        };
        Ok(Answer { value, clock: counter.clock() })
    }

    /// Merges another replica's state of `name` (creating this member's replica if absent).
    pub(crate) fn merge(&mut self, name: &str, entries: &[ReplicaEntry], new_id: impl FnOnce() -> Uuid) {
        let counter = self.counters.entry(name.into()).or_insert_with(|| PnCounter::new(new_id()));
        counter.merge(entries);
    }

    /// Drops this member's replica of `name` (destroy); whether it had one.
    pub(crate) fn remove(&mut self, name: &str) -> bool {
        self.counters.remove(name).is_some()
    }

    /// The next at most `limit` counters of the periodic exchange, in name order, starting
    /// after the cursor and wrapping around once; the cursor moves past them.
    pub(crate) fn next_batch(&mut self, limit: usize) -> Vec<(&str, &PnCounter)> {
        let start = match &self.cursor {
            Some(name) => Bound::Excluded(name.clone()),
            None => Bound::Unbounded,
        };
        let mut batch: Vec<(&str, &PnCounter)> = Vec::new();
        let after = self.counters.range::<Box<str>, _>((start, Bound::Unbounded));
        batch.extend(after.take(limit).map(|(name, counter)| (&**name, counter)));
        let wrapped = self.cursor.is_some() && batch.len() < limit;
        if wrapped {
            let first_taken = batch.first().map(|(name, _)| *name);
            let before = self.counters.iter().take_while(|(name, _)| Some(&***name) != first_taken);
            let room = limit - batch.len();
            batch.extend(before.take(room).map(|(name, counter)| (&**name, counter)));
        }
        self.cursor = match (batch.last(), batch.len() < limit) {
            (_, true) | (None, _) => None,
            (Some((name, _)), false) => Some((*name).into()),
        };
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Uuid = Uuid { most: 0, least: 0xA };
    const B: Uuid = Uuid { most: 0, least: 0xB };

    fn add(delta: i64) -> PnCounterOp {
        PnCounterOp::Add { delta, get_before_update: false }
    }

    fn run(counters: &mut PnCounters, op: PnCounterOp, observed: &[(Option<Uuid>, i64)]) -> Result<Answer, OpError> {
        counters.execute("hits", op, observed, || A)
    }

    #[test]
    fn a_new_counter_is_zero_with_its_own_replica_at_the_lowest_timestamp() {
        let mut counters = PnCounters::default();
        let answer = run(&mut counters, PnCounterOp::Get, &[]).unwrap();
        assert_eq!(answer, Answer { value: 0, clock: vec![(Some(A), i64::MIN)] });
    }

    #[test]
    fn adds_count_per_replica_and_answer_before_or_after() {
        let mut counters = PnCounters::default();
        assert_eq!(run(&mut counters, add(5), &[]).unwrap().value, 5);
        let before = PnCounterOp::Add { delta: -7, get_before_update: true };
        let answer = run(&mut counters, before, &[]).unwrap();
        assert_eq!(answer.value, 5);
        assert_eq!(answer.clock, vec![(Some(A), i64::MIN + 2)]);
        assert_eq!(run(&mut counters, PnCounterOp::Get, &[]).unwrap().value, -2);
        let counter = counters.get("hits").unwrap();
        assert_eq!((counter.entries[0].added, counter.entries[0].removed), (5, 7));
        assert_eq!((counter.increments, counter.decrements), (1, 1));
        assert_eq!(run(&mut counters, add(0), &[]).unwrap().clock, vec![(Some(A), i64::MIN + 3)], "0 still ticks");
    }

    #[test]
    fn values_wrap_as_java_longs_and_long_min_value_is_refused_as_hazelcast_does() {
        let mut counters = PnCounters::default();
        assert_eq!(run(&mut counters, add(i64::MAX), &[]).unwrap().value, i64::MAX);
        assert_eq!(run(&mut counters, add(1), &[]).unwrap().value, i64::MIN);
        let before = PnCounterOp::Add { delta: -5, get_before_update: true };
        assert_eq!(run(&mut counters, before, &[]).unwrap().value, i64::MIN);
        assert_eq!(run(&mut counters, PnCounterOp::Get, &[]).unwrap().value, i64::MAX - 4);
        let clock_before = counters.get("hits").unwrap().clock();
        let refused = run(&mut counters, add(i64::MIN), &[]).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::StackOverflow);
        assert_eq!(counters.get("hits").unwrap().clock(), clock_before, "nothing changed");
    }

    #[test]
    fn a_replica_behind_what_the_client_observed_refuses() {
        let mut counters = PnCounters::default();
        let observed = [(Some(A), i64::MIN + 1)];
        let missing = run(&mut counters, PnCounterOp::Get, &observed).unwrap_err();
        assert_eq!(missing.kind, ErrorKind::ConsistencyLost, "a member without the counter");
        assert!(counters.get("hits").is_none(), "and it is not created");
        run(&mut counters, PnCounterOp::Get, &[]).unwrap();
        assert_eq!(run(&mut counters, PnCounterOp::Get, &observed).unwrap_err().kind, ErrorKind::ConsistencyLost);
        run(&mut counters, add(1), &[]).unwrap();
        assert_eq!(run(&mut counters, PnCounterOp::Get, &observed).unwrap().value, 1, "caught up");
        let elsewhere = [(Some(A), i64::MIN + 1), (Some(B), 3)];
        let refused = run(&mut counters, PnCounterOp::Get, &elsewhere).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::ConsistencyLost, "the client saw a replica this one never heard of");
        let concurrent = [(Some(A), i64::MIN), (Some(B), 3)];
        assert!(run(&mut counters, PnCounterOp::Get, &concurrent).is_ok(), "not after: concurrent");
    }

    #[test]
    fn merging_takes_the_newer_entry_of_each_replica_in_any_order() {
        let (mut here, mut there) = (PnCounters::default(), PnCounters::default());
        here.execute("hits", add(3), &[], || A).unwrap();
        there.execute("hits", add(-10), &[], || B).unwrap();
        there.execute("hits", add(4), &[], || B).unwrap();
        let state = |counters: &PnCounters| {
            let mut body = Vec::new();
            counters.get("hits").unwrap().write_state(&mut body);
            read_state(&body).unwrap()
        };
        let (mine, theirs) = (state(&here), state(&there));
        here.merge("hits", &theirs, || unreachable!("exists"));
        there.merge("hits", &mine, || unreachable!("exists"));
        there.merge("hits", &mine, || unreachable!("exists"));
        assert_eq!(here.get("hits").unwrap().value(), -3);
        assert_eq!(there.get("hits").unwrap().value(), -3, "merging twice changes nothing");
        let older = vec![ReplicaEntry { replica: B, timestamp: i64::MIN + 1, added: 0, removed: 10 }];
        here.merge("hits", &older, || unreachable!("exists"));
        assert_eq!(here.get("hits").unwrap().value(), -3, "an older entry is ignored");
        let mut fresh = PnCounters::default();
        fresh.merge("hits", &theirs, || B.with_least(0xC));
        assert_eq!(fresh.get("hits").unwrap().value(), -6);
        assert_eq!(fresh.get("hits").unwrap().entries[0].replica, B.with_least(0xC), "its own entry first");
    }

    #[test]
    fn a_cut_state_is_malformed() {
        let mut counters = PnCounters::default();
        counters.execute("hits", add(1), &[], || A).unwrap();
        let mut body = Vec::new();
        counters.get("hits").unwrap().write_state(&mut body);
        assert_eq!(body.len(), ENTRY_BYTES);
        assert!((1..body.len()).all(|cut| read_state(&body[..cut]).is_err()));
        assert_eq!(read_state(&[]).unwrap(), Vec::new());
    }

    #[test]
    fn the_periodic_exchange_walks_every_counter_in_bounded_batches() {
        let mut counters = PnCounters::default();
        for name in ["a", "b", "c", "d", "e"] {
            counters.merge(name, &[], || A);
        }
        let names =
            |batch: Vec<(&str, &PnCounter)>| batch.into_iter().map(|(name, _)| name.to_owned()).collect::<Vec<_>>();
        assert_eq!(names(counters.next_batch(2)), ["a", "b"]);
        assert_eq!(names(counters.next_batch(2)), ["c", "d"]);
        assert_eq!(names(counters.next_batch(2)), ["e", "a"], "wraps around");
        assert_eq!(names(counters.next_batch(10)), ["b", "c", "d", "e", "a"], "each counter once per batch");
        assert_eq!(names(counters.next_batch(10)), ["a", "b", "c", "d", "e"]);
        counters.remove("a");
        assert_eq!(names(PnCounters::default().next_batch(3)), Vec::<String>::new());
    }

    #[test]
    fn replicas_are_the_first_members_of_the_list() {
        let member = |id: u128| MemberEntry::new(MemberId(id), String::new());
        assert_eq!(replicas(&[], MemberId(2), 1), vec![MemberId(2)], "alone before joining");
        let members = [member(1), member(2), member(3)];
        assert_eq!(replicas(&members, MemberId(2), i32::MAX as u32), vec![MemberId(1), MemberId(2), MemberId(3)]);
        assert_eq!(replicas(&members, MemberId(2), 1), vec![MemberId(1)]);
        // Lite members are skipped: the first data members are the replicas.
        let lite = |id: u128| MemberEntry { lite: true, ..member(id) };
        let mixed = [lite(1), member(2), lite(3), member(4)];
        assert_eq!(replicas(&mixed, MemberId(1), 1), vec![MemberId(2)]);
        assert_eq!(replicas(&mixed, MemberId(1), 5), vec![MemberId(2), MemberId(4)]);
        assert!(replicas(&[lite(1), lite(2)], MemberId(1), 5).is_empty(), "no data member: no replica");
    }

    #[test]
    fn a_name_maps_to_one_partition() {
        let partition = partition_of("hits", 271);
        assert!(partition.0 < 271);
        assert_eq!(partition_of("hits", 271), partition);
        assert_eq!(partition_of("hits", 1), PartitionId(0));
    }

    trait WithLeast {
        fn with_least(self, least: u64) -> Uuid;
    }

    impl WithLeast for Uuid {
        fn with_least(self, least: u64) -> Uuid {
            Uuid { least, ..self }
        }
    }
}
