#!/usr/bin/env python3
"""Start / stop one member for the client test suites (stdlib only).

Targets:
  ferrogrid  - <repo>/target/release/ferrogrid member --port P --cluster-name dev
               --config <generated hazelcast.yaml>  (override the binary with FERROGRID_BIN)
  hazelcast  - a real Hazelcast 5.6.0 member (HAZELCAST_VERSION=5.4.0 for another version) from the jar (HAZELCAST_JAR, default
               ~/.m2/repository/com/hazelcast/hazelcast/5.6.0/hazelcast-5.6.0.jar) plus its
               SQL engine (HAZELCAST_SQL_JAR, default .../hazelcast-sql/5.6.0/hazelcast-sql-5.6.0.jar,
               left out of the class path if missing), java -Xmx512m (HAZELCAST_HEAP) ... HazelcastMemberStarter
               with the generated hazelcast.yaml

Both targets get the same generated hazelcast.yaml: member-config.yaml (next to this file:
the map configs the tests rely on) with the network section for 127.0.0.1:P and
`jet: enabled: true` added (Hazelcast's SQL runs on the Jet engine: `client.sql.execute` needs
both the sql jar and Jet; Jet adds ~0.3 s to the member's start-up. ferrogrid lists the `jet`
section among the configuration keys it ignores).

The member listens on 127.0.0.1 only. It is "ready" once a raw Client.Authentication
(shared/spec/client-protocol.md section 4.1.1) on a fresh connection gets status 0.

As a program it runs one command against a freshly started member and stops it after:

  python3 tests/python/member.py --target hazelcast -- node tests/node/smoke.js {address}

`{address}` in the command is replaced by host:port, and FERROGRID_ADDRESS is exported to
the command. The exit code is the command's.
"""

import argparse
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import wire  # noqa: E402

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGETS = ("ferrogrid", "hazelcast")
HOST = "127.0.0.1"
CLUSTER_NAME = "dev"
# HAZELCAST_VERSION picks the reference member's version (default 5.6.0); 5.4.0 is the last open
# version with the CP Subsystem (test_cp.py runs against it: HAZELCAST_VERSION=5.4.0).
HAZELCAST_VERSION = os.environ.get("HAZELCAST_VERSION", "5.6.0")
M2 = pathlib.Path.home() / ".m2/repository/com/hazelcast"
DEFAULT_HAZELCAST_JAR = M2 / "hazelcast" / HAZELCAST_VERSION / ("hazelcast-%s.jar" % HAZELCAST_VERSION)
DEFAULT_CACHE_API_JAR = (
    pathlib.Path.home() / ".m2/repository/javax/cache/cache-api/1.1.1/cache-api-1.1.1.jar"
)
DEFAULT_HAZELCAST_SQL_JAR = (
    M2 / "hazelcast-sql" / HAZELCAST_VERSION / ("hazelcast-sql-%s.jar" % HAZELCAST_VERSION)
)


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def hazelcast_jar():
    return pathlib.Path(os.environ.get("HAZELCAST_JAR", str(DEFAULT_HAZELCAST_JAR)))


def hazelcast_sql_jar():
    """The jar of Hazelcast's SQL engine (`mvn -q dependency:get
    -Dartifact=com.hazelcast:hazelcast-sql:5.6.0 -Dtransitive=false`)."""
    return pathlib.Path(os.environ.get("HAZELCAST_SQL_JAR", str(DEFAULT_HAZELCAST_SQL_JAR)))


def cache_api_jar():
    """The JCache API jar (`mvn -q dependency:get -Dartifact=javax.cache:cache-api:1.1.1`)."""
    return pathlib.Path(os.environ.get("CACHE_API_JAR", str(DEFAULT_CACHE_API_JAR)))


def hazelcast_classpath():
    """The core jar, and the SQL jar if it exists (without it, SQL statements fail with
    'Cannot execute SQL query because "hazelcast-sql" module is not on the classpath'), and
    the JCache API jar if it exists (without it, the member serves no Cache request: its
    cache service starts only with javax.cache on the class path)."""
    jars = [hazelcast_jar()]
    if hazelcast_sql_jar().exists():
        jars.append(hazelcast_sql_jar())
    if cache_api_jar().exists():
        jars.append(cache_api_jar())
    return os.pathsep.join(str(j) for j in jars)


