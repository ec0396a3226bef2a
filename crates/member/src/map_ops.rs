//! Partition-bound map operations: run on the thread that owns the partition.
//!
//! Each request is decoded, applied to the partition's store and answered into `out`.
//! Semantics follow Hazelcast 5.6 (return values, what counts as present, errors for null keys
//! or values). Along the way an operation expires the key it touches if due, publishes entry
//! events, evicts to the map's bound after an insert, and respects key locks: a lock-aware
//! request on a key another owner has locked is parked (no answer yet) and re-run when the
//! lock is released.

use crate::connection::ConnectionShared;
use crate::listeners::{Event, EventKind, Listeners};
use crate::locks::{LockOwner, Parked};
use crate::outbox::Outbox;
use crate::store::{MapSettings, PartitionStore, RecordStore, NEVER};
use ahash::RandomState;
use ferrogrid_config::MemberConfig;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorCode, ErrorHolder};
use ferrogrid_protocol::{Data, DecodeError, Message, MessageType, Uuid};
use std::collections::HashMap;
use std::sync::Arc;

/// Backup acks the response tells the client to wait for; 0 until backups exist.
const BACKUP_ACKS: u8 = 0;

/// True when `message_type` is a map operation bound to one partition.
pub fn is_partition_operation(message_type: MessageType) -> bool {
    PARTITION_OPERATIONS.contains(&message_type)
}

/// The position of a partition operation in `PARTITION_OPERATIONS` (its probe slot).
pub fn partition_operation_index(message_type: MessageType) -> Option<usize> {
    PARTITION_OPERATIONS.iter().position(|ty| *ty == message_type)
}

pub const PARTITION_OPERATION_COUNT: usize = PARTITION_OPERATIONS.len();

pub const PARTITION_OPERATIONS: &[MessageType] = &[
    MapPut::TYPE,
    MapGet::TYPE,
    MapRemove::TYPE,
    MapReplace::TYPE,
    MapReplaceIfSame::TYPE,
    MapContainsKey::TYPE,
    MapRemoveIfSame::TYPE,
    MapDelete::TYPE,
    MapTryRemove::TYPE,
    MapTryPut::TYPE,
    MapPutTransient::TYPE,
    MapPutIfAbsent::TYPE,
    MapSet::TYPE,
    MapGetEntryView::TYPE,
    MapEvict::TYPE,
    MapGetAll::TYPE,
    MapPutAll::TYPE,
    MapSetTtl::TYPE,
    MapPutWithMaxIdle::TYPE,
    MapPutTransientWithMaxIdle::TYPE,
    MapPutIfAbsentWithMaxIdle::TYPE,
    MapSetWithMaxIdle::TYPE,
    MapLock::TYPE,
    MapTryLock::TYPE,
    MapIsLocked::TYPE,
    MapUnlock::TYPE,
    MapForceUnlock::TYPE,
];

/// Each map's resolved settings, cached per reactor.
#[derive(Debug)]
pub struct SettingsCache {
    config: Arc<MemberConfig>,
    partition_count: u16,
    cache: HashMap<Box<str>, Arc<MapSettings>, RandomState>,
}

impl SettingsCache {
    pub fn new(config: Arc<MemberConfig>, partition_count: u16) -> SettingsCache {
        SettingsCache { config, partition_count, cache: HashMap::default() }
    }

    pub fn get(&mut self, map: &str) -> Arc<MapSettings> {
        if let Some(settings) = self.cache.get(map) {
            return settings.clone();
        }
        let settings = Arc::new(MapSettings::resolve(self.config.maps.for_map(map), self.partition_count, 1));
        self.cache.insert(map.into(), settings.clone());
        settings
    }
}

/// A deadline a lock or a parked request needs the reactor's timer for: (when, map, key).
pub type KeyDeadline = (i64, Box<str>, Box<[u8]>);

/// What an operation needs besides its partition: owned by the reactor, lent per operation.
#[derive(Debug)]
pub struct OpContext<'a> {
    pub now_ms: i64,
    pub member: Uuid,
    /// The client whose request this is (the source of its events).
    pub source: Uuid,
    pub partition_id: i32,
    pub settings: &'a mut SettingsCache,
    pub listeners: &'a mut Listeners,
    /// Events for listening connections.
    pub outbox: &'a mut Outbox,
    /// Parked requests this operation released; the reactor re-runs them next.
    pub released: &'a mut Vec<Parked>,
    /// (deadline, map, key) of locks and waits that need the reactor's timer.
    pub deadlines: &'a mut Vec<KeyDeadline>,
}

