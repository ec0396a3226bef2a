"""JCache: the Cache service (0x13), requests built by hand as the Java client 5.6 encodes them
(the Python client 5.7.0 has no JCache; the Java client's `HazelcastClientCacheManager` and
`ClientCacheProxy` send these messages).

A Hazelcast 5.6.0 member serves Cache requests only with javax.cache (cache-api 1.1.1) on its
class path; member.py puts it there. Cache names on the wire carry Hazelcast's prefix: "/hz/"
plus the CacheManager's URI/class-loader prefix plus the name the user gave ("/hz/" + name for
the default manager).

What a real Hazelcast 5.6.0 member answers (and these tests hold):
  * Cache.GetConfig of a cache that was never created, and is not in the member's static
    config, is null (the client's CacheManager then sends Cache.CreateConfig);
  * a data operation (Put, Get) on a cache never created fails with CacheNotExistsException
    naming the cache: a cache exists only once its config was created;
  * Cache.Destroy of a cache never created succeeds (nothing to destroy);
  * Cache.CreateConfig of a CacheConfigHolder as the Java client encodes a MutableConfiguration
    (cache_codec.py; the member refuses a holder without hot-restart config with a
    NullPointerException) creates the cache: GetConfig finds it; Put answers null, or the old
    value with get=true; Get, ContainsKey, Remove with a wrong current value (false) and without
    one (true) answer as JCache says; after Destroy, a Get fails with CacheNotExistsException;
  * PutIfAbsent answers a boolean; Replace answers a serialized Boolean (Data), false for a
    wrong old value and for an absent key; GetAndRemove answers the value, then null; Size
    counts every partition's entries; Clear empties the cache.

Every test runs against both products (ferrogrid serves the Cache service:
`crates/member/src/engine/cache/`).
"""

import struct
import time

import pytest
from hazelcast.errors import HazelcastError
from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import CodecUtil, DataCodec, EntryListCodec
from hazelcast.protocol.client_message import RESPONSE_HEADER_SIZE, OutboundMessage

from cache_codec import (
    CREATE_CONFIG,
    MISSING_LOADER_FACTORY,
    MISSING_WRITER_FACTORY,
    TOUCHED_1500_MS,
    UNKNOWN_POLICY,
    UNKNOWN_POLICY_CLASS,
    create_config,
    eviction,
)
from conftest import unique_name
from dynamic_config import _frame, request, structure, text

PREFIX = "/hz/"
DESTROY = 0x130700
GET_CONFIG = 0x130C00
GET = 0x130D00
PUT = 0x131300
CONTAINS_KEY = 0x130500
REMOVE = 0x131600
CLEAR = 0x130200
GET_AND_REMOVE = 0x130A00
PUT_IF_ABSENT = 0x131200
REPLACE = 0x131700
SIZE = 0x131800
LOAD_ALL = 0x131000
GET_ALL = 0x130900


def _data(client, value):
    return _frame(bytes(client._serialization_service.to_data(value).buffer))


def _invoke(client, buf, partition_id=-1):
    invocation = Invocation(OutboundMessage(buf, False), partition_id=partition_id, response_handler=lambda m: m)
    client._invocation_service.invoke(invocation)
    return invocation.future.result()


def _key_partition(client, key):
    return client._partition_service.get_partition_id(client._serialization_service.to_data(key))


@pytest.fixture
def cache_name(request):
    """A fresh simple name (the name the user gives); the wire name is PREFIX + it."""
    return unique_name(request, "cache")


def test_the_config_of_a_cache_never_created_is_null(client, cache_name):
    simple = cache_name
    answer = _invoke(client, request(GET_CONFIG, (), [text(PREFIX + simple), text(simple)]))
    answer.next_frame()  # the initial frame
    assert CodecUtil.next_frame_is_null_frame(answer), "GetConfig answers a NULL config"


@pytest.mark.parametrize("operation", ["put", "get"])
def test_a_data_operation_on_a_cache_never_created_fails_naming_it(client, cache_name, operation):
    name = PREFIX + cache_name
    key = _data(client, "k")
    if operation == "put":
        buf = request(PUT, [("bool", False), ("int", -1)], [text(name), key, _data(client, "v"), None])
    else:
        buf = request(GET, (), [text(name), key, None])
    with pytest.raises(HazelcastError) as raised:
        _invoke(client, buf, _key_partition(client, "k"))
    assert "CacheNotExistsException" in str(raised.value)
    assert name in str(raised.value)


