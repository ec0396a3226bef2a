//! A statement's work over partitions, each a [`WideOperation`] the fan-out runs on every
//! reactor (and member): a SELECT's [`Scan`], the [`Write`]s of INSERT/SINK, UPDATE and DELETE,
//! mapping DDL's [`Ddl`], and the [`Sample`] an unmapped map's suggested mapping comes from.

use crate::engine::listeners::{Event, EventKind};
use crate::engine::map::index::Lookup;
use crate::engine::map::store::RecordStore;
use crate::engine::request::{OpError, Reply, Statement};
use crate::engine::schemas::Schemas;
use crate::engine::wide::{Partial, Partitions, ShareContext, WideOperation};
use crate::net::connection::ConnectionShared;
use crate::partition::objects::PartitionStore;
use crate::sql::pages::{first_page, Respond};
use crate::sql::service::{FollowUp, SqlService};
use ferrogrid_protocol::message::{MessageReader, MessageWriter, RESPONSE_HEADER_SIZE};
use ferrogrid_protocol::sql::{self as wire};
use ferrogrid_protocol::{Data, DecodeError, Message, MessageType, Uuid};
use ferrogrid_query::SchemaSource;
use ferrogrid_sql::exec::parts::{self, Part, PartScanner};
use ferrogrid_sql::exec::Entries;
use ferrogrid_sql::exec::SourceFilter;
use ferrogrid_sql::plan::SelectPlan;
use ferrogrid_sql::write::Action;
use ferrogrid_sql::{Change, Code, SqlError};
use std::sync::Arc;

/// One entry of a map without a mapping, from whichever share finds one first: the sample a
/// suggested mapping is derived from; the coordinator answers the not-found error with it.
#[derive(Debug)]
pub(crate) struct Sample {
    pub(crate) map: String,
    pub(crate) service: Arc<SqlService>,
    /// The coordinator's error (None on other members, which answer their sample).
    pub(crate) error: Option<SqlError>,
    pub(crate) member: Uuid,
    pub(crate) schemas: Arc<Schemas>,
}

#[derive(Debug, Default)]
pub(crate) struct Sampled(Option<(Vec<u8>, Vec<u8>)>);

impl Partial for Sampled {
    fn merge(&mut self, other: Sampled) {
        if self.0.is_none() {
            self.0 = other.0;
        }
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&self.0.is_some());
        if let Some((key, value)) = &self.0 {
            writer.frame(key).frame(value);
        }
    }

    fn read_from(message: &Message<'_>) -> Result<Sampled, DecodeError> {
        let found: bool = message.fixed(RESPONSE_HEADER_SIZE)?.read()?;
        if !found {
            return Ok(Sampled(None));
        }
        let mut reader = message.reader();
        let key = reader.value_frame("a sampled key")?.to_vec();
        let value = reader.value_frame("a sampled value")?.to_vec();
        Ok(Sampled(Some((key, value))))
    }
}

impl WideOperation for Sample {
    type Partial = Sampled;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Sampled {
        Sampled(None)
    }

    fn on_partition(&self, _: &str, partition: &mut PartitionStore, _: bool, now_ms: i64, partial: &mut Sampled) {
        if partial.0.is_some() {
            return;
        }
        if let Some(store) = partition.map(&self.map) {
            if let Some((key, entry)) = store.iter(now_ms).next() {
                partial.0 = Some((key.to_vec(), entry.value().to_vec()));
            }
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Sampled) -> Result<Reply<'p>, OpError> {
        let Some(error) = &self.error else { return Ok(Reply::NoAnswer) };
        if let Some((_, value)) = &partial.0 {
            // reading the sample teaches the member its Portable class, as on Hazelcast
            self.service.learn_portable(value);
        }
        let suggestion = partial
            .0
            .as_ref()
            .and_then(|(key, value)| ferrogrid_sql::catalog::suggest_mapping(&self.map, key, value, &*self.schemas));
        let error = match suggestion {
            Some(suggestion) => SqlError {
                message: format!(
                    "{} If you want to use the IMap named '{}', execute this command first: {suggestion}",
                    error.message, self.map
                ),
                suggestion: Some(suggestion),
                ..error.clone()
            },
            None => error.clone(),
        };
        Ok(Reply::Statement(Statement::Failed { error, member: self.member }))
    }
}

