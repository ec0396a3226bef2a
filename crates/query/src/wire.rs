//! The byte layout the query decoders share: a bounds-checked cursor over a `Data` blob as the
//! clients write it (big-endian, Hazelcast's default byte order), the `Data` and
//! `DataSerializable` headers, and where an object written by `ObjectDataOutput.writeObject`
//! ends, so that a value can be cut out of a predicate undecoded.
//!
//! Invariants:
//! - every read is bounds-checked against the blob; a short or inconsistent blob is a
//!   [`WireError`], never a panic;
//! - a count read from the blob is trusted only as far as the remaining bytes can hold that many
//!   elements (each element has a known minimum size), so nothing is allocated on a claim alone;
//! - objects nest at most [`MAX_DEPTH`] deep;
//! - positions are byte offsets from the start of the blob (the partition hash), which is also
//!   the origin of the absolute positions inside Portable records.

use std::fmt;
use std::ops::Range;

pub use crate::compact::SchemaSource;
use crate::schema::Schema;

/// How deep objects and predicates may nest inside one blob.
pub const MAX_DEPTH: usize = 64;

/// Size of a `Data` blob's header: partition hash and serializer type id, both `i32` big-endian.
pub const DATA_HEADER_SIZE: usize = 8;

/// Serializer type ids (Hazelcast's `SerializationConstants`).
pub mod type_id {
    pub const NULL: i32 = 0;
    pub const PORTABLE: i32 = -1;
    pub const DATA_SERIALIZABLE: i32 = -2;
    pub const BYTE: i32 = -3;
    pub const BOOLEAN: i32 = -4;
    pub const CHAR: i32 = -5;
    pub const SHORT: i32 = -6;
    pub const INTEGER: i32 = -7;
    pub const LONG: i32 = -8;
    pub const FLOAT: i32 = -9;
    pub const DOUBLE: i32 = -10;
    pub const STRING: i32 = -11;
    pub const BYTE_ARRAY: i32 = -12;
    pub const BOOLEAN_ARRAY: i32 = -13;
    pub const CHAR_ARRAY: i32 = -14;
    pub const SHORT_ARRAY: i32 = -15;
    pub const INTEGER_ARRAY: i32 = -16;
    pub const LONG_ARRAY: i32 = -17;
    pub const FLOAT_ARRAY: i32 = -18;
    pub const DOUBLE_ARRAY: i32 = -19;
    pub const STRING_ARRAY: i32 = -20;
    pub const UUID: i32 = -21;
    pub const SIMPLE_ENTRY: i32 = -22;
    pub const SIMPLE_IMMUTABLE_ENTRY: i32 = -23;
    pub const CLASS: i32 = -24;
    pub const DATE: i32 = -25;
    pub const BIG_INTEGER: i32 = -26;
    pub const BIG_DECIMAL: i32 = -27;
    pub const OBJECT_ARRAY: i32 = -28;
    pub const ARRAY_LIST: i32 = -29;
    pub const LINKED_LIST: i32 = -30;
    pub const COPY_ON_WRITE_ARRAY_LIST: i32 = -31;
    pub const HASH_MAP: i32 = -32;
    pub const CONCURRENT_SKIP_LIST_MAP: i32 = -33;
    pub const CONCURRENT_HASH_MAP: i32 = -34;
    pub const LINKED_HASH_MAP: i32 = -35;
    pub const TREE_MAP: i32 = -36;
    pub const HASH_SET: i32 = -37;
    pub const TREE_SET: i32 = -38;
    pub const LINKED_HASH_SET: i32 = -39;
    pub const COPY_ON_WRITE_ARRAY_SET: i32 = -40;
    pub const CONCURRENT_SKIP_LIST_SET: i32 = -41;
    pub const ARRAY_DEQUE: i32 = -42;
    pub const LINKED_BLOCKING_QUEUE: i32 = -43;
    pub const ARRAY_BLOCKING_QUEUE: i32 = -44;
    pub const PRIORITY_BLOCKING_QUEUE: i32 = -45;
    pub const DELAY_QUEUE: i32 = -46;
    pub const SYNCHRONOUS_QUEUE: i32 = -47;
    pub const LINKED_TRANSFER_QUEUE: i32 = -48;
    pub const PRIORITY_QUEUE: i32 = -49;
    pub const OPTIONAL: i32 = -50;
    pub const LOCAL_DATE: i32 = -51;
    pub const LOCAL_TIME: i32 = -52;
    pub const LOCAL_DATE_TIME: i32 = -53;
    pub const OFFSET_DATE_TIME: i32 = -54;
    pub const COMPACT: i32 = -55;
    pub const COMPACT_WITH_SCHEMA: i32 = -56;
    pub const JAVA_SERIALIZABLE: i32 = -100;
    pub const JAVA_EXTERNALIZABLE: i32 = -101;
    pub const JSON: i32 = -130;
}

