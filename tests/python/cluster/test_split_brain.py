"""Network partitions between member processes (see conftest.py for running; these need root
and a private network namespace: `scripts/test` runs them under `unshare --net`, see
network.py). Three members on 127.0.0.2-4; the network between {0, 1} and {2} is cut with
iptables, on both targets alike.

What is checked today: both sides notice the split (a unisocket client on each side sees its
side's members only) and serve their own clients; split-brain protection (a rule of two
members, cluster_harness.MEMBER_CONFIG) refuses writes on the single member and serves them on
the two; after the cut is healed every member still serves, and the single member merges into
the two: each map ends as its merge policy says, and listeners hear MERGED events.
"""

import os
import threading
import time

import pytest
from hazelcast.errors import ConsistencyLostError
from test_cardinality_estimator import add_all, get_estimator

from . import network
from .cluster_harness import unique_map_name, wait_until
from .test_cluster import DROP_TIMEOUT, FORM_TIMEOUT, wait_members
from .test_split_brain_protection import refused, refused_after_failover

WHY_NOT = network.private_namespace()
pytestmark = [pytest.mark.timeout(180), pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))]

HOSTS = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]


@pytest.fixture
def net():
    cuts = network.Network(HOSTS)
    yield cuts
    cuts.heal()


def _three_members(make_cluster):
    """Three members on HOSTS and a unisocket client on each side of the {0, 1} | {2} cut."""
    cluster = make_cluster(3, hosts=HOSTS)
    cluster.start_members(range(3))
    large = cluster.client([cluster.addresses[0]], smart=False)
    small = cluster.client([cluster.addresses[2]], smart=False)
    wait_members(large, 3, FORM_TIMEOUT)
    wait_members(small, 3, FORM_TIMEOUT)
    return cluster, large, small


def test_a_cut_splits_the_cluster_and_protection_guards_the_small_side(make_cluster, net, request):
    cluster, large, small = _three_members(make_cluster)
    base = unique_map_name(request.node.name)
    guarded_large = large.get_map("protected-writes-" + base).blocking()
    guarded_small = small.get_map("protected-writes-" + base).blocking()
    free_large = large.get_map("free-" + base).blocking()
    free_small = small.get_map("free-" + base).blocking()
    guarded_large.put("before", "the cut")

    net.cut(HOSTS[:2], HOSTS[2:])
    wait_members(small, 1, DROP_TIMEOUT, "the small side after the cut (rules: %s)" % net.rules())
    wait_members(large, 2, DROP_TIMEOUT, "the large side after the cut")
    wait_until(
        lambda: refused_after_failover(lambda: guarded_small.put("k", "small")),
        DROP_TIMEOUT,
        "the small side refusing guarded writes",
    )
    assert not refused(lambda: guarded_small.get("k")), "reads are not guarded by a writes-only rule"
    wait_until(lambda: not refused_after_failover(lambda: guarded_large.put("k", "large")), 10, "large side writes")
    assert guarded_large.get("k") == "large"
    # Each side serves its own clients.
    for i in range(50):
        free_large.put("key-%d" % i, "large")
        free_small.put("key-%d" % i, "small")
    assert free_large.get("key-7") == "large" and free_small.get("key-7") == "small"

    net.heal()
    for proxy in (free_large, free_small):
        wait_until(lambda: proxy.get("key-7") is not None, 20, "served after the heal")
    # Once merged the single member is in a cluster of three: guarded writes pass again.
    wait_members(small, 3, 60, "the small side merged into the large one")
    wait_until(lambda: not refused_after_failover(lambda: guarded_small.put("k", "merged")), 20, "guarded writes after the merge")
    assert guarded_large.get("k") == "merged"
    cluster.assert_running(cluster.members, "after the heal")


def _write(proxy, keys, value):
    for key in keys:
        proxy.put(key, value)


