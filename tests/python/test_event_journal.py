"""The map event journal (Map.eventJournalSubscribe 0x014100, Map.eventJournalRead 0x014200).

The Python client 5.7.0 has no event journal API (the Java client's is
`map.subscribeToEventJournal(partitionId)` and `map.readFromEventJournal(...)`), so these tests
build the two requests by hand and send them to one partition through the client's invocation
service. Maps named `journal-*` have a journal of 2710 events (member-config.yaml): 10 in each
of the 271 partitions. Each journal item is Hazelcast's DeserializingEventJournalMapEvent, an
IdentifiedDataSerializable (factory -4, class 132) of the event type, key, new value and old value.
"""

import struct
import threading
import time

import pytest
from hazelcast.predicate import sql as sql_predicate
from hazelcast.errors import ClassCastError, UnsupportedOperationError
from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import CodecUtil, DataCodec, FixSizedTypesCodec, StringCodec
from hazelcast.protocol.client_message import (
    REQUEST_HEADER_SIZE,
    RESPONSE_HEADER_SIZE,
    OutboundMessage,
    create_initial_buffer,
)
from hazelcast.protocol.codec import ringbuffer_read_many_codec
from hazelcast.serialization.data import Data

from conftest import unique_name
from helpers import partition_of, same_partition_key, wait_until

SUBSCRIBE = 0x014100
READ = 0x014200
ADDED, REMOVED, UPDATED, EVICTED = 1, 2, 4, 8
EVENT_FACTORY_ID = -4
# MapDataSerializerHook.EVENT_JOURNAL_DESERIALIZING_MAP_EVENT in Hazelcast 5.6
EVENT_CLASS_ID = 132
PER_PARTITION_CAPACITY = 10


def _invoke(client, buf, partition_id, decode):
    invocation = Invocation(OutboundMessage(buf, True), partition_id=partition_id, response_handler=decode)
    client._invocation_service.invoke(invocation)
    return invocation.future


def _decode_sequences(message):
    frame = message.next_frame()
    oldest = FixSizedTypesCodec.decode_long(frame.buf, RESPONSE_HEADER_SIZE)
    newest = FixSizedTypesCodec.decode_long(frame.buf, RESPONSE_HEADER_SIZE + 8)
    return oldest, newest


def subscribe(client, name, partition_id, message_type=SUBSCRIBE):
    """(oldest, newest) sequence of the map's journal in the partition (of a cache's, with the
    cache's message type); a future."""
    buf = create_initial_buffer(REQUEST_HEADER_SIZE, message_type)
    StringCodec.encode(buf, name, True)
    return _invoke(client, buf, partition_id, _decode_sequences)


def read(client, name, partition_id, start, min_size, max_size, predicate=None, projection=None, message_type=READ):
    """A future of the read's answer: read_count, items (Data), item_seqs, next_seq."""
    buf = create_initial_buffer(REQUEST_HEADER_SIZE + 16, message_type)
    FixSizedTypesCodec.encode_long(buf, REQUEST_HEADER_SIZE, start)
    FixSizedTypesCodec.encode_int(buf, REQUEST_HEADER_SIZE + 8, min_size)
    FixSizedTypesCodec.encode_int(buf, REQUEST_HEADER_SIZE + 12, max_size)
    StringCodec.encode(buf, name)
    CodecUtil.encode_nullable(buf, predicate, DataCodec.encode)
    CodecUtil.encode_nullable(buf, projection, DataCodec.encode, True)
    return _invoke(client, buf, partition_id, ringbuffer_read_many_codec.decode_response)


def _read_data(payload, offset, to_object):
    (length,) = struct.unpack_from(">i", payload, offset)
    offset += 4
    if length < 0:
        return None, offset
    return to_object(Data(bytes(payload[offset : offset + length]))), offset + length


