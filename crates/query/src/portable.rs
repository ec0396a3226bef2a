//! Portable records read without the client's class definitions.
//!
//! A Hazelcast 5 member learns a Portable class definition from the data itself when it has
//! none registered (`PortableContext.readClassDefinition`): every field of a record is written
//! after its name and type, so the record describes itself. Clients never send class
//! definitions. This reader does the same, field by field: a record is its factory id, class id
//! and version, then the absolute position of its end, its field count and a table of absolute
//! positions (counted from the start of the enclosing `Data`), one per field, each pointing at
//! the field's name (a 2-byte length and ASCII), its type (one byte) and its value.
//!
//! Invariants: positions are checked to lie within the record before they are followed; a field
//! is read without decoding the others. A null nested record only says its factory and class,
//! which is all a path needs (it reads as null).

use crate::data::PORTABLE;
use crate::error::ReadError;
use crate::input::{malformed, Input};
use crate::record::Record;
use crate::value::{Object, Value};

/// Portable `FieldType` ids.
mod field_type {
    pub const PORTABLE: u8 = 0;
    pub const PORTABLE_ARRAY: u8 = 10;
}

/// A Portable record in a buffer.
#[derive(Debug, Clone)]
pub struct PortableRecord<'a> {
    buffer: &'a [u8],
    factory_id: i32,
    class_id: i32,
    /// Where the version is (the record proper follows it).
    start: usize,
    table: usize,
    count: usize,
    end: usize,
}

impl<'a> PortableRecord<'a> {
    /// The record whose factory id is at `at` in `buffer` (the whole enclosing `Data`: its
    /// positions are counted from the buffer's start).
    pub fn parse(buffer: &'a [u8], at: usize) -> Result<PortableRecord<'a>, ReadError> {
        let mut input = Input::new(buffer, at);
        let (factory_id, class_id) = (input.i32()?, input.i32()?);
        PortableRecord::at_version(buffer, input.position(), factory_id, class_id)
    }

    fn at_version(
        buffer: &'a [u8],
        start: usize,
        factory_id: i32,
        class_id: i32,
    ) -> Result<PortableRecord<'a>, ReadError> {
        let mut input = Input::new(buffer, start);
        let _version = input.i32()?;
        let end = input.i32()?;
        let count = input.length(4)?.ok_or_else(|| malformed(format!("Portable record at {start} without fields")))?;
        let table = input.position();
        let end = usize::try_from(end).ok().filter(|end| *end >= table + count * 4 && *end <= buffer.len());
        let end = end.ok_or_else(|| malformed(format!("Portable record at {start} ends outside its bytes")))?;
        Ok(PortableRecord { buffer, factory_id, class_id, start, table, count, end })
    }

    pub fn factory_id(&self) -> i32 {
        self.factory_id
    }

    pub fn class_id(&self) -> i32 {
        self.class_id
    }

    /// The record as an opaque value: factory id, class id, version and record.
    pub fn to_object(&self) -> Object {
        let mut bytes = Vec::with_capacity(8 + self.end - self.start);
        bytes.extend_from_slice(&self.factory_id.to_be_bytes());
        bytes.extend_from_slice(&self.class_id.to_be_bytes());
        bytes.extend_from_slice(&self.buffer[self.start..self.end]);
        Object { type_id: PORTABLE, bytes }
    }

    /// The names of the record's fields, in its table's order.
    pub fn field_names(&self) -> Result<Vec<String>, ReadError> {
        (0..self.count)
            .map(|index| self.entry(index).map(|(name, _, _)| String::from_utf8_lossy(name).into_owned()))
            .collect()
    }

    /// The record's fields (name and Portable field type), in its table's order: its class
    /// definition.
    pub fn fields(&self) -> Result<Vec<(String, u8)>, ReadError> {
        (0..self.count)
            .map(|index| self.entry(index).map(|(name, kind, _)| (String::from_utf8_lossy(name).into_owned(), kind)))
            .collect()
    }

