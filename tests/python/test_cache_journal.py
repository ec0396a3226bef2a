"""A cache's event journal (Cache.eventJournalSubscribe 0x131F00, Cache.eventJournalRead 0x132000):
what the Java client's `ICache` (an `EventJournalReader`) reads, requests built by hand as in
test_cache.py. The journal is configured in the CacheConfigHolder the client sends with
CreateConfig (cache_codec.py, `journal=(capacity, time to live)`); Hazelcast splits the capacity
evenly over the 271 partitions. Each item is Hazelcast's DeserializingEventJournalCacheEvent, an
IdentifiedDataSerializable (CacheDataSerializerHook: factory -13, class 54 in 5.6) of the event
type (CacheEventType), key, new value and old value.

Every test runs against both products.
"""

import time

import pytest
from hazelcast.errors import HazelcastError, UnsupportedOperationError

from conftest import unique_name
from cache_codec import TOUCHED_1500_MS, create_config, eviction
from helpers import same_partition_key, wait_until
from test_cache import CLEAR, DESTROY, GET, PREFIX, PUT, REMOVE, _data, _invoke, _key_partition, _on_key
from test_event_journal import events, read, subscribe
from dynamic_config import _frame, request as message, text

SUBSCRIBE = 0x131F00
READ = 0x132000
REMOVE_ALL = 0x130400
CREATED, UPDATED, REMOVED, EVICTED = 1, 2, 3, 5
CACHE_EVENT = (-13, 54)
PER_PARTITION = 20


@pytest.fixture
def journal_cache(request, client):
    """A cache with a journal of 20 events per partition: (wire name, simple name)."""
    simple = unique_name(request, "cache")
    _invoke(client, create_config(simple, journal=(PER_PARTITION * 271, 0), eviction_holder=eviction(size=1000)))
    yield PREFIX + simple, simple
    _invoke(client, message(DESTROY, (), [text(PREFIX + simple)]))


def _subscribe(client, name, partition):
    return subscribe(client, name, partition, message_type=SUBSCRIBE).result()


def _read(client, name, partition, start, min_size=0, max_size=100):
    return read(client, name, partition, start, min_size, max_size, message_type=READ)


def _events(client, answer):
    return events(client, answer, CACHE_EVENT)


def _put(client, name, key, value, policy=None):
    _on_key(client, PUT, name, key, [("bool", False), ("int", -1)], [_data(client, value), policy])


def test_each_change_is_journaled_with_its_sequence(client, journal_cache):
    name, _ = journal_cache
    partition = _key_partition(client, "k")
    assert _subscribe(client, name, partition) == (0, -1), "an empty journal"
    _put(client, name, "k", "v1")
    _put(client, name, "k", "v2")
    _on_key(client, GET, name, "k", (), [None])
    _on_key(client, REMOVE, name, "k", [("int", -1)], [None])
    _on_key(client, REMOVE, name, "k", [("int", -1)], [None])
    assert _subscribe(client, name, partition) == (0, 2), "a read and a remove of nothing are not journaled"
    answer = _read(client, name, partition, 0).result()
    assert answer["read_count"] == 3 and answer["next_seq"] == 3
    assert _events(client, answer) == [
        (CREATED, "k", "v1", None),
        (UPDATED, "k", "v2", "v1"),
        (REMOVED, "k", None, "v2"),
    ]
    middle = _read(client, name, partition, 1, 1, 1).result()
    assert (middle["read_count"], middle["next_seq"], _events(client, middle)[0][0]) == (1, 2, UPDATED)
    other = next(p for p in range(271) if p != partition)
    assert _subscribe(client, name, other) == (0, -1), "each partition has its own journal"


def test_a_full_journal_drops_its_oldest_events(client, journal_cache):
    name, _ = journal_cache
    partition = _key_partition(client, "k")
    for value in range(PER_PARTITION + 5):
        _put(client, name, "k", value)
    assert _subscribe(client, name, partition) == (5, PER_PARTITION + 4)
    answer = _read(client, name, partition, 0, 1).result()
    assert _events(client, answer)[0] == (UPDATED, "k", 5, 4), "a start before the oldest moves to it"


def test_a_read_waits_for_its_minimum(client, journal_cache):
    name, _ = journal_cache
    partition = _key_partition(client, "k")
    pending = _read(client, name, partition, 0, 2, 10)
    time.sleep(0.3)
    assert not pending.done(), "no event yet"
    _put(client, name, "k", "v")
    time.sleep(0.3)
    assert not pending.done(), "one event of two"
    _put(client, name, same_partition_key("k"), "w")
    answer = pending.result()
    assert [event[0] for event in _events(client, answer)] == [CREATED, CREATED]


