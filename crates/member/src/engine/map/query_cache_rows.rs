//! The ContinuousQuery service's rows (the member side of `IMap.getQueryCache`; the publishers
//! are `query_cache.rs`): addListener registers the cache's listener on this member (a
//! unisocket client's on every member, relayed) as a map listener under the cache's name;
//! publisherCreate creates the cache's publisher on every reactor of every member and answers
//! the initial contents (the keys or entries matching the predicate, as a query's answer);
//! madePublishable and destroyCache act on every member; setReadCursor runs on the partition's
//! owner.

use crate::engine::listeners::{Listener, Listeners, Registry};
use crate::engine::map::query_cache::Spec;
use crate::engine::map::query_ops::{Found, Query};
use crate::engine::request::{OpError, Replies, Reply};
use crate::engine::wide::objects::{add_listener, listener};
use crate::engine::wide::{Classified, Listed, Partitions, ShareContext, WideOperation};
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::row::{row, wide_row, Operation, S};
use crate::route::wire;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message};
use std::sync::{Arc, OnceLock};

pub(crate) static ROWS: &[Operation] = &[
    wide_row!(ContinuousQueryAddListener, S, |message, connection| {
        let r = ContinuousQueryAddListener::decode(message)?;
        // No event types: no map event reaches it, only its cache's (`listeners.rs`).
        let listener = Listener { local_only: r.local_only, ..listener(message, connection) };
        add_listener(Registry::Entries, r.listener_name, listener)
    }),
    wide_row!(ContinuousQueryPublisherCreateWithValue, S, |message, _| {
        let (create, map) = publisher_create(message, None)?;
        Classified::wide(create, map)
    }),
    wide_row!(ContinuousQueryPublisherCreate, S, |message, _| {
        let (create, map) = publisher_create(message, None)?;
        Classified::wide(create, map)
    }),
    wide_row!(ContinuousQueryMadePublishable, S, |message, _| {
        let r = ContinuousQueryMadePublishable::decode(message)?;
        Classified::wide(CacheCall { cache: r.cache_name.into(), destroy: false }, r.map_name)
    }),
    wide_row!(ContinuousQueryDestroyCache, S, |message, _| {
        let r = ContinuousQueryDestroyCache::decode(message)?;
        Classified::wide(CacheCall { cache: r.cache_name.into(), destroy: true }, r.map_name)
    }),
    row!(ContinuousQuerySetReadCursor, Partition, S, |r| r),
];

/// The operation of a publisherCreate(WithValue) `message` and its map's name; with
/// `install`, the publisher another member sent this member when it joined (publishable or
/// not): created here only, without the initial contents.
pub(crate) fn publisher_create<'m>(
    message: &Message<'m>,
    install: Option<bool>,
) -> Result<(PublisherCreate, &'m str), DecodeError> {
    let (listed, r) = if message.message_type() == ContinuousQueryPublisherCreateWithValue::TYPE {
        let r = ContinuousQueryPublisherCreateWithValue::decode(message)?;
        let fields = (r.batch_size, r.buffer_size, r.delay_seconds, r.populate, r.coalesce);
        (Listed::Entries, (r.map_name, r.cache_name, r.predicate, fields))
    } else {
        let r = ContinuousQueryPublisherCreate::decode(message)?;
        let fields = (r.batch_size, r.buffer_size, r.delay_seconds, r.populate, r.coalesce);
        (Listed::Keys, (r.map_name, r.cache_name, r.predicate, fields))
    };
    let (map, cache, predicate, (batch, buffer, delay, populate, coalesce)) = r;
    let asked = Asked { cache: cache.into(), sizes: (batch, buffer, delay), populate, coalesce };
    let query = Query::new(listed, predicate.0, None);
    let (predicate, request) = (predicate.0.into(), message.bytes().into());
    let create = PublisherCreate { asked, predicate, query, listed, spec: OnceLock::new(), request, install };
    Ok((create, map))
}

/// The cache's own name as this member keeps it: in the map's tenant namespace, as the
/// listener's name is (`map` is the scoped map name).
fn scoped_cache(map: &str, cache: &str) -> String {
    let unscoped = crate::tenants::split(map).map_or(map, |(_, name)| name);
    format!("{}{cache}", &map[..map.len() - unscoped.len()])
}

