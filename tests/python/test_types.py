"""Keys and values of the types the Python client serializes, round-tripped through the member."""

import pytest
from hazelcast.core import HazelcastJsonValue

SAMPLES = [
    pytest.param("hello", id="str"),
    pytest.param("", id="empty-str"),
    pytest.param("ü€😀 ünïcödé ✓ 中文", id="unicode-str"),
    pytest.param("a" * 1000, id="long-str"),
    pytest.param(0, id="int-0"),
    pytest.param(42, id="int-42"),
    pytest.param(-1, id="int-neg"),
    pytest.param(2**31 - 1, id="int-max"),
    pytest.param(-(2**31), id="int-min"),
    pytest.param(3.14, id="float"),
    pytest.param(-0.5, id="float-neg"),
    pytest.param(1e300, id="float-big"),
    pytest.param(True, id="bool-true"),
    pytest.param(False, id="bool-false"),
    pytest.param(bytearray(b"\x00\x01\x02\xff"), id="bytearray"),
    pytest.param(bytearray(), id="empty-bytearray"),
    pytest.param(HazelcastJsonValue('{"a": 1, "b": [true, null, "x"]}'), id="json"),
]


def same(a, b):
    if isinstance(a, HazelcastJsonValue):
        return isinstance(b, HazelcastJsonValue) and a.to_string() == b.to_string()
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("value", SAMPLES)
def test_value_round_trip(m, value):
    assert m.put("k", value) is None
    got = m.get("k")
    assert same(got, value), (got, value)
    assert same(m.put("k", "next"), value)
    assert m.contains_value(value) is False
    m.set("k", value)
    assert m.contains_value(value) is True
    assert same(m.values()[0], value)
    assert same(m.remove("k"), value)


@pytest.mark.parametrize("key", SAMPLES)
def test_key_round_trip(m, key):
    assert m.put(key, "v") is None
    assert m.get(key) == "v"
    assert m.contains_key(key) is True
    keys = m.key_set()
    assert len(keys) == 1 and same(keys[0], key), keys
    entries = m.entry_set()
    assert len(entries) == 1 and same(entries[0][0], key) and entries[0][1] == "v"
    if not isinstance(key, bytearray):  # get_all() needs hashable keys (client-side limit)
        got = m.get_all([key])
        assert len(got) == 1 and list(got.values()) == ["v"]
    view = m.get_entry_view(key)
    assert same(view.key, key) and view.value == "v"
    assert m.remove(key) == "v"
    assert m.contains_key(key) is False


def test_all_types_in_one_map(m):
    keys = [p.values[0] for p in SAMPLES]
    for i, k in enumerate(keys):
        m.put(k, i)
    # 0 (int) and False (bool), 1e300 (float) ... are all different keys
    assert m.size() == len(keys)
    for i, k in enumerate(keys):
        assert m.get(k) == i, k


def test_int_and_string_of_same_text_are_different_keys(m):
    m.put(1, "int")
    m.put("1", "str")
    assert m.size() == 2
    assert m.get(1) == "int"
    assert m.get("1") == "str"
    m.remove(1)
    assert m.get(1) is None
    assert m.get("1") == "str"


def test_int_float_bool_of_same_number_are_different_keys(m):
    m.put(1, "int")
    m.put(1.0, "float")
    m.put(True, "bool")
    m.put(bytearray(b"1"), "bytes")
    m.put(HazelcastJsonValue("1"), "json")
    assert m.size() == 5
    assert m.get(1) == "int"
    assert m.get(1.0) == "float"
    assert m.get(True) == "bool"
    assert m.get(bytearray(b"1")) == "bytes"
    assert m.get(HazelcastJsonValue("1")) == "json"


def test_json_value_equality_is_textual(m):
    m.put(HazelcastJsonValue('{"a":1}'), "compact")
    assert m.get(HazelcastJsonValue('{"a": 1}')) is None  # different text = different key
    assert m.get(HazelcastJsonValue('{"a":1}')) == "compact"


def test_one_mib_values_round_trip(m):
    big_bytes = bytearray((i * 7 + 3) % 256 for i in range(1024 * 1024))
    big_str = "".join(chr(0x41 + i % 26) for i in range(1024 * 1024))
    assert m.put("bytes", big_bytes) is None
    assert m.put("str", big_str) is None
    assert m.get("bytes") == big_bytes
    assert m.get("str") == big_str
    assert m.put(big_str, "big key") is None
    assert m.get(big_str) == "big key"
    assert m.get_all(["bytes", "str"]) == {"bytes": big_bytes, "str": big_str}
    assert m.remove("bytes") == big_bytes
    assert m.size() == 2
