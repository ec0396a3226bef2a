"""Near-cache repair metadata across owner changes (issue 30, item 1): a member killed with
kill -9, and what Map.FetchNearCacheInvalidationMetadata (0x013D00) answers before and after.

Each member answers for the partitions it owns: their uuids (together, every partition once)
and the map's invalidation sequences there (one per write, as in test_near_cache_repair.py).
After the kill, every partition the dead member owned is owned by a survivor under a uuid the
dead member never reported, which is what tells a client's repairing handler that the
sequences it tracked for those partitions no longer hold (it drops their cached entries). A
partition whose owner did not change keeps its uuid and its sequences. A unisocket client's
request for another member is answered by that member (ferrogrid forwards it there).

The Python client 5.7.0 has no repairing handler, so the test asserts on the metadata the
handler would fetch (Hazelcast's Java client asks every
`hazelcast.invalidation.reconciliation.interval.seconds`, at least 30 s, too long for a test).
"""

import sys

from .cluster_harness import members_of, unique_map_name, wait_until
from .test_cluster import DROP_TIMEOUT, FORM_TIMEOUT, wait_members

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
from test_near_cache_repair import fetch_metadata  # noqa: E402

KEYS = ["key-%d" % i for i in range(300)]
# After a kill the survivors take over the dead member's partitions and may rebalance.
SETTLE_TIMEOUT = 30.0


def metadata_by_member(client, name, members):
    """{member uuid: ({partition: sequence} of `name`, {partition: uuid})} for `members`."""
    answers = {}
    for member in members:
        sequences, uuids = fetch_metadata(client, [name], member.uuid)
        answers[member.uuid] = (sequences[name], dict(uuids))
    return answers


def owners(answers):
    """{partition: owner uuid}, failing if two members both report a partition."""
    owner_of = {}
    for member, (_, uuids) in answers.items():
        for partition in uuids:
            assert partition not in owner_of, "partition %d reported by two members" % partition
            owner_of[partition] = member
    return owner_of


def test_a_killed_members_partitions_get_new_uuids_on_their_new_owners(make_cluster, request):
    cluster = make_cluster(3)
    procs = cluster.start_members(range(3))
    name = unique_map_name(request.node.name)
    client = cluster.client(near_caches={name: {"invalidate_on_change": True}})
    members = wait_members(client, 3, FORM_TIMEOUT)
    count = client.partition_service.get_partition_count()
    cached = client.get_map(name).blocking()
    for key in KEYS:
        cached.put(key, 1)
    for key in KEYS:
        assert cached.get(key) == 1
    written = {}
    for key in KEYS:
        partition = client.partition_service.get_partition_id(key)
        written[partition] = written.get(partition, 0) + 1

    def settled_before():
        answers = metadata_by_member(client, name, members)
        reported = {p: s for sequences, _ in answers.values() for p, s in sequences.items()}
        return answers if reported == written and len(owners(answers)) == count else None

    before = wait_until(settled_before, SETTLE_TIMEOUT, "every write's sequence on its partition's owner")
    owner_before = owners(before)
    for member, (sequences, uuids) in before.items():
        assert set(sequences) <= set(uuids), "a member reports sequences of the partitions it owns only"

    # A unisocket client on the first member asks about the second: that member answers.
    unisocket = cluster.client([procs[0].address], smart=False)
    wait_members(unisocket, 3, FORM_TIMEOUT)
    target = members[1]
    sequences, uuids = fetch_metadata(unisocket, [name], target.uuid)
    assert (sequences[name], dict(uuids)) == before[target.uuid], "the named member's metadata"

    victim = members[2]
    cluster.by_member_info(victim).kill9("near-cache repair test")
    survivors = wait_members(client, 2, DROP_TIMEOUT, "after kill -9")

    def settled_after():
        answers = metadata_by_member(client, name, survivors)
        return answers if len(owners(answers)) == count else None

    after = wait_until(settled_after, SETTLE_TIMEOUT, "every partition owned by a survivor")
    owner_after = owners(after)
    uuid_before = {p: before[owner_before[p]][1][p] for p in range(count)}
    uuid_after = {p: after[owner_after[p]][1][p] for p in range(count)}
    moved = [p for p in range(count) if owner_before[p] == victim.uuid]
    assert moved, "the killed member owned partitions"
    assert all(uuid_after[p] != uuid_before[p] for p in moved), "a moved partition's uuid changes"
    assert not set(uuid_after.values()) & set(before[victim.uuid][1].values()), "no uuid of the dead member"
    kept = [p for p in range(count) if owner_before[p] == owner_after[p]]
    assert kept, "some partitions stayed with their owner"
    assert all(uuid_after[p] == uuid_before[p] for p in kept), "an unmoved partition keeps its uuid"
    for p in kept:
        owner = owner_after[p]
        assert after[owner][0].get(p, 0) == written.get(p, 0), "an unmoved partition keeps its sequence"
    # Writes after the kill go on counting on the partitions' owners.
    key = next(k for k in KEYS if owner_before[client.partition_service.get_partition_id(k)] != victim.uuid)
    partition = client.partition_service.get_partition_id(key)
    if owner_before[partition] == owner_after[partition]:
        cached.put(key, 2)
        wait_until(
            lambda: metadata_by_member(client, name, survivors)[owner_after[partition]][0].get(partition)
            == written[partition] + 1,
            SETTLE_TIMEOUT,
            "the next write's sequence",
        )
    assert cached.get(key) in (1, 2)
    assert len(members_of(client)) == 2
