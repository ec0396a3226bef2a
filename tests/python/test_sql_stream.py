"""A SELECT whose rows outnumber a page, fetched page by page (Sql.Execute's first page, then
Sql.Fetch), as the official Python client reads it: every row once, whatever the page size,
with OFFSET and LIMIT counted over the pages, and a cursor closed half-way gone. Runs against
ferrogrid and Hazelcast 5.6.0 alike (Hazelcast streams its rows; ferrogrid reads an unordered
scan a round of partitions at a time as the client fetches: sql/stream.rs).
"""

import re
import uuid

import pytest
from hazelcast.sql import HazelcastSqlError

from conftest import new_client

ENTRIES = 5_000


@pytest.fixture(scope="module")
def streamed(member):
    client = new_client(member)
    name = "sql_stream_%s" % uuid.uuid4().hex[:12]
    m = client.get_map(name).blocking()
    m.put_all({i: "v%d" % i for i in range(ENTRIES)})
    client.sql.execute(
        "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')" % name
    ).result()
    yield client, name
    client.sql.execute("DROP MAPPING IF EXISTS %s" % name).result()
    m.destroy()
    client.shutdown()


def fetched(client, statement, *params, page):
    with client.sql.execute(statement, *params, cursor_buffer_size=page).result() as result:
        return [(row[0], row[1]) if len(row) > 1 else row[0] for row in result]


@pytest.mark.parametrize("page", [1, 7, 100, 4096])
def test_every_row_once_whatever_the_page_size(streamed, page):
    client, name = streamed
    if page == 1:
        # (a page of one row is a fetch per row: a part of the map is enough to show it)
        got = fetched(client, "SELECT __key, this FROM %s WHERE __key < 300" % name, page=page)
        assert sorted(got) == [(i, "v%d" % i) for i in range(300)]
        return
    got = fetched(client, "SELECT __key, this FROM %s" % name, page=page)
    assert sorted(got) == [(i, "v%d" % i) for i in range(ENTRIES)]
    # a WHERE that keeps one row in ten: pages of rows that pass
    got = fetched(client, "SELECT __key FROM %s WHERE __key %% 10 = 3" % name, page=page)
    assert sorted(got) == list(range(3, ENTRIES, 10))


@pytest.mark.parametrize(
    "limit, offset, expected",
    [(1234, 100, 1234), (10_000, ENTRIES - 10, 10), (0, 0, 0), (50, ENTRIES, 0), (None, 4_000, ENTRIES - 4_000)],
)
def test_offset_and_limit_count_over_the_pages(streamed, limit, offset, expected):
    client, name = streamed
    statement = "SELECT __key FROM %s" % name
    statement += "" if limit is None else " LIMIT %d" % limit
    statement += " OFFSET %d" % offset
    got = fetched(client, statement, page=64)
    assert len(got) == expected
    assert len(set(got)) == expected and all(0 <= key < ENTRIES for key in got)


def test_a_cursor_closed_half_way_is_gone_and_the_next_queries_answer(streamed):
    client, name = streamed
    for _ in range(20):
        result = client.sql.execute("SELECT __key FROM %s" % name, cursor_buffer_size=50).result()
        seen = []
        for row in result:
            seen.append(row[0])
            if len(seen) == 120:
                break
        result.close()
        assert len(set(seen)) == 120
    got = fetched(client, "SELECT __key, this FROM %s WHERE __key >= ?" % name, ENTRIES - 3, page=2)
    assert sorted(got) == [(i, "v%d" % i) for i in range(ENTRIES - 3, ENTRIES)]


def test_a_row_that_fails_in_a_later_page_fails_the_fetch(streamed):
    """An error in a row the first page did not need (a division by zero in the key that
    is 0): the statement fails, when its first page is answered or when a later page is."""
    client, name = streamed
    with pytest.raises(HazelcastSqlError) as raised:
        fetched(client, "SELECT __key, 100 / __key FROM %s" % name, page=10)
    assert re.search("Division by zero", str(raised.value)), raised.value
    assert fetched(client, "SELECT __key, this FROM %s WHERE __key = 5" % name, page=10) == [(5, "v5")]


@pytest.mark.ferrogrid_only
def test_explain_says_which_scans_are_streamed(streamed):
    """ferrogrid's EXPLAIN names the scans read a round of partitions per page fetched (its own
    attribute: Hazelcast's plans stream every scan and say nothing of it)."""
    client, name = streamed

    def plan(statement):
        return [row[0] for row in client.sql.execute("EXPLAIN " + statement % name).result()]

    assert "streamed=[rounds as fetched]" in plan("SELECT __key FROM %s WHERE __key > 5")[-1]
    assert "streamed=[rounds as fetched]" in plan("SELECT * FROM %s LIMIT 10")[-1]
    for whole in ("SELECT __key FROM %s ORDER BY __key", "SELECT COUNT(*) FROM %s",
                  "SELECT DISTINCT this FROM %s", "SELECT this FROM %s WHERE __key = 3"):
        assert not any("streamed" in step for step in plan(whole)), (whole, plan(whole))


@pytest.mark.parametrize("order", ["", " ORDER BY __key"], ids=["streamed", "held"])
def test_a_statement_closed_before_its_answer_keeps_no_cursor(streamed, order):
    """Sql.Execute and Sql.Close sent back to back on one connection (as a client that closes
    a result at once, or whose context is cancelled, sends them), 20 times: a fetch of each
    closed query then fails (its rows are not kept: on ferrogrid they were, counting against
    the connection's cursors until it closed), and the next query answers."""
    from hazelcast.invocation import Invocation
    from hazelcast.protocol.codec import sql_close_codec, sql_execute_codec, sql_fetch_codec
    from hazelcast.sql import SqlExpectedResultType, _SqlQueryId

    client, name = streamed
    sql = client._internal_sql_service
    connection = sql._get_query_connection()
    to_object = client._serialization_service.to_object

    def invoke(request, decode=None):
        invocation = Invocation(request, connection=connection, response_handler=decode or (lambda m: m))
        client._invocation_service.invoke(invocation)
        return invocation.future

    statement = "SELECT __key FROM %s%s" % (name, order)
    for _ in range(20):
        query_id = _SqlQueryId.from_uuid(connection.remote_uuid)
        execute = sql_execute_codec.encode_request(
            statement, [], -1, 10, None, SqlExpectedResultType.ROWS, query_id, False
        )
        answered = invoke(execute, lambda m: sql_execute_codec.decode_response(m, to_object))
        closed = invoke(sql_close_codec.encode_request(query_id))
        closed.result()
        answered.result()  # (an answer of any kind: the first page, or that it was cancelled)
        fetch = sql_fetch_codec.encode_request(query_id, 10)
        page = invoke(fetch, lambda m: sql_fetch_codec.decode_response(m, to_object)).result()
        assert page["error"] is not None and page["row_page"] is None, "a closed query's rows are gone"
    got = fetched(client, "SELECT __key, this FROM %s WHERE __key < ?" % name, 3, page=2)
    assert sorted(got) == [(i, "v%d" % i) for i in range(3)]
