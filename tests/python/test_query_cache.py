"""ContinuousQuery (the member side of the Java client's `IMap.getQueryCache`), built by hand as the
Java client's codecs encode it (`query_cache_wire.py`; the Python client has no query cache), and
held to what a Hazelcast 5.6 member answers and publishes.

Runs against both targets; one test holds where ferrogrid departs from Hazelcast on purpose
(coalescing that loses a key's later event).
"""

import time
import uuid

import pytest
from hazelcast.errors import IllegalArgumentError
from hazelcast.predicate import greater_or_equal

from query_cache_wire import (SINGLE_EVENT, BATCH_EVENT, add_listener, destroy_cache, made_publishable,
                              publisher_create, set_read_cursor)


ADDED, REMOVED, UPDATED, EVICTED, EXPIRED, EVICT_ALL, CLEAR_ALL = 1, 2, 4, 8, 16, 32, 64


def partition_of(client, key):
    return client._partition_service.get_partition_id(client._serialization_service.to_data(key))


@pytest.fixture
def filled(client, map_name):
    m = client.get_map(map_name).blocking()
    for i in range(5):
        m.put(i, i * 10)
    return m


def subscribe(client, map_name, include_value=True, **config):
    cache = str(uuid.uuid4())
    events, _ = add_listener(client, cache)
    initial = publisher_create(client, map_name, cache, greater_or_equal("this", 20), include_value, **config)
    assert made_publishable(client, map_name, cache) is True
    return cache, events, initial


def test_initial_result_entries_or_keys(client, map_name, filled):
    _, _, entries = subscribe(client, map_name, include_value=True)
    assert entries == {2: 20, 3: 30, 4: 40}
    _, _, keys = subscribe(client, map_name, include_value=False)
    assert keys == [2, 3, 4]


def test_mutations_become_cache_events_filtered_by_the_predicate(client, map_name, filled):
    _, events, _ = subscribe(client, map_name)
    filled.put(0, 100)  # enters the predicate's set: ADDED
    filled.put(3, 5)  # leaves it: REMOVED, carrying the new value
    filled.put(4, 41)  # stays in it: UPDATED
    filled.put(1, 15)  # out before and after: nothing
    filled.remove(2)  # REMOVED without a value
    filled.evict(4)  # EVICTED, the partition's second event
    got = events.wait_events(5)
    p = {k: partition_of(client, k) for k in range(5)}
    expected = [(1, ADDED, p[0], 0, 100, map_name), (1, REMOVED, p[3], 3, 5, map_name),
                (1, UPDATED, p[4], 4, 41, map_name), (1, REMOVED, p[2], 2, None, map_name),
                (2, EVICTED, p[4], 4, None, map_name)]
    # partitions publish on their own threads: their events arrive in no set order among each
    # other, a partition's in sequence order
    by_partition = lambda e: (e[2], e[0])  # noqa: E731
    assert sorted(got, key=by_partition) == sorted(expected, key=by_partition)
    assert [e for e in got if e[2] == p[4]] == [e for e in expected if e[2] == p[4]]
    assert {m[0] for m in events.messages} == {SINGLE_EVENT}, "batch size 1: one single event each"


def test_without_value_events_carry_keys_only(client, map_name, filled):
    _, events, _ = subscribe(client, map_name, include_value=False)
    filled.put(0, 100)
    assert events.wait_events(1) == [(1, ADDED, partition_of(client, 0), 0, None, map_name)]


def test_clear_is_one_clear_all_per_partition(client, map_name, filled):
    _, events, _ = subscribe(client, map_name)
    filled.clear()
    got = events.wait_events(271)
    assert {(e[0], e[1], e[3], e[4]) for e in got} == {(1, CLEAR_ALL, None, None)}
    assert sorted(e[2] for e in got) == list(range(271))


def test_batches_wait_for_the_batch_size_or_the_delay(client, map_name, filled):
    _, events, _ = subscribe(client, map_name, batch_size=3, delay_seconds=1)
    key = 1000
    same = [k for k in range(key, key + 5000) if partition_of(client, k) == partition_of(client, key)][:4]
    for k in same:
        filled.put(k, 50)
    got = events.wait_events(4)
    batches = [m for m in events.messages if m[0] == BATCH_EVENT]
    assert batches and all(m[1] == partition_of(client, key) for m in batches)
    assert [(e[0], e[1], e[3]) for e in got] == [(i + 1, ADDED, k) for i, k in enumerate(same)]


