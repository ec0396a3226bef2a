"""What a statement computes, and so where it can fail, as Hazelcast 5.6's SQL engine decides it
(found by `scripts/diff-queries --sql`, random statements against both members):

  * a binary expression (arithmetic, a comparison, MOD, BETWEEN's operand) whose left operand is
    null is null without computing the right one, so a right operand that would overflow fails
    nothing; a null right operand still needs the left one computed;
  * the planner simplifies before any row is read: `x > x` (and `<`, `<>`) selects no row, and an
    AND with such a term selects none without computing its other terms; `x = x` (and `<=`,
    `>=`) selects the rows where x is not null, asking only whether its columns are null;
  * a failure while an UPDATE or DELETE runs is a GENERIC error (-1), not a DATA_EXCEPTION as in
    a SELECT: the job's processor or its entry processor threw it;
  * NOT is pushed down, and an AND with `x IS NULL` and a term null wherever x is selects
    nothing; a CASE whose branches are equal is its branch; a literal LIMIT 0 reads no row
    (with an OFFSET it filters them but computes no select item);
  * in an AND, `x IS NOT NULL` is computed after the other operands (or not at all where one
    of them needs x), and NOTs that cannot be pushed (`NOT (x LIKE p)`) last; `x IS NULL OR
    x IS NOT NULL` is true; an AND of comparisons of a column with literals that no value
    meets is false; `f(a, b) IS NULL` for arithmetic or a comparison f is `a IS NULL OR b IS
    NULL` (f is not computed; an operand cast to the result's type is), and an OR of three operands or more
    computes its `x IS NULL` ones first (a binary OR keeps its order);
  * a key lookup (`WHERE __key = k` alone) fails with the bare error (GENERIC); with more
    conditions Hazelcast scans, and fails as a scan does;
  * a NaN or infinite DOUBLE written to a JSON value fails the statement (GENERIC);
  * NOT of a boolean column is null wherever the column is (so `ok IS NULL AND NOT ok` selects
    nothing, computing nothing else);
  * ROUND of a DOUBLE rounds its exact binary value, and a DOUBLE column cast to DECIMAL is that
    value (a literal keeps its decimal text); a JSON number reads as the double nearest
    it; a SINK whose VALUES repeat a key fails (GENERIC) and writes none of them;
  * ORDER BY a name two select items bear is ambiguous (`test_sql.py`);
  * and seed 1 of the random statements answers as Hazelcast answered it
    (`sql_fuzz_seed1.json`: a digest of the column types and rows, the update count and table
    after, or the error code per statement, written by `scripts/diff-queries --sql --seeds 1
    --cases 300 --record tests/python/sql_fuzz_seed1.json`).
"""

import json
import pathlib
import re

import pytest
from hazelcast.core import HazelcastJsonValue
from hazelcast.sql import HazelcastSqlError

import query_fuzz
import sql_fuzz
from conftest import unique_name

RECORDED = json.loads((pathlib.Path(__file__).parent / "sql_fuzz_seed1.json").read_text())
GENERIC, DATA_EXCEPTION = -1, 2000
BIG = 10**12  # squared, more than a BIGINT holds; more than an INT holds


@pytest.fixture
def table(client, request):
    name = re.sub(r"\W", "_", unique_name(request, "sqleval"))
    client.sql.execute(
        "CREATE MAPPING %s (__key INT, big BIGINT, score DOUBLE, age INT, ok BOOLEAN) "
        "TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')" % name
    ).result()
    m = client.get_map(name).blocking()
    m.put_all(
        {
            1: HazelcastJsonValue('{"big": %d, "score": 1.5, "age": 3}' % BIG),
            2: HazelcastJsonValue('{"big": %d, "score": null, "age": null}' % -BIG),
            3: HazelcastJsonValue('{"big": 2, "score": 2.0, "age": 5}'),
        }
    )
    yield name
    m.destroy()
    client.sql.execute("DROP MAPPING IF EXISTS %s" % name).result()


def keys(client, statement):
    return sorted(row.get_object_with_index(0) for row in client.sql.execute(statement).result())


def error_code(client, statement):
    with pytest.raises(HazelcastSqlError) as info:
        client.sql.execute(statement).result()
    return info.value._code  # hazelcast-python-client 5.7.0 keeps it private


def test_a_null_left_operand_leaves_the_right_one_uncomputed(client, table):
    where = "SELECT __key FROM %s WHERE score IS NULL AND " % table
    assert keys(client, where + "SIGN(score) >= CAST(big AS INT)") == []
    assert keys(client, where + "(score + big * big) > 0") == []
    assert keys(client, where + "MOD(age, CAST(big AS INT)) > 0") == []
    assert keys(client, where + "score BETWEEN 0 AND CAST(big AS INT)") == []
    # the left operand is computed first: it fails
    assert error_code(client, where + "CAST(big AS INT) <= SIGN(score)") == DATA_EXCEPTION
    # COALESCE computes its second operand where the first is null
    assert error_code(client, where + "COALESCE(score, big * big) > 0") == DATA_EXCEPTION


