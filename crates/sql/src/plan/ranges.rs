//! Calcite's range reasoning (its `Sarg`s), as far as it decides that an AND selects nothing:
//! comparisons of one column with literals and IN lists of literals whose allowed values do
//! not meet (`name < ' pad ' AND name IN ('ann', 'bob')`: no name is both). Such an AND is
//! false before any row is read, so nothing else in it is computed.

use crate::expr::{compare, Comparison, Expr, Kind};
use ferrogrid_query::Value;
use std::cmp::Ordering;

/// What the operands of one AND allow one column to be.
#[derive(Default)]
struct Allowed<'a> {
    /// The greatest lower bound and whether it is included.
    lower: Option<(&'a Value, bool)>,
    upper: Option<(&'a Value, bool)>,
    /// The values an `=` or an IN list allows (None: any).
    points: Option<Vec<&'a Value>>,
    excluded: Vec<&'a Value>,
}

/// Whether the operands of an AND (where unknown is false) allow no row: some column's
/// comparisons with literals cannot all hold. Values that do not compare decide nothing.
pub fn contradictory(operands: &[Expr]) -> bool {
    let mut columns: Vec<(usize, Allowed)> = Vec::new();
    for operand in operands {
        let Some((column, constraint)) = constraint(operand) else { continue };
        let index = match columns.iter().position(|(c, _)| *c == column) {
            Some(index) => index,
            None => {
                columns.push((column, Allowed::default()));
                columns.len() - 1
            }
        };
        if !columns[index].1.narrow(constraint) {
            return false;
        }
    }
    columns.iter().any(|(_, allowed)| allowed.empty() == Some(true))
}

enum Constraint<'a> {
    Compare(Comparison, &'a Value),
    In(Vec<&'a Value>),
}

fn constraint(expr: &Expr) -> Option<(usize, Constraint<'_>)> {
    match &expr.kind {
        Kind::Compare(op, left, right) => match (&left.kind, &right.kind) {
            (Kind::Column(c), _) => Some((*c, Constraint::Compare(*op, literal(right)?))),
            (_, Kind::Column(c)) => Some((*c, Constraint::Compare(flipped(*op), literal(left)?))),
            _ => None,
        },
        Kind::In { operand, list, negated: false } => match operand.kind {
            Kind::Column(c) => Some((c, Constraint::In(list.iter().map(literal).collect::<Option<_>>()?))),
            _ => None,
        },
        _ => None,
    }
}

/// A literal's value; not a parameter's (`Expr::constant`): Hazelcast plans a statement before
/// its parameters are bound, so a parameter decides nothing here.
fn literal(expr: &Expr) -> Option<&Value> {
    match &expr.kind {
        Kind::Literal(value) if !value.is_null() => Some(value),
        _ => None,
    }
}

fn flipped(op: Comparison) -> Comparison {
    match op {
        Comparison::Less => Comparison::Greater,
        Comparison::LessOrEqual => Comparison::GreaterOrEqual,
        Comparison::Greater => Comparison::Less,
        Comparison::GreaterOrEqual => Comparison::LessOrEqual,
        other => other,
    }
}

fn order(left: &Value, right: &Value) -> Option<Ordering> {
    compare(left, right).ok().flatten()
}

impl<'a> Allowed<'a> {
    /// Adds a constraint; false where its value does not compare with the others.
    fn narrow(&mut self, constraint: Constraint<'a>) -> bool {
        match constraint {
            Constraint::Compare(Comparison::Equal, value) => self.points(vec![value]),
            Constraint::In(values) => self.points(values),
            Constraint::Compare(Comparison::NotEqual, value) => {
                self.excluded.push(value);
                true
            }
            Constraint::Compare(op, value) => {
                let inclusive = matches!(op, Comparison::LessOrEqual | Comparison::GreaterOrEqual);
                let (bound, tighter) = match op {
                    Comparison::Less | Comparison::LessOrEqual => (&mut self.upper, Ordering::Less),
                    _ => (&mut self.lower, Ordering::Greater),
                };
                match *bound {
                    None => *bound = Some((value, inclusive)),
                    Some((current, current_inclusive)) => match order(value, current) {
                        None => return false,
                        Some(o) if o == tighter => *bound = Some((value, inclusive)),
                        Some(Ordering::Equal) => *bound = Some((value, inclusive && current_inclusive)),
                        Some(_) => {}
                    },
                }
                true
            }
        }
    }

    fn points(&mut self, values: Vec<&'a Value>) -> bool {
        self.points = Some(match self.points.take() {
            None => values,
            Some(current) => {
                let mut kept = Vec::new();
                for value in current {
                    let mut found = false;
                    for other in &values {
                        match order(value, other) {
                            None => return false,
                            Some(o) => found |= o == Ordering::Equal,
                        }
                    }
                    if found {
                        kept.push(value);
                    }
                }
                kept
            }
        });
        true
    }

    /// Whether no value is allowed (None: undecided, values that do not compare).
    fn empty(&self) -> Option<bool> {
        if let Some(points) = &self.points {
            for point in points {
                if self.allows(point)? {
                    return Some(false);
                }
            }
            return Some(true);
        }
        let (Some((low, low_in)), Some((high, high_in))) = (self.lower, self.upper) else {
            return Some(false);
        };
        Some(match order(low, high)? {
            Ordering::Greater => true,
            Ordering::Equal => {
                !(low_in && high_in) || self.excluded.iter().any(|e| order(e, low) == Some(Ordering::Equal))
            }
            Ordering::Less => false,
        })
    }

    fn allows(&self, value: &Value) -> Option<bool> {
        if let Some((low, inclusive)) = self.lower {
            match order(value, low)? {
                Ordering::Less => return Some(false),
                Ordering::Equal if !inclusive => return Some(false),
                _ => {}
            }
        }
        if let Some((high, inclusive)) = self.upper {
            match order(value, high)? {
                Ordering::Greater => return Some(false),
                Ordering::Equal if !inclusive => return Some(false),
                _ => {}
            }
        }
        for excluded in &self.excluded {
            if order(value, excluded)? == Ordering::Equal {
                return Some(false);
            }
        }
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::SqlType;

    fn compare(op: Comparison, value: Value) -> Expr {
        let column = Expr::column(0, SqlType::Integer);
        let literal = Expr::literal(value, SqlType::Integer);
        Expr::new(Kind::Compare(op, Box::new(column), Box::new(literal)), SqlType::Boolean)
    }

    #[test]
    fn bounds_that_do_not_meet_allow_nothing() {
        let (five, three) = (Value::Int(5), Value::Int(3));
        assert!(contradictory(&[compare(Comparison::Greater, five.clone()), compare(Comparison::Less, three.clone())]));
        assert!(!contradictory(&[
            compare(Comparison::Greater, three.clone()),
            compare(Comparison::Less, five.clone())
        ]));
        let closed =
            [compare(Comparison::GreaterOrEqual, five.clone()), compare(Comparison::LessOrEqual, five.clone())];
        assert!(!contradictory(&closed));
        let mut without = closed.to_vec();
        without.push(compare(Comparison::NotEqual, five.clone()));
        assert!(contradictory(&without));
        assert!(contradictory(&[compare(Comparison::Equal, five), compare(Comparison::Equal, three)]));
    }
}
