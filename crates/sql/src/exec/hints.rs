//! What an index could narrow a scan to: the equality, IN and range terms of a single-source
//! statement's WHERE (itself, or the items of its top-level AND) that compare a column read
//! straight from an attribute with a constant. The member looks them up in the partitions'
//! indexes (Hazelcast's `IndexConfig`, as the predicate API uses them); every entry an index
//! returns is still read and tested with the whole WHERE, so a hint only has to name a
//! superset of the rows that pass.

use crate::expr::{Comparison, Expr, Kind};
use crate::plan::SelectPlan;
use ferrogrid_query::path::Root;
use ferrogrid_query::Value;

/// One term an index may serve, on `attribute` as indexes name it (`price`, `__key`).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexHint {
    pub attribute: String,
    pub term: HintTerm,
}

#[derive(Debug, Clone, PartialEq)]
pub enum HintTerm {
    Equal(Value),
    In(Vec<Value>),
    /// Either bound open (None); each bound with whether it is inclusive.
    Range {
        from: Option<(Value, bool)>,
        to: Option<(Value, bool)>,
    },
}

/// The hints of `plan`'s WHERE (none for joins, UNIONs and sources the statement supplies).
pub fn index_hints(plan: &SelectPlan) -> Vec<IndexHint> {
    let (Some(filter), [source]) = (&plan.filter, &plan.sources[..]) else { return Vec::new() };
    if plan.union.is_some() || source.inline.is_some() {
        return Vec::new();
    }
    let attribute = |expr: &Expr| -> Option<String> {
        let Kind::Column(at) = expr.kind else { return None };
        let index = at.checked_sub(source.offset).filter(|index| *index < source.mapping.columns.len())?;
        let path = source.mapping.path(index).ok()?;
        match path {
            None => Some(
                if source.mapping.columns[index].half == crate::catalog::Half::Key { "__key" } else { "this" }
                    .to_owned(),
            ),
            Some(path) if path.root() == Root::Value => Some(path.attribute().to_owned()),
            Some(_) => None,
        }
    };
    filter.conjuncts().into_iter().filter_map(|item| hint(item, &attribute)).collect()
}

fn constant(expr: &Expr) -> Option<&Value> {
    match &expr.kind {
        Kind::Literal(value) | Kind::Parameter { value, .. } => Some(value),
        _ => None,
    }
}

fn hint(item: &Expr, attribute: &impl Fn(&Expr) -> Option<String>) -> Option<IndexHint> {
    let (attribute, term) = match &item.kind {
        Kind::Compare(op, left, right) => {
            let (column, value, op) = match (attribute(left), constant(right), attribute(right), constant(left)) {
                (Some(column), Some(value), _, _) => (column, value.clone(), *op),
                (_, _, Some(column), Some(value)) => (column, value.clone(), flipped(*op)?),
                _ => return None,
            };
            let term = match op {
                Comparison::Equal => HintTerm::Equal(value),
                Comparison::NotEqual => return None,
                Comparison::Less | Comparison::LessOrEqual => {
                    HintTerm::Range { from: None, to: Some((value, op == Comparison::LessOrEqual)) }
                }
                Comparison::Greater | Comparison::GreaterOrEqual => {
                    HintTerm::Range { from: Some((value, op == Comparison::GreaterOrEqual)), to: None }
                }
            };
            (column, term)
        }
        Kind::Between { operand, low, high, negated: false, symmetric: false } => {
            let range = HintTerm::Range {
                from: Some((constant(low)?.clone(), true)),
                to: Some((constant(high)?.clone(), true)),
            };
            (attribute(operand)?, range)
        }
        Kind::In { operand, list, negated: false } => {
            let values = list.iter().map(|item| constant(item).cloned()).collect::<Option<Vec<_>>>()?;
            (attribute(operand)?, HintTerm::In(values))
        }
        _ => return None,
    };
    (!matches!(&term, HintTerm::Equal(Value::Null))).then_some(IndexHint { attribute, term })
}

/// `value op column` as `column op' value`.
fn flipped(op: Comparison) -> Option<Comparison> {
    Some(match op {
        Comparison::Equal => Comparison::Equal,
        Comparison::NotEqual => return None,
        Comparison::Less => Comparison::Greater,
        Comparison::LessOrEqual => Comparison::GreaterOrEqual,
        Comparison::Greater => Comparison::Less,
        Comparison::GreaterOrEqual => Comparison::LessOrEqual,
    })
}