def test_a_term_compared_with_itself_is_decided_before_any_row_is_read(client, table):
    select = "SELECT __key FROM %s WHERE " % table
    assert error_code(client, select + "big * big > 0") == DATA_EXCEPTION
    assert keys(client, select + "big * big > 0 AND score > score") == []
    assert keys(client, select + "score <> score OR __key = 3") == [3]
    assert keys(client, select + "big * big = big * big") == [1, 2, 3]
    assert keys(client, select + "score * big >= score * big") == [1, 3]
    # under NOT the comparison is still unknown where score is null
    assert keys(client, select + "NOT (score < score)") == [1, 3]


def test_what_the_planner_decides_before_reading_a_row(client, table):
    select = "SELECT __key FROM %s WHERE " % table
    # NOT pushed down, then an AND with `age IS NULL` and a term null wherever age is: no row
    assert keys(client, select + "big * big > 0 AND NOT (age IS NOT NULL OR score > age)") == []
    assert error_code(client, select + "big * big > 0 AND NOT (age IS NOT NULL OR score > 1)") == DATA_EXCEPTION
    assert keys(client, select + "(__key * age) > score / 0 AND age IS NULL") == []
    assert error_code(client, select + "score / 0 > 1 AND age IS NULL") == DATA_EXCEPTION
    # NOT of a column is null wherever the column is (ok is missing in every row)
    assert keys(client, select + "score / 0 > 1 AND ok IS NULL AND NOT ok") == []
    assert error_code(client, select + "score / 0 > 1 AND ok IS NULL AND NOT (age > 1)") == DATA_EXCEPTION
    # a CASE whose branches are all the same is that branch
    rows = client.sql.execute("SELECT __key, CASE WHEN age / 0 > 1 THEN age ELSE age END FROM %s" % table).result()
    assert sorted((r.get_object_with_index(0), r.get_object_with_index(1)) for r in rows) == [(1, 3), (2, None), (3, 5)]
    # LIMIT 0 reads nothing
    assert keys(client, "SELECT __key, score / 0 FROM %s LIMIT 0" % table) == []
    # ... unless an OFFSET is written, even OFFSET 0: the rows are filtered, not projected
    assert error_code(client, "SELECT __key FROM %s WHERE score / 0 > 1 LIMIT 0 OFFSET 0" % table) == DATA_EXCEPTION
    assert keys(client, "SELECT __key, score / 0 FROM %s LIMIT 0 OFFSET 0" % table) == []


def test_round_and_json_doubles_are_exact(client, table):
    client.sql.execute("UPDATE %s SET score = 41.05 WHERE __key = 1" % table).result()
    client.sql.execute("UPDATE %s SET score = CAST(12.38 AS DOUBLE) * %d WHERE __key = 3" % (table, -934791323090)).result()
    rows = client.sql.execute("SELECT __key, score, ROUND(score, 1) FROM %s WHERE __key <> 2" % table).result()
    got = sorted(tuple(r.get_object_with_index(i) for i in range(3)) for r in rows)
    # 41.05 is 41.0499999... in binary: half up gives 41.0; the product reads back as written
    assert got == [(1, 41.05, 41.0), (3, 12.38 * -934791323090, -11572716579854.2)]


def test_the_order_the_planner_gives_an_and(client, table):
    select = "SELECT __key FROM %s WHERE " % table
    # `age IS NOT NULL` goes after the other operands: row 2's product is computed and fails
    assert error_code(client, select + "__key <> 1 AND age IS NOT NULL AND big * big > 0") == DATA_EXCEPTION
    assert keys(client, select + "__key <> 1 AND age IS NOT NULL AND big > 0") == [3]
    # a NOT that cannot be pushed goes last: row 1's product is computed and fails; NOT LIKE
    # is an operator of its own and stays first
    not_like = "__key <> 2 AND NOT (CAST(age AS VARCHAR) LIKE '3%') AND big * big > 0"
    assert error_code(client, select + not_like) == DATA_EXCEPTION
    assert keys(client, select + not_like.replace("NOT (CAST(age AS VARCHAR) LIKE '3%')", "CAST(age AS VARCHAR) NOT LIKE '3%'")) == [3]
    # comparisons of a column with literals that no value meets: false before any row is read
    assert keys(client, select + "age > 5 AND age < 3 AND score / 0 > 1") == []
    assert keys(client, select + "score / 0 > 1 AND age IN (1, 2) AND age >= 3") == []
    assert keys(client, select + "age >= 5 AND 5 >= age AND age <> 5 AND score / 0 > 1") == []
    # bounds that some value meets decide nothing: row 1 (age 3) computes the division
    assert error_code(client, select + "age > 2 AND age < 4 AND score / 0 > 1") == DATA_EXCEPTION
    # `x IS NULL OR x IS NOT NULL` is true before any row is read
    assert keys(client, select + "age IS NULL OR big * big > 0 OR age IS NOT NULL") == [1, 2, 3]


