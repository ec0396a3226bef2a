"""Persistence (`hazelcast.persistence`, docs/persistence.md): members that restart keep what
they acknowledged.

Members persist into `persistence/` under their working directories; the maps `durable-*`
have `data-persistence` enabled (cluster_harness.COMMON_STRUCTURES), other maps do not.

  * three members, fsync `always`: acknowledged puts, removes and puts with a time to live;
    `kill -9` of every member (a power cut for everything the members wrote); restarted, every
    acknowledged entry reads back, the removed ones stay removed, an expired one is gone, and a
    map without persistence comes back empty. Twice (the second restart comes back under the
    table the first one restored);
  * fsync `everysec`: writers run while every member is killed: every acknowledged put is back
    (a killed process loses nothing: the log is written before the answer);
  * `FULL_RECOVERY_ONLY` with a member that does not come back: the others stop with the
    reason once `validation-timeout-seconds` passed; `PARTIAL_RECOVERY_MOST_COMPLETE`: they
    start without it, and with one backup nothing is missing;
  * a torn last write is dropped (the member starts and says so), a damaged record in the
    middle of a log fails the start naming the file, another partition count is refused;
  * a full disk (a small tmpfs in the member's own mount namespace): writes fail with "disk
    full" while reads go on; once there is room, writes work again.

Hazelcast keeps persistence in its Enterprise edition: its open 5.6 member refuses to start
with it (test_xml_config.py shows that on both targets), so these tests run on ferrogrid only.
"""

import os
import random
import shutil
import subprocess
import threading
import time

import pytest

from .cluster_harness import MemberProcess, Point, PointSerializer, check_values, wait_until
from .test_cluster import FORM_TIMEOUT, wait_members

pytestmark = pytest.mark.timeout(240)

DURABLE = "durable-orders"
VOLATILE = "volatile-orders"


def persistence_yaml(policy="FULL_RECOVERY_ONLY", validation_seconds=60):
    return (
        "  persistence:\n    enabled: true\n    base-dir: persistence\n"
        "    validation-timeout-seconds: %d\n    cluster-data-recovery-policy: %s\n" % (validation_seconds, policy)
    )


def fsync_yaml(policy):
    return "  persistence:\n    fsync-policy: %s\n" % policy


@pytest.fixture(autouse=True)
def ferrogrid_only(request):
    if request.config._ferrogrid_target != "ferrogrid":
        pytest.skip("persistence is Hazelcast Enterprise: the open edition refuses to start with it")


def start_persisting(cluster, indexes, fsync="always", policy="FULL_RECOVERY_ONLY", validation_seconds=60, wait=True):
    procs = [
        cluster.start(
            index,
            extra_yaml=persistence_yaml(policy, validation_seconds),
            extra_ferrogrid_yaml=fsync_yaml(fsync),
        )
        for index in indexes
    ]
    if wait:
        for proc in procs:
            proc.wait_ready()
    return procs


def kill_all(procs):
    for proc in procs:
        proc.kill9("a power cut: every member at once")


def restarted_client(cluster, count):
    # A new client: it knows no Compact schema but the members' (`Point`'s comes from disk).
    client = cluster.client(compact_serializers=[PointSerializer()])
    wait_members(client, count, FORM_TIMEOUT, "restarted from disk")
    return client


