"""Many keys, several clients at once."""

import threading

N = 10_000


def test_ten_thousand_keys(m):
    data = {"key-%05d" % i: "value-%d" % i for i in range(N)}
    result = m.put_all(data)
    assert result == [None] * 271  # one PutAll per partition; 10,000 keys hit all 271
    assert m.size() == N
    assert m.is_empty() is False
    keys = m.key_set()
    assert len(keys) == N
    assert set(keys) == set(data)
    assert m.get_all(list(data)) == data
    assert dict(m.entry_set()) == data
    assert sorted(m.values()) == sorted(data.values())
    assert m.get("key-00000") == "value-0"
    assert m.get("key-09999") == "value-9999"
    m.clear()
    assert m.size() == 0


def test_ten_thousand_int_keys(m):
    data = {i: i * 2 for i in range(N)}
    m.put_all(data)
    assert m.size() == N
    assert set(m.key_set()) == set(data)
    got = m.get_all(list(range(-5, N + 5)))
    assert got == data


def test_concurrent_writers_then_reader(client_factory, map_name):
    writers = 4
    per_writer = 250
    clients = [client_factory() for _ in range(writers)]
    errors = []
    start = threading.Barrier(writers)

    def write(idx, c):
        try:
            mp = c.get_map(map_name).blocking()
            start.wait(30)
            for j in range(per_writer):
                mp.put("w%d-%d" % (idx, j), "%d:%d" % (idx, j))
                if j % 10 == 0:
                    mp.set("shared", idx)  # all writers also hit one key
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=write, args=(i, c)) for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(50)
    assert not any(t.is_alive() for t in threads), "writer threads did not finish"
    assert errors == []

    reader = client_factory().get_map(map_name).blocking()
    assert reader.size() == writers * per_writer + 1
    expected = {"w%d-%d" % (i, j): "%d:%d" % (i, j) for i in range(writers) for j in range(per_writer)}
    assert reader.get_all(list(expected)) == expected
    assert reader.get("shared") in range(writers)
    reader.destroy()


def test_concurrent_async_operations_one_client(m, client, map_name):
    # many in-flight requests on the same connection(s): responses must match requests
    futures_map = client.get_map(map_name)
    futures = [futures_map.put("k%d" % i, "v%d" % i) for i in range(500)]
    for f in futures:
        assert f.result() is None
    gets = [(i, futures_map.get("k%d" % i)) for i in range(500)]
    for i, f in gets:
        assert f.result() == "v%d" % i
    assert m.size() == 500
