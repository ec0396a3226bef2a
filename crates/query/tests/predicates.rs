//! Decodes the predicates, aggregators and projections the official Python client 5.7 wrote
//! (`fixtures/predicates.hex`, made by `fixtures/gen_predicates.py`) and compares each with the
//! tree it should give.

use std::collections::HashMap;

use ferrogrid_query::aggregation::{decode_aggregator, decode_projection, Aggregator, Projection};
use ferrogrid_query::predicate::{
    decode_predicate, decode_predicate_with, Anchor, IterationType, Literal, Operand, Predicate, PredicateError,
};
use ferrogrid_query::schema::{FieldDescriptor, Schema};
use ferrogrid_query::wire::WireError;

fn fixtures() -> HashMap<&'static str, Vec<u8>> {
    include_str!("fixtures/predicates.hex")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (name, hex) = line.split_once(' ').expect("name and hex");
            (name, from_hex(hex))
        })
        .collect()
}

fn from_hex(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|at| u8::from_str_radix(&hex[at..at + 2], 16).expect("hex")).collect()
}

fn literal(type_id: i32, payload: &[u8]) -> Literal {
    let mut bytes = type_id.to_be_bytes().to_vec();
    bytes.extend_from_slice(payload);
    Literal { bytes, offset: 0 }
}

fn int(value: i32) -> Literal {
    literal(-7, &value.to_be_bytes())
}

fn long(value: i64) -> Literal {
    literal(-8, &value.to_be_bytes())
}

fn double(value: f64) -> Literal {
    literal(-10, &value.to_be_bytes())
}

fn boolean(value: bool) -> Literal {
    literal(-4, &[u8::from(value)])
}

fn string(value: &str) -> Literal {
    let mut payload = (value.len() as i32).to_be_bytes().to_vec();
    payload.extend_from_slice(value.as_bytes());
    literal(-11, &payload)
}

fn object(literal: Literal) -> Operand {
    Operand::Object(literal)
}

fn text(value: &str) -> Operand {
    Operand::Text(value.to_owned())
}

fn equal(attribute: &str, value: Literal) -> Predicate {
    Predicate::Equal { attribute: attribute.to_owned(), value: object(value) }
}

/// Calls `visit` on every literal in `predicate`.
fn for_each_literal(predicate: &mut Predicate, visit: &mut dyn FnMut(&mut Literal)) {
    fn visit_operand(operand: &mut Operand, visit: &mut dyn FnMut(&mut Literal)) {
        if let Operand::Object(literal) = operand {
            visit(literal);
        }
    }
    match predicate {
        Predicate::Sql { predicate, .. } | Predicate::Not(predicate) | Predicate::SkipIndex(predicate) => {
            for_each_literal(predicate, visit)
        }
        Predicate::And(predicates) | Predicate::Or(predicates) => {
            predicates.iter_mut().for_each(|predicate| for_each_literal(predicate, visit))
        }
        Predicate::Between { from, to, .. } => {
            visit_operand(from, visit);
            visit_operand(to, visit);
        }
        Predicate::Equal { value, .. } | Predicate::NotEqual { value, .. } | Predicate::GreaterLess { value, .. } => {
            visit_operand(value, visit)
        }
        Predicate::In { values, .. } => values.iter_mut().for_each(|value| visit_operand(value, visit)),
        Predicate::Paging { predicate, comparator, anchors, .. } => {
            if let Some(predicate) = predicate {
                for_each_literal(predicate, visit);
            }
            if let Some(comparator) = comparator {
                visit(comparator);
            }
            for anchor in anchors {
                visit(&mut anchor.key);
                visit(&mut anchor.value);
            }
        }
        Predicate::Partition { key, predicate } => {
            visit(key);
            for_each_literal(predicate, visit);
        }
        Predicate::MultiPartition { keys, predicate } => {
            for key in keys {
                visit(key);
            }
            for_each_literal(predicate, visit);
        }
        Predicate::Like { .. }
        | Predicate::ILike { .. }
        | Predicate::Regex { .. }
        | Predicate::InstanceOf { .. }
        | Predicate::True
        | Predicate::False => {}
    }
}

