"""Multi-member (cluster) tests: several ferrogrid member processes on 127.0.0.1.

Run them on their own, from the repository root, after `cargo build --release -p ferrogrid`:

    .venv/bin/pytest tests/python/cluster -q -p no:cacheprovider

`pytest tests/python` (the single-member suite) collects this directory but deselects its
tests unless a path inside it is named on the command line (or FERROGRID_CLUSTER_TESTS=1;
FERROGRID_CLUSTER_TESTS=0 always deselects them). This directory is a package (__init__.py)
so that this conftest is imported as `cluster.conftest`: the single-member test modules do
`from conftest import ...` and must keep getting tests/python/conftest.py.

With `--target hazelcast` (or FERROGRID_TARGET=hazelcast) the same tests start real Hazelcast
5.6.0 members instead (HAZELCAST_JAR; same settings, shutdown hook policy GRACEFUL), which
checks that the expectations are Hazelcast's; a JVM exits with 143 after SIGTERM, which those
runs accept instead of 0, and Hazelcast refuses another cluster name without an INFO log line,
so that log check is ferrogrid-only.

What is tested (test_cluster.py), each test with fresh processes on its own ports:
  * the harness itself: one member with the cluster flags starts, serves, stops on SIGTERM;
  * three members started at the same moment form ONE cluster: a unisocket client on each
    member sees the same 3 uuids and the same master (first member), and every member owns
    80..100 of the 271 partitions;
  * acknowledged writes survive `kill -9` of the master or of a partition-owning non-master
    (smart and unisocket clients), and survive a second kill 10 s later, which proves the
    backups were re-created after the first failure;
  * a 4th member joins a map of 50,000 entries while a writer thread puts continuously: it
    takes >= 50 partitions, and the 50,000 plus every acknowledged put read back; the writer's
    ops/s before / during / after the migration (and per 0.5 s) are printed in the terminal
    summary ("cluster test notes") and recorded as junit properties;
  * SIGTERM (graceful shutdown, master or not) exits 0 within 30 s and loses nothing;
  * a member with another cluster name is refused (cluster A stays at 2 members, B alone),
    and a member log line says "cluster name" (any case) with a mismatch word (mismatch,
    different, refused, rejected, expected, ...) or the other cluster's name;
  * size, key_set, values, entry_set, contains_value, get_all and clear span all members;
    clear sends one CLEAR_ALL with the cluster-wide count, and destroy empties every member;
  * writes waiting for a backup member's acknowledgement when it is killed
    (test_backup_acks_cluster.py): a smart client with fail_on_indeterminate_operation_state
    and 8 writers; the backup holder is stopped for 0.5 s, then killed: no write fails on
    ferrogrid (the partition's new backup acknowledges them), only
    IndeterminateOperationStateError on Hazelcast; every acknowledged write reads back, also
    after a second kill;
  * a PN counter through kill -9 of the master or of another member (test_pn_counter_cluster.py):
    smart and unisocket clients add concurrently; the survivors agree on a value between the
    acknowledged adds and those plus the attempts that failed (against Hazelcast, whose
    replication is asynchronous, only the upper bound is checked and losses are noted);
  * cardinality estimators (test_cardinality_estimator_cluster.py): estimators of every size
    (sparse with entries pending, dense) keep their estimates through a third member's join
    and kill -9 of an owner (against Hazelcast, within 1%);
  * flake ids (test_flake_id_cluster.py): 4 clients take 100,000 ids each while the master
    (or the youngest member) is killed with kill -9 and started again: all 400,000 are unique,
    the members started together have node ids 1-3 and the restarted one a new, higher one; a
    member whose node id does not fit bits-node-id has another member answer for it;
  * replicated maps (test_replicated_map_cluster.py): a 4th member receives a full copy (a
    unisocket client on it reads every entry within seconds), keeps up once it owns
    partitions, and the survivors of a kill -9 carry on; a smart client's listener and a
    unisocket client's on each member hear every change exactly once; a ttl ends an entry on
    every member;
  * split-brain protection (test_split_brain_protection.py): rules of two members refuse
    guarded reads and writes on a member alone, serve them once a second member joined, and
    refuse again after its kill -9 (the recently-active rule first);
  * network partitions (test_split_brain.py, root in a private network namespace only: scripts/test
    runs it under `unshare --net`; skipped elsewhere): iptables cuts {0,1} from {2}, each side
    sees its own members, split-brain protection guards the single member, the heal; network.py
    is the harness;
  * map iteration (test_map_iteration_cluster.py): the first batch of every partition is read,
    a third member joins and takes partitions, and every partition goes on from its pointers
    on its new owner: every entry exactly once (against Hazelcast, whose pointers are slots
    of the old owner's table, any repeats and misses are noted);
  * transactions (test_transactions_cluster.py): a transaction coordinated by either member (smart
    and unisocket clients) commits keys of partitions owned by both, a plain put through the
    other member waits for the commit, and a rollback leaves every key as it was;
  * a member stopped with SIGSTOP while a unisocket client puts ~30 MB through the other: past
    connection-write-buffer-bytes (256 KiB here) the other stops reading clients (log line,
    RSS grows < 20 MB), and after SIGCONT every put is answered and reads back.

Member configuration: cluster_harness.MEMBER_CONFIG (heartbeat every 1 s, a member silent for
4 s is dropped, 1 s before joining, backup-count 1, no metrics file/HTTP, no IO balancer).
Command: `ferrogrid member --host 127.0.0.1 --port P --no-port-auto-increment --cluster-name N
--member 127.0.0.1:P1 ... --config <that file>`. `cluster.start(i, extra_yaml=...)` adds lines to
the `hazelcast:` section of one member's configuration on either target (a lite member:
`test_lite_member_cluster.py`); `test_advanced_network_cluster.py` writes whole configurations
of its own (advanced network, public addresses).

Each member logs (stdout + stderr, FERROGRID_LOG=info unless set) to its own file in a temp
directory per test. A failed test's report shows every member's status and log tail; the
directory is then kept (and removed after a passing test unless FERROGRID_KEEP_LOGS is set).
Every signal the harness sends is written into the member's log as a `[harness] <UTC time>
sending SIGxxx (why)` line, so a signal without such a line came from outside the tests.
A test whose members' logs contain "panicked at" errors in teardown. Teardown shuts the clients
down, sends SIGTERM to every member still running and SIGKILL after 3 s; members are also
started under `setpriv --pdeathsig KILL`, so they die with pytest even if it is SIGKILLed.

Environment: FERROGRID_BIN (binary), FERROGRID_CLUSTER_BASE_PORT (first port, default 6701;
each test takes the next block of 10 free ports), FERROGRID_LOG, FERROGRID_KEEP_LOGS.
"""

