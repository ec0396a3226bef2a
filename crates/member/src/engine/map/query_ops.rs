//! Queries over a map's entries: keySet, values and entrySet with a predicate and their paging
//! variants (`tests/python/test_query.py` holds them to Hazelcast's answers). Aggregations and
//! projections are in `aggregate_ops.rs`; both share [`Compiled`] and [`Coverage`].
//!
//! A query is a map-wide request (see `fanout.rs`): each share evaluates the predicate
//! (`ferrogrid_query::eval`) on the live entries of the partitions its member owns. A share's
//! partial names the partitions it covered, so the answer is exact while partitions move: two
//! members that each covered a partition (one before, one after a migration) count it once (the
//! first merged wins), and a partition nobody covered (its owner died, or it moved between the
//! shares) makes the answer `PartitionMigratingException`, which every client retries for these
//! read-only requests — the query then runs again, as Hazelcast re-runs the partitions it missed.
//! An entry the member cannot read (an unknown value type, a predicate that does not apply)
//! fails the whole query with Hazelcast's exception for it; the first failure of any share is
//! the answer.
//!
//! Bounds: a query holds at most `hazelcast.query.result.size.limit` results (answered with
//! `QueryResultSizeExceededException` beyond it) and an answer is at most `max-message-bytes`.

use super::partition_set::PartitionSet;
use crate::engine::map::query::{failure, reactor_indexes, Candidates, Compiled, Narrowed, Predicate, QUERY_FAILURES};
use crate::engine::request::{ErrorKind, OpError, PageItems, Reply};
use crate::engine::wide::{Classified, Listed, Partial, Partitions, ShareContext, WideOperation, WideRequest};
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::codec::PagingPredicateHolder;
use ferrogrid_protocol::message::MessageWriter;
use ferrogrid_protocol::{DecodeError, Message};
use ferrogrid_query::predicate::IterationType;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

/// The partitions a share covered, and the first failure of any share.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Coverage {
    pub(crate) covered: PartitionSet,
    pub(crate) failure: Option<OpError>,
    /// The partitions the query is restricted to (None: all of them).
    pub(crate) expected: Option<BTreeSet<u16>>,
    pub(crate) partition_count: u16,
    /// The query's bounds (results, answer bytes: `SettingsCache::query_limits`), from this
    /// member's shares (not sent between members).
    pub(crate) limits: Option<(usize, usize)>,
}

impl Coverage {
    /// Merges another share's coverage; returns the partitions both covered (the other share's
    /// results for them are dropped).
    pub(crate) fn merge(&mut self, other: Coverage) -> PartitionSet {
        let twice = other.covered.intersection(&self.covered);
        self.covered.union_with(&other.covered);
        if self.failure.is_none() {
            self.failure = other.failure;
        }
        if self.expected.is_none() {
            self.expected = other.expected;
        }
        self.partition_count = self.partition_count.max(other.partition_count);
        self.limits = self.limits.or(other.limits);
        twice
    }

    /// The failure for an answer of `bytes` bytes, if that is more than the query's byte bound.
    pub(crate) fn oversized(&self, bytes: usize) -> Option<OpError> {
        let (_, byte_limit) = self.limits.unwrap_or((usize::MAX, usize::MAX));
        (bytes > byte_limit).then(|| {
            let text = format!("This query's answer would take {bytes} bytes, more than max-message-bytes");
            OpError::new(ErrorKind::QueryResultSizeExceeded, text)
        })
    }

    /// The failure for `count` results beyond `hazelcast.query.result.size.limit`.
    pub(crate) fn check_count(&self, count: usize) -> Result<(), OpError> {
        let (result_limit, _) = self.limits.unwrap_or((usize::MAX, usize::MAX));
        if count > result_limit {
            let text = format!(
                "This query would return {count} results, more than hazelcast.query.result.size.limit ({result_limit})"
            );
            return Err(OpError::new(ErrorKind::QueryResultSizeExceeded, text));
        }
        Ok(())
    }

