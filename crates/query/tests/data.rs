//! Reading the values the Hazelcast Python client serialized (`fixtures/values.json`).

mod common;

use common::{expected, fixture, fixtures, same, schemas};
use ferrogrid_query::data::{read_object, read_value, type_id};
use ferrogrid_query::{CompactRecord, ReadError, Value};
use std::collections::HashMap;

#[test]
fn every_fixture_reads_as_the_client_wrote_it() {
    let schemas = schemas();
    let mut checked = 0;
    for fixture in fixtures() {
        if fixture.expected["t"] == "Error" {
            continue;
        }
        let want = expected(&fixture.expected, &fixture.bytes);
        let got = match fixture.form.as_str() {
            "data" => read_value(&fixture.bytes, &schemas),
            _ => read_object(&fixture.bytes, 0, &schemas).map(|(value, end)| {
                assert_eq!(end, fixture.bytes.len(), "{} reads to its end", fixture.name);
                value
            }),
        };
        let got = got.unwrap_or_else(|error| panic!("{}: {error}", fixture.name));
        assert!(same(&got, &want), "{}: got {got:?}, want {want:?}", fixture.name);
        checked += 1;
    }
    assert!(checked > 70, "only {checked} fixtures checked");
}

#[test]
fn values_the_member_cannot_read_name_their_type() {
    let schemas = schemas();
    let identified = fixture("identified");
    assert_eq!(
        read_value(&identified.bytes, &schemas),
        Err(ReadError::IdentifiedDataSerializable { factory_id: 66, class_id: 77 })
    );
    let pickle = fixture("pickle");
    assert!(matches!(read_value(&pickle.bytes, &schemas), Err(ReadError::UnsupportedType { type_id: -120, .. })));
    assert_eq!(type_id(&pickle.bytes), Ok(-120));
    assert_eq!(read_value(&[], &schemas), Ok(Value::Null));
}

#[test]
fn compact_records_need_their_schema_only_when_nested() {
    let address = fixture("compact_address");
    let none: HashMap<i64, std::sync::Arc<ferrogrid_query::schema::Schema>> = HashMap::new();
    assert!(matches!(read_value(&address.bytes, &none), Ok(Value::Object(_))), "a whole record needs no schema");
    let inline = fixture("inline_compact");
    let schema_id = i64::from_be_bytes(inline.bytes[4..12].try_into().unwrap());
    assert_eq!(read_object(&inline.bytes, 0, &none), Err(ReadError::SchemaNotFound { schema_id }));
    let list = fixture("inline_list");
    assert!(read_object(&list.bytes, 0, &none).is_ok());
}

#[test]
fn every_compact_field_reads_as_the_client_wrote_it() {
    let schemas = schemas();
    let fields = &common::json()["compact_fields"];
    let mut checked = 0;
    for (record_name, record_fields) in fields.as_object().unwrap() {
        let data = fixture(record_name).bytes;
        let record = CompactRecord::parse(&data[8..], &schemas).unwrap();
        assert_eq!(record.bytes().len(), data.len() - 8, "{record_name} ends where its Data ends");
        for (field, description) in record_fields.as_object().unwrap() {
            let want = expected(description, &data);
            let got = record.field(field).unwrap_or_else(|error| panic!("{record_name}.{field}: {error}"));
            let got = got.unwrap_or_else(|| panic!("{record_name} has no field {field}"));
            assert!(same(&got, &want), "{record_name}.{field}: got {got:?}, want {want:?}");
            checked += 1;
            if let Value::Array(items) = &want {
                for (index, item) in items.iter().enumerate() {
                    let got = record.item(field, index).unwrap();
                    assert!(same(&got, item), "{record_name}.{field}[{index}]: got {got:?}, want {item:?}");
                }
                assert_eq!(record.item(field, items.len()), Ok(Value::Null), "past the end");
                assert!(same(&Value::Array(record.items(field).unwrap().unwrap()), &want));
            }
        }
        assert_eq!(record.field("no_such_field"), Ok(None));
    }
    assert!(checked > 60, "only {checked} fields checked");
}

#[test]
fn nested_compact_records_are_navigable() {
    let schemas = schemas();
    let data = fixture("compact_employee").bytes;
    let employee = CompactRecord::parse(&data[8..], &schemas).unwrap();
    let home = employee.nested("compact").unwrap().unwrap();
    assert_eq!(home.field("city"), Ok(Some(Value::String("Oslo".into()))));
    assert!(employee.nested("compact_null").unwrap().is_none());
    let addresses = employee.nested_items("array_of_compact").unwrap().unwrap();
    assert_eq!(addresses.len(), 3);
    assert!(addresses[1].is_none());
    assert_eq!(addresses[2].as_ref().unwrap().field("number"), Ok(Some(Value::Int(12))));
    assert_eq!(employee.nested_item("array_of_compact", 0).unwrap().unwrap().field("number"), Ok(Some(Value::Int(7))));
    assert!(employee.nested_item("array_of_compact", 3).unwrap().is_none());
    assert!(matches!(employee.nested("int32"), Err(ReadError::Attribute(_))));
    assert!(matches!(employee.item("int32", 0), Err(ReadError::Attribute(_))));
}
