"""ReliableTopic, as a user of the Python client sees it. Runs against ferrogrid and against a
real Hazelcast 5.6.0 member.

The member has no reliable-topic messages of its own for the client: the Python client (like
the Java one) builds the topic on a ringbuffer named `_hz_rb_<topic>`. publish is a
Ringbuffer.Add (publish_all a Ringbuffer.AddAll) of a ReliableTopicMessage (an
IdentifiedDataSerializable, factory -9, class 2: publish time in ms, publisher address — None
from a client — and the payload); every listener is a loop of Ringbuffer.ReadMany(sequence,
1, read_batch_size) run by the client, starting at tail_sequence + 1 or at the sequence a
ReliableMessageListener asks for. get_reliable_topic creates two proxies on the member
(hz:impl:reliableTopicService and hz:impl:ringbufferService `_hz_rb_<topic>`); destroy
destroys both. Overload policies are client-side too: ERROR / DISCARD_NEWEST / BLOCK add with
OverflowPolicy.FAIL (raise TopicOverloadError / drop the message / retry with back-off on
-1), DISCARD_OLDEST with OVERWRITE.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * the ringbuffer of a reliable topic takes its config from the ringbuffer config matching
    the TOPIC's name (`_hz_rb_` stripped): member-config.yaml's ringbuffer rt-small-* (3 slots),
    rt-held-* (3 slots, items live 600 s) and rt-expiring-* (3 slots, items live 1 s) apply
    to `_hz_rb_rt-small-…` etc.; other topics get capacity 10000 and no time-to-live;
  * every listener hears every message published after it was added, in publish order;
  * a listener asking for a sequence beyond the tail starts at tail + 1 (read_many clamps; a
    listener that is not loss tolerant sees the jump as lost messages and is cancelled);
    one asking for a sequence below the head starts at the head (the same: only a
    loss-tolerant listener goes on);
  * with items that have not expired and no room (rt-held-*), FAIL adds answer -1: ERROR
    raises TopicOverloadError, DISCARD_NEWEST drops the message, DISCARD_OLDEST overwrites,
    BLOCK (the client's default) waits until an item expires (rt-expiring-*);
  * so with BLOCK (or ERROR, DISCARD_NEWEST), publish_all of more messages than the capacity
    never succeeds, even without a time-to-live: an AddAll with FAIL needs remaining_capacity
    (there: the capacity) >= the batch size; BLOCK retries it for ever (not tested);
  * destroy makes waiting reads fail with DistributedObjectDestroyedError, which cancels the
    listeners of other clients too.
"""

import threading
import time

import pytest
from hazelcast.config import TopicOverloadPolicy
from hazelcast.errors import TopicOverloadError
from hazelcast.proxy.reliable_topic import ReliableMessageListener
from hazelcast.serialization.objects import ReliableTopicMessage

from helpers import MessageLog, destroy_after

SETTLE = 0.3  # s: for messages that must NOT arrive, after a later message has arrived
SMALL = 3  # member-config.yaml: ringbuffers rt-small-*, rt-held-*, rt-expiring-* have capacity 3
RINGBUFFER_PREFIX = "_hz_rb_"


class Recorder(ReliableMessageListener):
    """A ReliableMessageListener that records messages, stored sequences and its cancellation."""

    def __init__(self, initial_sequence=-1, loss_tolerant=False):
        self.initial_sequence = initial_sequence
        self.loss_tolerant = loss_tolerant
        self.log = MessageLog()
        self.sequences = []
        self.cancelled = threading.Event()

    def on_message(self, message):
        self.log(message)

    def retrieve_initial_sequence(self):
        return self.initial_sequence

    def store_sequence(self, sequence):
        self.sequences.append(sequence)

    def is_loss_tolerant(self):
        return self.loss_tolerant

    def is_terminal(self, error):
        return False

    def on_cancel(self):
        self.cancelled.set()


def new_name(request, prefix="rt"):
    from conftest import unique_name

    return unique_name(request, prefix)


@pytest.fixture
def topic_name(request):
    return new_name(request)


@pytest.fixture
def topic(client, topic_name):
    yield from destroy_after(client.get_reliable_topic(topic_name).blocking())


def small_topic(client_factory, name, **config):
    """A reliable topic whose ringbuffer has 3 slots, on a client that reads at most 3 at a time
    (the client refuses a read_many of more than the capacity)."""
    client = client_factory(reliable_topics={name: dict(read_batch_size=SMALL, **config)})
    return client, client.get_reliable_topic(name).blocking()