def test_remove_all_is_journaled_and_clear_empties_the_journal(client, journal_cache):
    """Hazelcast's clear destroys the cache's journal with its entries: the sequences start over."""
    name, _ = journal_cache
    partition = _key_partition(client, "k")
    _put(client, name, "k", "v")
    _put(client, name, "k", "v2")
    assert _subscribe(client, name, partition) == (0, 1)
    _invoke(client, message(CLEAR, (), [text(name)]))
    assert _subscribe(client, name, partition) == (0, -1), "cleared, and not journaled"
    _put(client, name, "k", "w")
    _invoke(client, message(REMOVE_ALL, [("int", -1)], [text(name)]))
    answer = _read(client, name, partition, 0).result()
    assert answer["item_seqs"] == [0, 1]
    assert _events(client, answer) == [(CREATED, "k", "w", None), (REMOVED, "k", None, "w")]


def test_an_expiry_is_journaled_as_a_removal_and_an_eviction_as_such(client, journal_cache):
    """Entries put with a 1.5 s policy: one read after it expired, one left to the expiry sweep;
    Hazelcast 5.6 journals both as REMOVED (not EXPIRED). The cache keeps 13 entries per
    partition (1,000 over 271): the 14th key of a partition evicts one, EVICTED before the new
    entry's CREATED."""
    name, _ = journal_cache
    partition = _key_partition(client, "k")
    swept = same_partition_key("k", "swept")
    _put(client, name, "k", "v", _frame(TOUCHED_1500_MS))
    _put(client, name, swept, "s", _frame(TOUCHED_1500_MS))
    time.sleep(1.7)
    _on_key(client, GET, name, "k", (), [None])
    wait_until(lambda: _subscribe(client, name, partition)[1] == 3, timeout=20, message="the sweep's removal")
    answer = _read(client, name, partition, 0).result()
    journaled = _events(client, answer)
    assert journaled[:2] == [(CREATED, "k", "v", None), (CREATED, swept, "s", None)]
    # The sweep may come first: the order of the removals is not the test's.
    assert sorted(journaled[2:]) == [(REMOVED, "k", None, "v"), (REMOVED, swept, None, "s")]
    keys = ["k"] + [same_partition_key("k", "n%d" % i) for i in range(13)]
    for key in keys:
        _put(client, name, key, key)
    journaled = _events(client, _read(client, name, partition, 4).result())
    assert [event[0] for event in journaled] == [CREATED] * 13 + [EVICTED, CREATED]
    evicted = journaled[13]
    assert evicted[1] in keys[:13] and evicted[2:] == (None, evicted[1])


def test_a_cache_without_a_journal_is_refused(client, request):
    simple = unique_name(request, "cache")
    name = PREFIX + simple
    _invoke(client, create_config(simple))
    try:
        with pytest.raises(UnsupportedOperationError) as subscribing:
            _subscribe(client, name, 0)
        expected = "Cannot subscribe to event journal because it is either not configured or disabled for cache %s"
        assert expected % name in str(subscribing.value)
        with pytest.raises(UnsupportedOperationError) as reading:
            _read(client, name, 0, 0).result()
        namespace = "DistributedObjectNamespace{service='hz:impl:cacheService', objectName='%s'}" % name
        assert namespace in str(reading.value)
    finally:
        _invoke(client, message(DESTROY, (), [text(name)]))


def test_the_journal_of_a_cache_never_created_is_refused(client, request):
    name = PREFIX + unique_name(request, "cache")
    with pytest.raises(HazelcastError, match="CacheNotExistsException"):
        _subscribe(client, name, 0)


def test_a_parked_read_is_answered_by_a_remove_all_and_by_the_expiry_sweep(client, journal_cache):
    """Events appended outside a key request (removeAll runs over every partition; the expiry
    sweep on a timer) answer the reads waiting for them."""
    name, _ = journal_cache
    partition = _key_partition(client, "k")
    _put(client, name, "k", "v")
    pending = _read(client, name, partition, 1, 1, 10)
    time.sleep(0.3)
    assert not pending.done(), "no event after the first yet"
    _invoke(client, message(REMOVE_ALL, [("int", -1)], [text(name)]))
    wait_until(pending.done, timeout=10, message="the read answered by removeAll")
    assert _events(client, pending.result()) == [(REMOVED, "k", None, "v")]
    _put(client, name, "k", "w", _frame(TOUCHED_1500_MS))
    pending = _read(client, name, partition, 3, 1, 10)
    wait_until(pending.done, timeout=20, message="the read answered by the expiry sweep")
    assert _events(client, pending.result()) == [(REMOVED, "k", None, "w")]
