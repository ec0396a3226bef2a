//! A scan split over shares ([`ferrogrid_sql::exec::parts`]) answers as one pass over every
//! entry does: the entries are cut into "partitions", each scanned on its own into a part,
//! each part sent through its bytes, and the parts run in partition order; the rows (in
//! order) or the failure must be those of `run` over all the entries at once.

use ferrogrid_query::write::write_data;
use ferrogrid_query::Value;
use ferrogrid_sql::exec::parts::{mode, Mode, Part, PartScanner};
use ferrogrid_sql::exec::{run, run_parts, Bounds, Deadline, Held};
use ferrogrid_sql::plan::SelectPlan;
use ferrogrid_sql::{prepare, Catalog, Code, Prepared};

mod common;

use common::{schemas, NoSamples};

fn catalog() -> Catalog {
    let ddl =
        "CREATE MAPPING t (__key INT, grp INT, name VARCHAR, amount BIGINT, price DOUBLE, cost DECIMAL, ok BOOLEAN) \
               TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')";
    let mut catalog = Catalog::default();
    match prepare(ddl, vec![], &catalog, &NoSamples).unwrap() {
        Prepared::CreateMapping { mapping, .. } => catalog.put(mapping),
        other => panic!("not a mapping: {other:?}"),
    }
    catalog
}

/// 300 entries, some with nulls, one with a name that is not text.
fn entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..300)
        .map(|i| {
            let name = if i % 17 == 0 { "null".to_owned() } else { format!("\"n{}\"", i % 23) };
            let cost = if i % 11 == 0 { "null".to_owned() } else { format!("{}.{}", i % 50, i % 7) };
            let json = format!(
                "{{\"grp\":{},\"name\":{name},\"amount\":{},\"price\":{},\"cost\":{cost},\"ok\":{}}}",
                i % 7,
                i * 1_000 - 40_000,
                (i as f64) * 0.37,
                i % 3 == 0
            );
            (write_data(&Value::Int(i)).unwrap(), write_data(&Value::Json(json)).unwrap())
        })
        .collect()
}

fn plan(text: &str) -> Box<SelectPlan> {
    match prepare(text, vec![], &catalog(), &NoSamples).unwrap() {
        Prepared::Select(plan) => plan,
        other => panic!("not a scan: {other:?}"),
    }
}

/// The statement over parts of `cut` entries each, every part through its bytes.
fn in_parts(plan: &SelectPlan, all: &[(Vec<u8>, Vec<u8>)], cut: usize) -> Result<Vec<Vec<Value>>, String> {
    let schemas = schemas();
    let held = held(1_000);
    let scanner = PartScanner::new(plan, &schemas, &held).map_err(|e| e.message)?;
    let parts = all.chunks(cut).map(|chunk| {
        let part = scanner.scan(chunk.iter().map(|(k, v)| (&k[..], &v[..])));
        let mut bytes = Vec::new();
        part.encode(&mut bytes);
        Part::decode(&bytes, &schemas).unwrap()
    });
    run_parts(plan, parts.collect::<Vec<_>>(), &schemas, 1_000, &Deadline::default())
        .map(|r| r.rows)
        .map_err(|e| e.message)
}