def test_coalesce_keeps_the_last_event_of_a_key_in_a_batch(client, map_name, filled):
    _, events, _ = subscribe(client, map_name, batch_size=100, delay_seconds=1, coalesce=True)
    filled.put(7, 70)
    filled.put(7, 71)
    filled.put(7, 72)
    got = events.wait_events(1)
    assert [(e[1], e[3], e[4]) for e in got] == [(UPDATED, 7, 72)]
    assert got[0][0] == 1, "Hazelcast's coalesced event carries the partition's first sequence"


def test_set_read_cursor_answers_whether_the_sequence_is_buffered(client, map_name, filled):
    cache, events, _ = subscribe(client, map_name)
    filled.put(0, 100)
    events.wait_events(1)
    pid = partition_of(client, 0)
    assert set_read_cursor(client, map_name, cache, pid, 1) is True
    assert set_read_cursor(client, map_name, cache, pid, 2) is False
    assert set_read_cursor(client, map_name, cache, pid, 99) is False
    with pytest.raises(IllegalArgumentError, match="sequence is 0 but must be > 0"):
        set_read_cursor(client, map_name, cache, pid, 0)


def test_destroy_stops_the_events(client, map_name, filled):
    cache, events, _ = subscribe(client, map_name)
    assert destroy_cache(client, map_name, cache) is True
    assert destroy_cache(client, map_name, cache) is True, "destroying twice answers true again"
    filled.put(0, 100)
    filled.put(9, 99)
    sentinel_cache, sentinel, _ = subscribe(client, map_name)
    filled.put(0, 101)
    sentinel.wait_events(1)
    assert events.events() == []


def test_coalesce_after_a_keys_event_was_published(client, map_name, filled, target):
    """A key's event after an earlier one of that key went out. Hazelcast 5.6 never publishes it
    (its coalescing index outlives the batch: the update that leaves the set is lost, and the
    cache keeps an entry the map's predicate no longer selects); ferrogrid publishes it as the
    partition's next event, as without coalescing."""
    _, coalesced, _ = subscribe(client, map_name, batch_size=4, delay_seconds=1, coalesce=True)
    _, plain, _ = subscribe(client, map_name, batch_size=4, delay_seconds=1, coalesce=False)
    filled.put(100, 500)
    coalesced.wait_events(1)
    plain.wait_events(1)
    filled.put(100, 1)  # leaves the predicate's set
    got = plain.wait_events(2)  # a batch that is not full goes out at the next scan (about 5 s)
    assert [(e[0], e[1], e[4]) for e in got] == [(1, ADDED, 500), (2, REMOVED, 1)]
    assert [m[0] for m in plain.messages] == [SINGLE_EVENT, SINGLE_EVENT], "a batch of one is a single event"
    if target == "hazelcast":
        time.sleep(1)  # both accumulators are read by the same scan
        assert [(e[0], e[1], e[4]) for e in coalesced.events()] == [(1, ADDED, 500)]
    else:
        assert [(e[0], e[1], e[4]) for e in coalesced.wait_events(2)] == [(1, ADDED, 500), (2, REMOVED, 1)]


def test_expiry_and_evict_all_and_a_remove_outside_the_set(client, map_name, filled):
    _, events, _ = subscribe(client, map_name)
    filled.remove(0)  # 0 is not in the predicate's set: nothing
    filled.put(7, 70, ttl=1)
    got = events.wait_events(1)
    assert [(e[1], e[3], e[4]) for e in got] == [(ADDED, 7, 70)]
    time.sleep(2)
    filled.get(7)  # (Hazelcast expires it on this read at the latest)
    got = events.wait_events(2)
    assert [(e[0], e[1], e[3], e[4]) for e in got[1:]] == [(2, EXPIRED, 7, None)], "the partition's second event"
    filled.evict_all()
    got = events.wait_events(2 + 271)
    assert {(e[1], e[3], e[4]) for e in got[2:]} == {(EVICT_ALL, None, None)}
    assert sorted(e[2] for e in got[2:]) == list(range(271)), "one EVICT_ALL in every partition"


def test_a_cache_without_initial_contents_publishes_at_once(client, map_name, filled):
    """Created with populate false, a cache's events go out without madePublishable (the Java
    client sends none then)."""
    cache = str(uuid.uuid4())
    events, _ = add_listener(client, cache)
    initial = publisher_create(client, map_name, cache, greater_or_equal("this", 20), False, populate=False)
    assert initial == []
    filled.put(0, 100)
    assert [(e[1], e[3], e[4]) for e in events.wait_events(1)] == [(ADDED, 0, None)]
