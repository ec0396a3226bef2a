//! A statement's scan split over the shares that hold its partitions: each share reads its
//! own partitions' entries where they are (on the reactor that owns them, on the member that
//! holds them) and sends the coordinator a [`Part`] per partition: for one source without
//! joins, only the entries whose rows passed the WHERE, or the groups those rows folded into;
//! for anything else (joins, UNIONs, sources the statement supplies), the entries themselves.
//! The coordinator runs the rest ([`run_parts`]) over the parts in partition order, so the
//! rows and groups come out as a single scan of the partitions in order would give them.
//!
//! Invariants: the parts of one share hold at most the statement's bounds of rows and entry
//! bytes, a part at most `max_rows` groups (more fails it with the bound's
//! error); a part's first failure ends its partition's scan, and the statement fails with the
//! failure of the lowest partition that had one. Groups travel only when every key and
//! aggregate is of a type whose values cross the wire unchanged and no aggregate is DISTINCT;
//! otherwise the passing entries do.

use super::groups::{Group, Groups, State, Table};
use super::{finish_within, held_bytes, order_cmp, used_columns, Fold, Held, LastSchema, ResultSet, RowReader};
use crate::catalog::Entries;
use crate::error::{Code, Result, SqlError};
use crate::plan::{Grouping, SelectPlan};
use crate::types::SqlType;
use ferrogrid_query::compact::SchemaSource;
use ferrogrid_query::Value;

/// What a share sends for each of its partitions.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Every source's live entries, unread (a statement with joins, a UNION, a source it
    /// supplies itself).
    Sources(Vec<Entries>),
    /// The entries whose rows passed the WHERE, in the partition's order.
    Filtered(Entries),
    /// The groups the rows that passed the WHERE folded into.
    Grouped(Table),
    /// The first failure reading, filtering or folding the partition's rows.
    Failed(SqlError),
}

impl Part {
    /// The entries it carries: how many, and the bytes they take ([`held_bytes`]).
    pub fn weight(&self) -> (usize, usize) {
        let weigh = |entries: &Entries| entries.iter().map(|(key, value)| held_bytes(key, value)).sum::<usize>();
        match self {
            Part::Filtered(entries) => (entries.len(), weigh(entries)),
            Part::Sources(sources) => {
                sources.iter().fold((0, 0), |(rows, bytes), entries| (rows + entries.len(), bytes + weigh(entries)))
            }
            Part::Grouped(_) | Part::Failed(_) => (0, 0),
        }
    }
}

/// How the shares of a plan's scan read their partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Sources,
    Filtered,
    Grouped,
}

/// How the shares of `plan`'s scan read their partitions.
pub fn mode(plan: &SelectPlan) -> Mode {
    let single = plan.union.is_none()
        && plan.joins.is_empty()
        && plan.sources.len() == 1
        && plan.sources.iter().all(|s| s.inline.is_none());
    match &plan.grouping {
        _ if !single => Mode::Sources,
        Some(grouping) if groups_travel(grouping) => Mode::Grouped,
        _ => Mode::Filtered,
    }
}

/// Whether a share's groups can be sent and merged: no DISTINCT aggregate, and every key and
/// aggregate of a type whose values the wire carries unchanged.
fn groups_travel(grouping: &Grouping) -> bool {
    let travels = |ty: SqlType| !matches!(ty, SqlType::Object | SqlType::Json);
    grouping.calls.iter().all(|call| !call.distinct && travels(call.ty))
        && grouping.keys.iter().all(|key| travels(key.ty))
        && grouping.calls.iter().filter_map(|call| call.argument.as_ref()).all(|argument| travels(argument.ty))
}

/// Reads one share's partitions of a single-source plan (see [`mode`]).
pub struct PartScanner<'p> {
    plan: &'p SelectPlan,
    reader: RowReader<'p>,
    schemas: LastSchema<'p>,
    mode: Mode,
    /// The passing entries of every partition this member's shares read, against the
    /// statement's bounds: a share stops as soon as the statement could not hold them.
    held: &'p Held,
    /// An ORDER BY with a LIMIT: each partition sends only its best OFFSET + LIMIT rows (see
    /// [`PartScanner::scan_top`]).
    top: Option<usize>,
    /// Rows a partition need not read past: a LIMIT (and its OFFSET) without WHERE, ORDER
    /// BY, DISTINCT or grouping needs no more from any one partition. (With a WHERE every row
    /// is still tested, as on Hazelcast, whose failing row fails the statement whatever its
    /// LIMIT.)
    cap: usize,
}

