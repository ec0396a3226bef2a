//! Scalar functions: their result types (decided when a call is planned) and their values.
//! Null in gives null out, except for COALESCE, NULLIF and CONCAT's `||` (which Hazelcast
//! makes null-propagating too).

use super::{Expr, Function};
use crate::error::{Result, SqlError};
use crate::types::{self, SqlType};
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::Value;
use num_bigint::BigInt;

/// A function by its SQL name (None: not a scalar function).
pub fn by_name(name: &str) -> Option<Function> {
    Some(match name.to_ascii_uppercase().as_str() {
        "UPPER" => Function::Upper,
        "LOWER" => Function::Lower,
        "CHAR_LENGTH" | "CHARACTER_LENGTH" | "LENGTH" => Function::CharLength,
        "BTRIM" => Function::Trim { leading: true, trailing: true },
        "LTRIM" => Function::Trim { leading: true, trailing: false },
        "RTRIM" => Function::Trim { leading: false, trailing: true },
        "SUBSTRING" => Function::Substring,
        "CONCAT_WS" => Function::ConcatWs,
        "ABS" => Function::Abs,
        "FLOOR" => Function::Floor,
        "CEIL" | "CEILING" => Function::Ceil,
        "ROUND" => Function::Round,
        "TRUNCATE" => Function::Truncate,
        "POWER" => Function::Power,
        "SQRT" => Function::Sqrt,
        "SIGN" => Function::Sign,
        "MOD" => Function::Mod,
        "COALESCE" => Function::Coalesce,
        "NULLIF" => Function::NullIf,
        "POSITION" => Function::Position,
        "REPLACE" => Function::Replace,
        "INITCAP" => Function::Initcap,
        "ASCII" => Function::Ascii,
        "JSON_VALUE" => Function::JsonValue,
        "JSON_QUERY" => Function::JsonQuery,
        "JSON_OBJECT" => Function::JsonObject,
        "JSON_ARRAY" => Function::JsonArray,
        "JSON_QUERY_WITH_WRAPPER" => Function::JsonQueryWrapped,
        "EXP" => Function::Exp,
        "LN" => Function::Ln,
        "LOG10" => Function::Log10,
        "RAND" => Function::Rand,
        _ => return None,
    })
}

fn arity(name: &str, args: &[Expr], min: usize, max: usize) -> Result<()> {
    if args.len() < min || args.len() > max {
        return Err(SqlError::parsing(format!(
            "Invalid number of arguments to function '{name}'. Was expecting {min} arguments"
        )));
    }
    Ok(())
}

/// The result type of `function(args)`, checking the arguments' types.
pub fn result_type(function: Function, name: &str, args: &[Expr]) -> Result<SqlType> {
    use Function::*;
    match function {
        Upper
        | Lower
        | Initcap
        | Trim { .. }
        | CharLength
        | Ascii
        | Substring
        | Replace
        | Position
        | Concat
        | ConcatWs => text_result_type(function, name, args),
        Abs | Floor | Ceil | Round | Truncate | Sign | Mod | Power | Sqrt | Exp | Ln | Log10 | Rand => {
            numeric_result_type(function, name, args)
        }
        Coalesce | NullIf | JsonValue | JsonObject | JsonArray | JsonQuery | JsonQueryWrapped => {
            other_result_type(function, name, args)
        }
    }
}

/// The result type of a string function.
fn text_result_type(function: Function, name: &str, args: &[Expr]) -> Result<SqlType> {
    use Function::*;
    Ok(match function {
        Upper | Lower | Initcap | Trim { .. } => {
            arity(name, args, 1, 2)?;
            text_argument(name, args, 0)?;
            SqlType::Varchar
        }
        CharLength | Ascii => {
            arity(name, args, 1, 1)?;
            text_argument(name, args, 0)?;
            SqlType::Integer
        }
        Substring => {
            arity(name, args, 2, 3)?;
            SqlType::Varchar
        }
        Replace => {
            arity(name, args, 3, 3)?;
            SqlType::Varchar
        }
        Position => {
            arity(name, args, 2, 3)?;
            SqlType::Integer
        }
        Concat | ConcatWs => SqlType::Varchar,
        _ => unreachable!("{function:?} is not a string function"),
    })
}

