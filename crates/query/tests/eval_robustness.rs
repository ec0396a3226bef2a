//! Random predicates over random entries never panic: every failure is an `EvalError`.

mod common;

use ferrogrid_query::eval::java_regex::{self, Flags};
use ferrogrid_query::eval::Filter;
use ferrogrid_query::predicate::{Literal, Operand, Predicate};
use ferrogrid_query::schema::Schema;
use proptest::prelude::*;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::Arc;

fn document() -> Json {
    serde_json::from_str(include_str!("fixtures/eval.json")).expect("eval.json is JSON")
}

/// The fixture's schemas and every key and value blob it holds (Compact, JSON, built-in types).
fn fixture() -> (HashMap<i64, Arc<Schema>>, Vec<Vec<u8>>) {
    let document = document();
    let schemas = common::schemas_of(&document);
    let mut blobs = Vec::new();
    for entries in document["datasets"].as_object().unwrap().values() {
        for entry in entries.as_array().unwrap() {
            blobs.push(hex::decode(entry["key_hex"].as_str().unwrap()).unwrap());
            blobs.push(hex::decode(entry["value_hex"].as_str().unwrap()).unwrap());
        }
    }
    (schemas, blobs)
}

fn literal(type_id: i32, payload: &[u8]) -> Literal {
    let mut bytes = type_id.to_be_bytes().to_vec();
    bytes.extend_from_slice(payload);
    Literal { bytes, offset: 0 }
}

fn string_literal(text: &str) -> Literal {
    let mut payload = (text.len() as i32).to_be_bytes().to_vec();
    payload.extend_from_slice(text.as_bytes());
    literal(-11, &payload)
}

fn operand() -> impl Strategy<Value = Operand> {
    prop_oneof![
        Just(Operand::null()),
        any::<i32>().prop_map(|value| Operand::Object(literal(-7, &value.to_be_bytes()))),
        any::<i64>().prop_map(|value| Operand::Object(literal(-8, &value.to_be_bytes()))),
        any::<f64>().prop_map(|value| Operand::Object(literal(-10, &value.to_be_bytes()))),
        any::<bool>().prop_map(|value| Operand::Object(literal(-4, &[u8::from(value)]))),
        "[a-zA-Z0-9 .%_-]{0,8}".prop_map(|text| Operand::Object(string_literal(&text))),
        "[a-z0-9:. -]{0,12}".prop_map(Operand::Text),
        proptest::collection::vec(any::<u8>(), 4..16).prop_map(|bytes| Operand::Object(Literal { bytes, offset: 0 })),
    ]
}

fn attribute() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "this",
        "__key",
        "name",
        "age",
        "salary",
        "nickname",
        "bonus",
        "tags",
        "tags[any]",
        "tags[1]",
        "scores",
        "scores[any]",
        "address",
        "address.city",
        "pets[any].name",
        "pets[any]",
        "pets[0].age",
        "this.name",
        "__key#id",
        "__key.id",
        "since",
        "balance",
        "weight",
        "x[any].y",
        "a..b",
        "[any]",
    ])
    .prop_map(String::from)
}

fn pattern() -> impl Strategy<Value = Option<String>> {
    prop::option::of(r"[a-cA%_.*+?()\[\]{}\\^$|&:pPQEk0-9-]{0,10}")
}

fn leaf() -> impl Strategy<Value = Predicate> {
    prop_oneof![
        (attribute(), operand()).prop_map(|(attribute, value)| Predicate::Equal { attribute, value }),
        (attribute(), operand()).prop_map(|(attribute, value)| Predicate::NotEqual { attribute, value }),
        (attribute(), operand(), any::<bool>(), any::<bool>())
            .prop_map(|(attribute, value, equal, less)| Predicate::GreaterLess { attribute, value, equal, less }),
        (attribute(), operand(), operand()).prop_map(|(attribute, from, to)| Predicate::Between {
            attribute,
            from,
            to
        }),
        (attribute(), proptest::collection::vec(operand(), 0..4))
            .prop_map(|(attribute, values)| Predicate::In { attribute, values }),
        (attribute(), pattern()).prop_map(|(attribute, pattern)| Predicate::Like { attribute, pattern }),
        (attribute(), pattern()).prop_map(|(attribute, pattern)| Predicate::ILike { attribute, pattern }),
        (attribute(), pattern()).prop_map(|(attribute, pattern)| Predicate::Regex { attribute, pattern }),
        "[a-zA-Z.]{1,30}".prop_map(|class_name| Predicate::InstanceOf { class_name }),
        Just(Predicate::True),
        Just(Predicate::False),
    ]
}

fn predicate() -> impl Strategy<Value = Predicate> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Predicate::And),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Predicate::Or),
            inner.clone().prop_map(|predicate| Predicate::Not(Box::new(predicate))),
            inner.clone().prop_map(|predicate| Predicate::SkipIndex(Box::new(predicate))),
            inner.clone().prop_map(|predicate| Predicate::Sql { text: String::new(), predicate: Box::new(predicate) }),
            inner.prop_map(|predicate| Predicate::Partition {
                key: string_literal("k"),
                predicate: Box::new(predicate)
            }),
        ]
    })
}

fn blob(fixtures: usize) -> impl Strategy<Value = Blob> {
    prop_oneof![
        (0..fixtures).prop_map(Blob::Fixture),
        (0..fixtures, any::<usize>(), any::<u8>()).prop_map(|(at, cut, byte)| Blob::Garbled(at, cut, byte)),
        proptest::collection::vec(any::<u8>(), 0..24).prop_map(Blob::Random),
    ]
}

#[derive(Debug, Clone)]
enum Blob {
    Fixture(usize),
    /// A fixture blob cut short at some point, with one byte changed before the cut.
    Garbled(usize, usize, u8),
    Random(Vec<u8>),
}

impl Blob {
    fn bytes(&self, blobs: &[Vec<u8>]) -> Vec<u8> {
        match self {
            Blob::Fixture(at) => blobs[*at].clone(),
            Blob::Garbled(at, cut, byte) => {
                let mut bytes = blobs[*at].clone();
                bytes.truncate(cut % (bytes.len() + 1));
                if let Some(last) = bytes.last_mut() {
                    *last ^= *byte;
                }
                bytes
            }
            Blob::Random(bytes) => bytes.clone(),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_predicates_over_random_entries_never_panic(
        predicate in predicate(),
        entries in proptest::collection::vec((blob(60), blob(60)), 1..6),
    ) {
        let (schemas, blobs) = fixture();
        if let Ok(filter) = Filter::compile(&predicate, &schemas) {
            for (key, value) in &entries {
                let _ = filter.matches(&key.bytes(&blobs), &value.bytes(&blobs), &schemas);
            }
            let _ = filter.index_terms();
        }
    }

    #[test]
    fn random_java_patterns_never_panic(pattern in r"[a-cA(?<>=!:)\[\]{}\\^$|&.*+,0-9pPQExucdswbhk-]{0,16}", flags in any::<[bool; 4]>()) {
        let flags = Flags { case_insensitive: flags[0], unicode_case: flags[1], dotall: flags[2], unix_lines: flags[3], ..Flags::default() };
        if let Ok(regex) = java_regex::compile(&pattern, flags) {
            let _ = regex.is_match("aA.b\r\n(c)");
        }
    }
}
