"""Size-based eviction of bounded maps (member-config.yaml: `bounded-<policy>-*`).

A writer floods a bounded map with far more entries than its bound and the test checks what a
user sees afterwards. What a real Hazelcast 5.6.0 member (one member, 271 partitions) does:
  * PER_NODE size 1000 is enforced per partition: each partition keeps at most
    floor(1000 / 271) = 3 entries, so a flooded map holds exactly 813 entries (all 271
    partitions full), for LRU, LFU and RANDOM alike;
  * PER_PARTITION size 5: at most 5 entries in each partition, 1355 after a flood;
  * USED_HEAP_SIZE 1 (MB): with 1000-byte values about 926 entries stay (entry cost 1068
    bytes as get_entry_view reports it; the member keeps the sum below 1 MiB);
  * eviction-policy NONE means NO bound at all: nothing is evicted, no error is raised, the
    map holds all 20,000 entries (the `size` of the config is ignored);
  * the entry just written is never the one evicted (eviction makes room before the write);
  * every evicted entry produces an EVICTED event (value None, old_value = the value when the
    listener includes values, number_of_affected_entries 1).
The tests assert the bound (size <= configured size) and that a flooded map is not emptied
(at least half the bound stays), not Hazelcast's exact numbers.

Which entries survive is NOT asserted: Hazelcast picks the victim among a sample of the
partition's entries, keeps access times in whole seconds, and in measurements a key read
before every write was still evicted in 3 of 6 runs with LRU (2 of 6 with LFU). Any policy
ordering test would be flaky against the reference implementation.
"""

import time

import pytest
from hazelcast.proxy.base import EntryEventType as T

from conftest import unique_name
from helpers import EventLog, partition_of, wait_until

FLOOD = 20_000
BATCH = 500
PARTITIONS = 271


def flood(client, name, count=FLOOD, value="v", start=0, check=None):
    """Writes count keys k<start>..; up to BATCH writes in flight. check(i) runs per batch."""
    m = client.get_map(name)
    for first in range(start, start + count, BATCH):
        futures = [m.set("k%d" % i, value) for i in range(first, min(first + BATCH, start + count))]
        for f in futures:
            f.result()
        if check:
            check(first)


@pytest.fixture
def bounded(client, request):
    """bounded(policy) -> (name, blocking proxy) of a fresh map matching bounded-<policy>-*."""
    made = []

    def make(policy):
        name = unique_name(request, "bounded-%s" % policy)
        proxy = client.get_map(name).blocking()
        made.append(proxy)
        return name, proxy

    yield make
    for proxy in made:
        try:
            proxy.destroy()
        except Exception:  # noqa: BLE001
            pass


@pytest.mark.parametrize("policy", ["lru", "lfu", "random"])
def test_per_node_bound(client, bounded, policy):
    name, m = bounded(policy)
    sizes = []
    flood(client, name, check=lambda _: sizes.append(m.size()))
    assert max(sizes) <= 1000, sizes
    size = m.size()
    assert 500 <= size <= 1000
    keys = m.key_set()
    assert len(keys) == size
    assert set(m.values()) == {"v"}
    assert all(k.startswith("k") for k in keys)
    # survivors are readable, evicted keys are gone for good
    assert m.get_all(keys[:50]) == {k: "v" for k in keys[:50]}
    evicted = sorted({"k%d" % i for i in range(FLOOD)} - set(keys))[:50]
    assert m.get_all(evicted) == {}
    assert m.contains_key(evicted[0]) is False


def test_per_partition_bound(client, bounded):
    name, m = bounded("partition")
    flood(client, name)
    keys = m.key_set()
    per_partition = {}
    for key in keys:
        per_partition[partition_of(key)] = per_partition.get(partition_of(key), 0) + 1
    assert max(per_partition.values()) <= 5
    # 20,000 keys reach every partition dozens of times: most partitions stay well filled
    assert len(keys) >= PARTITIONS * 5 // 2
    assert m.size() == len(keys)


def test_used_heap_size_bound(client, bounded):
    # 1 MB bound; each entry holds a 1000-character value, so 1048 entries would already
    # need more than 1 MiB for the values alone
    name, m = bounded("heap")
    value = "x" * 1000
    flood(client, name, count=5000, value=value)
    size = m.size()
    assert 250 <= size <= 1048
    assert m.get(m.key_set()[0]) == value


def test_none_policy_is_unbounded(client, bounded):
    name, m = bounded("none")
    log = EventLog()
    m.add_entry_listener(include_value=False, evicted_func=log)
    flood(client, name)  # no error either
    assert m.size() == FLOOD
    assert m.get("k0") == "v"
    assert m.get("k%d" % (FLOOD - 1)) == "v"
    # an explicit evict still works and is the only EVICTED event the listener ever sees
    m.put("after", "v")
    assert m.evict("after") is True
    log.wait_for(lambda e: e.key == "after", 10, "EVICTED for the explicit evict")
    time.sleep(0.5)
    assert [e.key for e in log.snapshot()] == ["after"]
    assert m.size() == FLOOD


@pytest.mark.parametrize("policy", ["lru", "random"])
def test_just_written_entry_is_never_evicted(client, bounded, policy):
    name, m = bounded(policy)
    flood(client, name, count=2000)  # full
    for i in range(300):
        key = "new-%d" % i
        m.set(key, i)
        assert m.get(key) == i


def test_evicted_events_for_size_eviction(client_factory, bounded):
    listener_client = client_factory()
    name, m = bounded("lru")
    log = EventLog()
    listener_client.get_map(name).blocking().add_entry_listener(include_value=True, evicted_func=log)
    written = 3000
    flood(client_factory(), name, count=written, value="val")
    size = m.size()
    assert size <= 1000
    events = wait_until(
        lambda: len(log.snapshot()) >= written - size and log.snapshot(),
        10,
        message="%d EVICTED events" % (written - size),
    )
    assert len(events) == written - size
    survivors = set(m.key_set())
    evicted_keys = [e.key for e in events]
    assert len(set(evicted_keys)) == len(evicted_keys)
    assert survivors.isdisjoint(evicted_keys)
    assert survivors | set(evicted_keys) == {"k%d" % i for i in range(written)}
    for event in events:
        assert event.event_type == T.EVICTED
        assert (event.value, event.old_value, event.merging_value) == (None, "val", None)
        assert event.number_of_affected_entries == 1


def test_bounded_map_operations_after_flood(client, bounded):
    name, m = bounded("lru")
    flood(client, name, count=5000)
    size = m.size()
    assert m.put("fresh", "f") is None
    assert m.get("fresh") == "f"
    assert m.remove("fresh") == "f"
    assert m.size() <= size
    m.clear()
    assert m.size() == 0
    # after clear the map fills up to its bound again
    flood(client, name, count=5000)
    assert 500 <= m.size() <= 1000
