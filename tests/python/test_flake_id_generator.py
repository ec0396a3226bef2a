"""FlakeIdGenerator (service 0x1C: FlakeIdGenerator.NewIdBatch 0x1C0100), as a user of the
Python client sees it. Runs against ferrogrid and against a real Hazelcast 5.6.0 member.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * an id is (ms since epoch-start) << (bits-sequence + bits-node-id) | sequence <<
    bits-node-id | node id; the node id is the member's member-list join version (1 for the
    only member of a cluster) plus node-id-offset; defaults: epoch 2018-01-01T00:00:00Z,
    6 sequence bits, 16 node id bits;
  * NewIdBatch(name, n) answers (base, increment, n): ids base + i * increment, increment
    = 2^bits-node-id; batches of one generator from one member only grow, past 2^bits-sequence
    ids a millisecond too (the sequence runs ahead of the clock); a batch that would end more
    than allowed-future-millis ahead of the clock is answered only once the clock caught up;
  * a batch size below 1 is refused (IllegalArgumentException); a node id that does not fit
    bits-node-id on any member is refused with HazelcastException "All members have node ID
    out of range. Cluster restart is required";
  * the member's prefetch-count and prefetch-validity-millis do not size a client's batches:
    the client asks for its own prefetch_count (default 100) and drops a batch after its own
    prefetch_validity;
  * the generator is a distributed object (listed once its proxy exists, gone after destroy);
    destroy keeps ids unique: a generator used again after it issues new, later ids.

The generators' configs are in member-config.yaml (flake-layout-*, flake-overflow-*,
flake-future-*, flake-prefetch-*). Low-level batch checks call the client's
FlakeIdGenerator._new_id_batch (the request new_id() sends when its batch runs out).
"""

import time

import pytest
from hazelcast.errors import HazelcastError, IllegalArgumentError

from helpers import destroy_after

DEFAULT_EPOCH_MS = 1514764800000
LAYOUT_EPOCH_MS = 1600000000000
# The only member of a fresh cluster joined at member-list version 1 (both targets).
SINGLE_MEMBER_NODE_ID = 1


@pytest.fixture
def generator_name(request):
    from conftest import unique_name

    return unique_name(request, "flake")


def generator_named(client, prefix, request):
    from conftest import unique_name

    return client.get_flake_id_generator(unique_name(request, prefix))


@pytest.fixture
def generator(client, generator_name):
    yield from destroy_after(client.get_flake_id_generator(generator_name).blocking())


def batch(generator, size):
    """(base, increment, size) of one NewIdBatch request."""
    proxy = getattr(generator, "_wrapped", generator)
    result = proxy._new_id_batch(size).result()
    return result._base, result._increment, result._batch_size


def now_ms():
    return int(time.time() * 1000)


