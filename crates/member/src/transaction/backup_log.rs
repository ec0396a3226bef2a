//! TWO_PHASE transactions' backup logs, as Hazelcast keeps them (`TxBackupLog`): the
//! coordinator of a TWO_PHASE transaction with `durability` > 0 names that many other members
//! its log holders when the transaction is created, tells them it is *active*, and, at the
//! commit, that it is *committing*, waiting for their acknowledgements before any partition
//! applies anything. A holder that sees the coordinator leave the cluster ends the
//! transaction in its place: an active one rolled back (its key locks released), a committing
//! one committed on every partition, so a commit whose coordinator dies is applied everywhere
//! or nowhere. Once the commit has been applied on every member the coordinator tells the
//! holders to forget it (*purge*); a rollback purges at once.
//!
//! Here the transaction's changes live with its keys (`engine/map/staged.rs`), so the log a
//! holder keeps is the transaction's id, its coordinator and its state: ending it is the same
//! fan-out the coordinator's commit or rollback is, and ending a transaction twice changes
//! nothing the second time.
//!
//! Member messages (`cluster/peer.rs`): `TXN_LOG` carries [`Record`]s, `TXN_LOG_ACK` answers a
//! committing one. One mutex per member holds both roles ([`Logs`]), taken per transaction
//! event, never per key operation.

use crate::cluster::peer::{Malformed, Reader};
use crate::net::connection::ConnectionShared;
use ahash::RandomState;
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::Uuid;
use std::collections::HashMap;
use std::sync::Arc;

/// How long after its transaction's deadline a holder keeps a log no purge reached (a purge
/// lost with its link): a commit is refused past the deadline, and its fan-out ends well
/// within this.
pub(crate) const KEEP_AFTER_DEADLINE_MS: i64 = 60_000;

/// A transaction's state as its holders know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Forget it: it ended.
    Purge = 0,
    /// Open: rolled back if its coordinator leaves.
    Active = 1,
    /// Its commit began: committed if its coordinator leaves.
    Committing = 2,
}

/// One TXN_LOG record: `txn u128 | coordinator u128 | state u8 | keep until ms i64`, LE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) txn: Uuid,
    pub(crate) coordinator: Uuid,
    pub(crate) state: State,
    /// When a holder may drop it unpurged (the transaction's deadline and
    /// [`KEEP_AFTER_DEADLINE_MS`]).
    pub(crate) keep_until_ms: i64,
}

impl Record {
    pub(crate) const SIZE: usize = 16 + 16 + 1 + 8;

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.txn.as_u128().to_le_bytes());
        out.extend_from_slice(&self.coordinator.as_u128().to_le_bytes());
        out.push(self.state as u8);
        out.extend_from_slice(&self.keep_until_ms.to_le_bytes());
    }

    /// The records of a TXN_LOG payload; a malformed one refuses the whole message.
    pub(crate) fn decode_all(payload: &[u8]) -> Result<Vec<Record>, Malformed> {
        let mut reader = Reader::new(payload);
        let mut records = Vec::with_capacity(payload.len() / Record::SIZE);
        while !reader.is_empty() {
            let txn = Uuid::from_u128(reader.u128()?);
            let coordinator = Uuid::from_u128(reader.u128()?);
            let state = match reader.u8()? {
                0 => State::Purge,
                1 => State::Active,
                2 => State::Committing,
                _ => return Err(Malformed::Refused("unknown transaction log state")),
            };
            let keep_until_ms = reader.i64()?;
            records.push(Record { txn, coordinator, state, keep_until_ms });
        }
        Ok(records)
    }
}

/// TXN_LOG_ACK: `txn u128 | kept u8` (0: the holder's table was full).
pub(crate) fn encode_ack(txn: Uuid, kept: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(&txn.as_u128().to_le_bytes());
    out.push(u8::from(kept));
}

pub(crate) fn decode_ack(payload: &[u8]) -> Result<(Uuid, bool), Malformed> {
    let mut reader = Reader::new(payload);
    let txn = Uuid::from_u128(reader.u128()?);
    let kept = reader.u8()? != 0;
    reader.finish()?;
    Ok((txn, kept))
}

/// Another member's transaction logged here.
#[derive(Debug, Clone, Copy)]
struct Held {
    coordinator: Uuid,
    committing: bool,
    keep_until_ms: i64,
}

