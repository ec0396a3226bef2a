//! Grouping: the groups of a grouped statement, each its keys and its aggregates' running
//! states, folded row by row; and the identity DISTINCT and grouping tell values apart by.
//!
//! A [`Table`] of groups is owned (no borrow of the plan), so a share of a scan can fold its
//! partitions' rows into one and the coordinator can [`Groups::merge`] them, partition by
//! partition, into the statement's: the groups then come out in the order a single scan of
//! the partitions in order would have met them.

use crate::error::{Result, SqlError};
use crate::expr::{self, compare};
use crate::plan::{AggregateCall, AggregateFunction, Grouping};
use crate::types::{self, SqlType};
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::Value;
use num_bigint::BigInt;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// A hashable identity of a row (for DISTINCT and COUNT(DISTINCT ...)): each value's
/// [`KeyPart`], the identity grouping uses too.
pub(crate) fn row_key(values: &[Value]) -> Vec<String> {
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
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum State {
    Count(i64),
    Sum(Option<Value>),
    Avg { sum: Option<Value>, count: i64 },
    Extreme(Option<Value>),
}

fn add(sum: Option<Value>, value: &Value, ty: SqlType) -> Result<Value> {
    let Some(sum) = sum else {
        return expr::to_type(value.clone(), ty);
    };
    // (the commonest sums without the general arithmetic's conversions: the same results)
    match (&sum, value, ty) {
        (Value::Double(sum), Value::Double(value), SqlType::Double) => return Ok(Value::Double(sum + value)),
        (Value::Long(sum), Value::Long(_) | Value::Int(_) | Value::Short(_) | Value::Byte(_), SqlType::BigInt) => {
            let value = types::to_integer(value).and_then(|value| i64::try_from(value).ok());
            return match value.and_then(|value| sum.checked_add(value)) {
                Some(total) => Ok(Value::Long(total)),
                None => Err(sum_overflow(ty)),
            };
        }
        _ => {}
    }
    expr::arithmetic(expr::Arithmetic::Add, &sum, value, ty).map_err(|error| {
        if error.message.contains("overflow") {
            sum_overflow(ty)
        } else {
            error
        }
    })
}

fn sum_overflow(ty: SqlType) -> SqlError {
    SqlError::data(format!("{} overflow in 'SUM' function (consider adding an explicit CAST to DECIMAL)", ty.name()))
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    pub(crate) keys: Vec<Value>,
    pub(crate) states: Vec<State>,
    distinct: Vec<HashSet<Vec<String>>>,
}

/// Groups found by a hash of their keys (numbers by value, as `row_key`), in the order they
/// were first met.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub(crate) groups: Vec<Group>,
    index: HashMap<u64, Vec<usize>, Unhashed>,
}

/// The index's keys are [`key_hash`]es already.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Unhashed;

impl std::hash::BuildHasher for Unhashed {
    type Hasher = UnhashedHasher;
    fn build_hasher(&self) -> UnhashedHasher {
        UnhashedHasher(0)
    }
}

#[derive(Debug, Default)]
struct UnhashedHasher(u64);

impl std::hash::Hasher for UnhashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |hash, byte| hash.rotate_left(8) ^ u64::from(*byte));
    }
    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}

impl Table {
    fn find<K: std::borrow::Borrow<Value>>(&self, hash: u64, keys: &[K]) -> Option<usize> {
        self.index.get(&hash).and_then(|slots| {
            slots.iter().copied().find(|&slot| {
                let group = &self.groups[slot].keys;
                group.len() == keys.len() && group.iter().zip(keys).all(|(a, b)| same_key(a, b.borrow()))
            })
        })
    }

    /// How many groups it holds.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// A table of these groups, in this order (a share's groups read back).
    pub(crate) fn of(groups: Vec<Group>) -> Table {
        let mut table = Table::default();
        for group in groups {
            let hash = key_hash(&group.keys);
            table.index.entry(hash).or_default().push(table.groups.len());
            table.groups.push(group);
        }
        table
    }
}

impl Group {
    pub(crate) fn new(keys: Vec<Value>, states: Vec<State>) -> Group {
        Group { keys, states, distinct: Vec::new() }
    }
}

/// The groups of a grouped statement, folded row by row or merged from shares' tables.
pub(crate) struct Groups<'p> {
    grouping: &'p Grouping,
    table: Table,
    max_rows: usize,
}

