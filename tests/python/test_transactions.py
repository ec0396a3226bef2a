"""Transactions (Transaction.create 0x150200, commit 0x150100, rollback 0x150300),
TransactionalMap (service 0x0E) and TransactionalMultiMap (0x0F), as a user of the Python client
sees them, smart and unisocket.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * the member the client created the transaction on coordinates it; every transactional
    request goes to it (partition id -1);
  * a transaction reads its own writes (get, containsKey, size, isEmpty, keySet, values,
    containsValue, with and without predicates); nobody else sees them before the commit;
  * commit applies every write, rollback none;
  * keys a transaction writes (or reads with getForUpdate) are locked until it ends: a plain
    put from another client waits until the commit, then applies over the committed value;
    is_locked is True meanwhile;
  * a transaction whose timeout passed is not applied: its commit fails with
    TransactionTimedOutError (com.hazelcast.transaction.TransactionTimedOutException) and
    its key locks go;
  * a request naming a transaction the member does not know (never created, committed,
    rolled back, another client's) fails with TransactionError ("No transaction context found for txnId:...",
    com.hazelcast.transaction.TransactionException) and the connection goes on;
  * a client that disconnects has its open transactions rolled back.
"""

import threading
import time
import uuid

import pytest
from hazelcast.errors import IllegalArgumentError, TransactionError, TransactionTimedOutError
from hazelcast.invocation import Invocation
from hazelcast.predicate import greater_or_equal, sql
from hazelcast.protocol.codec import (
    transaction_commit_codec,
    transaction_create_codec,
    transaction_rollback_codec,
    transactional_map_contains_key_codec,
    transactional_map_put_codec,
)
from hazelcast.transaction import ONE_PHASE, TWO_PHASE, Transaction

WAIT = 10  # seconds an unblocked write may take
BLOCKED_CHECK = 1.0  # seconds after which a blocked call must still be blocked
KEYS = 40  # enough keys to cover every member's partitions
TYPE_OFFSET = 6  # a request's message type: after the initial frame's length and flags


class Background:
    """Runs fn in a thread; .done tells whether it finished, .result / .error what it gave."""

    def __init__(self, fn):
        self.done = threading.Event()
        self.result = None
        self.error = None

        def run():
            try:
                self.result = fn()
            except BaseException as e:  # noqa: BLE001
                self.error = e
            finally:
                self.done.set()

        threading.Thread(target=run, daemon=True).start()


@pytest.fixture(autouse=True)
def _no_transaction_left_open():
    """A failed test leaves its thread "in a transaction" for the client (a thread-local of
    the Transaction class): the next test could not begin one."""
    yield
    Transaction._locals.transaction_exists = False


def contains_value(client, txn, name, value):
    """TransactionalMap.containsValue (0x0E1200), which the Python client does not offer: its
    fields are containsKey's (name, txn id, thread id, one Data), so containsKey's codec encodes
    it with the type changed."""
    to_data = client._serialization_service.to_data
    request = transactional_map_contains_key_codec.encode_request(name, txn.id, txn.thread_id, to_data(value))
    request.buf[TYPE_OFFSET : TYPE_OFFSET + 4] = (0x0E1200).to_bytes(4, "little")
    return transactional_map_contains_key_codec.decode_response(invoke(client, txn, request))


def invoke(client, txn, request):
    """Sends a raw request on the transaction's connection; the response message."""
    invocation = Invocation(request, connection=txn.connection, response_handler=lambda m: m)
    client._invocation_service.invoke(invocation)
    return invocation.future.result()


