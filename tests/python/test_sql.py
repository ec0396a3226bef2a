"""SQL (`client.sql.execute`: Sql.Execute 0x210400, Sql.Fetch 0x210500, Sql.Close 0x210300) as a
user of the official Python client sees it. Runs against ferrogrid and against a real Hazelcast
5.6.0 member (member.py puts hazelcast-sql-5.6.0.jar on its class path and enables Jet, which
Hazelcast's SQL engine runs on); every expected answer below is what Hazelcast 5.6.0 answers.
target/sql-findings.md (not committed) lists the same answers as prose.

Each test uses its own mapping / map names (`sql_<test>_<hex>`: no hyphen, so no quoting) and
drops / destroys them afterwards. One client (smart routing, with the Compact serializer of
`Person` and the Portable factory of `Customer`) serves the whole module;
`test_select_through_unisocket_client` repeats a query over a unisocket client.
`HazelcastSqlError` of hazelcast-python-client 5.7.0 has no public `.code`: `code()` reads `_code`.

Hazelcast answers worth knowing (asserted below, with a comment where surprising):
  * every column of every result is nullable (even `__key` and COUNT(*));
  * every DML statement (INSERT, SINK, UPDATE, DELETE) and every DDL statement answers update
    count 0, whatever the number of rows it touched; a SELECT's update_count() is -1;
  * integer literals take the smallest integer type that holds them (1 is TINYINT, 30000
    SMALLINT, 100000 INTEGER, 2147483648 BIGINT); + - * / of integers answer BIGINT (TINYINT
    when both sides are TINYINT literals, SMALLINT/INTEGER one step wider for TINYINT/SMALLINT
    casts); COUNT is BIGINT, SUM of integers BIGINT, SUM/AVG of BIGINT DECIMAL, AVG of
    INTEGER DECIMAL, SUM/AVG of DOUBLE DOUBLE;
  * NULL sorts first ascending and last descending; NULLS FIRST / NULLS LAST are refused;
  * a column list is required for json-flat and compact mappings (no derivation from a sample
    entry), but not for primitive formats nor `json`; a portable mapping without one gets the
    fields of the class definition, if the member has one (it learns it by reading a value);
  * SELECT from a map without mapping is OBJECT_NOT_FOUND, with a suggested CREATE MAPPING
    derived from an entry (none for HazelcastJsonValue values);
  * an error raised while evaluating rows of a scan has code DATA_EXCEPTION (2000) and a
    message "The Jet SQL job failed: ...: <what>", the same error in a plan that reads one key
    (WHERE __key = <constant>) has code GENERIC (-1) and "com.hazelcast.sql.impl.QueryException:
    <what>".
"""

import datetime
import json
import re
import uuid
from decimal import Decimal

import pytest
from hazelcast import predicate as p
from hazelcast.config import IndexType
from hazelcast.core import HazelcastJsonValue
from hazelcast.serialization.api import CompactReader, CompactSerializer, CompactWriter, Portable
from hazelcast.sql import HazelcastSqlError, SqlColumnType as T, SqlExpectedResultType
from hazelcast.sql import _SqlErrorCode as SqlErrorCode  # private in hazelcast-python-client 5.7.0

from conftest import new_client

# --------------------------------------------------------------------------- fixtures and helpers


class Person:
    def __init__(self, name, age, city=None):
        self.name, self.age, self.city = name, age, city

    def __eq__(self, other):
        return isinstance(other, Person) and vars(self) == vars(other)

    def __repr__(self):
        return "Person(%r)" % vars(self)


class PersonSerializer(CompactSerializer[Person]):
    def read(self, reader: CompactReader) -> Person:
        return Person(reader.read_string("name"), reader.read_int32("age"), reader.read_string("city"))

    def write(self, writer: CompactWriter, obj: Person) -> None:
        writer.write_string("name", obj.name)
        writer.write_int32("age", obj.age)
        writer.write_string("city", obj.city)

    def get_type_name(self) -> str:
        return "ferrogrid.test.sql.Person"

    def get_class(self):
        return Person


PERSON_TYPE = PersonSerializer().get_type_name()


class Customer(Portable):
    FACTORY_ID, CLASS_ID = 7301, 1

    def __init__(self, name=None, age=None, is_active=None):
        self.name, self.age, self.is_active = name, age, is_active

    def write_portable(self, writer):
        writer.write_string("name", self.name)
        writer.write_int("age", self.age)
        writer.write_boolean("is_active", self.is_active)

    def read_portable(self, reader):
        self.name = reader.read_string("name")
        self.age = reader.read_int("age")
        self.is_active = reader.read_boolean("is_active")

    def get_factory_id(self):
        return self.FACTORY_ID

    def get_class_id(self):
        return self.CLASS_ID

    def __eq__(self, other):
        return isinstance(other, Customer) and vars(self) == vars(other)

    def __repr__(self):
        return "Customer(%r)" % vars(self)


@pytest.fixture(scope="module")
def sql_client(member):
    c = new_client(
        member,
        "smart",
        compact_serializers=[PersonSerializer()],
        portable_factories={Customer.FACTORY_ID: {Customer.CLASS_ID: Customer}},
    )
    yield c
    c.shutdown()


@pytest.fixture
def names(request, sql_client):
    """new(prefix='') -> a fresh mapping/map name; each is dropped and destroyed after the test."""
    made = []
    base = re.sub(r"\W+", "_", request.node.name)[:40].strip("_")

    def new(prefix=""):
        name = "sql_%s%s_%s" % (prefix, base, uuid.uuid4().hex[:10])
        made.append(name)
        return name

    yield new
    for name in made:
        try:
            sql_client.sql.execute('DROP MAPPING IF EXISTS "%s"' % name).result()
        except Exception:  # noqa: BLE001 - best effort
            pass
        try:
            sql_client.get_map(name).blocking().destroy()
        except Exception:  # noqa: BLE001
            pass


def execute(client, sql, *params, **kwargs):
    return client.sql.execute(sql, *params, **kwargs).result()


def columns(result):
    """[(name, SqlColumnType)] of a row set."""
    return [(c.name, c.type) for c in result.get_row_metadata().columns]


def query(client, sql, *params, **kwargs):
    """(columns, rows) of a SELECT; rows as lists, in the order they arrived."""
    with execute(client, sql, *params, **kwargs) as result:
        assert result.is_row_set() is True
        assert result.update_count() == -1
        cols = columns(result)
        rows = [[row[i] for i in range(len(cols))] for row in result]
    return cols, rows


def update(client, sql, *params, **kwargs):
    """The update count of a DML/DDL statement."""
    result = execute(client, sql, *params, **kwargs)
    assert result.is_row_set() is False
    return result.update_count()


def sql_error(client, sql, *params, **kwargs):
    with pytest.raises(HazelcastSqlError) as info:
        execute(client, sql, *params, **kwargs)
    return info.value


def code(error):
    # hazelcast-python-client 5.7.0 keeps the code in a private attribute (no `.code` property)
    return error._code


def sort_rows(rows):
    """Rows in a deterministic order (None first), for results without ORDER BY."""
    return sorted(rows, key=lambda row: [(v is not None, v) for v in row])


def as_json(value):
    assert isinstance(value, HazelcastJsonValue), repr(value)
    return json.loads(value.to_string())


PEOPLE_COLUMNS = [
    ("__key", T.INTEGER),
    ("name", T.VARCHAR),
    ("age", T.INTEGER),
    ("dept", T.VARCHAR),
    ("salary", T.BIGINT),
    ("rate", T.DOUBLE),
]
PEOPLE = [
    [1, "Alice", 30, "eng", 100, 1.5],
    [2, "Bob", 25, "eng", 80, 2.25],
    [3, "Carol", 35, "ops", 90, None],
    [4, "Dan", None, "ops", 70, 0.5],
    [5, "Eve", 28, None, 120, 3.0],
    [6, "al_x%", 40, "eng", None, -1.5],
]


def create_people(client, name):
    assert (
        update(
            client,
            "CREATE MAPPING %s (__key INT, name VARCHAR, age INT, dept VARCHAR, salary BIGINT, rate DOUBLE) "
            "TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')" % name,
        )
        == 0
    )
    values = ", ".join("(?, ?, ?, ?, ?, ?)" for _ in PEOPLE)
    params = [v for row in PEOPLE for v in row]  # the int parameters (INTEGER) land in BIGINT salary too
    sql = "INSERT INTO %s VALUES %s" % (name, values)
    assert update(client, sql, *params) == 0
    return name


@pytest.fixture
def people(sql_client, names):
    """A json-flat mapping over a fresh map with PEOPLE in it."""
    return create_people(sql_client, names())


def keys(client, sql, *params):
    """The first column of each row, in order."""
    return [row[0] for row in query(client, sql, *params)[1]]


# --------------------------------------------------------------------------- mappings


@pytest.mark.parametrize(
    "fmt, column_type, key, value",
    [
        ("int", T.INTEGER, 7, -42),
        ("bigint", T.BIGINT, 7, 2**40),
        ("varchar", T.VARCHAR, "k", "héllo"),
        ("double", T.DOUBLE, 1.5, -2.25),
        ("boolean", T.BOOLEAN, True, False),
    ],
)
def test_mapping_of_primitive_formats(sql_client, names, fmt, column_type, key, value):
    name = names()
    sql = "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='%s', 'valueFormat'='%s')" % (name, fmt, fmt)
    assert update(sql_client, sql) == 0
    # a value written through SQL is read back through the map API, and the other way round
    literal = {
        "int": "CAST(%r AS INT)",
        "bigint": "CAST(%r AS BIGINT)",
        "varchar": "'%s'",
        "double": "CAST(%r AS DOUBLE)",
        "boolean": "%s",
    }[fmt]
    assert update(sql_client, "INSERT INTO %s VALUES (%s, %s)" % (name, literal % (key,), literal % (value,))) == 0
    m = sql_client.get_map(name).blocking()
    assert dict(m.entry_set()) == {key: value}
    if fmt == "bigint":
        # the Python client sends an int as a Java Integer, the BIGINT key is a Long: no match
        assert m.get(key) is None
    else:
        assert m.get(key) == value
    cols, rows = query(sql_client, "SELECT * FROM %s" % name)
    assert cols == [("__key", column_type), ("this", column_type)]
    assert rows == [[key, value]]
    with execute(sql_client, "SELECT __key, this FROM %s" % name) as result:
        metadata = result.get_row_metadata()
        assert [c.nullable for c in metadata.columns] == [True, True]  # even __key is nullable
        assert metadata.column_count == 2
        assert metadata.find_column("this") == 1
        row = next(iter(result))
        assert row.get_object("__key") == key and row.get_object("this") == value
        assert row[0] == key and row["this"] == value
        assert row.get_object_with_index(1) == value


def test_mapping_with_explicit_columns_of_primitive_formats(sql_client, names):
    name = names()
    sql = (
        "CREATE MAPPING %s (__key INT, this VARCHAR) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')"
        % name
    )
    assert update(sql_client, sql) == 0
    sql_client.get_map(name).blocking().put_all({1: "one", 2: "two"})
    assert query(sql_client, "SELECT __key FROM %s ORDER BY __key" % name) == ([("__key", T.INTEGER)], [[1], [2]])
    assert query(sql_client, "SELECT this FROM %s ORDER BY this" % name) == ([("this", T.VARCHAR)], [["one"], ["two"]])


def test_mapping_of_other_primitive_formats_column_types(sql_client, names):
    name = names()
    for fmt, column_type in [
        ("tinyint", T.TINYINT),
        ("smallint", T.SMALLINT),
        ("real", T.REAL),
        ("decimal", T.DECIMAL),
        ("date", T.DATE),
        ("timestamp", T.TIMESTAMP),
    ]:
        sql = "CREATE OR REPLACE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='%s')" % (name, fmt)
        assert update(sql_client, sql) == 0
        assert query(sql_client, "SELECT * FROM %s" % name) == ([("__key", T.INTEGER), ("this", column_type)], [])


