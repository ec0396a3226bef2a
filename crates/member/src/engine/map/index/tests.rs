use super::*;
use crate::engine::map::store::RecordStore;
use crate::engine::settings::MapSettings;
use ferrogrid_query::eval::Filter;
use ferrogrid_query::predicate::{Literal, Operand, Predicate};

/// An `Integer` as clients serialize it (a whole Data blob).
fn int_data(value: i32) -> Vec<u8> {
    let mut data = vec![0, 0, 0, 0];
    data.extend_from_slice(&(-7i32).to_be_bytes());
    data.extend_from_slice(&value.to_be_bytes());
    data
}

fn int_operand(value: i32) -> Operand {
    Operand::Object(Literal { bytes: int_data(value)[4..].to_vec(), offset: 0 })
}

fn candidates(store: &RecordStore, predicate: &Predicate) -> Option<usize> {
    let filter = Filter::compile(predicate, &Schemas::default()).unwrap();
    store.index_candidates(&plan(&filter.index_terms())).map(|keys| keys.len())
}

#[test]
fn an_index_narrows_queries_and_follows_every_change_of_the_store() {
    let mut store = RecordStore::new(Arc::new(MapSettings::default()));
    for key in 0..100 {
        store.put(&int_data(key), &int_data(key % 10), 0, -1, -1);
    }
    let equal = Predicate::Equal { attribute: "this".into(), value: int_operand(3) };
    let between = Predicate::Between { attribute: "this".into(), from: int_operand(2), to: int_operand(3) };
    let text = Predicate::Equal { attribute: "this".into(), value: Operand::Text("3".into()) };
    assert_eq!(candidates(&store, &equal), None, "no index yet: the query scans");
    let hash = IndexDefinition { sorted: false, attributes: vec!["this".into()] };
    assert!(store.add_index(hash.clone(), &Arc::default()));
    assert!(!store.add_index(hash, &Arc::default()), "an index is added once");
    assert_eq!(candidates(&store, &equal), Some(10), "the entries whose value is 3, filed before the index came");
    assert_eq!(candidates(&store, &text), Some(10), "text is looked up as the number it spells");
    assert_eq!(candidates(&store, &between), None, "a hash index does not narrow ranges");
    let sorted = IndexDefinition { sorted: true, attributes: vec!["this".into()] };
    assert!(store.add_index(sorted, &Arc::default()));
    assert_eq!(candidates(&store, &between), Some(20));
    store.put(&int_data(3), &int_data(4), 0, -1, -1);
    store.remove(&int_data(13));
    assert_eq!(candidates(&store, &equal), Some(8), "an update and a removal leave the value 3");
    store.apply(&int_data(200), &int_data(3), &crate::engine::map::entry::Meta::plain(0));
    assert_eq!(candidates(&store, &equal), Some(9), "a backup's record is filed too");
    store.clear(0);
    assert_eq!(candidates(&store, &equal), Some(0));
    let added_later = RecordStore::new(Arc::new(MapSettings {
        indexes: crate::engine::settings::IndexSetup {
            schemas: Arc::default(),
            definitions: vec![IndexDefinition { sorted: true, attributes: vec!["this".into()] }],
            shared: None,
        },
        ..MapSettings::default()
    }));
    assert_eq!(candidates(&added_later, &between), Some(0), "a store created later builds the map's indexes");
}

/// The slots and keys the reactor's indexes give `predicate`.
fn reactor_candidates(shared: &Shared, predicate: &Predicate) -> Option<Vec<(u32, Vec<u8>)>> {
    let filter = Filter::compile(predicate, &Schemas::default()).unwrap();
    let indexes = shared.lock();
    let found = indexes.candidates(&plan(&filter.index_terms()))?;
    let mut found: Vec<(u32, Vec<u8>)> = found.into_iter().map(|(key, owner)| (slot_of(owner), key.to_vec())).collect();
    found.sort();
    Some(found)
}