impl OpContext<'_> {
    fn publish(&mut self, map: &str, kind: EventKind, key: &[u8], value: Option<&[u8]>, old_value: Option<&[u8]>) {
        if self.listeners.has(map) {
            let (partition_id, source) = (self.partition_id, self.source);
            let event = Event { kind, partition_id, key: Some(key), value, old_value, affected_entries: 1, source };
            self.listeners.publish(self.outbox, self.member, map, event);
        }
    }
}

/// A request that is well-formed but cannot be served; answered with an Error response.
struct Refusal {
    code: ErrorCode,
    message: String,
}

/// What became of a request.
enum Done {
    Answered,
    /// Waiting for a lock; answered when re-run.
    Parked,
}

type Outcome = Result<Result<Done, Refusal>, DecodeError>;

fn null_check(data: Data<'_>, what: &str) -> Result<(), Refusal> {
    match data.type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(Refusal { code: error::NULL_POINTER, message: format!("Null {what} is not allowed!") }),
    }
}

/// Runs a partition-bound map request. `Err` means the request is malformed (the caller
/// closes the connection); semantic failures are written to `out` as Error responses.
pub fn execute(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let correlation_id = message.correlation_id();
    let start = out.len();
    match apply(partition, ctx, connection, message, out) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(refusal)) => {
            out.truncate(start);
            let holder = ErrorHolder { code: refusal.code, message: Some(&refusal.message) };
            write_error_response(out, correlation_id, &[holder]);
            Ok(())
        }
        Err(decode_error) => {
            out.truncate(start);
            Err(decode_error)
        }
    }
}

/// Answers a parked request whose wait timed out: the try-operations say `false`.
pub fn answer_timed_out(parked: &Parked, out: &mut Vec<u8>) {
    let message = Message::parse(&parked.message).expect("parked requests were parsed before");
    BoolResponse { response: false }.encode(out, message.message_type().response(), message.correlation_id(), 0);
}

/// One request's view of its map and key, with the helpers every operation shares.
struct KeyOp<'p, 'c, 'x> {
    store: &'p mut RecordStore,
    ctx: &'c mut OpContext<'x>,
    name: &'p str,
    correlation_id: i64,
    response_type: MessageType,
}

impl<'p, 'c, 'x> KeyOp<'p, 'c, 'x> {
    fn new(
        partition: &'p mut PartitionStore,
        ctx: &'c mut OpContext<'x>,
        message: &Message<'_>,
        name: &'p str,
        key: Data<'_>,
    ) -> Result<Self, Refusal> {
        null_check(key, "key")?;
        let settings = &mut *ctx.settings;
        let store = partition.map_mut(name, || settings.get(name));
        if let Some(slot) = partition_operation_index(message.message_type()) {
            store.op_counts[slot] += 1;
        }
        let (correlation_id, response_type) = (message.correlation_id(), message.message_type().response());
        let op = KeyOp { store, ctx, name, correlation_id, response_type };
        if let Some(expired) = op.store.expire_if_due(key.0, op.ctx.now_ms) {
            op.ctx.publish(name, EventKind::Expired, key.0, None, Some(&expired));
        }
        Ok(op)
    }

    fn current(&self, key: Data<'_>) -> Option<&[u8]> {
        self.store.get(key.0, self.ctx.now_ms).map(|record| &*record.value)
    }

    /// Parks the request if another owner holds the key's lock; `wait_ms` < 0 waits until
    /// released, 0 does not wait (the caller answers false), > 0 waits that long.
    fn blocked_by_lock(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        key: Data<'_>,
        thread_id: i64,
        wait_ms: i64,
    ) -> Result<bool, Refusal> {
        let owner = LockOwner { client: self.ctx.source, thread_id };
        if self.store.locks.may_write(key.0, owner) {
            return Ok(false);
        }
        if wait_ms == 0 {
            return Ok(true);
        }
        self.park(connection, message, key, wait_ms)?;
        Ok(true)
    }

