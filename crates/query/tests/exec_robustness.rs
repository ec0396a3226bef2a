//! Arbitrary and garbled input never panics the executor: entries of random bytes, garbled
//! copies of the member's fixtures, random partials, and random projections.

mod oracle;

use ferrogrid_query::aggregation::{decode_aggregator_with, Aggregator, Projection};
use ferrogrid_query::exec::{project, Accumulator};
use ferrogrid_query::order::compare_entries;
use ferrogrid_query::predicate::IterationType;
use proptest::prelude::*;
use std::sync::OnceLock;

fn aggregators() -> &'static [Aggregator] {
    static AGGREGATORS: OnceLock<Vec<Aggregator>> = OnceLock::new();
    AGGREGATORS.get_or_init(|| {
        let schemas = oracle::schemas();
        let mut aggregators: Vec<Aggregator> = oracle::json()["aggregations"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|case| decode_aggregator_with(&oracle::bytes(&case["aggregator"]), &schemas).ok())
            .collect();
        aggregators.dedup();
        aggregators
    })
}

/// A fixture entry with one byte changed, or random bytes.
fn entry() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    let maps = ["people", "ints", "json", "decimals", "strings", "doubles"];
    let garbled = (0..maps.len(), any::<prop::sample::Index>(), any::<usize>(), any::<u8>()).prop_map(
        move |(map, which, at, byte)| {
            let entries = oracle::entries(maps[map]);
            let (key, mut value) = entries[which.index(entries.len())].clone();
            if !value.is_empty() {
                let at = at % value.len();
                value[at] = byte;
            }
            (key, value)
        },
    );
    let random = (prop::collection::vec(any::<u8>(), 0..64), prop::collection::vec(any::<u8>(), 0..64));
    prop_oneof![garbled, random]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn accumulating_anything_never_panics(which in any::<prop::sample::Index>(), entries in prop::collection::vec(entry(), 1..6)) {
        let schemas = oracle::schemas();
        let aggregators = aggregators();
        let aggregator = &aggregators[which.index(aggregators.len())];
        let mut accumulator = Accumulator::new(aggregator);
        for (key, value) in &entries {
            let before = accumulator.clone();
            if accumulator.accumulate(key, value, &schemas).is_err() {
                prop_assert_eq!(&accumulator, &before, "a failed accumulate changes nothing");
            }
        }
        let _ = accumulator.result(&schemas);
        let decoded = Accumulator::decode(aggregator, &accumulator.encode());
        if let Ok(decoded) = decoded {
            prop_assert_eq!(decoded.result(&schemas), accumulator.result(&schemas));
        }
    }

    #[test]
    fn decoding_random_partials_never_panics(which in any::<prop::sample::Index>(), bytes in prop::collection::vec(any::<u8>(), 0..80)) {
        let aggregators = aggregators();
        let aggregator = &aggregators[which.index(aggregators.len())];
        if let Ok(mut accumulator) = Accumulator::decode(aggregator, &bytes) {
            let _ = accumulator.result(&oracle::schemas());
            let _ = accumulator.combine(Accumulator::new(aggregator));
        }
    }

    #[test]
    fn projecting_and_ordering_anything_never_panics(
        (key, value) in entry(),
        (other_key, other_value) in entry(),
        attribute in "(this|__key|name|age|address\\.city|tags\\[any\\]|scores\\[1\\]|a\\.b)",
    ) {
        let schemas = oracle::schemas();
        for projection in [
            Projection::Identity,
            Projection::SingleAttribute { attribute: attribute.clone() },
            Projection::MultiAttribute { attributes: vec![attribute.clone(), "__key".into()] },
        ] {
            let _ = project(&projection, &key, &value, &schemas);
        }
        for iteration in [IterationType::Key, IterationType::Value, IterationType::Entry] {
            let _ = compare_entries(iteration, (&key, &value), (&other_key, &other_value), &schemas);
        }
    }
}
