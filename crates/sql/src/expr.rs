//! Resolved, typed expressions and their evaluation over a row, with SQL's three-valued logic
//! (a null operand makes a comparison unknown, which `WHERE` treats as false) and Hazelcast's
//! arithmetic: integer results are typed wide enough not to overflow their operands' ranges,
//! and overflow beyond BIGINT is a data error.
//!
//! Invariant: an expression's `ty` is the type of every non-null value its evaluation returns.

pub mod functions;

use crate::error::{Result, SqlError};
use crate::types::{self, SqlType};
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::Value;
use num_bigint::BigInt;
use std::cmp::Ordering;

/// How deeply expressions may nest: a bound on the recursion of planning and evaluation that
/// keeps a statement well inside a reactor thread's stack (2 MiB; a debug build spends ~40 KiB
/// a level). AND/OR chains of any length are not nesting (they are translated in a loop).
pub const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arithmetic {
    Add,
    Subtract,
    Multiply,
    Divide,
    Remainder,
}

impl Arithmetic {
    pub fn symbol(self) -> &'static str {
        match self {
            Arithmetic::Add => "+",
            Arithmetic::Subtract => "-",
            Arithmetic::Multiply => "*",
            Arithmetic::Divide => "/",
            Arithmetic::Remainder => "%",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

impl Comparison {
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Equal => "=",
            Comparison::NotEqual => "<>",
            Comparison::Less => "<",
            Comparison::LessOrEqual => "<=",
            Comparison::Greater => ">",
            Comparison::GreaterOrEqual => ">=",
        }
    }

    fn holds(self, ordering: Ordering) -> bool {
        match self {
            Comparison::Equal => ordering == Ordering::Equal,
            Comparison::NotEqual => ordering != Ordering::Equal,
            Comparison::Less => ordering == Ordering::Less,
            Comparison::LessOrEqual => ordering != Ordering::Greater,
            Comparison::Greater => ordering == Ordering::Greater,
            Comparison::GreaterOrEqual => ordering != Ordering::Less,
        }
    }
}

/// Scalar functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Upper,
    Lower,
    CharLength,
    Trim {
        leading: bool,
        trailing: bool,
    },
    Substring,
    Concat,
    ConcatWs,
    Abs,
    Floor,
    Ceil,
    Round,
    Truncate,
    Power,
    Sqrt,
    Sign,
    Mod,
    Coalesce,
    NullIf,
    Position,
    Replace,
    Initcap,
    Ascii,
    JsonValue,
    JsonQuery,
    JsonObject,
    JsonArray,
    /// JSON_QUERY(... WITH [ARRAY] WRAPPER)
    JsonQueryWrapped,
    Exp,
    Ln,
    Log10,
    Rand,
}

