//! `ITopic`: publishing serialized messages and listening to them.
//!
//! Publishing goes to the owner of the partition of the topic's name (as the official clients
//! send it, see [`crate::Client::partition_of_name`]); it is not sent again after a lost
//! connection, since the message may have gone out.
//!
//! A message listener is registered on one connection (any open one), cluster-wide
//! (`localOnly` false): that member forwards every member's events to it. Its events are
//! handled on that connection's reader task, so a callback must be quick and must not block;
//! [`Topic::subscribe`] hands messages to a bounded channel instead and counts the ones a full
//! channel refused. A registration lives as long as its connection: if the connection closes,
//! the member drops the registration and no further messages arrive
//! ([`MessageListener::is_active`] turns false); it is not registered again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{Data, Message, PartitionId, Uuid};
use tokio::sync::mpsc;
use tracing::warn;

use crate::connection::{Connection, EventHandler};
use crate::error::ClientError;
use crate::invocation::{Invocation, Target};
use crate::proxy::decode;
use crate::shared::{Client, Inner};

/// Room for headers and frame headers when sizing a request buffer.
const REQUEST_OVERHEAD_BYTES: usize = 96;

/// A handle on one distributed topic. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Topic {
    client: Client,
    name: Arc<str>,
    /// The partition of the name: publishing goes there.
    partition: PartitionId,
}

/// One message as a listener receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMessage {
    /// The message as published: a Data blob.
    pub item: Vec<u8>,
    /// When the member published it: milliseconds since the Unix epoch, by the member's clock.
    pub publish_time_ms: i64,
    /// The member that dispatched the event (null only from a peer that breaks the protocol).
    pub publishing_member: Option<Uuid>,
    /// When this client read the event (before any channel it then waited in).
    pub received_at: Instant,
}

/// A registered message listener. Remove it with [`Topic::remove_message_listener`]; dropping
/// it only stops its callbacks (the member keeps sending its events until the connection
/// closes).
#[derive(Debug)]
pub struct MessageListener {
    connection: Arc<Connection>,
    correlation_id: i64,
    registration_id: Uuid,
    dropped: Arc<AtomicU64>,
}

impl MessageListener {
    /// The id the member gave the registration.
    pub fn registration_id(&self) -> Uuid {
        self.registration_id
    }

    /// Messages a full channel refused ([`Topic::subscribe`]); 0 for callback listeners.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// False once the connection carrying the registration has closed.
    pub fn is_active(&self) -> bool {
        !self.connection.is_closed()
    }
}

impl Drop for MessageListener {
    fn drop(&mut self) {
        self.connection.remove_event_handler(self.correlation_id);
    }
}

impl Topic {
    pub(crate) fn new(client: Client, name: &str) -> Topic {
        let partition = client.partition_of_name(name);
        Topic { client, name: name.into(), partition }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The partition publishing goes to.
    pub fn partition(&self) -> PartitionId {
        self.partition
    }

    fn inner(&self) -> &Arc<Inner> {
        self.client.inner()
    }

    /// Publishes `message` (a Data blob) to every listener of the topic.
    pub async fn publish(&self, message: &[u8]) -> Result<(), ClientError> {
        let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len() + message.len());
        TopicPublish { name: &self.name, message: Data(message) }.encode(&mut request, 0, self.partition_id(), 0);
        self.publish_request(request).await
    }