def test_mapping_json_flat(sql_client, names):
    name = names()
    sql = (
        "CREATE MAPPING %s (__key INT, name VARCHAR, age INT, score DOUBLE, ok BOOLEAN) "
        "TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')" % name
    )
    assert update(sql_client, sql) == 0
    assert (
        update(sql_client, "INSERT INTO %s VALUES (1, 'ann', 30, 1.5, true), (2, 'bob', NULL, 2.5, false)" % name) == 0
    )
    cols, rows = query(sql_client, "SELECT * FROM %s ORDER BY __key" % name)
    assert cols == [
        ("__key", T.INTEGER),
        ("name", T.VARCHAR),
        ("age", T.INTEGER),
        ("score", T.DOUBLE),
        ("ok", T.BOOLEAN),
    ]
    assert rows == [[1, "ann", 30, 1.5, True], [2, "bob", None, 2.5, False]]
    # the stored value is a HazelcastJsonValue with the fields in column order, no blanks
    m = sql_client.get_map(name).blocking()
    assert m.get(1).to_string() == '{"name":"ann","age":30,"score":1.5,"ok":true}'
    assert m.get(2).to_string() == '{"name":"bob","age":null,"score":2.5,"ok":false}'
    # `this` of a json-flat mapping is a hidden OBJECT column: the HazelcastJsonValue itself
    cols, rows = query(sql_client, "SELECT __key, this FROM %s ORDER BY __key" % name)
    assert cols == [("__key", T.INTEGER), ("this", T.OBJECT)]
    assert [as_json(v) for _, v in rows] == [
        {"name": "ann", "age": 30, "score": 1.5, "ok": True},
        {"name": "bob", "age": None, "score": 2.5, "ok": False},
    ]
    # values put through the map API are read field by field; missing fields are NULL
    m.put(3, HazelcastJsonValue('{"name": "cy", "extra": [1, 2], "age": 7}'))
    assert query(sql_client, "SELECT name, age, score, ok FROM %s WHERE __key = 3" % name)[1] == [["cy", 7, None, None]]


def test_json_flat_date_timestamp_and_double_columns(sql_client, names):
    name = names()
    sql = (
        "CREATE MAPPING %s (__key INT, d DATE, ts TIMESTAMP, q DOUBLE) "
        "TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')" % name
    )
    assert update(sql_client, sql) == 0
    sql = "SINK INTO %s VALUES (1, CAST(? AS DATE), CAST('2024-01-02T03:04:05' AS TIMESTAMP), ?)" % name
    assert update(sql_client, sql, "2006-03-28", 1000) == 0
    # dates as ISO strings; surprising: the INTEGER parameter is stored as 1000, not 1000.0
    assert (
        sql_client.get_map(name).blocking().get(1).to_string()
        == '{"d":"2006-03-28","ts":"2024-01-02T03:04:05","q":1000}'
    )
    assert query(sql_client, "SELECT * FROM %s" % name) == (
        [("__key", T.INTEGER), ("d", T.DATE), ("ts", T.TIMESTAMP), ("q", T.DOUBLE)],
        [[1, datetime.date(2006, 3, 28), datetime.datetime(2024, 1, 2, 3, 4, 5), 1000.0]],
    )


def test_mapping_json_flat_needs_a_column_list(sql_client, names):
    name = names()
    sql_client.get_map(name).blocking().put(1, HazelcastJsonValue('{"a": 1}'))
    error = sql_error(
        sql_client, "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')" % name
    )
    # surprising: no column derivation from a sample entry for JSON, and code GENERIC
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "Column list is required for JSON format")


def test_mapping_json(sql_client, names):
    name = names()
    assert (
        update(sql_client, "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json')" % name) == 0
    )
    m = sql_client.get_map(name).blocking()
    m.put(1, HazelcastJsonValue('{"name": "ann", "age": 30, "tags": ["a", "b"], "addr": {"city": "X"}}'))
    m.put(2, HazelcastJsonValue('{"name": "bob", "age": 41}'))
    cols, rows = query(sql_client, "SELECT * FROM %s ORDER BY __key" % name)
    assert cols == [("__key", T.INTEGER), ("this", T.JSON)]
    # the JSON text comes back exactly as it was put (blanks kept)
    assert [(k, v.to_string()) for k, v in rows] == [
        (1, '{"name": "ann", "age": 30, "tags": ["a", "b"], "addr": {"city": "X"}}'),
        (2, '{"name": "bob", "age": 41}'),
    ]
    # INSERT of a VARCHAR or a CAST(... AS JSON) stores a HazelcastJsonValue with that text
    assert update(sql_client, 'INSERT INTO %s VALUES (3, \'{"name":"cy"}\')' % name) == 0
    assert update(sql_client, "INSERT INTO %s VALUES (4, CAST('{\"n\": 4}' AS JSON))" % name) == 0
    assert m.get(3) == HazelcastJsonValue('{"name":"cy"}')
    assert m.get(4).to_string() == '{"n": 4}'


def test_mapping_compact(sql_client, names):
    name = names()
    sql = (
        "CREATE MAPPING %s (__key INT, name VARCHAR, age INT, city VARCHAR) TYPE IMap "
        "OPTIONS ('keyFormat'='int', 'valueFormat'='compact', 'valueCompactTypeName'='%s')" % (name, PERSON_TYPE)
    )
    assert update(sql_client, sql) == 0
    m = sql_client.get_map(name).blocking()
    m.put(1, Person("ann", 30, "X"))
    assert update(sql_client, "INSERT INTO %s VALUES (2, 'bob', 41, NULL)" % name) == 0
    cols, rows = query(sql_client, "SELECT * FROM %s ORDER BY __key" % name)
    assert cols == [("__key", T.INTEGER), ("name", T.VARCHAR), ("age", T.INTEGER), ("city", T.VARCHAR)]
    assert rows == [[1, "ann", 30, "X"], [2, "bob", 41, None]]
    # a value INSERTed by SQL is a Compact object the client's serializer reads
    assert m.get(2) == Person("bob", 41, None)
    cols, rows = query(sql_client, "SELECT this FROM %s ORDER BY __key" % name)
    assert cols == [("this", T.OBJECT)]
    assert rows == [[Person("ann", 30, "X")], [Person("bob", 41, None)]]


def test_mapping_compact_needs_a_column_list(sql_client, names):
    name = names()
    sql_client.get_map(name).blocking().put(1, Person("ann", 30, "X"))
    error = sql_error(
        sql_client,
        "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='compact', 'valueCompactTypeName'='%s')"
        % (name, PERSON_TYPE),
    )
    # surprising: Hazelcast 5.6 does not derive the columns from the sample entry's schema here
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "Column list is required for Compact format")


def test_mapping_portable_derives_columns_from_the_class_definition(member, names):
    # a class id of its own, so that the member surely has not seen its class definition yet
    class_id = uuid.uuid4().int % 1_000_000_000 + 1000
    cls = type("FreshCustomer", (Customer,), {"CLASS_ID": class_id})
    client = new_client(member, "smart", portable_factories={Customer.FACTORY_ID: {class_id: cls}})
    try:
        name, other = names(), names("other_")
        m = client.get_map(name).blocking()
        m.put(1, cls("Peter", 42, True))
        options = (
            "'keyFormat'='int', 'valueFormat'='portable', 'valuePortableFactoryId'='%d', 'valuePortableClassId'='%d'"
            % (Customer.FACTORY_ID, class_id)
        )
        # surprising: the member stored a Customer, yet a mapping without column list has only
        # __key and this: the member knows a class definition only once it has read a value
        assert update(client, "CREATE MAPPING %s TYPE IMap OPTIONS (%s)" % (name, options)) == 0
        cols, rows = query(client, "SELECT * FROM %s" % name)
        assert (cols, rows) == ([("__key", T.INTEGER), ("this", T.OBJECT)], [[1, cls("Peter", 42, True)]])
        # a SELECT from an unmapped map reads a sample value (for its suggestion): from now on
        # the member knows the class definition...
        client.get_map(other).blocking().put(1, cls("Ann", 1, False))
        assert code(sql_error(client, "SELECT * FROM %s" % other)) == SqlErrorCode.OBJECT_NOT_FOUND
        # ...and a mapping without column list gets the fields of the class definition, in order
        assert update(client, "CREATE OR REPLACE MAPPING %s TYPE IMap OPTIONS (%s)" % (name, options)) == 0
        assert update(client, "INSERT INTO %s VALUES (2, 'Joe', 33, false)" % name) == 0
        cols, rows = query(client, "SELECT * FROM %s ORDER BY __key" % name)
        assert cols == [("__key", T.INTEGER), ("name", T.VARCHAR), ("age", T.INTEGER), ("is_active", T.BOOLEAN)]
        assert rows == [[1, "Peter", 42, True], [2, "Joe", 33, False]]
        assert m.get(2) == cls("Joe", 33, False)
        assert query(client, "SELECT this FROM %s WHERE __key = 1" % name) == (
            [("this", T.OBJECT)],
            [[cls("Peter", 42, True)]],
        )
    finally:
        client.shutdown()


def test_select_from_unmapped_map_of_portable_values_suggests_a_mapping(sql_client, names):
    name = names()
    sql_client.get_map(name).blocking().put(1, Customer("Peter", 42, True))
    error = sql_error(sql_client, "SELECT * FROM %s" % name)
    suggestion = (
        'CREATE OR REPLACE EXTERNAL MAPPING "hazelcast"."public"."{0}" EXTERNAL NAME "{0}"\n'
        'TYPE "IMap"\n'
        "OPTIONS (\n"
        "  'keyFormat'='java',\n"
        "  'keyJavaClass'='java.lang.Integer',\n"
        "  'valueFormat'='portable',\n"
        "  'valuePortableFactoryId'='{1}',\n"
        "  'valuePortableClassId'='{2}',\n"
        "  'valuePortableClassVersion'='0'\n"
        ")"
    ).format(name, Customer.FACTORY_ID, Customer.CLASS_ID)
    assert (code(error), error.suggestion) == (SqlErrorCode.OBJECT_NOT_FOUND, suggestion)
    assert str(error).endswith("execute this command first: " + suggestion)


def test_select_from_unmapped_map_of_compact_values_suggests_a_mapping(sql_client, names):
    name = names()
    sql_client.get_map(name).blocking().put(1, Person("ann", 30, "X"))
    error = sql_error(sql_client, "SELECT * FROM %s" % name)
    # ...whereas the suggestion for a SELECT without a mapping does list the schema's fields
    # (sorted by name, each EXTERNAL NAME "this.<field>")
    suggestion = (
        'CREATE OR REPLACE EXTERNAL MAPPING "hazelcast"."public"."{0}" EXTERNAL NAME "{0}" (\n'
        '  "age" INTEGER EXTERNAL NAME "this.age",\n'
        '  "city" VARCHAR EXTERNAL NAME "this.city",\n'
        '  "name" VARCHAR EXTERNAL NAME "this.name"\n'
        ")\n"
        'TYPE "IMap"\n'
        "OPTIONS (\n"
        "  'keyFormat'='java',\n"
        "  'keyJavaClass'='java.lang.Integer',\n"
        "  'valueFormat'='compact',\n"
        "  'valueCompactTypeName'='%s'\n"
        ")" % PERSON_TYPE
    ).format(name)
    assert code(error) == SqlErrorCode.OBJECT_NOT_FOUND
    assert error.suggestion == suggestion
    assert str(error) == (
        "Object '%s' not found, did you forget to CREATE MAPPING? If you want to use the IMap named '%s', "
        "execute this command first: %s" % (name, name, suggestion)
    )
    # the suggested statement works
    assert update(sql_client, suggestion) == 0
    # its column list has no __key: SELECT * does not show the key
    cols, rows = query(sql_client, "SELECT * FROM %s" % name)
    assert cols == [("age", T.INTEGER), ("city", T.VARCHAR), ("name", T.VARCHAR)]
    assert rows == [[30, "X", "ann"]]
    assert query(sql_client, "SELECT __key, name FROM %s" % name) == (
        [("__key", T.INTEGER), ("name", T.VARCHAR)],
        [[1, "ann"]],
    )


