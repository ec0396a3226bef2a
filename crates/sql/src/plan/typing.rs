//! The types of translated expressions: operands checked and widened to a common type,
//! parameters bound to the type their context expects, literals typed as Hazelcast types them,
//! and the types SQL names.

use crate::error::{Result, SqlError};
use crate::expr::{bits_of, integer_bits, Arithmetic, Expr, Kind};
use crate::types::{self, SqlType};
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::Value;
use sqlparser::ast;

pub(super) fn flatten(l: Expr, r: Expr, and: bool) -> Vec<Expr> {
    let mut items = Vec::new();
    for side in [l, r] {
        match side.kind {
            Kind::And(inner) if and => items.extend(inner),
            Kind::Or(inner) if !and => items.extend(inner),
            kind => items.push(Expr { kind, ty: side.ty }),
        }
    }
    items
}

pub(super) fn cannot_apply(op: &str, types: &[SqlType]) -> SqlError {
    let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
    SqlError::parsing(format!(
        "Cannot apply '{op}' operator to [{}] (consider adding an explicit CAST)",
        names.join(", ")
    ))
}

pub(super) fn boolean(expr: Expr, op: &str) -> Result<Expr> {
    match expr.ty {
        SqlType::Boolean => Ok(expr),
        SqlType::Null => Ok(Expr { ty: SqlType::Boolean, ..expr }),
        ty => Err(cannot_apply(op, &[ty])),
    }
}

pub(super) fn varchar(expr: Expr, op: &str) -> Result<Expr> {
    match expr.ty {
        SqlType::Varchar => Ok(expr),
        SqlType::Null => Ok(Expr { ty: SqlType::Varchar, ..expr }),
        _ if op == "||" => Ok(Expr::new(Kind::Cast(Box::new(expr)), SqlType::Varchar)),
        ty => Err(SqlError::parsing(format!(
            "Cannot apply '{op}' function to [{}] (consider adding an explicit CAST)",
            ty.name()
        ))),
    }
}

/// `expr` converted to `ty` (a literal now, anything else when evaluated).
pub fn widen(expr: Expr, ty: SqlType) -> Result<Expr> {
    if expr.ty == ty || ty == SqlType::Object {
        return Ok(expr);
    }
    if let Some(value) = expr.constant() {
        let value = crate::expr::to_type(value.clone(), ty)?;
        return Ok(Expr::literal(value, ty));
    }
    Ok(Expr::new(Kind::Cast(Box::new(expr)), ty))
}

/// Both sides of a comparison as one type: numbers widen, a VARCHAR literal or parameter is
/// converted to the other side's type, anything else must already agree.
pub(super) fn unify_comparison(op: &str, l: Expr, r: Expr) -> Result<(Expr, Expr)> {
    let (l, r) = match (is_parameter(&l), is_parameter(&r)) {
        (false, true) => {
            let ty = l.ty;
            (l, bind_parameter(r, ty)?)
        }
        (true, false) => {
            let ty = r.ty;
            (bind_parameter(l, ty)?, r)
        }
        _ => (l, r),
    };
    let (lt, rt) = (l.ty, r.ty);
    if lt == rt || lt == SqlType::Null || rt == SqlType::Null || lt == SqlType::Object || rt == SqlType::Object {
        return Ok((l, r));
    }
    if lt.is_numeric() && rt.is_numeric() {
        let ty = lt.wider(rt);
        return Ok((widen(l, ty)?, widen(r, ty)?));
    }
    if lt.is_temporal() && rt.is_temporal() {
        return Ok((l, widen(r, lt)?));
    }
    Err(cannot_apply(op, &[lt, rt]))
}

pub fn is_parameter(expr: &Expr) -> bool {
    matches!(expr.kind, Kind::Parameter { .. })
}

/// A parameter given the type its context expects: its value converted, or Hazelcast's error
/// when the value is of another type (integers widen, numbers become approximate or decimal).
pub fn bind_parameter(expr: Expr, ty: SqlType) -> Result<Expr> {
    let Kind::Parameter { index, at, value } = expr.kind else { return Ok(expr) };
    let from = SqlType::of_value(&value);
    let fits = value.is_null()
        || from == ty
        || matches!(ty, SqlType::Object | SqlType::Null)
        || (from.is_integer()
            && ty.is_integer()
            && crate::types::to_integer(&value).is_some_and(|v| crate::types::integer_value(v, ty).is_some()))
        || (from.is_numeric() && matches!(ty, SqlType::Real | SqlType::Double | SqlType::Decimal))
        || (from == SqlType::Varchar && ty == SqlType::Json);
    if !fits {
        return Err(SqlError::data(format!(
            "At line {}, column {}: Parameter at position {index} must be of {} type, but {} was found (consider adding an explicit CAST)",
            at.0,
            at.1,
            ty.name(),
            from.name()
        )));
    }
    let value = crate::expr::to_type(value, ty)?;
    Ok(Expr { kind: Kind::Parameter { index, at, value }, ty })
}

/// A parameter in arithmetic: BIGINT beside an integer, else the other side's type.
pub(super) fn arithmetic_parameter(expr: Expr, other: &Expr) -> Result<Expr> {
    if !is_parameter(&expr) || is_parameter(other) && other.ty == SqlType::Null {
        return Ok(expr);
    }
    let ty = if other.ty.is_integer() || is_parameter(other) { SqlType::BigInt } else { other.ty };
    if !ty.is_numeric() {
        return Ok(expr);
    }
    bind_parameter(expr, ty)
}

