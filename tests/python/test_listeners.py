"""Map entry listeners as a user of the Python client sees them: Map.AddEntryListener
0x011900, ...ToKey 0x011800, ...WithPredicate 0x011700, ...ToKeyWithPredicate 0x011600 (each
event: request type + 2, e.g. 0x011902), Map.RemoveEntryListener 0x011A00.

Expected values are those of a real Hazelcast 5.6.0 member:
  * every entry event carries the member's uuid (`event.uuid`), merging_value None and
    number_of_affected_entries 1; EVICT_ALL / CLEAR_ALL carry key None and the number of
    entries they removed, and are not sent when they removed nothing;
  * include_value=False: value and old_value are None in every event;
  * REMOVED after remove/remove_if_same/try_remove has old_value = the removed value, but
    after delete() old_value is None (even with include_value=True); put_all sends ADDED with
    old_value None even for keys that existed; EVICTED and EXPIRED have value None and
    old_value = the value;
  * no event for a write that changed nothing (failed conditional operations, removing or
    evicting an absent key, set_ttl); a put of the same value is an UPDATED event;
  * events of ONE key arrive in the order of the writes; events of different partitions may
    arrive in any order.

The listener is registered by one client and the writes come from another client, unless
the test says otherwise.
"""

import struct
import threading
import uuid

import pytest
from hazelcast import predicate as predicates
from hazelcast.errors import HazelcastError
from hazelcast.proxy.base import EntryEventType as T

import wire
from conftest import unique_name
from helpers import EVENT_NAMES, EventLog, describe, fields, member_uuid, same_partition_key

EVENT_TIMEOUT = 10  # seconds an expected event may take
# an EXPIRED event of an entry nobody reads comes from the member's background expiry:
# 3 s after a 1 s ttl for a single entry on Hazelcast, up to ~15 s for many (measured)
EXPIRY_EVENT_TIMEOUT = 40


@pytest.fixture
def pair(client_factory, map_name):
    """(listening map proxy, writing map proxy, member uuid) on two clients, one map."""
    listener_client = client_factory()
    writer_client = client_factory()
    listening = listener_client.get_map(map_name).blocking()
    writing = writer_client.get_map(map_name).blocking()
    yield listening, writing, member_uuid(listener_client)
    try:
        writing.destroy()
    except Exception:  # noqa: BLE001
        pass


def assert_plain_event(event, member, event_type, key, value=None, old_value=None):
    assert fields(event) == fields_of(event_type, key, value, old_value), describe([event])
    assert event.merging_value is None
    assert event.number_of_affected_entries == 1
    assert event.uuid == member


def fields_of(event_type, key, value, old_value):
    return (EVENT_NAMES[event_type], key, value, old_value)


# --------------------------------------------------------------------------- event fields


@pytest.mark.parametrize("include_value", [True, False], ids=["with-values", "without-values"])
def test_added_updated_removed_fields(pair, include_value):
    listening, writing, member = pair
    log = EventLog()
    registration = listening.add_entry_listener(include_value=include_value, **log.callbacks())
    assert isinstance(registration, str) and uuid.UUID(registration)

    writing.put("k", "v1")
    writing.put("k", "v2")
    writing.set("k", "v3")
    writing.put("k", "v3")  # the same value again is still an update
    writing.remove("k")
    events = log.wait_count(5, EVENT_TIMEOUT)
    assert len(events) == 5, describe(events)

    def v(x):
        return x if include_value else None

    expected = [
        (T.ADDED, v("v1"), None),
        (T.UPDATED, v("v2"), v("v1")),
        (T.UPDATED, v("v3"), v("v2")),
        (T.UPDATED, v("v3"), v("v3")),
        (T.REMOVED, None, v("v3")),
    ]
    for event, (event_type, value, old_value) in zip(events, expected):
        assert_plain_event(event, member, event_type, "k", value, old_value)


