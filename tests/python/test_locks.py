"""Map key locks (Map.Lock 0x011000, TryLock 0x011100, IsLocked 0x011200, Unlock 0x011300,
ForceUnlock 0x013300) and lock-aware writes, as a user of the Python client sees them.

A lock is owned by (client, thread id): the Python client sends threading.get_ident() of the
calling thread. So "another owner" is another client OR another thread of the same client.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * lock() returns None; locks are reentrant (N locks need N unlocks); a lock does not create
    the entry; is_locked is True for everybody while anyone holds the lock;
  * unlock by a non-owner (other client, other thread, or nobody holds it) raises
    IllegalMonitorStateError (error code 26, java.lang.IllegalMonitorStateException
    "Current thread is not owner of the lock!"); force_unlock releases any owner's lock
    (all reentrant holds) and returns None, also when the key is not locked;
  * lease_time: the lock is released by itself after the lease;
  * try_lock(timeout) waits up to timeout and returns False; try_lock without timeout does not
    wait; a blocked lock()/try_lock() is granted when the owner unlocks;
  * writes by non-owners (put, set, remove, delete, put_if_absent, replace, evict, set_ttl)
    wait until the key is unlocked; try_put / try_remove give up after their timeout and
    return False; reads (get, contains_key) do not wait; the owner's writes go through;
  * evict_all() and clear() skip locked entries;
  * the locks of a client that shuts down are released by the member: 3-10 s after the
    shutdown (the member's periodic client clean-up), ~9 s after a raw connection is cut.
"""

import threading
import time

import pytest
from hazelcast.errors import IllegalMonitorStateError

WAIT = 10  # seconds a granted lock / unblocked write may take
BLOCKED_CHECK = 1.0  # seconds after which a blocked call must still be blocked
CLEANUP_WITHIN = 30  # seconds until the locks of a client that shut down are released


@pytest.fixture
def two(client_factory, map_name):
    """(map proxy of client A, map proxy of client B), same map."""
    a = client_factory().get_map(map_name).blocking()
    b = client_factory().get_map(map_name).blocking()
    yield a, b
    try:
        a.destroy()
    except Exception:  # noqa: BLE001
        pass


class Background:
    """Runs fn in a thread; .done tells whether it finished, .result / .error what it gave."""

    def __init__(self, fn):
        self.done = threading.Event()
        self.result = None
        self.error = None
        self.finished_at = None

        def run():
            try:
                self.result = fn()
            except BaseException as e:  # noqa: BLE001
                self.error = e
            finally:
                self.finished_at = time.monotonic()
                self.done.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def wait(self, timeout=WAIT):
        assert self.done.wait(timeout), "the call did not complete within %s s" % timeout
        if self.error is not None:
            raise self.error
        return self.result


def in_other_thread(fn, timeout=WAIT):
    return Background(fn).wait(timeout)


# --------------------------------------------------------------------------- basics


def test_lock_unlock_is_locked(two):
    a, b = two
    assert a.is_locked("k") is False
    assert a.lock("k") is None
    assert a.is_locked("k") is True
    assert b.is_locked("k") is True
    # a lock does not create the entry
    assert a.contains_key("k") is False
    assert a.size() == 0
    assert a.unlock("k") is None
    assert a.is_locked("k") is False
    assert b.is_locked("k") is False


def test_locks_are_reentrant(two):
    a, b = two
    a.lock("k")
    a.lock("k")
    assert a.try_lock("k") is True  # the owner gets it again, a third hold
    a.unlock("k")
    a.unlock("k")
    assert a.is_locked("k") is True
    assert b.try_lock("k") is False
    a.unlock("k")
    assert a.is_locked("k") is False
    assert b.try_lock("k") is True
    b.unlock("k")


def test_unlock_by_non_owner_raises(two):
    a, b = two
    with pytest.raises(IllegalMonitorStateError):
        a.unlock("never-locked")
    a.lock("k")
    with pytest.raises(IllegalMonitorStateError):
        b.unlock("k")
    # the owner is client AND thread: another thread of A is not the owner either
    with pytest.raises(IllegalMonitorStateError):
        in_other_thread(lambda: a.unlock("k"))
    assert a.is_locked("k") is True
    a.unlock("k")
    with pytest.raises(IllegalMonitorStateError):
        a.unlock("k")