/// No schemas: a Compact value inside a predicate is then an [`WireError::UnknownSchema`].
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSchemas;

impl SchemaSource for NoSchemas {
    fn schema(&self, _schema_id: i64) -> Option<std::sync::Arc<Schema>> {
        None
    }
}

/// What an object in a blob is, as far as its header tells: used to name what was found where
/// a predicate, aggregator or projection was expected, or a value whose end cannot be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectKind {
    Null,
    IdentifiedDataSerializable {
        factory_id: i32,
        class_id: i32,
    },
    /// A `DataSerializable` that is not identified: written with its Java class name.
    DataSerializable {
        class_name: String,
    },
    Portable {
        factory_id: i32,
        class_id: i32,
    },
    Compact {
        schema_id: i64,
    },
    /// Java serialization (`java.io.Serializable`); the class name when the stream shows it.
    JavaSerializable {
        class_name: Option<String>,
    },
    JavaExternalizable {
        class_name: String,
    },
    /// One of Hazelcast's built-in serializers (a negative type id), or a type id this crate
    /// does not know.
    BuiltIn {
        type_id: i32,
    },
    /// A serializer the user registered (a positive type id).
    Custom {
        type_id: i32,
    },
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectKind::Null => write!(formatter, "null"),
            ObjectKind::IdentifiedDataSerializable { factory_id, class_id } => {
                write!(formatter, "an IdentifiedDataSerializable of factory id {factory_id}, class id {class_id}")
            }
            ObjectKind::DataSerializable { class_name } => write!(formatter, "a DataSerializable {class_name}"),
            ObjectKind::Portable { factory_id, class_id } => {
                write!(formatter, "a Portable of factory id {factory_id}, class id {class_id}")
            }
            ObjectKind::Compact { schema_id } => write!(formatter, "a Compact record of schema {schema_id}"),
            ObjectKind::JavaSerializable { class_name: Some(name) } => {
                write!(formatter, "a Java-serialized object of class {name}")
            }
            ObjectKind::JavaSerializable { class_name: None } => write!(formatter, "a Java-serialized object"),
            ObjectKind::JavaExternalizable { class_name } => write!(formatter, "a Java Externalizable {class_name}"),
            ObjectKind::BuiltIn { type_id } => write!(formatter, "a value of serializer type {type_id}"),
            ObjectKind::Custom { type_id } => write!(formatter, "a value of custom serializer type {type_id}"),
        }
    }
}

/// A blob that does not hold what its layout promises.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("a Data blob of {length} bytes is shorter than its {DATA_HEADER_SIZE}-byte header")]
    ShortData { length: usize },
    #[error("{needed} bytes needed at byte {offset}, {available} left")]
    Truncated { offset: usize, needed: usize, available: usize },
    #[error("invalid length {length} at byte {offset}")]
    InvalidLength { offset: usize, length: i32 },
    #[error("count {count} at byte {offset} is more than the {available} bytes left can hold")]
    CountTooLarge { offset: usize, count: i32, available: usize },
    #[error("the string at byte {offset} is not UTF-8")]
    InvalidUtf8 { offset: usize },
    #[error("unexpected null {what} at byte {offset}")]
    Null { offset: usize, what: &'static str },
    #[error("cannot tell where {kind} at byte {offset} ends")]
    UnknownExtent { offset: usize, kind: ObjectKind },
    #[error("the Compact value at byte {offset} has schema {schema_id}, which is not known here")]
    UnknownSchema { offset: usize, schema_id: i64 },
    #[error("Compact schema {schema_id} has a field {field:?} of kind {kind}, which has no layout")]
    InvalidFieldKind { schema_id: i64, field: String, kind: i32 },
    #[error("the Portable value at byte {offset} claims to end at byte {end}")]
    InvalidPortableEnd { offset: usize, end: i32 },
    #[error("values nested more than {MAX_DEPTH} deep at byte {offset}")]
    TooDeep { offset: usize },
    #[error("{count} bytes left over after byte {offset}")]
    TrailingBytes { offset: usize, count: usize },
}

