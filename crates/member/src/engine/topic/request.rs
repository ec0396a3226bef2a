//! The topic's typed request. No wire format in them: a row decodes a message into
//! them (`rows.rs`), the engine runs them.

use crate::engine::request::Blob;
use std::borrow::Cow;

/// One topic request: messages to publish (the topic's name's partition owner publishes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicRequest<'a> {
    /// The topic's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    /// publish (one) or publishAll.
    pub messages: Vec<Blob<'a>>,
}