@pytest.mark.parametrize("kind", [ONE_PHASE, TWO_PHASE])
def test_commit_applies_every_write_and_answers_as_a_map(client, map_name, kind):
    m = client.get_map(map_name).blocking()
    for i in range(KEYS):
        m.put("k%d" % i, "old%d" % i)
    txn = client.new_transaction(timeout=30, type=kind)
    txn.begin()
    t = txn.get_map(map_name)
    assert t.put("k0", "new0") == "old0"
    assert t.put("new-a", "a") is None
    assert t.set("k1", "set1") is None
    assert t.put_if_absent("k2", "nope") == "old2"
    assert t.put_if_absent("new-b", "b") is None
    assert t.replace("k3", "rep3") == "old3"
    assert t.replace("absent", "x") is None
    assert t.replace_if_same("k4", "old4", "ris4") is True
    assert t.replace_if_same("k5", "wrong", "x") is False
    assert t.remove("k6") == "old6"
    assert t.remove("absent") is None
    assert t.delete("k7") is None
    assert t.remove_if_same("k8", "old8") is True
    assert t.remove_if_same("k9", "wrong") is False
    for i in range(10, KEYS):
        t.set("k%d" % i, "t%d" % i)
    assert t.get_for_update("k5") == "old5"
    # Nobody else sees the transaction's writes before the commit.
    assert m.get("k0") == "old0" and m.get("new-a") is None and m.size() == KEYS
    txn.commit()
    expected = {"k%d" % i: "old%d" % i for i in range(10)}
    expected.update({"k%d" % i: "t%d" % i for i in range(10, KEYS)})
    expected.update({"k0": "new0", "new-a": "a", "k1": "set1", "new-b": "b", "k3": "rep3", "k4": "ris4"})
    for gone in ("k6", "k7", "k8"):
        del expected[gone]
    assert dict(m.entry_set()) == expected
    assert not any(m.is_locked(key) for key in ("k0", "k5", "k6", "absent"))


def test_rollback_applies_nothing_and_releases_the_locks(client, map_name):
    m = client.get_map(map_name).blocking()
    m.put("a", "1")
    txn = client.new_transaction()
    txn.begin()
    t = txn.get_map(map_name)
    t.put("a", "2")
    t.put("b", "3")
    t.delete("a")
    assert m.is_locked("a") and m.is_locked("b")
    txn.rollback()
    assert dict(m.entry_set()) == {"a": "1"}
    assert not m.is_locked("a") and not m.is_locked("b")


def test_a_transaction_reads_its_own_writes(client, map_name):
    m = client.get_map(map_name).blocking()
    for i in range(5):
        m.put("k%d" % i, i)
    with client.new_transaction() as txn:
        t = txn.get_map(map_name)
        t.put("k0", 100)
        t.remove("k1")
        t.put("new", 7)
        assert t.get("k0") == 100 and t.get("k1") is None and t.get("new") == 7
        assert t.contains_key("new") and not t.contains_key("k1")
        assert t.size() == 5 and not t.is_empty()
        assert sorted(t.key_set()) == ["k0", "k2", "k3", "k4", "new"]
        assert sorted(t.values()) == [2, 3, 4, 7, 100]
        assert sorted(t.key_set(greater_or_equal("this", 4))) == ["k0", "k4", "new"]
        assert sorted(t.values(sql("this < 5"))) == [2, 3, 4]
        assert m.size() == 5 and m.get("k0") == 0, "outside the transaction: the committed entries"
        assert sorted(m.values()) == [0, 1, 2, 3, 4]
    assert m.get("k0") == 100 and m.get("new") == 7 and m.size() == 5


@pytest.mark.ferrogrid_only
def test_contains_value_sees_the_transaction_s_writes(client, map_name):
    """TransactionalMap.containsValue is in the protocol's definitions, but a Hazelcast 5.6
    member has no task for it (it answers UnsupportedOperationException "Unrecognized client
    message received with type: 0xe1200"); ferrogrid answers it."""
    m = client.get_map(map_name).blocking()
    m.put("a", 1)
    with client.new_transaction() as txn:
        t = txn.get_map(map_name)
        t.put("a", 2)
        t.put("b", 3)
        assert contains_value(client, txn, map_name, 2) and contains_value(client, txn, map_name, 3)
        assert not contains_value(client, txn, map_name, 1)
    assert m.get("a") == 2


