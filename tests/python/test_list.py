"""IList (service 5: List.Size 0x050100 … List.ListIterator 0x051700), as a user of the Python
client sees it. Runs against ferrogrid and against a real Hazelcast 5.6.0 member.

member-config.yaml: bounded-list-* hold at most 3 items; any other list is unbounded.

What a real Hazelcast 5.6.0 member (on Java 17) does (and these tests hold):
  * add appends and answers True (duplicates too); add_at(i) inserts before index i, i = size
    appends, and ANY NEGATIVE index appends as well (Hazelcast's own add sends index -1);
    add_all / add_all_at answer whether the list changed: False for an empty batch (an
    IQueue answers True there);
  * get(i), set_at(i, item) answering the item it replaced, remove_at(i) answering the item it
    removed, remove(item) removing the first equal item (False if none), index_of /
    last_index_of (-1 if absent), contains / contains_all (True for []), remove_all /
    retain_all answering whether the list changed (retain_all([]) empties the list);
  * sub_list(from, to) is Java's subList, except that (-1, -1) is the whole list and (from, -1)
    runs to the end; list_iterator(i) is sub_list(i, -1), so list_iterator(-1) is the whole list;
  * a bad index is refused by the member with Java's own exception (the Python client raises
    IndexOutOfBoundsError or IllegalArgumentError, first line
    "Exception from server: java.lang.<class>: <message>"), the list unchanged:
      get/set_at/remove_at(-1 or >= size)  IndexOutOfBoundsException "Index 3 out of bounds for length 3"
      add_at/add_all_at(> size)           IndexOutOfBoundsException "Index: 4, Size: 3"
      add_all_at(< 0)                     IndexOutOfBoundsException "Index: -1, Size: 3"
      sub_list(-1, 1)                     IndexOutOfBoundsException "fromIndex = -1"
      sub_list(0, size + 1)               IndexOutOfBoundsException "toIndex = 4"
      sub_list(2, 1)                      IllegalArgumentException "fromIndex(2) > toIndex(1)"
      list_iterator(size + 1)             IllegalArgumentException "fromIndex(4) > toIndex(3)"
  * None items never reach the member: the Python client raises AssertionError("Value can't be
    None"; contains_all: "item can't be None" / "Items can't be None");
  * the Python client 5.7.0's blocking is_empty returns the Future instead of its answer (a
    client bug; see is_empty below);
  * a full bounded list refuses without an error: add and add_all answer False (nothing of the
    batch is added), add_at answers None and adds nothing; set_at still replaces;
  * item listeners hear ADDED / REMOVED with the item (None without include_value), one event
    per item, nothing for a refused add; set_at is heard as REMOVED(old item), ADDED(new item).
    Separate calls are heard in call order, but the events of ONE add_all / add_all_at /
    remove_all / retain_all / clear come in no promised order (Hazelcast publishes them in the
    hash order of its item ids: add_all(["c", "d"]) is heard as d, c);
  * remove_at's REMOVED event carries NO item, even with include_value, and a remove_at that
    fails (index out of range) is heard as an item-less REMOVED all the same (Hazelcast
    publishes it before it looks at the list);
  * destroy drops the items; the list is listed as hz:impl:listService while it exists.
"""

import pytest
from hazelcast.errors import IllegalArgumentError, IndexOutOfBoundsError
from hazelcast.proxy.base import ItemEventType

from helpers import ItemLog, destroy_after, server_error_line

ADDED, REMOVED = ItemEventType.ADDED, ItemEventType.REMOVED
BOUND = 3  # member-config.yaml: list bounded-list-*: max-size 3
SERVICE = "hz:impl:listService"


def make(client, request, prefix):
    from conftest import unique_name

    return client.get_list(unique_name(request, prefix)).blocking()


@pytest.fixture
def lst(client, request):
    yield from destroy_after(make(client, request, "list"))


@pytest.fixture
def abc(lst):
    """The list holding "a", "b", "c"."""
    assert lst.add_all(["a", "b", "c"]) is True
    return lst


@pytest.fixture
def bounded(client, request):
    yield from destroy_after(make(client, request, "bounded-list"))


def is_empty(proxy):
    """proxy.is_empty(): the Python client 5.7.0's blocking IList.is_empty returns the Future
    (it forgets .result()), which is always truthy."""
    answer = proxy.is_empty()
    return answer.result() if hasattr(answer, "result") else answer