def test_a_healed_split_merges_by_each_maps_policy(make_cluster, net, request):
    """{0, 1} | {2}: each side writes keys of its own and the same keys with its own values;
    after the heal the single member merges into the two (within the merge delays of 5 s) and
    each map holds what its policy gives: PutIfAbsent (the default) adds the small side's own
    keys and keeps the large side's values; PassThrough takes the small side's values;
    Discard adds nothing."""
    cluster, large, small = _three_members(make_cluster)
    base = unique_map_name(request.node.name)
    names = {"put-if-absent": "free-" + base, "pass-through": "merge-passthrough-" + base, "discard": "merge-discard-" + base}
    before = ["before-%d" % i for i in range(100)]
    for name in names.values():
        _write(large.get_map(name).blocking(), before, "before")

    heard = {policy: [] for policy in names}
    for policy, name in names.items():
        large.get_map(name).blocking().add_entry_listener(
            include_value=True, merged_func=lambda event, policy=policy: heard[policy].append((event.key, event.value))
        )
    net.cut(HOSTS[:2], HOSTS[2:])
    wait_members(small, 1, DROP_TIMEOUT, "the small side after the cut")
    wait_members(large, 2, DROP_TIMEOUT, "the large side after the cut")
    both = ["both-%d" % i for i in range(100)]
    only_large = ["large-%d" % i for i in range(100)]
    only_small = ["small-%d" % i for i in range(100)]
    for name in names.values():
        wait_until(lambda: large.get_map(name).blocking().size() >= len(before), 20, "the large side serving " + name)
        wait_until(lambda: small.get_map(name).blocking().size() >= 0, 20, "the small side serving " + name)
        large_map, small_map = large.get_map(name).blocking(), small.get_map(name).blocking()
        _write(large_map, both + only_large, "large")
        _write(small_map, both + only_small, "small")

    # A map created on the small side only, during the split, arrives whole.
    small_only = "free-small-only-" + base
    _write(small.get_map(small_only).blocking(), only_small, "small")
    # A replicated map (every member holds a copy; PutIfAbsent by default) merges too.
    replicated = "replicated-" + base
    large.get_replicated_map(replicated).blocking().put_all({key: "large" for key in both + only_large})
    small.get_replicated_map(replicated).blocking().put_all({key: "small" for key in both + only_small})

    net.heal()
    wait_members(small, 3, 60, "the small side merged into the large one")
    wait_members(large, 3, 60, "the large side after the merge")

    small_only_map = large.get_map(small_only).blocking()
    wait_until(
        lambda: dict(small_only_map.entry_set()) == {key: "small" for key in only_small},
        30,
        lambda: "the small side's own map after the merge: %d entries" % small_only_map.size(),
    )
    expected_replicated = {key: "large" for key in both + only_large}
    expected_replicated.update({key: "small" for key in only_small})
    for client in (large, small):
        copy = client.get_replicated_map(replicated).blocking()
        wait_until(
            lambda: dict(copy.entry_set()) == expected_replicated,
            30,
            lambda: "replicated map after the merge: %d entries, small-side values on keys both wrote: %d"
            % (copy.size(), sum(1 for key in both if copy.get(key) == "small")),
        )

    def merged(name):
        proxy = large.get_map(name).blocking()
        return dict(proxy.entry_set())

    expected_small = {"put-if-absent": "small", "pass-through": "small", "discard": None}
    expected_both = {"put-if-absent": "large", "pass-through": "small", "discard": "large"}
    for policy, name in names.items():

        def as_expected():
            entries = merged(name)
            return (
                all(entries.get(key) == "before" for key in before)
                and all(entries.get(key) == "large" for key in only_large)
                and all(entries.get(key) == expected_small[policy] for key in only_small)
                and all(entries.get(key) == expected_both[policy] for key in both)
            )

        wait_until(as_expected, 30, lambda: "%s after the merge: %s" % (policy, sorted(merged(name).items())[:20]))

    # A MERGED event for every entry the small side merged (its own keys and the keys both
    # sides wrote; the "before" keys it still held), carrying the value the key has after
    # the merge; none for Discard (Hazelcast sends nothing to merge with it).
    for policy, name in names.items():
        if policy == "discard":
            continue
        wanted = set(both + only_small)
        wait_until(lambda: wanted <= {key for key, _ in heard[policy]}, 10, lambda: "%s: %d MERGED events" % (policy, len(heard[policy])))
        final = merged(name)
        wrong = [(key, value) for key, value in heard[policy] if final.get(key) != value]
        assert wrong == [], "%s: MERGED events carry the merged value, e.g. %s" % (policy, wrong[:5])
        assert {key.split("-")[0] for key, _ in heard[policy]} <= {"before", "both", "small"}
    assert heard["discard"] == [], "no MERGED event for Discard"



def _estimates(client, names):
    return {name: get_estimator(client, name).estimate().result() for name in names}


