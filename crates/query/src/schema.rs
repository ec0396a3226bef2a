//! Compact schemas: a type name and its fields, each a name and a kind (Hazelcast's
//! `FieldKind` ordinal). Clients and members name a schema by its id, the 64-bit Rabin
//! fingerprint of the type name, the field count and each field's name and kind, fields in
//! name order (as every client computes it; the member recomputes it and never trusts a sent id).
//!
//! A schema also fixes where each field sits in a record (its [`Place`]), as every client lays
//! records out: fixed-size fields first, largest first (ties in name order), then booleans packed
//! eight to a byte, then an offset-table index for each variable-size field in name order.

use crate::error::ReadError;
use std::sync::OnceLock;

/// One field of a schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldDescriptor {
    pub name: String,
    /// Hazelcast's `FieldKind` (1 BOOLEAN … 46 ARRAY_OF_NULLABLE_FLOAT64).
    pub kind: i32,
}

/// Where a field sits in a Compact record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// A fixed-size field at `offset` from the start of the record's data.
    Fixed { offset: u32 },
    /// A boolean: bit `bit` of the byte at `offset`.
    Bit { offset: u32, bit: u8 },
    /// A variable-size field: its position is entry `index` of the offset table.
    Variable { index: u32 },
}

/// The fixed size of a field kind's values (`FieldKind` ordinals), 0 for booleans (packed as
/// bits), `None` for variable-size kinds; `Err` for kinds a Compact record cannot hold.
fn fixed_size(kind: i32) -> Result<Option<u32>, ()> {
    match kind {
        1 => Ok(Some(0)),
        3 => Ok(Some(1)),
        7 => Ok(Some(2)),
        9 | 13 => Ok(Some(4)),
        11 | 15 => Ok(Some(8)),
        2 | 4 | 8 | 10 | 12 | 14 | 16..=30 | 33..=46 => Ok(None),
        _ => Err(()),
    }
}

/// The record layout of a schema's fields (in the schema's field order).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Layout {
    /// `None` when a field has a kind Compact does not allow (CHAR, PORTABLE, unknown).
    places: Option<Vec<Place>>,
    fixed_length: u32,
    variable_count: u32,
}

fn layout(fields: &[FieldDescriptor]) -> Layout {
    let sizes: Result<Vec<Option<u32>>, ()> = fields.iter().map(|field| fixed_size(field.kind)).collect();
    let Ok(sizes) = sizes else {
        return Layout { places: None, fixed_length: 0, variable_count: 0 };
    };
    let mut places = vec![Place::Variable { index: 0 }; fields.len()];
    let mut fixed: Vec<usize> = (0..fields.len()).filter(|at| matches!(sizes[*at], Some(size) if size > 0)).collect();
    fixed.sort_by_key(|at| std::cmp::Reverse(sizes[*at]));
    let mut offset = 0;
    for at in fixed {
        places[at] = Place::Fixed { offset };
        offset += sizes[at].unwrap_or(0);
    }
    let booleans: Vec<usize> = (0..fields.len()).filter(|at| sizes[*at] == Some(0)).collect();
    for (count, at) in booleans.iter().enumerate() {
        places[*at] = Place::Bit { offset: offset + (count / 8) as u32, bit: (count % 8) as u8 };
    }
    let fixed_length = offset + booleans.len().div_ceil(8) as u32;
    let mut variable_count = 0;
    for at in (0..fields.len()).filter(|at| sizes[*at].is_none()) {
        places[at] = Place::Variable { index: variable_count };
        variable_count += 1;
    }
    Layout { places: Some(places), fixed_length, variable_count }
}

/// A Compact schema, its fields sorted by name (the order the fingerprint and the record
/// layout use).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Schema {
    pub type_name: String,
    pub fields: Vec<FieldDescriptor>,
    id: i64,
    layout: Layout,
}

impl Schema {
    /// A schema of `fields` in any order (sorted here by name).
    pub fn new(type_name: impl Into<String>, mut fields: Vec<FieldDescriptor>) -> Schema {
        fields.sort_by(|a, b| a.name.cmp(&b.name));
        let type_name = type_name.into();
        let id = fingerprint(&type_name, &fields);
        let layout = layout(&fields);
        Schema { type_name, fields, id, layout }
    }

    /// The schema id: its Rabin fingerprint.
    pub fn id(&self) -> i64 {
        self.id
    }

    pub fn field(&self, name: &str) -> Option<&FieldDescriptor> {
        self.position(name).map(|at| &self.fields[at])
    }

    fn position(&self, name: &str) -> Option<usize> {
        // (a few fields: comparing lengths first skips most byte comparisons)
        if self.fields.len() <= 8 {
            return self.fields.iter().position(|field| field.name == name);
        }
        self.fields.binary_search_by(|field| field.name.as_str().cmp(name)).ok()
    }