pub(super) fn literal_text(value: &Value) -> String {
    match value {
        Value::String(text) => format!("'{text}'"),
        other => types::to_text(other),
    }
}

pub(super) fn check_cast(from: SqlType, to: SqlType) -> Result<()> {
    let allowed = from == to
        || from == SqlType::Null
        || to == SqlType::Varchar
        || from == SqlType::Varchar
        || to == SqlType::Object
        || from == SqlType::Object
        || (from.is_numeric() && to.is_numeric())
        || (from.is_temporal() && to.is_temporal())
        || (from == SqlType::Json && to == SqlType::Varchar);
    if allowed {
        Ok(())
    } else {
        Err(SqlError::parsing(format!(
            "CAST function cannot convert value of type {} to type {}",
            from.name(),
            to.name()
        )))
    }
}

/// Hazelcast's literal types: the narrowest integer type that holds the value, DECIMAL for
/// exact numbers with a fraction, DOUBLE for approximate (exponent) ones.
pub(super) fn number_literal(text: &str) -> Result<Expr> {
    if text.contains(['e', 'E']) {
        let value: f64 = text.parse().map_err(|_| SqlError::parsing(format!("Invalid number {text}")))?;
        return Ok(Expr::literal(Value::Double(value), SqlType::Double));
    }
    if !text.contains('.') {
        if let Ok(value) = text.parse::<i64>() {
            let ty = SqlType::integer_of_bits(bits_of(value as i128));
            return Ok(Expr::literal(types::integer_value(value as i128, ty).expect("fits its own type"), ty));
        }
    }
    let decimal = BigDecimal::parse(text).ok_or_else(|| SqlError::parsing(format!("Invalid number {text}")))?;
    Ok(Expr::literal(Value::BigDecimal(decimal), SqlType::Decimal))
}

/// A DOUBLE literal's text as Calcite prints it: `2.5E0`, `1.0E3`.
pub(super) fn calcite_double(value: f64) -> String {
    let text = format!("{value:E}");
    match text.split_once('E') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => format!("{mantissa}.0E{exponent}"),
        _ => text,
    }
}

pub(super) fn negate_literal(value: &Value, ty: SqlType) -> Expr {
    match value {
        Value::Null => Expr::literal(Value::Null, ty),
        Value::Double(v) => Expr::literal(Value::Double(-v), ty),
        Value::Float(v) => Expr::literal(Value::Float(-v), ty),
        Value::BigDecimal(v) => Expr::literal(Value::BigDecimal(BigDecimal::new(-v.unscaled().clone(), v.scale())), ty),
        other => {
            let integer = -types::to_integer(other).unwrap_or(0);
            let ty = SqlType::integer_of_bits(bits_of(integer));
            Expr::literal(types::integer_value(integer, ty).expect("fits"), ty)
        }
    }
}

pub(super) fn arithmetic_type(op: Arithmetic, l: &Expr, r: &Expr) -> Result<SqlType> {
    let (lt, rt) = (l.ty, r.ty);
    let lt = if lt == SqlType::Null { rt } else { lt };
    let rt = if rt == SqlType::Null { lt } else { rt };
    if !(lt.is_numeric() || lt == SqlType::Null) || !(rt.is_numeric() || rt == SqlType::Null) {
        return Err(cannot_apply(op.symbol(), &[l.ty, r.ty]));
    }
    if lt.is_integer() && rt.is_integer() {
        let (lb, rb) = (integer_bits(l), integer_bits(r));
        let bits = match op {
            Arithmetic::Add | Arithmetic::Subtract => lb.max(rb) + 1,
            Arithmetic::Multiply => lb + rb,
            Arithmetic::Divide => lb + 1,
            Arithmetic::Remainder => lb.min(rb),
        };
        return Ok(SqlType::integer_of_bits(bits));
    }
    Ok(lt.wider(rt))
}

/// A type named in SQL (CAST target, column list).
pub fn data_type_of(data_type: &ast::DataType) -> Result<SqlType> {
    use ast::DataType as D;
    Ok(match data_type {
        D::Varchar(_) | D::CharVarying(_) | D::CharacterVarying(_) | D::Text | D::String(_) => SqlType::Varchar,
        D::Boolean | D::Bool => SqlType::Boolean,
        D::TinyInt(_) => SqlType::TinyInt,
        D::SmallInt(_) => SqlType::SmallInt,
        D::Int(_) | D::Integer(_) => SqlType::Integer,
        D::BigInt(_) => SqlType::BigInt,
        D::Decimal(_) | D::Numeric(_) | D::Dec(_) => SqlType::Decimal,
        D::Real | D::Float(_) => SqlType::Real,
        D::Double(_) | D::DoublePrecision => SqlType::Double,
        D::Date => SqlType::Date,
        D::Time(_, _) => SqlType::Time,
        D::Timestamp(_, ast::TimezoneInfo::WithTimeZone) => SqlType::TimestampWithTimeZone,
        D::Timestamp(_, _) => SqlType::Timestamp,
        D::JSON => SqlType::Json,
        D::Custom(name, _) => {
            SqlType::parse(&name.to_string()).ok_or_else(|| SqlError::parsing(format!("Unknown type: {name}")))?
        }
        other => return Err(SqlError::parsing(format!("Unknown type: {other}"))),
    })
}
