//! Writing query results as the `Data` blobs Hazelcast's member sends clients: the inverse of
//! [`crate::data`], byte for byte what the member's serializers write for the Java object a
//! result holds.
//!
//! - A `Data` blob is a partition hash (always 0 for results), the big-endian type id and the
//!   payload; an object nested in another (`writeObject`) is the type id and the payload.
//! - Built-in types are written as Hazelcast's constant serializers write them: numbers
//!   big-endian, strings as a UTF-8 byte length and bytes, `BigInteger` as Java's minimal
//!   two's-complement `toByteArray`, `BigDecimal` as that and the scale, the `java.time` types
//!   field by field, `HazelcastJsonValue` as its text.
//! - Java arrays and collections need their Java type, which a [`Value::Array`] no longer has:
//!   [`write_array`] takes it as an [`ArrayType`]; [`write_data`] infers it from the items
//!   ([`ArrayType::infer`]).
//! - The collections results are made of: `Object[]` (multi-attribute projections, type -28),
//!   Hazelcast's `CanonicalizingHashSet` (distinct, IdentifiedDataSerializable -29/19: a count
//!   and the items) and map entries (minBy, maxBy and the identity projection: the
//!   IdentifiedDataSerializable -4/120 `LazyMapEntry`/`CachedQueryEntry` write, key then value).
//! - Compact records ([`Value::Object`] of type -55) are position-independent: [`write_data`]
//!   and [`write_object`] copy them as they were read (schema id then record); the member lays
//!   a record it writes again out in schema order, which [`canonical_inline`] reproduces (the
//!   Python client writes variable-size fields in the order its serializer wrote them). Portable records hold absolute positions, so one
//!   can only be written as a whole blob where it was read ([`write_data`]); nested anywhere
//!   else it is [`WriteError::Unsupported`].
//!
//! A null result is sent as a null frame, not as a blob: [`write_nullable`] gives `None` for
//! it. Invariant: nothing here panics; nesting is bounded by [`MAX_DEPTH`].

use crate::compact::{CompactRecord, SchemaSource};
use crate::data::{self, HEADER_SIZE};
use crate::input::Input;
use crate::schema::Place;
use crate::value::{Object, Value};
use crate::wire::type_id;
use num_bigint::BigInt;

/// How deep arrays may nest when written.
pub const MAX_DEPTH: usize = 32;

/// Hazelcast's factory and class ids of the collections results are written as.
pub const AGGREGATOR_FACTORY_ID: i32 = -29;
pub const CANONICALIZING_HASH_SET_CLASS_ID: i32 = 19;
pub const MAP_FACTORY_ID: i32 = -4;
pub const MAP_ENTRY_CLASS_ID: i32 = 120;

/// Why a value cannot be written as the member would write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The member would write this value with a serializer ferrogrid does not have (Java
    /// serialization of Hazelcast's internal JSON values, arrays of boxed types, ...) or in a
    /// layout that cannot be reproduced (a Portable record away from where it was read).
    #[error("cannot write {0} as Hazelcast's member would")]
    Unsupported(String),
    #[error("values nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// A blob that was to be copied into the result is not a readable `Data`.
    #[error("malformed Data: {0}")]
    Malformed(String),
}

/// The Java type of an array or collection: a primitive array, `String[]`, or one of the
/// object collections (`Object[]`, `ArrayList`, `LinkedList`, `CopyOnWriteArrayList`), each by
/// its serializer type id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayType(pub i32);

impl ArrayType {
    pub const OBJECTS: ArrayType = ArrayType(type_id::OBJECT_ARRAY);

    /// The array type of a serializer type id (-12 to -20 and -28 to -31), if it is one.
    pub fn from_type_id(type_id: i32) -> Option<ArrayType> {
        matches!(type_id, -20..=-12 | -31..=-28).then_some(ArrayType(type_id))
    }

