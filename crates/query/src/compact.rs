//! Compact records read field by field, with the schemas the member holds.
//!
//! A Compact value is its schema id (8 bytes) then its record. When the schema has
//! variable-size fields the record starts with the length of its data section; the data
//! section holds the fixed-size fields (laid out as [`Schema::place`] says) then the
//! variable-size values; after it comes the offset table, one entry per variable-size field
//! giving its position from the start of the data section, 1, 2 or 4 bytes wide as the data
//! section is under 255 bytes, under 65,535, or larger (the all-ones entry meaning null).
//! Arrays of variable-size items (strings, decimals, nullable numbers, nested records, ...)
//! repeat the scheme inside the value: data length, item count, items, offset table.
//!
//! Invariants: a record never reads outside its own bytes (a nested record or an array item
//! never past its parent's data section); a field is read without decoding any other; a
//! missing schema is [`ReadError::SchemaNotFound`] with its id, so the member can fetch it and
//! try again.

use crate::error::ReadError;
use crate::input::{malformed, Input};
use crate::schema::{Place, Schema};
use crate::value::{Object, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Where the member's Compact schemas come from.
pub trait SchemaSource {
    fn schema(&self, id: i64) -> Option<Arc<Schema>>;
}

impl SchemaSource for HashMap<i64, Arc<Schema>> {
    fn schema(&self, id: i64) -> Option<Arc<Schema>> {
        self.get(&id).cloned()
    }
}

impl SchemaSource for HashMap<i64, Schema> {
    fn schema(&self, id: i64) -> Option<Arc<Schema>> {
        self.get(&id).cloned().map(Arc::new)
    }
}

/// Hazelcast's `FieldKind` ordinals.
pub mod kind {
    pub const BOOLEAN: i32 = 1;
    pub const ARRAY_OF_BOOLEAN: i32 = 2;
    pub const INT8: i32 = 3;
    pub const INT16: i32 = 7;
    pub const INT32: i32 = 9;
    pub const INT64: i32 = 11;
    pub const FLOAT32: i32 = 13;
    pub const FLOAT64: i32 = 15;
    pub const STRING: i32 = 17;
    pub const DECIMAL: i32 = 19;
    pub const TIME: i32 = 21;
    pub const DATE: i32 = 23;
    pub const TIMESTAMP: i32 = 25;
    pub const TIMESTAMP_WITH_TIMEZONE: i32 = 27;
    pub const COMPACT: i32 = 29;
    pub const ARRAY_OF_COMPACT: i32 = 30;
    pub const NULLABLE_BOOLEAN: i32 = 33;
    pub const NULLABLE_FLOAT64: i32 = 45;
}

/// Compact's type id in a `Data`.
pub const TYPE_ID: i32 = -55;

/// How the items of an array field are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Items {
    /// Booleans packed eight to a byte.
    Bits,
    /// Fixed-size items of this (scalar) kind, one after the other.
    Fixed { kind: i32, size: usize },
    /// Items of this (scalar) kind through an offset table; null items allowed.
    Variable { kind: i32 },
}

/// The items of an array kind; `None` for scalar kinds.
fn items_of(array_kind: i32) -> Option<Items> {
    let fixed = |kind, size| Some(Items::Fixed { kind, size });
    match array_kind {
        kind::ARRAY_OF_BOOLEAN => Some(Items::Bits),
        4 => fixed(kind::INT8, 1),
        8 => fixed(kind::INT16, 2),
        10 => fixed(kind::INT32, 4),
        12 => fixed(kind::INT64, 8),
        14 => fixed(kind::FLOAT32, 4),
        16 => fixed(kind::FLOAT64, 8),
        18 | 20 | 22 | 24 | 26 | 28 | kind::ARRAY_OF_COMPACT => Some(Items::Variable { kind: array_kind - 1 }),
        34..=46 if array_kind % 2 == 0 => Some(Items::Variable { kind: array_kind - 1 }),
        _ => None,
    }
}