def test_select_from_unmapped_map_of_primitives_suggests_a_mapping(sql_client, names):
    name = names()
    sql_client.get_map(name).blocking().put(1, "x")
    error = sql_error(sql_client, "SELECT * FROM %s" % name)
    suggestion = (
        'CREATE OR REPLACE EXTERNAL MAPPING "hazelcast"."public"."{0}" EXTERNAL NAME "{0}"\n'
        'TYPE "IMap"\n'
        "OPTIONS (\n"
        "  'keyFormat'='java',\n"
        "  'keyJavaClass'='java.lang.Integer',\n"
        "  'valueFormat'='java',\n"
        "  'valueJavaClass'='java.lang.String'\n"
        ")"
    ).format(name)
    # no implicit mapping: code OBJECT_NOT_FOUND, and a suggestion derived from one entry
    assert code(error) == SqlErrorCode.OBJECT_NOT_FOUND
    assert error.suggestion == suggestion
    assert str(error) == (
        "Object '%s' not found, did you forget to CREATE MAPPING? If you want to use the IMap named '%s', "
        "execute this command first: %s" % (name, name, suggestion)
    )
    assert update(sql_client, suggestion) == 0
    assert query(sql_client, "SELECT * FROM %s" % name) == ([("__key", T.INTEGER), ("this", T.VARCHAR)], [[1, "x"]])


def test_select_from_unmapped_map_of_json_values_has_no_suggestion(sql_client, names):
    name = names()
    sql_client.get_map(name).blocking().put(1, HazelcastJsonValue('{"a": 1}'))
    error = sql_error(sql_client, "SELECT * FROM %s" % name)
    assert (code(error), str(error), error.suggestion) == (
        SqlErrorCode.OBJECT_NOT_FOUND,
        "Object '%s' not found, did you forget to CREATE MAPPING?" % name,
        None,
    )


def test_create_or_replace_and_if_not_exists(sql_client, names):
    name = names()
    create = "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')" % name
    assert update(sql_client, create) == 0
    error = sql_error(sql_client, create)
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "Mapping or view already exists: %s" % name)
    # IF NOT EXISTS keeps the existing mapping (INTEGER key), without an error
    sql = "CREATE MAPPING IF NOT EXISTS %s TYPE IMap OPTIONS ('keyFormat'='bigint', 'valueFormat'='varchar')" % name
    assert update(sql_client, sql) == 0
    assert columns(execute(sql_client, "SELECT * FROM %s" % name)) == [("__key", T.INTEGER), ("this", T.VARCHAR)]
    # OR REPLACE replaces it
    sql = "CREATE OR REPLACE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='bigint', 'valueFormat'='double')" % name
    assert update(sql_client, sql) == 0
    assert columns(execute(sql_client, "SELECT * FROM %s" % name)) == [("__key", T.BIGINT), ("this", T.DOUBLE)]


def test_external_name(sql_client, names):
    name, real = names(), names("real_")
    sql = "CREATE MAPPING %s EXTERNAL NAME \"%s\" TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')" % (
        name,
        real,
    )
    assert update(sql_client, sql) == 0
    assert update(sql_client, "INSERT INTO %s VALUES (5, 'five')" % name) == 0
    # the rows went to the map named by EXTERNAL NAME, not to the map of the mapping's name
    assert sql_client.get_map(real).blocking().get(5) == "five"
    assert sql_client.get_map(name).blocking().size() == 0
    sql_client.get_map(real).blocking().put(6, "six")
    assert query(sql_client, "SELECT * FROM %s ORDER BY __key" % name)[1] == [[5, "five"], [6, "six"]]


def test_renaming_key_and_this_columns_is_refused(sql_client, names):
    name = names()
    error = sql_error(
        sql_client,
        "CREATE MAPPING %s (k INT EXTERNAL NAME __key, v VARCHAR EXTERNAL NAME this) TYPE IMap "
        "OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')" % name,
    )
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "Cannot rename field: '__key'")


def test_json_flat_columns_with_external_names(sql_client, names):
    name = names()
    sql = (
        'CREATE MAPPING %s (__key INT, full_name VARCHAR EXTERNAL NAME "this.name", years INT EXTERNAL NAME age) '
        "TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')" % name
    )
    assert update(sql_client, sql) == 0
    assert update(sql_client, "INSERT INTO %s VALUES (1, 'ann', 30)" % name) == 0
    assert sql_client.get_map(name).blocking().get(1).to_string() == '{"name":"ann","age":30}'
    assert query(sql_client, "SELECT * FROM %s" % name) == (
        [("__key", T.INTEGER), ("full_name", T.VARCHAR), ("years", T.INTEGER)],
        [[1, "ann", 30]],
    )


def test_drop_mapping_and_show_mappings(sql_client, names):
    a, b = names("b_"), names("a_")
    for name in (a, b):
        sql = "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='int')" % name
        assert update(sql_client, sql) == 0
    cols, rows = query(sql_client, "SHOW MAPPINGS")
    assert cols == [("name", T.VARCHAR)]
    shown = [row[0] for row in rows]
    assert shown == sorted(shown)  # sorted by name
    assert b in shown and a in shown and shown.index(b) < shown.index(a)
    assert update(sql_client, "INSERT INTO %s VALUES (1, 10)" % a) == 0
    assert update(sql_client, "DROP MAPPING %s" % a) == 0
    # the map and its entries stay; only the mapping is gone
    assert sql_client.get_map(a).blocking().get(1) == 10
    assert a not in [row[0] for row in query(sql_client, "SHOW MAPPINGS")[1]]
    error = sql_error(sql_client, "DROP MAPPING %s" % a)
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "Mapping does not exist: %s" % a)
    assert update(sql_client, "DROP MAPPING IF EXISTS %s" % a) == 0
    error = sql_error(sql_client, "SELECT * FROM %s" % a)
    assert code(error) == SqlErrorCode.OBJECT_NOT_FOUND


def test_information_schema_mappings(sql_client, names):
    name = names()
    sql = "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')" % name
    assert update(sql_client, sql) == 0
    cols, rows = query(sql_client, "SELECT * FROM information_schema.mappings WHERE table_name = ?", name)
    assert cols == [
        ("table_catalog", T.VARCHAR),
        ("table_schema", T.VARCHAR),
        ("table_name", T.VARCHAR),
        ("mapping_external_name", T.VARCHAR),
        ("mapping_type", T.VARCHAR),
        ("mapping_options", T.VARCHAR),
    ]
    assert rows == [["hazelcast", "public", name, '"%s"' % name, "IMap", '{"keyFormat":"int","valueFormat":"varchar"}']]


@pytest.mark.parametrize(
    "ddl, message",
    [
        ("CREATE MAPPING {} TYPE IMap OPTIONS ('keyFormat'='int')", "Missing 'valueFormat' option"),
        (
            "CREATE MAPPING {} TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='nope')",
            "Unsupported serialization format: nope",
        ),
        ("CREATE MAPPING {} TYPE Foo OPTIONS ('keyFormat'='int', 'valueFormat'='int')", "Unknown connector type: Foo"),
        (
            "CREATE MAPPING {} (__key INT, this INT, x INT) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='int')",
            "The field 'this' is of type INTEGER, you can't map 'x' too",
        ),
    ],
    ids=["no-value-format", "unknown-format", "unknown-type", "extra-column"],
)
def test_invalid_mappings(sql_client, names, ddl, message):
    error = sql_error(sql_client, ddl.format(names()))
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, message)


# --------------------------------------------------------------------------- SELECT


def test_select_star_key_and_this(sql_client, people):
    cols, rows = query(sql_client, "SELECT * FROM %s" % people)
    assert cols == PEOPLE_COLUMNS
    assert sort_rows(rows) == PEOPLE
    assert sorted(keys(sql_client, "SELECT __key FROM %s" % people)) == [1, 2, 3, 4, 5, 6]
    cols, rows = query(sql_client, "SELECT this FROM %s WHERE __key = 1" % people)
    assert cols == [("this", T.OBJECT)]
    assert as_json(rows[0][0]) == {"name": "Alice", "age": 30, "dept": "eng", "salary": 100, "rate": 1.5}


def test_select_through_unisocket_client(member, people):
    c = new_client(member, "unisocket")
    try:
        cols, rows = query(c, "SELECT __key, name FROM %s ORDER BY __key" % people)
        assert cols == [("__key", T.INTEGER), ("name", T.VARCHAR)]
        assert rows == [[row[0], row[1]] for row in PEOPLE]
    finally:
        c.shutdown()


def test_projections_with_arithmetic_strings_and_aliases(sql_client, people):
    cols, rows = query(
        sql_client,
        "SELECT name, age * 2 + 1 AS a2, salary / 3 AS s3, rate * 2 AS r2, name || '!' AS bang, -age AS neg "
        "FROM %s ORDER BY __key" % people,
    )
    # INTEGER arithmetic answers BIGINT; integer division truncates
    assert cols == [
        ("name", T.VARCHAR),
        ("a2", T.BIGINT),
        ("s3", T.BIGINT),
        ("r2", T.DOUBLE),
        ("bang", T.VARCHAR),
        ("neg", T.BIGINT),
    ]
    assert rows == [
        ["Alice", 61, 33, 3.0, "Alice!", -30],
        ["Bob", 51, 26, 4.5, "Bob!", -25],
        ["Carol", 71, 30, None, "Carol!", -35],
        ["Dan", None, 23, 1.0, "Dan!", None],
        ["Eve", 57, 40, 6.0, "Eve!", -28],
        ["al_x%", 81, None, -3.0, "al_x%!", -40],
    ]


def test_column_aliases_keep_their_case(sql_client, people):
    cols, rows = query(sql_client, 'SELECT __key k, name AS NAME, age AS "Full Age" FROM %s WHERE __key = 1' % people)
    assert cols == [("k", T.INTEGER), ("NAME", T.VARCHAR), ("Full Age", T.INTEGER)]
    assert rows == [[1, "Alice", 30]]


@pytest.mark.parametrize(
    "where, expected",
    [
        ("age = 30", [1]),
        ("age <> 30", [2, 3, 5, 6]),
        ("age != 30", [2, 3, 5, 6]),
        ("age < 30", [2, 5]),
        ("age <= 30", [1, 2, 5]),
        ("age > 30", [3, 6]),
        ("age >= 30", [1, 3, 6]),
        ("age BETWEEN 25 AND 30", [1, 2, 5]),
        ("age NOT BETWEEN 25 AND 30", [3, 6]),
        ("name IN ('Bob', 'Eve', 'Zed')", [2, 5]),
        ("name NOT IN ('Bob', 'Eve')", [1, 3, 4, 6]),
        ("name LIKE 'A%'", [1]),
        ("name LIKE '_o%'", [2]),
        ("name LIKE 'a%'", [6]),  # case-sensitive
        ("name NOT LIKE '%a%'", [1, 2, 5]),
        ("name LIKE 'al!_x!%' ESCAPE '!'", [6]),
        ("name LIKE 'al\\_%' ESCAPE '\\'", [6]),
        ("age IS NULL", [4]),
        ("dept IS NOT NULL", [1, 2, 3, 4, 6]),
        ("dept = 'eng' AND age > 26", [1, 6]),
        ("dept = 'ops' OR salary > 100", [3, 4, 5]),
        ("NOT (dept = 'eng')", [3, 4]),  # NULL dept is neither
        ("rate > 1.0", [1, 2, 5]),
        ("salary >= 90 AND rate IS NULL", [3]),
        ("__key = 2", [2]),
        ("__key IN (2, 4, 9)", [2, 4]),
    ],
)
def test_where(sql_client, people, where, expected):
    assert keys(sql_client, "SELECT __key FROM %s WHERE %s ORDER BY __key" % (people, where)) == expected


