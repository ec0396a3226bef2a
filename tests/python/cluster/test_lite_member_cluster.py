"""Lite members (`lite-member: enabled: true`): members that join the cluster and serve clients
but hold no partition (see conftest.py).

Checked on ferrogrid and on Hazelcast 5.6 alike:
  * a data member and a lite member: the member list marks the lite one (MemberInfo.liteMember,
    what clients read), a unisocket client connected only to the lite member puts, gets and
    counts (a PN counter) through it, what it wrote is what a smart client reads, and every
    partition is owned by the data member (Hazelcast assigns partitions at their first use, so
    owners are checked after the writes);
  * a cluster of only lite members: every PN counter call fails with NoDataMemberInClusterError
    (the official client's own lite-member tests: the client refuses, seeing no data member),
    and so do a map's put, get and size and a queue's offer (the member refuses);
  * promotion (MC.promoteLiteMember, what Cluster.promoteLocalLiteMember does): the lite member
    of a data + lite cluster becomes a data member and takes its share of the partitions; the
    only member of a lite cluster becomes a data member and then serves every call; a data
    member asked to promote itself answers IllegalStateError.
"""

import pytest
from hazelcast.errors import IllegalStateError, NoDataMemberInClusterError
from hazelcast.invocation import Invocation
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer

from .cluster_harness import members_of, partition_owners, unique_map_name, wait_until

pytestmark = pytest.mark.timeout(150)

LITE = "  lite-member:\n    enabled: true\n"
FORM_TIMEOUT = 30.0
# MC.promoteLiteMember (service 0x20, method 9): no parameters, an empty answer.
MC_PROMOTE_LITE_MEMBER = 0x200900


def lite_flags(client):
    """{port: lite_member} of the client's member list."""
    return {m.address.port: m.lite_member for m in members_of(client)}


def wait_lite_flags(client, expected):
    return wait_until(
        lambda: lite_flags(client) == expected,
        FORM_TIMEOUT,
        lambda: "client sees %r, expected %r" % (lite_flags(client), expected),
    )


def uuid_of(client, port):
    return next(m.uuid for m in members_of(client) if m.address.port == port)


def promote(client, port):
    """Sends MC.promoteLiteMember to the member on `port` over the client's connection to it."""
    uuid = uuid_of(client, port)
    connection = client._connection_manager.get_connection(uuid)
    assert connection is not None, "the client has no connection to the member on port %d" % port
    request = OutboundMessage(create_initial_buffer(REQUEST_HEADER_SIZE, MC_PROMOTE_LITE_MEMBER), False)
    invocation = Invocation(request, connection=connection, response_handler=lambda message: message)
    client._invocation_service.invoke(invocation)
    return invocation.future.result()


def test_lite_member_holds_no_partition_and_serves_clients(make_cluster):
    cluster = make_cluster(2)
    data, lite = cluster.start(0), cluster.start(1, extra_yaml=LITE)
    data.wait_ready(), lite.wait_ready()
    smart = cluster.client()
    wait_lite_flags(smart, {data.port: False, lite.port: True})
    data_uuid = uuid_of(smart, data.port)

    # A unisocket client on the lite member only: its requests are forwarded to the owner.
    through_lite = cluster.client([lite.address], smart=False)
    assert lite_flags(through_lite) == {data.port: False, lite.port: True}
    name = unique_map_name("lite")
    lite_map = through_lite.get_map(name).blocking()
    for i in range(100):
        lite_map.put("k%d" % i, "v%d" % i)
    assert lite_map.get("k7") == "v7"
    assert lite_map.size() == 100
    counter = through_lite.get_pn_counter(name).blocking()
    assert counter.add_and_get(5) == 5
    assert counter.get_and_subtract(2) == 5
    assert counter.get() == 3

    # What went through the lite member is on the data member.
    smart_map = smart.get_map(name).blocking()
    assert smart_map.get_all(["k%d" % i for i in range(100)]) == {"k%d" % i: "v%d" % i for i in range(100)}
    assert smart.get_pn_counter(name).blocking().get() == 3
    # Every partition is the data member's (Hazelcast assigns them at the first use, above).
    wait_until(
        lambda: partition_owners(smart) == {data_uuid: 271},
        FORM_TIMEOUT,
        lambda: "partition owners %r, expected all on the data member" % partition_owners(smart),
    )

    # Promotion: it takes its share, and the data stays.
    promote(smart, lite.port)
    wait_lite_flags(smart, {data.port: False, lite.port: False})
    lite_uuid = uuid_of(smart, lite.port)
    wait_until(
        lambda: set(partition_owners(smart)) == {data_uuid, lite_uuid},
        FORM_TIMEOUT,
        lambda: "partition owners %r after the promotion" % partition_owners(smart),
    )
    assert sum(partition_owners(smart).values()) == 271
    assert smart_map.size() == 100
    assert lite_map.get("k42") == "v42"


def test_a_cluster_of_only_lite_members_has_no_data_member(make_cluster):
    cluster = make_cluster(1)
    member = cluster.start(0, extra_yaml=LITE)
    member.wait_ready()
    client = cluster.client()
    wait_lite_flags(client, {member.port: True})

    # The official client's PNCounterLiteMemberTest: every call, NoDataMemberInClusterError.
    counter = client.get_pn_counter("lite-only").blocking()
    calls = [
        counter.get,
        lambda: counter.get_and_add(1),
        lambda: counter.add_and_get(1),
        lambda: counter.get_and_subtract(1),
        lambda: counter.subtract_and_get(1),
        counter.decrement_and_get,
        counter.increment_and_get,
        counter.get_and_decrement,
        counter.get_and_increment,
    ]
    for call in calls:
        with pytest.raises(NoDataMemberInClusterError):
            call()
    # The member itself refuses partition work: no partition has an owner, nor will have.
    lite_map = client.get_map("lite-only").blocking()
    for call in (lambda: lite_map.put("a", "b"), lambda: lite_map.get("a"), lite_map.size):
        with pytest.raises(NoDataMemberInClusterError):
            call()
    with pytest.raises(NoDataMemberInClusterError):
        client.get_queue("lite-only").blocking().offer("x")

    # Promoted, it is a data member that owns everything and serves every call.
    promote(client, member.port)
    wait_lite_flags(client, {member.port: False})
    assert lite_map.put("a", "b") is None
    assert lite_map.get("a") == "b"
    assert client.get_pn_counter("lite-only").blocking().increment_and_get() == 1
    uuid = uuid_of(client, member.port)
    wait_until(lambda: partition_owners(client) == {uuid: 271}, FORM_TIMEOUT, lambda: repr(partition_owners(client)))
    # A data member is not promoted again.
    with pytest.raises(IllegalStateError):
        promote(client, member.port)
