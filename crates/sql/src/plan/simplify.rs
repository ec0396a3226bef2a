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
//! - A CASE whose every branch is the same expression is that expression (its conditions are
//!   not computed).
//! - NOT is pushed through AND and OR and into comparisons and IS [NOT] NULL; nested ANDs are
//!   flattened; an AND with `x IS NULL` among its operands is false where unknown is false if
//!   another operand is null wherever x is (`age IS NULL AND age * k > score / 0`: the division
//!   is never computed).
//! - At the top of a WHERE (and through its ANDs and ORs) unknown counts as false, as a row
//!   whose condition is unknown is not selected; there `x IS NOT NULL` goes after the other
//!   operands of its AND, or is left out where another operand is null wherever x is.
//! - The NOTs that could not be pushed (NOT of a column, `NOT (x LIKE p)`) go last in their
//!   AND (the order of evaluation decides which failure a row meets first); `x IS NULL OR x
//!   IS NOT NULL` is true; the `x IS NULL` operands of an OR of three operands or more go
//!   first (a binary OR keeps its order); `f(a, b) IS NULL` is
//!   `a IS NULL OR b IS NULL` for an `f` null exactly when an operand is (arithmetic,
//!   comparisons: `f` is never computed), and IS NOT NULL likewise; an AND whose comparisons of a column with literals (and IN lists)
//!   allow no value is false (`plan/ranges.rs`).

use crate::expr::{Comparison, Expr, Function, Kind};
use crate::types::SqlType;
use ferrogrid_query::Value;

/// The WHERE (or DELETE's, UPDATE's) condition, simplified.
pub fn filter(expr: Expr) -> Expr {
    simplify(expr, true)
}

/// Any other expression (a select item, an assigned value), simplified.
pub fn value(expr: Expr) -> Expr {
    simplify(expr, false)
}

/// `expr` simplified; `unknown_is_false` where an unknown result selects nothing.
fn simplify(expr: Expr, unknown_is_false: bool) -> Expr {
    let ty = expr.ty;
    match expr.kind {
        Kind::And(operands) => {
            and(operands.into_iter().map(|o| simplify(o, unknown_is_false)).collect(), ty, unknown_is_false)
        }
        Kind::Or(operands) => or(operands.into_iter().map(|o| simplify(o, unknown_is_false)).collect(), ty),
        Kind::Not(operand) => match negated(*operand) {
            Ok(pushed) => simplify(pushed, unknown_is_false),
            Err(operand) => match simplify(operand, false).kind {
                Kind::Literal(Value::Bool(value)) => boolean(!value),
                other => Expr::new(Kind::Not(Box::new(Expr::new(other, ty))), ty),
            },
        },
        Kind::Literal(Value::Null) if unknown_is_false && ty == SqlType::Boolean => boolean(false),
        mut kind => {
            for child in children(&mut kind) {
                let taken = std::mem::replace(child, boolean(false));
                *child = simplify(taken, false);
            }
            match kind {
                Kind::Compare(op, left, right) if left == right && deterministic(&left) => {
                    simplify(reflexive(op, *left), unknown_is_false)
                }
                Kind::IsNull(operand, negated) => null_test(*operand, negated),
                Kind::Case { whens, otherwise: Some(otherwise) }
                    if otherwise.ty == ty
                        && whens.iter().all(|(when, then)| *then == *otherwise && deterministic(when)) =>
                {
                    *otherwise
                }
                kind => Expr::new(kind, ty),
            }
        }
    }
}