    /// A field and where it sits in a record; `Err` when the schema has a field of a kind a
    /// Compact record cannot hold (so no place in it is certain).
    pub fn place(&self, name: &str) -> Result<Option<(&FieldDescriptor, Place)>, ReadError> {
        let places = self.layout.places.as_ref().ok_or_else(|| {
            ReadError::Malformed(format!("schema {} has a field kind Compact records cannot hold", self.id))
        })?;
        Ok(self.position(name).map(|at| (&self.fields[at], places[at])))
    }

    /// Bytes taken by the fixed-size fields and the packed booleans.
    pub fn fixed_length(&self) -> u32 {
        self.layout.fixed_length
    }

    /// How many fields are of a variable size (entries in a record's offset table).
    pub fn variable_count(&self) -> u32 {
        self.layout.variable_count
    }
}

/// The empty fingerprint (the Rabin polynomial Hazelcast uses), as a bit pattern.
const EMPTY: u64 = 0xc15d_213a_a4d7_a795;

fn table() -> &'static [u64; 256] {
    static TABLE: OnceLock<[u64; 256]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = [0u64; 256];
        for (index, slot) in table.iter_mut().enumerate() {
            let mut fp = index as u64;
            for _ in 0..8 {
                fp = (fp >> 1) ^ (EMPTY & (fp & 1).wrapping_neg());
            }
            *slot = fp;
        }
        table
    })
}

fn of_byte(fp: u64, byte: u8) -> u64 {
    (fp >> 8) ^ table()[((fp ^ u64::from(byte)) & 0xff) as usize]
}

fn of_i32(fp: u64, value: i32) -> u64 {
    value.to_le_bytes().into_iter().fold(fp, of_byte)
}

fn of_str(fp: u64, text: &str) -> u64 {
    let fp = of_i32(fp, text.len() as i32);
    text.bytes().fold(fp, of_byte)
}

fn fingerprint(type_name: &str, fields: &[FieldDescriptor]) -> i64 {
    let mut fp = of_i32(of_str(EMPTY, type_name), fields.len() as i32);
    for field in fields {
        fp = of_i32(of_str(fp, &field.name), field.kind);
    }
    fp as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPLOYEE_ID: i64 = 5877148634586228103;
    const EMPTY_ID: i64 = 7118292658705342496;

    fn field(name: &str, kind: i32) -> FieldDescriptor {
        FieldDescriptor { name: name.into(), kind }
    }

    #[test]
    fn the_id_is_the_fingerprint_the_clients_compute() {
        // Ids computed by the official Python client 5.7 (RabinFingerprint.of).
        let employee = Schema::new("employee", vec![field("name", 15), field("age", 8)]);
        assert_eq!(employee.id(), EMPLOYEE_ID);
        let empty = Schema::new("empty", vec![]);
        assert_eq!(empty.id(), EMPTY_ID);
        let reordered = Schema::new("employee", vec![field("age", 8), field("name", 15)]);
        assert_eq!(reordered, employee, "fields are kept in name order");
        assert_ne!(Schema::new("employee", vec![field("age", 7), field("name", 15)]).id(), employee.id());
        assert_eq!(employee.field("name"), Some(&field("name", 15)));
        assert_eq!(employee.field("salary"), None);
    }

    #[test]
    fn fields_are_placed_as_the_clients_place_them() {
        let schema = Schema::new(
            "placed",
            vec![
                field("a_bool", 1),
                field("b_int8", 3),
                field("c_int64", 11),
                field("d_int32", 9),
                field("e_string", 17),
                field("f_float64", 15),
                field("g_bool", 1),
                field("h_array", 10),
            ],
        );
        let place = |name: &str| schema.place(name).unwrap().unwrap().1;
        assert_eq!(place("c_int64"), Place::Fixed { offset: 0 });
        assert_eq!(place("f_float64"), Place::Fixed { offset: 8 });
        assert_eq!(place("d_int32"), Place::Fixed { offset: 16 });
        assert_eq!(place("b_int8"), Place::Fixed { offset: 20 });
        assert_eq!(place("a_bool"), Place::Bit { offset: 21, bit: 0 });
        assert_eq!(place("g_bool"), Place::Bit { offset: 21, bit: 1 });
        assert_eq!(place("e_string"), Place::Variable { index: 0 });
        assert_eq!(place("h_array"), Place::Variable { index: 1 });
        assert_eq!(schema.fixed_length(), 22);
        assert_eq!(schema.variable_count(), 2);
        assert!(Schema::new("chars", vec![field("c", 5)]).place("c").is_err());
    }
}
