//! The SQL engine end to end over entries serialized as clients write them: mappings, queries,
//! DML, errors.

use ferrogrid_query::write::write_data;
use ferrogrid_query::Value;
use ferrogrid_sql::exec::run;
use ferrogrid_sql::{prepare, Catalog, Code, Prepared};

mod common;

use common::{schemas, NoSamples};

fn catalog_with(ddl: &[&str]) -> Catalog {
    let mut catalog = Catalog::default();
    for text in ddl {
        match prepare(text, vec![], &catalog, &NoSamples).unwrap() {
            Prepared::CreateMapping { mapping, .. } => catalog.put(mapping),
            other => panic!("not a mapping: {other:?}"),
        }
    }
    catalog
}

fn entries(pairs: &[(Value, Value)]) -> Vec<(Vec<u8>, Vec<u8>)> {
    pairs.iter().map(|(k, v)| (write_data(k).unwrap(), write_data(v).unwrap())).collect()
}

fn query(
    catalog: &Catalog,
    text: &str,
    params: Vec<Value>,
    data: &[Vec<(Vec<u8>, Vec<u8>)>],
) -> Result<Vec<Vec<Value>>, ferrogrid_sql::SqlError> {
    match prepare(text, params, catalog, &NoSamples)? {
        Prepared::Select(plan) => run(&plan, data, &schemas(), 1_000_000).map(|r| r.rows),
        Prepared::Rows(r) => Ok(r.rows),
        other => panic!("not a query: {other:?}"),
    }
}

fn nums() -> (Catalog, Vec<ferrogrid_sql::Entries>) {
    let catalog = catalog_with(&["CREATE MAPPING nums TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')"]);
    let data = entries(&(1..=10).map(|i| (Value::Int(i), Value::String(format!("v{i}")))).collect::<Vec<_>>());
    (catalog, vec![data])
}

#[test]
fn select_where_order_limit() {
    let (catalog, data) = nums();
    let rows = query(
        &catalog,
        "SELECT __key, this FROM nums WHERE __key > 3 AND __key <= 8 ORDER BY __key DESC LIMIT 3",
        vec![],
        &data,
    )
    .unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Value::Int(8), Value::String("v8".into())],
            vec![Value::Int(7), Value::String("v7".into())],
            vec![Value::Int(6), Value::String("v6".into())]
        ]
    );
}

#[test]
fn aggregates_and_groups() {
    let (catalog, data) = nums();
    let rows = query(&catalog, "SELECT COUNT(*), SUM(__key), MIN(this), MAX(__key) FROM nums", vec![], &data).unwrap();
    assert_eq!(rows, vec![vec![Value::Long(10), Value::Long(55), Value::String("v1".into()), Value::Int(10)]]);
    let rows = query(
        &catalog,
        "SELECT __key % 2 AS parity, COUNT(*) c FROM nums GROUP BY __key % 2 HAVING COUNT(*) > 1 ORDER BY parity",
        vec![],
        &data,
    )
    .unwrap();
    assert_eq!(rows, vec![vec![Value::Byte(0), Value::Long(5)], vec![Value::Byte(1), Value::Long(5)]]);
}

#[test]
fn parameters_and_point_lookup() {
    let (catalog, data) = nums();
    match prepare("SELECT this FROM nums WHERE __key = ?", vec![Value::Int(4)], &catalog, &NoSamples).unwrap() {
        Prepared::Select(plan) => {
            assert_eq!(plan.sources[0].keys, Some(vec![write_data(&Value::Int(4)).unwrap()]));
            assert_eq!(run(&plan, &data, &schemas(), 100).unwrap().rows, vec![vec![Value::String("v4".into())]]);
        }
        other => panic!("{other:?}"),
    }
    let error = prepare("SELECT this FROM nums WHERE __key = ?", vec![], &catalog, &NoSamples).unwrap_err();
    assert_eq!(error.code, Code::DataException);
}

