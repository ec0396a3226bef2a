"""Random differential SQL: a seeded generator of rows (JSON-flat values with null and missing
fields) and of SELECT, aggregate, GROUP BY and DML statements over them, and the outcome a
member gives for each (its column types and rows, its update count and the table after, or the
error's code).

`scripts/diff-queries --sql` runs the same seeds against ferrogrid and a real Hazelcast 5.6.0
member and reports every difference; `test_sql_fuzz.py` holds a member to the outcomes Hazelcast
gave for one seed (`sql_fuzz_seed1.json`, written by `scripts/diff-queries --sql --record`).

A case is deterministic in its seed (Python's `random.Random`). Statements whose answer depends
on the order rows are met in (LIMIT without ORDER BY, an order with ties) are not generated; rows
are compared as sorted lists unless the statement orders them.
"""

import decimal
import json
import random
import re

from hazelcast.core import HazelcastJsonValue
from query_fuzz import digest  # noqa: F401 - the digest scripts/diff-queries records with

ROWS = 60
NAMES = ["ann", "bob", "Cem", "dora", "eve", "Ali", "ali", "zed", "a_b", "x%y", " pad "]
NUMERIC = ["age", "score", "big"]
COLUMNS = "__key INT, name VARCHAR, age INT, score DOUBLE, big BIGINT, ok BOOLEAN"
ALL = "__key, name, age, score, big, ok"


def _maybe(rng, value):
    roll = rng.random()
    return "<missing>" if roll < 0.08 else None if roll < 0.16 else value


def rows(rng):
    made = {}
    for key in range(ROWS):
        fields = {
            "name": _maybe(rng, rng.choice(NAMES)),
            "age": _maybe(rng, rng.randint(-20, 90)),
            "score": _maybe(rng, round(rng.uniform(-50, 50), 2)),
            "big": _maybe(rng, rng.randint(-(10**12), 10**12)),
            "ok": _maybe(rng, rng.random() < 0.5),
        }
        made[key] = HazelcastJsonValue(json.dumps({k: v for k, v in fields.items() if v != "<missing>"}))
    return made


def _number(rng, depth=0):
    roll = rng.random()
    if depth >= 2 or roll < 0.35:
        return rng.choice(NUMERIC + ["__key"])
    if roll < 0.45:
        return str(rng.choice([0, 1, 2, 7, -3, 100])) if rng.random() < 0.7 else repr(round(rng.uniform(-9, 9), 1))
    if roll < 0.65:
        op = rng.choice(["+", "-", "*"])
        return "(%s %s %s)" % (_number(rng, depth + 1), op, _number(rng, depth + 1))
    if roll < 0.72:
        return "(%s / %s)" % (_number(rng, depth + 1), rng.choice(["2", "3", "-4", "2.5"]))
    if roll < 0.8:
        return "%s(%s)" % (rng.choice(["ABS", "FLOOR", "CEIL", "SIGN", "ROUND"]), _number(rng, depth + 1))
    if roll < 0.86:
        return "MOD(%s, %s)" % (rng.choice(["age", "__key", "big"]), rng.choice(["3", "7", "-5"]))
    if roll < 0.92:
        return "COALESCE(%s, %s)" % (rng.choice(NUMERIC), rng.choice(["0", "-1", "age"]))
    if roll < 0.94:
        return "CAST(%s AS %s)" % (
            rng.choice(NUMERIC + ["name", "ok"]),
            rng.choice(["DOUBLE", "BIGINT", "INT", "DECIMAL", "SMALLINT", "REAL", "TINYINT"]),
        )
    if roll < 0.97:
        return rng.choice(
            [
                "ROUND(score, 1)",
                "TRUNCATE(score, -1)",
                "POWER(age, 2)",
                "SQRT(age)",
                "POSITION('a' IN name)",
                "CHAR_LENGTH(name) * 2",
                "CAST('12' AS INT) + age",
                "1.25 * age",
                "age / 0",
                "score / 0",
                "-big",
                "ABS(big)",
            ]
        )
    return "CASE WHEN %s THEN %s ELSE %s END" % (condition(rng, 2), _number(rng, 2), _number(rng, 2))


def _text(rng):
    return rng.choice(
        [
            "name",
            "UPPER(name)",
            "LOWER(name)",
            "name || '!'",
            "SUBSTRING(name, 2)",
            "SUBSTRING(name, 1, 2)",
            "TRIM(name)",
            "CAST(age AS VARCHAR)",
            "REPLACE(name, 'a', 'o')",
            "COALESCE(name, 'none')",
            "CHAR_LENGTH(name)",
            "INITCAP(name)",
        ]
    )


