"""SQL across members (3, then a 4th joining): mappings reach every member and a member that
joins later, queries see each entry exactly once, DML changes what the map API reads, and a
unisocket client gets the same answers through any one member."""

import threading
import time
from decimal import Decimal

import pytest
from hazelcast.sql import HazelcastSqlError

from .cluster_harness import unique_map_name, wait_until
from .test_cluster import FORM_TIMEOUT, wait_members

pytestmark = pytest.mark.timeout(150)

ROWS = 3_000


def rows_of(client, sql, *params):
    with client.sql.execute(sql, *params, cursor_buffer_size=256).result() as result:
        return [[row[i] for i in range(len(result.get_row_metadata().columns))] for row in result]


def update(client, sql, *params):
    return client.sql.execute(sql, *params).result().update_count()


def check_aggregates_where_the_data_is(client, quoted):
    """Grouped and filtered statements over every member's partitions (each member folds its
    own rows; the coordinator merges): the answers a single pass over the rows gives."""
    group_of = {g: range(g, ROWS, 10) for g in range(10)}
    expected = [[g, len(keys), sum(2 * i for i in keys), Decimal(sum(2 * i for i in keys)) / len(keys),
                 min("n%d" % i for i in keys), max("n%d" % i for i in keys), min(2 * i for i in keys)]
                for g, keys in group_of.items()]
    got = rows_of(client, "SELECT grp, COUNT(*), SUM(amount), AVG(amount), MIN(name), MAX(name), MIN(amount) "
                          "FROM %s GROUP BY grp ORDER BY grp" % quoted)
    assert got == expected
    # a DISTINCT aggregate: the shares send their passing rows instead of their groups
    got = rows_of(client, "SELECT grp, COUNT(DISTINCT amount / 1000) FROM %s GROUP BY grp ORDER BY grp" % quoted)
    assert got == [[g, len({(2 * i) // 1000 for i in keys})] for g, keys in group_of.items()]
    picked = [2 * i for i in range(ROWS) if i % 10 < 3 and 2 * i > 100]
    got = rows_of(client, "SELECT COUNT(*), SUM(amount), MIN(amount), MAX(amount) FROM %s "
                          "WHERE grp < 3 AND amount > 100" % quoted)
    assert got == [[len(picked), sum(picked), min(picked), max(picked)]]
    assert rows_of(client, "SELECT COUNT(*), SUM(amount) FROM %s WHERE grp > 100" % quoted) == [[0, None]]
    got = rows_of(client, "SELECT grp, COUNT(*) FROM %s WHERE grp > 100 GROUP BY grp" % quoted)
    assert got == []
    got = rows_of(client, "SELECT __key FROM %s WHERE amount BETWEEN 1000 AND 1100 ORDER BY __key" % quoted)
    assert got == [[i] for i in range(500, 551)]
    limited = rows_of(client, "SELECT __key FROM %s LIMIT 5" % quoted)
    assert len(limited) == 5 and len({r[0] for r in limited}) == 5
    # an OFFSET past the first pages' rows (ferrogrid streams: rounds whose rows it skips on
    # every member, then the page), and every row fetched in pages of 256 from three members
    skipped = rows_of(client, "SELECT __key FROM %s LIMIT 100 OFFSET %d" % (quoted, ROWS - 150))
    assert len(skipped) == 100 and len({r[0] for r in skipped}) == 100
    assert len(rows_of(client, "SELECT __key FROM %s OFFSET %d" % (quoted, ROWS - 7))) == 7
    # a row that fails on any member fails the statement
    with pytest.raises(HazelcastSqlError) as info:
        rows_of(client, "SELECT __key FROM %s WHERE amount / (grp - grp) > 0" % quoted)
    assert info.value._code == 2000 and "Division by zero" in str(info.value), str(info.value)


@pytest.mark.parametrize("routing", ("smart", "unisocket"))
def test_sql_on_three_members_and_a_joiner(make_cluster, request, routing):
    cluster = make_cluster(4)
    three = cluster.addresses[:3]
    cluster.start_members(range(3), member_list=three)
    client = cluster.client(three[:1] if routing == "unisocket" else three, smart=routing == "smart")
    wait_members(client, 3, FORM_TIMEOUT)
    name = unique_map_name(request.node.name)
    quoted = '"%s"' % name  # (the name has dashes)
    ddl = (
        "CREATE MAPPING %s (__key INT, name VARCHAR, grp INT, amount BIGINT) TYPE IMap "
        "OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')" % quoted
    )
    assert update(client, ddl) == 0
    for start in range(0, ROWS, 500):
        values = ", ".join("(%d, 'n%d', %d, %d)" % (i, i, i % 10, i * 2) for i in range(start, start + 500))
        assert update(client, "INSERT INTO %s VALUES %s" % (quoted, values)) == 0
    m = client.get_map(name).blocking()
    assert m.size() == ROWS

    # every entry once, from every member's partitions
    keys = [r[0] for r in rows_of(client, "SELECT __key FROM %s" % quoted)]
    assert sorted(keys) == list(range(ROWS))
    groups = rows_of(client, "SELECT grp, COUNT(*), SUM(amount) FROM %s GROUP BY grp ORDER BY grp" % quoted)
    assert groups == [[g, ROWS // 10, sum(i * 2 for i in range(g, ROWS, 10))] for g in range(10)]
    assert rows_of(client, "SELECT name FROM %s WHERE __key = ?" % quoted, 1234) == [["n1234"]]
    assert rows_of(client, "SELECT __key FROM %s ORDER BY amount DESC LIMIT 3" % quoted) == [[2999], [2998], [2997]]
    check_aggregates_where_the_data_is(client, quoted)

    # DML, then the map API
    assert update(client, "UPDATE %s SET name = 'x' WHERE grp = 3" % quoted) == 0
    assert update(client, "DELETE FROM %s WHERE grp = 4" % quoted) == 0
    assert m.size() == ROWS - ROWS // 10
    assert '"name":"x"' in m.get(13).to_string()
    assert m.get(14) is None

    # while a member joins and partitions move, every answer holds each entry once, or fails
    # with a retryable partition-distribution error (never a wrong count)
    expected_keys = [i for i in range(ROWS) if i % 10 != 4]
    stop, answers, wrong = threading.Event(), [0, 0], []

    def query_during_join():
        while not stop.is_set():
            try:
                got = sorted(r[0] for r in rows_of(client, "SELECT __key FROM %s" % quoted))
                if got != expected_keys:
                    wrong.append(len(got))
                answers[0] += 1
            except HazelcastSqlError as error:
                if error._code != 1005:  # PARTITION_DISTRIBUTION: retry
                    wrong.append(str(error))
                answers[1] += 1

    thread = threading.Thread(target=query_during_join, daemon=True)
    thread.start()
    # a member that joins later knows the mapping: a client talking only to it queries it
    fourth = cluster.start(3, member_list=cluster.addresses)
    fourth.wait_ready(FORM_TIMEOUT)
    wait_members(client, 4, FORM_TIMEOUT)
    via_joiner = cluster.client([cluster.addresses[3]], smart=False)
    wait_members(via_joiner, 4, FORM_TIMEOUT)

    def joiner_count():
        try:
            return rows_of(via_joiner, "SELECT COUNT(*) FROM %s" % quoted)[0][0]
        except Exception as error:  # noqa: BLE001 - shown in the failure message
            return repr(error)

    wait_until(lambda: joiner_count() == ROWS - ROWS // 10, 30, lambda: "the joiner answers %s" % joiner_count())
    time.sleep(2)
    stop.set()
    thread.join(30)
    assert not wrong, "answers during the join: %s" % wrong[:5]
    assert answers[0] > 0, "no query answered during the join (%d retryable errors)" % answers[1]
    names = [r[0] for r in rows_of(via_joiner, "SHOW MAPPINGS")]
    assert name in names
    # and the statements after the join still see each entry once
    time.sleep(1)
    keys = [r[0] for r in rows_of(client, "SELECT __key FROM %s" % quoted)]
    assert sorted(keys) == [i for i in range(ROWS) if i % 10 != 4]