#[test]
fn errors_are_hazelcasts() {
    let (catalog, _) = nums();
    let missing = prepare("SELECT * FROM nope", vec![], &catalog, &NoSamples).unwrap_err();
    assert_eq!(missing.code, Code::ObjectNotFound);
    assert!(
        missing.message.contains("Object 'nope' not found, did you forget to CREATE MAPPING?"),
        "{}",
        missing.message
    );
    let syntax = prepare("SELECT * FROM", vec![], &catalog, &NoSamples).unwrap_err();
    assert_eq!(syntax.code, Code::Parsing);
    assert!(
        syntax.message.starts_with("Encountered \"<EOF>\" at line 1, column 13.\nWas expecting one of:\n"),
        "{}",
        syntax.message
    );
    let cast = prepare("SELECT CAST('abc' AS INT)", vec![], &catalog, &NoSamples).unwrap_err();
    assert_eq!(
        cast.message,
        "From line 1, column 8 to line 1, column 25: CAST function cannot convert literal 'abc' to type INTEGER: Cannot parse VARCHAR value to INTEGER"
    );
    let column = prepare("SELECT nope FROM nums", vec![], &catalog, &NoSamples).unwrap_err();
    assert!(column.message.contains("Column 'nope' not found"), "{}", column.message);
}

#[test]
fn literals_and_functions() {
    let catalog = Catalog::default();
    let rows = query(
        &catalog,
        "SELECT 1 + 2, UPPER('ab') || 'c', CAST('12' AS INTEGER), ABS(-5), COALESCE(NULL, 'x'), 7 / 2, LENGTH('héllo')",
        vec![],
        &[],
    )
    .unwrap();
    assert_eq!(
        rows,
        vec![vec![
            Value::Byte(3),
            Value::String("ABc".into()),
            Value::Int(12),
            Value::Byte(5),
            Value::String("x".into()),
            Value::Byte(3),
            Value::Int(5)
        ]]
    );
    let like =
        query(&catalog, "SELECT 'abc' LIKE 'a%', 'a_c' LIKE 'a!_c' ESCAPE '!', 'abc' NOT LIKE '_b_'", vec![], &[])
            .unwrap();
    assert_eq!(like, vec![vec![Value::Bool(true), Value::Bool(true), Value::Bool(false)]]);
}

#[test]
fn insert_encodes_entries_as_clients_do() {
    let (catalog, _) = nums();
    match prepare(
        "INSERT INTO nums VALUES (1, 'a'), (?, ?)",
        vec![Value::Int(2), Value::String("b".into())],
        &catalog,
        &NoSamples,
    )
    .unwrap()
    {
        Prepared::Insert { map, entries, overwrite, .. } => {
            assert_eq!(map, "nums");
            assert!(!overwrite);
            assert_eq!(
                entries[0],
                (write_data(&Value::Int(1)).unwrap(), write_data(&Value::String("a".into())).unwrap())
            );
            assert_eq!(entries[1].0, write_data(&Value::Int(2)).unwrap());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        prepare("SINK INTO nums VALUES (1, 'a')", vec![], &catalog, &NoSamples).unwrap(),
        Prepared::Insert { overwrite: true, .. }
    ));
}

#[test]
fn update_and_delete_decide_per_entry() {
    let (catalog, data) = nums();
    let Prepared::Change(change) =
        prepare("UPDATE nums SET this = this || '!' WHERE __key < 3", vec![], &catalog, &NoSamples).unwrap()
    else {
        panic!()
    };
    let (key, value) = &data[0][0];
    assert_eq!(
        ferrogrid_sql::write::apply(&change, key, value, &schemas()).unwrap(),
        ferrogrid_sql::write::Action::Replace(write_data(&Value::String("v1!".into())).unwrap())
    );
    let (key, value) = &data[0][5];
    assert_eq!(
        ferrogrid_sql::write::apply(&change, key, value, &schemas()).unwrap(),
        ferrogrid_sql::write::Action::Keep
    );
    let Prepared::Change(delete) = prepare("DELETE FROM nums WHERE this = 'v6'", vec![], &catalog, &NoSamples).unwrap()
    else {
        panic!()
    };
    assert_eq!(
        ferrogrid_sql::write::apply(&delete, key, value, &schemas()).unwrap(),
        ferrogrid_sql::write::Action::Remove
    );
}

