//! Serialized values as clients send them, read into [`Value`]s without their classes.
//!
//! A `Data` blob is a 4-byte partition hash, a 4-byte type id (both big-endian) and the
//! payload the type's serializer wrote (big-endian too, Hazelcast's default byte order; an
//! empty blob is null). An object written inline by `ObjectDataOutput.writeObject` (as
//! predicates carry their values) is the type id and the payload, without the hash.
//!
//! Read here: null, the primitive types and their arrays, strings and string arrays, UUID,
//! `BigInteger`, `BigDecimal`, `java.util.Date`, the `java.time` types, `Object[]`,
//! `ArrayList`, `LinkedList` and `CopyOnWriteArrayList` (as arrays), `Optional` (as its
//! content), `HazelcastJsonValue` (its text), and Compact and Portable records (as opaque
//! [`Object`]s: the `path` module reads their fields). Anything else — IdentifiedDataSerializable,
//! Java serialization, custom serializers, other clients' native formats, other Java
//! collections and maps — is a [`ReadError`] naming the type id.
//!
//! Invariant: nested collections are read to a depth of at most [`MAX_DEPTH`], every count is
//! checked against the bytes that remain before anything is allocated, and nothing panics.

use crate::compact::{CompactRecord, SchemaSource, TYPE_ID as COMPACT};
use crate::error::ReadError;
use crate::input::{malformed, Input};
use crate::value::{Object, Value};

/// How deep collections may nest (an `ArrayList` in an `ArrayList` ... ).
pub const MAX_DEPTH: usize = 32;

/// Bytes before the payload in a `Data`: partition hash and type id.
pub const HEADER_SIZE: usize = 8;

pub const NULL: i32 = 0;
pub const PORTABLE: i32 = -1;
pub const IDENTIFIED: i32 = -2;
pub const JSON: i32 = -130;

/// The type id of a `Data` blob (0, null, for an empty one).
pub fn type_id(data: &[u8]) -> Result<i32, ReadError> {
    if data.is_empty() {
        return Ok(NULL);
    }
    let mut input = Input::new(data, 4);
    input.i32()
}

/// The value in a whole `Data` blob. Compact and Portable records come back as
/// [`Value::Object`]s holding the payload (no schema is needed for that).
pub fn read_value(data: &[u8], schemas: &dyn SchemaSource) -> Result<Value, ReadError> {
    let type_id = type_id(data)?;
    if data.is_empty() || type_id == NULL {
        return Ok(Value::Null);
    }
    if type_id == COMPACT || type_id == PORTABLE {
        return Ok(Value::Object(Object { type_id, bytes: data[HEADER_SIZE..].to_vec() }));
    }
    let mut input = Input::new(data, HEADER_SIZE);
    read_payload(&mut input, type_id, schemas, 0)
}

/// An object written inline (type id then payload) starting at `offset` in `buffer`, and the
/// offset just past it. `buffer` is the whole enclosing blob (a predicate's `Data`, say),
/// because Portable records inside it store positions counted from its start.
pub fn read_object(buffer: &[u8], offset: usize, schemas: &dyn SchemaSource) -> Result<(Value, usize), ReadError> {
    let mut input = Input::new(buffer, offset);
    let value = read_inline(&mut input, schemas, 0)?;
    Ok((value, input.position()))
}

fn read_inline(input: &mut Input<'_>, schemas: &dyn SchemaSource, depth: usize) -> Result<Value, ReadError> {
    if depth > MAX_DEPTH {
        return Err(ReadError::TooDeep { limit: MAX_DEPTH });
    }
    let type_id = input.i32()?;
    read_payload(input, type_id, schemas, depth)
}

