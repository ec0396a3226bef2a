"""MultiMap (service 2: MultiMap.Put 0x020100 … MultiMap.PutAll 0x021700), as a user of the
Python client sees it. Runs against ferrogrid and against a real Hazelcast 5.6.0 member.

member-config.yaml: list-mm-* keep a LIST of values per key; every other multimap has
Hazelcast's default value-collection-type, SET.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * SET (the default): put answers True for a new (key, value) and False for one already there;
    get answers the key's values in no promised order, and [] (not None) for an absent key;
    size counts (key, value) pairs, value_count a key's values; key_set / values / entry_set
    list everything in no promised order; contains_key / contains_value / contains_entry;
  * remove(key, value) answers whether the pair was there; removing a key's last value removes
    the key; remove_all(key) answers the removed values ([] for an absent key); delete(key)
    (MultiMap.Delete, which the Python client 5.7.0 lacks: sent by hand below) removes them
    and answers nothing; put_all({key: [values]}) adds like put (a SET drops duplicates);
  * put_all with an EMPTY collection for a key creates the key with no values: contains_key and
    key_set see it, get answers [], size and values do not count it; remove_all drops it;
  * LIST: put always answers True, get keeps duplicates in insertion order, remove(key, value)
    removes the first equal value, size / value_count / values count duplicates, but
    entry_set lists each distinct (key, value) pair ONCE;
  * None keys and values never reach the member: AssertionError("key can't be None" /
    "value can't be None" / "values can't be None") from the client;
  * entry listeners (all keys or one key; with or without values): put is heard as ADDED with
    the value (none for a put that changed nothing); remove and remove_all as one REMOVED per
    removed value, the value in old_value (value None); put_all as one ADDED per new value;
    clear as ONE CLEAR_ALL whose number_of_affected_entries is the number of keys it removed
    (0 on an empty multimap: still heard), heard by a one-key listener too; delete is NOT
    heard at all; every event has number_of_affected_entries 1 otherwise;
  * key locks work as IMap's (see test_locks.py): lock does not create the key, is reentrant,
    is owned by (client, thread); unlock by a non-owner raises IllegalMonitorStateError
    ("java.lang.IllegalMonitorStateException: Current thread is not owner of the lock! Key:
    …"); force_unlock frees every hold; try_lock(timeout) waits then gives up; a lease ends the
    lock. Another owner's put, remove and remove_all wait for the unlock; reads (get,
    contains_key, contains_entry, value_count, size, key_set) do not; but delete and put_all
    do NOT wait: they change a locked key at once. clear skips locked keys;
  * destroy drops the values; the multimap is listed as hz:impl:multiMapService.
"""

import threading
import time

import pytest
from hazelcast.errors import IllegalMonitorStateError
from hazelcast.protocol.builtin import DataCodec, FixSizedTypesCodec, StringCodec
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer
from hazelcast.proxy.base import EntryEventType
from hazelcast.serialization.bits import LONG_SIZE_IN_BYTES
from hazelcast.util import thread_id

from hazelcast.hash import murmur_hash3_x86_32

from helpers import destroy_after, same_partition_key, server_error_line, wait_until

SERVICE = "hz:impl:multiMapService"
MULTIMAP_DELETE = 0x021600
WAIT = 10  # seconds an unblocked call may take
BLOCKED_CHECK = 0.7  # seconds after which a blocked call must still be blocked
NOT_OWNER = "Exception from server: java.lang.IllegalMonitorStateException: Current thread is not owner of the lock!"


def make(client, request, prefix):
    from conftest import unique_name

    return client.get_multi_map(unique_name(request, prefix)).blocking()


@pytest.fixture
def mm(client, request):
    yield from destroy_after(make(client, request, "mm"))


@pytest.fixture
def list_mm(client, request):
    yield from destroy_after(make(client, request, "list-mm"))