import os
import pathlib
import shutil
import signal
import threading

import pytest

from . import cluster_harness

CLUSTER_DIR = pathlib.Path(__file__).resolve().parent

_notes = []  # (test id, line) printed in the terminal summary


def _in_cluster_dir(path):
    path = pathlib.Path(str(path)).resolve()
    return path == CLUSTER_DIR or CLUSTER_DIR in path.parents


def _explicitly_requested(config):
    flag = os.environ.get("FERROGRID_CLUSTER_TESTS")
    if flag in ("0", "1"):
        return flag == "1"
    base = pathlib.Path(config.invocation_params.dir)
    for arg in config.args:
        path = pathlib.Path(arg.split("::", 1)[0])
        if not path.is_absolute():
            path = base / path
        if _in_cluster_dir(path):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    mine = [item for item in items if _in_cluster_dir(item.path)]
    if not mine:
        return
    if not _explicitly_requested(config):
        selected = [item for item in items if not _in_cluster_dir(item.path)]
        config.hook.pytest_deselected(items=mine)
        items[:] = selected
        return


@pytest.fixture(scope="session", autouse=True)
def _kill_members_on_sigterm():
    """If pytest is stopped by SIGTERM (e.g. `timeout`), SIGKILL this session's members first,
    then let the previous handler (tests/python/conftest.py's, or the default) run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum, frame):
        cluster_harness.kill_all_live("pytest got SIGTERM")
        if callable(previous):
            previous(signum, frame)
        else:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)
    yield
    signal.signal(signal.SIGTERM, previous)
    cluster_harness.kill_all_live("end of session")


def _cluster_maker(request, workdir, made):
    """make(n_ports, cluster_name=None, hosts=None): a cluster_harness.Cluster with n_ports
    ports reserved (member i on hosts[i], 127.0.0.1 by default), listed in `made`."""

    def make(n_ports, cluster_name=None, hosts=None):
        ports = cluster_harness.allocate_ports(n_ports)
        name = cluster_name or "cluster-%d" % ports[0]
        target = getattr(request.config, "_ferrogrid_target", "ferrogrid")
        folder = workdir / ("ports-%d" % ports[0])
        cluster = cluster_harness.Cluster(request.node.name, ports, name, folder, target, hosts)
        made.append(cluster)
        return cluster

    return make


def _stop_clusters(made, workdir, failed):
    """Stops every cluster of `made`; keeps the member logs if `failed`, a member panicked or
    FERROGRID_KEEP_LOGS is set, and fails on a panic."""
    for cluster in made:
        cluster.shutdown()
    panics = [line for cluster in made for line in cluster.panics()]
    if failed or panics or os.environ.get("FERROGRID_KEEP_LOGS"):
        print("member logs kept in %s" % workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    if panics:
        pytest.fail("a member panicked (logs in %s):\n%s" % (workdir, "\n".join(panics[:20])), pytrace=False)


@pytest.fixture
def make_cluster(request):
    """make_cluster(n_ports, cluster_name=None, hosts=None) -> cluster_harness.Cluster with
    n_ports ports reserved for this test (and member i on hosts[i], 127.0.0.1 by default); no
    process started yet. Everything is stopped after the test."""
    made = []
    workdir = cluster_harness.new_workdir(request.node.name)
    request.node._ferrogrid_clusters = made
    yield _cluster_maker(request, workdir, made)
    failed = any(getattr(getattr(request.node, "_rep_" + when, None), "failed", False) for when in ("setup", "call"))
    _stop_clusters(made, workdir, failed)


@pytest.fixture(scope="module")
def shared_cluster(request):
    """As make_cluster, for the tests of one module that can share their members (each with
    names of its own): made once, stopped after the module's last test. A test that kills or
    stops a member must not use it."""
    made = []
    workdir = cluster_harness.new_workdir(request.node.name)
    yield _cluster_maker(request, workdir, made)
    _stop_clusters(made, workdir, False)


@pytest.fixture
def note(request):
    """note(text): a line for the "cluster test notes" terminal section (and the junit xml)."""

    def add(text):
        print(text)
        _notes.append((request.node.nodeid, text))
        request.node.user_properties.append(("note", text))

    return add


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "_rep_" + rep.when, rep)
    if not rep.failed:
        return
    for cluster in getattr(item, "_ferrogrid_clusters", ()):
        if cluster.members:
            title = "members of %s (%s, when %s failed)" % (cluster.cluster_name, cluster.workdir, rep.when)
            rep.sections.append((title, cluster.report()))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _notes:
        return
    terminalreporter.section("cluster test notes")
    for nodeid, text in _notes:
        terminalreporter.write_line("%s: %s" % (nodeid, text))
