//! Three members' reactors (one each) wired by hand: what one queues for another is
//! delivered by the test. A map and the probe double (`partition::probe`) share a
//! partition, so both kinds take the same path through backups, migration and drop.
use super::*;
use crate::cluster::peer::tests::snapshot_chunks;
use crate::engine::structures::ObjectKind;
use crate::net::connection::ConnectionId;
use crate::partition::objects::probe::probe;
use ferrogrid_cluster::{MemberEntry, MAX_REPLICAS};
use ferrogrid_config::MemberConfig;
use ferrogrid_protocol::codec::BackupEvent;
use ferrogrid_protocol::Uuid;
use std::collections::HashMap;

const A: MemberId = MemberId(1);
const B: MemberId = MemberId(2);
const C: MemberId = MemberId(3);
const PARTITIONS: usize = 2;

/// `me`'s view of a table (version `version`) giving every partition `replicas`.
fn state(me: MemberId, version: u64, replicas: &[MemberId]) -> Arc<ClusterState> {
    state_of(me, version, &[A, B, C], replicas)
}

/// The same with only `members` in the member list.
fn state_of(me: MemberId, version: u64, members: &[MemberId], replicas: &[MemberId]) -> Arc<ClusterState> {
    let mut table = PartitionTable::empty(PARTITIONS);
    table.version = version;
    let mut row = [None; MAX_REPLICAS];
    row.iter_mut().zip(replicas).for_each(|(slot, member)| *slot = Some(*member));
    (0..PARTITIONS).for_each(|partition| table.set_replicas(partition, row));
    let members = members.iter().map(|id| MemberEntry::new(*id, String::new())).collect();
    Arc::new(ClusterState { me, members, members_version: 1, cluster_id: A, table, links: HashMap::new(), kept: false })
}

fn member(me: MemberId) -> PartitionOwner {
    let config = Arc::new(MemberConfig::default());
    PartitionOwner::new(
        0,
        1,
        Uuid::from_u128(me.0),
        config,
        PARTITIONS as u16,
        state(me, 0, &[]),
        Arc::new(crate::obs::probes::Counter::default()),
    )
}

/// Every member applies table `version`.
fn apply_table(members: &mut [(MemberId, &mut PartitionOwner)], version: u64, replicas: &[MemberId]) {
    for (me, owner) in members.iter_mut() {
        owner.apply_cluster_state(state(*me, version, replicas));
    }
}

/// Delivers the snapshots `from` queued for `to`.
fn deliver_snapshots(from: (MemberId, &mut PartitionOwner), to: (MemberId, &mut PartitionOwner)) {
    let queued = from.1.replication.out.remove(&to.0).unwrap_or_default();
    for chunk in snapshot_chunks(&queued) {
        to.1.install_snapshot(from.0, &chunk);
    }
}

fn log_items(owner: &mut PartitionOwner) -> Vec<Box<[u8]>> {
    probe(&mut owner.partitions[0], "log").items.clone()
}

fn map_value(owner: &PartitionOwner) -> Option<Box<[u8]>> {
    owner.partitions[0].map("log")?.raw(b"key").map(|entry| entry.value().into())
}

fn connection() -> Arc<ConnectionShared> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let stream = mio::net::TcpStream::from_std(stream);
    Arc::new(ConnectionShared::new(ConnectionId(1), listener.local_addr().unwrap(), stream))
}

fn call(connection: &Arc<ConnectionShared>, backup_aware: bool) -> Call<'_> {
    Call {
        connection,
        correlation_id: 42,
        response_type: ferrogrid_protocol::codec::MapPut::RESPONSE,
        source: ferrogrid_protocol::Uuid::default(),
        counter_slot: 0,
        partition_id: PartitionId(0),
        backup_aware,
        local: 0,
    }
}