@pytest.fixture
def two(client_factory, request):
    """(proxy of client A, proxy of client B), same multimap."""
    from conftest import unique_name

    name = unique_name(request, "mm")
    a = client_factory().get_multi_map(name).blocking()
    b = client_factory().get_multi_map(name).blocking()
    yield a, b
    try:
        a.destroy()
    except Exception:  # noqa: BLE001
        pass


def delete(proxy, key):
    """MultiMap.Delete (0x021600: name, key, thread id; empty answer). The Python client 5.7.0
    has no MultiMap.delete, so this builds the request the way its generated codecs do and sends
    it to the key's partition through the proxy."""
    wrapped = proxy._wrapped
    key_data = wrapped._to_data(key)
    buf = create_initial_buffer(REQUEST_HEADER_SIZE + LONG_SIZE_IN_BYTES, MULTIMAP_DELETE)
    FixSizedTypesCodec.encode_long(buf, REQUEST_HEADER_SIZE, thread_id())
    StringCodec.encode(buf, wrapped.name)
    DataCodec.encode(buf, key_data, True)
    return wrapped._invoke_on_key(OutboundMessage(buf, False, True), key_data).result()


def values_of(proxy, key):
    """get(key) as a sorted list (a SET has no promised order)."""
    return sorted(proxy.get(key), key=repr)


class Background:
    """Runs fn in a thread; .done tells whether it finished, .wait() gives its result."""

    def __init__(self, fn):
        self.done = threading.Event()
        self.result = self.error = None

        def run():
            try:
                self.result = fn()
            except BaseException as e:  # noqa: BLE001 - handed to the test
                self.error = e
            finally:
                self.done.set()

        threading.Thread(target=run, daemon=True).start()

    def wait(self, timeout=WAIT):
        assert self.done.wait(timeout), "the call did not complete within %s s" % timeout
        if self.error is not None:
            raise self.error
        return self.result


def in_other_thread(fn):
    return Background(fn).wait()


# --------------------------------------------------------------------------- SET values (default)


def test_a_new_multimap_is_empty(mm):
    assert mm.size() == 0
    assert mm.get("k") == [], "get of an absent key answers an empty collection, not None"
    assert mm.value_count("k") == 0
    assert mm.contains_key("k") is False and mm.contains_value("v") is False
    assert mm.key_set() == [] and mm.values() == [] and mm.entry_set() == []


def test_put_keeps_a_set_of_values_per_key(mm):
    assert mm.put("a", 1) is True
    assert mm.put("a", 2) is True
    assert mm.put("a", 1) is False, "the default value collection is a SET"
    assert mm.put("b", 1) is True
    assert values_of(mm, "a") == [1, 2] and mm.get("b") == [1]
    assert mm.value_count("a") == 2 and mm.value_count("b") == 1
    assert mm.size() == 3, "size counts (key, value) pairs"


def test_key_set_values_entry_set_and_contains(mm):
    mm.put("a", 1)
    mm.put("a", 2)
    mm.put("b", 1)
    assert sorted(mm.key_set()) == ["a", "b"]
    assert sorted(mm.values()) == [1, 1, 2]
    assert sorted(mm.entry_set()) == [("a", 1), ("a", 2), ("b", 1)]
    assert mm.contains_key("a") and not mm.contains_key("c")
    assert mm.contains_value(2) and not mm.contains_value(3)
    assert mm.contains_entry("a", 2) and not mm.contains_entry("b", 2)


def test_remove_one_value_and_the_last_one_takes_the_key(mm):
    mm.put("a", 1)
    mm.put("a", 2)
    assert mm.remove("a", 1) is True
    assert mm.remove("a", 1) is False
    assert mm.remove("absent", 1) is False
    assert mm.get("a") == [2] and mm.contains_key("a")
    assert mm.remove("a", 2) is True
    assert mm.contains_key("a") is False and mm.key_set() == []
    assert mm.size() == 0


def test_remove_all_answers_the_removed_values(mm):
    for value in [3, 1, 2]:
        mm.put("a", value)
    mm.put("b", "kept")
    assert sorted(mm.remove_all("a")) == [1, 2, 3]
    assert mm.remove_all("a") == []
    assert mm.contains_key("a") is False
    assert mm.key_set() == ["b"] and mm.size() == 1