/// The result type of a numeric function.
fn numeric_result_type(function: Function, name: &str, args: &[Expr]) -> Result<SqlType> {
    use Function::*;
    Ok(match function {
        Abs => {
            arity(name, args, 1, 1)?;
            let ty = numeric_argument(name, args, 0)?;
            if ty.is_integer() {
                SqlType::integer_of_bits(super::integer_bits(&args[0]) + 1)
            } else {
                ty
            }
        }
        Floor | Ceil => {
            arity(name, args, 1, 1)?;
            numeric_argument(name, args, 0)?
        }
        Round | Truncate => {
            arity(name, args, 1, 2)?;
            numeric_argument(name, args, 0)?
        }
        Sign => {
            arity(name, args, 1, 1)?;
            numeric_argument(name, args, 0)?
        }
        Mod => {
            arity(name, args, 2, 2)?;
            numeric_argument(name, args, 0)?.wider(numeric_argument(name, args, 1)?)
        }
        Power | Sqrt | Exp | Ln | Log10 => {
            arity(name, args, if function == Power { 2 } else { 1 }, if function == Power { 2 } else { 1 })?;
            for index in 0..args.len() {
                numeric_argument(name, args, index)?;
            }
            SqlType::Double
        }
        Rand => SqlType::Double,
        _ => unreachable!("{function:?} is not a numeric function"),
    })
}

/// The result type of COALESCE, NULLIF and the JSON functions.
fn other_result_type(function: Function, name: &str, args: &[Expr]) -> Result<SqlType> {
    use Function::*;
    Ok(match function {
        Coalesce => {
            if args.is_empty() {
                return Err(SqlError::parsing("Invalid number of arguments to function 'COALESCE'"));
            }
            common_type(args.iter().map(|arg| arg.ty))?
        }
        NullIf => {
            arity(name, args, 2, 2)?;
            args[0].ty
        }
        JsonValue => {
            arity(name, args, 2, 2)?;
            SqlType::Varchar
        }
        JsonObject => {
            if !args.len().is_multiple_of(2) {
                return Err(SqlError::parsing("JSON_OBJECT takes key and value pairs"));
            }
            SqlType::Json
        }
        JsonArray => SqlType::Json,
        JsonQuery | JsonQueryWrapped => {
            arity(name, args, 2, 2)?;
            SqlType::Json
        }
        _ => unreachable!("{function:?} has its type elsewhere"),
    })
}

/// Argument `index`'s type if it is numeric (or NULL), else Hazelcast's error.
fn numeric_argument(name: &str, args: &[Expr], index: usize) -> Result<SqlType> {
    let ty = args[index].ty;
    if ty.is_numeric() || ty == SqlType::Null {
        Ok(ty)
    } else {
        Err(SqlError::parsing(format!(
            "Cannot apply '{name}' function to [{}] (consider adding an explicit CAST)",
            ty.name()
        )))
    }
}

/// Argument `index`, if given, must be VARCHAR (or NULL), else Hazelcast's error.
fn text_argument(name: &str, args: &[Expr], index: usize) -> Result<()> {
    match args.get(index).map(|a| a.ty) {
        Some(SqlType::Varchar | SqlType::Null) | None => Ok(()),
        Some(ty) => Err(SqlError::parsing(format!(
            "Cannot apply '{name}' function to [{}] (consider adding an explicit CAST)",
            ty.name()
        ))),
    }
}

/// The type values of `types` are all converted to (CASE results, COALESCE, IN lists).
pub fn common_type(types: impl Iterator<Item = SqlType>) -> Result<SqlType> {
    let mut common = SqlType::Null;
    for ty in types {
        common = match (common, ty) {
            (SqlType::Null, ty) | (ty, SqlType::Null) => ty,
            (a, b) if a == b => a,
            (a, b) if a.is_numeric() && b.is_numeric() => a.wider(b),
            (a, b) => {
                return Err(SqlError::parsing(format!(
                    "Illegal mixing of types: {} and {} (consider adding an explicit CAST)",
                    a.name(),
                    b.name()
                )))
            }
        };
    }
    Ok(common)
}

fn text(value: &Value) -> String {
    types::to_text(value)
}

/// Calls `function` on evaluated `values` (`args` are the argument expressions, for types).
pub fn call(function: Function, values: Vec<Value>, _args: &[Expr], ty: SqlType) -> Result<Value> {
    use Function::*;
    match function {
        Coalesce | NullIf | Rand | JsonObject | JsonArray | ConcatWs => call_seeing_nulls(function, values, ty),
        _ if values.iter().any(Value::is_null) => Ok(Value::Null),
        _ => call_on_values(function, &values, ty),
    }
}