    /// Publishes every message, in order, with one request.
    pub async fn publish_all(&self, messages: &[Vec<u8>]) -> Result<(), ClientError> {
        let size = messages.iter().map(|message| message.len() + 6).sum::<usize>();
        let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len() + size);
        let messages = messages.iter().map(|message| Data(message)).collect();
        TopicPublishAll { name: &self.name, messages }.encode(&mut request, 0, self.partition_id(), 0);
        self.publish_request(request).await
    }

    async fn publish_request(&self, request: Vec<u8>) -> Result<(), ClientError> {
        let invocation = Invocation::new(request, Target::Partition(self.partition), false);
        self.inner().invoke(&invocation).await.map(drop)
    }

    fn partition_id(&self) -> i32 {
        i32::from(self.partition.0)
    }

    /// Registers `on_message`, called on a connection's reader task for every message
    /// published from now on: it must be quick and must not block.
    pub async fn add_message_listener<F>(&self, on_message: F) -> Result<MessageListener, ClientError>
    where
        F: Fn(TopicMessage) + Send + Sync + 'static,
    {
        self.register(Arc::new(AtomicU64::new(0)), on_message).await
    }

    /// Registers a listener that sends every message to the returned channel, which holds at
    /// most `capacity` messages: a message that finds it full is dropped and counted in
    /// [`MessageListener::dropped`]. The channel closes when the listener is removed or
    /// dropped, or its connection closes. `capacity` must be above 0.
    pub async fn subscribe(
        &self,
        capacity: usize,
    ) -> Result<(MessageListener, mpsc::Receiver<TopicMessage>), ClientError> {
        assert!(capacity > 0, "a channel holds at least one message");
        let (sender, receiver) = mpsc::channel(capacity);
        let dropped = Arc::new(AtomicU64::new(0));
        let counter = dropped.clone();
        let listener = self
            .register(dropped, move |message| {
                if sender.try_send(message).is_err() {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
            .await?;
        Ok((listener, receiver))
    }

    async fn register<F>(&self, dropped: Arc<AtomicU64>, on_message: F) -> Result<MessageListener, ClientError>
    where
        F: Fn(TopicMessage) + Send + Sync + 'static,
    {
        let inner = self.inner();
        let connection = inner.route(&Target::Any).ok_or(ClientError::NoConnection)?;
        let correlation_id = inner.next_correlation_id();
        connection.add_event_handler(correlation_id, event_handler(self.name.clone(), on_message));
        let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len());
        TopicAddMessageListener { local_only: false, name: &self.name }.encode(&mut request, 0, -1, 0);
        let mut invocation = Invocation::new(request, Target::Connection(connection.clone()), false);
        invocation.correlation_id = Some(correlation_id);
        // Dropping the listener on an error path removes the handler again.
        let mut listener = MessageListener { connection, correlation_id, registration_id: Uuid::from_u128(0), dropped };
        let response = inner.invoke(&invocation).await?;
        match decode(&response, |message| UuidResponse::decode(message).map(|r| r.response))? {
            Some(registration_id) => {
                listener.registration_id = registration_id;
                Ok(listener)
            }
            None => Err(ferrogrid_protocol::DecodeError::UnexpectedFrame("a registration id").into()),
        }
    }

    /// Removes `listener`: no further messages reach it. Returns whether the member still had
    /// the registration (false if it was gone, with its connection).
    pub async fn remove_message_listener(&self, listener: MessageListener) -> Result<bool, ClientError> {
        if !listener.is_active() {
            return Ok(false);
        }
        let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len());
        TopicRemoveMessageListener { registration_id: Some(listener.registration_id), name: &self.name }.encode(
            &mut request,
            0,
            -1,
            0,
        );
        let invocation = Invocation::new(request, Target::Connection(listener.connection.clone()), true);
        let response = self.inner().invoke(&invocation).await?;
        decode(&response, |message| BoolResponse::decode(message).map(|r| r.response))
    }
}

/// The connection-level handler of a listener's events: decodes each one and passes it on.
fn event_handler<F>(topic: Arc<str>, on_message: F) -> EventHandler
where
    F: Fn(TopicMessage) + Send + Sync + 'static,
{
    Arc::new(move |_connection, message: &Message<'_>| {
        let received_at = Instant::now();
        if message.message_type() != TopicEvent::TYPE {
            warn!(%topic, message_type = %message.message_type(), "ignoring an unexpected event on a topic listener");
            return;
        }
        match TopicEvent::decode(message) {
            Ok(event) => on_message(TopicMessage {
                item: event.item.0.to_vec(),
                publish_time_ms: event.publish_time,
                publishing_member: event.uuid,
                received_at,
            }),
            Err(error) => warn!(%topic, %error, "ignoring an undecodable topic event"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ConnectionId;
    use parking_lot::Mutex;

    #[test]
    fn events_reach_the_callback_decoded() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let handler = event_handler("news".into(), move |message| sink.lock().push(message));
        let member = Uuid { most: 7, least: 9 };
        let mut bytes = Vec::new();
        TopicEvent { publish_time: 1_700_000_000_123, uuid: Some(member), item: Data(b"blob") }
            .encode(&mut bytes, 42, -1);
        let before = Instant::now();
        handler(ConnectionId(1), &Message::parse(&bytes).unwrap());
        // Another event type on the same correlation id is ignored, not misread.
        let mut other = Vec::new();
        QueueItemEvent { uuid: Some(member), event_type: 1, item: None }.encode(&mut other, 42, -1);
        handler(ConnectionId(1), &Message::parse(&other).unwrap());
        let seen = seen.lock();
        assert_eq!(seen.len(), 1);
        let message = &seen[0];
        assert_eq!((message.item.as_slice(), message.publish_time_ms), (&b"blob"[..], 1_700_000_000_123));
        assert_eq!(message.publishing_member, Some(member));
        assert!(message.received_at >= before);
    }
}
