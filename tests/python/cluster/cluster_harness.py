"""Processes, clients and polling helpers for the multi-member tests (see conftest.py).

Every member is a `target/release/ferrogrid member` process (FERROGRID_BIN overrides the path)
on 127.0.0.1 with its own port, its own working directory and its own log file (stdout and
stderr, FERROGRID_LOG=info unless set). Each test gets a fresh block of ports (PORT_BLOCK
ports starting at FERROGRID_CLUSTER_BASE_PORT, default 6701, the next free block per test;
not 5801 or 5901, which the Simulator and scripts/bench-cluster use).
"""

import atexit
import datetime
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import hazelcast
from hazelcast.serialization.api import CompactSerializer

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/python: member.py (binary path, raw auth probe)
import member as single_member  # noqa: E402

HOST = "127.0.0.1"
PORT_BLOCK = 10
PARTITION_COUNT = 271

# How long a member may take to accept clients after its process started.
START_TIMEOUT = 20.0
HAZELCAST_START_TIMEOUT = 90.0
# SIGTERM in teardown, then SIGKILL after this many seconds.
TEARDOWN_GRACE = 3.0
# Client invocations give up after this (the client default, 120 s, exceeds the test timeouts).
INVOCATION_TIMEOUT = 30.0

# A Compact type of the cluster tests (clients that write or read it register the serializer).
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)


class PointSerializer(CompactSerializer):
    def read(self, reader):
        return Point(reader.read_int64("x"), reader.read_int64("y"))

    def write(self, writer, point):
        writer.write_int64("x", point.x)
        writer.write_int64("y", point.y)

    def get_type_name(self):
        return "ferrogrid.test.Point"

    def get_class(self):
        return Point


# Both targets' configurations share these properties and structure sections.
COMMON_PROPERTIES = """\
    hazelcast.heartbeat.interval.seconds: 1
    hazelcast.max.no.heartbeat.seconds: 4
    hazelcast.wait.seconds.before.join: 1
    # outgoing member links leave from the member's own address (test_split_brain.py cuts
    # traffic between members' addresses)
    hazelcast.socket.client.bind.any: false
    # test_split_brain.py: the sides look for each other 5 s after a master took charge
    hazelcast.merge.first.run.delay.seconds: 5
    hazelcast.merge.next.run.delay.seconds: 5
"""

