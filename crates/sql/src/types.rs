//! Hazelcast's SQL types (`SqlColumnType`), their names and ids, and how a value of one is
//! converted to another (`CAST`, and the implicit conversions of comparisons, arithmetic and
//! inserts). Dates and times convert in [`temporal`].

mod temporal;

use crate::error::{Result, SqlError};
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::Value;
use num_bigint::BigInt;

/// A column's or an expression's type; `id()` is `SqlColumnType` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    Varchar,
    Boolean,
    TinyInt,
    SmallInt,
    Integer,
    BigInt,
    Decimal,
    Real,
    Double,
    Date,
    Time,
    Timestamp,
    TimestampWithTimeZone,
    Object,
    Null,
    Json,
}

impl SqlType {
    pub fn id(self) -> i32 {
        self as i32
    }

    /// The name Hazelcast prints (in errors, SHOW MAPPINGS and mapping DDL).
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Varchar => "VARCHAR",
            SqlType::Boolean => "BOOLEAN",
            SqlType::TinyInt => "TINYINT",
            SqlType::SmallInt => "SMALLINT",
            SqlType::Integer => "INTEGER",
            SqlType::BigInt => "BIGINT",
            SqlType::Decimal => "DECIMAL",
            SqlType::Real => "REAL",
            SqlType::Double => "DOUBLE",
            SqlType::Date => "DATE",
            SqlType::Time => "TIME",
            SqlType::Timestamp => "TIMESTAMP",
            SqlType::TimestampWithTimeZone => "TIMESTAMP WITH TIME ZONE",
            SqlType::Object => "OBJECT",
            SqlType::Null => "NULL",
            SqlType::Json => "JSON",
        }
    }

    /// The type a type name means (as in column lists and CAST), case-insensitive.
    pub fn parse(name: &str) -> Option<SqlType> {
        let name = name.trim().to_ascii_uppercase();
        let name: String = name.split_whitespace().collect::<Vec<_>>().join(" ");
        Some(match name.as_str() {
            "VARCHAR" | "CHAR VARYING" | "CHARACTER VARYING" | "STRING" | "TEXT" => SqlType::Varchar,
            "BOOLEAN" | "BOOL" => SqlType::Boolean,
            "TINYINT" => SqlType::TinyInt,
            "SMALLINT" => SqlType::SmallInt,
            "INT" | "INTEGER" => SqlType::Integer,
            "BIGINT" => SqlType::BigInt,
            "DECIMAL" | "DEC" | "NUMERIC" => SqlType::Decimal,
            "REAL" | "FLOAT" => SqlType::Real,
            "DOUBLE" | "DOUBLE PRECISION" => SqlType::Double,
            "DATE" => SqlType::Date,
            "TIME" => SqlType::Time,
            "TIMESTAMP" => SqlType::Timestamp,
            "TIMESTAMP WITH TIME ZONE" => SqlType::TimestampWithTimeZone,
            "OBJECT" => SqlType::Object,
            "JSON" => SqlType::Json,
            _ => return None,
        })
    }

    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::TinyInt | SqlType::SmallInt | SqlType::Integer | SqlType::BigInt)
    }

    pub fn is_numeric(self) -> bool {
        self.is_integer() || matches!(self, SqlType::Decimal | SqlType::Real | SqlType::Double)
    }

    pub fn is_temporal(self) -> bool {
        matches!(self, SqlType::Date | SqlType::Time | SqlType::Timestamp | SqlType::TimestampWithTimeZone)
    }

    /// The order of numeric types in widening (Hazelcast's type precedence).
    fn numeric_rank(self) -> u8 {
        match self {
            SqlType::TinyInt => 1,
            SqlType::SmallInt => 2,
            SqlType::Integer => 3,
            SqlType::BigInt => 4,
            SqlType::Decimal => 5,
            SqlType::Real => 6,
            SqlType::Double => 7,
            _ => 0,
        }
    }

    /// The wider of two numeric types (the type both sides of a comparison or of arithmetic
    /// are converted to).
    pub fn wider(self, other: SqlType) -> SqlType {
        if self.numeric_rank() >= other.numeric_rank() {
            self
        } else {
            other
        }
    }

    /// The integer type of a bit width (how wide a result must be not to overflow), as
    /// Hazelcast's integer types carry one: BIGINT beyond 63 bits.
    pub fn integer_of_bits(bits: u32) -> SqlType {
        match bits {
            0..=7 => SqlType::TinyInt,
            8..=15 => SqlType::SmallInt,
            16..=31 => SqlType::Integer,
            _ => SqlType::BigInt,
        }
    }

    /// The bits a value of this integer type may need (not counting the sign).
    pub fn bits(self) -> u32 {
        match self {
            SqlType::TinyInt => 7,
            SqlType::SmallInt => 15,
            SqlType::Integer => 31,
            _ => 63,
        }
    }

    /// The type of a value read from an entry (a column of a mapping derived from a sample).
    pub fn of_value(value: &Value) -> SqlType {
        match value {
            Value::Null => SqlType::Null,
            Value::Bool(_) => SqlType::Boolean,
            Value::Byte(_) => SqlType::TinyInt,
            Value::Short(_) => SqlType::SmallInt,
            Value::Int(_) => SqlType::Integer,
            Value::Long(_) => SqlType::BigInt,
            Value::Float(_) => SqlType::Real,
            Value::Double(_) => SqlType::Double,
            Value::Char(_) | Value::String(_) => SqlType::Varchar,
            Value::BigInteger(_) | Value::BigDecimal(_) => SqlType::Decimal,
            Value::Date(_) => SqlType::Date,
            Value::Time(_) => SqlType::Time,
            Value::Timestamp(_) => SqlType::Timestamp,
            Value::TimestampWithTimezone(_) => SqlType::TimestampWithTimeZone,
            Value::Json(_) => SqlType::Json,
            _ => SqlType::Object,
        }
    }
}

