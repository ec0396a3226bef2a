//! The engine of JCache's key requests, on one partition's store: what each answers and which
//! events it makes, with ICache's semantics (`javax.cache.Cache` as Hazelcast 5.6 serves it):
//!
//! - an entry's expiry time comes from the policy's creation duration when it is created (a
//!   zero duration: the entry is not stored), its update duration when its value changes and
//!   its access duration when it is read (none: unchanged); the policy is the operation's own
//!   if it has one, else the entry's own (`setExpiryPolicy`), else the cache's;
//! - an entry found expired goes, with an EXPIRED event;
//! - a cache whose configuration names a loader (read-through) or a writer (write-through)
//!   fails what would need them as a Hazelcast member without their classes does: a get that
//!   misses with CacheLoaderException, a write or a remove with CacheWriterException;
//! - replace answers a serialized Boolean (Data), as Hazelcast's does; remove, putIfAbsent a
//!   boolean; put with `answer_old` (getAndPut) the old value.

use crate::engine::cache::configs::Evict;
use crate::engine::cache::expiry::ExpiryPolicy;
use crate::engine::cache::journal::Journaled;
use crate::engine::cache::request::CacheOp;
use crate::engine::cache::store::{CacheStore, Record};
use crate::engine::listeners::caches::{CacheChange, CacheEventKind};
use crate::engine::request::{ErrorKind, OpError};

/// A serialized `java.lang.Boolean` (partition hash 0, type −4, one byte).
fn boolean_data(value: bool) -> Vec<u8> {
    vec![0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFC, u8::from(value)]
}

/// What a key request answers.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    Empty,
    Bool(bool),
    Value(Option<Vec<u8>>),
    /// A batch of keys (and values): the next index, the pairs.
    Batch {
        next: i32,
        keys: Vec<Vec<u8>>,
        values: Option<Vec<Vec<u8>>>,
    },
}

/// One event a request made.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Made {
    pub kind: CacheEventKind,
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
    pub old_value: Option<Vec<u8>>,
}

impl Made {
    /// The event as listeners are sent it.
    pub(crate) fn change(&self) -> CacheChange<'_> {
        let (value, old_value) = (self.value.as_deref(), self.old_value.as_deref());
        CacheChange { kind: self.kind, key: &self.key, value, old_value }
    }
}

/// One request's context: the time, the operation's and the cache's policies, whether events
/// are wanted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context {
    pub now_ms: i64,
    pub operation_policy: Option<ExpiryPolicy>,
    pub cache_policy: ExpiryPolicy,
    pub events: bool,
    /// A miss needs the cache's loader; a write or remove its writer.
    pub loads_on_miss: bool,
    pub writes_through: bool,
    /// The partition's share of the cache's max size, and the eviction policy (None: none).
    pub eviction: Option<(usize, Evict)>,
}

fn writer_failure(during: &str) -> OpError {
    OpError::new(ErrorKind::CacheWriter, format!("Exception in CacheWriter during {during}"))
}

struct Run<'s> {
    store: &'s mut CacheStore,
    cx: Context,
    made: Vec<Made>,
}

