//! Iteration over a replicated map's entry views by cursor (`ReplicatedMap.fetchEntryViews`,
//! `endEntryViewIteration`), as Hazelcast's `IteratorWithCursorManager` does it on the member
//! asked:
//!
//! - a new iteration's id is the cursor the client chose; it covers the keys live when it
//!   started (an entry removed since is skipped, one added since is not seen);
//! - each page answers a fresh cursor for the next one; asking again with the previous cursor
//!   answers the same page again (a lost answer is retried), any other cursor fails with
//!   IllegalStateException, as does a cursor of an ended iteration;
//! - reading an entry into a page counts as an access (a hit and the access time);
//! - `endEntryViewIteration` with the iteration's id drops it (an unknown id is ignored); an
//!   iteration unused for [`IDLE_TIMEOUT_MS`] is dropped too, and a copy keeps at most
//!   [`MAX_ITERATIONS`] (the least recently used goes first).
//!
//! Owned by the store of the partition's copy (`store.rs`), on the reactor that owns the
//! partition.

use crate::engine::listeners::fresh_uuid;
use ferrogrid_protocol::codec::ReplicatedEntryView;
use ferrogrid_protocol::{Data, Uuid};

/// Hazelcast's `hazelcast.replicatedmap.iterator.cleanup.timeout.millis` default.
pub(crate) const IDLE_TIMEOUT_MS: i64 = 300_000;
/// Iterations one partition's copy of one replicated map keeps at once.
pub(crate) const MAX_ITERATIONS: usize = 64;

/// What a replicated entry's view reports besides key and value (`ReplicatedMapEntryViewHolder`):
/// kept by the member that wrote it; the copies elsewhere start theirs when they apply it, as in
/// Hazelcast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordMeta {
    pub(crate) creation_time_ms: i64,
    pub(crate) hits: i64,
    pub(crate) last_access_time_ms: i64,
    pub(crate) last_update_time_ms: i64,
    /// The ttl as written (0: none).
    pub(crate) ttl_ms: i64,
}

/// An entry's view, owned (kept as a page to answer again; an entry putAllWithMetadata brings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnedView {
    pub(crate) key: Box<[u8]>,
    pub(crate) value: Box<[u8]>,
    pub(crate) meta: RecordMeta,
}

impl OwnedView {
    pub(crate) fn encoded(&self) -> ReplicatedEntryView<'_> {
        ReplicatedEntryView {
            key: Data(&self.key),
            value: Data(&self.value),
            creation_time: self.meta.creation_time_ms,
            hits: self.meta.hits,
            last_access_time: self.meta.last_access_time_ms,
            last_update_time: self.meta.last_update_time_ms,
            ttl: self.meta.ttl_ms,
        }
    }
}

/// One iteration: the keys it has yet to read, its current and previous cursors and the page
/// it answered last.
#[derive(Debug)]
struct Iteration {
    id: Uuid,
    cursor: Uuid,
    previous: Option<Uuid>,
    keys: Vec<Box<[u8]>>,
    page: Vec<OwnedView>,
    used_ms: i64,
}

/// The iterations of one partition's copy of a replicated map.
#[derive(Debug, Default)]
pub(crate) struct Iterations {
    iterations: Vec<Iteration>,
}

/// A fetch's answer: the cursor for the next page, and this page.
pub(crate) type Page<'a> = (Uuid, &'a [OwnedView]);

impl Iterations {
    /// Starts iteration `id` over `keys` unless it exists (Hazelcast's `createIterator`).
    pub(crate) fn start(&mut self, id: Uuid, keys: impl FnOnce() -> Vec<Box<[u8]>>, now_ms: i64) {
        self.iterations.retain(|iteration| now_ms.saturating_sub(iteration.used_ms) <= IDLE_TIMEOUT_MS);
        if self.iterations.iter().any(|iteration| iteration.id == id) {
            return;
        }
        if self.iterations.len() >= MAX_ITERATIONS {
            let oldest = (0..self.iterations.len()).min_by_key(|at| self.iterations[*at].used_ms).expect("not empty");
            self.iterations.swap_remove(oldest);
        }
        let mut keys = keys();
        keys.reverse(); // read from the end
        self.iterations.push(Iteration { id, cursor: id, previous: None, keys, page: Vec::new(), used_ms: now_ms });
        assert!(self.iterations.len() <= MAX_ITERATIONS);
    }