def listen(topic):
    log = MessageLog()
    return log, topic.add_listener(log)


def test_publish_reaches_a_function_listener(topic):
    log, _ = listen(topic)
    before = time.time()
    topic.publish("hello")
    topic.publish_all(["a", "b", 3])
    assert log.wait_count(4) == ["hello", "a", "b", 3]
    for message in log.messages:
        assert message.name == topic.name
        assert before - 1 <= message.publish_time <= time.time() + 1, (before, message.publish_time)
        assert message.member is None, "a client publishes without an address"


def test_messages_are_stored_in_the_ringbuffer_of_the_topic(client, topic):
    topic.publish("hello")
    topic.publish_all(["a", "b"])
    ringbuffer = client.get_ringbuffer(RINGBUFFER_PREFIX + topic.name).blocking()
    assert ringbuffer.capacity() == 10000
    assert (ringbuffer.size(), ringbuffer.head_sequence(), ringbuffer.tail_sequence()) == (3, 0, 2)
    stored = ringbuffer.read_one(0)
    assert isinstance(stored, ReliableTopicMessage)
    assert stored.payload == "hello" and stored.publisher_address is None
    assert [m.payload for m in ringbuffer.read_many(1, 2, 2)] == ["a", "b"]
    names = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert ("hz:impl:reliableTopicService", topic.name) in names
    assert ("hz:impl:ringbufferService", RINGBUFFER_PREFIX + topic.name) in names


def test_a_listener_hears_only_messages_published_after_it_was_added(topic):
    topic.publish("early")
    log, _ = listen(topic)
    topic.publish("late")
    assert log.wait_count(1) == ["late"]
    time.sleep(SETTLE)
    assert log.payloads() == ["late"]


def test_messages_of_one_publisher_arrive_in_order_at_every_listener(topic, client_factory):
    count = 200
    first, second = listen(topic)[0], listen(topic)[0]
    third, _ = listen(client_factory().get_reliable_topic(topic.name).blocking())
    recorder = Recorder()
    topic.add_listener(recorder)
    publisher = client_factory().get_reliable_topic(topic.name)
    # pipelined: every publish is sent before the first answer is awaited
    futures = [publisher.publish(i) for i in range(count)]
    for future in futures:
        future.result()
    for log in (first, second, third, recorder.log):
        assert log.wait_count(count) == list(range(count))
    assert recorder.sequences == list(range(count))


def test_removed_listener_hears_nothing_more(topic, client_factory):
    removed, registration = listen(topic)
    keeper, _ = listen(topic)
    publisher = client_factory().get_reliable_topic(topic.name).blocking()
    publisher.publish("before")
    assert removed.wait_count(1) == ["before"]
    assert topic.remove_listener(registration) is True
    assert topic.remove_listener(registration) is False
    publisher.publish("after")
    assert keeper.wait_count(2) == ["before", "after"]
    time.sleep(SETTLE)
    assert removed.payloads() == ["before"]


def test_a_listener_starts_at_its_initial_sequence(topic):
    topic.publish_all(["a", "b", "c"])
    recorder = Recorder(initial_sequence=1)
    topic.add_listener(recorder)
    assert recorder.log.wait_count(2) == ["b", "c"]
    topic.publish("d")
    assert recorder.log.wait_count(3) == ["b", "c", "d"]
    assert recorder.sequences == [1, 2, 3]


@pytest.mark.parametrize("loss_tolerant", [True, False])
def test_a_listener_starting_beyond_the_tail(topic, loss_tolerant):
    topic.publish("a")
    recorder = Recorder(initial_sequence=100, loss_tolerant=loss_tolerant)
    topic.add_listener(recorder)
    time.sleep(0.5)  # for its first read to reach the member and wait at tail + 1 = 1
    topic.publish("b")
    if loss_tolerant:
        assert recorder.log.wait_count(1) == ["b"], "the read starts at tail + 1"
        assert recorder.sequences == [1]
        assert not recorder.cancelled.is_set()
    else:
        assert recorder.cancelled.wait(10), "the jump back from 100 to 1 counts as lost messages"
        assert recorder.log.payloads() == []