def test_a_request_over_the_partitions_on_a_cache_never_created_fails_naming_it(client, cache_name):
    name = PREFIX + cache_name
    requests = [
        request(SIZE, (), [text(name)]),
        request(CLEAR, (), [text(name)]),
        request(LOAD_ALL, [("bool", True)], [text(name), structure(fields=[_data(client, "k")])]),
    ]
    for buf in requests:
        with pytest.raises(HazelcastError) as raised:
            _invoke(client, buf)
        text_of = str(raised.value)
        assert "CacheNotExistsException: Cache config for cache %s has not been created yet!" % name in text_of


def test_destroying_a_cache_never_created_succeeds(client, cache_name):
    answer = _invoke(client, request(DESTROY, (), [text(PREFIX + cache_name)]))
    assert answer.get_message_type() == DESTROY + 1, "Cache.Destroy's response, not an error"


def _decode_data(client, answer):
    answer.next_frame()  # the initial frame
    data = CodecUtil.decode_nullable(answer, DataCodec.decode)
    return None if data is None else client._serialization_service.to_object(data)


def _boolean(answer):
    return struct.unpack_from("<?", answer.start_frame.buf, RESPONSE_HEADER_SIZE)[0]


def _on_key(client, message_type, name, key, fixed=(), extra=()):
    buf = request(message_type, list(fixed), [text(name), _data(client, key), *extra])
    return _invoke(client, buf, _key_partition(client, key))


def test_a_created_cache_serves_its_data_operations(client, cache_name):
    name = PREFIX + cache_name
    created = _invoke(client, create_config(cache_name))
    assert created.get_message_type() == CREATE_CONFIG + 1
    config = _invoke(client, request(GET_CONFIG, (), [text(name), text(cache_name)]))
    config.next_frame()
    assert not CodecUtil.next_frame_is_null_frame(config), "the created config is found"
    put = [("bool", False), ("int", -1)]
    assert _decode_data(client, _on_key(client, PUT, name, "k", put, [_data(client, "v1"), None])) is None
    get_put = [("bool", True), ("int", -1)]
    old = _on_key(client, PUT, name, "k", get_put, [_data(client, "v2"), None])
    assert _decode_data(client, old) == "v1", "put with get=true answers the old value"
    assert _decode_data(client, _on_key(client, GET, name, "k", (), [None])) == "v2"
    assert _boolean(_on_key(client, CONTAINS_KEY, name, "k")) is True
    assert _boolean(_on_key(client, CONTAINS_KEY, name, "absent")) is False
    wrong = _on_key(client, REMOVE, name, "k", [("int", -1)], [_data(client, "nope")])
    assert _boolean(wrong) is False, "remove with a wrong current value"
    assert _boolean(_on_key(client, REMOVE, name, "k", [("int", -1)], [None])) is True
    assert _decode_data(client, _on_key(client, GET, name, "k", (), [None])) is None
    destroyed = _invoke(client, request(DESTROY, (), [text(name)]))
    assert destroyed.get_message_type() == DESTROY + 1
    with pytest.raises(HazelcastError, match="CacheNotExistsException"):
        _on_key(client, GET, name, "k", (), [None])


def test_a_created_cache_answers_conditional_writes_and_its_size(client, cache_name):
    name = PREFIX + cache_name
    _invoke(client, create_config(cache_name))
    assert _int(_invoke(client, request(SIZE, (), [text(name)]))) == 0
    completion = [("int", -1)]
    absent = _on_key(client, PUT_IF_ABSENT, name, "k", completion, [_data(client, "v1"), None])
    assert _boolean(absent) is True
    present = _on_key(client, PUT_IF_ABSENT, name, "k", completion, [_data(client, "v2"), None])
    assert _boolean(present) is False, "putIfAbsent of a present key"
    wrong_old = _on_key(client, REPLACE, name, "k", completion, [_data(client, "x"), _data(client, "v3"), None])
    assert _decode_data(client, wrong_old) is False, "replace with a wrong old value"
    right_old = _on_key(client, REPLACE, name, "k", completion, [_data(client, "v1"), _data(client, "v3"), None])
    assert _decode_data(client, right_old) is True
    unconditional = _on_key(client, REPLACE, name, "absent", completion, [None, _data(client, "v"), None])
    assert _decode_data(client, unconditional) is False, "replace of an absent key"
    assert _decode_data(client, _on_key(client, GET_AND_REMOVE, name, "k", completion)) == "v3"
    assert _decode_data(client, _on_key(client, GET_AND_REMOVE, name, "k", completion)) is None
    for i in range(50):
        _on_key(client, PUT, name, "s%d" % i, [("bool", False), ("int", -1)], [_data(client, i), None])
    assert _int(_invoke(client, request(SIZE, (), [text(name)]))) == 50
    _invoke(client, request(CLEAR, (), [text(name)]))
    assert _int(_invoke(client, request(SIZE, (), [text(name)]))) == 0
    _invoke(client, request(DESTROY, (), [text(name)]))