COMMON_STRUCTURES = """\
  # test_split_brain_protection.py: rules of two members, attached by name pattern
  split-brain-protection:
    two-for-writes:
      enabled: true
      minimum-cluster-size: 2
      protect-on: WRITE
    two:
      enabled: true
      minimum-cluster-size: 2
    two-recently-active:
      enabled: true
      minimum-cluster-size: 2
      recently-active-split-brain-protection:
        heartbeat-tolerance-millis: 2500
  map:
    default:
      backup-count: 1
    # test_event_journal_cluster.py: a journal of 10 events in each of the 271 partitions
    journal-*:
      event-journal:
        enabled: true
        capacity: 2710
    # test_persistence_cluster.py: maps a persisting member keeps on disk (Hazelcast's
    # open edition accepts the section and persists nothing)
    durable-*:
      backup-count: 1
      data-persistence:
        enabled: true
    # test_partition_lost_listeners_*: a map whose data goes with its owner
    nobackup-*:
      backup-count: 0
    protected-writes-*:
      split-brain-protection-ref: two-for-writes
    protected-all-*:
      split-brain-protection-ref: two
    protected-active-*:
      split-brain-protection-ref: two-recently-active
    # test_split_brain.py: maps merged by other policies than the default (PutIfAbsent)
    merge-passthrough-*:
      merge-policy:
        class-name: PassThroughMergePolicy
    merge-discard-*:
      merge-policy:
        class-name: com.hazelcast.spi.merge.DiscardMergePolicy
    # ... and by the policies that compare entry statistics (kept only with per-entry stats)
    merge-latest-update-*:
      per-entry-stats-enabled: true
      merge-policy:
        class-name: LatestUpdateMergePolicy
    merge-latest-access-*:
      per-entry-stats-enabled: true
      merge-policy:
        class-name: com.hazelcast.spi.merge.LatestAccessMergePolicy
    merge-higher-hits-*:
      per-entry-stats-enabled: true
      merge-policy:
        class-name: HigherHitsMergePolicy
    merge-expiration-time-*:
      per-entry-stats-enabled: true
      merge-policy:
        class-name: ExpirationTimeMergePolicy
  queue:
    protected-*:
      split-brain-protection-ref: two
    # test_split_brain.py: queues merged by other policies than the default (PutIfAbsent)
    merge-passthrough-*:
      merge-policy:
        class-name: PassThroughMergePolicy
    merge-discard-*:
      merge-policy:
        class-name: DiscardMergePolicy
  # test_split_brain.py: multimaps and cardinality estimators merged by other policies than
  # their defaults (PutIfAbsent; HyperLogLog)
  multimap:
    merge-passthrough-*:
      merge-policy:
        class-name: PassThroughMergePolicy
    merge-discard-*:
      merge-policy:
        class-name: DiscardMergePolicy
  list:
    # test_split_brain.py: lists merged by other policies than the default (PutIfAbsent)
    merge-passthrough-*:
      merge-policy:
        class-name: PassThroughMergePolicy
    merge-discard-*:
      merge-policy:
        class-name: DiscardMergePolicy
  set:
    # test_split_brain.py: sets merged by other policies than the default (PutIfAbsent)
    merge-passthrough-*:
      merge-policy:
        class-name: PassThroughMergePolicy
    merge-discard-*:
      merge-policy:
        class-name: DiscardMergePolicy
  ringbuffer:
    # test_split_brain.py: ringbuffers merged by other policies than the default (PutIfAbsent)
    merge-passthrough-*:
      capacity: 4
      merge-policy:
        class-name: PassThroughMergePolicy
    merge-discard-*:
      capacity: 4
      merge-policy:
        class-name: DiscardMergePolicy
    # test_split_brain.py: small ringbuffers merged by the default policy (PutIfAbsent)
    merge-rb-*:
      capacity: 4
  cardinality-estimator:
    merge-passthrough-*:
      merge-policy:
        class-name: PassThroughMergePolicy
    merge-putifabsent-*:
      merge-policy:
        class-name: PutIfAbsentMergePolicy
    merge-discard-*:
      merge-policy:
        class-name: DiscardMergePolicy
  flake-id-generator:
    # test_flake_id_cluster.py: node ids join version + 1 in 2 bits: only members that
    # joined at versions 1 and 2 fit (node ids 2 and 3)
    flake-narrow-*:
      node-id-offset: 1
      bits-node-id: 2
"""

# The member configuration of every test (hazelcast.yaml shape).
MEMBER_CONFIG = (
    """\
hazelcast:
  properties:
{properties}    # no IO balancer moving connections between reactors while a test runs
    hazelcast.io.balancer.interval.seconds: -1
{structures}  metrics:
    enabled: false
ferrogrid:
  metrics:
    # no metrics file, no HTTP endpoint (its default port 9701 would be shared by all members)
    file: ""
    http-enabled: false
"""
    .replace("{properties}", COMMON_PROPERTIES)
    .replace("{structures}", COMMON_STRUCTURES)
)

# Target "hazelcast" (pytest --target hazelcast / FERROGRID_TARGET=hazelcast): the same tests
# against real Hazelcast 5.6.0 members (HAZELCAST_JAR), which checks that the expectations are
# Hazelcast's. The same settings, plus a graceful shutdown hook (Hazelcast's default on SIGTERM
# is TERMINATE); the network section is per member.
HAZELCAST_MEMBER_CONFIG = (
    """\
hazelcast:
  cluster-name: {cluster_name}
  properties:
{properties}    hazelcast.shutdownhook.policy: GRACEFUL
    hazelcast.phone.home.enabled: false
{structures}  network:
    port:
      port: {port}
      auto-increment: false
    interfaces:
      enabled: true
      interfaces:
        - {host}
    join:
      auto-detection:
        enabled: false
      multicast:
        enabled: false
      tcp-ip:
        enabled: true
        member-list:
{member_list}
  jet:
    enabled: true
"""
    .replace("{properties}", COMMON_PROPERTIES)
    .replace("{structures}", COMMON_STRUCTURES)
)

