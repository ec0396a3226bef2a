//! Records written by `write_compact` read back field by field, nulls and all.

use ferrogrid_query::compact::{kind, CompactRecord};
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::schema::{FieldDescriptor, Schema};
use ferrogrid_query::write::write_compact;
use ferrogrid_query::Value;
use num_bigint::BigInt;
use std::collections::HashMap;
use std::sync::Arc;

fn field(name: &str, kind: i32) -> FieldDescriptor {
    FieldDescriptor { name: name.into(), kind }
}

#[test]
fn a_written_record_reads_back() {
    let schema = Schema::new(
        "Person",
        vec![
            field("name", kind::STRING),
            field("age", 39), // NULLABLE_INT32
            field("ok", kind::BOOLEAN),
            field("score", kind::FLOAT64),
            field("city", kind::STRING),
            field("amount", kind::DECIMAL),
        ],
    );
    let values: Vec<Value> = schema
        .fields
        .iter()
        .map(|f| match f.name.as_str() {
            "name" => Value::String("ann".into()),
            "age" => Value::Int(41),
            "ok" => Value::Bool(true),
            "score" => Value::Double(1.5),
            "city" => Value::Null,
            _ => Value::BigDecimal(BigDecimal::new(BigInt::from(12345), 2)),
        })
        .collect();
    let record = write_compact(&schema, &values).unwrap();
    let schemas: HashMap<i64, Arc<Schema>> = [(schema.id(), Arc::new(schema.clone()))].into();
    let parsed = CompactRecord::parse(&record, &schemas).unwrap();
    assert_eq!(parsed.field("name").unwrap(), Some(Value::String("ann".into())));
    assert_eq!(parsed.field("age").unwrap(), Some(Value::Int(41)));
    assert_eq!(parsed.field("ok").unwrap(), Some(Value::Bool(true)));
    assert_eq!(parsed.field("score").unwrap(), Some(Value::Double(1.5)));
    assert_eq!(parsed.field("city").unwrap(), Some(Value::Null));
    assert_eq!(parsed.field("amount").unwrap(), Some(Value::BigDecimal(BigDecimal::new(BigInt::from(12345), 2))));
    assert_eq!(parsed.bytes().len(), record.len());
    // a null for a kind that cannot be null is refused
    let mut nulls = values.clone();
    let ok = schema.fields.iter().position(|f| f.name == "ok").unwrap();
    nulls[ok] = Value::Null;
    assert!(write_compact(&schema, &nulls).is_err());
}

#[test]
fn a_written_portable_record_reads_back() {
    use ferrogrid_query::portable::PortableRecord;
    use ferrogrid_query::write::write_portable;
    let fields = vec![
        ("name".to_owned(), 9, Value::String("Joe".into())),
        ("age".to_owned(), 5, Value::Int(33)),
        ("is_active".to_owned(), 2, Value::Bool(false)),
        ("nick".to_owned(), 9, Value::Null),
    ];
    let blob = write_portable(1, 7, 0, &fields).unwrap();
    let record = PortableRecord::parse(&blob, 8).unwrap();
    assert_eq!((record.factory_id(), record.class_id()), (1, 7));
    assert_eq!(record.field_names().unwrap(), vec!["name", "age", "is_active", "nick"]);
    assert_eq!(record.field("name").unwrap(), Some(Value::String("Joe".into())));
    assert_eq!(record.field("age").unwrap(), Some(Value::Int(33)));
    assert_eq!(record.field("is_active").unwrap(), Some(Value::Bool(false)));
    assert_eq!(record.field("nick").unwrap(), Some(Value::Null));
    assert!(write_portable(1, 7, 0, &[("age".to_owned(), 5, Value::Null)]).is_err());
}