    /// The Java array these items most likely came from: a primitive array when every item is
    /// of one primitive type, `String[]` when every item is a string or null (and one is a
    /// string), `Object[]` otherwise (an empty array too).
    pub fn infer(items: &[Value]) -> ArrayType {
        let primitive = |value: &Value| match value {
            Value::Byte(_) => Some(type_id::BYTE_ARRAY),
            Value::Bool(_) => Some(type_id::BOOLEAN_ARRAY),
            Value::Char(_) => Some(type_id::CHAR_ARRAY),
            Value::Short(_) => Some(type_id::SHORT_ARRAY),
            Value::Int(_) => Some(type_id::INTEGER_ARRAY),
            Value::Long(_) => Some(type_id::LONG_ARRAY),
            Value::Float(_) => Some(type_id::FLOAT_ARRAY),
            Value::Double(_) => Some(type_id::DOUBLE_ARRAY),
            _ => None,
        };
        let first = items.first().and_then(primitive);
        if first.is_some() && items.iter().all(|item| primitive(item) == first) {
            return ArrayType(first.unwrap_or(type_id::OBJECT_ARRAY));
        }
        let strings = items.iter().all(|item| matches!(item, Value::String(_) | Value::Null));
        if strings && items.iter().any(|item| matches!(item, Value::String(_))) {
            return ArrayType(type_id::STRING_ARRAY);
        }
        ArrayType::OBJECTS
    }
}

/// A whole `Data` blob for `value`. Null is the 8-byte blob of type id 0 (what
/// [`crate::read_value`] reads as null); on the wire a null result is a null frame instead (see
/// [`write_nullable`]). Arrays are written as [`ArrayType::infer`] says.
pub fn write_data(value: &Value) -> Result<Vec<u8>, WriteError> {
    let mut out = vec![0; 4];
    if let Value::Object(object) = value {
        // Whole blobs keep Portable positions valid: the record sits where it was read.
        out.extend_from_slice(&object.type_id.to_be_bytes());
        out.extend_from_slice(&object.bytes);
        return Ok(out);
    }
    write_object(&mut out, value, 0)?;
    Ok(out)
}

/// The `Data` blob of a result, `None` for null (sent as a null frame).
pub fn write_nullable(value: &Value) -> Result<Option<Vec<u8>>, WriteError> {
    match value {
        Value::Null => Ok(None),
        value => write_data(value).map(Some),
    }
}

/// Prefixes an inline object (type id and payload) with the partition hash: a whole blob.
pub fn data_of_inline(inline: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(inline.len() + 4);
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(inline);
    out
}

/// Appends `value` as `ObjectDataOutput.writeObject` writes it: type id, then payload.
pub fn write_object(out: &mut Vec<u8>, value: &Value, depth: usize) -> Result<(), WriteError> {
    if depth > MAX_DEPTH {
        return Err(WriteError::TooDeep);
    }
    match value {
        Value::Null => put_i32(out, type_id::NULL),
        Value::Bool(value) => tagged(out, type_id::BOOLEAN, &[u8::from(*value)]),
        Value::Byte(value) => tagged(out, type_id::BYTE, &value.to_be_bytes()),
        Value::Short(value) => tagged(out, type_id::SHORT, &value.to_be_bytes()),
        Value::Int(value) => tagged(out, type_id::INTEGER, &value.to_be_bytes()),
        Value::Long(value) => tagged(out, type_id::LONG, &value.to_be_bytes()),
        Value::Float(value) => tagged(out, type_id::FLOAT, &value.to_be_bytes()),
        Value::Double(value) => tagged(out, type_id::DOUBLE, &value.to_be_bytes()),
        Value::Char(value) => tagged(out, type_id::CHAR, &value.to_be_bytes()),
        Value::String(text) => {
            put_i32(out, type_id::STRING);
            put_string(out, text);
        }
        Value::Json(text) => {
            put_i32(out, type_id::JSON);
            put_string(out, text);
        }
        Value::BigInteger(value) => {
            put_i32(out, type_id::BIG_INTEGER);
            put_big_integer(out, value);
        }
        Value::BigDecimal(value) => {
            put_i32(out, type_id::BIG_DECIMAL);
            put_big_integer(out, value.unscaled());
            put_i32(out, value.scale());
        }
        Value::Uuid(value) => tagged(out, type_id::UUID, &value.to_be_bytes()),
        Value::LegacyDate(millis) => tagged(out, type_id::DATE, &millis.to_be_bytes()),
        Value::Date(_) | Value::Time(_) | Value::Timestamp(_) | Value::TimestampWithTimezone(_) => {
            write_temporal(out, value)
        }
        Value::Array(items) => write_array(out, items, ArrayType::infer(items), depth)?,
        Value::Object(object) => write_nested_object(out, object)?,
        Value::JsonStructure => {
            return Err(WriteError::Unsupported("a JSON object or array (NonTerminalJsonValue)".into()))
        }
    }
    Ok(())
}

