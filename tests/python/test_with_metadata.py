"""Map.putAllWithMetadata (0x014900), ReplicatedMap.putAllWithMetadata (0x0D1300),
ReplicatedMap.fetchEntryViews (0x0D1400), ReplicatedMap.endEntryViewIteration (0x0D1500) and
ReplicatedMap.addNearCacheEntryListener (0x0D1200). Runs against ferrogrid and a real
Hazelcast 5.6.0 member, with smart and unisocket routing.

The Python client 5.7.0 sends none of these (the Java client's near-cached replicated map sends
addNearCacheEntryListener; the others serve migration tools), so each request is built here
as the Java client's codecs encode it and sent through the Python client's invocation service;
results are read through the client's normal API (get_entry_view, get, size, listeners).
"""

import struct
import threading
import time
import uuid as uuidlib

import pytest
from hazelcast.errors import IllegalStateError
from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import CodecUtil, DataCodec, FixSizedTypesCodec
from hazelcast.protocol.client_message import RESPONSE_HEADER_SIZE, OutboundMessage
from hazelcast.protocol.codec import replicated_map_add_entry_listener_codec as entry_codec
from hazelcast.protocol.codec import replicated_map_remove_entry_listener_codec

import dynamic_config
from dynamic_config import _frame, request, structure, text
from helpers import EventLog, wait_until

MAP_PUT_ALL_WITH_METADATA = 0x014900
RM_NEAR_CACHE_LISTENER = 0x0D1200
RM_PUT_ALL_WITH_METADATA = 0x0D1300
RM_FETCH_ENTRY_VIEWS = 0x0D1400
RM_END_ENTRY_VIEW_ITERATION = 0x0D1500
_BEGIN, _END = 1 << 12, 1 << 11


def data_frame(client, value):
    return _frame(bytes(client._serialization_service.to_data(value).buffer))


def listed(items):
    return _frame(flags=_BEGIN) + b"".join(items) + _frame(flags=_END)


def simple_entry_view(client, key, value, **meta):
    """A SimpleEntryView: ten longs (cost, creation, expiration, hits, last access, last stored,
    last update, version, ttl, max idle), then key and value."""
    order = ("cost", "creation_time", "expiration_time", "hits", "last_access_time", "last_stored_time",
             "last_update_time", "version", "ttl", "max_idle")
    defaults = {"ttl": -1, "max_idle": -1, "expiration_time": 2**63 - 1}
    fixed = [("long", meta.get(name, defaults.get(name, 0))) for name in order]
    return structure(fixed, [data_frame(client, key), data_frame(client, value)])


def holder(client, key, value, creation_time=0, hits=0, last_access_time=0, last_update_time=0, ttl=0):
    """A ReplicatedMapEntryViewHolder: creation, hits, last access, last update, ttl; key, value."""
    fixed = [("long", creation_time), ("long", hits), ("long", last_access_time), ("long", last_update_time),
             ("long", ttl)]
    return structure(fixed, [data_frame(client, key), data_frame(client, value)])


def invoke(client, buf, partition_id=-1, decode=None):
    invocation = Invocation(OutboundMessage(buf, False), partition_id=partition_id, response_handler=decode or (lambda m: m))
    client._invocation_service.invoke(invocation)
    return invocation.future.result()


def map_put_all_with_metadata(client, name, partition_id, views):
    return invoke(client, request(MAP_PUT_ALL_WITH_METADATA, [], [text(name), listed(views)]), partition_id)


def rm_put_all_with_metadata(client, name, partition_id, holders):
    buf = request(RM_PUT_ALL_WITH_METADATA, [("int", partition_id)], [text(name), listed(holders)])
    return invoke(client, buf, partition_id)


def _uuid_fixed(buf, offset, value):
    FixSizedTypesCodec.encode_uuid(buf, offset, value)


