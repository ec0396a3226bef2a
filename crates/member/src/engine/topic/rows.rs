//! The topic's rows of the operation table, publishing with its decoder.

use crate::engine::listeners::{Listener, Registry};
use crate::engine::request::Blob;
use crate::engine::topic::request::TopicRequest;
use crate::engine::wide::objects::{add_listener, listener, remove_listener};
use crate::route::row::Request;
use crate::route::row::{row, wide_row, Operation, S};
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
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
fn topic<'a>(name: &'a str, messages: Vec<Blob<'a>>) -> Request<'a> {
    Request::Topic(TopicRequest { name: Cow::Borrowed(name), messages })
}