    /// The failure to answer with, if any: a share's, or partitions nobody covered.
    pub(crate) fn outcome(&self) -> Result<(), OpError> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        let missing = match &self.expected {
            Some(expected) => expected.iter().filter(|partition| !self.covered.contains(**partition)).count(),
            None => (0..self.partition_count).filter(|partition| !self.covered.contains(*partition)).count(),
        };
        if missing > 0 {
            let text = format!("{missing} partition(s) moved while the query ran; retry");
            return Err(OpError::new(ErrorKind::PartitionMigrating, text));
        }
        Ok(())
    }

    /// Runs `visit` over every owned partition the query covers, recording each, with the
    /// partition's candidates from the reactor's indexes of `map` when they narrow the query
    /// (one lookup for all of them); stops at the first failure. (`visit` must not change the
    /// map's entries: the indexes are locked meanwhile.)
    pub(crate) fn visit_owned(
        &mut self,
        (share, map): (&mut ShareContext<'_>, &str),
        compiled: &Compiled,
        mut visit: impl FnMut(u16, &mut PartitionStore, Candidates<'_, '_>) -> Result<(), OpError>,
    ) {
        let locals = self.cover_owned(share, compiled);
        let shared = reactor_indexes((share.partitions, share.settings), map, !compiled.plan.is_empty());
        let indexes = shared.as_ref().map(|shared| shared.lock());
        let narrowed = indexes.as_ref().and_then(|indexes| Narrowed::new(indexes, &compiled.plan));
        for local in locals {
            let candidates = narrowed.as_ref().map(|narrowed| narrowed.of(local));
            if let Err(failure) = visit(share.partition_id(local), &mut share.partitions[local], candidates) {
                self.failure = Some(failure);
                return;
            }
        }
    }

    /// Records every owned partition of the share the query covers as covered; returns their
    /// local indexes.
    pub(crate) fn cover_owned(&mut self, share: &ShareContext<'_>, compiled: &Compiled) -> Vec<usize> {
        self.partition_count = share.partition_count;
        self.limits = Some(share.settings.query_limits());
        self.expected.clone_from(&compiled.partitions);
        let mut locals = Vec::new();
        for local in 0..share.partitions.len() {
            let partition = share.partition_id(local);
            let owned = share.owned.get(local).copied().unwrap_or(true);
            if !owned || compiled.partitions.as_ref().is_some_and(|wanted| !wanted.contains(&partition)) {
                continue;
            }
            self.covered.insert(partition);
            locals.push(local);
        }
        locals
    }

    /// Writes the coverage into a member's answer to a WIDE request (member to member, not a
    /// client response): `count u16 | partitions u16… | expected | failure`, the failure as the
    /// Hazelcast adapter names it (code, class name, message).
    pub(crate) fn write_to(&self, writer: &mut MessageWriter<'_>) {
        let mut bytes = Vec::with_capacity(self.covered.len() * 2 + 8);
        bytes.extend_from_slice(&self.partition_count.to_le_bytes());
        for partition in self.covered.iter() {
            bytes.extend_from_slice(&partition.to_le_bytes());
        }
        writer.frame(&bytes);
        let mut expected = Vec::new();
        for partition in self.expected.iter().flatten() {
            expected.extend_from_slice(&partition.to_le_bytes());
        }
        match &self.expected {
            Some(_) => writer.frame(&expected),
            None => writer.null(),
        };
        match &self.failure {
            Some(failure) => {
                let named = crate::route::wire::error_code(failure.kind);
                writer.frame(&named.code.to_le_bytes());
                writer.frame(named.class_name.as_bytes());
                writer.frame(failure.message.as_bytes())
            }
            None => writer.null(),
        };
    }

    pub(crate) fn read_from(reader: &mut ferrogrid_protocol::MessageReader<'_>) -> Result<Coverage, DecodeError> {
        let covered = reader.value_frame("query coverage")?;
        fn partitions(bytes: &[u8]) -> impl Iterator<Item = u16> + '_ {
            bytes.chunks_exact(2).map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        }
        if covered.len() < 2 || covered.len() % 2 != 0 {
            return Err(DecodeError::UnexpectedFrame("query coverage"));
        }
        let partition_count = u16::from_le_bytes([covered[0], covered[1]]);
        let expected =
            if reader.next_is_null() { None } else { Some(partitions(reader.value_frame("expected")?).collect()) };
        let failure = if reader.next_is_null() {
            None
        } else {
            let code = reader.value_frame("query failure")?;
            let code = code.try_into().map_err(|_| DecodeError::UnexpectedFrame("query failure"))?;
            let class_name = reader.string()?;
            let message = reader.string()?.to_owned();
            let kind = crate::route::wire::error_kind(&QUERY_FAILURES, i32::from_le_bytes(code), class_name);
            Some(OpError::new(kind, message))
        };
        Ok(Coverage { covered: partitions(&covered[2..]).collect(), failure, expected, partition_count, limits: None })
    }
}

