//! Dates and times in SQL: CAST between them and VARCHAR, as Hazelcast converts them.

use super::SqlType;
use ferrogrid_query::temporal::{Date, Time, Timestamp, TimestampWithTimezone};
use ferrogrid_query::Value;

/// `value` as a value of the temporal type `ty`, or None when it cannot be converted.
pub fn convert(value: &Value, ty: SqlType) -> Option<Value> {
    match (value, ty) {
        (Value::String(text), SqlType::Date) => Date::parse(text.trim()).map(Value::Date),
        (Value::String(text), SqlType::Time) => Time::parse(text.trim()).map(Value::Time),
        (Value::String(text), SqlType::Timestamp) => Timestamp::parse(text.trim()).map(Value::Timestamp),
        (Value::String(text), SqlType::TimestampWithTimeZone) => {
            TimestampWithTimezone::parse(text.trim()).map(Value::TimestampWithTimezone)
        }
        (Value::Timestamp(ts), SqlType::Date) => Some(Value::Date(ts.date)),
        (Value::Timestamp(ts), SqlType::Time) => Some(Value::Time(ts.time)),
        (Value::Date(date), SqlType::Timestamp) => {
            Some(Value::Timestamp(Timestamp::new(*date, Time::new(0, 0, 0, 0)?)))
        }
        (Value::TimestampWithTimezone(tz), SqlType::Timestamp) => Some(Value::Timestamp(tz.timestamp)),
        (Value::TimestampWithTimezone(tz), SqlType::Date) => Some(Value::Date(tz.timestamp.date)),
        (Value::TimestampWithTimezone(tz), SqlType::Time) => Some(Value::Time(tz.timestamp.time)),
        (Value::Timestamp(ts), SqlType::TimestampWithTimeZone) => {
            TimestampWithTimezone::new(*ts, 0).map(Value::TimestampWithTimezone)
        }
        _ => None,
    }
}

/// A temporal value's text (ISO-8601, as Java's `toString` writes it).
pub fn to_text(value: &Value) -> String {
    match value {
        Value::Date(v) => v.to_string(),
        Value::Time(v) => v.to_string(),
        Value::Timestamp(v) => v.to_string(),
        Value::TimestampWithTimezone(v) => v.to_string(),
        _ => String::new(),
    }
}
