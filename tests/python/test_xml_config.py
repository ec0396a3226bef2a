"""One hazelcast.xml, read by the member of either target, gives the same behaviour.

The file (written below) is Hazelcast's own XML: cluster name, port (no auto-increment) on
127.0.0.1 with tcp-ip join to 127.0.0.1 only, multicast and auto-detection disabled, a bounded
queue, a small ringbuffer and a map whose entries expire. Both targets are started the same way,
with the system property `-Dhazelcast.config=FILE` (the JVM's; ferrogrid takes the same `-D`
flag), and nothing else: no flag of ferrogrid's own. The `HZ_CLUSTERNAME` environment variable
then overrides the file's cluster name on both (Hazelcast's external configuration overrides).

Every member here listens on 127.0.0.1 only (`hazelcast.socket.bind.any` false for Hazelcast;
ferrogrid binds the interface it is given) and is stopped at the end of the module.
"""

import os
import time

import hazelcast
import pytest

import member as member_module
from member import Member, free_port, probe

CLUSTER_NAME = "xml-cluster"
QUEUE_MAX_SIZE = 2
RINGBUFFER_CAPACITY = 3
MAP_TTL_SECONDS = 2


def hazelcast_xml(port, persistence_enabled=False):
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<hazelcast xmlns="http://www.hazelcast.com/schema/config"
           xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
           xsi:schemaLocation="http://www.hazelcast.com/schema/config
           http://www.hazelcast.com/schema/config/hazelcast-config-5.6.xsd">
    <cluster-name>{CLUSTER_NAME}</cluster-name>
    <properties>
        <property name="hazelcast.socket.bind.any">false</property>
        <property name="hazelcast.phone.home.enabled">false</property>
    </properties>
    <network>
        <port auto-increment="false" port-count="1">{port}</port>
        <interfaces enabled="true">
            <interface>127.0.0.1</interface>
        </interfaces>
        <join>
            <auto-detection enabled="false"/>
            <multicast enabled="false"/>
            <tcp-ip enabled="true">
                <member-list>
                    <member>127.0.0.1:{port}</member>
                </member-list>
            </tcp-ip>
        </join>
    </network>
    <queue name="xml-bounded-*">
        <max-size>{QUEUE_MAX_SIZE}</max-size>
    </queue>
    <ringbuffer name="xml-small-*">
        <capacity>{RINGBUFFER_CAPACITY}</capacity>
    </ringbuffer>
    <map name="xml-ttl-*">
        <time-to-live-seconds>{MAP_TTL_SECONDS}</time-to-live-seconds>
    </map>
    <map name="xml-persisted-*">
        <data-persistence enabled="true">
            <fsync>false</fsync>
        </data-persistence>
    </map>
    <persistence enabled="{str(persistence_enabled).lower()}">
        <base-dir>persistence</base-dir>
        <validation-timeout-seconds>60</validation-timeout-seconds>
        <cluster-data-recovery-policy>FULL_RECOVERY_ONLY</cluster-data-recovery-policy>
    </persistence>
