"""Dynamic configuration on a cluster (see conftest.py for running): a map configuration added
through one member (a unisocket client connected to member A only) governs the map's entries in
every partition, those member B owns included; a member that joins afterwards holds it too
(its own partitions' entries get the time-to-live, and a conflicting definition sent to it alone
is refused while the same one is accepted).
"""

import pytest
from hazelcast.errors import InvalidConfigurationError

import dynamic_config as dc

from .cluster_harness import unique_map_name
from .test_cluster import FORM_TIMEOUT, join_member, wait_members

pytestmark = pytest.mark.timeout(120)

KEYS = 300


def owners_of(client, keys):
    service = client.partition_service
    return {service.get_partition_owner(service.get_partition_id(key)) for key in keys}


def ttls(proxy, keys):
    return {proxy.get_entry_view(key).ttl for key in keys}


def test_a_config_added_through_one_member_governs_every_member_and_a_joiner(make_cluster, request):
    cluster = make_cluster(3)
    two = cluster.addresses[:2]
    cluster.start_members(range(2), member_list=two)
    smart = cluster.client(two, smart=True)
    members = wait_members(smart, 2, FORM_TIMEOUT)
    through_a = cluster.client(two[:1], smart=False)
    base = unique_map_name(request.node.name)
    assert dc.add(through_a, dc.map_config(base + "-*", ttl=40)).result() is None

    keys = ["key-%d" % i for i in range(KEYS)]
    before = smart.get_map(base + "-before").blocking()
    before.put_all({key: key for key in keys})
    assert owners_of(smart, keys) == {member.uuid for member in members}, "both members own some keys"
    assert ttls(before, keys) == {40_000}

    members = join_member(cluster, smart, 2)
    joiner = cluster.client([cluster.addresses[2]], smart=False)
    with pytest.raises(InvalidConfigurationError):
        dc.add(joiner, dc.map_config(base + "-*", ttl=41)).result()
    assert dc.add(joiner, dc.map_config(base + "-*", ttl=40)).result() is None

    after = smart.get_map(base + "-after").blocking()
    after.put_all({key: key for key in keys})
    assert owners_of(smart, keys) == {member.uuid for member in members}, "the joiner owns some keys"
    assert ttls(after, keys) == {40_000}
    assert ttls(before, keys) == {40_000}, "entries that moved to the joiner keep theirs"
