//! What queries reproduce of Hazelcast's member's Java side: the Java class it holds a value as
//! ([`java_class`]), and the Java exceptions aggregations, projections and paging orders fail
//! with ([`ExecError`]).

use crate::data;
use crate::error::ReadError;
use crate::value::Value;
use crate::write::WriteError;

/// Why an aggregation or projection fails: Hazelcast's exception where it fails too.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("java.lang.ClassCastException: {0}")]
    ClassCast(String),
    #[error("java.lang.IllegalArgumentException: {0}")]
    IllegalArgument(String),
    #[error("java.lang.NullPointerException: {0}")]
    NullPointer(String),
    #[error("java.lang.ArithmeticException: {0}")]
    Arithmetic(String),
    /// Hazelcast's `HazelcastSerializationException`: a result it cannot serialize.
    #[error("com.hazelcast.nio.serialization.HazelcastSerializationException: {0}")]
    Serialization(String),
    /// A result Hazelcast gives but ferrogrid cannot reproduce (Java-serialized internals, ...).
    #[error("not supported: {0}")]
    Unsupported(String),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A partial from `exec::Accumulator::encode` that does not decode, or of another aggregator.
    #[error("malformed partial aggregation: {0}")]
    Partial(String),
}

impl ExecError {
    /// The Java exception Hazelcast raises in the same case, if it fails too.
    pub fn java_exception(&self) -> Option<&'static str> {
        Some(match self {
            ExecError::ClassCast(_) => "java.lang.ClassCastException",
            ExecError::IllegalArgument(_) => "java.lang.IllegalArgumentException",
            ExecError::NullPointer(_) => "java.lang.NullPointerException",
            ExecError::Arithmetic(_) => "java.lang.ArithmeticException",
            ExecError::Serialization(_) => "com.hazelcast.nio.serialization.HazelcastSerializationException",
            _ => return None,
        })
    }
}

/// The Java class Hazelcast's member holds `value` as (for error messages).
pub fn java_class(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "java.lang.Boolean",
        Value::Byte(_) => "java.lang.Byte",
        Value::Short(_) => "java.lang.Short",
        Value::Int(_) => "java.lang.Integer",
        Value::Long(_) => "java.lang.Long",
        Value::Float(_) => "java.lang.Float",
        Value::Double(_) => "java.lang.Double",
        Value::Char(_) => "java.lang.Character",
        Value::String(_) => "java.lang.String",
        Value::BigInteger(_) => "java.math.BigInteger",
        Value::BigDecimal(_) => "java.math.BigDecimal",
        Value::Uuid(_) => "java.util.UUID",
        Value::Date(_) => "java.time.LocalDate",
        Value::Time(_) => "java.time.LocalTime",
        Value::Timestamp(_) => "java.time.LocalDateTime",
        Value::TimestampWithTimezone(_) => "java.time.OffsetDateTime",
        Value::LegacyDate(_) => "java.util.Date",
        Value::Json(_) => "com.hazelcast.core.HazelcastJsonValue",
        Value::JsonStructure => "com.hazelcast.internal.json.NonTerminalJsonValue",
        Value::Array(_) => "[Ljava.lang.Object;",
        Value::Object(object) if object.type_id == data::PORTABLE => {
            "com.hazelcast.internal.serialization.impl.portable.DeserializedPortableGenericRecord"
        }
        Value::Object(_) => "com.hazelcast.internal.serialization.impl.compact.DeserializedGenericRecord",
    }
}