def fetch_entry_views(client, name, partition_id, cursor, new_iteration, batch):
    """One page: (next cursor, [(key, value, creation, hits, last access, last update, ttl)])."""
    buf = request(RM_FETCH_ENTRY_VIEWS, [("long", 0), ("long", 0), ("byte", 0), ("bool", new_iteration),
                                         ("int", partition_id), ("int", batch)], [text(name)])
    _uuid_fixed(buf, 16 + 6, cursor)  # the 17-byte UUID is the first fixed field
    ser = client._serialization_service

    def decode(message):
        initial = message.next_frame()
        next_cursor = FixSizedTypesCodec.decode_uuid(initial.buf, 13)
        views = []
        message.next_frame()  # BEGIN of the list
        while not message.peek_next_frame().is_end_frame():
            message.next_frame()  # BEGIN of a holder
            fixed = message.next_frame().buf
            longs = struct.unpack_from("<5q", fixed, 0)
            key = ser.to_object(_data(message.next_frame().buf))
            value = ser.to_object(_data(message.next_frame().buf))
            while not message.peek_next_frame().is_end_frame():
                message.next_frame()
            message.next_frame()  # END of the holder
            views.append((key, value) + longs)
        message.next_frame()
        return next_cursor, views

    return invoke(client, buf, partition_id, decode)


def _data(raw):
    from hazelcast.serialization.data import Data

    return Data(bytes(raw))


def end_entry_view_iteration(client, name, partition_id, cursor):
    buf = request(RM_END_ENTRY_VIEW_ITERATION, [("long", 0), ("long", 0), ("byte", 0)], [text(name)])
    _uuid_fixed(buf, 16 + 6, cursor)
    return invoke(client, buf, partition_id)


def now_ms():
    return int(time.time() * 1000)


def seconds(ms):
    """An entry time as a member reports it: whole seconds."""
    return ms - ms % 1000


NEVER = 2**63 - 1


@pytest.fixture
def stats_map(client, map_name):
    """A map with per-entry statistics (creation and access times, hits reported)."""
    dynamic_config.add(client, dynamic_config.map_config(map_name, per_entry_stats=True)).result()
    proxy = client.get_map(map_name).blocking()
    yield proxy
    proxy.destroy()


def test_map_new_entry_keeps_its_times_ttl_and_max_idle(client, stats_map):
    t = now_ms()
    # expiring at the earlier of update + ttl and access + max idle, as a member's view does
    meta = dict(creation_time=t - 50000, last_access_time=t - 40000, last_update_time=t - 20000, ttl=600000,
                max_idle=500000, expiration_time=t + 460000, hits=7, version=9, cost=5, last_stored_time=t)
    pid = client._partition_service.get_partition_id("k")
    map_put_all_with_metadata(client, stats_map.name, pid, [simple_entry_view(client, "k", "v", **meta)])
    view = stats_map.get_entry_view("k")
    assert view.value == "v"
    assert view.creation_time == seconds(t - 50000)
    assert view.last_access_time == seconds(t - 40000)
    assert view.last_update_time == seconds(t - 20000)
    assert view.expiration_time == seconds(t + 460000)
    assert (view.ttl, view.max_idle) == (600000, 500000)
    assert (view.version, view.hits) == (0, 0), "a new entry's version and hits, not the view's"
    assert stats_map.get("k") == "v"
    view = stats_map.get_entry_view("k")
    assert view.hits == 1 and view.last_access_time >= seconds(t), "a read is an access"


def test_map_replaced_entry_counts_on_from_the_held_one(client, stats_map):
    stats_map.put("k", "old")
    stats_map.get("k")
    t = now_ms()
    meta = dict(creation_time=t - 50000, last_access_time=t - 40000, last_update_time=t - 20000, hits=7, version=9)
    pid = client._partition_service.get_partition_id("k")
    map_put_all_with_metadata(client, stats_map.name, pid, [simple_entry_view(client, "k", "new", **meta)])
    view = stats_map.get_entry_view("k")
    assert view.value == "new"
    assert (view.version, view.hits) == (1, 2), "the held entry's version and hits, plus one"
    assert (view.creation_time, view.last_update_time) == (seconds(t - 50000), seconds(t - 20000))
    assert (view.ttl, view.max_idle, view.expiration_time) == (NEVER, NEVER, NEVER)


