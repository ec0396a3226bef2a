"""PNCounter (service 0x1D: PNCounter.Get 0x1D0100, Add 0x1D0200, GetConfiguredReplicaCount
0x1D0300), as a user of the Python client sees it. Runs against ferrogrid and against a real
Hazelcast 5.6.0 member, with smart and unisocket routing.

member-config.yaml: pn-two-* counters have replica-count 2; any other counter has Hazelcast's
default, Integer.MAX_VALUE (every member is a replica).

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * a new counter reads 0; every add answers the value after it (add_and_get, the increment /
    decrement variants) or before it (get_and_add, get_and_subtract, ...); subtract is an add of
    the negated delta;
  * values are Java longs: Long.MAX_VALUE + 1 wraps around to Long.MIN_VALUE, and so on;
  * an add of Long.MIN_VALUE fails with java.lang.StackOverflowError (Hazelcast negates a
    negative delta and subtracts, which negates it back: -Long.MIN_VALUE is itself) and changes
    nothing;
  * every answer carries the replica's vector clock, which the proxy keeps and sends with its
    next request: one entry per replica, a random replica id drawn when the counter is created
    on the member, starting at Long.MIN_VALUE and one further per add (an add of 0 included);
  * a replica behind the clock the client observed (or without the counter at all) refuses with
    ConsistencyLostException; reset() forgets the observed clock, and the next request works;
  * a request for a target uuid that is no member fails with TargetNotMemberException (53),
    before anything runs; the proxy then tries another replica;
  * getConfiguredReplicaCount answers the configured replica-count (default 2147483647);
  * destroy drops the counter: a NEW proxy of the name reads 0, while the old proxy (whose clock
    names the destroyed replica) gets ConsistencyLostError until reset(); the counter is listed
    as hz:impl:PNCounterService while it exists.
"""

import threading
import uuid

import pytest
from hazelcast.errors import ConsistencyLostError, HazelcastError
from hazelcast.protocol.codec import (
    pn_counter_add_codec,
    pn_counter_get_codec,
    pn_counter_get_configured_replica_count_codec,
)

import wire
from conftest import unique_name
from helpers import LONG_MAX, destroy_after, server_error_line

LONG_MIN = -(2**63)
SERVICE = "hz:impl:PNCounterService"
INTEGER_MAX = 2**31 - 1


def make(client, request, prefix="pn"):
    return client.get_pn_counter(unique_name(request, prefix)).blocking()


@pytest.fixture
def counter(client, request):
    yield from destroy_after(make(client, request))


def observed_clock(proxy):
    """The vector clock the proxy observed last: [(replica uuid, timestamp)]."""
    return proxy._wrapped._observed_clock.entry_set()


def configured_replica_count(proxy):
    """PNCounter.GetConfiguredReplicaCount, sent as the proxy sends it (to any member)."""
    request = pn_counter_get_configured_replica_count_codec.encode_request(proxy.name)
    return proxy._wrapped._invoke(request, pn_counter_get_configured_replica_count_codec.decode_response).result()


def test_a_new_counter_reads_zero(counter):
    assert counter.get() == 0
    [(replica, timestamp)] = observed_clock(counter)
    assert timestamp == LONG_MIN, "a replica's clock starts at Long.MIN_VALUE"
    assert replica is not None


def test_add_and_get_answers_the_value_after_and_get_and_add_the_value_before(counter):
    assert counter.add_and_get(5) == 5
    assert counter.get_and_add(3) == 5
    assert counter.get() == 8
    assert counter.add_and_get(-10) == -2
    assert counter.get_and_add(-2) == -2
    assert counter.get() == -4


def test_subtract_variants(counter):
    assert counter.subtract_and_get(3) == -3
    assert counter.get_and_subtract(4) == -3
    assert counter.get() == -7
    assert counter.subtract_and_get(-10) == 3, "subtracting a negative delta adds"
    assert counter.get_and_subtract(-1) == 3
    assert counter.get() == 4


def test_increment_and_decrement_variants(counter):
    assert counter.increment_and_get() == 1
    assert counter.get_and_increment() == 1
    assert counter.get() == 2
    assert counter.decrement_and_get() == 1
    assert counter.get_and_decrement() == 1
    assert counter.get_and_decrement() == 0
    assert counter.get() == -1


def test_every_add_moves_the_replica_clock_one_step(counter):
    for _ in range(3):
        counter.increment_and_get()
    counter.add_and_get(0)
    [(replica, timestamp)] = observed_clock(counter)
    assert timestamp == LONG_MIN + 4, "three increments and an add of 0"
    assert counter.get() == 3
    assert observed_clock(counter) == [(replica, LONG_MIN + 4)], "a get does not move the clock"


def test_negative_values(counter):
    assert counter.add_and_get(-(10**15)) == -(10**15)
    assert counter.add_and_get(-(10**15)) == -2 * 10**15
    assert counter.add_and_get(3 * 10**15) == 10**15


def test_values_wrap_around_as_java_longs(counter):
    assert counter.add_and_get(LONG_MAX) == LONG_MAX
    assert counter.increment_and_get() == LONG_MIN
    assert counter.get_and_add(-5) == LONG_MIN
    assert counter.get() == LONG_MAX - 4
    assert counter.add_and_get(10) == LONG_MIN + 5
    assert counter.subtract_and_get(6) == LONG_MAX


def answered_within(future, seconds):
    answered = threading.Event()
    future.add_done_callback(lambda _: answered.set())
    return answered.wait(seconds)


