"""Compact objects (the Python client's CompactSerializer; Client.SendSchema 0x001300,
FetchSchema 0x001400, SendAllSchemas 0x001500), as a user of the Python client sees them.
Runs against ferrogrid and against a real Hazelcast 5.6.0 member, with smart and unisocket
routing.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * before the first value of a Compact type, the client sends its schema; the member answers
    with the members that hold it, and the put goes on;
  * a value is stored as the client serialized it: any client reads it back, a client that
    has the serializer but never wrote the type fetches the schema (FetchSchema) first;
  * FetchSchema of an unknown id answers null; the same schema sent twice is one schema;
  * Compact keys route and compare by their serialized bytes like any other key.
"""

import pytest
from hazelcast.protocol.codec import client_fetch_schema_codec, client_send_schema_codec
from hazelcast.serialization.api import CompactReader, CompactSerializer, CompactWriter
from hazelcast.serialization.compact import FieldDescriptor, RabinFingerprint, Schema
from hazelcast.serialization.api import FieldKind

from helpers import destroy_after


class Employee:
    def __init__(self, name, age, manager=None, scores=None):
        self.name, self.age, self.manager, self.scores = name, age, manager, scores

    def __eq__(self, other):
        return isinstance(other, Employee) and vars(self) == vars(other)

    def __repr__(self):
        return "Employee(%r)" % vars(self)


class EmployeeSerializer(CompactSerializer[Employee]):
    def read(self, reader: CompactReader) -> Employee:
        return Employee(
            reader.read_string("name"),
            reader.read_int32("age"),
            reader.read_compact("manager"),
            reader.read_array_of_float64("scores"),
        )

    def write(self, writer: CompactWriter, obj: Employee) -> None:
        writer.write_string("name", obj.name)
        writer.write_int32("age", obj.age)
        writer.write_compact("manager", obj.manager)
        writer.write_array_of_float64("scores", obj.scores)

    def get_type_name(self) -> str:
        return "ferrogrid.test.Employee"

    def get_class(self):
        return Employee


@pytest.fixture
def employees(client_factory, map_name):
    client = client_factory(compact_serializers=[EmployeeSerializer()])
    yield from destroy_after(client.get_map(map_name).blocking())


def test_compact_values_and_keys_are_stored_and_read_back(employees, client_factory, map_name):
    boss = Employee("Ada", 52, None, [9.5])
    alice = Employee("Alice", 31, boss, [1.0, 2.5])
    assert employees.put("alice", alice) is None
    assert employees.get("alice") == alice
    employees.put(boss, "a Compact key")
    assert employees.get(Employee("Ada", 52, None, [9.5])) == "a Compact key"
    assert employees.contains_value(alice)
    # A second client with the serializer never wrote the type: it fetches the schema.
    reader = client_factory(compact_serializers=[EmployeeSerializer()]).get_map(map_name).blocking()
    assert reader.get("alice") == alice
    assert sorted(e.name for e in reader.values() if isinstance(e, Employee)) == ["Alice"]


def fingerprint_schema(type_name, fields):
    return Schema(type_name, [FieldDescriptor(name, FieldKind(kind)) for name, kind in fields])


def test_fetch_schema_answers_what_was_sent_and_null_for_an_unknown_id(client, request):
    invoke = client._invocation_service.invoke
    from hazelcast.invocation import Invocation

    def call(message, decode):
        invocation = Invocation(message, response_handler=decode)
        invoke(invocation)
        return invocation.future.result()

    schema = fingerprint_schema("ferrogrid.test.Fetched-%s" % request.node.name, [("b", FieldKind.INT64), ("a", FieldKind.STRING)])
    schema_id = RabinFingerprint.of(schema)
    assert call(client_fetch_schema_codec.encode_request(schema_id), client_fetch_schema_codec.decode_response) is None
    for _ in range(2):  # the same schema twice is one schema
        members = call(client_send_schema_codec.encode_request(schema), client_send_schema_codec.decode_response)
        assert {m.uuid for m in client.cluster_service.get_members()} <= set(members)
    fetched = call(client_fetch_schema_codec.encode_request(schema_id), client_fetch_schema_codec.decode_response)
    assert fetched.type_name == schema.type_name
    assert [(f.name, f.kind) for f in fetched.fields] == [("a", FieldKind.STRING), ("b", FieldKind.INT64)]
    assert RabinFingerprint.of(fetched) == schema_id
