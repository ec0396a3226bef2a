"""Query-cache (ContinuousQuery, service 22) requests built as the Java client encodes them."""
import struct
import threading
import time

from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import CodecUtil, DataCodec, EntryListCodec, ListMultiFrameCodec, StringCodec, FixSizedTypesCodec
from hazelcast.protocol.client_message import RESPONSE_HEADER_SIZE, EVENT_HEADER_SIZE, OutboundMessage
from hazelcast.protocol.codec import map_remove_entry_listener_codec
from dynamic_config import _frame, request, text

CREATE_WITH_VALUE, CREATE, MADE_PUBLISHABLE, ADD_LISTENER, SET_READ_CURSOR, DESTROY = (
    0x160100, 0x160200, 0x160300, 0x160400, 0x160500, 0x160600)
SINGLE_EVENT, BATCH_EVENT = 0x160402, 0x160403


def invoke(client, buf, partition_id=-1, decode=None):
    inv = Invocation(OutboundMessage(buf, False), partition_id=partition_id, response_handler=decode or (lambda m: m))
    client._invocation_service.invoke(inv)
    return inv.future.result()


def publisher_create(client, map_name, cache, predicate, include_value, batch_size=1, buffer_size=16,
                     delay_seconds=0, populate=True, coalesce=False):
    ser = client._serialization_service
    fixed = [("int", batch_size), ("int", buffer_size), ("long", delay_seconds), ("bool", populate), ("bool", coalesce)]
    pred = _frame(bytes(ser.to_data(predicate).buffer))
    buf = request(CREATE_WITH_VALUE if include_value else CREATE, fixed, [text(map_name), text(cache), pred])

    def decode(msg):
        msg.next_frame()
        if include_value:
            return {ser.to_object(k): ser.to_object(v) for k, v in EntryListCodec.decode(msg, DataCodec.decode, DataCodec.decode)}
        return sorted(ser.to_object(k) for k in ListMultiFrameCodec.decode(msg, DataCodec.decode))

    return invoke(client, buf, decode=decode)


def _bool(msg):
    return FixSizedTypesCodec.decode_boolean(msg.next_frame().buf, RESPONSE_HEADER_SIZE)


def made_publishable(client, map_name, cache):
    return invoke(client, request(MADE_PUBLISHABLE, [], [text(map_name), text(cache)]), decode=_bool)


def set_read_cursor(client, map_name, cache, partition_id, sequence):
    buf = request(SET_READ_CURSOR, [("long", sequence)], [text(map_name), text(cache)])
    return invoke(client, buf, partition_id, decode=_bool)


def destroy_cache(client, map_name, cache):
    return invoke(client, request(DESTROY, [], [text(map_name), text(cache)]), decode=_bool)


class CacheEvents:
    """Events of a ContinuousQuery.addListener registration, in arrival order:
    (message type, batch partition or None, [(sequence, type, partition, key, value, map name)])."""

    def __init__(self, client):
        self._ser = client._serialization_service
        self.messages = []
        self._cond = threading.Condition()

    def _event_data(self, msg):
        msg.next_frame()  # BEGIN
        fixed = msg.next_frame().buf
        seq, kind, pid = struct.unpack_from("<qii", fixed, 0)
        key = CodecUtil.decode_nullable(msg, DataCodec.decode)
        value = CodecUtil.decode_nullable(msg, DataCodec.decode)
        name = StringCodec.decode(msg)
        CodecUtil.fast_forward_to_end_frame(msg)
        obj = self._ser.to_object
        return (seq, kind, pid, obj(key) if key else None, obj(value) if value else None, name)

    def __call__(self, msg):
        kind = msg.get_message_type()
        initial = msg.next_frame()
        batch_pid = None
        if kind == SINGLE_EVENT:
            events = [self._event_data(msg)]
        else:
            batch_pid = FixSizedTypesCodec.decode_int(initial.buf, EVENT_HEADER_SIZE)
            msg.next_frame()  # BEGIN of the list
            events = []
            while not CodecUtil.next_frame_is_data_structure_end_frame(msg):
                events.append(self._event_data(msg))
            msg.next_frame()
            StringCodec.decode(msg)
        with self._cond:
            self.messages.append((kind, batch_pid, events))
            self._cond.notify_all()

    def events(self):
        with self._cond:
            return [e for m in self.messages for e in m[2]]

    def wait_events(self, count, timeout=20.0):
        deadline = time.monotonic() + timeout
        with self._cond:
            while sum(len(m[2]) for m in self.messages) < count:
                remaining = deadline - time.monotonic()
                assert remaining > 0, "%r, expected %d events" % (self.messages, count)
                self._cond.wait(remaining)
        return self.events()


def add_listener(client, cache):
    """The cache's listener, local-only for a smart client (registered with every member, each
    sending its own partitions' events), as the Java client's listener service asks."""
    events = CacheEvents(client)
    smart = getattr(client._config, "smart_routing", True)
    buf = request(ADD_LISTENER, [("bool", bool(smart))], [text(cache)])
    reg = client._listener_service.register_listener(
        OutboundMessage(buf, False),
        lambda m: FixSizedTypesCodec.decode_uuid(m.next_frame().buf, RESPONSE_HEADER_SIZE),
        lambda r: map_remove_entry_listener_codec.encode_request(cache, r),
        events,
    ).result()
    return events, reg