# --------------------------------------------------------------------------- ports

_next_block = None


def _port_free(port):
    # no SO_REUSEADDR: a port with connections in TIME_WAIT counts as taken (conservative)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def allocate_ports(count):
    """`count` ports from the next block of PORT_BLOCK ports whose ports are all free."""
    global _next_block
    if count > PORT_BLOCK:
        raise ValueError("at most %d ports per test" % PORT_BLOCK)
    if _next_block is None:
        _next_block = int(os.environ.get("FERROGRID_CLUSTER_BASE_PORT", "6701"))
    for _ in range(200):
        start = _next_block
        _next_block += PORT_BLOCK
        if start + PORT_BLOCK > 65535:
            break
        ports = list(range(start, start + PORT_BLOCK))
        if all(_port_free(p) for p in ports):
            return ports[:count]
    raise RuntimeError("no block of %d free ports found" % PORT_BLOCK)


def address(port, host=HOST):
    return "%s:%d" % (host, port)


# --------------------------------------------------------------------------- processes

_live = set()  # every MemberProcess whose process may still run (killed at exit / on SIGTERM)


def kill_all_live(why="clean-up"):
    for proc in list(_live):
        proc.kill9(why)


atexit.register(kill_all_live)

_SETPRIV = shutil.which("setpriv")


def hazelcast_java_command(config):
    """The command that starts a Hazelcast member with the configuration file `config`."""
    return [
        os.environ.get("JAVA", "java"),
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-Dhazelcast.config=%s" % config,
        "-cp",
        single_member.hazelcast_classpath(),
        "com.hazelcast.core.server.HazelcastMemberStarter",
    ]