#[test]
fn a_backup_aware_client_is_answered_at_once_and_told_of_each_backup() {
    let (mut a, mut b, mut c) = (member(A), member(B), member(C));
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 1, &[A, B]);
    deliver_snapshots((A, &mut a), (B, &mut b));
    let settings = a.settings_for("m");
    a.partitions[0].map_mut("m", || settings).put(b"key", b"value", 0, -1, -1);
    let client = connection();
    client.set_backup_listener(7);
    let mut response = Vec::new();
    let writer = ferrogrid_protocol::message::MessageWriter::response(
        &mut response,
        ferrogrid_protocol::codec::MapPut::RESPONSE,
        42,
        0,
    );
    writer.finish();
    let waiter = connection();
    let others = vec![(waiter.clone(), b"item for the waiter".to_vec())];
    a.replicate(PartitionId(0), &call(&client, true), &mut response, 0, others);
    assert_eq!(response.get(18), Some(&1), "answered now, with one backup to wait for");
    assert!(a.outbox.buffer(&waiter).is_empty(), "the waiter's answer is still held");
    let records = a.replication.backups.remove(&B).expect("backups for B");
    b.apply_backups(A, &records);
    let acks = peer::read_acks(&b.replication.acks.remove(&A).unwrap()).unwrap();
    a.on_acks(B, &acks);
    let event = a.outbox.buffer(&client).clone();
    let message = Message::parse(&event).unwrap();
    assert_eq!(message.message_type(), BackupEvent::TYPE);
    assert_eq!(message.correlation_id(), 7, "under the backup listener's correlation id");
    let flags = ferrogrid_protocol::frame::IS_EVENT | ferrogrid_protocol::frame::BACKUP_EVENT;
    assert_eq!(message.initial_flags() & flags, flags);
    assert_eq!(
        BackupEvent::decode(&message).unwrap().source_invocation_correlation_id,
        42,
        "names the write's correlation id"
    );
    assert_eq!(a.outbox.buffer(&waiter), b"item for the waiter", "released with the acknowledgement");
}

#[test]
fn a_write_racing_a_move_waits_for_the_member_the_partition_moves_to() {
    let (mut a, mut b, mut c) = (member(A), member(B), member(C));
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 1, &[A, B]);
    deliver_snapshots((A, &mut a), (B, &mut b));
    // Copy before move: C joins the row as a replica past the table's one backup.
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 2, &[A, B, C]);
    deliver_snapshots((A, &mut a), (C, &mut c));
    // C has the next step already (it owns the partition); A and B do not yet.
    c.apply_cluster_state(state(C, 3, &[C, B]));
    let settings = a.settings_for("m");
    a.partitions[0].map_mut("m", || settings).put(b"key", b"value", 0, -1, -1);
    let (client, mut response) = (connection(), b"response".to_vec());
    a.replicate(PartitionId(0), &call(&client, false), &mut response, 0, Vec::new());
    assert!(response.is_empty(), "held");
    for (id, owner) in [(B, &mut b), (C, &mut c)] {
        let records = a.replication.backups.remove(&id).expect("records for every replica");
        owner.apply_backups(A, &records);
        let acks = owner.replication.acks.remove(&A).expect("an acknowledgement from every replica");
        a.on_acks(id, &peer::read_acks(&acks).unwrap());
    }
    // C refused (A is not the owner in its table): had A answered on B's acknowledgement
    // alone, the write would be lost with A's copy.
    let answer = a.outbox.buffer(&client).clone();
    let errors = error::read_error_response(&Message::parse(&answer).unwrap()).unwrap();
    assert_eq!(errors[0].code, error::PARTITION_MIGRATING.code, "the client retries");
}