/// A client's commit waiting for its transaction's holders, or its XA prepare waiting for
/// every other member to list the prepared transaction (`xa.rs`).
#[derive(Debug)]
pub(crate) struct PendingCommit {
    pub(crate) txn: Uuid,
    pub(crate) connection: Arc<ConnectionShared>,
    pub(crate) correlation_id: i64,
    /// The client's TransactionCommit, sent to the other members as the commit's fan-out
    /// (empty for a prepare).
    pub(crate) request: Vec<u8>,
    /// An XA prepare (acknowledged by XA_PREPARED_ACK), not a commit (by TXN_LOG_ACK).
    pub(crate) prepare: bool,
    pub(crate) holders: Vec<MemberId>,
    /// The holders that have not acknowledged yet.
    waiting: Vec<MemberId>,
    deadline_ms: i64,
}

/// What a holder's acknowledgement did to a pending commit.
#[derive(Debug)]
pub(crate) enum Acked {
    /// Others still to come (or no such commit).
    Waiting,
    /// Every holder has it: commit.
    Complete(PendingCommit),
    /// A holder could not keep it: the commit fails.
    Refused(PendingCommit, MemberId),
}

/// Both roles' logs on one member.
#[derive(Debug)]
pub(crate) struct Logs {
    /// At most this many other members' transactions held (`max-transactions`, the
    /// cluster's coordinators together).
    bound: usize,
    held: HashMap<Uuid, Held, RandomState>,
    /// This member's open TWO_PHASE transactions: their holders.
    holders: HashMap<Uuid, Vec<MemberId>, RandomState>,
    pending: HashMap<Uuid, PendingCommit, RandomState>,
    /// Commits under way: their holders, purged once the commit answered
    /// ([`Logs::finished`]).
    committing: HashMap<Uuid, Vec<MemberId>, RandomState>,
}

impl Logs {
    pub(crate) fn new(bound: usize) -> Logs {
        Logs {
            bound,
            held: HashMap::default(),
            holders: HashMap::default(),
            pending: HashMap::default(),
            committing: HashMap::default(),
        }
    }

    // --- as a holder ---

    /// Applies a record from its coordinator. False: the table is full (the record is not
    /// kept).
    pub(crate) fn hold(&mut self, record: &Record) -> bool {
        if record.state == State::Purge {
            self.held.remove(&record.txn);
            return true;
        }
        if !self.held.contains_key(&record.txn) && self.held.len() >= self.bound {
            return false;
        }
        let held = Held {
            coordinator: record.coordinator,
            committing: record.state == State::Committing,
            keep_until_ms: record.keep_until_ms,
        };
        self.held.insert(record.txn, held);
        true
    }

    /// Takes the logs of transactions coordinated by members that left: (txn, commit).
    pub(crate) fn take_coordinated_by(&mut self, left: &[Uuid]) -> Vec<(Uuid, bool)> {
        let theirs: Vec<Uuid> =
            self.held.iter().filter(|(_, held)| left.contains(&held.coordinator)).map(|(txn, _)| *txn).collect();
        theirs.into_iter().filter_map(|txn| self.held.remove(&txn).map(|held| (txn, held.committing))).collect()
    }

    /// Drops logs kept past their time (a purge that never came).
    pub(crate) fn expire_held(&mut self, now_ms: i64) {
        self.held.retain(|_, held| held.keep_until_ms >= now_ms);
    }

    // --- as a coordinator ---

    /// Transaction `txn` (created here) is logged on `holders`.
    pub(crate) fn open(&mut self, txn: Uuid, holders: Vec<MemberId>) {
        self.holders.insert(txn, holders);
    }

    /// The holders of `txn`, which is ending (None: it has none).
    pub(crate) fn take_holders(&mut self, txn: Uuid) -> Option<Vec<MemberId>> {
        self.holders.remove(&txn).filter(|holders| !holders.is_empty())
    }