/// Members' internal request carrying the rows an `INSERT ... SELECT` writes (never accepted
/// from a client: the operation table has no row for it).
pub(crate) const SQL_WRITE: MessageType = MessageType(0x21_FF00);

pub(crate) fn encode_write(map: &str, entries: &[(Vec<u8>, Vec<u8>)], overwrite: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer = MessageWriter::request(&mut out, SQL_WRITE, 0, -1, 0);
    writer.fixed(&overwrite);
    writer.frame(map.as_bytes()).begin();
    for (key, value) in entries {
        writer.frame(key).frame(value);
    }
    writer.end();
    writer.finish();
    out
}

pub(crate) fn decode_write(message: &Message<'_>) -> Result<(String, Entries, bool), DecodeError> {
    let overwrite: bool = message.fixed(ferrogrid_protocol::message::REQUEST_HEADER_SIZE)?.read()?;
    let mut reader = message.reader();
    let map = reader.string()?.to_owned();
    reader.begin()?;
    let mut entries = Vec::new();
    while !reader.at_end()? {
        let key = reader.value_frame("a written key")?.to_vec();
        let value = reader.value_frame("a written value")?.to_vec();
        entries.push((key, value));
    }
    Ok((map, entries, overwrite))
}

// ------------------------------------------------------------------------------------------
// The fan-out operations.

/// Mapping DDL: nothing to do on partitions (each member changed its catalog when it read
/// the request); answers the update count 0.
#[derive(Debug)]
pub(crate) struct Ddl;

impl WideOperation for Ddl {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;

    fn empty(&self) {}

    fn reply<'p>(&'p self, _: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Statement(Statement::UpdateCount(0)))
    }
}

/// A scan to start: its plan, where its result goes, and an `INSERT ... SELECT`'s writes.
pub(crate) type ScanParts =
    (Box<SelectPlan>, Respond, Option<(Box<ferrogrid_sql::InsertSelect>, Arc<crate::shared::Shared>)>);

/// A SELECT's scan: the entries of every source's map (only a point lookup's keys).
#[derive(Debug)]
pub(crate) struct Scan {
    /// Every partition it reads is this member's: no other member is asked.
    pub(crate) local: bool,
    pub(crate) plan: Box<SelectPlan>,
    /// When the statement must have answered: partitions not read by then fail it.
    pub(crate) deadline: ferrogrid_sql::exec::Deadline,
    pub(crate) respond: Option<Respond>,
    /// An `INSERT ... SELECT`: the rows become writes instead of an answer.
    pub(crate) then: Option<(Box<ferrogrid_sql::InsertSelect>, Arc<crate::shared::Shared>)>,
    pub(crate) schemas: Arc<Schemas>,
    /// What this member's shares keep of it (every reactor's count), against what the
    /// statement may hold: `max-sql-rows-per-query` rows (or groups of a partition) and
    /// `max-sql-bytes-per-query` bytes of entries.
    pub(crate) held: ferrogrid_sql::exec::Held,
    pub(crate) connection: Option<Arc<ConnectionShared>>,
    /// The client's request (an `INSERT ... SELECT`'s writes answer it).
    pub(crate) correlation_id: i64,
    /// A streamed query's round (see `stream.rs`): the partitions it reads, and the rows a
    /// member reads before it leaves the rest unread (None: every partition, whole).
    pub(crate) round: Option<crate::sql::round::Round>,
    /// On the coordinator, what a round's rows become.
    pub(crate) resume: Option<crate::sql::round::Resume>,
    /// On the coordinator of a streamed query: where a round with no row to answer hands the
    /// next round to (a reactor).
    pub(crate) shared: Option<Arc<crate::shared::Shared>>,
}