fn write_temporal(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Date(date) => {
            put_i32(out, type_id::LOCAL_DATE);
            put_date(out, date);
        }
        Value::Time(time) => {
            put_i32(out, type_id::LOCAL_TIME);
            put_time(out, time);
        }
        Value::Timestamp(timestamp) => {
            put_i32(out, type_id::LOCAL_DATE_TIME);
            put_date(out, &timestamp.date);
            put_time(out, &timestamp.time);
        }
        Value::TimestampWithTimezone(zoned) => {
            put_i32(out, type_id::OFFSET_DATE_TIME);
            put_date(out, &zoned.timestamp.date);
            put_time(out, &zoned.timestamp.time);
            put_i32(out, zoned.offset_seconds());
        }
        _ => {}
    }
}

fn put_date(out: &mut Vec<u8>, date: &crate::temporal::Date) {
    put_i32(out, date.year());
    out.extend_from_slice(&[date.month(), date.day()]);
}

fn put_time(out: &mut Vec<u8>, time: &crate::temporal::Time) {
    out.extend_from_slice(&[time.hour(), time.minute(), time.second()]);
    put_i32(out, time.nano() as i32);
}

/// A Compact record nested in a result. Portable records are refused: their absolute
/// positions would point into the blob they were read from.
fn write_nested_object(out: &mut Vec<u8>, object: &Object) -> Result<(), WriteError> {
    if object.type_id != type_id::COMPACT {
        let what = if object.type_id == type_id::PORTABLE { "a nested Portable record" } else { "an object" };
        return Err(WriteError::Unsupported(format!("{what} of type {}", object.type_id)));
    }
    put_i32(out, object.type_id);
    out.extend_from_slice(&object.bytes);
    Ok(())
}

/// Appends `items` as the Java array or collection `array_type` (type id, then its payload).
pub fn write_array(out: &mut Vec<u8>, items: &[Value], array_type: ArrayType, depth: usize) -> Result<(), WriteError> {
    let ArrayType(type_id) = array_type;
    put_i32(out, type_id);
    let length = i32::try_from(items.len()).map_err(|_| WriteError::Unsupported("an array this long".into()))?;
    put_i32(out, length);
    for item in items {
        match (type_id, item) {
            (-12, Value::Byte(value)) => out.extend_from_slice(&value.to_be_bytes()),
            (-13, Value::Bool(value)) => out.push(u8::from(*value)),
            (-14, Value::Char(value)) => out.extend_from_slice(&value.to_be_bytes()),
            (-15, Value::Short(value)) => out.extend_from_slice(&value.to_be_bytes()),
            (-16, Value::Int(value)) => out.extend_from_slice(&value.to_be_bytes()),
            (-17, Value::Long(value)) => out.extend_from_slice(&value.to_be_bytes()),
            (-18, Value::Float(value)) => out.extend_from_slice(&value.to_be_bytes()),
            (-19, Value::Double(value)) => out.extend_from_slice(&value.to_be_bytes()),
            (-20, Value::String(text)) => put_string(out, text),
            (-20, Value::Null) => put_i32(out, -1),
            (-31..=-28, item) => write_object(out, item, depth + 1)?,
            (_, item) => {
                let name = item.type_name();
                return Err(WriteError::Unsupported(format!("a {name} in an array of type {type_id}")));
            }
        }
    }
    Ok(())
}

/// `Object[]` of already written inline objects (a multi-attribute projection): a whole blob.
pub fn write_object_array(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![0; 4];
    put_i32(&mut out, type_id::OBJECT_ARRAY);
    put_i32(&mut out, items.len() as i32);
    items.iter().for_each(|item| out.extend_from_slice(item));
    out
}

