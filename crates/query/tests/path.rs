//! Attribute paths over the values the Hazelcast Python client serialized.

mod common;

use common::{expected, fixture, same, schemas};
use ferrogrid_query::portable::PortableRecord;
use ferrogrid_query::{extract, Extracted, Path, ReadError, Value};

fn at(value: &[u8], attribute: &str) -> Result<Extracted, ReadError> {
    at_entry(&[], value, attribute)
}

fn at_entry(key: &[u8], value: &[u8], attribute: &str) -> Result<Extracted, ReadError> {
    extract(key, value, &Path::parse(attribute).unwrap(), &schemas())
}

fn single(value: Value) -> Result<Extracted, ReadError> {
    Ok(Extracted::Single(value))
}

fn multi(values: Vec<Value>) -> Result<Extracted, ReadError> {
    Ok(Extracted::Multi(values))
}

fn text(value: &str) -> Value {
    Value::String(value.into())
}

#[test]
fn compact_paths_follow_generic_record_query_reader() {
    let employee = fixture("compact_employee").bytes;
    assert_eq!(at(&employee, "int32"), single(Value::Int(i32::MAX)));
    assert_eq!(at(&employee, "this.int32"), single(Value::Int(i32::MAX)));
    assert_eq!(at(&employee, "compact.city"), single(text("Oslo")));
    assert_eq!(at(&employee, "array_of_compact[2].number"), single(Value::Int(12)));
    assert_eq!(at(&employee, "array_of_compact[any].city"), multi(vec![Value::Null, text("Oslo"), text("Turku")]));
    assert_eq!(at(&employee, "array_of_compact[1].number"), multi(vec![Value::Null]), "a null record is a null target");
    assert_eq!(at(&employee, "array_of_int64[any]"), multi(vec![Value::Long(1 << 40), Value::Long(-1)]));
    assert_eq!(at(&employee, "array_of_int64[1]"), single(Value::Long(-1)));
    assert_eq!(at(&employee, "array_of_int64[9]"), single(Value::Null));
    assert_eq!(at(&employee, "array_of_int32[any]"), multi(vec![Value::Null]), "an empty array is a null target");
    assert_eq!(at(&employee, "array_of_nullable_int32[any]"), multi(vec![Value::Int(1), Value::Null, Value::Int(3)]));
    assert_eq!(at(&employee, "array_of_nullable_int64[any]"), multi(vec![Value::Null]));
    assert_eq!(at(&employee, "array_of_nullable_int16[any]"), single(Value::Short(7)), "one result is single");
    assert_eq!(at(&employee, "compact_null.city"), multi(vec![Value::Null]));
    assert_eq!(at(&employee, "no_such_field"), single(Value::Null));
    assert_eq!(at(&employee, "no_such_field.city"), multi(vec![Value::Null]));
    assert!(matches!(at(&employee, "int32.city"), Err(ReadError::Attribute(_))));
    assert!(matches!(at(&employee, "int32[any]"), Err(ReadError::Attribute(_))));
    let whole = expected(&fixture("compact_employee").expected, &employee);
    assert_eq!(at(&employee, "this"), single(whole));
}

#[test]
fn key_paths_read_the_key() {
    let key = fixture("compact_address").bytes;
    let value = fixture("string_ascii").bytes;
    assert_eq!(at_entry(&key, &value, "__key.city"), single(text("Oslo")));
    assert_eq!(at_entry(&key, &value, "__key#number"), single(Value::Int(7)));
    assert_eq!(at_entry(&value, &key, "__key"), single(text("hello")));
    assert_eq!(at_entry(&key, &value, "this"), single(text("hello")));
}

#[test]
fn built_in_values_have_no_attributes() {
    let value = fixture("string_ascii").bytes;
    let error = at(&value, "length").unwrap_err();
    assert_eq!(error, ReadError::Attribute("There is no suitable accessor for 'length' on class 'String'".into()));
    assert_eq!(at(&[], "anything"), single(Value::Null), "an attribute of null is null");
    assert!(matches!(at(&fixture("identified").bytes, "x"), Err(ReadError::IdentifiedDataSerializable { .. })));
}

#[test]
fn json_paths_follow_the_json_getters() {
    let document = fixture("json_document").bytes;
    assert_eq!(at(&document, "name"), single(text("a")));
    assert_eq!(at(&document, "age"), single(Value::Long(30)));
    assert_eq!(at(&document, "score"), single(Value::Double(1.5)));
    assert_eq!(at(&document, "whole"), single(Value::Double(2.0)), "a fraction makes a double");
    assert_eq!(at(&document, "exp"), single(Value::Double(100_000.0)));
    assert!(at(&document, "big").is_err(), "beyond a long");
    assert_eq!(at(&document, "tags[1]"), single(text("y")));
    assert_eq!(at(&document, "tags[3]"), single(Value::JsonStructure));
    assert_eq!(at(&document, "tags[9]"), single(Value::Null));
    assert_eq!(at(&document, "tags[any]"), multi(vec![text("x"), text("y"), Value::Long(3)]));
    assert_eq!(at(&document, "nested.deep.v"), single(Value::Long(1)));
    assert_eq!(at(&document, "nested.deep"), single(Value::JsonStructure));
    assert_eq!(at(&document, "arr[any].a"), multi(vec![Value::Long(1), Value::Double(2.5)]));
    assert_eq!(at(&document, "arr[any].b.c"), multi(vec![text("c1")]));
    assert_eq!(at(&document, "arr[any].b"), multi(vec![Value::JsonStructure, Value::Long(3)]));
    assert_eq!(at(&document, "arr[0].b.c"), single(text("c1")));
    assert!(matches!(at(&document, "arr[any][0]"), Err(ReadError::Attribute(_))));
    assert_eq!(at(&document, "empty[any]"), multi(vec![]));
    assert_eq!(at(&document, "name[any]"), single(Value::Null));
    assert_eq!(at(&document, "nul"), single(Value::Null));
    assert_eq!(at(&document, "t"), single(Value::Bool(true)));
    assert_eq!(at(&document, "missing"), single(Value::Null));
    assert_eq!(at(&document, "name.first"), single(Value::Null));
    assert_eq!(at(&document, "this"), single(Value::JsonStructure));
    assert_eq!(at(&fixture("json_scalar").bytes, "this"), single(Value::Long(12)));
    assert_eq!(at(&fixture("json_string").bytes, "this"), single(text("text")));
    assert_eq!(at(&fixture("json_array").bytes, "[any]"), multi(vec![Value::Long(1), Value::Double(2.5), text("x")]));
    assert_eq!(at(&fixture("json_array").bytes, "[1]"), single(Value::Double(2.5)));
    let invalid = fixture("json_invalid").bytes;
    assert_eq!(at(&invalid, "a"), single(Value::Null));
    assert!(matches!(at(&invalid, "this"), Err(ReadError::InvalidJson(_))));
}