WRITES = [
    # (id, setup, operation, expected events as (type, key, value, old_value))
    ("put_if_absent", {}, lambda m: m.put_if_absent("k", "v"), [(T.ADDED, "k", "v", None)]),
    ("put_transient", {}, lambda m: m.put_transient("k", "v"), [(T.ADDED, "k", "v", None)]),
    ("try_put", {}, lambda m: m.try_put("k", "v", 5), [(T.ADDED, "k", "v", None)]),
    ("set-new", {}, lambda m: m.set("k", "v"), [(T.ADDED, "k", "v", None)]),
    # put_all does not read the old values: Hazelcast sends ADDED with old_value None even
    # for a key that existed
    ("put_all", {"a": "0"}, lambda m: m.put_all({"a": "1", "k": "v"}),
     [(T.ADDED, "a", "1", None), (T.ADDED, "k", "v", None)]),
    ("replace", {"k": "old"}, lambda m: m.replace("k", "v"), [(T.UPDATED, "k", "v", "old")]),
    ("replace_if_same", {"k": "old"}, lambda m: m.replace_if_same("k", "old", "v"), [(T.UPDATED, "k", "v", "old")]),
    ("put_transient-update", {"k": "old"}, lambda m: m.put_transient("k", "v"), [(T.UPDATED, "k", "v", "old")]),
    ("remove", {"k": "old"}, lambda m: m.remove("k"), [(T.REMOVED, "k", None, "old")]),
    ("remove_if_same", {"k": "old"}, lambda m: m.remove_if_same("k", "old"), [(T.REMOVED, "k", None, "old")]),
    ("try_remove", {"k": "old"}, lambda m: m.try_remove("k", 5), [(T.REMOVED, "k", None, "old")]),
    # delete() does not read the old value: Hazelcast sends old_value None
    ("delete", {"k": "old"}, lambda m: m.delete("k"), [(T.REMOVED, "k", None, None)]),
    ("evict", {"k": "old"}, lambda m: m.evict("k"), [(T.EVICTED, "k", None, "old")]),
]


@pytest.mark.parametrize("setup,operation,expected", [w[1:] for w in WRITES], ids=[w[0] for w in WRITES])
def test_event_of_each_write(pair, setup, operation, expected):
    listening, writing, member = pair
    for key, value in setup.items():
        writing.put(key, value)
    log = EventLog()
    listening.add_entry_listener(include_value=True, **log.callbacks())
    operation(writing)
    events = log.mark(writing, "k")
    # events of different keys may arrive in any order; those of one key in write order
    got = sorted(map(fields, events), key=repr)
    assert got == sorted((fields_of(*x) for x in expected), key=repr), describe(events)
    for event in events:
        assert event.uuid == member
        assert event.number_of_affected_entries == 1
        assert event.merging_value is None


@pytest.mark.parametrize("include_value", [True, False], ids=["with-values", "without-values"])
def test_evict_all_and_clear_events(pair, include_value):
    listening, writing, member = pair
    log = EventLog()
    listening.add_entry_listener(include_value=include_value, **log.callbacks())
    writing.put_all({"k%d" % i: "v%d" % i for i in range(5)})
    log.wait_count(5, EVENT_TIMEOUT)
    writing.evict_all()
    evict_all = log.wait_for(lambda e: e.event_type == T.EVICT_ALL, EVENT_TIMEOUT, "EVICT_ALL")
    assert (evict_all.key, evict_all.value, evict_all.old_value, evict_all.merging_value) == (None,) * 4
    assert evict_all.number_of_affected_entries == 5
    assert evict_all.uuid == member

    writing.put("a", "1")
    writing.put("b", "2")
    writing.clear()
    clear_all = log.wait_for(lambda e: e.event_type == T.CLEAR_ALL, EVENT_TIMEOUT, "CLEAR_ALL")
    assert (clear_all.key, clear_all.value, clear_all.old_value, clear_all.merging_value) == (None,) * 4
    assert clear_all.number_of_affected_entries == 2
    assert clear_all.uuid == member

    # the map is empty: evict_all and clear remove nothing and send no event
    writing.evict_all()
    writing.clear()
    events = log.mark(writing, "a")
    types = [e.event_type for e in events]
    assert types.count(T.EVICT_ALL) == 1 and types.count(T.CLEAR_ALL) == 1, describe(events)
    # no per-entry events for the entries evict_all / clear removed
    assert types.count(T.EVICTED) == 0 and types.count(T.REMOVED) == 0, describe(events)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("include_value", [True, False], ids=["with-values", "without-values"])