/// The position of entry `index` of an offset table `width` bytes wide starting at `table`,
/// relative to the data it indexes; `None` for null.
fn offset_entry(input: &mut Input<'_>, table: usize, width: usize, index: usize) -> Result<Option<usize>, ReadError> {
    input.seek(table + index * width);
    let position = match width {
        1 => Some(input.u8()?).filter(|entry| *entry != u8::MAX).map(usize::from),
        2 => Some(input.u16()?).filter(|entry| *entry != u16::MAX).map(usize::from),
        _ => match input.i32()? {
            -1 => None,
            entry if entry < 0 => return Err(malformed(format!("negative offset {entry}"))),
            entry => Some(entry as usize),
        },
    };
    Ok(position)
}

/// The width of offset-table entries for a data section of `data_length` bytes.
fn offset_width(data_length: usize) -> usize {
    if data_length < 255 {
        1
    } else if data_length < 65_535 {
        2
    } else {
        4
    }
}

/// The value of a fixed-size field of `kind` (BOOLEAN's `Place::Bit` excluded) at `offset`
/// in the data section of `record` (schema id then record, of a schema with these fixed
/// length and variable-size field count), read straight from its bytes: a scan that resolved
/// the field's place once reads it without parsing the record. None when the record's lengths
/// do not check out as [`CompactRecord::parse_with`] checks them (its fixed section and
/// offset table within its bytes) or `kind` is not such a kind (then read it through
/// [`CompactRecord`], which says what is wrong).
pub fn fixed_scalar(
    record: &[u8],
    kind: i32,
    offset: u32,
    (fixed_length, variable_count): (u32, u32),
) -> Option<Value> {
    let fixed_length = fixed_length as usize;
    let data_start = if variable_count == 0 {
        8
    } else {
        let data_length = usize::try_from(i32::from_be_bytes(record.get(8..12)?.try_into().ok()?)).ok()?;
        let table = (variable_count as usize).checked_mul(offset_width(data_length))?;
        if data_length < fixed_length || 12 + data_length + table > record.len() {
            return None;
        }
        12
    };
    if data_start + fixed_length > record.len() {
        return None;
    }
    let at = data_start + offset as usize;
    let bytes = |count: usize| record.get(at..at + count);
    Some(match kind {
        kind::INT8 => Value::Byte(i8::from_be_bytes(bytes(1)?.try_into().ok()?)),
        kind::INT16 => Value::Short(i16::from_be_bytes(bytes(2)?.try_into().ok()?)),
        kind::INT32 => Value::Int(i32::from_be_bytes(bytes(4)?.try_into().ok()?)),
        kind::INT64 => Value::Long(i64::from_be_bytes(bytes(8)?.try_into().ok()?)),
        kind::FLOAT32 => Value::Float(f32::from_be_bytes(bytes(4)?.try_into().ok()?)),
        kind::FLOAT64 => Value::Double(f64::from_be_bytes(bytes(8)?.try_into().ok()?)),
        _ => return None,
    })
}

/// Where a fixed-size number field (not a boolean: those are bits) sits in the records of one
/// schema: worked out once, so that a scan reads the field of each record straight from its
/// bytes, without looking the schema up or parsing the record ([`DirectRead`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedField {
    schema_id: i64,
    kind: i32,
    offset: u32,
    fixed_length: u32,
    variable_count: u32,
}

impl FixedField {
    /// Field `name` of `schema`, when it is such a field (only those have a `Place::Fixed`).
    pub fn resolve(schema: &Schema, name: &str) -> Option<FixedField> {
        let (field, place) = schema.place(name).ok()??;
        let Place::Fixed { offset } = place else { return None };
        Some(FixedField {
            schema_id: schema.id(),
            kind: field.kind,
            offset,
            fixed_length: schema.fixed_length(),
            variable_count: schema.variable_count(),
        })
    }

    /// The field's value in `record` (schema id then record) when the record is of this
    /// field's schema and its lengths check out ([`fixed_scalar`]); None otherwise (read it
    /// through [`CompactRecord`], which says what is wrong).
    pub fn read(&self, record: &[u8]) -> Option<Value> {
        if i64::from_be_bytes(record.get(..8)?.try_into().ok()?) != self.schema_id {
            return None;
        }
        fixed_scalar(record, self.kind, self.offset, (self.fixed_length, self.variable_count))
    }
}

