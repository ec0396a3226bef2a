//! How Hazelcast converts a predicate's comparison value to the type of the attribute it is
//! compared with (`AbstractPredicate.convert` and `com.hazelcast.query.impl.TypeConverters`),
//! and Java's `toString` of a value (what the `String` converter produces).
//!
//! The rules, as Hazelcast 5.6 applies them:
//! - a null comparison value, a null attribute, or a value already of the attribute's type is
//!   left as it is;
//! - otherwise the attribute's type picks the converter. Numeric converters narrow only when no
//!   information is lost (a long 30 against an int attribute becomes the int 30; a long 2^40
//!   stays a long; a double 2.5 stays a double) and parse strings (`"30"` → 30; an int
//!   attribute with `"3000000000"` gets a long, with `"2.5"` a double); `BigInteger` and
//!   `BigDecimal` comparison values are left to the numeric converters as they are;
//! - strings become booleans (`"TRUE"` → true, anything else false), chars (one UTF-16 unit),
//!   UUIDs, dates and times (ISO text) and big numbers; numbers become booleans (non-zero), chars
//!   and dates (epoch milliseconds);
//! - a `String` attribute takes Java's `toString` of the comparison value;
//! - attributes of other types (objects, arrays, JSON structures) cannot be converted to.
//!
//! Differences from Hazelcast, all documented where they arise: epoch milliseconds become local
//! dates and times in UTC (Java uses the member's default time zone); strings are not parsed
//! into `java.util.Date` (Java parses `Date.toString`'s locale-dependent format); Java also
//! accepts non-ASCII digits and hexadecimal doubles in number text. Hazelcast also remembers
//! the attribute's type from the first non-null attribute a predicate meets and converts with
//! it for every later entry; callers that want that must keep the first attribute.

use crate::error::QueryError;
use crate::number::{equal_doubles, equal_long_and_double, java_double_string, java_float_string};
use crate::number::{parse_java_big_integer, parse_java_double, parse_java_integer, BigDecimal};
use crate::temporal::{legacy_date_string, Date, Time, Timestamp, TimestampWithTimezone};
use crate::value::Value;
use num_bigint::BigInt;

/// The four integral attribute types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Integral {
    Byte,
    Short,
    Int,
    Long,
}

/// What Hazelcast's numeric converters call their target in errors.
const NUMBER: &str = "number";

impl Integral {
    /// The value as this type, if it is within its range.
    fn fit(self, value: i64) -> Option<Value> {
        match self {
            Integral::Byte => i8::try_from(value).ok().map(Value::Byte),
            Integral::Short => i16::try_from(value).ok().map(Value::Short),
            Integral::Int => i32::try_from(value).ok().map(Value::Int),
            Integral::Long => Some(Value::Long(value)),
        }
    }

    /// Java's narrowing cast of a double: saturate to `int` (or `long`), then wrap.
    fn narrow(self, value: f64) -> i64 {
        match self {
            Integral::Byte => i64::from(value as i32 as i8),
            Integral::Short => i64::from(value as i32 as i16),
            Integral::Int => i64::from(value as i32),
            Integral::Long => value as i64,
        }
    }
}

impl Value {
    /// The comparison value `self` converted to the type of `attribute`, as Hazelcast converts a
    /// predicate's value before comparing it with an entry's attribute.
    pub fn convert_like(&self, attribute: &Value) -> Result<Value, QueryError> {
        let same_type = std::mem::discriminant(self) == std::mem::discriminant(attribute);
        if self.is_null() || attribute.is_null() || same_type {
            return Ok(self.clone());
        }
        match attribute {
            Value::Bool(_) => self.to_bool(),
            Value::Byte(_) => self.to_integral(Integral::Byte),
            Value::Short(_) => self.to_integral(Integral::Short),
            Value::Int(_) => self.to_integral(Integral::Int),
            Value::Long(_) => self.to_integral(Integral::Long),
            Value::Float(_) => self.to_float(),
            Value::Double(_) => self.to_double(),
            Value::Char(_) => self.to_char(),
            Value::String(_) => self.java_string().map(Value::String),
            Value::BigInteger(_) => self.to_big_integer().map(Value::BigInteger),
            Value::BigDecimal(_) => self.to_big_decimal().map(Value::BigDecimal),
            Value::Uuid(_) => self.to_uuid(),
            Value::Date(_) | Value::Time(_) | Value::Timestamp(_) | Value::TimestampWithTimezone(_) => {
                self.to_temporal(attribute)
            }
            Value::LegacyDate(_) => match self.long_value() {
                Some(millis) => Ok(Value::LegacyDate(millis)),
                None => Err(self.cannot("java.util.Date")),
            },
            Value::Null | Value::Json(_) | Value::JsonStructure | Value::Array(_) | Value::Object(_) => {
                Err(QueryError::UnknownAttributeType { attribute: attribute.type_name(), value: self.describe() })
            }
        }
    }