def test_acknowledged_writes_come_back_after_kill_9_of_every_member(make_cluster, note):
    cluster = make_cluster(3)
    procs = start_persisting(cluster, range(3))
    client = cluster.client(compact_serializers=[PointSerializer()])
    wait_members(client, 3, FORM_TIMEOUT)
    durable, volatile = client.get_map(DURABLE).blocking(), client.get_map(VOLATILE).blocking()
    expected = {"compact": Point(3, 4)}
    durable.put("compact", Point(3, 4))
    for i in range(3000):
        durable.put("k%d" % i, "v%d" % i)
        expected["k%d" % i] = "v%d" % i
        volatile.put(i, i)
    durable.put_all({"bulk%d" % i: i for i in range(2000)})
    expected.update({"bulk%d" % i: i for i in range(2000)})
    for i in range(0, 3000, 30):
        assert durable.remove("k%d" % i) == "v%d" % i
        del expected["k%d" % i]
    durable.put("lasting", "an hour", ttl=3600)
    expected["lasting"] = "an hour"
    durable.put("short-lived", "a second", ttl=1)
    destroyed, cleared = client.get_map("durable-destroyed").blocking(), client.get_map("durable-cleared").blocking()
    destroyed.put_all({i: i for i in range(300)})
    cleared.put_all({i: i for i in range(300)})
    destroyed.destroy()
    cleared.clear()
    kill_all(procs)

    for round_ in (1, 2):
        started = time.monotonic()
        procs = start_persisting(cluster, range(3))
        client = restarted_client(cluster, 3)
        note("restart %d: 3 members from disk, serving after %.1f s" % (round_, time.monotonic() - started))
        durable, volatile = client.get_map(DURABLE).blocking(), client.get_map(VOLATILE).blocking()
        check_values(durable, list(expected.items()), what="after kill -9 of every member (round %d)" % round_)
        assert durable.size() == len(expected)
        assert durable.get("k0") is None and durable.get("k30") is None, "removed keys stay removed"
        assert durable.get("short-lived") is None, "an entry whose time to live passed is gone"
        assert volatile.size() == 0, "a map without data-persistence comes back empty"
        assert client.get_map("durable-destroyed").blocking().size() == 0, "a destroyed map stays destroyed"
        assert client.get_map("durable-cleared").blocking().size() == 0, "a cleared map stays cleared"
        for proc in procs:
            assert "persisted data loaded" in proc.log_text()
        # the second generation: more writes, then the power cut again
        for i in range(500):
            durable.put("round%d-%d" % (round_, i), i)
            expected["round%d-%d" % (round_, i)] = i
        kill_all(procs)
    assert not cluster.panics()


def test_everysec_keeps_what_a_killed_process_acknowledged(make_cluster):
    cluster = make_cluster(3)
    procs = start_persisting(cluster, range(3), fsync="everysec")
    client = cluster.client()
    wait_members(client, 3, FORM_TIMEOUT)
    acknowledged = {}
    stop = threading.Event()

    def write(writer):
        durable = client.get_map(DURABLE).blocking()
        n = 0
        while not stop.is_set():
            key = "w%d-%d" % (writer, n)
            try:
                durable.put(key, n)
            except Exception:  # noqa: BLE001 - the members died: not acknowledged
                return
            acknowledged[key] = n
            n += 1

    threads = [threading.Thread(target=write, args=(i,), daemon=True) for i in range(4)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(acknowledged) >= 3000 or None, 60, "3,000 acknowledged puts")
    kill_all(procs)
    stop.set()
    client.shutdown()
    for thread in threads:
        thread.join(60)
    pairs = list(acknowledged.items())
    start_persisting(cluster, range(3), fsync="everysec")
    client = restarted_client(cluster, 3)
    check_values(client.get_map(DURABLE).blocking(), pairs, what="every put acknowledged before the kill")


def test_full_recovery_only_stops_the_members_when_one_does_not_come_back(make_cluster):
    cluster = make_cluster(3)
    procs = start_persisting(cluster, range(3), validation_seconds=5)
    client = cluster.client()
    wait_members(client, 3, FORM_TIMEOUT)
    client.get_map(DURABLE).blocking().put_all({i: i for i in range(1000)})
    client.shutdown()
    kill_all(procs)
    back = start_persisting(cluster, range(2), validation_seconds=5, wait=False)
    for proc in back:
        code = proc.wait_exit(60)
        assert code == 3, "%r: exit code %s; log:\n%s" % (proc, code, proc.log_tail(30))
        log = proc.log_text()
        assert "did not come back within validation-timeout-seconds" in log, proc.log_tail(30)


