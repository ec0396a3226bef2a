"""Shared helpers of the expiry / eviction / listener / lock / near-cache / topic suites.

Timing rules of these suites (the CI machine is small and noisy):
  * something that must happen is polled for with a generous bound (`wait_until`), never
    asserted "exactly at" a moment;
  * the absence of an event is asserted after a MARKER: a put of another key in the SAME
    partition, whose event must arrive after every event the earlier operations caused
    (events of one partition are delivered in order), plus a short settle time for events of
    other partitions.
"""

import threading
import time

from hazelcast.proxy.base import EntryEventType

import wire

LONG_MAX = 2**63 - 1

EVENT_NAMES = {
    value: name
    for name, value in vars(EntryEventType).items()
    if not name.startswith("_") and isinstance(value, int)
}

# add_entry_listener keyword -> event type it subscribes to
CALLBACKS = {
    "added_func": EntryEventType.ADDED,
    "removed_func": EntryEventType.REMOVED,
    "updated_func": EntryEventType.UPDATED,
    "evicted_func": EntryEventType.EVICTED,
    "expired_func": EntryEventType.EXPIRED,
    "evict_all_func": EntryEventType.EVICT_ALL,
    "clear_all_func": EntryEventType.CLEAR_ALL,
}


def wait_until(condition, timeout=10.0, interval=0.05, message="condition"):
    """Polls `condition()` until it returns a truthy value (returned) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError("%s not reached within %.1f s" % (message, timeout))
        time.sleep(interval)


def server_error_line(error):
    """The first line of an error the member sent, as the Python client words it:
    "Exception from server: <Java exception class>: <message>" (the member's stack trace follows
    on the next lines)."""
    return str(error).split("\n", 1)[0]


def partition_of(key):
    """Partition id of a str key, as the client and the member compute it (271 partitions)."""
    return wire.partition_id(wire.string_data(key))


def same_partition_key(key, prefix="marker"):
    """A str key (prefix-N) that lives in the same partition as `key`."""
    target = partition_of(key)
    for i in range(100_000):
        candidate = "%s-%d" % (prefix, i)
        if candidate != key and partition_of(candidate) == target:
            return candidate
    raise AssertionError("no key in partition %d" % target)


def member_uuid(client):
    members = client.cluster_service.get_members()
    assert len(members) == 1
    return members[0].uuid


class EventLog:
    """Entry-event callback that records every event; usable for any *_func of
    add_entry_listener (`m.add_entry_listener(**log.callbacks())`)."""

    def __init__(self):
        self.events = []
        self._cond = threading.Condition()

    def __call__(self, event):
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def callbacks(self, *names):
        """{name: self} for the given callback names (default: all of CALLBACKS)."""
        return {name: self for name in (names or CALLBACKS)}

    def snapshot(self):
        with self._cond:
            return list(self.events)

    def wait_for(self, predicate, timeout=10.0, what="event"):
        """The first recorded event matching `predicate` (waits up to `timeout` s for it)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self.events:
                    if predicate(event):
                        return event
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        "no %s within %.0f s; events so far: %s" % (what, timeout, describe(self.events))
                    )
                self._cond.wait(remaining)

    def wait_key(self, key, event_type, timeout=10.0):
        return self.wait_for(
            lambda e: e.key == key and e.event_type == event_type,
            timeout,
            "%s event for key %r" % (EVENT_NAMES.get(event_type), key),
        )

    def wait_count(self, count, timeout=10.0):
        """All events once at least `count` have been recorded."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.events) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        "%d events within %.0f s, expected %d: %s"
                        % (len(self.events), timeout, count, describe(self.events))
                    )
                self._cond.wait(remaining)
            return list(self.events)

    def mark(self, proxy, near_key, settle=0.5, timeout=10.0, value="marker"):
        """Puts a marker key (with `value`) in `near_key`'s partition, waits for its ADDED event,
        lets events of other partitions settle, and returns every other recorded event."""
        marker = same_partition_key(near_key)
        proxy.put(marker, value)
        self.wait_key(marker, EntryEventType.ADDED, timeout)
        time.sleep(settle)
        events = self.snapshot()
        index = next(i for i, e in enumerate(events) if e.key == marker and e.event_type == EntryEventType.ADDED)
        return [e for i, e in enumerate(events) if i != index]


def fields(event):
    """(type name, key, value, old_value) of an entry event, for compact assertions."""
    return (EVENT_NAMES.get(event.event_type, event.event_type), event.key, event.value, event.old_value)


def describe(events):
    return "[%s]" % ", ".join("%s(%r, %r, old=%r, n=%s)" % (fields(e) + (e.number_of_affected_entries,)) for e in events)


def destroy_after(proxy):
    """For a fixture (`yield from destroy_after(proxy)`): the proxy, destroyed after the test
    (a test that destroyed it already, or a member gone, is fine)."""
    yield proxy
    try:
        proxy.destroy()
    except Exception:  # noqa: BLE001
        pass


class MessageLog:
    """Topic message listener (for Topic.add_listener / ReliableTopic.add_listener) that
    records every TopicMessage."""

    def __init__(self):
        self.messages = []
        self._cond = threading.Condition()

    def __call__(self, message):
        with self._cond:
            self.messages.append(message)
            self._cond.notify_all()

    def payloads(self):
        with self._cond:
            return [m.message for m in self.messages]

    def wait_count(self, count, timeout=10.0):
        """The payloads once at least `count` messages have been recorded."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.messages) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        "%d messages within %.0f s, expected %d: %r"
                        % (len(self.messages), timeout, count, [m.message for m in self.messages][:50])
                    )
                self._cond.wait(remaining)
            return [m.message for m in self.messages]


class ItemLog:
    """Item-event callback for the add_listener of IQueue / IList / ISet
    (`proxy.add_listener(include_value, **log.callbacks())`): records (event type, item) of every
    event, item None when the listener was added without include_value."""

    def __init__(self):
        self.events = []
        self._cond = threading.Condition()

    def __call__(self, event):
        with self._cond:
            self.events.append((event.event_type, event.item))
            self._cond.notify_all()

    def callbacks(self):
        return {"item_added_func": self, "item_removed_func": self}

    def snapshot(self):
        with self._cond:
            return list(self.events)

    def wait_count(self, count, timeout=10.0):
        """All events once at least `count` have been recorded."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.events) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        "%d item events within %.0f s, expected %d: %r" % (len(self.events), timeout, count, self.events)
                    )
                self._cond.wait(remaining)
            return list(self.events)

    def wait_for(self, event, timeout=10.0):
        """Waits until `event` ((type, item)) has been recorded; returns every event so far."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while event not in self.events:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError("no %r within %.0f s; events so far: %r" % (event, timeout, self.events))
                self._cond.wait(remaining)
            return list(self.events)
