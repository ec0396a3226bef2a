"""Split-brain protection (see conftest.py for running): rules of two members guard maps and a
queue by name (cluster_harness.MEMBER_CONFIG: `protected-writes-*` guards writes only,
`protected-all-*` reads and writes, `protected-active-*` counts members heard from within 2.5 s,
queues `protected-*` reads and writes).

A member alone refuses what its rules guard with SplitBrainProtectionException (and serves the
rest: reads of a writes-only map, listener registrations, unguarded maps); once a second member
has joined, everything is served; after the second member's kill -9 the rules refuse again, the
recently-active one as soon as the member has been silent past its tolerance, the member-count
one once the member is dropped from the member list.
"""

import time

import pytest
from hazelcast.errors import HazelcastError, SplitBrainProtectionError

from .cluster_harness import unique_map_name, wait_until
from .test_cluster import DROP_TIMEOUT, FORM_TIMEOUT, join_member, wait_members

pytestmark = pytest.mark.timeout(120)


def refused(call):
    """Whether `call` fails with SplitBrainProtectionError (any other error fails the test)."""
    try:
        call()
    except SplitBrainProtectionError:
        return True
    return False


def refused_after_failover(call):
    """`refused`, where another error (a request caught by the kill) means "not yet"."""
    try:
        return refused(call)
    except HazelcastError:
        return False


def test_rules_refuse_below_the_minimum_size_and_serve_at_it(make_cluster, request):
    cluster = make_cluster(2)
    cluster.start_members([0], member_list=cluster.addresses)
    client = cluster.client(cluster.addresses[:1], smart=True)
    wait_members(client, 1, FORM_TIMEOUT)
    base = unique_map_name(request.node.name)
    writes = client.get_map("protected-writes-" + base).blocking()
    everything = client.get_map("protected-all-" + base).blocking()
    active = client.get_map("protected-active-" + base).blocking()
    queue = client.get_queue("protected-" + base).blocking()
    free = client.get_map("free-" + base).blocking()

    # Alone: the rules are not met.
    assert refused(lambda: writes.put("k", "v"))
    assert refused(lambda: writes.lock("k"))
    assert not refused(lambda: writes.get("k")), "a writes-only rule serves reads"
    assert not refused(lambda: writes.contains_key("k"))
    assert refused(lambda: everything.get("k"))
    assert refused(lambda: everything.put("k", "v"))
    assert refused(lambda: everything.size())
    assert not refused(lambda: everything.add_entry_listener(added_func=lambda event: None))
    assert refused(lambda: active.put("k", "v"))
    assert refused(lambda: queue.offer("item"))
    assert refused(lambda: queue.size())
    free.put("k", "v")
    assert free.get("k") == "v"

    # Two members: every rule is met.
    join_member(cluster, client, 1)

    def served():
        try:
            writes.put("k", "v")
            everything.put("k", "v")
            active.put("k", "v")
            return queue.offer("item")
        except SplitBrainProtectionError:
            return False

    wait_until(served, 20, "the rules served with two members")
    assert everything.get("k") == "v" and everything.size() == 1
    assert writes.get("k") == "v"
    assert queue.size() >= 1

    # The second member dies: the recently-active rule refuses once it has been silent for
    # 2.5 s, the member-count rules once it is dropped from the member list.
    victim = cluster.members[1]
    victim.kill9()
    killed = time.monotonic()
    wait_until(
        lambda: refused_after_failover(lambda: active.put("k", "again")),
        DROP_TIMEOUT,
        "the recently-active rule refusing",
    )
    wait_members(client, 1, DROP_TIMEOUT, "after kill -9 of the second member")
    wait_until(
        lambda: refused_after_failover(lambda: writes.put("k", "again")),
        DROP_TIMEOUT,
        "the member-count rule refusing",
    )
    assert time.monotonic() - killed < DROP_TIMEOUT + 5
    assert refused(lambda: everything.get("k"))
    assert not refused(lambda: writes.get("k"))
    assert refused(lambda: queue.poll())
    free.put("k", "still served")