class MemberProcess:
    """One `ferrogrid member` process."""

    def __init__(
        self,
        index,
        port,
        cluster_name,
        member_list,
        config_path,
        workdir,
        target="ferrogrid",
        extra_yaml="",
        host=HOST,
        extra_properties="",
        extra_ferrogrid_yaml="",
    ):
        self.target = target
        # YAML lines (indented for the `hazelcast:` section) this member adds to the shared
        # configuration, on both targets (e.g. `  lite-member:\n    enabled: true\n`), and
        # lines it adds to the `properties:` section (e.g. `    hazelcast.x: 1\n`).
        self.extra_yaml = extra_yaml
        self.extra_properties = extra_properties
        # Lines (indented for the `ferrogrid:` section) a ferrogrid member adds: its own bounds.
        self.extra_ferrogrid_yaml = extra_ferrogrid_yaml
        self.index = index
        self.port = port
        self.host = host
        self.cluster_name = cluster_name
        self.member_list = list(member_list)
        self.config_path = config_path
        self.workdir = pathlib.Path(workdir) / ("member-%d-%d" % (index, port))
        self.log_path = pathlib.Path(workdir) / ("member-%d-%d.log" % (index, port))
        self.proc = None
        self._log = None

    def __repr__(self):
        return "member %d (%s, pid %s)" % (self.index, self.address, self.pid)

    @property
    def address(self):
        return address(self.port, self.host)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def command(self):
        if self.target == "hazelcast":
            return self.hazelcast_command()
        binary = single_member.ferrogrid_bin()
        if not binary.exists():
            raise RuntimeError(
                "ferrogrid binary not found at %s (run `cargo build --release -p ferrogrid` or set FERROGRID_BIN)"
                % binary
            )
        cmd = [str(binary), "member", "--host", self.host, "--port", str(self.port), "--no-port-auto-increment"]
        cmd += ["--cluster-name", self.cluster_name]
        for addr in self.member_list:
            cmd += ["--member", addr]
        own = self.extra_yaml or self.extra_properties or self.extra_ferrogrid_yaml
        cmd += ["--config", str(self.own_config(MEMBER_CONFIG) if own else self.config_path)]
        return cmd

    def own_config(self, text):
        """Writes `text` with this member's extra YAML into its working directory."""
        config = self.workdir / "hazelcast.yaml"
        text = text.replace("  properties:\n", "  properties:\n" + self.extra_properties, 1)
        text = text.replace("\nferrogrid:\n", "\nferrogrid:\n" + self.extra_ferrogrid_yaml, 1)
        config.write_text(text.replace("hazelcast:\n", "hazelcast:\n" + self.extra_yaml, 1))
        return config

    def hazelcast_command(self):
        jar = single_member.hazelcast_jar()
        if not jar.exists():
            raise RuntimeError("Hazelcast jar not found at %s (set HAZELCAST_JAR)" % jar)
        config = self.own_config(
            HAZELCAST_MEMBER_CONFIG.format(
                cluster_name=self.cluster_name,
                host=self.host,
                port=self.port,
                member_list="\n".join("          - %s" % addr for addr in self.member_list),
            )
        )
        return hazelcast_java_command(config)

    def start(self):
        """Starts the process and returns at once (see wait_ready)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        cmd = self.command()
        self._log = open(self.log_path, "ab")
        self._log.write(("$ %s\n" % " ".join(cmd)).encode())
        self._log.flush()
        env = dict(os.environ)
        env.setdefault("FERROGRID_LOG", "info")
        env.setdefault("RUST_BACKTRACE", "1")
        # the member dies with the test process even if that is SIGKILLed (setpriv execs the
        # member, so the pid is the member's own)
        prefix = [_SETPRIV, "--pdeathsig", "KILL", "--"] if _SETPRIV else []
        self.proc = subprocess.Popen(
            prefix + cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=str(self.workdir),
            env=env,
        )
        _live.add(self)
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    @property
    def returncode(self):
        return None if self.proc is None else self.proc.poll()

    def accepts_clients(self):
        """A raw Client.Authentication with this member's cluster name gets status 0."""
        return single_member.probe(self.host, self.port, self.cluster_name, timeout=2.0)

    def wait_ready(self, timeout=None):
        if timeout is None:
            timeout = START_TIMEOUT if self.target == "ferrogrid" else HAZELCAST_START_TIMEOUT
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                raise AssertionError(
                    "%r exited with code %s during start-up; log %s:\n%s"
                    % (self, self.returncode, self.log_path, self.log_tail(40))
                )
            if self.accepts_clients():
                return self
            if time.monotonic() >= deadline:
                raise AssertionError(
                    "%r did not accept clients within %.0f s; log %s:\n%s"
                    % (self, timeout, self.log_path, self.log_tail(40))
                )
            time.sleep(0.2)

    def mark(self, text):
        """Appends a `[harness] <UTC time> text` line to the member's log (O_APPEND, as the
        member writes it), so that the log shows which signals came from the tests."""
        if self._log is not None:
            now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            self._log.write(("[harness] %s %s\n" % (now, text)).encode())
            self._log.flush()

    def send(self, sig, why="test"):
        if self.alive():
            self.mark("sending %s (%s)" % (signal.Signals(sig).name, why))
            os.kill(self.proc.pid, sig)

    def kill9(self, why="test"):
        """SIGKILL (no-op if it has exited); waits for the process to be gone."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.mark("sending SIGKILL (%s)" % why)
                try:
                    os.kill(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()
        self._done()

    def wait_exit(self, timeout):
        """The exit code, or None if the process still runs after `timeout` seconds."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._done()
        return rc

    def _done(self):
        _live.discard(self)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_text(self, max_bytes=2_000_000):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - max_bytes))
                data = f.read()
        except OSError:
            return ""
        return data.decode("utf-8", "replace")

    def log_lines(self):
        """The member's own log lines (without the harness's `$ command` and `[harness]` lines)."""
        return [line for line in self.log_text().splitlines() if not line.startswith(("$ ", "[harness] "))]

    def log_tail(self, lines=60):
        return "\n".join(self.log_text(max_bytes=200_000).splitlines()[-lines:])

    def status(self):
        if self.proc is None:
            return "not started"
        rc = self.proc.poll()
        return "running" if rc is None else "exited with code %s" % rc


