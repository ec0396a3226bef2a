"""Connection life cycle: authentication failures, reconnects, raw authentication."""

import uuid

import hazelcast
import pytest
from hazelcast.errors import IllegalStateError

import wire
from conftest import new_client

BAD_CONNECT_TIMEOUT = 3  # seconds: the client gives up after this


@pytest.mark.parametrize("mode", ["smart", "unisocket"])
def test_wrong_cluster_name_fails_to_start(member, mode):
    with pytest.raises(IllegalStateError, match="Unable to connect to any cluster"):
        new_client(member, mode, cluster_name="not-dev", cluster_connect_timeout=BAD_CONNECT_TIMEOUT)
    # the member is fine afterwards
    c = new_client(member, mode)
    try:
        assert c.lifecycle_service.is_running()
        c.get_map("lifecycle-probe").blocking().size()
    finally:
        c.shutdown()


@pytest.mark.parametrize("mode", ["smart", "unisocket"])
def test_credentials_rejected_without_security(member, mode):
    # No security configured on the member: a client that sends a username/password is
    # rejected (auth status 1, CREDENTIALS_FAILED) and so fails to start.
    with pytest.raises(IllegalStateError, match="Unable to connect to any cluster"):
        new_client(
            member,
            mode,
            creds_username="user",
            creds_password="secret",
            cluster_connect_timeout=BAD_CONNECT_TIMEOUT,
        )


def test_client_shutdown_then_new_client_reconnects(member, map_name):
    for i in range(5):
        c = new_client(member, "smart" if i % 2 == 0 else "unisocket")
        mp = c.get_map(map_name).blocking()
        assert mp.size() == i
        mp.put("k%d" % i, i)
        c.shutdown()
        assert not c.lifecycle_service.is_running()
    c = new_client(member)
    try:
        mp = c.get_map(map_name).blocking()
        assert mp.get_all(["k%d" % i for i in range(5)]) == {"k%d" % i: i for i in range(5)}
        mp.destroy()
    finally:
        c.shutdown()


def test_same_client_name_and_many_clients(member, map_name):
    clients = [new_client(member, client_name="same-name") for _ in range(3)]
    try:
        for i, c in enumerate(clients):
            c.get_map(map_name).blocking().put(i, i)
        assert clients[0].get_map(map_name).blocking().size() == 3
    finally:
        for c in clients:
            c.shutdown()


def test_client_with_labels_and_custom_name(member, map_name):
    c = new_client(member, client_name="labelled", labels=["a", "b"])
    try:
        mp = c.get_map(map_name).blocking()
        mp.put("k", "v")
        assert mp.get("k") == "v"
        mp.destroy()
    finally:
        c.shutdown()


def test_statistics_enabled_client_works(member, map_name):
    c = new_client(member, statistics_enabled=True, statistics_period=1)
    try:
        mp = c.get_map(map_name).blocking()
        mp.put("k", "v")
        assert mp.get("k") == "v"
        mp.destroy()
    finally:
        c.shutdown()


# --------------------------------------------------------------------------- raw authentication


def test_raw_auth_success(member):
    conn = wire.Connection(member.host, member.port)
    try:
        resp = wire.authenticate(conn, client_uuid=uuid.uuid4())
        assert resp["status"] == 0
        assert resp["member_uuid"] is not None
        assert resp["serialization_version"] == 1
        assert resp["partition_count"] == 271
        assert resp["cluster_id"] is not None
        # the connection is usable
        assert conn.call(wire.ping_request).message_type == wire.CLIENT_PING_RESPONSE
    finally:
        conn.close()


def test_raw_auth_same_member_and_cluster_ids_on_every_connection(member):
    seen = []
    for _ in range(3):
        conn = wire.Connection(member.host, member.port)
        try:
            resp = wire.authenticate(conn)
            assert resp["status"] == 0
            seen.append((resp["member_uuid"], resp["cluster_id"]))
        finally:
            conn.close()
    assert len(set(seen)) == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"cluster_name": "wrong"}, id="wrong-cluster-name"),
        pytest.param({"username": "someuser", "password": "somepass"}, id="credentials"),
    ],
)
def test_raw_auth_failure_is_status_1(member, kwargs):
    conn = wire.Connection(member.host, member.port)
    try:
        resp = wire.authenticate(conn, **kwargs)
        # CREDENTIALS_FAILED, reported in a normal auth response (not an Error message), with
        # the "null" fixed fields a 5.6.0 member sends
        assert resp["status"] == 1
        assert resp["member_uuid"] is None
        assert resp["cluster_id"] is None
        assert resp["partition_count"] == -1
        assert resp["serialization_version"] == -1
    finally:
        conn.close()


def test_raw_connection_dropped_after_auth_does_not_hurt(member, client, map_name):
    for _ in range(5):
        conn = wire.Connection(member.host, member.port)
        assert wire.authenticate(conn)["status"] == 0
        conn.close()
    mp = client.get_map(map_name).blocking()
    mp.put("k", "v")
    assert mp.get("k") == "v"
    c = new_client(member)
    c.shutdown()


def test_client_module_version():
    # the suite is pinned to this client version (tests/python/requirements.txt)
    assert hazelcast.__version__ == "5.7.0"
