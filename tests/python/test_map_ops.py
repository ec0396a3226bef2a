"""Every IMap operation of the Python client, with the results a user sees.

Each test runs twice (fixture `client`: smart and unisocket routing) against a map with a
unique name. Expected values are those of a real Hazelcast 5.6.0 member (default map config).
"""

import pytest

import wire

LONG_MAX = 2**63 - 1


def assert_put_all_result(result, keys):
    """put_all() returns one None per partition message it sent (the Python client groups the
    keys by partition: 271 partitions), i.e. a list of Nones, one per distinct partition."""
    partitions = {wire.partition_id(wire.string_data(k)) for k in keys}
    assert result == [None] * len(partitions)


def test_put_returns_previous_value(m):
    assert m.put("k", "v1") is None
    assert m.put("k", "v2") == "v1"
    assert m.put("k", "v2") == "v2"
    assert m.get("k") == "v2"
    assert m.size() == 1


def test_get_present_and_absent(m):
    assert m.get("missing") is None
    m.put("k", "v")
    assert m.get("k") == "v"
    assert m.get("K") is None


def test_set(m):
    assert m.set("k", "v1") is None
    assert m.get("k") == "v1"
    assert m.set("k", "v2") is None
    assert m.get("k") == "v2"
    assert m.size() == 1


def test_remove_returns_previous_value(m):
    m.put("k", "v")
    assert m.remove("k") == "v"
    assert m.get("k") is None
    assert m.remove("k") is None
    assert m.remove("never") is None
    assert m.size() == 0


def test_delete(m):
    m.put("k", "v")
    m.put("other", "o")
    # The Python client ignores Map.Delete's response: delete() returns None in both cases.
    assert m.delete("k") is None
    assert m.get("k") is None
    assert m.contains_key("k") is False
    assert m.delete("k") is None
    assert m.delete("never") is None
    assert m.get("other") == "o"
    assert m.size() == 1


def test_contains_key(m):
    assert m.contains_key("k") is False
    m.put("k", "v")
    assert m.contains_key("k") is True
    assert m.contains_key("v") is False
    m.remove("k")
    assert m.contains_key("k") is False


def test_contains_value(m):
    assert m.contains_value("v") is False
    m.put("k1", "v")
    m.put("k2", "w")
    assert m.contains_value("v") is True
    assert m.contains_value("w") is True
    assert m.contains_value("k1") is False
    m.put("k1", "x")
    assert m.contains_value("v") is False
    assert m.contains_value("x") is True
    # values are compared as serialized data: int 1 is not str "1"
    m.put("n", 1)
    assert m.contains_value(1) is True
    assert m.contains_value("1") is False


def test_size_and_is_empty(m):
    assert m.size() == 0
    assert m.is_empty() is True
    m.put("a", "1")
    assert m.size() == 1
    assert m.is_empty() is False
    m.put("b", "2")
    m.put("a", "3")
    assert m.size() == 2
    m.remove("a")
    m.remove("b")
    assert m.size() == 0
    assert m.is_empty() is True


def test_clear(client, m, map_name):
    for i in range(20):
        m.put("k%d" % i, i)
    assert m.clear() is None
    assert m.size() == 0
    assert m.is_empty() is True
    assert m.get("k1") is None
    assert m.key_set() == []
    # the map still exists and is usable
    names = [(o.name, o.service_name) for o in client.get_distributed_objects()]
    assert (map_name, "hz:impl:mapService") in names
    assert m.put("k1", "again") is None
    assert m.get("k1") == "again"
    assert m.clear() is None
    assert m.clear() is None  # clearing an empty map is fine


def test_put_all_and_get_all(m):
    data = {"k%d" % i: "v%d" % i for i in range(50)}
    assert_put_all_result(m.put_all(data), data)
    assert m.size() == 50
    assert m.get_all(list(data)) == data
    # absent keys are omitted
    assert m.get_all(["k1", "absent", "k2", "also-absent"]) == {"k1": "v1", "k2": "v2"}
    assert m.get_all(["absent"]) == {}
    assert m.get_all([]) == {}
    # put_all overwrites existing entries
    assert_put_all_result(m.put_all({"k1": "new", "extra": "e"}), ["k1", "extra"])
    assert m.get("k1") == "new"
    assert m.get("extra") == "e"
    assert m.size() == 51
    assert m.put_all({}) is None  # nothing is sent
    assert m.size() == 51


def test_put_if_absent(m):
    assert m.put_if_absent("k", "v1") is None
    assert m.get("k") == "v1"
    assert m.put_if_absent("k", "v2") == "v1"
    assert m.get("k") == "v1"
    assert m.size() == 1


def test_replace(m):
    assert m.replace("k", "v") is None  # absent: nothing replaced, nothing created
    assert m.contains_key("k") is False
    assert m.size() == 0
    m.put("k", "v1")
    assert m.replace("k", "v2") == "v1"
    assert m.get("k") == "v2"