class Cluster:
    """The members and clients of one test: `ports` fixed up front, processes started on demand."""

    def __init__(self, name, ports, cluster_name, workdir, target="ferrogrid", hosts=None):
        self.target = target
        self.name = name
        self.ports = list(ports)
        # Member i's address (127.0.0.1 for all unless given: test_split_brain.py gives each
        # member its own loopback address, to cut traffic between them).
        self.hosts = list(hosts) if hosts else [HOST] * len(self.ports)
        self.cluster_name = cluster_name
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_path = self.workdir / "hazelcast.yaml"
        self.config_path.write_text(MEMBER_CONFIG)
        self.members = []  # MemberProcess, in start order
        self.clients = []

    @property
    def addresses(self):
        return [address(p, h) for p, h in zip(self.ports, self.hosts)]

    # ---- members

    def start(
        self, index, cluster_name=None, member_list=None, extra_yaml="", extra_properties="", extra_ferrogrid_yaml=""
    ):
        """Starts member `index` (on ports[index]) without waiting. `member_list` defaults to
        every port of the cluster (its own address included); `extra_yaml` (lines of the
        `hazelcast:` section), `extra_properties` (lines of its `properties:`) and
        `extra_ferrogrid_yaml` (lines of the `ferrogrid:` section, ferrogrid only) are added to
        this member's configuration."""
        proc = MemberProcess(
            index,
            self.ports[index],
            cluster_name or self.cluster_name,
            self.addresses if member_list is None else member_list,
            self.config_path,
            self.workdir,
            self.target,
            extra_yaml,
            self.hosts[index],
            extra_properties,
            extra_ferrogrid_yaml,
        )
        self.members.append(proc)
        return proc.start()

    def start_members(self, indexes, member_list=None, wait=True, cluster_name=None, extra_properties=""):
        """Starts the members at once (all Popen'ed before any is waited for)."""
        procs = [
            self.start(i, cluster_name=cluster_name, member_list=member_list, extra_properties=extra_properties)
            for i in indexes
        ]
        if wait:
            for proc in procs:
                proc.wait_ready()
        return procs

    def by_port(self, port):
        for proc in self.members:
            if proc.port == port and proc.proc is not None:
                return proc
        raise AssertionError("no member process on port %d (members: %r)" % (port, self.members))

    def by_member_info(self, info):
        return self.by_port(info.address.port)

    def running(self):
        return [m for m in self.members if m.alive()]

    def assert_running(self, procs, when):
        """Fails naming every process of `procs` that is no longer running (e.g. killed from
        outside the test, or crashed)."""
        gone = ["%r %s" % (p, p.status()) for p in procs if not p.alive()]
        assert not gone, "%s: member process(es) no longer running: %s" % (when, ", ".join(gone))

    # ---- clients

    def client(self, addresses=None, smart=True, cluster_name=None, **kwargs):
        options = dict(
            cluster_name=cluster_name or self.cluster_name,
            cluster_members=list(addresses or self.addresses),
            smart_routing=smart,
            cluster_connect_timeout=30,
            invocation_timeout=INVOCATION_TIMEOUT,
        )
        options.update(kwargs)
        client = hazelcast.HazelcastClient(**options)
        self.clients.append(client)
        return client

    # ---- teardown

    def shutdown(self):
        for client in self.clients:
            try:
                client.shutdown()
            except Exception:  # noqa: BLE001 - a broken member must not hide the real failure
                pass
        self.clients = []
        running = self.running()
        for proc in running:
            try:
                proc.send(signal.SIGTERM, "teardown")
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + TEARDOWN_GRACE
        for proc in running:
            if proc.wait_exit(max(0.0, deadline - time.monotonic())) is None:
                print("teardown: %r still ran %.0f s after SIGTERM: SIGKILL" % (proc, TEARDOWN_GRACE))
                proc.kill9("teardown, %.0f s after SIGTERM" % TEARDOWN_GRACE)
        for proc in self.members:
            proc.kill9("teardown")  # no-op for exited ones; closes the log files

    def panics(self):
        found = []
        for proc in self.members:
            for line in proc.log_lines():
                if "panicked at" in line:
                    found.append("%r: %s" % (proc, line))
        return found

    def report(self, lines=60):
        """Status and log tail of every member, for failure reports."""
        parts = []
        for proc in self.members:
            parts.append(
                "----- %r, %s, port %d, cluster %s; log %s (last %d lines):\n%s"
                % (proc, proc.status(), proc.port, proc.cluster_name, proc.log_path, lines, proc.log_tail(lines))
            )
        return "\n".join(parts)