    fn park(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        key: Data<'_>,
        wait_ms: i64,
    ) -> Result<(), Refusal> {
        let deadline_ms = if wait_ms < 0 { NEVER } else { self.ctx.now_ms.saturating_add(wait_ms) };
        let parked = Parked {
            connection: connection.clone(),
            source: self.ctx.source,
            message: message.bytes().into(),
            deadline_ms,
        };
        if self.store.locks.park(key.0, parked).is_err() {
            return Err(Refusal {
                code: error::HAZELCAST,
                message: "too many operations are waiting for this key's lock".into(),
            });
        }
        if deadline_ms != NEVER {
            self.ctx.deadlines.push((deadline_ms, self.name.into(), key.0.into()));
        }
        Ok(())
    }

    /// Stores the value, publishes ADDED/UPDATED, and evicts to the map's bound.
    fn write(
        &mut self,
        key: Data<'_>,
        value: Data<'_>,
        ttl_ms: i64,
        max_idle_ms: i64,
    ) -> Result<Option<Box<[u8]>>, Refusal> {
        self.write_as(key, value, (ttl_ms, max_idle_ms), false)
    }

    /// `write`; with `blind` (putAll, which does not read old values) the event is always
    /// ADDED without an old value, as Hazelcast publishes it.
    fn write_as(
        &mut self,
        key: Data<'_>,
        value: Data<'_>,
        (ttl_ms, max_idle_ms): (i64, i64),
        blind: bool,
    ) -> Result<Option<Box<[u8]>>, Refusal> {
        null_check(value, "value")?;
        let previous = self.store.put(key.0, value.0, self.ctx.now_ms, ttl_ms, max_idle_ms);
        match &previous {
            Some(_) if blind => self.ctx.publish(self.name, EventKind::Added, key.0, Some(value.0), None),
            Some(old) => self.ctx.publish(self.name, EventKind::Updated, key.0, Some(value.0), Some(old)),
            None => {
                self.ctx.publish(self.name, EventKind::Added, key.0, Some(value.0), None);
                for (evicted_key, evicted_value) in self.store.evict_to_limit(key.0) {
                    self.ctx.publish(self.name, EventKind::Evicted, &evicted_key, None, Some(&evicted_value));
                }
            }
        }
        Ok(previous)
    }

    /// Removes the entry, publishing `kind` (REMOVED or EVICTED) with the old value unless
    /// `without_old` (Hazelcast's delete does not read it); returns the old value.
    fn take(&mut self, key: Data<'_>, kind: EventKind, without_old: bool) -> Option<Box<[u8]>> {
        let old = self.store.remove(key.0)?;
        let published_old = if without_old { None } else { Some(&*old) };
        self.ctx.publish(self.name, kind, key.0, None, published_old);
        Some(old)
    }

    fn data_response(&self, out: &mut Vec<u8>, value: Option<&[u8]>) -> Result<Done, Refusal> {
        NullableDataResponse { response: value.map(Data) }.encode(
            out,
            self.response_type,
            self.correlation_id,
            BACKUP_ACKS,
        );
        Ok(Done::Answered)
    }

    fn bool_response(&self, out: &mut Vec<u8>, value: bool) -> Result<Done, Refusal> {
        BoolResponse { response: value }.encode(out, self.response_type, self.correlation_id, BACKUP_ACKS);
        Ok(Done::Answered)
    }

    fn empty_response(&self, out: &mut Vec<u8>) -> Result<Done, Refusal> {
        EmptyResponse {}.encode(out, self.response_type, self.correlation_id, BACKUP_ACKS);
        Ok(Done::Answered)
    }
}

/// What a put-like request answers with.
#[derive(Clone, Copy)]
enum Reply {
    /// The previous value (Put).
    Previous,
    /// No fields (Set, PutTransient).
    Empty,
    /// A null Data (the WithMaxIdle variants of Set and PutTransient).
    Null,
}

/// The fields of every put-like request.
struct PutArgs<'a> {
    name: &'a str,
    key: Data<'a>,
    value: Data<'a>,
    thread_id: i64,
    ttl_ms: i64,
    max_idle_ms: i64,
}

macro_rules! put_args {
    ($request:expr, $max_idle:expr) => {{
        let request = $request;
        PutArgs {
            name: request.name,
            key: request.key,
            value: request.value,
            thread_id: request.thread_id,
            ttl_ms: request.ttl,
            max_idle_ms: $max_idle(&request),
        }
    }};
}

