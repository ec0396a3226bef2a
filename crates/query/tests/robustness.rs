//! Malformed input is an error, never a panic: truncated and garbled client blobs, random
//! bytes and random texts. And a printed predicate parses back to itself.

use std::collections::HashMap;
use std::sync::OnceLock;

use ferrogrid_query::aggregation::{decode_aggregator, decode_projection};
use ferrogrid_query::predicate::{decode_predicate_with, Operand, Predicate};
use ferrogrid_query::schema::{FieldDescriptor, Schema};
use ferrogrid_query::sql::parse;
use proptest::prelude::*;

fn fixtures() -> Vec<Vec<u8>> {
    include_str!("fixtures/predicates.hex")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let hex = line.split_once(' ').expect("name and hex").1;
            (0..hex.len()).step_by(2).map(|at| u8::from_str_radix(&hex[at..at + 2], 16).expect("hex")).collect()
        })
        .collect()
}

/// The schema of the Compact value in the fixtures.
fn schemas() -> &'static HashMap<i64, Schema> {
    static SCHEMAS: OnceLock<HashMap<i64, Schema>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let fields = [("active", 1), ("age", 9), ("name", 17)]
            .map(|(name, kind)| FieldDescriptor { name: name.into(), kind })
            .to_vec();
        let schema = Schema::new("employee", fields);
        HashMap::from([(schema.id(), schema)])
    })
}

/// Runs every decoder on `bytes`; none may panic. Whether any decoded it.
fn decode_all(bytes: &[u8]) -> bool {
    let predicate = decode_predicate_with(bytes, schemas()).is_ok();
    let aggregator = decode_aggregator(bytes).is_ok();
    let projection = decode_projection(bytes).is_ok();
    predicate || aggregator || projection
}

#[test]
fn every_truncated_fixture_is_an_error() {
    for blob in fixtures() {
        assert!(decode_all(&blob), "the whole blob decodes: {blob:02x?}");
        for length in 0..blob.len() {
            assert!(!decode_all(&blob[..length]), "a prefix of {length} bytes decodes: {blob:02x?}");
        }
    }
}

proptest! {
    #[test]
    fn garbled_fixtures_never_panic(
        pick in any::<prop::sample::Index>(),
        changes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let fixtures = fixtures();
        let mut blob = fixtures[pick.index(fixtures.len())].clone();
        for (at, byte) in changes {
            let index = at.index(blob.len());
            blob[index] = byte;
        }
        decode_all(&blob);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        decode_all(&bytes);
        let mut predicate = vec![0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe, 1, 0xff, 0xff, 0xff, 0xec];
        predicate.extend_from_slice(&bytes);
        decode_all(&predicate);
    }

    #[test]
    fn random_texts_never_panic(text in "\\PC{0,40}") {
        let _ = parse(&text);
    }

    #[test]
    fn texts_of_sql_tokens_never_panic(
        words in prop::collection::vec(
            prop::sample::select(vec![
                "a", "b.c", "%d", "this.e", "'x'", "'it''s'", "'", "''", "null", "5", "-1.5", "(", ")", ",", "=",
                "==", "!=", "<>", "<", "<=", ">", ">=", "!", "AND", "or", "Not", "between", "IN", "like", "ILIKE",
                "regex",
            ]),
            0..20,
        ),
    ) {
        let _ = parse(&words.join(" "));
        let _ = parse(&words.concat());
    }

    #[test]
    fn printed_predicates_parse_back(predicate in predicate_tree()) {
        prop_assert_eq!(parse(&print(&predicate)), Ok(flatten(predicate)));
    }
}

fn attribute() -> impl Strategy<Value = String> {
    "f[a-z0-9_]{0,4}(\\.[a-z]{1,3}|\\[any\\]|\\[0\\])?"
}

/// Texts any string can hold, except a lone quote (Hazelcast reads `''''` as two quotes).
fn value() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 %_'.-]{0,6}".prop_filter("not a lone quote", |text| text != "'")
}

