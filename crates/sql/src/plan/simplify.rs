//! The simplifications Hazelcast's planner (Calcite's `RexSimplify`) makes to a WHERE
//! condition before any row is read, where they change what a user sees: a condition that is
//! false on every row reads no value, so an expression in it that would fail on some row
//! (an overflow, a bad cast) fails nothing.
//!
//! - `x < x`, `x > x` and `x <> x` are false, or unknown where `x` is null; `x = x`, `x <= x`
//!   and `x >= x` true, or unknown where `x` is null (for a deterministic `x`; a comparison is
//!   never evaluated, only whether `x` is null, which for arithmetic over columns is whether one
//!   of them is).
//! - AND with a false operand is false, OR with a true one true; true operands of AND and
//!   false ones of OR are dropped; NOT of a constant is folded.
//! - At the top of a WHERE (and through its ANDs and ORs) unknown counts as false, as a row
//!   whose condition is unknown is not selected.

use crate::expr::{Comparison, Expr, Function, Kind};
use crate::types::SqlType;
use ferrogrid_query::Value;

/// The WHERE (or DELETE's, UPDATE's) condition, simplified.
pub fn filter(expr: Expr) -> Expr {
    simplify(expr, true)
}

/// `expr` simplified; `unknown_is_false` where an unknown result selects nothing.
fn simplify(expr: Expr, unknown_is_false: bool) -> Expr {
    let ty = expr.ty;
    match expr.kind {
        Kind::And(operands) => and(operands.into_iter().map(|o| simplify(o, unknown_is_false)).collect(), ty),
        Kind::Or(operands) => or(operands.into_iter().map(|o| simplify(o, unknown_is_false)).collect(), ty),
        Kind::Not(operand) => match simplify(*operand, false).kind {
            Kind::Literal(Value::Bool(value)) => boolean(!value),
            other => Expr::new(Kind::Not(Box::new(Expr::new(other, ty))), ty),
        },
        Kind::Compare(op, left, right) if left == right && deterministic(&left) => {
            simplify(reflexive(op, *left), unknown_is_false)
        }
        Kind::Literal(Value::Null) if unknown_is_false && ty == SqlType::Boolean => boolean(false),
        kind => Expr::new(kind, ty),
    }
}

fn boolean(value: bool) -> Expr {
    Expr::literal(Value::Bool(value), SqlType::Boolean)
}

fn constant(expr: &Expr) -> Option<bool> {
    match expr.kind {
        Kind::Literal(Value::Bool(value)) => Some(value),
        _ => None,
    }
}

fn and(operands: Vec<Expr>, ty: SqlType) -> Expr {
    if operands.iter().any(|o| constant(o) == Some(false)) {
        return boolean(false);
    }
    let mut kept: Vec<Expr> = operands.into_iter().filter(|o| constant(o) != Some(true)).collect();
    match kept.len() {
        0 => boolean(true),
        1 => kept.remove(0),
        _ => Expr::new(Kind::And(kept), ty),
    }
}

fn or(operands: Vec<Expr>, ty: SqlType) -> Expr {
    if operands.iter().any(|o| constant(o) == Some(true)) {
        return boolean(true);
    }
    let mut kept: Vec<Expr> = operands.into_iter().filter(|o| constant(o) != Some(false)).collect();
    match kept.len() {
        0 => boolean(false),
        1 => kept.remove(0),
        _ => Expr::new(Kind::Or(kept), ty),
    }
}

/// `x op x`: for `<`, `>`, `<>` "unknown AND x IS NULL", for the others "unknown OR x IS NOT
/// NULL" (what `RexSimplify` rewrites them to), folded where `x` cannot be null.
fn reflexive(op: Comparison, operand: Expr) -> Expr {
    let never_true = matches!(op, Comparison::Less | Comparison::Greater | Comparison::NotEqual);
    let unknown = Expr::literal(Value::Null, SqlType::Boolean);
    match is_null(operand) {
        None => boolean(!never_true),
        Some(null) if never_true => Expr::new(Kind::And(vec![unknown, null]), SqlType::Boolean),
        Some(null) => {
            let not_null = Expr::new(Kind::Not(Box::new(null)), SqlType::Boolean);
            Expr::new(Kind::Or(vec![unknown, not_null]), SqlType::Boolean)
        }
    }
}

/// Whether `expr` is null, without computing it where it is null exactly when one of its
/// operands is (arithmetic, negation, a cast); None when it cannot be null.
fn is_null(expr: Expr) -> Option<Expr> {
    let mut tests = Vec::new();
    null_tests(expr, &mut tests);
    match tests.len() {
        0 => None,
        1 => tests.pop(),
        _ => Some(Expr::new(Kind::Or(tests), SqlType::Boolean)),
    }
}

