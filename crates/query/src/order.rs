//! The order of paging queries without a comparator, as Hazelcast's `SortingUtil.compare` sorts
//! them, and Java's `hashCode()` of the values it breaks ties with.
//!
//! - KEY and ENTRY iteration compare keys (query entries are not `Comparable`, so ENTRY falls
//!   back to the key), VALUE iteration compares values, each with Java's `compareTo` on the
//!   deserialized objects: values of different Java classes are a `ClassCastException` (a
//!   `Byte` key against an `Integer` key too: no cross-type number comparison here, unlike
//!   aggregations), and a value that is not `Comparable` (a Compact or Portable record, an
//!   array or list) is an `IllegalArgumentException` ("Not comparable").
//! - Equal values are ordered by their keys' `hashCode()`, compared as signed ints.
//! - [`java_hash_code`] is Java's `hashCode()` of the built-in types, `HazelcastJsonValue` (its
//!   text's) and nothing else: arrays hash by identity in Java and records by their fields in
//!   a way ferrogrid does not reproduce, so those are an error.
//!
//! Invariant: nothing here panics; every failure is an [`ExecError`] naming Hazelcast's
//! exception.

use crate::compact::SchemaSource;
use crate::data::read_value;
use crate::java::{java_class, ExecError};
use crate::number::BigDecimal;
use crate::predicate::IterationType;
use crate::value::Value;
use num_bigint::{BigInt, Sign};
use std::cmp::Ordering;

/// Java's `hashCode()` of `value`'s Java object.
pub fn java_hash_code(value: &Value) -> Result<i32, ExecError> {
    Ok(match value {
        Value::Null => return Err(ExecError::NullPointer("hashCode() of null".into())),
        Value::Bool(true) => 1231,
        Value::Bool(false) => 1237,
        Value::Byte(value) => i32::from(*value),
        Value::Short(value) => i32::from(*value),
        Value::Char(value) => i32::from(*value),
        Value::Int(value) => *value,
        Value::Long(value) => long_hash(*value),
        Value::Float(value) => float_bits(*value),
        Value::Double(value) => long_hash(double_bits(*value)),
        Value::String(text) | Value::Json(text) => string_hash(text),
        Value::BigInteger(value) => big_integer_hash(value),
        Value::BigDecimal(value) => big_decimal_hash(value),
        Value::Uuid(value) => {
            let halves = (*value >> 64) as u64 ^ *value as u64;
            ((halves >> 32) as i32) ^ (halves as i32)
        }
        Value::Date(date) => date_hash(date),
        Value::Time(time) => time_hash(time),
        Value::Timestamp(timestamp) => date_hash(&timestamp.date) ^ time_hash(&timestamp.time),
        Value::TimestampWithTimezone(zoned) => {
            date_hash(&zoned.timestamp.date) ^ time_hash(&zoned.timestamp.time) ^ zoned.offset_seconds()
        }
        Value::LegacyDate(millis) => (*millis as i32) ^ ((*millis >> 32) as i32),
        Value::Array(_) | Value::Object(_) | Value::JsonStructure => {
            return Err(ExecError::Unsupported(format!("the hashCode() of a {}", java_class(value))))
        }
    })
}

fn long_hash(value: i64) -> i32 {
    (value ^ ((value as u64) >> 32) as i64) as i32
}

/// `Float.floatToIntBits`: NaN made canonical.
fn float_bits(value: f32) -> i32 {
    if value.is_nan() {
        0x7fc0_0000
    } else {
        value.to_bits() as i32
    }
}

/// `Double.doubleToLongBits`: NaN made canonical.
fn double_bits(value: f64) -> i64 {
    if value.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        value.to_bits() as i64
    }
}

fn string_hash(text: &str) -> i32 {
    text.encode_utf16().fold(0i32, |hash, unit| hash.wrapping_mul(31).wrapping_add(i32::from(unit)))
}

/// `BigInteger.hashCode`: the magnitude's 32-bit words, most significant first, then the sign.
fn big_integer_hash(value: &BigInt) -> i32 {
    let magnitude = value.magnitude().to_u32_digits();
    let hash = magnitude.iter().rev().fold(0i32, |hash, word| hash.wrapping_mul(31).wrapping_add(*word as i32));
    match value.sign() {
        Sign::Minus => hash.wrapping_neg(),
        Sign::NoSign => 0,
        Sign::Plus => hash,
    }
}

/// `BigDecimal.hashCode`: `31 * unscaledValue().hashCode() + scale`.
fn big_decimal_hash(value: &BigDecimal) -> i32 {
    big_integer_hash(value.unscaled()).wrapping_mul(31).wrapping_add(value.scale())
}