def test_an_empty_map_in_a_transaction(client, map_name):
    with client.new_transaction() as txn:
        t = txn.get_map(map_name)
        assert t.is_empty() and t.size() == 0 and t.key_set() == [] and t.values() == []
        t.put("x", "y")
        assert not t.is_empty() and t.size() == 1


@pytest.mark.parametrize("kind", [ONE_PHASE, TWO_PHASE])
def test_a_concurrent_put_waits_for_the_commit(client_factory, map_name, kind):
    a, b = client_factory(), client_factory()
    m = b.get_map(map_name).blocking()
    m.put("k", "before")
    txn = a.new_transaction(timeout=30, type=kind)
    txn.begin()
    txn.get_map(map_name).put("k", "txn")
    blocked = Background(lambda: m.put("k", "plain"))
    assert not blocked.done.wait(BLOCKED_CHECK), "a plain put waits while the transaction holds the key"
    assert m.is_locked("k")
    txn.commit()
    assert blocked.done.wait(WAIT) and blocked.error is None
    assert blocked.result == "txn", "the waiting put ran after the commit"
    assert m.get("k") == "plain"


def test_reads_wait_for_a_two_phase_transaction_only(client_factory, map_name):
    a, b = client_factory(), client_factory()
    m = b.get_map(map_name).blocking()
    m.put("k", "before")
    one = a.new_transaction(timeout=30, type=ONE_PHASE)
    one.begin()
    one.get_map(map_name).put("k", "one")
    assert m.get("k") == "before" and m.contains_key("k"), "a ONE_PHASE transaction's key is read at once"
    one.commit()
    two = a.new_transaction(timeout=30, type=TWO_PHASE)
    two.begin()
    two.get_map(map_name).put("k", "two")
    read = Background(lambda: m.get("k"))
    assert not read.done.wait(BLOCKED_CHECK), "a TWO_PHASE transaction's key is read after its end"
    two.commit()
    assert read.done.wait(WAIT) and read.error is None
    assert read.result == "two"


def test_get_for_update_locks_the_key_until_the_end(client_factory, map_name):
    a, b = client_factory(), client_factory()
    m = b.get_map(map_name).blocking()
    m.put("k", 1)
    txn = a.new_transaction(timeout=30)
    txn.begin()
    assert txn.get_map(map_name).get_for_update("k") == 1
    assert m.is_locked("k")
    blocked = Background(lambda: m.set("k", 2))
    assert not blocked.done.wait(BLOCKED_CHECK)
    txn.rollback()
    assert blocked.done.wait(WAIT) and blocked.error is None
    assert m.get("k") == 2


def test_a_timed_out_transaction_is_not_applied(client_factory, map_name):
    a, b = client_factory(), client_factory()
    m = b.get_map(map_name).blocking()
    txn = a.new_transaction(timeout=1)
    txn.begin()
    txn.get_map(map_name).put("k", "txn")
    time.sleep(1.5)
    # The key's lock goes with the timeout: a plain put does not wait for the commit.
    unblocked = Background(lambda: m.put("k", "plain"))
    assert unblocked.done.wait(WAIT) and unblocked.error is None
    txn.timeout = 600  # past the client's own check: the member's answer
    with pytest.raises(TransactionTimedOutError):
        txn.commit()
    assert m.get("k") == "plain"


def test_unknown_and_ended_transactions_are_refused_and_the_connection_goes_on(client, map_name):
    txn = client.new_transaction()
    txn.begin()
    txn.get_map(map_name).put("k", "v")
    txn.commit()
    m = client.get_map(map_name).blocking()
    commit = transaction_commit_codec.encode_request(txn.id, txn.thread_id)
    with pytest.raises(TransactionError, match="No transaction context"):
        invoke(client, txn, commit)  # committed twice
    rollback = transaction_rollback_codec.encode_request(uuid.uuid4(), txn.thread_id)
    with pytest.raises(TransactionError, match="No transaction context"):
        invoke(client, txn, rollback)  # never created
    put = transactional_map_put_codec.encode_request(
        map_name, txn.id, txn.thread_id, client._serialization_service.to_data("k"),
        client._serialization_service.to_data("w"), -1,
    )
    with pytest.raises(TransactionError, match="No transaction context"):
        invoke(client, txn, put)  # used after its end
    assert m.get("k") == "v"
    second = client.new_transaction()
    second.begin()
    second.rollback()
    rollback = transaction_rollback_codec.encode_request(second.id, second.thread_id)
    with pytest.raises(TransactionError, match="No transaction context"):
        invoke(client, second, rollback)  # rolled back twice
    m.put("k", "after")
    assert m.get("k") == "after"