def test_partial_recovery_starts_with_the_members_that_came_back(make_cluster):
    cluster = make_cluster(3)
    policy = "PARTIAL_RECOVERY_MOST_COMPLETE"
    procs = start_persisting(cluster, range(3), policy=policy, validation_seconds=5)
    client = cluster.client()
    wait_members(client, 3, FORM_TIMEOUT)
    pairs = [(i, "v%d" % i) for i in range(2000)]
    client.get_map(DURABLE).blocking().put_all(dict(pairs))
    client.shutdown()
    kill_all(procs)
    start_persisting(cluster, range(2), policy=policy, validation_seconds=5)
    client = cluster.client(addresses=cluster.addresses[:2])
    wait_members(client, 2, FORM_TIMEOUT)
    durable = client.get_map(DURABLE).blocking()
    # Every partition had a replica on one of the two (one backup): nothing is missing.
    wait_until(lambda: durable.size() == len(pairs) or None, 30, "the two members serve every entry")
    check_values(durable, pairs, what="two of three members back")


def partition_logs(proc):
    root = proc.workdir / "persistence"
    return sorted(root.glob("member-*/partition-*/log-*.log"), key=lambda path: path.stat().st_size)


def test_a_torn_write_is_dropped_and_damage_refused_naming_the_file(make_cluster):
    cluster = make_cluster(1)
    (proc,) = start_persisting(cluster, [0])
    client = cluster.client()
    pairs = [("k%d" % i, "v%d" % i) for i in range(3000)]
    durable = client.get_map(DURABLE).blocking()
    for k, v in pairs:
        durable.put(k, v)
    client.shutdown()
    proc.kill9("before tearing a write")
    # A torn last write: the first half of a record appended to the longest log.
    longest = partition_logs(proc)[-1]
    with open(longest, "ab") as log:
        log.write((64).to_bytes(4, "little") + b"\x12\x34\x56\x78" + b"half a record")
    (proc,) = start_persisting(cluster, [0])
    assert "torn last write" in proc.log_text(), proc.log_tail(30)
    client = cluster.client()
    check_values(client.get_map(DURABLE).blocking(), pairs, what="after a torn write")
    client.shutdown()
    proc.kill9("before damaging a record")
    # Damage: a byte flipped in the first record of the longest log (records follow it).
    longest = partition_logs(proc)[-1]
    data = bytearray(longest.read_bytes())
    data[20 + 8 + 2] ^= 0x40  # past the 20-byte file header and the first frame's header
    longest.write_bytes(bytes(data))
    (proc,) = start_persisting(cluster, [0], wait=False)
    code = proc.wait_exit(30)
    assert code not in (None, 0), "a damaged log must fail the start; log:\n%s" % proc.log_tail(30)
    log = proc.log_text()
    assert "cannot start from the persisted data" in log and longest.name in log, proc.log_tail(30)


def test_another_partition_count_is_refused(make_cluster):
    cluster = make_cluster(1)
    (proc,) = start_persisting(cluster, [0])
    client = cluster.client()
    client.get_map(DURABLE).blocking().put("k", "v")
    client.shutdown()
    proc.kill9("before restarting with another partition count")
    refused = cluster.start(
        0,
        extra_yaml=persistence_yaml(),
        extra_properties="    hazelcast.partition.count: 137\n",
        extra_ferrogrid_yaml=fsync_yaml("always"),
    )
    code = refused.wait_exit(30)
    assert code not in (None, 0), refused.log_tail(30)
    assert "persisted with 271 partitions, configured 137" in refused.log_text(), refused.log_tail(30)


def full_disk_possible():
    if os.geteuid() != 0:
        return "needs root (a tmpfs mounted in the member's own mount namespace)"
    if not (shutil.which("unshare") and shutil.which("nsenter")):
        return "needs unshare and nsenter (util-linux)"
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
    return None if probe.returncode == 0 else "unshare --mount fails here: %s" % probe.stderr.decode().strip()


