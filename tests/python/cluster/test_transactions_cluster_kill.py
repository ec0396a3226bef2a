"""TWO_PHASE transactions whose coordinator is killed (-9) while they commit (see conftest.py).

Three members. Clients connected only to member 0 create their transactions there, so member 0
coordinates them; each transaction puts keys owned by every member and commits, over and over
from several threads, until member 0 is killed mid-stream. A TWO_PHASE transaction (the
clients' default, durability 1) is logged on another member before anything is applied, so
every transaction ends all or nothing: one the coordinator had begun to commit is completed by
its log's holder, one it had not is rolled back (its keys unlocked). Every commit that returned
is there in full; a commit that raised is there in full or not at all.

Hazelcast 5.6 does not give that for a client's transaction: its transaction log names the
client as the owner, and its holders finish a transaction when its owner disconnects, not when
the member coordinating it dies; a commit cut short there stays applied in part (and its keys
locked until the transaction's timeout). Against Hazelcast the test records that instead of
failing on it.
"""

import threading
import time

import pytest

from .cluster_harness import members_of, unique_map_name, wait_until
from .test_cluster import DROP_TIMEOUT, FORM_TIMEOUT, wait_members

pytestmark = pytest.mark.timeout(180)

WRITERS = 4
KEYS_PER_TXN = 10
COMMITS_BEFORE_KILL = 40
SETTLE_TIMEOUT = {"ferrogrid": 60, "hazelcast": 15}


def test_a_coordinator_killed_mid_commit_leaves_every_transaction_all_or_nothing(make_cluster, request, note):
    cluster = make_cluster(3)
    cluster.start_members(range(3))
    coordinator = cluster.client([cluster.addresses[0]], smart=False)
    wait_members(coordinator, 3, FORM_TIMEOUT)
    victim = cluster.by_member_info(
        next(m for m in members_of(coordinator) if "%s:%d" % (m.address.host, m.address.port) == cluster.addresses[0])
    )
    name = unique_map_name(request.node.name)
    coordinator.get_map(name).blocking().put("warm-up", 0)  # (a Hazelcast member assigns partitions on first use)
    committed, raised, attempted = [], [], []
    stop = threading.Event()

    def keys_of(txn_id):
        return ["%s-%d" % (txn_id, i) for i in range(KEYS_PER_TXN)]

    def write(writer):
        n = 0
        while not stop.is_set():
            txn_id = "w%d-t%d" % (writer, n)
            n += 1
            attempted.append(txn_id)
            try:
                txn = coordinator.new_transaction(timeout=60)
                txn.begin()
                tmap = txn.get_map(name)
                for key in keys_of(txn_id):
                    tmap.put(key, txn_id)
                txn.commit()
            except Exception:  # noqa: BLE001 - the coordinator died: all or nothing
                raised.append(txn_id)
                return
            committed.append(txn_id)

    threads = [threading.Thread(target=write, args=(i,), daemon=True) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: len(committed) >= COMMITS_BEFORE_KILL or None, 60, "transactions committed before the kill")
        victim.kill9()
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "every writer ended"

    reader = cluster.client([cluster.addresses[1], cluster.addresses[2]], smart=True)
    wait_members(reader, 2, DROP_TIMEOUT, "after kill -9 of the coordinator")
    entries = reader.get_map(name).blocking()

    def outcome():
        found = {}
        for key, value in entries.entry_set():
            if key != "warm-up":
                found.setdefault(value, set()).add(key)
        partial = {txn_id: sorted(keys) for txn_id, keys in found.items() if len(keys) != KEYS_PER_TXN}
        return found, partial

    # A holder ends the dead coordinator's transactions once it sees it leave.
    deadline = time.monotonic() + SETTLE_TIMEOUT[cluster.target]
    found, partial = outcome()
    while partial and time.monotonic() < deadline:
        time.sleep(1)
        found, partial = outcome()
    applied = set(found)
    note(
        "coordinator killed with %d transactions committed, %d raised; %d applied (of %d attempted)"
        % (len(committed), len(raised), len(applied), len(attempted))
    )
    if partial and cluster.target == "hazelcast":
        note("Hazelcast left %d transactions applied in part: %s" % (len(partial), dict(list(partial.items())[:3])))
    else:
        assert not partial, "transactions applied in part: %s" % dict(list(partial.items())[:3])
    lost = sorted(set(committed) - applied)
    assert not lost, "committed transactions missing: %s" % lost[:10]
    assert applied <= set(attempted), "values nobody wrote: %s" % sorted(applied - set(attempted))[:10]
    for txn_id in applied:
        assert found[txn_id] <= set(keys_of(txn_id)), "%s holds other keys" % txn_id
    assert len(committed) >= COMMITS_BEFORE_KILL
    # Nothing the dead coordinator's transactions locked stays locked.
    def still_locked():
        return [key for txn_id in raised for key in keys_of(txn_id) if entries.is_locked(key)]

    deadline = time.monotonic() + SETTLE_TIMEOUT[cluster.target]
    locked = still_locked()
    while locked and time.monotonic() < deadline:
        time.sleep(1)
        locked = still_locked()
    if locked and cluster.target == "hazelcast":
        note("Hazelcast keeps %d keys of the dead coordinator's transactions locked" % len(locked))
    else:
        service, to_data = reader.partition_service, reader._serialization_service.to_data
        where = {key: service.get_partition_id(to_data(key)) for key in locked[:10]}
        assert not locked, "keys still locked after their transaction ended (key: partition): %s; the victim was %s" % (
            where,
            victim,
        )
