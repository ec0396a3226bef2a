"""Network partitions between member processes (see conftest.py for running; these need root
and a private network namespace: `scripts/test` runs them under `unshare --net`, see
network.py). Three members on 127.0.0.2-4; the network between {0, 1} and {2} is cut with
iptables, on both targets alike.

What is checked today: both sides notice the split (a unisocket client on each side sees its
side's members only) and serve their own clients; split-brain protection (a rule of two
members, cluster_harness.MEMBER_CONFIG) refuses writes on the single member and serves them on
the two; after the cut is healed every member still serves, and the single member merges into
the two: each map ends as its merge policy says, and listeners hear MERGED events; queues,
lists, sets and ringbuffers merge whole, as each one's merge policy says.
"""

import os
import threading
import time

import pytest
from hazelcast.config import IndexType
from hazelcast.errors import ConsistencyLostError
from hazelcast.predicate import greater_or_equal
from test_cardinality_estimator import add_all, get_estimator

from . import network
from .cluster_harness import Point, PointSerializer, unique_map_name, wait_until
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


# What each side writes to every queue, list, set and ringbuffer of the collections test.
LARGE_ITEMS = ["large-0", "large-1", "large-2"]
# Six items into ringbuffers of capacity 4: the small side's hold sequences 2..5.
SMALL_ITEMS = ["small-%d" % i for i in range(6)]


def _fill(client, kind, name, items):
    """Writes `items` to the `kind` structure `name` through `client`."""
    if kind == "queue":
        client.get_queue(name).blocking().add_all(items)
    elif kind == "list":
        client.get_list(name).blocking().add_all(items)
    elif kind == "set":
        client.get_set(name).blocking().add_all(items)
    else:
        ringbuffer = client.get_ringbuffer(name).blocking()
        for item in items:
            ringbuffer.add(item)


def _held(client, kind, name):
    """What the `kind` structure `name` holds as a client sees it: a queue's or list's items in
    order, a set's sorted, a ringbuffer's (head sequence, tail sequence, items)."""
    if kind == "queue":
        return client.get_queue(name).blocking().iterator()
    if kind == "list":
        return client.get_list(name).blocking().get_all()
    if kind == "set":
        return sorted(client.get_set(name).blocking().get_all())
    ringbuffer = client.get_ringbuffer(name).blocking()
    head, tail = ringbuffer.head_sequence(), ringbuffer.tail_sequence()
    items = list(ringbuffer.read_many(head, 0, 4)) if tail >= head else []
    return (head, tail, items)


def _as_held(kind, items):
    """`items` as `_held` reports them after they were written to a new structure."""
    if kind == "set":
        return sorted(items)
    if kind == "ringbuffer":
        kept = items[-4:]
        return (len(items) - len(kept), len(items) - 1, kept)
    return list(items)


def test_a_healed_split_merges_queues_lists_sets_and_ringbuffers_whole(make_cluster, net, request):
    """{0, 1} | {2}: per kind, a structure only the small side writes, and structures both
    sides write under PutIfAbsent (the default), PassThrough and Discard. Each merges as one
    value, the whole container: PutIfAbsent takes the small side's items only where the large
    side's is empty, PassThrough replaces the large side's with them (a ringbuffer with the
    small side's head and tail sequences too), Discard keeps the large side's."""
    cluster, large, small = _three_members(make_cluster)
    base = unique_map_name(request.node.name)
    kinds = ["queue", "list", "set", "ringbuffer"]
    # (kind, policy) -> name; the ringbuffers' PutIfAbsent names match `merge-rb-*` (capacity 4).
    names = {}
    for kind in kinds:
        prefix = "merge-rb-" if kind == "ringbuffer" else "free-"
        names[(kind, "only-small")] = "%s%s-only-small-%s" % (prefix, kind, base)
        names[(kind, "put-if-absent")] = "%s%s-both-%s" % (prefix, kind, base)
        names[(kind, "pass-through")] = "merge-passthrough-%s-%s" % (kind, base)
        names[(kind, "discard")] = "merge-discard-%s-%s" % (kind, base)

    net.cut(HOSTS[:2], HOSTS[2:])
    wait_members(small, 1, DROP_TIMEOUT, "the small side after the cut")
    wait_members(large, 2, DROP_TIMEOUT, "the large side after the cut")
    probe = "free-probe-" + base
    for client in (large, small):
        wait_until(lambda: client.get_map(probe).blocking().size() >= 0, 20, "each side serving")
    for (kind, policy), name in names.items():
        _fill(small, kind, name, SMALL_ITEMS)
        if policy != "only-small":
            _fill(large, kind, name, LARGE_ITEMS)

    net.heal()
    wait_members(small, 3, 60, "the small side merged into the large one")
    wait_members(large, 3, 60, "the large side after the merge")

    winner = {"only-small": SMALL_ITEMS, "put-if-absent": LARGE_ITEMS, "pass-through": SMALL_ITEMS, "discard": LARGE_ITEMS}
    expected = {key: _as_held(key[0], winner[key[1]]) for key in names}

    def held():
        return {key: _held(large, key[0], name) for key, name in names.items()}

    def wrong():
        now = held()
        return {"%s %s" % key: now[key] for key in names if now[key] != expected[key]}

    wait_until(lambda: held() == expected, 30, lambda: "after the merge, not as expected: %s" % wrong())
    # Each member serves the merged structures alike (the small side's client asks its own member).
    assert {key: _held(small, key[0], name) for key, name in names.items()} == expected



