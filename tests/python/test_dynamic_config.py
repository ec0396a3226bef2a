"""Dynamic configuration: DynamicConfig.add*Config (service 0x1B), as the Java client's
`client.getConfig().addMapConfig(...)` sends it (`dynamic_config.py` builds the requests; the
Python client has no such API). Runs against ferrogrid and a real Hazelcast 5.6.0 member, with
smart and unisocket routing.

What Hazelcast 5.6.0 does (and these tests hold):
  * an added configuration governs the objects of its name (or of the names its pattern
    matches) created afterwards: a map's time-to-live, a queue's, list's or set's max size, a
    ringbuffer's capacity, a multimap's value collection, a flake id generator's node id offset;
  * the static configuration is searched first: a dynamic entry for a name that a static pattern
    matches is accepted but the static entry governs;
  * the same definition again is accepted; another one for the same name is refused with
    InvalidConfigurationException, as is one that differs from a static entry of exactly that
    name (one equal to it is accepted);
  * settings Java refuses are refused: an unknown eviction policy (IllegalArgumentException,
    "No enum constant ..."), more than 6 backups;
  * executor, durable executor and scheduled executor configurations are accepted and kept
    (a conflicting one is refused) although ferrogrid has no executors, and so are data
    connection configurations; a WAN replication configuration is refused
    (UnsupportedOperationException "Adding new WAN config is not supported."), and a vector
    collection one is unknown to the open-source member (UnsupportedOperationException).
"""

import time

import pytest
from hazelcast.errors import IllegalArgumentError, InvalidConfigurationError, UnsupportedOperationError

import dynamic_config as dc
from conftest import unique_name


def added(client, request):
    assert dc.add(client, request).result() is None


def test_map_config_governs_maps_created_after_it(client, request):
    name = unique_name(request)
    added(client, dc.map_config(name, ttl=30, max_idle=40))
    m = client.get_map(name).blocking()
    m.put("k", "v")
    view = m.get_entry_view("k")
    assert (view.ttl, view.max_idle) == (30_000, 40_000)
    other = client.get_map(name + "-other").blocking()
    other.put("k", "v")
    assert other.get_entry_view("k").ttl != 30_000, "another name keeps the default"


def test_map_config_with_a_pattern_governs_matching_names(client, request):
    base = unique_name(request)
    added(client, dc.map_config(base + "-*", ttl=25))
    m = client.get_map(base + "-orders").blocking()
    m.put(1, 1)
    assert m.get_entry_view(1).ttl == 25_000


def test_map_entries_expire_by_the_added_time_to_live(client, request):
    name = unique_name(request)
    added(client, dc.map_config(name, ttl=1))
    m = client.get_map(name).blocking()
    put_at = time.monotonic()
    m.put_all({i: i for i in range(20)})
    view = m.get_entry_view(0)
    if view is None:
        # Only a slow machine gets here: the entry may be gone once its time-to-live is up.
        assert time.monotonic() - put_at >= 1.0, "the entry vanished before its time-to-live"
    else:
        assert view.ttl == 1000
    deadline = time.monotonic() + 10
    while m.get(0) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    # A read sees an expired entry as absent (size may count it until the sweep removes it).
    assert [m.get(i) for i in range(20)] == [None] * 20


def test_the_static_configuration_is_searched_first(client, request):
    # member-config.yaml: ttl-* has time-to-live-seconds 2.
    name = unique_name(request, prefix="ttl")
    added(client, dc.map_config(name, ttl=77))
    m = client.get_map(name).blocking()
    m.put("k", "v")
    assert m.get_entry_view("k").ttl == 2000


def test_the_same_definition_again_is_accepted_another_is_refused(client, request):
    name = unique_name(request)
    added(client, dc.map_config(name, ttl=5))
    added(client, dc.map_config(name, ttl=5))
    with pytest.raises(InvalidConfigurationError, match="conflicting"):
        dc.add(client, dc.map_config(name, ttl=6)).result()
    with pytest.raises(InvalidConfigurationError):
        dc.add(client, dc.map_config(name, ttl=5, backup_count=2)).result()
    m = client.get_map(name).blocking()
    m.put("k", "v")
    assert m.get_entry_view("k").ttl == 5000, "the first definition stays"


def test_a_definition_against_a_static_entry_of_its_name(client):
    # member-config.yaml's entry "ttl-*" (a name as far as this check goes): time-to-live 2.
    added(client, dc.map_config("ttl-*", ttl=2))
    with pytest.raises(InvalidConfigurationError, match="static"):
        dc.add(client, dc.map_config("ttl-*", ttl=3)).result()


def test_each_kind_keeps_its_own_names(client, request):
    name = unique_name(request)
    added(client, dc.map_config(name, ttl=5))
    added(client, dc.queue_config(name, max_size=5))
    added(client, dc.executor_config(name))
    added(client, dc.durable_executor_config(name))
    added(client, dc.scheduled_executor_config(name))
    with pytest.raises(InvalidConfigurationError):
        dc.add(client, dc.executor_config(name, pool_size=3)).result()
    added(client, dc.executor_config(name))