fn apply(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    out: &mut Vec<u8>,
) -> Outcome {
    Ok(match message.message_type() {
        MapGet::TYPE => {
            let r = MapGet::decode(message)?;
            get(partition, ctx, message, r.name, r.key, out)
        }
        MapPut::TYPE => put(
            partition,
            ctx,
            connection,
            message,
            put_args!(MapPut::decode(message)?, |_: &MapPut| -1),
            Reply::Previous,
            out,
        ),
        MapPutWithMaxIdle::TYPE => {
            let args = put_args!(MapPutWithMaxIdle::decode(message)?, |r: &MapPutWithMaxIdle| r.max_idle);
            put(partition, ctx, connection, message, args, Reply::Previous, out)
        }
        MapSet::TYPE => put(
            partition,
            ctx,
            connection,
            message,
            put_args!(MapSet::decode(message)?, |_: &MapSet| -1),
            Reply::Empty,
            out,
        ),
        MapSetWithMaxIdle::TYPE => {
            let args = put_args!(MapSetWithMaxIdle::decode(message)?, |r: &MapSetWithMaxIdle| r.max_idle);
            put(partition, ctx, connection, message, args, Reply::Null, out)
        }
        MapPutTransient::TYPE => {
            let args = put_args!(MapPutTransient::decode(message)?, |_: &MapPutTransient| -1);
            put(partition, ctx, connection, message, args, Reply::Empty, out)
        }
        MapPutTransientWithMaxIdle::TYPE => {
            let args =
                put_args!(MapPutTransientWithMaxIdle::decode(message)?, |r: &MapPutTransientWithMaxIdle| r.max_idle);
            put(partition, ctx, connection, message, args, Reply::Null, out)
        }
        MapPutIfAbsent::TYPE => {
            let args = put_args!(MapPutIfAbsent::decode(message)?, |_: &MapPutIfAbsent| -1);
            put_if_absent(partition, ctx, connection, message, args, out)
        }
        MapPutIfAbsentWithMaxIdle::TYPE => {
            let args =
                put_args!(MapPutIfAbsentWithMaxIdle::decode(message)?, |r: &MapPutIfAbsentWithMaxIdle| r.max_idle);
            put_if_absent(partition, ctx, connection, message, args, out)
        }
        MapTryPut::TYPE => {
            let r = MapTryPut::decode(message)?;
            try_put(partition, ctx, connection, message, &r, out)
        }
        MapRemove::TYPE | MapDelete::TYPE | MapTryRemove::TYPE => remove(partition, ctx, connection, message, out)?,
        MapEvict::TYPE => {
            let r = MapEvict::decode(message)?;
            evict(partition, ctx, connection, message, &r, out)
        }
        MapRemoveIfSame::TYPE => {
            let r = MapRemoveIfSame::decode(message)?;
            remove_if_same(partition, ctx, connection, message, &r, out)
        }
        MapContainsKey::TYPE => {
            let r = MapContainsKey::decode(message)?;
            KeyOp::new(partition, ctx, message, r.name, r.key).and_then(|op| {
                // containsKey counts as an access (it keeps a max-idle entry alive), as in Hazelcast.
                op.store.touch(r.key.0, op.ctx.now_ms);
                let present = op.current(r.key).is_some();
                op.bool_response(out, present)
            })
        }
        MapReplace::TYPE => {
            let r = MapReplace::decode(message)?;
            replace(partition, ctx, connection, message, (r.name, r.key, None, r.value, r.thread_id), out)
        }
        MapReplaceIfSame::TYPE => {
            let r = MapReplaceIfSame::decode(message)?;
            replace(partition, ctx, connection, message, (r.name, r.key, Some(r.test_value), r.value, r.thread_id), out)
        }
        MapSetTtl::TYPE => {
            let r = MapSetTtl::decode(message)?;
            KeyOp::new(partition, ctx, message, r.name, r.key).and_then(|mut op| {
                // SetTtl carries no thread id: any lock holder blocks it until released.
                if op.store.locks.is_locked(r.key.0) {
                    op.park(connection, message, r.key, -1)?;
                    return Ok(Done::Parked);
                }
                let found = op.store.set_ttl(r.key.0, r.ttl, op.ctx.now_ms);
                op.bool_response(out, found)
            })
        }
        MapGetEntryView::TYPE => {
            let r = MapGetEntryView::decode(message)?;
            entry_view(partition, ctx, message, r.name, r.key, out)
        }
        MapGetAll::TYPE => {
            let r = MapGetAll::decode(message)?;
            get_all(partition, ctx, message, r.name, &r.keys, out)
        }
        MapPutAll::TYPE => {
            let r = MapPutAll::decode(message)?;
            put_all(partition, ctx, message, r.name, &r.entries, out)
        }
        MapLock::TYPE | MapTryLock::TYPE => lock(partition, ctx, connection, message, out)?,
        MapUnlock::TYPE => {
            let r = MapUnlock::decode(message)?;
            unlock(partition, ctx, message, r.name, r.key, Some(r.thread_id), out)
        }
        MapForceUnlock::TYPE => {
            let r = MapForceUnlock::decode(message)?;
            unlock(partition, ctx, message, r.name, r.key, None, out)
        }
        MapIsLocked::TYPE => {
            let r = MapIsLocked::decode(message)?;
            KeyOp::new(partition, ctx, message, r.name, r.key).and_then(|op| {
                let now_ms = op.ctx.now_ms;
                op.ctx.released.extend(op.store.locks.expire_lease(r.key.0, now_ms));
                let locked = op.store.locks.is_locked(r.key.0);
                op.bool_response(out, locked)
            })
        }
        other => unreachable!("{other} is not a partition operation"),
    })
}

