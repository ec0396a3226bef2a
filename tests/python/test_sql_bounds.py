"""What a running SQL query may hold on the member that runs it (ferrogrid's own bounds;
Hazelcast has none): `ferrogrid.limits.max-sql-rows-per-query` rows and
`max-sql-bytes-per-query` bytes of the entries its rows are read from. A statement that needs
more at once (sorted, joined) fails with a data error naming the bound, and the member goes on
serving: the same map answers the next query, the next get. An unordered scan is streamed (a
round of partitions per page fetched, each within half the bounds): it answers every row,
however many the bounds would not hold at once.
"""

import os

import hazelcast
import pytest
from hazelcast.core import HazelcastJsonValue
from hazelcast.sql import HazelcastSqlError

from member import Member, free_port, hazelcast_yaml

pytestmark = pytest.mark.ferrogrid_only

CLUSTER = "sql-bounds"
ENTRIES = 1000
# An item is held as ~180 bytes (~120 of key and value, 64 for its two buffers): 1,000 are
# past the bytes bound (at ~330 rows, before the rows bound); 100 fit. A `small` entry (two
# integers) is held as ~80 bytes: 600 fit the bytes bound, and are past the rows bound.
MAX_BYTES = 60_000
MAX_ROWS = 500
SMALL = 600


@pytest.fixture(scope="module")
def bounded(target, tmp_path_factory):
    if os.environ.get("FERROGRID_ADDRESS"):
        pytest.skip("FERROGRID_ADDRESS given: not starting members")
    workdir = tmp_path_factory.mktemp("sql-bounds")
    port = free_port()
    config = workdir / "bounds.yaml"
    limits = f"ferrogrid:\n  limits: {{max-sql-bytes-per-query: {MAX_BYTES}, max-sql-rows-per-query: {MAX_ROWS}}}\n"
    config.write_text(hazelcast_yaml(port, CLUSTER) + limits)
    member = Member(target, port=port, cluster_name=CLUSTER, config=config, workdir=workdir)
    member.start()
    client = hazelcast.HazelcastClient(cluster_members=[member.address], cluster_name=CLUSTER)
    items = client.get_map("items").blocking()
    items.put_all(
        {i: HazelcastJsonValue('{"n": %d, "tag": "t%d", "pad": "%s"}' % (i, i % 7, "x" * 80)) for i in range(ENTRIES)}
    )
    client.sql.execute(
        "CREATE MAPPING items (__key INT, n INT, tag VARCHAR, pad VARCHAR) TYPE IMap "
        "OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')"
    ).result()
    client.get_map("small").blocking().put_all({i: i for i in range(SMALL)})
    client.sql.execute(
        "CREATE MAPPING small TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='int')"
    ).result()
    yield client, items
    client.shutdown()
    member.stop()


def rows(client, statement, *params):
    return [tuple(row.get_object_with_index(i) for i in range(len(row))) for row in client.sql.execute(statement, *params).result()]


def test_a_query_within_the_bounds_answers(bounded):
    client, _ = bounded
    assert len(rows(client, "SELECT __key, pad FROM items WHERE n < 100")) == 100
    # groups carry no entries: every row is read, none is held
    assert sorted(rows(client, "SELECT tag, COUNT(*) FROM items GROUP BY tag")) == [
        ("t%d" % t, len(range(t, ENTRIES, 7))) for t in range(7)
    ]


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT __key, pad FROM items ORDER BY pad",
        "SELECT __key FROM items WHERE n >= 0 ORDER BY n",
        "SELECT a.__key FROM items a JOIN items b ON a.n = b.n",
    ],
)
def test_a_query_past_the_bytes_bound_fails_and_the_member_serves_on(bounded, statement):
    client, items = bounded
    with pytest.raises(HazelcastSqlError) as raised:
        rows(client, statement)
    assert "max-sql-bytes-per-query" in str(raised.value), raised.value
    assert "add a WHERE or LIMIT" in str(raised.value)
    assert items.get(7).loads()["n"] == 7
    assert len(rows(client, "SELECT __key FROM items WHERE n < 10")) == 10


def test_a_limit_without_order_reads_only_as_many_rows_as_it_needs(bounded):
    """A LIMIT (with or without a WHERE; no ORDER BY) over more than the bounds hold answers:
    each partition sends at most OFFSET + LIMIT passing rows, and a reactor that holds that
    many reads no further partitions (past the bytes bound when every passing row travelled)."""
    client, _ = bounded
    assert len(rows(client, "SELECT * FROM items WHERE n >= 0 LIMIT 20")) == 20
    assert len(rows(client, "SELECT * FROM items WHERE tag <> 't3' LIMIT 5 OFFSET 30")) == 5
    found = rows(client, "SELECT __key, n FROM items WHERE n % 100 = 7 LIMIT 3")
    assert len(found) == 3 and all(n % 100 == 7 and key == n for key, n in found)
    # nothing past the limit: every passing row, all of them
    assert sorted(rows(client, "SELECT n FROM items WHERE n % 250 = 1 LIMIT 10")) == [(1,), (251,), (501,), (751,)]


def test_a_query_past_the_rows_bound_fails_naming_it(bounded):
    client, _ = bounded
    with pytest.raises(HazelcastSqlError) as raised:
        rows(client, "SELECT * FROM small ORDER BY this")
    assert "max-sql-rows-per-query" in str(raised.value), raised.value
    assert len(rows(client, "SELECT * FROM small WHERE this < ?", MAX_ROWS)) == MAX_ROWS


@pytest.mark.parametrize("page", [10, 4096])
def test_an_unordered_scan_past_the_bounds_is_streamed_within_them(bounded, page):
    """Every row of a scan whose rows the bounds would not hold at once (1,000 items past the
    bytes bound, 600 small ones past the rows bound): each round holds at most half of each."""
    client, _ = bounded

    def keys(statement):
        with client.sql.execute(statement, cursor_buffer_size=page).result() as result:
            return sorted(row[0] for row in result)

    assert keys("SELECT * FROM items") == list(range(ENTRIES))
    assert keys("SELECT __key, pad FROM items WHERE n % 2 = 0") == list(range(0, ENTRIES, 2))
    assert keys("SELECT * FROM small") == list(range(SMALL))