def test_where_over_indexed_attributes_answers_as_a_scan(sql_client, names):
    """A map with a sorted index on `score` and a hash index on `tag`: equality, IN, ranges
    (either side, BETWEEN) and their conjunctions with other terms find the rows a scan finds,
    including entries whose attribute an index cannot key (text where numbers are, nulls)."""

    name = names()
    m = sql_client.get_map(name).blocking()
    m.add_index(attributes=["score"], index_type=IndexType.SORTED)
    m.add_index(attributes=["tag"], index_type=IndexType.HASH)
    docs = {i: {"score": (i * 7) % 100, "tag": "t%d" % (i % 5)} for i in range(300)}
    docs[300] = {"score": None, "tag": None}
    m.put_all({k: HazelcastJsonValue(json.dumps(v)) for k, v in docs.items()})
    ddl = ("CREATE MAPPING %s (__key INT, score INT, tag VARCHAR) TYPE IMap "
           "OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')" % name)
    assert update(sql_client, ddl) == 0

    def expect(test):
        return sorted(k for k, v in docs.items() if k < 300 and test(v["score"], v["tag"]))

    cases = [
        ("score = 21", lambda s, t: s == 21),
        ("21 = score", lambda s, t: s == 21),
        ("score IN (3, 10, 99)", lambda s, t: s in (3, 10, 99)),
        ("score > 90", lambda s, t: s > 90),
        ("10 >= score", lambda s, t: s <= 10),
        ("score BETWEEN 40 AND 44", lambda s, t: 40 <= s <= 44),
        ("score < 50 AND tag = 't2'", lambda s, t: s < 50 and t == "t2"),
        ("tag = 't4' AND __key > 250", lambda s, t: t == "t4"),
        ("tag IN ('t1', 't3') AND score >= 95", lambda s, t: t in ("t1", "t3") and s >= 95),
        ("score = 21 OR tag = 't0'", lambda s, t: s == 21 or t == "t0"),
    ]
    for where, test in cases:
        got = sorted(keys(sql_client, "SELECT __key FROM %s WHERE %s AND __key < 300" % (name, where)))
        wanted = expect(test) if "__key >" not in where else [k for k in expect(test) if k > 250]
        assert got == wanted, where
    got = query(sql_client, "SELECT tag, COUNT(*), SUM(score) FROM %s WHERE score BETWEEN 10 AND 19 AND __key < 300 "
                            "GROUP BY tag ORDER BY tag" % name)[1]
    picked = [v for k, v in docs.items() if k < 300 and 10 <= v["score"] <= 19]
    assert got == [[t, sum(1 for v in picked if v["tag"] == t), sum(v["score"] for v in picked if v["tag"] == t)]
                   for t in sorted({v["tag"] for v in picked})]
    # an index keeps up with a change
    m.put(7, HazelcastJsonValue(json.dumps({"score": 21, "tag": "t9"})))
    docs[7] = {"score": 21, "tag": "t9"}
    assert sorted(keys(sql_client, "SELECT __key FROM %s WHERE score = 21" % name)) == expect(lambda s, t: s == 21)


def test_a_statement_past_its_timeout_fails(sql_client, names):
    """`timeoutMillis`: a statement still running when it passes fails as Hazelcast cancels its
    job; one that answers in time answers."""
    name = names()
    sql_client.get_map(name).blocking().put_all({i: i for i in range(2000)})
    ddl = "CREATE MAPPING %s (__key INT, this INT) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='int')"
    assert update(sql_client, ddl % name) == 0
    assert query(sql_client, "SELECT COUNT(*) FROM %s" % name, timeout=30)[1] == [[2000]]
    # 4,000,000 pairs compared one by one: longer than 0.2 s on both products
    slow = "SELECT COUNT(*) FROM %s a JOIN %s b ON a.this + b.this = 7" % (name, name)
    error = sql_error(sql_client, slow, timeout=0.2)
    assert error._code == SqlErrorCode.GENERIC and "CANCEL_FORCEFUL" in str(error), error


def test_a_limit_stops_reading_before_a_row_whose_where_fails(sql_client, names):
    """A LIMIT without ORDER BY stops reading once it has its rows: the row whose WHERE divides
    by zero (n = 500, one of 20,000) is not reached by LIMIT 5; without the LIMIT it is, and
    the statement fails (ferrogrid read every row and failed both before)."""
    name = names()
    sql_client.get_map(name).blocking().put_all({i: HazelcastJsonValue({"n": i}) for i in range(20000)})
    ddl = "CREATE MAPPING %s (__key INT, n INT) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')"
    assert update(sql_client, ddl % name) == 0
    where = "SELECT __key FROM %s WHERE 1 / (n - 500) >= 0" % name
    assert len(keys(sql_client, where + " LIMIT 5")) == 5
    with pytest.raises(HazelcastSqlError) as raised:
        keys(sql_client, where)  # (Hazelcast fails it once the row is read: every page is fetched)
    assert code(raised.value) == SqlErrorCode.DATA_EXCEPTION


def test_order_by_puts_nulls_first_ascending_and_last_descending(sql_client, people):
    assert query(sql_client, "SELECT __key, age FROM %s ORDER BY age" % people)[1] == [
        [4, None],
        [2, 25],
        [5, 28],
        [1, 30],
        [3, 35],
        [6, 40],
    ]
    assert keys(sql_client, "SELECT __key FROM %s ORDER BY age DESC" % people) == [6, 3, 1, 5, 2, 4]
    assert keys(sql_client, "SELECT __key FROM %s ORDER BY age ASC" % people) == [4, 2, 5, 1, 3, 6]


def test_order_by_several_keys_and_by_position(sql_client, people):
    cols, rows = query(sql_client, "SELECT __key, dept, age FROM %s ORDER BY dept, age DESC" % people)
    assert cols == [("__key", T.INTEGER), ("dept", T.VARCHAR), ("age", T.INTEGER)]
    assert rows == [[5, None, 28], [6, "eng", 40], [1, "eng", 30], [2, "eng", 25], [3, "ops", 35], [4, "ops", None]]
    assert keys(sql_client, "SELECT __key, age FROM %s ORDER BY 2 DESC" % people) == [6, 3, 1, 5, 2, 4]
    # strings order by UTF-16 code unit: upper case before lower case
    assert [r[0] for r in query(sql_client, "SELECT name FROM %s ORDER BY name" % people)[1]] == [
        "Alice",
        "Bob",
        "Carol",
        "Dan",
        "Eve",
        "al_x%",
    ]


def test_order_by_nulls_first_is_not_supported(sql_client, people):
    error = sql_error(sql_client, "SELECT __key, age FROM %s ORDER BY age NULLS FIRST" % people)
    col = len("SELECT __key, age FROM %s ORDER BY " % people) + 1
    assert code(error) == SqlErrorCode.PARSING
    assert str(error) == "From line 1, column %d to line 1, column %d: NULLS FIRST not supported" % (col, col + 14)
    error = sql_error(sql_client, "SELECT __key, age FROM %s ORDER BY age DESC NULLS LAST" % people)
    assert code(error) == SqlErrorCode.PARSING
    assert str(error) == "From line 1, column %d to line 1, column %d: NULLS LAST not supported" % (col, col + 18)


def test_order_by_a_name_two_select_items_bear_is_ambiguous(sql_client, people):
    statement = "SELECT __key, age, __key FROM %s ORDER BY __key" % people
    error = sql_error(sql_client, statement)
    col = len(statement) - len("__key") + 1
    assert code(error) == SqlErrorCode.PARSING
    assert str(error) == "From line 1, column %d to line 1, column %d: Column '__key' is ambiguous" % (col, col + 4)
    # one select item of that name, or an ordinal, is not
    assert keys(sql_client, "SELECT __key, age FROM %s ORDER BY __key LIMIT 2" % people) == [1, 2]
    assert keys(sql_client, "SELECT __key, age, __key FROM %s ORDER BY 1 LIMIT 2" % people) == [1, 2]


def test_limit_and_offset(sql_client, people):
    assert keys(sql_client, "SELECT __key FROM %s ORDER BY __key LIMIT 2" % people) == [1, 2]
    assert keys(sql_client, "SELECT __key FROM %s ORDER BY __key LIMIT 2 OFFSET 3" % people) == [4, 5]
    assert keys(sql_client, "SELECT __key FROM %s ORDER BY __key OFFSET 4 ROWS" % people) == [5, 6]
    sql = "SELECT __key FROM %s ORDER BY __key OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY" % people
    assert keys(sql_client, sql) == [2, 3]
    assert keys(sql_client, "SELECT __key FROM %s ORDER BY __key LIMIT ?" % people, 3) == [1, 2, 3]
    assert len(keys(sql_client, "SELECT __key FROM %s LIMIT 4" % people)) == 4
    assert keys(sql_client, "SELECT __key FROM %s ORDER BY __key LIMIT 0" % people) == []


def test_distinct(sql_client, people):
    cols, rows = query(sql_client, "SELECT DISTINCT dept FROM %s" % people)
    assert cols == [("dept", T.VARCHAR)]
    assert sort_rows(rows) == [[None], ["eng"], ["ops"]]
    cols, rows = query(sql_client, "SELECT COUNT(DISTINCT dept) FROM %s" % people)
    assert (cols, rows) == ([("EXPR$0", T.BIGINT)], [[2]])  # NULL is not counted


def test_aggregates_and_their_types(sql_client, people):
    cols, rows = query(
        sql_client,
        "SELECT COUNT(*), COUNT(age), COUNT(dept), SUM(age), AVG(age), MIN(age), MAX(age), "
        "SUM(salary), AVG(salary), SUM(rate), AVG(rate), MIN(name), MAX(name) FROM %s" % people,
    )
    # unaliased columns are named EXPR$<position>; SUM(INTEGER) is BIGINT, AVG(INTEGER) and
    # SUM/AVG(BIGINT) are DECIMAL, SUM/AVG(DOUBLE) DOUBLE, MIN/MAX keep their argument's type
    assert cols == [
        ("EXPR$0", T.BIGINT),
        ("EXPR$1", T.BIGINT),
        ("EXPR$2", T.BIGINT),
        ("EXPR$3", T.BIGINT),
        ("EXPR$4", T.DECIMAL),
        ("EXPR$5", T.INTEGER),
        ("EXPR$6", T.INTEGER),
        ("EXPR$7", T.DECIMAL),
        ("EXPR$8", T.DECIMAL),
        ("EXPR$9", T.DOUBLE),
        ("EXPR$10", T.DOUBLE),
        ("EXPR$11", T.VARCHAR),
        ("EXPR$12", T.VARCHAR),
    ]
    assert rows == [
        [6, 5, 5, 158, Decimal("31.6"), 25, 40, Decimal("460"), Decimal("92"), 5.75, 1.15, "Alice", "al_x%"]
    ]


def test_aggregates_of_no_rows(sql_client, people):
    cols, rows = query(sql_client, "SELECT COUNT(*), SUM(age), AVG(age), MIN(name) FROM %s WHERE 1 = 0" % people)
    assert cols == [("EXPR$0", T.BIGINT), ("EXPR$1", T.BIGINT), ("EXPR$2", T.DECIMAL), ("EXPR$3", T.VARCHAR)]
    assert rows == [[0, None, None, None]]
    cols, rows = query(sql_client, "SELECT dept, COUNT(*) FROM %s WHERE 1 = 0 GROUP BY dept" % people)
    assert (cols, rows) == ([("dept", T.VARCHAR), ("EXPR$1", T.BIGINT)], [])


def test_group_by_and_having(sql_client, people):
    cols, rows = query(
        sql_client,
        "SELECT dept, COUNT(*) AS n, SUM(salary) AS s, AVG(age) AS a, MIN(rate) AS r FROM %s GROUP BY dept ORDER BY dept"
        % people,
    )
    assert cols == [("dept", T.VARCHAR), ("n", T.BIGINT), ("s", T.DECIMAL), ("a", T.DECIMAL), ("r", T.DOUBLE)]
    # the AVG of INTEGERs is a DECIMAL with up to 74 fraction digits (surprising but so)
    assert rows == [
        [None, 1, Decimal("120"), Decimal("28"), 3.0],
        ["eng", 3, Decimal("180"), Decimal("31." + "6" * 73 + "7"), -1.5],
        ["ops", 2, Decimal("160"), Decimal("35"), 0.5],
    ]
    sql = "SELECT dept, COUNT(*) AS n FROM %s GROUP BY dept HAVING COUNT(*) > 1 ORDER BY dept" % people
    assert query(sql_client, sql) == ([("dept", T.VARCHAR), ("n", T.BIGINT)], [["eng", 3], ["ops", 2]])
    sql = "SELECT dept, SUM(age) AS s FROM %s WHERE dept IS NOT NULL GROUP BY dept HAVING SUM(age) > 60" % people
    assert query(sql_client, sql) == ([("dept", T.VARCHAR), ("s", T.BIGINT)], [["eng", 95]])