/// A typed expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: Kind,
    pub ty: SqlType,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Column(usize),
    Literal(Value),
    /// A `?`: its 0-based index, where it is (line, column) and its value (converted to
    /// `ty` once the context typed it).
    Parameter {
        index: usize,
        at: (u64, u64),
        value: Value,
    },
    Negate(Box<Expr>),
    Arithmetic(Arithmetic, Box<Expr>, Box<Expr>),
    Compare(Comparison, Box<Expr>, Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    IsNull(Box<Expr>, bool),
    /// `x IS [NOT] TRUE/FALSE`: (operand, the truth value, negated).
    IsBool(Box<Expr>, bool, bool),
    Between {
        operand: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
        symmetric: bool,
    },
    In {
        operand: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    Like {
        operand: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
    },
    Cast(Box<Expr>),
    Case {
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    Call(Function, Vec<Expr>),
}

impl Expr {
    pub fn new(kind: Kind, ty: SqlType) -> Expr {
        Expr { kind, ty }
    }

    pub fn literal(value: Value, ty: SqlType) -> Expr {
        Expr { kind: Kind::Literal(value), ty }
    }

    pub fn column(index: usize, ty: SqlType) -> Expr {
        Expr { kind: Kind::Column(index), ty }
    }

    /// The expressions this one is computed from, in order.
    pub fn operands(&self) -> Vec<&Expr> {
        match &self.kind {
            Kind::Column(_) | Kind::Literal(_) | Kind::Parameter { .. } => Vec::new(),
            Kind::Negate(e) | Kind::Not(e) | Kind::IsNull(e, _) | Kind::IsBool(e, ..) | Kind::Cast(e) => vec![e],
            Kind::Arithmetic(_, l, r) | Kind::Compare(_, l, r) => vec![l, r],
            Kind::And(list) | Kind::Or(list) | Kind::Call(_, list) => list.iter().collect(),
            Kind::Between { operand, low, high, .. } => vec![operand, low, high],
            Kind::In { operand, list, .. } => std::iter::once(&**operand).chain(list).collect(),
            Kind::Like { operand, pattern, escape, .. } => {
                [&**operand, &**pattern].into_iter().chain(escape.as_deref()).collect()
            }
            Kind::Case { whens, otherwise } => {
                whens.iter().flat_map(|(w, t)| [w, t]).chain(otherwise.as_deref()).collect()
            }
        }
    }

    /// The items of its top-level AND, or itself.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match &self.kind {
            Kind::And(items) => items.iter().collect(),
            _ => vec![self],
        }
    }

    /// [`Expr::operands`], to change.
    fn operands_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            Kind::Column(_) | Kind::Literal(_) | Kind::Parameter { .. } => Vec::new(),
            Kind::Negate(e) | Kind::Not(e) | Kind::IsNull(e, _) | Kind::IsBool(e, ..) | Kind::Cast(e) => vec![e],
            Kind::Arithmetic(_, l, r) | Kind::Compare(_, l, r) => vec![l, r],
            Kind::And(list) | Kind::Or(list) | Kind::Call(_, list) => list.iter_mut().collect(),
            Kind::Between { operand, low, high, .. } => vec![operand, low, high],
            Kind::In { operand, list, .. } => std::iter::once(&mut **operand).chain(list).collect(),
            Kind::Like { operand, pattern, escape, .. } => {
                [&mut **operand, &mut **pattern].into_iter().chain(escape.as_deref_mut()).collect()
            }
            Kind::Case { whens, otherwise } => {
                whens.iter_mut().flat_map(|(w, t)| [w, t]).chain(otherwise.as_deref_mut()).collect()
            }
        }
    }

    /// The columns it reads, each at most once, in no particular order.
    pub fn columns(&self) -> Vec<usize> {
        let mut columns = Vec::new();
        let mut pending = vec![self];
        while let Some(expr) = pending.pop() {
            match expr.kind {
                Kind::Column(index) if !columns.contains(&index) => columns.push(index),
                _ => pending.extend(expr.operands()),
            }
        }
        columns
    }

    /// The same expression over rows whose first column is this one's column `by` (every
    /// column it reads is at `by` or after).
    pub fn rebased(&self, by: usize) -> Expr {
        let mut rebased = self.clone();
        let mut pending = vec![&mut rebased];
        while let Some(expr) = pending.pop() {
            if let Kind::Column(index) = &mut expr.kind {
                *index -= by;
            }
            pending.extend(expr.operands_mut());
        }
        rebased
    }

    /// The value of a constant expression (no columns), or None.
    pub fn constant(&self) -> Option<&Value> {
        match &self.kind {
            Kind::Literal(value) | Kind::Parameter { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Evaluates over `row`.
    pub fn eval(&self, row: &[Value]) -> Result<Value> {
        let value = match &self.kind {
            Kind::Column(index) => row.get(*index).cloned().unwrap_or(Value::Null),
            Kind::Literal(value) | Kind::Parameter { value, .. } => value.clone(),
            Kind::Negate(operand) => negate(operand.eval(row)?, self.ty)?,
            // As Hazelcast's binary expressions: a null left operand is the answer, and the
            // right one is not computed (so it cannot fail).
            Kind::Arithmetic(op, left, right) => {
                let left = left.operand(row)?;
                if left.is_null() {
                    return Ok(Value::Null);
                }
                let right = right.operand(row)?;
                if right.is_null() {
                    return Ok(Value::Null);
                }
                arithmetic(*op, &left, &right, self.ty)?
            }
            Kind::Compare(op, left, right) => {
                let left = left.operand(row)?;
                if left.is_null() {
                    return Ok(Value::Null);
                }
                let right = right.operand(row)?;
                match compare(&left, &right)? {
                    None => Value::Null,
                    Some(ordering) => Value::Bool(op.holds(ordering)),
                }
            }
            Kind::And(items) => conjunction(row, items)?,
            Kind::Or(items) => disjunction(row, items)?,
            Kind::Not(operand) => match truth(&operand.eval(row)?) {
                Some(value) => Value::Bool(!value),
                None => Value::Null,
            },
            Kind::IsNull(operand, negated) => Value::Bool(operand.operand(row)?.is_null() != *negated),
            Kind::IsBool(operand, wanted, negated) => {
                Value::Bool((truth(&operand.eval(row)?) == Some(*wanted)) != *negated)
            }
            Kind::Between { operand, low, high, negated, symmetric } => {
                between(row, operand, low, high, *negated, *symmetric)?
            }
            Kind::In { operand, list, negated } => in_list(row, operand, list, *negated)?,
            Kind::Like { operand, pattern, escape, negated } => {
                like_value(row, operand, pattern, escape.as_deref(), *negated)?
            }
            Kind::Cast(operand) => cast(operand.eval(row)?, operand.ty, self.ty)?,
            Kind::Case { whens, otherwise } => return case(row, whens, otherwise.as_deref(), self.ty),
            Kind::Call(Function::Mod, args) => {
                // A binary expression in Hazelcast, as arithmetic: a null dividend is the answer.
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    let Some(value) = non_null(arg.eval(row)?) else { return Ok(Value::Null) };
                    values.push(value);
                }
                functions::call(Function::Mod, values, args, self.ty)?
            }
            Kind::Call(function, args) => {
                let values = args.iter().map(|arg| arg.eval(row)).collect::<Result<Vec<_>>>()?;
                functions::call(*function, values, args, self.ty)?
            }
        };
        Ok(value)
    }

    /// The value over `row`, borrowed where it is a column or a constant (no copy).
    pub(crate) fn operand<'r>(&'r self, row: &'r [Value]) -> Result<std::borrow::Cow<'r, Value>> {
        static NULL: Value = Value::Null;
        Ok(match &self.kind {
            Kind::Column(index) => std::borrow::Cow::Borrowed(row.get(*index).unwrap_or(&NULL)),
            Kind::Literal(value) | Kind::Parameter { value, .. } => std::borrow::Cow::Borrowed(value),
            _ => std::borrow::Cow::Owned(self.eval(row)?),
        })
    }

    /// Whether `row` passes this condition (unknown does not).
    pub fn passes(&self, row: &[Value]) -> Result<bool> {
        Ok(truth(&self.eval(row)?) == Some(true))
    }
}

fn non_null(value: Value) -> Option<Value> {
    (!value.is_null()).then_some(value)
}

/// AND: false if any item is false, else unknown (null) if any is unknown.
fn conjunction(row: &[Value], items: &[Expr]) -> Result<Value> {
    let mut unknown = false;
    for item in items {
        match truth(&item.eval(row)?) {
            Some(false) => return Ok(Value::Bool(false)),
            None => unknown = true,
            Some(true) => {}
        }
    }
    Ok(if unknown { Value::Null } else { Value::Bool(true) })
}

/// OR: true if any item is true, else unknown (null) if any is unknown.
fn disjunction(row: &[Value], items: &[Expr]) -> Result<Value> {
    let mut unknown = false;
    for item in items {
        match truth(&item.eval(row)?) {
            Some(true) => return Ok(Value::Bool(true)),
            None => unknown = true,
            Some(false) => {}
        }
    }
    Ok(if unknown { Value::Null } else { Value::Bool(false) })
}

/// `operand [NOT] BETWEEN [SYMMETRIC] low AND high`.
fn between(row: &[Value], operand: &Expr, low: &Expr, high: &Expr, negated: bool, symmetric: bool) -> Result<Value> {
    let value = operand.operand(row)?;
    if value.is_null() {
        // Hazelcast compares a null operand with neither bound: they are not computed.
        return Ok(Value::Null);
    }
    let (mut low, mut high) = (low.operand(row)?, high.operand(row)?);
    if symmetric && compare(&low, &high)? == Some(Ordering::Greater) {
        std::mem::swap(&mut low, &mut high);
    }
    let above = compare(&value, &low)?.map(|o| o != Ordering::Less);
    let below = compare(&value, &high)?.map(|o| o != Ordering::Greater);
    let within = match (above, below) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    };
    Ok(match within {
        Some(within) => Value::Bool(within != negated),
        None => Value::Null,
    })
}

