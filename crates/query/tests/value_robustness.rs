//! Truncated, garbled and arbitrary input is an error, never a panic.

mod common;

use common::{fixtures, schemas};
use ferrogrid_query::data::{read_object, read_value};
use ferrogrid_query::portable::PortableRecord;
use ferrogrid_query::schema::Schema;
use ferrogrid_query::{extract, CompactRecord, Path, SchemaSource};
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// Reads everything there is to read in `bytes`, as a Data, an inline object and a Compact
/// record, ignoring the results.
fn read_all(bytes: &[u8], schemas: &dyn SchemaSource) {
    let _ = read_value(bytes, schemas);
    let _ = read_object(bytes, 0, schemas);
    if bytes.len() >= 8 {
        read_record(&bytes[8..], schemas);
        read_portable(bytes);
    }
    for attribute in PATHS {
        let _ = extract(bytes, bytes, &Path::parse(attribute).unwrap(), schemas);
    }
}

const PATHS: &[&str] = &[
    "this",
    "__key.city",
    "int32",
    "compact.city",
    "array_of_compact[any].city",
    "array_of_compact[1].number",
    "array_of_int64[any]",
    "tags[1]",
    "arr[any].b.c",
    "pet.name",
    "pets[any].name",
    "pets[1].age",
    "int_array[2]",
    "date_array[0]",
    "string_array[any]",
];

fn read_portable(bytes: &[u8]) {
    let Ok(record) = PortableRecord::parse(bytes, 8) else {
        return;
    };
    if let Ok(names) = record.field_names() {
        for name in names {
            let _ = record.field(&name);
        }
    }
}

fn read_record(bytes: &[u8], schemas: &dyn SchemaSource) {
    let Ok(record) = CompactRecord::parse(bytes, schemas) else {
        return;
    };
    let names: Vec<String> = record.schema().fields.iter().map(|field| field.name.clone()).collect();
    for name in names {
        let _ = record.field(&name);
        let _ = record.items(&name);
        for index in [0, 1, 2, 1000] {
            let _ = record.item(&name, index);
            if let Ok(Some(nested)) = record.nested_item(&name, index) {
                let _ = nested.field("city");
            }
        }
        if let Ok(Some(nested)) = record.nested(&name) {
            let _ = nested.field("city");
        }
        let _ = record.nested_items(&name);
    }
}

#[test]
fn every_truncation_of_every_fixture_is_an_error_or_a_value() {
    let schemas = schemas();
    for fixture in fixtures() {
        // The large records are cut at fewer places to keep the test quick.
        let step = (fixture.bytes.len() / 512).max(1);
        for length in (0..fixture.bytes.len()).step_by(step) {
            read_all(&fixture.bytes[..length], &schemas);
        }
    }
}

fn small_fixtures() -> Vec<Vec<u8>> {
    fixtures().into_iter().map(|fixture| fixture.bytes).filter(|bytes| bytes.len() < 4096).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn garbled_fixtures_never_panic(
        which in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let schemas = schemas();
        let all = small_fixtures();
        let mut bytes = which.get(&all).clone();
        for (at, byte) in flips {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        read_all(&bytes, &schemas);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256), type_id in -60i32..5) {
        let schemas = schemas();
        read_all(&bytes, &schemas);
        let mut typed = vec![0, 0, 0, 0];
        typed.extend_from_slice(&type_id.to_be_bytes());
        typed.extend_from_slice(&bytes);
        read_all(&typed, &schemas);
    }

    #[test]
    fn records_of_arbitrary_schemas_never_panic(
        kinds in prop::collection::vec(0i32..48, 0..12),
        body in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        let fields = kinds.iter().enumerate().map(|(at, kind)| {
            ferrogrid_query::schema::FieldDescriptor { name: format!("f{at}"), kind: *kind }
        }).collect();
        let schema = Schema::new("arbitrary", fields);
        let mut schemas: HashMap<i64, Arc<Schema>> = HashMap::new();
        let mut bytes = schema.id().to_be_bytes().to_vec();
        bytes.extend_from_slice(&body);
        schemas.insert(schema.id(), Arc::new(schema));
        read_record(&bytes, &schemas);
    }
}
