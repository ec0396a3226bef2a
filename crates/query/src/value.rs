//! One attribute's value as Hazelcast's query engine sees it, and how that engine compares two
//! values (`com.hazelcast.query.impl.Comparables` and `Numbers`):
//!
//! - values of the same type compare by Java's `compareTo` and `equals` (so `BigDecimal` 2.0
//!   equals 2.0 but not 2.00, doubles order NaN last and -0.0 before 0.0, strings by UTF-16 code
//!   units, UUIDs by their signed halves);
//! - `Byte`, `Short`, `Int`, `Long`, `Float` and `Double` compare with each other by value,
//!   exactly (a long is never rounded to a double to be compared);
//! - anything else of different types is unequal and unordered (`compare` returns `None` where
//!   Java would throw `ClassCastException`); `BigInteger` and `BigDecimal` are not compared with
//!   the other numbers, as in Hazelcast;
//! - objects (nested Compact or Portable records, values the member cannot read), arrays and
//!   JSON structures are not comparable; objects are equal when their serialized bytes are.
//!
//! How a predicate's value is converted to the attribute's type first is in the `convert` module,
//! which builds on this one.

use crate::number::{compare_doubles, compare_long_with_double, equal_doubles, BigDecimal};
use crate::temporal::{Date, Time, Timestamp, TimestampWithTimezone};
use num_bigint::BigInt;
use std::cmp::Ordering;

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    /// A Java `char`: one UTF-16 code unit.
    Char(u16),
    String(String),
    BigInteger(BigInt),
    BigDecimal(BigDecimal),
    /// Most significant half first, as Java's `UUID` holds it.
    Uuid(u128),
    Date(Date),
    Time(Time),
    Timestamp(Timestamp),
    TimestampWithTimezone(TimestampWithTimezone),
    /// A `java.util.Date`: milliseconds since 1970-01-01T00:00Z.
    LegacyDate(i64),
    /// A `HazelcastJsonValue` read whole (its text).
    Json(String),
    /// A JSON object or array that a path reached (Hazelcast's `NonTerminalJsonValue`): no
    /// predicate matches it.
    JsonStructure,
    /// An array or list (Java arrays, `ArrayList`, `LinkedList`, Compact and Portable arrays).
    Array(Vec<Value>),
    /// A value compared only for equality, by its serialized form.
    Object(Object),
}

/// A value the query engine does not look into when comparing: a nested Compact or Portable
/// record, or a value of a type the member cannot read. `bytes` is its serialized form after the
/// type id (for Compact: schema id then record; for Portable: factory id, class id, version,
/// record).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Object {
    pub type_id: i32,
    pub bytes: Vec<u8>,
}

/// A number of one of the six types `Numbers` compares across types.
#[derive(Clone, Copy)]
enum Primitive {
    Integral(i64),
    Floating(f64),
}

impl Value {
    /// The name of this value's type, as errors print it (Java's class names).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "Boolean",
            Value::Byte(_) => "Byte",
            Value::Short(_) => "Short",
            Value::Int(_) => "Integer",
            Value::Long(_) => "Long",
            Value::Float(_) => "Float",
            Value::Double(_) => "Double",
            Value::Char(_) => "Character",
            Value::String(_) => "String",
            Value::BigInteger(_) => "BigInteger",
            Value::BigDecimal(_) => "BigDecimal",
            Value::Uuid(_) => "UUID",
            Value::Date(_) => "LocalDate",
            Value::Time(_) => "LocalTime",
            Value::Timestamp(_) => "LocalDateTime",
            Value::TimestampWithTimezone(_) => "OffsetDateTime",
            Value::LegacyDate(_) => "Date",
            Value::Json(_) => "HazelcastJsonValue",
            Value::JsonStructure => "NonTerminalJsonValue",
            Value::Array(_) => "Array",
            Value::Object(_) => "Object",
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    fn primitive(&self) -> Option<Primitive> {
        match *self {
            Value::Byte(value) => Some(Primitive::Integral(value.into())),
            Value::Short(value) => Some(Primitive::Integral(value.into())),
            Value::Int(value) => Some(Primitive::Integral(value.into())),
            Value::Long(value) => Some(Primitive::Integral(value)),
            Value::Float(value) => Some(Primitive::Floating(value.into())),
            Value::Double(value) => Some(Primitive::Floating(value)),
            _ => None,
        }
    }

