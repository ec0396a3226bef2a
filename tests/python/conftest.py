"""Fixtures for the client-side test suite.

Target selection (first match wins):
  --target=ferrogrid|hazelcast   command-line option
  FERROGRID_TARGET               environment variable
  ferrogrid                      default

FERROGRID_ADDRESS=host:port uses an already running member instead of starting one
(the host must be a loopback address).

One member is started per pytest session (see member.py), before the first test and outside
the per-test timeouts, and stopped (SIGTERM, SIGKILL after 10 s) after the last one. Its log
is kept in a temp file whose path is printed at the end of the run; the part of the log
written while a test ran is attached to that test's failure report.
"""

import os
import re
import shutil
import signal
import threading
import uuid

import hazelcast
import pytest

from member import Member

CLUSTER_NAME = "dev"
ROUTINGS = ("smart", "unisocket")


def pytest_addoption(parser):
    parser.addoption(
        "--target",
        choices=("ferrogrid", "hazelcast"),
        default=None,
        help="member to test against (default: $FERROGRID_TARGET or ferrogrid)",
    )


def get_target(config):
    target = config.getoption("--target") or os.environ.get("FERROGRID_TARGET") or "ferrogrid"
    if target not in ("ferrogrid", "hazelcast"):
        raise pytest.UsageError("FERROGRID_TARGET must be ferrogrid or hazelcast, not %r" % target)
    return target


def pytest_configure(config):
    config._ferrogrid_target = get_target(config)
    config._ferrogrid_member = None

    def on_sigterm(signum, frame):
        # `timeout` (scripts/test) or CI stops pytest: stop the member this session started
        # so that it is not left behind, then die of SIGTERM as usual.
        proc = config._ferrogrid_member
        if proc is not None:
            proc.stop()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_sigterm)


def pytest_report_header(config):
    addr = os.environ.get("FERROGRID_ADDRESS")
    return "ferrogrid target: %s%s" % (
        config._ferrogrid_target,
        " (already running at %s)" % addr if addr else "",
    )


def pytest_collection_modifyitems(config, items):
    target = config._ferrogrid_target
    for item in items:
        if target != "ferrogrid" and item.get_closest_marker("ferrogrid_only"):
            item.add_marker(pytest.mark.skip(reason="ferrogrid_only test (target is %s)" % target))
        if target != "hazelcast" and item.get_closest_marker("hazelcast_only"):
            item.add_marker(pytest.mark.skip(reason="hazelcast_only test (target is %s)" % target))


class RunningMember:
    """What the tests need to know about the member under test."""

    def __init__(self, target, host, port, process=None):
        self.target = target
        self.host = host
        self.port = port
        self.process = process  # member.Member, or None for FERROGRID_ADDRESS

    @property
    def address(self):
        return "%s:%d" % (self.host, self.port)

    @property
    def log_path(self):
        return self.process.log_path if self.process else None


def _parse_address(addr):
    host, _, port = addr.rpartition(":")
    if not (host.startswith("127.") or host == "localhost"):
        raise pytest.UsageError("FERROGRID_ADDRESS must be a loopback address, got %r" % addr)
    return host, int(port)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    """Start the member before the first test (outside the per-test timeouts), stop it after."""
    config = session.config
    proc = None
    needed = any("member" in getattr(item, "fixturenames", ()) for item in session.items)
    if needed and not config.option.collectonly and not os.environ.get("FERROGRID_ADDRESS"):
        proc = Member(config._ferrogrid_target)
        config._ferrogrid_member = proc
        try:
            proc.start()
        except RuntimeError as e:
            config._ferrogrid_member_error = str(e)
    try:
        yield
    finally:
        if proc is not None:
            proc.stop()