def test_literal_types(sql_client):
    cols, rows = query(sql_client, "SELECT 1, 1.5, 'a', TRUE, 2147483648, 1e3, 100000, 30000, NULL")
    # an integer literal gets the narrowest integer type that holds it
    assert [t for _, t in cols] == [
        T.TINYINT,
        T.DECIMAL,
        T.VARCHAR,
        T.BOOLEAN,
        T.BIGINT,
        T.DOUBLE,
        T.INTEGER,
        T.SMALLINT,
        T.NULL,
    ]
    assert [n for n, _ in cols] == ["EXPR$%d" % i for i in range(9)]
    assert rows == [[1, Decimal("1.5"), "a", True, 2147483648, 1000.0, 100000, 30000, None]]


def test_integer_division_modulo_and_widening(sql_client):
    cols, rows = query(
        sql_client,
        "SELECT 7 / 2, -7 / 2, 7 % 3, -7 % 3, 17 % -5, 7.0 / 2, CAST(7 AS DOUBLE) / 2, "
        "CAST(7 AS INT) / CAST(2 AS INT), CAST(7 AS BIGINT) / 2, MOD(17, 5)",
    )
    # division truncates toward zero, the remainder has the dividend's sign
    assert [t for _, t in cols] == [
        T.TINYINT,
        T.TINYINT,
        T.TINYINT,
        T.TINYINT,
        T.TINYINT,
        T.DECIMAL,
        T.DOUBLE,
        T.BIGINT,
        T.BIGINT,
        T.TINYINT,
    ]
    assert rows == [[3, -3, 1, -1, 2, Decimal("3.5"), 3.5, 3, 3, 2]]
    cols, rows = query(
        sql_client,
        "SELECT CAST(127 AS TINYINT) + CAST(1 AS TINYINT), -CAST(-128 AS TINYINT), "
        "CAST(32767 AS SMALLINT) + CAST(1 AS SMALLINT), 2147483647 + 1, CAST(2147483647 AS INT) + CAST(1 AS INT)",
    )
    # no overflow below BIGINT: the result type is wider than the operands
    assert [t for _, t in cols] == [T.SMALLINT, T.SMALLINT, T.INTEGER, T.BIGINT, T.BIGINT]
    assert rows == [[128, 128, 32768, 2147483648, 2147483648]]


def test_bigint_overflow_is_an_error(sql_client):
    error = sql_error(sql_client, "SELECT 9223372036854775807 + 1")
    assert code(error) == SqlErrorCode.DATA_EXCEPTION
    assert str(error).endswith("BIGINT overflow in '+' operator (consider adding explicit CAST to DECIMAL)")
    error = sql_error(sql_client, "SELECT CAST(9223372036854775807 AS BIGINT) * 2")
    assert code(error) == SqlErrorCode.DATA_EXCEPTION
    assert str(error).endswith("BIGINT overflow in '*' operator (consider adding explicit CAST to DECIMAL)")


def test_division_by_zero(sql_client, people):
    for sql in (
        "SELECT 1 / 0",
        "SELECT 5 %% 0",
        "SELECT 1.0 / 0",
        "SELECT CAST(1 AS DOUBLE) / 0",
        "SELECT age / 0 FROM %s",
    ):
        error = sql_error(sql_client, sql % people if "%s" in sql else sql.replace("%%", "%"))
        assert code(error) == SqlErrorCode.DATA_EXCEPTION, sql
        # "The Jet SQL job failed: Execution on a member failed: com.hazelcast.jet.JetException:
        # Exception in ProcessorTasklet{<job id>/Values#0}: com.hazelcast.sql.impl.QueryException:
        # Division by zero"
        assert str(error).startswith("The Jet SQL job failed: "), str(error)
        assert str(error).endswith("com.hazelcast.sql.impl.QueryException: Division by zero"), str(error)
    # surprising: the same error in a single-key plan (WHERE __key = constant) has code GENERIC
    error = sql_error(sql_client, "SELECT age / 0 FROM %s WHERE __key = 1" % people)
    assert (code(error), str(error)) == (
        SqlErrorCode.GENERIC,
        "com.hazelcast.sql.impl.QueryException: Division by zero",
    )


def test_cast(sql_client, people):
    cols, rows = query(
        sql_client,
        "SELECT CAST('42' AS INT), CAST(42 AS VARCHAR), CAST(3.99 AS INT), CAST(-3.99 AS INT), CAST('3.5' AS DOUBLE), "
        "CAST('true' AS BOOLEAN), CAST(42 AS BIGINT), CAST(42 AS DECIMAL), CAST(1.5 AS VARCHAR), CAST(TRUE AS VARCHAR), "
        "CAST(CAST(2.5 AS DOUBLE) AS VARCHAR)",
    )
    assert [t for _, t in cols] == [
        T.INTEGER,
        T.VARCHAR,
        T.INTEGER,
        T.INTEGER,
        T.DOUBLE,
        T.BOOLEAN,
        T.BIGINT,
        T.DECIMAL,
        T.VARCHAR,
        T.VARCHAR,
        T.VARCHAR,
    ]
    # DOUBLE to VARCHAR is Java's scientific form ("2.5E0")
    assert rows == [[42, "42", 3, -3, 3.5, True, 42, Decimal("42"), "1.5", "true", "2.5E0"]]
    cols, rows = query(
        sql_client,
        "SELECT CAST(age AS VARCHAR), CAST(rate AS INT), CAST(salary AS DOUBLE), CAST(rate AS VARCHAR), "
        "CAST(age AS DECIMAL), CAST(age AS TINYINT) FROM %s ORDER BY __key" % people,
    )
    assert [t for _, t in cols] == [T.VARCHAR, T.INTEGER, T.DOUBLE, T.VARCHAR, T.DECIMAL, T.TINYINT]
    # DOUBLE column to INT truncates; DOUBLE column to VARCHAR is *not* scientific here
    assert rows == [
        ["30", 1, 100.0, "1.5", Decimal("30"), 30],
        ["25", 2, 80.0, "2.25", Decimal("25"), 25],
        ["35", None, 90.0, None, Decimal("35"), 35],
        [None, 0, 70.0, "0.5", None, None],
        ["28", 3, 120.0, "3.0", Decimal("28"), 28],
        ["40", -1, None, "-1.5", Decimal("40"), 40],
    ]
    cols, rows = query(
        sql_client,
        "SELECT CAST('2024-01-02' AS DATE), CAST('2024-01-02T03:04:05' AS TIMESTAMP), CAST('10:11:12' AS TIME)",
    )
    assert [t for _, t in cols] == [T.DATE, T.TIMESTAMP, T.TIME]
    assert rows == [[datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.time(10, 11, 12)]]


def test_cast_errors(sql_client, people):
    error = sql_error(sql_client, "SELECT CAST('abc' AS INT)")
    assert (code(error), str(error)) == (
        SqlErrorCode.PARSING,
        "From line 1, column 8 to line 1, column 25: CAST function cannot convert literal 'abc' to type INTEGER: "
        "Cannot parse VARCHAR value to INTEGER",
    )
    error = sql_error(sql_client, "SELECT CAST(300 AS TINYINT)")
    assert (code(error), str(error)) == (
        SqlErrorCode.PARSING,
        "From line 1, column 8 to line 1, column 27: CAST function cannot convert literal 300 to type TINYINT: "
        "Numeric overflow while converting SMALLINT to TINYINT",
    )
    error = sql_error(sql_client, "SELECT CAST(1 AS BOOLEAN)")
    assert (code(error), str(error)) == (
        SqlErrorCode.PARSING,
        "From line 1, column 8 to line 1, column 25: CAST function cannot convert value of type TINYINT to type BOOLEAN",
    )
    # surprising: a DOUBLE literal cast to INT fails (Java's "For input string"), code GENERIC,
    # while a DOUBLE column casts to INT fine (test_cast)
    error = sql_error(sql_client, "SELECT CAST(CAST(2.5 AS DOUBLE) AS INT)")
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, 'For input string: "2.5"')
    error = sql_error(sql_client, "SELECT CAST(name AS INT) FROM %s" % people)
    assert code(error) == SqlErrorCode.DATA_EXCEPTION
    assert str(error).endswith("com.hazelcast.sql.impl.QueryException: Cannot parse VARCHAR value to INTEGER")


def test_string_functions(sql_client, people):
    cols, rows = query(
        sql_client,
        "SELECT UPPER(name), LOWER(name), LENGTH(name), CHAR_LENGTH(name), CHARACTER_LENGTH(name), "
        "SUBSTRING(name FROM 2), SUBSTRING(name FROM 2 FOR 3), SUBSTRING(name, 1, 2), name || '-' || dept, "
        "POSITION('ic' IN name), REPLACE(name, 'l', 'L'), INITCAP(LOWER(name)) FROM %s WHERE __key = 1" % people,
    )
    assert [t for _, t in cols] == [
        T.VARCHAR,
        T.VARCHAR,
        T.INTEGER,
        T.INTEGER,
        T.INTEGER,
        T.VARCHAR,
        T.VARCHAR,
        T.VARCHAR,
        T.VARCHAR,
        T.INTEGER,
        T.VARCHAR,
        T.VARCHAR,
    ]
    assert rows == [["ALICE", "alice", 5, 5, 5, "lice", "lic", "Al", "Alice-eng", 3, "ALice", "Alice"]]
    cols, rows = query(
        sql_client,
        "SELECT TRIM('  ab  '), LTRIM('  ab  '), RTRIM('  ab  '), BTRIM('  ab  '), TRIM(LEADING 'x' FROM 'xxabxx'), "
        "TRIM(TRAILING 'x' FROM 'xxabxx'), TRIM(BOTH 'x' FROM 'xxabxx'), SUBSTRING('abc' FROM 5), "
        "SUBSTRING('abc' FROM 2 FOR 10), 'a' || 1, 1 || 2, 'a' || TRUE, CONCAT_WS('-', 'a', 'b', NULL, 'c'), ASCII('A')",
    )
    assert [t for _, t in cols] == [T.VARCHAR] * 13 + [T.INTEGER]
    assert rows == [["ab", "ab  ", "  ab", "ab", "abxx", "xxab", "ab", "", "bc", "a1", "12", "atrue", "a-b-c", 65]]


def test_string_functions_on_null(sql_client, people):
    cols, rows = query(
        sql_client,
        "SELECT UPPER(dept), LOWER(dept), LENGTH(dept), TRIM(dept), SUBSTRING(dept FROM 1 FOR 2), dept || 'x', "
        "'x' || dept, REPLACE(dept, 'a', 'b'), UPPER(NULL) FROM %s WHERE __key = 5" % people,
    )
    # NULL in, NULL out, also for || (not SQL Server's "concat null yields the other side")
    assert [t for _, t in cols] == [T.VARCHAR, T.VARCHAR, T.INTEGER] + [T.VARCHAR] * 6
    assert rows == [[None] * 9]


def test_concat_function_does_not_exist(sql_client):
    error = sql_error(sql_client, "SELECT CONCAT('a', 'b')")
    # surprising: only || and CONCAT_WS
    assert (code(error), str(error)) == (SqlErrorCode.PARSING, "Function 'CONCAT' does not exist")


def test_substring_from_zero_is_an_error(sql_client):
    error = sql_error(sql_client, "SELECT SUBSTRING('abc' FROM 0 FOR 2)")
    assert code(error) == SqlErrorCode.DATA_EXCEPTION
    assert str(error).endswith('com.hazelcast.sql.impl.QueryException: SUBSTRING "start" operand must be positive')