    /// Entry `index` of the table: the field's name, type and value position.
    fn entry(&self, index: usize) -> Result<(&'a [u8], u8, usize), ReadError> {
        let mut input = Input::new(&self.buffer[..self.end], self.table + index * 4);
        let position = input.i32()?;
        let position = usize::try_from(position).ok().filter(|position| *position >= self.table + self.count * 4);
        input.seek(position.ok_or_else(|| malformed(format!("Portable field {index} outside its record")))?);
        let length = usize::from(input.u16()?);
        let name = input.bytes(length)?;
        let kind = input.u8()?;
        Ok((name, kind, input.position()))
    }

    /// The field's type and value position, `None` when the record has no such field.
    fn find(&self, name: &str) -> Result<Option<(u8, usize)>, ReadError> {
        for index in 0..self.count {
            let (field, kind, position) = self.entry(index)?;
            if field == name.as_bytes() {
                return Ok(Some((kind, position)));
            }
        }
        Ok(None)
    }

    fn input(&self, position: usize) -> Input<'a> {
        Input::new(&self.buffer[..self.end], position)
    }

    /// The field's value (`Value::Null` for nulls); `None` when there is no such field.
    pub fn field(&self, name: &str) -> Result<Option<Value>, ReadError> {
        let Some((kind, position)) = self.find(name)? else {
            return Ok(None);
        };
        let mut input = self.input(position);
        let value = match kind {
            field_type::PORTABLE => {
                self.nested_at(&mut input)?.map_or(Value::Null, |nested| Value::Object(nested.to_object()))
            }
            field_type::PORTABLE_ARRAY => match self.nested_array_at(&mut input)? {
                None => Value::Null,
                Some(records) => Value::Array(records.iter().map(|nested| Value::Object(nested.to_object())).collect()),
            },
            11..=19 => array(&mut input, kind - 10, None)?,
            21 | 23 | 25 | 27 | 29 => objects_array(&mut input, kind - 1)?,
            _ => scalar(&mut input, kind)?,
        };
        Ok(Some(value))
    }

    fn nested_at(&self, input: &mut Input<'a>) -> Result<Option<PortableRecord<'a>>, ReadError> {
        let null = input.bool()?;
        let (factory_id, class_id) = (input.i32()?, input.i32()?);
        if null {
            return Ok(None);
        }
        PortableRecord::at_version(&self.buffer[..self.end], input.position(), factory_id, class_id).map(Some)
    }

    fn nested_array_at(&self, input: &mut Input<'a>) -> Result<Option<Vec<PortableRecord<'a>>>, ReadError> {
        let Some(length) = input.length(4)? else {
            return Ok(None);
        };
        let (factory_id, class_id) = (input.i32()?, input.i32()?);
        let mut records = Vec::with_capacity(length.min(input.remaining() / 4));
        for _ in 0..length {
            let position = input.i32()?;
            let position = usize::try_from(position).map_err(|_| malformed("negative Portable position"))?;
            records.push(PortableRecord::at_version(&self.buffer[..self.end], position, factory_id, class_id)?);
        }
        Ok(Some(records))
    }

    fn typed(&self, name: &str, wanted: u8, what: &str) -> Result<Option<Input<'a>>, ReadError> {
        match self.find(name)? {
            Some((kind, position)) if kind == wanted => Ok(Some(self.input(position))),
            Some((kind, _)) => Err(ReadError::Attribute(format!("field {name} of type {kind} is not {what}"))),
            None => Err(ReadError::Attribute(format!("no field {name} in Portable class {}", self.class_id))),
        }
    }
}

/// A scalar of Portable field type `kind` at the input's position.
fn scalar(input: &mut Input<'_>, kind: u8) -> Result<Value, ReadError> {
    Ok(match kind {
        1 => Value::Byte(input.i8()?),
        2 => Value::Bool(input.bool()?),
        3 => Value::Char(input.u16()?),
        4 => Value::Short(input.i16()?),
        5 => Value::Int(input.i32()?),
        6 => Value::Long(input.i64()?),
        7 => Value::Float(input.f32()?),
        8 => Value::Double(input.f64()?),
        9 => input.string()?.map_or(Value::Null, Value::String),
        20 | 22 | 24 | 26 | 28 => match input.bool()? {
            true => Value::Null,
            false => object_item(input, kind)?,
        },
        other => return Err(malformed(format!("unknown Portable field type {other}"))),
    })
}