impl Run<'_> {
    fn event(&mut self, kind: CacheEventKind, key: &[u8], value: Option<&[u8]>, old_value: Option<&[u8]>) {
        if self.cx.events {
            let (value, old_value) = (value.map(<[u8]>::to_vec), old_value.map(<[u8]>::to_vec));
            self.made.push(Made { kind, key: key.to_vec(), value, old_value });
        }
    }

    /// The live entry of `key`: one found expired goes, with its EXPIRED event.
    fn live(&mut self, key: &[u8]) -> Option<&mut Record> {
        if let Some(value) = self.store.take_expired(key, self.cx.now_ms) {
            // Hazelcast 5.6 journals an expiry as a removal.
            self.store.journal_event(Journaled::Removed, key, (None, Some(&value)), self.cx.now_ms);
            self.event(CacheEventKind::Expired, key, Some(&value), None);
        }
        self.store.get(key, self.cx.now_ms)
    }

    /// The policy for the entry `record` (the operation's, else its own, else the cache's).
    fn policy(&self, record: &Record) -> ExpiryPolicy {
        self.cx.operation_policy.or(record.policy).unwrap_or(self.cx.cache_policy)
    }

    /// The live value of `key`, its access recorded (the policy's access duration).
    fn read(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        let now = self.cx.now_ms;
        let record = self.live(key)?.clone();
        if let Some(lifetime) = self.policy(&record).access {
            self.store.set_expiry(key, lifetime.from(now));
        }
        self.store.touch(key, now);
        Some(record.value.into_vec())
    }

    fn value(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        self.live(key).map(|record| record.value.to_vec())
    }

    /// Writes `key`: created or updated; answers the old value.
    fn write(&mut self, key: &[u8], value: &[u8]) -> Option<Vec<u8>> {
        let now = self.cx.now_ms;
        let old = self.live(key).cloned();
        match &old {
            Some(record) => {
                let expires = self.policy(record).update.map_or(record.expires_ms, |lifetime| lifetime.from(now));
                self.store.put(key, value, expires, now);
                self.store.journal_event(Journaled::Updated, key, (Some(value), Some(&record.value)), now);
                self.event(CacheEventKind::Updated, key, Some(value), Some(&record.value));
            }
            None => {
                let expires = self.cx.operation_policy.unwrap_or(self.cx.cache_policy).creation.from(now);
                if expires > now {
                    if let Some((evicted, old)) =
                        self.cx.eviction.and_then(|(max, evict)| self.store.evict_for_new(max, evict))
                    {
                        self.store.journal_event(Journaled::Evicted, &evicted, (None, Some(&old)), now);
                        self.event(CacheEventKind::Invalidated, &evicted, None, None);
                    }
                    self.store.put(key, value, expires, now);
                    self.store.journal_event(Journaled::Created, key, (Some(value), None), now);
                    self.event(CacheEventKind::Created, key, Some(value), None);
                }
            }
        }
        old.map(|record| record.value.into_vec())
    }

    fn remove(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        let old = self.value(key)?;
        self.store.remove(key);
        self.store.journal_event(Journaled::Removed, key, (None, Some(&old)), self.cx.now_ms);
        self.event(CacheEventKind::Removed, key, Some(&old), Some(&old));
        Some(old)
    }
}

/// Runs `op` on `store`; answers what the client gets and the events made.
pub(crate) fn execute(store: &mut CacheStore, cx: Context, op: &CacheOp<'_>) -> Result<(Answer, Vec<Made>), OpError> {
    if let Some(failure) = writer_needed(cx, op) {
        return Err(failure);
    }
    let mut run = Run { store, cx, made: Vec::new() };
    let answer = match op {
        CacheOp::Get { key } => match run.read(key) {
            None if cx.loads_on_miss => {
                return Err(OpError::new(ErrorKind::CacheLoader, "Exception in CacheLoader during load"))
            }
            value => Answer::Value(value),
        },
        CacheOp::ContainsKey { key } => Answer::Bool(run.live(key).is_some()),
        CacheOp::Put { key, value, answer_old } => {
            let old = run.write(key, value);
            Answer::Value(old.filter(|_| *answer_old))
        }
        CacheOp::PutIfAbsent { key, value } => {
            let absent = run.live(key).is_none();
            if absent {
                run.write(key, value);
            }
            Answer::Bool(absent)
        }
        CacheOp::Replace { key, old, value, answer_old } => replace(&mut run, key, old.as_deref(), value, *answer_old),
        CacheOp::Remove { key, current, answer_old } => {
            let present = run.value(key);
            let matches = match (&present, current) {
                (Some(present), Some(current)) => **present == **current,
                (present, _) => present.is_some(),
            };
            let removed = if matches { run.remove(key) } else { None };
            if *answer_old {
                Answer::Value(removed)
            } else {
                Answer::Bool(removed.is_some())
            }
        }
        CacheOp::PutAll { entries } => {
            for (key, value) in entries {
                run.write(key, value);
            }
            Answer::Empty
        }
        CacheOp::EntryProcessor { processor } => return Err(entry_processor_refusal(processor)),
        CacheOp::SetExpiryPolicy { keys } => set_expiry_policy(&mut run, keys)?,
        CacheOp::Iterate { index, batch, entries } => {
            let batch = usize::try_from(*batch).unwrap_or(0);
            let (pairs, next) = run.store.batch(index.unwrap_or(i32::MAX), batch, cx.now_ms);
            let keys = pairs.iter().map(|(key, _)| key.to_vec()).collect();
            let values = entries.then(|| pairs.iter().map(|(_, value)| value.to_vec()).collect());
            Answer::Batch { next, keys, values }
        }
    };
    Ok((answer, run.made))
}