/// A bounds-checked big-endian cursor over one blob.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, position: 0 }
    }

    pub(crate) fn position(&self) -> usize {
        self.position
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    /// The bytes of `range`, which the caller has read past.
    pub(crate) fn slice(&self, range: Range<usize>) -> &'a [u8] {
        &self.bytes[range]
    }

    pub(crate) fn take(&mut self, count: usize) -> Result<&'a [u8], WireError> {
        let available = self.remaining();
        if count > available {
            return Err(WireError::Truncated { offset: self.position, needed: count, available });
        }
        let taken = &self.bytes[self.position..self.position + count];
        self.position += count;
        Ok(taken)
    }

    pub(crate) fn skip(&mut self, count: usize) -> Result<(), WireError> {
        self.take(count).map(|_| ())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut array = [0u8; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    pub(crate) fn read_u8(&mut self) -> Result<u8, WireError> {
        Ok(self.array::<1>()?[0])
    }

    /// `readBoolean`: any byte but 0 is true.
    pub(crate) fn read_bool(&mut self) -> Result<bool, WireError> {
        Ok(self.read_u8()? != 0)
    }

    pub(crate) fn read_i32(&mut self) -> Result<i32, WireError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub(crate) fn read_i64(&mut self) -> Result<i64, WireError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    pub(crate) fn read_f64(&mut self) -> Result<f64, WireError> {
        Ok(f64::from_be_bytes(self.array()?))
    }

    /// A count of elements each at least `minimum_size` bytes long (`minimum_size` ≥ 1): never
    /// negative, never more than the remaining bytes can hold.
    pub(crate) fn read_count(&mut self, minimum_size: usize) -> Result<usize, WireError> {
        debug_assert!(minimum_size >= 1);
        let offset = self.position;
        let count = self.read_i32()?;
        self.check_count(offset, count, minimum_size)
    }

    /// `count` (read at `offset`) as a length the remaining bytes can hold.
    fn check_count(&self, offset: usize, count: i32, minimum_size: usize) -> Result<usize, WireError> {
        let Ok(wanted) = usize::try_from(count) else {
            return Err(WireError::InvalidLength { offset, length: count });
        };
        let available = self.remaining();
        if wanted > available / minimum_size {
            return Err(WireError::CountTooLarge { offset, count, available });
        }
        Ok(wanted)
    }

    /// `readString`: a byte length (-1 for null) and that many bytes of UTF-8.
    pub(crate) fn read_string(&mut self) -> Result<Option<String>, WireError> {
        let offset = self.position;
        let length = self.read_i32()?;
        if length == -1 {
            return Ok(None);
        }
        let Ok(length) = usize::try_from(length) else {
            return Err(WireError::InvalidLength { offset, length });
        };
        let bytes = self.take(length)?;
        match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Some(text.to_owned())),
            Err(_) => Err(WireError::InvalidUtf8 { offset }),
        }
    }

    /// A string that must not be null; `what` names it in the error.
    pub(crate) fn read_required_string(&mut self, what: &'static str) -> Result<String, WireError> {
        let offset = self.position;
        self.read_string()?.ok_or(WireError::Null { offset, what })
    }

    /// Fails unless the blob has been read to its end.
    pub(crate) fn finish(&self) -> Result<(), WireError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(WireError::TrailingBytes { offset: self.position, count }),
        }
    }
}

/// A `Data` blob's header: the partition hash (0 when the client set none) and the type id of
/// the serializer that wrote the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DataHeader {
    pub(crate) partition_hash: i32,
    pub(crate) type_id: i32,
}