#[test]
fn any_kind_of_object_is_backed_up_migrated_and_dropped_through_the_same_path() {
    let (mut a, mut b, mut c) = (member(A), member(B), member(C));
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 1, &[A, B]);
    assert_eq!(b.replication.ready_version(), None, "the new backup waits for the owner's copy");
    deliver_snapshots((A, &mut a), (B, &mut b));
    assert_eq!(b.replication.ready_version(), Some(1));

    // A write to both kinds: the response waits for the synchronous backup.
    let settings = a.settings_for("log");
    a.partitions[0].map_mut("log", || settings).put(b"key", b"value", 0, -1, -1);
    probe(&mut a.partitions[0], "log").append(b"first");
    let (client, mut response) = (connection(), b"response".to_vec());
    // A waiter the operation served (a queue's poller) is answered with it, not before.
    let waiter = connection();
    let others = vec![(waiter.clone(), b"item for the waiter".to_vec())];
    a.replicate(PartitionId(0), &call(&client, false), &mut response, 0, others);
    assert!(response.is_empty(), "held until the backup acknowledges");
    assert!(a.outbox.buffer(&waiter).is_empty(), "the waiter's answer is held too");
    let records = a.replication.backups.remove(&B).expect("backups for B");
    b.apply_backups(A, &records);
    assert_eq!(
        (log_items(&mut b), map_value(&b)),
        (vec![b"first".as_slice().into()], Some(b"value".as_slice().into()))
    );
    let acks = peer::read_acks(&b.replication.acks.remove(&A).unwrap()).unwrap();
    assert!(matches!(acks[..], [(_, true)]), "one acknowledgement for the operation: {acks:?}");
    a.on_acks(B, &acks);
    assert_eq!(a.outbox.buffer(&client), b"response", "released by the acknowledgement");
    assert_eq!(a.outbox.buffer(&waiter), b"item for the waiter", "and the waiter's with it");

    // The partition moves to C, which held no replica: A sends it and drops its own.
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 2, &[C, B]);
    assert_eq!(a.partitions[0].objects().count(), 0, "the old owner keeps nothing");
    deliver_snapshots((A, &mut a), (C, &mut c));
    deliver_snapshots((C, &mut c), (B, &mut b));
    for owner in [&mut b, &mut c] {
        assert_eq!(owner.replication.ready_version(), Some(2));
        assert_eq!(
            (log_items(owner), map_value(owner)),
            (vec![b"first".as_slice().into()], Some(b"value".as_slice().into()))
        );
    }

    // B is no longer a replica: it drops every kind.
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 3, &[C]);
    assert_eq!(b.partitions[0].objects().count(), 0);
    assert!(c.partitions[0].object(ObjectKind::Probe, "log").is_some());
}

/// Delivers, in order, every member message `from` queued for `to` (backups, snapshots,
/// backup syncs), then `to`'s acknowledgements back to `from`.
fn deliver(from: (MemberId, &mut PartitionOwner), to: (MemberId, &mut PartitionOwner)) {
    from.1.replication.seal();
    let queued = from.1.replication.out.remove(&to.0).unwrap_or_default();
    for (ty, payload) in crate::cluster::peer::tests::messages(&queued) {
        match ty {
            peer::SNAPSHOT => to.1.install_snapshot(from.0, &payload),
            peer::BACKUP => to.1.apply_backups(from.0, &payload),
            peer::BACKUP_SYNC => to.1.on_backup_syncs(from.0, &peer::read_backup_syncs(&payload).unwrap()),
            other => panic!("unexpected member message {other}"),
        }
    }
    to.1.replication.seal();
    let acks = to.1.replication.out.remove(&from.0).unwrap_or_default();
    for (ty, payload) in crate::cluster::peer::tests::messages(&acks) {
        assert_eq!(ty, peer::BACKUP_ACK);
        from.1.on_acks(to.0, &peer::read_acks(&payload).unwrap());
    }
}

/// The message types written to a client, in order.
fn types(out: &[u8]) -> Vec<ferrogrid_protocol::MessageType> {
    let mut decoder = ferrogrid_protocol::frame::StreamDecoder::default();
    let (mut rest, mut found) = (out, Vec::new());
    while !rest.is_empty() {
        let Ok(ferrogrid_protocol::frame::Decoded::Message { length }) = decoder.decode(rest) else { panic!() };
        found.push(Message::parse(&rest[..length]).unwrap().message_type());
        rest = &rest[length..];
    }
    found
}