def test_other_thread_of_same_client_is_another_owner(two):
    a, _ = two
    a.lock("k")
    assert in_other_thread(lambda: a.try_lock("k")) is False
    assert in_other_thread(lambda: a.is_locked("k")) is True
    a.unlock("k")
    assert in_other_thread(lambda: a.try_lock("k")) is True
    # now the other thread holds it (its thread is gone, the lock stays)
    assert a.try_lock("k") is False
    a.force_unlock("k")


def test_force_unlock(two):
    a, b = two
    a.lock("k")
    a.lock("k")
    assert b.force_unlock("k") is None
    assert a.is_locked("k") is False
    # A's holds are all gone
    with pytest.raises(IllegalMonitorStateError):
        a.unlock("k")
    assert b.force_unlock("not-locked") is None
    assert b.try_lock("k") is True
    b.unlock("k")


def test_try_lock(two):
    a, b = two
    assert a.try_lock("k") is True
    start = time.monotonic()
    assert b.try_lock("k") is False  # no timeout: does not wait
    assert time.monotonic() - start < 2
    start = time.monotonic()
    assert b.try_lock("k", timeout=1) is False
    elapsed = time.monotonic() - start
    assert 0.8 <= elapsed < 6, elapsed
    # a waiting try_lock is granted when A unlocks
    waiting = Background(lambda: b.try_lock("k", timeout=20))
    time.sleep(BLOCKED_CHECK)
    assert not waiting.done.is_set()
    a.unlock("k")
    assert waiting.wait() is True
    assert a.try_lock("k") is False
    # B's waiting thread owns it now, not B's main thread
    with pytest.raises(IllegalMonitorStateError):
        b.unlock("k")
    b.force_unlock("k")


def test_blocked_lock_is_granted_on_unlock(two):
    a, b = two
    a.lock("k")
    waiting = Background(lambda: b.lock("k"))
    time.sleep(BLOCKED_CHECK)
    assert not waiting.done.is_set(), "B's lock() returned while A held the lock"
    a.unlock("k")
    assert waiting.wait() is None
    assert a.is_locked("k") is True
    assert a.try_lock("k") is False
    # the lock belongs to B's waiting thread (now finished): force_unlock cleans up
    b.force_unlock("k")
    assert b.is_locked("k") is False


@pytest.mark.parametrize("lock", ["lock", "try_lock"])
def test_lease_time_releases_the_lock(two, lock):
    a, b = two
    if lock == "lock":
        assert a.lock("k", lease_time=1) is None
    else:
        assert a.try_lock("k", lease_time=1) is True
    assert a.is_locked("k") is True
    start = time.monotonic()
    while a.is_locked("k"):
        assert time.monotonic() - start < WAIT, "the 1 s lease was not released within %d s" % WAIT
        time.sleep(0.05)
    assert b.try_lock("k") is True
    b.unlock("k")
    # the lease ended the lock: A cannot unlock any more
    with pytest.raises(IllegalMonitorStateError):
        a.unlock("k")


def test_long_lease_is_held(two):
    a, b = two
    a.lock("k", lease_time=60)
    time.sleep(1)
    assert b.try_lock("k") is False
    a.unlock("k")
    assert b.try_lock("k") is True
    b.unlock("k")


# --------------------------------------------------------------------------- lock-aware writes


def test_put_by_other_client_waits_for_unlock(two):
    a, b = two
    a.put("k", "original")
    a.lock("k")
    writer = Background(lambda: b.put("k", "from-b"))
    time.sleep(BLOCKED_CHECK)
    assert not writer.done.is_set(), "B's put completed while A held the lock"
    # reads do not wait for the lock; the owner's writes go through
    assert b.get("k") == "original"
    assert b.contains_key("k") is True
    assert a.put("k", "from-a") == "original"
    assert a.get("k") == "from-a"
    a.unlock("k")
    assert writer.wait() == "from-a"
    assert a.get("k") == "from-b"


