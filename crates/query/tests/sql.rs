//! `crate::sql` against Hazelcast's own `SqlPredicate`: `fixtures/sql_hazelcast.txt` holds, for
//! each text in `fixtures/sql_cases.txt`, the predicate Hazelcast 5.6 parses it to (written by
//! `fixtures/SqlOracle.java`). Every text must give the same tree, or fail where Hazelcast fails,
//! except the few listed in `DEVIATIONS` where Hazelcast's tokenizer misreads the text.

use ferrogrid_query::predicate::{Operand, Predicate};
use ferrogrid_query::sql::parse;

/// Texts crate::sql reads differently from Hazelcast, with what crate::sql gives.
const DEVIATIONS: [(&str, &str); 5] = [
    // Hazelcast applies an operator only to operands on its left in postfix order: a second NOT
    // has none.
    ("NOT NOT a", "(not (not (= a 'true')))"),
    // Hazelcast finds IN lists only when written "in" or "IN".
    ("a In (1, 2)", "(in a '1' '2')"),
    // Hazelcast drops whatever word follows BETWEEN's first bound.
    ("a BETWEEN 1 OR 2", "error"),
    // Hazelcast names the attribute of a lone string after its placeholder ($1).
    ("'x'", "(= x 'true')"),
    // Hazelcast's parentheses group anything, values included.
    ("a = (5)", "error"),
];

fn value(operand: &Operand) -> String {
    match operand {
        Operand::Text(text) => format!("'{text}'"),
        Operand::Object(literal) if literal.is_null() => "null".to_owned(),
        Operand::Object(literal) => panic!("sql gives only text and null, not {literal:?}"),
    }
}

fn pattern(pattern: &Option<String>) -> String {
    pattern.as_ref().map_or_else(|| "null".to_owned(), |text| format!("'{text}'"))
}

/// The tree as SqlOracle.java prints Hazelcast's.
fn render(predicate: &Predicate) -> String {
    let list = |predicates: &[Predicate]| predicates.iter().map(render).collect::<Vec<_>>().join(" ");
    match predicate {
        Predicate::And(predicates) => format!("(and {})", list(predicates)),
        Predicate::Or(predicates) => format!("(or {})", list(predicates)),
        Predicate::Not(inner) => format!("(not {})", render(inner)),
        Predicate::SkipIndex(inner) => format!("(skip-index {})", render(inner)),
        Predicate::Equal { attribute, value: operand } => format!("(= {attribute} {})", value(operand)),
        Predicate::NotEqual { attribute, value: operand } => format!("(!= {attribute} {})", value(operand)),
        Predicate::GreaterLess { attribute, value: operand, equal, less } => {
            let operator = format!("{}{}", if *less { "<" } else { ">" }, if *equal { "=" } else { "" });
            format!("({operator} {attribute} {})", value(operand))
        }
        Predicate::Between { attribute, from, to } => format!("(between {attribute} {} {})", value(from), value(to)),
        Predicate::In { attribute, values } => {
            let values: Vec<String> = values.iter().map(value).collect();
            format!("(in {attribute} {})", values.join(" "))
        }
        Predicate::Like { attribute, pattern: written } => format!("(like {attribute} {})", pattern(written)),
        Predicate::ILike { attribute, pattern: written } => format!("(ilike {attribute} {})", pattern(written)),
        Predicate::Regex { attribute, pattern: written } => format!("(regex {attribute} {})", pattern(written)),
        other => panic!("sql does not give {other:?}"),
    }
}

#[test]
fn every_text_parses_as_hazelcast_parses_it() {
    let mut compared = 0;
    for line in include_str!("fixtures/sql_hazelcast.txt").lines() {
        let (text, hazelcast) = line.split_once('\t').expect("text, tab, result");
        let expected = match DEVIATIONS.iter().find(|(deviant, _)| *deviant == text) {
            Some((_, ours)) => ours.to_string(),
            None if hazelcast.starts_with("error") => "error".to_owned(),
            None => hazelcast.to_owned(),
        };
        let parsed = match parse(text) {
            Ok(predicate) => render(&predicate),
            Err(_) => "error".to_owned(),
        };
        assert_eq!(parsed, expected, "{text:?} (Hazelcast: {hazelcast})");
        compared += 1;
    }
    assert!(compared > 100, "the fixture has its cases");
    for (text, _) in DEVIATIONS {
        assert!(include_str!("fixtures/sql_hazelcast.txt").contains(&format!("{text}\t")), "{text} is a case");
    }
}