#[test]
fn a_reactor_keeps_one_index_of_a_map_for_all_its_partitions() {
    let shared: Shared = ReactorIndexes::new(Arc::default());
    let hash = IndexDefinition { sorted: false, attributes: vec!["this".into()] };
    let settings = Arc::new(MapSettings {
        indexes: crate::engine::settings::IndexSetup {
            schemas: Arc::default(),
            definitions: vec![hash],
            shared: Some(shared.clone()),
        },
        ..MapSettings::default()
    });
    let placed = |slot: u32| {
        let mut store = RecordStore::new(settings.clone());
        store.place(slot);
        store
    };
    let (mut first, mut second) = (placed(0), placed(5));
    for key in 0..20 {
        let store = if key % 2 == 0 { &mut first } else { &mut second };
        store.put(&int_data(key), &int_data(key % 4), 0, -1, -1);
    }
    let equal = |value| Predicate::Equal { attribute: "this".into(), value: int_operand(value) };
    let expected =
        |keys: &[(u32, i32)]| Some(keys.iter().map(|(slot, key)| (*slot, int_data(*key))).collect::<Vec<_>>());
    let mut found = reactor_candidates(&shared, &equal(1)).unwrap();
    found.sort_by_key(|(slot, key)| (*slot, i32::from_be_bytes(key[8..12].try_into().unwrap())));
    assert_eq!(
        Some(found),
        expected(&[(5, 1), (5, 5), (5, 9), (5, 13), (5, 17)]),
        "one lookup, each key with its slot"
    );
    assert_eq!(reactor_candidates(&shared, &equal(2)).unwrap().len(), 5);
    assert_eq!(first.index_candidates(&plan(&[])), None, "a placed store has no indexes of its own");
    second.clear(0);
    assert_eq!(reactor_candidates(&shared, &equal(1)), Some(vec![]), "a store's clear takes out its entries only");
    assert_eq!(reactor_candidates(&shared, &equal(2)).unwrap().len(), 5);
    // A store that replaces another in its slot (a snapshot) keeps its entries when the
    // one it replaced goes after it filed them.
    let mut replacement = placed(0);
    replacement.put(&int_data(2), &int_data(2), 0, -1, -1);
    drop(first);
    assert_eq!(reactor_candidates(&shared, &equal(2)), expected(&[(0, 2)]));
    // An index that comes after a store attached (another member's, on joining) serves
    // once that store filed into it, not before.
    let sorted = IndexDefinition { sorted: true, attributes: vec!["this".into()] };
    assert!(shared.lock().ensure(&sorted));
    let between = Predicate::Between { attribute: "this".into(), from: int_operand(1), to: int_operand(2) };
    assert!(!shared.lock().complete());
    assert_eq!(reactor_candidates(&shared, &between), None, "incomplete: the query scans");
    replacement.file_missing();
    second.file_missing();
    assert!(shared.lock().complete());
    assert_eq!(reactor_candidates(&shared, &between), expected(&[(0, 2)]));
    drop((second, replacement));
    assert_eq!(reactor_candidates(&shared, &equal(2)), Some(vec![]), "dropped stores take their entries out");
}

