//! Runs a [`SelectPlan`] over the entries its sources' maps hold: rows read from entries,
//! joined, filtered, grouped, projected, made distinct, sorted and cut to OFFSET/LIMIT.
//!
//! Invariant: at most `max_rows` rows are held at any step; more is an error naming the bound
//! (the member's `sql.max-rows-per-query`), never an unbounded allocation.

pub use crate::catalog::Entries;
use crate::error::{Result, SqlError};
use crate::expr::{self, compare, Expr};
use crate::plan::{AggregateCall, AggregateFunction, ColumnMeta, JoinKind, SelectPlan};
use crate::types::{self, SqlType};
use ferrogrid_query::compact::SchemaSource;
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::Value;
use num_bigint::BigInt;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// A query's result: its columns and rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<ColumnMeta>,
    pub rows: Vec<Vec<Value>>,
}

fn too_many(max_rows: usize) -> SqlError {
    SqlError::data(format!(
        "The query holds more than {max_rows} rows on the coordinating member (sql.max-rows-per-query); add a WHERE or LIMIT"
    ))
}

/// Reads a source's rows from its entries: only the columns the statement uses (the others
/// stay null), each through a path parsed once.
struct RowReader<'a> {
    mapping: &'a crate::catalog::Mapping,
    reads: Vec<(usize, Option<ferrogrid_query::path::Path>)>,
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
        Ok(RowReader { mapping, reads })
    }

    /// The entry's row, or None for an entry of another Compact type or Portable class.
    fn read(&self, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Result<Option<Vec<Value>>> {
        if !self.mapping.accepts(value, schemas) {
            return Ok(None);
        }
        let mut row = vec![Value::Null; self.mapping.columns.len()];
        for (index, path) in &self.reads {
            row[*index] = self.mapping.read_at(*index, path.as_ref(), key, value, schemas)?;
        }
        Ok(Some(row))
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

/// Reads every source's rows: one row per accepted entry, every column of the mapping.
fn read_rows(
    plan: &SelectPlan,
    inputs: &[Entries],
    schemas: &dyn SchemaSource,
    max_rows: usize,
) -> Result<Vec<Vec<Vec<Value>>>> {
    let used = used_columns(plan);
    let schemas = &LastSchema::new(schemas);
    let mut tables = Vec::with_capacity(plan.sources.len());
    for (source, entries) in plan.sources.iter().zip(inputs) {
        let entries = source.inline.as_ref().unwrap_or(entries);
        if entries.len() > max_rows {
            return Err(too_many(max_rows));
        }
        let reader = RowReader::new(source, &used)?;
        let mut rows = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            rows.extend(reader.read(key, value, schemas)?);
        }
        tables.push(rows);
    }
    Ok(tables)
}

/// One source without joins, read entry by entry: each row is filtered as it is read and, in
/// a grouped statement, folded into its group, so only the rows that pass (or the groups) are
/// held, never the whole map.
fn scan(plan: &SelectPlan, entries: &Entries, schemas: &dyn SchemaSource, max_rows: usize) -> Result<Vec<Vec<Value>>> {
    let source = &plan.sources[0];
    let entries = source.inline.as_ref().unwrap_or(entries);
    let reader = RowReader::new(source, &used_columns(plan))?;
    let schemas = &LastSchema::new(schemas);
    let mut groups = plan.grouping.as_ref().map(|grouping| Groups::new(grouping, max_rows));
    let mut rows = Vec::new();
    for (key, value) in entries {
        let Some(row) = reader.read(key, value, schemas)? else { continue };
        if let Some(filter) = &plan.filter {
            if !filter.passes(&row)? {
                continue;
            }
        }
        match &mut groups {
            Some(groups) => groups.add(&row)?,
            None if rows.len() >= max_rows => return Err(too_many(max_rows)),
            None => rows.push(row),
        }
    }
    match groups {
        Some(groups) => groups.finish(),
        None => Ok(rows),
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

/// Joins the sources' rows left to right (nested loops; an equality between the new source's
/// column and earlier columns is a hash join).
fn join(plan: &SelectPlan, mut tables: Vec<Vec<Vec<Value>>>, max_rows: usize) -> Result<Vec<Vec<Value>>> {
    if tables.is_empty() {
        return Ok(vec![Vec::new()]);
    }
    let mut rows = std::mem::take(&mut tables[0]);
    for (index, join) in plan.joins.iter().enumerate() {
        let right = std::mem::take(&mut tables[index + 1]);
        let width = plan.sources[index + 1].mapping.columns.len();
        let mut joined = Vec::new();
        for left in &rows {
            let mut matched = false;
            for candidate in &right {
                let mut row = left.clone();
                row.extend(candidate.iter().cloned());
                let passes = match &join.on {
                    Some(on) => on.passes(&row)?,
                    None => true,
                };
                if passes {
                    matched = true;
                    if joined.len() >= max_rows {
                        return Err(too_many(max_rows));
                    }
                    joined.push(row);
                }
            }
            if !matched && join.kind == JoinKind::Left {
                let mut row = left.clone();
                row.extend(std::iter::repeat_n(Value::Null, width));
                joined.push(row);
            }
        }
        rows = joined;
    }
    Ok(rows)
}

/// Runs `plan` over its sources' entries (one `Entries` per source, in order).
pub fn run(plan: &SelectPlan, inputs: &[Entries], schemas: &dyn SchemaSource, max_rows: usize) -> Result<ResultSet> {
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
            rows.extend(run(branch, &inputs[at..at + count], schemas, max_rows)?.rows);
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
    let mut rows = join(plan, tables, max_rows)?;
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
    // project, keeping the order keys beside each row
    let mut projected: Vec<(Vec<Value>, Vec<Value>)> = Vec::with_capacity(rows.len());
    for row in &rows {
        let values = plan.projection.iter().map(|e| e.eval(row)).collect::<Result<Vec<_>>>()?;
        let keys = plan.order.iter().map(|k| k.expr.eval(row)).collect::<Result<Vec<_>>>()?;
        projected.push((values, keys));
    }
    if plan.distinct {
        let mut seen = HashSet::new();
        projected.retain(|(values, _)| seen.insert(row_key(values)));
    }
    if !plan.order.is_empty() {
        let mut failure = None;
        projected.sort_by(|(_, a), (_, b)| {
            for (index, key) in plan.order.iter().enumerate() {
                let ordering = match (a[index].is_null(), b[index].is_null()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => {
                        if key.nulls_first {
                            Ordering::Less
                        } else {
                            Ordering::Greater
                        }
                    }
                    (false, true) => {
                        if key.nulls_first {
                            Ordering::Greater
                        } else {
                            Ordering::Less
                        }
                    }
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
        });
        if let Some(error) = failure {
            return Err(error);
        }
    }
    let rows: Vec<Vec<Value>> = projected
        .into_iter()
        .skip(plan.offset)
        .take(plan.limit.unwrap_or(usize::MAX))
        .map(|(values, _)| values)
        .collect();
    Ok(ResultSet { columns: plan.columns.clone(), rows })
}

/// A hashable identity of a row (for DISTINCT and COUNT(DISTINCT ...)): each value's
/// [`KeyPart`], the identity grouping uses too.
fn row_key(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .map(|value| match key_part(value) {
            KeyPart::Null => "\0null".to_owned(),
            KeyPart::Integer(v) => format!("i{v}"),
            KeyPart::Float(bits) => format!("f{bits:x}"),
            KeyPart::Text(text) => format!("s{text}"),
            KeyPart::Other(text) => text,
        })
        .collect()
}

fn strip(decimal: &BigDecimal) -> String {
    let text = decimal.to_string();
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// One aggregate's running state.
#[derive(Debug, Clone)]
enum State {
    Count(i64),
    Sum(Option<Value>),
    Avg { sum: Option<Value>, count: i64 },
    Extreme(Option<Value>),
}

fn add(sum: Option<Value>, value: &Value, ty: SqlType) -> Result<Value> {
    let Some(sum) = sum else {
        return expr::to_type(value.clone(), ty);
    };
    expr::arithmetic(expr::Arithmetic::Add, &sum, value, ty).map_err(|error| {
        if error.message.contains("overflow") {
            SqlError::data(format!(
                "{} overflow in 'SUM' function (consider adding an explicit CAST to DECIMAL)",
                ty.name()
            ))
        } else {
            error
        }
    })
}

struct Group {
    keys: Vec<Value>,
    states: Vec<State>,
    distinct: Vec<HashSet<Vec<String>>>,
}

/// The groups of a grouped statement, folded row by row: each group's keys and its
/// aggregates' running states, found by a hash of the keys (numbers by value, as
/// `row_key`) without building a key per row.
struct Groups<'p> {
    grouping: &'p crate::plan::Grouping,
    groups: Vec<Group>,
    index: HashMap<u64, Vec<usize>>,
    max_rows: usize,
}

impl<'p> Groups<'p> {
    fn new(grouping: &'p crate::plan::Grouping, max_rows: usize) -> Groups<'p> {
        Groups { grouping, groups: Vec::new(), index: HashMap::new(), max_rows }
    }

    fn new_states(&self) -> Vec<State> {
        self.grouping
            .calls
            .iter()
            .map(|call| match call.function {
                AggregateFunction::CountAll | AggregateFunction::Count => State::Count(0),
                AggregateFunction::Sum => State::Sum(None),
                AggregateFunction::Avg => State::Avg { sum: None, count: 0 },
                AggregateFunction::Min | AggregateFunction::Max => State::Extreme(None),
            })
            .collect()
    }

    fn add(&mut self, row: &[Value]) -> Result<()> {
        let keys = self.grouping.keys.iter().map(|k| k.eval(row)).collect::<Result<Vec<_>>>()?;
        let hash = key_hash(&keys);
        let found = self.index.get(&hash).and_then(|slots| {
            slots.iter().copied().find(|&slot| {
                let group = &self.groups[slot].keys;
                group.len() == keys.len() && group.iter().zip(&keys).all(|(a, b)| same_key(a, b))
            })
        });
        let slot = match found {
            Some(slot) => slot,
            None => {
                if self.groups.len() >= self.max_rows {
                    return Err(too_many(self.max_rows));
                }
                let distinct = vec![HashSet::new(); self.grouping.calls.len()];
                self.groups.push(Group { keys, states: self.new_states(), distinct });
                self.index.entry(hash).or_default().push(self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[slot];
        for (call_index, call) in self.grouping.calls.iter().enumerate() {
            accumulate(call, &mut group.states[call_index], &mut group.distinct[call_index], row)?;
        }
        Ok(())
    }

    /// The grouped rows (keys, then aggregates) that pass HAVING; one row of aggregates over
    /// nothing when the statement has no GROUP BY and no row came.
    fn finish(mut self) -> Result<Vec<Vec<Value>>> {
        if self.groups.is_empty() && self.grouping.keys.is_empty() {
            self.groups.push(Group { keys: Vec::new(), states: self.new_states(), distinct: Vec::new() });
        }
        let mut out = Vec::with_capacity(self.groups.len());
        for group in self.groups {
            let mut row = group.keys;
            for (call, state) in self.grouping.calls.iter().zip(group.states) {
                row.push(aggregate_result(call, state)?);
            }
            if let Some(having) = &self.grouping.having {
                if !having.passes(&row)? {
                    continue;
                }
            }
            out.push(row);
        }
        Ok(out)
    }
}

/// A value as grouping and DISTINCT tell values apart: integers by value, floating point by
/// bits (NaN as one), text by its characters, decimals without trailing zeros (`d…`) and
/// anything else by its debug form (a capitalized variant name), so no two kinds meet.
enum KeyPart<'a> {
    Null,
    Integer(i128),
    Float(u64),
    Text(&'a str),
    Other(String),
}

fn key_part(value: &Value) -> KeyPart<'_> {
    match value {
        Value::Null => KeyPart::Null,
        Value::Byte(_) | Value::Short(_) | Value::Int(_) | Value::Long(_) => {
            KeyPart::Integer(types::to_integer(value).unwrap_or(0))
        }
        Value::Float(_) | Value::Double(_) => {
            let v = types::to_double(value).unwrap_or(0.0);
            KeyPart::Float(if v.is_nan() { f64::NAN.to_bits() } else { v.to_bits() })
        }
        Value::String(text) => KeyPart::Text(text),
        Value::BigDecimal(d) => KeyPart::Other(format!("d{}", strip(d))),
        other => KeyPart::Other(format!("{other:?}")),
    }
}

fn same_key(a: &Value, b: &Value) -> bool {
    match (key_part(a), key_part(b)) {
        (KeyPart::Null, KeyPart::Null) => true,
        (KeyPart::Integer(x), KeyPart::Integer(y)) => x == y,
        (KeyPart::Float(x), KeyPart::Float(y)) => x == y,
        (KeyPart::Text(x), KeyPart::Text(y)) => x == y,
        (KeyPart::Other(x), KeyPart::Other(y)) => x == y,
        _ => false,
    }
}

fn key_hash(keys: &[Value]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for key in keys {
        match key_part(key) {
            KeyPart::Null => 0u8.hash(&mut hasher),
            KeyPart::Integer(v) => (1u8, v).hash(&mut hasher),
            KeyPart::Float(v) => (2u8, v).hash(&mut hasher),
            KeyPart::Text(v) => (3u8, v).hash(&mut hasher),
            KeyPart::Other(v) => (4u8, v).hash(&mut hasher),
        }
    }
    hasher.finish()
}

fn accumulate(call: &AggregateCall, state: &mut State, seen: &mut HashSet<Vec<String>>, row: &[Value]) -> Result<()> {
    let value = match &call.argument {
        Some(argument) => argument.eval(row)?,
        None => Value::Bool(true),
    };
    if value.is_null() {
        return Ok(());
    }
    if call.distinct && !seen.insert(row_key(std::slice::from_ref(&value))) {
        return Ok(());
    }
    match state {
        State::Count(count) => *count += 1,
        State::Sum(sum) => *sum = Some(add(sum.take(), &value, call.ty)?),
        State::Avg { sum, count } => {
            let ty = if call.ty == SqlType::Decimal { SqlType::Decimal } else { call.ty };
            *sum = Some(add(sum.take(), &value, ty)?);
            *count += 1;
        }
        State::Extreme(current) => {
            let replace = match current {
                None => true,
                Some(current) => {
                    let ordering = compare(&value, current)?.unwrap_or(Ordering::Equal);
                    if call.function == AggregateFunction::Min {
                        ordering == Ordering::Less
                    } else {
                        ordering == Ordering::Greater
                    }
                }
            };
            if replace {
                *current = Some(value);
            }
        }
    }
    Ok(())
}

fn aggregate_result(call: &AggregateCall, state: State) -> Result<Value> {
    Ok(match state {
        State::Count(count) => Value::Long(count),
        State::Sum(sum) => sum.unwrap_or(Value::Null),
        State::Avg { sum: None, .. } => Value::Null,
        State::Avg { sum: Some(sum), count } => match call.ty {
            SqlType::Decimal => {
                let sum = types::to_decimal(&sum).ok_or_else(|| SqlError::data("AVG of a non-number"))?;
                Value::BigDecimal(expr::divide_decimal(&sum, &BigDecimal::new(BigInt::from(count), 0), 76))
            }
            SqlType::Real => Value::Float((types::to_double(&sum).unwrap_or(0.0) / count as f64) as f32),
            _ => Value::Double(types::to_double(&sum).unwrap_or(0.0) / count as f64),
        },
        State::Extreme(value) => value.unwrap_or(Value::Null),
    })
}

/// A run-time failure as Hazelcast reports it: from a single-key plan (a point lookup whose
/// WHERE is the key's equality alone) as the bare `QueryException` (GENERIC), from any other
/// plan as a failed Jet job whose processor threw it (data errors keep DATA_EXCEPTION). `job`
/// names the job in the text.
pub fn runtime_error(plan: &SelectPlan, error: SqlError, job: u64) -> SqlError {
    use crate::error::Code;
    if matches!(error.code, Code::Parsing | Code::ObjectNotFound) {
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

/// EXPLAIN's one line: how each source is read.
pub fn explain(plan: &SelectPlan) -> String {
    let mut parts = Vec::new();
    for source in &plan.sources {
        let projects: Vec<String> = (0..source.mapping.visible().count()).map(|i| format!("${i}")).collect();
        let table = format!("[[hazelcast, public, {}[projects=[{}]]]]", source.mapping.name, projects.join(", "));
        parts.push(match &source.keys {
            Some(_) => format!("IMapIndexScanOrKeyLookupRel(table={table})"),
            None => format!("FullScanPhysicalRel(table={table}, discriminator=[0])"),
        });
    }
    if parts.is_empty() {
        return "ValuesPhysicalRel".to_owned();
    }
    parts.join(", ")
}

/// Evaluates a constant expression (VALUES rows, SELECT without FROM).
pub fn constant(expr: &Expr) -> Result<Value> {
    expr.eval(&[])
}