fn get(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    message: &Message<'_>,
    name: &str,
    key: Data<'_>,
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let op = KeyOp::new(partition, ctx, message, name, key)?;
    op.store.touch(key.0, op.ctx.now_ms);
    op.data_response(out, op.current(key))
}

fn put(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    args: PutArgs<'_>,
    reply: Reply,
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let mut op = KeyOp::new(partition, ctx, message, args.name, args.key)?;
    null_check(args.value, "value")?;
    if op.blocked_by_lock(connection, message, args.key, args.thread_id, -1)? {
        return Ok(Done::Parked);
    }
    let previous = op.write(args.key, args.value, args.ttl_ms, args.max_idle_ms)?;
    match reply {
        Reply::Previous => op.data_response(out, previous.as_deref()),
        Reply::Empty => op.empty_response(out),
        Reply::Null => op.data_response(out, None),
    }
}

fn put_if_absent(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    args: PutArgs<'_>,
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let mut op = KeyOp::new(partition, ctx, message, args.name, args.key)?;
    null_check(args.value, "value")?;
    if op.blocked_by_lock(connection, message, args.key, args.thread_id, -1)? {
        return Ok(Done::Parked);
    }
    if let Some(existing) = op.current(args.key) {
        let existing = existing.to_vec();
        return op.data_response(out, Some(&existing));
    }
    op.write(args.key, args.value, args.ttl_ms, args.max_idle_ms)?;
    op.data_response(out, None)
}

fn try_put(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    r: &MapTryPut<'_>,
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let mut op = KeyOp::new(partition, ctx, message, r.name, r.key)?;
    null_check(r.value, "value")?;
    if op.blocked_by_lock(connection, message, r.key, r.thread_id, r.timeout.max(0))? {
        return if r.timeout > 0 { Ok(Done::Parked) } else { op.bool_response(out, false) };
    }
    op.write(r.key, r.value, -1, -1)?;
    op.bool_response(out, true)
}

