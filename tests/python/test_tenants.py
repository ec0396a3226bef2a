"""Multi-tenancy, as the official Python client sees it: tenants authenticate with their own
credentials, see only their own maps, and are held to their quotas with a clear error.

The module starts its OWN ferrogrid member (tenants in its config) on another free port, so the
session's member is not disturbed. ferrogrid only: Hazelcast has no tenants.
"""

import os
import time
import urllib.request

import hazelcast
import pytest
from hazelcast.errors import HazelcastError

from member import Member, free_port

pytestmark = pytest.mark.ferrogrid_only

CLUSTER = "tenants"
TENANTS = {
    # name: (username, password)
    "team-a": ("alice", "a-secret"),
    "team-b": ("bob", "b-secret"),
    "team-c": ("carol", "c-secret"),
    "team-d": ("dave", "d-secret"),
}


@pytest.fixture(scope="module")
def tenant_member(target, tmp_path_factory):
    if os.environ.get("FERROGRID_ADDRESS"):
        pytest.skip("FERROGRID_ADDRESS given: not starting members")
    workdir = tmp_path_factory.mktemp("tenants")
    port, metrics_port = free_port(), free_port()
    config = workdir / "tenants.yaml"
    config.write_text(
        f"""hazelcast:
  cluster-name: {CLUSTER}
  network:
    port: {{port: {port}, auto-increment: false}}
    join: {{multicast: {{enabled: false}}}}
  properties:
    hazelcast.io.balancer.interval.seconds: -1
ferrogrid:
  metrics: {{file: '', http-port: {metrics_port}}}
  tenants:
    - {{name: team-a, username: alice, password: a-secret, weight: 2, max-connections: 2}}
    - {{name: team-b, username: bob, password: b-secret, max-ops-per-second: 50, over-quota: reject}}
    - {{name: team-c, username: carol, password: c-secret, max-entries: 100}}
    - {{name: team-d, username: dave, password: d-secret, max-ops-per-second: 100, over-quota: throttle}}
"""
    )
    member = Member(target, port=port, cluster_name=CLUSTER, config=config, workdir=workdir, credentials=TENANTS["team-a"])
    member.start()
    member.metrics_port = metrics_port
    yield member
    member.stop()


def connect(member, tenant, **kwargs):
    username, password = TENANTS[tenant]
    options = dict(
        cluster_members=[member.address],
        cluster_name=CLUSTER,
        creds_username=username,
        creds_password=password,
        cluster_connect_timeout=5.0,
    )
    options.update(kwargs)
    return hazelcast.HazelcastClient(**options)


def metric(member, name, tenant):
    with urllib.request.urlopen(f"http://127.0.0.1:{member.metrics_port}/metrics", timeout=5) as response:
        text = response.read().decode()
    prefix = f'{name}{{tenant="{tenant}"}} '
    lines = [line for line in text.splitlines() if line.startswith(prefix)]
    assert lines, f"no probe {prefix!r} in /metrics"
    return float(lines[0].split()[-1])


def test_maps_are_namespaced_per_tenant(tenant_member):
    alice, bob = connect(tenant_member, "team-a"), connect(tenant_member, "team-b")
    try:
        a_orders, b_orders = alice.get_map("orders").blocking(), bob.get_map("orders").blocking()
        a_orders.put_all({"o-1": "alice's", "o-2": "alice's too"})
        alice.get_map("alice-only").blocking().put("k", "v")
        # Same name, different tenant: another map.
        assert b_orders.get("o-1") is None
        assert b_orders.size() == 0 and b_orders.key_set() == []
        assert not b_orders.contains_value("alice's")
        b_orders.put("o-1", "bob's")
        assert a_orders.get("o-1") == "alice's"
        # B clears and destroys only its own map.
        b_orders.clear()
        b_orders.destroy()
        assert a_orders.size() == 2
        # Listings show a tenant its own objects, by the names it used.
        a_names = {o.name for o in alice.get_distributed_objects()}
        b_names = {o.name for o in bob.get_distributed_objects()}
        assert {"orders", "alice-only"} <= a_names
        assert "alice-only" not in b_names
        assert not any("\0" in name or "team-" in name for name in a_names | b_names)
    finally:
        alice.shutdown()
        bob.shutdown()


