"""The map event journal survives kill -9 of its partition's owner and moves with its partition
when members join (see conftest.py).

Three members; maps named `journal-*` keep 10 events a partition with one backup
(cluster_harness.py). Events are written to keys of one partition owned by member 1 or 2 (not
the one the reading client was first connected to), the journal is read, the owner is killed
(-9), and once the backup is promoted the journal reads the same events with the same
sequences, and a new write continues from the next sequence.
"""

import pytest

from helpers import same_partition_key
from test_event_journal import ADDED, UPDATED, events, read, subscribe
from .cluster_harness import partition_owners, unique_map_name, wait_until
from .test_cluster import DROP_TIMEOUT, FORM_TIMEOUT, wait_members

pytestmark = pytest.mark.timeout(120)


def _owner_port(client, partition_id):
    owner = client.partition_service.get_partition_owner(partition_id)
    return next((m.address.port for m in client.cluster_service.get_members() if m.uuid == owner), None)


def test_the_journal_keeps_its_events_and_sequences_after_kill9_of_the_owner(make_cluster, request, note):
    cluster = make_cluster(3)
    cluster.start_members(range(3))
    client = cluster.client(cluster.addresses, smart=True)
    wait_members(client, 3, FORM_TIMEOUT)
    name = "journal-" + unique_map_name(request.node.name)
    m = client.get_map(name).blocking()
    m.put("warm-up", "w")  # (a Hazelcast member assigns partitions on first use)
    first_port = cluster.members[0].port
    key = next(
        "k%d" % i
        for i in range(1000)
        if wait_until(lambda i=i: _owner_port(client, _partition(client, "k%d" % i)), 30, "owner known")
        != first_port
    )
    partition_id = _partition(client, key)
    keys = [key, same_partition_key(key, "j")]
    for round_number in range(3):
        for k in keys:
            m.put(k, "%s-%d" % (k, round_number))
    before = read(client, name, partition_id, 0, 6, 100).result()
    sequences = subscribe(client, name, partition_id).result()
    assert list(before["item_seqs"]) == [0, 1, 2, 3, 4, 5] and sequences == (0, 5)
    expected = events(client, before)
    assert [event[0] for event in expected] == [ADDED, ADDED] + [UPDATED] * 4

    victim = cluster.by_port(_owner_port(client, partition_id))
    victim.kill9("owner of the journal's partition")
    survivors = wait_members(client, 2, DROP_TIMEOUT, "after kill -9 of %r" % victim)
    alive = {member.uuid for member in survivors}
    wait_until(lambda: set(partition_owners(client)) <= alive, FORM_TIMEOUT, "partitions owned by survivors")

    assert subscribe(client, name, partition_id).result() == (0, 5), "the promoted backup has the same sequences"
    after = read(client, name, partition_id, 0, 6, 100).result()
    assert list(after["item_seqs"]) == [0, 1, 2, 3, 4, 5]
    assert events(client, after) == expected
    m.put(key, "after the kill")
    more = read(client, name, partition_id, 6, 1, 10).result()
    assert list(more["item_seqs"]) == [6]
    assert events(client, more) == [(UPDATED, key, "after the kill", "%s-2" % key)]
    note("journal of partition %d read the same 6 events after kill -9 of its owner" % partition_id)


def _partition(client, key):
    return client.partition_service.get_partition_id(client._serialization_service.to_data(key))


def test_the_journal_moves_with_its_partition_when_members_join(make_cluster, request, note):
    cluster = make_cluster(3)
    cluster.start_members([0])
    client = cluster.client(cluster.addresses, smart=True)
    wait_members(client, 1, FORM_TIMEOUT)
    name = "journal-" + unique_map_name(request.node.name)
    m = client.get_map(name).blocking()
    keys = ["k%d" % i for i in range(40)]
    for k in keys:
        m.put(k, "v")
    partitions = sorted({_partition(client, k) for k in keys})
    before = {p: read(client, name, p, 0, 0, 100).result() for p in partitions}
    cluster.start_members([1, 2])
    wait_members(client, 3, FORM_TIMEOUT)
    owners = wait_until(
        lambda: _balanced(partition_owners(client)),
        FORM_TIMEOUT,
        "partitions spread over 3 members",
    )
    moved = 0
    for p in partitions:
        after = wait_until(lambda p=p: _read_settled(client, name, p), 30, "partition %d readable" % p)
        assert list(after["item_seqs"]) == list(before[p]["item_seqs"]), "partition %d" % p
        assert events(client, after) == events(client, before[p])
        moved += _owner_port(client, p) != cluster.members[0].port
    assert moved > 0, "some partition moved (owners %s)" % owners
    note("%d of %d journals moved with their partitions, same events and sequences" % (moved, len(partitions)))


def _read_settled(client, name, partition_id):
    try:
        return read(client, name, partition_id, 0, 0, 100).result()
    except Exception:  # noqa: BLE001 - a partition in flight answers "retry" until it lands
        return None


def _balanced(owners):
    """The owner counts once 3 members own at least 80 partitions each (migrations done)."""
    return owners if len(owners) == 3 and None not in owners and min(owners.values()) >= 80 else None
