//! A join whose ON equals a left column to a right column is a hash join (`exec/join.rs`);
//! it must answer exactly as the nested loop does. Each statement here is run twice: as
//! written (the hash join) and with its key columns inside expressions that change no value
//! (`+ 0`, `|| ''`), which no hash key describes, so the nested loop runs; the rows, in order,
//! or the failure must be the same. Keys have nulls, repeats and values on one side only.

use ferrogrid_query::write::write_data;
use ferrogrid_query::Value;
use ferrogrid_sql::exec::run;
use ferrogrid_sql::plan::SelectPlan;
use ferrogrid_sql::{prepare, Catalog, Prepared};

mod common;

use common::{schemas, NoSamples};

fn catalog() -> Catalog {
    let mut catalog = Catalog::default();
    for ddl in [
        "CREATE MAPPING t (__key INT, grp INT, name VARCHAR, amount BIGINT, ok BOOLEAN) \
         TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')",
        "CREATE MAPPING u (__key INT, grp INT, label VARCHAR, tag BIGINT, flag BOOLEAN) \
         TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')",
        "CREATE MAPPING v (__key INT, tag BIGINT, note VARCHAR) \
         TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')",
    ] {
        match prepare(ddl, vec![], &catalog, &NoSamples).unwrap() {
            Prepared::CreateMapping { mapping, .. } => catalog.put(mapping),
            other => panic!("not a mapping: {other:?}"),
        }
    }
    catalog
}

fn json_or_null(value: Option<String>) -> String {
    value.unwrap_or_else(|| "null".to_owned())
}

fn entries(count: i32, value: impl Fn(i32) -> String) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..count).map(|i| (write_data(&Value::Int(i)).unwrap(), write_data(&Value::Json(value(i))).unwrap())).collect()
}

fn t_entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    entries(120, |i| {
        let grp = json_or_null((i % 13 != 0).then(|| (i % 9).to_string()));
        let name = json_or_null((i % 11 != 0).then(|| format!("\"n{}\"", i % 7)));
        let ok = json_or_null((i % 5 != 0).then(|| (i % 3 == 0).to_string()));
        format!("{{\"grp\":{grp},\"name\":{name},\"amount\":{},\"ok\":{ok}}}", i * 10 - 300)
    })
}

fn u_entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    entries(90, |i| {
        // grp 0..12: some values t never has (9..12), t's 0..8 repeated
        let grp = json_or_null((i % 17 != 0).then(|| (i % 12).to_string()));
        let label = json_or_null((i % 10 != 0).then(|| format!("\"n{}\"", i % 9)));
        let flag = json_or_null((i % 4 != 0).then(|| (i % 2 == 0).to_string()));
        format!("{{\"grp\":{grp},\"label\":{label},\"tag\":{},\"flag\":{flag}}}", i % 6)
    })
}

fn v_entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    entries(20, |i| {
        format!("{{\"tag\":{},\"note\":\"w{}\"}}", json_or_null((i % 7 != 0).then(|| (i % 8).to_string())), i)
    })
}

fn plan(text: &str) -> Box<SelectPlan> {
    match prepare(text, vec![], &catalog(), &NoSamples).unwrap_or_else(|e| panic!("{text}: {e:?}")) {
        Prepared::Select(plan) => plan,
        other => panic!("not a query: {other:?}"),
    }
}

fn answer(text: &str, max_rows: usize) -> Result<Vec<Vec<Value>>, String> {
    let plan = plan(text);
    let inputs: Vec<_> = plan
        .sources
        .iter()
        .map(|source| match source.mapping.name.as_str() {
            "t" => t_entries(),
            "u" => u_entries(),
            _ => v_entries(),
        })
        .collect();
    run(&plan, &inputs, &schemas(), max_rows).map(|result| result.rows).map_err(|error| error.message)
}

/// (hash join, the same statement as a nested loop)
const PAIRS: &[(&str, &str)] = &[
    (
        "SELECT t.__key, u.__key FROM t JOIN u ON t.grp = u.grp",
        "SELECT t.__key, u.__key FROM t JOIN u ON t.grp + 0 = u.grp",
    ),
    (
        "SELECT t.__key, u.__key, u.tag FROM t LEFT JOIN u ON u.grp = t.grp AND u.tag > 2",
        "SELECT t.__key, u.__key, u.tag FROM t LEFT JOIN u ON u.grp + 0 = t.grp AND u.tag > 2",
    ),
    (
        "SELECT t.__key, u.__key FROM t JOIN u ON t.name = u.label AND t.ok = u.flag",
        "SELECT t.__key, u.__key FROM t JOIN u ON t.name || '' = u.label AND t.ok = (CASE WHEN u.flag THEN TRUE WHEN NOT u.flag THEN FALSE END)",
    ),
    (
        "SELECT t.__key, u.__key FROM t LEFT JOIN u ON t.name = u.label AND t.grp = u.grp OR u.tag = 5",
        "SELECT t.__key, u.__key FROM t LEFT JOIN u ON t.name || '' = u.label AND t.grp = u.grp + 0 OR u.tag = 5",
    ),
    (
        "SELECT t.__key, u.__key, v.note FROM t JOIN u ON t.grp = u.grp LEFT JOIN v ON v.tag = u.tag WHERE t.amount > 0",
        "SELECT t.__key, u.__key, v.note FROM t JOIN u ON t.grp + 0 = u.grp LEFT JOIN v ON v.tag + 0 = u.tag WHERE t.amount > 0",
    ),
    (
        "SELECT u.tag, COUNT(*), SUM(t.amount) FROM t JOIN u ON t.grp = u.grp GROUP BY u.tag ORDER BY u.tag",
        "SELECT u.tag, COUNT(*), SUM(t.amount) FROM t JOIN u ON t.grp = u.grp + 0 GROUP BY u.tag ORDER BY u.tag",
    ),
    (
        "SELECT t.__key, u.__key FROM t JOIN u ON t.grp = u.grp AND t.amount / (u.tag - 3) > 0",
        "SELECT t.__key, u.__key FROM t JOIN u ON t.grp + 0 = u.grp AND t.amount / (u.tag - 3) > 0",
    ),
    (
        "SELECT t.__key, v.__key FROM t JOIN v ON t.amount = v.tag",
        "SELECT t.__key, v.__key FROM t JOIN v ON t.amount + 0 = v.tag",
    ),
];

