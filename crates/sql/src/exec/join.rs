//! Joins, left to right: each row of the left side with the right side's rows its ON
//! condition passes, in the right side's order (a LEFT join keeps an unmatched left row,
//! null-extended).
//!
//! Where ON has equalities between a left and a right column of one type whose equality is
//! exact (the integer types, VARCHAR, BOOLEAN), the right side is put in a hash table by those
//! columns once and each left row looks up its candidates: a hash join, in time linear in the
//! two sides and the rows joined instead of their product. ON is still evaluated on every
//! candidate, so the table only narrows what a nested loop would have tried; a row whose key
//! is null has no candidates (`=` with a null is unknown), and a value of another type than
//! its column's (which the reader should never give) makes that row try every row of the
//! other side, as the nested loop does. The table is bounded as the rows are: it holds one
//! key per right row, and the right side and the rows joined are each bounded by
//! `ferrogrid.limits.max-sql-rows-per-query`.

use super::{check, groups::row_key, too_many, Deadline};
use crate::error::Result;
use crate::expr::{Comparison, Expr, Kind};
use crate::plan::{Join, JoinKind, SelectPlan};
use crate::types::SqlType;
use ferrogrid_query::Value;
use std::collections::HashMap;

type Row = Vec<Value>;

/// Joins `tables` (the sources' rows, in the plan's order) as `plan.joins` say.
pub(super) fn join(
    plan: &SelectPlan,
    mut tables: Vec<Vec<Row>>,
    max_rows: usize,
    deadline: &Deadline,
) -> Result<Vec<Row>> {
    if tables.is_empty() {
        return Ok(vec![Vec::new()]);
    }
    let mut rows = std::mem::take(&mut tables[0]);
    let mut left_width = plan.sources[0].mapping.columns.len();
    for (index, join) in plan.joins.iter().enumerate() {
        let right = std::mem::take(&mut tables[index + 1]);
        let right_width = plan.sources[index + 1].mapping.columns.len();
        let sides = Sides { left: &rows, right: &right, left_width, right_width };
        rows = join_two(sides, join, max_rows, deadline)?;
        left_width += right_width;
    }
    Ok(rows)
}

/// The two sides of one join: the rows so far (`left_width` columns each) and the next
/// source's.
struct Sides<'r> {
    left: &'r [Row],
    right: &'r [Row],
    left_width: usize,
    right_width: usize,
}

fn join_two(sides: Sides<'_>, join: &Join, max_rows: usize, deadline: &Deadline) -> Result<Vec<Row>> {
    let keys = join.on.as_ref().map(|on| equalities(on, sides.left_width)).unwrap_or_default();
    let table = Buckets::build(sides.right, &keys);
    let mut joined = Vec::new();
    for left in sides.left {
        check(deadline)?;
        // the rows the table lists, or (no table, or a key it cannot describe) every row
        let (listed, every) = match table.as_ref().and_then(|table| table.candidates(left, &keys)) {
            Some(listed) => (listed, 0..0),
            None => (&[][..], 0..sides.right.len()),
        };
        let mut matched = false;
        for at in listed.iter().copied().chain(every) {
            let mut row = left.clone();
            row.extend(sides.right[at].iter().cloned());
            if join.on.as_ref().map_or(Ok(true), |on| on.passes(&row))? {
                matched = true;
                push(&mut joined, row, max_rows)?;
            }
        }
        if !matched && join.kind == JoinKind::Left {
            let mut row = left.clone();
            row.extend(std::iter::repeat_n(Value::Null, sides.right_width));
            push(&mut joined, row, max_rows)?;
        }
    }
    Ok(joined)
}

fn push(joined: &mut Vec<Row>, row: Row, max_rows: usize) -> Result<()> {
    if joined.len() >= max_rows {
        return Err(too_many(max_rows));
    }
    joined.push(row);
    Ok(())
}

/// One equality of ON usable as a hash key: a left column, a right column (its index in the
/// right side's rows) and their type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Equality {
    pub(super) left: usize,
    pub(super) right: usize,
    ty: SqlType,
}

/// The conjuncts of `on` that equal a left column (below `left_width`) to a right column of
/// the same exactly comparable type.
pub(super) fn equalities(on: &Expr, left_width: usize) -> Vec<Equality> {
    let mut keys = Vec::new();
    for conjunct in on.conjuncts() {
        let Kind::Compare(Comparison::Equal, a, b) = &conjunct.kind else { continue };
        let (Kind::Column(x), Kind::Column(y)) = (&a.kind, &b.kind) else { continue };
        if a.ty != b.ty || !exact(a.ty) {
            continue;
        }
        let (left, right) = if x < y { (*x, *y) } else { (*y, *x) };
        if left < left_width && right >= left_width {
            keys.push(Equality { left, right: right - left_width, ty: a.ty });
        }
    }
    keys
}

/// A type whose `=` is equality of the values' grouping identity (`row_key`).
fn exact(ty: SqlType) -> bool {
    matches!(
        ty,
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Integer | SqlType::BigInt | SqlType::Varchar | SqlType::Boolean
    )
}

/// Whether `value` is one `ty`'s hash key describes (a null is: it matches nothing).
fn keyable(ty: SqlType, value: &Value) -> bool {
    match (ty, value) {
        (_, Value::Null) => true,
        (SqlType::Varchar, Value::String(_)) | (SqlType::Boolean, Value::Bool(_)) => true,
        (SqlType::TinyInt | SqlType::SmallInt | SqlType::Integer | SqlType::BigInt, value) => {
            matches!(value, Value::Byte(_) | Value::Short(_) | Value::Int(_) | Value::Long(_))
        }
        _ => false,
    }
}

/// The right side's rows by their key (rows with a null in it are in no bucket), each
/// bucket in the rows' order.
struct Buckets {
    rows: HashMap<Vec<String>, Vec<usize>>,
}

impl Buckets {
    /// None when there is no key, or a right row's key has a value of another type.
    fn build(right: &[Row], keys: &[Equality]) -> Option<Buckets> {
        if keys.is_empty() {
            return None;
        }
        let mut rows: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
        for (at, row) in right.iter().enumerate() {
            let values: Vec<Value> = keys.iter().map(|key| row[key.right].clone()).collect();
            if keys.iter().zip(&values).any(|(key, value)| !keyable(key.ty, value)) {
                return None;
            }
            if values.iter().any(Value::is_null) {
                continue;
            }
            rows.entry(row_key(&values)).or_default().push(at);
        }
        Some(Buckets { rows })
    }

    /// The right rows `left` may join: none when its key has a null, None (every row) when a
    /// value of its key is of another type than its column's.
    fn candidates(&self, left: &Row, keys: &[Equality]) -> Option<&[usize]> {
        let values: Vec<Value> = keys.iter().map(|key| left[key.left].clone()).collect();
        if keys.iter().zip(&values).any(|(key, value)| !keyable(key.ty, value)) {
            return None;
        }
        if values.iter().any(Value::is_null) {
            return Some(&[]);
        }
        Some(self.rows.get(&row_key(&values)).map_or(&[][..], Vec::as_slice))
    }
}