def test_what_the_small_side_created_reaches_the_merged_cluster(make_cluster, net, request):
    """{0, 1} | {2}: during the split the small side creates an SQL mapping, a map of Compact
    values (its schema is new to the cluster) and a map whose policy discards its entries.
    After the merge a client of the large side queries the mapping, reads the Compact values
    (fetching the schema from its member) and lists the discarded map's proxy. A listener the
    small side's client registered before the split hears none of the large side's writes
    made during it, and each write after the merge once. Flake ids drawn on both sides during
    the split and after the merge are all different. The small side's entries of an indexed
    map are found through the index."""
    cluster, large, small = _three_members(make_cluster)
    base = unique_map_name(request.node.name).replace("-", "_")
    writer = cluster.client([cluster.addresses[2]], smart=False, compact_serializers=[PointSerializer()])
    wait_members(writer, 3, FORM_TIMEOUT)
    # A listener of the small side's client, registered before the split, hears the merged
    # cluster's writes once each.
    heard_name = "free-heard-" + base
    heard = []
    small.get_map(heard_name).blocking().add_entry_listener(added_func=lambda event: heard.append(event.key))
    # A map with a sorted index on its values: what the small side merges in is indexed.
    indexed = "free-indexed-" + base
    large.get_map(indexed).blocking().add_index(attributes=["this"], index_type=IndexType.SORTED)
    net.cut(HOSTS[:2], HOSTS[2:])
    wait_members(small, 1, DROP_TIMEOUT, "the small side after the cut")
    wait_members(large, 2, DROP_TIMEOUT, "the large side after the cut")
    for i in range(10):
        large.get_map(heard_name).blocking().put("during-%d" % i, i)

    mapping, points, discarded = "rows_" + base, "free_points_" + base, "merge-discard-" + base
    wait_until(lambda: small.get_map(mapping).blocking().size() >= 0, 20, "the small side serving")
    ddl = "CREATE MAPPING %s (__key INT, this VARCHAR) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')"
    small.sql.execute(ddl % mapping).result()
    small.sql.execute("INSERT INTO %s VALUES (1, 'one'), (2, 'two')" % mapping).result()
    writer.get_map(points).blocking().put_all({i: Point(i, -i) for i in range(10)})
    small.get_map(discarded).blocking().put("k", "v")
    small.get_map(indexed).blocking().put_all({"small-%d" % i: 1000 + i for i in range(50)})
    large.get_map(indexed).blocking().put_all({"large-%d" % i: i for i in range(50)})
    # Flake ids stay unique across the sides and the merge (node ids are join versions).
    ids = [client.get_flake_id_generator("ids-" + base).blocking().new_id() for client in (large, small) for _ in range(100)]

    net.heal()
    wait_members(small, 3, 60, "the small side merged into the large one")
    wait_members(large, 3, 60, "the large side after the merge")

    def rows():
        with large.sql.execute("SELECT __key, this FROM %s ORDER BY __key" % mapping).result() as result:
            return [(row[0], row[1]) for row in result]

    wait_until(lambda: _quietly(rows) == [(1, "one"), (2, "two")], 30, lambda: "the mapping's rows: %s" % (_quietly(rows),))
    reader = cluster.client([cluster.addresses[0]], smart=False, compact_serializers=[PointSerializer()])
    merged = reader.get_map(points).blocking()
    wait_until(lambda: merged.size() == 10, 30, lambda: "Compact entries after the merge: %d" % merged.size())
    assert merged.get(3) == Point(3, -3)
    names = lambda: {(o.service_name, o.name) for o in large.get_distributed_objects()}  # noqa: E731
    wait_until(lambda: ("hz:impl:mapService", discarded) in names(), 30, lambda: "proxies: %s" % sorted(names()))

    ids += [client.get_flake_id_generator("ids-" + base).blocking().new_id() for client in (large, small) for _ in range(100)]
    assert len(set(ids)) == len(ids), "flake ids repeated across the split and the merge"
    index_hits = lambda: sorted(large.get_map(indexed).blocking().key_set(greater_or_equal("this", 1000)))  # noqa: E731
    wanted = sorted("small-%d" % i for i in range(50))
    wait_until(lambda: index_hits() == wanted, 30, lambda: "indexed query after the merge: %s" % index_hits()[:10])
    after = ["after-%d" % i for i in range(10)]
    for key in after:
        large.get_map(heard_name).blocking().put(key, 1)
    wait_until(lambda: set(after) <= set(heard), 30, lambda: "heard after the merge: %s" % sorted(heard))
    time.sleep(1.0)
    assert sorted(key for key in heard if key.startswith("after")) == sorted(after), "each once: %s" % heard
    # Nothing of the other cluster's split: Hazelcast drops a removed member's registrations.
    assert [key for key in heard if key.startswith("during")] == [], "events from across the split"