/// A's write on partition 0 (backed up by B, not yet acknowledged), for a backup-aware client
/// (its backup listener 7) or not: the client's connection.
fn write_held_for_b(a: &mut PartitionOwner, backup_aware: bool) -> Arc<ConnectionShared> {
    let settings = a.settings_for("log");
    a.partitions[0].map_mut("log", || settings).put(b"key", b"value", 0, -1, -1);
    let client = connection();
    client.set_backup_listener(7);
    let mut response = Vec::new();
    let ty = ferrogrid_protocol::codec::MapPut::RESPONSE;
    ferrogrid_protocol::message::MessageWriter::response(&mut response, ty, 42, 0).finish();
    a.replicate(PartitionId(0), &call(&client, backup_aware), &mut response, 0, Vec::new());
    assert_eq!(a.replication.pending.len(), 1, "held for B");
    client
}

#[test]
fn a_backup_acknowledgement_lost_with_its_member_is_given_by_the_new_backup() {
    for backup_aware in [true, false] {
        let (mut a, mut b, mut c) = (member(A), member(B), member(C));
        apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 1, &[A, B]);
        deliver((A, &mut a), (B, &mut b));
        let client = write_held_for_b(&mut a, backup_aware);
        let answered = a.outbox.buffer(&client).len();
        // B is killed before acknowledging: first the table without it (no backup yet).
        for (me, owner) in [(A, &mut a), (C, &mut c)] {
            owner.apply_cluster_state(state_of(me, 2, &[A, C], &[A]));
        }
        assert_eq!(a.replication.pending.len(), 1, "still held: nobody has the write but A");
        assert_eq!(a.outbox.buffer(&client).len(), answered, "nothing told to the client yet");
        // The next step makes C the backup: A sends it the partition, then asks it.
        for (me, owner) in [(A, &mut a), (C, &mut c)] {
            owner.apply_cluster_state(state_of(me, 3, &[A, C], &[A, C]));
        }
        deliver((A, &mut a), (C, &mut c));
        assert_eq!(map_value(&c).as_deref(), Some(b"value".as_slice()), "C holds the write");
        assert!(a.replication.pending.is_empty(), "released by C's acknowledgement");
        let told = types(&a.outbox.buffer(&client)[..]);
        let expected = if backup_aware { BackupEvent::TYPE } else { ferrogrid_protocol::codec::MapPut::RESPONSE };
        assert_eq!(told.last(), Some(&expected), "backup aware: {backup_aware}; told {told:?}");
    }
}

#[test]
fn a_replica_without_its_copy_does_not_acknowledge_a_backup_sync() {
    let (mut a, mut b, mut c) = (member(A), member(B), member(C));
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 1, &[A, B]);
    deliver((A, &mut a), (B, &mut b));
    let client = write_held_for_b(&mut a, true);
    for (me, owner) in [(A, &mut a), (C, &mut c)] {
        owner.apply_cluster_state(state_of(me, 2, &[A, C], &[A, C]));
    }
    // The snapshot is lost on the way; only the request to acknowledge arrives.
    a.replication.seal();
    let queued = a.replication.out.remove(&C).expect("the copy and the request for C");
    let messages = crate::cluster::peer::tests::messages(&queued);
    let position = |ty| messages.iter().position(|(found, _)| *found == ty);
    assert!(position(peer::SNAPSHOT) < position(peer::BACKUP_SYNC), "the copy goes ahead of the request");
    let (_, syncs) = messages.iter().find(|(ty, _)| *ty == peer::BACKUP_SYNC).unwrap();
    c.on_backup_syncs(A, &peer::read_backup_syncs(syncs).unwrap());
    let acks = peer::read_acks(&c.replication.acks.remove(&A).unwrap()).unwrap();
    assert!(matches!(acks[..], [(_, false)]), "refused: C's replica is not complete: {acks:?}");
    a.on_acks(C, &acks);
    assert!(!types(&a.outbox.buffer(&client)[..]).contains(&BackupEvent::TYPE), "no backup event for the client");
}