def test_expired_event_for_per_entry_ttl(pair, include_value):
    listening, writing, member = pair
    log = EventLog()
    listening.add_entry_listener(include_value=include_value, **log.callbacks())
    writing.put("k", "v", ttl=1)
    writing.put("stays", "s")
    # nobody reads "k": the member expires it in the background and tells the listener
    expired = log.wait_key("k", T.EXPIRED, EXPIRY_EVENT_TIMEOUT)
    assert_plain_event(expired, member, T.EXPIRED, "k", None, "v" if include_value else None)
    assert writing.get("k") is None
    assert writing.get("stays") == "s"
    # expiry is not eviction or removal
    events = log.mark(writing, "k")
    assert [fields(e) for e in events if e.key == "k"] == [
        fields_of(T.ADDED, "k", "v" if include_value else None, None),
        fields_of(T.EXPIRED, "k", None, "v" if include_value else None),
    ]


@pytest.mark.timeout(90)
def test_expired_event_for_map_config_ttl(client_factory, request):
    # map "ttl-*" has time-to-live-seconds 2 in member-config.yaml
    name = unique_name(request, "ttl")
    listening = client_factory().get_map(name).blocking()
    writing = client_factory().get_map(name).blocking()
    log = EventLog()
    listening.add_entry_listener(include_value=True, **log.callbacks())
    writing.put("k", "v")
    expired = log.wait_key("k", T.EXPIRED, EXPIRY_EVENT_TIMEOUT)
    assert (expired.value, expired.old_value) == (None, "v")
    writing.destroy()


@pytest.mark.timeout(90)
def test_expired_event_for_max_idle(pair):
    listening, writing, member = pair
    log = EventLog()
    listening.add_entry_listener(include_value=True, **log.callbacks())
    writing.put("k", "v", max_idle=1)
    expired = log.wait_key("k", T.EXPIRED, EXPIRY_EVENT_TIMEOUT)
    assert_plain_event(expired, member, T.EXPIRED, "k", None, "v")


# --------------------------------------------------------------------------- filtering


def test_only_subscribed_event_types_arrive(pair):
    listening, writing, _ = pair
    added = EventLog()
    removed = EventLog()
    listening.add_entry_listener(include_value=True, added_func=added)
    listening.add_entry_listener(include_value=True, removed_func=removed)
    writing.put("k", "1")
    writing.put("k", "2")
    writing.remove("k")
    writing.put("k", "3")
    writing.evict("k")
    marker = same_partition_key("k")
    writing.put(marker, "m")
    added.wait_key(marker, T.ADDED)
    assert [fields(e) for e in added.snapshot()] == [
        fields_of(T.ADDED, "k", "1", None),
        fields_of(T.ADDED, "k", "3", None),
        fields_of(T.ADDED, marker, "m", None),
    ]
    writing.remove(marker)
    removed.wait_key(marker, T.REMOVED)
    assert [fields(e) for e in removed.snapshot()] == [
        fields_of(T.REMOVED, "k", None, "2"),
        fields_of(T.REMOVED, marker, None, "m"),
    ]