def condition(rng, depth=0):
    roll = rng.random()
    if depth >= 3 or roll < 0.5:
        kind = rng.random()
        if kind < 0.45:
            op = rng.choice(["=", "<>", "<", "<=", ">", ">="])
            return "%s %s %s" % (_number(rng, 1), op, _number(rng, 1))
        if kind < 0.55:
            return "name %sLIKE '%s'" % (rng.choice(["", "NOT "]), rng.choice(["a%", "%e", "_o%", "A%", "%", "x\\%y"]))
        if kind < 0.65:
            return "%s IS %sNULL" % (rng.choice(NUMERIC + ["name", "ok"]), rng.choice(["", "NOT "]))
        if kind < 0.72:
            low, high = sorted([rng.randint(-30, 90), rng.randint(-30, 90)])
            return "%s %sBETWEEN %d AND %d" % (rng.choice(NUMERIC), rng.choice(["", "NOT "]), low, high)
        if kind < 0.8:
            values = ", ".join(str(rng.randint(-5, 40)) for _ in range(rng.randint(1, 4)))
            return "%s %sIN (%s)" % (rng.choice(["age", "__key"]), rng.choice(["", "NOT "]), values)
        if kind < 0.84:
            return "name %s '%s'" % (rng.choice(["=", "<>", "<", ">"]), rng.choice(NAMES))
        if kind < 0.86:
            return rng.choice(
                ["name = 1", "age = '5'", "ok = 1", "name LIKE 'x!%%y' ESCAPE '!'", "score = age", "big IN (2, 3.5)"]
            )
        if kind < 0.93:
            return rng.choice(["ok", "NOT ok", "ok IS TRUE", "ok IS NOT FALSE", "ok = TRUE"])
        return "%s IN ('ann', 'bob', 'zed')" % rng.choice(["name", "LOWER(name)"])
    if roll < 0.65:
        return "NOT (%s)" % condition(rng, depth + 1)
    joiner = " AND " if roll < 0.85 else " OR "
    return "(%s)" % joiner.join(condition(rng, depth + 1) for _ in range(rng.randint(2, 3)))


def _where(rng):
    return " WHERE " + condition(rng) if rng.random() < 0.85 else ""


def _aggregate(rng):
    return rng.choice(
        [
            "COUNT(*)",
            "COUNT(name)",
            "COUNT(DISTINCT name)",
            "SUM(age)",
            "SUM(score)",
            "SUM(big)",
            "AVG(age)",
            "AVG(score)",
            "MIN(age)",
            "MAX(score)",
            "MIN(name)",
            "MAX(big)",
            "SUM(DISTINCT age)",
        ]
    )


def select(rng, table):
    roll = rng.random()
    if roll < 0.45:
        items = [_number(rng) if rng.random() < 0.6 else _text(rng) for _ in range(rng.randint(1, 3))]
        order = rng.choice(["", "", " ORDER BY __key", " ORDER BY __key DESC", " ORDER BY age, __key", " ORDER BY 2, 1"])
        limit = ""
        if order and rng.random() < 0.5:
            limit = " LIMIT %d" % rng.randint(0, 10) + (" OFFSET %d" % rng.randint(0, 5) if rng.random() < 0.3 else "")
        return "SELECT __key, %s FROM %s%s%s%s" % (", ".join(items), table, _where(rng), order, limit)
    if roll < 0.65:
        aggregates = ", ".join(_aggregate(rng) for _ in range(rng.randint(1, 3)))
        return "SELECT %s FROM %s%s" % (aggregates, table, _where(rng))
    if roll < 0.9:
        group = rng.choice(["name", "ok", "MOD(__key, 4)", "age"])
        aggregates = ", ".join(_aggregate(rng) for _ in range(rng.randint(1, 2)))
        having = " HAVING COUNT(*) > %d" % rng.randint(0, 3) if rng.random() < 0.3 else ""
        return "SELECT %s, %s FROM %s%s GROUP BY %s%s" % (group, aggregates, table, _where(rng), group, having)
    return "SELECT DISTINCT %s FROM %s%s" % (rng.choice(["name", "ok", "age / 10", "UPPER(name)"]), table, _where(rng))