const STATEMENTS: &[(&str, Mode)] = &[
    ("SELECT grp, COUNT(*), COUNT(name), SUM(amount), AVG(amount), AVG(price), SUM(cost), AVG(cost), MIN(name), MAX(price) FROM t GROUP BY grp", Mode::Grouped),
    ("SELECT name, ok, COUNT(*), MIN(amount) FROM t WHERE price > 20 GROUP BY name, ok HAVING COUNT(*) > 1 ORDER BY name, ok", Mode::Grouped),
    ("SELECT COUNT(*), SUM(price), MAX(cost) FROM t WHERE amount < 0", Mode::Grouped),
    ("SELECT COUNT(*), SUM(price) FROM t WHERE grp > 100", Mode::Grouped),
    ("SELECT grp FROM t WHERE grp > 100 GROUP BY grp", Mode::Grouped),
    ("SELECT grp, COUNT(DISTINCT name), SUM(DISTINCT grp) FROM t GROUP BY grp", Mode::Filtered),
    ("SELECT __key, name FROM t WHERE price BETWEEN 10 AND 20", Mode::Filtered),
    ("SELECT __key FROM t ORDER BY price DESC LIMIT 7 OFFSET 2", Mode::Filtered),
    ("SELECT DISTINCT grp, ok FROM t", Mode::Filtered),
    ("SELECT __key, amount / (grp - grp) FROM t WHERE grp = 3", Mode::Filtered),
    ("SELECT __key FROM t WHERE amount / (grp - 4) > 0", Mode::Filtered),
    ("SELECT grp, SUM(amount / (grp - 5)) FROM t GROUP BY grp", Mode::Grouped),
    ("SELECT __key FROM t LIMIT 5", Mode::Filtered),
    ("SELECT a.__key FROM t a JOIN t b ON a.__key = b.amount", Mode::Sources),
    ("SELECT __key FROM t WHERE grp = 1 UNION ALL SELECT __key FROM t WHERE grp = 2", Mode::Sources),
    // ORDER BY with LIMIT: each part sends its best rows only (ties, nulls, offsets, errors)
    ("SELECT __key, grp FROM t ORDER BY grp LIMIT 20", Mode::Filtered),
    ("SELECT __key, name FROM t ORDER BY name DESC, grp LIMIT 15 OFFSET 5", Mode::Filtered),
    ("SELECT __key, cost FROM t WHERE ok ORDER BY cost LIMIT 9", Mode::Filtered),
    ("SELECT __key, amount / (grp - 3) FROM t ORDER BY price LIMIT 3", Mode::Filtered),
    ("SELECT __key FROM t ORDER BY grp, amount DESC LIMIT 0", Mode::Filtered),
    ("SELECT __key FROM t ORDER BY amount LIMIT 400", Mode::Filtered),
];

/// Equal, but for the last bits of DOUBLE sums (partial sums add in another order).
fn same(a: &Result<Vec<Vec<Value>>, String>, b: &Result<Vec<Vec<Value>>, String>) -> bool {
    let close = |x: &Value, y: &Value| match (x, y) {
        (Value::Double(x), Value::Double(y)) => (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
        _ => x == y,
    };
    match (a, b) {
        (Ok(a), Ok(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).all(|(a, b)| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| close(x, y)))
        }
        _ => a == b,
    }
}

#[test]
fn parts_answer_as_one_pass_does() {
    let all = entries();
    for (text, expected_mode) in STATEMENTS {
        let plan = plan(text);
        assert_eq!(mode(&plan), *expected_mode, "{text}");
        if *expected_mode == Mode::Sources {
            continue;
        }
        let whole = run(&plan, std::slice::from_ref(&all), &schemas(), 1_000).map(|r| r.rows).map_err(|e| e.message);
        for cut in [1, 7, 64, 300] {
            let parts = in_parts(&plan, &all, cut);
            assert!(same(&parts, &whole), "{text} in parts of {cut}:\n{parts:?}\n{whole:?}");
        }
    }
}

#[test]
fn joined_sources_travel_whole() {
    let all = entries();
    let plan = plan(STATEMENTS[13].0);
    let parts = all.chunks(50).map(|chunk| Part::Sources(vec![chunk.to_vec(), chunk.to_vec()]));
    let whole = run(&plan, &[all.clone(), all.clone()], &schemas(), 100_000).unwrap();
    assert_eq!(run_parts(&plan, parts.collect::<Vec<_>>(), &schemas(), 100_000, &Deadline::default()).unwrap(), whole);
}

#[test]
fn a_part_bounds_its_rows_and_groups() {
    let all = entries();
    let schemas = schemas();
    for text in ["SELECT __key FROM t", "SELECT __key, COUNT(*) FROM t GROUP BY __key"] {
        let plan = plan(text);
        let held = held(10);
        let scanner = PartScanner::new(&plan, &schemas, &held).unwrap();
        match scanner.scan(all.iter().map(|(k, v)| (&k[..], &v[..]))) {
            Part::Failed(error) => assert!(error.message.contains("more than 10 rows"), "{}", error.message),
            other => panic!("{text}: {other:?}"),
        }
    }
}

/// A member's count of what a statement holds: `rows` at most, and bytes enough for any
/// test's entries.
fn held(rows: usize) -> Held {
    Held::new(Bounds { rows, bytes: usize::MAX })
}