    /// Java's `toString` of this value (`String.valueOf`), as the `String` converter uses it.
    pub fn java_string(&self) -> Result<String, QueryError> {
        Ok(match self {
            Value::Null => "null".into(),
            Value::Bool(value) => value.to_string(),
            Value::Byte(value) => value.to_string(),
            Value::Short(value) => value.to_string(),
            Value::Int(value) => value.to_string(),
            Value::Long(value) => value.to_string(),
            Value::Float(value) => java_float_string(*value),
            Value::Double(value) => java_double_string(*value),
            Value::Char(unit) => String::from_utf16_lossy(&[*unit]),
            Value::String(text) | Value::Json(text) => text.clone(),
            Value::BigInteger(value) => value.to_string(),
            Value::BigDecimal(value) => value.to_string(),
            Value::Uuid(uuid) => uuid_string(*uuid),
            Value::Date(date) => date.to_string(),
            Value::Time(time) => time.to_string(),
            Value::Timestamp(timestamp) => timestamp.to_string(),
            Value::TimestampWithTimezone(timestamp) => timestamp.to_string(),
            Value::LegacyDate(millis) => legacy_date_string(*millis).ok_or_else(|| self.cannot("String"))?,
            Value::JsonStructure | Value::Array(_) | Value::Object(_) => return Err(self.cannot("String")),
        })
    }

    /// The value as error messages show it: Java's text where there is one.
    fn describe(&self) -> String {
        self.java_string().unwrap_or_else(|_| self.type_name().to_string())
    }

    fn cannot(&self, target: &'static str) -> QueryError {
        QueryError::Conversion { value: self.describe(), target }
    }

    /// Java's `Number.longValue()` (saturating for floating point, low 64 bits for big numbers).
    fn long_value(&self) -> Option<i64> {
        match self {
            Value::Byte(value) => Some((*value).into()),
            Value::Short(value) => Some((*value).into()),
            Value::Int(value) => Some((*value).into()),
            Value::Long(value) => Some(*value),
            Value::Float(value) => Some(*value as i64),
            Value::Double(value) => Some(*value as i64),
            Value::BigInteger(value) => Some(low_bits(value)),
            Value::BigDecimal(value) => value.to_big_integer().map(|integer| low_bits(&integer)),
            _ => None,
        }
    }

    /// Java's `Number.intValue()`.
    fn int_value(&self) -> Option<i32> {
        match self {
            Value::Float(value) => Some(*value as i32),
            Value::Double(value) => Some(*value as i32),
            _ => self.long_value().map(|long| long as i32),
        }
    }

    fn to_bool(&self) -> Result<Value, QueryError> {
        match self {
            Value::String(text) => Ok(Value::Bool(text.eq_ignore_ascii_case("true"))),
            _ => self.int_value().map(|int| Value::Bool(int != 0)).ok_or_else(|| self.cannot("boolean")),
        }
    }

    fn to_integral(&self, target: Integral) -> Result<Value, QueryError> {
        let narrowed = match *self {
            Value::Byte(value) => target.fit(value.into()),
            Value::Short(value) => target.fit(value.into()),
            Value::Int(value) => target.fit(value.into()),
            Value::Long(value) => target.fit(value),
            Value::Double(value) => {
                let narrow = target.narrow(value);
                equal_doubles(value, narrow as f64).then(|| target.fit(narrow)).flatten()
            }
            Value::Float(value) => {
                let narrow = target.narrow(value.into());
                ((narrow as f32).to_bits() == value.to_bits()).then(|| target.fit(narrow)).flatten()
            }
            Value::BigInteger(_) | Value::BigDecimal(_) => None,
            Value::String(ref text) => return parse_integral(text, target).ok_or_else(|| self.cannot(NUMBER)),
            _ => return Err(self.cannot(NUMBER)),
        };
        Ok(narrowed.unwrap_or_else(|| self.clone()))
    }