/// The functions that do not return null for a null argument.
fn call_seeing_nulls(function: Function, values: Vec<Value>, ty: SqlType) -> Result<Value> {
    use Function::*;
    match function {
        Coalesce => {
            for value in values {
                if !value.is_null() {
                    return super::to_type(value, ty);
                }
            }
            Ok(Value::Null)
        }
        NullIf => {
            let equal = super::compare(&values[0], &values[1])? == Some(std::cmp::Ordering::Equal);
            Ok(if equal { Value::Null } else { values[0].clone() })
        }
        Rand => Ok(Value::Double(pseudo_random())),
        JsonObject => {
            let mut fields = Vec::new();
            for pair in values.chunks(2) {
                if pair[0].is_null() {
                    return Err(SqlError::data("A JSON_OBJECT key is NULL"));
                }
                let key = serde_json::Value::String(text(&pair[0])).to_string();
                fields.push(format!("{key}:{}", types::json_of(&pair[1])));
            }
            Ok(Value::Json(format!("{{{}}}", fields.join(","))))
        }
        JsonArray => {
            // ABSENT ON NULL, the SQL default for arrays
            let items: Vec<String> =
                values.iter().filter(|v| !v.is_null()).map(|v| types::json_of(v).to_string()).collect();
            Ok(Value::Json(format!("[{}]", items.join(","))))
        }
        ConcatWs => {
            let Some(separator) = values.first() else { return Ok(Value::Null) };
            if separator.is_null() {
                return Ok(Value::Null);
            }
            let parts: Vec<String> = values[1..].iter().filter(|v| !v.is_null()).map(text).collect();
            Ok(Value::String(parts.join(&text(separator))))
        }
        _ => unreachable!("{function:?} is null in, null out"),
    }
}

/// The functions that return null for a null argument, on arguments none of which is null.
fn call_on_values(function: Function, values: &[Value], ty: SqlType) -> Result<Value> {
    use Function::*;
    Ok(match function {
        Upper => Value::String(text(&values[0]).to_uppercase()),
        Lower => Value::String(text(&values[0]).to_lowercase()),
        Initcap => Value::String(initcap(&text(&values[0]))),
        Trim { leading, trailing } => trim(values, leading, trailing),
        CharLength => Value::Int(text(&values[0]).encode_utf16().count() as i32),
        Ascii => Value::Int(text(&values[0]).chars().next().map_or(0, |c| c as i32)),
        Substring => substring(values)?,
        Replace => Value::String(text(&values[0]).replace(&text(&values[1]), &text(&values[2]))),
        Position => position(values),
        Concat => Value::String(values.iter().map(text).collect()),
        Abs => abs(&values[0], ty)?,
        Floor | Ceil => {
            round_with(&values[0], ty, if function == Floor { f64::floor } else { f64::ceil }, function == Ceil)?
        }
        Round | Truncate => {
            let places = values.get(1).and_then(types::to_integer).unwrap_or(0) as i32;
            round_places(&values[0], ty, places, function == Round)?
        }
        Sign => match types::to_double(&values[0]) {
            Some(v) => super::to_type(Value::Double(v.signum() * if v == 0.0 { 0.0 } else { 1.0 }), ty)?,
            None => Value::Null,
        },
        Mod => super::arithmetic(super::Arithmetic::Remainder, &values[0], &values[1], ty)?,
        Power => Value::Double(double(&values[0])?.powf(double(&values[1])?)),
        Sqrt => Value::Double(double(&values[0])?.sqrt()),
        Exp => Value::Double(double(&values[0])?.exp()),
        Ln => Value::Double(double(&values[0])?.ln()),
        Log10 => Value::Double(double(&values[0])?.log10()),
        JsonValue => json_value(&values[0], &text(&values[1]))?,
        JsonQuery => json_query(&values[0], &text(&values[1]), false)?,
        JsonQueryWrapped => json_query(&values[0], &text(&values[1]), true)?,
        Coalesce | NullIf | Rand | ConcatWs | JsonObject | JsonArray => unreachable!("called by call_seeing_nulls"),
    })
}

/// TRIM([LEADING | TRAILING | BOTH] [characters FROM] text): spaces unless characters are given.
fn trim(values: &[Value], leading: bool, trailing: bool) -> Value {
    let value = text(&values[0]);
    let characters: Vec<char> = match values.get(1) {
        Some(what) => text(what).chars().collect(),
        None => vec![' '],
    };
    let set = |c: char| characters.contains(&c);
    let trimmed = match (leading, trailing) {
        (true, true) => value.trim_matches(set),
        (true, false) => value.trim_start_matches(set),
        _ => value.trim_end_matches(set),
    };
    Value::String(trimmed.to_owned())
}