def dml(rng, table):
    roll = rng.random()
    if roll < 0.35:
        column = rng.choice(["age", "score", "big", "name", "ok"])
        value = {
            "age": lambda: _number(rng, 1),
            "score": lambda: _number(rng, 1),
            "big": lambda: _number(rng, 1),
            "name": lambda: _text(rng),
            "ok": lambda: condition(rng, 2),
        }[column]()
        return "UPDATE %s SET %s = %s%s" % (table, column, value, _where(rng))
    if roll < 0.5:
        where = rng.choice([" WHERE __key = %d" % rng.randint(0, ROWS + 2), " WHERE __key IN (1, 2, 70)", _where(rng)])
        return "UPDATE %s SET %s = %s%s" % (table, rng.choice(["age", "name"]), rng.choice(["age + 1", "'z'", "NULL", "big"]), where)
    if roll < 0.65:
        return "DELETE FROM %s%s" % (table, _where(rng))
    if roll < 0.72:
        return "DELETE FROM %s WHERE __key = %d" % (table, rng.randint(0, ROWS + 2))
    verb = "INSERT" if rng.random() < 0.7 else "SINK"
    if rng.random() < 0.15:
        # Only rows the statement cannot write (Hazelcast's scan may meet the rows it inserts).
        where = " WHERE __key < 100" + (" AND (%s)" % condition(rng) if rng.random() < 0.8 else "")
        return "%s INTO %s (__key, name, age) SELECT __key + 100, name, age FROM %s%s" % (verb, table, table, where)
    keys = rng.sample(range(ROWS - 5, ROWS + 10), rng.randint(1, 3))
    if rng.random() < 0.1:
        keys = keys + keys[:1]
    values = ", ".join(
        "(%d, %s, %s, %s)" % (key, rng.choice(["'new'", "NULL", "'Ali'"]), rng.choice(["1", "NULL", "-7"]), rng.choice(["2.5", "NULL"]))
        for key in keys
    )
    return "%s INTO %s (__key, name, age, score) VALUES %s" % (verb, table, values)


def cases(seed, count):
    """(kind, statement template with {t} for the table) for `count` cases."""
    rng = random.Random(seed * 104729 + 3)
    return [("dml", dml(rng, "{t}")) if rng.random() < 0.2 else ("select", select(rng, "{t}")) for _ in range(count)]


def _value(value):
    if isinstance(value, float):
        return repr(round(value, 6) + 0.0)
    if isinstance(value, decimal.Decimal):
        return "D" + format(round(value, 6).normalize(), "f")
    return repr(value)


def _query(client, statement):
    result = client.sql.execute(statement).result()
    if result.is_row_set():
        metadata = result.get_row_metadata()
        types = [column.type for column in metadata.columns]
        rows = [tuple(_value(row.get_object_with_index(i)) for i in range(len(types))) for row in result]
        return types, rows
    return None, result.update_count()


def outcome(client, table, kind, template):
    """What the member answered: column types and rows, or an update count and the table after,
    or the error's SQL code."""
    statement = template.format(t=table)
    try:
        types, rows = _query(client, statement)
        if kind == "dml":
            _, after = _query(client, "SELECT %s FROM %s ORDER BY __key" % (ALL, table))
            return "updated %r; table %r" % (rows, after)
        if "ORDER BY" not in statement:
            rows = sorted(rows)
        return "types %r rows %r" % (types, rows)
    except Exception as error:  # noqa: BLE001 - the error's code is the outcome
        return "error %s %s" % (type(error).__name__, getattr(error, "_code", ""))  # the SQL error code


def run(client, seed, count, prefix="sqlfuzz"):
    """[(statement, outcome)] of every case of `seed`; the map is destroyed after. A DML case
    runs on the rows as generated (the map is filled again after it)."""
    table = "%s_%d" % (re.sub(r"\W", "_", prefix), seed)
    data = rows(random.Random(seed))
    client.sql.execute(
        "CREATE OR REPLACE MAPPING %s (%s) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')"
        % (table, COLUMNS)
    ).result()
    m = client.get_map(table).blocking()
    m.put_all(data)
    results = []
    try:
        for kind, template in cases(seed, count):
            results.append((template, outcome(client, table, kind, template)))
            if kind == "dml":
                m.clear()
                m.put_all(data)
    finally:
        m.destroy()
        client.sql.execute("DROP MAPPING IF EXISTS %s" % table).result()
    return results