fn null_tests(expr: Expr, tests: &mut Vec<Expr>) {
    match expr.kind {
        Kind::Literal(ref value) if !value.is_null() => {}
        Kind::Negate(operand) | Kind::Cast(operand) => null_tests(*operand, tests),
        Kind::Arithmetic(_, left, right) => {
            null_tests(*left, tests);
            null_tests(*right, tests);
        }
        _ => {
            let test = Expr::new(Kind::IsNull(Box::new(expr), false), SqlType::Boolean);
            if !tests.contains(&test) {
                tests.push(test);
            }
        }
    }
}

/// No RAND in it (every other expression gives the same value for the same row).
fn deterministic(expr: &Expr) -> bool {
    let children: Vec<&Expr> = match &expr.kind {
        Kind::Call(Function::Rand, _) => return false,
        Kind::Column(_) | Kind::Literal(_) | Kind::Parameter { .. } => return true,
        Kind::Negate(e) | Kind::Not(e) | Kind::IsNull(e, _) | Kind::IsBool(e, ..) | Kind::Cast(e) => vec![e],
        Kind::Arithmetic(_, l, r) | Kind::Compare(_, l, r) => vec![l, r],
        Kind::And(list) | Kind::Or(list) | Kind::Call(_, list) => list.iter().collect(),
        Kind::Between { operand, low, high, .. } => vec![operand, low, high],
        Kind::In { operand, list, .. } => std::iter::once(&**operand).chain(list).collect(),
        Kind::Like { operand, pattern, escape, .. } => {
            std::iter::once(&**operand).chain(std::iter::once(&**pattern)).chain(escape.as_deref()).collect()
        }
        Kind::Case { whens, otherwise } => whens.iter().flat_map(|(w, t)| [w, t]).chain(otherwise.as_deref()).collect(),
    };
    children.into_iter().all(deterministic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Arithmetic;

    fn column(index: usize, ty: SqlType) -> Expr {
        Expr::column(index, ty)
    }

    fn compare(op: Comparison, left: Expr, right: Expr) -> Expr {
        Expr::new(Kind::Compare(op, Box::new(left), Box::new(right)), SqlType::Boolean)
    }

    fn product(left: Expr, right: Expr) -> Expr {
        Expr::new(Kind::Arithmetic(Arithmetic::Multiply, Box::new(left), Box::new(right)), SqlType::BigInt)
    }

    #[test]
    fn a_column_greater_than_itself_selects_nothing_and_hides_the_other_conjuncts() {
        let big = column(0, SqlType::BigInt);
        let overflow = compare(
            Comparison::Greater,
            product(big.clone(), big.clone()),
            Expr::literal(Value::Long(0), SqlType::BigInt),
        );
        let never = compare(Comparison::Greater, column(1, SqlType::Double), column(1, SqlType::Double));
        let condition = Expr::new(Kind::And(vec![overflow, never]), SqlType::Boolean);
        assert_eq!(filter(condition), boolean(false));
    }

    #[test]
    fn equal_to_itself_tests_only_whether_the_columns_are_null() {
        let big = column(0, SqlType::BigInt);
        let condition =
            compare(Comparison::Equal, product(big.clone(), big.clone()), product(big.clone(), big.clone()));
        let not_null = Expr::new(
            Kind::Not(Box::new(Expr::new(Kind::IsNull(Box::new(big), false), SqlType::Boolean))),
            SqlType::Boolean,
        );
        let expected =
            Expr::new(Kind::Or(vec![Expr::literal(Value::Null, SqlType::Boolean), not_null.clone()]), SqlType::Boolean);
        assert_eq!(simplify(condition.clone(), false), expected);
        // at the top of a WHERE the unknown operand of the OR is dropped
        assert_eq!(filter(condition), not_null);
    }

    #[test]
    fn rand_is_not_compared_away() {
        let rand = Expr::new(Kind::Call(Function::Rand, vec![]), SqlType::Double);
        let condition = compare(Comparison::Less, rand.clone(), rand);
        assert_eq!(filter(condition.clone()), condition);
    }

    #[test]
    fn under_not_unknown_stays_unknown() {
        let score = column(1, SqlType::Double);
        let never = compare(Comparison::Greater, score.clone(), score.clone());
        let condition = Expr::new(Kind::Not(Box::new(never)), SqlType::Boolean);
        let simplified = filter(condition);
        let Kind::Not(inner) = simplified.kind else { panic!("{simplified:?}") };
        assert!(matches!(inner.kind, Kind::And(ref list) if list.len() == 2), "{inner:?}");
    }
}
