"""Replicated maps on several members (see conftest.py for the harness): every member holds a
full copy, a new member receives one, a promoted owner carries on from its copy, an entry
listener hears each change once whatever the routing, a ttl ends an entry on every member,
entries put with their metadata reach every member, and (ferrogrid only) a clear has emptied
every copy when it answers.
Each passes against 3-4 ferrogrid members and against 3-4 Hazelcast 5.6.0 members."""

import threading
import time

import pytest

from .cluster_harness import members_of, partition_owners, unique_map_name, wait_until
from .test_cluster import DROP_TIMEOUT, FORM_TIMEOUT, owners_described, uuids, wait_members

pytestmark = pytest.mark.timeout(150)

ENTRIES = 2_000
COPY_TIMEOUT = 15.0  # a member's copy catches up (changes are sent at once, copies within ~1 s)


def copy_of(cluster, proc, name):
    """A unisocket client connected to `proc` only, and its proxy of the replicated map: what
    it reads is that member's own copy."""
    client = cluster.client([proc.address], smart=False)
    return client, client.get_replicated_map(name).blocking()


def wait_copy(proxy, expected, what):
    """Waits until the member's copy (read through `proxy`) holds exactly `expected`."""

    def complete():
        return proxy.size() == len(expected) and dict(proxy.entry_set()) == expected

    def state():
        size = proxy.size()
        entries = dict(proxy.entry_set())
        missing = [k for k in expected if k not in entries][:5]
        wrong = [k for k in expected if k in entries and entries[k] != expected[k]][:5]
        return "%s: size %d of %d, missing e.g. %s, wrong e.g. %s" % (what, size, len(expected), missing, wrong)

    wait_until(complete, COPY_TIMEOUT, state)