#[test]
fn an_acknowledgement_no_member_left_can_give_is_given_up_as_hazelcast_counts_backups() {
    let (mut a, mut b) = (member(A), member(B));
    for (me, owner) in [(A, &mut a), (B, &mut b)] {
        owner.apply_cluster_state(state_of(me, 1, &[A, B], &[A, B]));
    }
    deliver((A, &mut a), (B, &mut b));
    let client = write_held_for_b(&mut a, true);
    let before = types(&a.outbox.buffer(&client)[..]).len();
    // B dies and A is alone: a write made now waits for no backup, so this one no longer does.
    a.apply_cluster_state(state_of(A, 2, &[A], &[A]));
    assert!(a.replication.pending.is_empty());
    let told = types(&a.outbox.buffer(&client)[..]);
    assert_eq!(told[before..], [BackupEvent::TYPE], "the client is told at once");
}

#[test]
fn a_member_that_already_acknowledged_is_not_asked_twice() {
    let (mut a, mut b, mut c) = (member(A), member(B), member(C));
    // C joins the row (copy before move): every write waits for B and C.
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 1, &[A, B, C]);
    deliver((A, &mut a), (B, &mut b));
    deliver((A, &mut a), (C, &mut c));
    let _client = write_held_for_b(&mut a, true);
    deliver((A, &mut a), (C, &mut c));
    let pending = a.replication.pending.values().next().expect("held for B");
    assert_eq!(pending.waiting(), [B], "C, a replica past the one backup, acknowledged");
    assert_eq!(pending.acked(), [C]);
    // B dies; C stays a replica: it is not asked again, and no other member can give B's.
    a.apply_cluster_state(state_of(A, 2, &[A, C], &[A, C]));
    a.replication.seal();
    let queued = a.replication.out.remove(&C).unwrap_or_default();
    let asked = crate::cluster::peer::tests::messages(&queued).iter().any(|(ty, _)| *ty == peer::BACKUP_SYNC);
    assert!(!asked, "C acknowledged already");
    assert!(a.replication.pending.is_empty(), "B's acknowledgement is given up: only C is left");
}

#[test]
fn an_acknowledgement_lost_with_a_migration_target_is_given_up_once_the_row_has_its_backups() {
    const D: MemberId = MemberId(4);
    let (mut a, mut b, mut c) = (member(A), member(B), member(C));
    for (me, owner) in [(A, &mut a), (B, &mut b), (C, &mut c)] {
        owner.apply_cluster_state(state_of(me, 1, &[A, B, C, D], &[A, B]));
    }
    deliver((A, &mut a), (B, &mut b));
    // Copy before move: C joins the row past the table's one backup; every write waits for it.
    for (me, owner) in [(A, &mut a), (B, &mut b), (C, &mut c)] {
        owner.apply_cluster_state(state_of(me, 2, &[A, B, C, D], &[A, B, C]));
    }
    deliver((A, &mut a), (C, &mut c));
    let client = write_held_for_b(&mut a, true);
    deliver((A, &mut a), (B, &mut b));
    let before = types(&a.outbox.buffer(&client)[..]).len();
    // C dies before acknowledging; the row keeps its one backup (B), and D, a member, is none.
    a.apply_cluster_state(state_of(A, 3, &[A, B, D], &[A, B]));
    a.replication.seal();
    let queued = a.replication.out.remove(&D).unwrap_or_default();
    let asked = crate::cluster::peer::tests::messages(&queued).iter().any(|(ty, _)| *ty == peer::BACKUP_SYNC);
    assert!(!asked, "D, no replica of the partition, is not asked");
    assert!(a.replication.pending.is_empty(), "the write has the backup its row holds");
    let told = types(&a.outbox.buffer(&client)[..]);
    assert_eq!(told[before..], [BackupEvent::TYPE], "the client is not left waiting for C");
}