/// Reads a blob's header, leaving the reader at the payload.
pub(crate) fn read_data_header(reader: &mut Reader<'_>) -> Result<DataHeader, WireError> {
    if reader.remaining() < DATA_HEADER_SIZE {
        return Err(WireError::ShortData { length: reader.remaining() });
    }
    let partition_hash = reader.read_i32()?;
    let type_id = reader.read_i32()?;
    Ok(DataHeader { partition_hash, type_id })
}

/// Header flag: the object is identified by factory and class ids (else by class name).
const IDENTIFIED_FLAG: u8 = 1;
/// Header flag: a major and a minor version byte follow the ids. Hazelcast 5.x never writes it
/// but still reads it.
const VERSIONED_FLAG: u8 = 1 << 1;

/// A `DataSerializable` header (after serializer type id -2), with the version bytes when the
/// writer flagged them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SerializableHeader {
    Identified { factory_id: i32, class_id: i32, version: Option<(u8, u8)> },
    Named { class_name: String, version: Option<(u8, u8)> },
}

pub(crate) fn read_serializable_header(reader: &mut Reader<'_>) -> Result<SerializableHeader, WireError> {
    let flags = reader.read_u8()?;
    if flags & IDENTIFIED_FLAG != 0 {
        let factory_id = reader.read_i32()?;
        let class_id = reader.read_i32()?;
        let version = read_version(reader, flags)?;
        Ok(SerializableHeader::Identified { factory_id, class_id, version })
    } else {
        let class_name = reader.read_required_string("DataSerializable class name")?;
        let version = read_version(reader, flags)?;
        Ok(SerializableHeader::Named { class_name, version })
    }
}

fn read_version(reader: &mut Reader<'_>, flags: u8) -> Result<Option<(u8, u8)>, WireError> {
    if flags & VERSIONED_FLAG == 0 {
        return Ok(None);
    }
    Ok(Some((reader.read_u8()?, reader.read_u8()?)))
}

impl SerializableHeader {
    pub(crate) fn kind(&self) -> ObjectKind {
        match self {
            SerializableHeader::Identified { factory_id, class_id, .. } => {
                ObjectKind::IdentifiedDataSerializable { factory_id: *factory_id, class_id: *class_id }
            }
            SerializableHeader::Named { class_name, .. } => {
                ObjectKind::DataSerializable { class_name: class_name.clone() }
            }
        }
    }
}

/// Names the object whose serializer `type_id` the reader has just read, reading no further
/// than its header (and leaving the reader somewhere inside it).
pub(crate) fn describe(reader: &mut Reader<'_>, type_id: i32) -> ObjectKind {
    let described = match type_id {
        type_id::NULL => Some(ObjectKind::Null),
        type_id::DATA_SERIALIZABLE => read_serializable_header(reader).ok().map(|header| header.kind()),
        type_id::PORTABLE => match (reader.read_i32(), reader.read_i32()) {
            (Ok(factory_id), Ok(class_id)) => Some(ObjectKind::Portable { factory_id, class_id }),
            _ => None,
        },
        type_id::COMPACT => reader.read_i64().ok().map(|schema_id| ObjectKind::Compact { schema_id }),
        type_id::JAVA_SERIALIZABLE => Some(ObjectKind::JavaSerializable { class_name: java_class_name(reader) }),
        type_id::JAVA_EXTERNALIZABLE => {
            reader.read_string().ok().flatten().map(|class_name| ObjectKind::JavaExternalizable { class_name })
        }
        _ => None,
    };
    described.unwrap_or(if type_id > 0 { ObjectKind::Custom { type_id } } else { ObjectKind::BuiltIn { type_id } })
}

/// The class of a Java serialization stream's first object, when the stream starts with one
/// (magic, version, `TC_OBJECT`, `TC_CLASSDESC`, then the class name in modified UTF-8).
fn java_class_name(reader: &mut Reader<'_>) -> Option<String> {
    const PREFIX: [u8; 6] = [0xac, 0xed, 0x00, 0x05, 0x73, 0x72];
    if reader.take(PREFIX.len()).ok()? != PREFIX {
        return None;
    }
    let length = u16::from_be_bytes(reader.take(2).ok()?.try_into().ok()?);
    let name = reader.take(usize::from(length)).ok()?;
    std::str::from_utf8(name).ok().map(str::to_owned)
}