def test_numeric_functions(sql_client):
    cols, rows = query(
        sql_client,
        "SELECT ABS(-5), ABS(-2.5), ABS(CAST(-3 AS DOUBLE)), FLOOR(2.7), CEIL(2.1), FLOOR(-2.5), CEIL(-2.5), "
        "ROUND(2.5), ROUND(-2.5), ROUND(2.345, 2), ROUND(CAST(2.5 AS DOUBLE)), TRUNCATE(2.789, 1), "
        "FLOOR(CAST(2.7 AS DOUBLE)), CEIL(CAST(2.1 AS REAL)), FLOOR(5), ROUND(7)",
    )
    assert [t for _, t in cols] == [
        T.TINYINT,
        T.DECIMAL,
        T.DOUBLE,
        T.DECIMAL,
        T.DECIMAL,
        T.DECIMAL,
        T.DECIMAL,
        T.DECIMAL,
        T.DECIMAL,
        T.DECIMAL,
        T.DOUBLE,
        T.DECIMAL,
        T.DOUBLE,
        T.REAL,
        T.TINYINT,
        T.TINYINT,
    ]
    # ROUND is half away from zero
    assert rows == [
        [
            5,
            Decimal("2.5"),
            3.0,
            Decimal("2"),
            Decimal("3"),
            Decimal("-3"),
            Decimal("-2"),
            Decimal("3"),
            Decimal("-3"),
            Decimal("2.35"),
            3.0,
            Decimal("2.7"),
            2.0,
            3.0,
            5,
            7,
        ]
    ]
    cols, rows = query(
        sql_client, "SELECT POWER(2, 10), POWER(2.5, 2), SQRT(16), EXP(0), LN(1), LOG10(100), SIGN(-3), SIGN(2.5)"
    )
    assert [t for _, t in cols] == [T.DOUBLE] * 6 + [T.TINYINT, T.DECIMAL]
    assert rows == [[1024.0, 6.25, 4.0, 1.0, 0.0, 2.0, -1, Decimal("1")]]


def test_abs_and_arithmetic_on_null(sql_client):
    cols, rows = query(sql_client, "SELECT ABS(CAST(NULL AS INT)), 1 + NULL, CAST(NULL AS INT) + 1, NULL")
    assert [t for _, t in cols] == [T.BIGINT, T.TINYINT, T.BIGINT, T.NULL]
    assert rows == [[None, None, None, None]]


def test_boolean_logic_with_null(sql_client):
    cols, rows = query(
        sql_client, "SELECT NULL = NULL, NULL IS NULL, 1 = 1, 1 < 2 AND NULL, 1 > 2 AND NULL, 1 < 2 OR NULL, NOT TRUE"
    )
    assert [t for _, t in cols] == [T.BOOLEAN] * 7
    assert rows == [[None, True, True, None, False, True, False]]


def test_case_coalesce_nullif(sql_client, people):
    cols, rows = query(
        sql_client,
        "SELECT __key, CASE WHEN age < 30 THEN 'young' WHEN age >= 30 THEN 'old' ELSE 'unknown' END AS c, "
        "CASE dept WHEN 'eng' THEN 1 WHEN 'ops' THEN 2 END AS d, COALESCE(dept, 'none') AS e, "
        "COALESCE(age, salary, 0) AS f, NULLIF(dept, 'eng') AS g FROM %s ORDER BY __key" % people,
    )
    assert cols == [
        ("__key", T.INTEGER),
        ("c", T.VARCHAR),
        ("d", T.TINYINT),
        ("e", T.VARCHAR),
        ("f", T.BIGINT),
        ("g", T.VARCHAR),
    ]
    assert rows == [
        [1, "old", 1, "eng", 30, None],
        [2, "young", 1, "eng", 25, None],
        [3, "old", 2, "ops", 35, "ops"],
        [4, "unknown", 2, "ops", 70, "ops"],
        [5, "young", None, "none", 28, None],
        [6, "old", 1, "eng", 40, None],
    ]


def test_json_value_and_json_query(sql_client, names):
    name = names()
    assert (
        update(sql_client, "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json')" % name) == 0
    )
    m = sql_client.get_map(name).blocking()
    m.put(1, HazelcastJsonValue('{"name": "ann", "age": 30, "tags": ["a", "b"], "addr": {"city": "X"}}'))
    m.put(2, HazelcastJsonValue('{"name": "bob", "age": 41}'))
    cols, rows = query(
        sql_client,
        "SELECT __key, JSON_VALUE(this, '$.name') AS n, JSON_VALUE(this, '$.age' RETURNING INT) AS a, "
        "JSON_VALUE(this, '$.age' RETURNING BIGINT) AS b, JSON_VALUE(this, '$.age' RETURNING DOUBLE) AS c, "
        "JSON_VALUE(this, '$.addr.city') AS city, JSON_VALUE(this, '$.missing') AS mi, "
        "JSON_QUERY(this, '$.addr') AS addr, JSON_QUERY(this, '$.tags' WITH WRAPPER) AS tags "
        "FROM %s ORDER BY __key" % name,
    )
    assert cols == [
        ("__key", T.INTEGER),
        ("n", T.VARCHAR),
        ("a", T.INTEGER),
        ("b", T.BIGINT),
        ("c", T.DOUBLE),
        ("city", T.VARCHAR),
        ("mi", T.VARCHAR),
        ("addr", T.JSON),
        ("tags", T.JSON),
    ]
    # JSON_QUERY answers compact JSON text; surprising: WITH WRAPPER of an array is the array
    # itself, not wrapped once more
    assert [[v.to_string() if isinstance(v, HazelcastJsonValue) else v for v in row] for row in rows] == [
        [1, "ann", 30, 30, 30.0, "X", None, '{"city":"X"}', '["a","b"]'],
        [2, "bob", 41, 41, 41.0, None, None, None, None],
    ]
    assert keys(sql_client, "SELECT __key FROM %s WHERE JSON_VALUE(this, '$.age' RETURNING INT) > 35" % name) == [2]
    cols, rows = query(sql_client, "SELECT JSON_OBJECT('a': 1, 'b': 'x'), JSON_ARRAY(1, 'a')")
    assert [t for _, t in cols] == [T.JSON, T.JSON]
    assert [v.to_string() for v in rows[0]] == ['{"a":1,"b":"x"}', '[1,"a"]']


def test_json_query_of_an_array_without_wrapper_is_an_error(sql_client, names):
    name = names()
    assert (
        update(sql_client, "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json')" % name) == 0
    )
    sql_client.get_map(name).blocking().put(1, HazelcastJsonValue('{"tags": ["a", "b"]}'))
    # surprising: an array value needs WITH WRAPPER; the error has code GENERIC even in a scan
    error = sql_error(sql_client, "SELECT JSON_QUERY(this, '$.tags') FROM %s" % name)
    assert code(error) == SqlErrorCode.GENERIC
    assert str(error).endswith("com.hazelcast.sql.impl.QueryException: JSON_QUERY evaluated to multiple values")


def create_departments(client, name):
    sql = (
        "CREATE MAPPING %s (__key VARCHAR, title VARCHAR, lvl INT) TYPE IMap "
        "OPTIONS ('keyFormat'='varchar', 'valueFormat'='json-flat')" % name
    )
    assert update(client, sql) == 0
    sql = "SINK INTO %s VALUES ('eng', 'Engineering', 3), ('ops', 'Operations', 1), ('hr', 'Human', 2)" % name
    assert update(client, sql) == 0
    return name


def test_inner_join(sql_client, people, names):
    dept = create_departments(sql_client, names("dept_"))
    cols, rows = query(
        sql_client,
        "SELECT p.__key, p.name, d.title FROM %s p JOIN %s d ON p.dept = d.__key ORDER BY p.__key" % (people, dept),
    )
    assert cols == [("__key", T.INTEGER), ("name", T.VARCHAR), ("title", T.VARCHAR)]
    assert rows == [
        [1, "Alice", "Engineering"],
        [2, "Bob", "Engineering"],
        [3, "Carol", "Operations"],
        [4, "Dan", "Operations"],
        [6, "al_x%", "Engineering"],
    ]
    sql = "SELECT p.__key FROM %s p INNER JOIN %s d ON p.dept = d.__key WHERE d.lvl > 1 ORDER BY p.__key" % (
        people,
        dept,
    )
    assert keys(sql_client, sql) == [1, 2, 6]
    # SELECT * of a join: the second __key becomes __key0
    cols, rows = query(
        sql_client, "SELECT * FROM %s p JOIN %s d ON p.dept = d.__key WHERE p.__key = 1" % (people, dept)
    )
    assert cols == PEOPLE_COLUMNS + [("__key0", T.VARCHAR), ("title", T.VARCHAR), ("lvl", T.INTEGER)]
    assert rows == [PEOPLE[0] + ["eng", "Engineering", 3]]


def test_left_join_and_group_by_over_a_join(sql_client, people, names):
    dept = create_departments(sql_client, names("dept_"))
    cols, rows = query(
        sql_client,
        "SELECT p.__key, d.title FROM %s p LEFT JOIN %s d ON p.dept = d.__key ORDER BY p.__key" % (people, dept),
    )
    assert cols == [("__key", T.INTEGER), ("title", T.VARCHAR)]
    assert rows == [
        [1, "Engineering"],
        [2, "Engineering"],
        [3, "Operations"],
        [4, "Operations"],
        [5, None],
        [6, "Engineering"],
    ]
    cols, rows = query(
        sql_client,
        "SELECT d.__key, COUNT(p.__key) FROM %s d LEFT JOIN %s p ON p.dept = d.__key GROUP BY d.__key ORDER BY d.__key"
        % (dept, people),
    )
    assert cols == [("__key", T.VARCHAR), ("EXPR$1", T.BIGINT)]
    assert rows == [["eng", 3], ["hr", 0], ["ops", 2]]
    assert query(sql_client, "SELECT COUNT(*) FROM %s CROSS JOIN %s" % (people, dept))[1] == [[18]]


def test_an_equi_join_with_where_terms_on_each_side(sql_client, names):
    """Joins on equal columns (a hash join in ferrogrid) with WHERE terms on one side or the
    other (which filter that side before the join where that is the same), an anti-join by a
    LEFT join's missing right side, and a join on text grouped: the rows a nested loop over
    every pair gives (computed here)."""
    a, b = names("a_"), names("b_")
    for name in (a, b):
        ddl = ("CREATE MAPPING %s (__key INT, k INT, v INT, s VARCHAR) TYPE IMap "
               "OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')")
        assert update(sql_client, ddl % name) == 0
    rows_a = {i: {"k": i % 50, "v": i, "s": "s%d" % (i % 7)} for i in range(1000)}
    rows_b = {j: {"k": j % 70 if j % 13 else None, "v": 1000 - j, "s": "s%d" % (j % 5)} for j in range(1000)}
    sql_client.get_map(a).blocking().put_all({i: HazelcastJsonValue(json.dumps(r)) for i, r in rows_a.items()})
    sql_client.get_map(b).blocking().put_all({j: HazelcastJsonValue(json.dumps(r)) for j, r in rows_b.items()})

    sql = ("SELECT x.__key, y.__key FROM %s x JOIN %s y ON x.k = y.k WHERE x.v < 100 AND y.v <= 100 "
           "ORDER BY x.__key, y.__key" % (a, b))
    expected = sorted([i, j] for i, x in rows_a.items() for j, y in rows_b.items()
                      if x["k"] == y["k"] and x["v"] < 100 and y["v"] <= 100)
    assert expected and query(sql_client, sql)[1] == expected

    sql = ("SELECT x.__key FROM %s x LEFT JOIN %s y ON x.k = y.k AND y.v > 950 "
           "WHERE y.__key IS NULL AND x.v < 300 ORDER BY x.__key" % (a, b))
    matched = {y["k"] for y in rows_b.values() if y["v"] > 950 and y["k"] is not None}
    expected = [i for i, x in sorted(rows_a.items()) if x["v"] < 300 and x["k"] not in matched]
    assert expected and keys(sql_client, sql) == expected

    sql = ("SELECT x.s, COUNT(*), SUM(y.v) FROM %s x JOIN %s y ON y.s = x.s AND x.k = y.k "
           "WHERE x.v >= 500 GROUP BY x.s ORDER BY x.s" % (a, b))
    groups = {}
    for x in rows_a.values():
        for y in rows_b.values():
            if x["s"] == y["s"] and x["k"] == y["k"] and x["v"] >= 500:
                count, total = groups.get(x["s"], (0, 0))
                groups[x["s"]] = (count + 1, total + y["v"])
    expected = [[s, count, total] for s, (count, total) in sorted(groups.items())]
    assert expected and query(sql_client, sql)[1] == expected