def test_delete_removes_the_key_and_answers_nothing(mm):
    mm.put("a", 1)
    mm.put("a", 2)
    mm.put("b", 1)
    assert delete(mm, "a") is None
    assert mm.get("a") == [] and mm.contains_key("a") is False
    assert delete(mm, "a") is None, "deleting an absent key is no error"
    assert mm.key_set() == ["b"] and mm.size() == 1


def test_put_all_adds_like_put(mm):
    mm.put("a", 1)
    assert mm.put_all({"a": [1, 2, 2], "b": ["x", "y"]}) is None
    assert values_of(mm, "a") == [1, 2], "a SET drops the duplicates"
    assert sorted(mm.get("b")) == ["x", "y"]
    assert mm.size() == 4
    assert mm.put_all({}) is None


def test_put_all_with_an_empty_collection_makes_an_empty_key(mm):
    mm.put("a", 1)
    mm.put_all({"empty": []})
    assert mm.contains_key("empty") is True
    assert sorted(mm.key_set()) == ["a", "empty"]
    assert mm.get("empty") == [] and mm.value_count("empty") == 0
    assert mm.size() == 1 and mm.values() == [1], "the empty key holds no value"
    assert mm.remove_all("empty") == []
    assert mm.contains_key("empty") is False


def test_clear(mm):
    mm.put_all({"a": [1, 2], "b": [3]})
    assert mm.clear() is None
    assert mm.size() == 0 and mm.key_set() == [] and mm.get("a") == []
    mm.clear()
    assert mm.put("a", 1) is True


def test_keys_and_values_of_any_type(mm):
    mm.put(1, "int")
    mm.put("1", "str")
    mm.put(1.0, "float")
    assert sorted(mm.key_set(), key=repr) == sorted([1, "1", 1.0], key=repr), "keys compare serialized"
    assert mm.get(1) == ["int"] and mm.get("1") == ["str"]
    values = [3.5, True, b"bytes", [1, 2], {"k": "v"}, ""]
    for value in values:
        assert mm.put("k", value) is True
    assert sorted(mm.get("k"), key=repr) == sorted(values, key=repr)
    assert mm.contains_entry("k", b"bytes") and not mm.contains_entry("k", 3)


def test_two_clients_share_the_multimap(mm, client_factory):
    other = client_factory().get_multi_map(mm.name).blocking()
    assert mm.put("k", "v") is True
    assert other.put("k", "v") is False
    assert other.get("k") == ["v"]
    assert other.remove_all("k") == ["v"]
    assert mm.size() == 0


NONE_CALLS = [
    pytest.param(lambda m: m.put(None, 1), "key can't be None", id="put-key"),
    pytest.param(lambda m: m.put("k", None), "value can't be None", id="put-value"),
    pytest.param(lambda m: m.get(None), "key can't be None", id="get"),
    pytest.param(lambda m: m.remove(None, 1), "key can't be None", id="remove-key"),
    pytest.param(lambda m: m.remove("k", None), "value can't be None", id="remove-value"),
    pytest.param(lambda m: m.remove_all(None), "key can't be None", id="remove_all"),
    pytest.param(lambda m: m.contains_key(None), "key can't be None", id="contains_key"),
    pytest.param(lambda m: m.contains_value(None), "value can't be None", id="contains_value"),
    pytest.param(lambda m: m.contains_entry(None, 1), "key can't be None", id="contains_entry-key"),
    pytest.param(lambda m: m.contains_entry("k", None), "value can't be None", id="contains_entry-value"),
    pytest.param(lambda m: m.value_count(None), "key can't be None", id="value_count"),
    pytest.param(lambda m: m.put_all({"k": [None]}), "value can't be None", id="put_all-value"),
    pytest.param(lambda m: m.put_all({"k": None}), "values can't be None", id="put_all-values"),
    pytest.param(lambda m: m.put_all({None: [1]}), "key can't be None", id="put_all-key"),
    pytest.param(lambda m: m.lock(None), "key can't be None", id="lock"),
]