/// Reads past one object as `writeObject` wrote it (type id, then payload) and returns the
/// byte range it took. `depth` is how deeply the object is nested already.
pub(crate) fn read_object_extent(
    reader: &mut Reader<'_>,
    schemas: &dyn SchemaSource,
    depth: usize,
) -> Result<Range<usize>, WireError> {
    let start = reader.position();
    skip_object(reader, schemas, depth)?;
    Ok(start..reader.position())
}

fn skip_object(reader: &mut Reader<'_>, schemas: &dyn SchemaSource, depth: usize) -> Result<(), WireError> {
    use type_id::*;
    let start = reader.position();
    if depth >= MAX_DEPTH {
        return Err(WireError::TooDeep { offset: start });
    }
    let type_id = reader.read_i32()?;
    match type_id {
        NULL => Ok(()),
        BYTE | BOOLEAN => reader.skip(1),
        CHAR | SHORT => reader.skip(2),
        INTEGER | FLOAT => reader.skip(4),
        LONG | DOUBLE | DATE => reader.skip(8),
        UUID => reader.skip(16),
        LOCAL_DATE => reader.skip(6),
        LOCAL_TIME => reader.skip(7),
        LOCAL_DATE_TIME => reader.skip(13),
        OFFSET_DATE_TIME => reader.skip(17),
        STRING | CLASS | JSON => reader.read_string().map(|_| ()),
        BYTE_ARRAY | BOOLEAN_ARRAY | BIG_INTEGER => skip_array(reader, 1),
        CHAR_ARRAY | SHORT_ARRAY => skip_array(reader, 2),
        INTEGER_ARRAY | FLOAT_ARRAY => skip_array(reader, 4),
        LONG_ARRAY | DOUBLE_ARRAY => skip_array(reader, 8),
        BIG_DECIMAL => skip_array(reader, 1).and_then(|()| reader.skip(4)),
        STRING_ARRAY => skip_string_array(reader),
        _ => skip_composite(reader, schemas, depth, start, type_id),
    }
}

/// Objects that hold other objects, or whose length the header gives.
fn skip_composite(
    reader: &mut Reader<'_>,
    schemas: &dyn SchemaSource,
    depth: usize,
    start: usize,
    type_id: i32,
) -> Result<(), WireError> {
    use type_id::*;
    let inner = depth + 1;
    match type_id {
        SIMPLE_ENTRY | SIMPLE_IMMUTABLE_ENTRY => skip_objects(reader, schemas, inner, 2),
        OBJECT_ARRAY
        | ARRAY_LIST
        | LINKED_LIST
        | COPY_ON_WRITE_ARRAY_LIST
        | HASH_SET
        | LINKED_HASH_SET
        | COPY_ON_WRITE_ARRAY_SET
        | ARRAY_DEQUE
        | LINKED_BLOCKING_QUEUE
        | ARRAY_BLOCKING_QUEUE
        | DELAY_QUEUE
        | SYNCHRONOUS_QUEUE
        | LINKED_TRANSFER_QUEUE => skip_collection(reader, schemas, inner, 1),
        TREE_SET | CONCURRENT_SKIP_LIST_SET | PRIORITY_BLOCKING_QUEUE | PRIORITY_QUEUE => {
            skip_object(reader, schemas, inner)?; // the comparator
            skip_collection(reader, schemas, inner, 1)
        }
        HASH_MAP | CONCURRENT_HASH_MAP | LINKED_HASH_MAP => skip_collection(reader, schemas, inner, 2),
        TREE_MAP | CONCURRENT_SKIP_LIST_MAP => {
            skip_object(reader, schemas, inner)?; // the comparator
            skip_collection(reader, schemas, inner, 2)
        }
        OPTIONAL => match reader.read_bool()? {
            true => skip_object(reader, schemas, inner),
            false => Ok(()),
        },
        PORTABLE => skip_portable(reader, start),
        COMPACT => skip_compact(reader, schemas, start),
        _ => {
            let kind = describe(&mut reader.clone(), type_id);
            Err(WireError::UnknownExtent { offset: start, kind })
        }
    }
}

fn skip_array(reader: &mut Reader<'_>, element_size: usize) -> Result<(), WireError> {
    let count = read_array_length(reader, element_size)?;
    reader.skip(count * element_size)
}

