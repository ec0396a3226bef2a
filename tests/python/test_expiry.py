"""Entry expiry: per-entry time-to-live and max-idle, map defaults from member-config.yaml
(`ttl-*`: time-to-live-seconds 2, `idle-*`: max-idle-seconds 2), set_ttl, and the expiry
fields of get_entry_view, as a user of the Python client sees them.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * ttl / max_idle None (the client sends -1) and any negative value mean "the map's
    default"; 0 means "never", also on a map whose config has a default;
  * a write WITHOUT ttl (put, set, put_transient, replace, replace_if_same, try_put, put_all)
    replaces an entry's per-entry ttl by the map default; put_if_absent on an existing key
    changes nothing;
  * set_ttl returns True for an existing entry (False for an absent one), restarts the ttl
    from now, drops a per-entry max-idle (map default), counts as an update in the entry
    view's version, and sends no event; set_ttl(k, 0) makes the entry permanent;
  * expiry is checked on every access: an expired entry is never returned by get, get_all,
    contains_key, contains_value, key_set, values or entry_set; size() may still count it
    until the member's background expiry (or an access) removes it, which happens within
    seconds;
  * reads (get, contains_key) restart the max-idle period, get_entry_view does not;
  * Hazelcast keeps expiry times in whole seconds (a 1 s ttl may end up to 1 s early).
    The tests therefore use whole-second values and only assert bounds.
Entry views with default config (no per-entry statistics): creation_time, last_access_time,
hits and last_stored_time are -1; an entry WITH an expiry reports last_update_time (ms,
rounded down to the second), ttl / max_idle in ms and
expiration_time = last_update_time + ttl (or + max_idle when that comes first);
an entry without expiry reports ttl = max_idle = expiration_time = Long.MAX_VALUE and
last_update_time -1.
"""

import time

import pytest

from conftest import unique_name
from helpers import LONG_MAX, wait_until

EXPIRE_WITHIN = 10  # seconds: a 1-2 s expiry must have happened by then
# seconds until size() no longer counts expired entries nobody read: Hazelcast's background
# expiry took 11-15 s for 20 entries of 1 s ttl (measured)
CLEANUP_WITHIN = 40


@pytest.fixture
def ttl_map(client, request):
    proxy = client.get_map(unique_name(request, "ttl")).blocking()
    yield proxy
    proxy.destroy()


@pytest.fixture
def idle_map(client, request):
    proxy = client.get_map(unique_name(request, "idle")).blocking()
    yield proxy
    proxy.destroy()


def gone(m, key):
    return lambda: m.get(key) is None


def now_ms():
    return int(time.time() * 1000)


# writers that accept ttl / max_idle (try_put, replace and put_all do not)
WRITERS = {
    "put": lambda m, k, v, **kw: m.put(k, v, **kw),
    "set": lambda m, k, v, **kw: m.set(k, v, **kw),
    "put_if_absent": lambda m, k, v, **kw: m.put_if_absent(k, v, **kw),
    "put_transient": lambda m, k, v, **kw: m.put_transient(k, v, **kw),
}


# --------------------------------------------------------------------------- per-entry ttl


@pytest.mark.parametrize("writer", list(WRITERS), ids=list(WRITERS))
def test_ttl_entry_is_there_until_it_expires(m, writer):
    WRITERS[writer](m, "long", "v", ttl=30)
    WRITERS[writer](m, "short", "v", ttl=1)
    assert m.get("long") == "v"
    assert m.contains_key("long") is True
    wait_until(gone(m, "short"), EXPIRE_WITHIN, message="expiry of a 1 s ttl entry")
    assert m.contains_key("short") is False
    assert m.get("long") == "v"
    assert m.size() == 1


@pytest.mark.parametrize("writer", list(WRITERS), ids=list(WRITERS))
def test_max_idle_entry_expires_when_not_read(m, writer):
    WRITERS[writer](m, "idle", "v", max_idle=1)
    WRITERS[writer](m, "both", "v", ttl=30, max_idle=1)
    WRITERS[writer](m, "forever", "v", max_idle=0)
    # nothing reads the entries: poll with key_set, which does not count as an access
    wait_until(lambda: sorted(m.key_set()) == ["forever"], EXPIRE_WITHIN, message="expiry of idle entries")
    assert m.get("idle") is None
    assert m.get("both") is None
    assert m.get("forever") == "v"