@pytest.mark.parametrize("call, message", NONE_CALLS)
def test_none_keys_and_values_are_refused_by_the_client(mm, call, message):
    mm.put("k", "v")
    with pytest.raises(AssertionError) as raised:
        call(mm)
    assert str(raised.value) == message
    assert mm.get("k") == ["v"] and mm.size() == 1, "nothing changed and the client still works"


def java_hash_set_order(datas):
    """The indexes of `datas` (serialized values, in the order they were added) in the order
    Java's HashSet<MultiMapRecord> iterates them: HeapData.hashCode (MurmurHash3 x86 32 of the
    payload), spread (h ^ h >>> 16), masked to the table; buckets in order, each in the order its
    values were added. The table grew from 16, doubling past 3/4 full; a get or a removal
    answers a copy, `new HashSet<>(set)`, whose table is sized for size / .75 + 1 (at least 16)."""
    size = len(datas)
    grown = 16
    while size > grown // 4 * 3:
        grown *= 2

    def bucket(data, capacity):
        h = murmur_hash3_x86_32(data) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    order = sorted(range(size), key=lambda i: bucket(datas[i], grown))
    copy = 16
    while copy < max(int(size / 0.75) + 1, 16):
        copy *= 2
    return sorted(order, key=lambda i: bucket(datas[i], copy))


@pytest.mark.parametrize("count", [5, 12, 13, 30, 100])
def test_set_values_come_back_in_java_hash_set_order(client, mm, count):
    values = ["v%d" % i for i in range(count)] if count != 100 else list(range(1000, 1100))
    for value in values:
        assert mm.put("k", value) is True
    datas = [bytes(client._serialization_service.to_data(value).buffer) for value in values]
    expected = [values[i] for i in java_hash_set_order(datas)]
    assert expected != values, "these values are not in insertion order in a HashSet"
    assert mm.get("k") == expected
    assert mm.remove_all("k") == expected, "a removal answers the same copy"


def test_list_values_come_back_in_insertion_order(list_mm):
    values = ["v%d" % i for i in range(30)]
    for value in values:
        list_mm.put("k", value)
    assert list_mm.get("k") == values
    assert list_mm.remove_all("k") == values


# --------------------------------------------------------------------------- LIST values


def test_list_values_keep_duplicates_in_insertion_order(list_mm):
    for value in [3, 1, 3, 2, 1]:
        assert list_mm.put("a", value) is True, "a LIST takes every value"
    assert list_mm.get("a") == [3, 1, 3, 2, 1]
    assert list_mm.value_count("a") == 5 and list_mm.size() == 5
    assert list_mm.remove("a", 3) is True
    assert list_mm.get("a") == [1, 3, 2, 1], "remove takes the first equal value"
    assert list_mm.values() == [1, 3, 2, 1]
    assert list_mm.contains_entry("a", 1) and not list_mm.contains_entry("a", 5)
    assert list_mm.remove_all("a") == [1, 3, 2, 1]
    assert list_mm.size() == 0


def test_list_entry_set_lists_each_distinct_pair_once(list_mm):
    for value in [1, 2, 1]:
        list_mm.put("a", value)
    assert list_mm.size() == 3 and sorted(list_mm.values()) == [1, 1, 2]
    assert sorted(list_mm.entry_set()) == [("a", 1), ("a", 2)]


def test_list_put_all_keeps_duplicates(list_mm):
    list_mm.put("a", 1)
    list_mm.put_all({"a": [1, 2], "b": ["x", "x"]})
    assert list_mm.get("a") == [1, 1, 2]
    assert list_mm.get("b") == ["x", "x"]
    assert list_mm.size() == 5


# --------------------------------------------------------------------------- entry listeners