/// Decodes fixture `name`, checks that every literal's offset points at its bytes in the blob,
/// and returns the tree with offsets zeroed (the expected trees do not spell them out).
fn decoded(fixtures: &HashMap<&str, Vec<u8>>, name: &str) -> Predicate {
    let blob = &fixtures[name];
    let mut predicate = decode_predicate(blob).unwrap_or_else(|error| panic!("{name}: {error}"));
    for_each_literal(&mut predicate, &mut |literal| {
        assert_eq!(&blob[literal.offset..literal.offset + literal.bytes.len()], &literal.bytes[..], "{name}");
        literal.offset = 0;
    });
    predicate
}

#[test]
fn every_predicate_fixture_is_decoded() {
    let fixtures = fixtures();
    let names = fixtures.keys().filter(|name| !name.starts_with("aggregator_") && !name.starts_with("projection_"));
    for name in names {
        match *name {
            // A Compact value needs its schema: see `a_compact_value_is_measured_with_its_schema`.
            "equal_compact" => assert!(matches!(
                decode_predicate(&fixtures[name]),
                Err(PredicateError::Wire(WireError::UnknownSchema { .. }))
            )),
            _ => {
                decoded(&fixtures, name);
            }
        }
    }
}

#[test]
fn comparisons_keep_their_values_as_written() {
    let fixtures = fixtures();
    let cases = [
        ("equal_string", equal("name", string("Joe"))),
        ("equal_int", equal("age", int(42))),
        ("equal_long", equal("id", long(1 << 40))),
        ("equal_double", equal("salary", double(1.5))),
        ("equal_boolean", equal("active", boolean(true))),
        ("equal_none", equal("manager", Literal::null())),
        ("equal_key", equal("__key", string("k1"))),
        ("equal_this_path", equal("this.address.city", string("Oslo"))),
        ("equal_decimal", equal("price", literal(-27, &[0, 0, 0, 1, 0x0f, 0, 0, 0, 1]))),
        ("equal_date", equal("born", literal(-51, &[0, 0, 0x07, 0xe8, 1, 2]))),
        ("equal_time", equal("at", literal(-52, &[1, 2, 3, 0, 0, 0, 0]))),
        ("equal_datetime", equal("at", literal(-54, &[0, 0, 7, 0xe8, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0]))),
        ("equal_uuid", equal("id", literal(-21, &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]))),
        ("equal_json", equal("this", literal(-130, &[0, 0, 0, 7, b'{', b'"', b'a', b'"', b':', b'1', b'}']))),
        ("equal_bytes", equal("blob", literal(-12, &[0, 0, 0, 2, b'a', b'b']))),
        ("not_equal", Predicate::NotEqual { attribute: "age".into(), value: object(int(42)) }),
        ("between", Predicate::Between { attribute: "age".into(), from: object(int(10)), to: object(int(20)) }),
        (
            "between_strings",
            Predicate::Between { attribute: "name".into(), from: object(string("a")), to: object(string("m")) },
        ),
        (
            "between_long",
            Predicate::Between { attribute: "id".into(), from: object(long(-(1 << 40))), to: object(long(1 << 40)) },
        ),
    ];
    for (name, expected) in cases {
        assert_eq!(decoded(&fixtures, name), expected, "{name}");
    }
    let mut list = vec![0, 0, 0, 3];
    list.extend_from_slice(&int(1).bytes);
    list.extend_from_slice(&string("a").bytes);
    list.extend_from_slice(&Literal::null().bytes);
    assert_eq!(decoded(&fixtures, "equal_list"), equal("tags", literal(-29, &list)));
}