@pytest.mark.parametrize(
    "operation,expected_value",
    [
        pytest.param(lambda m: m.set("k", "new"), "new", id="set"),
        pytest.param(lambda m: m.remove("k"), None, id="remove"),
        pytest.param(lambda m: m.delete("k"), None, id="delete"),
        pytest.param(lambda m: m.replace("k", "new"), "new", id="replace"),
        pytest.param(lambda m: m.replace_if_same("k", "v", "new"), "new", id="replace_if_same"),
        pytest.param(lambda m: m.remove_if_same("k", "v"), None, id="remove_if_same"),
        pytest.param(lambda m: m.put_transient("k", "new"), "new", id="put_transient"),
        pytest.param(lambda m: m.evict("k"), None, id="evict"),
        pytest.param(lambda m: m.set_ttl("k", 100), "v", id="set_ttl"),
    ],
)
def test_writes_by_other_client_wait_for_unlock(two, operation, expected_value):
    a, b = two
    a.put("k", "v")
    a.lock("k")
    writer = Background(lambda: operation(b))
    time.sleep(BLOCKED_CHECK)
    assert not writer.done.is_set(), "the write completed while the key was locked"
    assert a.get("k") == "v"
    a.unlock("k")
    writer.wait()
    assert a.get("k") == expected_value


def test_put_if_absent_on_locked_absent_key_waits(two):
    a, b = two
    a.lock("k")  # locking an absent key blocks other writers of it too
    writer = Background(lambda: b.put_if_absent("k", "from-b"))
    time.sleep(BLOCKED_CHECK)
    assert not writer.done.is_set()
    assert b.get("k") is None
    a.unlock("k")
    assert writer.wait() is None
    assert a.get("k") == "from-b"


def test_try_put_and_try_remove_give_up(two):
    a, b = two
    a.put("k", "v")
    a.lock("k")
    start = time.monotonic()
    assert b.try_put("k", "from-b", 1) is False
    elapsed = time.monotonic() - start
    assert 0.8 <= elapsed < 6, elapsed
    start = time.monotonic()
    assert b.try_remove("k", 1) is False
    elapsed = time.monotonic() - start
    assert 0.8 <= elapsed < 6, elapsed
    assert a.get("k") == "v"
    # the owner's try_* go through
    assert a.try_put("k", "from-a", 1) is True
    assert a.get("k") == "from-a"
    a.unlock("k")
    assert b.try_put("k", "from-b", 1) is True
    assert b.try_remove("k", 1) is True
    assert a.contains_key("k") is False


def test_evict_all_and_clear_keep_locked_entries(two):
    a, b = two
    a.put_all({"locked": "l", "free": "f"})
    a.lock("locked")
    b.evict_all()
    assert a.key_set() == ["locked"]
    a.put("free", "f")
    b.clear()
    assert a.key_set() == ["locked"]
    assert a.get("locked") == "l"
    a.unlock("locked")
    b.clear()
    assert a.size() == 0


def test_locks_are_per_map_and_key(client, two, request):
    from conftest import unique_name

    a, b = two
    other = client.get_map(unique_name(request, "other")).blocking()
    a.lock("k")
    assert b.try_lock("k2") is True
    assert other.try_lock("k") is True
    assert b.put("k2", "x") is None
    other.unlock("k")
    b.unlock("k2")
    a.unlock("k")
    other.destroy()


# --------------------------------------------------------------------------- owner leaves


@pytest.mark.timeout(120)
def test_locks_of_a_client_that_shuts_down_are_released(client_factory, map_name):
    doomed = client_factory()
    survivor = client_factory().get_map(map_name).blocking()
    dm = doomed.get_map(map_name).blocking()
    dm.put("k", "v")
    dm.lock("k")
    dm.lock("k")  # reentrant holds go too
    dm.lock("absent")
    waiting_put = Background(lambda: survivor.put("k", "after"))
    time.sleep(BLOCKED_CHECK)
    assert not waiting_put.done.is_set()
    doomed.shutdown()
    start = time.monotonic()
    while not survivor.try_lock("absent", timeout=0.5):
        assert time.monotonic() - start < CLEANUP_WITHIN, "the lock outlived its client by %d s" % CLEANUP_WITHIN
    survivor.unlock("absent")
    assert waiting_put.wait(CLEANUP_WITHIN) == "v"
    assert survivor.get("k") == "after"
    assert survivor.is_locked("k") is False