class EntryLog:
    """Entry-event callback recording (type name, key, value, old value, affected entries)."""

    NAMES = {EntryEventType.ADDED: "ADDED", EntryEventType.REMOVED: "REMOVED", EntryEventType.CLEAR_ALL: "CLEAR_ALL"}

    def __init__(self):
        self.events = []
        self._lock = threading.Lock()

    def __call__(self, event):
        with self._lock:
            self.events.append(
                (
                    self.NAMES.get(event.event_type, event.event_type),
                    event.key,
                    event.value,
                    event.old_value,
                    event.number_of_affected_entries,
                )
            )

    def callbacks(self):
        return {"added_func": self, "removed_func": self, "clear_all_func": self}

    def snapshot(self):
        with self._lock:
            return list(self.events)

    def wait_for(self, event, timeout=WAIT):
        """Every event once `event` has been recorded."""
        deadline = time.monotonic() + timeout
        while event not in self.snapshot():
            assert time.monotonic() < deadline, "no %r within %s s; events: %r" % (event, timeout, self.snapshot())
            time.sleep(0.02)
        return self.snapshot()


def unordered(events):
    return sorted(events, key=repr)


@pytest.mark.parametrize("include_value", [True, False])
def test_entry_listener_hears_puts_and_removes(mm, client_factory, include_value):
    # Events of one partition arrive in order; the marker lives in the partition of "a".
    log = EntryLog()
    registration = mm.add_entry_listener(include_value=include_value, **log.callbacks())
    writer = client_factory().get_multi_map(mm.name).blocking()
    marker = same_partition_key("a")
    writer.put("a", 1)
    writer.put("a", 1)  # changes nothing: not heard
    writer.put("a", 2)
    writer.remove("a", 2)
    writer.remove("a", 9)  # finds nothing: not heard
    writer.put_all({"a": [1, 3], "b": [4]})
    writer.remove_all("a")
    writer.put(marker, 0)
    v = (lambda value: value) if include_value else (lambda value: None)
    log.wait_for(("ADDED", "b", v(4), None, 1))
    events = log.wait_for(("ADDED", marker, v(0), None, 1))
    in_order = [e for e in events if e[1] != "b"]
    assert in_order[:4] == [
        ("ADDED", "a", v(1), None, 1),
        ("ADDED", "a", v(2), None, 1),
        ("REMOVED", "a", None, v(2), 1),
        ("ADDED", "a", v(3), None, 1),
    ], "put_all adds only the new value"
    removed_all = [("REMOVED", "a", None, v(1), 1), ("REMOVED", "a", None, v(3), 1)]
    assert unordered(in_order[4:6]) == unordered(removed_all), "remove_all: one event per value, in no promised order"
    assert in_order[6:] == [("ADDED", marker, v(0), None, 1)]
    assert [e for e in events if e[1] == "b"] == [("ADDED", "b", v(4), None, 1)]
    assert mm.remove_entry_listener(registration) is True
    assert mm.remove_entry_listener(registration) is False, "a second removal finds nothing"
    heard = len(log.snapshot())
    other = EntryLog()
    mm.add_entry_listener(include_value=True, **other.callbacks())
    writer.put("after", 1)
    other.wait_for(("ADDED", "after", 1, None, 1))
    assert len(log.snapshot()) == heard == 8, "no event after the listener was removed"


def test_clear_is_heard_once_counting_the_keys(mm):
    log = EntryLog()
    mm.add_entry_listener(include_value=True, **log.callbacks())
    mm.put_all({"a": [1, 2, 3]})
    mm.put("b", 1)
    mm.clear()
    mm.clear()
    wait_until(lambda: len([e for e in log.snapshot() if e[0] == "CLEAR_ALL"]) >= 2, WAIT, message="2 CLEAR_ALL")
    assert [e for e in log.snapshot() if e[0] != "ADDED"] == [
        ("CLEAR_ALL", None, None, None, 2),
        ("CLEAR_ALL", None, None, None, 0),
    ], "one CLEAR_ALL per clear, counting keys (not values); an empty clear is heard too"