    fn to_float(&self) -> Result<Value, QueryError> {
        let converted = match *self {
            Value::Byte(value) => Some(f32::from(value)),
            Value::Short(value) => Some(f32::from(value)),
            Value::Int(value) => {
                Some(value as f32).filter(|float| equal_long_and_double(value.into(), (*float).into()))
            }
            Value::Long(value) => Some(value as f32).filter(|float| equal_long_and_double(value, (*float).into())),
            Value::Double(value) => Some(value as f32).filter(|float| f64::from(*float) == value),
            Value::BigInteger(_) | Value::BigDecimal(_) => None,
            Value::String(ref text) => {
                let double = parse_java_double(text).ok_or_else(|| self.cannot(NUMBER))?;
                let float = double as f32;
                return Ok(if f64::from(float) == double { Value::Float(float) } else { Value::Double(double) });
            }
            _ => return Err(self.cannot(NUMBER)),
        };
        Ok(converted.map_or_else(|| self.clone(), Value::Float))
    }

    fn to_double(&self) -> Result<Value, QueryError> {
        let converted = match *self {
            Value::Byte(value) => Some(f64::from(value)),
            Value::Short(value) => Some(f64::from(value)),
            Value::Int(value) => Some(f64::from(value)),
            Value::Float(value) => Some(f64::from(value)),
            Value::Long(value) => Some(value as f64).filter(|double| equal_long_and_double(value, *double)),
            Value::BigInteger(_) | Value::BigDecimal(_) => None,
            Value::String(ref text) => Some(parse_java_double(text).ok_or_else(|| self.cannot(NUMBER))?),
            _ => return Err(self.cannot(NUMBER)),
        };
        Ok(converted.map_or_else(|| self.clone(), Value::Double))
    }

    fn to_char(&self) -> Result<Value, QueryError> {
        if let Value::String(text) = self {
            let mut units = text.encode_utf16();
            return match (units.next(), units.next()) {
                (Some(unit), None) => Ok(Value::Char(unit)),
                _ => Err(self.cannot("char")),
            };
        }
        self.int_value().map(|int| Value::Char(int as u16)).ok_or_else(|| self.cannot("char"))
    }

    fn to_big_integer(&self) -> Result<BigInt, QueryError> {
        let converted = match self {
            Value::BigDecimal(decimal) => decimal.to_big_integer(),
            Value::Bool(value) => Some(BigInt::from(u8::from(*value))),
            Value::Byte(_) | Value::Short(_) | Value::Int(_) | Value::Long(_) | Value::Float(_) | Value::Double(_) => {
                self.long_value().map(BigInt::from)
            }
            _ => self.java_string().ok().and_then(|text| parse_java_big_integer(&text)),
        };
        converted.ok_or_else(|| self.cannot("java.math.BigInteger"))
    }

    fn to_big_decimal(&self) -> Result<BigDecimal, QueryError> {
        let converted = match self {
            Value::BigInteger(integer) => Some(BigDecimal::new(integer.clone(), 0)),
            Value::Byte(_) | Value::Short(_) | Value::Int(_) | Value::Long(_) => {
                self.long_value().map(|long| BigDecimal::new(long.into(), 0))
            }
            Value::Float(value) => BigDecimal::from_f64((*value).into()),
            Value::Double(value) => BigDecimal::from_f64(*value),
            Value::Bool(value) => Some(BigDecimal::new(u8::from(*value).into(), 0)),
            _ => self.java_string().ok().and_then(|text| BigDecimal::parse(&text)),
        };
        converted.ok_or_else(|| self.cannot("java.math.BigDecimal"))
    }

    fn to_uuid(&self) -> Result<Value, QueryError> {
        match self {
            Value::String(text) => parse_uuid(text).map(Value::Uuid).ok_or_else(|| self.cannot("java.util.UUID")),
            _ => Err(self.cannot("java.util.UUID")),
        }
    }

    /// Dates and times from ISO text, or from epoch milliseconds (read in UTC).
    fn to_temporal(&self, attribute: &Value) -> Result<Value, QueryError> {
        let converted = match (self, attribute) {
            (Value::String(text), Value::Date(_)) => Date::parse(text).map(Value::Date),
            (Value::String(text), Value::Time(_)) => Time::parse(text).map(Value::Time),
            (Value::String(text), Value::Timestamp(_)) => Timestamp::parse(text).map(Value::Timestamp),
            (Value::String(text), _) => TimestampWithTimezone::parse(text).map(Value::TimestampWithTimezone),
            _ => self.long_value().and_then(Timestamp::from_epoch_millis).and_then(|timestamp| match attribute {
                Value::Date(_) => Some(Value::Date(timestamp.date)),
                Value::Time(_) => Some(Value::Time(timestamp.time)),
                Value::Timestamp(_) => Some(Value::Timestamp(timestamp)),
                _ => TimestampWithTimezone::new(timestamp, 0).map(Value::TimestampWithTimezone),
            }),
        };
        converted.ok_or_else(|| self.cannot(attribute.type_name()))
    }
}