/// An array's length: -1 (null) reads as empty.
fn read_array_length(reader: &mut Reader<'_>, element_size: usize) -> Result<usize, WireError> {
    let offset = reader.position();
    match reader.read_i32()? {
        -1 => Ok(0),
        count => reader.check_count(offset, count, element_size),
    }
}

fn skip_string_array(reader: &mut Reader<'_>) -> Result<(), WireError> {
    let count = read_array_length(reader, 4)?;
    for _ in 0..count {
        reader.read_string()?;
    }
    Ok(())
}

fn skip_objects(
    reader: &mut Reader<'_>,
    schemas: &dyn SchemaSource,
    depth: usize,
    count: usize,
) -> Result<(), WireError> {
    for _ in 0..count {
        skip_object(reader, schemas, depth)?;
    }
    Ok(())
}

/// A count, then `per_element` objects for each (1 for a collection, 2 for a map).
fn skip_collection(
    reader: &mut Reader<'_>,
    schemas: &dyn SchemaSource,
    depth: usize,
    per_element: usize,
) -> Result<(), WireError> {
    let count = read_array_length(reader, 4 * per_element)?;
    skip_objects(reader, schemas, depth, count * per_element)
}

/// A Portable record: factory id, class id, class version, then the record, whose first `i32`
/// is the absolute position where it ends.
fn skip_portable(reader: &mut Reader<'_>, start: usize) -> Result<(), WireError> {
    reader.skip(12)?;
    let begin = reader.position();
    let end = reader.read_i32()?;
    // The record holds at least its end position and its field count.
    let valid = usize::try_from(end).ok().filter(|end| *end >= begin + 8 && *end <= reader.bytes.len());
    let Some(end) = valid else {
        return Err(WireError::InvalidPortableEnd { offset: start, end });
    };
    reader.position = end;
    Ok(())
}