/// `operand [NOT] IN (list)`: unknown when no item matches and one of them is unknown.
fn in_list(row: &[Value], operand: &Expr, list: &[Expr], negated: bool) -> Result<Value> {
    let value = operand.eval(row)?;
    if value.is_null() {
        return Ok(Value::Null);
    }
    let mut unknown = false;
    let mut found = false;
    for item in list {
        match compare(&value, &item.eval(row)?)? {
            Some(Ordering::Equal) => {
                found = true;
                break;
            }
            None => unknown = true,
            _ => {}
        }
    }
    Ok(if found {
        Value::Bool(!negated)
    } else if unknown {
        Value::Null
    } else {
        Value::Bool(negated)
    })
}

/// `operand [NOT] LIKE pattern [ESCAPE escape]`.
fn like_value(row: &[Value], operand: &Expr, pattern: &Expr, escape: Option<&Expr>, negated: bool) -> Result<Value> {
    let (value, pattern) = (operand.eval(row)?, pattern.eval(row)?);
    let escape = match escape {
        Some(escape) => match escape.eval(row)? {
            Value::Null => return Ok(Value::Null),
            escape => Some(types::to_text(&escape)),
        },
        None => None,
    };
    if value.is_null() || pattern.is_null() {
        return Ok(Value::Null);
    }
    let matched = like(&types::to_text(&value), &types::to_text(&pattern), escape.as_deref())?;
    Ok(Value::Bool(matched != negated))
}