def test_a_new_list_is_empty(lst):
    assert lst.size() == 0 and is_empty(lst) is True
    assert lst.get_all() == [] and lst.iterator() == []
    assert lst.contains_all([]) is True
    assert lst.sub_list(-1, -1) == [] and lst.list_iterator(0) == []


def test_add_appends_and_get_reads_by_index(lst):
    assert lst.add("a") is True
    assert lst.add("b") is True
    assert lst.add("a") is True, "a list keeps duplicates"
    assert lst.size() == 3 and is_empty(lst) is False
    assert [lst.get(i) for i in range(3)] == ["a", "b", "a"]
    assert lst.get_all() == ["a", "b", "a"]


def test_add_at_inserts_and_a_negative_index_appends(lst):
    assert lst.add_at(0, "b") is None
    assert lst.add_at(0, "a") is None
    assert lst.add_at(2, "d") is None, "index size appends"
    assert lst.add_at(2, "c") is None
    assert lst.get_all() == ["a", "b", "c", "d"]
    lst.add_at(-1, "e")
    lst.add_at(-7, "f")
    assert lst.get_all() == ["a", "b", "c", "d", "e", "f"], "Hazelcast appends at any negative index"


def test_add_all_and_add_all_at(lst):
    assert lst.add_all(["a", "d"]) is True
    assert lst.add_all_at(1, ["b", "c"]) is True
    assert lst.add_all_at(4, ["e"]) is True, "index size appends"
    assert lst.add_all_at(0, ["_"]) is True
    assert lst.get_all() == ["_", "a", "b", "c", "d", "e"]
    assert lst.add_all([]) is False, "an empty batch does not change the list"
    assert lst.add_all_at(1, []) is False
    assert lst.size() == 6


def test_set_at_answers_the_item_it_replaced(abc):
    assert abc.set_at(1, "B") == "b"
    assert abc.set_at(1, "B2") == "B"
    assert abc.set_at(2, "a") == "c"
    assert abc.get_all() == ["a", "B2", "a"]
    assert abc.size() == 3


def test_remove_takes_the_first_equal_item(lst):
    lst.add_all(["a", "b", "a", "c"])
    assert lst.remove("a") is True
    assert lst.get_all() == ["b", "a", "c"]
    assert lst.remove("z") is False
    assert lst.remove("a") is True
    assert lst.remove("a") is False
    assert lst.get_all() == ["b", "c"]


def test_remove_at_answers_the_item_and_shifts_the_rest(lst):
    lst.add_all(["a", "b", "c", "d"])
    assert lst.remove_at(1) == "b"
    assert lst.get_all() == ["a", "c", "d"]
    assert lst.remove_at(2) == "d"
    assert lst.remove_at(0) == "a"
    assert lst.get_all() == ["c"]


def test_index_of_and_last_index_of(lst):
    lst.add_all(["a", "b", "a", "c", "a"])
    assert lst.index_of("a") == 0
    assert lst.last_index_of("a") == 4
    assert lst.index_of("c") == 3 and lst.last_index_of("c") == 3
    assert lst.index_of("z") == -1 and lst.last_index_of("z") == -1


def test_sub_list_and_its_minus_one_bounds(lst):
    lst.add_all(["a", "b", "c", "d"])
    assert lst.sub_list(1, 3) == ["b", "c"]
    assert lst.sub_list(0, 4) == ["a", "b", "c", "d"]
    assert lst.sub_list(2, 2) == [] and lst.sub_list(4, 4) == []
    assert lst.sub_list(-1, -1) == ["a", "b", "c", "d"], "(-1, -1) is the whole list"
    assert lst.sub_list(1, -1) == ["b", "c", "d"], "to -1 runs to the end"
    assert lst.sub_list(0, -1) == ["a", "b", "c", "d"]


def test_iterator_and_list_iterator(lst):
    lst.add_all(["a", "b", "c"])
    assert lst.iterator() == ["a", "b", "c"]
    assert lst.get_all() == ["a", "b", "c"]
    assert lst.list_iterator() == ["a", "b", "c"]
    assert lst.list_iterator(1) == ["b", "c"]
    assert lst.list_iterator(3) == []
    assert lst.list_iterator(-1) == ["a", "b", "c"], "list_iterator(-1) is sub_list(-1, -1)"
    assert lst.size() == 3, "iterating does not remove"


def test_contains_and_contains_all(lst):
    lst.add_all(["a", 1, True])
    assert lst.contains("a") and lst.contains(1) and lst.contains(True)
    assert not lst.contains("z")
    assert not lst.contains(1.0), "items compare by their serialized form: 1 is not 1.0"
    assert not lst.contains("1")
    assert lst.contains_all(["a", 1]) and lst.contains_all([])
    assert not lst.contains_all(["a", "z"])