def test_key_listener_gets_only_its_key(pair):
    listening, writing, member = pair
    log = EventLog()
    listening.add_entry_listener(include_value=True, key="k1", **log.callbacks())
    everything = EventLog()
    listening.add_entry_listener(include_value=True, **everything.callbacks())
    writing.put("k1", "1")
    writing.put("k2", "1")
    writing.put("k2", "2")
    writing.remove("k2")
    writing.put("k1", "2")
    writing.remove("k1")
    writing.put("k1", "3")
    writing.put("k3", "3")
    # map-wide events reach key listeners too; the count is of the whole map (k1 and k3)
    writing.evict_all()
    log.wait_for(lambda e: e.event_type == T.EVICT_ALL, EVENT_TIMEOUT, "EVICT_ALL")
    everything.wait_for(lambda e: e.event_type == T.EVICT_ALL, EVENT_TIMEOUT, "EVICT_ALL")
    writing.put("k2", "after")
    everything.mark(writing, "k1")
    events = log.snapshot()
    assert [fields(e) for e in events if e.key is not None] == [
        fields_of(T.ADDED, "k1", "1", None),
        fields_of(T.UPDATED, "k1", "2", "1"),
        fields_of(T.REMOVED, "k1", None, "2"),
        fields_of(T.ADDED, "k1", "3", None),
    ], describe(events)
    map_wide = [e for e in events if e.key is None]
    assert [(e.event_type, e.number_of_affected_entries, e.uuid) for e in map_wide] == [(T.EVICT_ALL, 2, member)]


def test_no_events_for_writes_that_change_nothing(pair):
    listening, writing, _ = pair
    writing.put("k", "v")
    log = EventLog()
    listening.add_entry_listener(include_value=True, **log.callbacks())
    assert writing.put_if_absent("k", "other") == "v"
    assert writing.replace("absent", "x") is None
    assert writing.replace_if_same("k", "wrong", "x") is False
    assert writing.remove("absent") is None
    assert writing.remove_if_same("k", "wrong") is False
    assert writing.delete("absent") is None
    assert writing.evict("absent") is False
    assert writing.try_remove("absent", 1) is False
    assert writing.set_ttl("absent", 10) is False
    writing.set_ttl("k", 100)  # changes the expiry only: no event
    writing.get("k")
    writing.contains_key("k")
    writing.get_entry_view("k")
    for key in ("k", "absent"):
        events = log.mark(writing, key)
        assert [e for e in events if not (e.key or "").startswith("marker-")] == [], describe(events)
    assert writing.get("k") == "v"


def test_events_of_one_key_arrive_in_write_order(client_factory, map_name):
    listening = client_factory().get_map(map_name).blocking()
    writer = client_factory().get_map(map_name)  # non-blocking: many writes in flight at once
    log = EventLog()
    listening.add_entry_listener(include_value=True, added_func=log, updated_func=log)
    futures = [writer.set("k", i) for i in range(200)]
    for f in futures:
        f.result()
    events = log.wait_count(200, EVENT_TIMEOUT)
    assert [e.value for e in events] == list(range(200))
    assert [e.old_value for e in events] == [None] + list(range(199))
    assert [e.event_type for e in events] == [T.ADDED] + [T.UPDATED] * 199
    writer.destroy()


def test_every_listener_gets_every_event(client_factory, map_name, request):
    c1 = client_factory()
    c2 = client_factory()
    logs = [EventLog() for _ in range(3)]
    c1.get_map(map_name).blocking().add_entry_listener(include_value=True, added_func=logs[0])
    c1.get_map(map_name).blocking().add_entry_listener(include_value=False, added_func=logs[1])
    c2.get_map(map_name).blocking().add_entry_listener(include_value=True, added_func=logs[2])
    other = EventLog()
    other_name = unique_name(request, "other")
    c1.get_map(other_name).blocking().add_entry_listener(include_value=True, added_func=other)
    writing = c2.get_map(map_name).blocking()
    writing.put("k", "v")
    for log in logs:
        log.wait_key("k", T.ADDED)
    c2.get_map(other_name).blocking().put("o", "v")
    other.wait_key("o", T.ADDED)
    assert [fields(e) for e in other.snapshot()] == [fields_of(T.ADDED, "o", "v", None)]
    assert [fields(e) for e in logs[1].snapshot()] == [fields_of(T.ADDED, "k", None, None)]
    writing.destroy()
    c2.get_map(other_name).blocking().destroy()