impl std::fmt::Debug for PartScanner<'_> {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.debug_struct("PartScanner").field("mode", &self.mode).field("cap", &self.cap).finish()
    }
}

impl<'p> PartScanner<'p> {
    /// A scanner for one share of `plan`'s scan; an error when its columns cannot be read at all.
    pub fn new(plan: &'p SelectPlan, schemas: &'p dyn SchemaSource, held: &'p Held) -> Result<PartScanner<'p>> {
        let mode = mode(plan);
        let source = plan.sources.first().ok_or_else(|| SqlError::generic("internal error: a scan without source"))?;
        let reader = RowReader::new(source, &used_columns(plan))?;
        // (with a WHERE, LIMIT 0 still evaluates it on every row: Hazelcast fails such a
        // statement when the WHERE fails on a row)
        let unordered = plan.order.is_empty() && !plan.distinct && plan.grouping.is_none();
        let cap = match plan.limit.map(|limit| limit.saturating_add(plan.offset)) {
            Some(cap) if unordered && (cap > 0 || plan.filter.is_none()) => cap,
            _ => usize::MAX,
        };
        let top = top(plan, mode, held.bounds().rows);
        Ok(PartScanner { plan, reader, schemas: LastSchema::new(schemas), mode, held, top, cap })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How many passing rows a LIMIT without ORDER BY, DISTINCT or grouping needs (OFFSET +
    /// LIMIT; None: every passing row). Each partition sends at most that many, and a share
    /// that holds that many from its partitions read in order may send the rest empty: the
    /// coordinator takes the first rows in partition order, and every partition before the
    /// last one a share read was read whole by its share, so those rows are all there.
    pub fn enough(&self) -> Option<usize> {
        (self.cap != usize::MAX && self.top.is_none()).then_some(self.cap)
    }

    /// Whether the partitions it read went past the statement's bounds (the part that did is
    /// the bound's failure; the statement cannot hold this share's parts).
    pub fn over(&self) -> bool {
        self.held.over()
    }

    /// One partition's part, from its live entries (a point lookup's, or all).
    pub fn scan<'e>(&self, entries: impl Iterator<Item = (&'e [u8], &'e [u8])>) -> Part {
        if let Some(k) = self.top {
            return self.scan_top(k, entries);
        }
        match self.mode {
            Mode::Grouped => {
                let Some(grouping) = &self.plan.grouping else { return Part::Grouped(Table::default()) };
                let mut groups = Groups::new(grouping, self.held.bounds().rows);
                match self.each_passing(entries, |row, _, _| groups.add(row)) {
                    Ok(()) => Part::Grouped(groups.into_table()),
                    Err(error) => Part::Failed(error),
                }
            }
            _ => {
                let mut passed = Vec::new();
                let outcome = self.each_passing(entries, |_, key, value| {
                    self.held.add(1, held_bytes(key, value))?;
                    passed.push((key.to_vec(), value.to_vec()));
                    Ok(())
                });
                match outcome {
                    Ok(()) => Part::Filtered(passed),
                    Err(error) => Part::Failed(error),
                }
            }
        }
    }

    /// The part of an ORDER BY with a LIMIT: the partition's best `k` passing rows by the
    /// order (of equal keys, the first read), in the order they were read. Every row the
    /// coordinator's sort would place within OFFSET + LIMIT is one of its partition's best
    /// `k`, and the kept rows keep their order, so the (stable) sort over the parts gives
    /// the same rows. Every passing row's projection and keys are still evaluated: their
    /// errors fail the statement as when every row travelled.
    fn scan_top<'e>(&self, k: usize, entries: impl Iterator<Item = (&'e [u8], &'e [u8])>) -> Part {
        let order = &self.plan.order;
        let mut kept: Vec<Ranked> = Vec::new();
        let (mut failure, mut read, mut worst) = (None, 0, None::<Vec<Value>>);
        let outcome = self.each_passing(entries, |row, key, value| {
            for expr in &self.plan.projection {
                expr.eval(row)?;
            }
            let keys = order.iter().map(|key| key.expr.eval(row)).collect::<Result<Vec<_>>>()?;
            read += 1;
            let better = |worst: &Vec<Value>, failure: &mut _| order_cmp(order, &keys, worst, failure).is_lt();
            if k == 0 || worst.as_ref().is_some_and(|worst| !better(worst, &mut failure)) {
                return Ok(());
            }
            self.held.add(1, held_bytes(key, value))?;
            kept.push((keys, read, key.to_vec(), value.to_vec()));
            if kept.len() >= 2 * k {
                self.cut(&mut kept, k, &mut failure);
                worst = kept.last().map(|(keys, ..)| keys.clone());
            }
            Ok(())
        });
        self.cut(&mut kept, k, &mut failure);
        match (outcome, failure) {
            (Err(error), _) | (Ok(()), Some(error)) => Part::Failed(error),
            (Ok(()), None) => {
                kept.sort_unstable_by_key(|(_, read, ..)| *read);
                Part::Filtered(kept.into_iter().map(|(_, _, key, value)| (key, value)).collect())
            }
        }
    }

    /// Keeps the best `k` of `kept` (sorted by the order, then by when read) and gives back
    /// what the others held.
    fn cut(&self, kept: &mut Vec<Ranked>, k: usize, failure: &mut Option<SqlError>) {
        let order = &self.plan.order;
        kept.sort_by(|a, b| order_cmp(order, &a.0, &b.0, failure).then(a.1.cmp(&b.1)));
        if kept.len() > k {
            let bytes: usize = kept[k..].iter().map(|(_, _, key, value)| held_bytes(key, value)).sum();
            self.held.release(kept.len() - k, bytes);
            kept.truncate(k);
        }
    }

    /// Calls `found` with each row that passes the WHERE (and its entry), up to the cap.
    fn each_passing<'e>(
        &self,
        entries: impl Iterator<Item = (&'e [u8], &'e [u8])>,
        mut found: impl FnMut(&[Value], &[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut row = Vec::new();
        let mut count = 0;
        for (key, value) in entries {
            if count >= self.cap {
                break;
            }
            if !self.reader.read_into(key, value, &self.schemas, &mut row)? {
                continue;
            }
            if let Some(filter) = &self.plan.filter {
                if !filter.passes(&row)? {
                    continue;
                }
            }
            found(&row, key, value)?;
            count += 1;
        }
        Ok(())
    }
}

/// A row an ORDER BY with a LIMIT may send: its order keys, when it was read (its rank among
/// equal keys), its entry.
type Ranked = (Vec<Value>, usize, Vec<u8>, Vec<u8>);

/// How many rows each partition of `plan` sends when it is an ORDER BY with a LIMIT, under the
/// default bound on rows (EXPLAIN's `perPartition`).
pub fn top_of(plan: &SelectPlan) -> Option<usize> {
    top(plan, mode(plan), usize::MAX)
}

/// How many rows each partition of an ORDER BY with a LIMIT sends (None: every passing row):
/// OFFSET + LIMIT, when the rows are neither grouped nor DISTINCT, every order key is of a
/// type whose values always compare, and that many fit the statement's bound on rows.
fn top(plan: &SelectPlan, mode: Mode, max_rows: usize) -> Option<usize> {
    let comparable =
        plan.order.iter().all(|key| !matches!(key.expr.ty, SqlType::Object | SqlType::Json | SqlType::Null));
    let plain = mode == Mode::Filtered && !plan.distinct && plan.grouping.is_none() && !plan.order.is_empty();
    let limit = plan.limit.filter(|_| plain && comparable)?;
    Some(limit.saturating_add(plan.offset)).filter(|k| *k <= max_rows)
}

/// Runs `plan` over its shares' parts, in partition order; [`super::timed_out`] once
/// `deadline` has passed.
pub fn run_parts(
    plan: &SelectPlan,
    parts: impl IntoIterator<Item = Part>,
    schemas: &dyn SchemaSource,
    max_rows: usize,
    deadline: &super::Deadline,
) -> Result<ResultSet> {
    run_parts_within(plan, parts, schemas, (max_rows, deadline), (plan.offset, plan.limit))
}

/// [`run_parts`] for one round of a streamed query ([`streams`]): every row of its parts,
/// OFFSET and LIMIT left to the cursor, which counts them over the rounds.
pub fn run_round(
    plan: &SelectPlan,
    parts: impl IntoIterator<Item = Part>,
    schemas: &dyn SchemaSource,
    max_rows: usize,
    deadline: &super::Deadline,
) -> Result<ResultSet> {
    run_parts_within(plan, parts, schemas, (max_rows, deadline), (0, None))
}

/// Whether `plan`'s rows can be answered as the client fetches them, some partitions at a
/// time: the rows of one source that pass, in no order, neither grouped nor DISTINCT, and not
/// a point lookup (whose few partitions are read at once). Any other plan needs every
/// partition's rows before its first is known.
pub fn streams(plan: &SelectPlan) -> bool {
    mode(plan) == Mode::Filtered
        && plan.grouping.is_none()
        && plan.order.is_empty()
        && !plan.distinct
        && plan.sources.first().is_some_and(|source| source.keys.is_none())
}

fn run_parts_within(
    plan: &SelectPlan,
    parts: impl IntoIterator<Item = Part>,
    schemas: &dyn SchemaSource,
    (max_rows, deadline): (usize, &super::Deadline),
    window: (usize, Option<usize>),
) -> Result<ResultSet> {
    let mut sources: Option<Vec<Entries>> = None;
    let mut fold = Fold::new(plan, max_rows);
    let schemas = &LastSchema::new(schemas);
    let reader = match plan.sources.first() {
        Some(source) if mode(plan) != Mode::Sources => Some(RowReader::new(source, &used_columns(plan))?),
        _ => None,
    };
    for part in parts {
        super::check(deadline)?;
        match (part, &reader) {
            (Part::Failed(error), _) => return Err(error),
            (Part::Sources(found), _) => {
                let all = sources.get_or_insert_with(|| vec![Vec::new(); found.len()]);
                for (mine, entries) in all.iter_mut().zip(found) {
                    mine.extend(entries);
                }
            }
            (Part::Filtered(entries), Some(reader)) => {
                for (key, value) in &entries {
                    let mut row = Vec::new();
                    if reader.read_into(key, value, schemas, &mut row)? {
                        fold.add(row)?;
                    }
                }
            }
            (Part::Grouped(table), _) => match &mut fold.groups {
                Some(groups) => groups.merge(table)?,
                None => return Err(SqlError::generic("internal error: groups for a statement without GROUP BY")),
            },
            (Part::Filtered(_), None) => return Err(SqlError::generic("internal error: rows for a joined scan")),
        }
    }
    if mode(plan) == Mode::Sources {
        let sources = sources.unwrap_or_else(|| vec![Vec::new(); plan.sources.len()]);
        return super::run_within(plan, &sources, schemas, max_rows, deadline);
    }
    finish_within(plan, fold.finish()?, window)
}

// ------------------------------------------------------------------------------------------
// A part as bytes (a share on another member sends its parts to the coordinator).

const SOURCES: u8 = 0;
const FILTERED: u8 = 1;
const GROUPED: u8 = 2;
const FAILED: u8 = 3;

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn put_entries(out: &mut Vec<u8>, entries: &Entries) {
    out.extend_from_slice(&(entries.len() as u32).to_be_bytes());
    for (key, value) in entries {
        put_bytes(out, key);
        put_bytes(out, value);
    }
}

fn put_value(out: &mut Vec<u8>, value: Option<&Value>) -> std::result::Result<(), String> {
    match value {
        None => out.push(0),
        Some(value) => {
            out.push(1);
            ferrogrid_query::write::write_object(out, value, 0).map_err(|error| error.to_string())?;
        }
    }
    Ok(())
}

fn put_groups(out: &mut Vec<u8>, table: &Table) -> std::result::Result<(), String> {
    out.extend_from_slice(&(table.groups.len() as u32).to_be_bytes());
    for group in &table.groups {
        out.extend_from_slice(&(group.keys.len() as u32).to_be_bytes());
        for key in &group.keys {
            put_value(out, Some(key))?;
        }
        out.extend_from_slice(&(group.states.len() as u32).to_be_bytes());
        for state in &group.states {
            let (tag, count, value) = match state {
                State::Count(count) => (0u8, *count, None),
                State::Sum(sum) => (1, 0, sum.as_ref()),
                State::Avg { sum, count } => (2, *count, sum.as_ref()),
                State::Extreme(value) => (3, 0, value.as_ref()),
            };
            out.push(tag);
            out.extend_from_slice(&count.to_be_bytes());
            put_value(out, value)?;
        }
    }
    Ok(())
}

impl Part {
    /// Appends the part's bytes ([`Part::decode`] reads them back). A group whose values
    /// cannot be written is sent as the failure it is.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        match self {
            Part::Sources(sources) => {
                out.push(SOURCES);
                out.extend_from_slice(&(sources.len() as u32).to_be_bytes());
                sources.iter().for_each(|entries| put_entries(out, entries));
            }
            Part::Filtered(entries) => {
                out.push(FILTERED);
                put_entries(out, entries);
            }
            Part::Grouped(table) => {
                out.push(GROUPED);
                if let Err(why) = put_groups(out, table) {
                    out.truncate(start);
                    let error = SqlError::generic(format!("internal error: a share's groups cannot be sent: {why}"));
                    Part::Failed(error).encode(out);
                }
            }
            Part::Failed(error) => {
                out.push(FAILED);
                out.extend_from_slice(&error.code.value().to_be_bytes());
                put_bytes(out, error.message.as_bytes());
                put_bytes(out, error.suggestion.as_deref().unwrap_or("").as_bytes());
            }
        }
    }

