//! Query caches on members that join: each member's reactor 0 sends a joiner every publisher it
//! holds (every reactor of every member holds each one: `engine/map/query_cache.rs`), as the
//! client's publisherCreate it received, so the joiner publishes the cache's events of the
//! partitions it comes to own. `QUERY_CACHES`: `{ publishable u8 | publisherCreate bytes }*`.

use crate::cluster::peer::{put_bytes, Malformed, Reader, QUERY_CACHES};
use crate::engine::map::query_cache_rows::publisher_create;
use crate::engine::wide::WideRequest;
use crate::route::dispatch::Core;
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::Message;
use tracing::warn;

impl Core {
    /// Sends members that have just joined every query cache's publisher this reactor holds.
    pub(crate) fn send_query_caches_to(&mut self, joined: &[MemberId]) {
        let published = self.owner.listeners.query_caches.published();
        if joined.is_empty() || published.is_empty() {
            return;
        }
        let mut payload = Vec::new();
        for (spec, publishable) in published {
            payload.push(u8::from(publishable));
            put_bytes(&mut payload, &spec.request);
        }
        self.write_to_peers(joined, QUERY_CACHES, &payload);
    }

    /// Another member's QUERY_CACHES: each publisher created on every reactor here (none is
    /// answered); a malformed message is refused whole, with a logged reason.
    pub(crate) fn member_query_caches(&mut self, payload: &[u8]) {
        let mut reader = Reader::new(payload);
        let mut publishers = Vec::new();
        while !reader.is_empty() {
            let entry = (|| Ok::<_, Malformed>((reader.u8()? != 0, reader.bytes()?)))();
            match entry {
                Ok(publisher) => publishers.push(publisher),
                Err(error) => return warn!(%error, "malformed QUERY_CACHES: ignored"),
            }
        }
        for (publishable, request) in publishers {
            let created = Message::parse(request).and_then(|message| {
                let response_type = message.message_type().response();
                let (create, map) = publisher_create(&message, Some(publishable))?;
                Ok((response_type, create, map.into()))
            });
            match created {
                Ok((response_type, create, map)) => {
                    let mut out = Vec::new();
                    self.start_fan_out(None, 0, response_type, map, WideRequest::new(create), &mut out, None);
                }
                Err(error) => warn!(%error, "a query cache in QUERY_CACHES cannot be decoded: ignored"),
            }
        }
    }
}
