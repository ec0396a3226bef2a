"""Queries over map values the member reads: predicates (factory -20, and the text of sql(...)),
paging, aggregations (-29), projections (-30), indexes and entry listeners with a predicate,
as a user of the Python client sees them. Runs against ferrogrid and against a real Hazelcast
5.6.0 member, with smart and unisocket routing; every expected answer is computed here from the
data the test wrote, and Hazelcast gives the same.

Values: Compact employees (string, int32, int64, float64, boolean, nullable int32, an array of
strings, a nested Compact address), HazelcastJsonValue documents, and plain ints and strings.
"""

import threading

import pytest
from hazelcast import predicate as p
from hazelcast import aggregator as agg
from hazelcast import projection as proj
from hazelcast.config import IndexType
from hazelcast.core import HazelcastJsonValue
from hazelcast.errors import HazelcastError
from hazelcast.serialization.api import CompactReader, CompactSerializer, CompactWriter

from helpers import destroy_after, wait_until


class Address:
    def __init__(self, city, zip_code):
        self.city, self.zip_code = city, zip_code

    def __eq__(self, other):
        return isinstance(other, Address) and vars(self) == vars(other)


class Employee:
    def __init__(self, name, age, salary, active, dept, bonus, tags, address):
        self.name, self.age, self.salary, self.active = name, age, salary, active
        self.dept, self.bonus, self.tags, self.address = dept, bonus, tags, address

    def __eq__(self, other):
        return isinstance(other, Employee) and vars(self) == vars(other)

    def __repr__(self):
        return "Employee(%s)" % self.name


class AddressSerializer(CompactSerializer[Address]):
    def read(self, reader: CompactReader) -> Address:
        return Address(reader.read_string("city"), reader.read_int32("zip"))

    def write(self, writer: CompactWriter, obj: Address) -> None:
        writer.write_string("city", obj.city)
        writer.write_int32("zip", obj.zip_code)

    def get_type_name(self) -> str:
        return "ferrogrid.query.Address"

    def get_class(self):
        return Address


class EmployeeSerializer(CompactSerializer[Employee]):
    def read(self, reader: CompactReader) -> Employee:
        return Employee(
            reader.read_string("name"),
            reader.read_int32("age"),
            reader.read_int64("salary"),
            reader.read_boolean("active"),
            reader.read_string("dept"),
            reader.read_nullable_int32("bonus"),
            reader.read_array_of_string("tags"),
            reader.read_compact("address"),
        )

    def write(self, writer: CompactWriter, obj: Employee) -> None:
        writer.write_string("name", obj.name)
        writer.write_int32("age", obj.age)
        writer.write_int64("salary", obj.salary)
        writer.write_boolean("active", obj.active)
        writer.write_string("dept", obj.dept)
        writer.write_nullable_int32("bonus", obj.bonus)
        writer.write_array_of_string("tags", obj.tags)
        writer.write_compact("address", obj.address)

    def get_type_name(self) -> str:
        return "ferrogrid.query.Employee"

    def get_class(self):
        return Employee


DEPTS = ["eng", "ops", "sales", "Eng"]
CITIES = ["Ankara", "Berlin", "Lisbon"]


def employee(i):
    return Employee(
        name="emp-%03d" % i,
        age=20 + i % 40,
        salary=1000 * (i % 17) + i,
        active=i % 3 != 0,
        dept=DEPTS[i % 4],
        bonus=None if i % 5 == 0 else i % 7,
        tags=["t%d" % (i % 3), "x%d" % (i % 2)],
        address=Address(CITIES[i % 3], 1000 + i % 10),
    )


COUNT = 120
EMPLOYEES = {"k%03d" % i: employee(i) for i in range(COUNT)}


@pytest.fixture
def employees(client_factory, map_name):
    client = client_factory(compact_serializers=[EmployeeSerializer(), AddressSerializer()])
    m = client.get_map(map_name).blocking()
    m.put_all(EMPLOYEES)
    yield from destroy_after(m)


def keys_where(condition):
    return sorted(k for k, e in EMPLOYEES.items() if condition(e))


def assert_keys(m, predicate, condition):
    expected = keys_where(condition)
    assert sorted(m.key_set(predicate)) == expected
    assert sorted(e.name for e in m.values(predicate)) == sorted(EMPLOYEES[k].name for k in expected)
    assert sorted(k for k, _ in m.entry_set(predicate)) == expected