def ferrogrid_bin():
    return pathlib.Path(os.environ.get("FERROGRID_BIN", str(REPO_ROOT / "target/release/ferrogrid")))


MEMBER_CONFIG = pathlib.Path(__file__).resolve().parent / "member-config.yaml"


def network_yaml(port):
    """The lines under `hazelcast:` that pin the member to 127.0.0.1:port, alone."""
    return f"""\
  network:
    port:
      port: {port}
      auto-increment: false
    interfaces:
      enabled: true
      interfaces:
        - 127.0.0.1
    join:
      auto-detection:
        enabled: false
      multicast:
        enabled: false
      tcp-ip:
        enabled: true
        member-list:
          - 127.0.0.1:{port}
  jet:
    enabled: true
"""


def hazelcast_yaml(port, cluster_name=CLUSTER_NAME, base=MEMBER_CONFIG):
    """member-config.yaml with the cluster name and the network section filled in.

    A textual merge (stdlib only): `base` must have a top-level `hazelcast:` line, two-space
    indentation and no `network:` / `jet:` section; its `cluster-name:` line is replaced.
    """
    lines = pathlib.Path(base).read_text().splitlines()
    out = []
    seen_root = False
    for line in lines:
        if line.rstrip() == "hazelcast:":
            seen_root = True
            out.append(line)
            out.append("  cluster-name: %s" % cluster_name)
            out.extend(network_yaml(port).splitlines())
            continue
        if seen_root and (line.startswith("  cluster-name:") or line.startswith("  network:") or line.startswith("  jet:")):
            if not line.startswith("  cluster-name:"):
                raise ValueError("%s must not have its own %s section" % (base, line.strip()))
            continue
        out.append(line)
    if not seen_root:
        raise ValueError("%s has no top-level `hazelcast:` key" % base)
    return "\n".join(out) + "\n"


def probe(host, port, cluster_name=CLUSTER_NAME, timeout=2.0, credentials=None, ssl_context=None):
    """True if a client can authenticate right now (status 0); `credentials`: (user, password);
    `ssl_context`: over TLS."""
    try:
        conn = wire.Connection(host, port, timeout=timeout, ssl_context=ssl_context)
    except OSError:
        return False
    username, password = credentials or (None, None)
    try:
        response = wire.authenticate(
            conn, cluster_name=cluster_name, client_name="ferrogrid-probe", username=username, password=password
        )
        return response["status"] == 0
    except (OSError, wire.ConnectionClosed, ValueError, AssertionError, IndexError):
        return False
    finally:
        conn.close()