def test_remove_all_and_retain_all(lst):
    lst.add_all(["a", "b", "c", "b", "d"])
    assert lst.remove_all(["b", "z"]) is True
    assert lst.get_all() == ["a", "c", "d"], "every equal item is removed"
    assert lst.remove_all(["z"]) is False
    assert lst.remove_all([]) is False
    assert lst.retain_all(["a", "d", "z"]) is True
    assert lst.get_all() == ["a", "d"]
    assert lst.retain_all(["a", "d"]) is False
    assert lst.retain_all([]) is True, "retaining nothing empties the list"
    assert is_empty(lst) is True
    assert lst.retain_all([]) is False and lst.remove_all(["a"]) is False


def test_clear(lst):
    lst.add_all(["a", "b"])
    assert lst.clear() is None
    assert lst.size() == 0 and lst.get_all() == []
    lst.clear()
    assert lst.add("c") is True and lst.get(0) == "c"


def test_items_of_any_type_round_trip(lst):
    items = [1, "two", 3.5, True, b"bytes", [1, 2], {"k": "v"}, -7, ""]
    assert lst.add_all(items) is True
    assert lst.get_all() == items
    assert [lst.get(i) for i in range(len(items))] == items


def test_two_clients_share_the_list(lst, client_factory):
    other = client_factory().get_list(lst.name).blocking()
    lst.add("mine")
    other.add_at(0, "theirs")
    assert lst.get_all() == ["theirs", "mine"]
    assert other.remove_at(1) == "mine"
    assert lst.get_all() == ["theirs"]


# --------------------------------------------------------------------------- bad indexes

IOOBE = (IndexOutOfBoundsError, "java.lang.IndexOutOfBoundsException")
IAE = (IllegalArgumentError, "java.lang.IllegalArgumentException")

# (id, call on the list ["a", "b", "c"], (Python error, Java class), Java message)
BAD_INDEXES = [
    ("get-1", lambda l: l.get(-1), IOOBE, "Index -1 out of bounds for length 3"),
    ("get-size", lambda l: l.get(3), IOOBE, "Index 3 out of bounds for length 3"),
    ("set_at-size", lambda l: l.set_at(3, "x"), IOOBE, "Index 3 out of bounds for length 3"),
    ("set_at-1", lambda l: l.set_at(-1, "x"), IOOBE, "Index -1 out of bounds for length 3"),
    ("remove_at-size", lambda l: l.remove_at(3), IOOBE, "Index 3 out of bounds for length 3"),
    ("remove_at-1", lambda l: l.remove_at(-1), IOOBE, "Index -1 out of bounds for length 3"),
    ("add_at-size+1", lambda l: l.add_at(4, "x"), IOOBE, "Index: 4, Size: 3"),
    ("add_all_at-size+1", lambda l: l.add_all_at(4, ["x"]), IOOBE, "Index: 4, Size: 3"),
    ("add_all_at-1", lambda l: l.add_all_at(-1, ["x"]), IOOBE, "Index: -1, Size: 3"),
    ("sub_list-from-1", lambda l: l.sub_list(-1, 1), IOOBE, "fromIndex = -1"),
    ("sub_list-from-2", lambda l: l.sub_list(-2, -1), IOOBE, "fromIndex = -2"),
    ("sub_list-to-size+1", lambda l: l.sub_list(0, 4), IOOBE, "toIndex = 4"),
    ("sub_list-reversed", lambda l: l.sub_list(2, 1), IAE, "fromIndex(2) > toIndex(1)"),
    ("sub_list-to-2", lambda l: l.sub_list(2, -2), IAE, "fromIndex(2) > toIndex(-2)"),
    ("list_iterator-size+1", lambda l: l.list_iterator(4), IAE, "fromIndex(4) > toIndex(3)"),
    ("list_iterator-2", lambda l: l.list_iterator(-2), IOOBE, "fromIndex = -2"),
]


@pytest.mark.parametrize("call, error, message", [pytest.param(*row[1:], id=row[0]) for row in BAD_INDEXES])
def test_a_bad_index_raises_javas_exception(abc, call, error, message):
    python_error, java_class = error
    with pytest.raises(python_error) as raised:
        call(abc)
    assert server_error_line(raised.value) == "Exception from server: %s: %s" % (java_class, message)
    assert abc.get_all() == ["a", "b", "c"], "the list is unchanged"


