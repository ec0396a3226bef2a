"""ISet (service 6: Set.Size 0x060100 … Set.IsEmpty 0x060D00), as a user of the Python client
sees it. Runs against ferrogrid and against a real Hazelcast 5.6.0 member.

member-config.yaml: bounded-set-* hold at most 3 items; any other set is unbounded.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * add answers True for a new item and False for one already there; add_all answers whether
    the set changed (False for [] or only known items); items are equal when their serialized
    forms are (1, 1.0, "1" and True are four items); get_all lists the items in no promised
    order (compared as sets here);
  * remove answers whether the item was there; contains / contains_all (True for []);
    remove_all / retain_all answer whether the set changed; retain_all([]) empties the set;
  * None items never reach the member: the Python client raises AssertionError("Value can't be
    None") for every call;
  * max-size: a full set refuses add (False, no error), and add_all is refused WHOLE when
    size + the batch's length exceeds max-size, even if some of the batch is already in the
    set (a set {a, b} with max-size 3 refuses add_all([a, c]), answering False and adding
    nothing, although the result {a, b, c} would fit);
  * item listeners hear ADDED / REMOVED with the item (None without include_value); an add of
    an item already there is not heard, but an add_all that names a NEW item twice is heard
    twice (Hazelcast checks the batch against the set as it was before the batch; the set
    holds it once); one event per removed item for remove_all / retain_all / clear, in no
    promised order;
  * destroy drops the items; the set is listed as hz:impl:setService while it exists.
"""

import pytest
from hazelcast.proxy.base import ItemEventType

from helpers import ItemLog, destroy_after

ADDED, REMOVED = ItemEventType.ADDED, ItemEventType.REMOVED
BOUND = 3  # member-config.yaml: set bounded-set-*: max-size 3
SERVICE = "hz:impl:setService"


def make(client, request, prefix):
    from conftest import unique_name

    return client.get_set(unique_name(request, prefix)).blocking()


@pytest.fixture
def s(client, request):
    yield from destroy_after(make(client, request, "set"))


@pytest.fixture
def bounded(client, request):
    yield from destroy_after(make(client, request, "bounded-set"))


def items(proxy):
    """The set's items as a Python set (get_all has no promised order)."""
    listed = proxy.get_all()
    assert len(listed) == len(set(map(repr, listed))), "get_all lists an item twice: %r" % listed
    return set(listed)


def test_a_new_set_is_empty(s):
    assert s.size() == 0 and s.is_empty() is True
    assert s.get_all() == []
    assert s.contains("a") is False and s.contains_all([]) is True


def test_add_answers_false_for_an_item_already_there(s):
    assert s.add("a") is True
    assert s.add("b") is True
    assert s.add("a") is False
    assert s.size() == 2 and s.is_empty() is False
    assert items(s) == {"a", "b"}


def test_add_all_answers_whether_the_set_changed(s):
    assert s.add_all(["a", "b", "a"]) is True
    assert s.size() == 2
    assert s.add_all(["b", "c"]) is True
    assert s.add_all(["a", "c"]) is False, "only items already there"
    assert s.add_all([]) is False
    assert items(s) == {"a", "b", "c"}


def test_items_are_equal_by_their_serialized_form(s):
    for item in [1, "1", 1.0, True]:
        assert s.add(item) is True, "%r is an item of its own" % (item,)
    assert s.size() == 4
    assert s.add(1) is False and s.add("1") is False
    assert s.contains(1.0) and not s.contains(2)
    assert sorted(s.get_all(), key=repr) == sorted([1, "1", 1.0, True], key=repr)


def test_items_of_any_type_round_trip(s):
    values = [1, "two", 3.5, False, b"bytes", -7, ""]
    assert s.add_all(values) is True
    assert sorted(s.get_all(), key=repr) == sorted(values, key=repr)
    assert s.contains_all(values)


def test_remove_and_contains(s):
    s.add_all(["a", "b", "c"])
    assert s.contains("a") and not s.contains("z")
    assert s.contains_all(["a", "c"]) and not s.contains_all(["a", "z"])
    assert s.remove("a") is True
    assert s.remove("a") is False
    assert s.remove("z") is False
    assert not s.contains("a")
    assert items(s) == {"b", "c"}


def test_remove_all_and_retain_all(s):
    s.add_all(["a", "b", "c", "d"])
    assert s.remove_all(["b", "z"]) is True
    assert s.remove_all(["z"]) is False
    assert s.remove_all([]) is False
    assert items(s) == {"a", "c", "d"}
    assert s.retain_all(["a", "c", "z"]) is True
    assert s.retain_all(["a", "c"]) is False
    assert items(s) == {"a", "c"}
    assert s.retain_all([]) is True, "retaining nothing empties the set"
    assert s.size() == 0
    assert s.retain_all([]) is False and s.retain_all(["a"]) is False


def test_clear(s):
    s.add_all(["a", "b"])
    assert s.clear() is None
    assert s.size() == 0 and s.get_all() == []
    s.clear()
    assert s.add("a") is True, "a cleared item can be added again"


def test_two_clients_share_the_set(s, client_factory):
    other = client_factory().get_set(s.name).blocking()
    assert s.add("x") is True
    assert other.add("x") is False
    assert other.remove("x") is True
    assert s.is_empty() is True