/// CASE: the result of the first condition that holds, else the ELSE result, as `ty`.
fn case(row: &[Value], whens: &[(Expr, Expr)], otherwise: Option<&Expr>, ty: SqlType) -> Result<Value> {
    for (condition, result) in whens {
        if truth(&condition.eval(row)?) == Some(true) {
            return to_type(result.eval(row)?, ty);
        }
    }
    Ok(match otherwise {
        Some(otherwise) => to_type(otherwise.eval(row)?, ty)?,
        None => Value::Null,
    })
}

/// The bits an integer needs, not counting its sign.
pub fn bits_of(value: i128) -> u32 {
    let magnitude = if value < 0 { -(value + 1) } else { value };
    128 - magnitude.leading_zeros()
}

/// The bits an integer expression's values may need: a number literal's own (Hazelcast types
/// a literal by its value), a null's none, anything else its type's.
pub fn integer_bits(expr: &Expr) -> u32 {
    match &expr.kind {
        Kind::Literal(Value::Null) if expr.ty == SqlType::Null => 0,
        Kind::Literal(value) => match types::to_integer(value) {
            Some(integer) if SqlType::integer_of_bits(bits_of(integer)) == expr.ty => bits_of(integer),
            _ => expr.ty.bits(),
        },
        _ => expr.ty.bits(),
    }
}

/// A boolean's truth (None: null, unknown).
pub fn truth(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(value) => Some(*value),
        _ => None,
    }
}

/// SQL comparison: None when either side is null. Values of different kinds that cannot be
/// compared are a data error (planning makes both sides one type, so this is a bug guard).
pub fn compare(left: &Value, right: &Value) -> Result<Option<Ordering>> {
    if left.is_null() || right.is_null() {
        return Ok(None);
    }
    if let Some(ordering) = left.compare(right) {
        return Ok(Some(ordering));
    }
    match (left, right) {
        (Value::BigDecimal(_), _) | (_, Value::BigDecimal(_)) => {
            let (Some(l), Some(r)) = (types::to_decimal(left), types::to_decimal(right)) else {
                return Err(SqlError::data("Cannot compare values"));
            };
            Ok(Some(l.compare(&r)))
        }
        (Value::Json(l), Value::Json(r)) => Ok(Some(l.cmp(r))),
        _ if left.equals(right) => Ok(Some(Ordering::Equal)),
        _ => Err(SqlError::data(format!("Cannot compare {} with {}", left.type_name(), right.type_name()))),
    }
}

/// Converts a value to `ty` where the planner decided an implicit conversion.
pub fn to_type(value: Value, ty: SqlType) -> Result<Value> {
    if value.is_null() || SqlType::of_value(&value) == ty || ty == SqlType::Object || ty == SqlType::Null {
        return Ok(value);
    }
    types::convert(value, ty)
}