    /// A part from [`Part::encode`]'s bytes; an error naming what is malformed.
    pub fn decode(bytes: &[u8], schemas: &dyn SchemaSource) -> std::result::Result<Part, String> {
        let mut input = Bytes { bytes, at: 0 };
        let part = match input.u8()? {
            SOURCES => {
                let count = input.u32()?.min(64);
                Part::Sources((0..count).map(|_| input.entries()).collect::<std::result::Result<_, _>>()?)
            }
            FILTERED => Part::Filtered(input.entries()?),
            GROUPED => Part::Grouped(input.groups(schemas)?),
            FAILED => {
                let code = Code::from_value(input.u32()? as i32);
                let message = String::from_utf8_lossy(input.bytes()?).into_owned();
                let suggestion = String::from_utf8_lossy(input.bytes()?).into_owned();
                Part::Failed(SqlError { code, message, suggestion: (!suggestion.is_empty()).then_some(suggestion) })
            }
            tag => return Err(format!("unknown part kind {tag}")),
        };
        match input.at == bytes.len() {
            true => Ok(part),
            false => Err("bytes after the part".to_owned()),
        }
    }
}

/// A reader over a part's bytes: every read checks that the bytes are there.
struct Bytes<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    fn take(&mut self, count: usize) -> std::result::Result<&'a [u8], String> {
        let end = self.at.checked_add(count).filter(|end| *end <= self.bytes.len());
        let end = end.ok_or_else(|| "a part shorter than it says".to_owned())?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u8(&mut self) -> std::result::Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().map_err(|_| "a short number")?))
    }

    fn i64(&mut self) -> std::result::Result<i64, String> {
        Ok(i64::from_be_bytes(self.take(8)?.try_into().map_err(|_| "a short number")?))
    }

    fn bytes(&mut self) -> std::result::Result<&'a [u8], String> {
        let length = self.u32()? as usize;
        self.take(length)
    }

    fn entries(&mut self) -> std::result::Result<Entries, String> {
        let count = self.u32()? as usize;
        let mut entries = Vec::with_capacity(count.min(self.bytes.len() / 8));
        for _ in 0..count {
            entries.push((self.bytes()?.to_vec(), self.bytes()?.to_vec()));
        }
        Ok(entries)
    }

    fn value(&mut self, schemas: &dyn SchemaSource) -> std::result::Result<Option<Value>, String> {
        if self.u8()? == 0 {
            return Ok(None);
        }
        let (value, end) =
            ferrogrid_query::data::read_object(self.bytes, self.at, schemas).map_err(|error| error.to_string())?;
        self.at = end;
        Ok(Some(value))
    }

    fn groups(&mut self, schemas: &dyn SchemaSource) -> std::result::Result<Table, String> {
        let count = self.u32()? as usize;
        let mut groups = Vec::with_capacity(count.min(self.bytes.len() / 8));
        for _ in 0..count {
            let keys = (0..self.u32()?)
                .map(|_| Ok(self.value(schemas)?.unwrap_or(Value::Null)))
                .collect::<std::result::Result<Vec<_>, String>>()?;
            let mut states = Vec::new();
            for _ in 0..self.u32()? {
                let (tag, count, value) = (self.u8()?, self.i64()?, self.value(schemas)?);
                states.push(match tag {
                    0 => State::Count(count),
                    1 => State::Sum(value),
                    2 => State::Avg { sum: value, count },
                    3 => State::Extreme(value),
                    _ => return Err(format!("unknown aggregate state {tag}")),
                });
            }
            groups.push(Group::new(keys, states));
        }
        Ok(Table::of(groups))
    }
}