/// What publisherCreate asked, besides the predicate.
#[derive(Debug)]
struct Asked {
    cache: Box<str>,
    /// Batch size, buffer size, delay in seconds.
    sizes: (i32, i32, i64),
    populate: bool,
    coalesce: bool,
}

/// publisherCreate(WithValue): the cache's publisher on every reactor of every member, then
/// (with `populate`) the keys or entries matching its predicate, as a query answers them. The
/// publisher is in place on a reactor before its partitions are read, so no change falls
/// between the contents and the events.
#[derive(Debug)]
pub(crate) struct PublisherCreate {
    asked: Asked,
    predicate: Box<[u8]>,
    query: Query,
    listed: Listed,
    /// The spec, made by the first share from the member's bounds.
    spec: OnceLock<Arc<Spec>>,
    /// The request as received (kept in the spec, for members that join).
    request: Box<[u8]>,
    /// A publisher sent by another member (publishable or not): no initial contents, no answer.
    install: Option<bool>,
}

impl WideOperation for PublisherCreate {
    type Partial = Found;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Found {
        Found::default()
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Found) {
        let (bound, buffer_bound) = share.settings.query_cache_limits();
        let spec = self.spec.get_or_init(|| {
            let names = (map, &*scoped_cache(map, &self.asked.cache));
            let include_value = self.listed == Listed::Entries;
            let flags = (self.asked.coalesce, self.asked.populate);
            let bounds = (buffer_bound, &*self.request);
            Arc::new(Spec::new(names, &self.predicate, include_value, self.asked.sizes, flags, bounds))
        });
        if let Err(failure) = share.listeners.create_query_cache(map, spec.clone(), (bound, self.install.is_some())) {
            if self.install.is_some() {
                tracing::warn!(map = %crate::tenants::display(map), reason = %failure.message, "another member's query cache not published here");
            }
            return partial.fail(failure);
        }
        if let Some(publishable) = self.install {
            if publishable {
                share.listeners.query_caches.made_publishable(map, &spec.cache);
            }
        } else if self.asked.populate {
            self.query.on_share(map, share, partial);
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Found) -> Result<Reply<'p>, OpError> {
        if self.install.is_some() {
            return Ok(Reply::NoAnswer);
        }
        if let Some(failure) = partial.failure() {
            return Err(failure.clone());
        }
        match (self.asked.populate, self.listed) {
            (true, _) => self.query.reply(partial),
            (false, Listed::Entries) => Ok(Reply::Entries(Vec::new())),
            (false, _) => Ok(Reply::Values(Vec::new())),
        }
    }

    fn oversized(&self, partial: &Found, bytes: usize) -> Option<OpError> {
        self.query.oversized(partial, bytes)
    }
}

/// madePublishable (`destroy` false: the cache's events go out from now on) or destroyCache
/// (its publisher gone), on every reactor of every member; both answer true, as Hazelcast's.
#[derive(Debug)]
struct CacheCall {
    cache: Box<str>,
    destroy: bool,
}

impl WideOperation for CacheCall {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;

    fn empty(&self) {}

    fn on_reactor(&self, map: &str, listeners: &mut Listeners, _partial: &mut ()) {
        let cache = scoped_cache(map, &self.cache);
        if self.destroy {
            listeners.query_caches.destroy(map, &cache);
        } else {
            listeners.query_caches.made_publishable(map, &cache);
        }
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Bool(true))
    }
}

/// setReadCursor, on the partition's owner: whether the partition still holds the event of
/// that sequence (then it and those after it are sent again); a sequence below 1 is refused
/// with IllegalArgumentException, as Hazelcast's.
impl Execute for ContinuousQuerySetReadCursor<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let cache = scoped_cache(self.map_name, self.cache_name);
        let partition = call.partition_id.0;
        let names = (self.map_name, &*cache);
        match owner.listeners.query_caches.set_read_cursor(names, partition, self.sequence) {
            Ok(held) => call.replies(out).reply(Reply::Bool(held)),
            Err(failure) => wire::write_error(out, call.correlation_id, &failure),
        }
    }
}