fn cast(value: Value, from: SqlType, to: SqlType) -> Result<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    if to.is_integer() && matches!(from, SqlType::Real | SqlType::Double | SqlType::Decimal) {
        // Hazelcast truncates toward zero and fails when the result does not fit.
        let integer = types::to_integer(&value)
            .ok_or_else(|| SqlError::data(format!("Cannot convert {} to {}", from.name(), to.name())))?;
        return types::integer_value(integer, to).ok_or_else(|| {
            SqlError::data(format!("Numeric overflow while converting {} to {}", from.name(), to.name()))
        });
    }
    if to == SqlType::Decimal {
        // Hazelcast's converters: `new BigDecimal(double)`, the binary value exactly
        match value {
            Value::Double(v) if v.is_finite() => return Ok(Value::BigDecimal(types::exact_decimal(v))),
            Value::Float(v) if v.is_finite() => return Ok(Value::BigDecimal(types::exact_decimal(v as f64))),
            _ => {}
        }
    }
    if from == SqlType::Boolean && to.is_numeric() || from.is_numeric() && to == SqlType::Boolean {
        return Err(SqlError::parsing(format!(
            "CAST function cannot convert value of type {} to type {}",
            from.name(),
            to.name()
        )));
    }
    types::convert(value, to)
}

fn negate(value: Value, ty: SqlType) -> Result<Value> {
    Ok(match value {
        Value::Null => Value::Null,
        Value::Double(v) => Value::Double(-v),
        Value::Float(v) => Value::Float(-v),
        Value::BigDecimal(v) => Value::BigDecimal(BigDecimal::new(-v.unscaled().clone(), v.scale())),
        other => {
            let integer = types::to_integer(&other).ok_or_else(|| SqlError::data("Cannot negate"))?;
            types::integer_value(-integer, ty).ok_or_else(|| overflow(ty, "-"))?
        }
    })
}

fn overflow(ty: SqlType, symbol: &str) -> SqlError {
    SqlError::data(format!("{} overflow in '{symbol}' operator (consider adding explicit CAST to DECIMAL)", ty.name()))
}

/// `left op right` as a value of `ty` (the planner's result type; both operands non-null).
pub fn arithmetic(op: Arithmetic, left: &Value, right: &Value, ty: SqlType) -> Result<Value> {
    match ty {
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Integer | SqlType::BigInt => {
            let (l, r) = (
                types::to_integer(left).ok_or_else(|| SqlError::data("not a number"))?,
                types::to_integer(right).ok_or_else(|| SqlError::data("not a number"))?,
            );
            let result = match op {
                Arithmetic::Add => l.checked_add(r),
                Arithmetic::Subtract => l.checked_sub(r),
                Arithmetic::Multiply => l.checked_mul(r),
                Arithmetic::Divide | Arithmetic::Remainder if r == 0 => {
                    return Err(SqlError::data("Division by zero"));
                }
                Arithmetic::Divide => l.checked_div(r),
                Arithmetic::Remainder => l.checked_rem(r),
            };
            result.and_then(|value| types::integer_value(value, ty)).ok_or_else(|| overflow(ty, op.symbol()))
        }
        SqlType::Real | SqlType::Double => {
            let (l, r) = (
                types::to_double(left).ok_or_else(|| SqlError::data("not a number"))?,
                types::to_double(right).ok_or_else(|| SqlError::data("not a number"))?,
            );
            let result = match op {
                Arithmetic::Add => l + r,
                Arithmetic::Subtract => l - r,
                Arithmetic::Multiply => l * r,
                Arithmetic::Divide if r == 0.0 => return Err(SqlError::data("Division by zero")),
                Arithmetic::Divide => l / r,
                Arithmetic::Remainder if r == 0.0 => return Err(SqlError::data("Division by zero")),
                Arithmetic::Remainder => l % r,
            };
            Ok(if ty == SqlType::Real { Value::Float(result as f32) } else { Value::Double(result) })
        }
        SqlType::Decimal => {
            let (l, r) = (
                types::to_decimal(left).ok_or_else(|| SqlError::data("not a number"))?,
                types::to_decimal(right).ok_or_else(|| SqlError::data("not a number"))?,
            );
            decimal_arithmetic(op, &l, &r).map(Value::BigDecimal)
        }
        _ => Err(SqlError::data(format!("Cannot apply '{}' to {}", op.symbol(), ty.name()))),
    }
}

fn aligned(l: &BigDecimal, r: &BigDecimal) -> (BigInt, BigInt, i32) {
    let scale = l.scale().max(r.scale());
    let widen = |d: &BigDecimal| d.unscaled() * BigInt::from(10).pow((scale - d.scale()) as u32);
    (widen(l), widen(r), scale)
}