/// The failure of a write or remove that needs the cache's writer (write-through).
fn writer_needed(cx: Context, op: &CacheOp<'_>) -> Option<OpError> {
    if !cx.writes_through {
        return None;
    }
    match op {
        CacheOp::Put { .. } | CacheOp::PutIfAbsent { .. } | CacheOp::Replace { .. } | CacheOp::PutAll { .. } => {
            Some(writer_failure("write"))
        }
        CacheOp::Remove { .. } => Some(writer_failure("delete")),
        _ => None,
    }
}

/// setExpiryPolicy: the request's policy becomes each live key's own, its update lifetime
/// applied now; answers whether any key was live.
fn set_expiry_policy(run: &mut Run<'_>, keys: &[std::borrow::Cow<'_, [u8]>]) -> Result<Answer, OpError> {
    let now = run.cx.now_ms;
    let policy =
        run.cx.operation_policy.ok_or_else(|| OpError::new(ErrorKind::NullArgument, "expiryPolicy is null"))?;
    let mut any = false;
    for key in keys {
        let Some(expires_ms) = run.live(key).map(|record| record.expires_ms) else { continue };
        run.store.set_policy(key, policy);
        run.store.set_expiry(key, policy.update.map_or(expires_ms, |lifetime| lifetime.from(now)));
        any = true;
    }
    Ok(Answer::Bool(any))
}

/// replace(key, value), replace(key, old, value) (a serialized Boolean) and getAndReplace
/// (`answer_old`: the old value, or null).
fn replace(run: &mut Run<'_>, key: &[u8], old: Option<&[u8]>, value: &[u8], answer_old: bool) -> Answer {
    let present = run.value(key);
    let matches = match (&present, old) {
        (Some(present), Some(old)) => **present == *old,
        (present, _) => present.is_some(),
    };
    let replaced = if matches { run.write(key, value) } else { None };
    if answer_old {
        Answer::Value(replaced)
    } else {
        Answer::Value(Some(boolean_data(replaced.is_some())))
    }
}