def test_a_null_test_of_arithmetic_and_the_or_a_not_becomes(client, table):
    select = "SELECT __key FROM %s WHERE " % table
    # `f(a, b) IS [NOT] NULL` asks whether a or b is null: the product is never computed
    assert keys(client, select + "(big * big) IS NULL") == []
    assert keys(client, select + "(age + big * big) IS NOT NULL") == [1, 3]
    # ... except through a cast: the DOUBLE sum casts the product, which is computed and fails
    assert error_code(client, select + "(score + big * big) IS NOT NULL") == DATA_EXCEPTION
    # an OR of three operands or more computes its `x IS NULL` ones first: row 2 (age null) is
    # selected before its product is computed, whether the OR is written or a NOT made it...
    assert keys(client, select + "__key = 2 AND (big * big >= 0 OR __key = 9 OR age IS NULL)") == [2]
    assert keys(client, select + "__key = 2 AND NOT (big * big < 0 AND __key <> 9 AND age IS NOT NULL)") == [2]
    # ... but a binary OR keeps its order
    assert error_code(client, select + "__key = 2 AND (big * big >= 0 OR age IS NULL)") == DATA_EXCEPTION
    assert error_code(client, select + "__key = 2 AND NOT (big * big < 0 AND age IS NOT NULL)") == DATA_EXCEPTION


def test_a_key_lookup_fails_as_a_lookup_only_when_the_key_is_the_whole_condition(client, table):
    assert error_code(client, "SELECT big * big FROM %s WHERE __key = 1" % table) == GENERIC
    assert error_code(client, "SELECT __key FROM %s WHERE __key = 1 AND big * big > 0" % table) == DATA_EXCEPTION


def test_a_double_that_json_cannot_hold_fails_the_write(client, table):
    assert error_code(client, "UPDATE %s SET score = SQRT(-1.0) WHERE __key = 3" % table) == GENERIC
    assert error_code(client, "INSERT INTO %s (__key, score) VALUES (9, SQRT(-1.0))" % table) == GENERIC
    rows = client.sql.execute("SELECT __key, score FROM %s" % table).result()
    assert sorted((r.get_object_with_index(0), r.get_object_with_index(1)) for r in rows) == [(1, 1.5), (2, None), (3, 2.0)]


def test_a_double_cast_to_decimal_is_its_exact_binary_value(client, table):
    client.sql.execute("UPDATE %s SET score = 24.49 WHERE __key = 1" % table).result()
    rows = client.sql.execute("SELECT CAST(score AS DECIMAL), CAST(0.1E0 AS DECIMAL) FROM %s WHERE __key = 1" % table)
    [(column, literal)] = [(r.get_object_with_index(0), r.get_object_with_index(1)) for r in rows.result()]
    # a column's double converts as `new BigDecimal(double)`; a literal keeps its decimal text
    assert str(column) == "24.489999999999998436805981327779591083526611328125"
    assert str(literal) == "0.1"


def test_a_sink_that_writes_one_key_twice_fails_and_writes_nothing(client, table):
    statement = "SINK INTO %s (__key, age) VALUES (7, 1), (8, 2), (7, 3)" % table
    assert error_code(client, statement) == GENERIC
    assert keys(client, "SELECT __key FROM %s" % table) == [1, 2, 3]


def test_a_failure_while_an_update_or_delete_runs_is_generic(client, table):
    assert error_code(client, "UPDATE %s SET age = big" % table) == GENERIC
    assert error_code(client, "UPDATE %s SET age = 1 WHERE big * big > 0" % table) == GENERIC
    assert error_code(client, "DELETE FROM %s WHERE CAST(big AS INT) > 0" % table) == GENERIC
    assert error_code(client, "SELECT CAST(big AS INT) FROM %s" % table) == DATA_EXCEPTION
    # a plan-time error keeps its code
    assert error_code(client, "UPDATE %s SET nothing = 1" % table) != GENERIC


def test_random_statements_answer_as_hazelcast_did(client, request):
    results = sql_fuzz.run(client, RECORDED["seed"], RECORDED["cases"], prefix=unique_name(request, "sqlfuzz"))
    query_fuzz.assert_as_recorded(results, RECORDED, "statements")
