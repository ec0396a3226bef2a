"""Advanced network (`advanced-network: enabled: true`): members link over a member endpoint and
clients connect to a client endpoint on another port; a public address is advertised (see
conftest.py).

Two members, each with a member port and a client port; member 1's client endpoint advertises
the public address 127.0.0.2 (a loopback alias standing for a NAT's or a container's address).
Checked on ferrogrid and on Hazelcast 5.6 alike:
  * the Python client, given only member 0's client port, sees both members at their client
    endpoints (member 1 at 127.0.0.2), with an address map holding the MEMBER and the CLIENT
    endpoints, as the official client's own advanced-network test checks; it connects to both
    (smart routing) and every map call works;
  * a client that dials a member port is refused (ferrogrid also logs why);
  * the Java client (tests/java/Smoke.java, with -Dsmoke.clientEndpoints=true: every member's
    address map has separate CLIENT and MEMBER ports) passes its smoke test on the client port,
    and so does the Go client (`target/gotest smoke`, every structure, smart then unisocket).

Hazelcast binds every interface by default, so its member 1 is reachable at 127.0.0.2;
ferrogrid binds the configured interface (default 127.0.0.1), so its member 1's client endpoint
names 0.0.0.0 as its interface: the one line the two configurations differ in.
"""

import shutil
import subprocess

import pytest
from hazelcast.core import EndpointQualifier, ProtocolType

from . import cluster_harness
from .cluster_harness import HOST, MemberProcess, members_of, partition_owners, single_member, wait_until

pytestmark = pytest.mark.timeout(180)

PUBLIC_HOST = "127.0.0.2"
CLIENT = EndpointQualifier(ProtocolType.CLIENT, None)
MEMBER = EndpointQualifier(ProtocolType.MEMBER, None)

CONFIG = """\
hazelcast:
  cluster-name: {cluster_name}
  properties:
    hazelcast.heartbeat.interval.seconds: 1
    hazelcast.max.no.heartbeat.seconds: 4
    hazelcast.wait.seconds.before.join: 1
    hazelcast.phone.home.enabled: false
    hazelcast.io.balancer.interval.seconds: -1
  advanced-network:
    enabled: true
    join:
      auto-detection: {{enabled: false}}
      multicast: {{enabled: false}}
      tcp-ip:
        enabled: true
        member-list: [{member_list}]
    member-server-socket-endpoint-config:
      port: {{port: {member_port}, auto-increment: false}}
      interfaces: {{enabled: true, interfaces: [127.0.0.1]}}
    client-server-socket-endpoint-config:
      port: {{port: {client_port}, auto-increment: false}}
{client_extra}"""

FERROGRID_SECTION = """\
ferrogrid:
  metrics:
    file: ""
    http-enabled: false
"""


class AdvancedMember(MemberProcess):
    """A member whose `port` (what the harness probes and clients are given) is its client
    port; it links to the others over `member_port`."""

    def __init__(self, index, member_port, client_port, cluster, member_ports, public):
        super().__init__(index, client_port, cluster.cluster_name, [], None, cluster.workdir, cluster.target)
        self.member_port = member_port
        extra = ""
        if public:
            extra = "      public-address: %s\n" % PUBLIC_HOST
            if self.target == "ferrogrid":
                extra += "      interfaces: {enabled: true, interfaces: [0.0.0.0]}\n"
        self.config_text = CONFIG.format(
            cluster_name=cluster.cluster_name,
            member_list=", ".join("%s:%d" % (HOST, port) for port in member_ports),
            member_port=member_port,
            client_port=client_port,
            client_extra=extra,
        )

    def command(self):
        config = self.workdir / "hazelcast.yaml"
        if self.target == "hazelcast":
            config.write_text(self.config_text)
            return cluster_harness.hazelcast_java_command(config)
        config.write_text(self.config_text + FERROGRID_SECTION)
        return [str(single_member.ferrogrid_bin()), "member", "--config", str(config)]


def start_advanced(cluster):
    member_ports, client_ports = cluster.ports[:2], cluster.ports[2:4]
    members = [
        AdvancedMember(i, member_ports[i], client_ports[i], cluster, member_ports, public=(i == 1)) for i in range(2)
    ]
    cluster.members.extend(members)
    for member in members:
        member.start()
    for member in members:
        member.wait_ready()
    return members


def test_clients_use_the_client_endpoint_and_see_the_public_address(make_cluster):
    cluster = make_cluster(4, cluster_name="dev")  # tests/java/Smoke.java's default cluster name
    members = start_advanced(cluster)
    client = cluster.client([members[0].address])

    expected_client = {(HOST, members[0].port), (PUBLIC_HOST, members[1].port)}
    seen = lambda: {(m.address.host, m.address.port) for m in members_of(client)}  # noqa: E731
    wait_until(lambda: seen() == expected_client, 30, lambda: "client sees %r" % seen())
    for member in members_of(client):
        index = 0 if member.address.port == members[0].port else 1
        address_map = {qualifier: (a.host, a.port) for qualifier, a in member.address_map.items()}
        # As the official client's AdvancedNetworkConfigTest: exactly the two endpoints.
        assert len(address_map) == 2, address_map
        assert address_map.get(MEMBER) == (HOST, members[index].member_port), address_map
        assert address_map.get(CLIENT) == (member.address.host, members[index].port), address_map

    # Smart routing reaches both members on their client endpoints (one at the public address).
    wait_until(
        lambda: len(client._connection_manager.active_connections) == 2,
        30,
        lambda: "client connections: %r" % list(client._connection_manager.active_connections.values()),
    )
    data = client.get_map("advanced").blocking()
    data.put_all({"k%d" % i: i for i in range(200)})
    assert data.size() == 200
    assert data.get("k77") == 77
    owners = partition_owners(client)
    assert set(owners) == {m.uuid for m in members_of(client)}, owners

    # A client on a member port is refused.
    for member in members:
        assert not single_member.probe(HOST, member.member_port, cluster.cluster_name, timeout=2.0)
    if cluster.target == "ferrogrid":
        wait_until(
            lambda: "a client dialled the member port" in members[0].log_text(),
            10,
            "member 0 logs no reason for refusing a client on its member port",
        )