#[test]
fn orderings_patterns_and_sets() {
    let fixtures = fixtures();
    let greater_less =
        |value, equal, less| Predicate::GreaterLess { attribute: "age".into(), value: object(int(value)), equal, less };
    let pattern = |pattern: Option<&str>| pattern.map(str::to_owned);
    let cases = [
        ("greater", greater_less(1, false, false)),
        ("greater_or_equal", greater_less(2, true, false)),
        ("less", greater_less(3, false, true)),
        ("less_or_equal", greater_less(4, true, true)),
        ("like", Predicate::Like { attribute: "name".into(), pattern: pattern(Some("J%n_")) }),
        ("like_none", Predicate::Like { attribute: "name".into(), pattern: None }),
        ("ilike", Predicate::ILike { attribute: "name".into(), pattern: pattern(Some("j%")) }),
        ("regex", Predicate::Regex { attribute: "name".into(), pattern: pattern(Some("J.*")) }),
        (
            "in",
            Predicate::In {
                attribute: "age".into(),
                values: vec![
                    object(int(1)),
                    object(string("two")),
                    object(double(3.0)),
                    Operand::null(),
                    object(boolean(true)),
                ],
            },
        ),
        ("in_empty", Predicate::In { attribute: "age".into(), values: vec![] }),
        ("instance_of", Predicate::InstanceOf { class_name: "com.example.Person".into() }),
        ("true", Predicate::True),
        ("false", Predicate::False),
    ];
    for (name, expected) in cases {
        assert_eq!(decoded(&fixtures, name), expected, "{name}");
    }
}

#[test]
fn connectives_nest() {
    let fixtures = fixtures();
    let not_b = Predicate::Not(Box::new(equal("b", string("x"))));
    assert_eq!(decoded(&fixtures, "and"), Predicate::And(vec![equal("a", int(1)), not_b]));
    assert_eq!(decoded(&fixtures, "and_empty"), Predicate::And(vec![]));
    let inner_or = Predicate::Or(vec![Predicate::True]);
    assert_eq!(decoded(&fixtures, "or"), Predicate::Or(vec![Predicate::True, Predicate::False, inner_or]));
    let not_true = Predicate::Not(Box::new(Predicate::True));
    assert_eq!(decoded(&fixtures, "not"), Predicate::Not(Box::new(not_true)));
    let sql = Predicate::Sql {
        text: "a = 1".into(),
        predicate: Box::new(Predicate::Equal { attribute: "a".into(), value: text("1") }),
    };
    let in_b = Predicate::In { attribute: "b".into(), values: vec![object(string("x")), object(string("y"))] };
    let between = Predicate::Between { attribute: "c".into(), from: object(double(1.0)), to: object(double(2.0)) };
    let expected = Predicate::Or(vec![Predicate::And(vec![sql, in_b]), Predicate::Not(Box::new(between))]);
    assert_eq!(decoded(&fixtures, "nested"), expected);
}

#[test]
fn a_sql_predicate_is_parsed_when_decoded() {
    let fixtures = fixtures();
    let or = Predicate::Or(vec![
        Predicate::GreaterLess { attribute: "age".into(), value: text("20"), equal: false, less: false },
        Predicate::Equal { attribute: "name".into(), value: text("Jo's") },
    ]);
    let parsed = Predicate::And(vec![Predicate::Equal { attribute: "active".into(), value: text("true") }, or]);
    let expected =
        Predicate::Sql { text: "active AND (age > 20 OR name = 'Jo''s')".into(), predicate: Box::new(parsed) };
    assert_eq!(decoded(&fixtures, "sql"), expected);
}

#[test]
fn paging_predicates_carry_their_position() {
    let fixtures = fixtures();
    let paging = |predicate: Option<Predicate>, page, page_size, iteration_type, anchors| Predicate::Paging {
        predicate: predicate.map(Box::new),
        comparator: None,
        page,
        page_size,
        iteration_type,
        anchors,
        user_code_namespace: None,
    };
    let first_page = paging(Some(equal("a", int(1))), 0, 10, IterationType::Entry, vec![]);
    assert_eq!(decoded(&fixtures, "paging"), first_page);
    assert_eq!(decoded(&fixtures, "paging_no_inner"), paging(None, 0, 5, IterationType::Entry, vec![]));
    let anchors = vec![
        Anchor { page: 0, key: string("k3"), value: int(30) },
        Anchor { page: 1, key: string("k6"), value: int(60) },
    ];
    let older = Predicate::GreaterLess { attribute: "age".into(), value: object(int(20)), equal: false, less: false };
    let third_page = paging(Some(older), 2, 3, IterationType::Key, anchors);
    assert_eq!(decoded(&fixtures, "paging_anchors"), third_page);
    // Java clients since 5.4 write a user code namespace (here null) first.
    assert_eq!(decoded(&fixtures, "paging_java"), paging(Some(Predicate::True), 0, 7, IterationType::Value, vec![]));
}

