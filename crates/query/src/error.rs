//! The two ways reading a value can fail: the bytes cannot be decoded ([`ReadError`]: malformed,
//! truncated, of a type the member cannot read without the client's classes, or naming a Compact
//! schema the member does not hold yet), or a query asks something Hazelcast refuses
//! ([`QueryError`]: a comparison value that cannot be converted to the attribute's type).
//!
//! Every decoder in this crate returns one of these instead of panicking.

use thiserror::Error;

/// Why a serialized value (or a part of it) could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    /// The input ends before the value does (or an offset points outside it).
    #[error("truncated input: {needed} bytes needed at offset {offset}, {available} available")]
    Truncated { offset: usize, needed: usize, available: usize },
    /// The bytes are not a valid encoding of the expected value.
    #[error("malformed input: {0}")]
    Malformed(String),
    /// A Compact record names a schema the member does not hold: the member should fetch it
    /// (from the cluster or the client) and read again.
    #[error("unknown Compact schema {schema_id}")]
    SchemaNotFound { schema_id: i64 },
    /// A value of a type the member cannot read without the client's classes (Java
    /// serialization, IdentifiedDataSerializable, a custom serializer, ...).
    #[error("values of serialization type {type_id} ({name}) cannot be read by the member")]
    UnsupportedType { type_id: i32, name: &'static str },
    /// An IdentifiedDataSerializable value: its factory and class say which class it is.
    #[error("IdentifiedDataSerializable values (type -2, factory {factory_id}, class {class_id}) cannot be read by the member")]
    IdentifiedDataSerializable { factory_id: i32, class_id: i32 },
    /// Objects nested deeper than the reader allows.
    #[error("values nested deeper than {limit} levels")]
    TooDeep { limit: usize },
    /// A path that asks for an attribute of a value that has none, or of the wrong kind.
    #[error("{0}")]
    Attribute(String),
    /// A `HazelcastJsonValue` read as a whole (`this`) whose text is not JSON.
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
}

/// Why a query cannot compare an attribute with a value, as Hazelcast would refuse it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum QueryError {
    /// The comparison value cannot be converted to the attribute's type (Hazelcast's
    /// `IllegalArgumentException`/`NumberFormatException` from its `TypeConverter`s).
    #[error("cannot convert [{value}] to {target}")]
    Conversion { value: String, target: &'static str },
    /// The attribute's type has no converter (an object, an array, JSON structure): Hazelcast's
    /// `QueryException("Unknown attribute type ...")`.
    #[error("unknown attribute type {attribute} for comparison value [{value}]")]
    UnknownAttributeType { attribute: &'static str, value: String },
}