</hazelcast>
"""


class XmlMember(Member):
    """A member started only with `-Dhazelcast.config=<hazelcast.xml>` (and `env`)."""

    persistence_enabled = False

    def command(self):
        config = self.workdir / "hazelcast.xml"
        config.write_text(hazelcast_xml(self.port, self.persistence_enabled))
        if self.target == "ferrogrid":
            binary = member_module.ferrogrid_bin()
            if not binary.exists():
                raise RuntimeError("ferrogrid binary not found at %s" % binary)
            return [str(binary), "member", "-Dhazelcast.config=%s" % config]
        return [
            os.environ.get("JAVA", "java"),
            "-Xmx512m",
            "-Dhazelcast.config=%s" % config,
            "-cp",
            str(member_module.hazelcast_jar()),
            "com.hazelcast.core.server.HazelcastMemberStarter",
        ]


def start(request, cluster_name, env=None, member_class=None):
    target = request.config._ferrogrid_target
    if target == "hazelcast" and not member_module.hazelcast_jar().exists():
        pytest.skip("no Hazelcast jar at %s" % member_module.hazelcast_jar())
    environment = dict(os.environ)
    environment.pop("JAVA_OPTS", None)
    environment = {name: value for name, value in environment.items() if not name.startswith("HZ_")}
    environment.update(env or {})
    started = (member_class or XmlMember)(target, port=free_port(), cluster_name=cluster_name, env=environment)
    try:
        started.start(timeout=120)
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    return started


@pytest.fixture(scope="module")
def xml_member(request):
    started = start(request, CLUSTER_NAME)
    yield started
    started.stop()


@pytest.fixture(scope="module")
def client(xml_member):
    made = hazelcast.HazelcastClient(
        cluster_members=[xml_member.address], cluster_name=CLUSTER_NAME, cluster_connect_timeout=30
    )
    yield made
    made.shutdown()


def test_the_cluster_name_must_match(xml_member):
    assert probe(xml_member.host, xml_member.port, CLUSTER_NAME)
    assert not probe(xml_member.host, xml_member.port, "dev")


def test_the_queue_refuses_an_offer_past_its_max_size(client):
    queue = client.get_queue("xml-bounded-q").blocking()
    for item in range(QUEUE_MAX_SIZE):
        assert queue.offer(item, timeout=0)
    assert not queue.offer(QUEUE_MAX_SIZE, timeout=0)
    assert queue.size() == QUEUE_MAX_SIZE
    assert queue.remaining_capacity() == 0
    other = client.get_queue("xml-unbounded-q").blocking()
    assert all(other.offer(item, timeout=0) for item in range(QUEUE_MAX_SIZE + 1))


def test_the_ringbuffer_has_its_capacity(client):
    ringbuffer = client.get_ringbuffer("xml-small-rb").blocking()
    assert ringbuffer.capacity() == RINGBUFFER_CAPACITY
    for item in range(RINGBUFFER_CAPACITY + 2):
        ringbuffer.add(item)
    assert ringbuffer.size() == RINGBUFFER_CAPACITY
    assert ringbuffer.head_sequence() == 2
    assert client.get_ringbuffer("xml-other-rb").blocking().capacity() == 10000


def test_a_map_entry_expires_after_the_time_to_live(client):
    expiring = client.get_map("xml-ttl-map").blocking()
    lasting = client.get_map("xml-lasting-map").blocking()
    expiring.put("k", "v")
    lasting.put("k", "v")
    assert expiring.get("k") == "v"
    deadline = time.monotonic() + MAP_TTL_SECONDS + 8
    while expiring.get("k") is not None and time.monotonic() < deadline:
        time.sleep(0.25)
    assert expiring.get("k") is None
    assert lasting.get("k") == "v"


def test_hz_clustername_overrides_the_file(request):
    overridden = start(request, "from-env", env={"HZ_CLUSTERNAME": "from-env"})
    try:
        assert probe(overridden.host, overridden.port, "from-env")
        assert not probe(overridden.host, overridden.port, CLUSTER_NAME)
        log = overridden.log_text()
        if overridden.target == "ferrogrid":
            assert "configuration override from environment variable HZ_CLUSTERNAME" in log, log
    finally:
        overridden.stop()


class PersistentXmlMember(XmlMember):
    persistence_enabled = True


def test_a_member_configured_to_persist_keeps_its_map_through_kill_9_or_is_refused_by_the_open_edition(request):
    """`<persistence enabled="true">` (the file above, which the module's member starts with
    disabled): Hazelcast's open edition refuses to start (persistence is Enterprise); ferrogrid
    starts, and what a map configured with `<data-persistence enabled="true">` acknowledged
    comes back after `kill -9` and a restart from the same directory, while a map without it
    comes back empty (tests/python/cluster/test_persistence_cluster.py has the rest)."""
    target = request.config._ferrogrid_target
    if target == "hazelcast" and not member_module.hazelcast_jar().exists():
        pytest.skip("no Hazelcast jar at %s" % member_module.hazelcast_jar())
    environment = {name: value for name, value in os.environ.items() if not name.startswith("HZ_")}
    environment.pop("JAVA_OPTS", None)
    port = free_port()
    first = PersistentXmlMember(target, port=port, cluster_name=CLUSTER_NAME, env=environment)
    if target == "hazelcast":
        try:
            with pytest.raises(RuntimeError, match="exited with code"):
                first.start(timeout=120)
        finally:
            first.stop()
        log = first.log_text()
        assert "Hot Restart requires Hazelcast Enterprise Edition" in log, log
        return
    first.start(timeout=120)
    try:
        client = hazelcast.HazelcastClient(
            cluster_members=[first.address], cluster_name=CLUSTER_NAME, cluster_connect_timeout=30
        )
        kept, lost = client.get_map("xml-persisted-orders").blocking(), client.get_map("xml-other").blocking()
        for i in range(100):
            kept.put(i, "order-%d" % i)
            lost.put(i, i)
        client.shutdown()
    finally:
        first.proc.kill()  # SIGKILL: no graceful anything
        first.proc.wait()
    again = PersistentXmlMember(target, port=port, cluster_name=CLUSTER_NAME, env=environment, workdir=first.workdir)
    again.start(timeout=120)
    try:
        client = hazelcast.HazelcastClient(
            cluster_members=[again.address], cluster_name=CLUSTER_NAME, cluster_connect_timeout=30
        )
        kept, lost = client.get_map("xml-persisted-orders").blocking(), client.get_map("xml-other").blocking()
        assert kept.get_all(list(range(100))) == {i: "order-%d" % i for i in range(100)}
        assert lost.size() == 0
        client.shutdown()
    finally:
        again.stop()
    assert "persisted data loaded" in again.log_text()