def decode_event(client, item, ids=(EVENT_FACTORY_ID, EVENT_CLASS_ID)):
    """(event type, key, new value, old value) of one journal item (a map's, or with a cache's
    factory and class `ids` a cache's)."""
    raw = bytes(item.buffer)
    assert struct.unpack_from(">i", raw, 4)[0] == -2, "IdentifiedDataSerializable"
    payload = raw[8:]
    assert payload[0] & 1 == 1
    factory, class_id, event_type = struct.unpack_from(">iii", payload, 1)
    assert (factory, class_id) == ids
    to_object = client._serialization_service.to_object
    offset = 13
    key, offset = _read_data(payload, offset, to_object)
    new_value, offset = _read_data(payload, offset, to_object)
    old_value, offset = _read_data(payload, offset, to_object)
    assert offset == len(payload)
    return event_type, key, new_value, old_value


def events(client, answer, ids=(EVENT_FACTORY_ID, EVENT_CLASS_ID)):
    return [decode_event(client, item, ids) for item in answer["items"]]


@pytest.fixture
def journal_map(request, client):
    name = unique_name(request, prefix="journal")
    proxy = client.get_map(name).blocking()
    yield name, proxy
    proxy.destroy()


def test_subscribe_and_read_see_each_change_with_its_sequence(client, journal_map):
    name, m = journal_map
    partition = partition_of("k")
    assert subscribe(client, name, partition).result() == (0, -1), "an empty journal"
    m.put("k", "v1")
    m.put("k", "v2")
    m.set("k", "v3")
    m.remove("k")
    m.put("k", "v4")
    m.delete("k")
    assert subscribe(client, name, partition).result() == (0, 5)
    answer = read(client, name, partition, 0, 0, 100).result()
    assert answer["read_count"] == 6
    assert list(answer["item_seqs"]) == [0, 1, 2, 3, 4, 5]
    assert answer["next_seq"] == 6
    assert events(client, answer) == [
        (ADDED, "k", "v1", None),
        (UPDATED, "k", "v2", "v1"),
        (UPDATED, "k", "v3", "v2"),
        (REMOVED, "k", None, "v3"),
        (ADDED, "k", "v4", None),
        (REMOVED, "k", None, "v4"),
    ]
    middle = read(client, name, partition, 2, 1, 2).result()
    assert list(middle["item_seqs"]) == [2, 3] and middle["next_seq"] == 4
    other = partition_of("other") if partition_of("other") != partition else partition_of("other-2")
    assert subscribe(client, name, other).result() == (0, -1), "each partition has its own journal"


def test_a_full_journal_drops_the_oldest_and_a_stale_start_jumps_ahead(client, journal_map):
    name, m = journal_map
    partition = partition_of("k")
    for i in range(15):
        m.put("k", i)
    oldest, newest = subscribe(client, name, partition).result()
    assert (oldest, newest) == (15 - PER_PARTITION_CAPACITY, 14)
    answer = read(client, name, partition, 0, 1, 100).result()
    assert list(answer["item_seqs"]) == list(range(5, 15)), "a start before the oldest reads from the oldest"
    assert events(client, answer)[0] == (UPDATED, "k", 5, 4)
    assert answer["next_seq"] == 15
    beyond = read(client, name, partition, 1000, 0, 10).result()
    assert beyond["read_count"] == 0 and list(beyond["items"]) == []


def test_a_read_waits_for_its_minimum(client, journal_map):
    name, m = journal_map
    partition = partition_of("k")
    m.put("k", "first")
    pending = read(client, name, partition, 1, 2, 10)
    time.sleep(0.5)
    assert not pending.done(), "no event after sequence 0 yet"
    m.put(same_partition_key("k"), "second")
    time.sleep(0.3)
    assert not pending.done(), "one event of the two it waits for"
    m.remove("k")
    wait_until(pending.done, message="the read answered")
    answer = pending.result()
    assert list(answer["item_seqs"]) == [1, 2]
    assert [event[0] for event in events(client, answer)] == [ADDED, REMOVED]