/// How a scan reads one top-level field of Compact records: straight from the bytes
/// ([`FixedField`]) when the first record met names a fixed-size number by it, for the
/// records of that schema; None from [`DirectRead::read`] otherwise (read the general way).
/// Each scan keeps its own (a clone starts from what it was resolved to).
#[derive(Debug, Clone, Default)]
pub struct DirectRead {
    field: std::sync::OnceLock<Option<FixedField>>,
}

/// A cache, not a value: any two are equal (what holds one compares by its other fields).
impl PartialEq for DirectRead {
    fn eq(&self, _: &DirectRead) -> bool {
        true
    }
}

impl DirectRead {
    /// The field of `blob` (a whole `Data` blob) that `name` gives, when `blob` is a Compact
    /// record of the schema this read resolved to; `name` is asked once, at the first Compact
    /// blob whose schema is known (None: the path names no top-level field, never read
    /// directly), and the field resolved then with `schemas`.
    pub fn read<'n>(
        &self,
        blob: &[u8],
        name: impl FnOnce() -> Option<&'n str>,
        schemas: &dyn SchemaSource,
    ) -> Option<Value> {
        if blob.get(4..8)? != TYPE_ID.to_be_bytes() {
            return None;
        }
        let record = blob.get(8..)?;
        let field = match self.field.get() {
            Some(field) => field.as_ref()?,
            None => {
                let schema = schemas.schema(i64::from_be_bytes(record.get(..8)?.try_into().ok()?))?;
                self.field.get_or_init(|| name().and_then(|name| FixedField::resolve(&schema, name))).as_ref()?
            }
        };
        field.read(record)
    }
}

/// A section with an offset table: a record's data section or an array's items.
#[derive(Debug, Clone, Copy)]
struct Table {
    /// Where positions are counted from.
    data_start: usize,
    /// Where the offset table starts (the data section's end).
    table_start: usize,
    width: usize,
    count: usize,
}

impl Table {
    /// Reads a data length at the input's position; the section follows it.
    fn read(input: &mut Input<'_>, count_first: bool) -> Result<(Table, usize), ReadError> {
        let at = input.position();
        let data_length = input.i32()?;
        let count = if count_first { input.i32()? } else { 0 };
        if data_length < 0 || count < 0 {
            return Err(malformed(format!("negative length or count at offset {at}")));
        }
        let data_start = input.position();
        let data_length = data_length as usize;
        let table = Table {
            data_start,
            table_start: data_start + data_length,
            width: offset_width(data_length),
            count: count as usize,
        };
        let end = (count as usize).checked_mul(table.width).and_then(|size| size.checked_add(table.table_start));
        match end {
            Some(end) if end <= input.buffer().len() => Ok((table, end)),
            _ => Err(ReadError::Truncated { offset: data_start, needed: data_length, available: input.remaining() }),
        }
    }

    /// The absolute position of entry `index`, `None` when null.
    fn position(&self, input: &mut Input<'_>, index: usize) -> Result<Option<usize>, ReadError> {
        let Some(offset) = offset_entry(input, self.table_start, self.width, index)? else {
            return Ok(None);
        };
        let position = self.data_start + offset;
        if position >= self.table_start {
            return Err(malformed(format!("offset {offset} points past its data section")));
        }
        Ok(Some(position))
    }
}

/// A Compact record in a buffer, read one field at a time.
#[derive(Clone)]
pub struct CompactRecord<'a> {
    schema: Arc<Schema>,
    schemas: &'a dyn SchemaSource,
    /// From the schema id to the end of the region the record may use.
    bytes: &'a [u8],
    table: Table,
    /// The record's length from its schema id.
    length: usize,
}

impl fmt::Debug for CompactRecord<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.debug_struct("CompactRecord").field("schema", &self.schema.id()).field("length", &self.length).finish()
    }
}

