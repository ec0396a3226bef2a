"""Near-cache repair metadata: what a client's repairing handler relies on to notice missed
invalidations (issue 30, item 1).

Every invalidation a partition's owner publishes for a map takes the next sequence of that
(map, partition) and names the partition's uuid; Map.FetchNearCacheInvalidationMetadata
(0x013D00, sent to one member named by uuid) answers, for each map asked about, the
(partition, sequence) pairs of the partitions that member owns whose sequence is not 0, and the
uuid of every partition it owns. A clear (and an evictAll) takes one sequence of the map on
every partition and keeps the partition uuids. Hazelcast's Java client fetches this every
`hazelcast.invalidation.reconciliation.interval.seconds`; the Python client 5.7.0 has no
repairing handler (nor this codec), so the tests encode the request themselves and read the
events' metadata through the near-cached proxy's invalidation handler.

Observed on Hazelcast 5.6 (these tests pass against it): a change takes a sequence only while a
near cache listens to the map (a map nobody near-caches reports no sequence), whether or not
the changed key was ever cached; a get takes none; each put, set or remove takes exactly one.
"""

import struct

from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import EntryListCodec, FixSizedTypesCodec, ListMultiFrameCodec, StringCodec
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer

from conftest import unique_name
from helpers import wait_until

MAP_FETCH_NEAR_CACHE_INVALIDATION_METADATA = 0x013D00
UUID_SIZE = 17  # a null flag, then the most and least significant halves
INT_LONG_ENTRY = struct.Struct("<iq")


def encode_fetch(names, member_uuid):
    buf = create_initial_buffer(REQUEST_HEADER_SIZE + UUID_SIZE, MAP_FETCH_NEAR_CACHE_INVALIDATION_METADATA)
    FixSizedTypesCodec.encode_uuid(buf, REQUEST_HEADER_SIZE, member_uuid)
    ListMultiFrameCodec.encode(buf, names, StringCodec.encode, True)
    return OutboundMessage(buf, False)


def _partition_sequences(msg):
    buf = msg.next_frame().buf
    return dict(INT_LONG_ENTRY.unpack_from(buf, offset) for offset in range(0, len(buf), INT_LONG_ENTRY.size))


def _partition_uuids(msg):
    buf = msg.next_frame().buf
    entry = 4 + UUID_SIZE
    pairs = []
    for offset in range(0, len(buf), entry):
        pairs.append((struct.unpack_from("<i", buf, offset)[0], FixSizedTypesCodec.decode_uuid(buf, offset + 4)))
    return pairs


def decode_fetch(msg):
    """({map name: {partition: sequence}}, [(partition, uuid)])."""
    msg.next_frame()  # the initial frame holds no field
    sequences = EntryListCodec.decode(msg, StringCodec.decode, _partition_sequences)
    return dict(sequences), _partition_uuids(msg)


def fetch_metadata(client, names, member_uuid=None):
    """The metadata of `names` that the member `member_uuid` (the only one by default) answers."""
    if member_uuid is None:
        (member,) = client.cluster_service.get_members()
        member_uuid = member.uuid
    invocation = Invocation(encode_fetch(names, member_uuid), uuid=member_uuid, response_handler=decode_fetch)
    client._invocation_service.invoke(invocation)
    return invocation.future.result()


def partition_of(client, key):
    return client.partition_service.get_partition_id(key)


def near_cached(client_factory, *names):
    client = client_factory(near_caches={name: {"invalidate_on_change": True} for name in names})
    maps = [client.get_map(name).blocking() for name in names]
    return client, maps


def test_every_owned_partition_is_listed_with_its_uuid(client_factory, request):
    name = unique_name(request, "ncr")
    client, _ = near_cached(client_factory, name)
    sequences, uuids = fetch_metadata(client, [name])
    count = client.partition_service.get_partition_count()
    assert sorted(partition for partition, _ in uuids) == list(range(count)), "the only member owns every partition"
    assert all(uuid is not None for _, uuid in uuids)
    assert len({uuid for _, uuid in uuids}) == count, "each partition has its own uuid"
    assert sequences == {name: {}}, "nothing invalidated yet"
    again_sequences, again_uuids = fetch_metadata(client, [name])
    assert dict(again_uuids) == dict(uuids), "a partition keeps its uuid"
    assert again_sequences == sequences