#[test]
fn partition_predicates_carry_their_keys() {
    let fixtures = fixtures();
    let partition = Predicate::Partition { key: string("key-1"), predicate: Box::new(equal("a", int(1))) };
    assert_eq!(decoded(&fixtures, "partition"), partition);
    let multi = Predicate::MultiPartition { keys: vec![string("k1"), int(2)], predicate: Box::new(Predicate::True) };
    assert_eq!(decoded(&fixtures, "multi_partition"), multi);
    let listed = Predicate::MultiPartition { keys: vec![string("k1")], predicate: Box::new(Predicate::False) };
    assert_eq!(decoded(&fixtures, "multi_partition_list"), listed);
}

#[test]
fn a_portable_value_keeps_its_origin() {
    let fixtures = fixtures();
    let blob = &fixtures["equal_portable"];
    let Predicate::Equal { value: Operand::Object(person), .. } = decode_predicate(blob).expect("decoded") else {
        panic!("an equal predicate");
    };
    assert_eq!(person.type_id(), -1);
    // The record's first int is its end, an absolute position in the blob.
    let end = i32::from_be_bytes(person.bytes[16..20].try_into().expect("4 bytes"));
    assert_eq!(end as usize, person.offset + person.bytes.len());
    assert_eq!(person.offset + person.bytes.len(), blob.len());
}

#[test]
fn a_compact_value_is_measured_with_its_schema() {
    let fixtures = fixtures();
    let blob = &fixtures["equal_compact"];
    let fields = [("active", 1), ("age", 9), ("name", 17)]
        .map(|(name, kind)| FieldDescriptor { name: name.into(), kind })
        .to_vec();
    let schema = Schema::new("employee", fields);
    let schema_id = schema.id();
    let Err(PredicateError::Wire(WireError::UnknownSchema { schema_id: missing, .. })) = decode_predicate(blob) else {
        panic!("a Compact value needs its schema");
    };
    assert_eq!(missing, schema_id, "the id the client computed");
    let schemas = HashMap::from([(schema_id, schema)]);
    let Predicate::Equal { attribute, value: Operand::Object(employee) } =
        decode_predicate_with(blob, &schemas).expect("decoded")
    else {
        panic!("an equal predicate");
    };
    assert_eq!(attribute, "this");
    assert_eq!(employee.type_id(), -55);
    assert_eq!(employee.offset + employee.bytes.len(), blob.len());
}

#[test]
fn every_aggregator_fixture_is_decoded() {
    let fixtures = fixtures();
    let salary = || Some("salary".to_owned());
    let null = Literal::null;
    let mut cases = vec![
        ("count", Aggregator::Count { attribute: salary(), count: 0 }),
        ("distinct", Aggregator::Distinct { attribute: salary(), values: vec![] }),
        ("double_avg", Aggregator::DoubleAverage { attribute: salary(), sum: 0.0, count: 0 }),
        ("double_sum", Aggregator::DoubleSum { attribute: salary(), sum: 0.0 }),
        ("fixed_point_sum", Aggregator::FixedPointSum { attribute: salary(), sum: 0 }),
        ("floating_point_sum", Aggregator::FloatingPointSum { attribute: salary(), sum: 0.0 }),
        ("int_avg", Aggregator::IntegerAverage { attribute: salary(), sum: 0, count: 0 }),
        ("int_sum", Aggregator::IntegerSum { attribute: salary(), sum: 0 }),
        ("long_avg", Aggregator::LongAverage { attribute: salary(), sum: 0, count: 0 }),
        ("long_sum", Aggregator::LongSum { attribute: salary(), sum: 0 }),
        ("max", Aggregator::Max { attribute: salary(), max: null() }),
        ("min", Aggregator::Min { attribute: salary(), min: null() }),
        ("number_avg", Aggregator::NumberAverage { attribute: salary(), sum: 0.0, count: 0 }),
    ];
    let without_attribute: Vec<_> = cases
        .iter()
        .map(|(name, aggregator)| {
            let mut aggregator = aggregator.clone();
            strip_attribute(&mut aggregator);
            (format!("{name}_this"), aggregator)
        })
        .collect();
    let age = || Some("age".to_owned());
    cases.push(("max_by", Aggregator::MaxBy { attribute: age(), max_value: null(), max_entry: null() }));
    cases.push(("min_by", Aggregator::MinBy { attribute: age(), min_value: null(), min_entry: null() }));
    let decimal_zero = literal(-27, &[0, 0, 0, 1, 0, 0, 0, 0, 0]);
    let integer_zero = literal(-26, &[0, 0, 0, 1, 0]);
    let count = || Some("count".to_owned());
    let price = Some("price".to_owned());
    cases.extend([
        ("big_decimal_avg", Aggregator::BigDecimalAverage { attribute: price, sum: decimal_zero.clone(), count: 0 }),
        ("big_decimal_sum", Aggregator::BigDecimalSum { attribute: None, sum: decimal_zero }),
        ("big_integer_avg", Aggregator::BigIntegerAverage { attribute: count(), sum: integer_zero.clone(), count: 0 }),
        ("big_integer_sum", Aggregator::BigIntegerSum { attribute: count(), sum: integer_zero }),
    ]);
    let cases = cases.into_iter().map(|(name, aggregator)| (name.to_owned(), aggregator)).chain(without_attribute);
    for (name, expected) in cases {
        let blob = &fixtures[format!("aggregator_{name}").as_str()];
        let mut aggregator = decode_aggregator(blob).unwrap_or_else(|error| panic!("{name}: {error}"));
        zero_offsets(&mut aggregator);
        assert_eq!(aggregator, expected, "{name}");
    }
}