class Member:
    """One member process on 127.0.0.1:<free port>; its stdout+stderr go to log_path."""

    def __init__(
        self,
        target,
        port=None,
        cluster_name=CLUSTER_NAME,
        config=None,
        workdir=None,
        credentials=None,
        env=None,
        ssl_context=None,
    ):
        if target not in TARGETS:
            raise ValueError("unknown target %r (expected one of %s)" % (target, ", ".join(TARGETS)))
        self.target = target
        self.host = HOST
        self.port = port or free_port()
        self.cluster_name = cluster_name
        self.config = config
        # (username, password) the readiness probe authenticates with.
        self.credentials = credentials
        # The member's environment (None: this process's).
        self.env = env
        # The readiness probe speaks TLS with this `ssl.SSLContext` when the member serves TLS.
        self.ssl_context = ssl_context
        self.workdir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="ferrogrid-%s-member-" % target))
        self.log_path = self.workdir / "member.log"
        self.proc = None
        self._log = None

    @property
    def address(self):
        return "%s:%d" % (self.host, self.port)

    def command(self):
        if self.target == "ferrogrid":
            binary = ferrogrid_bin()
            if not binary.exists():
                raise RuntimeError(
                    "ferrogrid binary not found at %s (run `cargo build --release -p ferrogrid` "
                    "or set FERROGRID_BIN)" % binary
                )
            cmd = [str(binary), "member", "--port", str(self.port), "--no-port-auto-increment", "--cluster-name", self.cluster_name]
            cmd += ["--config", str(self.config_file())]
            return cmd
        jar = hazelcast_jar()
        if not jar.exists():
            raise RuntimeError(
                "Hazelcast jar not found at %s (run `mvn -q dependency:get "
                "-Dartifact=com.hazelcast:hazelcast:5.6.0` or set HAZELCAST_JAR)" % jar
            )
        config = self.config_file()
        return [
            os.environ.get("JAVA", "java"),
            "-Xmx%s" % os.environ.get("HAZELCAST_HEAP", "512m"),
            "-Dhazelcast.phone.home.enabled=false",
            "-Dhazelcast.config=%s" % config,
            "-cp",
            hazelcast_classpath(),
            "com.hazelcast.core.server.HazelcastMemberStarter",
        ]

    def config_file(self):
        """The given config file, else member-config.yaml + network written to the workdir."""
        if self.config is not None:
            return self.config
        config = self.workdir / "hazelcast.yaml"
        config.write_text(hazelcast_yaml(self.port, self.cluster_name))
        return config

    def start(self, timeout=180.0):
        cmd = self.command()
        self._log = open(self.log_path, "ab")
        self._log.write(("$ %s\n" % " ".join(cmd)).encode())
        self._log.flush()
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=str(self.workdir),
            env=self.env,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    "%s member exited with code %s during start-up; log %s:\n%s"
                    % (self.target, self.proc.returncode, self.log_path, self.log_tail())
                )
            if probe(self.host, self.port, self.cluster_name, credentials=self.credentials, ssl_context=self.ssl_context):
                return self
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(
            "%s member did not accept clients on %s within %.0f s; log %s:\n%s"
            % (self.target, self.address, timeout, self.log_path, self.log_tail())
        )

    def stop(self, grace=10.0):
        """SIGTERM, then SIGKILL after `grace` seconds. Returns the exit code."""
        rc = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(grace)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            rc = self.proc.returncode
        if self._log is not None:
            self._log.close()
            self._log = None
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_size(self):
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_text(self, start=0, max_bytes=200_000):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(start)
                data = f.read()
        except OSError:
            return ""
        if len(data) > max_bytes:
            data = b"...[cut]...\n" + data[-max_bytes:]
        return data.decode("utf-8", "replace")

    def log_tail(self, lines=60):
        return "\n".join(self.log_text().splitlines()[-lines:])

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=TARGETS, default=os.environ.get("FERROGRID_TARGET", "ferrogrid"))
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--cluster-name", default=CLUSTER_NAME)
    parser.add_argument("--timeout", type=float, default=180.0, help="start-up timeout (s)")
    parser.add_argument("--keep-log", action="store_true", help="print the member log even on success")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command to run ({address} is substituted)")
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("no command given")

    member = Member(args.target, port=args.port, cluster_name=args.cluster_name)

    def on_sigterm(signum, frame):
        # stopped from outside (e.g. by `timeout`): do not leave the member behind
        member.stop()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)
    print("[member] starting %s on %s (log: %s)" % (args.target, member.address, member.log_path), flush=True)
    try:
        member.start(args.timeout)
    except RuntimeError as e:
        print("[member] %s" % e, file=sys.stderr, flush=True)
        return 3
    except KeyboardInterrupt:
        member.stop()
        raise
    print("[member] %s member ready on %s" % (args.target, member.address), flush=True)
    env = dict(os.environ, FERROGRID_ADDRESS=member.address)
    try:
        rc = subprocess.call([part.replace("{address}", member.address) for part in cmd], env=env)
    finally:
        alive = member.alive()
        stop_rc = member.stop()
    if not alive:
        print("[member] the member died while the command ran (exit code %s)" % stop_rc, file=sys.stderr)
        rc = rc or 4
    if rc != 0 or args.keep_log or os.environ.get("FERROGRID_KEEP_LOGS"):
        print("[member] member log %s (last lines):\n%s" % (member.log_path, member.log_tail()), file=sys.stderr)
    else:
        shutil.rmtree(member.workdir, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