# --------------------------------------------------------------------------- predicates


def test_predicate_listener_filters_events(pair):
    """Hazelcast evaluates the predicate against the NEW value for ADDED/UPDATED and the OLD
    value for REMOVED/EVICTED/EXPIRED; map-wide events (EVICT_ALL, CLEAR_ALL) always pass."""
    listening, writing, member = pair
    sql = EventLog()
    equal = EventLog()
    listening.add_entry_listener(include_value=True, predicate=predicates.sql("this = 'x'"), **sql.callbacks())
    listening.add_entry_listener(include_value=False, predicate=predicates.equal("this", "x"), **equal.callbacks())
    keyed = EventLog()
    listening.add_entry_listener(include_value=True, key="a", predicate=predicates.equal("this", "x"), **keyed.callbacks())

    writing.put("a", "x")  # ADDED, matches
    writing.put("b", "y")  # ADDED, no match
    writing.put("b", "x")  # UPDATED to a match
    writing.put("a", "z")  # UPDATED away from a match: not sent
    writing.remove("a")  # old value z: not sent
    writing.remove("b")  # old value x: sent
    writing.put("c", "x")
    writing.evict("c")  # old value x: sent
    writing.put("d", "y")
    writing.evict_all()  # map-wide: sent
    expected = [
        fields_of(T.ADDED, "a", "x", None),
        fields_of(T.UPDATED, "b", "x", "y"),
        fields_of(T.REMOVED, "b", None, "x"),
        fields_of(T.ADDED, "c", "x", None),
        fields_of(T.EVICTED, "c", None, "x"),
        fields_of(T.EVICT_ALL, None, None, None),
    ]
    for log in (sql, equal):
        log.wait_for(lambda e: e.event_type == T.EVICT_ALL, EVENT_TIMEOUT, "EVICT_ALL")
    sql.mark(writing, "a", value="x")  # a matching marker, after which every event is in
    marker = same_partition_key("a")
    equal.wait_key(marker, T.ADDED)
    for log, with_values in ((sql, True), (equal, False)):
        events = [e for e in log.snapshot() if e.key != marker]
        want = expected if with_values else [(t, k, None, None) for (t, k, _, _) in expected]
        assert sorted(map(fields, events), key=repr) == sorted(want, key=repr), describe(events)
        for event in events:
            assert event.uuid == member
    evict_all = [e for e in sql.snapshot() if e.event_type == T.EVICT_ALL]
    assert [e.number_of_affected_entries for e in evict_all] == [1]  # only "d" was left
    # key + predicate: only key "a", and only while its value matches (map-wide events pass)
    events = keyed.snapshot()
    assert [fields(e) for e in events] == [
        fields_of(T.ADDED, "a", "x", None),
        fields_of(T.EVICT_ALL, None, None, None),
    ], describe(events)


# --------------------------------------------------------------------------- registration life cycle


def test_remove_entry_listener_stops_events(pair):
    listening, writing, _ = pair
    removed = EventLog()
    kept = EventLog()
    registration = listening.add_entry_listener(include_value=True, **removed.callbacks())
    listening.add_entry_listener(include_value=True, **kept.callbacks())
    writing.put("k", "1")
    removed.wait_key("k", T.ADDED)
    assert listening.remove_entry_listener(registration) is True
    writing.put("k", "2")
    writing.remove("k")
    kept.mark(writing, "k")
    assert [fields(e) for e in removed.snapshot()] == [fields_of(T.ADDED, "k", "1", None)]
    # a second removal and an id that never existed: False (the Python client answers these
    # itself, from its own registrations; see the raw test below for the member's answer)
    assert listening.remove_entry_listener(registration) is False
    assert listening.remove_entry_listener(str(uuid.uuid4())) is False