def test_union(sql_client, people, names):
    dept = create_departments(sql_client, names("dept_"))
    cols, rows = query(sql_client, "SELECT CAST(__key AS VARCHAR) FROM %s UNION SELECT __key FROM %s" % (people, dept))
    assert cols == [("EXPR$0", T.VARCHAR)]
    assert sorted(r[0] for r in rows) == ["1", "2", "3", "4", "5", "6", "eng", "hr", "ops"]
    cols, rows = query(sql_client, "SELECT dept FROM %s UNION ALL SELECT __key FROM %s" % (people, dept))
    assert cols == [("dept", T.VARCHAR)]
    assert sort_rows(rows) == [[None], ["eng"], ["eng"], ["eng"], ["eng"], ["hr"], ["ops"], ["ops"], ["ops"]]


def test_parameters_of_several_types(sql_client, people):
    assert query(sql_client, "SELECT * FROM %s WHERE __key = ?" % people, 2)[1] == [PEOPLE[1]]
    assert keys(sql_client, "SELECT __key FROM %s WHERE name = ? AND age > ? ORDER BY __key" % people, "Alice", 10) == [
        1
    ]
    assert keys(sql_client, "SELECT __key FROM %s WHERE rate > ? ORDER BY __key" % people, 1.0) == [1, 2, 5]
    assert keys(sql_client, "SELECT __key FROM %s WHERE (age > 26) = ? ORDER BY __key" % people, True) == [1, 3, 5, 6]
    assert keys(sql_client, "SELECT __key FROM %s WHERE age = ?" % people, None) == []  # = NULL is never true
    assert keys(sql_client, "SELECT __key FROM %s WHERE salary = ?" % people, 90) == [3]  # INTEGER vs BIGINT
    assert keys(sql_client, "SELECT __key FROM %s WHERE rate = ?" % people, Decimal("0.5")) == [4]
    cols, rows = query(sql_client, "SELECT ? || 'x', CAST(? AS INT) + 1, CAST(? AS DOUBLE) * 2, ? + 1", "a", 5, 1.5, 1)
    # a parameter's type is inferred from its context (? + 1: BIGINT)
    assert cols == [("EXPR$0", T.VARCHAR), ("EXPR$1", T.BIGINT), ("EXPR$2", T.DOUBLE), ("EXPR$3", T.BIGINT)]
    assert rows == [["ax", 6, 3.0, 2]]


def test_parameter_of_the_wrong_type(sql_client, people):
    prefix = "SELECT __key FROM %s WHERE age = " % people
    for value, found in (("30", "VARCHAR"), (30.5, "DOUBLE")):
        error = sql_error(sql_client, prefix + "?", value)
        assert (code(error), str(error)) == (
            SqlErrorCode.DATA_EXCEPTION,
            "At line 1, column %d: Parameter at position 0 must be of INTEGER type, but %s was found "
            "(consider adding an explicit CAST)" % (len(prefix) + 1, found),
        )
    prefix = "SELECT __key FROM %s WHERE name = " % people
    error = sql_error(sql_client, prefix + "?", 30)
    assert (code(error), str(error)) == (
        SqlErrorCode.DATA_EXCEPTION,
        "At line 1, column %d: Parameter at position 0 must be of VARCHAR type, but INTEGER was found "
        "(consider adding an explicit CAST)" % (len(prefix) + 1),
    )


def test_select_without_from_and_table_functions(sql_client):
    assert query(sql_client, "SELECT 1") == ([("EXPR$0", T.TINYINT)], [[1]])
    assert query(sql_client, "SELECT * FROM TABLE(generate_series(1, 3))") == ([("v", T.INTEGER)], [[1], [2], [3]])
    sql = "SELECT v * 10 AS t FROM TABLE(generate_series(1, 3)) ORDER BY v DESC"
    assert query(sql_client, sql) == ([("t", T.BIGINT)], [[30], [20], [10]])


def test_explain(sql_client, people):
    cols, rows = query(sql_client, "EXPLAIN SELECT * FROM %s" % people)
    assert cols == [("rel", T.VARCHAR)]
    assert len(rows) == 1 and people in rows[0][0]


def test_explain_shows_where_a_query_reads_and_aggregates(sql_client, names):
    """EXPLAIN's steps, one row each, indented by depth: every entry read, an index read, the
    key looked up; a GROUP BY accumulated where the data is and combined (Hazelcast's step
    names; the attributes differ)."""
    name = names()
    trades = sql_client.get_map(name).blocking()
    trades.put_all({i: HazelcastJsonValue({"symbol": "S%d" % (i % 3), "qty": i, "price": float(i)}) for i in range(100)})
    trades.add_index(attributes=["qty"], index_type=IndexType.HASH)
    trades.add_index(attributes=["price"], index_type=IndexType.SORTED)
    ddl = ("CREATE MAPPING %s (__key INT, symbol VARCHAR, qty INT, price DOUBLE) TYPE IMap "
           "OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')")
    assert update(sql_client, ddl % name) == 0

    def steps(statement):
        rows = query(sql_client, "EXPLAIN " + statement % name)[1]
        return [(len(rel) - len(rel.lstrip(" ")), rel.strip().split("(")[0]) for [rel] in rows]

    assert steps("SELECT * FROM %s") == [(0, "FullScanPhysicalRel")]
    assert steps("SELECT symbol, COUNT(*), SUM(qty) FROM %s GROUP BY symbol") == [
        (0, "AggregateCombineByKeyPhysicalRel"),
        (2, "AggregateAccumulateByKeyPhysicalRel"),
        (4, "FullScanPhysicalRel"),
    ]
    assert steps("SELECT COUNT(*) FROM %s WHERE qty = 5") == [
        (0, "AggregateCombinePhysicalRel"),
        (2, "AggregateAccumulatePhysicalRel"),
        (4, "IndexScanMapPhysicalRel"),
    ]
    assert steps("SELECT __key FROM %s WHERE price BETWEEN 1 AND 5") == [(0, "IndexScanMapPhysicalRel")]
    assert steps("SELECT __key FROM %s WHERE __key = 3") == [(0, "SelectByKeyMapPhysicalRel")]
    index = query(sql_client, "EXPLAIN SELECT COUNT(*) FROM %s WHERE qty = 5" % name)[1][2][0]
    assert "index=[%s_hash_qty]" % name in index, index


def test_composite_indexes_serve_equalities_on_all_or_the_first_attributes(sql_client, names):
    """A HASH composite index serves an equality (or IN) on each of its attributes, a SORTED one
    on its first ones too (Hazelcast's use of them, shown by EXPLAIN); predicates and SQL
    answer what a scan does."""
    name = names()
    emp = sql_client.get_map(name).blocking()
    docs = {i: {"dept": i % 4, "level": i % 5} for i in range(100)}
    emp.put_all({i: HazelcastJsonValue(json.dumps(doc)) for i, doc in docs.items()})
    emp.add_index(attributes=["dept", "level"], index_type=IndexType.HASH)
    emp.add_index(attributes=["level", "dept"], index_type=IndexType.SORTED)
    docs[200] = {"dept": 1, "level": 3}  # filed by a put once the indexes exist
    emp.put(200, HazelcastJsonValue(json.dumps(docs[200])))
    ddl = ("CREATE MAPPING %s (__key INT, dept INT, level INT) TYPE IMap "
           "OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')")
    assert update(sql_client, ddl % name) == 0

    def expect(test):
        return sorted(k for k, doc in docs.items() if test(doc["dept"], doc["level"]))

    both = p.and_(p.equal("dept", 1), p.equal("level", 3))
    assert sorted(emp.key_set(both)) == expect(lambda d, l: d == 1 and l == 3)
    assert sorted(emp.key_set(p.and_(p.in_("dept", 0, 2), p.equal("level", 4)))) == expect(
        lambda d, l: d in (0, 2) and l == 4)
    assert sorted(emp.key_set(p.equal("level", 2))) == expect(lambda d, l: l == 2)
    assert sorted(emp.key_set(p.equal("dept", 2))) == expect(lambda d, l: d == 2)

    def used(where):
        [[step]] = query(sql_client, "EXPLAIN SELECT __key FROM %s WHERE %s" % (name, where))[1]
        index = re.search(r"index=\[([^\]]*)\]", step)
        return step.split("(")[0], index and index.group(1)

    assert used("dept = 1 AND level = 3") == ("IndexScanMapPhysicalRel", "%s_hash_dept_level" % name)
    assert used("level = 3") == ("IndexScanMapPhysicalRel", "%s_sorted_level_dept" % name)
    assert used("dept = 1") == ("FullScanPhysicalRel", None)
    assert sorted(keys(sql_client, "SELECT __key FROM %s WHERE dept = 1 AND level = 3" % name)) == expect(
        lambda d, l: d == 1 and l == 3)
    assert sorted(keys(sql_client, "SELECT __key FROM %s WHERE level = 0" % name)) == expect(lambda d, l: l == 0)


# --------------------------------------------------------------------------- DML


def test_insert_single_and_multi_row(sql_client, names):
    name = names()
    sql = "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')" % name
    assert update(sql_client, sql) == 0
    # surprising: the update count of every DML statement is 0, not the number of rows
    assert update(sql_client, "INSERT INTO %s VALUES (1, 'a')" % name) == 0
    assert update(sql_client, "INSERT INTO %s VALUES (2, 'b'), (3, 'c')" % name) == 0
    assert update(sql_client, "INSERT INTO %s (__key, this) VALUES (?, ?)" % name, 4, "d") == 0
    assert update(sql_client, "INSERT INTO %s (this, __key) VALUES ('e', 5)" % name) == 0
    m = sql_client.get_map(name).blocking()
    assert dict(m.entry_set()) == {1: "a", 2: "b", 3: "c", 4: "d", 5: "e"}
    # INSERT of an existing key is refused (the other rows of the statement are not undone)
    error = sql_error(sql_client, "INSERT INTO %s VALUES (1, 'z')" % name)
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "Duplicate key")
    assert m.get(1) == "a"
    # NULL `this` is refused
    error = sql_error(sql_client, "INSERT INTO %s (__key, this) VALUES (6, NULL)" % name)
    assert (code(error), str(error)) == (
        SqlErrorCode.GENERIC,
        "Cannot write NULL to 'this' field. Note that NULL is used also if your INSERT/SINK command doesn't write to "
        "'this' at all.",
    )
    assert m.contains_key(6) is False


def test_insert_from_select(sql_client, people, names):
    name = names()
    sql = (
        "CREATE MAPPING %s (__key INT, this VARCHAR) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')"
        % name
    )
    assert update(sql_client, sql) == 0
    assert update(sql_client, "INSERT INTO %s SELECT __key, name FROM %s WHERE age > 29" % (name, people)) == 0
    assert dict(sql_client.get_map(name).blocking().entry_set()) == {1: "Alice", 3: "Carol", 6: "al_x%"}


def test_insert_errors(sql_client, people):
    error = sql_error(sql_client, "INSERT INTO %s VALUES (99, 'x')" % people)
    # the position is the table name's ("At line 1, column 13: ..." for a one-letter name)
    assert (code(error), str(error)) == (
        SqlErrorCode.PARSING,
        "From line 1, column 13 to line 1, column %d: Number of INSERT target columns (6) does not equal "
        "number of source items (2)" % (12 + len(people)),
    )
    sql = "INSERT INTO %s (__key, name, age) VALUES (99, 'x', 'notanint')" % people
    error = sql_error(sql_client, sql)
    start = sql.index("age") + 1  # the position of the target column (UPDATE: of the value)
    assert (code(error), str(error)) == (
        SqlErrorCode.PARSING,
        "From line 1, column %d to line 1, column %d: Cannot assign to target field 'age' of type INTEGER "
        "from source field 'EXPR$2' of type VARCHAR" % (start, start + 2),
    )


def test_insert_with_missing_columns_writes_nulls(sql_client, people):
    assert update(sql_client, "INSERT INTO %s (__key, name) VALUES (7, 'x')" % people) == 0
    value = sql_client.get_map(people).blocking().get(7)
    assert value.to_string() == '{"name":"x","age":null,"dept":null,"salary":null,"rate":null}'


