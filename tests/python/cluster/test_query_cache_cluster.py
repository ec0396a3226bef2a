"""The Java client's query cache (`tests/java/QueryCache.java`: initial contents, changes
entering and leaving the predicate, a listener on the cache, batching, coalescing, no
population, destroy) against three members: every member publishes the events of the
partitions it owns, to a smart client directly and, for a unisocket client, through the member
it is connected to. A member that joins publishes the events of the partitions it takes over,
which start their sequences over (on the wire: `query_cache_wire.py`)."""

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest
from hazelcast.predicate import greater_or_equal

from . import cluster_harness
from .cluster_harness import partition_owners, single_member, unique_map_name, wait_until
from .test_cluster import FORM_TIMEOUT, wait_members

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from query_cache_wire import add_listener, made_publishable, publisher_create  # noqa: E402

ADDED, UPDATED = 1, 4

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    javac, jar = shutil.which("javac"), single_member.hazelcast_jar()
    if javac is None or not jar.exists():
        pytest.skip("needs javac and the Hazelcast jar (%s)" % jar)
    out = tmp_path_factory.mktemp("query-cache-java")
    sources = [cluster_harness.HERE.parent.parent / "java" / name for name in ("Harness.java", "QueryCache.java")]
    subprocess.run([javac, "-cp", str(jar), "-d", str(out), *map(str, sources)], check=True, timeout=120)
    return out, jar


@pytest.mark.parametrize("routing", ["smart", "unisocket"])
def test_the_java_clients_query_cache_on_three_members(make_cluster, compiled, routing):
    out, jar = compiled
    cluster = make_cluster(3, cluster_name="dev")  # tests/java/QueryCache.java's cluster name
    cluster.start_members(range(3))
    observer = cluster.client(smart=True)
    wait_members(observer, 3, FORM_TIMEOUT)
    command = ["java", "-Xmx256m", "-Dharness.unisocket=%s" % (routing == "unisocket"), "-cp", "%s:%s" % (out, jar)]
    result = subprocess.run(
        command + ["QueryCache", cluster.addresses[0]], capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0 and "all answers right" in result.stdout, result.stdout + result.stderr


def _applied(events):
    """What the Java client's subscriber applies of `events` (arrival order): per partition, the
    event whose sequence follows the last applied one; sequence -1 (a partition that changed
    hands) starts the partition over. Returns (applied, out of sequence)."""
    current, applied, broken = {}, [], []
    for sequence, kind, partition, key, value, _ in events:
        if sequence == -1:
            current[partition] = 0
        elif sequence == current.get(partition, 0) + 1:
            current[partition] = sequence
            applied.append((kind, key, value))
        else:
            broken.append((partition, current.get(partition, 0), sequence))
    return applied, broken


def test_a_caches_events_go_on_in_sequence_when_a_member_joins(make_cluster, request):
    """Two members; a cache of every entry; a third member joins and partitions move to it: the
    members that gave them up end their sequences, the joiner publishes their events, and the
    Java client's subscriber (simulated: `_applied`) applies every change made after the join,
    none out of sequence."""
    cluster = make_cluster(3)
    cluster.start_members(range(2))
    client = cluster.client(smart=True)
    wait_members(client, 2, FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    entries = client.get_map(name).blocking()
    entries.put("warm-up", -1)  # (a Hazelcast member assigns partitions on first use)
    cache = str(uuid.uuid4())
    events, _ = add_listener(client, cache)
    assert publisher_create(client, name, cache, greater_or_equal("this", 0), True) == {}
    assert made_publishable(client, name, cache) is True
    keys = ["k%d" % i for i in range(120)]
    for key in keys:
        entries.put(key, 1)
    wait_until(lambda: len(_applied(events.events())[0]) >= len(keys), 20, "the changes before the join")

    joiner = cluster.start(2, member_list=cluster.addresses)
    joiner.wait_ready(FORM_TIMEOUT)
    wait_members(client, 3, FORM_TIMEOUT)
    wait_until(lambda: len(partition_owners(client)) == 3, FORM_TIMEOUT, lambda: partition_owners(client))
    wait_until(lambda: len(client._connection_manager.active_connections) == 3, 30, "a connection to the joiner")
    time.sleep(2)  # the client registers its listener with the joiner
    for key in keys:
        entries.put(key, 2)
    expected = [(ADDED, key, 1) for key in keys] + [(UPDATED, key, 2) for key in keys]

    def all_applied():
        applied, _ = _applied(events.events())
        return sorted(applied) == sorted(expected)

    wait_until(all_applied, 30, lambda: "applied %d of %d, out of sequence: %s" % (
        len(_applied(events.events())[0]), len(expected), _applied(events.events())[1][:10]))
    assert _applied(events.events())[1] == [], "no event out of sequence"


def test_a_disconnected_clients_query_cache_is_dropped(make_cluster, request):
    """ferrogrid, one member that publishes at most one query cache
    (`ferrogrid.limits.max-query-caches: 1`): a second cache is refused while the first's client
    is connected, and created once that client has gone (its publisher dropped with its
    listener, as Hazelcast drops a disconnected client's query caches)."""
    cluster = make_cluster(1)
    if cluster.target != "ferrogrid":
        pytest.skip("the bound is ferrogrid's")
    member = cluster.start(0, extra_ferrogrid_yaml="  limits:\n    max-query-caches: 1\n")
    member.wait_ready(FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    first, second = cluster.client(smart=True), cluster.client(smart=True)
    add_listener(first, "first")
    assert publisher_create(first, name, "first", greater_or_equal("this", 0), True) == {}
    add_listener(second, "second")
    with pytest.raises(Exception, match="max-query-caches"):
        publisher_create(second, name, "second", greater_or_equal("this", 0), True)
    first.shutdown()
    wait_until(
        lambda: "query caches dropped" in member.log_text(), 10, "the first client's cache is not dropped"
    )
    assert publisher_create(second, name, "second", greater_or_equal("this", 0), True) == {}
