"""What ferrogrid does not implement yet must fail loudly and precisely, never hang.

A request ferrogrid has no handler for gets an UnsupportedOperationException naming the
message type and its service; the connection and the client stay usable. (On Hazelcast these
operations work, so these tests are ferrogrid-only.)
"""

import pytest
from hazelcast.errors import HazelcastError

pytestmark = pytest.mark.ferrogrid_only


def test_lock_is_refused_with_the_message_type_named(m):
    with pytest.raises(HazelcastError) as raised:
        m.lock("k")
    assert "UnsupportedOperationException" in str(raised.value)
    assert "Map request 0x011000" in str(raised.value)
    m.put("k", "v")
    assert m.get("k") == "v"


def test_ttl_is_refused_rather_than_ignored(m):
    with pytest.raises(HazelcastError) as raised:
        m.put("k", "v", ttl=5)
    assert "TTL" in str(raised.value)
    assert m.get("k") is None, "a refused put stores nothing"


def test_other_data_structures_are_refused_at_proxy_creation(client, map_name):
    with pytest.raises(HazelcastError) as raised:
        client.get_queue("jobs").blocking().offer("x")
    assert "hz:impl:queueService" in str(raised.value)
    assert client.get_map(map_name).blocking().put("a", "b") is None
