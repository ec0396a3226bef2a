"""ITopic (service 4: Topic.Publish 0x040100 … Topic.PublishAll 0x040400), as a user of the
Python client sees it. Runs against ferrogrid and against a real Hazelcast 5.6.0 member.

What a real Hazelcast 5.6.0 member does (and these tests hold):
  * publish / publish_all deliver each message to every listener registered on the topic, on
    any client, with the publish time (the Python client gives seconds, float, from the
    member's epoch milliseconds) and the member that published it (the member the publishing
    client sent the message to); messages of one publisher arrive at every listener in the
    order they were published, even when the client pipelines them;
  * a topic keeps nothing: a listener added after a publish never hears that message;
  * publish_all([]) is accepted and delivers nothing;
  * remove_listener answers True once, then False; the removed listener hears nothing more;
  * destroy drops every listener of the topic, other clients' too; publishing afterwards
    works (the topic comes back empty) but the old listeners hear nothing.
  * None is refused by the Python client before anything is sent: publish(None) raises
    AttributeError ("'NoneType' object has no attribute 'buffer'", from the codec),
    publish_all([..., None]) AssertionError ("Message cannot be None").
"""

import time

import pytest

from helpers import MessageLog, destroy_after, member_uuid

SETTLE = 0.3  # s: for events that must NOT arrive, after a later event has arrived


@pytest.fixture
def topic_name(request):
    from conftest import unique_name

    return unique_name(request, "t")


@pytest.fixture
def topic(client, topic_name):
    yield from destroy_after(client.get_topic(topic_name).blocking())


def listen(topic):
    """A MessageLog registered on `topic`, and its registration id."""
    log = MessageLog()
    return log, topic.add_listener(log)


def test_publish_reaches_a_listener_with_time_and_member(topic, client):
    log, _ = listen(topic)
    before = time.time()
    topic.publish("hello")
    assert log.wait_count(1) == ["hello"]
    message = log.messages[0]
    assert message.name == topic.name
    assert before - 1 <= message.publish_time <= time.time() + 1, (before, message.publish_time)
    assert message.member is not None and message.member.uuid == member_uuid(client)


def test_messages_of_any_type_round_trip(topic):
    log, _ = listen(topic)
    messages = [1, "two", 3.5, True, b"bytes", [1, 2], {"k": "v"}, -7, ""]
    for message in messages:
        topic.publish(message)
    assert log.wait_count(len(messages)) == messages


def test_publish_all_delivers_every_message_in_order(topic):
    log, _ = listen(topic)
    topic.publish_all(["a", "b", "c"])
    topic.publish_all([])
    topic.publish("d")
    assert log.wait_count(4) == ["a", "b", "c", "d"]
    time.sleep(SETTLE)
    assert log.payloads() == ["a", "b", "c", "d"], "publish_all([]) delivers nothing"


def test_a_listener_does_not_hear_earlier_messages(topic):
    topic.publish("early")
    log, _ = listen(topic)
    topic.publish("late")
    assert log.wait_count(1) == ["late"]
    time.sleep(SETTLE)
    assert log.payloads() == ["late"]


def test_messages_of_one_publisher_arrive_in_order_at_every_listener(topic, client_factory):
    count = 300
    first, second = listen(topic)[0], listen(topic)[0]
    other_topic = client_factory().get_topic(topic.name).blocking()
    third = MessageLog()
    other_topic.add_listener(third)
    publisher = client_factory().get_topic(topic.name)
    # pipelined: every publish is sent before the first answer is awaited
    futures = [publisher.publish(i) for i in range(count)]
    for future in futures:
        future.result()
    for log in (first, second, third):
        assert log.wait_count(count) == list(range(count))


def test_listeners_on_two_clients_hear_both_clients(topic, client_factory, client):
    other_client = client_factory()
    other = other_client.get_topic(topic.name).blocking()
    here, _ = listen(topic)
    there, _ = listen(other)
    topic.publish("from-first")
    other.publish("from-second")
    assert here.wait_count(2) == ["from-first", "from-second"]
    assert there.wait_count(2) == ["from-first", "from-second"]
    uuid = member_uuid(client)
    assert {m.member.uuid for m in here.messages + there.messages} == {uuid}


def test_removed_listener_hears_nothing_more(topic, client_factory):
    removed, registration = listen(topic)
    keeper, _ = listen(topic)
    publisher = client_factory().get_topic(topic.name).blocking()
    publisher.publish("before")
    assert removed.wait_count(1) == ["before"]
    assert topic.remove_listener(registration) is True
    assert topic.remove_listener(registration) is False
    publisher.publish("after")
    assert keeper.wait_count(2) == ["before", "after"]
    time.sleep(SETTLE)
    assert removed.payloads() == ["before"]


def test_none_is_refused_by_the_client(topic):
    log, _ = listen(topic)
    with pytest.raises(AttributeError):
        topic.publish(None)
    with pytest.raises(AssertionError):
        topic.publish_all(["x", None])
    topic.publish("after")
    assert log.wait_count(1) == ["after"], "nothing of a refused publish reached the member"
    time.sleep(SETTLE)
    assert log.payloads() == ["after"]


def test_topic_is_listed_among_distributed_objects(client, topic):
    topic.publish("x")
    names = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert ("hz:impl:topicService", topic.name) in names


def test_destroy_drops_every_listener(client, client_factory, topic_name):
    first = client.get_topic(topic_name).blocking()
    other = client_factory().get_topic(topic_name).blocking()
    old, _ = listen(other)
    first.publish("before")
    assert old.wait_count(1) == ["before"]
    first.destroy()
    names = {(o.service_name, o.name) for o in client.get_distributed_objects()}
    assert ("hz:impl:topicService", topic_name) not in names
    again = client.get_topic(topic_name).blocking()
    new, _ = listen(again)
    again.publish("after")
    assert new.wait_count(1) == ["after"]
    time.sleep(SETTLE)
    assert old.payloads() == ["before"], "destroy removed the other client's listener"
    again.destroy()