# --------------------------------------------------------------------------- predicates


def test_comparison_predicates_on_compact_fields(employees):
    assert_keys(employees, p.equal("age", 30), lambda e: e.age == 30)
    assert_keys(employees, p.not_equal("dept", "eng"), lambda e: e.dept != "eng")
    assert_keys(employees, p.greater("salary", 9000), lambda e: e.salary > 9000)
    assert_keys(employees, p.greater_or_equal("age", 55), lambda e: e.age >= 55)
    assert_keys(employees, p.less("age", 23), lambda e: e.age < 23)
    assert_keys(employees, p.less_or_equal("salary", 2000), lambda e: e.salary <= 2000)
    assert_keys(employees, p.between("age", 30, 35), lambda e: 30 <= e.age <= 35)
    assert_keys(employees, p.in_("dept", "ops", "sales"), lambda e: e.dept in ("ops", "sales"))
    assert_keys(employees, p.equal("active", True), lambda e: e.active)
    assert_keys(employees, p.true(), lambda e: True)
    assert_keys(employees, p.false(), lambda e: False)


def test_comparison_values_are_converted_to_the_attribute_type(employees):
    # A string compared with an int32 field, an int with an int64 field, a float with an int.
    assert_keys(employees, p.equal("age", "30"), lambda e: e.age == 30)
    assert_keys(employees, p.greater("salary", 9000), lambda e: e.salary > 9000)
    assert_keys(employees, p.less("age", 22.5), lambda e: e.age < 22.5)


def test_nullable_fields_and_null_comparisons(employees):
    assert_keys(employees, p.equal("bonus", None), lambda e: e.bonus is None)
    assert_keys(employees, p.not_equal("bonus", None), lambda e: e.bonus is not None)
    assert_keys(employees, p.greater("bonus", 4), lambda e: e.bonus is not None and e.bonus > 4)


def test_text_predicates(employees):
    assert_keys(employees, p.like("name", "emp-00%"), lambda e: e.name.startswith("emp-00"))
    assert_keys(employees, p.like("name", "emp-0_1"), lambda e: e.name[:5] == "emp-0" and e.name[6] == "1")
    assert_keys(employees, p.like("dept", "eng"), lambda e: e.dept == "eng")
    assert_keys(employees, p.ilike("dept", "ENG"), lambda e: e.dept.lower() == "eng")
    assert_keys(employees, p.regex("name", "emp-1[0-1].*"), lambda e: e.name[4:6] in ("10", "11"))


def test_logical_predicates(employees):
    young_or_eng = p.or_(p.less("age", 25), p.equal("dept", "eng"))
    assert_keys(employees, young_or_eng, lambda e: e.age < 25 or e.dept == "eng")
    assert_keys(employees, p.and_(p.equal("active", True), p.greater("age", 50)), lambda e: e.active and e.age > 50)
    assert_keys(employees, p.not_(p.equal("dept", "ops")), lambda e: e.dept != "ops")
    nested = p.and_(p.not_(young_or_eng), p.in_("address.city", "Berlin", "Lisbon"))
    assert_keys(
        employees, nested, lambda e: not (e.age < 25 or e.dept == "eng") and e.address.city in ("Berlin", "Lisbon")
    )


def test_paths_into_nested_records_arrays_and_the_key(employees):
    assert_keys(employees, p.equal("address.city", "Berlin"), lambda e: e.address.city == "Berlin")
    assert_keys(employees, p.greater("address.zip", 1007), lambda e: e.address.zip_code > 1007)
    assert_keys(employees, p.equal("tags[0]", "t1"), lambda e: e.tags[0] == "t1")
    assert_keys(employees, p.equal("tags[any]", "x1"), lambda e: "x1" in e.tags)
    assert_keys(employees, p.like("__key", "k00%"), lambda e: e.name.startswith("emp-00"))
    assert_keys(employees, p.greater("__key", "k110"), lambda e: int(e.name[4:]) > 110)