def test_replace_if_same(m):
    assert m.replace_if_same("k", "old", "new") is False
    assert m.contains_key("k") is False
    m.put("k", "v1")
    assert m.replace_if_same("k", "wrong", "v2") is False
    assert m.get("k") == "v1"
    assert m.replace_if_same("k", "v1", "v2") is True
    assert m.get("k") == "v2"
    assert m.replace_if_same("k", "v1", "v3") is False
    assert m.get("k") == "v2"


def test_remove_if_same(m):
    assert m.remove_if_same("k", "v") is False
    m.put("k", "v")
    assert m.remove_if_same("k", "other") is False
    assert m.get("k") == "v"
    assert m.remove_if_same("k", "v") is True
    assert m.contains_key("k") is False
    assert m.remove_if_same("k", "v") is False


def test_put_transient(m):
    assert m.put_transient("k", "v1") is None
    assert m.get("k") == "v1"
    assert m.put_transient("k", "v2") is None
    assert m.get("k") == "v2"
    assert m.size() == 1


def test_try_put(m):
    assert m.try_put("k", "v1", 5) is True
    assert m.get("k") == "v1"
    assert m.try_put("k", "v2", 5) is True  # overwrites, like put
    assert m.get("k") == "v2"
    assert m.size() == 1


def test_try_remove(m):
    assert m.try_remove("k", 5) is False
    m.put("k", "v")
    assert m.try_remove("k", 5) is True
    assert m.contains_key("k") is False
    assert m.try_remove("k", 5) is False


def test_key_set_values_entry_set(m):
    assert m.key_set() == []
    assert m.values() == []
    assert m.entry_set() == []
    data = {"a": "1", "b": "2", "c": "2"}
    m.put_all(data)
    assert sorted(m.key_set()) == ["a", "b", "c"]
    assert sorted(m.values()) == ["1", "2", "2"]  # duplicates kept
    assert sorted(m.entry_set()) == [("a", "1"), ("b", "2"), ("c", "2")]
    m.remove("b")
    assert sorted(m.key_set()) == ["a", "c"]
    assert sorted(m.values()) == ["1", "2"]
    assert sorted(m.entry_set()) == [("a", "1"), ("c", "2")]


def test_key_set_values_entry_set_are_consistent(m):
    data = {"key-%03d" % i: i * 7 for i in range(300)}
    m.put_all(data)
    keys = m.key_set()
    values = m.values()
    entries = m.entry_set()
    assert len(keys) == len(values) == len(entries) == 300
    assert set(keys) == set(data)
    assert sorted(values) == sorted(data.values())
    assert dict(entries) == data


def test_evict(m):
    assert m.evict("k") is False
    m.put("k", "v")
    m.put("other", "o")
    assert m.evict("k") is True
    assert m.get("k") is None
    assert m.contains_key("k") is False
    assert m.evict("k") is False
    assert m.get("other") == "o"
    assert m.size() == 1


def test_evict_all(m):
    assert m.evict_all() is None
    m.put_all({"k%d" % i: "v" for i in range(10)})
    assert m.evict_all() is None
    assert m.size() == 0
    assert m.get("k1") is None
    m.put("k", "v")
    assert m.get("k") == "v"


def test_flush(m):
    assert m.flush() is None
    m.put("k", "v")
    assert m.flush() is None
    assert m.get("k") == "v"
    assert m.size() == 1


def test_destroy(client, map_name):
    proxy = client.get_map(map_name).blocking()
    proxy.put("k", "v")
    proxy.put("k2", "v2")
    names = [o.name for o in client.get_distributed_objects()]
    assert map_name in names
    assert proxy.destroy() is True
    names = [o.name for o in client.get_distributed_objects()]
    assert map_name not in names
    again = client.get_map(map_name).blocking()
    assert again.size() == 0
    assert again.get("k") is None
    assert again.key_set() == []
    # the name can be used again
    assert again.put("k", "new") is None
    assert again.get("k") == "new"
    again.destroy()


def test_destroy_seen_by_other_client(client_factory, map_name):
    c1 = client_factory()
    c2 = client_factory()
    m1 = c1.get_map(map_name).blocking()
    m1.put("k", "v")
    m2 = c2.get_map(map_name).blocking()
    assert m2.get("k") == "v"
    m1.destroy()
    assert map_name not in [o.name for o in c2.get_distributed_objects()]
    assert c2.get_map(map_name).blocking().get("k") is None


def test_get_entry_view_present(m):
    m.put("k", "v")
    view = m.get_entry_view("k")
    assert view is not None
    assert view.key == "k"
    assert view.value == "v"
    assert view.version == 0
    # no ttl / max-idle configured: "never" is Long.MAX_VALUE
    assert view.ttl == LONG_MAX
    assert view.max_idle == LONG_MAX
    assert view.expiration_time == LONG_MAX


