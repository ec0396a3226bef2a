//! Paging order and Java hash codes against Hazelcast 5.6's member (`fixtures/exec.json`): the
//! member's hashCode() of every value it deserialized, and the order it paged maps in without
//! a comparator (page size 1: the anchors list every entry in order).

mod oracle;

use ferrogrid_query::data::read_value;
use ferrogrid_query::exec::ExecError;
use ferrogrid_query::order::{compare_entries, java_hash_code};
use ferrogrid_query::predicate::IterationType;
use std::cmp::Ordering;

#[test]
fn hash_codes_are_the_members() {
    let schemas = oracle::schemas();
    let mut checked = 0;
    for case in oracle::json()["values"].as_array().unwrap() {
        let (Some(class), Some(hash)) = (case["class"].as_str(), case["hash"].as_str()) else { continue };
        let value = read_value(&oracle::bytes(&case["hex"]), &schemas).unwrap();
        let ours = java_hash_code(&value);
        if class.starts_with('[') || class.contains("GenericRecord") || class.ends_with("List") {
            // Arrays hash by identity, lists by their items (a Value::Array no longer says
            // which it was), records by fields in a way not reproduced here.
            assert!(ours.is_err(), "{}: {class} has no reproducible hashCode", case["name"]);
            continue;
        }
        assert_eq!(ours, Ok(hash.parse::<i32>().unwrap()), "{} ({class})", case["name"]);
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} hash codes checked");
}

type Entry = (Vec<u8>, Vec<u8>);

/// A stable insertion sort with a comparator that may fail (as Java's sort fails on the first
/// pair it cannot compare).
fn sorted(mut entries: Vec<Entry>, iteration: IterationType) -> Result<Vec<Entry>, ExecError> {
    let schemas = oracle::schemas();
    for at in 1..entries.len() {
        let mut position = at;
        while position > 0 {
            let (left, right) = (&entries[position - 1], &entries[position]);
            let order = compare_entries(iteration, (&left.0, &left.1), (&right.0, &right.1), &schemas)?;
            if order != Ordering::Greater {
                break;
            }
            entries.swap(position - 1, position);
            position -= 1;
        }
    }
    Ok(entries)
}

#[test]
fn paging_orders_entries_as_the_member_does() {
    let mut checked = 0;
    for case in oracle::json()["paging"].as_array().unwrap() {
        let map = case["map"].as_str().unwrap();
        let iteration = match case["iteration"].as_str().unwrap() {
            "KEY" => IterationType::Key,
            "VALUE" => IterationType::Value,
            _ => IterationType::Entry,
        };
        let label = format!("{map} {iteration:?}");
        let ours = sorted(oracle::entries(map), iteration);
        if let Some(error) = case["error"].as_str() {
            let want = error.split("Exception from server: ").nth(1).unwrap().split(':').next().unwrap();
            let error = ours.expect_err(&label);
            assert_eq!(error.java_exception(), Some(want), "{label}: {error}");
            continue;
        }
        let ours: Vec<String> =
            ours.unwrap_or_else(|error| panic!("{label}: {error}")).iter().map(|e| hex::encode(&e.0)).collect();
        let members: Vec<String> =
            case["anchors"].as_array().unwrap().iter().map(|anchor| anchor[0].as_str().unwrap().to_string()).collect();
        assert_eq!(ours, members, "{label}");
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} paging orders checked");
}