/// The operands of an expression other than AND, OR and NOT.
fn children(kind: &mut Kind) -> Vec<&mut Expr> {
    match kind {
        Kind::Column(_) | Kind::Literal(_) | Kind::Parameter { .. } => Vec::new(),
        Kind::Negate(e) | Kind::Not(e) | Kind::IsNull(e, _) | Kind::IsBool(e, ..) | Kind::Cast(e) => vec![&mut **e],
        Kind::Arithmetic(_, l, r) | Kind::Compare(_, l, r) => vec![&mut **l, &mut **r],
        Kind::And(list) | Kind::Or(list) | Kind::Call(_, list) => list.iter_mut().collect(),
        Kind::Between { operand, low, high, .. } => vec![&mut **operand, &mut **low, &mut **high],
        Kind::In { operand, list, .. } => std::iter::once(&mut **operand).chain(list.iter_mut()).collect(),
        Kind::Like { operand, pattern, escape, .. } => {
            let mut all = vec![&mut **operand, &mut **pattern];
            all.extend(escape.as_deref_mut());
            all
        }
        Kind::Case { whens, otherwise } => {
            let mut all: Vec<&mut Expr> = whens.iter_mut().flat_map(|(w, t)| [w, t]).collect();
            all.extend(otherwise.as_deref_mut());
            all
        }
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

/// NOT pushed into its operand where that is exact: through AND and OR (De Morgan), into a
/// comparison (its inverse), IS [NOT] NULL and another NOT; the operand back where it is not.
fn negated(operand: Expr) -> Result<Expr, Expr> {
    let not = |e: Expr| Expr::new(Kind::Not(Box::new(e)), SqlType::Boolean);
    let ty = operand.ty;
    Ok(match operand.kind {
        Kind::Not(inner) => *inner,
        Kind::And(list) => Expr::new(Kind::Or(list.into_iter().map(not).collect()), ty),
        Kind::Or(list) => Expr::new(Kind::And(list.into_iter().map(not).collect()), ty),
        Kind::IsNull(inner, negated) => Expr::new(Kind::IsNull(inner, !negated), ty),
        Kind::Compare(op, left, right) => Expr::new(Kind::Compare(inverse(op), left, right), ty),
        kind => return Err(Expr::new(kind, ty)),
    })
}

fn inverse(op: Comparison) -> Comparison {
    match op {
        Comparison::Equal => Comparison::NotEqual,
        Comparison::NotEqual => Comparison::Equal,
        Comparison::Less => Comparison::GreaterOrEqual,
        Comparison::LessOrEqual => Comparison::Greater,
        Comparison::Greater => Comparison::LessOrEqual,
        Comparison::GreaterOrEqual => Comparison::Less,
    }
}

/// AND of simplified operands (nested ANDs flattened). Where unknown is false, an operand
/// `x IS NULL` makes false every other operand that is null wherever x is (a comparison or
/// arithmetic over x), and so the whole AND.
fn and(operands: Vec<Expr>, ty: SqlType, unknown_is_false: bool) -> Expr {
    let operands: Vec<Expr> = operands
        .into_iter()
        .flat_map(|o| match o.kind {
            Kind::And(list) => list,
            kind => vec![Expr::new(kind, o.ty)],
        })
        .collect();
    if operands.iter().any(|o| constant(o) == Some(false)) {
        return boolean(false);
    }
    if unknown_is_false && super::ranges::contradictory(&operands) {
        return boolean(false);
    }
    if unknown_is_false {
        let nulls: Vec<&Expr> = operands
            .iter()
            .filter_map(|o| match &o.kind {
                Kind::IsNull(inner, false) if deterministic(inner) => Some(&**inner),
                _ => None,
            })
            .collect();
        if !nulls.is_empty() && operands.iter().any(|o| null_where_null(o, &nulls)) {
            return boolean(false);
        }
    }
    let kept: Vec<Expr> = operands.into_iter().filter(|o| constant(o) != Some(true)).collect();
    let mut kept = nots_last(if unknown_is_false { not_null_last(kept) } else { kept });
    match kept.len() {
        0 => boolean(true),
        1 => kept.remove(0),
        _ => Expr::new(Kind::And(kept), ty),
    }
}

/// Where unknown is false, Calcite moves `x IS NOT NULL` after the other operands of an AND,
/// and leaves it out where another operand is null wherever x is (`x > 0` needs x not null).
fn not_null_last(operands: Vec<Expr>) -> Vec<Expr> {
    let (tests, mut rest): (Vec<Expr>, Vec<Expr>) =
        operands.into_iter().partition(|o| matches!(o.kind, Kind::IsNull(_, true)));
    for test in tests {
        let Kind::IsNull(inner, _) = &test.kind else { continue };
        if !rest.iter().any(|o| null_where_null(o, &[&**inner])) {
            rest.push(test);
        }
    }
    rest
}

/// The NOTs left after pushing (NOT of a column, `NOT (x LIKE p)`) go last in an AND, as
/// Calcite adds its "not terms" back after the others (`x NOT LIKE p` is an operator of its
/// own and stays in place).
fn nots_last(operands: Vec<Expr>) -> Vec<Expr> {
    let (nots, mut rest): (Vec<Expr>, Vec<Expr>) = operands.into_iter().partition(|o| matches!(o.kind, Kind::Not(_)));
    rest.extend(nots);
    rest
}

/// Whether `expr` is null wherever one of `nulls` is (Calcite's `Strong`, for the operators
/// that are null when an operand is).
fn null_where_null(expr: &Expr, nulls: &[&Expr]) -> bool {
    if nulls.contains(&expr) {
        return true;
    }
    match &expr.kind {
        Kind::Compare(_, left, right) | Kind::Arithmetic(_, left, right) => {
            null_where_null(left, nulls) || null_where_null(right, nulls)
        }
        Kind::Negate(operand) | Kind::Cast(operand) | Kind::Not(operand) => null_where_null(operand, nulls),
        _ => false,
    }
}

/// OR of simplified operands (nested ORs flattened). Of three operands or more, the `x IS
/// NULL` ones go first, as Calcite moves them to the head of an OR; a binary OR keeps its
/// order (Hazelcast's plan keeps it: its digest does not tell the two orders apart).
fn or(operands: Vec<Expr>, ty: SqlType) -> Expr {
    let operands: Vec<Expr> = operands
        .into_iter()
        .flat_map(|o| match o.kind {
            Kind::Or(list) => list,
            kind => vec![Expr::new(kind, o.ty)],
        })
        .collect();
    if operands.iter().any(|o| constant(o) == Some(true)) {
        return boolean(true);
    }
    // `x IS NULL OR x IS NOT NULL` is true on every row
    let tested = |negated: bool| {
        operands.iter().filter_map(move |o| match &o.kind {
            Kind::IsNull(inner, n) if *n == negated && deterministic(inner) => Some(&**inner),
            _ => None,
        })
    };
    if tested(false).any(|null| tested(true).any(|not_null| null == not_null)) {
        return boolean(true);
    }
    let mut kept: Vec<Expr> = operands.into_iter().filter(|o| constant(o) != Some(false)).collect();
    if kept.len() >= 3 {
        let (mut first, rest): (Vec<Expr>, Vec<Expr>) =
            kept.into_iter().partition(|o| matches!(o.kind, Kind::IsNull(_, false)));
        first.extend(rest);
        kept = first;
    }
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

/// `operand IS [NOT] NULL` as Calcite's `RexSimplify` rewrites it: a literal's is folded; for
/// an operator that is null exactly when one of its operands is (its `Strong` policy ANY:
/// arithmetic but `%`, negation, comparisons, LIKE, CEIL and FLOOR) `f(a, b) IS NULL` is
/// `a IS NULL OR b IS NULL` and `f(a, b) IS NOT NULL` is `a IS NOT NULL AND b IS NOT NULL`,
/// recursively, so `f` is never computed (`(big * big) IS NULL` cannot overflow). A CAST is
/// left as it is, as Calcite leaves it.
fn null_test(operand: Expr, negated: bool) -> Expr {
    if let Kind::Literal(value) = &operand.kind {
        return boolean(value.is_null() != negated);
    }
    let ty = operand.ty;
    let Some(operands) = strong_operands(operand.kind.clone()) else {
        return Expr::new(Kind::IsNull(Box::new(operand), negated), SqlType::Boolean);
    };
    let mut tests: Vec<Expr> = Vec::new();
    for (operand, arithmetic) in operands {
        // An arithmetic operand of another type than the result is cast (implicitly, in
        // Hazelcast's plan), and a CAST is tested as it is: computed.
        let test = if arithmetic && operand.ty != ty {
            Expr::new(Kind::IsNull(Box::new(operand), negated), SqlType::Boolean)
        } else {
            null_test(operand, negated)
        };
        if !tests.contains(&test) {
            tests.push(test);
        }
    }
    if negated {
        and(tests, SqlType::Boolean, false)
    } else {
        or(tests, SqlType::Boolean)
    }
}

/// The operands of an operator whose result is null exactly when one of them is, each with
/// whether it is an arithmetic operand (None for the other operators).
fn strong_operands(kind: Kind) -> Option<Vec<(Expr, bool)>> {
    let plain = |operands: Vec<Expr>| Some(operands.into_iter().map(|o| (o, false)).collect());
    match kind {
        Kind::Arithmetic(op, left, right) if op != crate::expr::Arithmetic::Remainder => {
            Some(vec![(*left, true), (*right, true)])
        }
        Kind::Compare(_, left, right) => plain(vec![*left, *right]),
        Kind::Negate(operand) => plain(vec![*operand]),
        Kind::Like { operand, pattern, escape, .. } => {
            plain([Some(*operand), Some(*pattern), escape.map(|e| *e)].into_iter().flatten().collect())
        }
        Kind::Call(Function::Ceil | Function::Floor, operands) => plain(operands),
        _ => None,
    }
}

/// No RAND in it (every other expression gives the same value for the same row).
fn deterministic(expr: &Expr) -> bool {
    !matches!(expr.kind, Kind::Call(Function::Rand, _)) && expr.operands().into_iter().all(deterministic)
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
        let not_null = Expr::new(Kind::IsNull(Box::new(big), true), SqlType::Boolean);
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
    fn not_is_pushed_into_a_comparison_with_itself() {
        // NOT (score > score) is score <= score: true where score is not null
        let score = column(1, SqlType::Double);
        let never = compare(Comparison::Greater, score.clone(), score.clone());
        let condition = Expr::new(Kind::Not(Box::new(never)), SqlType::Boolean);
        assert_eq!(filter(condition), Expr::new(Kind::IsNull(Box::new(score), true), SqlType::Boolean));
    }

    #[test]
    fn an_operand_null_wherever_a_null_tested_one_is_makes_the_and_false() {
        let (age, score) = (column(2, SqlType::Integer), column(1, SqlType::Double));
        let is_null = Expr::new(Kind::IsNull(Box::new(age.clone()), false), SqlType::Boolean);
        let divided = Expr::new(
            Kind::Arithmetic(
                Arithmetic::Divide,
                Box::new(score.clone()),
                Box::new(Expr::literal(Value::Int(0), SqlType::Integer)),
            ),
            SqlType::Double,
        );
        let strong = compare(Comparison::Greater, product(age.clone(), age.clone()), divided.clone());
        let and = |list| Expr::new(Kind::And(list), SqlType::Boolean);
        assert_eq!(filter(and(vec![strong, is_null.clone()])), boolean(false));
        // an operand that can be known where age is null does not
        let weak = compare(Comparison::Greater, divided, Expr::literal(Value::Int(1), SqlType::Integer));
        let kept = and(vec![weak, is_null]);
        assert_eq!(filter(kept.clone()), kept);
    }
    #[test]
    fn a_null_test_of_arithmetic_tests_its_operands_but_not_through_a_cast() {
        let (big, score) = (column(0, SqlType::BigInt), column(1, SqlType::Double));
        let null_test = |operand: Expr, negated| Expr::new(Kind::IsNull(Box::new(operand), negated), SqlType::Boolean);
        // (big * big) IS NULL: big IS NULL, once
        assert_eq!(filter(null_test(product(big.clone(), big.clone()), false)), null_test(big.clone(), false));
        // (score + big * big) IS NOT NULL: the product is of another type than the sum (cast)
        let sum = Expr::new(
            Kind::Arithmetic(Arithmetic::Add, Box::new(score.clone()), Box::new(product(big.clone(), big.clone()))),
            SqlType::Double,
        );
        let expected = Expr::new(
            Kind::And(vec![null_test(score, true), null_test(product(big.clone(), big), true)]),
            SqlType::Boolean,
        );
        assert_eq!(filter(null_test(sum, true)), expected);
        assert_eq!(filter(null_test(Expr::literal(Value::Int(1), SqlType::Integer), false)), boolean(false));
    }

    #[test]
    fn an_or_of_three_operands_tests_nulls_first_and_a_binary_one_keeps_its_order() {
        let (big, age) = (column(0, SqlType::BigInt), column(2, SqlType::Integer));
        let zero = Expr::literal(Value::Long(0), SqlType::BigInt);
        let overflow = compare(Comparison::Greater, product(big.clone(), big.clone()), zero.clone());
        let other = compare(Comparison::Less, big, zero);
        let is_null = Expr::new(Kind::IsNull(Box::new(age), false), SqlType::Boolean);
        let or = |list| Expr::new(Kind::Or(list), SqlType::Boolean);
        let binary = or(vec![overflow.clone(), is_null.clone()]);
        assert_eq!(filter(binary.clone()), binary);
        let three = or(vec![overflow.clone(), other.clone(), is_null.clone()]);
        assert_eq!(filter(three), or(vec![is_null.clone(), overflow.clone(), other.clone()]));
        // nested ORs are flattened first
        let nested = or(vec![overflow.clone(), or(vec![other.clone(), is_null.clone()])]);
        assert_eq!(filter(nested), or(vec![is_null, overflow, other]));
    }
}