/// SUBSTRING(text FROM start [FOR length]), in characters from 1.
fn substring(values: &[Value]) -> Result<Value> {
    let value: Vec<char> = text(&values[0]).chars().collect();
    let start = types::to_integer(&values[1]).unwrap_or(1);
    if start <= 0 {
        return Err(SqlError::data("SUBSTRING \"start\" operand must be positive"));
    }
    let length = values.get(2).and_then(types::to_integer);
    if let Some(length) = length {
        if length < 0 {
            return Err(SqlError::data("Negative substring length not allowed"));
        }
    }
    let begin = start.max(1);
    let end = match length {
        Some(length) => start + length,
        None => value.len() as i128 + 1,
    };
    let (from, to) = ((begin - 1).max(0) as usize, (end - 1).clamp(0, value.len() as i128) as usize);
    Ok(Value::String(if from >= to { String::new() } else { value[from.min(value.len())..to].iter().collect() }))
}

/// POSITION(needle IN haystack [FROM start]): 1-based, 0 when not found.
fn position(values: &[Value]) -> Value {
    let (needle, haystack) = (text(&values[0]), text(&values[1]));
    let from = values.get(2).and_then(types::to_integer).unwrap_or(1).max(1) as usize;
    let chars: Vec<char> = haystack.chars().collect();
    let tail: String = chars.iter().skip(from - 1).collect();
    match tail.find(&needle) {
        Some(byte) => Value::Int((tail[..byte].chars().count() + from) as i32),
        None => Value::Int(0),
    }
}

fn double(value: &Value) -> Result<f64> {
    types::to_double(value).ok_or_else(|| SqlError::data("not a number"))
}

fn pseudo_random() -> f64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let mut x = nanos as u64 ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

fn initcap(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut start = true;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if start {
                out.extend(c.to_uppercase());
            } else {
                out.extend(c.to_lowercase());
            }
            start = false;
        } else {
            out.push(c);
            start = true;
        }
    }
    out
}

fn abs(value: &Value, ty: SqlType) -> Result<Value> {
    match value {
        Value::Double(v) => Ok(Value::Double(v.abs())),
        Value::Float(v) => Ok(Value::Float(v.abs())),
        Value::BigDecimal(v) => {
            let unscaled = v.unscaled();
            let positive =
                if unscaled.sign() == num_bigint::Sign::Minus { -unscaled.clone() } else { unscaled.clone() };
            Ok(Value::BigDecimal(BigDecimal::new(positive, v.scale())))
        }
        other => {
            let integer = types::to_integer(other).ok_or_else(|| SqlError::data("not a number"))?;
            types::integer_value(integer.abs(), ty)
                .ok_or_else(|| SqlError::data(format!("{} overflow in 'ABS' function", ty.name())))
        }
    }
}

fn round_with(value: &Value, ty: SqlType, f: fn(f64) -> f64, ceil: bool) -> Result<Value> {
    match value {
        Value::Double(v) => Ok(Value::Double(f(*v))),
        Value::Float(v) => Ok(Value::Float(f(*v as f64) as f32)),
        Value::BigDecimal(v) => {
            let scale = v.scale();
            if scale <= 0 {
                return Ok(value.clone());
            }
            let divisor = BigInt::from(10).pow(scale as u32);
            let (q, r) = (v.unscaled() / &divisor, v.unscaled() % &divisor);
            let zero = BigInt::from(0);
            let adjusted = if r == zero {
                q
            } else if ceil && r > zero {
                q + 1
            } else if !ceil && r < zero {
                q - 1
            } else {
                q
            };
            Ok(Value::BigDecimal(BigDecimal::new(adjusted, 0)))
        }
        _ => super::to_type(value.clone(), ty),
    }
}

fn round_places(value: &Value, ty: SqlType, places: i32, round: bool) -> Result<Value> {
    match value {
        // As Hazelcast: the double's exact binary value (`new BigDecimal(double)`) rounded half
        // up, so ROUND(41.05, 1) is 41.0 (41.05 is 41.0499999... in binary).
        Value::Double(_) | Value::Float(_) => {
            let v = double(value)?;
            if !v.is_finite() {
                return super::to_type(Value::Double(v), ty);
            }
            let done = round_places(&Value::BigDecimal(types::exact_decimal(v)), SqlType::Decimal, places, round)?;
            super::to_type(Value::Double(types::to_double(&done).unwrap_or(v)), ty)
        }
        Value::BigDecimal(v) => {
            if v.scale() <= places {
                return Ok(value.clone());
            }
            let drop = (v.scale() - places) as u32;
            let divisor = BigInt::from(10).pow(drop);
            let (q, r) = (v.unscaled() / &divisor, v.unscaled() % &divisor);
            let twice: BigInt = &r * 2;
            let q = if round && twice.magnitude() >= divisor.magnitude() {
                if r.sign() == num_bigint::Sign::Minus {
                    q - 1
                } else {
                    q + 1
                }
            } else {
                q
            };
            Ok(Value::BigDecimal(BigDecimal::new(q, places)))
        }
        other => {
            if places >= 0 {
                return super::to_type(other.clone(), ty);
            }
            let integer = types::to_integer(other).ok_or_else(|| SqlError::data("not a number"))?;
            let factor = 10i128.pow((-places) as u32);
            let (q, r) = (integer / factor, integer % factor);
            let q = if round && r.abs() * 2 >= factor { q + r.signum() } else { q };
            types::integer_value(q * factor, ty).ok_or_else(|| SqlError::data("overflow"))
        }
    }
}

