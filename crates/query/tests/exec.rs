//! Aggregations and projections against what Hazelcast 5.6's member answered for the same
//! requests over the same entries (`fixtures/exec.json`, see `fixtures/gen_exec.py`).
//!
//! Every aggregation runs twice: in one accumulator over the entries in the order the client
//! wrote them, and as one partial per entry (encoded, decoded) combined into a fresh one, as
//! partitions are. Results are compared byte for byte, except distinct sets, whose order in
//! Hazelcast depends on the order partitions finish: those are compared as sets of items.
//! Errors are compared by the Java exception Hazelcast raised.

mod oracle;

use ferrogrid_query::aggregation::{decode_aggregator_with, decode_projection, Aggregator};
use ferrogrid_query::data::read_object;
use ferrogrid_query::exec::{project, Accumulator, ExecError};
use serde_json::Value as Json;

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn in_one(aggregator: &Aggregator, entries: &Entries) -> Result<Option<Vec<u8>>, ExecError> {
    let schemas = oracle::schemas();
    let mut accumulator = Accumulator::new(aggregator);
    for (key, value) in entries {
        accumulator.accumulate(key, value, &schemas)?;
    }
    accumulator.result(&schemas)
}

fn per_partition(aggregator: &Aggregator, entries: &Entries) -> Result<Option<Vec<u8>>, ExecError> {
    let schemas = oracle::schemas();
    let mut combined = Accumulator::new(aggregator);
    for (key, value) in entries {
        let mut partial = Accumulator::new(aggregator);
        partial.accumulate(key, value, &schemas)?;
        let partial = Accumulator::decode(aggregator, &partial.encode()).expect("a partial decodes");
        combined.combine(partial)?;
    }
    combined.result(&schemas)
}

/// The Java exception a fixture's error names, or "unsupported" where the member answered
/// what the client could not read (Java serialization).
fn expected_exception(error: &str) -> &str {
    if error.contains("Missing Serializer for type-id: -100") || error.contains("Missing Serializer for type-id:-100") {
        return "unsupported";
    }
    let after = error.split("Exception from server: ").nth(1).unwrap_or(error);
    after.split(':').next().unwrap_or(after)
}

/// A case the member answered but the Python client failed to read into Python values (a set
/// of lists): nothing was recorded to compare with.
fn client_side(case: &Json) -> bool {
    case.get("error").and_then(Json::as_str).is_some_and(|error| error.starts_with("unhashable type"))
}

fn exception(error: &ExecError) -> &str {
    error.java_exception().unwrap_or("unsupported")
}

/// The items of a CanonicalizingHashSet blob, sorted.
fn set_items(blob: &[u8]) -> Vec<Vec<u8>> {
    let schemas = oracle::schemas();
    let count = i32::from_be_bytes(blob[17..21].try_into().unwrap());
    let mut offset = 21;
    let mut items = Vec::new();
    for _ in 0..count {
        let (_, end) = read_object(blob, offset, &schemas).unwrap();
        items.push(blob[offset..end].to_vec());
        offset = end;
    }
    assert_eq!(offset, blob.len());
    items.sort();
    items
}

/// Whether `got` is what the member answered for `case`.
fn matches(case: &Json, got: &Result<Option<Vec<u8>>, ExecError>, distinct: bool) -> bool {
    if let Some(error) = case.get("error") {
        let want = expected_exception(error.as_str().unwrap());
        return matches!(got, Err(error) if exception(error) == want);
    }
    let want = case["result"].as_str().map(|hex| hex::decode(hex).unwrap());
    match (got, want) {
        (Ok(Some(got)), Some(want)) if distinct => got[..21] == want[..21] && set_items(got) == set_items(&want),
        (Ok(got), want) => *got == want,
        (Err(_), _) => false,
    }
}

/// The orders partitions may hand the member their entries in, as far as these small maps
/// need: every rotation of the client's order, forwards and backwards.
fn orders(entries: &Entries) -> Vec<Entries> {
    let mut orders = Vec::new();
    for reversed in [false, true] {
        let mut base = entries.clone();
        if reversed {
            base.reverse();
        }
        for start in 0..base.len().max(1) {
            let mut order = base.clone();
            order.rotate_left(start.min(base.len()));
            orders.push(order);
        }
    }
    orders
}

#[test]
fn aggregations_answer_as_hazelcast_does() {
    let schemas = oracle::schemas();
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in oracle::json()["aggregations"].as_array().unwrap() {
        if client_side(case) {
            continue;
        }
        let map = case["map"].as_str().unwrap();
        let aggregator = decode_aggregator_with(&oracle::bytes(&case["aggregator"]), &schemas).unwrap();
        let entries = oracle::entries(map);
        let label = format!("{map} {aggregator:?}");
        let distinct = matches!(aggregator, Aggregator::Distinct { .. });
        let ours = in_one(&aggregator, &entries);
        let any_order = orders(&entries).iter().any(|order| matches(case, &in_one(&aggregator, order), distinct));
        if !any_order {
            failures.push(format!("{label}: got {:?}, member {}", ours.map(|r| r.map(hex::encode)), case));
        }
        let combined = orders(&entries).iter().any(|order| matches(case, &per_partition(&aggregator, order), distinct));
        if !combined {
            failures.push(format!("{label} per partition"));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(checked > 800, "only {checked} aggregations");
}

#[test]
fn projections_answer_as_hazelcast_does() {
    let schemas = oracle::schemas();
    for case in oracle::json()["projections"].as_array().unwrap() {
        let map = case["map"].as_str().unwrap();
        let projection = decode_projection(&oracle::bytes(&case["projection"])).unwrap();
        let label = format!("{map} {projection:?}");
        let results: Result<Vec<Option<Vec<u8>>>, ExecError> =
            oracle::entries(map).iter().map(|(key, value)| project(&projection, key, value, &schemas)).collect();
        if let Some(error) = case.get("error") {
            let want = expected_exception(error.as_str().unwrap());
            let error = results.expect_err(&label);
            assert_eq!(exception(&error), want, "{label}: {error}");
            continue;
        }
        let results = results.unwrap_or_else(|error| panic!("{label}: {error}"));
        let mut got: Vec<Option<String>> = results.iter().map(|r| r.as_deref().map(hex::encode)).collect();
        let mut want: Vec<Option<String>> =
            case["results"].as_array().unwrap().iter().map(|r| r.as_str().map(str::to_string)).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{label}");
    }
}