def test_queues_topics_ringbuffers_lists_sets_and_multimaps_are_namespaced_per_tenant(tenant_member):
    alice, bob = connect(tenant_member, "team-a"), connect(tenant_member, "team-b")
    try:
        alice.get_queue("jobs").blocking().offer("alice's job")
        assert bob.get_queue("jobs").blocking().poll() is None
        alice.get_list("todo").blocking().add("alice's")
        alice.get_set("tags").blocking().add("alice's")
        assert bob.get_list("todo").blocking().size() == 0 and bob.get_set("tags").blocking().size() == 0
        alice_index, bob_index = alice.get_multi_map("index").blocking(), bob.get_multi_map("index").blocking()
        alice_index.put("k", "alice's")
        alice_index.lock("k")
        assert bob_index.get("k") == [] and bob_index.size() == 0
        assert bob_index.try_lock("k"), "a lock in another namespace is another lock"
        assert bob_index.put("k", "bob's") and alice_index.get("k") == ["alice's"]
        alice.get_ringbuffer("log").blocking().add("alice's")
        assert bob.get_ringbuffer("log").blocking().tail_sequence() == -1
        heard = {"alice": [], "bob": []}
        alice.get_topic("news").blocking().add_listener(lambda message: heard["alice"].append(message.message))
        bob.get_topic("news").blocking().add_listener(lambda message: heard["bob"].append(message.message))
        alice.get_topic("news").blocking().publish("for alice")
        bob.get_topic("news").blocking().publish("for bob")
        deadline = time.monotonic() + 10
        while (not heard["alice"] or not heard["bob"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # a message crossing tenants, if any, would have arrived by now
        assert heard == {"alice": ["for alice"], "bob": ["for bob"]}
        assert alice.get_queue("jobs").blocking().poll() == "alice's job"
        alice.get_ringbuffer("alice-log").blocking().add("x")
        b_names = {(o.service_name, o.name) for o in bob.get_distributed_objects()}
        assert ("hz:impl:ringbufferService", "log") in b_names
        assert ("hz:impl:ringbufferService", "alice-log") not in b_names, "a listing shows a tenant its own objects"
    finally:
        alice.shutdown()
        bob.shutdown()


def test_object_listeners_hear_their_own_tenants_objects_by_unscoped_names(tenant_member):
    alice, bob = connect(tenant_member, "team-a"), connect(tenant_member, "team-b")
    try:
        heard = []
        alice.add_distributed_object_listener(lambda event: heard.append((event.event_type, event.name))).result()
        bob.get_map("bobs-map")
        alice.get_map("alices-map").blocking().destroy()
        deadline = time.monotonic() + 10
        while len(heard) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # bob's event, if it crossed, would have arrived by now
        assert heard == [("CREATED", "alices-map"), ("DESTROYED", "alices-map")]
    finally:
        alice.shutdown()
        bob.shutdown()


def test_replicated_maps_are_namespaced_per_tenant(tenant_member):
    alice, bob = connect(tenant_member, "team-a"), connect(tenant_member, "team-b")
    try:
        heard = {"alice": [], "bob": []}
        a_map, b_map = alice.get_replicated_map("cache").blocking(), bob.get_replicated_map("cache").blocking()
        a_map.add_entry_listener(added_func=lambda event: heard["alice"].append(event.value))
        b_map.add_entry_listener(added_func=lambda event: heard["bob"].append(event.value))
        a_map.put("k", "alice's")
        a_map.put_all({"a1": 1, "a2": 2})
        assert b_map.get("k") is None and b_map.size() == 0 and b_map.key_set() == []
        b_map.put("k", "bob's")
        b_map.clear()
        assert a_map.get("k") == "alice's" and a_map.size() == 3
        deadline = time.monotonic() + 10
        while (len(heard["alice"]) < 3 or not heard["bob"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # an event crossing tenants, if any, would have arrived by now
        assert sorted(heard["alice"], key=repr) == sorted(["alice's", 1, 2], key=repr) and heard["bob"] == ["bob's"]
        alice.get_replicated_map("alice-only").blocking().put("x", 1)
        b_names = {(o.service_name, o.name) for o in bob.get_distributed_objects()}
        assert ("hz:impl:replicatedMapService", "cache") in b_names
        assert ("hz:impl:replicatedMapService", "alice-only") not in b_names
    finally:
        alice.shutdown()
        bob.shutdown()


def test_flake_id_generators_are_namespaced_per_tenant(tenant_member):
    alice, bob = connect(tenant_member, "team-a"), connect(tenant_member, "team-b")
    try:
        a_ids, b_ids = alice.get_flake_id_generator("ids").blocking(), bob.get_flake_id_generator("ids").blocking()
        taken = [a_ids.new_id() for _ in range(150)]
        assert len(set(taken)) == 150 and taken == sorted(taken)
        bob.get_flake_id_generator("bobs-ids").blocking().new_id()
        service = "hz:impl:flakeIdGeneratorService"
        a_names = {(o.service_name, o.name) for o in alice.get_distributed_objects()}
        assert (service, "ids") in a_names and (service, "bobs-ids") not in a_names
        # Issued ids per generator, named tenant/generator (alice fetched two batches of 100).
        assert metric_named(tenant_member, 'ferrogrid_flake_id_generator_ids_total{name="team-a/ids"}') == 200
        assert metric_named(tenant_member, 'ferrogrid_flake_id_generator_ids_total{name="team-b/bobs-ids"}') == 100
        # B destroys only its own generator of that name.
        b_ids.new_id()
        b_ids.destroy()
        assert metric_named(tenant_member, 'ferrogrid_flake_id_generator_ids_total{name="team-a/ids"}') == 200
        assert metric_named(tenant_member, 'ferrogrid_flake_id_generator_ids_total{name="team-b/ids"}') is None
        assert (service, "ids") in {(o.service_name, o.name) for o in alice.get_distributed_objects()}
    finally:
        alice.shutdown()
        bob.shutdown()


def test_pn_counters_are_namespaced_per_tenant_and_measured(tenant_member):
    alice, bob = connect(tenant_member, "team-a"), connect(tenant_member, "team-b")
    try:
        a_hits, b_hits = alice.get_pn_counter("hits").blocking(), bob.get_pn_counter("hits").blocking()
        assert a_hits.add_and_get(5) == 5
        assert b_hits.get() == 0 and b_hits.decrement_and_get() == -1
        assert a_hits.get() == 5
        assert ("hz:impl:PNCounterService", "hits") in {(o.service_name, o.name) for o in bob.get_distributed_objects()}
        b_hits.destroy()
        assert a_hits.get() == 5, "B destroys only its own counter"
        # A counter's value and operation counts are probes, named tenant/counter.
        probe = 'ferrogrid_pncounter_value{kind="pncounter",name="team-a/hits"} '
        deadline = time.monotonic() + 10
        while True:
            with urllib.request.urlopen(f"http://127.0.0.1:{tenant_member.metrics_port}/metrics", timeout=5) as r:
                text = r.read().decode()
            if probe in text or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        lines = [line for line in text.splitlines() if line.startswith(probe)]
        assert lines and float(lines[0].split()[-1]) == 5, lines
        assert 'ferrogrid_pncounter_increments_total{kind="pncounter",name="team-a/hits"} 1' in text
    finally:
        alice.shutdown()
        bob.shutdown()


def metric_named(member, series):
    """The value of one /metrics series (name and labels as written), or None."""
    with urllib.request.urlopen(f"http://127.0.0.1:{member.metrics_port}/metrics", timeout=5) as response:
        text = response.read().decode()
    lines = [line for line in text.splitlines() if line.startswith(series + " ")]
    return float(lines[0].split()[-1]) if lines else None


def test_no_name_reaches_another_namespace(tenant_member):
    bob = connect(tenant_member, "team-b")
    try:
        with pytest.raises(HazelcastError, match="NUL"):
            bob.get_map("team-a\0orders").blocking().get("o-1")
    finally:
        bob.shutdown()


@pytest.mark.parametrize("credentials", [("alice", "wrong"), ("mallory", "x"), (None, None)])
def test_unknown_credentials_are_refused(tenant_member, credentials):
    username, password = credentials
    with pytest.raises(Exception):
        hazelcast.HazelcastClient(
            cluster_members=[tenant_member.address],
            cluster_name=CLUSTER,
            creds_username=username,
            creds_password=password,
            cluster_connect_timeout=3.0,
        )


def test_connection_quota(tenant_member):
    # team-a: max-connections 2; each smart client of a one-member cluster holds one.
    first, second = connect(tenant_member, "team-a"), connect(tenant_member, "team-a")
    try:
        with pytest.raises(Exception):
            connect(tenant_member, "team-a", cluster_connect_timeout=3.0)
        assert "connection quota (max-connections 2)" in tenant_member.log_path.read_text()
        # Another tenant is not affected.
        connect(tenant_member, "team-b").shutdown()
    finally:
        first.shutdown()
        second.shutdown()


def test_operation_quota_rejects_with_a_clear_error(tenant_member):
    bob = connect(tenant_member, "team-b")
    try:
        m = bob.get_map("rate").blocking()
        # A 1 s burst is banked; well beyond it, requests are refused, not queued or dropped.
        errors = []
        done = 0
        for i in range(400):
            try:
                m.set(f"k{i}", i)
                done += 1
            except HazelcastError as error:
                errors.append(str(error))
        assert errors, "400 back-to-back sets at 50/s: some must be refused"
        assert all("over its operation quota (max-ops-per-second 50)" in e for e in errors), errors[:3]
        assert done >= 50
        assert metric(tenant_member, "ferrogrid_tenant_rejected_total", "team-b") >= len(errors)
    finally:
        bob.shutdown()


def test_data_quota_refuses_writes_beyond_it(tenant_member):
    carol = connect(tenant_member, "team-c")
    try:
        m = carol.get_map("capped").blocking()
        m.put_all({f"k{i}": i for i in range(100)})
        # Usage is measured twice a second.
        deadline = time.monotonic() + 10
        while metric(tenant_member, "ferrogrid_tenant_entries", "team-c") < 100 and time.monotonic() < deadline:
            time.sleep(0.1)
        with pytest.raises(HazelcastError, match="quota of data"):
            m.put("one-more", 1)
        # Reads and removals still work; after removing, writes are accepted again.
        assert m.get("k1") == 1
        m.remove("k1")
        deadline = time.monotonic() + 10
        while metric(tenant_member, "ferrogrid_tenant_entries", "team-c") >= 100 and time.monotonic() < deadline:
            time.sleep(0.1)
        m.put("one-more", 1)
        assert m.get("one-more") == 1
    finally:
        carol.shutdown()


def test_operation_quota_throttles_without_errors(tenant_member):
    dave = connect(tenant_member, "team-d")
    try:
        m = dave.get_map("throttled").blocking()
        for i in range(250):
            m.set(f"k{i}", i)  # beyond the banked 100: waits, never fails
        assert m.size() == 250
        assert metric(tenant_member, "ferrogrid_tenant_throttled_total", "team-d") > 0
        assert metric(tenant_member, "ferrogrid_tenant_rejected_total", "team-d") == 0
    finally:
        dave.shutdown()


def test_per_tenant_probes(tenant_member):
    alice = connect(tenant_member, "team-a")
    try:
        m = alice.get_map("probed").blocking()
        for i in range(20):
            m.put(i, i)
        assert metric(tenant_member, "ferrogrid_tenant_ops_total", "team-a") >= 20
        assert metric(tenant_member, "ferrogrid_tenant_connections", "team-a") >= 1
        # Per-map figures are copied out twice a second.
        deadline = time.monotonic() + 10
        while True:
            with urllib.request.urlopen(f"http://127.0.0.1:{tenant_member.metrics_port}/metrics", timeout=5) as r:
                text = r.read().decode()
            if 'map="team-a/probed"' in text or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert 'ferrogrid_tenant_latency_nanoseconds{tenant="team-a",quantile="0.99"}' in text
        # Map probes name a tenant's maps as tenant/map.
        assert 'map="team-a/probed"' in text
    finally:
        alice.shutdown()


def test_a_tenant_may_not_promote_a_member(tenant_member):
    """MC.promoteLiteMember administers the whole cluster: a tenant's client is refused (even
    on a data member, which would otherwise answer IllegalStateError)."""
    from hazelcast.invocation import Invocation
    from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer

    client = connect(tenant_member, "team-a")
    try:
        connection = next(iter(client._connection_manager.active_connections.values()))
        request = OutboundMessage(create_initial_buffer(REQUEST_HEADER_SIZE, 0x200900), False)
        invocation = Invocation(request, connection=connection, response_handler=lambda message: message)
        client._invocation_service.invoke(invocation)
        with pytest.raises(HazelcastError, match="tenant's client may not promote"):
            invocation.future.result()
    finally:
        client.shutdown()