@pytest.mark.parametrize("loss_tolerant", [True, False])
def test_a_listener_starting_below_the_head(client_factory, request, loss_tolerant):
    _, topic = small_topic(client_factory, new_name(request, "rt-small"))
    for message in range(5):
        topic.publish(message)  # a FAIL add: it overwrites, as the ringbuffer has no time-to-live
    recorder = Recorder(initial_sequence=0, loss_tolerant=loss_tolerant)
    topic.add_listener(recorder)
    if loss_tolerant:
        assert recorder.log.wait_count(3) == [2, 3, 4], "the read starts at the head"
        assert recorder.sequences == [2, 3, 4]
        topic.publish(5)
        assert recorder.log.wait_count(4) == [2, 3, 4, 5]
    else:
        assert recorder.cancelled.wait(10), "messages 0 and 1 were overwritten: lost"
        assert recorder.log.payloads() == []
    topic.destroy()


@pytest.mark.parametrize(
    "policy, published",
    [
        (TopicOverloadPolicy.ERROR, [0, 1, 2]),
        (TopicOverloadPolicy.DISCARD_NEWEST, [0, 1, 2]),
        (TopicOverloadPolicy.DISCARD_OLDEST, [2, 3, 4]),
    ],
    ids=["ERROR", "DISCARD_NEWEST", "DISCARD_OLDEST"],
)
def test_overload_policy_on_a_full_ringbuffer(client_factory, request, policy, published):
    name = new_name(request, "rt-held")
    client, topic = small_topic(client_factory, name, overload_policy=policy)
    for message in range(SMALL):
        topic.publish(message)
    if policy == TopicOverloadPolicy.ERROR:
        with pytest.raises(TopicOverloadError):
            topic.publish(3)
        with pytest.raises(TopicOverloadError):
            topic.publish_all([4])
    else:
        topic.publish(3)
        topic.publish_all([4])
    ringbuffer = client.get_ringbuffer(RINGBUFFER_PREFIX + name).blocking()
    assert ringbuffer.size() == SMALL and ringbuffer.remaining_capacity() == 0
    recorder = Recorder(initial_sequence=0, loss_tolerant=True)
    topic.add_listener(recorder)
    assert recorder.log.wait_count(SMALL) == published
    topic.destroy()


def test_block_policy_waits_until_an_item_expires(client_factory, request):
    name = new_name(request, "rt-expiring")
    client, topic = small_topic(client_factory, name, overload_policy=TopicOverloadPolicy.BLOCK)
    topic.publish_all([0, 1, 2])
    started = time.monotonic()
    topic.publish(3)
    assert time.monotonic() - started >= 0.5, "publish waited for the first item to expire (1 s)"
    ringbuffer = client.get_ringbuffer(RINGBUFFER_PREFIX + name).blocking()
    assert ringbuffer.tail_sequence() == 3
    assert ringbuffer.read_one(3).payload == 3
    topic.destroy()


def test_destroy_cancels_the_listeners_of_every_client(client, client_factory, topic_name):
    topic = client.get_reliable_topic(topic_name).blocking()
    other = client_factory().get_reliable_topic(topic_name).blocking()
    here, there = Recorder(), Recorder()
    topic.add_listener(here)
    other.add_listener(there)
    topic.publish("before")
    assert there.log.wait_count(1) == ["before"]
    # What is tested is a read *waiting* on the member when the topic goes: the other client
    # issues its next read once "before" arrived; a destroy that overtakes that read (seen on
    # Hazelcast with a unisocket client) has the read make the topic anew and wait there.
    time.sleep(0.5)
    topic.destroy()
    assert here.cancelled.is_set(), "the destroying client cancels its own listeners"
    assert there.cancelled.wait(10), "the other client's waiting read failed: object destroyed"
    names = {name for _, name in ((o.service_name, o.name) for o in client.get_distributed_objects())}
    assert topic_name not in names and RINGBUFFER_PREFIX + topic_name not in names
    assert client.get_ringbuffer(RINGBUFFER_PREFIX + topic_name).blocking().tail_sequence() == -1


def test_a_reliable_topic_and_a_topic_of_one_name_are_separate(client, topic):
    reliable, _ = listen(topic)
    plain_topic = client.get_topic(topic.name).blocking()
    plain, _ = listen(plain_topic)
    plain_topic.publish("plain")
    topic.publish("reliable")
    assert plain.wait_count(1) == ["plain"]
    assert reliable.wait_count(1) == ["reliable"]
    time.sleep(SETTLE)
    assert plain.payloads() == ["plain"] and reliable.payloads() == ["reliable"]
    plain_topic.destroy()
