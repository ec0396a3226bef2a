//! Compact schemas: a type name and its fields, each a name and a kind (Hazelcast's
//! `FieldKind` ordinal). Clients and members name a schema by its id, the 64-bit Rabin
//! fingerprint of the type name, the field count and each field's name and kind, fields in
//! name order (as every client computes it; the member recomputes it and never trusts a sent id).

use std::sync::OnceLock;

/// One field of a schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldDescriptor {
    pub name: String,
    /// Hazelcast's `FieldKind` (0 BOOLEAN … 46 ARRAY_OF_NULLABLE_FLOAT64).
    pub kind: i32,
}

/// A Compact schema, its fields sorted by name (the order the fingerprint and the record
/// layout use).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Schema {
    pub type_name: String,
    pub fields: Vec<FieldDescriptor>,
    id: i64,
}

impl Schema {
    /// A schema of `fields` in any order (sorted here by name).
    pub fn new(type_name: impl Into<String>, mut fields: Vec<FieldDescriptor>) -> Schema {
        fields.sort_by(|a, b| a.name.cmp(&b.name));
        let type_name = type_name.into();
        let id = fingerprint(&type_name, &fields);
        Schema { type_name, fields, id }
    }

    /// The schema id: its Rabin fingerprint.
    pub fn id(&self) -> i64 {
        self.id
    }

    pub fn field(&self, name: &str) -> Option<&FieldDescriptor> {
        self.fields.binary_search_by(|field| field.name.as_str().cmp(name)).ok().map(|at| &self.fields[at])
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
}