/// A string against an integral attribute: that type, else a long, else a double (a whole
/// double within the type's range becomes the type).
fn parse_integral(text: &str, target: Integral) -> Option<Value> {
    let direct = match target {
        Integral::Byte => parse_java_integer::<i8>(text).map(Value::Byte),
        Integral::Short => parse_java_integer::<i16>(text).map(Value::Short),
        Integral::Int => parse_java_integer::<i32>(text).map(Value::Int),
        Integral::Long => None,
    };
    if let Some(value) = direct.or_else(|| parse_java_integer::<i64>(text).map(Value::Long)) {
        return Some(value);
    }
    let double = parse_java_double(text)?;
    let narrow = target.narrow(double);
    Some(if equal_doubles(double, narrow as f64) { target.fit(narrow)? } else { Value::Double(double) })
}

/// The low 64 bits of `value` in two's complement (Java's `BigInteger.longValue()`).
fn low_bits(value: &BigInt) -> i64 {
    let bytes = value.to_signed_bytes_le();
    let fill = if value.sign() == num_bigint::Sign::Minus { 0xff } else { 0 };
    let mut low = [fill; 8];
    for (slot, byte) in low.iter_mut().zip(bytes) {
        *slot = byte;
    }
    i64::from_le_bytes(low)
}

/// Java's `UUID.toString`.
fn uuid_string(uuid: u128) -> String {
    let hex = format!("{uuid:032x}");
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// Java's `UUID.fromString`: five dash-separated groups of hex digits, at most 36 characters
/// (Java also takes a sign in a group; ferrogrid does not).
fn parse_uuid(text: &str) -> Option<u128> {
    let groups: Vec<&str> = text.split('-').collect();
    let valid =
        |group: &&str| !group.is_empty() && group.len() <= 16 && group.bytes().all(|byte| byte.is_ascii_hexdigit());
    if text.len() > 36 || groups.len() != 5 || !groups.iter().all(valid) {
        return None;
    }
    let group = |index: usize, bits: u32| {
        u64::from_str_radix(groups[index], 16).map(|value| value & ((1u128 << bits) - 1) as u64)
    };
    let most = (group(0, 32).ok()? << 32) | (group(1, 16).ok()? << 16) | group(2, 16).ok()?;
    let least = (group(3, 16).ok()? << 48) | group(4, 48).ok()?;
    Some((u128::from(most) << 64) | u128::from(least))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(given: Value, attribute: Value) -> Value {
        given.convert_like(&attribute).unwrap()
    }

    #[test]
    fn numbers_narrow_only_without_loss() {
        assert_eq!(convert(Value::Long(30), Value::Int(0)), Value::Int(30));
        assert_eq!(convert(Value::Long(1 << 40), Value::Int(0)), Value::Long(1 << 40));
        assert_eq!(convert(Value::Double(30.0), Value::Int(0)), Value::Int(30));
        assert_eq!(convert(Value::Double(2.5), Value::Int(0)), Value::Double(2.5));
        assert_eq!(convert(Value::Double(-0.0), Value::Long(0)), Value::Double(-0.0));
        assert_eq!(convert(Value::Double(300.0), Value::Byte(0)), Value::Double(300.0));
        assert_eq!(
            convert(Value::Float(2_147_483_648.0), Value::Int(0)),
            Value::Int(i32::MAX),
            "as Java's float rounding has it"
        );
        assert_eq!(convert(Value::Long(3), Value::Double(0.0)), Value::Double(3.0));
        assert_eq!(convert(Value::Long(i64::MAX), Value::Double(0.0)), Value::Long(i64::MAX));
        assert_eq!(convert(Value::Int(16_777_217), Value::Float(0.0)), Value::Int(16_777_217));
        assert_eq!(convert(Value::Double(0.5), Value::Float(0.0)), Value::Float(0.5));
        assert_eq!(convert(Value::Double(0.1), Value::Float(0.0)), Value::Double(0.1));
        assert_eq!(convert(Value::Short(7), Value::Long(0)), Value::Long(7));
        let big = Value::BigInteger(BigInt::from(5));
        assert_eq!(convert(big.clone(), Value::Int(0)), big, "big numbers are left as they are");
        assert!(Value::Bool(true).convert_like(&Value::Int(0)).is_err());
    }

    #[test]
    fn strings_parse_as_the_attribute_type() {
        assert_eq!(convert(Value::String("30".into()), Value::Int(0)), Value::Int(30));
        assert_eq!(convert(Value::String("3000000000".into()), Value::Int(0)), Value::Long(3_000_000_000));
        assert_eq!(convert(Value::String("2.0".into()), Value::Int(0)), Value::Int(2));
        assert_eq!(convert(Value::String("2.5".into()), Value::Short(0)), Value::Double(2.5));
        assert_eq!(convert(Value::String("2.5".into()), Value::Long(0)), Value::Double(2.5));
        assert_eq!(convert(Value::String("0.5".into()), Value::Float(0.0)), Value::Float(0.5));
        assert_eq!(convert(Value::String("0.1".into()), Value::Float(0.0)), Value::Double(0.1));
        assert_eq!(convert(Value::String("1e3".into()), Value::Double(0.0)), Value::Double(1000.0));
        assert!(Value::String("thirty".into()).convert_like(&Value::Int(0)).is_err());
        assert_eq!(convert(Value::String("TRUE".into()), Value::Bool(false)), Value::Bool(true));
        assert_eq!(convert(Value::String("yes".into()), Value::Bool(false)), Value::Bool(false));
        assert_eq!(convert(Value::String("a".into()), Value::Char(0)), Value::Char(97));
        assert!(Value::String("ab".into()).convert_like(&Value::Char(0)).is_err());
        let uuid = convert(Value::String("123e4567-e89b-12d3-a456-426614174000".into()), Value::Uuid(0));
        assert_eq!(uuid, Value::Uuid(0x123e4567_e89b_12d3_a456_426614174000));
        assert_eq!(
            convert(Value::String("1-2-3-4-5".into()), Value::Uuid(0)),
            Value::Uuid(0x00000001_0002_0003_0004_000000000005)
        );
        let date = convert(Value::String("2024-03-01".into()), Value::Date(Date::new(1970, 1, 1).unwrap()));
        assert_eq!(date, Value::Date(Date::new(2024, 3, 1).unwrap()));
        assert!(Value::String("2024-13-01".into()).convert_like(&date).is_err());
        let decimal = Value::BigDecimal(BigDecimal::parse("0").unwrap());
        assert_eq!(
            convert(Value::String("1.50".into()), decimal.clone()),
            Value::BigDecimal(BigDecimal::parse("1.50").unwrap())
        );
        assert_eq!(convert(Value::Double(0.1), decimal.clone()), Value::BigDecimal(BigDecimal::parse("0.1").unwrap()));
        assert_eq!(convert(Value::Long(12), decimal), Value::BigDecimal(BigDecimal::parse("12").unwrap()));
        let integer = Value::BigInteger(BigInt::from(0));
        assert_eq!(convert(Value::Double(-7.9), integer.clone()), Value::BigInteger(BigInt::from(-7)));
        assert_eq!(convert(Value::String("-12".into()), integer), Value::BigInteger(BigInt::from(-12)));
    }

    #[test]
    fn other_conversions_follow_hazelcast() {
        assert_eq!(convert(Value::Double(1.5), Value::String(String::new())), Value::String("1.5".into()));
        assert_eq!(convert(Value::Long(7), Value::String(String::new())), Value::String("7".into()));
        assert_eq!(convert(Value::Int(0), Value::Bool(true)), Value::Bool(false));
        assert_eq!(
            convert(Value::Long(1 << 32), Value::Bool(true)),
            Value::Bool(false),
            "intValue drops the high bits"
        );
        assert_eq!(convert(Value::Int(65), Value::Char(0)), Value::Char(65));
        let midnight = Value::Timestamp(Timestamp::from_epoch_millis(0).unwrap());
        assert_eq!(
            convert(Value::Long(86_400_000), midnight.clone()),
            Value::Timestamp(Timestamp::from_epoch_millis(86_400_000).unwrap())
        );
        assert_eq!(convert(Value::Long(5), Value::LegacyDate(0)), Value::LegacyDate(5));
        assert_eq!(convert(Value::Null, Value::Int(1)), Value::Null);
        assert_eq!(convert(Value::String("x".into()), Value::Null), Value::String("x".into()));
        let object = Value::Object(crate::value::Object { type_id: -55, bytes: vec![] });
        assert!(matches!(Value::Int(1).convert_like(&object), Err(QueryError::UnknownAttributeType { .. })));
        assert_eq!(convert(object.clone(), object.clone()), object);
    }
}
