"""A PN counter on three members through kill -9 of one of them (see conftest.py for running).

Clients add to one counter from several threads (smart and unisocket clients, so requests
reach their target replica directly and through another member) while one member is killed.
Every add whose call returned is counted as acknowledged. The Python proxy retries an add that
failed on another replica (it logs each failed attempt, "Exception occurred while invoking
operation on target ..."), so an attempt that failed may still have applied, and an add that
raised may or may not have: the final value is bounded by

    acknowledged <= final <= acknowledged + failed attempts.

The lower bound is ferrogrid's: a replica answers an add only once the other replicas
acknowledged it. Hazelcast replicates PN counters asynchronously (once a second), so a kill -9
may lose acknowledged increments there; against Hazelcast (`--target hazelcast`) the test
reports any loss in the notes and checks the upper bound only.
"""

import logging
import threading
import time

import pytest

from .cluster_harness import members_of, unique_map_name, wait_until
from .test_cluster import FORM_TIMEOUT, wait_members

pytestmark = pytest.mark.timeout(150)

ADDERS_PER_CLIENT = 2
BEFORE_KILL_SECONDS = 2.0
AFTER_KILL_SECONDS = 6.0
CONVERGE_TIMEOUT = 20.0


class FailedAttempts(logging.Handler):
    """Counts the attempts the PN counter proxy logs as failed before it tries another replica."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.count = 0
        self._lock = threading.Lock()

    def emit(self, record):
        if record.getMessage().startswith("Exception occurred while invoking operation on target"):
            with self._lock:
                self.count += 1


@pytest.fixture
def failed_attempts():
    handler = FailedAttempts()
    logger = logging.getLogger("hazelcast.proxy.pn_counter")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def value_on(client, name, member):
    """The counter's value as `member`'s replica holds it (a fresh session aimed at it)."""
    proxy = client.get_pn_counter(name).blocking()
    proxy.reset()
    proxy._wrapped._current_target_replica_address = member
    return proxy.get()


@pytest.mark.parametrize("victim", ["master", "other"])
def test_kill9_loses_no_acknowledged_increment(make_cluster, request, victim, failed_attempts, note):
    cluster = make_cluster(3)
    procs = cluster.start_members(range(3))
    smart = cluster.client()
    wait_members(smart, 3, FORM_TIMEOUT)
    members = members_of(smart)
    victim_info = members[0] if victim == "master" else members[1]
    victim_proc = cluster.by_member_info(victim_info)
    survivors = [proc for proc in procs if proc is not victim_proc]
    # Unisocket clients: one on the victim (its requests for other replicas go through it, and
    # it loses its connection), one on a survivor (its requests for the victim go through it).
    clients = [
        smart,
        cluster.client(smart=True),
        cluster.client([victim_proc.address] + [proc.address for proc in survivors], smart=False),
        cluster.client([survivors[0].address], smart=False),
    ]
    for client in clients[1:]:
        wait_members(client, 3, FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    counts = {"acknowledged": 0, "failed": 0}
    lock = threading.Lock()
    stop = threading.Event()

    def add(client):
        counter = client.get_pn_counter(name).blocking()
        while not stop.is_set():
            try:
                counter.increment_and_get()
                outcome = "acknowledged"
            except Exception:  # noqa: BLE001 - indeterminate: may or may not have applied
                outcome = "failed"
            with lock:
                counts[outcome] += 1

    threads = [threading.Thread(target=add, args=(client,)) for client in clients for _ in range(ADDERS_PER_CLIENT)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(BEFORE_KILL_SECONDS)
        with lock:
            acknowledged_at_kill = counts["acknowledged"]
        victim_proc.kill9("PN counter test")
        time.sleep(AFTER_KILL_SECONDS)
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "every adder finished"
    cluster.assert_running(survivors, "after the adds")
    wait_members(smart, 2, 30, "the victim dropped")

    # Both survivors' replicas agree once their states merged (at most a replication period).
    survivor_infos = [m for m in members_of(smart) if m.uuid != victim_info.uuid]

    def agreed():
        values = {value_on(smart, name, member) for member in survivor_infos}
        return values.pop() if len(values) == 1 else None

    final = wait_until(agreed, CONVERGE_TIMEOUT, "the survivors' replicas agree")
    acknowledged, failed, attempts = counts["acknowledged"], counts["failed"], failed_attempts.count
    note(
        "PN counter through kill -9 of the %s: %d adds acknowledged (%d before the kill), %d raised, %d failed "
        "attempts retried or given up, final value %d" % (victim, acknowledged, acknowledged_at_kill, failed,
                                                          attempts, final)
    )
    assert acknowledged_at_kill > 0 and acknowledged > acknowledged_at_kill, "adds ran before and after the kill"
    assert final <= acknowledged + attempts, "more applied than were attempted"
    if victim_proc.target == "hazelcast":
        if final < acknowledged:
            note("Hazelcast lost %d acknowledged increments (asynchronous replication)" % (acknowledged - final))
        return
    assert final >= acknowledged, "acknowledged increments lost: %d" % (acknowledged - final)