def test_a_healed_split_merges_multimaps_estimators_and_pn_counters(make_cluster, net, request):
    """{0, 1} | {2}, each side writing to multimaps, cardinality estimators and a PN counter;
    after the heal the single member merges into the two. A multimap key's value collection
    merges whole by the multimap's policy (PutIfAbsent, the default: the small side's keys are
    added, the large side's values kept; PassThrough: the small side's collection replaces the
    key's; Discard: nothing). An estimator merges by its policy (HyperLogLogMergePolicy, the
    default: the union of both sides' registers; PassThrough: the small side's; PutIfAbsent
    and Discard: the large side's). A PN counter counts the increments of both sides."""
    cluster, large, small = _three_members(make_cluster)
    base = unique_map_name(request.node.name)
    multimaps = {"put-if-absent": "free-mm-" + base, "pass-through": "merge-passthrough-mm-" + base, "discard": "merge-discard-mm-" + base}
    estimators = {
        "hyper-log-log": "free-ce-" + base,
        "pass-through": "merge-passthrough-ce-" + base,
        "put-if-absent": "merge-putifabsent-ce-" + base,
        "discard": "merge-discard-ce-" + base,
    }
    counter = "pn-" + base
    # Set sizes far enough apart that every policy gives a different estimate.
    sets = {side: ["%s-%d" % (side, i) for i in range(count)] for side, count in (("before", 200), ("both", 300), ("large", 1000), ("small", 3000))}
    for name in multimaps.values():
        multimap = large.get_multi_map(name).blocking()
        for key in sets["before"][:20]:
            multimap.put(key, "before")
    for name in estimators.values():
        add_all(get_estimator(large, name), sets["before"])
    large.get_pn_counter(counter).blocking().add_and_get(1)

    net.cut(HOSTS[:2], HOSTS[2:])
    wait_members(small, 1, DROP_TIMEOUT, "the small side after the cut")
    wait_members(large, 2, DROP_TIMEOUT, "the large side after the cut")
    for name in multimaps.values():
        large_multimap, small_multimap = large.get_multi_map(name).blocking(), small.get_multi_map(name).blocking()
        wait_until(lambda: small_multimap.size() >= 0, 20, "the small side serving " + name)
        for key in sets["both"][:20] + sets["large"][:20]:
            large_multimap.put(key, "large")
        for key in sets["both"][:20] + sets["small"][:20]:
            small_multimap.put(key, "small-a")
            small_multimap.put(key, "small-b")
    for name in estimators.values():
        add_all(get_estimator(large, name), sets["both"] + sets["large"])
        add_all(get_estimator(small, name), sets["both"] + sets["small"])
    # An estimator created on the small side only, during the split, arrives whole.
    small_only = "free-ce-small-only-" + base
    add_all(get_estimator(small, small_only), sets["small"])
    # The small side holds the "before" items only if its member held a copy of the
    # estimator's partition: what PassThrough gives is the small side's own estimate.
    small_estimate = _estimates(small, [estimators["pass-through"]])[estimators["pass-through"]]
    wait_until(lambda: _add(small, counter, 100), 20, "the small side's PN counter adds")
    wait_until(lambda: _add(large, counter, 10), 20, "the large side's PN counter adds")

    net.heal()
    wait_members(small, 3, 60, "the small side merged into the large one")
    wait_members(large, 3, 60, "the large side after the merge")

    large_values, small_values = {"large"}, {"small-a", "small-b"}
    expected_small = {"put-if-absent": small_values, "pass-through": small_values, "discard": None}
    expected_both = {"put-if-absent": large_values, "pass-through": small_values, "discard": large_values}
    for policy, name in multimaps.items():
        multimap = large.get_multi_map(name).blocking()

        def held():
            return {key: set(multimap.get(key)) or None for key in sets["before"][:20] + sets["both"][:20] + sets["large"][:20] + sets["small"][:20]}

        def as_expected():
            values = held()
            return (
                all(values[key] == {"before"} for key in sets["before"][:20])
                and all(values[key] == large_values for key in sets["large"][:20])
                and all(values[key] == expected_small[policy] for key in sets["small"][:20])
                and all(values[key] == expected_both[policy] for key in sets["both"][:20])
            )

        wait_until(as_expected, 30, lambda: "multimap %s after the merge: %s" % (policy, sorted(held().items())[15:45]))

    union = len(sets["before"]) + len(sets["both"])
    exact = {
        "hyper-log-log": union + len(sets["large"]) + len(sets["small"]),
        "pass-through": small_estimate,
        "put-if-absent": union + len(sets["large"]),
        "discard": union + len(sets["large"]),
    }
    names = list(estimators.values()) + [small_only]
    wanted = {estimators[policy]: count for policy, count in exact.items()}
    wanted[small_only] = len(sets["small"])

    def estimates_close():
        estimates = _estimates(large, names)
        return all(abs(estimates[name] - count) <= count // 50 for name, count in wanted.items())

    wait_until(estimates_close, 30, lambda: "estimates after the merge: %s, wanted %s" % (_estimates(large, names), wanted))

    total = 1 + 10 + 100
    for client in (large, small):
        wait_until(lambda: _value(client, counter) == total, 30, lambda: "the PN counter after the merge: %s" % _value(client, counter))


def _add(client, counter, delta):
    """Adds `delta` to the counter; False if the side refused it (no replica reachable yet, or
    the replica the client saw last is on the other side: Hazelcast replicates adds
    asynchronously, so the others may not have its state; the client starts a new session, as
    ConsistencyLostException's documentation advises)."""
    proxy = client.get_pn_counter(counter).blocking()
    try:
        proxy.add_and_get(delta)
        return True
    except ConsistencyLostError:
        proxy.reset()
        return False
    except Exception:  # noqa: BLE001 - retried by wait_until
        return False


def _value(client, counter):
    try:
        return client.get_pn_counter(counter).blocking().get()
    except Exception as error:  # noqa: BLE001 - retried by wait_until
        return repr(error)


# Split/heal cycles of the cycles test (20 for the measurement: FERROGRID_SPLIT_CYCLES=20).
CYCLES = int(os.environ.get("FERROGRID_SPLIT_CYCLES", "4"))


class _Writer(threading.Thread):
    """Puts `prefix-i` = i through `proxy`, one at a time, until stopped; keeps what was
    acknowledged (a put that failed is tried again with the next key)."""

    def __init__(self, proxy, prefix):
        super().__init__(daemon=True)
        self.proxy, self.prefix = proxy, prefix
        self.acknowledged, self.failed = {}, 0
        self.stop = threading.Event()

    def run(self):
        i = 0
        while not self.stop.is_set():
            key = "%s-%d" % (self.prefix, i)
            i += 1
            try:
                self.proxy.put(key, i)
                self.acknowledged[key] = i
            except Exception:  # noqa: BLE001 - a refused or failed put is simply not acknowledged
                self.failed += 1
                time.sleep(0.05)


@pytest.mark.timeout(120 + 30 * CYCLES)
def test_split_heal_cycles_under_writers_lose_no_acknowledged_write(make_cluster, net, request):
    """{0, 1} | {2} cut and healed CYCLES times while a writer on each side puts new keys: after
    the last merge every write either side had acknowledged is in the map (PutIfAbsent: the
    keys are each side's own), and the cluster is one of three."""
    cluster, large, small = _three_members(make_cluster)
    name = "free-" + unique_map_name(request.node.name)
    writers = [_Writer(large.get_map(name).blocking(), "large"), _Writer(small.get_map(name).blocking(), "small")]
    for writer in writers:
        writer.start()
    started = time.monotonic()
    for cycle in range(CYCLES):
        net.cut(HOSTS[:2], HOSTS[2:])
        wait_members(small, 1, DROP_TIMEOUT, "cycle %d: the small side after the cut" % cycle)
        time.sleep(1.0)
        net.heal()
        wait_members(small, 3, 60, "cycle %d: merged after the heal" % cycle)
        wait_members(large, 3, 60, "cycle %d: the large side after the merge" % cycle)
    for writer in writers:
        writer.stop.set()
        writer.join(60)
    elapsed = time.monotonic() - started
    proxy = large.get_map(name).blocking()

    def missing():
        entries = dict(proxy.entry_set())
        return [key for writer in writers for key, value in writer.acknowledged.items() if entries.get(key) != value]

    wait_until(lambda: not missing(), 30, lambda: "acknowledged writes missing, e.g. %s" % missing()[:10])
    print(
        "split/heal cycles: %d in %.0f s; acknowledged %s; failed %s"
        % (CYCLES, elapsed, [len(w.acknowledged) for w in writers], [w.failed for w in writers])
    )
