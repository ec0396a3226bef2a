"""Near-cache invalidation: a client with a near cache for a map keeps the values it read;
the member tells it (Map.AddNearCacheInvalidationListener 0x013F00, events 0x013F02 single /
0x013F03 batch) when another client changes a key, so its next get() fetches the new value.

The Python client registers the invalidation listener when the map proxy is created (with
`near_caches={name: {...}}` in its config; names must match exactly, no wildcards) and
caches every get() result, None included, until an invalidation for the key arrives (a null
key in an invalidation clears the whole near cache). Its own writes invalidate its own near
cache locally.

member-config.yaml sets hazelcast.map.invalidation.batch.enabled=false: Hazelcast then sends
one 0x013F02 event per change right away. With Hazelcast's default (batching on) the events
are collected per map and sent as 0x013F03 batches at most every 10 s, so a near-cached
reader saw changes ~10 s late (measured). The tests poll for up to READ_WITHIN seconds.

get_all is not used on near-cached readers: the 5.7.0 client's near cache breaks get_all
whenever one of the keys is served from the near cache (TypeError/ValueError in the client's
result merge), whatever the member does.

Not tested because Hazelcast does not do it: an entry that EXPIRES on the member does not
invalidate near caches (a reader kept returning the expired value for 20 s).
"""

import struct
import uuid

import pytest

import wire
from conftest import unique_name
from helpers import wait_until

READ_WITHIN = 10  # seconds until a near-cached reader sees another client's change

MAP_ADD_NEAR_CACHE_INVALIDATION_LISTENER = 0x013F00
IMAP_INVALIDATION_EVENT = 0x013F02
IMAP_BATCH_INVALIDATION_EVENT = 0x013F03
MAP_CLEAR = 0x012D00
INVALIDATION_FLAG = 256  # EntryEventType.INVALIDATION, the listener flags the client sends


@pytest.fixture
def nc(client_factory, request):
    """(reader with a near cache, writer without, near cache statistics of the reader)."""
    name = unique_name(request, "nc")
    reader_client = client_factory(near_caches={name: {"invalidate_on_change": True}})
    writer_client = client_factory()
    reader = reader_client.get_map(name).blocking()
    writer = writer_client.get_map(name).blocking()

    def stats():
        # the client's own bookkeeping (of the proxy's near cache): proves that reads are
        # served from the near cache. (Not via the client's near-cache manager: its
        # get_or_create_near_cache replaces a near cache that is still empty.)
        return reader._wrapped._near_cache.get_statistics()

    yield reader, writer, stats
    try:
        writer.destroy()
    except Exception:  # noqa: BLE001
        pass


def reads(reader, key, expected):
    return lambda: reader.get(key) == expected


def cache(reader, stats, key, expected):
    """Reads key until a read is served by the near cache (a late invalidation of an earlier
    write may empty it once more); every read must return `expected`."""

    def hit():
        hits = stats()["hits"]
        assert reader.get(key) == expected
        return stats()["hits"] == hits + 1

    wait_until(hit, READ_WITHIN, interval=0.1, message="a near-cache hit for %r" % (key,))


@pytest.mark.parametrize(
    "change,expected",
    [
        pytest.param(lambda m: m.put("k", "new"), "new", id="put"),
        pytest.param(lambda m: m.set("k", "new"), "new", id="set"),
        pytest.param(lambda m: m.put("k", "new", ttl=60), "new", id="put-ttl"),
        pytest.param(lambda m: m.put_transient("k", "new"), "new", id="put_transient"),
        pytest.param(lambda m: m.replace("k", "new"), "new", id="replace"),
        pytest.param(lambda m: m.replace_if_same("k", "old", "new"), "new", id="replace_if_same"),
        pytest.param(lambda m: m.try_put("k", "new", 5), "new", id="try_put"),
        pytest.param(lambda m: m.put_all({"k": "new", "other": "o"}), "new", id="put_all"),
        pytest.param(lambda m: m.remove("k"), None, id="remove"),
        pytest.param(lambda m: m.delete("k"), None, id="delete"),
        pytest.param(lambda m: m.remove_if_same("k", "old"), None, id="remove_if_same"),
        pytest.param(lambda m: m.try_remove("k", 5), None, id="try_remove"),
        pytest.param(lambda m: m.evict("k"), None, id="evict"),
        pytest.param(lambda m: m.clear(), None, id="clear"),
        pytest.param(lambda m: m.evict_all(), None, id="evict_all"),
    ],
)
def test_reader_sees_other_clients_change(nc, change, expected):
    reader, writer, stats = nc
    writer.put("k", "old")
    cache(reader, stats, "k", "old")
    change(writer)
    wait_until(reads(reader, "k", expected), READ_WITHIN, message="near-cached reader seeing %r" % (expected,))


def test_reader_sees_updates_again_and_again(nc):
    reader, writer, stats = nc
    for i in range(5):
        writer.put("k", i)
        wait_until(reads(reader, "k", i), READ_WITHIN, message="update %d" % i)
        cache(reader, stats, "k", i)


def test_cached_absence_is_invalidated(nc):
    reader, writer, stats = nc
    cache(reader, stats, "absent", None)  # None is cached too
    writer.put("absent", "now-present")
    wait_until(reads(reader, "absent", "now-present"), READ_WITHIN, message="the new entry")
    cache(reader, stats, "absent", "now-present")


