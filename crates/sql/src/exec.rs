//! Runs a [`SelectPlan`] over the entries its sources' maps hold: rows read from entries,
//! joined, filtered, grouped, projected, made distinct, sorted and cut to OFFSET/LIMIT.
//!
//! Invariant: at most `max_rows` rows are held at any step; more is an error naming the bound
//! (the member's `sql.max-rows-per-query`), never an unbounded allocation.

pub mod explain;
mod groups;
pub mod hints;
mod join;
pub mod parts;

pub use crate::catalog::Entries;
use crate::error::{Result, SqlError};
use crate::expr::{compare, Expr};
use crate::plan::{ColumnMeta, OrderKey, SelectPlan};
use ferrogrid_query::compact::SchemaSource;
use ferrogrid_query::Value;
use groups::{row_key, Groups};
pub use parts::{run_parts, run_round, streams, Part, PartScanner};

use std::cmp::Ordering;
use std::collections::HashSet;

/// A query's result: its columns and rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<ColumnMeta>,
    pub rows: Vec<Vec<Value>>,
}

fn too_many(max_rows: usize) -> SqlError {
    SqlError::data(format!(
        "The query holds more than {max_rows} rows on the coordinating member (ferrogrid.limits.max-sql-rows-per-query); add a WHERE or LIMIT"
    ))
}

fn too_large(max_bytes: usize) -> SqlError {
    SqlError::data(format!(
        "The query holds more than {max_bytes} bytes of entries on the coordinating member (ferrogrid.limits.max-sql-bytes-per-query); add a WHERE or LIMIT"
    ))
}

/// What one statement may hold on the member that runs it: rows (`max-sql-rows-per-query`)
/// and bytes of the entries its rows are read from (`max-sql-bytes-per-query`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub rows: usize,
    pub bytes: usize,
}

/// What a statement holds so far (the entries its parts carry), against its [`Bounds`]:
/// shared by the shares of one member (each reactor adds what it keeps).
#[derive(Debug)]
pub struct Held {
    bounds: Bounds,
    rows: std::sync::atomic::AtomicUsize,
    bytes: std::sync::atomic::AtomicUsize,
}

/// What one entry held as a part costs beyond its key and value bytes: its two buffers.
const HELD_PER_ENTRY: usize = 2 * std::mem::size_of::<Vec<u8>>() + 16;

/// The bytes an entry takes once held as a part: its key, its value and [`HELD_PER_ENTRY`].
pub fn held_bytes(key: &[u8], value: &[u8]) -> usize {
    key.len() + value.len() + HELD_PER_ENTRY
}

impl Held {
    pub fn new(bounds: Bounds) -> Held {
        Held { bounds, rows: 0.into(), bytes: 0.into() }
    }

    /// Counts `rows` more rows of `bytes` more bytes; the bound's error once either is past.
    pub fn add(&self, rows: usize, bytes: usize) -> Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        let rows = self.rows.fetch_add(rows, Relaxed).saturating_add(rows);
        let bytes = self.bytes.fetch_add(bytes, Relaxed).saturating_add(bytes);
        if rows > self.bounds.rows {
            return Err(too_many(self.bounds.rows));
        }
        if bytes > self.bounds.bytes {
            return Err(too_large(self.bounds.bytes));
        }
        Ok(())
    }

    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The rows counted and not given back.
    pub fn rows(&self) -> usize {
        self.rows.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The bytes counted and not given back.
    pub fn bytes(&self) -> usize {
        self.bytes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Gives back `rows` rows of `bytes` bytes counted before (no longer held).
    pub fn release(&self, rows: usize, bytes: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        self.rows.fetch_sub(rows, Relaxed);
        self.bytes.fetch_sub(bytes, Relaxed);
    }

    /// Whether what it counted went past a bound.
    pub fn over(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.rows.load(Relaxed) > self.bounds.rows || self.bytes.load(Relaxed) > self.bounds.bytes
    }
}

/// Reads a source's rows from its entries: only the columns the statement uses (the others
/// stay null), each through a path parsed once; the fields of a Compact value's top level at
/// their places in the last schema met, looked up once per schema rather than per row.
struct RowReader<'a> {
    mapping: &'a crate::catalog::Mapping,
    reads: Vec<(usize, Option<ferrogrid_query::path::Path>)>,
    /// Per read, the Compact field it reads from the value's top level (None: another read).
    fields: Vec<Option<String>>,
    resolved: std::cell::RefCell<Option<Resolved>>,
}