fn read_payload(
    input: &mut Input<'_>,
    type_id: i32,
    schemas: &dyn SchemaSource,
    depth: usize,
) -> Result<Value, ReadError> {
    Ok(match type_id {
        NULL => Value::Null,
        PORTABLE => Value::Object(Object { type_id, bytes: portable_bytes(input)?.to_vec() }),
        IDENTIFIED => return Err(identified(input)),
        -3 => Value::Byte(input.i8()?),
        -4 => Value::Bool(input.bool()?),
        -5 => Value::Char(input.u16()?),
        -6 => Value::Short(input.i16()?),
        -7 => Value::Int(input.i32()?),
        -8 => Value::Long(input.i64()?),
        -9 => Value::Float(input.f32()?),
        -10 => Value::Double(input.f64()?),
        -11 | JSON => match input.string()? {
            Some(text) if type_id == JSON => Value::Json(text),
            Some(text) => Value::String(text),
            None => Value::Null,
        },
        -20..=-12 => primitive_array(input, type_id)?,
        -21 => {
            let most = input.i64()? as u64;
            Value::Uuid(u128::from(most) << 64 | u128::from(input.i64()? as u64))
        }
        -25 => Value::LegacyDate(input.i64()?),
        -26 => Value::BigInteger(input.big_integer()?),
        -27 => Value::BigDecimal(input.big_decimal()?),
        -31..=-28 => collection(input, type_id, schemas, depth)?,
        -50 => read_inline(input, schemas, depth + 1)?,
        -51 => Value::Date(input.date(4)?),
        -52 => Value::Time(input.time()?),
        -53 => Value::Timestamp(input.timestamp(4)?),
        -54 => Value::TimestampWithTimezone(input.timestamp_with_timezone(4)?),
        COMPACT => {
            let rest = &input.buffer()[input.position()..];
            let record = CompactRecord::parse(rest, schemas)?;
            input.bytes(record.bytes().len())?;
            Value::Object(record.to_object())
        }
        other => return Err(unsupported(other)),
    })
}

/// A Portable record's bytes: factory id, class id, version, then the record, whose first int
/// is the absolute position of its end.
pub(crate) fn portable_bytes<'a>(input: &mut Input<'a>) -> Result<&'a [u8], ReadError> {
    let start = input.position();
    input.bytes(12)?;
    let end = input.i32()?;
    let end = usize::try_from(end).ok().filter(|end| *end >= input.position() && *end <= input.buffer().len());
    let end = end.ok_or_else(|| malformed(format!("Portable record at offset {start} ends outside its bytes")))?;
    input.seek(end);
    Ok(&input.buffer()[start..end])
}

fn identified(input: &mut Input<'_>) -> ReadError {
    match (input.bool(), input.i32(), input.i32()) {
        (Ok(true), Ok(factory_id), Ok(class_id)) => ReadError::IdentifiedDataSerializable { factory_id, class_id },
        _ => ReadError::UnsupportedType { type_id: IDENTIFIED, name: "DataSerializable" },
    }
}

fn unsupported(type_id: i32) -> ReadError {
    let name = match type_id {
        -22 | -23 => "Map.Entry",
        -24 => "Class",
        -36..=-32 => "Map",
        -49..=-37 => "Set or Queue",
        -56 => "Compact with schema",
        -100 => "Java Serializable",
        -101 => "Java Externalizable",
        -102 => "ByteBuffer",
        -110 => ".NET serialization",
        -120 => "Python pickle",
        -140 => "Go gob",
        -206..=-200 => "Hibernate",
        -399..=-300 => "Jet",
        positive if positive > 0 => "custom serializer",
        _ => "unknown",
    };
    ReadError::UnsupportedType { type_id, name }
}

fn primitive_array(input: &mut Input<'_>, type_id: i32) -> Result<Value, ReadError> {
    let item_size = match type_id {
        -12 | -13 => 1,
        -14 | -15 => 2,
        -16 | -18 => 4,
        -17 | -19 => 8,
        _ => 4, // strings: at least their length
    };
    let Some(length) = input.length(item_size)? else {
        return Ok(Value::Null);
    };
    let mut items = Vec::with_capacity(length);
    for _ in 0..length {
        items.push(match type_id {
            -12 => Value::Byte(input.i8()?),
            -13 => Value::Bool(input.bool()?),
            -14 => Value::Char(input.u16()?),
            -15 => Value::Short(input.i16()?),
            -16 => Value::Int(input.i32()?),
            -17 => Value::Long(input.i64()?),
            -18 => Value::Float(input.f32()?),
            -19 => Value::Double(input.f64()?),
            _ => input.string()?.map_or(Value::Null, Value::String),
        });
    }
    Ok(Value::Array(items))
}

/// `Object[]` (a count) and lists (a count, -1 for null), each item an inline object.
fn collection(
    input: &mut Input<'_>,
    type_id: i32,
    schemas: &dyn SchemaSource,
    depth: usize,
) -> Result<Value, ReadError> {
    let at = input.position();
    let Some(length) = input.length(4)? else {
        return if type_id == -28 {
            Err(malformed(format!("negative array length at offset {at}")))
        } else {
            Ok(Value::Null)
        };
    };
    let mut items = Vec::with_capacity(length);
    for _ in 0..length {
        items.push(read_inline(input, schemas, depth + 1)?);
    }
    Ok(Value::Array(items))
}