/// A partition id as a member's answer carries it (one frame of a `u16`).
pub(crate) fn read_partition(reader: &mut ferrogrid_protocol::MessageReader<'_>) -> Result<u16, DecodeError> {
    let partition = reader.value_frame("partition")?;
    let partition = partition.try_into().map_err(|_| DecodeError::UnexpectedFrame("partition"))?;
    Ok(u16::from_le_bytes(partition))
}

/// One entry a query found: its partition, key and value (whole Data blobs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    partition: u16,
    key: Box<[u8]>,
    value: Box<[u8]>,
}

/// What a query's shares found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Found {
    coverage: Coverage,
    hits: Vec<Hit>,
}

impl Found {
    /// Fails the request with `failure` (unless a share failed it first).
    pub(crate) fn fail(&mut self, failure: OpError) {
        self.coverage.failure.get_or_insert(failure);
    }

    /// The failure a share met, if any.
    pub(crate) fn failure(&self) -> Option<&OpError> {
        self.coverage.failure.as_ref()
    }
}

impl Partial for Found {
    fn merge(&mut self, other: Found) {
        let twice = self.coverage.merge(other.coverage);
        self.hits.extend(other.hits.into_iter().filter(|hit| !twice.contains(hit.partition)));
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        self.coverage.write_to(writer);
        writer.begin();
        for hit in &self.hits {
            writer.frame(&hit.partition.to_le_bytes()).frame(&hit.key).frame(&hit.value);
        }
        writer.end();
    }

    fn read_from(message: &Message<'_>) -> Result<Found, DecodeError> {
        let mut reader = message.reader();
        let coverage = Coverage::read_from(&mut reader)?;
        reader.begin()?;
        let mut hits = Vec::new();
        while !reader.at_end()? {
            let partition = read_partition(&mut reader)?;
            let key = reader.value_frame("hit key")?.into();
            let value = reader.value_frame("hit value")?.into();
            hits.push(Hit { partition, key, value });
        }
        Ok(Found { coverage, hits })
    }
}

/// A paging query's share sorts and cuts its hits to what can be on the page once it holds
/// more than this many (or twice what the page can need).
const PAGE_CANDIDATES_KEPT: usize = 4096;

/// The last entry of a page the client has seen: (page, key, value).
pub(crate) type Anchor = (i32, Box<[u8]>, Box<[u8]>);

/// A paging query's page: Hazelcast's `PagingPredicateHolder` without its predicate.
#[derive(Debug)]
pub(crate) struct Paging {
    pub(crate) page_size: usize,
    pub(crate) page: usize,
    pub(crate) iteration: IterationType,
    /// (page, key, value): the last entry of each page the client has seen.
    pub(crate) anchors: Vec<Anchor>,
}

impl Paging {
    /// The anchor the page is counted from: the last one of a page before it.
    fn nearest_anchor(&self) -> Option<&Anchor> {
        self.anchors.iter().filter(|(page, _, _)| (*page as i64) < self.page as i64).max_by_key(|a| a.0)
    }

    /// The most hits after an anchor the page can need: the pages up to it and the page.
    fn most_needed(&self) -> usize {
        self.page.saturating_add(1).saturating_mul(self.page_size)
    }