    /// Holds a commit until its holders acknowledged its log, or `deadline_ms`; with an empty
    /// `request`, an XA prepare until `holders` (every other member) listed it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn wait(
        &mut self,
        txn: Uuid,
        (connection, correlation_id): (Arc<ConnectionShared>, i64),
        request: Vec<u8>,
        holders: Vec<MemberId>,
        deadline_ms: i64,
    ) {
        let waiting = holders.clone();
        let prepare = request.is_empty();
        let pending =
            PendingCommit { txn, connection, correlation_id, request, prepare, holders, waiting, deadline_ms };
        self.pending.insert(txn, pending);
    }

    /// A member's acknowledgement of `txn`'s committing log (`prepare` false) or of its XA
    /// prepare (true).
    pub(crate) fn acked(&mut self, txn: Uuid, member: MemberId, kept: bool, prepare: bool) -> Acked {
        let Some(pending) = self.pending.get_mut(&txn).filter(|pending| pending.prepare == prepare) else {
            return Acked::Waiting;
        };
        if !kept {
            let pending = self.pending.remove(&txn).expect("found above");
            return Acked::Refused(pending, member);
        }
        pending.waiting.retain(|holder| *holder != member);
        if pending.waiting.is_empty() {
            let pending = self.pending.remove(&txn).expect("found above");
            return Acked::Complete(pending);
        }
        Acked::Waiting
    }

    /// Members that left: no longer holders, nor waited for (as Hazelcast's coordinator
    /// ignores a log member that left). Returns the commits that now have every holder.
    pub(crate) fn members_left(&mut self, left: &[MemberId]) -> Vec<PendingCommit> {
        for holders in self.holders.values_mut().chain(self.committing.values_mut()) {
            holders.retain(|holder| !left.contains(holder));
        }
        for pending in self.pending.values_mut() {
            pending.waiting.retain(|holder| !left.contains(holder));
            pending.holders.retain(|holder| !left.contains(holder));
        }
        let complete: Vec<Uuid> =
            self.pending.iter().filter(|(_, pending)| pending.waiting.is_empty()).map(|(txn, _)| *txn).collect();
        complete.into_iter().filter_map(|txn| self.pending.remove(&txn)).collect()
    }

    /// Commits whose holders did not all answer by their deadline.
    pub(crate) fn overdue(&mut self, now_ms: i64) -> Vec<PendingCommit> {
        let late: Vec<Uuid> =
            self.pending.iter().filter(|(_, pending)| now_ms > pending.deadline_ms).map(|(txn, _)| *txn).collect();
        late.into_iter().filter_map(|txn| self.pending.remove(&txn)).collect()
    }

    /// `txn`'s commit is being applied: its holders are purged once it answered.
    pub(crate) fn committing(&mut self, txn: Uuid, holders: Vec<MemberId>) {
        self.committing.insert(txn, holders);
    }

    /// The holders to purge of commits that answered (`finished`, from their fan-outs).
    pub(crate) fn finished(&mut self, finished: Vec<Uuid>) -> Vec<(Uuid, Vec<MemberId>)> {
        finished.into_iter().filter_map(|txn| self.committing.remove(&txn).map(|holders| (txn, holders))).collect()
    }
}