#[test]
fn a_member_without_the_new_table_or_the_copy_does_not_acknowledge_a_backup_sync() {
    let (mut a, mut b, mut c) = (member(A), member(B), member(C));
    apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 1, &[A, B]);
    deliver((A, &mut a), (B, &mut b));
    let _client = write_held_for_b(&mut a, true);
    // Only A has the table making C the backup; the copy for C is lost, the request arrives.
    a.apply_cluster_state(state_of(A, 2, &[A, C], &[A, C]));
    a.replication.seal();
    let queued = a.replication.out.remove(&C).expect("the copy and the request for C");
    let messages = crate::cluster::peer::tests::messages(&queued);
    let (_, syncs) = messages.iter().find(|(ty, _)| *ty == peer::BACKUP_SYNC).expect("a request");
    c.on_backup_syncs(A, &peer::read_backup_syncs(syncs).unwrap());
    let acks = peer::read_acks(&c.replication.acks.remove(&A).unwrap()).unwrap();
    assert!(matches!(acks[..], [(_, false)]), "C holds no replica of the partition: {acks:?}");
    // With the copy (and still the old table) it acknowledges.
    for (ty, payload) in &messages {
        match *ty {
            peer::SNAPSHOT => c.install_snapshot(A, payload),
            _ => c.on_backup_syncs(A, &peer::read_backup_syncs(payload).unwrap()),
        }
    }
    let acks = peer::read_acks(&c.replication.acks.remove(&A).unwrap()).unwrap();
    assert!(matches!(acks[..], [(_, true)]), "the copy came first: {acks:?}");
    a.on_acks(C, &acks);
    assert!(a.replication.pending.is_empty());
}

#[test]
fn a_held_answer_whose_partition_moved_on_goes_out_without_its_lost_acknowledgement() {
    for backup_aware in [false, true] {
        let (mut a, mut b, mut c) = (member(A), member(B), member(C));
        apply_table(&mut [(A, &mut a), (B, &mut b), (C, &mut c)], 1, &[A, B]);
        deliver((A, &mut a), (B, &mut b));
        let client = write_held_for_b(&mut a, backup_aware);
        let before = types(&a.outbox.buffer(&client)[..]).len();
        // B dies and the partition moves to C (A hands it its copy).
        a.apply_cluster_state(state_of(A, 2, &[A, C], &[C]));
        let told = types(&a.outbox.buffer(&client)[..]);
        if backup_aware {
            assert_eq!(told.len(), before, "no backup event is invented");
            assert_eq!(a.replication.pending.len(), 1, "the client waits its own timeout");
        } else {
            assert_eq!(told[before..], [ferrogrid_protocol::codec::MapPut::RESPONSE], "answered as before");
            assert!(a.replication.pending.is_empty());
        }
    }
}

#[test]
fn a_request_forwarded_to_a_member_removed_behind_an_open_link_is_failed_for_the_client() {
    let mut a = member(A);
    let client = connection();
    let link = connection();
    let with_link = |members: &[MemberId]| {
        let mut state = (*state_of(A, 1, members, &[A])).clone();
        state.links.insert(B, link.clone());
        Arc::new(state)
    };
    a.apply_cluster_state(with_link(&[A, B]));
    a.replication.forwards.insert(7, Forward::Relay { connection: client.clone(), correlation_id: 42, member: B });
    a.check_pending();
    assert!(a.replication.forwards.contains_key(&7), "B is a member: its answer may come");
    // A network split: B is removed from the member list, but TCP keeps the link open.
    a.apply_cluster_state(with_link(&[A]));
    a.check_pending();
    assert!(a.replication.forwards.is_empty());
    assert_eq!(types(&a.outbox.buffer(&client)[..]), [ferrogrid_protocol::error::ERROR_RESPONSE]);
}
