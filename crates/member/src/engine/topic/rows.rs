//! The topic's rows of the operation table, publishing with its decoder.

use crate::engine::listeners::{Listener, Registry};
use crate::engine::request::Blob;
use crate::engine::request::Replies;
use crate::engine::request::{ErrorKind, OpError, Reply};
use crate::engine::topic::request::TopicRequest;
use crate::engine::wide::objects::{add_listener, listener, remove_listener};
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::row::{row, wide_row, Operation, S};
use crate::route::wire;
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::Data;
use std::borrow::Cow;

/// Published by the owner of its name's partition; listeners on every reactor.
pub(crate) static ROWS: &[Operation] = &[
    row!(TopicPublish, Partition, S, |r| topic(r.name, vec![blob(r.message)])),
    row!(TopicPublishAll, Partition, S, |r| topic(r.name, list(r.messages))),
    wide_row!(TopicAddMessageListener, S, |message, connection| {
        let r = TopicAddMessageListener::decode(message)?;
        let listener = Listener {
            event_type: TopicEvent::TYPE,
            include_value: true,
            local_only: r.local_only,
            ..listener(message, connection)
        };
        add_listener(Registry::Messages, r.name, listener)
    }),
    wide_row!(TopicRemoveMessageListener, S, |message, _| {
        let r = TopicRemoveMessageListener::decode(message)?;
        remove_listener(Registry::Messages, r.name, r.registration_id)
    }),
];

/// Publishes `messages` on the topic `name`.
fn topic<'a>(name: &'a str, messages: Vec<Blob<'a>>) -> TopicRequest<'a> {
    TopicRequest { name: Cow::Borrowed(name), messages }
}

/// A topic's publish or publishAll, run by the owner of its name's partition, so that
/// every listener hears one order: delivered to this member's listeners and relayed to
/// every other member for theirs (a unisocket client's).
impl Execute for TopicRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let request = self;
        if request.messages.iter().any(|message| Data(message).type_id().unwrap_or(0) == 0) {
            let failure = OpError::new(ErrorKind::NullArgument, "Null message is not allowed!");
            return wire::write_error(out, call.correlation_id, &failure);
        }
        let messages: Vec<&[u8]> = request.messages.iter().map(|message| &**message).collect();
        let (name, partition) = (&*request.name, call.partition_id.0);
        let relay = crate::cluster::peer::TopicRelay {
            name,
            partition,
            publisher: owner.member,
            publish_time_ms: owner.now_ms,
            messages,
        };
        let receives = owner.listeners.publish_messages(&mut owner.outbox, &relay, false);
        owner.count_topic(name, relay.messages.len() as u64, receives);
        owner.replication.relay_topic(&relay);
        call.replies(out).reply(Reply::Empty);
    }
}