    /// The hits that can be on the requested page, in order: those after the nearest anchor
    /// before the page, at most as many as the pages between and the page itself hold; and
    /// how many of them the pages between take. Each hit's sort key is read once.
    fn candidates(
        &self,
        hits: Vec<Hit>,
        schemas: &dyn ferrogrid_query::SchemaSource,
    ) -> Result<(Vec<Hit>, usize), OpError> {
        use ferrogrid_query::order::SortKey;
        let sort_key = |hit: &Hit| SortKey::of(self.iteration, (&hit.key, &hit.value), schemas);
        let keyed: Result<Vec<(SortKey, Hit)>, _> = hits.into_iter().map(|hit| Ok((sort_key(&hit)?, hit))).collect();
        let mut keyed = keyed.map_err(crate::engine::map::query::exec_failure)?;
        let mut failed = None;
        keyed.sort_by(|a, b| {
            a.0.compare(&b.0, schemas).unwrap_or_else(|failure| {
                failed.get_or_insert(failure);
                std::cmp::Ordering::Equal
            })
        });
        if let Some(failure) = failed {
            return Err(crate::engine::map::query::exec_failure(failure));
        }
        let (mut start, mut skipped_pages) = (0, self.page);
        if let Some((page, key, value)) = self.nearest_anchor().filter(|_| !keyed.is_empty()) {
            let anchor =
                SortKey::of(self.iteration, (key, value), schemas).map_err(crate::engine::map::query::exec_failure)?;
            start = keyed.partition_point(|(key, _)| {
                key.compare(&anchor, schemas).is_ok_and(|ordering| ordering != std::cmp::Ordering::Greater)
            });
            skipped_pages = self.page - *page as usize - 1;
        }
        let skip = skipped_pages.saturating_mul(self.page_size);
        let end = start.saturating_add(skip.saturating_add(self.page_size)).min(keyed.len());
        Ok((keyed.drain(start.min(end)..end).map(|(_, hit)| hit).collect(), skip))
    }
}

/// keySet, values or entrySet with a predicate (and, with `paging`, one sorted page of them).
#[derive(Debug)]
pub(crate) struct Query {
    listed: Listed,
    predicate: Predicate,
    paging: Option<Paging>,
    /// The member's schemas, taken from the first share (the answer sorts pages with them).
    schemas: OnceLock<Arc<crate::engine::schemas::Schemas>>,
}

impl Query {
    pub(crate) fn new(listed: Listed, predicate: &[u8], paging: Option<Paging>) -> Query {
        Query { listed, predicate: Predicate::new(Some(predicate)), paging, schemas: OnceLock::new() }
    }

    fn paged(listed: Listed, predicate: Predicate, paging: Paging) -> Query {
        Query { listed, predicate, paging: Some(paging), schemas: OnceLock::new() }
    }

    /// A page in the order of a sorted index (the key's for KEY and ENTRY iteration, the
    /// value's for VALUE): the reactor's index of the map read in order (`Indexes::ordered`),
    /// each entry of a partition the query covers tested, until the page has what it can need
    /// past the anchor. None (the share scans) unless the reactor has such an index that gives
    /// Java's order.
    fn walk_ordered(
        &self,
        paging: &Paging,
        compiled: &Compiled,
        map: &str,
        share: &mut ShareContext<'_>,
        (now_ms, schemas): (i64, &dyn ferrogrid_query::SchemaSource),
        coverage: &mut Coverage,
    ) -> Option<Result<Vec<Hit>, OpError>> {
        use ferrogrid_query::order::SortKey;
        let attribute = if paging.iteration == IterationType::Value { "this" } else { "__key" };
        let shared = reactor_indexes((share.partitions, share.settings), map, true)?;
        let indexes = shared.lock();
        let ordered = indexes.ordered(attribute, &compiled.plan)?;
        let mut covered = vec![false; share.partitions.len()];
        coverage.cover_owned(share, compiled).into_iter().for_each(|local| covered[local] = true);
        let anchor =
            paging.nearest_anchor().map(|(_, key, value)| SortKey::of(paging.iteration, (key, value), schemas));
        let anchor = match anchor.transpose() {
            Ok(anchor) => anchor,
            Err(error) => return Some(Err(crate::engine::map::query::exec_failure(error))),
        };
        let (needed, mut counted) = (paging.most_needed(), 0usize);
        let mut hits = Vec::new();
        for (_, keys) in ordered {
            if counted >= needed {
                break; // the group before (entries of one value) was the last the page can need
            }
            for (key, owner) in keys {
                let slot = crate::engine::map::index::slot_of(*owner) as usize;
                if !covered.get(slot).copied().unwrap_or(false) {
                    continue;
                }
                let Some(store) = share.partitions[slot].map(map) else { continue };
                let at = (share.partition_id(slot), store, &**key);
                match page_hit(paging, anchor.as_ref(), compiled, at, (now_ms, schemas)) {
                    Ok(Some((hit, past_anchor))) => {
                        counted += usize::from(past_anchor);
                        hits.push(hit);
                    }
                    Ok(None) => {}
                    Err(failure) => return Some(Err(failure)),
                }
            }
        }
        Some(Ok(hits))
    }