/// What a statement may hold on a member (`max-sql-rows-per-query`, `max-sql-bytes-per-query`).
fn bounds(limits: &ferrogrid_config::Limits) -> ferrogrid_sql::exec::Bounds {
    let (rows, bytes) = (limits.max_sql_rows_per_query, limits.max_sql_bytes_per_query);
    ferrogrid_sql::exec::Bounds { rows: rows as usize, bytes: bytes as usize }
}

impl Scan {
    /// A scan of `plan` that answers no one (a share for another member) until told.
    pub(crate) fn new(
        plan: Box<SelectPlan>,
        deadline: ferrogrid_sql::exec::Deadline,
        shared: &crate::shared::Shared,
    ) -> Scan {
        Scan {
            local: false,
            plan,
            deadline,
            respond: None,
            then: None,
            schemas: shared.schemas.clone(),
            held: ferrogrid_sql::exec::Held::new(bounds(&shared.config.limits)),
            connection: None,
            correlation_id: 0,
            round: None,
            resume: None,
            shared: None,
        }
    }
}

/// What the scan's shares found: per partition covered, its [`Part`] (the entries of each
/// source there, the entries that passed the WHERE, or their groups). A partition two shares
/// covered (it moved while the scan ran) counts once: the first share's.
///
/// Invariant: the parts hold at most the statement's bounds of entries and their bytes
/// (`held`): once more arrive, every part becomes the bound's failure and their entries go.
#[derive(Debug, Default)]
pub(crate) struct Scanned {
    pub(crate) parts: std::collections::BTreeMap<u16, Part>,
    pub(crate) partition_count: u16,
    /// The partitions of a streamed query's round that a member left to the next round.
    pub(crate) unread: Vec<u16>,
    /// What the parts hold (None: a partial read from another member, counted where merged).
    held: Option<ferrogrid_sql::exec::Held>,
    /// The bound the parts went past: every part is this failure, and so is any that comes.
    over: Option<SqlError>,
}

impl Scanned {
    fn new(bounds: ferrogrid_sql::exec::Bounds) -> Scanned {
        Scanned { held: Some(ferrogrid_sql::exec::Held::new(bounds)), ..Scanned::default() }
    }

    /// Keeps a partition's part (unless a share kept that partition's already), within the
    /// statement's bounds.
    fn keep(&mut self, partition: u16, part: Part) {
        if self.parts.contains_key(&partition) {
            return;
        }
        let (rows, bytes) = part.weight();
        if let Some(Err(error)) = self.held.as_mut().map(|held| held.add(rows, bytes)) {
            self.go_over(error);
        }
        let part = match &self.over {
            Some(error) => Part::Failed(error.clone()),
            None => part,
        };
        self.parts.insert(partition, part);
    }

    /// The statement cannot hold what its parts carry: every part kept and to come is `error`.
    fn go_over(&mut self, error: SqlError) {
        for kept in self.parts.values_mut() {
            *kept = Part::Failed(error.clone());
        }
        self.over = Some(error);
    }
}