    /// Hazelcast's `Comparables.compare`; `None` where Java would throw (different types, or
    /// types that are not `Comparable`). Null is equal to null and unordered with the rest:
    /// predicates decide about nulls before they compare.
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        if let (Some(left), Some(right)) = (self.primitive(), other.primitive()) {
            return Some(compare_primitives(left, right));
        }
        match (self, other) {
            (Value::Null, Value::Null) => Some(Ordering::Equal),
            (Value::Bool(left), Value::Bool(right)) => Some(left.cmp(right)),
            (Value::Char(left), Value::Char(right)) => Some(left.cmp(right)),
            (Value::String(left), Value::String(right)) => Some(java_string_order(left, right)),
            (Value::BigInteger(left), Value::BigInteger(right)) => Some(left.cmp(right)),
            (Value::BigDecimal(left), Value::BigDecimal(right)) => Some(left.compare(right)),
            (Value::Uuid(left), Value::Uuid(right)) => Some(uuid_halves(*left).cmp(&uuid_halves(*right))),
            (Value::Date(left), Value::Date(right)) => Some(left.cmp(right)),
            (Value::Time(left), Value::Time(right)) => Some(left.cmp(right)),
            (Value::Timestamp(left), Value::Timestamp(right)) => Some(left.cmp(right)),
            (Value::TimestampWithTimezone(left), Value::TimestampWithTimezone(right)) => Some(left.cmp(right)),
            (Value::LegacyDate(left), Value::LegacyDate(right)) => Some(left.cmp(right)),
            _ => None,
        }
    }

    /// Hazelcast's `Comparables.equal`: Java's `equals` within a type, by value across the six
    /// primitive number types, false across any other types. Arrays are equal item by item
    /// (Hazelcast refuses to compare them at all), objects by their bytes, and a JSON structure
    /// equals nothing.
    pub fn equals(&self, other: &Value) -> bool {
        if let (Some(left), Some(right)) = (self.primitive(), other.primitive()) {
            return equal_primitives(left, right);
        }
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::JsonStructure, _) | (_, Value::JsonStructure) => false,
            (Value::Array(left), Value::Array(right)) => {
                left.len() == right.len() && left.iter().zip(right).all(|(left, right)| left.equals(right))
            }
            (Value::BigDecimal(left), Value::BigDecimal(right)) => left == right,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other) && self == other,
        }
    }
}

/// Java's `UUID.compareTo` compares the two halves as signed longs.
fn uuid_halves(uuid: u128) -> (i64, i64) {
    ((uuid >> 64) as u64 as i64, uuid as u64 as i64)
}

fn compare_primitives(left: Primitive, right: Primitive) -> Ordering {
    match (left, right) {
        (Primitive::Integral(left), Primitive::Integral(right)) => left.cmp(&right),
        (Primitive::Floating(left), Primitive::Floating(right)) => compare_doubles(left, right),
        (Primitive::Integral(left), Primitive::Floating(right)) => compare_long_with_double(left, right),
        (Primitive::Floating(left), Primitive::Integral(right)) => compare_long_with_double(right, left).reverse(),
    }
}

fn equal_primitives(left: Primitive, right: Primitive) -> bool {
    match (left, right) {
        (Primitive::Integral(left), Primitive::Integral(right)) => left == right,
        (Primitive::Floating(left), Primitive::Floating(right)) => equal_doubles(left, right),
        (Primitive::Integral(long), Primitive::Floating(double))
        | (Primitive::Floating(double), Primitive::Integral(long)) => {
            crate::number::equal_long_and_double(long, double)
        }
    }
}