def test_another_client_cannot_use_a_transaction(client_factory, map_name):
    a, b = client_factory(), client_factory()
    txn = a.new_transaction()
    txn.begin()
    txn.get_map(map_name).put("k", "a")
    to_data = b._serialization_service.to_data
    put = transactional_map_put_codec.encode_request(map_name, txn.id, txn.thread_id, to_data("k"), to_data("b"), -1)
    connection = b._connection_manager.get_random_connection()
    invocation = Invocation(put, connection=connection, response_handler=lambda m: m)
    b._invocation_service.invoke(invocation)
    with pytest.raises(TransactionError, match="No transaction context"):
        invocation.future.result()
    txn.commit()
    assert b.get_map(map_name).blocking().get("k") == "a"


def test_a_negative_timeout_is_refused(client):
    txn = client.new_transaction()
    create = transaction_create_codec.encode_request(-5, 1, TWO_PHASE, 1)
    with pytest.raises(IllegalArgumentError):
        invoke(client, txn, create)


def test_a_disconnected_client_s_transaction_is_rolled_back(client_factory, map_name):
    a, b = client_factory(), client_factory()
    m = b.get_map(map_name).blocking()
    txn = a.new_transaction(timeout=60)
    txn.begin()
    txn.get_map(map_name).put("k", "txn")
    a.shutdown()
    waited = Background(lambda: m.put("k", "plain"))
    assert waited.done.wait(30) and waited.error is None
    assert waited.result is None, "the transaction's put was never applied"
    assert m.get("k") == "plain"


def test_a_multimap_in_a_transaction(client_factory, map_name):
    a, b = client_factory(), client_factory()
    mm = b.get_multi_map(map_name).blocking()
    mm.put("k", "a")
    mm.put("k", "b")
    txn = a.new_transaction(timeout=30)
    txn.begin()
    t = txn.get_multi_map(map_name)
    assert t.put("k", "a") is False, "a value the key has (a set of values)"
    assert t.put("k", "c") is True
    assert sorted(t.get("k")) == ["a", "b", "c"] and t.value_count("k") == 3 and t.size() == 3
    assert t.remove("k", "b") is True and t.remove("k", "zz") is False
    assert t.put("k2", "x") is True and t.size() == 3
    assert t.remove_all("k2") == ["x"] and t.size() == 2
    assert t.get("none") == [] and t.value_count("none") == 0
    assert mm.size() == 2 and mm.is_locked("k"), "others see the committed values; the key is locked"
    blocked = Background(lambda: mm.put("k", "plain"))
    assert not blocked.done.wait(BLOCKED_CHECK), "a plain put waits for the commit"
    txn.commit()
    assert blocked.done.wait(WAIT) and blocked.error is None and blocked.result is True
    assert sorted(mm.get("k")) == ["a", "c", "plain"] and mm.get("k2") == []
    assert not mm.is_locked("k")


def test_a_multimap_transaction_rolled_back(client, map_name):
    mm = client.get_multi_map(map_name).blocking()
    mm.put("k", "a")
    txn = client.new_transaction(timeout=30)
    txn.begin()
    t = txn.get_multi_map(map_name)
    t.put("k", "b")
    t.remove_all("k")
    t.put("n", "1")
    txn.rollback()
    assert mm.get("k") == ["a"] and mm.get("n") == [] and mm.size() == 1
    assert not mm.is_locked("k") and not mm.is_locked("n")
