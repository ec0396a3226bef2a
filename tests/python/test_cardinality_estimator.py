"""CardinalityEstimator (service 0x19: CardinalityEstimator.Add 0x190100, Estimate 0x190200).
Runs against ferrogrid and against a real Hazelcast 5.6.0 member, with smart and unisocket
routing.

The Python client 5.7.0 has no CardinalityEstimator proxy (the Java client has:
`getCardinalityEstimator`). `CardinalityEstimator` below is the Java client's
`ClientCardinalityEstimatorProxy` on the Python client's own machinery: its proxy manager
(Client.CreateProxy / DestroyProxy under hz:impl:cardinalityEstimatorService), its serializer
and its invocation service, which sends each request to the partition of the estimator's name.
An add sends the hash the Java client computes of the item (`Data.hash64()`: Hazelcast's
MurmurHash3 x64 variant over the serialized payload), so the member sees what a Java client's
add sends; `hash64` is checked against values the 5.6.0 jar's HashUtil computed.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * a new estimator estimates 0; the estimate of N distinct items is exact while the estimator
    is sparse (up to several thousand items) and HyperLogLog's beyond (0.81% typical error);
  * items added again do not count; an estimate may be asked between adds at any time;
  * destroy drops it: the estimator of the same name starts again from 0; it is listed as
    hz:impl:cardinalityEstimatorService while it exists;
  * two estimators are independent.
The estimates asserted are those Hazelcast 5.6.0 answered for these items (EXPECTED and
INTERLEAVED, recorded with --target hazelcast); ferrogrid answers the same to the unit.
"""

import pytest
from hazelcast.protocol.builtin import FixSizedTypesCodec, StringCodec
from hazelcast.protocol.client_message import (
    REQUEST_HEADER_SIZE,
    RESPONSE_HEADER_SIZE,
    OutboundMessage,
    create_initial_buffer,
)
from hazelcast.proxy import _proxy_init
from hazelcast.proxy.base import PartitionSpecificProxy

from conftest import unique_name

SERVICE = "hz:impl:cardinalityEstimatorService"
ADD = 0x190100
ESTIMATE = 0x190200
M64 = (1 << 64) - 1
# adds in flight at once
BATCH = 2000

# Distinct items "item-0" .. "item-(N-1)": Hazelcast 5.6.0's estimate after adding them.
EXPECTED = {0: 0, 1: 1, 10: 10, 1000: 1000, 100000: 99987}


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _fmix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    return k ^ (k >> 33)


def _signed_byte(b):
    """A byte as Java reads it (signed) and widens it to a long."""
    return (b - 256 if b >= 128 else b) & M64


def hash64(payload, seed=0x01000193):
    """Hazelcast's HashUtil.MurmurHash3_x64_64(payload, 0, len): what Data.hash64() hashes (the
    serialized bytes after the 8-byte header). Not the reference MurmurHash3: its block
    constants change per block and its tail bytes are sign-extended, as in Hazelcast."""
    length = len(payload)
    h1, h2 = 0x9368E53C2F6AF274 ^ seed, 0x586DCD208F7CD3FD ^ seed
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F

    def mix(h1, h2, k1, k2):
        k1 = (_rotl((k1 * c1) & M64, 23) * c2) & M64
        h1 = ((h1 ^ k1) + h2) & M64
        h2 = _rotl(h2, 41)
        k2 = (_rotl((k2 * c2) & M64, 23) * c1) & M64
        h2 = ((h2 ^ k2) + h1) & M64
        return (h1 * 3 + 0x52DCE729) & M64, (h2 * 3 + 0x38495AB5) & M64

    tail = length & ~15
    for at in range(0, tail, 16):
        k1 = int.from_bytes(payload[at : at + 8], "little")
        k2 = int.from_bytes(payload[at + 8 : at + 16], "little")
        h1, h2 = mix(h1, h2, k1, k2)
        c1, c2 = (c1 * 5 + 0x7B7D159C) & M64, (c2 * 5 + 0x6BCE6396) & M64
    if length & 15:
        k1 = k2 = 0
        for i, b in enumerate(payload[tail:]):
            if i < 8:
                k1 ^= (_signed_byte(b) << (8 * i)) & M64
            else:
                k2 ^= (_signed_byte(b) << (8 * (i - 8))) & M64
        h1, h2 = mix(h1, h2, k1, k2)
    h2 ^= length
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    result = (_fmix(h1) + _fmix(h2)) & M64
    return result - (1 << 64) if result >> 63 else result


class CardinalityEstimator(PartitionSpecificProxy):
    """The Java client's ClientCardinalityEstimatorProxy: add and estimate, as futures."""

    def add(self, item):
        payload = self._to_data(item).buffer[8:]
        buf = create_initial_buffer(REQUEST_HEADER_SIZE + 8, ADD)
        FixSizedTypesCodec.encode_long(buf, REQUEST_HEADER_SIZE, hash64(payload))
        StringCodec.encode(buf, self.name, True)
        return self._invoke(OutboundMessage(buf, False))

    def estimate(self):
        buf = create_initial_buffer(REQUEST_HEADER_SIZE, ESTIMATE)
        StringCodec.encode(buf, self.name, True)

        def decode(message):
            return FixSizedTypesCodec.decode_long(message.next_frame().buf, RESPONSE_HEADER_SIZE)

        return self._invoke(OutboundMessage(buf, False), decode)

    def blocking(self):
        return self