/// The holders of a new transaction: the first `durability` other members after this one in
/// the member list's order (wrapping round), among `peers`.
pub(crate) fn choose_holders(
    members: &[MemberId],
    me: MemberId,
    peers: &[MemberId],
    durability: usize,
) -> Vec<MemberId> {
    let start = members.iter().position(|member| *member == me).map_or(0, |at| at + 1);
    let ring = members.iter().cycle().skip(start).take(members.len());
    ring.filter(|member| peers.contains(member)).take(durability).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TXN: Uuid = Uuid { most: 7, least: 7 };
    const COORDINATOR: Uuid = Uuid { most: 1, least: 1 };

    fn record(txn: Uuid, state: State) -> Record {
        Record { txn, coordinator: COORDINATOR, state, keep_until_ms: 1_000 }
    }

    #[test]
    fn records_and_acks_survive_the_member_hop_and_truncations_are_refused() {
        let mut payload = Vec::new();
        record(TXN, State::Active).encode(&mut payload);
        record(Uuid::from_u128(9), State::Committing).encode(&mut payload);
        let decoded = Record::decode_all(&payload).unwrap();
        assert_eq!(decoded, [record(TXN, State::Active), record(Uuid::from_u128(9), State::Committing)]);
        for cut in 1..payload.len() {
            if cut != Record::SIZE {
                assert!(Record::decode_all(&payload[..cut]).is_err(), "cut at {cut}");
            }
        }
        payload[32] = 9;
        assert!(Record::decode_all(&payload).is_err(), "an unknown state");
        let mut ack = Vec::new();
        encode_ack(TXN, true, &mut ack);
        assert_eq!(decode_ack(&ack).unwrap(), (TXN, true));
        ack.push(0);
        assert!(decode_ack(&ack).is_err());
    }

    #[test]
    fn a_holder_ends_what_a_coordinator_that_left_had_open_once() {
        let mut logs = Logs::new(2);
        assert!(logs.hold(&record(TXN, State::Active)));
        assert!(logs.hold(&record(Uuid::from_u128(2), State::Active)));
        assert!(!logs.hold(&record(Uuid::from_u128(3), State::Active)), "full");
        assert!(logs.hold(&record(TXN, State::Committing)), "a known one changes state when full");
        let other = Record { coordinator: Uuid::from_u128(5), ..record(Uuid::from_u128(2), State::Active) };
        assert!(logs.hold(&other));
        let mut ended = logs.take_coordinated_by(&[COORDINATOR, Uuid::from_u128(8)]);
        ended.sort_by_key(|(txn, _)| txn.as_u128());
        assert_eq!(ended, [(TXN, true)]);
        assert!(logs.take_coordinated_by(&[COORDINATOR]).is_empty(), "taken once");
        assert!(logs.hold(&record(Uuid::from_u128(2), State::Purge)));
        assert!(logs.take_coordinated_by(&[Uuid::from_u128(5)]).is_empty(), "purged");
        logs.hold(&record(TXN, State::Active));
        logs.expire_held(1_000);
        assert_eq!(logs.held.len(), 1, "kept until its time");
        logs.expire_held(1_001);
        assert!(logs.held.is_empty());
    }

    #[test]
    fn a_commit_waits_for_every_holder_or_those_that_stay() {
        let (connection, _client) = crate::route::fanout::testing::loopback();
        let (one, two) = (MemberId(1), MemberId(2));
        let mut logs = Logs::new(10);
        logs.open(TXN, vec![one, two]);
        let holders = logs.take_holders(TXN).unwrap();
        logs.wait(TXN, (connection.clone(), 5), vec![1], holders, 100);
        assert!(matches!(logs.acked(TXN, one, true, false), Acked::Waiting));
        assert!(matches!(logs.acked(TXN, one, true, false), Acked::Waiting), "the same holder twice");
        assert!(matches!(logs.acked(TXN, two, true, true), Acked::Waiting), "a prepare's ack: not this commit's");
        assert!(logs.overdue(100).is_empty());
        let complete = logs.members_left(&[two]);
        assert_eq!(complete.len(), 1, "the holder that left is not waited for");
        assert_eq!(complete[0].holders, [one]);
        logs.wait(TXN, (connection.clone(), 6), vec![1], vec![one, two], 100);
        assert!(matches!(logs.acked(TXN, two, false, false), Acked::Refused(_, member) if member == two));
        logs.wait(TXN, (connection.clone(), 7), vec![1], vec![one], 100);
        assert_eq!(logs.overdue(101).len(), 1);
        assert!(logs.take_holders(Uuid::from_u128(3)).is_none());
        logs.committing(TXN, vec![one]);
        assert_eq!(logs.finished(vec![TXN, Uuid::from_u128(3)]), [(TXN, vec![one])]);
    }

    #[test]
    fn an_xa_prepare_waits_for_every_other_member_to_list_it() {
        let (connection, _client) = crate::route::fanout::testing::loopback();
        let (one, two) = (MemberId(1), MemberId(2));
        let mut logs = Logs::new(10);
        logs.wait(TXN, (connection, 5), Vec::new(), vec![one, two], 100);
        assert!(matches!(logs.acked(TXN, one, true, false), Acked::Waiting), "a commit's ack: not this prepare's");
        assert!(matches!(logs.acked(TXN, one, true, true), Acked::Waiting));
        match logs.acked(TXN, two, true, true) {
            Acked::Complete(pending) => assert!(pending.prepare && pending.correlation_id == 5),
            other => panic!("expected the prepare complete, got {other:?}"),
        }
    }

    #[test]
    fn holders_are_the_next_members_in_the_list_among_the_linked_ones() {
        let members = [MemberId(1), MemberId(2), MemberId(3), MemberId(4)];
        let peers = [MemberId(1), MemberId(2), MemberId(4)];
        assert_eq!(choose_holders(&members, MemberId(3), &peers, 2), [MemberId(4), MemberId(1)]);
        assert_eq!(choose_holders(&members, MemberId(3), &peers, 9), [MemberId(4), MemberId(1), MemberId(2)]);
        assert!(choose_holders(&members, MemberId(3), &[], 1).is_empty());
    }
}
