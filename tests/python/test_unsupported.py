"""What ferrogrid does not implement yet must fail loudly and precisely, never hang.

A request ferrogrid has no handler for gets an UnsupportedOperationException naming the
message type and its service; the connection and the client stay usable. (On Hazelcast these
operations work, so these tests are ferrogrid-only.)
"""

import pytest
from hazelcast.errors import HazelcastError
from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import StringCodec
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer
from hazelcast.protocol.codec import client_create_proxy_codec

pytestmark = pytest.mark.ferrogrid_only


def test_an_unsupported_map_request_is_refused_with_the_message_type_named(client, m):
    m.put("k", "v")
    # Every Map request 5.6 defines is served: one of a later protocol (0x01FF00), built by hand.
    buf = create_initial_buffer(REQUEST_HEADER_SIZE, 0x01FF00)
    StringCodec.encode(buf, m.name, True)
    invocation = Invocation(OutboundMessage(buf, False), partition_id=0, response_handler=lambda message: message)
    client._invocation_service.invoke(invocation)
    with pytest.raises(HazelcastError) as raised:
        invocation.future.result()
    assert "UnsupportedOperationException" in str(raised.value)
    assert "Map request 0x" in str(raised.value)
    assert m.get("k") == "v", "the connection stays usable"


def test_other_data_structures_are_refused_at_proxy_creation(client, map_name):
    request = client_create_proxy_codec.encode_request("c", "hz:raft:atomicLongService")
    invocation = Invocation(request, partition_id=-1, response_handler=lambda message: message)
    client._invocation_service.invoke(invocation)
    with pytest.raises(HazelcastError) as raised:
        invocation.future.result()
    assert "hz:raft:atomicLongService" in str(raised.value)
    assert client.get_map(map_name).blocking().put("a", "b") is None