# --------------------------------------------------------------------------- polling and views


def wait_until(condition, timeout, message, interval=0.2):
    """Polls `condition()` until it returns something truthy (returned). On timeout raises
    AssertionError with `message` (a string, or a callable giving the current state)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError("not reached within %.0f s: %s" % (timeout, text))
        time.sleep(interval)


def members_of(client):
    return list(client.cluster_service.get_members())


def describe_members(members):
    return "[%s]" % ", ".join("%s:%d %s" % (m.address.host, m.address.port, m.uuid) for m in members)


def partition_owners(client):
    """{owner uuid (None = not assigned): number of partitions} as the client sees it."""
    service = client.partition_service
    counts = {}
    for pid in range(service.get_partition_count() or PARTITION_COUNT):
        owner = service.get_partition_owner(pid)
        counts[owner] = counts.get(owner, 0) + 1
    return counts


def chunks(seq, size):
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


def key(i):
    return "k%d" % i


def value(i):
    return "v%d" % i


def put_entries(proxy, count, chunk=500):
    """k0..k{count-1} -> v0..; put_all in chunks of `chunk`; each call must return normally."""
    for part in chunks(range(count), chunk):
        proxy.put_all({key(i): value(i) for i in part})


def check_values(proxy, pairs, chunk=1000, what=""):
    """Every (key, value) of `pairs` reads back (get_all in chunks)."""
    missing, wrong = [], []
    for part in chunks(list(pairs), chunk):
        got = proxy.get_all([k for k, _ in part])
        for k, v in part:
            actual = got.get(k)
            if actual is None:
                missing.append(k)
            elif actual != v:
                wrong.append((k, actual))
    assert not missing and not wrong, "%s%d of %d keys missing (e.g. %s), %d with a wrong value (e.g. %s)" % (
        what + ": " if what else "",
        len(missing),
        len(pairs),
        missing[:10],
        len(wrong),
        wrong[:10],
    )


def check_entries(proxy, count, chunk=1000, what=""):
    """Every k{i} (i < count) reads back as v{i} (get_all in chunks), and size() == count."""
    check_values(proxy, [(key(i), value(i)) for i in range(count)], chunk, what)
    size = proxy.size()
    assert size == count, "%ssize() is %d, expected %d" % (what + ": " if what else "", size, count)


def unique_map_name(node_name):
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", node_name)[:50].strip("-")
    return "cluster-%s-%d" % (base, int(time.time() * 1000) % 1_000_000)


def new_workdir(node_name):
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", node_name)[:50].strip("-")
    return pathlib.Path(tempfile.mkdtemp(prefix="ferrogrid-cluster-%s-" % base))
