"""Java code the member cannot run: executor tasks and entry processors. Runs against ferrogrid
and a real Hazelcast 5.6.0 member (which has none of these classes), with smart and unisocket
routing.

What a Hazelcast member without the class answers (and these tests hold):
  * the executor, durable executor and scheduled executor proxies are created, listed and
    destroyed like any other (the client's `executor_service_sample` gets past `get_executor`);
  * a task (submit to a key's owner or to members) that is an IdentifiedDataSerializable of an
    unknown factory: HazelcastSerializationException "No DataSerializerFactory registered for
    namespace: <factory>"; a Portable (no factory either: read as a generic record) or a plain
    value is no Callable: IllegalArgumentException naming its class;
  * an entry processor (executeOnKey, executeOnEntries with and without a
    predicate, executeOnKeys): the same serialization error, or a ClassCastException to
    com.hazelcast.map.EntryProcessor;
  * a durable or scheduled executor's task (DurableExecutor.submitToPartition 0x180300,
    ScheduledExecutor.submitToPartition 0x1A0200, sent by hand: the Python client has neither
    proxy) is cast to Callable: the same serialization error, or a ClassCastException to
    java.util.concurrent.Callable;
  * a custom serializer's type id the member lacks: "There is no suitable de-serializer for
    type <id>";
  * the connection stays usable and the map untouched.

The executors' other requests, and the map's interceptors, replaceAll and loading, are in
test_executors.py.
"""

import pytest
from hazelcast.errors import ClassCastError, HazelcastSerializationError, IllegalArgumentError
from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import DataCodec, FixSizedTypesCodec, StringCodec
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer
from hazelcast.predicate import greater
from hazelcast.protocol.codec import (
    client_create_proxy_codec,
    client_destroy_proxy_codec,
    client_get_distributed_objects_codec,
)
from hazelcast.serialization.api import IdentifiedDataSerializable, Portable, StreamSerializer

from conftest import new_client, unique_name

EXECUTORS = ("hz:impl:executorService", "hz:impl:durableExecutorService", "hz:impl:scheduledExecutorService")
GENERIC_RECORD = "com.hazelcast.internal.serialization.impl.portable.DeserializedPortableGenericRecord"


class PortableTask(Portable):
    """The client's executor_service_sample's MessagePrinter (factory 1, class 9)."""

    def write_portable(self, writer):
        writer.write_string("message", "hello")

    def read_portable(self, reader):
        pass

    def get_factory_id(self):
        return 1

    def get_class_id(self):
        return 9


class IdentifiedTask(IdentifiedDataSerializable):
    def write_data(self, output):
        output.write_string("x")

    def read_data(self, inp):
        pass

    def get_factory_id(self):
        return 66

    def get_class_id(self):
        return 1


class Custom:
    pass


class CustomSerializer(StreamSerializer):
    def write(self, out, obj):
        out.write_int(1)

    def read(self, inp):
        return Custom()

    def get_type_id(self):
        return 1000

    def destroy(self):
        pass


def first_line(error):
    return str(error).split("\n")[0]


def invoke(client, request):
    invocation = Invocation(request, partition_id=-1, response_handler=lambda message: message)
    client._invocation_service.invoke(invocation)
    return invocation.future.result()


def listed(client):
    answer = invoke(client, client_get_distributed_objects_codec.encode_request())
    return {(o.service_name, o.name) for o in client_get_distributed_objects_codec.decode_response(answer)}


def test_executor_proxies_are_created_listed_and_destroyed(client, request):
    name = unique_name(request, "ex")
    for service in EXECUTORS:
        invoke(client, client_create_proxy_codec.encode_request(name, service))
    assert {(service, name) for service in EXECUTORS} <= listed(client)
    for service in EXECUTORS:
        invoke(client, client_destroy_proxy_codec.encode_request(name, service))
    assert not {(service, name) for service in EXECUTORS} & listed(client)


@pytest.fixture
def executor(client, request):
    return client.get_executor(unique_name(request, "ex")).blocking()


def test_a_task_of_an_unknown_factory_is_a_serialization_error(executor):
    for submit in (lambda t: executor.execute_on_key_owner("k", t), executor.execute_on_all_members):
        with pytest.raises(HazelcastSerializationError) as raised:
            submit(IdentifiedTask())
        assert "HazelcastSerializationException: No DataSerializerFactory registered for namespace: 66" in first_line(
            raised.value
        )


@pytest.mark.parametrize("task, named", [(PortableTask(), GENERIC_RECORD), ("text", "java.lang.String"), (7, "java.lang.Integer")])
def test_a_task_that_is_no_callable_is_an_illegal_argument(executor, task, named):
    for submit in (lambda t: executor.execute_on_key_owner("k", t), executor.execute_on_all_members):
        with pytest.raises(IllegalArgumentError) as raised:
            submit(task)
        assert first_line(raised.value).endswith("java.lang.IllegalArgumentException: " + named)