/// Remove (old value), Delete (bool removed), TryRemove (bool; waits at most its timeout).
fn remove(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    out: &mut Vec<u8>,
) -> Outcome {
    let ty = message.message_type();
    let (name, key, thread_id, wait_ms) = match ty {
        MapRemove::TYPE => {
            let r = MapRemove::decode(message)?;
            (r.name, r.key, r.thread_id, -1)
        }
        MapDelete::TYPE => {
            let r = MapDelete::decode(message)?;
            (r.name, r.key, r.thread_id, -1)
        }
        _ => {
            let r = MapTryRemove::decode(message)?;
            (r.name, r.key, r.thread_id, r.timeout.max(0))
        }
    };
    let mut op = match KeyOp::new(partition, ctx, message, name, key) {
        Ok(op) => op,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let blocked = match op.blocked_by_lock(connection, message, key, thread_id, wait_ms) {
        Ok(blocked) => blocked,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if blocked {
        if ty == MapTryRemove::TYPE && wait_ms == 0 {
            return Ok(op.bool_response(out, false));
        }
        return Ok(Ok(Done::Parked));
    }
    let old = op.take(key, EventKind::Removed, ty == MapDelete::TYPE);
    Ok(match ty {
        MapRemove::TYPE => op.data_response(out, old.as_deref()),
        MapDelete::TYPE => {
            DeleteResponse { response: Some(old.is_some()) }.encode(
                out,
                op.response_type,
                op.correlation_id,
                BACKUP_ACKS,
            );
            Ok(Done::Answered)
        }
        _ => op.bool_response(out, old.is_some()),
    })
}

/// Evict waits for another owner's lock, as Hazelcast's does; the lock owner itself may evict.
fn evict(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    r: &MapEvict<'_>,
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let mut op = KeyOp::new(partition, ctx, message, r.name, r.key)?;
    if op.blocked_by_lock(connection, message, r.key, r.thread_id, -1)? {
        return Ok(Done::Parked);
    }
    let evicted = op.take(r.key, EventKind::Evicted, false).is_some();
    op.bool_response(out, evicted)
}

fn remove_if_same(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    r: &MapRemoveIfSame<'_>,
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let mut op = KeyOp::new(partition, ctx, message, r.name, r.key)?;
    null_check(r.value, "value")?;
    if op.blocked_by_lock(connection, message, r.key, r.thread_id, -1)? {
        return Ok(Done::Parked);
    }
    if op.current(r.key) != Some(r.value.0) {
        return op.bool_response(out, false);
    }
    op.take(r.key, EventKind::Removed, false);
    op.bool_response(out, true)
}

/// Replace (previous value or null) and ReplaceIfSame (`expected` set; bool).
fn replace(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    (name, key, expected, value, thread_id): (&str, Data<'_>, Option<Data<'_>>, Data<'_>, i64),
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let mut op = KeyOp::new(partition, ctx, message, name, key)?;
    null_check(value, "value")?;
    if let Some(expected) = expected {
        null_check(expected, "value")?;
    }
    if op.blocked_by_lock(connection, message, key, thread_id, -1)? {
        return Ok(Done::Parked);
    }
    let matches = match op.current(key) {
        None => false,
        Some(present) => expected.is_none_or(|expected| expected.0 == present),
    };
    let previous = if matches { op.write(key, value, -1, -1)? } else { None };
    match expected {
        None => op.data_response(out, previous.as_deref()),
        Some(_) => op.bool_response(out, previous.is_some()),
    }
}

fn entry_view(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    message: &Message<'_>,
    name: &str,
    key: Data<'_>,
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let op = KeyOp::new(partition, ctx, message, name, key)?;
    let (response_type, correlation_id) = (op.response_type, op.correlation_id);
    let Some(record) = op.store.get(key.0, op.ctx.now_ms) else {
        EntryViewResponse { max_idle: 0, response: None }.encode(out, response_type, correlation_id, BACKUP_ACKS);
        return Ok(Done::Answered);
    };
    // Hazelcast keeps entry times in whole seconds. With per-entry statistics off (its default)
    // it reports −1 for creation/access/stored times and hits, and the update time only for
    // an entry that expires (expiration = update time + ttl).
    let seconds = |ms: i64| ms - ms.rem_euclid(1000);
    let stats = op.store.settings.per_entry_stats;
    let expires = record.expiration_time_ms() != NEVER;
    let last_update = if stats || expires { seconds(record.last_update_time_ms) } else { -1 };
    let expiration_time = if record.ttl_ms == NEVER && record.max_idle_ms == NEVER {
        NEVER
    } else {
        let by_ttl =
            if record.ttl_ms == NEVER { NEVER } else { seconds(record.ttl_base_ms).saturating_add(record.ttl_ms) };
        let by_idle = if record.max_idle_ms == NEVER {
            NEVER
        } else {
            seconds(record.last_access_time_ms).saturating_add(record.max_idle_ms)
        };
        by_ttl.min(by_idle)
    };
    let statistic = |value: i64| if stats { value } else { -1 };
    let view = EntryView {
        key,
        value: Data(&record.value),
        cost: estimated_cost(key.0.len(), record.value.len()),
        creation_time: statistic(seconds(record.creation_time_ms)),
        expiration_time,
        hits: statistic(record.hits),
        last_access_time: statistic(seconds(record.last_access_time_ms)),
        last_stored_time: -1,
        last_update_time: last_update,
        version: record.version,
        ttl: record.ttl_ms,
        max_idle: record.max_idle_ms,
    };
    EntryViewResponse { max_idle: record.max_idle_ms, response: Some(view) }.encode(
        out,
        response_type,
        correlation_id,
        BACKUP_ACKS,
    );
    Ok(Done::Answered)
}

/// Hazelcast's heap-cost estimate of an entry: both blobs plus a fixed record overhead
/// (66 for a 14-byte key and a 14-byte value on a 5.6 member).
fn estimated_cost(key_bytes: usize, value_bytes: usize) -> i64 {
    (key_bytes + value_bytes + 38) as i64
}

fn get_all(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    message: &Message<'_>,
    name: &str,
    keys: &[Data<'_>],
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let mut found = Vec::with_capacity(keys.len());
    for key in keys {
        let op = KeyOp::new(partition, ctx, message, name, *key)?;
        op.store.touch(key.0, op.ctx.now_ms);
        if let Some(value) = op.current(*key) {
            found.push((*key, value.to_vec()));
        }
    }
    let response = found.iter().map(|(key, value)| (*key, Data(value))).collect();
    EntryListResponse { response }.encode(
        out,
        message.message_type().response(),
        message.correlation_id(),
        BACKUP_ACKS,
    );
    Ok(Done::Answered)
}

fn put_all(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    message: &Message<'_>,
    name: &str,
    entries: &[(Data<'_>, Data<'_>)],
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    for (key, value) in entries {
        null_check(*key, "key")?;
        null_check(*value, "value")?;
    }
    for (key, value) in entries {
        KeyOp::new(partition, ctx, message, name, *key)?.write_as(*key, *value, (-1, -1), true)?;
    }
    EmptyResponse {}.encode(out, message.message_type().response(), message.correlation_id(), BACKUP_ACKS);
    Ok(Done::Answered)
}

/// Lock (answered when acquired) and TryLock (true, or false after its timeout).
fn lock(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    out: &mut Vec<u8>,
) -> Outcome {
    let (name, key, thread_id, lease_ms, wait_ms, is_try) = match message.message_type() {
        MapLock::TYPE => {
            let r = MapLock::decode(message)?;
            (r.name, r.key, r.thread_id, r.ttl, -1, false)
        }
        _ => {
            let r = MapTryLock::decode(message)?;
            (r.name, r.key, r.thread_id, r.lease, r.timeout, true)
        }
    };
    Ok(KeyOp::new(partition, ctx, message, name, key).and_then(|mut op| {
        let now_ms = op.ctx.now_ms;
        op.ctx.released.extend(op.store.locks.expire_lease(key.0, now_ms));
        let owner = LockOwner { client: op.ctx.source, thread_id };
        if op.store.locks.acquire(key.0, owner, lease_ms, now_ms) {
            if let Some(deadline) = op.store.locks.lease_deadline(key.0) {
                op.ctx.deadlines.push((deadline, name.into(), key.0.into()));
            }
            return if is_try { op.bool_response(out, true) } else { op.empty_response(out) };
        }
        if is_try && wait_ms == 0 {
            return op.bool_response(out, false);
        }
        op.park(connection, message, key, wait_ms)?;
        Ok(Done::Parked)
    }))
}

/// Unlock (`thread_id` given: only the owner) and ForceUnlock.
#[allow(clippy::too_many_arguments)]
fn unlock(
    partition: &mut PartitionStore,
    ctx: &mut OpContext<'_>,
    message: &Message<'_>,
    name: &str,
    key: Data<'_>,
    thread_id: Option<i64>,
    out: &mut Vec<u8>,
) -> Result<Done, Refusal> {
    let op = KeyOp::new(partition, ctx, message, name, key)?;
    let now_ms = op.ctx.now_ms;
    op.ctx.released.extend(op.store.locks.expire_lease(key.0, now_ms));
    let released = match thread_id {
        None => op.store.locks.release(key.0),
        Some(thread_id) => {
            let owner = LockOwner { client: op.ctx.source, thread_id };
            op.store.locks.unlock(key.0, owner).map_err(|_| Refusal {
                code: error::ILLEGAL_MONITOR_STATE,
                message: format!(
                    "Current thread is not owner of the lock! -> <not locked by {}:{thread_id}>",
                    owner.client
                ),
            })?
        }
    };
    op.ctx.released.extend(released);
    op.empty_response(out)
}