def test_sql_predicates(employees):
    assert_keys(employees, p.sql("age > 50 AND active"), lambda e: e.age > 50 and e.active)
    assert_keys(employees, p.sql("dept IN ('ops', 'sales') OR age = 20"), lambda e: e.dept in ("ops", "sales") or e.age == 20)
    assert_keys(employees, p.sql("NOT (age BETWEEN 25 AND 55)"), lambda e: not 25 <= e.age <= 55)
    assert_keys(employees, p.sql("name LIKE 'emp-01%' AND dept != 'eng'"), lambda e: e.name.startswith("emp-01") and e.dept != "eng")
    assert_keys(employees, p.sql("dept ILIKE 'eng'"), lambda e: e.dept.lower() == "eng")
    assert_keys(employees, p.sql("name REGEX 'emp-0[0-4]0'"), lambda e: e.name[4] == "0" and e.name[5] in "01234" and e.name[6] == "0")
    assert_keys(employees, p.sql("address.city = 'Ankara' and salary >= 8000"), lambda e: e.address.city == "Ankara" and e.salary >= 8000)
    assert_keys(employees, p.sql("__key = 'k007'"), lambda e: e.name == "emp-007")
    assert_keys(employees, p.sql("bonus = null"), lambda e: e.bonus is None)


def test_a_malformed_sql_predicate_fails_that_request_only(employees):
    with pytest.raises(HazelcastError):
        employees.key_set(p.sql("age > AND"))
    assert employees.size() == COUNT


def test_predicates_over_json_values(client, map_name):
    m = client.get_map(map_name).blocking()
    with_json = {
        "j%d" % i: HazelcastJsonValue('{"n": %d, "s": "v%d", "inner": {"d": %s}, "list": [%d, %d]}' % (i, i % 3, i * 0.5, i, i + 100))
        for i in range(30)
    }
    m.put_all(with_json)
    try:
        assert sorted(m.key_set(p.greater("n", 25))) == sorted("j%d" % i for i in range(26, 30))
        assert sorted(m.key_set(p.equal("s", "v1"))) == sorted("j%d" % i for i in range(30) if i % 3 == 1)
        assert sorted(m.key_set(p.less("inner.d", 2))) == sorted("j%d" % i for i in range(30) if i * 0.5 < 2)
        assert sorted(m.key_set(p.equal("list[any]", 105))) == ["j5"]
        assert sorted(m.key_set(p.sql("n between 3 and 5"))) == ["j3", "j4", "j5"]
    finally:
        m.destroy()


def test_not_over_a_missing_or_null_attribute_is_negated_as_hazelcast_optimizes_it(client, map_name):
    """Hazelcast's query optimizer rewrites NOT(P) as P negated when P can be (its
    FlatteningVisitor: a comparison flips, = and != swap, AND and OR swap with their terms
    negated, NOT(NOT(P)) is P), and a comparison with a missing or null attribute is false
    either way: NOT(a > 5) is a <= 5, which no entry without a matches. BETWEEN, IN and LIKE
    have no negation: NOT over them is true for a missing attribute."""
    m = client.get_map(map_name).blocking()
    docs = {}
    for i in range(24):
        if i % 4 == 0:
            docs["k%d" % i] = '{"n": %d}' % i  # no "a" at all
        elif i % 4 == 1:
            docs["k%d" % i] = '{"n": %d, "a": {"d": {"e": null}}}' % i
        elif i % 4 == 2:
            docs["k%d" % i] = '{"n": %d, "a": {"d": {}}}' % i
        else:
            docs["k%d" % i] = '{"n": %d, "a": {"d": {"e": %d}}}' % (i, i % 11)
    m.put_all({key: HazelcastJsonValue(doc) for key, doc in docs.items()})
    e = {key: (i % 11 if i % 4 == 3 else None) for key, i in ((k, int(k[1:])) for k in docs)}

    def keys(condition):
        return sorted(key for key, value in e.items() if condition(value, int(key[1:])))

    def check(predicate, condition):
        assert sorted(m.key_set(predicate)) == keys(condition), predicate

    try:
        has = lambda v: v is not None  # noqa: E731
        check(p.not_(p.greater("a.d.e", 5)), lambda v, n: has(v) and v <= 5)
        check(p.not_(p.less_or_equal("a.d.e", 5)), lambda v, n: has(v) and v > 5)
        check(p.not_(p.not_(p.greater("a.d.e", 5))), lambda v, n: has(v) and v > 5)
        check(p.sql("NOT (a.d.e > 5)"), lambda v, n: has(v) and v <= 5)
        check(p.not_(p.and_(p.greater("a.d.e", 2), p.less("a.d.e", 8))), lambda v, n: has(v) and (v <= 2 or v >= 8))
        check(p.not_(p.or_(p.greater("a.d.e", 5), p.less("n", 10))), lambda v, n: has(v) and v <= 5 and n >= 10)
        check(p.not_(p.and_(p.greater("a.d.e", 5), p.between("n", 0, 10))), lambda v, n: (has(v) and v <= 5) or n > 10)
        check(p.not_(p.equal("a.d.e", 3)), lambda v, n: v != 3)
        check(p.not_(p.between("a.d.e", 2, 6)), lambda v, n: not (has(v) and 2 <= v <= 6))
        check(p.not_(p.in_("a.d.e", 3, 7)), lambda v, n: v not in (3, 7))
        total = m.aggregate(agg.int_sum("n"), p.not_(p.less_or_equal("a.d.e", 7)))
        assert total == sum(int(k[1:]) for k in keys(lambda v, n: has(v) and v > 7))
    finally:
        m.destroy()