def _int(answer):
    return struct.unpack_from("<i", answer.start_frame.buf, RESPONSE_HEADER_SIZE)[0]


SET_EXPIRY_POLICY = 0x132100


def _set_expiry_policy(client, name, key, policy):
    buf = request(SET_EXPIRY_POLICY, (), [text(name), structure(fields=[_data(client, key)]), _frame(policy)])
    return _boolean(_invoke(client, buf, _key_partition(client, key)))


def test_an_operations_policy_and_an_entrys_own_govern_its_expiry(client, cache_name):
    """A put's TouchedExpiryPolicy (1.5 s from each access) and setExpiryPolicy's (the entry's own
    from then on) expire their entries; an entry under the cache's eternal policy stays."""
    name = PREFIX + cache_name
    _invoke(client, create_config(cache_name))
    put = [("bool", False), ("int", -1)]
    _on_key(client, PUT, name, "short", put, [_data(client, "v"), _frame(TOUCHED_1500_MS)])
    for key in ("own", "eternal"):
        _on_key(client, PUT, name, key, put, [_data(client, "v"), None])
    assert _set_expiry_policy(client, name, "own", TOUCHED_1500_MS) is True
    assert _set_expiry_policy(client, name, "absent", TOUCHED_1500_MS) is False, "no such entry"
    assert _decode_data(client, _on_key(client, GET, name, "short", (), [None])) == "v"
    time.sleep(2.5)
    for key in ("short", "own"):
        assert _decode_data(client, _on_key(client, GET, name, key, (), [None])) is None, key
    assert _decode_data(client, _on_key(client, GET, name, "eternal", (), [None])) == "v"
    _invoke(client, request(DESTROY, (), [text(name)]))


def _get_all(client, name, keys, policy=None):
    keys = structure(fields=[_data(client, key) for key in keys])
    answer = _invoke(client, request(GET_ALL, (), [text(name), keys, None if policy is None else _frame(policy)]))
    answer.next_frame()  # the initial frame
    pairs = EntryListCodec.decode(answer, DataCodec.decode, DataCodec.decode)
    to_object = client._serialization_service.to_object
    return {to_object(key): to_object(value) for key, value in pairs}


def test_get_all_reads_are_accesses(client, cache_name):
    """getAll with a TouchedExpiryPolicy (1.5 s from each access) gives the entries it reads
    that access duration, as get does; an entry it does not read stays."""
    name = PREFIX + cache_name
    _invoke(client, create_config(cache_name))
    put = [("bool", False), ("int", -1)]
    for key in ("a", "b", "untouched"):
        _on_key(client, PUT, name, key, put, [_data(client, "v-" + key), None])
    assert _get_all(client, name, ["a", "b", "absent"], TOUCHED_1500_MS) == {"a": "v-a", "b": "v-b"}
    assert _get_all(client, name, ["a"]) == {"a": "v-a"}, "without a policy: the cache's (eternal)"
    time.sleep(2.5)
    assert _get_all(client, name, ["a", "b", "untouched"]) == {"untouched": "v-untouched"}
    _invoke(client, request(DESTROY, (), [text(name)]))