def test_queue_list_and_set_max_size(client, request):
    name = unique_name(request)
    added(client, dc.queue_config(name, max_size=2))
    added(client, dc.collection_config(name, is_set=False, max_size=2))
    added(client, dc.collection_config(name, is_set=True, max_size=2))
    q = client.get_queue(name).blocking()
    assert [q.offer(1), q.offer(2), q.offer(3)] == [True, True, False]
    assert q.remaining_capacity() == 0
    items = client.get_list(name).blocking()
    assert [items.add(1), items.add(2), items.add(3)] == [True, True, False]
    s = client.get_set(name).blocking()
    assert [s.add(1), s.add(2), s.add(3)] == [True, True, False]


def test_ringbuffer_capacity_and_reliable_topic(client, request):
    name = unique_name(request)
    added(client, dc.ringbuffer_config(name, capacity=5))
    rb = client.get_ringbuffer(name).blocking()
    assert rb.capacity() == 5
    for i in range(7):
        rb.add(i)
    assert (rb.head_sequence(), rb.tail_sequence()) == (2, 6)
    added(client, dc.reliable_topic_config(name))
    added(client, dc.topic_config(name))


def test_multimap_value_collection_list(client, request):
    name = unique_name(request)
    added(client, dc.multimap_config(name, "LIST"))
    mm = client.get_multi_map(name).blocking()
    mm.put("k", "a")
    mm.put("k", "a")
    assert mm.value_count("k") == 2
    default = client.get_multi_map(name + "-set").blocking()
    default.put("k", "a")
    default.put("k", "a")
    assert default.value_count("k") == 1


def test_flake_id_node_id_offset(client, request):
    name = unique_name(request)
    added(client, dc.flake_id_config(name, node_id_offset=1000))
    node_id = client.get_flake_id_generator(name).blocking().new_id() & 0xFFFF
    assert 1000 <= node_id < 1100
    plain = client.get_flake_id_generator(name + "-plain").blocking().new_id() & 0xFFFF
    assert plain < 100


def test_replicated_map_pn_counter_and_cardinality_estimator_configs(client, request):
    name = unique_name(request)
    added(client, dc.replicated_map_config(name, in_memory_format="BINARY"))
    added(client, dc.pn_counter_config(name, replica_count=1))
    added(client, dc.cardinality_estimator_config(name, backup_count=2))
    rm = client.get_replicated_map(name).blocking()
    rm.put("k", "v")
    assert rm.get("k") == "v"
    counter = client.get_pn_counter(name).blocking()
    assert counter.add_and_get(3) == 3
    with pytest.raises(InvalidConfigurationError):
        dc.add(client, dc.pn_counter_config(name, replica_count=2)).result()


def test_settings_java_refuses_are_refused(client, request):
    name = unique_name(request)
    with pytest.raises(IllegalArgumentError, match="No enum constant com.hazelcast.config.EvictionPolicy.FOO"):
        dc.add(client, dc.map_config(name, evict=dc.eviction(10, "PER_NODE", "FOO"))).result()
    with pytest.raises(IllegalArgumentError, match="No enum constant com.hazelcast.config.MaxSizePolicy.FOO"):
        dc.add(client, dc.map_config(name, evict=dc.eviction(10, "FOO", "LRU"))).result()
    with pytest.raises(IllegalArgumentError, match="backup-count can't be larger than than 6"):
        dc.add(client, dc.map_config(name, backup_count=7)).result()
    # Nothing was kept: a valid definition of that name is accepted afterwards.
    added(client, dc.map_config(name, evict=dc.eviction(10, "PER_NODE", "LRU")))


def test_data_connection_wan_and_vector_collection_configs(client, request):
    name = unique_name(request)
    added(client, dc.data_connection_config(name))
    added(client, dc.data_connection_config(name))
    with pytest.raises(InvalidConfigurationError):
        dc.add(client, dc.data_connection_config(name, shared=False)).result()
    with pytest.raises(UnsupportedOperationError, match="Adding new WAN config is not supported."):
        dc.add(client, dc.wan_replication_config(name)).result()
    with pytest.raises(UnsupportedOperationError, match="0x1b1400"):
        dc.add(client, dc.vector_collection_config(name)).result()


@pytest.mark.ferrogrid_only
def test_a_max_size_policy_ferrogrid_does_not_have_is_refused(client, request):
    # Hazelcast accepts USED_HEAP_PERCENTAGE; ferrogrid refuses it, as its static reader does.
    name = unique_name(request)
    with pytest.raises(InvalidConfigurationError, match="USED_HEAP_PERCENTAGE is not supported"):
        dc.add(client, dc.map_config(name, evict=dc.eviction(10, "USED_HEAP_PERCENTAGE", "LRU"))).result()