def test_an_empty_list_has_no_index_zero(lst):
    with pytest.raises(IndexOutOfBoundsError) as raised:
        lst.get(0)
    expected = "Exception from server: java.lang.IndexOutOfBoundsException: Index 0 out of bounds for length 0"
    assert server_error_line(raised.value) == expected
    with pytest.raises(IndexOutOfBoundsError):
        lst.remove_at(0)
    with pytest.raises(IndexOutOfBoundsError):
        lst.set_at(0, "x")
    assert lst.size() == 0


# --------------------------------------------------------------------------- None

NONE_CALLS = [
    pytest.param(lambda l: l.add(None), "Value can't be None", id="add"),
    pytest.param(lambda l: l.add_at(0, None), "Value can't be None", id="add_at"),
    pytest.param(lambda l: l.add_all(["x", None]), "Value can't be None", id="add_all-item"),
    pytest.param(lambda l: l.add_all(None), "Value can't be None", id="add_all-none"),
    pytest.param(lambda l: l.add_all_at(0, [None]), "Value can't be None", id="add_all_at-item"),
    pytest.param(lambda l: l.set_at(0, None), "Value can't be None", id="set_at"),
    pytest.param(lambda l: l.remove(None), "Value can't be None", id="remove"),
    pytest.param(lambda l: l.contains(None), "Value can't be None", id="contains"),
    pytest.param(lambda l: l.contains_all(["a", None]), "item can't be None", id="contains_all-item"),
    pytest.param(lambda l: l.contains_all(None), "Items can't be None", id="contains_all-none"),
    pytest.param(lambda l: l.index_of(None), "Value can't be None", id="index_of"),
    pytest.param(lambda l: l.last_index_of(None), "Value can't be None", id="last_index_of"),
    pytest.param(lambda l: l.remove_all([None]), "Value can't be None", id="remove_all-item"),
    pytest.param(lambda l: l.retain_all([None]), "Value can't be None", id="retain_all-item"),
    pytest.param(lambda l: l.retain_all(None), "Value can't be None", id="retain_all-none"),
]


@pytest.mark.parametrize("call, message", NONE_CALLS)
def test_none_items_are_refused_by_the_client(abc, call, message):
    with pytest.raises(AssertionError) as raised:
        call(abc)
    assert str(raised.value) == message
    assert abc.get_all() == ["a", "b", "c"], "nothing changed and the client still works"


# --------------------------------------------------------------------------- max-size


def test_a_full_bounded_list_refuses_adds_without_an_error(bounded):
    assert bounded.add_all(["a", "b"]) is True
    assert bounded.add_all(["c", "d"]) is False, "a batch that does not fit is refused whole"
    assert bounded.get_all() == ["a", "b"]
    assert bounded.add_all_at(0, ["c", "d"]) is False
    assert bounded.add("c") is True
    assert bounded.add("d") is False
    assert bounded.add_at(0, "d") is None, "add_at answers nothing, full or not"
    assert bounded.add_all_at(1, ["d"]) is False
    assert bounded.get_all() == ["a", "b", "c"], "nothing was added to the full list"
    assert bounded.size() == BOUND
    assert bounded.set_at(0, "A") == "a", "replacing an item needs no room"
    assert bounded.remove_at(1) == "b"
    bounded.add_at(0, "z")
    assert bounded.get_all() == ["z", "A", "c"]


def test_refused_adds_are_not_heard(bounded):
    log = ItemLog()
    bounded.add_listener(include_value=True, **log.callbacks())
    bounded.add_all([1, 2, 3])
    bounded.add(4)
    bounded.add_at(0, 5)
    bounded.add_all([6])
    bounded.remove(1)  # the marker: heard after everything before it
    events = log.wait_for((REMOVED, 1))
    assert sorted(events[:3]) == [(ADDED, 1), (ADDED, 2), (ADDED, 3)]
    assert events[3:] == [(REMOVED, 1)]


# --------------------------------------------------------------------------- listeners