fn leaf() -> impl Strategy<Value = Predicate> {
    let text = || value().prop_map(Operand::Text);
    prop_oneof![
        (attribute(), text()).prop_map(|(attribute, value)| Predicate::Equal { attribute, value }),
        (attribute(), text()).prop_map(|(attribute, value)| Predicate::NotEqual { attribute, value }),
        (attribute(), text(), any::<bool>(), any::<bool>())
            .prop_map(|(attribute, value, equal, less)| Predicate::GreaterLess { attribute, value, equal, less }),
        (attribute(), text(), text()).prop_map(|(attribute, from, to)| Predicate::Between { attribute, from, to }),
        (attribute(), prop::collection::vec(text(), 1..4))
            .prop_map(|(attribute, values)| Predicate::In { attribute, values }),
        (attribute(), value()).prop_map(|(attribute, pattern)| Predicate::Like { attribute, pattern: Some(pattern) }),
        (attribute(), value()).prop_map(|(attribute, pattern)| Predicate::ILike { attribute, pattern: Some(pattern) }),
        (attribute(), value()).prop_map(|(attribute, pattern)| Predicate::Regex { attribute, pattern: Some(pattern) }),
    ]
}

fn predicate_tree() -> impl Strategy<Value = Predicate> {
    leaf().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(Predicate::And),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Predicate::Or),
            inner.prop_map(|predicate| Predicate::Not(Box::new(predicate))),
        ]
    })
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn operand(operand: &Operand) -> String {
    match operand {
        Operand::Text(text) => quote(text),
        Operand::Object(_) => "null".to_owned(),
    }
}

/// `predicate` as sql text, every compound operand in parentheses.
fn print(predicate: &Predicate) -> String {
    let join = |predicates: &[Predicate], connective: &str| {
        predicates.iter().map(|inner| format!("({})", print(inner))).collect::<Vec<_>>().join(connective)
    };
    match predicate {
        Predicate::And(predicates) => join(predicates, " AND "),
        Predicate::Or(predicates) => join(predicates, " or "),
        Predicate::Not(inner) => format!("NOT ({})", print(inner)),
        Predicate::Equal { attribute, value } => format!("{attribute} = {}", operand(value)),
        Predicate::NotEqual { attribute, value } => format!("{attribute}<>{}", operand(value)),
        Predicate::GreaterLess { attribute, value, equal, less } => {
            let operator = format!("{}{}", if *less { "<" } else { ">" }, if *equal { "=" } else { "" });
            format!("{attribute} {operator} {}", operand(value))
        }
        Predicate::Between { attribute, from, to } => {
            format!("{attribute} BETWEEN {} and {}", operand(from), operand(to))
        }
        Predicate::In { attribute, values } => {
            format!("{attribute} in ({})", values.iter().map(operand).collect::<Vec<_>>().join(", "))
        }
        Predicate::Like { attribute, pattern } => {
            format!("{attribute} LIKE {}", quote(pattern.as_deref().unwrap_or("")))
        }
        Predicate::ILike { attribute, pattern } => {
            format!("{attribute} ilike {}", quote(pattern.as_deref().unwrap_or("")))
        }
        Predicate::Regex { attribute, pattern } => {
            format!("{attribute} REGEX {}", quote(pattern.as_deref().unwrap_or("")))
        }
        other => unreachable!("not generated: {other:?}"),
    }
}

/// The tree the parser gives for the printed text: operands of AND inside AND (and OR inside
/// OR) are merged, as Hazelcast merges them.
fn flatten(predicate: Predicate) -> Predicate {
    let merge = |predicates: Vec<Predicate>, and: bool| {
        let mut flat = Vec::new();
        for inner in predicates.into_iter().map(flatten) {
            match (inner, and) {
                (Predicate::And(children), true) | (Predicate::Or(children), false) => flat.extend(children),
                (inner, _) => flat.push(inner),
            }
        }
        flat
    };
    match predicate {
        Predicate::And(predicates) => Predicate::And(merge(predicates, true)),
        Predicate::Or(predicates) => Predicate::Or(merge(predicates, false)),
        Predicate::Not(inner) => Predicate::Not(Box::new(flatten(*inner))),
        leaf => leaf,
    }
}