impl<'p> Groups<'p> {
    pub(crate) fn new(grouping: &'p Grouping, max_rows: usize) -> Groups<'p> {
        Groups { grouping, table: Table::default(), max_rows }
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

    /// The slot of the group of `keys`, a new one (with the keys copied) if none has them yet.
    fn slot<K: std::borrow::Borrow<Value>>(&mut self, keys: Vec<K>, copy: impl Fn(K) -> Value) -> Result<usize> {
        let hash = key_hash(&keys);
        if let Some(slot) = self.table.find(hash, &keys) {
            return Ok(slot);
        }
        let keys: Vec<Value> = keys.into_iter().map(copy).collect();
        if self.table.groups.len() >= self.max_rows {
            return Err(super::too_many(self.max_rows));
        }
        let distinct = vec![HashSet::new(); self.grouping.calls.len()];
        self.table.groups.push(Group { keys, states: self.new_states(), distinct });
        self.table.index.entry(hash).or_default().push(self.table.groups.len() - 1);
        Ok(self.table.groups.len() - 1)
    }

    pub(crate) fn add(&mut self, row: &[Value]) -> Result<()> {
        // (keys borrowed from the row where they are columns: copied only for a new group)
        let keys = self.grouping.keys.iter().map(|k| k.operand(row)).collect::<Result<Vec<_>>>()?;
        let slot = self.slot(keys, std::borrow::Cow::into_owned)?;
        let group = &mut self.table.groups[slot];
        for (call_index, call) in self.grouping.calls.iter().enumerate() {
            accumulate(call, &mut group.states[call_index], &mut group.distinct[call_index], row)?;
        }
        Ok(())
    }

    /// Folds another fold's groups (a share's, of later partitions) into these: its groups'
    /// states merged into the same keys' here, new keys appended in its order. Only for
    /// statements without DISTINCT aggregates (a share cannot merge what it counted once).
    pub(crate) fn merge(&mut self, other: Table) -> Result<()> {
        for group in other.groups {
            let slot = self.slot(group.keys, |key| key)?;
            let mine = &mut self.table.groups[slot];
            for ((call, state), other) in self.grouping.calls.iter().zip(&mut mine.states).zip(group.states) {
                merge_state(call, state, other)?;
            }
        }
        Ok(())
    }

    /// The groups as they stand, for a share to send.
    pub(crate) fn into_table(self) -> Table {
        self.table
    }

    /// The grouped rows (keys, then aggregates) that pass HAVING; one row of aggregates over
    /// nothing when the statement has no GROUP BY and no row came.
    pub(crate) fn finish(mut self) -> Result<Vec<Vec<Value>>> {
        if self.table.groups.is_empty() && self.grouping.keys.is_empty() {
            let states = self.new_states();
            self.table.groups.push(Group { keys: Vec::new(), states, distinct: Vec::new() });
        }
        let mut out = Vec::with_capacity(self.table.groups.len());
        for group in self.table.groups {
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

/// The hash of a group's keys (by their [`KeyPart`]s), with a key drawn once per process.
fn key_hash<K: std::borrow::Borrow<Value>>(keys: &[K]) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    static STATE: std::sync::OnceLock<ahash::RandomState> = std::sync::OnceLock::new();
    let mut hasher = STATE.get_or_init(ahash::RandomState::new).build_hasher();
    for key in keys {
        match key_part(key.borrow()) {
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
        Some(argument) => argument.operand(row)?,
        None => std::borrow::Cow::Owned(Value::Bool(true)),
    };
    if value.is_null() {
        return Ok(());
    }
    if call.distinct && !seen.insert(row_key(std::slice::from_ref(&*value))) {
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
        State::Extreme(current) => extreme(call, current, value)?,
    }
    Ok(())
}

/// MIN or MAX: `value` replaces `current` when it is smaller (larger).
fn extreme(call: &AggregateCall, current: &mut Option<Value>, value: std::borrow::Cow<'_, Value>) -> Result<()> {
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
        *current = Some(value.into_owned());
    }
    Ok(())
}

/// Another fold's state of the same call and group merged into `state`.
fn merge_state(call: &AggregateCall, state: &mut State, other: State) -> Result<()> {
    match (state, other) {
        (State::Count(count), State::Count(more)) => *count += more,
        (State::Sum(sum), State::Sum(Some(more))) => *sum = Some(add(sum.take(), &more, call.ty)?),
        (State::Avg { sum, count }, State::Avg { sum: Some(more), count: more_count }) => {
            *sum = Some(add(sum.take(), &more, call.ty)?);
            *count += more_count;
        }
        (State::Extreme(current), State::Extreme(Some(value))) => {
            extreme(call, current, std::borrow::Cow::Owned(value))?
        }
        (State::Sum(_) | State::Avg { .. } | State::Extreme(_), State::Sum(None) | State::Avg { sum: None, .. })
        | (State::Extreme(_), State::Extreme(None)) => {}
        _ => return Err(SqlError::generic("internal error: a share's aggregate state of another kind")),
    }
    Ok(())
}

pub(crate) fn aggregate_result(call: &AggregateCall, state: State) -> Result<Value> {
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