def test_a_read_is_answered_by_remove_all_with_a_predicate(client, journal_map):
    """removeAll(predicate) runs over every partition, outside a key request: its removals
    answer the journal reads waiting for them."""
    name, m = journal_map
    partition = partition_of("k")
    m.put("k", "first")
    pending = read(client, name, partition, 1, 1, 10)
    time.sleep(0.3)
    assert not pending.done(), "no event after sequence 0 yet"
    m.remove_all(sql_predicate("this = 'first'"))
    wait_until(pending.done, message="the read answered by removeAll")
    assert events(client, pending.result()) == [(REMOVED, "k", None, "first")]


def test_put_all_evict_and_replace_are_journaled(client, journal_map):
    name, m = journal_map
    partition = partition_of("k")
    m.put_all({"k": "a"})
    m.replace("k", "b")
    m.replace_if_same("k", "b", "c")
    m.evict("k")
    answer = read(client, name, partition, 0, 0, 100).result()
    assert events(client, answer) == [
        (ADDED, "k", "a", None),
        (UPDATED, "k", "b", "a"),
        (UPDATED, "k", "c", "b"),
        (EVICTED, "k", None, "c"),
    ]


def test_a_map_without_a_journal_is_refused(client, request):
    name = unique_name(request, prefix="plain")
    with pytest.raises(UnsupportedOperationError) as subscribed:
        subscribe(client, name, 0).result()
    assert "Cannot subscribe to event journal because it is either not configured or disabled for map" in str(
        subscribed.value
    )
    with pytest.raises(UnsupportedOperationError) as read_one:
        read(client, name, 0, 0, 0, 10).result()
    assert "Cannot subscribe to event journal because it is either not configured or disabled for" in str(
        read_one.value
    )


def test_a_predicate_that_is_not_java_code_is_refused(client, journal_map):
    name, _ = journal_map
    predicate = client._serialization_service.to_data("not a predicate")
    with pytest.raises(ClassCastError) as refused:
        read(client, name, 0, 0, 0, 10, predicate=predicate).result()
    assert "java.util.function.Predicate" in str(refused.value)


def test_concurrent_writers_get_consecutive_sequences(client, journal_map):
    name, m = journal_map
    keys = ["k"] + [same_partition_key("k", "w%d" % i) for i in range(3)]
    threads = [threading.Thread(target=lambda key=key: [m.put(key, i) for i in range(2)]) for key in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    answer = read(client, name, partition_of("k"), 0, 0, 100).result()
    assert list(answer["item_seqs"]) == list(range(8)), "8 events, each with its own sequence"


def test_an_expiry_is_journaled_as_an_eviction(client, journal_map):
    name, m = journal_map
    touched, swept = "k", same_partition_key("k", "s")
    partition = partition_of(touched)
    m.put(touched, "v", ttl=1)
    m.put(swept, "w", ttl=1)
    time.sleep(1.5)
    assert m.get(touched) is None

    def both_expired():
        answer = read(client, name, partition, 0, 0, 100).result()
        return answer if answer["read_count"] == 4 else None

    # The untouched entry goes with the member's expiry sweep.
    answer = wait_until(both_expired, timeout=30, message="both expiries journaled")
    journaled = events(client, answer)
    assert journaled[:2] == [(ADDED, touched, "v", None), (ADDED, swept, "w", None)]
    assert sorted(journaled[2:], key=lambda event: event[1]) == sorted(
        [(EVICTED, touched, None, "v"), (EVICTED, swept, None, "w")], key=lambda event: event[1]
    )


def test_a_journal_added_by_dynamic_configuration_records_events(client, request):
    import dynamic_config

    name = unique_name(request, prefix="dynjournal")
    dynamic_config.add(client, dynamic_config.map_config(name, event_journal=(True, 2710, 0))).result()
    m = client.get_map(name).blocking()
    try:
        m.put("k", "v")
        answer = read(client, name, partition_of("k"), 0, 1, 10).result()
        assert events(client, answer) == [(ADDED, "k", "v", None)]
    finally:
        m.destroy()