def test_not_over_a_null_compact_field(employees):
    assert_keys(employees, p.not_(p.greater("bonus", 4)), lambda e: e.bonus is not None and e.bonus <= 4)
    assert_keys(employees, p.not_(p.not_equal("bonus", 3)), lambda e: e.bonus == 3)
    assert_keys(employees, p.not_(p.between("bonus", 2, 4)), lambda e: e.bonus is None or not 2 <= e.bonus <= 4)


def test_predicates_over_plain_values_use_this(client, map_name):
    m = client.get_map(map_name).blocking()
    m.put_all({"i%d" % i: i for i in range(50)})
    try:
        assert sorted(m.values(p.greater("this", 44))) == [45, 46, 47, 48, 49]
        assert sorted(m.values(p.sql("this < 3"))) == [0, 1, 2]
        assert sorted(m.key_set(p.in_("this", 7, 9))) == ["i7", "i9"]
    finally:
        m.destroy()


# --------------------------------------------------------------------------- paging


def _all_pages(read, paging):
    """Every page `read(paging)` gives, from the paging predicate's page on, until an empty one."""
    pages = []
    while True:
        page = read(paging)
        if not page:
            return pages
        pages.append(page)
        paging.next_page()


def test_paging_through_all_pages_of_keys_and_plain_values(client, map_name):
    m = client.get_map(map_name).blocking()
    m.put_all({"k%03d" % i: (i * 7919) % 101 for i in range(101)})
    try:
        pages = _all_pages(m.values, p.paging(p.greater("this", 9), 7))
        expected = sorted(v for v in ((i * 7919) % 101 for i in range(101)) if v > 9)
        assert [v for page in pages for v in page] == expected
        assert all(len(page) == 7 for page in pages[:-1])
        keys = p.paging(None, 10)
        keys.page = 3
        assert m.key_set(keys) == ["k%03d" % i for i in range(30, 40)]
        # Entries are not comparable: with no comparator Hazelcast orders them by key.
        entries = p.paging(p.less("this", 5), 2)
        matching = sorted((k, v) for k, v in ((("k%03d" % i), (i * 7919) % 101) for i in range(101)) if v < 5)
        assert m.entry_set(entries) == matching[:2]
        entries.next_page()
        assert m.entry_set(entries) == matching[2:4]
    finally:
        m.destroy()


def _java_order(text):
    """Java's String.compareTo order: UTF-16 code units."""
    return text.encode("utf-16-be")


def _java_hash(text):
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def test_paging_on_sorted_indexes_of_keys_and_values_reads_every_page_in_java_order(client, map_name):
    m = client.get_map(map_name).blocking()
    # Keys whose UTF-8 and UTF-16 orders differ (U+FFFF against a supplementary character),
    # and values with duplicates (ties are ordered by the key's hashCode).
    tails = ["a", "b", "\u00e9", "\uffff", "\U0001f600", "z"]
    entries = {"k%02d%s" % (i % 40, tails[i % len(tails)]): "v%d" % (i % 13) for i in range(240)}
    m.add_index(attributes=["__key"], index_type=IndexType.SORTED)
    m.add_index(attributes=["this"], index_type=IndexType.SORTED)
    m.put_all(entries)
    try:
        keys = sorted(entries, key=_java_order)
        assert [k for page in _all_pages(m.key_set, p.paging(None, 11)) for k in page] == keys
        start = keys[57]
        ranged = p.paging(p.greater_or_equal("__key", start), 25)
        assert m.entry_set(ranged) == [(k, entries[k]) for k in keys[57:82]]
        ranged.page = 3  # straight to a later page: no anchor for the pages between
        assert m.entry_set(ranged) == [(k, entries[k]) for k in keys[57 + 75 : 57 + 100]]
        by_value = sorted(entries.items(), key=lambda kv: (_java_order(kv[1]), _java_hash(kv[0])))
        expected = [v for k, v in by_value if _java_order(v) > _java_order("v3")]
        assert [v for page in _all_pages(m.values, p.paging(p.greater("this", "v3"), 9)) for v in page] == expected
    finally:
        m.destroy()