/// A Compact record: its schema id, then fixed-size fields and, when the schema has
/// variable-size fields, a data length before them and the fields' offsets after them.
fn skip_compact(reader: &mut Reader<'_>, schemas: &dyn SchemaSource, start: usize) -> Result<(), WireError> {
    let schema_id = reader.read_i64()?;
    let Some(schema) = schemas.schema(schema_id) else {
        return Err(WireError::UnknownSchema { offset: start, schema_id });
    };
    let layout = compact_layout(&schema)?;
    if layout.variable_count == 0 {
        return reader.skip(layout.fixed_length);
    }
    let offset = reader.position();
    let data_length = reader.read_i32()?;
    let Some(length) = usize::try_from(data_length).ok().filter(|length| *length >= layout.fixed_length) else {
        return Err(WireError::InvalidLength { offset, length: data_length });
    };
    let offset_size = match length {
        0..=254 => 1,
        255..=65534 => 2,
        _ => 4,
    };
    reader.skip(length)?;
    reader.skip(layout.variable_count * offset_size)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CompactLayout {
    /// Bytes of the fixed-size fields, booleans packed eight to a byte.
    fixed_length: usize,
    variable_count: usize,
}

/// A schema's record layout (Hazelcast's `Schema` init: fixed-size fields, then booleans as
/// bits, then the offsets of the variable-size ones).
fn compact_layout(schema: &Schema) -> Result<CompactLayout, WireError> {
    let mut fixed_length = 0;
    let mut booleans: usize = 0;
    let mut variable_count = 0;
    for field in &schema.fields {
        match field.kind {
            1 => booleans += 1,
            3 => fixed_length += 1,
            7 => fixed_length += 2,
            9 | 13 => fixed_length += 4,
            11 | 15 => fixed_length += 8,
            2 | 4 | 6 | 8 | 10 | 12 | 14 | 16..=46 => variable_count += 1,
            kind => {
                return Err(WireError::InvalidFieldKind { schema_id: schema.id(), field: field.name.clone(), kind });
            }
        }
    }
    Ok(CompactLayout { fixed_length: fixed_length + booleans.div_ceil(8), variable_count })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::FieldDescriptor;

    fn extent(bytes: &[u8]) -> Result<Range<usize>, WireError> {
        read_object_extent(&mut Reader::new(bytes), &NoSchemas, 0)
    }

    fn object(type_id: i32, payload: &[u8]) -> Vec<u8> {
        let mut bytes = type_id.to_be_bytes().to_vec();
        bytes.extend_from_slice(payload);
        bytes
    }

    #[test]
    fn fixed_size_values_have_their_size() {
        for (type_id, size) in [(-3, 1), (-4, 1), (-5, 2), (-6, 2), (-7, 4), (-8, 8), (-9, 4), (-10, 8), (-21, 16)] {
            let mut bytes = object(type_id, &vec![0; size]);
            bytes.extend_from_slice(&[9, 9]);
            assert_eq!(extent(&bytes), Ok(0..4 + size), "type {type_id}");
            assert!(matches!(extent(&bytes[..3 + size]), Err(WireError::Truncated { .. })), "type {type_id}");
        }
        assert_eq!(extent(&object(0, &[1, 2])), Ok(0..4));
    }

    #[test]
    fn strings_and_collections_are_measured_by_their_counts() {
        let string = object(-11, &[0, 0, 0, 2, b'h', b'i']);
        assert_eq!(extent(&string), Ok(0..10));
        let mut list = object(-29, &2i32.to_be_bytes());
        list.extend_from_slice(&string);
        list.extend_from_slice(&object(-7, &[0, 0, 0, 1]));
        assert_eq!(extent(&list), Ok(0..list.len()));
        let huge = object(-29, &i32::MAX.to_be_bytes());
        assert!(matches!(extent(&huge), Err(WireError::CountTooLarge { .. })));
        let negative = object(-12, &(-5i32).to_be_bytes());
        assert!(matches!(extent(&negative), Err(WireError::InvalidLength { .. })));
    }

    #[test]
    fn unknown_serializers_are_named() {
        let custom = object(7, &[1, 2, 3]);
        assert_eq!(
            extent(&custom),
            Err(WireError::UnknownExtent { offset: 0, kind: ObjectKind::Custom { type_id: 7 } })
        );
        let mut ids = object(-2, &[1]);
        ids.extend_from_slice(&5i32.to_be_bytes());
        ids.extend_from_slice(&6i32.to_be_bytes());
        let kind = ObjectKind::IdentifiedDataSerializable { factory_id: 5, class_id: 6 };
        assert_eq!(extent(&ids), Err(WireError::UnknownExtent { offset: 0, kind }));
    }

    #[test]
    fn nesting_is_bounded() {
        let mut bytes = Vec::new();
        for _ in 0..MAX_DEPTH + 1 {
            bytes.extend_from_slice(&object(-29, &1i32.to_be_bytes()));
        }
        bytes.extend_from_slice(&object(0, &[]));
        assert!(matches!(extent(&bytes), Err(WireError::TooDeep { .. })));
    }

    #[test]
    fn a_portable_ends_where_it_says() {
        let mut bytes = object(-1, &[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0]);
        bytes.extend_from_slice(&24i32.to_be_bytes()); // end: 16 + 8
        bytes.extend_from_slice(&0i32.to_be_bytes()); // no fields
        bytes.push(0xff);
        assert_eq!(extent(&bytes), Ok(0..24));
        bytes[19] = 200;
        assert!(matches!(extent(&bytes), Err(WireError::InvalidPortableEnd { .. })));
    }

    #[test]
    fn a_compact_record_needs_its_schema() {
        let fields = vec![
            FieldDescriptor { name: "age".into(), kind: 9 },
            FieldDescriptor { name: "active".into(), kind: 1 },
            FieldDescriptor { name: "name".into(), kind: 17 },
        ];
        let schema = Schema::new("person", fields);
        let mut bytes = object(-55, &schema.id().to_be_bytes());
        bytes.extend_from_slice(&12i32.to_be_bytes()); // data: age, active, then "name"
        bytes.extend_from_slice(&[0, 0, 0, 30, 1, 0, 0, 0, 2, b'h', b'i', 0]);
        bytes.push(5); // the offset of "name", one byte
        assert_eq!(extent(&bytes), Err(WireError::UnknownSchema { offset: 0, schema_id: schema.id() }));
        let schemas = std::collections::HashMap::from([(schema.id(), schema)]);
        assert_eq!(read_object_extent(&mut Reader::new(&bytes), &schemas, 0), Ok(0..bytes.len()));
    }
}