    /// The matching entries of one partition.
    fn search(
        &self,
        compiled: &Compiled,
        map: &str,
        partition: (u16, &PartitionStore, Candidates<'_, '_>),
        share_now: (i64, &dyn ferrogrid_query::SchemaSource),
        hits: &mut Vec<Hit>,
    ) -> Result<(), OpError> {
        let (now_ms, schemas) = share_now;
        if partition.2.is_some_and(<[_]>::is_empty) {
            return Ok(());
        }
        let Some(store) = partition.1.map(map) else { return Ok(()) };
        let keep_values = self.paging.is_some() || self.listed != Listed::Keys;
        for_each_match((store, partition.2), compiled, (now_ms, schemas), |key, value| {
            let value = if keep_values { value.into() } else { Box::default() };
            hits.push(Hit { partition: partition.0, key: key.into(), value });
            Ok(())
        })
    }
}

/// The hit an index walk found under `key` if it is live and matches, and whether it sorts
/// after the page's anchor (only those count towards the page).
fn page_hit(
    paging: &Paging,
    anchor: Option<&ferrogrid_query::order::SortKey>,
    compiled: &Compiled,
    (partition, store, key): (u16, &crate::engine::map::store::RecordStore, &[u8]),
    (now_ms, schemas): (i64, &dyn ferrogrid_query::SchemaSource),
) -> Result<Option<(Hit, bool)>, OpError> {
    use ferrogrid_query::order::SortKey;
    let Some(entry) = store.get(key, now_ms) else { return Ok(None) };
    if !compiled.filter.matches(key, entry.value(), schemas).map_err(failure)? {
        return Ok(None);
    }
    let hit = Hit { partition, key: key.into(), value: entry.value().into() };
    let past_anchor = match anchor {
        None => true,
        Some(anchor) => SortKey::of(paging.iteration, (&hit.key, &hit.value), schemas)
            .and_then(|sort_key| sort_key.compare(anchor, schemas))
            .map_err(crate::engine::map::query::exec_failure)?
            .is_gt(),
    };
    Ok(Some((hit, past_anchor)))
}

impl WideOperation for Query {
    type Partial = Found;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Found {
        Found::default()
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut Found) {
        unreachable!("a query runs its share in on_share")
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Found) {
        self.schemas.get_or_init(|| share.schemas.clone());
        let compiled = &match self.predicate.for_share(share.schemas, share.partition_count) {
            Ok(compiled) => compiled,
            Err(failure) => {
                partial.coverage.failure = Some(failure);
                return;
            }
        };
        let shared = share.schemas.clone();
        let (now_ms, schemas) = (share.now_ms, crate::engine::map::query::ShareSchemas::new(&shared));
        if let Some(paging) = &self.paging {
            let walked = self.walk_ordered(paging, compiled, map, share, (now_ms, &schemas), &mut partial.coverage);
            if let Some(walked) = walked {
                match walked.and_then(|hits| paging.candidates(hits, &schemas)) {
                    Ok((hits, _)) => partial.hits = hits,
                    Err(failure) => partial.coverage.failure = Some(failure),
                }
                return;
            }
        }
        let mut hits = Vec::new();
        partial.coverage.visit_owned((share, map), compiled, |partition, store, candidates| {
            self.search(compiled, map, (partition, store, candidates), (now_ms, &schemas), &mut hits)?;
            match &self.paging {
                // What cannot be on the page is dropped as it comes (bounded memory).
                Some(paging) if hits.len() > PAGE_CANDIDATES_KEPT.max(paging.most_needed().saturating_mul(2)) => {
                    hits = paging.candidates(std::mem::take(&mut hits), &schemas)?.0;
                }
                _ => {}
            }
            Ok(())
        });
        if let (Some(paging), None) = (&self.paging, &partial.coverage.failure) {
            match paging.candidates(hits, &schemas) {
                Ok((kept, _)) => hits = kept,
                Err(failure) => {
                    partial.coverage.failure = Some(failure);
                    hits = Vec::new();
                }
            }
        }
        partial.hits = hits;
    }