/// The last Compact schema a [`RowReader`] met: the mapping's verdict on its type and, per
/// read, its field's kind and place (None: not such a read; Some(None): no such field).
struct Resolved {
    schema: std::sync::Arc<ferrogrid_query::schema::Schema>,
    accepted: bool,
    places: Vec<Option<Option<(i32, ferrogrid_query::schema::Place)>>>,
    /// Per read, the offset of a fixed-size field whose kind is its column's type exactly:
    /// read straight from the bytes (no record parsed, nothing to convert).
    direct: Vec<Option<(i32, u32)>>,
}

impl<'a> RowReader<'a> {
    fn new(source: &'a crate::plan::Source, used: &[bool]) -> Result<RowReader<'a>> {
        let mapping = &source.mapping;
        let mut reads = Vec::new();
        for index in 0..mapping.columns.len() {
            if used.get(source.offset + index).copied().unwrap_or(true) {
                reads.push((index, mapping.path(index)?));
            }
        }
        let fields = reads.iter().map(|(index, path)| mapping.compact_field(*index, path.as_ref()).map(str::to_owned));
        let fields = fields.collect();
        Ok(RowReader { mapping, reads, fields, resolved: std::cell::RefCell::new(None) })
    }

    /// The entry's row, or None for an entry of another Compact type or Portable class.
    fn read(&self, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Result<Option<Vec<Value>>> {
        let mut row = Vec::new();
        Ok(self.read_into(key, value, schemas, &mut row)?.then_some(row))
    }

    /// The entry's row into `row` (its earlier values replaced); false for an entry of another
    /// Compact type or Portable class.
    fn read_into(&self, key: &[u8], value: &[u8], schemas: &dyn SchemaSource, row: &mut Vec<Value>) -> Result<bool> {
        if let Some(read) = self.read_compact(key, value, schemas, row) {
            return read;
        }
        if !self.mapping.accepts(value, schemas) {
            return Ok(false);
        }
        row.clear();
        row.resize(self.mapping.columns.len(), Value::Null);
        for (index, path) in &self.reads {
            row[*index] = self.mapping.read_at(*index, path.as_ref(), key, value, schemas)?;
        }
        Ok(true)
    }

    /// [`RowReader::read_into`] for a Compact value whose schema is known and whose record
    /// parses; None (read it the general way) otherwise.
    fn read_compact(
        &self,
        key: &[u8],
        value: &[u8],
        schemas: &dyn SchemaSource,
        row: &mut Vec<Value>,
    ) -> Option<Result<bool>> {
        use ferrogrid_query::compact::{CompactRecord, TYPE_ID};
        if self.fields.iter().all(Option::is_none) || value.get(4..8)? != TYPE_ID.to_be_bytes() {
            return None;
        }
        let id = i64::from_be_bytes(value.get(8..16)?.try_into().ok()?);
        let mut resolved = self.resolved.borrow_mut();
        if resolved.as_ref().is_none_or(|r| r.schema.id() != id) {
            *resolved = Some(self.resolve(schemas.schema(id)?, value, schemas)?);
        }
        let resolved = resolved.as_ref()?;
        if !resolved.accepted {
            return Some(Ok(false));
        }
        let record = CompactRecord::parse_with(&value[8..], resolved.schema.clone(), schemas).ok()?;
        if row.len() != self.mapping.columns.len() {
            // (the reads write the same columns every row: the others stay null)
            row.clear();
            row.resize(self.mapping.columns.len(), Value::Null);
        }
        for (((index, path), place), direct) in self.reads.iter().zip(&resolved.places).zip(&resolved.direct) {
            let fixed = direct.and_then(|(kind, offset)| {
                let lengths = (resolved.schema.fixed_length(), resolved.schema.variable_count());
                ferrogrid_query::compact::fixed_scalar(&value[8..], kind, offset, lengths)
            });
            let read = match (fixed, place) {
                (Some(fixed), _) => Ok(fixed),
                (None, Some(place)) => self.mapping.read_compact_at(*index, &record, *place),
                (None, None) => self.mapping.read_at(*index, path.as_ref(), key, value, schemas),
            };
            match read {
                Ok(read) => row[*index] = read,
                Err(error) => return Some(Err(error)),
            }
        }
        Some(Ok(true))
    }

    /// The places of the reads' fields in `schema` (a private copy of it, so that the
    /// reactors scanning at once do not share its count); None when a place cannot be known.
    fn resolve(
        &self,
        schema: std::sync::Arc<ferrogrid_query::schema::Schema>,
        value: &[u8],
        schemas: &dyn SchemaSource,
    ) -> Option<Resolved> {
        let schema = std::sync::Arc::new((*schema).clone());
        let mut places = Vec::with_capacity(self.fields.len());
        for field in &self.fields {
            places.push(match field {
                Some(name) => Some(schema.place(name).ok()?.map(|(field, place)| (field.kind, place))),
                None => None,
            });
        }
        let direct = self
            .reads
            .iter()
            .zip(&places)
            .map(|((index, _), place)| match place {
                // (only fixed-size numbers have a fixed place: booleans are bits)
                Some(Some((kind, ferrogrid_query::schema::Place::Fixed { offset })))
                    if crate::catalog::compact_field_type(*kind) == Some(self.mapping.columns[*index].ty) =>
                {
                    Some((*kind, *offset))
                }
                _ => None,
            })
            .collect();
        Some(Resolved { accepted: self.mapping.accepts(value, schemas), schema, places, direct })
    }
}

/// The schema source a scan reads through: the last schema looked up is kept, so the rows of
/// a map of one Compact type find their schema without the member's registry (a lock and a
/// hash lookup) for every field of every row.
struct LastSchema<'a> {
    inner: &'a dyn SchemaSource,
    last: std::cell::RefCell<Option<std::sync::Arc<ferrogrid_query::schema::Schema>>>,
}

impl<'a> LastSchema<'a> {
    fn new(inner: &'a dyn SchemaSource) -> LastSchema<'a> {
        LastSchema { inner, last: std::cell::RefCell::new(None) }
    }
}

impl SchemaSource for LastSchema<'_> {
    fn schema(&self, id: i64) -> Option<std::sync::Arc<ferrogrid_query::schema::Schema>> {
        if let Some(last) = self.last.borrow().as_ref().filter(|last| last.id() == id) {
            return Some(last.clone());
        }
        let found = self.inner.schema(id);
        self.last.replace(found.clone());
        found
    }
}

/// Reads every source's rows: one row per accepted entry that passes the source's share of
/// WHERE (`pushed_filters`), every column of the mapping.
fn read_rows(
    plan: &SelectPlan,
    inputs: &[Entries],
    schemas: &dyn SchemaSource,
    max_rows: usize,
) -> Result<Vec<Vec<Vec<Value>>>> {
    let used = used_columns(plan);
    let filters = pushed_filters(plan);
    let schemas = &LastSchema::new(schemas);
    let mut tables = Vec::with_capacity(plan.sources.len());
    for (source, entries) in plan.sources.iter().zip(inputs) {
        let entries = source.inline.as_ref().unwrap_or(entries);
        let reader = RowReader::new(source, &used)?;
        let filter = &filters[tables.len()];
        let mut rows = Vec::new();
        for (key, value) in entries {
            let Some(row) = reader.read(key, value, schemas)? else { continue };
            if filter.iter().try_fold(true, |passes, term| Ok::<_, SqlError>(passes && term.passes(&row)?))? {
                if rows.len() >= max_rows {
                    return Err(too_many(max_rows));
                }
                rows.push(row);
            }
        }
        tables.push(rows);
    }
    Ok(tables)
}

/// One source's share of WHERE (`pushed_filters`) where its entries are: a partition keeps
/// from its entries only those the coordinator would keep (an entry whose row cannot be read
/// or whose terms fail is kept: the coordinator then fails the statement as it would have).
pub struct SourceFilter<'p> {
    reader: RowReader<'p>,
    terms: Vec<Expr>,
}

