"""Ringbuffer (service 0x17: Ringbuffer.Size 0x170100 … Ringbuffer.ReadMany 0x170900), as a user
of the Python client sees it. Runs against ferrogrid and against a real Hazelcast 5.6.0 member.

member-config.yaml: small-rb-* has 3 slots and no time-to-live, held-rb-* 3 slots whose items
live 600 s, expiring-rb-* 3 slots whose items live 1 s; any other ringbuffer has Hazelcast's
default config (capacity 10000, no time-to-live).

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * a new ringbuffer: capacity 10000, size 0, head_sequence 0, tail_sequence -1;
  * add answers the item's sequence (0, 1, …), add_all the sequence of its last item; a full
    ringbuffer overwrites its oldest items (the head moves up, size stays the capacity);
  * remaining_capacity is the CAPACITY when no time-to-live is configured, however full the
    ringbuffer is; with a time-to-live it is capacity − size. So OverflowPolicy.FAIL refuses
    an add (answer -1, nothing added) only on a ringbuffer with a time-to-live: without one
    a FAIL add overwrites like OVERWRITE. add_all with FAIL refuses the whole batch (-1)
    when fewer slots than items remain;
  * with a time-to-live, expired items are dropped (the head moves past them: an expired
    ringbuffer has head = tail + 1, size 0, remaining_capacity = capacity);
  * read_one(seq) of a stored sequence answers the item; read_one(tail + 1) waits for the next
    add; read_one(seq > tail + 1) raises IllegalArgumentError ("sequence:5 is too large. The
    current tailSequence is:3"); read_one(seq < head) raises StaleSequenceError ("sequence:0 is
    too small and data store is disabled. The current headSequence is:5 tailSequence is:7");
  * but a ringbuffer exists on the member only once an operation other than a read has used
    it (add, size, capacity, head/tail_sequence, remaining_capacity; getting the proxy is not
    enough, and destroy removes it): until then read_one waits WHATEVER the sequence, and the
    first add answers it (sequence 0) or fails it (IllegalArgumentError, sequence > 1) or lets
    it wait on (sequence 1). (Not tested, as it depends on arrival order: on an add, Hazelcast
    re-checks the waiting reads oldest first and stops at the first that must still wait, so
    a read_one(5) parked behind a read_one(1) stays parked until that one is answered.)
  * read_many(start, min_count, max_count) answers at most max_count items from start, waiting
    until at least min_count are there (items added while it waits count: after one add it
    keeps waiting for a min_count of 2, and an add_all of 6 then completes it with max_count
    items); read_count, next_sequence_to_read_from and get_sequence(i) describe the batch;
  * read_many does NOT raise for a start outside the ringbuffer: a start below the head reads
    from the head, a start beyond tail + 1 waits at tail + 1 (loss-tolerant reading);
  * read_many with min_count 0 and nothing to read answers at once an empty batch whose
    next_sequence_to_read_from is 0 (not tail + 1);
  * read_many with max_count 0 and an item to read fails on the member
    (ArrayIndexOutOfBoundsError: "Index 0 out of bounds for length 0"); with nothing to read
    it answers an empty batch;
  * read_many with a filter that is not a server-side IFunction (e.g. a str) raises
    ClassCastError ("class java.lang.String cannot be cast to class com.hazelcast.core.IFunction");
  * destroy drops the items and wakes every waiting read_one / read_many with
    DistributedObjectDestroyedError; the ringbuffer comes back empty.
The Python client itself checks arguments before sending: read_many's max_count must be
<= capacity (asked of the member once) and < 1000, add_all takes 1 to 1000 items.
"""

import threading
import time

import pytest
from hazelcast.errors import (
    ClassCastError,
    DistributedObjectDestroyedError,
    HazelcastError,
    IllegalArgumentError,
    StaleSequenceError,
)
from hazelcast.proxy.ringbuffer import OVERFLOW_POLICY_FAIL

from helpers import destroy_after, wait_until