/// A JSON path of the `$.a.b[1]` form (lax mode): the steps.
fn json_path(path: &str) -> Result<Vec<PathStep>> {
    let path = path.trim();
    let path = path.strip_prefix("lax ").unwrap_or(path).trim();
    let Some(rest) = path.strip_prefix('$') else {
        return Err(SqlError::data(format!("Invalid SQL/JSON path expression: {path}")));
    };
    let mut steps = Vec::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut name = String::new();
                while let Some(&c) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    name.push(c);
                    chars.next();
                }
                if name.is_empty() {
                    return Err(SqlError::data(format!("Invalid SQL/JSON path expression: {path}")));
                }
                steps.push(PathStep::Field(name.trim_matches('"').to_owned()));
            }
            '[' => {
                let mut index = String::new();
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    index.push(c);
                }
                match index.trim() {
                    "*" => steps.push(PathStep::Any),
                    text => steps.push(PathStep::Index(
                        text.parse()
                            .map_err(|_| SqlError::data(format!("Invalid SQL/JSON path expression: {path}")))?,
                    )),
                }
            }
            ' ' => {}
            _ => return Err(SqlError::data(format!("Invalid SQL/JSON path expression: {path}"))),
        }
    }
    Ok(steps)
}

enum PathStep {
    Field(String),
    Index(usize),
    Any,
}

fn json_at(value: &Value, path: &str) -> Result<Option<serde_json::Value>> {
    let text = types::to_text(value);
    let document: serde_json::Value = serde_json::from_str(&text)
        .map_err(|error| SqlError::data(format!("Failed to parse JSON document: {error}")))?;
    let mut current = vec![document];
    for step in json_path(path)? {
        let mut next = Vec::new();
        for node in current {
            match (&step, node) {
                (PathStep::Field(name), serde_json::Value::Object(mut fields)) => {
                    if let Some(field) = fields.remove(name) {
                        next.push(field);
                    }
                }
                (PathStep::Index(index), serde_json::Value::Array(mut items)) if *index < items.len() => {
                    next.push(items.swap_remove(*index));
                }
                (PathStep::Any, serde_json::Value::Array(items)) => next.extend(items),
                _ => {}
            }
        }
        current = next;
    }
    Ok(match current.len() {
        0 => None,
        1 => current.pop(),
        _ => Some(serde_json::Value::Array(current)),
    })
}

fn json_value(value: &Value, path: &str) -> Result<Value> {
    Ok(match json_at(value, path)? {
        None | Some(serde_json::Value::Null) => Value::Null,
        Some(serde_json::Value::String(text)) => Value::String(text),
        Some(serde_json::Value::Bool(v)) => Value::String(v.to_string()),
        Some(serde_json::Value::Number(n)) => Value::String(n.to_string()),
        // lax mode, NULL ON ERROR: a structure is not a scalar
        Some(_) => Value::Null,
    })
}

/// JSON_QUERY: an object as it is; an array only WITH WRAPPER (as it is: Hazelcast does not
/// wrap an array again), else Hazelcast's error; a scalar wrapped in an array WITH WRAPPER.
fn json_query(value: &Value, path: &str, wrapped: bool) -> Result<Value> {
    Ok(match json_at(value, path)? {
        None => Value::Null,
        Some(node @ serde_json::Value::Object(_)) => Value::Json(node.to_string()),
        Some(node @ serde_json::Value::Array(_)) if wrapped => Value::Json(node.to_string()),
        Some(serde_json::Value::Array(_)) => return Err(SqlError::generic("JSON_QUERY evaluated to multiple values")),
        Some(node) if wrapped => Value::Json(serde_json::Value::Array(vec![node]).to_string()),
        Some(node) => Value::Json(node.to_string()),
    })
}
