//! The fixtures the Hazelcast Python client wrote (`fixtures/gen_values.py`), and the values
//! they are expected to hold.
#![allow(dead_code)]

use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::schema::{FieldDescriptor, Schema};
use ferrogrid_query::temporal::{Date, Time, Timestamp, TimestampWithTimezone};
use ferrogrid_query::{Object, Value};
use num_bigint::BigInt;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

pub struct Fixture {
    pub form: String,
    pub name: String,
    pub bytes: Vec<u8>,
    pub expected: Json,
}

pub fn json() -> &'static Json {
    static JSON: OnceLock<Json> = OnceLock::new();
    JSON.get_or_init(|| {
        let text = include_str!("../fixtures/values.json");
        serde_json::from_str(text).expect("values.json is JSON")
    })
}

pub fn fixtures() -> Vec<Fixture> {
    json()["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|fixture| Fixture {
            form: fixture["form"].as_str().unwrap().into(),
            name: fixture["name"].as_str().unwrap().into(),
            bytes: hex::decode(fixture["hex"].as_str().unwrap()).unwrap(),
            expected: fixture["expected"].clone(),
        })
        .collect()
}

pub fn fixture(name: &str) -> Fixture {
    fixtures().into_iter().find(|fixture| fixture.name == name).unwrap_or_else(|| panic!("no fixture {name}"))
}

/// The schemas the client registered, checked against the ids it gave them.
pub fn schemas() -> HashMap<i64, Arc<Schema>> {
    schemas_of(json())
}

/// The schemas of a fixture document (`"schemas"`: type name, fields and the id the client gave
/// each), checked against those ids.
pub fn schemas_of(document: &Json) -> HashMap<i64, Arc<Schema>> {
    let mut schemas = HashMap::new();
    for schema in document["schemas"].as_array().unwrap() {
        let fields = schema["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|field| FieldDescriptor {
                name: field[0].as_str().unwrap().into(),
                kind: field[1].as_i64().unwrap() as i32,
            })
            .collect();
        let built = Schema::new(schema["type_name"].as_str().unwrap(), fields);
        assert_eq!(built.id(), schema["id"].as_i64().unwrap(), "schema id of {}", built.type_name);
        schemas.insert(built.id(), Arc::new(built));
    }
    schemas
}

fn int(json: &Json) -> i64 {
    json.as_i64().unwrap()
}

fn timestamp(parts: &[Json]) -> Timestamp {
    let date = Date::new(int(&parts[0]) as i32, int(&parts[1]) as u8, int(&parts[2]) as u8).unwrap();
    let time =
        Time::new(int(&parts[3]) as u8, int(&parts[4]) as u8, int(&parts[5]) as u8, int(&parts[6]) as u32).unwrap();
    Timestamp::new(date, time)
}

/// The Value a typed JSON description stands for; `payload` is the fixture's Data for
/// "Payload" descriptions.
pub fn expected(description: &Json, payload: &[u8]) -> Value {
    let value = &description["v"];
    let parts = value.as_array().map(Vec::as_slice).unwrap_or(&[]);
    match description["t"].as_str().unwrap() {
        "Null" => Value::Null,
        "Bool" => Value::Bool(value.as_bool().unwrap()),
        "Byte" => Value::Byte(int(value) as i8),
        "Short" => Value::Short(int(value) as i16),
        "Int" => Value::Int(int(value) as i32),
        "Long" => Value::Long(int(value)),
        "Float" => Value::Float(f32::from_bits(int(value) as u32)),
        "Double" => Value::Double(f64::from_bits(value.as_u64().unwrap())),
        "Char" => Value::Char(int(value) as u16),
        "Json" => Value::Json(value.as_str().unwrap().into()),
        "String" => Value::String(value.as_str().unwrap().into()),
        "Repeat" => Value::String(parts[0].as_str().unwrap().repeat(int(&parts[1]) as usize)),
        "BigInteger" => Value::BigInteger(value.as_str().unwrap().parse::<BigInt>().unwrap()),
        "BigDecimal" => {
            Value::BigDecimal(BigDecimal::new(parts[0].as_str().unwrap().parse().unwrap(), int(&parts[1]) as i32))
        }
        "Uuid" => Value::Uuid(u128::from_str_radix(value.as_str().unwrap(), 16).unwrap()),
        "Date" => Value::Date(Date::new(int(&parts[0]) as i32, int(&parts[1]) as u8, int(&parts[2]) as u8).unwrap()),
        "Time" => Value::Time(
            Time::new(int(&parts[0]) as u8, int(&parts[1]) as u8, int(&parts[2]) as u8, int(&parts[3]) as u32).unwrap(),
        ),
        "Timestamp" => Value::Timestamp(timestamp(parts)),
        "TimestampWithTimezone" => {
            Value::TimestampWithTimezone(TimestampWithTimezone::new(timestamp(parts), int(&parts[7]) as i32).unwrap())
        }
        "Array" => Value::Array(parts.iter().map(|item| expected(item, payload)).collect()),
        "Object" => Value::Object(Object {
            type_id: int(&parts[0]) as i32,
            bytes: hex::decode(parts[1].as_str().unwrap()).unwrap(),
        }),
        "Payload" => Value::Object(Object { type_id: int(value) as i32, bytes: payload[8..].to_vec() }),
        other => panic!("no expected value for {other}"),
    }
}

/// Same value, NaN included (Value's PartialEq is Rust's, where NaN != NaN).
pub fn same(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Double(left), Value::Double(right)) => left.to_bits() == right.to_bits(),
        (Value::Float(left), Value::Float(right)) => left.to_bits() == right.to_bits(),
        (Value::Array(left), Value::Array(right)) => {
            left.len() == right.len() && left.iter().zip(right).all(|(left, right)| same(left, right))
        }
        _ => left == right,
    }
}