#[test]
fn a_share_bounds_the_rows_and_bytes_of_all_its_parts() {
    let all = entries();
    let schemas = schemas();
    let plan = plan("SELECT __key FROM t");
    let halves: Vec<&[(Vec<u8>, Vec<u8>)]> = vec![&all[..all.len() / 2], &all[all.len() / 2..]];
    let scan = |scanner: &PartScanner<'_>, half: &[(Vec<u8>, Vec<u8>)]| {
        scanner.scan(half.iter().map(|(k, v)| (&k[..], &v[..])))
    };
    // each half fits the bound; both do not: the second partition's part fails
    let rows = all.len() * 3 / 4;
    let by_rows = held(rows);
    let scanner = PartScanner::new(&plan, &schemas, &by_rows).unwrap();
    assert!(matches!(scan(&scanner, halves[0]), Part::Filtered(_)));
    match scan(&scanner, halves[1]) {
        Part::Failed(error) => assert!(error.message.contains(&format!("more than {rows} rows")), "{}", error.message),
        other => panic!("{other:?}"),
    }
    let unbounded = held(usize::MAX);
    let first = scan(&PartScanner::new(&plan, &schemas, &unbounded).unwrap(), halves[0]);
    let (_, bytes) = first.weight();
    let by_bytes = Held::new(Bounds { rows: usize::MAX, bytes: bytes + 1 });
    let scanner = PartScanner::new(&plan, &schemas, &by_bytes).unwrap();
    assert_eq!(scan(&scanner, halves[0]), first, "a part within the bound is whole");
    match scan(&scanner, halves[1]) {
        Part::Failed(error) => {
            assert!(error.message.contains("max-sql-bytes-per-query"), "{}", error.message);
            assert_eq!(error.code, ferrogrid_sql::Code::DataException);
        }
        other => panic!("{other:?}"),
    }
    let bounded = Held::new(Bounds { rows: 10, bytes: 100 });
    assert!(bounded.add(10, 100).is_ok() && !bounded.over(), "a statement holds up to its bounds");
    assert!(bounded.add(0, 1).is_err() && bounded.over());
}

#[test]
fn malformed_part_bytes_are_an_error_not_a_panic() {
    let schemas = schemas();
    let plan = plan(STATEMENTS[0].0);
    let held = held(1_000);
    let scanner = PartScanner::new(&plan, &schemas, &held).unwrap();
    let all = entries();
    let mut bytes = Vec::new();
    scanner.scan(all.iter().map(|(k, v)| (&k[..], &v[..]))).encode(&mut bytes);
    for end in 0..bytes.len() {
        assert!(Part::decode(&bytes[..end], &schemas).is_err(), "{end} of {} bytes", bytes.len());
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Part::decode(&longer, &schemas).is_err());
    assert!(Part::decode(&[9], &schemas).is_err());
}

#[test]
fn a_statement_past_its_deadline_fails_as_hazelcast_cancels_it() {
    let all = entries();
    let passed = Deadline::at(Some(std::time::Instant::now() - std::time::Duration::from_millis(1)));
    for text in [STATEMENTS[0].0, STATEMENTS[13].0] {
        let plan = plan(text);
        let parts = vec![Part::Sources(vec![all.clone(), all.clone()])];
        let parts = if mode(&plan) == Mode::Sources { parts } else { vec![Part::Filtered(all.clone())] };
        let error = run_parts(&plan, parts, &schemas(), 100_000, &passed).unwrap_err();
        assert_eq!(error.message, "The Jet SQL job failed: CANCEL_FORCEFUL", "{text}");
        let job = ferrogrid_sql::exec::runtime_error(&plan, error, 1);
        assert_eq!(job.message, "The Jet SQL job failed: CANCEL_FORCEFUL", "not wrapped again: {text}");
    }
}

#[test]
fn a_statement_its_client_closed_stops_with_the_cancellation_not_the_timeout() {
    let all = entries();
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let far = Some(std::time::Instant::now() + std::time::Duration::from_secs(3_600));
    let open = Deadline::at(far).closed_by(flag.clone());
    assert!(ferrogrid_sql::exec::check(&open).is_ok() && !open.is_closed());
    flag.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(open.is_closed(), "a clone sees the close too: {:?}", open.clone());
    for text in [STATEMENTS[0].0, STATEMENTS[13].0] {
        let plan = plan(text);
        let parts = vec![Part::Sources(vec![all.clone(), all.clone()])];
        let parts = if mode(&plan) == Mode::Sources { parts } else { vec![Part::Filtered(all.clone())] };
        let error = run_parts(&plan, parts, &schemas(), 100_000, &open).unwrap_err();
        assert_eq!((error.code, &*error.message), (Code::CancelledByUser, "Query was cancelled by the user"), "{text}");
        assert_eq!(Code::from_value(Code::CancelledByUser.value()), Code::CancelledByUser);
    }
}