/// `value` as a value of `ty`, as CAST converts it; errors are data errors naming both types.
pub fn convert(value: Value, ty: SqlType) -> Result<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let from = SqlType::of_value(&value);
    if from == ty || ty == SqlType::Object {
        return Ok(value);
    }
    let fail = |value: &Value| cannot(from, ty, value);
    match ty {
        SqlType::Varchar => Ok(Value::String(to_text(&value))),
        SqlType::Boolean => match &value {
            Value::String(text) => match text.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(fail(&value)),
            },
            _ => Err(fail(&value)),
        },
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Integer | SqlType::BigInt => {
            let integer = to_integer(&value).ok_or_else(|| fail(&value))?;
            integer_value(integer, ty).ok_or_else(|| {
                SqlError::data(format!("Numeric overflow while converting {} to {}", from.name(), ty.name()))
            })
        }
        SqlType::Real => Ok(Value::Float(to_double(&value).ok_or_else(|| fail(&value))? as f32)),
        SqlType::Double => Ok(Value::Double(to_double(&value).ok_or_else(|| fail(&value))?)),
        SqlType::Decimal => to_decimal(&value).map(Value::BigDecimal).ok_or_else(|| fail(&value)),
        SqlType::Json => match &value {
            Value::String(text) => Ok(Value::Json(text.clone())),
            _ => Err(fail(&value)),
        },
        SqlType::Date | SqlType::Time | SqlType::Timestamp | SqlType::TimestampWithTimeZone => {
            temporal::convert(&value, ty).ok_or_else(|| fail(&value))
        }
        SqlType::Null | SqlType::Object => Ok(value),
    }
}

fn cannot(from: SqlType, to: SqlType, value: &Value) -> SqlError {
    match value {
        Value::String(_) => SqlError::data(format!("Cannot parse VARCHAR value to {}", to.name())),
        _ => SqlError::data(format!("Cannot convert {} to {}", from.name(), to.name())),
    }
}

/// A value of an integer type, or None when it does not fit.
pub fn integer_value(integer: i128, ty: SqlType) -> Option<Value> {
    Some(match ty {
        SqlType::TinyInt => Value::Byte(i8::try_from(integer).ok()?),
        SqlType::SmallInt => Value::Short(i16::try_from(integer).ok()?),
        SqlType::Integer => Value::Int(i32::try_from(integer).ok()?),
        _ => Value::Long(i64::try_from(integer).ok()?),
    })
}

/// An exact integer (numbers with a fraction are truncated toward zero, as a Java cast does;
/// text is parsed).
pub fn to_integer(value: &Value) -> Option<i128> {
    match value {
        Value::Byte(v) => Some(*v as i128),
        Value::Short(v) => Some(*v as i128),
        Value::Int(v) => Some(*v as i128),
        Value::Long(v) => Some(*v as i128),
        Value::Float(v) if v.is_finite() => Some(v.trunc() as i128),
        Value::Double(v) if v.is_finite() => Some(v.trunc() as i128),
        Value::BigInteger(v) => i128::try_from(v).ok(),
        Value::BigDecimal(v) => {
            let text = v.to_string();
            let whole = text.split('.').next().unwrap_or("0");
            whole.parse::<i128>().ok().or_else(|| whole.parse::<f64>().ok().map(|d| d.trunc() as i128))
        }
        Value::String(text) => text.trim().parse::<i128>().ok(),
        Value::Bool(_) => None,
        _ => None,
    }
}

