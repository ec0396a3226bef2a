"""The SQL examples of the official Python client (examples/sql of hazelcast-python-client 5.7.0)
run unchanged against the member under test, and print what they print against Hazelcast 5.6.0.

The examples are not part of this repository (nor of the client's wheel or sdist). They are read
from $HAZELCAST_PYTHON_CLIENT_EXAMPLES, default target/hazelcast-python-client/examples/sql,
which scripts/test fills (best effort) with
    git clone --depth 1 --branch v5.7.0 https://github.com/hazelcast/hazelcast-python-client
The tests are skipped when the directory is missing.

Each example runs in its own Python process. The examples connect to localhost:5701 (cluster
"dev"); a bootstrap points HazelcastClient() and hazelcast.db.connect() at the member under
test before it runs the file with runpy. The examples use fixed map names ("customers",
"persons", ...); each test drops the example's mappings and destroys its maps before and after.

What each example needs:
  sql_example.py          Portable class Customer (factory 1, class 1), 'valueFormat'='portable'
  sql_compact_example.py  Compact class Person (CompactSerializer), 'valueFormat'='compact'
  sql_json_example.py     HazelcastJsonValue values, 'valueFormat'='json', JSON_VALUE(... RETURNING INT)
  sql_async_example.py    'keyFormat'='int', 'valueFormat'='int', the asynchronous row iterator
  dbapi_example.py        hazelcast.db (DB-API 2): json-flat with a DATE column, SINK INTO with
                          CAST(? AS DATE), executemany, cursor.description
"""

import os
import pathlib
import subprocess
import sys

import pytest

from conftest import CLUSTER_NAME, new_client

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = pathlib.Path(
    os.environ.get("HAZELCAST_PYTHON_CLIENT_EXAMPLES", str(REPO_ROOT / "target/hazelcast-python-client/examples/sql"))
)

BOOTSTRAP = r"""
import runpy, sys
import hazelcast, hazelcast.db

address, cluster_name, path = sys.argv[1:4]
host, _, port = address.rpartition(":")

_init = hazelcast.HazelcastClient.__init__
def _patched_init(self, config=None, **kwargs):
    if config is not None:  # hazelcast.db.connect: a Config already made from host/port/dsn
        return _init(self, config, **kwargs)
    kwargs.setdefault("cluster_members", [address])
    kwargs.setdefault("cluster_name", cluster_name)
    kwargs.setdefault("cluster_connect_timeout", 30)
    _init(self, config, **kwargs)
hazelcast.HazelcastClient.__init__ = _patched_init

_connect = hazelcast.db.connect
def _patched_connect(config=None, **kwargs):
    if kwargs.get("dsn"):
        kwargs["dsn"] = kwargs["dsn"].replace("localhost:5701", address)
    else:
        kwargs["host"], kwargs["port"] = host, int(port)
    return _connect(config, **kwargs)
hazelcast.db.connect = _patched_connect

sys.argv = [path]
runpy.run_path(path, run_name="__main__")
# some examples do not shut their client down: do not wait for its threads
sys.stdout.flush()
import os
os._exit(0)
"""

# example file -> (maps/mappings it creates, expected stdout lines: exact list, or a set when
# the example prints rows of a query without ORDER BY)
EXAMPLES_EXPECTED = {
    "sql_example.py": (
        ["customers"],
        # rows come in no particular order: compared as a multiset
        sorted(
            [
                "Joe",
                "Peter 42 True",
                "John 23 False",
                "Joe 33 True",
                "2 23",
                "3 33",
                "Customer(name=Joe, age=33, is_active=True)",
            ]
        ),
    ),
    "sql_compact_example.py": (["persons"], ["Name: John Doe"]),
    "sql_json_example.py": (["employees"], sorted(["Name: Alice", "Name: John"])),
    "sql_async_example.py": (["integers"], None),  # checked in its own test
    "dbapi_example.py": (
        ["stocks"],
        [
            "This is the first query...",
            "DESCRIPTION",
            "1 IBM 1000.0 45.0",
            "3 IBM 500.0 53.0",
            "Here's another query...",
            "IBM 26500.0",
            "MSFT 72000.0",
        ],
    ),
}


def cleanup(member, names):
    c = new_client(member)
    try:
        for name in names:
            c.sql.execute("DROP MAPPING IF EXISTS %s" % name).result()
            c.get_map(name).blocking().destroy()
    finally:
        c.shutdown()


def run_example(member, name):
    path = EXAMPLES / name
    if not path.exists():
        pytest.skip("%s not found (set HAZELCAST_PYTHON_CLIENT_EXAMPLES, see this file's docstring)" % path)
    maps = EXAMPLES_EXPECTED[name][0]
    cleanup(member, maps)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", BOOTSTRAP, member.address, CLUSTER_NAME, str(path)],
            capture_output=True,
            text=True,
            timeout=50,
            cwd=str(EXAMPLES),
        )
    finally:
        cleanup(member, maps)
    assert proc.returncode == 0, "%s failed (exit code %s):\n%s\n%s" % (name, proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout.splitlines()


def test_sql_example_portable(member):
    lines = run_example(member, "sql_example.py")
    assert sorted(lines) == EXAMPLES_EXPECTED["sql_example.py"][1]
    # the first query's answer comes first (only Joe is < 35 and active)
    assert lines[0] == "Joe"


def test_sql_compact_example(member):
    assert run_example(member, "sql_compact_example.py") == EXAMPLES_EXPECTED["sql_compact_example.py"][1]


def test_sql_json_example(member):
    assert sorted(run_example(member, "sql_json_example.py")) == EXAMPLES_EXPECTED["sql_json_example.py"][1]


def test_sql_async_example(member):
    lines = run_example(member, "sql_async_example.py")
    # rows 41..49 (`print(row)` of an SqlRow: "[__key INTEGER=41, this INTEGER=41]"), in no
    # particular order; the example waits one second for them
    assert sorted(lines) == sorted("[__key INTEGER=%d, this INTEGER=%d]" % (i, i) for i in range(41, 50))


def test_dbapi_example(member):
    lines = run_example(member, "dbapi_example.py")
    # line 2 is cursor.description: the client's rendering of the row metadata's columns
    assert len(lines) == 7
    description, lines[1] = lines[1], "DESCRIPTION"
    assert lines == EXAMPLES_EXPECTED["dbapi_example.py"][1]
    columns = [
        ("__key", "INTEGER: 6"),
        ("operation_date", "DATE: 3"),
        ("transfer", "STRING: 1"),
        ("symbol", "STRING: 1"),
        ("quantity", "FLOAT: 7"),
        ("price", "FLOAT: 7"),
    ]
    assert description == "[%s]" % ", ".join(
        "ColumnDescription(name='%s', type=<Type.%s>, display_size=None, internal_size=None, precision=None, "
        "scale=None, null_ok=True)" % column
        for column in columns
    )