def _quietly(call):
    """`call()`, or the error it raised (for a condition polled until it holds)."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - reported by the wait's message
        return repr(error)


# Time between the two rounds of writes and reads of the statistics test: Hazelcast keeps an
# entry's times in whole seconds, and a tie goes to the merging entry.
STATS_GAP = 1.5


def test_the_statistics_policies_merge_by_each_entrys_statistics(make_cluster, net, request):
    """{0, 1} | {2}: both sides write the same keys, then one side writes again, reads, or sets
    a longer time-to-live; after the merge each key holds the value of the side its map's
    policy prefers (LatestUpdate: the later write; LatestAccess: the later read; HigherHits:
    the side that read it more; ExpirationTime: the later expiry). Per-entry statistics are on
    for these maps (cluster_harness.COMMON_STRUCTURES).

    Also what a near cache of the small side holds after the merge: the merged value, not the
    value it cached during the split (Hazelcast's clients clear their near caches when the
    cluster they reconnect to is another)."""
    cluster, large, small = _three_members(make_cluster)
    base = unique_map_name(request.node.name)
    cached_name = "free-near-" + base
    cached_client = cluster.client([cluster.addresses[2]], smart=False, near_caches={cached_name: {}})
    wait_members(cached_client, 3, FORM_TIMEOUT)
    cached = cached_client.get_map(cached_name).blocking()
    near_keys = ["near-%d" % i for i in range(20)]
    policies = ["latest-update", "latest-access", "higher-hits", "expiration-time"]
    maps = {side: {p: client.get_map("merge-%s-%s" % (p, base)).blocking() for p in policies} for side, client in (("large", large), ("small", small))}
    for proxy in maps["large"].values():
        proxy.put("created", "before the cut")
    net.cut(HOSTS[:2], HOSTS[2:])
    wait_members(small, 1, DROP_TIMEOUT, "the small side after the cut")
    wait_members(large, 2, DROP_TIMEOUT, "the large side after the cut")
    # The large side holds every partition (one backup); the small side serves what it held.
    for proxy in maps["large"].values():
        wait_until(lambda: proxy.get("created") == "before the cut", 20, "the large side serving " + proxy.name)
    for proxy in maps["small"].values():
        wait_until(lambda: proxy.size() >= 0, 20, "the small side serving " + proxy.name)

    # Keys "<winner>-i": the side named is the one the policy should keep.
    keys = {winner: ["%s-%d" % (winner, i) for i in range(20)] for winner in ("large", "small")}
    other = {"large": "small", "small": "large"}
    for winner in ("large", "small"):
        loser = other[winner]
        for key in keys[winner]:
            # LatestUpdate: the loser writes now, the winner after the gap (below).
            maps[loser]["latest-update"].put(key, loser)
            for policy in ("latest-access", "higher-hits"):
                maps["large"][policy].put(key, "large")
                maps["small"][policy].put(key, "small")
            # ExpirationTime: the winner's entry lives longer.
            maps[loser]["expiration-time"].put(key, loser, ttl=600)
            maps[winner]["expiration-time"].put(key, winner, ttl=1200)
            # HigherHits: the winner reads its entry three times.
            for _ in range(3):
                maps[winner]["higher-hits"].get(key)
    # PutIfAbsent: the large side's values win; the small side's client caches its own.
    for key in near_keys:
        cached.put(key, "small")
        assert cached.get(key) == "small"
        large.get_map(cached_name).blocking().put(key, "large")
    assert cached.get(near_keys[0]) == "small", "read from the near cache"
    time.sleep(STATS_GAP)
    for winner in ("large", "small"):
        for key in keys[winner]:
            maps[winner]["latest-update"].put(key, winner)
            # LatestAccess: the winner's read is the later access.
            maps[winner]["latest-access"].get(key)

    net.heal()
    wait_members(small, 3, 60, "the small side merged into the large one")
    wait_members(large, 3, 60, "the large side after the merge")
    for policy in policies:
        proxy = maps["large"][policy]

        def wrong():
            entries = dict(proxy.entry_set())
            return [(key, entries.get(key)) for winner in ("large", "small") for key in keys[winner] if entries.get(key) != winner]

        wait_until(lambda: not wrong(), 30, lambda: "%s after the merge, keys with the other side's value: %s" % (policy, wrong()[:10]))
        assert proxy.get("created") == "before the cut"
    stale = lambda: [key for key in near_keys if cached.get(key) != "large"]  # noqa: E731
    if cluster.target == "hazelcast":
        # Hazelcast 5.6 invalidates only some of them (4 of 20 were stale 30 s after the merge:
        # its client repairs them at its next reconciliation, 60 s by default); ferrogrid's
        # owners invalidate every merging key, as they publish a MERGED event for each.
        time.sleep(5)
        print("Hazelcast: %d of %d near-cached keys stale 5 s after the merge" % (len(stale()), len(near_keys)))
    else:
        wait_until(lambda: not stale(), 30, lambda: "near-cached keys still with the split's value: %s" % stale()[:10])


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
        # The longest a put took (s) and when it started (s after the writer did).
        self.slowest = (0.0, 0.0)
        self.stop = threading.Event()

    def run(self):
        i = 0
        began = time.monotonic()
        while not self.stop.is_set():
            key = "%s-%d" % (self.prefix, i)
            i += 1
            start = time.monotonic()
            try:
                self.proxy.put(key, i)
                self.acknowledged[key] = i
            except Exception:  # noqa: BLE001 - a refused or failed put is simply not acknowledged
                self.failed += 1
                time.sleep(0.05)
            self.slowest = max(self.slowest, (time.monotonic() - start, start - began))


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


# Entries written before the third member joins in the faults test, and its members'
# migrations: one partition at a time, so that the migration to the third member is still
# running when the cut comes.
FAULT_ENTRIES = 20000
ONE_MIGRATION_AT_A_TIME = "    hazelcast.partition.max.parallel.migrations: 1\n"


def test_a_split_during_a_migration_then_a_second_split_heal_into_one_cluster(make_cluster, net, request):
    """Faults: the cut {0, 1} | {2} comes while partitions migrate to member 2, which has just
    joined; then {0} | {1} splits the large side too (three clusters of one). A writer on each
    member puts its own keys throughout. After the heal the three merge into one cluster of
    three, and it holds every entry written before and every write any side acknowledged."""
    cluster = make_cluster(3, hosts=HOSTS)
    cluster.start_members([0, 1], extra_properties=ONE_MIGRATION_AT_A_TIME)
    clients = [cluster.client([cluster.addresses[i]], smart=False) for i in range(2)]
    wait_members(clients[0], 2, FORM_TIMEOUT)
    name = "free-" + unique_map_name(request.node.name)
    before = {"before-%d" % i: i for i in range(FAULT_ENTRIES)}
    for start in range(0, FAULT_ENTRIES, 1000):
        clients[0].get_map(name).blocking().put_all({key: before[key] for key in list(before)[start : start + 1000]})

    cluster.start_members([2], extra_properties=ONE_MIGRATION_AT_A_TIME)
    clients.append(cluster.client([cluster.addresses[2]], smart=False))
    wait_members(clients[0], 3, FORM_TIMEOUT, "member 2 joined")
    net.cut(HOSTS[:2], HOSTS[2:])
    writers = [_Writer(client.get_map(name).blocking(), "member%d" % i) for i, client in enumerate(clients)]
    for writer in writers:
        writer.start()
    wait_members(clients[2], 1, DROP_TIMEOUT, "member 2 alone after the first cut")
    wait_members(clients[0], 2, DROP_TIMEOUT, "the large side after the first cut")
    time.sleep(1.0)
    net.cut(HOSTS[:1], HOSTS[1:2])
    for i, client in enumerate(clients):
        wait_members(client, 1, DROP_TIMEOUT, "member %d alone after the second cut" % i)
    time.sleep(1.0)
    net.heal()
    for i, client in enumerate(clients):
        wait_members(client, 3, 90, "member %d in one cluster of three after the heal" % i)
    for writer in writers:
        writer.stop.set()
        writer.join(60)
    proxy = clients[0].get_map(name).blocking()
    expected = dict(before)
    for writer in writers:
        expected.update(writer.acknowledged)

    def missing():
        entries = dict(proxy.entry_set())
        return [key for key, value in expected.items() if entries.get(key) != value]

    wait_until(lambda: not missing(), 60, lambda: "%d entries missing or wrong, e.g. %s" % (len(missing()), missing()[:10]))
    print(
        "faults: acknowledged %s, failed %s, slowest put (s, at s) %s"
        % ([len(w.acknowledged) for w in writers], [w.failed for w in writers], [w.slowest for w in writers])
    )