# --------------------------------------------------------------------------- aggregations and projections


class Reading:
    """One of two Compact types with the same number fields at other places in the record."""

    def __init__(self, wide, n, x, small):
        self.wide, self.n, self.x, self.small = wide, n, x, small


def _reading_serializer(type_name, with_extra):
    class ReadingSerializer(CompactSerializer[Reading]):
        def read(self, reader: CompactReader) -> Reading:
            wide = reader.read_int64("aaa") if with_extra else None
            return Reading(wide, reader.read_int32("n"), reader.read_float64("x"), reader.read_int8("small"))

        def write(self, writer: CompactWriter, obj: Reading) -> None:
            if with_extra:
                # (an int64 named to sort first: n and x sit 8 bytes further in this type's records)
                writer.write_int64("aaa", obj.wide)
            writer.write_int32("n", obj.n)
            writer.write_float64("x", obj.x)
            writer.write_int8("small", obj.small)

        def get_type_name(self) -> str:
            return type_name

        def get_class(self):
            return Reading if not with_extra else WideReading

    return ReadingSerializer()


class WideReading(Reading):
    pass


def test_number_fields_of_two_compact_types_in_one_map_are_read_at_each_type_s_places(client_factory, map_name):
    client = client_factory(compact_serializers=[
        _reading_serializer("ferrogrid.query.Reading", False), _reading_serializer("ferrogrid.query.WideReading", True)])
    m = client.get_map(map_name).blocking()
    readings = {}
    for i in range(200):
        kind = WideReading if i % 3 == 0 else Reading
        readings["r%03d" % i] = kind(10_000 + i if kind is WideReading else None, (i * 37) % 101 - 20,
                                     ((i * 53) % 97) / 4.0, (i * 7) % 11 - 5)
    m.put_all(readings)
    try:
        def keys(condition):
            return sorted(k for k, r in readings.items() if condition(r))

        assert sorted(m.key_set(p.greater("n", 50))) == keys(lambda r: r.n > 50)
        assert sorted(m.key_set(p.between("x", 5.5, 12.25))) == keys(lambda r: 5.5 <= r.x <= 12.25)
        assert sorted(m.key_set(p.less_or_equal("x", 7))) == keys(lambda r: r.x <= 7), "an int bound on a float64"
        assert sorted(m.key_set(p.greater_or_equal("small", 2))) == keys(lambda r: r.small >= 2), "an int bound on an int8"
        assert sorted(m.key_set(p.and_(p.greater("n", 0), p.less("x", 20.0)))) == keys(lambda r: r.n > 0 and r.x < 20)
        assert sorted(m.key_set(p.greater("aaa", 10_100))) == keys(lambda r: r.wide is not None and r.wide > 10_100)
        values = list(readings.values())
        assert m.aggregate(agg.int_sum("n")) == sum(r.n for r in values)
        assert m.aggregate(agg.double_sum("x"), p.greater("n", 10)) == pytest.approx(sum(r.x for r in values if r.n > 10))
        assert m.aggregate(agg.max_("small")) == max(r.small for r in values)
        assert m.aggregate(agg.min_("n"), p.between("x", 1.0, 9.0)) == min(r.n for r in values if 1.0 <= r.x <= 9.0)
        assert m.aggregate(agg.count(), p.equal("n", readings["r003"].n)) == sum(
            1 for r in values if r.n == readings["r003"].n)
    finally:
        m.destroy()