DEFAULT_CAPACITY = 10000
SMALL = 3  # member-config.yaml: small-rb-*, held-rb-*, expiring-rb-* have capacity 3


def make(client, request, prefix):
    from conftest import unique_name

    return client.get_ringbuffer(unique_name(request, prefix)).blocking()


@pytest.fixture
def rb(client, request):
    yield from destroy_after(make(client, request, "rb"))


@pytest.fixture
def small(client, request):
    yield from destroy_after(make(client, request, "small-rb"))


def state(ringbuffer):
    """(size, head_sequence, tail_sequence, remaining_capacity)"""
    return (
        ringbuffer.size(),
        ringbuffer.head_sequence(),
        ringbuffer.tail_sequence(),
        ringbuffer.remaining_capacity(),
    )


def batch(result):
    """(items, read_count, next_sequence_to_read_from, sequences) of a ReadResult."""
    sequences = [result.get_sequence(i) for i in range(result.size)]
    return list(result), result.read_count, result.next_sequence_to_read_from, sequences


def in_thread(function):
    """Runs `function` in a thread; returns (thread, outcome) where outcome gets "value" or "error"."""
    outcome = {}

    def run():
        try:
            outcome["value"] = function()
        except Exception as e:  # noqa: BLE001 - handed to the test
            outcome["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_a_new_ringbuffer_is_empty_with_the_default_capacity(rb):
    assert rb.capacity() == DEFAULT_CAPACITY
    assert state(rb) == (0, 0, -1, DEFAULT_CAPACITY)


def test_add_answers_sequences_and_read_one_reads_them(rb):
    assert rb.add("a") == 0
    assert rb.add("b") == 1
    assert rb.add_all(["c", "d"]) == 3
    assert state(rb) == (4, 0, 3, DEFAULT_CAPACITY), "no time-to-live: remaining capacity is the capacity"
    assert [rb.read_one(seq) for seq in range(4)] == ["a", "b", "c", "d"]
    assert rb.read_one(1) == "b", "reading does not remove"
    assert rb.size() == 4


def test_items_of_any_type_round_trip(rb):
    items = [1, "two", 3.5, True, b"bytes", [1, 2], {"k": "v"}, -7, ""]
    assert rb.add_all(items) == len(items) - 1
    assert list(rb.read_many(0, len(items), len(items))) == items


def test_a_full_ringbuffer_overwrites_its_oldest_items(small):
    assert small.capacity() == SMALL
    assert [small.add(i) for i in range(5)] == [0, 1, 2, 3, 4]
    assert state(small) == (SMALL, 2, 4, SMALL)
    assert batch(small.read_many(2, 0, SMALL)) == ([2, 3, 4], 3, 5, [2, 3, 4])
    assert small.add_all([10, 11, 12, 13, 14]) == 9
    assert state(small) == (SMALL, 7, 9, SMALL)
    assert list(small.read_many(7, SMALL, SMALL)) == [12, 13, 14]


def test_fail_policy_without_time_to_live_still_overwrites(small):
    small.add_all([0, 1, 2])
    assert small.remaining_capacity() == SMALL, "remaining capacity is the capacity without a time-to-live"
    assert small.add("f", OVERFLOW_POLICY_FAIL) == 3
    assert small.add_all(["x", "y"], OVERFLOW_POLICY_FAIL) == 5
    assert state(small) == (SMALL, 3, 5, SMALL)
    assert list(small.read_many(3, SMALL, SMALL)) == ["f", "x", "y"]


def test_fail_policy_with_time_to_live_refuses_when_full(client, request):
    held = make(client, request, "held-rb")
    assert state(held) == (0, 0, -1, SMALL)
    assert held.add_all([1, 2]) == 1
    assert held.remaining_capacity() == 1, "with a time-to-live: capacity - size"
    assert held.add_all([3, 4], OVERFLOW_POLICY_FAIL) == -1
    assert state(held) == (2, 0, 1, 1), "nothing of a refused batch is added"
    assert held.add(3, OVERFLOW_POLICY_FAIL) == 2
    assert held.add(4, OVERFLOW_POLICY_FAIL) == -1
    assert state(held) == (SMALL, 0, 2, 0)
    assert held.add(4) == 3, "OVERWRITE overwrites an item that has not expired"
    assert state(held) == (SMALL, 1, 3, 0)
    assert list(held.read_many(1, SMALL, SMALL)) == [2, 3, 4]
    held.destroy()


def test_items_expire_after_the_time_to_live(client, request):
    expiring = make(client, request, "expiring-rb")
    assert expiring.add_all(["a", "b"]) == 1
    assert expiring.remaining_capacity() == 1
    wait_until(lambda: expiring.size() == 0, 10, message="both items expired")
    assert state(expiring) == (0, 2, 1, SMALL)
    with pytest.raises(StaleSequenceError):
        expiring.read_one(0)
    assert expiring.add("c") == 2
    assert state(expiring) == (1, 2, 2, SMALL - 1)
    assert expiring.read_one(2) == "c"
    expiring.destroy()


def test_read_one_beyond_the_tail_raises(rb):
    assert rb.tail_sequence() == -1  # the ringbuffer exists from here on (see below)
    with pytest.raises(IllegalArgumentError) as raised:
        rb.read_one(1)
    assert "too large" in str(raised.value)
    rb.add_all(["a", "b"])
    with pytest.raises(IllegalArgumentError):
        rb.read_one(3)
    assert rb.read_one(1) == "b"


def test_read_one_on_a_ringbuffer_nothing_has_used_waits_for_the_first_add(client, client_factory, request):
    untouched = make(client, request, "rb")
    other = client_factory().get_ringbuffer(untouched.name).blocking()
    first_thread, first = in_thread(lambda: untouched.read_one(0))
    far_thread, far = in_thread(lambda: untouched.read_one(5))
    time.sleep(0.5)
    assert first == {} and far == {}, "both reads wait, even the one beyond tail + 1"
    assert other.add("a") == 0
    first_thread.join(10)
    far_thread.join(10)
    assert first == {"value": "a"}
    assert isinstance(far.get("error"), IllegalArgumentError), far
    untouched.destroy()


def test_read_one_below_the_head_raises_stale_sequence(small):
    small.add_all([0, 1, 2, 3, 4])
    with pytest.raises(StaleSequenceError) as raised:
        small.read_one(1)
    assert "too small" in str(raised.value)
    assert small.read_one(2) == 2


def test_read_one_at_the_tail_waits_for_an_add(rb, client_factory):
    other = client_factory().get_ringbuffer(rb.name).blocking()
    rb.add("a")
    thread, outcome = in_thread(lambda: rb.read_one(1))
    time.sleep(0.5)
    assert outcome == {}, "read_one(tail + 1) waits"
    assert other.add("b") == 1
    thread.join(10)
    assert outcome == {"value": "b"}


def test_read_many_answers_at_most_max_count(rb):
    rb.add_all(["a", "b", "c", "d", "e", "f", "g"])
    assert batch(rb.read_many(0, 0, 3)) == (["a", "b", "c"], 3, 3, [0, 1, 2])
    assert batch(rb.read_many(2, 1, 3)) == (["c", "d", "e"], 3, 5, [2, 3, 4])
    assert batch(rb.read_many(6, 0, 3)) == (["g"], 1, 7, [6])
    assert batch(rb.read_many(0, 7, 10)) == (list("abcdefg"), 7, 7, list(range(7)))


def test_read_many_waits_for_min_count(rb, client_factory):
    other = client_factory().get_ringbuffer(rb.name).blocking()
    thread, outcome = in_thread(lambda: batch(rb.read_many(0, 2, 5)))
    time.sleep(0.3)
    other.add("a")
    time.sleep(0.5)
    assert outcome == {}, "one item is fewer than min_count"
    other.add_all(["b", "c", "d", "e", "f", "g"])
    thread.join(10)
    assert outcome == {"value": (["a", "b", "c", "d", "e"], 5, 5, [0, 1, 2, 3, 4])}


def test_read_many_from_below_the_head_reads_from_the_head(small):
    small.add_all([0, 1, 2, 3, 4])
    assert batch(small.read_many(0, 1, SMALL)) == ([2, 3, 4], 3, 5, [2, 3, 4])
    assert batch(small.read_many(0, 0, 2)) == ([2, 3], 2, 4, [2, 3])


def test_read_many_from_beyond_the_tail_waits_at_the_tail(rb, client_factory):
    other = client_factory().get_ringbuffer(rb.name).blocking()
    rb.add_all(["a", "b"])
    thread, outcome = in_thread(lambda: batch(rb.read_many(100, 1, 5)))
    time.sleep(0.5)
    assert outcome == {}, "read_many past the tail waits"
    other.add("c")
    thread.join(10)
    assert outcome == {"value": (["c"], 1, 3, [2])}


def test_read_many_with_min_count_zero_and_nothing_to_read_answers_at_once(rb):
    assert batch(rb.read_many(0, 0, 5)) == ([], 0, 0, [])
    rb.add_all(["a", "b"])
    # Hazelcast leaves next_sequence_to_read_from at 0 when it read nothing
    assert batch(rb.read_many(2, 0, 5)) == ([], 0, 0, [])
    assert batch(rb.read_many(100, 0, 5)) == ([], 0, 0, [])


def test_read_many_with_max_count_zero(rb):
    assert batch(rb.read_many(0, 0, 0)) == ([], 0, 0, []), "nothing to read: an empty batch"
    rb.add("a")
    # Hazelcast 5.6 fails (ArrayIndexOutOfBoundsError) when there is an item to read
    with pytest.raises(HazelcastError):
        rb.read_many(0, 0, 0)
    assert list(rb.read_many(0, 1, 1)) == ["a"]


def test_read_many_with_a_filter_the_member_cannot_run(rb):
    rb.add_all(["a", "b"])
    with pytest.raises(ClassCastError):
        rb.read_many(0, 0, 5, "not-a-function")
    assert list(rb.read_many(0, 0, 5, None)) == ["a", "b"]


def test_client_checks_max_count_against_the_capacity(small):
    small.add("a")
    with pytest.raises(AssertionError):
        small.read_many(0, 0, SMALL + 1)
    assert list(small.read_many(0, 0, SMALL)) == ["a"]


def test_a_thousand_items_in_one_batch(rb):
    items = ["item-%d" % i for i in range(1000)]
    assert rb.add_all(items) == 999
    read = []
    sequence = 0
    while sequence <= 999:
        result = rb.read_many(sequence, 1, 999)
        read.extend(result)
        sequence = result.next_sequence_to_read_from
    assert read == items
    assert state(rb) == (1000, 0, 999, DEFAULT_CAPACITY)


def test_destroy_drops_the_items_and_wakes_waiting_readers(rb, client_factory):
    other = client_factory().get_ringbuffer(rb.name).blocking()
    rb.add_all(["a", "b"])
    one_thread, one = in_thread(lambda: rb.read_one(2))
    many_thread, many = in_thread(lambda: rb.read_many(2, 1, 5))
    time.sleep(0.5)
    assert one == {} and many == {}, "both reads wait"
    other.destroy()
    one_thread.join(10)
    many_thread.join(10)
    assert isinstance(one.get("error"), DistributedObjectDestroyedError), one
    assert isinstance(many.get("error"), DistributedObjectDestroyedError), many
    assert state(other) == (0, 0, -1, DEFAULT_CAPACITY)


def test_ringbuffer_is_listed_among_distributed_objects(client, rb):
    rb.add("x")
    names = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert ("hz:impl:ringbufferService", rb.name) in names
