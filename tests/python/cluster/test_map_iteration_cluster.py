"""Map iteration by partition while partitions move (see conftest.py for running).

Two members hold a map of 20,000 entries. The client reads the first batch of every partition
(Map.FetchEntries, as the Java client's `for (Map.Entry e : map)` does), a third member joins and
takes partitions, and the client goes on with every partition from the iteration pointers it
holds, now answered by the new owners.

ferrogrid's pointer is a position computed from the key's bytes alone, the same on every member,
so every entry comes back exactly once (what the test asserts against ferrogrid). Hazelcast's
pointer is a slot of the old owner's hash table, which the new owner's table need not match (in
the runs so far it did); against Hazelcast (`--target hazelcast`) the test only notes how many
entries were returned twice or missed, if any.
"""

import collections

import pytest

from test_map_iteration import FETCH_ENTRIES, START, fetch

from .cluster_harness import unique_map_name
from .test_cluster import FORM_TIMEOUT, join_member, wait_members

pytestmark = pytest.mark.timeout(150)

ENTRIES = 20_000
BATCH = 20


def test_iteration_goes_on_from_its_pointers_after_partitions_move(make_cluster, request, note):
    cluster = make_cluster(3)
    two = cluster.addresses[:2]
    cluster.start_members(range(2), member_list=two)
    client = cluster.client(two, smart=True)
    wait_members(client, 2, FORM_TIMEOUT)
    m = client.get_map(unique_map_name(request.node.name)).blocking()
    for start in range(0, ENTRIES, 5_000):
        m.put_all({"key-%d" % i: i for i in range(start, start + 5_000)})
    count = client.partition_service.get_partition_count()
    owners_before = [client.partition_service.get_partition_owner(p) for p in range(count)]
    seen = []
    pointers = {}
    for partition_id in range(count):
        pointers[partition_id], items = fetch(client, m.name, partition_id, START, BATCH, FETCH_ENTRIES)
        seen.extend(items)
    join_member(cluster, client, 2)
    moved = sum(client.partition_service.get_partition_owner(p) != owners_before[p] for p in range(count))
    assert moved > 0, "the third member took partitions"
    for partition_id, at in pointers.items():
        while at[-1][0] >= 0:
            at, items = fetch(client, m.name, partition_id, at, BATCH, FETCH_ENTRIES)
            if not items:
                break
            seen.extend(items)
    counts = collections.Counter(key for key, _ in seen)
    twice = sum(1 for n in counts.values() if n > 1)
    missed = ENTRIES - len(counts)
    if cluster.target == "ferrogrid":
        assert (twice, missed) == (0, 0), "%d partitions moved mid-iteration" % moved
        assert dict(seen) == {"key-%d" % i: i for i in range(ENTRIES)}
    elif twice or missed:
        note("%d partitions moved mid-iteration: %d entries returned twice, %d missed" % (moved, twice, missed))