def test_ids_are_unique_and_increasing(generator):
    ids = [generator.new_id() for _ in range(1_000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids), "one client's ids from one member only grow"
    assert all(isinstance(i, int) and 0 < i < 2**63 for i in ids)


def test_an_id_is_timestamp_sequence_and_node_id(generator):
    before = now_ms()
    ids = [generator.new_id() for _ in range(5)]
    after = now_ms()
    assert {i & 0xFFFF for i in ids} == {SINGLE_MEMBER_NODE_ID}
    assert [i - ids[0] for i in ids] == [k << 16 for k in range(5)], "one batch: increment 2^16"
    timestamp = (ids[0] >> 22) + DEFAULT_EPOCH_MS
    assert before - 2_000 <= timestamp <= after + 2_000, (before, timestamp, after)


def test_a_batch_is_base_increment_and_size(client, generator_name):
    generator = client.get_flake_id_generator(generator_name)
    try:
        base, increment, size = batch(generator, 10)
        assert (increment, size) == (1 << 16, 10)
        assert base & 0xFFFF == SINGLE_MEMBER_NODE_ID
        next_base, _, next_size = batch(generator, 1_000)
        assert next_size == 1_000
        assert next_base >= base + 10 * increment, "the next batch starts after the last id of the first"
    finally:
        generator.destroy()


def test_more_ids_than_the_sequence_holds_in_a_millisecond_run_ahead(client, generator_name):
    # 6 sequence bits: 64 ids a ms; a batch of 64,000 covers 1,000 ms, which the next starts after.
    generator = client.get_flake_id_generator(generator_name)
    try:
        base, increment, _ = batch(generator, 64_000)
        last = base + 63_999 * increment
        assert (last >> 22) - (base >> 22) == 999
        next_base, _, _ = batch(generator, 1)
        assert next_base > last
        assert (next_base >> 22) + DEFAULT_EPOCH_MS >= (last >> 22) + DEFAULT_EPOCH_MS
    finally:
        generator.destroy()


def test_many_batches_stay_unique(client_factory, generator_name):
    client = client_factory(flake_id_generators={generator_name: {"prefetch_count": 10}})
    generator = client.get_flake_id_generator(generator_name).blocking()
    try:
        ids = [generator.new_id() for _ in range(5_000)]  # 500 batches
        assert len(set(ids)) == len(ids)
        assert ids == sorted(ids)
    finally:
        generator.destroy()


def test_several_generators_each_give_unique_ids(client, request):
    generators = [generator_named(client, "flake-several", request).blocking() for _ in range(4)]
    try:
        ids = {g.name: [] for g in generators}
        for _ in range(300):
            for g in generators:
                ids[g.name].append(g.new_id())
        for name, issued in ids.items():
            assert len(set(issued)) == len(issued), name
            assert issued == sorted(issued), name
    finally:
        for g in generators:
            g.destroy()


def test_the_client_prefetch_count_sizes_the_batches(client_factory, generator_name):
    client = client_factory(flake_id_generators={generator_name: {"prefetch_count": 7}})
    generator = client.get_flake_id_generator(generator_name).blocking()
    try:
        ids = [generator.new_id() for _ in range(14)]
        first, second = ids[:7], ids[7:]
        assert [i - first[0] for i in first] == [k << 16 for k in range(7)]
        assert [i - second[0] for i in second] == [k << 16 for k in range(7)]
        assert second[0] > first[-1]
    finally:
        generator.destroy()


def test_the_client_prefetch_validity_drops_an_old_batch(client_factory, generator_name):
    client = client_factory(flake_id_generators={generator_name: {"prefetch_validity": 0.2}})
    generator = client.get_flake_id_generator(generator_name).blocking()
    try:
        first = generator.new_id()
        time.sleep(0.4)
        second = generator.new_id()
        # Not the next id of the first batch: a new batch, taken at least 0.4 s later.
        assert second != first + (1 << 16)
        assert (second >> 22) - (first >> 22) >= 350
    finally:
        generator.destroy()


def test_the_member_prefetch_settings_do_not_size_a_clients_batches(client, request):
    # flake-prefetch-*: prefetch-count 5, prefetch-validity-millis 1 on the member.
    generator = generator_named(client, "flake-prefetch", request).blocking()
    try:
        ids = [generator.new_id() for _ in range(100)]
        assert [i - ids[0] for i in ids] == [k << 16 for k in range(100)], "one batch of the client's 100"
    finally:
        generator.destroy()


def test_the_configured_layout(client, request):
    # flake-layout-*: epoch 1600000000000, node-id-offset 10, 8 sequence bits, 4 node id bits.
    generator = generator_named(client, "flake-layout", request)
    try:
        before = now_ms()
        base, increment, _ = batch(generator, 600)
        after = now_ms()
        assert increment == 16
        assert base & 15 == SINGLE_MEMBER_NODE_ID + 10
        timestamp = (base >> 12) + LAYOUT_EPOCH_MS
        assert before - 2_000 <= timestamp <= after + 2_000
        ids = [base + k * increment for k in range(600)]
        # 256 ids a ms: the timestamp moves on every 256 ids
        assert ((ids[256] >> 12) - (ids[255] >> 12), (ids[255] >> 12) - (ids[0] >> 12)) == (1, 0)
        blocking = generator.blocking()
        assert {blocking.new_id() & 15 for _ in range(10)} == {11}
    finally:
        generator.destroy()


def test_a_node_id_out_of_range_on_every_member_is_refused(client, request):
    # flake-overflow-*: node id = join version + 100, which 4 bits cannot hold.
    generator = generator_named(client, "flake-overflow", request).blocking()
    try:
        with pytest.raises(HazelcastError) as raised:
            generator.new_id()
        assert "All members have node ID out of range. Cluster restart is required" in str(raised.value)
        assert type(raised.value) is HazelcastError
    finally:
        generator.destroy()


@pytest.mark.parametrize("size", [0, -1])
def test_a_batch_size_below_one_is_refused(client, generator_name, size):
    generator = client.get_flake_id_generator(generator_name)
    try:
        with pytest.raises(IllegalArgumentError, match="batchSize"):
            batch(generator, size)
        assert batch(generator, 1)[2] == 1, "the generator still works"
    finally:
        generator.destroy()


def test_a_batch_beyond_the_allowed_future_is_answered_late(client, request):
    # flake-future-*: one id a ms, none ahead of the clock: 500 ids end 500 ms ahead.
    generator = generator_named(client, "flake-future", request)
    try:
        started = time.monotonic()
        base, increment, size = batch(generator, 500)
        elapsed = time.monotonic() - started
        assert size == 500 and increment == 1 << 16
        assert 0.4 <= elapsed <= 5.0, elapsed
        next_base, _, _ = batch(generator, 1)
        assert next_base > base + 499 * increment
    finally:
        generator.destroy()


def test_destroy_removes_the_generator_and_ids_stay_unique_after(client, generator_name):
    generator = client.get_flake_id_generator(generator_name).blocking()
    before = [generator.new_id() for _ in range(250)]
    listed = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert ("hz:impl:flakeIdGeneratorService", generator_name) in listed
    generator.destroy()
    listed = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert ("hz:impl:flakeIdGeneratorService", generator_name) not in listed
    time.sleep(0.05)  # (Hazelcast starts a generator used again from the clock)
    again = client.get_flake_id_generator(generator_name).blocking()
    try:
        after = [again.new_id() for _ in range(250)]
        assert len(set(before + after)) == 500
        assert min(after) > max(before)
    finally:
        again.destroy()


def test_new_id_through_the_non_blocking_proxy(client, generator_name):
    generator = client.get_flake_id_generator(generator_name)
    try:
        futures = [generator.new_id() for _ in range(300)]
        ids = [f.result() for f in futures]
        assert len(set(ids)) == 300
    finally:
        generator.destroy()