    fn reply<'p>(&'p self, partial: &'p mut Found) -> Result<Reply<'p>, OpError> {
        partial.coverage.outcome()?;
        partial.coverage.check_count(partial.hits.len())?;
        let Some(paging) = &self.paging else { return Ok(list(self.listed, &partial.hits)) };
        let schemas = self.schemas.get().cloned().unwrap_or_default();
        let (hits, skip) = paging.candidates(std::mem::take(&mut partial.hits), &*schemas)?;
        partial.hits = hits;
        Ok(page(self.listed, paging, &partial.hits[skip.min(partial.hits.len())..]))
    }

    fn oversized(&self, partial: &Found, bytes: usize) -> Option<OpError> {
        partial.coverage.oversized(bytes)
    }
}

/// Calls `found` with each live entry of `store` that passes the predicate: the entries the
/// reactor's indexes narrowed it to (`candidates`), or those the store's own indexes narrow
/// it to (`index.rs`), or else every entry.
pub(crate) fn for_each_match(
    (store, candidates): (&crate::engine::map::store::RecordStore, Candidates<'_, '_>),
    compiled: &Compiled,
    (now_ms, schemas): (i64, &dyn ferrogrid_query::SchemaSource),
    mut found: impl FnMut(&[u8], &[u8]) -> Result<(), OpError>,
) -> Result<(), OpError> {
    let filter = &compiled.filter;
    let mut check = |key: &[u8]| -> Result<(), OpError> {
        let Some(entry) = store.get(key, now_ms) else { return Ok(()) };
        if filter.matches(key, entry.value(), schemas).map_err(failure)? {
            found(key, entry.value())?;
        }
        Ok(())
    };
    if let Some(candidates) = candidates {
        return candidates.iter().try_for_each(|(_, key)| check(key));
    }
    if let Some(candidates) = (!compiled.plan.is_empty()).then(|| store.index_candidates(&compiled.plan)).flatten() {
        return candidates.into_iter().try_for_each(check);
    }
    for (key, entry) in store.iter(now_ms) {
        if filter.matches(key, entry.value(), schemas).map_err(failure)? {
            found(key, entry.value())?;
        }
    }
    Ok(())
}

/// Map.addIndex: the index on every replica of every partition this member holds, and for
/// stores created later (`index::Registry`); answered once every member has it.
#[derive(Debug)]
pub(crate) struct AddIndex {
    definition: crate::engine::map::index::IndexDefinition,
}

impl AddIndex {
    pub(crate) fn classify(message: &Message<'_>) -> Result<Classified, DecodeError> {
        let request = ferrogrid_protocol::codec::MapAddIndex::decode(message)?;
        let index = &request.index;
        let refuse = |text: String| Ok(Classified::Refused(OpError::new(ErrorKind::IllegalArgument, text)));
        if !(0..=2).contains(&index.index_type) {
            return refuse(format!("Unsupported index type: {}", index.index_type));
        }
        if index.attributes.is_empty() {
            return refuse("Index must have at least one attribute: []".to_owned());
        }
        if let Some(blank) = index.attributes.iter().find(|attribute| attribute.trim().is_empty()) {
            return refuse(format!("Attribute name cannot be empty: [{blank}]"));
        }
        // BITMAP (2) serves equality like HASH here.
        let attributes = index.attributes.iter().map(|attribute| attribute.trim().to_owned()).collect();
        let definition = crate::engine::map::index::IndexDefinition { sorted: index.index_type == 0, attributes };
        Ok(Classified::Wide(WideRequest::new(AddIndex { definition }), request.name.into()))
    }
}