#[test]
fn portable_fields_read_without_class_definitions() {
    let owner = fixture("portable_owner").bytes;
    let record = PortableRecord::parse(&owner, 8).unwrap();
    assert_eq!((record.factory_id(), record.class_id()), (1, 1));
    let fields = common::json()["portable_fields"].as_object().unwrap();
    assert_eq!(record.field_names().unwrap().len(), fields.len());
    for (name, description) in fields {
        let got = record.field(name).unwrap().unwrap_or_else(|| panic!("no field {name}"));
        match description["t"].as_str().unwrap() {
            "Portable" => assert!(matches!(got, Value::Object(ref object) if object.type_id == -1)),
            "PortableArray" => assert!(matches!(got, Value::Array(ref items) if items.len() == 2)),
            _ => {
                let want = expected(description, &owner);
                assert!(same(&got, &want), "{name}: got {got:?}, want {want:?}");
                assert!(same(
                    &at(&owner, name)
                        .map(|found| match found {
                            Extracted::Single(value) => value,
                            Extracted::Multi(_) => Value::Null,
                        })
                        .unwrap(),
                    &want
                ));
            }
        }
    }
    assert_eq!(record.field("missing"), Ok(None));
    assert_eq!(at(&owner, "pet.name"), single(text("rex")));
    assert_eq!(at(&owner, "pets[1].age"), single(Value::Int(5)));
    assert_eq!(at(&owner, "pets[any].name"), multi(vec![text("rex"), text("tom")]));
    assert_eq!(at(&owner, "pets[2].age"), multi(vec![Value::Null]));
    assert_eq!(at(&owner, "int_array[2]"), single(Value::Int(30)));
    assert_eq!(at(&owner, "int_array[any]"), multi(vec![Value::Int(10), Value::Int(20), Value::Int(30)]));
    assert_eq!(at(&owner, "string_array[0]"), single(text("x")));
    assert_eq!(
        at(&owner, "date_array[0]"),
        single(expected(&serde_json::json!({"t": "Date", "v": [2000, 1, 1]}), &owner))
    );
    assert_eq!(at(&owner, "missing.x"), multi(vec![Value::Null]));
    assert!(matches!(at(&owner, "int.x"), Err(ReadError::Attribute(_))));
}

/// A top-level number field read straight from a Compact record's bytes gives what the
/// general read gives; every other field, another schema's record and a record shorter than
/// its lengths say are left to the general read (which reports what is wrong).
#[test]
fn direct_reads_of_compact_numbers_agree_with_the_general_read() {
    use ferrogrid_query::compact::DirectRead;
    use ferrogrid_query::path::extract_direct;
    let employee = fixture("compact_employee").bytes;
    let address = fixture("compact_address").bytes;
    let schemas = schemas();
    let id = i64::from_be_bytes(employee[8..16].try_into().unwrap());
    let mut direct_fields = Vec::new();
    for field in &schemas[&id].fields {
        let path = Path::parse(&field.name).unwrap();
        let direct = DirectRead::default();
        let Some(read) = extract_direct(&direct, (&[], &employee), &path, &schemas) else { continue };
        assert_eq!(Ok(Extracted::Single(read.clone())), at(&employee, &field.name), "{}", field.name);
        assert_eq!(extract_direct(&direct, (&[], &employee), &path, &schemas), Some(read), "resolved once");
        assert_eq!(extract_direct(&direct, (&[], &address), &path, &schemas), None, "another schema");
        let short = &employee[..employee.len() - 1];
        assert_eq!(
            extract_direct(&direct, (&[], short), &path, &schemas),
            None,
            "{} of a truncated record",
            field.name
        );
        assert!(at(short, &field.name).is_err(), "the general read reports the truncated record");
        direct_fields.push(field.name.clone());
    }
    direct_fields.sort();
    assert_eq!(direct_fields, ["float32", "float64", "int16", "int32", "int64", "int8"]);
    let number = Path::parse("__key.number").unwrap();
    assert_eq!(extract_direct(&DirectRead::default(), (&address, &employee), &number, &schemas), Some(Value::Int(7)));
    let this = Path::parse("this.int32").unwrap();
    assert_eq!(extract_direct(&DirectRead::default(), (&[], &employee), &this, &schemas), Some(Value::Int(i32::MAX)));
    for nested in ["compact.city", "array_of_int64[1]", "boolean", "string", "nullable_int32"] {
        let path = Path::parse(nested).unwrap();
        assert_eq!(extract_direct(&DirectRead::default(), (&[], &employee), &path, &schemas), None, "{nested}");
    }
}
