//! The topic's rows of the operation table and their decoder.

use crate::engine::request::Request;
use crate::engine::request::*;
use crate::engine::wide::objects::classify_listener;
use crate::route::row::{row, wide_row, Operation, S};
use crate::route::wire::{blob, list};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message};
use std::borrow::Cow;

/// Published by the owner of its name's partition; listeners on every reactor.
pub(crate) static ROWS: &[Operation] = &[
    row!(TopicPublish, Partition, S, decode_topic),
    row!(TopicPublishAll, Partition, S, decode_topic),
    wide_row!(TopicAddMessageListener, S, classify_listener),
    wide_row!(TopicRemoveMessageListener, S, classify_listener),
];

/// The decoder of the operation table's topic rows (publish, publishAll).
pub(crate) fn decode_topic<'a>(message: &Message<'a>) -> Result<Request<'a>, DecodeError> {
    let (name, messages) = match message.message_type() {
        TopicPublish::TYPE => {
            let r = TopicPublish::decode(message)?;
            (r.name, vec![blob(r.message)])
        }
        TopicPublishAll::TYPE => {
            let r = TopicPublishAll::decode(message)?;
            (r.name, list(r.messages))
        }
        other => unreachable!("{other} has a topic row but no decoder"),
    };
    Ok(Request::Topic(TopicRequest { name: Cow::Borrowed(name), messages }))
}