/// Java's `String.compareTo`: the order of UTF-16 code units. UTF-8 bytes sort as code points,
/// which agrees except where a supplementary character (two units from 0xD800) meets one in
/// U+E000..=U+FFFF, so only the first differing characters are looked at in UTF-16.
pub fn java_string_order(left: &str, right: &str) -> Ordering {
    let same = left.bytes().zip(right.bytes()).take_while(|(a, b)| a == b).count();
    let mut start = same;
    while !left.is_char_boundary(start) {
        start -= 1;
    }
    match (left[start..].chars().next(), right[start..].chars().next()) {
        (Some(a), Some(b)) => {
            let first_unit = |c: char| c.encode_utf16(&mut [0; 2])[0];
            first_unit(a).cmp(&first_unit(b)).then(a.cmp(&b))
        }
        _ => left.len().cmp(&right.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> Value {
        Value::BigDecimal(BigDecimal::parse(text).unwrap())
    }

    #[test]
    fn java_string_order_is_utf16_order() {
        let texts = [
            "",
            "a",
            "ab",
            "b",
            "é",
            "\u{e000}",
            "\u{ffff}",
            "\u{10000}",
            "\u{1f600}",
            "a\u{1f600}",
            "a\u{ffff}",
            "\u{1f601}",
        ];
        for left in texts {
            for right in texts {
                let expected = left.encode_utf16().cmp(right.encode_utf16());
                assert_eq!(java_string_order(left, right), expected, "{left:?} vs {right:?}");
            }
        }
    }

    #[test]
    fn numbers_of_different_types_compare_by_value() {
        assert!(Value::Int(30).equals(&Value::Long(30)));
        assert!(Value::Byte(-1).equals(&Value::Double(-1.0)));
        assert!(Value::Float(0.5).equals(&Value::Double(0.5)));
        assert!(!Value::Float(0.1).equals(&Value::Double(0.1)), "0.1f widened is not 0.1");
        assert!(!Value::Long(i64::MAX).equals(&Value::Double(i64::MAX as f64)));
        assert_eq!(Value::Long(i64::MAX).compare(&Value::Double(i64::MAX as f64)), Some(Ordering::Less));
        assert_eq!(Value::Double(2.5).compare(&Value::Short(2)), Some(Ordering::Greater));
        assert_eq!(Value::Int(0).compare(&Value::Double(f64::NAN)), Some(Ordering::Less));
        assert!(Value::Double(f64::NAN).equals(&Value::Double(f64::NAN)));
        assert!(!Value::Double(0.0).equals(&Value::Double(-0.0)));
        assert!(!Value::Int(0).equals(&Value::Double(-0.0)));
        assert_eq!(Value::Float(-0.0).compare(&Value::Double(0.0)), Some(Ordering::Less));
    }

    #[test]
    fn other_types_only_compare_within_their_type() {
        assert!(!Value::String("30".into()).equals(&Value::Int(30)));
        assert_eq!(Value::String("30".into()).compare(&Value::Int(30)), None);
        assert_eq!(Value::BigInteger(BigInt::from(3)).compare(&Value::Long(3)), None);
        assert!(!Value::BigInteger(BigInt::from(3)).equals(&Value::Long(3)));
        assert!(!Value::Char(u16::from(b'a')).equals(&Value::Int(97)));
        assert_eq!(decimal("2.0").compare(&decimal("2.00")), Some(Ordering::Equal));
        assert!(!decimal("2.0").equals(&decimal("2.00")));
        assert!(decimal("2.0").equals(&decimal("2.0")));
        assert_eq!(Value::Null.compare(&Value::Null), Some(Ordering::Equal));
        assert_eq!(Value::Null.compare(&Value::Int(1)), None);
        assert!(Value::Null.equals(&Value::Null));
        assert!(!Value::Null.equals(&Value::Int(0)));
        assert!(!Value::JsonStructure.equals(&Value::JsonStructure));
        let object = Value::Object(Object { type_id: -55, bytes: vec![1, 2] });
        assert!(object.equals(&object.clone()));
        assert_eq!(object.compare(&object), None);
    }

    #[test]
    fn natural_orders_are_java_orders() {
        // U+FFFD sorts after U+1F600 in UTF-16 (0xD83D...) but before it in UTF-8.
        let replacement = Value::String("\u{FFFD}".into());
        let emoji = Value::String("\u{1F600}".into());
        assert_eq!(emoji.compare(&replacement), Some(Ordering::Less));
        let high = Value::Uuid(0x8000_0000_0000_0000_0000_0000_0000_0000);
        assert_eq!(high.compare(&Value::Uuid(1)), Some(Ordering::Less), "Java compares signed halves");
        assert_eq!(Value::Bool(false).compare(&Value::Bool(true)), Some(Ordering::Less));
        let array = Value::Array(vec![Value::Int(1), Value::Long(2)]);
        assert!(array.equals(&Value::Array(vec![Value::Long(1), Value::Int(2)])));
        assert_eq!(array.compare(&array), None);
    }
}