def test_the_java_client_uses_the_client_endpoint(make_cluster, tmp_path):
    javac, jar = shutil.which("javac"), single_member.hazelcast_jar()
    if javac is None or not jar.exists():
        pytest.skip("needs javac and the Hazelcast jar (%s)" % jar)
    sources = [cluster_harness.HERE.parent.parent / "java" / name for name in ("Harness.java", "Smoke.java")]
    subprocess.run([javac, "-cp", str(jar), "-d", str(tmp_path), *map(str, sources)], check=True, timeout=120)
    cluster = make_cluster(4, cluster_name="dev")
    members = start_advanced(cluster)
    # (these Hazelcast members run without Jet, which its SQL needs: the smoke's SQL part is off)
    command = ["java", "-Xmx256m", "-Dsmoke.clientEndpoints=true", "-Dsmoke.sql=false", "-cp",
               "%s:%s" % (tmp_path, jar), "Smoke"]
    result = subprocess.run(command + [members[0].address], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "java smoke: ok" in result.stdout, result.stdout + result.stderr


# built by scripts/test (`go build` in tests/go)
GO_BIN = cluster_harness.HERE.parent.parent.parent / "target" / "gotest"


def test_the_go_client_uses_the_client_endpoint(make_cluster):
    """The Go client's smoke run (every structure, smart then unisocket) given a client port:
    it reaches every member at its client endpoint (ferrogrid logs no client at a member port)."""
    if not GO_BIN.exists():
        pytest.skip("needs %s (scripts/test builds it: go build in tests/go)" % GO_BIN)
    cluster = make_cluster(4, cluster_name="dev")  # tests/go/smoke.go's cluster name
    members = start_advanced(cluster)
    result = subprocess.run([str(GO_BIN), "smoke", members[0].address], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "go smoke: ok" in result.stdout, result.stdout + result.stderr
    if cluster.target == "ferrogrid":
        assert not any("a client dialled the member port" in member.log_text() for member in members)


PUBLIC_CONFIG = """\
hazelcast:
  cluster-name: {cluster_name}
  properties:
    hazelcast.heartbeat.interval.seconds: 1
    hazelcast.max.no.heartbeat.seconds: 4
    hazelcast.wait.seconds.before.join: 1
    hazelcast.phone.home.enabled: false
    hazelcast.io.balancer.interval.seconds: -1
  network:
    port: {{port: {port}, auto-increment: false}}
    interfaces: {{enabled: true, interfaces: [{interface}]}}
{public}    join:
      auto-detection: {{enabled: false}}
      multicast: {{enabled: false}}
      tcp-ip:
        enabled: true
        member-list: [{member_list}]
"""


class PublicMember(AdvancedMember):
    """A member of one port (no advanced network) that may advertise a public address."""

    def __init__(self, index, port, cluster, ports, public):
        MemberProcess.__init__(self, index, port, cluster.cluster_name, [], None, cluster.workdir, cluster.target)
        # ferrogrid binds its interface; Hazelcast every interface (see the module doc).
        interface = "0.0.0.0" if public and self.target == "ferrogrid" else "127.0.0.1"
        self.config_text = PUBLIC_CONFIG.format(
            cluster_name=cluster.cluster_name,
            port=port,
            interface=interface,
            public="    public-address: %s\n" % PUBLIC_HOST if public else "",
            member_list=", ".join("%s:%d" % (HOST, p) for p in ports),
        )


def test_a_public_address_is_advertised_to_clients_and_members(make_cluster):
    cluster = make_cluster(2)
    members = [PublicMember(i, cluster.ports[i], cluster, cluster.ports[:2], public=(i == 1)) for i in range(2)]
    cluster.members.extend(members)
    for member in members:
        member.start()
    for member in members:
        member.wait_ready()
    client = cluster.client([members[0].address])
    expected = {(HOST, members[0].port), (PUBLIC_HOST, members[1].port)}
    seen = lambda: {(m.address.host, m.address.port) for m in members_of(client)}  # noqa: E731
    wait_until(lambda: seen() == expected, 30, lambda: "client sees %r" % seen())
    for member in members_of(client):
        address_map = {qualifier: (a.host, a.port) for qualifier, a in member.address_map.items()}
        assert address_map.get(MEMBER) == (member.address.host, member.address.port), address_map
    wait_until(lambda: len(client._connection_manager.active_connections) == 2, 30, "the client reaches both")
    data = client.get_map("public").blocking()
    data.put_all({"k%d" % i: i for i in range(200)})
    assert data.size() == 200
    owners = partition_owners(client)
    assert set(owners) == {m.uuid for m in members_of(client)}, owners