def test_aggregations_with_and_without_a_predicate(employees):
    values = list(EMPLOYEES.values())
    active = [e for e in values if e.active]
    assert employees.aggregate(agg.count()) == COUNT
    assert employees.aggregate(agg.count(), p.equal("active", True)) == len(active)
    assert employees.aggregate(agg.distinct("dept")) == set(DEPTS)
    assert employees.aggregate(agg.int_sum("age")) == sum(e.age for e in values)
    assert employees.aggregate(agg.long_sum("salary"), p.equal("active", True)) == sum(e.salary for e in active)
    assert employees.aggregate(agg.int_avg("age")) == pytest.approx(sum(e.age for e in values) / COUNT)
    assert employees.aggregate(agg.long_avg("salary")) == pytest.approx(sum(e.salary for e in values) / COUNT)
    assert employees.aggregate(agg.number_avg("age")) == pytest.approx(sum(e.age for e in values) / COUNT)
    assert employees.aggregate(agg.fixed_point_sum("age")) == sum(e.age for e in values)
    assert employees.aggregate(agg.floating_point_sum("salary")) == pytest.approx(sum(e.salary for e in values))
    assert employees.aggregate(agg.max_("age")) == max(e.age for e in values)
    assert employees.aggregate(agg.min_("salary"), p.greater("age", 40)) == min(e.salary for e in values if e.age > 40)
    # minBy and maxBy answer the whole entry (a Map.Entry, IdentifiedMapEntry in Python).
    richest = employees.aggregate(agg.max_by("salary"))
    assert richest.value.salary == max(e.salary for e in values)
    assert EMPLOYEES[richest.key] == richest.value
    assert employees.aggregate(agg.min_by("age")).value.age == min(e.age for e in values)


def test_projections(employees):
    names = employees.project(proj.single_attribute("name"))
    assert sorted(names) == sorted(e.name for e in EMPLOYEES.values())
    pairs = employees.project(proj.multi_attribute("name", "address.city"), p.less("age", 22))
    assert sorted(map(tuple, pairs)) == sorted((e.name, e.address.city) for e in EMPLOYEES.values() if e.age < 22)
    entries = employees.project(proj.identity(), p.equal("__key", "k001"))
    assert [(e.key, e.value.name) for e in entries] == [("k001", "emp-001")]


# --------------------------------------------------------------------------- indexes


@pytest.mark.parametrize("index_type", [IndexType.SORTED, IndexType.HASH])
def test_an_index_added_before_or_after_the_data_gives_the_same_answers(client_factory, map_name, index_type):
    client = client_factory(compact_serializers=[EmployeeSerializer(), AddressSerializer()])
    before = client.get_map(map_name + "-before").blocking()
    after = client.get_map(map_name + "-after").blocking()
    try:
        before.add_index(attributes=["age"], index_type=index_type)
        before.put_all(EMPLOYEES)
        after.put_all(EMPLOYEES)
        after.add_index(attributes=["age"], index_type=index_type)
        after.add_index(attributes=["dept", "active"], index_type=IndexType.HASH)
        for m in (before, after):
            assert_keys(m, p.equal("age", 33), lambda e: e.age == 33)
            assert_keys(m, p.in_("age", 21, 22), lambda e: e.age in (21, 22))
            assert_keys(m, p.between("age", 40, 42), lambda e: 40 <= e.age <= 42)
            m.put("k000", employee(33))
            m.remove("k001")
            m.put("knew", employee(4))
        changed = dict(EMPLOYEES, k000=employee(33), knew=employee(4))
        del changed["k001"]
        for m in (before, after):
            assert sorted(m.key_set(p.equal("age", 53))) == sorted(k for k, e in changed.items() if e.age == 53)
            assert sorted(m.key_set(p.sql("age < 22"))) == sorted(k for k, e in changed.items() if e.age < 22)
    finally:
        before.destroy()
        after.destroy()


# --------------------------------------------------------------------------- listeners with a predicate


def test_an_entry_listener_with_a_predicate_hears_only_matching_entries(client_factory, map_name):
    client = client_factory(compact_serializers=[EmployeeSerializer(), AddressSerializer()])
    m = client.get_map(map_name).blocking()
    heard = []
    lock = threading.Lock()

    def record(event):
        with lock:
            heard.append((event.event_type, event.key))

    try:
        m.add_entry_listener(include_value=True, predicate=p.greater("age", 55), added_func=record, updated_func=record)
        for i in range(40):
            m.put("k%03d" % i, employee(i))
        expected = [(1, "k%03d" % i) for i in range(40) if employee(i).age > 55]
        wait_until(lambda: len(heard) >= len(expected), 10, message="all matching ADDED events")
        m.put("k036", employee(1))  # no longer matching: Hazelcast sends nothing for it
        m.put("k001", employee(37))  # now matching: an UPDATED
        wait_until(lambda: (4, "k001") in heard, 10, message="k001's UPDATED")
        with lock:
            assert sorted(heard) == sorted(expected + [(4, "k001")])
    finally:
        m.destroy()
