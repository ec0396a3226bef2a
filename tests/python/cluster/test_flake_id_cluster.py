"""FlakeIdGenerator across a cluster: ids stay unique while a member is killed and restarted.

Each member's node id is its member-list join version (1, 2, 3 for members started
together); a member restarted after kill -9 is a new member and joins at a new, never used
version (ferrogrid: the oldest survivor, taking over, numbers its lists 100 past the last it
saw). Ids of one generator are unique across the cluster because no two members ever share a
node id and each member's ids only grow.
"""

import threading
import time

import pytest

from .cluster_harness import members_of, unique_map_name, wait_until

pytestmark = pytest.mark.timeout(240)

CLIENTS = 4
IDS_PER_CLIENT = 100_000
# Clients take ids in slices with a pause between, so that the run spans the kill, the
# restart and the rejoin, and batches of 10 so that every client asks often. A client that
# has taken half its ids waits for the restarted member to be back, so the second half is
# taken with it in the cluster.
SLICE = 2_000
PAUSE_S = 0.1
PREFETCH = 10
FORM_TIMEOUT = 30.0
REJOIN_TIMEOUT = 120.0


def connected_members(client):
    return len(client._connection_manager.active_connections)


def wait_joined(cluster, count):
    """Waits until every member's own view lists `count` members. (A member accepts clients
    before it has joined, telling them its own uuid as the cluster id; a smart client that met
    it first refuses the other members' connections, which name the founder's.)"""
    for address in cluster.addresses:
        probe = cluster.client(addresses=[address], smart=False)
        wait_until(lambda: len(members_of(probe)) == count, FORM_TIMEOUT, "%s sees %d members" % (address, count))
        probe.shutdown()


@pytest.mark.parametrize("victim_index", [0, 2], ids=["master", "youngest"])
def test_ids_stay_unique_while_a_member_is_killed_and_restarted(make_cluster, request, note, victim_index):
    cluster = make_cluster(3)
    procs = cluster.start_members(range(3))
    wait_joined(cluster, 3)
    name = unique_map_name(request.node.name)
    client_config = {name: {"prefetch_count": PREFETCH}}
    # Three smart clients (batches from random members) and one unisocket client.
    clients = [
        cluster.client(smart=(index != CLIENTS - 1), flake_id_generators=client_config) for index in range(CLIENTS)
    ]
    wait_until(lambda: all(len(members_of(c)) == 3 for c in clients), FORM_TIMEOUT, "every client sees 3 members")
    # (So that every member hands out batches from the start.)
    smart = clients[:-1]
    wait_until(lambda: all(connected_members(c) == 3 for c in smart), FORM_TIMEOUT, "smart clients connected to all")
    generators = [client.get_flake_id_generator(name).blocking() for client in clients]
    issued = [[] for _ in range(CLIENTS)]
    errors = [0] * CLIENTS
    rejoined = threading.Event()

    def take(index):
        generator, mine = generators[index], issued[index]
        while len(mine) < IDS_PER_CLIENT:
            if len(mine) >= IDS_PER_CLIENT // 2:
                rejoined.wait(REJOIN_TIMEOUT)
            for _ in range(min(SLICE, IDS_PER_CLIENT - len(mine))):
                try:
                    mine.append(generator.new_id())
                except Exception:  # noqa: BLE001 - a failed call hands out nothing
                    errors[index] += 1
                    time.sleep(0.05)
            time.sleep(PAUSE_S)

    threads = [threading.Thread(target=take, args=(index,), daemon=True) for index in range(CLIENTS)]
    for thread in threads:
        thread.start()
    wait_until(lambda: sum(map(len, issued)) >= CLIENTS * IDS_PER_CLIENT // 5, 60, "a fifth of the ids taken")
    victim = procs[victim_index]
    taken_at_kill = sum(map(len, issued))
    node_ids_before = {i & 0xFFFF for ids in issued for i in list(ids)}
    victim.kill9("flake id test: the victim")
    restarted = cluster.start(victim_index)
    restarted.wait_ready()
    try:
        wait_until(lambda: all(len(members_of(c)) == 3 for c in clients), FORM_TIMEOUT, "the restarted member rejoined")
    finally:
        rejoined.set()
    rejoined_at = sum(map(len, issued))
    for thread in threads:
        thread.join(180)
    assert not any(thread.is_alive() for thread in threads), "every client took its ids"

    all_ids = [i for ids in issued for i in ids]
    node_ids = {i & 0xFFFF for i in all_ids}
    note(
        "flake ids through kill -9 and restart of the %s: %d ids (%d before the kill, %d when it had rejoined), "
        "node ids before %s, all %s, failed new_id calls %s"
        % (request.node.callspec.id, len(all_ids), taken_at_kill, rejoined_at, sorted(node_ids_before),
           sorted(node_ids), errors)
    )
    assert len(all_ids) == CLIENTS * IDS_PER_CLIENT
    assert len(set(all_ids)) == len(all_ids), "ids handed out twice: %d" % (len(all_ids) - len(set(all_ids)))
    for index, ids in enumerate(issued):
        # A client's batches come from several members, so its ids are not ordered, but each
        # batch's are: within a run of one node id the ids increase.
        by_node = {}
        for i in ids:
            by_node.setdefault(i & 0xFFFF, []).append(i)
        for node, run in by_node.items():
            assert run == sorted(run), "client %d: ids of node %d out of order" % (index, node)
    assert node_ids_before <= {1, 2, 3} and {1, 2, 3} <= node_ids, "members started together join at versions 1-3"
    new = node_ids - node_ids_before
    assert new and min(new) > 3, "the restarted member issued ids with a new join version: %s" % sorted(new)


def test_a_member_whose_node_id_does_not_fit_has_another_member_answer(make_cluster, request):
    # flake-narrow-*: node id = join version + 1 in 2 bits; the youngest (join version 3,
    # node id 4) cannot issue ids, so it asks a member whose node id fits (as Hazelcast does).
    cluster = make_cluster(3)
    cluster.start_members(range(3))
    wait_joined(cluster, 3)
    name = "flake-narrow-" + unique_map_name(request.node.name)
    youngest = members_of(cluster.client(smart=False))[-1]
    only_youngest = cluster.client(addresses=["%s:%d" % (youngest.address.host, youngest.address.port)], smart=False)
    ids = [only_youngest.get_flake_id_generator(name).blocking().new_id() for _ in range(1_000)]
    assert len(set(ids)) == len(ids)
    assert {i & 3 for i in ids} <= {2, 3}, "ids come from the members whose node ids fit"
    smart = cluster.client(smart=True)
    more = [smart.get_flake_id_generator(name).blocking().new_id() for _ in range(1_000)]
    assert len(set(ids + more)) == len(ids) + len(more)
    assert {i & 3 for i in more} <= {2, 3}