/// Decimal arithmetic as Java's `BigDecimal`, division to Hazelcast's 76 significant digits
/// (rounded half up).
pub fn decimal_arithmetic(op: Arithmetic, l: &BigDecimal, r: &BigDecimal) -> Result<BigDecimal> {
    Ok(match op {
        Arithmetic::Add => {
            let (a, b, scale) = aligned(l, r);
            BigDecimal::new(a + b, scale)
        }
        Arithmetic::Subtract => {
            let (a, b, scale) = aligned(l, r);
            BigDecimal::new(a - b, scale)
        }
        Arithmetic::Multiply => BigDecimal::new(l.unscaled() * r.unscaled(), l.scale() + r.scale()),
        Arithmetic::Divide | Arithmetic::Remainder if r.unscaled() == &BigInt::from(0) => {
            return Err(SqlError::data("Division by zero"))
        }
        Arithmetic::Remainder => {
            let (a, b, scale) = aligned(l, r);
            BigDecimal::new(a % b, scale)
        }
        Arithmetic::Divide => divide_decimal(l, r, 76),
    })
}

/// `l / r` rounded half-up to `digits` significant digits, trailing zeros stripped down to
/// the preferred scale (`l.scale - r.scale`), as `BigDecimal.divide(r, MathContext)` does.
pub fn divide_decimal(l: &BigDecimal, r: &BigDecimal, digits: u32) -> BigDecimal {
    use num_bigint::Sign;
    let preferred = l.scale() - r.scale();
    // Scale the dividend so the quotient has `digits + 1` significant digits, then round.
    let (ln, rn) = (l.unscaled().clone(), r.unscaled().clone());
    let negative = (ln.sign() == Sign::Minus) != (rn.sign() == Sign::Minus);
    let (la, ra) = (num_abs(&ln), num_abs(&rn));
    let ld = ferrogrid_query::number::digit_count(&la) as i64;
    let rd = ferrogrid_query::number::digit_count(&ra) as i64;
    let shift = (digits as i64 + 1 - (ld - rd)).max(0);
    let numerator = la * BigInt::from(10).pow(shift as u32);
    let mut quotient = &numerator / &ra;
    let mut scale = preferred as i64 + shift;
    // Round to `digits` significant digits.
    let qd = ferrogrid_query::number::digit_count(&quotient) as i64;
    if qd > digits as i64 {
        let drop = (qd - digits as i64) as u32;
        let divisor = BigInt::from(10).pow(drop);
        let (q, rem) = (&quotient / &divisor, &quotient % &divisor);
        quotient = if rem * 2 >= divisor { q + 1 } else { q };
        scale -= drop as i64;
    }
    // Strip trailing zeros down to the preferred scale.
    let ten = BigInt::from(10);
    while scale > preferred as i64 && quotient != BigInt::from(0) && (&quotient % &ten) == BigInt::from(0) {
        quotient /= &ten;
        scale -= 1;
    }
    if quotient == BigInt::from(0) {
        scale = preferred as i64;
    }
    let signed = if negative { -quotient } else { quotient };
    BigDecimal::new(signed, scale as i32)
}

fn num_abs(value: &BigInt) -> BigInt {
    if value.sign() == num_bigint::Sign::Minus {
        -value.clone()
    } else {
        value.clone()
    }
}

/// SQL LIKE: `%` any run, `_` one character, `escape` making the next character literal.
pub fn like(text: &str, pattern: &str, escape: Option<&str>) -> Result<bool> {
    let escape = match escape {
        None => None,
        Some(escape) => {
            let mut chars = escape.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Some(c),
                _ => return Err(SqlError::data("ESCAPE parameter must be a single character")),
            }
        }
    };
    let mut regex = String::from("(?s)^");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            match chars.next() {
                Some(next) if next == '%' || next == '_' || Some(next) == escape => {
                    regex.push_str(&regex::escape(&next.to_string()))
                }
                _ => return Err(SqlError::data("Only '_', '%' and the escape character can be escaped")),
            }
        } else if c == '%' {
            regex.push_str(".*");
        } else if c == '_' {
            regex.push('.');
        } else {
            regex.push_str(&regex::escape(&c.to_string()));
        }
    }
    regex.push('$');
    let compiled = regex::Regex::new(&regex).map_err(|error| SqlError::data(error.to_string()))?;
    Ok(compiled.is_match(text))
}