impl Partial for Scanned {
    fn merge(&mut self, other: Scanned) {
        for (partition, part) in other.parts {
            self.keep(partition, part);
        }
        self.unread.extend(other.unread);
        self.partition_count = self.partition_count.max(other.partition_count);
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&(self.parts.len() as i32)).fixed(&(self.partition_count as i32));
        let mut bytes = Vec::new();
        for (partition, part) in &self.parts {
            writer.frame(&partition.to_be_bytes());
            bytes.clear();
            part.encode(&mut bytes);
            writer.frame(&bytes);
        }
        let unread: Vec<u8> = self.unread.iter().flat_map(|p| p.to_be_bytes()).collect();
        writer.frame(&unread);
    }

    fn read_from(message: &Message<'_>) -> Result<Scanned, DecodeError> {
        let mut fixed = message.fixed(RESPONSE_HEADER_SIZE)?;
        let (count, partition_count): (i32, i32) = (fixed.read()?, fixed.read()?);
        let mut reader: MessageReader<'_> = message.reader();
        let mut parts = std::collections::BTreeMap::new();
        // (groups hold SQL scalars only: no Compact record to read with a schema)
        let no_schemas = std::collections::HashMap::<i64, Arc<ferrogrid_query::schema::Schema>>::new();
        for _ in 0..count.clamp(0, u16::MAX as i32) {
            let partition = match reader.value_frame("a scanned partition")? {
                [high, low] => u16::from_be_bytes([*high, *low]),
                _ => return Err(DecodeError::InvalidValue("a scanned partition's number")),
            };
            let bytes = reader.value_frame("a scanned partition's part")?;
            let part = Part::decode(bytes, &no_schemas).map_err(|why| {
                tracing::warn!(partition, %why, "a member sent a scan's part this member cannot read");
                DecodeError::InvalidValue("a scanned partition's part")
            })?;
            parts.insert(partition, part);
        }
        let unread = reader.value_frame("a scan's unread partitions")?;
        let unread = unread.chunks_exact(2).map(|pair| u16::from_be_bytes([pair[0], pair[1]])).collect();
        let partition_count = partition_count.clamp(0, u16::MAX as i32) as u16;
        Ok(Scanned { parts, partition_count, unread, held: None, over: None })
    }
}

impl Scan {
    /// Per source, the partitions of a point lookup's keys (None: every partition).
    fn wanted_partitions(&self, partition_count: u16) -> Vec<Option<Vec<u16>>> {
        let partition_of = |key: &Vec<u8>| ferrogrid_protocol::data::partition_for(Data(key), partition_count).0;
        self.plan
            .sources
            .iter()
            .map(|source| source.keys.as_ref().map(|keys| keys.iter().map(partition_of).collect()))
            .collect()
    }

    /// One partition's part for a single-source plan: its entries (those of the point
    /// lookup's keys, those an index narrows the WHERE to, or all) read, filtered and, when
    /// grouped, folded where they are.
    fn scan_partition(
        &self,
        (scanner, lookups): (&PartScanner<'_>, &[Lookup]),
        (store, candidates): (Option<&RecordStore>, crate::engine::map::query::Candidates<'_, '_>),
        now_ms: i64,
    ) -> Part {
        let Some(store) = store else { return scanner.scan(std::iter::empty()) };
        fn live<'a>(store: &'a RecordStore, key: &'a [u8], now_ms: i64) -> Option<(&'a [u8], &'a [u8])> {
            store.get(key, now_ms).map(|entry| (key, entry.value()))
        }
        if let Some(keys) = self.plan.sources[0].keys.as_deref() {
            return scanner.scan(keys.iter().filter_map(|key| live(store, key, now_ms)));
        }
        if let Some(candidates) = candidates {
            return scanner.scan(candidates.iter().filter_map(|(_, key)| live(store, key, now_ms)));
        }
        match (!lookups.is_empty()).then(|| store.index_candidates(lookups)).flatten() {
            Some(candidates) => scanner.scan(candidates.into_iter().filter_map(|key| live(store, key, now_ms))),
            None => scanner.scan(store.iter(now_ms).map(|(key, entry)| (key, entry.value()))),
        }
    }