def test_sink_into_overwrites(sql_client, names):
    name = names()
    sql = "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')" % name
    assert update(sql_client, sql) == 0
    m = sql_client.get_map(name).blocking()
    m.put(1, "old")
    assert update(sql_client, "SINK INTO %s VALUES (1, 'new'), (2, 'two')" % name) == 0
    assert update(sql_client, "SINK INTO %s (__key, this) VALUES (?, ?)" % name, 3, "three") == 0
    assert dict(m.entry_set()) == {1: "new", 2: "two", 3: "three"}


def test_update(sql_client, people):
    m = sql_client.get_map(people).blocking()
    sql = "UPDATE %s SET age = age + 1, name = UPPER(name) WHERE __key = ?" % people
    assert update(sql_client, sql, 1) == 0
    assert m.get(1).to_string() == '{"name":"ALICE","age":31,"dept":"eng","salary":100,"rate":1.5}'
    assert update(sql_client, "UPDATE %s SET salary = ? WHERE __key = 2" % people, 81) == 0
    assert as_json(m.get(2))["salary"] == 81
    assert update(sql_client, "UPDATE %s SET rate = 0.0 WHERE dept = 'ops'" % people) == 0
    assert [as_json(m.get(k))["rate"] for k in (3, 4)] == [0.0, 0.0]
    assert update(sql_client, "UPDATE %s SET dept = NULL WHERE age > 35" % people) == 0
    assert as_json(m.get(6))["dept"] is None
    # no row matches: still 0
    assert update(sql_client, "UPDATE %s SET age = 1 WHERE __key = 12345" % people) == 0
    assert m.size() == 6
    error = sql_error(sql_client, "UPDATE %s SET __key = 100 WHERE __key = 2" % people)
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "Cannot update '__key'")
    sql = "UPDATE %s SET age = 'x' WHERE __key = 1" % people
    error = sql_error(sql_client, sql)
    start = sql.index("'x'") + 1
    assert (code(error), str(error)) == (
        SqlErrorCode.PARSING,
        "From line 1, column %d to line 1, column %d: Cannot assign to target field 'age' of type INTEGER "
        "from source field 'EXPR$0' of type VARCHAR" % (start, start + 2),
    )


def test_update_of_this(sql_client, names):
    name = names()
    sql = "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='bigint')" % name
    assert update(sql_client, sql) == 0
    m = sql_client.get_map(name).blocking()
    assert update(sql_client, "INSERT INTO %s VALUES (1, 10), (2, 20), (3, 30)" % name) == 0
    assert update(sql_client, "UPDATE %s SET this = this * 2 WHERE this >= 20" % name) == 0
    assert dict(m.entry_set()) == {1: 10, 2: 40, 3: 60}


def test_delete(sql_client, people):
    m = sql_client.get_map(people).blocking()
    assert update(sql_client, "DELETE FROM %s WHERE __key = 2" % people) == 0
    assert m.get(2) is None
    assert update(sql_client, "DELETE FROM %s WHERE dept = 'ops'" % people) == 0
    assert sorted(m.key_set()) == [1, 5, 6]
    # nothing matches: still 0
    assert update(sql_client, "DELETE FROM %s WHERE age > 1000" % people) == 0
    assert update(sql_client, "DELETE FROM %s WHERE __key = 12345" % people) == 0
    assert update(sql_client, "DELETE FROM %s" % people) == 0
    assert m.size() == 0


# --------------------------------------------------------------------------- errors


def test_parse_error(sql_client, names):
    error = sql_error(sql_client, "SELECT * FROM")
    assert code(error) == SqlErrorCode.PARSING
    text = str(error)
    assert text.startswith('Encountered "<EOF>" at line 1, column 13.\nWas expecting one of:\n'), text
    assert '    "TABLE" ...\n' in text
    error = sql_error(sql_client, "SELECT __key FROM %s WHERE" % names())
    assert code(error) == SqlErrorCode.PARSING
    assert str(error).startswith('Encountered "<EOF>" at line 1, column ')
    error = sql_error(sql_client, "SELECT 1 FROM x\nWHERE ) 2")
    assert code(error) == SqlErrorCode.PARSING
    assert str(error).startswith('Encountered ")" at line 2, column 7.\n')
    # a misspelt keyword is not an "Encountered" error
    error = sql_error(sql_client, "SELEC 1")
    assert (code(error), str(error)) == (SqlErrorCode.PARSING, "Non-query expression encountered in illegal context")


def test_reserved_word_as_column_name_is_a_parse_error(sql_client, names):
    sql = (
        "CREATE MAPPING %s (__key INT, floor INT) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')"
        % names()
    )
    error = sql_error(sql_client, sql)
    assert code(error) == SqlErrorCode.PARSING
    assert str(error).startswith('Encountered "floor" at line 1, column %d.\n' % (sql.index("floor") + 1))


def test_missing_mapping(sql_client, names):
    name = names()
    error = sql_error(sql_client, "SELECT * FROM %s" % name)
    assert (code(error), str(error), error.suggestion) == (
        SqlErrorCode.OBJECT_NOT_FOUND,
        "Object '%s' not found, did you forget to CREATE MAPPING?" % name,
        None,
    )
    for sql in ("INSERT INTO %s VALUES (1, 1)", "DELETE FROM %s WHERE __key = 1", "UPDATE %s SET this = 1"):
        error = sql_error(sql_client, sql % name)
        assert (code(error), str(error)) == (
            SqlErrorCode.OBJECT_NOT_FOUND,
            "Object '%s' not found, did you forget to CREATE MAPPING?" % name,
        )


def test_type_errors(sql_client, people):
    cases = [
        (
            "SELECT 'a' + 1",
            "From line 1, column 8 to line 1, column 14: Cannot apply '+' operator to [VARCHAR, TINYINT] (consider adding an explicit CAST)",
        ),
        (
            "SELECT name + 1 FROM {}",
            "From line 1, column 8 to line 1, column 15: Cannot apply '+' operator to [VARCHAR, TINYINT] (consider adding an explicit CAST)",
        ),
        (
            "SELECT UPPER(age) FROM {}",
            "From line 1, column 8 to line 1, column 17: Cannot apply 'UPPER' function to [INTEGER] (consider adding an explicit CAST)",
        ),
        (
            "SELECT SUM(name) FROM {}",
            "From line 1, column 8 to line 1, column 16: Cannot apply 'SUM' function to [VARCHAR] (consider adding an explicit CAST)",
        ),
        (
            "SELECT nosuchcol FROM {}",
            "From line 1, column 8 to line 1, column 16: Column 'nosuchcol' not found in any table",
        ),
        (
            "SELECT name, COUNT(*) FROM {}",
            "From line 1, column 8 to line 1, column 11: Expression 'name' is not being grouped",
        ),
    ]
    for sql, message in cases:
        error = sql_error(sql_client, sql.format(people))
        assert (code(error), str(error)) == (SqlErrorCode.PARSING, message), sql
    # a comparison of INTEGER with a string literal is not coerced
    sql = "SELECT name FROM %s WHERE age = '30'" % people
    error = sql_error(sql_client, sql)
    start = sql.index("age") + 1
    assert (code(error), str(error)) == (
        SqlErrorCode.PARSING,
        "From line 1, column %d to line 1, column %d: Cannot apply '=' operator to [INTEGER, VARCHAR] "
        "(consider adding an explicit CAST)" % (start, start + 9),
    )
    error = sql_error(sql_client, "SELECT p.nosuchcol FROM %s p" % people)
    assert (code(error), str(error)) == (
        SqlErrorCode.PARSING,
        "From line 1, column 10 to line 1, column 18: Column 'nosuchcol' not found in table 'p'",
    )


def test_wrong_parameter_count(sql_client, people):
    sql = "SELECT __key FROM %s WHERE age = ?" % people
    for params, got in (((), 0), ((1, 2), 2)):
        error = sql_error(sql_client, sql, *params)
        assert (code(error), str(error)) == (
            SqlErrorCode.DATA_EXCEPTION,
            "Unexpected parameter count: expected 1, got %d" % got,
        )
    error = sql_error(sql_client, "SELECT 1", 2)
    assert (code(error), str(error)) == (SqlErrorCode.DATA_EXCEPTION, "Unexpected parameter count: expected 0, got 1")
    # a parameter whose type cannot be inferred
    error = sql_error(sql_client, "SELECT ?", 1)
    assert (code(error), str(error)) == (SqlErrorCode.PARSING, "At line 1, column 8: Illegal use of dynamic parameter")


def test_unsupported_constructs(sql_client, people):
    cases = [
        (
            "SELECT name FROM {0} WHERE __key IN (SELECT __key FROM {0} WHERE age > 30)",
            "Sub-queries are not supported for IN operator.",
        ),
        ("SELECT __key FROM {} WHERE age IS NOT DISTINCT FROM 1", "IS NOT DISTINCT FROM not supported"),
    ]
    for sql, message in cases:
        error = sql_error(sql_client, sql.format(people))
        assert code(error) == SqlErrorCode.PARSING
        assert re.fullmatch(r"From line 1, column \d+ to line 1, column \d+: " + re.escape(message), str(error)), str(
            error
        )


def test_expected_result_type_mismatch(sql_client, people):
    error = sql_error(sql_client, "SELECT * FROM %s" % people, expected_result_type=SqlExpectedResultType.UPDATE_COUNT)
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "The statement doesn't produce update count")
    error = sql_error(
        sql_client,
        "INSERT INTO %s (__key, name) VALUES (97, 'x')" % people,
        expected_result_type=SqlExpectedResultType.ROWS,
    )
    assert (code(error), str(error)) == (SqlErrorCode.GENERIC, "The statement doesn't produce rows")
    assert sql_client.get_map(people).blocking().contains_key(97) is False
    sql = "SELECT __key FROM %s WHERE __key = 1" % people
    assert query(sql_client, sql, expected_result_type=SqlExpectedResultType.ROWS)[1] == [[1]]
    sql = "DELETE FROM %s WHERE __key = 1" % people
    assert update(sql_client, sql, expected_result_type=SqlExpectedResultType.UPDATE_COUNT) == 0


# --------------------------------------------------------------------------- paging


@pytest.fixture
def big_map(sql_client, names):
    name = names()
    sql = "CREATE MAPPING %s TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='int')" % name
    assert update(sql_client, sql) == 0
    m = sql_client.get_map(name).blocking()
    for start in range(0, 10_000, 2_500):
        m.put_all({i: i * 2 for i in range(start, start + 2_500)})
    return name


def test_result_larger_than_the_cursor_buffer(sql_client, big_map):
    with execute(sql_client, "SELECT __key, this FROM %s" % big_map, cursor_buffer_size=100) as result:
        rows = [(row[0], row[1]) for row in result]
    assert len(rows) == 10_000
    assert sorted(rows) == [(i, i * 2) for i in range(10_000)]
    cols, rows = query(sql_client, "SELECT __key FROM %s ORDER BY __key DESC" % big_map, cursor_buffer_size=7)
    assert [r[0] for r in rows] == list(range(9_999, -1, -1))
    assert query(sql_client, "SELECT COUNT(*), SUM(this) FROM %s" % big_map)[1] == [[10_000, 99_990_000]]


def test_closing_a_result_early(sql_client, big_map):
    result = execute(sql_client, "SELECT __key FROM %s" % big_map, cursor_buffer_size=100)
    it = iter(result)
    first = [next(it)[0] for _ in range(5)]
    assert len(set(first)) == 5 and all(0 <= k < 10_000 for k in first)
    assert result.close().result() is None
    result.close().result()  # a second close is fine
    # the member still serves, the map is untouched
    assert query(sql_client, "SELECT COUNT(*) FROM %s" % big_map)[1] == [[10_000]]
    # closing through `with` after one row
    for _ in range(3):
        with execute(sql_client, "SELECT __key FROM %s" % big_map, cursor_buffer_size=50) as result:
            assert next(iter(result))[0] in range(10_000)
    assert query(sql_client, "SELECT __key FROM %s WHERE __key = 42" % big_map)[1] == [[42]]


def test_many_queries_one_after_another(sql_client, people):
    for i in range(1, 7):
        assert query(sql_client, "SELECT name FROM %s WHERE __key = ?" % people, i)[1] == [[PEOPLE[i - 1][1]]]