/// A decimal, time, date or timestamp as Portable writes them (years in two bytes).
fn object_item(input: &mut Input<'_>, kind: u8) -> Result<Value, ReadError> {
    Ok(match kind {
        20 => Value::BigDecimal(input.big_decimal()?),
        22 => Value::Time(input.time()?),
        24 => Value::Date(input.date(2)?),
        26 => Value::Timestamp(input.timestamp(2)?),
        _ => Value::TimestampWithTimezone(input.timestamp_with_timezone(2)?),
    })
}

/// An array of primitives or strings (`kind` is the item's type), or item `index` of it.
fn array(input: &mut Input<'_>, kind: u8, index: Option<usize>) -> Result<Value, ReadError> {
    let size = match kind {
        1 | 2 => 1,
        3 | 4 => 2,
        6 | 8 => 8,
        _ => 4,
    };
    let Some(length) = input.length(size)? else {
        return Ok(Value::Null);
    };
    if let Some(index) = index {
        if index >= length {
            return Ok(Value::Null);
        }
        if kind != 9 {
            input.seek(input.position() + index * size);
            return scalar(input, kind);
        }
        for _ in 0..index {
            input.string()?;
        }
        return scalar(input, kind);
    }
    (0..length).map(|_| scalar(input, kind)).collect::<Result<_, _>>().map(Value::Array)
}

/// An array of decimals, times, dates or timestamps: a count, positions, then the items.
fn objects_array(input: &mut Input<'_>, kind: u8) -> Result<Value, ReadError> {
    let Some(length) = input.length(4)? else {
        return Ok(Value::Null);
    };
    let mut items = Vec::with_capacity(length);
    for index in 0..length {
        let mut position = input.clone();
        position.seek(input.position() + index * 4);
        let at = usize::try_from(position.i32()?).map_err(|_| malformed("negative Portable position"))?;
        let mut item = input.clone();
        item.seek(at);
        items.push(object_item(&mut item, kind)?);
    }
    Ok(Value::Array(items))
}

impl Record for PortableRecord<'_> {
    fn has_field(&self, name: &str) -> bool {
        matches!(self.find(name), Ok(Some(_)))
    }

    fn leaf(&self, name: &str) -> Result<Value, ReadError> {
        Ok(self.field(name)?.unwrap_or(Value::Null))
    }

    fn item(&self, name: &str, index: usize) -> Result<Value, ReadError> {
        let Some((kind, position)) = self.find(name)? else {
            return Ok(Value::Null);
        };
        let mut input = self.input(position);
        match kind {
            field_type::PORTABLE_ARRAY => {
                Ok(self.nested_item(name, index)?.map_or(Value::Null, |nested| Value::Object(nested.to_object())))
            }
            11..=19 => array(&mut input, kind - 10, Some(index)),
            21 | 23 | 25 | 27 | 29 => match objects_array(&mut input, kind - 1)? {
                Value::Array(mut items) if index < items.len() => Ok(items.swap_remove(index)),
                _ => Ok(Value::Null),
            },
            _ => Err(ReadError::Attribute(format!("field {name} of type {kind} is not an array"))),
        }
    }

    fn items(&self, name: &str) -> Result<Option<Vec<Value>>, ReadError> {
        match self.field(name)? {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(_) => Err(ReadError::Attribute(format!("field {name} is not an array"))),
        }
    }

    fn nested(&self, name: &str) -> Result<Option<Self>, ReadError> {
        let Some(mut input) = self.typed(name, field_type::PORTABLE, "a Portable record")? else {
            return Ok(None);
        };
        self.nested_at(&mut input)
    }

    fn nested_item(&self, name: &str, index: usize) -> Result<Option<Self>, ReadError> {
        Ok(self
            .nested_items(name)?
            .and_then(|mut records| (index < records.len()).then(|| records.swap_remove(index)))
            .flatten())
    }

    fn nested_items(&self, name: &str) -> Result<Option<Vec<Option<Self>>>, ReadError> {
        let Some(mut input) = self.typed(name, field_type::PORTABLE_ARRAY, "an array of Portable records")? else {
            return Ok(None);
        };
        Ok(self.nested_array_at(&mut input)?.map(|records| records.into_iter().map(Some).collect()))
    }
}