pub fn to_double(value: &Value) -> Option<f64> {
    match value {
        Value::Byte(v) => Some(*v as f64),
        Value::Short(v) => Some(*v as f64),
        Value::Int(v) => Some(*v as f64),
        Value::Long(v) => Some(*v as f64),
        Value::Float(v) => Some(*v as f64),
        Value::Double(v) => Some(*v),
        Value::BigInteger(v) => v.to_string().parse().ok(),
        Value::BigDecimal(v) => v.to_string().parse().ok(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

pub fn to_decimal(value: &Value) -> Option<BigDecimal> {
    let text = match value {
        Value::Byte(_) | Value::Short(_) | Value::Int(_) | Value::Long(_) => to_integer(value)?.to_string(),
        Value::Float(v) if v.is_finite() => format_java_double(*v as f64),
        Value::Double(v) if v.is_finite() => format_java_double(*v),
        Value::BigInteger(v) => v.to_string(),
        Value::BigDecimal(v) => return Some(v.clone()),
        Value::String(text) => text.trim().to_owned(),
        _ => return None,
    };
    BigDecimal::parse(&text)
}

/// A finite double's exact value in decimal (its binary mantissa times a power of two), as
/// Java's `new BigDecimal(double)`.
pub fn exact_decimal(v: f64) -> BigDecimal {
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (mut mantissa, mut exponent) =
        if biased == 0 { (fraction, -1074) } else { (fraction | (1 << 52), biased - 1075) };
    if mantissa == 0 {
        return BigDecimal::new(BigInt::from(0), 0);
    }
    let zeros = mantissa.trailing_zeros();
    mantissa >>= zeros;
    exponent += zeros as i32;
    let mut unscaled = BigInt::from(mantissa);
    let scale = if exponent >= 0 {
        unscaled <<= exponent as usize;
        0
    } else {
        unscaled *= BigInt::from(5).pow(exponent.unsigned_abs());
        -exponent
    };
    BigDecimal::new(if v < 0.0 { -unscaled } else { unscaled }, scale)
}

/// A double as Java's `Double.toString` writes it (Hazelcast's VARCHAR of a DOUBLE).
pub fn format_java_double(value: f64) -> String {
    ferrogrid_query::number::java_double_string(value)
}

/// A value as VARCHAR text, as Hazelcast converts it.
pub fn to_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(v) => v.to_string(),
        Value::Byte(v) => v.to_string(),
        Value::Short(v) => v.to_string(),
        Value::Int(v) => v.to_string(),
        Value::Long(v) => v.to_string(),
        Value::Float(v) => ferrogrid_query::number::java_float_string(*v),
        Value::Double(v) => format_java_double(*v),
        Value::Char(v) => String::from_utf16_lossy(&[*v]),
        Value::String(v) | Value::Json(v) => v.clone(),
        Value::BigInteger(v) => v.to_string(),
        Value::BigDecimal(v) => v.to_string(),
        Value::Date(_) | Value::Time(_) | Value::Timestamp(_) | Value::TimestampWithTimezone(_) => {
            temporal::to_text(value)
        }
        other => format!("{other:?}"),
    }
}

/// A value as JSON (numbers as numbers, JSON text as its structure, the rest as strings).
pub(crate) fn json_of(value: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Value::Null => J::Null,
        Value::Bool(v) => J::Bool(*v),
        Value::Byte(_) | Value::Short(_) | Value::Int(_) | Value::Long(_) => {
            J::Number(serde_json::Number::from(to_integer(value).unwrap_or(0) as i64))
        }
        Value::Float(_) | Value::Double(_) => {
            serde_json::Number::from_f64(to_double(value).unwrap_or(0.0)).map_or(J::Null, J::Number)
        }
        Value::BigDecimal(_) | Value::BigInteger(_) => {
            let text = to_text(value);
            serde_json::from_str(&text).unwrap_or(J::String(text))
        }
        Value::Json(text) => serde_json::from_str(text).unwrap_or(J::String(text.clone())),
        other => J::String(to_text(other)),
    }
}
