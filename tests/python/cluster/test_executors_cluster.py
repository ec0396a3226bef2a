"""Executors' shutdown across a cluster of two members, as Hazelcast 5.6 keeps it: a plain or
durable executor's shutdown is recorded on the member that receives it, and only there
(isShutdown asked of the other member is false until it receives one too); a scheduled
executor's shutdown names one member, and only that member rejects the scheduler's task
requests, whichever member the client sent it to."""

import pytest
from hazelcast.errors import RejectedExecutionError, StaleTaskError

from .cluster_harness import members_of, unique_map_name, wait_until
from test_executors import answered_bool, build, send

pytestmark = pytest.mark.timeout(180)


def test_a_shutdown_is_the_receiving_members_own(make_cluster, request):
    cluster = make_cluster(2)
    cluster.start_members(range(2))
    clients = [cluster.client(addresses=[address], smart=False) for address in cluster.addresses]
    wait_until(lambda: all(len(members_of(c)) == 2 for c in clients), 60, "both clients see 2 members")
    name = unique_map_name(request.node.name)
    for is_shutdown, shutdown in ((0x080200, 0x080100), (0x180200, 0x180100)):
        assert [answered_bool(send(c, build(is_shutdown, strings=[name]))) for c in clients] == [False, False]
        send(clients[0], build(shutdown, strings=[name]))
        assert [answered_bool(send(c, build(is_shutdown, strings=[name]))) for c in clients] == [True, False]
        send(clients[1], build(shutdown, strings=[name]))
        assert [answered_bool(send(c, build(is_shutdown, strings=[name]))) for c in clients] == [True, True]
    # The scheduler shut down on the second member only, asked through the first.
    first, second = (member.uuid for member in sorted(members_of(clients[0]), key=lambda m: m.address.port))
    ports = sorted(range(2), key=lambda i: int(cluster.addresses[i].rsplit(":", 1)[1]))
    send(clients[ports[0]], build(0x1A0100, fixed=[("uuid", second)], strings=[name]))
    with pytest.raises(RejectedExecutionError):
        send(clients[ports[0]], build(0x1A0800, fixed=[("uuid", second)], strings=[name, "t"]))
    with pytest.raises(StaleTaskError):
        send(clients[ports[0]], build(0x1A0800, fixed=[("uuid", first)], strings=[name, "t"]))