def test_each_invalidating_write_takes_one_sequence_of_its_partition(client_factory, request):
    cached, other, uncached = (unique_name(request, prefix) for prefix in ("ncr", "ncro", "ncru"))
    reader, (reader_map, other_map) = near_cached(client_factory, cached, other)
    writer_client = client_factory()
    writer = writer_client.get_map(cached).blocking()
    partition = partition_of(reader, "k")
    writer.put("k", 1)  # nobody read "k": it still invalidates
    writer.set("k", 2)
    writer.put("k", 3)
    writer.remove("k")
    writer.put("k", 4)
    assert reader_map.get("k") == 4
    writer_client.get_map(uncached).blocking().put("k", 1)  # no near cache listens to it
    other_map.get("k")
    expected = {cached: {partition: 5}, other: {}, uncached: {}}
    wait_until(lambda: fetch_metadata(reader, [cached, other, uncached])[0] == expected, message="five sequences")
    for _ in range(3):
        reader_map.get("k")
        writer.get("k")
    sequences, _ = fetch_metadata(reader, [cached, other, uncached])
    assert sequences == expected, "reads take no sequence"


def test_events_carry_the_source_the_partition_uuid_and_consecutive_sequences(client_factory, request):
    name = unique_name(request, "ncr")
    reader, (reader_map,) = near_cached(client_factory, name)
    heard = record_invalidations(reader_map)
    writer_client = client_factory()
    writer = writer_client.get_map(name).blocking()
    for value in range(4):
        writer.put("key", value)
    wait_until(lambda: len(heard) == 4, message="four invalidations")
    partition = partition_of(reader, "key")
    _, uuids = fetch_metadata(reader, [name])
    writer_uuid = writer_client._connection_manager.client_uuid
    assert [event[1:] for event in heard] == [(writer_uuid, dict(uuids)[partition], seq) for seq in (1, 2, 3, 4)]
    assert all(event[0] is not None for event in heard), "each names its key"


def record_invalidations(proxy):
    """The (key, source, partition uuid, sequence) of every invalidation `proxy` hears from now."""
    heard = []
    wrapped = proxy._wrapped
    handle = wrapped._handle_invalidation

    def recording(key, source_uuid, partition_uuid, sequence):
        heard.append((key, source_uuid, partition_uuid, sequence))
        handle(key, source_uuid, partition_uuid, sequence)

    wrapped._handle_invalidation = recording  # the listener looks the handler up per event
    return heard


def test_a_clear_takes_one_sequence_of_the_map_on_every_partition(client_factory, request):
    # An '@' in the name: the clear's invalidation is placed by the whole name all the same.
    cleared, kept = unique_name(request, "ncr") + "@part", unique_name(request, "ncrk")
    client, (cleared_map, kept_map) = near_cached(client_factory, cleared, kept)
    heard = record_invalidations(cleared_map)
    keys = ["a", "b", "c", "d", "e"]
    for key in keys:
        cleared_map.put(key, 1)
    kept_map.put("a", 1)
    kept_map.put("a", 2)
    expected_kept = {partition_of(client, "a"): 2}
    written = {}
    for key in keys:
        partition = partition_of(client, key)
        written[partition] = written.get(partition, 0) + 1

    def fetched_once(expected):
        fetched = fetch_metadata(client, [cleared, kept])
        return fetched if fetched[0] == expected else None

    _, before = wait_until(lambda: fetched_once({cleared: written, kept: expected_kept}), message="the writes' sequences")
    cleared_map.clear()
    count = client.partition_service.get_partition_count()
    after_clear = {partition: written.get(partition, 0) + 1 for partition in range(count)}
    _, after = wait_until(lambda: fetched_once({cleared: after_clear, kept: expected_kept}), message="one more everywhere")
    assert dict(after) == dict(before), "a clear keeps the partition uuids"
    # The clear's invalidation (a null key) names the map name's partition: its uuid, its sequence.
    name_partition = partition_of(client, cleared)
    clear_event = (dict(after)[name_partition], after_clear[name_partition])
    wait_until(lambda: [event[2:] for event in heard if event[0] is None] == [clear_event], message="the clear's invalidation")
    assert cleared_map.get("a") is None
    cleared_map.evict_all()  # of an empty map: it still invalidates
    after_evict = {partition: sequence + 1 for partition, sequence in after_clear.items()}
    wait_until(lambda: fetched_once({cleared: after_evict, kept: expected_kept}), message="evictAll: one more again")
    evict_event = (dict(after)[name_partition], after_evict[name_partition])
    wait_until(
        lambda: [event[2:] for event in heard if event[0] is None] == [clear_event, evict_event],
        message="the evictAll's invalidation",
    )