def test_get_entry_view_statistics_fields(m):
    # With the default map config (per-entry statistics disabled) a 5.6.0 member reports -1
    # for these, even after reads and writes.
    m.put("k", "v")
    m.get("k")
    m.set("k", "w")
    m.get("k")
    view = m.get_entry_view("k")
    assert view.hits == -1
    assert view.creation_time == -1
    assert view.last_access_time == -1
    assert view.last_update_time == -1
    assert view.last_stored_time == -1


def test_get_entry_view_version_counts_updates(m):
    m.put("k", "v")
    assert m.get_entry_view("k").version == 0
    m.put("k", "v")  # same value still counts as an update
    assert m.get_entry_view("k").version == 1
    m.set("k", "w")
    assert m.get_entry_view("k").version == 2
    m.get("k")  # reads do not
    assert m.get_entry_view("k").version == 2
    m.put_transient("k", "t")
    assert m.get_entry_view("k").version == 3
    m.replace("k", "r")
    assert m.get_entry_view("k").version == 4
    assert m.replace_if_same("k", "r", "s") is True
    view = m.get_entry_view("k")
    assert view.version == 5
    assert view.value == "s"
    # a removed and re-created entry starts again at 0
    m.remove("k")
    m.put("k", "again")
    assert m.get_entry_view("k").version == 0


@pytest.mark.parametrize(
    "create",
    [
        pytest.param(lambda m: m.put("k", "v"), id="put"),
        pytest.param(lambda m: m.set("k", "v"), id="set"),
        pytest.param(lambda m: m.put_if_absent("k", "v"), id="put_if_absent"),
        pytest.param(lambda m: m.put_all({"k": "v"}), id="put_all"),
        pytest.param(lambda m: m.try_put("k", "v", 5), id="try_put"),
        pytest.param(lambda m: m.put_transient("k", "v"), id="put_transient"),
    ],
)
def test_get_entry_view_new_entry_version_zero(m, create):
    create(m)
    view = m.get_entry_view("k")
    assert (view.key, view.value, view.version) == ("k", "v", 0)
    assert (view.ttl, view.max_idle, view.expiration_time) == (LONG_MAX, LONG_MAX, LONG_MAX)


def test_get_entry_view_absent(m):
    assert m.get_entry_view("missing") is None
    m.put("k", "v")
    m.remove("k")
    assert m.get_entry_view("k") is None


def test_get_distributed_objects_after_get_map(client, map_name):
    client.get_map(map_name)
    objects = client.get_distributed_objects()
    found = [o for o in objects if o.name == map_name]
    assert len(found) == 1
    assert found[0].service_name == "hz:impl:mapService"


def test_get_distributed_objects_lists_other_clients_maps(client_factory, map_name):
    c1 = client_factory()
    c2 = client_factory()
    c1.get_map(map_name).blocking().put("k", "v")
    objects = c2.get_distributed_objects()
    assert (map_name, "hz:impl:mapService") in [(o.name, o.service_name) for o in objects]


def test_never_used_map(client, map_name):
    fresh = client.get_map(map_name).blocking()
    assert fresh.get("k") is None
    assert fresh.size() == 0
    assert fresh.is_empty() is True
    assert fresh.contains_key("k") is False
    assert fresh.contains_value("v") is False
    assert fresh.key_set() == []
    assert fresh.values() == []
    assert fresh.entry_set() == []
    assert fresh.get_all(["a", "b"]) == {}
    assert fresh.remove("k") is None
    assert fresh.get_entry_view("k") is None


def test_second_client_sees_first_clients_writes(client_factory, map_name):
    writer = client_factory()
    reader = client_factory()
    w = writer.get_map(map_name).blocking()
    r = reader.get_map(map_name).blocking()
    w.put("k1", "v1")
    w.put_all({"k%d" % i: "v%d" % i for i in range(2, 30)})
    assert r.get("k1") == "v1"
    assert r.size() == 29
    assert r.get_all(["k1", "k29", "k30"]) == {"k1": "v1", "k29": "v29"}
    r.remove("k1")
    assert w.get("k1") is None
    assert w.size() == 28


def test_maps_are_independent(client, request):
    from conftest import unique_name

    a = client.get_map(unique_name(request, "a")).blocking()
    b = client.get_map(unique_name(request, "b")).blocking()
    try:
        a.put("k", "in-a")
        assert b.get("k") is None
        assert b.size() == 0
        b.put("k", "in-b")
        assert a.get("k") == "in-a"
        a.clear()
        assert b.get("k") == "in-b"
    finally:
        a.destroy()
        b.destroy()


def test_a_map_wide_request_sees_the_writes_sent_before_it(client, map_name):
    # Requests a client pipelines on one connection: a size() sent after puts (not waited for)
    # counts them, as Hazelcast's partition threads run the puts before the size's share
    # (the Python client's portable query example relies on it).
    m = client.get_map(map_name)
    try:
        puts = [m.put(i, i) for i in range(300)]
        assert m.size().result() == 300
        assert all(put.result() is None for put in puts)
    finally:
        m.destroy()