fn strip_attribute(aggregator: &mut Aggregator) {
    match aggregator {
        Aggregator::Count { attribute, .. }
        | Aggregator::Distinct { attribute, .. }
        | Aggregator::DoubleAverage { attribute, .. }
        | Aggregator::DoubleSum { attribute, .. }
        | Aggregator::FixedPointSum { attribute, .. }
        | Aggregator::FloatingPointSum { attribute, .. }
        | Aggregator::IntegerAverage { attribute, .. }
        | Aggregator::IntegerSum { attribute, .. }
        | Aggregator::LongAverage { attribute, .. }
        | Aggregator::LongSum { attribute, .. }
        | Aggregator::Max { attribute, .. }
        | Aggregator::Min { attribute, .. }
        | Aggregator::NumberAverage { attribute, .. } => *attribute = None,
        other => panic!("no attribute-less fixture for {other:?}"),
    }
}

fn zero_offsets(aggregator: &mut Aggregator) {
    match aggregator {
        Aggregator::BigDecimalAverage { sum, .. }
        | Aggregator::BigDecimalSum { sum, .. }
        | Aggregator::BigIntegerAverage { sum, .. }
        | Aggregator::BigIntegerSum { sum, .. }
        | Aggregator::Max { max: sum, .. }
        | Aggregator::Min { min: sum, .. } => sum.offset = 0,
        Aggregator::MaxBy { max_value: value, max_entry: entry, .. }
        | Aggregator::MinBy { min_value: value, min_entry: entry, .. } => {
            value.offset = 0;
            entry.offset = 0;
        }
        Aggregator::Distinct { values, .. } => values.iter_mut().for_each(|value| value.offset = 0),
        _ => {}
    }
}

#[test]
fn every_projection_fixture_is_decoded() {
    let fixtures = fixtures();
    let single = Projection::SingleAttribute { attribute: "address.city".into() };
    assert_eq!(decode_projection(&fixtures["projection_single"]), Ok(single));
    let attributes = ["name", "age", "__key"].map(str::to_owned).to_vec();
    assert_eq!(decode_projection(&fixtures["projection_multi"]), Ok(Projection::MultiAttribute { attributes }));
    assert_eq!(decode_projection(&fixtures["projection_identity"]), Ok(Projection::Identity));
}

#[test]
fn blobs_of_the_wrong_kind_are_named() {
    let fixtures = fixtures();
    assert!(decode_predicate(&fixtures["aggregator_count"]).is_err());
    assert!(decode_aggregator(&fixtures["true"]).is_err());
    assert!(decode_projection(&fixtures["aggregator_count"]).is_err());
}