    /// One partition's part for a plan that joins (or lists several sources): each source's
    /// entries there that its share of WHERE keeps.
    fn read_sources(
        &self,
        (partition, partition_id): (&PartitionStore, u16),
        wanted: &[Option<Vec<u16>>],
        filters: &[Option<SourceFilter<'_>>],
        now_ms: i64,
    ) -> Part {
        let wanted_here = |w: &Option<Vec<u16>>| w.as_ref().is_none_or(|w| w.contains(&partition_id));
        let mut found = vec![Vec::new(); self.plan.sources.len()];
        for (index, source) in self.plan.sources.iter().enumerate() {
            if source.inline.is_some() || !wanted_here(&wanted[index]) {
                continue;
            }
            if let Some(store) = partition.map(&source.mapping.map) {
                let filter = filters.get(index).and_then(Option::as_ref);
                let at = (store, now_ms, &*self.schemas as &dyn SchemaSource);
                read_source((source.keys.as_deref(), filter), at, &mut found[index]);
            }
        }
        Part::Sources(found)
    }

    /// What the partitions' indexes look up for the plan's WHERE (worked out per share).
    fn lookups(&self) -> Vec<Lookup> {
        use ferrogrid_query::eval::IndexTerm;
        use ferrogrid_sql::exec::hints::HintTerm;
        let hints = ferrogrid_sql::exec::hints::index_hints(&self.plan);
        let terms: Vec<IndexTerm<'_>> = hints
            .iter()
            .map(|hint| {
                let attribute = hint.attribute.as_str();
                match &hint.term {
                    HintTerm::Equal(value) => IndexTerm::Equal { attribute, value },
                    HintTerm::In(values) => IndexTerm::In { attribute, values },
                    HintTerm::Range { from, to } => IndexTerm::Range {
                        attribute,
                        from: from.as_ref().map(|(value, inclusive)| (value, *inclusive)),
                        to: to.as_ref().map(|(value, inclusive)| (value, *inclusive)),
                    },
                }
            })
            .collect();
        crate::engine::map::index::plan(&terms)
    }
}

/// A source's live entries in one partition's store of its map (those of `keys`, or all)
/// that its share of WHERE keeps, if it has one (`SourceFilter`).
fn read_source(
    (keys, filter): (Option<&[Vec<u8>]>, Option<&SourceFilter<'_>>),
    (store, now_ms, schemas): (&RecordStore, i64, &dyn SchemaSource),
    found: &mut Vec<(Vec<u8>, Vec<u8>)>,
) {
    let mut take = |key: &[u8], value: &[u8]| {
        if filter.is_none_or(|filter| filter.keeps(key, value, schemas)) {
            found.push((key.to_vec(), value.to_vec()));
        }
    };
    match keys {
        Some(keys) => {
            for key in keys {
                if let Some(entry) = store.get(key, now_ms) {
                    take(key, entry.value());
                }
            }
        }
        None => store.iter(now_ms).for_each(|(key, entry)| take(key, entry.value())),
    }
}

impl WideOperation for Scan {
    type Partial = Scanned;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn cluster_wide(&self) -> bool {
        !self.local
    }

    fn empty(&self) -> Scanned {
        Scanned::new(self.held.bounds())
    }

    fn on_share(&self, _map: &str, share: &mut ShareContext<'_>, partial: &mut Scanned) {
        let plan = &self.plan;
        partial.partition_count = share.partition_count;
        let wanted = self.wanted_partitions(share.partition_count);
        let scans_all =
            plan.sources.iter().zip(&wanted).any(|(source, wanted)| source.inline.is_none() && wanted.is_none());
        let scanner = match parts::mode(plan) {
            parts::Mode::Sources => None,
            _ => Some(PartScanner::new(plan, &*self.schemas, &self.held)),
        };
        let lookups = if scanner.is_some() { self.lookups() } else { Vec::new() };
        // (a LIMIT without ORDER BY: the rows this share's parts hold so far, against the
        // rows the statement needs; past it the later partitions are not read)
        let enough = scanner.as_ref().and_then(|scanner| scanner.as_ref().ok()?.enough());
        let mut passed = 0usize;
        let filters = if scanner.is_none() { SourceFilter::of(plan) } else { Vec::new() };
        // (the reactor's indexes of the scanned map: one lookup for all its partitions)
        let map = plan.sources.first().map_or("", |source| &*source.mapping.map);
        let indexes =
            crate::engine::map::query::reactor_indexes((share.partitions, share.settings), map, !lookups.is_empty());
        let indexes = indexes.as_ref().map(|indexes| indexes.lock());
        let narrowed = indexes.as_ref().and_then(|indexes| crate::engine::map::query::Narrowed::new(indexes, &lookups));
        for local in 0..share.partitions.len() {
            if !share.owned.get(local).copied().unwrap_or(true) {
                continue;
            }
            let partition_id = share.partition_id(local);
            if self.round_skips(partition_id, &mut partial.unread) {
                continue;
            }
            if !scans_all && !wanted.iter().any(|w| w.as_ref().is_some_and(|w| w.contains(&partition_id))) {
                continue;
            }
            let part = match (&scanner, ferrogrid_sql::exec::check(&self.deadline)) {
                // (past the bounds: the partition is not read, its part is the failure)
                _ if partial.over.is_some() => Part::Filtered(Vec::new()),
                _ if enough.is_some_and(|enough| passed >= enough) => Part::Filtered(Vec::new()),
                // (closed by its client, or past its timeout: its part is that failure)
                (_, Err(stopped)) => Part::Failed(stopped),
                (Some(Ok(scanner)), Ok(())) => {
                    let candidates = narrowed.as_ref().map(|narrowed| narrowed.of(local));
                    let store = match candidates {
                        Some([]) => None,
                        _ => share.partitions[local].map(map),
                    };
                    self.scan_partition((scanner, &lookups), (store, candidates), share.now_ms)
                }
                (Some(Err(error)), Ok(())) => Part::Failed(error.clone()),
                (None, Ok(())) => {
                    self.read_sources((&share.partitions[local], partition_id), &wanted, &filters, share.now_ms)
                }
            };
            // This member's shares hold more than the statement may: it fails.
            let over = match (&scanner, &part) {
                (Some(Ok(scanner)), Part::Failed(error)) if scanner.over() => Some(error.clone()),
                (None, Part::Sources(_)) => {
                    let (rows, bytes) = part.weight();
                    self.held.add(rows, bytes).err()
                }
                _ => None,
            };
            if let Some(error) = over.filter(|_| partial.over.is_none()) {
                partial.go_over(error);
            }
            if let Part::Filtered(rows) = &part {
                passed = passed.saturating_add(rows.len());
            }
            partial.keep(partition_id, part);
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Scanned) -> Result<Reply<'p>, OpError> {
        let (plan, Some(respond)) = (&self.plan, &self.respond) else { return Ok(Reply::NoAnswer) };
        if let Some(resume) = &self.resume {
            return self.stream_reply(resume, respond, partial);
        }
        let failed = |error| Ok(Reply::Statement(Statement::Failed { error, member: respond.member }));
        if let Some(missing) = uncovered(plan, partial) {
            // A partition moved between members while the scan ran and no share read it.
            return failed(SqlError::new(
                Code::PartitionDistribution,
                format!(
                    "Partition distribution has changed while the query ran (partition {missing} was not read); retry"
                ),
            ));
        }
        let parts = std::mem::take(&mut partial.parts).into_values();
        let schemas: &dyn SchemaSource = &*self.schemas;
        match ferrogrid_sql::exec::run_parts(plan, parts, schemas, respond.max_rows, &self.deadline) {
            Ok(result) => match (&self.then, &self.connection) {
                (Some((insert, shared)), Some(connection)) => match insert.entries(result.rows) {
                    Ok(entries) => self.write_selected(connection, insert, shared, entries).or_else(failed),
                    Err(error) => failed(error),
                },
                _ => {
                    Ok(first_page(respond, self.connection.as_ref(), result).map_or(Reply::NoAnswer, Reply::Statement))
                }
            },
            Err(error) => {
                let job = respond.query_id.local_id_low as u64;
                failed(ferrogrid_sql::exec::runtime_error(plan, error, job))
            }
        }
    }
}

impl Scan {
    /// Starts the writes of an `INSERT ... SELECT`'s rows: a fan-out of their own, started by a
    /// reactor, which answers the client; this job answers nothing (its in-flight count ends,
    /// the write's begins). The error when the reactor's queue has no room.
    fn write_selected(
        &self,
        connection: &Arc<ConnectionShared>,
        insert: &ferrogrid_sql::InsertSelect,
        shared: &crate::shared::Shared,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> Result<Reply<'static>, SqlError> {
        let follow_up = FollowUp {
            connection: connection.clone(),
            correlation_id: self.correlation_id,
            map: insert.target.map.clone(),
            entries,
            overwrite: insert.overwrite,
        };
        let reactor = &shared.reactors[0];
        match reactor.try_push(crate::shared::Task::SqlWrite(Box::new(follow_up))) {
            Ok(()) => {
                reactor.wake();
                Ok(Reply::NoAnswer)
            }
            Err(_) => {
                Err(SqlError::generic("The member is too busy to write the rows (its reactor's queue is full); retry"))
            }
        }
    }
}

/// A partition the scan should have read and no share did (None: all were read).
pub(crate) fn uncovered(plan: &SelectPlan, scanned: &Scanned) -> Option<u16> {
    let count = scanned.partition_count;
    let mut expected: Vec<u16> = Vec::new();
    for source in plan.sources.iter().filter(|s| s.inline.is_none()) {
        match &source.keys {
            None => return (0..count).find(|p| !scanned.parts.contains_key(p)),
            Some(keys) => {
                expected.extend(keys.iter().map(|key| ferrogrid_protocol::data::partition_for(Data(key), count).0))
            }
        }
    }
    expected.into_iter().find(|p| !scanned.parts.contains_key(p))
}

/// What a write does.
#[derive(Debug)]
pub(crate) enum Work {
    Insert { entries: Vec<(Vec<u8>, Vec<u8>)>, overwrite: bool },
    Change(Box<Change>),
}

/// INSERT/SINK, UPDATE, DELETE on every replica held here.
#[derive(Debug)]
pub(crate) struct Write {
    pub(crate) work: Work,
    pub(crate) schemas: Arc<Schemas>,
    pub(crate) member: Uuid,
}

/// A write's outcome: entries changed on owned copies, and the first failure.
#[derive(Debug, Default)]
pub(crate) struct Written {
    pub(crate) count: u64,
    pub(crate) failure: Option<(i32, String)>,
}

impl Partial for Written {
    fn merge(&mut self, other: Written) {
        self.count += other.count;
        if self.failure.is_none() {
            self.failure = other.failure;
        }
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&(self.count as i64)).fixed(&self.failure.as_ref().map_or(0, |(code, _)| *code));
        writer.frame(self.failure.as_ref().map_or("", |(_, text)| text).as_bytes());
    }

    fn read_from(message: &Message<'_>) -> Result<Written, DecodeError> {
        let mut fixed = message.fixed(RESPONSE_HEADER_SIZE)?;
        let count: i64 = fixed.read()?;
        let code: i32 = fixed.read()?;
        let text = message.reader().string()?.to_owned();
        Ok(Written { count: count.max(0) as u64, failure: (code != 0).then_some((code, text)) })
    }
}

pub(crate) fn publish(
    share: &mut ShareContext<'_>,
    map: &str,
    partition_id: u16,
    kind: EventKind,
    key: &[u8],
    value: Option<&[u8]>,
    old: Option<&[u8]>,
) {
    if share.listeners.has(map) {
        let event = Event {
            kind,
            partition_id: Some(ferrogrid_protocol::PartitionId(partition_id)),
            key: Some(key),
            value,
            old_value: old,
            affected_entries: 1,
            source: share.member,
        };
        share.listeners.publish(share.outbox, share.member, map, event);
    }
}

/// INSERT/SINK on this reactor's partitions of the entries' keys (`overwrite`: SINK).
fn insert(
    map: &str,
    entries: &[(Vec<u8>, Vec<u8>)],
    overwrite: bool,
    share: &mut ShareContext<'_>,
    partial: &mut Written,
) {
    let settings = share.settings.get(map);
    let now_ms = share.now_ms;
    for (key, value) in entries {
        let Some((partition_id, local)) = share.local_of(key) else { continue };
        let owned = share.owned.get(local).copied().unwrap_or(true);
        let Some(partition) = share.partitions.get_mut(local) else { continue };
        let store = partition.map_mut(map, || settings.clone());
        store.expire_if_due(key, now_ms);
        let exists = store.get(key, now_ms).is_some();
        if exists && !overwrite {
            if owned && partial.failure.is_none() {
                partial.failure = Some((wire::error_code::GENERIC, "Duplicate key".to_owned()));
            }
            continue;
        }
        let old = store.put(key, value, now_ms, -1, -1).map(|e| e.value().to_vec());
        if owned {
            partial.count += 1;
            let kind = if old.is_some() { EventKind::Updated } else { EventKind::Added };
            publish(share, map, partition_id, kind, key, Some(value), old.as_deref());
        }
    }
}

impl Write {
    /// UPDATE or DELETE over every entry of this reactor's partitions of the map.
    fn change(&self, map: &str, change: &Change, share: &mut ShareContext<'_>, partial: &mut Written) {
        let now_ms = share.now_ms;
        for local in 0..share.partitions.len() {
            let owned = share.owned.get(local).copied().unwrap_or(true);
            let partition_id = share.partition_id(local);
            let Some(store) = share.partitions[local].existing_mut(map) else { continue };
            let mut actions = Vec::new();
            for (key, entry) in store.iter(now_ms) {
                match ferrogrid_sql::write::apply(change, key, entry.value(), &*self.schemas) {
                    Ok(Action::Keep) => {}
                    Ok(action) => actions.push((key.to_vec(), entry.value().to_vec(), action)),
                    Err(error) => {
                        if owned && partial.failure.is_none() {
                            let code = match error.code {
                                Code::DataException => wire::error_code::DATA_EXCEPTION,
                                _ => wire::error_code::GENERIC,
                            };
                            partial.failure = Some((code, error.message));
                        }
                    }
                }
            }
            for (key, old, action) in actions {
                let Some(store) = share.partitions[local].existing_mut(map) else { break };
                match action {
                    Action::Remove => {
                        store.remove(&key);
                        if owned {
                            partial.count += 1;
                            publish(share, map, partition_id, EventKind::Removed, &key, None, Some(&old));
                        }
                    }
                    Action::Replace(value) => {
                        store.put(&key, &value, now_ms, -1, -1);
                        if owned {
                            partial.count += 1;
                            publish(share, map, partition_id, EventKind::Updated, &key, Some(&value), Some(&old));
                        }
                    }
                    Action::Keep => {}
                }
            }
        }
    }
}

impl WideOperation for Write {
    type Partial = Written;
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) -> Written {
        Written::default()
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Written) {
        match &self.work {
            Work::Insert { entries, overwrite } => insert(map, entries, *overwrite, share, partial),
            Work::Change(change) => self.change(map, change, share, partial),
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Written) -> Result<Reply<'p>, OpError> {
        let statement = match partial.failure.take() {
            Some((code, text)) => {
                let error = SqlError::new(
                    if code == wire::error_code::DATA_EXCEPTION { Code::DataException } else { Code::Generic },
                    text,
                );
                Statement::Failed { error, member: self.member }
            }
            None => Statement::UpdateCount(0),
        };
        Ok(Reply::Statement(statement))
    }
}