def test_ttl_zero_and_negative_mean_map_default_or_forever(m):
    # on a map without configured expiry: 0, None and negative values all mean "never"
    m.put("zero", "v", ttl=0)
    m.put("none", "v", ttl=None)
    m.put("negative", "v", ttl=-1)
    m.put("short", "v", ttl=1)
    wait_until(gone(m, "short"), EXPIRE_WITHIN, message="expiry of the 1 s entry")
    assert m.get_all(["zero", "none", "negative"]) == {"zero": "v", "none": "v", "negative": "v"}
    for key in ("zero", "none", "negative"):
        view = m.get_entry_view(key)
        assert (view.ttl, view.max_idle, view.expiration_time) == (LONG_MAX, LONG_MAX, LONG_MAX)


def test_ttl_restarts_with_each_write_that_has_one(m):
    m.put("k", "v", ttl=1)
    # an entry written again with a long ttl does not keep the short one
    m.put("k", "v2", ttl=30)
    m.put("short", "v", ttl=1)
    wait_until(gone(m, "short"), EXPIRE_WITHIN, message="expiry of the 1 s entry")
    time.sleep(1)
    assert m.get("k") == "v2"


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda m: m.put("k", "w"), id="put"),
        pytest.param(lambda m: m.set("k", "w"), id="set"),
        pytest.param(lambda m: m.put_transient("k", "w"), id="put_transient"),
        pytest.param(lambda m: m.replace("k", "w"), id="replace"),
        pytest.param(lambda m: m.replace_if_same("k", "v", "w"), id="replace_if_same"),
        pytest.param(lambda m: m.try_put("k", "w", 5), id="try_put"),
        pytest.param(lambda m: m.put_all({"k": "w"}), id="put_all"),
    ],
)
def test_write_without_ttl_drops_the_entry_ttl(m, write):
    m.put("k", "v", ttl=1)
    write(m)
    view = m.get_entry_view("k")
    assert (view.value, view.ttl, view.expiration_time) == ("w", LONG_MAX, LONG_MAX)
    m.put("short", "v", ttl=1)
    wait_until(gone(m, "short"), EXPIRE_WITHIN, message="expiry of the 1 s entry")
    time.sleep(1)
    assert m.get("k") == "w"


def test_put_if_absent_on_existing_entry_keeps_its_ttl(m):
    m.put("k", "v", ttl=30)
    assert m.put_if_absent("k", "other", ttl=1) == "v"
    assert m.put_if_absent("k", "other") == "v"
    view = m.get_entry_view("k")
    assert (view.value, view.ttl, view.version) == ("v", 30_000, 0)


# --------------------------------------------------------------------------- set_ttl


def test_set_ttl(m):
    assert m.set_ttl("absent", 10) is False
    assert m.contains_key("absent") is False
    m.put("k", "v")
    m.put("other", "o")
    assert m.set_ttl("k", 1) is True
    assert m.get("k") == "v"
    wait_until(gone(m, "k"), EXPIRE_WITHIN, message="expiry after set_ttl")
    assert m.set_ttl("k", 10) is False  # expired entries are absent
    assert m.get("other") == "o"


def test_set_ttl_zero_makes_entry_permanent(m):
    m.put("k", "v", ttl=1)
    assert m.set_ttl("k", 0) is True
    view = m.get_entry_view("k")
    assert (view.ttl, view.expiration_time) == (LONG_MAX, LONG_MAX)
    m.put("short", "v", ttl=1)
    wait_until(gone(m, "short"), EXPIRE_WITHIN, message="expiry of the 1 s entry")
    time.sleep(1)
    assert m.get("k") == "v"


def test_set_ttl_counts_from_now_and_replaces_max_idle(m):
    m.put("k", "v", ttl=30, max_idle=20)
    version = m.get_entry_view("k").version
    time.sleep(1.1)
    before = now_ms()
    assert m.set_ttl("k", 40) is True
    after = now_ms()
    view = m.get_entry_view("k")
    assert view.ttl == 40_000
    assert view.max_idle == LONG_MAX  # the per-entry max-idle is gone (map default: none)
    assert before - 1000 <= view.last_update_time <= after
    assert view.expiration_time - view.last_update_time == 40_000
    assert view.version == version + 1
    assert view.value == "v"