def test_delete_is_not_heard(mm):
    log = EntryLog()
    mm.add_entry_listener(include_value=True, **log.callbacks())
    marker = same_partition_key("a")
    mm.put("a", 1)
    mm.put("a", 2)
    delete(mm, "a")
    mm.put(marker, 0)
    events = log.wait_for(("ADDED", marker, 0, None, 1))
    assert [e[0] for e in events] == ["ADDED", "ADDED", "ADDED"], "delete fires no event"
    assert mm.contains_key("a") is False


def test_a_one_key_listener_hears_its_key_and_every_clear(mm):
    log = EntryLog()
    mm.add_entry_listener(include_value=True, key="k", **log.callbacks())
    other = same_partition_key("k")
    mm.put("k", 1)
    mm.put(other, 1)
    mm.remove(other, 1)
    mm.remove("k", 1)
    mm.put(other, 2)
    mm.clear()
    mm.put("k", "marker")
    log.wait_for(("CLEAR_ALL", None, None, None, 1))
    events = log.wait_for(("ADDED", "k", "marker", None, 1))
    assert [e for e in events if e[0] != "CLEAR_ALL"] == [
        ("ADDED", "k", 1, None, 1),
        ("REMOVED", "k", None, 1, 1),
        ("ADDED", "k", "marker", None, 1),
    ], "nothing of the other key"
    assert [e for e in events if e[0] == "CLEAR_ALL"] == [("CLEAR_ALL", None, None, None, 1)]


def test_list_duplicates_are_heard_one_by_one(list_mm):
    log = EntryLog()
    list_mm.add_entry_listener(include_value=True, **log.callbacks())
    marker = same_partition_key("a")
    list_mm.put("a", 1)
    list_mm.put("a", 1)
    list_mm.remove_all("a")
    list_mm.put(marker, 0)
    events = log.wait_for(("ADDED", marker, 0, None, 1))
    assert events == [
        ("ADDED", "a", 1, None, 1),
        ("ADDED", "a", 1, None, 1),
        ("REMOVED", "a", None, 1, 1),
        ("REMOVED", "a", None, 1, 1),
        ("ADDED", marker, 0, None, 1),
    ]


# --------------------------------------------------------------------------- key locks


def test_lock_unlock_is_locked(two):
    a, b = two
    assert a.is_locked("k") is False
    assert a.lock("k") is None
    assert a.is_locked("k") is True and b.is_locked("k") is True
    assert a.contains_key("k") is False and a.size() == 0, "a lock does not create the key"
    assert a.unlock("k") is None
    assert b.is_locked("k") is False


def test_locks_are_reentrant_and_owned_by_client_and_thread(two):
    a, b = two
    a.lock("k")
    assert a.try_lock("k") is True, "the owner gets it again"
    assert b.try_lock("k") is False
    assert in_other_thread(lambda: a.try_lock("k")) is False, "another thread of A is another owner"
    a.unlock("k")
    assert a.is_locked("k") is True, "one hold left"
    a.unlock("k")
    assert a.is_locked("k") is False
    assert b.try_lock("k") is True
    b.unlock("k")


def test_unlock_by_a_non_owner_raises(two):
    a, b = two
    with pytest.raises(IllegalMonitorStateError) as raised:
        a.unlock("never-locked")
    assert server_error_line(raised.value).startswith(NOT_OWNER)
    a.lock("k")
    with pytest.raises(IllegalMonitorStateError) as raised:
        b.unlock("k")
    assert server_error_line(raised.value).startswith(NOT_OWNER)
    with pytest.raises(IllegalMonitorStateError):
        in_other_thread(lambda: a.unlock("k"))
    assert a.is_locked("k") is True
    a.unlock("k")


def test_force_unlock_frees_every_hold(two):
    a, b = two
    a.lock("k")
    a.lock("k")
    assert b.force_unlock("k") is None
    assert a.is_locked("k") is False
    with pytest.raises(IllegalMonitorStateError):
        a.unlock("k")
    assert b.force_unlock("not-locked") is None


