"""IQueue (service 3: Queue.Offer 0x030100 … Queue.IsEmpty 0x031400), as a user of the Python
client sees it. Runs against ferrogrid and against a real Hazelcast 5.6.0 member.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * FIFO; peek does not remove; poll/peek on an empty queue give None; size, is_empty;
  * poll(timeout) and take() wait for an item offered later (by another client); offer and put
    on a full bounded queue (max-size) wait for room: offer(timeout) gives False after it, add()
    raises IllegalStateError ("Queue is full!"), put() blocks until a poll;
  * remaining_capacity is max-size − size (Integer.MAX_VALUE − size when unbounded);
  * remove(item) removes the first equal item; contains/contains_all compare serialized items;
    remove_all/retain_all/add_all answer whether the queue changed;
  * iterator() lists the items in order without removing them; drain_to moves them out (all,
    or at most max_size);
  * item listeners hear ADDED and REMOVED with the item (or None without include_value).
"""

import threading
import time

import pytest
from hazelcast.errors import IllegalStateError
from hazelcast.proxy.base import ItemEventType

from helpers import destroy_after, wait_until

INT_MAX = 2**31 - 1
BOUND = 3  # member-config.yaml: queue bounded-q-*: max-size 3


@pytest.fixture
def queue_name(request):
    from conftest import unique_name

    return unique_name(request, "q")


@pytest.fixture
def q(client, queue_name):
    yield from destroy_after(client.get_queue(queue_name).blocking())


@pytest.fixture
def bounded(client, request):
    from conftest import unique_name

    yield from destroy_after(client.get_queue(unique_name(request, "bounded-q")).blocking())


def test_offer_poll_peek_in_order(q):
    assert q.is_empty() and q.size() == 0
    assert q.poll() is None and q.peek() is None
    for item in ["a", "b", "c"]:
        assert q.offer(item) is True
    assert q.size() == 3 and not q.is_empty()
    assert q.peek() == "a"
    assert q.size() == 3, "peek does not remove"
    assert [q.poll(), q.poll()] == ["a", "b"]
    q.put("d")
    assert q.add("e") is True
    assert q.take() == "c"
    assert q.iterator() == ["d", "e"]
    assert q.size() == 2


def test_items_of_any_type_round_trip(q):
    items = [1, "two", 3.5, True, b"bytes", [1, 2], {"k": "v"}]
    for item in items:
        q.offer(item)
    assert [q.poll() for _ in items] == items


def test_remaining_capacity_unbounded(q):
    q.offer("x")
    assert q.remaining_capacity() == INT_MAX - 1


def test_poll_with_timeout_waits_for_an_offer(q, client_factory, queue_name):
    other = client_factory().get_queue(queue_name).blocking()
    started = time.monotonic()
    assert q.poll(0.5) is None
    assert time.monotonic() - started >= 0.4, "poll(timeout) waits on an empty queue"
    timer = threading.Timer(0.5, lambda: other.offer("late"))
    timer.start()
    try:
        assert q.poll(10) == "late"
    finally:
        timer.cancel()


def test_take_waits_for_an_offer(q, client_factory, queue_name):
    other = client_factory().get_queue(queue_name).blocking()
    taken = []
    thread = threading.Thread(target=lambda: taken.append(q.take()))
    thread.start()
    time.sleep(0.5)
    assert taken == [], "take waits on an empty queue"
    other.offer("item")
    thread.join(10)
    assert taken == ["item"]


def test_waiting_pollers_are_served_in_order_one_item_each(q, client_factory, queue_name):
    other = client_factory().get_queue(queue_name).blocking()
    results = {}
    threads = []
    for index in range(3):
        thread = threading.Thread(target=lambda index=index: results.setdefault(index, q.poll(10)))
        thread.start()
        threads.append(thread)
        time.sleep(0.2)
    for item in ["i0", "i1", "i2"]:
        other.offer(item)
    for thread in threads:
        thread.join(15)
    assert sorted(results.values()) == ["i0", "i1", "i2"], results
    assert q.size() == 0


def test_bounded_queue_refuses_or_waits_when_full(bounded):
    for index in range(BOUND):
        assert bounded.offer(index) is True
    assert bounded.remaining_capacity() == 0
    assert bounded.offer("over") is False
    started = time.monotonic()
    assert bounded.offer("over", 0.5) is False
    assert time.monotonic() - started >= 0.4, "offer(timeout) waits for room"
    with pytest.raises(IllegalStateError):
        bounded.add("over")
    assert bounded.size() == BOUND


def test_offer_with_timeout_and_put_get_room_from_a_poll(bounded, client_factory):
    other = client_factory().get_queue(bounded.name).blocking()
    for index in range(BOUND):
        bounded.offer(index)
    timer = threading.Timer(0.5, other.poll)
    timer.start()
    try:
        assert bounded.offer("waited", 10) is True
    finally:
        timer.cancel()
    done = []
    thread = threading.Thread(target=lambda: done.append(bounded.put("put")))
    thread.start()
    time.sleep(0.5)
    assert done == [], "put waits for room"
    assert other.poll() == 1
    thread.join(10)
    assert done == [None]
    assert bounded.iterator() == [2, "waited", "put"]