@pytest.fixture(scope="session")
def member(request):
    """The one member of this session (started by pytest_runtestloop unless FERROGRID_ADDRESS is set)."""
    config = request.config
    target = config._ferrogrid_target
    addr = os.environ.get("FERROGRID_ADDRESS")
    if addr:
        host, port = _parse_address(addr)
        return RunningMember(target, host, port)
    error = getattr(config, "_ferrogrid_member_error", None)
    if error:
        pytest.fail("could not start the %s member: %s" % (target, error), pytrace=False)
    proc = config._ferrogrid_member
    if proc is None or not proc.alive():
        pytest.fail("the %s member is not running (log: %s)" % (target, proc and proc.log_path), pytrace=False)
    return RunningMember(target, proc.host, proc.port, proc)


@pytest.fixture(autouse=True)
def _member_still_running(request):
    """Fail fast (instead of waiting for client timeouts) once the member process has died."""
    proc = request.config._ferrogrid_member
    if proc is not None and proc.proc is not None and not proc.alive():
        pytest.fail(
            "the %s member is no longer running (exit code %s); log %s:\n%s"
            % (proc.target, proc.proc.returncode, proc.log_path, proc.log_tail(40)),
            pytrace=False,
        )


@pytest.fixture(scope="session")
def target(member):
    return member.target


def new_client(member, routing="smart", **kwargs):
    options = dict(
        cluster_members=[member.address],
        cluster_name=CLUSTER_NAME,
        cluster_connect_timeout=30,
        smart_routing=(routing == "smart"),
    )
    options.update(kwargs)
    return hazelcast.HazelcastClient(**options)


@pytest.fixture(params=ROUTINGS)
def routing(request):
    return request.param


@pytest.fixture
def client_factory(member, routing):
    """Makes clients with this test's routing mode; all are shut down after the test."""
    made = []

    def make(**kwargs):
        c = new_client(member, routing, **kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        try:
            c.shutdown()
        except Exception:  # noqa: BLE001 - a broken member must not hide the real failure
            pass


@pytest.fixture
def client(client_factory):
    return client_factory()


def unique_name(request, prefix="m"):
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)[:60].strip("-")
    return "%s-%s-%s" % (prefix, base, uuid.uuid4().hex[:12])


@pytest.fixture
def map_name(request):
    return unique_name(request)


@pytest.fixture
def m(client, map_name):
    """A fresh blocking IMap with a unique name; destroyed (best effort) after the test."""
    proxy = client.get_map(map_name).blocking()
    yield proxy
    try:
        proxy.destroy()
    except Exception:  # noqa: BLE001
        pass


# --------------------------------------------------------------------------- member log in reports


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    proc = item.config._ferrogrid_member
    item._member_log_start = proc.log_size() if proc else 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    proc = item.config._ferrogrid_member
    if proc is None or not rep.failed:
        return
    start = getattr(item, "_member_log_start", 0)
    text = proc.log_text(start, max_bytes=20_000)
    lines = text.splitlines()[-150:]
    status = "running" if proc.alive() else "NOT RUNNING (exit code %s)" % proc.proc.returncode
    rep.sections.append(
        (
            "member log (%s, %s; during this test, last %d lines)" % (proc.log_path, status, len(lines)),
            "\n".join(lines),
        )
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    proc = config._ferrogrid_member
    if proc is None:
        return
    keep = exitstatus != 0 or os.environ.get("FERROGRID_KEEP_LOGS")
    config._ferrogrid_keep_log = keep
    terminalreporter.write_line(
        "%s member log: %s (member %s%s)"
        % (
            proc.target,
            proc.log_path,
            "still running" if proc.alive() else "stopped",
            "" if keep else "; deleted after this passing run, FERROGRID_KEEP_LOGS=1 keeps it",
        )
    )


def pytest_unconfigure(config):
    proc = getattr(config, "_ferrogrid_member", None)
    if proc is not None and not proc.alive() and not getattr(config, "_ferrogrid_keep_log", True):
        shutil.rmtree(proc.workdir, ignore_errors=True)
