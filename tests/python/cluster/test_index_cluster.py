"""Indexed queries across members while partitions move: an index added on two members, a third
that joins afterwards (it learns the index from the others and builds it for the partitions
that migrate to it), an index added once it is in, and a member killed (its backups promoted).
At each step the predicate API (keySet, values, aggregate, a paging query walked in the order
of a sorted index, removeAll) answers exactly what a pass over the entries gives.

On ferrogrid a member keeps one index of a map per reactor for all its partitions
(`engine/map/index.rs`), as Hazelcast keeps one per member: these are the changes that index
follows (stores that arrive, leave and are promoted)."""

import json

import pytest
from hazelcast.aggregator import count, int_sum
from hazelcast.config import IndexType
from hazelcast.core import HazelcastJsonValue
from hazelcast import predicate as p

from .cluster_harness import unique_map_name
from .test_cluster import DROP_TIMEOUT, FORM_TIMEOUT, join_member, wait_members

pytestmark = pytest.mark.timeout(150)

ENTRIES = 3_000


def record(i):
    return {"a": i % 500, "b": i % 7, "name": "n%04d" % (i % 1000)}


def key_of(i):
    return "k%05d" % i


def check_queries(m, live, when):
    """`live`: the keys (ints) the map holds."""
    records = {key_of(i): record(i) for i in live}

    def keys_where(test):
        return sorted(k for k, r in records.items() if test(r))

    assert sorted(m.key_set(p.equal("b", 3))) == keys_where(lambda r: r["b"] == 3), when
    got = sorted(json.loads(v.to_string())["a"] for v in m.values(p.between("a", 100, 120)))
    assert got == sorted(r["a"] for r in records.values() if 100 <= r["a"] <= 120), when
    both = p.and_(p.equal("b", 2), p.greater("a", 400))
    assert m.aggregate(count(), both) == len(keys_where(lambda r: r["b"] == 2 and r["a"] > 400)), when
    total = m.aggregate(int_sum("a"), p.equal("name", "n0042"))
    assert total == sum(r["a"] for r in records.values() if r["name"] == "n0042"), when
    assert m.aggregate(count(), p.equal("b", 99)) == 0, when
    # pages in key order, walked along the sorted index on __key
    paging = p.paging(p.greater_or_equal("a", 250), 40)
    paging.page = 3
    expected = keys_where(lambda r: r["a"] >= 250)[120:160]
    assert list(m.key_set(paging)) == expected, when


def test_indexes_follow_partitions_that_migrate_and_members_that_die(make_cluster, request):
    cluster = make_cluster(3)
    two = cluster.addresses[:2]
    cluster.start_members(range(2), member_list=two)
    client = cluster.client(two)
    wait_members(client, 2, FORM_TIMEOUT)
    m = client.get_map(unique_map_name(request.node.name)).blocking()
    m.add_index(attributes=["b"], index_type=IndexType.HASH)
    m.add_index(attributes=["__key"], index_type=IndexType.SORTED)
    for start in range(0, ENTRIES, 500):
        m.put_all({key_of(i): HazelcastJsonValue(record(i)) for i in range(start, start + 500)})
    m.add_index(attributes=["a"], index_type=IndexType.SORTED)  # after the entries
    live = set(range(ENTRIES))
    check_queries(m, live, "two members")

    join_member(cluster, client, 2)
    check_queries(m, live, "a third member joined, partitions migrated to it")
    m.add_index(attributes=["name"], index_type=IndexType.HASH)  # on three members
    m.put_all({key_of(i): HazelcastJsonValue(record(i)) for i in range(ENTRIES, ENTRIES + 300)})
    live |= set(range(ENTRIES, ENTRIES + 300))
    check_queries(m, live, "three members, an index added, entries added")

    m.remove_all(p.equal("b", 5))
    live = {i for i in live if record(i)["b"] != 5}
    assert m.size() == len(live)
    check_queries(m, live, "after removeAll(b = 5)")

    victim = cluster.members[0]
    victim.kill9()
    wait_members(client, 2, DROP_TIMEOUT, "after kill -9 of %r" % victim)
    assert m.size() == len(live)
    check_queries(m, live, "a member killed, its backups promoted")