MAP_ADD_ENTRY_LISTENER = 0x011900
MAP_REMOVE_ENTRY_LISTENER = 0x011A00
ALL_ENTRY_EVENTS = T.ADDED | T.REMOVED | T.UPDATED | T.EVICTED | T.EXPIRED | T.EVICT_ALL | T.CLEAR_ALL


def test_raw_remove_entry_listener_answers(member, map_name):
    """Map.RemoveEntryListener answers True for a live registration, False for an unknown or
    already removed one (it is not an error)."""
    conn = wire.Connection(member.host, member.port)
    try:
        assert wire.authenticate(conn)["status"] == 0

        def call(message_type, fixed):
            msg = conn.call(lambda corr: wire.request(message_type, corr, -1, fixed, [wire.string_frame(map_name)]))
            assert msg.message_type == message_type + 1, msg
            return msg.response_fixed()

        # fixed part: include_value (bool), listener_flags (int), local_only (bool)
        response = call(MAP_ADD_ENTRY_LISTENER, struct.pack("<?i?", True, ALL_ENTRY_EVENTS, False))
        registration = wire.decode_uuid(response)
        assert registration is not None

        def remove(reg):
            return struct.unpack_from("<?", call(MAP_REMOVE_ENTRY_LISTENER, wire.encode_uuid(reg)))[0]

        assert remove(uuid.uuid4()) is False
        assert remove(registration) is True
        assert remove(registration) is False
    finally:
        conn.close()


def test_listener_dies_with_its_client(client_factory, map_name):
    doomed = client_factory()
    writer = client_factory()
    survivor = client_factory()
    doomed_log = EventLog()
    survivor_log = EventLog()
    doomed.get_map(map_name).blocking().add_entry_listener(include_value=True, **doomed_log.callbacks())
    survivor.get_map(map_name).blocking().add_entry_listener(include_value=True, **survivor_log.callbacks())
    writing = writer.get_map(map_name).blocking()
    writing.put("before", "1")
    doomed_log.wait_key("before", T.ADDED)
    survivor_log.wait_key("before", T.ADDED)
    doomed.shutdown()
    # the member must not stall or fail writes because a listener's connection is gone
    for i in range(50):
        assert writing.put("after-%d" % i, i) is None
    assert writing.size() == 51
    events = survivor_log.wait_count(51, EVENT_TIMEOUT)
    assert sorted(e.key for e in events) == sorted(["before"] + ["after-%d" % i for i in range(50)])
    assert [e.key for e in doomed_log.snapshot()] == ["before"]
    # a listener registered after the other client left works too
    late = EventLog()
    survivor.get_map(map_name).blocking().add_entry_listener(include_value=True, **late.callbacks())
    writing.remove("before")
    late.wait_key("before", T.REMOVED)
    writing.destroy()


def test_listener_of_same_client_as_writer(m, client):
    # the writing client's own listener gets the events of its writes
    log = EventLog()
    m.add_entry_listener(include_value=True, **log.callbacks())
    m.put("k", "v")
    event = log.wait_key("k", T.ADDED)
    assert event.uuid == member_uuid(client)
    m.remove("k")
    log.wait_key("k", T.REMOVED)


def test_listener_registration_in_thread_does_not_block_events(pair):
    # events are delivered while the user's code is busy in another thread
    listening, writing, _ = pair
    log = EventLog()
    listening.add_entry_listener(include_value=True, added_func=log)
    done = threading.Event()

    def write_many():
        for i in range(100):
            writing.put("t%d" % i, i)
        done.set()

    thread = threading.Thread(target=write_many)
    thread.start()
    thread.join(30)
    assert done.is_set()
    events = log.wait_count(100, EVENT_TIMEOUT)
    assert sorted(e.key for e in events) == sorted("t%d" % i for i in range(100))