# Hazelcast's PNCounterImpl recurses between addAndGet and subtractAndGet for Long.MIN_VALUE,
# taking its state write lock at every level. Where the StackOverflowError strikes depends on the
# JIT's frames; when it strikes inside a lock() that already counted the hold, nothing unlocks it,
# and the counter answers nobody again (seen in CI: a get after the error waited 60 s).
# ferrogrid must answer every call and stay usable.
WEDGED = "Hazelcast's PN counter kept its state lock after the StackOverflowError (a known hazard)"


def test_adding_long_min_value_fails_with_a_stack_overflow_and_changes_nothing(counter, target):
    counter.add_and_get(7)
    clock = observed_clock(counter)
    with pytest.raises(HazelcastError) as raised:
        counter.add_and_get(LONG_MIN)
    assert "java.lang.StackOverflowError" in server_error_line(raised.value)
    future = counter._wrapped.get_and_add(LONG_MIN)
    if answered_within(future, 10):
        with pytest.raises(HazelcastError):
            future.result()
    elif target == "hazelcast":
        pytest.xfail(WEDGED)
    else:
        pytest.fail("no answer to getAndAdd(Long.MIN_VALUE) within 10 s")
    value = counter._wrapped.get()
    if not answered_within(value, 10):
        if target == "hazelcast":
            pytest.xfail(WEDGED)
        pytest.fail("no answer to get() after Long.MIN_VALUE within 10 s")
    assert value.result() == 7
    assert observed_clock(counter) == clock
    assert counter.subtract_and_get(LONG_MAX) == 7 - LONG_MAX, "Long.MAX_VALUE is an ordinary delta"


def test_counters_are_independent(client, request):
    counters = [make(client, request, "pn-%d" % i) for i in range(3)]
    try:
        for i, proxy in enumerate(counters):
            proxy.add_and_get(10 * (i + 1))
        counters[1].decrement_and_get()
        assert [proxy.get() for proxy in counters] == [10, 19, 30]
        again = client.get_pn_counter(counters[2].name).blocking()
        assert again.get() == 30, "another proxy of the same name sees the same counter"
    finally:
        for proxy in counters:
            proxy.destroy()


def test_concurrent_adds_all_count(client, request):
    counter = make(client, request)
    threads, per_thread = 4, 100

    def work(sign):
        for _ in range(per_thread):
            counter.add_and_get(sign * 3)

    workers = [threading.Thread(target=work, args=(1 if i % 2 == 0 else -2,)) for i in range(threads)]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
        assert not any(worker.is_alive() for worker in workers)
        assert counter.get() == 2 * per_thread * 3 - 2 * per_thread * 6
    finally:
        counter.destroy()


def test_configured_replica_count(client, request):
    default = make(client, request, "pn")
    two = make(client, request, "pn-two")
    assert configured_replica_count(default) == INTEGER_MAX
    assert configured_replica_count(two) == 2
    assert two.add_and_get(4) == 4, "one member: the only replica whatever the count"
    two.destroy()


def test_a_replica_behind_the_observed_clock_refuses_until_reset(counter):
    counter.add_and_get(2)
    [(replica, timestamp)] = observed_clock(counter)
    counter._wrapped._observed_clock.set_replica_timestamp(replica, timestamp + 5)
    with pytest.raises(ConsistencyLostError):
        counter.get()
    with pytest.raises(ConsistencyLostError):
        counter.increment_and_get()
    counter.reset()
    assert observed_clock(counter) == []
    assert counter.get() == 2, "the refused add did not run"


def test_a_replica_that_never_saw_an_observed_replica_refuses(counter, client):
    counter.add_and_get(1)
    [(replica, timestamp)] = observed_clock(counter)
    other = type(replica)(int=replica.int ^ 1)
    counter._wrapped._observed_clock.set_replica_timestamp(other, LONG_MIN)
    with pytest.raises(ConsistencyLostError):
        counter.get()
    counter.reset()
    assert counter.get() == 1


def test_destroy_drops_the_counter(client, request):
    name = unique_name(request, "pn")
    counter = client.get_pn_counter(name).blocking()
    counter.add_and_get(42)
    listed = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert (SERVICE, name) in listed
    counter.destroy()
    listed = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert (SERVICE, name) not in listed
    with pytest.raises(ConsistencyLostError):
        counter.get()  # the old proxy's clock names a replica no member holds any more
    fresh = client.get_pn_counter(name).blocking()
    assert fresh.get() == 0
    assert fresh.increment_and_get() == 1
    counter.reset()
    assert counter.get() == 1, "after reset the old proxy reads the new counter"
    fresh.destroy()


def raw_call(member, message):
    """Sends one request built by the Python client's codec on a fresh raw connection."""
    conn = wire.Connection(member.host, member.port)
    try:
        wire.authenticate(conn)
        correlation_id = conn.next_correlation_id()
        message.set_correlation_id(correlation_id)
        message.set_partition_id(-1)
        conn.send(bytes(message.buf))
        return conn.read_response(correlation_id)
    finally:
        conn.close()


def test_a_request_for_a_target_that_is_no_member_is_refused(member, request):
    name = unique_name(request, "pn")
    stranger = uuid.uuid4()
    for message in (
        pn_counter_add_codec.encode_request(name, 5, False, [], stranger),
        pn_counter_get_codec.encode_request(name, [], stranger),
    ):
        [(code, class_name, _)] = wire.decode_error(raw_call(member, message))[:1]
        assert (code, class_name) == (53, "com.hazelcast.spi.exception.TargetNotMemberException")
    conn = wire.Connection(member.host, member.port)
    try:
        target = wire.authenticate(conn)["member_uuid"]
    finally:
        conn.close()
    answer = raw_call(member, pn_counter_get_codec.encode_request(name, [], target))
    assert answer.message_type == 0x1D0101, "the member itself answers"
    value = int.from_bytes(answer.response_fixed()[:8], "little", signed=True)
    assert value == 0, "the refused add did not run"