def test_a_policy_of_a_class_the_member_lacks_fails_naming_it(client, cache_name):
    name = PREFIX + cache_name
    _invoke(client, create_config(cache_name))
    put = [("bool", False), ("int", -1)]
    with pytest.raises(HazelcastError) as raised:
        _on_key(client, PUT, name, "k", put, [_data(client, "v"), _frame(UNKNOWN_POLICY)])
    assert "ClassNotFoundException" in str(raised.value) and UNKNOWN_POLICY_CLASS in str(raised.value)
    assert _decode_data(client, _on_key(client, GET, name, "k", (), [None])) is None, "nothing was put"
    with pytest.raises(HazelcastError, match="ClassNotFoundException"):
        _invoke(client, create_config(cache_name + "-unknown", expiry_factory=UNKNOWN_POLICY))
    _invoke(client, request(DESTROY, (), [text(name)]))


def _load_all(client, name, key):
    return _invoke(client, request(LOAD_ALL, [("bool", True)], [text(name), structure(fields=[_data(client, key)])]))


def test_a_cache_whose_loader_and_writer_the_member_lacks_fails_only_what_needs_them(client, cache_name):
    """A configuration may name a CacheLoader and a CacheWriter the member has no class of (Java
    code): accepted; a get that misses needs the loader when read-through (CacheLoaderException),
    loadAll always; a write or a remove needs the writer when write-through (CacheWriterException)."""
    put = [("bool", False), ("int", -1)]
    plain = cache_name + "-plain"
    _invoke(client, create_config(plain))
    _load_all(client, PREFIX + plain, "absent")  # no loader: nothing to load
    _invoke(client, create_config(cache_name, loader=MISSING_LOADER_FACTORY))
    name = PREFIX + cache_name
    _on_key(client, PUT, name, "k", put, [_data(client, "v"), None])
    assert _decode_data(client, _on_key(client, GET, name, "absent", (), [None])) is None, "not read-through"
    with pytest.raises(HazelcastError, match="CacheLoaderException: Exception in CacheLoader during loadAll"):
        _load_all(client, name, "absent")
    through = cache_name + "-read-through"
    _invoke(client, create_config(through, loader=MISSING_LOADER_FACTORY, read_through=True))
    _on_key(client, PUT, PREFIX + through, "k", put, [_data(client, "v"), None])
    assert _decode_data(client, _on_key(client, GET, PREFIX + through, "k", (), [None])) == "v"
    with pytest.raises(HazelcastError, match="CacheLoaderException: Exception in CacheLoader during load"):
        _on_key(client, GET, PREFIX + through, "absent", (), [None])
    writing = cache_name + "-write-through"
    _invoke(client, create_config(writing, writer=MISSING_WRITER_FACTORY, write_through=True))
    with pytest.raises(HazelcastError, match="CacheWriterException: Exception in CacheWriter during write"):
        _on_key(client, PUT, PREFIX + writing, "k", put, [_data(client, "v"), None])
    with pytest.raises(HazelcastError, match="CacheWriterException: Exception in CacheWriter during delete"):
        _on_key(client, REMOVE, PREFIX + writing, "k", [("int", -1)], [None])
    assert _decode_data(client, _on_key(client, GET, PREFIX + writing, "k", (), [None])) is None
    quiet = cache_name + "-writer"
    _invoke(client, create_config(quiet, writer=MISSING_WRITER_FACTORY))
    _on_key(client, PUT, PREFIX + quiet, "k", put, [_data(client, "v"), None])
    for each in (plain, cache_name, through, writing, quiet):
        _invoke(client, request(DESTROY, (), [text(PREFIX + each)]))



def test_a_full_cache_evicts_to_its_share_per_partition(client, cache_name):
    """ENTRY_COUNT 1000 over 271 partitions: each partition keeps 13 entries at most (Hazelcast's
    balanced share, 3.7, plus 5 standard deviations); the size is each partition's keys, capped."""
    name = PREFIX + cache_name
    _invoke(client, create_config(cache_name, eviction_holder=eviction(size=1000)))
    keys = ["k%d" % i for i in range(4000)]
    put = [("bool", False), ("int", -1)]
    for key in keys:
        _on_key(client, PUT, name, key, put, [_data(client, "v"), None])
    per_partition = {}
    for key in keys:
        partition = _key_partition(client, key)
        per_partition[partition] = per_partition.get(partition, 0) + 1
    expected = sum(min(count, 13) for count in per_partition.values())
    assert _int(_invoke(client, request(SIZE, (), [text(name)]))) == expected
    assert _decode_data(client, _on_key(client, GET, name, keys[-1], (), [None])) == "v", "the last put stays"
    _invoke(client, request(DESTROY, (), [text(name)]))