def test_clear_invalidates_every_key(nc):
    reader, writer, stats = nc
    writer.put_all({"k%d" % i: i for i in range(20)})
    for i in range(20):
        cache(reader, stats, "k%d" % i, i)
    writer.clear()
    wait_until(lambda: all(reader.get("k%d" % i) is None for i in range(20)), READ_WITHIN, message="clear")
    assert writer.get_all(["k%d" % i for i in range(20)]) == {}


def test_only_changed_keys_are_invalidated(nc):
    reader, writer, stats = nc
    writer.put("changed", "old")
    writer.put("same", "s")
    cache(reader, stats, "changed", "old")
    cache(reader, stats, "same", "s")
    writer.put("changed", "new")
    wait_until(reads(reader, "changed", "new"), READ_WITHIN, message="the change")
    hits = stats()["hits"]
    assert reader.get("same") == "s"
    assert stats()["hits"] == hits + 1, "an unchanged key was invalidated"


def test_own_writes_are_seen_at_once(nc):
    reader, writer, stats = nc
    writer.put("k", "old")
    cache(reader, stats, "k", "old")
    reader.put("k", "mine")
    assert reader.get("k") == "mine"
    assert writer.get("k") == "mine"


def test_several_near_cached_readers(client_factory, request):
    name = unique_name(request, "nc")
    readers = [client_factory(near_caches={name: {}}).get_map(name).blocking() for _ in range(3)]
    writer = client_factory().get_map(name).blocking()
    writer.put("k", 1)
    for r in readers:
        assert r.get("k") == 1
    writer.put("k", 2)
    for r in readers:
        wait_until(reads(r, "k", 2), READ_WITHIN, message="every reader")
    writer.destroy()


# --------------------------------------------------------------------------- raw protocol


def decode_invalidations(msg):
    """[(key Data bytes or None, source uuid, partition uuid, sequence)] of one event."""
    init = msg.frames[0].content
    if msg.message_type == IMAP_INVALIDATION_EVENT:
        # initial frame: 16-byte event header, sourceUuid, partitionUuid (17 bytes each), sequence
        source = wire.decode_uuid(init, 16)
        partition_uuid = wire.decode_uuid(init, 33)
        (sequence,) = struct.unpack_from("<q", init, 50)
        key_frame = msg.frames[1]
        key = None if key_frame.has(wire.IS_NULL) else bytes(key_frame.content)
        return [(key, source, partition_uuid, sequence)]
    assert msg.message_type == IMAP_BATCH_INVALIDATION_EVENT, msg
    frames = msg.frames[1:]
    assert frames[0].has(wire.BEGIN_DATA_STRUCTURE)
    end = next(i for i, f in enumerate(frames) if f.has(wire.END_DATA_STRUCTURE))
    keys = [bytes(f.content) for f in frames[1:end]]
    sources, partitions, sequences = (f.content for f in frames[end + 1:end + 4])
    n = len(keys)
    assert len(sources) == len(partitions) == 17 * n and len(sequences) == 8 * n
    return [
        (
            keys[i],
            wire.decode_uuid(sources, 17 * i),
            wire.decode_uuid(partitions, 17 * i),
            struct.unpack_from("<q", sequences, 8 * i)[0],
        )
        for i in range(n)
    ]


def test_raw_invalidation_events(member, request):
    """The invalidation listener as the member sends it: registration answer 0x013F01 with a
    uuid; then, per change of a key by another connection, an invalidation carrying the key's
    Data, the writer's client uuid as source, a per-partition uuid and a per-partition
    sequence that grows with each change; clear() sends a null key."""
    name = unique_name(request, "nc")
    listener = wire.Connection(member.host, member.port)
    writer = wire.Connection(member.host, member.port)
    writer_uuid = uuid.uuid4()
    try:
        assert wire.authenticate(listener)["status"] == 0
        assert wire.authenticate(writer, client_uuid=writer_uuid)["status"] == 0
        response = listener.call(
            lambda corr: wire.request(
                MAP_ADD_NEAR_CACHE_INVALIDATION_LISTENER,
                corr,
                -1,
                struct.pack("<i?", INVALIDATION_FLAG, False),  # listenerFlags, localOnly
                [wire.string_frame(name)],
            )
        )
        assert response.message_type == MAP_ADD_NEAR_CACHE_INVALIDATION_LISTENER + 1
        assert wire.decode_uuid(response.response_fixed()) is not None

        key = wire.string_data("k")
        for value in ("v1", "v2", "v3"):
            writer.call(lambda corr: wire.map_put_request(corr, name, key, wire.string_data(value)))
        received = []
        while len(received) < 3:
            msg = listener.read_message(timeout=READ_WITHIN + 5)
            assert msg.is_event, msg
            received.extend(decode_invalidations(msg))
        assert [r[0] for r in received] == [key] * 3
        assert {r[1] for r in received} == {writer_uuid}
        partition_uuids = {r[2] for r in received}
        assert len(partition_uuids) == 1 and None not in partition_uuids
        sequences = [r[3] for r in received]
        assert sequences == sorted(sequences) and len(set(sequences)) == 3, sequences

        # clear(): one invalidation with a null key (the whole near cache)
        writer.call(lambda corr: wire.request(MAP_CLEAR, corr, -1, b"", [wire.string_frame(name)]))
        msg = listener.read_message(timeout=READ_WITHIN + 5)
        invalidations = decode_invalidations(msg)
        assert [i[0] for i in invalidations] == [None]
        assert invalidations[0][1] == writer_uuid
    finally:
        listener.close()
        writer.close()