#[test]
fn json_flat_and_joins() {
    let catalog = catalog_with(&[
        "CREATE MAPPING people (__key INT, name VARCHAR, age INT) TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')",
        "CREATE MAPPING nums TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')",
    ]);
    let people = entries(&[
        (Value::Int(1), Value::Json(r#"{"name":"ann","age":30}"#.into())),
        (Value::Int(2), Value::Json(r#"{"name":"bob","age":20}"#.into())),
    ]);
    let nums = entries(&[(Value::Int(1), Value::String("one".into()))]);
    let rows = query(
        &catalog,
        "SELECT name, age FROM people WHERE age BETWEEN 25 AND 35",
        vec![],
        std::slice::from_ref(&people),
    )
    .unwrap();
    assert_eq!(rows, vec![vec![Value::String("ann".into()), Value::Int(30)]]);
    let rows = query(
        &catalog,
        "SELECT p.name, n.this FROM people p LEFT JOIN nums n ON p.__key = n.__key ORDER BY p.name",
        vec![],
        &[people, nums],
    )
    .unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Value::String("ann".into()), Value::String("one".into())],
            vec![Value::String("bob".into()), Value::Null]
        ]
    );
}

#[test]
fn bad_statements_fail_without_panicking() {
    let (catalog, data) = nums();
    let deep = format!("SELECT {}1{} FROM nums", "(".repeat(5000), ")".repeat(5000));
    assert!(prepare(&deep, vec![], &catalog, &NoSamples).is_err());
    let long_sum = format!("SELECT {} FROM nums", vec!["__key"; 20_000].join(" + "));
    assert!(prepare(&long_sum, vec![], &catalog, &NoSamples).is_err());
    let long_and = format!("SELECT __key FROM nums WHERE {}", vec!["__key = 1"; 20_000].join(" AND "));
    if let Ok(Prepared::Select(plan)) = prepare(&long_and, vec![], &catalog, &NoSamples) {
        assert!(run(&plan, &data, &schemas(), 100).is_ok());
    }
    for text in [
        "",
        ";",
        "SELECT",
        "CREATE MAPPING",
        "CREATE MAPPING x TYPE",
        "DROP MAPPING",
        "SELECT * FROM nums WHERE",
        "\u{0}",
        "SELECT 'unterminated",
        "INSERT INTO nums VALUES (1, 'a'",
        "UPDATE nums SET",
        "SELECT ? ? ?",
    ] {
        assert!(prepare(text, vec![], &catalog, &NoSamples).is_err(), "{text:?} was accepted");
    }
    // garbage of every printable character: an error or a plan, never a panic
    let alphabet: Vec<char> = (32u8..127).map(char::from).collect();
    let mut seed = 12345u64;
    for _ in 0..2000 {
        let mut text = String::from("SELECT ");
        for _ in 0..(seed % 40) {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            text.push(alphabet[(seed >> 33) as usize % alphabet.len()]);
        }
        if let Ok(Prepared::Select(plan)) = prepare(&text, vec![], &catalog, &NoSamples) {
            let _ = run(&plan, &data, &schemas(), 100);
        }
    }
}

#[test]
fn a_query_holding_more_rows_than_its_bound_fails() {
    let (catalog, data) = nums();
    let Prepared::Select(plan) = prepare("SELECT * FROM nums", vec![], &catalog, &NoSamples).unwrap() else { panic!() };
    let error = run(&plan, &data, &schemas(), 5).unwrap_err();
    assert!(error.message.contains("max-sql-rows-per-query"), "{}", error.message);
}

#[test]
fn a_mapping_survives_its_own_ddl() {
    let catalog = catalog_with(&[
        "CREATE MAPPING people (__key INT, name VARCHAR, years INT EXTERNAL NAME \"this.age\") TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')",
        "CREATE MAPPING nums EXTERNAL NAME \"numbers\" TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')",
    ]);
    for mapping in catalog.mappings() {
        match prepare(&mapping.ddl(), vec![], &Catalog::default(), &NoSamples).unwrap() {
            Prepared::CreateMapping { mapping: again, .. } => assert_eq!(&again, mapping),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_cached_statement_plans_as_a_parsed_one() {
    let (catalog, data) = nums();
    let cache = ferrogrid_sql::StatementCache::default();
    let text = "SELECT this FROM nums WHERE __key = ?";
    for key in [3, 7, 3] {
        let Prepared::Select(plan) =
            ferrogrid_sql::prepare_cached(text, vec![Value::Int(key)], &catalog, &NoSamples, &cache).unwrap()
        else {
            panic!()
        };
        assert_eq!(run(&plan, &data, &schemas(), 100).unwrap().rows, vec![vec![Value::String(format!("v{key}"))]]);
    }
    assert_eq!(cache.len(), 1);
    let error = ferrogrid_sql::prepare_cached(text, vec![], &catalog, &NoSamples, &cache).unwrap_err();
    assert_eq!(error.message, "Unexpected parameter count: expected 1, got 0");
    // mapping DDL is not kept: it depends on the catalog when it runs
    let ddl = "CREATE MAPPING other TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='int')";
    assert!(matches!(
        ferrogrid_sql::prepare_cached(ddl, vec![], &catalog, &NoSamples, &cache).unwrap(),
        Prepared::CreateMapping { .. }
    ));
    assert_eq!(cache.len(), 1);
}