fn date_hash(date: &crate::temporal::Date) -> i32 {
    let year = date.year();
    (year & 0xFFFF_F800u32 as i32) ^ ((year << 11) + (i32::from(date.month()) << 6) + i32::from(date.day()))
}

fn time_hash(time: &crate::temporal::Time) -> i32 {
    let seconds = i64::from(time.hour()) * 3600 + i64::from(time.minute()) * 60 + i64::from(time.second());
    long_hash(seconds * 1_000_000_000 + i64::from(time.nano()))
}

/// Hazelcast's `SortingUtil.compare` without a comparator: how two entries (key and value
/// `Data` blobs) of a paging query are ordered.
pub fn compare_entries(
    iteration: IterationType,
    left: (&[u8], &[u8]),
    right: (&[u8], &[u8]),
    schemas: &dyn SchemaSource,
) -> Result<Ordering, ExecError> {
    SortKey::of(iteration, left, schemas)?.compare(&SortKey::of(iteration, right, schemas)?, schemas)
}

/// What an entry sorts by, read once (a page of a large result compares each entry many times):
/// the key, or the value for VALUE iteration; its key blob is kept for ties.
#[derive(Debug, Clone)]
pub struct SortKey {
    sorted: Value,
    /// The key (when `sorted` is the value), read only to break a tie.
    key: Option<Box<[u8]>>,
}

impl SortKey {
    /// The sort key of the entry `(key, value)`.
    pub fn of(
        iteration: IterationType,
        (key, value): (&[u8], &[u8]),
        schemas: &dyn SchemaSource,
    ) -> Result<SortKey, ExecError> {
        Ok(match iteration {
            IterationType::Key | IterationType::Entry => SortKey { sorted: read_value(key, schemas)?, key: None },
            IterationType::Value => SortKey { sorted: read_value(value, schemas)?, key: Some(key.into()) },
        })
    }

    /// [`compare_entries`] of the two entries.
    pub fn compare(&self, other: &SortKey, schemas: &dyn SchemaSource) -> Result<Ordering, ExecError> {
        let order = compare_to(&self.sorted, &other.sorted)?;
        if order != Ordering::Equal {
            return Ok(order);
        }
        Ok(self.key_hash(schemas)?.cmp(&other.key_hash(schemas)?))
    }

    fn key_hash(&self, schemas: &dyn SchemaSource) -> Result<i32, ExecError> {
        match &self.key {
            None => java_hash_code(&self.sorted),
            Some(key) => java_hash_code(&read_value(key, schemas)?),
        }
    }
}

/// Java's `((Comparable) left).compareTo(right)` after `SortingUtil.checkIfComparable`.
fn compare_to(left: &Value, right: &Value) -> Result<Ordering, ExecError> {
    for value in [left, right] {
        if !is_comparable(value) {
            return Err(ExecError::IllegalArgument(format!("Not comparable {}", java_class(value))));
        }
    }
    if std::mem::discriminant(left) != std::mem::discriminant(right) {
        return Err(ExecError::ClassCast(format!(
            "class {} cannot be cast to class {}",
            java_class(right),
            java_class(left)
        )));
    }
    if let (Value::Json(left), Value::Json(right)) = (left, right) {
        return Ok(left.encode_utf16().cmp(right.encode_utf16()));
    }
    left.compare(right)
        .ok_or_else(|| ExecError::ClassCast(format!("{} is not comparable with itself", java_class(left))))
}

/// Whether `value`'s Java object is `Comparable` (null is not: `instanceof` is false).
pub(crate) fn is_comparable(value: &Value) -> bool {
    !matches!(value, Value::Null | Value::Array(_) | Value::Object(_) | Value::JsonStructure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_codes_are_javas() {
        assert_eq!(java_hash_code(&Value::String("hello".into())), Ok(99_162_322));
        assert_eq!(java_hash_code(&Value::Long(-700)), Ok(699));
        assert_eq!(java_hash_code(&Value::Long(1 << 40)), Ok(256));
        assert_eq!(java_hash_code(&Value::Double(-0.0)), Ok(i32::MIN));
        assert_eq!(java_hash_code(&Value::BigDecimal(BigDecimal::parse("1.50").unwrap())), Ok(4652));
        assert_eq!(java_hash_code(&Value::BigInteger(BigInt::from(-1) << 63)), Ok(i32::MIN));
        assert!(java_hash_code(&Value::Array(vec![])).is_err());
    }
}