_proxy_init[SERVICE] = CardinalityEstimator


def get_estimator(client, name):
    return client._proxy_manager.get_or_create(SERVICE, name)


def add_all(estimator, items):
    """Adds every item, BATCH in flight at a time; each add is answered with nothing."""
    items = list(items)
    for start in range(0, len(items), BATCH):
        futures = [estimator.add(item) for item in items[start : start + BATCH]]
        assert [future.result() for future in futures] == [None] * len(futures)


def items(count, start=0):
    return ["item-%d" % n for n in range(start, start + count)]


@pytest.fixture
def estimator(client, request):
    proxy = get_estimator(client, unique_name(request, "ce"))
    yield proxy
    try:
        proxy.destroy()
    except Exception:  # noqa: BLE001 - a test that destroyed it already is fine
        pass


def test_hash64_is_the_java_clients():
    # HashUtil.MurmurHash3_x64_64 of the 5.6.0 jar on these bytes (the empty, short, block-long
    # and tail-with-negative-bytes cases).
    cases = {
        b"": 9168145165656307917,
        b"a": 1026673004001772663,
        b"hazelcast": -5410766897535987873,
        b"0123456789abcdef": -8662831058301528006,
        b"0123456789abcdefXYZ\xff": -7434072227846378050,
        bytes([0x80, 0xFF, *range(1, 15), 0x90, 0xA0, 0xB0]): -4351371739780970790,
    }
    assert {payload: hash64(payload) for payload in cases} == cases


@pytest.mark.parametrize("count", sorted(EXPECTED))
def test_the_estimate_of_distinct_items_is_hazelcasts(estimator, count):
    add_all(estimator, items(count))
    assert estimator.estimate().result() == EXPECTED[count]


def test_items_added_again_do_not_count(estimator):
    add_all(estimator, items(1000))
    assert estimator.estimate().result() == 1000
    add_all(estimator, items(1000))
    add_all(estimator, ["item-7"] * 50)
    assert estimator.estimate().result() == 1000
    add_all(estimator, items(10, start=1000))
    assert estimator.estimate().result() == 1010


# "item-0" .. "item-11999" added in steps of 250 with an estimate after each step, but one by
# one with an estimate after each add from 7,250 to 7,300 (the estimator turns dense at the add
# of item 7,251 and is exact no more): Hazelcast 5.6.0's estimates.
INTERLEAVED = [
    250, 500, 750, 1000, 1250, 1500, 1750, 2000, 2250, 2500, 2750, 3000, 3250, 3500, 3750,
    4000, 4250, 4500, 4750, 5000, 5250, 5500, 5750, 6000, 6250, 6500, 6750, 7000, 7250, 7230,
    7232, 7233, 7235, 7235, 7235, 7235, 7235, 7236, 7236, 7238, 7239, 7239, 7241, 7242, 7244,
    7246, 7247, 7249, 7250, 7252, 7252, 7252, 7253, 7255, 7256, 7258, 7258, 7260, 7261, 7261,
    7263, 7264, 7266, 7267, 7267, 7269, 7271, 7271, 7272, 7274, 7275, 7277, 7277, 7278, 7280,
    7281, 7281, 7283, 7285, 7531, 7782, 8036, 8271, 8514, 8783, 9021, 9249, 9514, 9764, 10018,
    10245, 10493, 10747, 11031, 11256, 11568, 11885, 12183,
]


def test_estimates_between_adds_are_hazelcasts_through_the_turn_to_dense(estimator):
    estimates = []
    count = 0
    while count < 12000:
        step = 1 if 7250 <= count < 7300 else 250
        add_all(estimator, items(step, start=count))
        count += step
        estimates.append(estimator.estimate().result())
    assert estimates == INTERLEAVED


def test_destroy_drops_the_estimator(client, request):
    name = unique_name(request, "ce")
    estimator = get_estimator(client, name)
    add_all(estimator, items(100))
    assert estimator.estimate().result() == 100
    listed = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert (SERVICE, name) in listed
    estimator.destroy()
    listed = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert (SERVICE, name) not in listed
    again = get_estimator(client, name)
    try:
        assert again.estimate().result() == 0
        add_all(again, items(3))
        assert again.estimate().result() == 3
    finally:
        again.destroy()


def test_a_second_estimator_is_independent(client, request):
    first = get_estimator(client, unique_name(request, "ce-a"))
    second = get_estimator(client, unique_name(request, "ce-b"))
    try:
        add_all(first, items(1000))
        add_all(second, items(10, start=5000))
        assert (first.estimate().result(), second.estimate().result()) == (1000, 10)
        add_all(second, items(1000))
        assert (first.estimate().result(), second.estimate().result()) == (1000, 1010)
    finally:
        first.destroy()
        second.destroy()


def test_any_hash_is_accepted(estimator):
    # The hash is the client's: a request may carry any long.
    for hash_ in (0, 1, -1, -(2**63), 2**63 - 1):
        buf = create_initial_buffer(REQUEST_HEADER_SIZE + 8, ADD)
        FixSizedTypesCodec.encode_long(buf, REQUEST_HEADER_SIZE, hash_)
        StringCodec.encode(buf, estimator.name, True)
        assert estimator._invoke(OutboundMessage(buf, False)).result() is None
    # 0 and Long.MIN_VALUE share their 25 low bits, as -1 and Long.MAX_VALUE do.
    assert estimator.estimate().result() == 3