impl<'a> CompactRecord<'a> {
    /// The record whose schema id starts `bytes`; it may use all of `bytes` but need not.
    pub fn parse(bytes: &'a [u8], schemas: &'a dyn SchemaSource) -> Result<CompactRecord<'a>, ReadError> {
        let schema_id = Input::new(bytes, 0).i64()?;
        let schema = schemas.schema(schema_id).ok_or(ReadError::SchemaNotFound { schema_id })?;
        CompactRecord::parse_with(bytes, schema, schemas)
    }

    /// [`CompactRecord::parse`] with the record's schema already at hand (a scan that met
    /// the schema id before); `schema` must be the one of the id that starts `bytes`.
    pub fn parse_with(
        bytes: &'a [u8],
        schema: Arc<Schema>,
        schemas: &'a dyn SchemaSource,
    ) -> Result<CompactRecord<'a>, ReadError> {
        let mut input = Input::new(bytes, 0);
        let schema_id = input.i64()?;
        debug_assert_eq!(schema_id, schema.id());
        let fixed_length = schema.fixed_length() as usize;
        let (table, length) = if schema.variable_count() == 0 {
            input.bytes(fixed_length)?;
            (Table { data_start: 8, table_start: 8 + fixed_length, width: 0, count: 0 }, 8 + fixed_length)
        } else {
            let (mut table, end) = Table::read(&mut input, false)?;
            table.count = schema.variable_count() as usize;
            let end = end + table.count * table.width;
            if end > bytes.len() || fixed_length > table.table_start - table.data_start {
                return Err(malformed(format!("record of schema {schema_id} is larger than its bytes")));
            }
            (table, end)
        };
        Ok(CompactRecord { schema, schemas, bytes, table, length })
    }

    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// The record's serialized form: schema id then record.
    pub fn bytes(&self) -> &'a [u8] {
        &self.bytes[..self.length]
    }

    /// The record as an opaque value (compared by its bytes).
    pub fn to_object(&self) -> Object {
        Object { type_id: TYPE_ID, bytes: self.bytes().to_vec() }
    }

    /// Input over the data section only.
    fn input(&self) -> Input<'a> {
        Input::new(&self.bytes[..self.table.table_start], 0)
    }

    fn place(&self, name: &str) -> Result<Option<(i32, Place)>, ReadError> {
        Ok(self.schema.place(name)?.map(|(field, place)| (field.kind, place)))
    }

    /// Where a variable-size field's value starts, `None` when null.
    fn variable_position(&self, index: u32) -> Result<Option<usize>, ReadError> {
        let mut input = Input::new(&self.bytes[..self.length], 0);
        self.table.position(&mut input, index as usize)
    }

    /// The field's value (`Value::Null` for a null); `None` when the schema has no such field.
    pub fn field(&self, name: &str) -> Result<Option<Value>, ReadError> {
        let Some((kind, place)) = self.place(name)? else {
            return Ok(None);
        };
        self.field_at(kind, place).map(Some)
    }

    /// The value of the field of `kind` at `place` (from [`Schema::place`] of this record's
    /// schema, looked up once for many records of it).
    pub fn field_at(&self, kind: i32, place: Place) -> Result<Value, ReadError> {
        let mut input = self.input();
        let value = match place {
            Place::Fixed { offset } => {
                input.seek(self.table.data_start + offset as usize);
                self.scalar(&mut input, kind)?
            }
            Place::Bit { offset, bit } => {
                input.seek(self.table.data_start + offset as usize);
                Value::Bool(input.u8()? >> bit & 1 == 1)
            }
            Place::Variable { index } => match self.variable_position(index)? {
                None => Value::Null,
                Some(position) => {
                    input.seek(position);
                    match items_of(kind) {
                        Some(items) => Value::Array(self.array(&mut input, items)?),
                        None => self.scalar(&mut input, kind)?,
                    }
                }
            },
        };
        Ok(value)
    }

    /// One value of a scalar kind at the input's position.
    fn scalar(&self, input: &mut Input<'a>, kind: i32) -> Result<Value, ReadError> {
        Ok(match kind {
            kind::BOOLEAN | kind::NULLABLE_BOOLEAN => Value::Bool(input.bool()?),
            kind::INT8 | 35 => Value::Byte(input.i8()?),
            kind::INT16 | 37 => Value::Short(input.i16()?),
            kind::INT32 | 39 => Value::Int(input.i32()?),
            kind::INT64 | 41 => Value::Long(input.i64()?),
            kind::FLOAT32 | 43 => Value::Float(input.f32()?),
            kind::FLOAT64 | kind::NULLABLE_FLOAT64 => Value::Double(input.f64()?),
            kind::STRING => input.string()?.map_or(Value::Null, Value::String),
            kind::DECIMAL => Value::BigDecimal(input.big_decimal()?),
            kind::TIME => Value::Time(input.time()?),
            kind::DATE => Value::Date(input.date(4)?),
            kind::TIMESTAMP => Value::Timestamp(input.timestamp(4)?),
            kind::TIMESTAMP_WITH_TIMEZONE => Value::TimestampWithTimezone(input.timestamp_with_timezone(4)?),
            kind::COMPACT => Value::Object(self.nested_at(input)?.to_object()),
            other => return Err(malformed(format!("field kind {other} is not a scalar Compact kind"))),
        })
    }

    /// The nested record at the input's position, within the input's bytes.
    fn nested_at(&self, input: &Input<'a>) -> Result<CompactRecord<'a>, ReadError> {
        let rest = input.buffer().get(input.position()..).ok_or_else(|| malformed("record past its parent's data"))?;
        CompactRecord::parse(rest, self.schemas)
    }

    /// All items of an array at the input's position.
    fn array(&self, input: &mut Input<'a>, items: Items) -> Result<Vec<Value>, ReadError> {
        let (count, table) = self.array_header(input, items)?;
        (0..count).map(|index| self.item_at(input, items, table, index)).collect()
    }

    /// An array's item count, and its offset table for variable-size items (the input is left
    /// at the first item for fixed-size ones).
    fn array_header(&self, input: &mut Input<'a>, items: Items) -> Result<(usize, Option<Table>), ReadError> {
        match items {
            Items::Bits => {
                let at = input.position();
                let count = input.length(0)?.ok_or_else(|| malformed(format!("null length at offset {at}")))?;
                input.bytes(count.div_ceil(8))?;
                input.seek(at + 4);
                Ok((count, None))
            }
            Items::Fixed { size, .. } => {
                let at = input.position();
                Ok((input.length(size)?.ok_or_else(|| malformed(format!("null length at offset {at}")))?, None))
            }
            Items::Variable { .. } => {
                let (table, _) = Table::read(input, true)?;
                Ok((table.count, Some(table)))
            }
        }
    }

    /// Item `index` (known to be below the count) of an array whose header was read.
    fn item_at(
        &self,
        input: &mut Input<'a>,
        items: Items,
        table: Option<Table>,
        index: usize,
    ) -> Result<Value, ReadError> {
        let mut reader = input.clone();
        match (items, table) {
            (Items::Bits, _) => {
                reader.seek(input.position() + index / 8);
                Ok(Value::Bool(reader.u8()? >> (index % 8) & 1 == 1))
            }
            (Items::Fixed { kind, size }, _) => {
                reader.seek(input.position() + index * size);
                self.scalar(&mut reader, kind)
            }
            (Items::Variable { kind }, Some(table)) => {
                let mut entries = Input::new(self.bytes, 0);
                match table.position(&mut entries, index)? {
                    None => Ok(Value::Null),
                    Some(position) => {
                        let mut item = Input::new(&input.buffer()[..table.table_start], position);
                        self.scalar(&mut item, kind)
                    }
                }
            }
            (Items::Variable { .. }, None) => Err(malformed("variable-size items without an offset table")),
        }
    }

    /// The array field's position and item layout; `None` when the array is null.
    fn array_field(&self, name: &str) -> Result<Option<(Input<'a>, Items)>, ReadError> {
        let Some((kind, place)) = self.place(name)? else {
            return Err(ReadError::Attribute(format!("no field {name} in {}", self.schema.type_name)));
        };
        let (Some(items), Place::Variable { index }) = (items_of(kind), place) else {
            return Err(ReadError::Attribute(format!("field {name} of kind {kind} is not an array")));
        };
        let mut input = self.input();
        Ok(self.variable_position(index)?.map(|position| {
            input.seek(position);
            (input, items)
        }))
    }

    /// Item `index` of an array field, `Value::Null` when the array or the item is null or the
    /// index is past its end.
    pub fn item(&self, name: &str, index: usize) -> Result<Value, ReadError> {
        let Some((mut input, items)) = self.array_field(name)? else {
            return Ok(Value::Null);
        };
        let (count, table) = self.array_header(&mut input, items)?;
        if index >= count {
            return Ok(Value::Null);
        }
        self.item_at(&mut input, items, table, index)
    }

    /// All items of an array field; `None` when the array is null.
    pub fn items(&self, name: &str) -> Result<Option<Vec<Value>>, ReadError> {
        let Some((mut input, items)) = self.array_field(name)? else {
            return Ok(None);
        };
        self.array(&mut input, items).map(Some)
    }

    /// The nested record in a `COMPACT` field; `None` when null.
    pub fn nested(&self, name: &str) -> Result<Option<CompactRecord<'a>>, ReadError> {
        match self.place(name)? {
            Some((kind::COMPACT, Place::Variable { index })) => {
                let mut input = self.input();
                let Some(position) = self.variable_position(index)? else {
                    return Ok(None);
                };
                input.seek(position);
                self.nested_at(&input).map(Some)
            }
            Some((kind, _)) => {
                Err(ReadError::Attribute(format!("field {name} of kind {kind} is not a Compact record")))
            }
            None => Err(ReadError::Attribute(format!("no field {name} in {}", self.schema.type_name))),
        }
    }

    /// The records of an `ARRAY_OF_COMPACT` field (`None` items for nulls); `None` when null.
    pub fn nested_items(&self, name: &str) -> Result<Option<Vec<Option<CompactRecord<'a>>>>, ReadError> {
        let Some((mut input, items)) = self.nested_array_field(name)? else {
            return Ok(None);
        };
        let (count, table) = self.array_header(&mut input, items)?;
        let table = table.ok_or_else(|| malformed("array of records without an offset table"))?;
        let records = (0..count).map(|index| self.nested_item_at(&input, table, index));
        records.collect::<Result<Vec<_>, _>>().map(Some)
    }

    /// Record `index` of an `ARRAY_OF_COMPACT` field; `None` when null or past the end.
    pub fn nested_item(&self, name: &str, index: usize) -> Result<Option<CompactRecord<'a>>, ReadError> {
        let Some((mut input, items)) = self.nested_array_field(name)? else {
            return Ok(None);
        };
        let (count, table) = self.array_header(&mut input, items)?;
        let table = table.ok_or_else(|| malformed("array of records without an offset table"))?;
        if index >= count {
            return Ok(None);
        }
        self.nested_item_at(&input, table, index)
    }

    fn nested_array_field(&self, name: &str) -> Result<Option<(Input<'a>, Items)>, ReadError> {
        match self.place(name)? {
            Some((kind::ARRAY_OF_COMPACT, _)) => self.array_field(name),
            Some((kind, _)) => {
                Err(ReadError::Attribute(format!("field {name} of kind {kind} is not an array of records")))
            }
            None => Err(ReadError::Attribute(format!("no field {name} in {}", self.schema.type_name))),
        }
    }

    fn nested_item_at(
        &self,
        input: &Input<'a>,
        table: Table,
        index: usize,
    ) -> Result<Option<CompactRecord<'a>>, ReadError> {
        let mut entries = Input::new(self.bytes, 0);
        let Some(position) = table.position(&mut entries, index)? else {
            return Ok(None);
        };
        CompactRecord::parse(&input.buffer()[position..table.table_start], self.schemas).map(Some)
    }
}