def test_a_full_disk_fails_writes_clearly_while_reads_go_on(make_cluster):
    why_not = full_disk_possible()
    if why_not:
        pytest.skip(why_not)
    cluster = make_cluster(1)
    proc = MemberProcess(
        0,
        cluster.ports[0],
        cluster.cluster_name,
        cluster.addresses,
        cluster.config_path,
        cluster.workdir,
        extra_yaml=persistence_yaml(),
        extra_ferrogrid_yaml=fsync_yaml("always"),
    )
    data_dir = proc.workdir / "persistence"
    data_dir.mkdir(parents=True)
    member_command = proc.command
    # The member alone sees a 4 MiB tmpfs as its base-dir (its own mount namespace).
    mount = 'mount -t tmpfs -o size=4m ferrogrid-full "$0" && exec "$@"'
    proc.command = lambda: ["unshare", "--mount", "--propagation", "private", "sh", "-c", mount, str(data_dir)] + (
        member_command()
    )
    cluster.members.append(proc)
    proc.start().wait_ready()
    client = cluster.client()
    durable = client.get_map(DURABLE).blocking()
    written, failure = {}, None
    blob = "x" * 20_000
    for i in range(400):
        try:
            durable.put("big%d" % i, blob)
        except Exception as error:  # noqa: BLE001 - the error is what is tested
            failure = error
            break
        written["big%d" % i] = blob
    assert failure is not None, "400 puts of 20 KB fit in 4 MiB?"
    assert "disk full" in str(failure), str(failure)
    assert written, "some puts fit before the disk was full"
    # Reads go on, and so do writes of partitions whose log still has room or of other maps.
    check_values(durable, list(written.items()), chunk=50, what="reads while the disk is full")
    client.get_map(VOLATILE).blocking().put("still", "served")
    # Room again: the member's tmpfs grows (from inside its namespace); writes work again.
    subprocess.run(["nsenter", "-t", str(proc.pid), "-m", "mount", "-o", "remount,size=64m", str(data_dir)], check=True)
    for i in range(400, 420):
        wait_until(
            lambda i=i: retry_put(durable, "big%d" % i, blob), 10, "a write once the disk has room (put %d)" % i
        )
    assert "partition log write failed" in proc.log_text()


def retry_put(proxy, key, value):
    try:
        proxy.put(key, value)
        return True
    except Exception:  # noqa: BLE001 - the log's retry comes with the next flush
        return None


def test_a_member_whose_disk_was_wiped_is_filled_from_replicas_and_persists_what_it_got(make_cluster):
    cluster = make_cluster(3)
    procs = start_persisting(cluster, range(3))
    client = cluster.client()
    wait_members(client, 3, FORM_TIMEOUT)
    pairs = [(i, random.random()) for i in range(2000)]
    client.get_map(DURABLE).blocking().put_all(dict(pairs))
    procs[2].kill9("its disk is wiped")
    shutil.rmtree(procs[2].workdir / "persistence")
    wait_members(client, 2, FORM_TIMEOUT, "the wiped member gone")
    (rejoined,) = start_persisting(cluster, [2])
    wait_members(client, 3, FORM_TIMEOUT, "the wiped member back, as a new member")
    # It takes partitions again (migrations copy them to it, and it writes them to its disk).
    wait_until(
        lambda: "partition table complete" in cluster.members[0].log_text().split("joined")[-1] or None,
        60,
        "the cluster balanced again",
    )
    check_values(client.get_map(DURABLE).blocking(), pairs, what="the wiped member refilled, before the power cut")
    client.shutdown()
    kill_all([procs[0], procs[1], rejoined])
    start_persisting(cluster, range(3))
    client = restarted_client(cluster, 3)
    check_values(client.get_map(DURABLE).blocking(), pairs, what="after the wiped member was refilled and all died")
