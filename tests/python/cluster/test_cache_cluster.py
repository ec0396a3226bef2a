"""JCache on several members (see conftest.py for running): the Java client's JCache program
(`tests/java/JCache.java`) against three members, smart and unisocket; and a cache's entries
through a member joining (it must know the cache: its configuration reaches joiners) and a
kill -9 (its backups take over), with its event journal (same events, same sequences), requests
built by hand as in `test_cache.py`."""

import shutil
import subprocess

import pytest

from test_cache import GET, PREFIX, PUT, SIZE, _decode_data, _int, _invoke, _key_partition, _on_key
from test_cache_journal import CACHE_EVENT, READ as JOURNAL_READ
from test_event_journal import events, read
from cache_codec import create_config
from dynamic_config import _frame, request, text
from member import cache_api_jar

from . import cluster_harness
from .cluster_harness import single_member, unique_map_name
from .test_cluster import DROP_TIMEOUT, FORM_TIMEOUT, join_member, wait_members

pytestmark = pytest.mark.timeout(300)

ENTRIES = 300


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    javac, jar, api = shutil.which("javac"), single_member.hazelcast_jar(), cache_api_jar()
    if javac is None or not jar.exists() or not api.exists():
        pytest.skip("needs javac, the Hazelcast jar (%s) and the JCache API jar (%s)" % (jar, api))
    out = tmp_path_factory.mktemp("jcache-java")
    sources = [cluster_harness.HERE.parent.parent / "java" / name for name in ("Harness.java", "JCache.java")]
    classpath = "%s:%s" % (jar, api)
    subprocess.run([javac, "-cp", classpath, "-d", str(out), *map(str, sources)], check=True, timeout=120)
    return "%s:%s" % (out, classpath)


# Hazelcast 5.6 cannot register a unisocket client's cache entry listener (not local-only) on
# its other members: "Listener can not be added", its listener fails to serialize
# (HazelcastSerializationException of CacheAddEntryListenerMessageTask$CacheEntryListener).
HAZELCAST_UNISOCKET_LISTENER = "Hazelcast 5.6 refuses a unisocket client's JCache listener on three members"


@pytest.mark.parametrize("routing", ["smart", "unisocket"])
def test_the_java_clients_jcache_on_three_members(make_cluster, compiled, routing, request):
    cluster = make_cluster(3, cluster_name="dev")  # tests/java/JCache.java's cluster name
    if cluster.target == "hazelcast" and routing == "unisocket":
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=HAZELCAST_UNISOCKET_LISTENER))
    cluster.start_members(range(3))
    observer = cluster.client(smart=True)
    wait_members(observer, 3, FORM_TIMEOUT)
    command = ["java", "-Xmx256m", "-Dharness.unisocket=%s" % (routing == "unisocket"), "-cp", compiled]
    result = subprocess.run(command + ["JCache", cluster.addresses[0]], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0 and "java jcache: ok" in result.stdout, result.stdout + result.stderr


def _journals(client, name):
    """Each partition's journal events with their sequences (partitions holding a key)."""
    partitions = sorted({_key_partition(client, "k%d" % i) for i in range(ENTRIES)})
    answers = {p: read(client, name, p, 0, 0, 100, message_type=JOURNAL_READ).result() for p in partitions}
    return {p: (list(a["item_seqs"]), events(client, a, CACHE_EVENT)) for p, a in answers.items()}


def _all_there(client, name, journals=None):
    """Every entry is there, and (when given) every partition's journal as it was."""
    values = [_decode_data(client, _on_key(client, GET, name, "k%d" % i, (), [None])) for i in range(ENTRIES)]
    assert values == ["v%d" % i for i in range(ENTRIES)]
    assert _int(_invoke(client, request(SIZE, (), [text(name)]))) == ENTRIES
    if journals is not None:
        assert _journals(client, name) == journals, "the journals keep their events and sequences"


def test_a_caches_entries_survive_a_join_and_a_kill9(make_cluster, request):
    cluster = make_cluster(3)
    two = cluster.addresses[:2]
    cluster.start_members(range(2), member_list=two)
    client = cluster.client(two, smart=True)
    wait_members(client, 2, FORM_TIMEOUT)
    simple = unique_map_name(request.node.name)
    name = PREFIX + simple
    _invoke(client, create_config(simple, backup_count=1, journal=(271 * 10, 0)))
    put = [("bool", False), ("int", -1)]
    for i in range(ENTRIES):
        value = _frame(bytes(client._serialization_service.to_data("v%d" % i).buffer))
        _on_key(client, PUT, name, "k%d" % i, put, [value, None])
    _all_there(client, name)
    journals = _journals(client, name)
    assert sum(len(events) for _, events in journals.values()) == ENTRIES, "one CREATED per entry"
    members = join_member(cluster, client, 2)
    # The joiner owns partitions now: its answers need the cache's configuration, and the
    # journals moved with their partitions.
    _all_there(client, name, journals)
    partition = client.partition_service.get_partition_id(client._serialization_service.to_data("k0"))
    owner = client.partition_service.get_partition_owner(partition)
    victim = cluster.by_member_info(next(member for member in members if member.uuid == owner))
    victim.kill9()
    wait_members(client, 2, DROP_TIMEOUT, "after kill -9 of %r" % victim)
    _all_there(client, name, journals)