NONE_CALLS = [
    pytest.param(lambda s: s.add(None), id="add"),
    pytest.param(lambda s: s.add_all(["x", None]), id="add_all-item"),
    pytest.param(lambda s: s.add_all(None), id="add_all-none"),
    pytest.param(lambda s: s.remove(None), id="remove"),
    pytest.param(lambda s: s.contains(None), id="contains"),
    pytest.param(lambda s: s.contains_all([None]), id="contains_all-item"),
    pytest.param(lambda s: s.remove_all([None]), id="remove_all-item"),
    pytest.param(lambda s: s.remove_all(None), id="remove_all-none"),
    pytest.param(lambda s: s.retain_all([None]), id="retain_all-item"),
]


@pytest.mark.parametrize("call", NONE_CALLS)
def test_none_items_are_refused_by_the_client(s, call):
    s.add("a")
    with pytest.raises(AssertionError) as raised:
        call(s)
    assert str(raised.value) == "Value can't be None"
    assert items(s) == {"a"}, "nothing changed and the client still works"


# --------------------------------------------------------------------------- max-size


def test_a_full_bounded_set_refuses_adds_without_an_error(bounded):
    assert bounded.add_all(["a", "b", "c", "d"]) is False, "a batch that does not fit is refused whole"
    assert bounded.size() == 0
    assert bounded.add_all(["a", "b"]) is True
    assert bounded.add("c") is True
    assert bounded.add("d") is False
    assert bounded.add("a") is False
    assert bounded.size() == BOUND
    assert bounded.remove("c") is True
    assert bounded.add("d") is True
    assert items(bounded) == {"a", "b", "d"}


def test_add_all_counts_items_already_in_the_set_against_max_size(bounded):
    bounded.add_all(["a", "b"])
    assert bounded.add_all(["a", "c"]) is False, "2 + 2 items exceed max-size 3"
    assert items(bounded) == {"a", "b"}, "nothing of the refused batch is added"
    assert bounded.add_all(["c"]) is True
    assert items(bounded) == {"a", "b", "c"}


# --------------------------------------------------------------------------- listeners


@pytest.mark.parametrize("include_value", [True, False])
def test_item_listener_hears_changes_only(s, client_factory, include_value):
    log = ItemLog()
    registration = s.add_listener(include_value=include_value, **log.callbacks())
    writer = client_factory().get_set(s.name).blocking()
    writer.add("a")
    writer.add("a")
    writer.add_all(["a", "b"])
    writer.remove("z")
    writer.remove("a")
    writer.add("marker")
    events = log.wait_count(4)
    value = (lambda item: item) if include_value else (lambda item: None)
    expected = [(ADDED, value("a")), (ADDED, value("b")), (REMOVED, value("a")), (ADDED, value("marker"))]
    assert events == expected, "no event for an item already there or a remove that found nothing"
    assert s.remove_listener(registration) is True
    assert s.remove_listener(registration) is False, "a second removal finds nothing"
    marker = ItemLog()
    s.add_listener(include_value=True, **marker.callbacks())
    writer.add("after")
    marker.wait_for((ADDED, "after"))
    assert len(log.snapshot()) == len(expected), "no event after the listener was removed"


@pytest.mark.hazelcast_only
def test_an_item_named_twice_in_one_add_all_is_heard_twice(s):
    # Hazelcast announces each item of the batch it was given; ferrogrid announces what it
    # added (the next test).
    log = ItemLog()
    s.add_listener(include_value=True, **log.callbacks())
    assert s.add_all(["x", "x"]) is True
    assert s.size() == 1, "the set holds it once"
    s.remove("x")  # the marker
    assert log.wait_for((REMOVED, "x")) == [(ADDED, "x"), (ADDED, "x"), (REMOVED, "x")]


@pytest.mark.ferrogrid_only
def test_an_item_named_twice_in_one_add_all_is_heard_once(s):
    log = ItemLog()
    s.add_listener(include_value=True, **log.callbacks())
    assert s.add_all(["x", "x"]) is True
    assert s.size() == 1
    s.remove("x")  # the marker
    assert log.wait_for((REMOVED, "x")) == [(ADDED, "x"), (REMOVED, "x")]


def test_bulk_removes_are_heard_item_by_item(s):
    log = ItemLog()
    s.add_listener(include_value=True, **log.callbacks())
    s.add_all(["a", "b", "c", "d", "e"])
    s.remove_all(["b", "z"])
    s.retain_all(["a", "c", "d"])
    s.clear()
    events = log.wait_count(5 + 1 + 1 + 3)
    assert sorted(events[:5]) == [(ADDED, item) for item in "abcde"]
    assert events[5:7] == [(REMOVED, "b"), (REMOVED, "e")]
    assert sorted(events[7:]) == [(REMOVED, "a"), (REMOVED, "c"), (REMOVED, "d")], "clear: every item"


def test_refused_adds_of_a_bounded_set_are_not_heard(bounded):
    log = ItemLog()
    bounded.add_listener(include_value=True, **log.callbacks())
    bounded.add_all([1, 2, 3, 4])
    bounded.add_all([1, 2])
    bounded.add(3)
    bounded.add_all([4])
    bounded.add(5)
    bounded.remove(1)  # the marker
    events = log.wait_for((REMOVED, 1))
    assert sorted(events[:3]) == [(ADDED, 1), (ADDED, 2), (ADDED, 3)]
    assert events[3:] == [(REMOVED, 1)]


# --------------------------------------------------------------------------- lifecycle


def listed(client, name):
    return any(o.service_name == SERVICE and o.name == name for o in client.get_distributed_objects())


def test_destroy_drops_the_items_and_the_listing(client, s):
    s.add_all(["a", "b"])
    assert listed(client, s.name)
    s.destroy()
    assert not listed(client, s.name)
    again = client.get_set(s.name).blocking()
    assert again.size() == 0 and again.add("a") is True