    /// The page after `cursor` (at most `batch` views, each read by `view`, which skips keys no
    /// longer live), or the last page again when `cursor` is the one before; None for a cursor
    /// of no iteration.
    pub(crate) fn fetch(
        &mut self,
        cursor: Uuid,
        batch: usize,
        now_ms: i64,
        mut view: impl FnMut(&[u8]) -> Option<OwnedView>,
    ) -> Option<Page<'_>> {
        let iteration = self
            .iterations
            .iter_mut()
            .find(|iteration| iteration.cursor == cursor || iteration.previous == Some(cursor))?;
        iteration.used_ms = now_ms;
        if iteration.previous == Some(cursor) {
            return Some((iteration.cursor, &iteration.page));
        }
        iteration.page.clear();
        while iteration.page.len() < batch {
            let Some(key) = iteration.keys.pop() else { break };
            iteration.page.extend(view(&key));
        }
        iteration.previous = Some(iteration.cursor);
        iteration.cursor = fresh_uuid();
        Some((iteration.cursor, &iteration.page))
    }

    /// Ends iteration `id`; whether it was there.
    pub(crate) fn end(&mut self, id: Uuid) -> bool {
        let before = self.iterations.len();
        self.iterations.retain(|iteration| iteration.id != id);
        self.iterations.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(key: &[u8]) -> Option<OwnedView> {
        let meta =
            RecordMeta { creation_time_ms: 1, hits: 0, last_access_time_ms: 1, last_update_time_ms: 1, ttl_ms: 0 };
        (key != b"gone").then(|| OwnedView { key: key.into(), value: key.into(), meta })
    }

    fn keys() -> Vec<Box<[u8]>> {
        [&b"a"[..], b"gone", b"b", b"c"].iter().map(|key| Box::from(*key)).collect()
    }

    #[test]
    fn pages_follow_cursors_and_the_previous_cursor_repeats_its_page() {
        let mut iterations = Iterations::default();
        let id = Uuid { most: 1, least: 1 };
        iterations.start(id, keys, 0);
        let (second, page) = iterations.fetch(id, 2, 0, view).expect("started");
        let keys_of = |page: &[OwnedView]| page.iter().map(|view| view.key.to_vec()).collect::<Vec<_>>();
        assert_eq!(keys_of(page), [b"a".to_vec(), b"b".to_vec()], "a removed key is skipped, the page filled");
        let (again, page) = iterations.fetch(id, 2, 0, view).expect("the previous cursor");
        assert_eq!((again, keys_of(page)), (second, vec![b"a".to_vec(), b"b".to_vec()]));
        let (third, page) = iterations.fetch(second, 2, 0, view).expect("the current cursor");
        assert_eq!(keys_of(page), [b"c".to_vec()], "a short page: the last");
        assert!(iterations.fetch(id, 2, 0, view).is_none(), "a cursor two pages back");
        assert_eq!(iterations.fetch(third, 2, 0, view).map(|(_, page)| page.len()), Some(0));
        assert!(iterations.end(id));
        assert!(!iterations.end(id));
        assert!(iterations.fetch(third, 2, 0, view).is_none());
    }

    #[test]
    fn idle_and_surplus_iterations_are_dropped() {
        let mut iterations = Iterations::default();
        for index in 0..=MAX_ITERATIONS as u64 {
            iterations.start(Uuid { most: index, least: 0 }, keys, index as i64);
        }
        assert_eq!(iterations.iterations.len(), MAX_ITERATIONS);
        assert!(iterations.fetch(Uuid { most: 0, least: 0 }, 1, 70, view).is_none(), "the least recently used");
        iterations.start(Uuid { most: 99, least: 0 }, keys, 70 + IDLE_TIMEOUT_MS + 1);
        assert_eq!(iterations.iterations.len(), 1);
    }
}