impl WideOperation for AddIndex {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) {}

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut ()) {
        unreachable!("an index is added in on_share")
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, _partial: &mut ()) {
        share.settings.indexes.0.add(map, self.definition.clone());
        share.settings.forget(map);
        let schemas = share.schemas.clone();
        for partition in share.partitions.iter_mut() {
            if let Some(store) = partition.existing_mut(map) {
                store.add_index(self.definition.clone(), &schemas);
            }
        }
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// keySet, values or entrySet (`listed`) of the map `name` with a paging predicate.
pub(crate) fn paged(listed: Listed, name: &str, holder: PagingPredicateHolder<'_>) -> Result<Classified, DecodeError> {
    let refuse = |text: &str| Ok(Classified::Refused(OpError::new(ErrorKind::IllegalArgument, text)));
    if holder.comparator.is_some_and(|comparator| comparator.type_id().unwrap_or(0) != 0) {
        let text = "ferrogrid cannot run a paging predicate's comparator (a class of the client's)";
        return Ok(Classified::Refused(OpError::new(ErrorKind::Unsupported, text)));
    }
    let iteration = match holder.iteration_type {
        0 => IterationType::Key,
        1 => IterationType::Value,
        2 => IterationType::Entry,
        other => return refuse(&format!("unknown iteration type {other}")),
    };
    if holder.page_size <= 0 || holder.page < 0 {
        return refuse("a paging predicate's page size must be positive and its page not negative");
    }
    let anchors = holder.anchors.pages.0.iter().zip(&holder.anchors.anchors);
    let anchors = anchors.map(|(page, (key, value))| (*page, key.0.into(), value.0.into())).collect();
    let paging = Paging { page_size: holder.page_size as usize, page: holder.page as usize, iteration, anchors };
    let mut keys: Vec<Box<[u8]>> = holder.partition_key.iter().map(|key| key.0.into()).collect();
    keys.extend(holder.partition_keys.iter().flatten().map(|key| key.0.into()));
    let predicate = Predicate::with_partition_keys(holder.predicate.map(|data| data.0), keys);
    Ok(Classified::Wide(WideRequest::new(Query::paged(listed, predicate, paging)), name.into()))
}

/// The whole result as a list: keys or values, or entries.
fn list(listed: Listed, hits: &[Hit]) -> Reply<'_> {
    match listed {
        Listed::Keys => Reply::Values(hits.iter().map(|hit| &*hit.key).collect()),
        Listed::Values => Reply::Values(hits.iter().map(|hit| &*hit.value).collect()),
        Listed::Entries => Reply::Entries(hits.iter().map(|hit| (&*hit.key, &*hit.value)).collect()),
    }
}

/// One page of the sorted result (`page`: its hits, in order), with the anchors the client
/// keeps for the next pages (Hazelcast's `SortingUtil.getSortedSubListAndUpdateAnchor`): the
/// anchors of the pages before it, and the page's last entry.
fn page<'p>(listed: Listed, paging: &'p Paging, page: &'p [Hit]) -> Reply<'p> {
    let mut anchors: Vec<(i32, &[u8], &[u8])> = paging
        .anchors
        .iter()
        .filter(|(page, _, _)| (*page as i64) < paging.page as i64)
        .map(|(page, key, value)| (*page, &**key, &**value))
        .collect();
    if let Some(last) = page.last() {
        anchors.push((paging.page as i32, &last.key, &last.value));
    }
    let items = match listed {
        Listed::Keys => PageItems::Values(page.iter().map(|hit| &*hit.key).collect()),
        Listed::Values => PageItems::Values(page.iter().map(|hit| &*hit.value).collect()),
        Listed::Entries => PageItems::Entries(page.iter().map(|hit| (&*hit.key, &*hit.value)).collect()),
    };
    Reply::Page { items, anchors }
}