def test_try_lock_waits_then_gives_up_or_gets_it(two):
    a, b = two
    a.lock("k")
    started = time.monotonic()
    assert b.try_lock("k", timeout=0.5) is False
    assert time.monotonic() - started >= 0.4, "try_lock(timeout) waits"
    waiting = Background(lambda: b.try_lock("k", timeout=WAIT))
    time.sleep(BLOCKED_CHECK)
    assert not waiting.done.is_set()
    a.unlock("k")
    assert waiting.wait() is True
    assert a.try_lock("k") is False
    b.force_unlock("k")


@pytest.mark.parametrize("how", ["lock", "try_lock"])
def test_a_lease_ends_the_lock(two, how):
    a, b = two
    if how == "lock":
        a.lock("k", lease_time=1)
    else:
        assert a.try_lock("k", lease_time=1) is True
    assert b.is_locked("k") is True
    wait_until(lambda: not b.is_locked("k"), WAIT, message="the 1 s lease ended")
    assert b.try_lock("k") is True
    b.unlock("k")


@pytest.mark.parametrize(
    "write, answer, values_after",
    [
        pytest.param(lambda m: m.put("k", "b"), True, ["a", "b", "v"], id="put"),
        pytest.param(lambda m: m.remove("k", "v"), True, ["a"], id="remove"),
        pytest.param(lambda m: m.remove_all("k"), ["a", "v"], [], id="remove_all"),
    ],
)
def test_writes_of_another_owner_wait_for_the_unlock(two, write, answer, values_after):
    a, b = two
    a.put("k", "v")
    a.lock("k")
    writer = Background(lambda: write(b))
    time.sleep(BLOCKED_CHECK)
    assert not writer.done.is_set(), "the write completed while the key was locked"
    # reads do not wait; the owner's writes go through
    assert b.get("k") == ["v"] and b.contains_key("k") and b.contains_entry("k", "v")
    assert b.value_count("k") == 1 and b.size() == 1 and b.key_set() == ["k"]
    assert a.put("k", "a") is True
    a.unlock("k")
    result = writer.wait()
    assert (sorted(result) if isinstance(result, list) else result) == answer
    assert values_of(a, "k") == values_after


def test_delete_and_put_all_of_another_owner_do_not_wait(two):
    a, b = two
    a.put("k", "v")
    a.lock("k")
    assert Background(lambda: delete(b, "k")).wait() is None
    assert a.get("k") == [], "delete went through the lock"
    assert Background(lambda: b.put_all({"k": ["p"]})).wait() is None
    assert a.get("k") == ["p"], "put_all went through the lock"
    assert a.is_locked("k") is True
    a.unlock("k")


def test_clear_skips_locked_keys(two):
    a, b = two
    log = EntryLog()
    a.add_entry_listener(include_value=True, **log.callbacks())
    a.put_all({"locked": ["l"], "free": ["f"], "free2": ["f2"]})
    a.lock("locked")
    b.clear()
    assert a.key_set() == ["locked"] and a.get("locked") == ["l"]
    log.wait_for(("CLEAR_ALL", None, None, None, 2))
    a.unlock("locked")
    b.clear()
    assert a.size() == 0


# --------------------------------------------------------------------------- lifecycle


def listed(client, name):
    return any(o.service_name == SERVICE and o.name == name for o in client.get_distributed_objects())


def test_destroy_drops_the_values_and_the_listing(client, mm):
    mm.put_all({"a": [1, 2], "b": [3]})
    assert listed(client, mm.name)
    mm.destroy()
    assert not listed(client, mm.name)
    again = client.get_multi_map(mm.name).blocking()
    assert again.size() == 0 and again.get("a") == []


def test_a_multimap_and_a_map_of_one_name_are_separate(client, mm):
    m = client.get_map(mm.name).blocking()
    mm.put("k", "multi")
    m.put("k", "plain")
    try:
        assert mm.get("k") == ["multi"] and m.get("k") == "plain"
    finally:
        m.destroy()
