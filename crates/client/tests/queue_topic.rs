//! Queues and topics against a real member (a ferrogrid member started in-process, or the
//! member at `FERROGRID_CLIENT_TEST_ADDRESS`, e.g. Hazelcast 5.6, cluster `dev`), and the
//! request routing, event decoding and listener channel bound against the scripted member.

mod support;

use std::time::Duration;

use ferrogrid_client::{deserialize_bytes, serialize_bytes, serialize_string, Client, TopicMessage};
use ferrogrid_protocol::codec::{QueueOffer, QueuePoll, TopicAddMessageListener, TopicPublish};
use ferrogrid_protocol::{partition_for, Data};
use support::fake::{FakeMember, MEMBER_UUID, PUBLISH_TIME_MS};
use support::{config, map_name, TestMember};
use tokio::sync::mpsc;
use tokio::time::{timeout, Instant};

fn item(index: u32) -> Vec<u8> {
    serialize_bytes(&index.to_be_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_operations_have_iqueue_semantics() {
    let member = TestMember::start();
    for smart_routing in [true, false] {
        let client = Client::connect(config(member.address, smart_routing)).await.unwrap();
        let queue = client.queue(&map_name("queue")).await.unwrap();
        assert_eq!(queue.partition(), client.partition_of_name(queue.name()));
        assert_eq!((queue.size().await.unwrap(), queue.poll().await.unwrap()), (0, None));
        for index in 0..100 {
            assert!(queue.offer(&item(index)).await.unwrap());
        }
        assert_eq!(queue.size().await.unwrap(), 100);
        for index in 0..60 {
            assert_eq!(queue.poll().await.unwrap(), Some(item(index)), "first in, first out");
        }
        assert_eq!(queue.size().await.unwrap(), 40);
        queue.clear().await.unwrap();
        assert_eq!((queue.size().await.unwrap(), queue.poll().await.unwrap()), (0, None));
        client.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_poll_waits_for_an_item_or_the_timeout() {
    let member = TestMember::start();
    let client = Client::connect(config(member.address, true)).await.unwrap();
    let queue = client.queue(&map_name("timed-poll")).await.unwrap();

    let started = Instant::now();
    assert_eq!(queue.poll_with_timeout(Duration::from_millis(300)).await.unwrap(), None);
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(250) && waited < Duration::from_secs(5), "{waited:?}");

    let producer = queue.clone();
    let offer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        producer.offer_with_timeout(&item(7), Duration::from_secs(1)).await
    });
    let started = Instant::now();
    assert_eq!(queue.poll_with_timeout(Duration::from_secs(10)).await.unwrap(), Some(item(7)));
    assert!(started.elapsed() < Duration::from_secs(5), "the waiting poll got the item when it came");
    assert!(offer.await.unwrap().unwrap());
    assert_eq!(queue.size().await.unwrap(), 0);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_and_topic_requests_go_to_the_partition_of_the_name() {
    let member = FakeMember::start().await;
    let client = Client::connect(config(member.address, true)).await.unwrap();
    for name in ["orders", "orders@eu", "news"] {
        let expected = partition_for(Data(&serialize_string(name.split_once('@').map_or(name, |(_, key)| key))), 271);
        assert_eq!(client.partition_of_name(name), expected, "{name}");
    }
    assert_eq!(client.partition_of_name("orders@eu"), client.partition_of_name("eu"));
    assert_ne!(client.partition_of_name("orders@eu"), client.partition_of_name("orders"));

    let queue = client.queue("orders@eu").await.unwrap();
    let topic = client.topic("news").await.unwrap();
    // The fake answers queue requests with an empty response, which is not a queue answer.
    assert!(queue.offer(&item(1)).await.is_err());
    assert!(queue.poll().await.is_err());
    let _listener = topic.add_message_listener(|_| {}).await.unwrap();
    topic.publish(&item(1)).await.unwrap();
    let sent: Vec<(i32, i32)> =
        member.received().iter().map(|request| (request.message_type.0, request.partition_id)).collect();
    let (queue_partition, topic_partition) = (i32::from(queue.partition().0), i32::from(topic.partition().0));
    assert_eq!(
        sent,
        [
            (QueueOffer::TYPE.0, queue_partition),
            (QueuePoll::TYPE.0, queue_partition),
            (TopicAddMessageListener::TYPE.0, -1),
            (TopicPublish::TYPE.0, topic_partition),
        ]
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_listeners_get_messages_until_removed() {
    let member = FakeMember::start().await;
    let client = Client::connect(config(member.address, true)).await.unwrap();
    let topic = client.topic("news").await.unwrap();
    let (sender, mut callback_messages) = mpsc::unbounded_channel();
    let callback = topic.add_message_listener(move |message| sender.send(message).unwrap()).await.unwrap();
    let (channel, mut channel_messages) = topic.subscribe(16).await.unwrap();
    assert_ne!(callback.registration_id(), channel.registration_id());

    let before = std::time::Instant::now();
    topic.publish(&item(1)).await.unwrap();
    topic.publish_all(&[item(2), item(3)]).await.unwrap();
    expect_published(&mut callback_messages, before).await;
    expect_published(&mut channel_messages, before).await;
    assert_eq!((callback.dropped(), channel.dropped()), (0, 0));

    assert!(topic.remove_message_listener(channel).await.unwrap());
    assert_eq!(timeout(Duration::from_secs(5), channel_messages.recv()).await.unwrap(), None, "channel closed");
    topic.publish(&item(4)).await.unwrap();
    assert_eq!(callback_messages.next().await.item, item(4), "the other listener still listens");
    assert!(topic.remove_message_listener(callback).await.unwrap());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_listener_channel_drops_and_counts() {
    let member = FakeMember::start().await;
    let client = Client::connect(config(member.address, true)).await.unwrap();
    let topic = client.topic("busy").await.unwrap();
    let (listener, mut messages) = topic.subscribe(3).await.unwrap();
    let batch: Vec<Vec<u8>> = (0..10).map(item).collect();
    topic.publish_all(&batch).await.unwrap();
    // Everything was read once the publish was answered (the events came before the answer).
    assert_eq!(listener.dropped(), 7);
    for index in 0..3 {
        assert_eq!(messages.next().await.item, item(index), "the first three were kept");
    }
    assert!(messages.try_recv().is_err());
    topic.publish(&item(10)).await.unwrap();
    assert_eq!(messages.next().await.item, item(10), "room again after draining");
    assert_eq!(listener.dropped(), 7);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_messages_reach_every_listener_of_a_real_member() {
    let member = TestMember::start();
    let (publisher, listening) = (
        Client::connect(config(member.address, true)).await.unwrap(),
        Client::connect(config(member.address, false)).await.unwrap(),
    );
    let name = map_name("topic");
    let topic = publisher.topic(&name).await.unwrap();
    let (first, mut first_messages) = listening.topic(&name).await.unwrap().subscribe(1000).await.unwrap();
    let (second, mut second_messages) = topic.subscribe(1000).await.unwrap();
    let published_after_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    for index in 0..200 {
        topic.publish(&item(index)).await.unwrap();
    }
    for messages in [&mut first_messages, &mut second_messages] {
        for index in 0..200u32 {
            let message = messages.next().await;
            assert_eq!(deserialize_bytes(&message.item).unwrap(), index.to_be_bytes(), "in publishing order");
            assert!(message.publish_time_ms + 5_000 >= published_after_ms.as_millis() as i64);
            assert!(message.publishing_member.is_some());
        }
    }
    assert!(listening.topic(&name).await.unwrap().remove_message_listener(first).await.unwrap());
    topic.publish(&item(200)).await.unwrap();
    assert_eq!(second_messages.next().await.item, item(200));
    assert_eq!(timeout(Duration::from_secs(5), first_messages.recv()).await.unwrap(), None, "removed: closed");
    assert_eq!(second.dropped(), 0);
    publisher.shutdown().await;
    listening.shutdown().await;
}

/// Checks that `messages` next holds items 1, 2, 3 as the fake member sends them.
async fn expect_published(messages: &mut impl Receive, before: std::time::Instant) {
    for index in 1..=3 {
        let message = messages.next().await;
        assert_eq!((message.item, message.publish_time_ms), (item(index), PUBLISH_TIME_MS));
        assert_eq!(message.publishing_member, Some(MEMBER_UUID));
        assert!(message.received_at >= before);
    }
}

/// The next message of a listener, within 5 s.
trait Receive {
    async fn next(&mut self) -> TopicMessage;
}

impl Receive for mpsc::Receiver<TopicMessage> {
    async fn next(&mut self) -> TopicMessage {
        timeout(Duration::from_secs(5), self.recv()).await.expect("a message within 5 s").expect("channel open")
    }
}

impl Receive for mpsc::UnboundedReceiver<TopicMessage> {
    async fn next(&mut self) -> TopicMessage {
        timeout(Duration::from_secs(5), self.recv()).await.expect("a message within 5 s").expect("channel open")
    }
}