@pytest.mark.parametrize("include_value", [True, False])
def test_item_listener_hears_adds_and_removes(lst, client_factory, include_value):
    log = ItemLog()
    registration = lst.add_listener(include_value=include_value, **log.callbacks())
    writer = client_factory().get_list(lst.name).blocking()
    writer.add("a")
    writer.add_at(0, "b")
    writer.add_all(["c", "d"])
    writer.add_all_at(1, ["e"])
    assert writer.remove("c") is True
    assert writer.set_at(0, "B") == "b"
    value = (lambda item: item) if include_value else (lambda item: None)
    expected = [(ADDED, value(item)) for item in ["a", "b", "c", "d", "e"]]
    expected += [(REMOVED, value("c")), (REMOVED, value("b")), (ADDED, value("B"))]
    events = log.wait_count(len(expected))
    # the events of one add_all come in no promised order (Hazelcast: hash order of item ids)
    assert events[:2] + sorted(events[2:4], key=repr) + events[4:] == expected
    assert events[-2:] == expected[-2:], "set_at is heard as REMOVED(old), then ADDED(new)"
    assert lst.remove_listener(registration) is True
    assert lst.remove_listener(registration) is False, "a second removal finds nothing"
    marker = ItemLog()
    lst.add_listener(include_value=True, **marker.callbacks())
    writer.add("after")
    marker.wait_for((ADDED, "after"))
    assert len(log.snapshot()) == len(expected), "no event after the listener was removed"


def test_bulk_removes_are_heard_item_by_item(lst):
    log = ItemLog()
    lst.add_listener(include_value=True, **log.callbacks())
    lst.add_all(["a", "b", "c", "b", "d", "e"])
    lst.remove_all(["b", "z"])
    lst.retain_all(["a", "c", "d"])
    lst.clear()
    events = log.wait_count(6 + 2 + 1 + 3)
    assert sorted(events[:6]) == sorted((ADDED, item) for item in ["a", "b", "c", "b", "d", "e"])
    removed = events[6:]
    assert sorted(removed[:2]) == [(REMOVED, "b"), (REMOVED, "b")], "remove_all: one event per item"
    assert removed[2:3] == [(REMOVED, "e")], "retain_all: the items it dropped"
    assert sorted(removed[3:]) == [(REMOVED, "a"), (REMOVED, "c"), (REMOVED, "d")], "clear: every item"


@pytest.mark.hazelcast_only
def test_remove_at_is_heard_without_its_item_even_when_it_fails(lst):
    # Hazelcast's List.RemoveWithIndex publishes its REMOVED event before it runs, when it does
    # not know the item yet: the event has no item (even with include_value), and an index out
    # of range is announced as well. ferrogrid does not copy this (the next test).
    log = ItemLog()
    lst.add_listener(include_value=True, **log.callbacks())
    lst.add("a")
    lst.add("b")
    with pytest.raises(IndexOutOfBoundsError):
        lst.remove_at(5)
    assert lst.remove_at(0) == "a"
    lst.add("marker")
    assert log.wait_for((ADDED, "marker")) == [
        (ADDED, "a"),
        (ADDED, "b"),
        (REMOVED, None),
        (REMOVED, None),
        (ADDED, "marker"),
    ]


@pytest.mark.ferrogrid_only
def test_remove_at_is_heard_with_its_item_and_only_when_it_removes(lst):
    # Unlike Hazelcast (the previous test): the REMOVED event of remove_at carries the item a
    # listener with include_value asked for, and a failed remove_at removes nothing and
    # announces nothing.
    log = ItemLog()
    lst.add_listener(include_value=True, **log.callbacks())
    lst.add("a")
    lst.add("b")
    with pytest.raises(IndexOutOfBoundsError):
        lst.remove_at(5)
    assert lst.remove_at(0) == "a"
    lst.add("marker")
    assert log.wait_for((ADDED, "marker")) == [(ADDED, "a"), (ADDED, "b"), (REMOVED, "a"), (ADDED, "marker")]


# --------------------------------------------------------------------------- lifecycle


def listed(client, name):
    return any(o.service_name == SERVICE and o.name == name for o in client.get_distributed_objects())


def test_destroy_drops_the_items_and_the_listing(client, lst):
    lst.add_all(["a", "b"])
    assert listed(client, lst.name)
    lst.destroy()
    assert not listed(client, lst.name)
    again = client.get_list(lst.name).blocking()
    assert again.size() == 0 and again.get_all() == []


def test_a_list_a_set_and_a_queue_of_one_name_are_separate(client, lst):
    other_set = client.get_set(lst.name).blocking()
    other_queue = client.get_queue(lst.name).blocking()
    lst.add("in-list")
    other_set.add("in-set")
    other_queue.offer("in-queue")
    try:
        assert lst.get_all() == ["in-list"]
        assert other_set.get_all() == ["in-set"]
        assert other_queue.iterator() == ["in-queue"]
    finally:
        other_set.destroy()
        other_queue.destroy()