# --------------------------------------------------------------------------- map defaults


def test_map_default_ttl(ttl_map):
    m = ttl_map
    m.put("default", "v")
    m.put("forever", "v", ttl=0)  # 0 = never, even on a map with a default ttl
    m.put("negative", "v", ttl=-1)  # negative = the map default
    m.put("long", "v", ttl=60)  # a per-entry ttl wins over the default
    assert m.get("default") == "v"
    wait_until(gone(m, "default"), EXPIRE_WITHIN, message="expiry by the map's 2 s default ttl")
    wait_until(gone(m, "negative"), EXPIRE_WITHIN, message="expiry by the map's 2 s default ttl")
    assert m.get("forever") == "v"
    assert m.get("long") == "v"
    assert m.get_entry_view("forever").ttl == LONG_MAX
    assert m.get_entry_view("long").ttl == 60_000


def test_map_default_ttl_for_every_writer(ttl_map):
    m = ttl_map
    m.put("put", "v")
    m.set("set", "v")
    m.put_if_absent("put_if_absent", "v")
    m.put_transient("put_transient", "v")
    m.try_put("try_put", "v", 5)
    m.put_all({"put_all": "v"})
    keys = ["put", "set", "put_if_absent", "put_transient", "try_put", "put_all"]
    for key in keys:
        assert m.get_entry_view(key).ttl == 2000, key
    wait_until(lambda: m.key_set() == [], EXPIRE_WITHIN, message="expiry of every entry")
    assert m.get_all(keys) == {}


def test_map_default_max_idle(idle_map):
    m = idle_map
    m.put("read", "v")
    m.put("unread", "v")
    m.put("forever", "v", max_idle=0)
    # reading "read" every 0.3 s for 5 s keeps it alive well past the 2 s max-idle
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        assert m.get("read") == "v"
        time.sleep(0.3)
    assert m.get_entry_view("read").max_idle == 2000
    wait_until(gone(m, "unread"), EXPIRE_WITHIN, message="expiry of the idle entry")
    assert m.get("forever") == "v"
    assert m.get("read") == "v"


def test_max_idle_reads_keep_entry_alive(m):
    m.put("read", "v", max_idle=3)
    m.put("contains", "v", max_idle=3)
    m.put("unread", "v", max_idle=3)
    # 8 s of reads every 0.5 s: far past the 3 s max-idle
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        assert m.get("read") == "v"
        assert m.contains_key("contains") is True
        time.sleep(0.5)
    assert "unread" not in m.key_set()
    assert m.get("read") == "v"
    assert m.get("contains") == "v"


def test_ttl_is_not_extended_by_reads(m):
    m.put("k", "v", ttl=2)
    deadline = time.monotonic() + EXPIRE_WITHIN
    while m.get("k") is not None:
        assert time.monotonic() < deadline, "the 2 s ttl entry outlived %d s of reads" % EXPIRE_WITHIN
        time.sleep(0.2)


# --------------------------------------------------------------------------- expired entries are invisible


@pytest.mark.timeout(90)
def test_expired_entries_are_never_returned(m):
    m.put("keep", "kept")
    for i in range(10):
        m.put("e%d" % i, "expiring-%d" % i, ttl=1)
    assert m.size() == 11
    # poll key_set (no per-key access) until the ttl entries are gone; from then on no read
    # may return them
    wait_until(lambda: m.key_set() == ["keep"], EXPIRE_WITHIN, message="expired entries leaving key_set")
    assert m.values() == ["kept"]
    assert m.entry_set() == [("keep", "kept")]
    assert m.get_all(["e%d" % i for i in range(10)] + ["keep"]) == {"keep": "kept"}
    assert m.contains_value("expiring-3") is False
    assert m.contains_value("kept") is True
    for i in range(10):
        assert m.get("e%d" % i) is None
        assert m.contains_key("e%d" % i) is False
        assert m.get_entry_view("e%d" % i) is None
    assert m.is_empty() is False
    # size() may lag behind until the member's background expiry removes the entries
    wait_until(lambda: m.size() == 1, CLEANUP_WITHIN, message="size() == 1")