/// Hazelcast's `CanonicalizingHashSet` of already written inline objects, in the order given
/// (distinct's result): a whole blob.
pub fn write_hash_set(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = identified_header(AGGREGATOR_FACTORY_ID, CANONICALIZING_HASH_SET_CLASS_ID);
    put_i32(&mut out, items.len() as i32);
    items.iter().for_each(|item| out.extend_from_slice(item));
    out
}

/// A map entry (minBy, maxBy, the identity projection) of an entry's key and value `Data`
/// blobs: a whole blob. Each side is written as the member writes the object it deserialized:
/// the blob's type id and payload (see [`inline_of_data`]).
pub fn write_entry(key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Result<Vec<u8>, WriteError> {
    let mut out = identified_header(MAP_FACTORY_ID, MAP_ENTRY_CLASS_ID);
    out.extend_from_slice(&inline_of_data(key, schemas)?);
    out.extend_from_slice(&inline_of_data(value, schemas)?);
    Ok(out)
}

/// The inline form (type id, payload) of a whole `Data` blob, as the member writes the object
/// it deserializes the blob to: the blob's own bytes, which for the built-in types is what Java
/// writes again (checked against Hazelcast's member in `tests/write.rs`), with Compact records
/// in the member's layout ([`canonical_inline`]). Portable records are refused (their
/// positions are absolute).
pub fn inline_of_data(blob: &[u8], schemas: &dyn SchemaSource) -> Result<Vec<u8>, WriteError> {
    if blob.is_empty() {
        return Ok(type_id::NULL.to_be_bytes().to_vec());
    }
    let found = data::type_id(blob).map_err(|error| WriteError::Malformed(error.to_string()))?;
    if found == type_id::PORTABLE {
        return Err(WriteError::Unsupported("a Portable record inside another object".into()));
    }
    if blob.len() < HEADER_SIZE {
        return Err(WriteError::Malformed(format!("a Data blob of {} bytes", blob.len())));
    }
    canonical_inline(&blob[4..], schemas)
}

fn identified_header(factory_id: i32, class_id: i32) -> Vec<u8> {
    let mut out = vec![0; 4];
    put_i32(&mut out, type_id::DATA_SERIALIZABLE);
    out.push(1); // identified, not versioned
    put_i32(&mut out, factory_id);
    put_i32(&mut out, class_id);
    out
}

fn tagged(out: &mut Vec<u8>, type_id: i32, payload: &[u8]) {
    put_i32(out, type_id);
    out.extend_from_slice(payload);
}

fn put_i32(out: &mut Vec<u8>, value: i32) {
    out.extend_from_slice(&value.to_be_bytes());
}

fn put_string(out: &mut Vec<u8>, text: &str) {
    put_i32(out, text.len() as i32);
    out.extend_from_slice(text.as_bytes());
}

/// Java's `BigInteger.toByteArray`: minimal two's complement, at least one byte.
fn put_big_integer(out: &mut Vec<u8>, value: &BigInt) {
    let bytes = value.to_signed_bytes_be();
    let bytes = if bytes.is_empty() { vec![0] } else { bytes };
    put_i32(out, bytes.len() as i32);
    out.extend_from_slice(&bytes);
}

/// An inline object with every Compact record in it (at the top, in `Object[]` and lists)
/// laid out as Hazelcast's member lays out a record it writes again: the variable-size fields
/// in schema order (by name), which is not always the order a client wrote them in. Other
/// objects are copied as they are.
pub fn canonical_inline(inline: &[u8], schemas: &dyn SchemaSource) -> Result<Vec<u8>, WriteError> {
    let mut out = Vec::with_capacity(inline.len());
    canonical_object(inline, 0, schemas, &mut out, 0)?;
    Ok(out)
}

/// Appends the object at `offset` of `buffer` in canonical layout; returns where it ended.
fn canonical_object(
    buffer: &[u8],
    offset: usize,
    schemas: &dyn SchemaSource,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<usize, WriteError> {
    if depth > MAX_DEPTH {
        return Err(WriteError::TooDeep);
    }
    let malformed = |error: crate::error::ReadError| WriteError::Malformed(error.to_string());
    let mut input = Input::new(buffer, offset);
    let object_type = input.i32().map_err(malformed)?;
    match object_type {
        type_id::COMPACT => {
            let record = CompactRecord::parse(&buffer[offset + 4..], schemas).map_err(malformed)?;
            put_i32(out, object_type);
            out.extend_from_slice(&canonical_compact(record.bytes(), schemas, depth)?);
            Ok(offset + 4 + record.bytes().len())
        }
        -31..=-28 => {
            let count = input.length(4).map_err(malformed)?;
            out.extend_from_slice(&buffer[offset..input.position()]);
            let mut at = input.position();
            for _ in 0..count.unwrap_or(0) {
                at = canonical_object(buffer, at, schemas, out, depth + 1)?;
            }
            Ok(at)
        }
        _ => {
            let (_, end) = data::read_object(buffer, offset, schemas).map_err(malformed)?;
            out.extend_from_slice(&buffer[offset..end]);
            Ok(end)
        }
    }
}

/// A Compact record (schema id, then the record) with its variable-size values in offset-table
/// order, nested records likewise, and the offset table as wide as the new data section needs.
pub fn canonical_compact(record: &[u8], schemas: &dyn SchemaSource, depth: usize) -> Result<Vec<u8>, WriteError> {
    if depth > MAX_DEPTH {
        return Err(WriteError::TooDeep);
    }
    let malformed = |error: crate::error::ReadError| WriteError::Malformed(error.to_string());
    let parsed = CompactRecord::parse(record, schemas).map_err(malformed)?;
    let schema = parsed.schema().clone();
    let record = parsed.bytes();
    let count = schema.variable_count() as usize;
    if count == 0 {
        return Ok(record.to_vec());
    }
    let mut input = Input::new(record, 8);
    let data_length = input.i32().map_err(malformed)? as usize;
    let (data_start, table_start) = (12, 12 + data_length);
    let width = compact_offset_width(data_length);
    let fixed = &record[data_start..data_start + schema.fixed_length() as usize];
    let mut positions = Vec::with_capacity(count);
    for index in 0..count {
        positions.push(offset_entry(record, table_start + index * width, width).map_err(malformed)?);
    }
    let mut kinds = vec![0; count];
    for field in &schema.fields {
        if let Ok(Some((_, Place::Variable { index }))) = schema.place(&field.name) {
            kinds[index as usize] = field.kind;
        }
    }
    let mut data = fixed.to_vec();
    let mut offsets = Vec::with_capacity(count);
    for (index, position) in positions.iter().enumerate() {
        let Some(position) = position else {
            offsets.push(None);
            continue;
        };
        let end = positions.iter().flatten().filter(|other| *other > position).min().copied().unwrap_or(data_length);
        let value = record.get(data_start + position..data_start + end).ok_or_else(|| {
            WriteError::Malformed(format!("offset {position} outside a record of {data_length} bytes"))
        })?;
        offsets.push(Some(data.len()));
        match kinds[index] {
            KIND_COMPACT => data.extend_from_slice(&canonical_compact(value, schemas, depth + 1)?),
            KIND_ARRAY_OF_COMPACT => data.extend_from_slice(&canonical_compact_array(value, schemas, depth + 1)?),
            _ => data.extend_from_slice(value),
        }
    }
    let mut out = record[..8].to_vec();
    put_i32(&mut out, data.len() as i32);
    let width = compact_offset_width(data.len());
    out.extend_from_slice(&data);
    put_offsets(&mut out, &offsets, width);
    Ok(out)
}

const KIND_COMPACT: i32 = 29;
const KIND_ARRAY_OF_COMPACT: i32 = 30;

/// An array of Compact records (data length, count, items, offset table) with each record in
/// canonical layout.
fn canonical_compact_array(value: &[u8], schemas: &dyn SchemaSource, depth: usize) -> Result<Vec<u8>, WriteError> {
    let malformed = |error: crate::error::ReadError| WriteError::Malformed(error.to_string());
    let mut input = Input::new(value, 0);
    let data_length = input.i32().map_err(malformed)?;
    let count = input.length(1).map_err(malformed)?.unwrap_or(0);
    let data_length = usize::try_from(data_length).map_err(|_| WriteError::Malformed("negative length".into()))?;
    let (data_start, table_start) = (8, 8 + data_length);
    let width = compact_offset_width(data_length);
    let mut data = Vec::new();
    let mut offsets = Vec::with_capacity(count);
    for index in 0..count {
        let Some(position) = offset_entry(value, table_start + index * width, width).map_err(malformed)? else {
            offsets.push(None);
            continue;
        };
        let item = value
            .get(data_start + position..table_start)
            .ok_or_else(|| WriteError::Malformed(format!("item offset {position} outside its array")))?;
        let parsed = CompactRecord::parse(item, schemas).map_err(malformed)?;
        offsets.push(Some(data.len()));
        data.extend_from_slice(&canonical_compact(parsed.bytes(), schemas, depth)?);
    }
    let mut out = Vec::new();
    put_i32(&mut out, data.len() as i32);
    put_i32(&mut out, count as i32);
    let width = compact_offset_width(data.len());
    out.extend_from_slice(&data);
    put_offsets(&mut out, &offsets, width);
    Ok(out)
}

fn compact_offset_width(data_length: usize) -> usize {
    if data_length < 255 {
        1
    } else if data_length < 65_535 {
        2
    } else {
        4
    }
}

/// The offset-table entry at `at`, `width` bytes wide (all ones: null).
fn offset_entry(bytes: &[u8], at: usize, width: usize) -> Result<Option<usize>, crate::error::ReadError> {
    let mut input = Input::new(bytes, at);
    Ok(match width {
        1 => Some(input.u8()?).filter(|entry| *entry != u8::MAX).map(usize::from),
        2 => Some(input.u16()?).filter(|entry| *entry != u16::MAX).map(usize::from),
        _ => Some(input.i32()?).filter(|entry| *entry >= 0).map(|entry| entry as usize),
    })
}

fn put_offsets(out: &mut Vec<u8>, offsets: &[Option<usize>], width: usize) {
    for offset in offsets {
        match (width, offset) {
            (1, Some(offset)) => out.push(*offset as u8),
            (1, None) => out.push(u8::MAX),
            (2, Some(offset)) => out.extend_from_slice(&(*offset as u16).to_be_bytes()),
            (2, None) => out.extend_from_slice(&u16::MAX.to_be_bytes()),
            (_, Some(offset)) => put_i32(out, *offset as i32),
            (_, None) => put_i32(out, -1),
        }
    }
}

/// A Compact record of `schema` (schema id, then the record) whose fields take `values`, one
/// per field in the schema's order (by name). Written: booleans, the integer and floating
/// kinds (nullable or not), STRING and DECIMAL; any other kind is `Unsupported`, and a null for
/// a kind that cannot be null is `Unsupported` too.
pub fn write_compact(schema: &crate::schema::Schema, values: &[Value]) -> Result<Vec<u8>, WriteError> {
    if values.len() != schema.fields.len() {
        return Err(WriteError::Unsupported(format!("{} values for {} fields", values.len(), schema.fields.len())));
    }
    let mut fixed = vec![0u8; schema.fixed_length() as usize];
    let mut variable: Vec<Option<Vec<u8>>> = vec![None; schema.variable_count() as usize];
    for (field, value) in schema.fields.iter().zip(values) {
        let malformed = |error: crate::error::ReadError| WriteError::Malformed(error.to_string());
        let Some((_, place)) = schema.place(&field.name).map_err(malformed)? else { continue };
        let unsupported = || unsupported_field(field, value);
        let Some(bytes) = compact_field_bytes(field, value, &place)? else { continue };
        match place {
            Place::Fixed { offset } => {
                let at = offset as usize;
                fixed.get_mut(at..at + bytes.len()).ok_or_else(unsupported)?.copy_from_slice(&bytes);
            }
            Place::Bit { offset, bit } => {
                if bytes == [1] {
                    *fixed.get_mut(offset as usize).ok_or_else(unsupported)? |= 1 << bit;
                }
            }
            Place::Variable { index } => variable[index as usize] = Some(bytes),
        }
    }
    Ok(compact_record(schema.id(), fixed, variable))
}

/// A value a Compact field of its kind cannot hold (or that this writer does not write).
fn unsupported_field(field: &crate::schema::FieldDescriptor, value: &Value) -> WriteError {
    WriteError::Unsupported(format!("{} for Compact field {} of kind {}", value.type_name(), field.name, field.kind))
}

/// The bytes `value` takes in `field` at `place`; None for a null in a variable-size field,
/// which is left absent.
fn compact_field_bytes(
    field: &crate::schema::FieldDescriptor,
    value: &Value,
    place: &Place,
) -> Result<Option<Vec<u8>>, WriteError> {
    use crate::compact::kind;
    let mut bytes = Vec::new();
    match (field.kind, value) {
        (_, Value::Null) => {
            if !matches!(place, Place::Variable { .. }) {
                return Err(unsupported_field(field, value));
            }
            return Ok(None);
        }
        (kind::BOOLEAN | kind::NULLABLE_BOOLEAN, Value::Bool(v)) => bytes.push(u8::from(*v)),
        (kind::INT8 | 35, Value::Byte(v)) => bytes.push(*v as u8),
        (kind::INT16 | 37, Value::Short(v)) => bytes.extend_from_slice(&v.to_be_bytes()),
        (kind::INT32 | 39, Value::Int(v)) => bytes.extend_from_slice(&v.to_be_bytes()),
        (kind::INT64 | 41, Value::Long(v)) => bytes.extend_from_slice(&v.to_be_bytes()),
        (kind::FLOAT32 | 43, Value::Float(v)) => bytes.extend_from_slice(&v.to_bits().to_be_bytes()),
        (kind::FLOAT64 | kind::NULLABLE_FLOAT64, Value::Double(v)) => {
            bytes.extend_from_slice(&v.to_bits().to_be_bytes())
        }
        (kind::STRING, Value::String(text)) => put_string(&mut bytes, text),
        (kind::DECIMAL, Value::BigDecimal(decimal)) => {
            put_big_integer(&mut bytes, decimal.unscaled());
            put_i32(&mut bytes, decimal.scale());
        }
        _ => return Err(unsupported_field(field, value)),
    }
    Ok(Some(bytes))
}

/// A Compact record's bytes: the schema id, then the fixed-size section alone, or (with
/// variable-size fields) the data length, the data and the offset table.
fn compact_record(schema_id: i64, fixed: Vec<u8>, variable: Vec<Option<Vec<u8>>>) -> Vec<u8> {
    let mut out = schema_id.to_be_bytes().to_vec();
    if variable.is_empty() {
        out.extend_from_slice(&fixed);
        return out;
    }
    let mut data = fixed;
    let mut offsets = Vec::with_capacity(variable.len());
    for value in variable {
        match value {
            Some(bytes) => {
                offsets.push(Some(data.len()));
                data.extend_from_slice(&bytes);
            }
            None => offsets.push(None),
        }
    }
    put_i32(&mut out, data.len() as i32);
    let width = compact_offset_width(data.len());
    out.extend_from_slice(&data);
    put_offsets(&mut out, &offsets, width);
    out
}

/// The Portable field type SQL writes a value of (None: not written here): BYTE 1, BOOLEAN 2,
/// SHORT 4, INT 5, LONG 6, FLOAT 7, DOUBLE 8, UTF 9, DECIMAL 20.
pub fn portable_field_type(value_kind: &Value) -> Option<u8> {
    Some(match value_kind {
        Value::Byte(_) => 1,
        Value::Bool(_) => 2,
        Value::Short(_) => 4,
        Value::Int(_) => 5,
        Value::Long(_) => 6,
        Value::Float(_) => 7,
        Value::Double(_) => 8,
        Value::String(_) => 9,
        Value::BigDecimal(_) => 20,
        _ => return None,
    })
}

/// A whole `Data` blob of a Portable record: factory and class id, version, then its fields
/// `(name, field type, value)` in order, each after its name and type as Hazelcast's
/// `DefaultPortableWriter` lays them out (positions counted from the blob's start). A null is
/// written only for UTF and DECIMAL fields.
pub fn write_portable(
    factory: i32,
    class: i32,
    version: i32,
    fields: &[(String, u8, Value)],
) -> Result<Vec<u8>, WriteError> {
    let mut out = vec![0; 4];
    put_i32(&mut out, data::PORTABLE);
    put_i32(&mut out, factory);
    put_i32(&mut out, class);
    put_i32(&mut out, version);
    let end_at = out.len();
    put_i32(&mut out, 0);
    put_i32(&mut out, fields.len() as i32);
    let table = out.len();
    out.resize(table + fields.len() * 4, 0);
    for (index, (name, field_type, value)) in fields.iter().enumerate() {
        let position = out.len() as i32;
        out[table + index * 4..table + index * 4 + 4].copy_from_slice(&position.to_be_bytes());
        if name.len() > u16::MAX as usize || !name.is_ascii() {
            return Err(WriteError::Unsupported(format!("Portable field name {name}")));
        }
        out.extend_from_slice(&(name.len() as u16).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
        out.push(*field_type);
        let unsupported =
            || WriteError::Unsupported(format!("{} for Portable field {name} of type {field_type}", value.type_name()));
        match (field_type, value) {
            (9, Value::Null) => put_i32(&mut out, -1),
            (9, Value::String(text)) => put_string(&mut out, text),
            (20, Value::Null) => out.push(1),
            (20, Value::BigDecimal(decimal)) => {
                out.push(0);
                put_big_integer(&mut out, decimal.unscaled());
                put_i32(&mut out, decimal.scale());
            }
            (1, Value::Byte(v)) => out.push(*v as u8),
            (2, Value::Bool(v)) => out.push(u8::from(*v)),
            (4, Value::Short(v)) => out.extend_from_slice(&v.to_be_bytes()),
            (5, Value::Int(v)) => out.extend_from_slice(&v.to_be_bytes()),
            (6, Value::Long(v)) => out.extend_from_slice(&v.to_be_bytes()),
            (7, Value::Float(v)) => out.extend_from_slice(&v.to_bits().to_be_bytes()),
            (8, Value::Double(v)) => out.extend_from_slice(&v.to_bits().to_be_bytes()),
            _ => return Err(unsupported()),
        }
    }
    let end = out.len() as i32;
    out[end_at..end_at + 4].copy_from_slice(&end.to_be_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::BigDecimal;

    #[test]
    fn numbers_are_written_as_java_writes_them() {
        assert_eq!(hex::encode(write_data(&Value::Int(-7)).unwrap()), "00000000fffffff9fffffff9");
        assert_eq!(hex::encode(write_data(&Value::BigInteger(BigInt::from(0))).unwrap()), "00000000ffffffe60000000100");
        assert_eq!(
            hex::encode(write_data(&Value::BigInteger(BigInt::from(128))).unwrap()),
            "00000000ffffffe6000000020080"
        );
        let decimal = Value::BigDecimal(BigDecimal::parse("-0.125").unwrap());
        assert_eq!(hex::encode(write_data(&decimal).unwrap()), "00000000ffffffe5000000018300000003");
        assert_eq!(write_nullable(&Value::Null), Ok(None));
        assert_eq!(hex::encode(write_data(&Value::Null).unwrap()), "0000000000000000");
    }

    #[test]
    fn arrays_take_their_type_from_their_items() {
        assert_eq!(ArrayType::infer(&[Value::Int(1), Value::Int(2)]), ArrayType(-16));
        assert_eq!(ArrayType::infer(&[Value::Int(1), Value::Long(2)]), ArrayType::OBJECTS);
        assert_eq!(ArrayType::infer(&[Value::Null, Value::String("a".into())]), ArrayType(-20));
        assert_eq!(ArrayType::infer(&[]), ArrayType::OBJECTS);
        let mut out = Vec::new();
        let refused = write_array(&mut out, &[Value::String("x".into())], ArrayType(-16), 0);
        assert!(matches!(refused, Err(WriteError::Unsupported(_))));
        let portable = Value::Object(Object { type_id: -1, bytes: vec![0; 16] });
        assert!(matches!(write_object(&mut Vec::new(), &portable, 0), Err(WriteError::Unsupported(_))));
        assert!(write_data(&portable).is_ok(), "a whole Portable blob keeps its positions");
    }
}