def test_map_without_statistics_and_durations_under_a_second(client, m):
    """Default map: times and hits reported -1, the update time only for an entry that
    expires; a ttl of -1 beside a defined max idle is kept as one second."""
    t = now_ms()
    plain = dict(creation_time=t - 5000, last_access_time=t - 4000, last_update_time=t - 2000)
    idle = dict(plain, ttl=-1, max_idle=300000, expiration_time=t - 4000 + 300000)
    views = [simple_entry_view(client, "plain", "p", **plain), simple_entry_view(client, "idle", "i", **idle)]
    for key, view in zip(("plain", "idle"), views):
        map_put_all_with_metadata(client, m.name, client._partition_service.get_partition_id(key), [view])
    assert m.size() == 2
    view = m.get_entry_view("plain")
    assert (view.creation_time, view.hits, view.last_access_time, view.last_update_time) == (-1, -1, -1, -1)
    assert (view.ttl, view.max_idle, view.version) == (NEVER, NEVER, 0)
    view = m.get_entry_view("idle")
    assert (view.ttl, view.max_idle) == (1000, 300000)
    assert view.last_update_time == seconds(t - 2000)
    assert view.expiration_time == seconds(t - 4000 + 300000)


def test_map_put_publishes_merged_events(client, m):
    events = EventLog()
    m.add_entry_listener(include_value=True, added_func=events, updated_func=events, merged_func=events)
    m.put("held", "old")
    events.wait_count(1)
    views = [simple_entry_view(client, key, "v-" + key) for key in ("held", "fresh")]
    for key, view in zip(("held", "fresh"), views):
        map_put_all_with_metadata(client, m.name, client._partition_service.get_partition_id(key), [view])
    got = events.wait_count(3)[1:]
    seen = sorted((e.event_type, e.key, e.value, e.old_value) for e in got)
    assert seen == [(128, "fresh", "v-fresh", None), (128, "held", "v-held", "old")]


def test_replicated_put_keeps_metadata_and_publishes(client, map_name):
    rm = client.get_replicated_map(map_name).blocking()
    events = EventLog()
    rm.add_entry_listener(added_func=events, updated_func=events)
    rm.put("a", "old")
    events.wait_count(1)
    t = now_ms()
    meta = dict(creation_time=t - 50000, hits=7, last_access_time=t - 40000, last_update_time=t - 20000)
    for key, ttl in (("a", 0), ("b", 600000)):
        pid = client._partition_service.get_partition_id(key)
        rm_put_all_with_metadata(client, map_name, pid, [holder(client, key, "v-" + key, ttl=ttl, **meta)])
    got = sorted((e.event_type, e.key, e.value, e.old_value) for e in events.wait_count(3)[1:])
    assert got == [(1, "b", "v-b", None), (4, "a", "v-a", "old")]
    assert (rm.get("a"), rm.get("b"), rm.size()) == ("v-a", "v-b", 2)
    for key, ttl in (("a", 0), ("b", 600000)):
        pid = client._partition_service.get_partition_id(key)
        before = now_ms()
        _, views = fetch_entry_views(client, map_name, pid, uuidlib.uuid4(), True, 100)
        (view,) = [v for v in views if v[0] == key]
        _, value, creation, hits, last_access, last_update, view_ttl = view
        assert (value, creation, last_update, view_ttl) == ("v-" + key, t - 50000, t - 20000, ttl)
        assert hits > 7, "the view's hits, counted on by the reads since"
        assert last_access >= before - 1000, "reading the view is an access"


def test_replicated_put_ttl_counts_from_the_put(client, map_name):
    rm = client.get_replicated_map(map_name).blocking()
    pid = client._partition_service.get_partition_id("k")
    rm_put_all_with_metadata(client, map_name, pid, [holder(client, "k", "v", last_update_time=now_ms(), ttl=1500)])
    assert rm.get("k") == "v"
    wait_until(lambda: rm.get("k") is None, timeout=10, message="the entry expires by its ttl")


def iterate(client, name, partition_id, batch):
    """Every view of one partition, page by page; asserts each page's bound."""
    cursor, new, seen = uuidlib.uuid4(), True, []
    first = cursor
    while True:
        cursor, views = fetch_entry_views(client, name, partition_id, cursor, new, batch)
        new = False
        assert len(views) <= batch
        seen.extend(views)
        if len(views) < batch:
            end_entry_view_iteration(client, name, partition_id, first)
            return seen


@pytest.mark.parametrize("batch", [1, 7, 1000])
def test_fetch_entry_views_returns_every_entry_once(client, map_name, batch):
    rm = client.get_replicated_map(map_name).blocking()
    rm.put_all({"key-%d" % i: i for i in range(300)})
    seen = []
    for partition_id in range(client._partition_service.get_partition_count()):
        seen.extend((v[0], v[1]) for v in iterate(client, map_name, partition_id, batch))
    assert len(seen) == 300
    assert dict(seen) == {"key-%d" % i: i for i in range(300)}