def test_add_all_on_a_bounded_queue(bounded):
    assert bounded.add_all([1, 2]) is True
    with pytest.raises(IllegalStateError):
        bounded.add_all([3, 4])
    assert bounded.iterator() == [1, 2], "nothing of a batch that does not fit is added"


def test_contains_and_remove(q):
    for item in ["a", "b", "a", "c"]:
        q.offer(item)
    assert q.contains("a") and not q.contains("z")
    assert q.contains_all(["a", "c"]) and not q.contains_all(["a", "z"])
    assert q.contains_all([])
    assert q.remove("a") is True
    assert q.iterator() == ["b", "a", "c"], "remove takes the first equal item"
    assert q.remove("z") is False


def test_remove_all_retain_all_add_all(q):
    assert q.add_all(["a", "b", "c", "b"]) is True
    assert q.remove_all(["b", "z"]) is True
    assert q.iterator() == ["a", "c"]
    assert q.remove_all(["z"]) is False
    assert q.retain_all(["c", "z"]) is True
    assert q.iterator() == ["c"]
    assert q.retain_all(["c"]) is False
    assert q.add_all([]) is True, "Hazelcast answers True for an empty batch"


def test_drain_to_all_and_at_most(q):
    q.add_all(list(range(5)))
    target = []
    assert q.drain_to(target, 2) == 2
    assert target == [0, 1]
    assert q.drain_to(target) == 3
    assert target == [0, 1, 2, 3, 4]
    assert q.is_empty()
    assert q.drain_to(target) == 0


def test_clear(q):
    q.add_all(["a", "b"])
    q.clear()
    assert q.size() == 0 and q.poll() is None
    q.clear()


def test_destroy_drops_the_items(client, queue_name):
    first = client.get_queue(queue_name).blocking()
    first.add_all(["a", "b"])
    first.destroy()
    assert client.get_queue(queue_name).blocking().size() == 0


def test_queue_is_listed_among_distributed_objects(client, q):
    q.offer("x")
    names = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert ("hz:impl:queueService", q.name) in names


def test_a_queue_and_a_map_of_one_name_are_separate(client, queue_name):
    queue = client.get_queue(queue_name).blocking()
    m = client.get_map(queue_name).blocking()
    queue.offer("item")
    m.put("k", "v")
    assert queue.size() == 1 and m.size() == 1
    assert queue.poll() == "item" and m.get("k") == "v"


@pytest.mark.parametrize("include_value", [True, False])
def test_item_listener_hears_added_and_removed(q, client_factory, include_value):
    events = []
    lock = threading.Lock()

    def record(event):
        with lock:
            events.append((event.event_type, event.item))

    registration = q.add_listener(include_value=include_value, item_added_func=record, item_removed_func=record)
    writer = client_factory().get_queue(q.name).blocking()
    writer.offer("a")
    writer.add_all(["b", "c"])
    assert writer.poll() == "a"
    assert writer.remove("b") is True
    wait_until(lambda: len(events) >= 5, 10)
    value = (lambda item: item) if include_value else (lambda item: None)
    expected = [
        (ItemEventType.ADDED, value("a")),
        (ItemEventType.ADDED, value("b")),
        (ItemEventType.ADDED, value("c")),
        (ItemEventType.REMOVED, value("a")),
        (ItemEventType.REMOVED, value("b")),
    ]
    assert events == expected
    assert q.remove_listener(registration) is True
    writer.offer("after")
    time.sleep(0.5)
    assert len(events) == 5, "no event after the listener was removed"


def test_listener_hears_drain_and_clear(q):
    events = []
    q.add_listener(include_value=True, item_removed_func=lambda event: events.append(event.item))
    q.add_all(["a", "b", "c"])
    q.drain_to([], 1)
    q.clear()
    wait_until(lambda: len(events) >= 3, 10)
    time.sleep(0.3)
    assert events == ["a", "b", "c"]


def listed(client, name):
    return any(o.service_name == "hz:impl:queueService" and o.name == name for o in client.get_distributed_objects())


def test_a_queue_empty_and_unused_for_its_empty_queue_ttl_is_destroyed(client, request):
    # member-config.yaml: idle-q-* have empty-queue-ttl 1 s. Hazelcast destroys such a queue
    # (it leaves the distributed objects, its item listeners are gone); one that holds items,
    # or has been used within the ttl, stays.
    from conftest import unique_name

    empty, holding = unique_name(request, "idle-q"), unique_name(request, "idle-q")
    events = []
    q = client.get_queue(empty).blocking()
    q.add_listener(include_value=True, item_added_func=events.append)
    q.offer("x")
    assert q.poll() == "x"
    wait_until(lambda: events, 5, message="the ADDED event")
    client.get_queue(holding).blocking().offer("kept")
    assert listed(client, empty) and listed(client, holding)
    wait_until(lambda: not listed(client, empty), 15, message="the empty queue destroyed")
    assert listed(client, holding), "a queue with an item stays"
    assert client.get_queue(holding).blocking().peek() == "kept"
    q.offer("again")  # the queue is created again, without the listener
    time.sleep(0.5)
    assert len(events) == 1, "the destroyed queue's item listener is gone"
    assert q.size() == 1