/// What Hazelcast's member answers an entry processor it has no class of: the class it could
/// not load, named.
fn entry_processor_refusal(processor: &[u8]) -> OpError {
    let data = ferrogrid_protocol::Data(processor);
    let class = (data.type_id() == Some(crate::engine::cache::java_serial::JAVA_SERIALIZATION))
        .then(|| crate::engine::cache::java_serial::top_class(data.payload()))
        .flatten();
    match class {
        Some(class) => OpError::new(ErrorKind::Serialization, format!("java.lang.ClassNotFoundException: {class}")),
        None => crate::engine::java_code::refusal(processor, crate::engine::java_code::JavaRole::EntryProcessor),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cache::expiry::Lifetime;
    use std::borrow::Cow;

    fn cx(now_ms: i64, policy: ExpiryPolicy) -> Context {
        Context {
            now_ms,
            operation_policy: None,
            cache_policy: policy,
            events: true,
            loads_on_miss: false,
            writes_through: false,
            eviction: None,
        }
    }

    fn run(store: &mut CacheStore, cx: Context, op: CacheOp<'_>) -> (Answer, Vec<Made>) {
        execute(store, cx, &op).unwrap()
    }

    fn put<'a>(key: &'a [u8], value: &'a [u8]) -> CacheOp<'a> {
        CacheOp::Put { key: Cow::Borrowed(key), value: Cow::Borrowed(value), answer_old: true }
    }

    #[test]
    fn writes_answer_and_make_events_as_jcache_says() {
        let (mut store, eternal) = (CacheStore::new(1), cx(0, ExpiryPolicy::ETERNAL));
        let (answer, made) = run(&mut store, eternal, put(b"k", b"1"));
        assert_eq!((answer, made[0].kind), (Answer::Value(None), CacheEventKind::Created));
        let (answer, made) = run(&mut store, eternal, put(b"k", b"2"));
        assert_eq!(answer, Answer::Value(Some(b"1".to_vec())));
        assert_eq!((made[0].kind, made[0].old_value.as_deref()), (CacheEventKind::Updated, Some(&b"1"[..])));
        let wrong = CacheOp::Replace {
            key: Cow::Borrowed(b"k"),
            old: Some(Cow::Borrowed(b"x")),
            value: Cow::Borrowed(b"3"),
            answer_old: false,
        };
        let (answer, made) = run(&mut store, eternal, wrong);
        assert_eq!((answer, made.len()), (Answer::Value(Some(boolean_data(false))), 0));
        let remove = CacheOp::Remove { key: Cow::Borrowed(b"k"), current: None, answer_old: true };
        let (answer, made) = run(&mut store, eternal, remove.clone());
        assert_eq!((answer, made[0].kind), (Answer::Value(Some(b"2".to_vec())), CacheEventKind::Removed));
        assert_eq!(run(&mut store, eternal, remove), (Answer::Value(None), Vec::new()));
    }

    #[test]
    fn the_policy_sets_expiry_on_creation_access_and_update() {
        let touched = ExpiryPolicy { creation: Lifetime::Millis(10), access: Some(Lifetime::Millis(10)), update: None };
        let mut store = CacheStore::new(1);
        run(&mut store, cx(0, touched), put(b"k", b"1"));
        let get = || CacheOp::Get { key: Cow::Borrowed(b"k") };
        assert_eq!(run(&mut store, cx(9, touched), get()).0, Answer::Value(Some(b"1".to_vec())));
        assert_eq!(
            run(&mut store, cx(18, touched), get()).0,
            Answer::Value(Some(b"1".to_vec())),
            "the access moved it to 19"
        );
        assert_eq!(run(&mut store, cx(27, touched), get()).0, Answer::Value(Some(b"1".to_vec())));
        assert_eq!(run(&mut store, cx(37, touched), get()).0, Answer::Value(None), "accessed at 27: gone at 37");
        let zero = ExpiryPolicy { creation: Lifetime::Millis(0), access: None, update: None };
        let (_, made) = run(&mut store, cx(40, zero), put(b"z", b"1"));
        assert!(made.is_empty() && store.size(40) == 0, "a zero creation duration stores nothing");
    }

    #[test]
    fn an_entrys_own_policy_stands_for_the_caches_and_expiry_is_an_event() {
        let (mut store, eternal) = (CacheStore::new(1), cx(0, ExpiryPolicy::ETERNAL));
        run(&mut store, eternal, put(b"k", b"1"));
        let modified =
            ExpiryPolicy { creation: Lifetime::Millis(10), access: None, update: Some(Lifetime::Millis(10)) };
        let set =
            |keys: Vec<&'static [u8]>| CacheOp::SetExpiryPolicy { keys: keys.into_iter().map(Cow::Borrowed).collect() };
        let own = Context { operation_policy: Some(modified), ..cx(100, ExpiryPolicy::ETERNAL) };
        assert_eq!(run(&mut store, own, set(vec![b"absent"])).0, Answer::Bool(false));
        assert_eq!(run(&mut store, own, set(vec![b"k", b"absent"])).0, Answer::Bool(true));
        assert_eq!(store.size(109), 1, "expires at 110");
        run(&mut store, cx(105, ExpiryPolicy::ETERNAL), put(b"k", b"2"));
        assert_eq!(store.size(114), 1, "the entry's own policy: the update moved it to 115");
        let (answer, made) = run(&mut store, cx(115, ExpiryPolicy::ETERNAL), CacheOp::Get { key: Cow::Borrowed(b"k") });
        assert_eq!(answer, Answer::Value(None));
        assert_eq!((made[0].kind, made[0].value.as_deref()), (CacheEventKind::Expired, Some(&b"2"[..])));
    }
}
