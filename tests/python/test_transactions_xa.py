"""XA transactions (XATransaction, service 0x14) on the wire, as the Java client's
HazelcastXAResource sends them (the Python client has no XA; tests/java/Smoke.java drives the
Java client's XAResource).

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * create (xid, timeout in seconds) answers the transaction's id, used as any transaction's;
  * prepare of an id the member does not know (never created, another connection's) fails with
    TransactionException ("No transaction context with given transactionId") and the
    connection goes on;
  * collectTransactions lists the Xids of prepared transactions;
  * finalize (commit) of a prepared Xid from another connection commits it; its Xid is then no
    longer listed;
  * finalize of an Xid prepared nowhere is answered as done;
  * a prepared transaction outlives the connection that created it (recovery finalizes it).
"""

import struct
import time
import uuid

import wire

XA_CLEAR_REMOTE = 0x140100
XA_COLLECT = 0x140200
XA_FINALIZE = 0x140300
XA_COMMIT = 0x140400
XA_CREATE = 0x140500
XA_PREPARE = 0x140600
TXN_MAP_PUT = 0x0E0600


def xid_frames(global_id, branch=b"\x01", format_id=42):
    return [
        wire.frame(b"", wire.BEGIN_DATA_STRUCTURE),
        wire.frame(struct.pack("<i", format_id)),
        wire.frame(global_id),
        wire.frame(branch),
        wire.frame(b"", wire.END_DATA_STRUCTURE),
    ]


def call(conn, message_type, fixed=b"", frames=(), partition_id=-1):
    corr = conn.next_correlation_id()
    conn.send(wire.request(message_type, corr, partition_id, fixed, frames))
    return conn.read_response(corr)


def connect(member):
    conn = wire.Connection(member.host, member.port)
    assert wire.authenticate(conn)["status"] == 0
    return conn


def ok(msg, message_type):
    assert msg.message_type == message_type | 1, wire.decode_error(msg) if msg.message_type == wire.ERROR else msg
    return msg


def collected(conn):
    """The global transaction ids collectTransactions lists."""
    msg = ok(call(conn, XA_COLLECT), XA_COLLECT)
    frames = msg.frames[1:]
    ids = []
    for i, f in enumerate(frames):
        # BEGIN, format id, global transaction id, branch qualifier, END (inside the list's BEGIN/END)
        if f.has(wire.BEGIN_DATA_STRUCTURE) and i + 4 < len(frames) and frames[i + 4].has(wire.END_DATA_STRUCTURE):
            ids.append(bytes(frames[i + 2].content))
    return ids


def test_prepare_recover_and_finalize_from_another_connection(member):
    name = "xa-wire-" + uuid.uuid4().hex
    global_id = uuid.uuid4().bytes
    key, value = wire.string_data("k"), wire.string_data("v")
    first, second = connect(member), connect(member)
    try:
        created = ok(call(first, XA_CREATE, struct.pack("<q", 60), xid_frames(global_id)), XA_CREATE)
        txn = wire.decode_uuid(created.response_fixed(), 0)
        put = wire.encode_uuid(txn) + struct.pack("<qq", 1, -1)
        ok(call(first, TXN_MAP_PUT, put, [wire.string_frame(name), wire.frame(key), wire.frame(value)]), TXN_MAP_PUT)

        refused = call(first, XA_PREPARE, wire.encode_uuid(uuid.uuid4()))
        code, class_name, message = wire.decode_error(refused)[0]
        assert class_name == "com.hazelcast.transaction.TransactionException"
        assert "No transaction context" in message
        other = call(second, XA_PREPARE, wire.encode_uuid(txn))
        assert wire.decode_error(other)[0][1] == "com.hazelcast.transaction.TransactionException", "another connection's"

        ok(call(first, XA_PREPARE, wire.encode_uuid(txn)), XA_PREPARE)
        assert global_id in collected(second)

        # An Xid no one prepared: answered as done.
        ok(call(second, XA_FINALIZE, b"\x01", xid_frames(uuid.uuid4().bytes), partition_id=0), XA_FINALIZE)
        ok(call(second, XA_FINALIZE, b"\x01", xid_frames(global_id), partition_id=0), XA_FINALIZE)
        assert global_id not in collected(second)
        ok(call(second, XA_CLEAR_REMOTE, b"", xid_frames(global_id), partition_id=0), XA_CLEAR_REMOTE)

        corr = first.next_correlation_id()
        first.send(wire.map_get_request(corr, name, key))
        got = first.read_response(corr)
        assert bytes(got.frames[1].content) == value, "committed by the other connection's finalize"
    finally:
        first.close()
        second.close()


def test_a_prepared_transaction_outlives_its_connection(member):
    name = "xa-wire-" + uuid.uuid4().hex
    global_id = uuid.uuid4().bytes
    key, value = wire.string_data("k"), wire.string_data("v")
    first = connect(member)
    created = ok(call(first, XA_CREATE, struct.pack("<q", 60), xid_frames(global_id)), XA_CREATE)
    txn = wire.decode_uuid(created.response_fixed(), 0)
    put = wire.encode_uuid(txn) + struct.pack("<qq", 1, -1)
    ok(call(first, TXN_MAP_PUT, put, [wire.string_frame(name), wire.frame(key), wire.frame(value)]), TXN_MAP_PUT)
    ok(call(first, XA_PREPARE, wire.encode_uuid(txn)), XA_PREPARE)
    first.close()
    second = connect(member)
    try:
        time.sleep(0.5)  # the member notices the first connection closed
        assert global_id in collected(second), "kept for recovery"
        ok(call(second, XA_FINALIZE, b"\x01", xid_frames(global_id), partition_id=0), XA_FINALIZE)
        corr = second.next_correlation_id()
        second.send(wire.map_get_request(corr, name, key))
        got = second.read_response(corr)
        assert bytes(got.frames[1].content) == value, "committed by the recovery"
    finally:
        second.close()