#[test]
fn a_hash_join_answers_as_the_nested_loop() {
    for (hashed, looped) in PAIRS {
        let expected = answer(looped, 100_000);
        assert_eq!(answer(hashed, 100_000), expected, "{hashed}");
        if let Ok(rows) = &expected {
            assert!(!rows.is_empty(), "{looped} joins nothing: the pair shows nothing");
        }
    }
}

#[test]
fn a_join_past_the_rows_bound_fails_with_it() {
    let (hashed, _) = PAIRS[0];
    let all = answer(hashed, 100_000).unwrap().len();
    assert!(answer(hashed, all).is_ok());
    let error = answer(hashed, all - 1).unwrap_err();
    assert!(error.contains("max-sql-rows-per-query"), "{error}");
    // a LEFT join's unmatched rows count too
    let left = "SELECT t.__key FROM t LEFT JOIN u ON t.grp = u.grp AND u.tag > 100";
    assert_eq!(answer(left, 200).unwrap().len(), 120);
    assert!(answer(left, 119).unwrap_err().contains("max-sql-rows-per-query"));
}

/// (WHERE whose one-source terms filter that source before the join, the same terms inside
/// a CASE on another source's key, which is never null there, so that they read two sources
/// and are evaluated only over the joined rows)
const FILTERED: &[(&str, &str)] = &[
    (
        "SELECT t.__key, u.__key FROM t JOIN u ON t.grp = u.grp WHERE t.amount > 100 AND u.tag < 3",
        "SELECT t.__key, u.__key FROM t JOIN u ON t.grp = u.grp \
         WHERE CASE WHEN COALESCE(u.__key, 0) >= 0 THEN t.amount END > 100 \
         AND CASE WHEN t.__key >= 0 THEN u.tag END < 3",
    ),
    (
        // a LEFT join's right side: `u.tag IS NULL` holds for the null-extended rows
        "SELECT t.__key, u.__key FROM t LEFT JOIN u ON t.grp = u.grp AND u.tag = 5 WHERE u.tag IS NULL AND t.amount <> 0",
        "SELECT t.__key, u.__key FROM t LEFT JOIN u ON t.grp = u.grp AND u.tag = 5 \
         WHERE CASE WHEN t.__key >= 0 THEN u.tag END IS NULL \
         AND CASE WHEN COALESCE(u.__key, 0) >= 0 THEN t.amount END <> 0",
    ),
    (
        "SELECT t.__key, u.__key, v.__key FROM t LEFT JOIN u ON t.grp = u.grp JOIN v ON v.tag = u.tag \
         WHERE v.note <> 'w3' AND (u.flag OR u.flag IS NULL)",
        "SELECT t.__key, u.__key, v.__key FROM t LEFT JOIN u ON t.grp = u.grp JOIN v ON v.tag = u.tag \
         WHERE CASE WHEN t.__key >= 0 THEN v.note END <> 'w3' \
         AND (CASE WHEN t.__key >= 0 THEN u.flag END OR u.flag IS NULL)",
    ),
];

#[test]
fn a_where_term_on_one_source_filters_it_before_the_join_as_after() {
    for (pushed, after) in FILTERED {
        let expected = answer(after, 100_000);
        assert_eq!(answer(pushed, 100_000), expected, "{pushed}");
        assert!(!expected.unwrap().is_empty(), "{after} answers nothing: the pair shows nothing");
    }
    // what the join would hold without the terms is past the bound; the filtered rows are not
    let wide = "SELECT t.__key, u.__key FROM t JOIN u ON t.grp = u.grp";
    let narrow = "SELECT t.__key, u.__key FROM t JOIN u ON t.grp = u.grp WHERE t.amount > 700 AND u.tag = 1";
    let few = answer(narrow, 100_000).unwrap().len();
    assert!(few > 0 && answer(wide, few * 2).is_err());
    assert_eq!(answer(narrow, few).unwrap().len(), few);
}

#[test]
fn explain_names_the_hash_join_and_its_keys() {
    let steps = |text: &str| ferrogrid_sql::exec::explain::explain(&plan(text), &|_| Vec::new());
    // t's columns are $0..$5 (`this` is the sixth), u's $6..: t.grp = $1, t.name = $2, u.grp = $7, u.label = $8
    let hashed = steps("SELECT t.__key FROM t JOIN u ON u.grp = t.grp AND t.name = u.label");
    assert_eq!(hashed[0], "JoinHashPhysicalRel(joinType=[inner], keys=[$1 = $7, $2 = $8])", "{hashed:?}");
    let looped = steps("SELECT t.__key FROM t LEFT JOIN u ON t.grp + 0 = u.grp");
    assert_eq!(looped[0], "JoinNestedLoopPhysicalRel(joinType=[left])", "{looped:?}");
}