#[test]
fn a_composite_index_narrows_equality_on_all_its_attributes() {
    let json = |text: String| ferrogrid_query::write::write_data(&Value::Json(text)).unwrap();
    let mut store = RecordStore::new(Arc::new(MapSettings::default()));
    for key in 0..120 {
        let value = match key {
            // an array (several values): not keyed, every lookup includes it; a missing
            // attribute is keyed as null
            118 => r#"{"dept": [1, 2], "level": 3}"#.to_owned(),
            119 => r#"{"level": 3}"#.to_owned(),
            _ => format!(r#"{{"dept": {}, "level": {}}}"#, key % 4, key % 5),
        };
        store.put(&int_data(key), &json(value), 0, -1, -1);
    }
    let equal = |attribute: &str, value| Predicate::Equal { attribute: attribute.into(), value: int_operand(value) };
    let both = Predicate::And(vec![equal("level", 3), equal("dept", 1)]);
    let either = Predicate::In { attribute: "dept".into(), values: vec![int_operand(1), int_operand(2)] };
    let both_in = Predicate::And(vec![equal("level", 3), either]);
    let composite = IndexDefinition { sorted: false, attributes: vec!["dept".into(), "level".into()] };
    assert!(store.add_index(composite, &Arc::default()));
    assert_eq!(candidates(&store, &both), Some(6 + 1), "keys 13, 33, …, 113 (dept 1, level 3), and the unkeyed");
    assert_eq!(candidates(&store, &both_in), Some(6 + 5 + 1), "dept 1 or 2, level 3");
    assert_eq!(candidates(&store, &equal("dept", 1)), None, "one attribute of two: the query scans");
    store.put(&int_data(13), &json(r#"{"dept": 1, "level": 4}"#.to_owned()), 0, -1, -1);
    assert_eq!(candidates(&store, &both), Some(5 + 1), "an update moves the entry");
    let sorted = IndexDefinition { sorted: true, attributes: vec!["dept".into(), "level".into()] };
    let mut sorted_store = RecordStore::new(Arc::new(MapSettings::default()));
    assert!(sorted_store.add_index(sorted, &Arc::default()));
    sorted_store.put(&int_data(1), &json(r#"{"dept": 1, "level": 3}"#.to_owned()), 0, -1, -1);
    assert_eq!(candidates(&sorted_store, &both), Some(1), "a sorted composite index answers equality too");
    for (dept, level) in [(1, 4), (2, 3), (0, 3)] {
        let value = format!(r#"{{"dept": {dept}, "level": {level}}}"#);
        sorted_store.put(&int_data(dept * 10 + level), &json(value), 0, -1, -1);
    }
    assert_eq!(candidates(&sorted_store, &equal("dept", 1)), Some(2), "its first attribute: a prefix of its keys");
    let either = Predicate::In { attribute: "dept".into(), values: vec![int_operand(0), int_operand(2)] };
    assert_eq!(candidates(&sorted_store, &either), Some(2));
    assert_eq!(candidates(&sorted_store, &equal("level", 3)), None, "not its first attribute: a scan");
}

#[test]
fn a_configured_index_is_built_by_every_store_of_the_map() {
    let mut config = ferrogrid_config::MemberConfig::default();
    let index = ferrogrid_config::MapIndexConfig { sorted: true, attributes: vec!["this".into()] };
    let map = ferrogrid_config::MapConfig { indexes: vec![index], ..ferrogrid_config::MapConfig::DEFAULT };
    config.maps.insert("indexed", map);
    let mut settings = crate::engine::settings::SettingsCache::new(Arc::new(config), 271);
    let mut store = RecordStore::new(settings.get("indexed"));
    store.put(&int_data(1), &int_data(3), 0, -1, -1);
    let between = Predicate::Between { attribute: "this".into(), from: int_operand(2), to: int_operand(3) };
    assert_eq!(candidates(&store, &between), Some(1));
    assert_eq!(candidates(&RecordStore::new(settings.get("other")), &between), None, "other maps have none");
}

#[test]
fn definitions_survive_the_member_hop_and_a_truncation_is_refused() {
    let registry = Registry::default();
    let sorted = IndexDefinition { sorted: true, attributes: vec!["age".into()] };
    let composite = IndexDefinition { sorted: false, attributes: vec!["dept".into(), "active".into()] };
    assert!(registry.add("employees", sorted.clone()) && registry.add("employees", composite.clone()));
    assert!(!registry.add("employees", sorted.clone()), "a definition is kept once");
    let mut bytes = Vec::new();
    registry.encode(&mut bytes);
    let joiner = Registry::default();
    assert_eq!(joiner.merge(&bytes).unwrap(), vec!["employees".to_owned(), "employees".to_owned()]);
    assert_eq!(joiner.of("employees"), vec![sorted, composite]);
    for cut in 1..bytes.len() {
        let merged = Registry::default().merge(&bytes[..cut]);
        assert!(merged.is_err() || merged.unwrap().len() == 1, "cut at {cut}");
    }
    joiner.forget("employees");
    assert!(joiner.of("employees").is_empty());
}

/// A `Long` as clients serialize it.
fn long_data(value: i64) -> Vec<u8> {
    let mut data = vec![0, 0, 0, 0];
    data.extend_from_slice(&(-8i32).to_be_bytes());
    data.extend_from_slice(&value.to_be_bytes());
    data
}

#[test]
fn numbers_are_keyed_exactly_whatever_their_type() {
    let mut store = RecordStore::new(Arc::new(MapSettings::default()));
    assert!(store.add_index(IndexDefinition { sorted: true, attributes: vec!["this".into()] }, &Arc::default()));
    // longs a double cannot tell apart (2^53 + 1, + 2, + 3), flake-id sized
    let base = 1i64 << 53;
    for (key, value) in [(1, base), (2, base + 1), (3, base + 2), (4, base + 3), (5, i64::MAX)] {
        store.put(&int_data(key), &long_data(value), 0, -1, -1);
    }
    let long = |value: i64| Operand::Object(Literal { bytes: long_data(value)[4..].to_vec(), offset: 0 });
    let equal = |value| Predicate::Equal { attribute: "this".into(), value: long(value) };
    assert_eq!(candidates(&store, &equal(base + 1)), Some(1), "one long of four that round to one double");
    assert_eq!(candidates(&store, &equal(i64::MAX)), Some(1));
    let between = Predicate::Between { attribute: "this".into(), from: long(base + 1), to: long(base + 2) };
    assert_eq!(candidates(&store, &between), Some(2));
    // a whole double is the long it equals; a fraction sorts between its neighbours
    store.put(&int_data(6), &int_data(7), 0, -1, -1);
    let double = |value: f64| {
        let mut bytes = (-10i32).to_be_bytes().to_vec();
        bytes.extend_from_slice(&value.to_bits().to_be_bytes());
        Operand::Object(Literal { bytes, offset: 0 })
    };
    let as_double = Predicate::Equal { attribute: "this".into(), value: double(7.0) };
    assert_eq!(candidates(&store, &as_double), Some(1), "7.0 finds the int 7");
    let around = Predicate::Between { attribute: "this".into(), from: double(6.5), to: double(7.5) };
    assert_eq!(candidates(&store, &around), Some(1));
    let above = Predicate::Between { attribute: "this".into(), from: double(7.5), to: double(1e300) };
    assert_eq!(candidates(&store, &above), Some(5), "every long above 7.5, i64::MAX too");
    assert_eq!(IndexKey::Whole(i64::MAX).cmp(&number_key(9.3e18)), std::cmp::Ordering::Less);
    assert_eq!(IndexKey::Whole(-3).cmp(&number_key(-2.5)), std::cmp::Ordering::Less);
    assert_eq!(number_key(-0.0), IndexKey::Whole(0));
}