def test_fetch_entry_views_cursors(client, map_name):
    rm = client.get_replicated_map(map_name).blocking()
    keys = ["a"] + [same for same in ("key-%d" % i for i in range(2000))
                    if client._partition_service.get_partition_id(same) == client._partition_service.get_partition_id("a")][:4]
    rm.put_all({key: key for key in keys})
    pid = client._partition_service.get_partition_id("a")
    first = uuidlib.uuid4()
    second, page = fetch_entry_views(client, map_name, pid, first, True, 2)
    again, repeated = fetch_entry_views(client, map_name, pid, first, False, 2)
    assert again == second, "the previous cursor answers the same page again"
    assert [v[0] for v in repeated] == [v[0] for v in page]
    third, page2 = fetch_entry_views(client, map_name, pid, second, False, 2)
    with pytest.raises(IllegalStateError):
        fetch_entry_views(client, map_name, pid, first, False, 2)
    _, rest = fetch_entry_views(client, map_name, pid, third, False, 10)
    assert sorted(v[0] for v in page + page2 + rest) == sorted(keys)
    end_entry_view_iteration(client, map_name, pid, first)
    end_entry_view_iteration(client, map_name, pid, first)  # an ended iteration: ignored
    with pytest.raises(IllegalStateError):
        fetch_entry_views(client, map_name, pid, third, False, 2)


def test_fetch_entry_views_skips_removed_entries(client, map_name):
    rm = client.get_replicated_map(map_name).blocking()
    pid = client._partition_service.get_partition_id("a")
    keys = [k for k in ("key-%d" % i for i in range(3000)) if client._partition_service.get_partition_id(k) == pid][:6]
    rm.put_all({key: 1 for key in keys})
    first = uuidlib.uuid4()
    cursor, page = fetch_entry_views(client, map_name, pid, first, True, 2)
    rest = [key for key in keys if key not in {v[0] for v in page}]
    rm.remove(rest[0])
    _, later = fetch_entry_views(client, map_name, pid, cursor, False, 100)
    assert sorted(v[0] for v in later) == sorted(rest[1:])
    end_entry_view_iteration(client, map_name, pid, first)


class RawEntryEvents:
    """Entry events of a raw registration: (type, key, value, old value)."""

    def __init__(self, client):
        self._ser = client._serialization_service
        self.events = []
        self._cond = threading.Condition()

    def __call__(self, message):
        initial = message.next_frame()
        kind = FixSizedTypesCodec.decode_int(initial.buf, entry_codec._EVENT_ENTRY_EVENT_TYPE_OFFSET)
        fields = [CodecUtil.decode_nullable(message, DataCodec.decode) for _ in range(3)]
        with self._cond:
            self.events.append((message.get_message_type(), kind) + tuple(self._ser.to_object(f) for f in fields))
            self._cond.notify_all()

    def wait_count(self, count, timeout=10.0):
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.events) < count:
                remaining = deadline - time.monotonic()
                assert remaining > 0, "%d events, expected %d: %r" % (len(self.events), count, self.events)
                self._cond.wait(remaining)
            return list(self.events)


def test_near_cache_listener_hears_every_change(client, map_name):
    rm = client.get_replicated_map(map_name).blocking()
    events = RawEntryEvents(client)
    buf = request(RM_NEAR_CACHE_LISTENER, [("bool", False), ("bool", False)], [text(map_name)])
    client._listener_service.register_listener(
        OutboundMessage(buf, False),
        lambda m: FixSizedTypesCodec.decode_uuid(m.next_frame().buf, RESPONSE_HEADER_SIZE),
        lambda registration: replicated_map_remove_entry_listener_codec.encode_request(map_name, registration),
        events,
    ).result()
    rm.put("k", "1")
    rm.put("k", "2")
    rm.remove("k")
    rm.put("j", "3")
    rm.clear()
    got = events.wait_count(5)
    assert {event[0] for event in got} == {0x0D1202}
    assert [event[1:] for event in got[:4]] == [
        (1, "k", "1", None), (4, "k", "2", "1"), (2, "k", None, "2"), (1, "j", "3", None)]
    assert got[4][1:3] == (64, None), "clear: one CLEAR_ALL event without a key"
