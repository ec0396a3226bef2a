//! What Hazelcast 5.6's member answered (`fixtures/exec.json`, written by `fixtures/gen_exec.py`
//! with `fixtures/ExecOracle.java`), and the schemas of the Compact records in it.
#![allow(dead_code)]

use ferrogrid_query::schema::{FieldDescriptor, Schema};
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

pub fn json() -> &'static Json {
    static JSON: OnceLock<Json> = OnceLock::new();
    JSON.get_or_init(|| serde_json::from_str(include_str!("../fixtures/exec.json")).expect("exec.json is JSON"))
}

pub fn bytes(hex: &Json) -> Vec<u8> {
    hex::decode(hex.as_str().expect("a hex string")).expect("valid hex")
}

/// The entries of map `name`, as the client wrote them.
pub fn entries(name: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    json()["maps"][name]
        .as_array()
        .unwrap_or_else(|| panic!("no map {name}"))
        .iter()
        .map(|entry| (bytes(&entry[0]), bytes(&entry[1])))
        .collect()
}

/// The Compact schemas of the gen_exec.py records (field kinds as Hazelcast's FieldKind).
pub fn schemas() -> HashMap<i64, Arc<Schema>> {
    let field = |name: &str, kind: i32| FieldDescriptor { name: name.into(), kind };
    let address = Schema::new("Address", vec![field("city", 17), field("number", 9)]);
    let person = Schema::new(
        "Person",
        vec![
            field("name", 17),
            field("age", 9),
            field("salary", 11),
            field("score", 15),
            field("ratio", 13),
            field("small", 3),
            field("medium", 7),
            field("dept", 17),
            field("active", 1),
            field("bonus", 39),
            field("amount", 19),
            field("tags", 18),
            field("scores", 10),
            field("address", 29),
            field("born", 23),
            field("maybe", 40),
            field("decimals", 20),
            field("friends", 30),
            field("days", 24),
            field("flags", 2),
            field("longs", 12),
            field("doubles", 16),
            field("nothing", 10),
        ],
    );
    [address, person].into_iter().map(|schema| (schema.id(), Arc::new(schema))).collect()
}