@pytest.mark.timeout(90)
def test_size_drops_without_reads(m):
    for i in range(20):
        m.put("e%d" % i, i, ttl=1)
    m.put("keep", "v")
    # no per-key reads at all: the member removes expired entries by itself
    wait_until(lambda: m.size() == 1, CLEANUP_WITHIN, message="size() == 1 after expiry")
    assert m.key_set() == ["keep"]


def test_expired_entry_can_be_written_again(m):
    m.put("k", "old", ttl=1)
    wait_until(gone(m, "k"), EXPIRE_WITHIN, message="expiry")
    assert m.put_if_absent("k", "new") is None  # absent again: nothing returned
    assert m.get("k") == "new"
    view = m.get_entry_view("k")
    assert (view.ttl, view.expiration_time, view.version) == (LONG_MAX, LONG_MAX, 0)
    m.put("k2", "old", ttl=1)
    wait_until(gone(m, "k2"), EXPIRE_WITHIN, message="expiry")
    assert m.put("k2", "new") is None  # the expired value is not the previous value
    assert m.remove("k2") == "new"


# --------------------------------------------------------------------------- entry views


def test_entry_view_of_ttl_entry(m):
    before = now_ms()
    m.put("k", "v", ttl=30)
    after = now_ms()
    view = m.get_entry_view("k")
    assert (view.key, view.value, view.version) == ("k", "v", 0)
    assert view.ttl == 30_000
    assert view.max_idle == LONG_MAX
    # Hazelcast keeps the update time in whole seconds (rounded down)
    assert before - 1000 <= view.last_update_time <= after
    assert view.expiration_time - view.last_update_time == 30_000
    # default config: no per-entry statistics
    assert (view.creation_time, view.last_access_time, view.hits, view.last_stored_time) == (-1, -1, -1, -1)


def test_entry_view_of_max_idle_entry(m):
    before = now_ms()
    m.put("k", "v", max_idle=10)
    after = now_ms()
    view = m.get_entry_view("k")
    assert (view.ttl, view.max_idle) == (LONG_MAX, 10_000)
    assert before - 1000 <= view.last_update_time <= after
    assert view.expiration_time - view.last_update_time == 10_000
    assert (view.creation_time, view.last_access_time, view.hits) == (-1, -1, -1)
    # get_entry_view is not an access; a get is, and moves the expiration time
    time.sleep(1.1)
    assert m.get_entry_view("k").expiration_time == view.expiration_time
    m.get("k")
    moved = m.get_entry_view("k")
    assert moved.expiration_time > view.expiration_time
    assert moved.last_update_time == view.last_update_time  # a read is not an update
    assert moved.version == 0


def test_entry_view_with_ttl_and_max_idle(m):
    m.put("idle-first", "v", ttl=30, max_idle=10)
    m.put("ttl-first", "v", ttl=10, max_idle=30)
    view = m.get_entry_view("idle-first")
    assert (view.ttl, view.max_idle) == (30_000, 10_000)
    assert view.expiration_time - view.last_update_time == 10_000
    view = m.get_entry_view("ttl-first")
    assert (view.ttl, view.max_idle) == (10_000, 30_000)
    assert view.expiration_time - view.last_update_time == 10_000


def test_entry_view_of_map_defaults(ttl_map, idle_map):
    ttl_map.put("k", "v")
    view = ttl_map.get_entry_view("k")
    assert (view.ttl, view.max_idle) == (2000, LONG_MAX)
    assert view.expiration_time - view.last_update_time == 2000
    ttl_map.put("forever", "v", ttl=0)
    view = ttl_map.get_entry_view("forever")
    assert (view.ttl, view.max_idle, view.expiration_time) == (LONG_MAX, LONG_MAX, LONG_MAX)
    idle_map.put("k", "v")
    view = idle_map.get_entry_view("k")
    assert (view.ttl, view.max_idle) == (LONG_MAX, 2000)
    assert view.expiration_time - view.last_update_time == 2000


def test_entry_view_of_entry_without_expiry(m):
    m.put("k", "v")
    view = m.get_entry_view("k")
    assert (view.ttl, view.max_idle, view.expiration_time) == (LONG_MAX, LONG_MAX, LONG_MAX)
    assert view.last_update_time == -1