def entry_processor_calls(m):
    return {
        "execute_on_key": lambda p: m.execute_on_key("k", p),
        "execute_on_entries": lambda p: m.execute_on_entries(p),
        "execute_on_entries_with_predicate": lambda p: m.execute_on_entries(p, greater("this", 0)),
        "execute_on_keys": lambda p: m.execute_on_keys(["k"], p),
    }


def test_entry_processors_are_refused_as_hazelcast_refuses_them(m):
    m.put("k", 1)
    for call_name, call in entry_processor_calls(m).items():
        with pytest.raises(HazelcastSerializationError) as raised:
            call(IdentifiedTask())
        assert first_line(raised.value).endswith("No DataSerializerFactory registered for namespace: 66"), call_name
        with pytest.raises(ClassCastError) as raised:
            call(PortableTask())
        assert first_line(raised.value).endswith(
            "java.lang.ClassCastException: class %s cannot be cast to class com.hazelcast.map.EntryProcessor "
            "(%s and com.hazelcast.map.EntryProcessor are in unnamed module of loader 'app')" % (GENERIC_RECORD, GENERIC_RECORD)
        ), call_name
        with pytest.raises(ClassCastError) as raised:
            call(7)
        assert first_line(raised.value).endswith(
            "class java.lang.Integer cannot be cast to class com.hazelcast.map.EntryProcessor (java.lang.Integer is in "
            "module java.base of loader 'bootstrap'; com.hazelcast.map.EntryProcessor is in unnamed module of loader 'app')"
        ), call_name
    assert m.get("k") == 1, "the map is untouched and the connection usable"


def durable_submit(client, name, task):
    buf = create_initial_buffer(REQUEST_HEADER_SIZE, 0x180300)
    StringCodec.encode(buf, name)
    DataCodec.encode(buf, client._serialization_service.to_data(task), True)
    return buf


def scheduled_submit(client, name, task):
    buf = create_initial_buffer(REQUEST_HEADER_SIZE + 18, 0x1A0200)
    FixSizedTypesCodec.encode_byte(buf, REQUEST_HEADER_SIZE, 0)  # a Callable
    FixSizedTypesCodec.encode_long(buf, REQUEST_HEADER_SIZE + 1, 0)  # initial delay
    FixSizedTypesCodec.encode_long(buf, REQUEST_HEADER_SIZE + 9, 0)  # period
    FixSizedTypesCodec.encode_boolean(buf, REQUEST_HEADER_SIZE + 17, False)
    StringCodec.encode(buf, name)
    StringCodec.encode(buf, "task-%s" % type(task).__name__)
    DataCodec.encode(buf, client._serialization_service.to_data(task), True)
    return buf


@pytest.mark.parametrize("encode", [durable_submit, scheduled_submit], ids=["durable", "scheduled"])
def test_durable_and_scheduled_tasks_are_cast_to_callable(client, request, encode):
    name = unique_name(request, "ex")

    def submit(task):
        invocation = Invocation(OutboundMessage(encode(client, name, task), False), partition_id=3)
        client._invocation_service.invoke(invocation)
        return invocation.future.result()

    with pytest.raises(HazelcastSerializationError) as raised:
        submit(IdentifiedTask())
    assert first_line(raised.value).endswith("No DataSerializerFactory registered for namespace: 66")
    with pytest.raises(ClassCastError) as raised:
        submit(PortableTask())
    assert first_line(raised.value).endswith(
        "class %s cannot be cast to class java.util.concurrent.Callable (%s is in unnamed module of loader "
        "'app'; java.util.concurrent.Callable is in module java.base of loader 'bootstrap')" % (GENERIC_RECORD, GENERIC_RECORD)
    )
    with pytest.raises(ClassCastError) as raised:
        submit(7)
    assert first_line(raised.value).endswith(
        "class java.lang.Integer cannot be cast to class java.util.concurrent.Callable (java.lang.Integer and "
        "java.util.concurrent.Callable are in module java.base of loader 'bootstrap')"
    )


def test_a_custom_type_the_member_lacks(member, map_name):
    client = new_client(member, custom_serializers={Custom: CustomSerializer})
    try:
        m = client.get_map(map_name).blocking()
        m.put("k", 1)
        with pytest.raises(HazelcastSerializationError) as raised:
            m.execute_on_key("k", Custom())
        assert "There is no suitable de-serializer for type 1000." in first_line(raised.value)
        with pytest.raises(HazelcastSerializationError):
            client.get_executor(map_name).blocking().execute_on_key_owner("k", Custom())
    finally:
        client.shutdown()
