"""Distributed-object listeners (Client.AddDistributedObjectListener 0x000900,
RemoveDistributedObjectListener 0x000A00) as a user of the Python client sees them. Runs
against ferrogrid and against a real Hazelcast 5.6.0 member.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * the first proxy of an object (any client's `get_map`, `get_queue`, …) is announced once as
    CREATED with the object's name, its service name and the uuid of the client that created
    it; getting the proxy again announces nothing;
  * destroy announces DESTROYED with the destroying client's uuid; a client that gets a proxy
    of the name afterwards creates it again (CREATED), while a client that kept its proxy and
    goes on using it announces nothing;
  * a listener hears objects created by its own client and by others;
  * remove answers True once, then False; a removed listener hears nothing more.
"""

import time

import pytest

from conftest import unique_name
from helpers import wait_until

SETTLE = 0.5  # s: for events that must NOT arrive


class ObjectLog:
    def __init__(self):
        self.events = []

    def __call__(self, event):
        self.events.append((event.event_type, event.service_name, event.name, str(event.source)))

    def about(self, name):
        return [event for event in self.events if event[2] == name]


def client_uuid(client):
    return str(client._connection_manager.client_uuid)


@pytest.fixture
def watcher(client):
    log = ObjectLog()
    registration = client.add_distributed_object_listener(log).result()
    yield log, registration
    client.remove_distributed_object_listener(registration).result()


def test_another_clients_map_is_announced_once_with_its_creator(watcher, client_factory, request):
    log, _ = watcher
    other = client_factory()
    name = unique_name(request)
    other.get_map(name).blocking().put("k", "v")
    wait_until(lambda: log.about(name), message="a CREATED event")
    other.get_map(name).blocking().get("k")
    client_factory().get_map(name).blocking().get("k")
    time.sleep(SETTLE)
    assert log.about(name) == [("CREATED", "hz:impl:mapService", name, client_uuid(other))]


def test_destroy_is_announced_and_a_new_proxy_is_created_again(watcher, client, client_factory, request):
    log, _ = watcher
    other = client_factory()
    name = unique_name(request)
    proxy = client.get_map(name).blocking()
    proxy.put("k", "v")
    other.get_map(name).blocking().destroy()
    wait_until(lambda: len(log.about(name)) == 2, message="CREATED and DESTROYED")
    proxy.put("k", "v")  # a proxy a client already has is not created again
    third = client_factory()
    third.get_map(name).blocking().put("k", "v")
    wait_until(lambda: len(log.about(name)) == 3, message="CREATED again")
    time.sleep(SETTLE)
    assert log.about(name) == [
        ("CREATED", "hz:impl:mapService", name, client_uuid(client)),
        ("DESTROYED", "hz:impl:mapService", name, client_uuid(other)),
        ("CREATED", "hz:impl:mapService", name, client_uuid(third)),
    ]


@pytest.mark.parametrize(
    "get, service",
    [
        ("get_queue", "hz:impl:queueService"),
        ("get_list", "hz:impl:listService"),
        ("get_set", "hz:impl:setService"),
        ("get_multi_map", "hz:impl:multiMapService"),
        ("get_ringbuffer", "hz:impl:ringbufferService"),
        ("get_topic", "hz:impl:topicService"),
    ],
)
def test_every_structure_is_announced_under_its_service(watcher, client_factory, request, get, service):
    log, _ = watcher
    other = client_factory()
    name = unique_name(request)
    proxy = getattr(other, get)(name).blocking()
    wait_until(lambda: log.about(name), message="a CREATED event")
    proxy.destroy()
    wait_until(lambda: len(log.about(name)) == 2, message="a DESTROYED event")
    time.sleep(SETTLE)
    assert log.about(name) == [
        ("CREATED", service, name, client_uuid(other)),
        ("DESTROYED", service, name, client_uuid(other)),
    ]


def test_a_removed_listener_hears_nothing_more(client, client_factory, request):
    log = ObjectLog()
    registration = client.add_distributed_object_listener(log).result()
    first, second = unique_name(request, "a"), unique_name(request, "b")
    client_factory().get_map(first)
    wait_until(lambda: log.about(first), message="the first CREATED")
    assert client.remove_distributed_object_listener(registration).result() is True
    assert client.remove_distributed_object_listener(registration).result() is False
    client_factory().get_map(second)
    time.sleep(SETTLE)
    assert log.about(second) == []


def test_two_listeners_each_hear_an_event_once(client, client_factory, request):
    logs = [ObjectLog(), ObjectLog()]
    registrations = [client.add_distributed_object_listener(log).result() for log in logs]
    name = unique_name(request)
    client_factory().get_set(name)
    for log in logs:
        wait_until(lambda log=log: log.about(name), message="a CREATED event")
    time.sleep(SETTLE)
    assert [len(log.about(name)) for log in logs] == [1, 1]
    for registration in registrations:
        assert client.remove_distributed_object_listener(registration).result() is True