impl std::fmt::Debug for SourceFilter<'_> {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.debug_struct("SourceFilter").field("terms", &self.terms).finish()
    }
}

impl<'p> SourceFilter<'p> {
    /// Per source of `plan`, its filter; None where it has no terms of its own.
    pub fn of(plan: &'p SelectPlan) -> Vec<Option<SourceFilter<'p>>> {
        let used = used_columns(plan);
        let filters = pushed_filters(plan).into_iter().zip(&plan.sources);
        filters
            .map(|(terms, source)| {
                let reader = RowReader::new(source, &used).ok()?;
                (!terms.is_empty()).then_some(SourceFilter { reader, terms })
            })
            .collect()
    }

    /// Whether the coordinator may keep the entry.
    pub fn keeps(&self, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> bool {
        match self.reader.read(key, value, schemas) {
            Ok(Some(row)) => self.terms.iter().all(|term| term.passes(&row).unwrap_or(true)),
            Ok(None) => false,
            Err(_) => true,
        }
    }
}

/// Per source, the conjuncts of WHERE that read only its columns (rebased to its rows) where
/// filtering its rows before the join is the same as filtering the joined rows: the first
/// source and those joined with an inner join (every joined row holds one of their rows; a
/// LEFT join's right side may be nulls instead, which such a term could pass). WHERE is still
/// evaluated over the joined rows: this only keeps rows that cannot pass out of the join.
fn pushed_filters(plan: &SelectPlan) -> Vec<Vec<Expr>> {
    let conjuncts = plan.filter.as_ref().map(Expr::conjuncts).unwrap_or_default();
    let mut filters = Vec::with_capacity(plan.sources.len());
    for (index, source) in plan.sources.iter().enumerate() {
        let inner =
            index == 0 || plan.joins.get(index - 1).is_some_and(|join| join.kind == crate::plan::JoinKind::Inner);
        let range = source.offset..source.offset + source.mapping.columns.len();
        let own = |term: &Expr| {
            let columns = term.columns();
            !columns.is_empty() && columns.iter().all(|column| range.contains(column))
        };
        let terms = conjuncts.iter().filter(|term| own(term)).map(|term| term.rebased(source.offset));
        filters.push(if inner { terms.collect() } else { Vec::new() });
    }
    filters
}

/// One source without joins, read entry by entry: each row is filtered as it is read and, in
/// a grouped statement, folded into its group, so only the rows that pass (or the groups) are
/// held, never the whole map.
fn scan(plan: &SelectPlan, entries: &Entries, schemas: &dyn SchemaSource, max_rows: usize) -> Result<Vec<Vec<Value>>> {
    let source = &plan.sources[0];
    let entries = source.inline.as_ref().unwrap_or(entries);
    let reader = RowReader::new(source, &used_columns(plan))?;
    let schemas = &LastSchema::new(schemas);
    let mut fold = Fold::new(plan, max_rows);
    for (key, value) in entries {
        let Some(row) = reader.read(key, value, schemas)? else { continue };
        if let Some(filter) = &plan.filter {
            if !filter.passes(&row)? {
                continue;
            }
        }
        fold.add(row)?;
    }
    fold.finish()
}

/// What a scan keeps of the rows that pass: the rows themselves (at most `max_rows`), or,
/// in a grouped statement, the groups they fold into.
struct Fold<'p> {
    groups: Option<Groups<'p>>,
    rows: Vec<Vec<Value>>,
    max_rows: usize,
}

impl<'p> Fold<'p> {
    fn new(plan: &'p SelectPlan, max_rows: usize) -> Fold<'p> {
        let groups = plan.grouping.as_ref().map(|grouping| Groups::new(grouping, max_rows));
        Fold { groups, rows: Vec::new(), max_rows }
    }

    fn add(&mut self, row: Vec<Value>) -> Result<()> {
        match &mut self.groups {
            Some(groups) => groups.add(&row),
            None if self.rows.len() >= self.max_rows => Err(too_many(self.max_rows)),
            None => {
                self.rows.push(row);
                Ok(())
            }
        }
    }

    /// The rows, or the grouped rows that pass HAVING.
    fn finish(self) -> Result<Vec<Vec<Value>>> {
        match self.groups {
            Some(groups) => groups.finish(),
            None => Ok(self.rows),
        }
    }
}

/// Which columns of the joined row (every source's, in order) the plan reads.
fn used_columns(plan: &SelectPlan) -> Vec<bool> {
    let width: usize = plan.sources.iter().map(|s| s.mapping.columns.len()).sum();
    let mut used = vec![false; width];
    let mut exprs: Vec<&Expr> = Vec::new();
    exprs.extend(plan.joins.iter().filter_map(|j| j.on.as_ref()));
    exprs.extend(plan.filter.as_ref());
    match &plan.grouping {
        Some(grouping) => {
            exprs.extend(&grouping.keys);
            exprs.extend(grouping.calls.iter().filter_map(|c| c.argument.as_ref()));
        }
        None => {
            exprs.extend(&plan.projection);
            exprs.extend(plan.order.iter().map(|k| &k.expr));
        }
    }
    for expr in exprs {
        mark(expr, &mut used);
    }
    used
}

fn mark(expr: &Expr, used: &mut [bool]) {
    if let crate::expr::Kind::Column(index) = expr.kind {
        if let Some(slot) = used.get_mut(index) {
            *slot = true;
        }
    }
    expr.operands().into_iter().for_each(|e| mark(e, used));
}

/// When a statement must have answered (its `timeoutMillis`; none: no limit), and whether its
/// client closed it (Sql.Close) while it ran: every place that checks the time checks that
/// too, so a closed statement stops at the next partition, join row or group.
#[derive(Debug, Clone, Default)]
pub struct Deadline {
    at: Option<std::time::Instant>,
    closed: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Deadline {
    /// A deadline at `at` (None: none), not closable.
    pub fn at(at: Option<std::time::Instant>) -> Deadline {
        Deadline { at, closed: None }
    }

    /// The same deadline, closed once `closed` is set.
    pub fn closed_by(self, closed: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Deadline {
        Deadline { closed: Some(closed), ..self }
    }

    /// The client closed the statement.
    pub fn is_closed(&self) -> bool {
        self.closed.as_ref().is_some_and(|closed| closed.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// A statement its client closed while it ran, as Hazelcast's client reports it.
pub fn cancelled() -> SqlError {
    SqlError::new(crate::Code::CancelledByUser, "Query was cancelled by the user")
}

/// A statement past its deadline, as Hazelcast 5.6 fails it (the Jet job it cancels).
pub fn timed_out() -> SqlError {
    SqlError::generic("The Jet SQL job failed: CANCEL_FORCEFUL")
}

/// The statement's failure once it was closed ([`cancelled`]) or `deadline` has passed
/// ([`timed_out`]).
pub fn check(deadline: &Deadline) -> Result<()> {
    if deadline.is_closed() {
        return Err(cancelled());
    }
    match deadline.at {
        Some(at) if std::time::Instant::now() >= at => Err(timed_out()),
        _ => Ok(()),
    }
}

/// Runs `plan` over its sources' entries (one `Entries` per source, in order).
pub fn run(plan: &SelectPlan, inputs: &[Entries], schemas: &dyn SchemaSource, max_rows: usize) -> Result<ResultSet> {
    run_within(plan, inputs, schemas, max_rows, &Deadline::default())
}

/// [`run`], failing with [`timed_out`] once `deadline` has passed.
pub fn run_within(
    plan: &SelectPlan,
    inputs: &[Entries],
    schemas: &dyn SchemaSource,
    max_rows: usize,
    deadline: &Deadline,
) -> Result<ResultSet> {
    if inputs.len() != plan.sources.len() && plan.sources.iter().any(|s| s.inline.is_none()) {
        return Err(SqlError::generic("internal error: wrong number of scans for the plan"));
    }
    let empty: Vec<Entries> = vec![Vec::new(); plan.sources.len()];
    let inputs = if inputs.len() == plan.sources.len() { inputs } else { &empty[..] };
    if let Some(union) = &plan.union {
        let mut rows = Vec::new();
        let mut at = 0;
        for branch in &union.branches {
            let count = branch.sources.len();
            rows.extend(run_within(branch, &inputs[at..at + count], schemas, max_rows, deadline)?.rows);
            at += count;
            if rows.len() > max_rows {
                return Err(too_many(max_rows));
            }
        }
        return finish(plan, rows);
    }
    if plan.sources.len() == 1 && plan.joins.is_empty() {
        let rows = scan(plan, &inputs[0], schemas, max_rows)?;
        return finish(plan, rows);
    }
    let tables = read_rows(plan, inputs, schemas, max_rows)?;
    let mut rows = join::join(plan, tables, max_rows, deadline)?;
    if let Some(filter) = &plan.filter {
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            if filter.passes(&row)? {
                kept.push(row);
            }
        }
        rows = kept;
    }
    if let Some(grouping) = &plan.grouping {
        let mut groups = Groups::new(grouping, max_rows);
        for row in &rows {
            groups.add(row)?;
        }
        rows = groups.finish()?;
    }
    finish(plan, rows)
}

/// Projection, DISTINCT, ORDER BY and OFFSET/LIMIT over the rows that passed.
fn finish(plan: &SelectPlan, rows: Vec<Vec<Value>>) -> Result<ResultSet> {
    finish_within(plan, rows, (plan.offset, plan.limit))
}

/// [`finish`] with OFFSET/LIMIT given (a streamed query's round leaves them to its cursor).
fn finish_within(
    plan: &SelectPlan,
    rows: Vec<Vec<Value>>,
    (offset, limit): (usize, Option<usize>),
) -> Result<ResultSet> {
    // project, keeping the order keys beside each row
    // (each row goes once projected: the memory it frees takes the next projected row)
    let mut projected: Vec<(Vec<Value>, Vec<Value>)> = Vec::with_capacity(rows.len());
    for row in rows {
        let values = plan.projection.iter().map(|e| e.eval(&row)).collect::<Result<Vec<_>>>()?;
        let keys = plan.order.iter().map(|k| k.expr.eval(&row)).collect::<Result<Vec<_>>>()?;
        projected.push((values, keys));
    }
    if plan.distinct {
        let mut seen = HashSet::new();
        projected.retain(|(values, _)| seen.insert(row_key(values)));
    }
    if !plan.order.is_empty() {
        let mut failure = None;
        projected.sort_by(|(_, a), (_, b)| order_cmp(&plan.order, a, b, &mut failure));
        if let Some(error) = failure {
            return Err(error);
        }
    }
    let rows: Vec<Vec<Value>> =
        projected.into_iter().skip(offset).take(limit.unwrap_or(usize::MAX)).map(|(values, _)| values).collect();
    Ok(ResultSet { columns: plan.columns.clone(), rows })
}

/// How two rows' ORDER BY keys (`a`, `b`: the keys' values, in `order`'s order) sort: nulls
/// first or last as each key says, descending keys reversed. A pair that cannot be compared
/// sorts as equal and leaves its error in `failure`.
pub(crate) fn order_cmp(order: &[OrderKey], a: &[Value], b: &[Value], failure: &mut Option<SqlError>) -> Ordering {
    for (index, key) in order.iter().enumerate() {
        let ordering = match (a[index].is_null(), b[index].is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) if key.nulls_first => Ordering::Less,
            (true, false) => Ordering::Greater,
            (false, true) if key.nulls_first => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                let ordering = match compare(&a[index], &b[index]) {
                    Ok(Some(ordering)) => ordering,
                    Ok(None) => Ordering::Equal,
                    Err(error) => {
                        failure.get_or_insert(error);
                        Ordering::Equal
                    }
                };
                if key.descending {
                    ordering.reverse()
                } else {
                    ordering
                }
            }
        };
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    Ordering::Equal
}

/// A run-time failure as Hazelcast reports it: from a single-key plan (a point lookup whose
/// WHERE is the key's equality alone) as the bare `QueryException` (GENERIC), from any other
/// plan as a failed Jet job whose processor threw it (data errors keep DATA_EXCEPTION). `job`
/// names the job in the text.
pub fn runtime_error(plan: &SelectPlan, error: SqlError, job: u64) -> SqlError {
    use crate::error::Code;
    if matches!(error.code, Code::Parsing | Code::ObjectNotFound) || error.message.starts_with("The Jet SQL job failed")
    {
        return error;
    }
    // Hazelcast plans a key lookup for `WHERE __key = k` alone; with more conditions it scans
    let key_alone = !matches!(plan.filter.as_ref().map(|f| &f.kind), Some(crate::expr::Kind::And(_)));
    let single_key =
        key_alone && plan.sources.len() == 1 && plan.sources[0].keys.as_ref().is_some_and(|keys| keys.len() == 1);
    if single_key {
        return SqlError::generic(format!("com.hazelcast.sql.impl.QueryException: {}", error.message));
    }
    let vertex = match plan.sources.first() {
        Some(source) => format!("Project(IMap[public.{}])#0", source.mapping.name),
        None => "Values#0".to_owned(),
    };
    let cause = format!("com.hazelcast.sql.impl.QueryException: {}", error.message);
    SqlError { message: format!("The Jet SQL job failed: {}", tasklet_failure(job, &vertex, &cause)), ..error }
}

/// How a Jet job tells that one of its processors (`vertex`) threw `cause`.
pub fn tasklet_failure(job: u64, vertex: &str, cause: &str) -> String {
    let id = format!("{:04x}-{:04x}-{:04x}-0001", (job >> 48) & 0xffff, (job >> 32) & 0xffff, (job >> 16) & 0xffff);
    format!("Execution on a member failed: com.hazelcast.jet.JetException: Exception in ProcessorTasklet{{{id}/{vertex}}}: {cause}")
}

/// Evaluates a constant expression (VALUES rows, SELECT without FROM).
pub fn constant(expr: &Expr) -> Result<Value> {
    expr.eval(&[])
}