def put_retrying(proxy, key, value, timeout=10.0):
    """put, tried again while the cluster settles after a kill (the client does not retry a
    put whose member went away)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return proxy.put(key, value)
        except Exception:  # noqa: BLE001
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_new_member_receives_a_full_copy_and_a_promoted_owner_carries_on(make_cluster, request):
    cluster = make_cluster(4)
    three = cluster.addresses[:3]
    cluster.start_members(range(3), member_list=three)
    writer = cluster.client(three, smart=True)
    members = wait_members(writer, 3, FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    rm = writer.get_replicated_map(name).blocking()
    expected = {"k%d" % i: "v%d" % i for i in range(ENTRIES)}
    items = list(expected.items())
    for start in range(0, ENTRIES, 500):
        rm.put_all(dict(items[start : start + 500]))
    for i in range(0, ENTRIES, 100):
        expected["k%d" % i] = "updated-%d" % i
        rm.put("k%d" % i, expected["k%d" % i])
    for i in range(1, ENTRIES, 200):
        del expected["k%d" % i]
        rm.remove("k%d" % i)
    for proc in cluster.running():
        wait_copy(copy_of(cluster, proc, name)[1], expected, "copy of %r" % proc)

    # A 4th member: it receives every partition's copy, and keeps up once it owns some.
    fourth = cluster.start(3, member_list=cluster.addresses)
    fourth.wait_ready(FORM_TIMEOUT)
    _, on_fourth = copy_of(cluster, fourth, name)
    wait_copy(on_fourth, expected, "the new member's copy")
    members = wait_members(writer, 4, FORM_TIMEOUT)
    wait_until(
        lambda: set(partition_owners(writer)) == uuids(members),
        FORM_TIMEOUT,
        lambda: "partition owners %s" % owners_described(writer),
    )
    for i in range(ENTRIES, ENTRIES + 300):
        expected["k%d" % i] = "late-%d" % i
        rm.put("k%d" % i, expected["k%d" % i])
    wait_copy(on_fourth, expected, "the new member's copy after writes to the partitions it owns")
    assert on_fourth.get("k%d" % (ENTRIES + 7)) == "late-%d" % (ENTRIES + 7)

    # kill -9 of the master: the members promoted to its partitions carry on from their copy.
    victim = cluster.by_member_info(members_of(writer)[0])
    victim.kill9()
    wait_members(writer, 3, DROP_TIMEOUT, "after kill -9 of %r" % victim)
    for i in range(ENTRIES + 300, ENTRIES + 600):
        expected["k%d" % i] = "after-kill-%d" % i
        put_retrying(rm, "k%d" % i, expected["k%d" % i])
    survivors = [proc for proc in cluster.running() if proc is not victim]
    for proc in survivors:
        wait_copy(copy_of(cluster, proc, name)[1], expected, "copy of %r after the kill" % proc)


class Heard:
    def __init__(self):
        self.events = []
        self._lock = threading.Lock()

    def __call__(self, event):
        with self._lock:
            self.events.append((event.event_type, event.key, event.value))

    def snapshot(self):
        with self._lock:
            return list(self.events)


@pytest.mark.parametrize("writer_routing", ["smart", "unisocket"])
def test_every_listener_hears_each_change_once(make_cluster, request, writer_routing):
    cluster = make_cluster(3)
    cluster.start_members(range(3), member_list=cluster.addresses)
    # The smart client is made once the cluster has formed: a member that a client reached
    # while it was still alone named its own uuid as the cluster id, and the client then
    # refuses the other members' connections ("does not belong to the cluster").
    wait_members(cluster.client(cluster.addresses[:1], smart=False), 3, FORM_TIMEOUT)
    smart = cluster.client(cluster.addresses, smart=True)
    wait_members(smart, 3, FORM_TIMEOUT)
    # A smart client registers a listener on the connections it has (and later on new ones):
    # with all three open, add_entry_listener returns once every member has it.
    manager = smart._connection_manager
    connections = lambda: len(manager.active_connections)  # noqa: E731
    wait_until(lambda: connections() == 3, FORM_TIMEOUT, lambda: "%d connections" % connections())
    name = unique_map_name(request.node.name)
    logs = {"smart": Heard()}
    smart.get_replicated_map(name).blocking().add_entry_listener(added_func=logs["smart"], updated_func=logs["smart"])
    for index, proc in enumerate(cluster.running()):
        log = logs["unisocket-%d" % index] = Heard()
        client, proxy = copy_of(cluster, proc, name)
        proxy.add_entry_listener(added_func=log, updated_func=log)
    if writer_routing == "smart":
        writer = smart.get_replicated_map(name).blocking()
    else:
        writer = copy_of(cluster, cluster.running()[1], name)[1]
    keys = ["k%d" % i for i in range(200)]
    for key in keys:
        writer.put(key, 1)
    writer.put_all({key: 2 for key in keys[:50]})
    expected = sorted([(1, key, 1) for key in keys] + [(4, key, 2) for key in keys[:50]])
    def heard():
        return ", ".join("%s heard %d" % (what, len(log.snapshot())) for what, log in logs.items())

    for log in logs.values():
        wait_until(lambda: len(log.snapshot()) >= len(expected), COPY_TIMEOUT, heard)
    time.sleep(1.0)  # a second copy of any event would arrive by now
    for what, log in logs.items():
        assert sorted(log.snapshot()) == expected, "%s: each change heard exactly once" % what


def test_an_entry_with_a_ttl_expires_on_every_member(make_cluster, request):
    cluster = make_cluster(3)
    cluster.start_members(range(3), member_list=cluster.addresses)
    writer = cluster.client(cluster.addresses, smart=True)
    wait_members(writer, 3, FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    rm = writer.get_replicated_map(name).blocking()
    rm.put_all({"k%d" % i: i for i in range(20)})
    for i in range(10):
        rm.put("k%d" % i, "short", ttl=2)
    copies = [copy_of(cluster, proc, name)[1] for proc in cluster.running()]
    for copy in copies:
        wait_until(lambda: copy.get("k0") == "short", COPY_TIMEOUT, "the ttl entry reached every copy")
    expected = {"k%d" % i: i for i in range(10, 20)}
    for index, copy in enumerate(copies):
        wait_copy(copy, expected, "copy %d after the ttl" % index)


def test_a_unisocket_client_reads_its_own_writes_on_its_member(make_cluster, request):
    """Hazelcast's owner updates the caller member's copy before it answers a put or a remove,
    so a client that talks to one member (whose keys are mostly owned by the others) reads what
    it just wrote, at once, from that member's copy."""
    cluster = make_cluster(3)
    cluster.start_members(range(3), member_list=cluster.addresses)
    wait_members(cluster.client(cluster.addresses, smart=True), 3, FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    stale = []
    for proc in cluster.running():
        _, rm = copy_of(cluster, proc, name)
        for i in range(1000):
            key = "%s-k%d" % (proc.address, i)
            rm.put(key, i)
            if rm.get(key) != i:
                stale.append(("put", key))
            if i % 3 == 0:
                rm.remove(key)
                if rm.contains_key(key):
                    stale.append(("remove", key))
    assert stale == [], "%d stale reads after the client's own write, e.g. %s" % (len(stale), stale[:5])


def test_entries_put_with_metadata_reach_every_member(make_cluster, request):
    """ReplicatedMap.putAllWithMetadata (built as in test_with_metadata.py): the owner of the
    request's partition puts the entries and sends them to every member, as its puts."""
    from test_with_metadata import holder, rm_put_all_with_metadata

    cluster = make_cluster(3)
    cluster.start_members(range(3), member_list=cluster.addresses)
    writer = cluster.client(cluster.addresses, smart=True)
    wait_members(writer, 3, FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    writer.get_replicated_map(name).blocking().put("created", 0)
    expected = {"k%d" % i: "v%d" % i for i in range(60)}
    by_partition = {}
    for key, value in expected.items():
        by_partition.setdefault(writer._partition_service.get_partition_id(key), []).append((key, value))
    for partition_id, entries in by_partition.items():
        holders = [holder(writer, key, value, ttl=0) for key, value in entries]
        rm_put_all_with_metadata(writer, name, partition_id, holders)
    expected["created"] = 0
    for proc in cluster.running():
        wait_copy(copy_of(cluster, proc, name)[1], expected, "copy of %r" % proc)


@pytest.mark.ferrogrid_only
def test_a_clear_leaves_every_copy_empty_when_it_answers(make_cluster, request):
    """Once a clear answers, no member's copy holds an entry put before it, whichever member
    was asked and whichever member is read (each read through a unisocket client of that
    member, at once). Hazelcast documents its clear as the replicated map's one synchronous
    operation, but 5.6 does not keep to it: run against it, this test found entries left on a
    member in 3 of 30 rounds (2026-11-29), so it runs against ferrogrid only. Without the
    members clearing their copies of the others' partitions in the clear itself, ferrogrid
    left entries in 2 of 3 runs (the owner's change could come after the clear's answer)."""
    cluster = make_cluster(3)
    cluster.start_members(range(3), member_list=cluster.addresses)
    wait_members(cluster.client(cluster.addresses, smart=True), 3, FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    copies = [copy_of(cluster, proc, name)[1] for proc in cluster.running()]
    left = []
    for round_ in range(30):
        expected = {"r%d-k%d" % (round_, i): i for i in range(100)}
        copies[round_ % len(copies)].put_all(expected)
        for index, proxy in enumerate(copies):
            wait_copy(proxy, expected, "member %d before the clear of round %d" % (index, round_))
        asked = (round_ + 1) % len(copies)
        copies[asked].clear()
        # the member asked first (it answered the clear), then the others
        for index in [asked] + [i for i in range(len(copies)) if i != asked]:
            size = copies[index].size()
            if size != 0:
                left.append((round_, index, size))
    assert left == [], "(round, member, entries) left after clear answered: %s" % left[:10]
