//! Indexes of a map's entries by an attribute of their values (`Map.addIndex`), one set per
//! map per partition replica, kept in the partition's record store (`store.rs`) and changed
//! with it: every put, backup, snapshot, removal, eviction, expiry and clear goes through the
//! store, which tells its indexes; a store created later (a partition's first entry, a replica
//! a migration or promotion brings) is given the map's index definitions (`Registry`).
//!
//! An index only narrows the entries a query evaluates: the planner (`candidates`) returns a
//! superset of the entries a term can match, and every candidate is still tested with the
//! whole predicate. So an index keys values coarsely (every number as an `f64`, strings,
//! booleans, null; a composite index the tuple of its attributes' keys), keeps the entries
//! whose attribute it cannot key (other types, unreadable values, several values of an
//! attribute in a composite index) in a set every lookup includes, and answers nothing it is
//! unsure of (a range on a hash index, a composite index without an equality on its first
//! attribute): the query then scans.
//!
//! Bounds: an index holds one key per indexed value of each entry it holds (an `[any]`
//! attribute: one per item), so at most the store's entries × their items.

use crate::engine::schemas::Schemas;
use ferrogrid_query::eval::IndexTerm;
use ferrogrid_query::{Extracted, Path, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;

/// An index's definition: its type and attributes (Hazelcast's `IndexConfig`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDefinition {
    /// SORTED (ranges and equality) or HASH (equality).
    pub sorted: bool,
    pub attributes: Vec<String>,
}

/// The index definitions of every map, shared by the member's reactors.
#[derive(Debug, Default)]
pub struct Registry {
    maps: parking_lot::RwLock<HashMap<String, Vec<IndexDefinition>>>,
}

impl Registry {
    /// Adds `definition` to `map`; false if the map had it already (an index is added once).
    pub fn add(&self, map: &str, definition: IndexDefinition) -> bool {
        let mut maps = self.maps.write();
        let definitions = maps.entry(map.to_owned()).or_default();
        if definitions.contains(&definition) {
            return false;
        }
        definitions.push(definition);
        true
    }

    pub fn of(&self, map: &str) -> Vec<IndexDefinition> {
        self.maps.read().get(map).cloned().unwrap_or_default()
    }

    /// A destroyed map's definitions go with it.
    pub fn forget(&self, map: &str) {
        self.maps.write().remove(map);
    }

    /// What INDEXES carries: `{ map str | sorted u8 | attribute count u32 | attribute str* }*`,
    /// every definition of every map (for a member that linked to this one).
    pub fn encode(&self, out: &mut Vec<u8>) {
        for (map, definitions) in self.maps.read().iter() {
            for definition in definitions {
                crate::cluster::peer::put_str(out, map);
                out.push(u8::from(definition.sorted));
                out.extend_from_slice(&(definition.attributes.len() as u32).to_le_bytes());
                for attribute in &definition.attributes {
                    crate::cluster::peer::put_str(out, attribute);
                }
            }
        }
    }

    /// Adds the definitions another member sent; the maps they name.
    pub fn merge(&self, payload: &[u8]) -> Result<Vec<String>, crate::cluster::peer::Malformed> {
        let mut reader = crate::cluster::peer::Reader::new(payload);
        let mut maps = Vec::new();
        while !reader.is_empty() {
            let map = reader.str()?.to_owned();
            let sorted = reader.u8()? != 0;
            let count = reader.u32()? as usize;
            let mut attributes = Vec::with_capacity(count.min(payload.len() / 4));
            for _ in 0..count {
                attributes.push(reader.str()?.to_owned());
            }
            self.add(&map, IndexDefinition { sorted, attributes });
            maps.push(map);
        }
        Ok(maps)
    }
}

/// A value as an index keys it: coarse (see the module docs), totally ordered; texts in Java's
/// order (`String.compareTo`), so that a sorted index of strings lists them as Java sorts them.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexKey {
    Null,
    Bool(bool),
    Number(f64),
    Text(String),
    /// A composite index's key: one key per attribute, in the index's order.
    Tuple(Vec<IndexKey>),
}

impl Eq for IndexKey {}

impl Ord for IndexKey {
    fn cmp(&self, other: &IndexKey) -> std::cmp::Ordering {
        use IndexKey::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a.cmp(b),
            (Number(a), Number(b)) => a.total_cmp(b),
            (Text(a), Text(b)) => ferrogrid_query::value::java_string_order(a, b),
            (Tuple(a), Tuple(b)) => a.cmp(b),
            _ => self.kind().cmp(&other.kind()),
        }
    }
}

impl IndexKey {
    /// Its kind, in the order kinds sort.
    fn kind(&self) -> usize {
        match self {
            IndexKey::Null => 0,
            IndexKey::Bool(_) => 1,
            IndexKey::Number(_) => 2,
            IndexKey::Text(_) => 3,
            IndexKey::Tuple(_) => 4,
        }
    }
}

impl PartialOrd for IndexKey {
    fn partial_cmp(&self, other: &IndexKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The key an attribute value is filed under (None: a type the index does not key).
fn file_key(value: &Value) -> Option<IndexKey> {
    Some(match value {
        Value::Null => IndexKey::Null,
        Value::Bool(flag) => IndexKey::Bool(*flag),
        Value::String(text) => IndexKey::Text(text.clone()),
        other => IndexKey::Number(number_of(other)?),
    })
}

fn number_of(value: &Value) -> Option<f64> {
    let number = match value {
        Value::Byte(n) => f64::from(*n),
        Value::Short(n) => f64::from(*n),
        Value::Int(n) => f64::from(*n),
        Value::Long(n) => *n as f64,
        Value::Float(n) => f64::from(*n),
        Value::Double(n) if !n.is_nan() => *n,
        _ => return None,
    };
    // -0.0 and 0.0 are one key (the predicate tells them apart where Java does).
    Some(if number == 0.0 { 0.0 } else { number })
}

/// Every key a comparison value may match an attribute under: its own kind, and the kinds
/// Hazelcast converts it to for an attribute of another type (text to a number or a boolean,
/// a number or a boolean to its text, a number to a boolean).
fn lookup_keys(value: &Value) -> Option<Vec<IndexKey>> {
    let mut keys = vec![file_key(value)?];
    match value {
        Value::String(text) => {
            if let Ok(parsed) = text.trim().parse::<f64>() {
                keys.push(IndexKey::Number(if parsed == 0.0 { 0.0 } else { parsed }));
            }
            if text.eq_ignore_ascii_case("true") || text.eq_ignore_ascii_case("false") {
                keys.push(IndexKey::Bool(text.eq_ignore_ascii_case("true")));
            }
        }
        Value::Null => {}
        Value::Bool(flag) => keys.push(IndexKey::Text(flag.to_string())),
        number => {
            keys.extend(number.java_string().ok().map(IndexKey::Text));
            keys.push(IndexKey::Bool(number_of(number).is_some_and(|n| n != 0.0)));
        }
    }
    Some(keys)
}

impl std::hash::Hash for IndexKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.kind().hash(state);
        match self {
            IndexKey::Null => {}
            IndexKey::Bool(flag) => flag.hash(state),
            // (never NaN, and -0.0 is filed as 0.0: equal keys have equal bits)
            IndexKey::Number(number) => number.to_bits().hash(state),
            IndexKey::Text(text) => text.hash(state),
            IndexKey::Tuple(keys) => keys.hash(state),
        }
    }
}

/// The entries of an index by key: in order for a SORTED index (ranges, and equality), hashed
/// for a HASH one (equality only: one probe, as Hazelcast's hash index).
#[derive(Debug)]
enum Keyed {
    Sorted(BTreeMap<IndexKey, HashSet<Box<[u8]>>>),
    Hashed(HashMap<IndexKey, HashSet<Box<[u8]>>>),
}

impl Keyed {
    /// Files `key` under `index_key` (`new_key` is called when `index_key` had no entry).
    fn file(&mut self, index_key: &IndexKey, key: &[u8], new_key: impl FnOnce()) {
        let set = match self {
            Keyed::Sorted(by_value) => by_value.entry(index_key.clone()).or_insert_with(|| {
                new_key();
                HashSet::new()
            }),
            Keyed::Hashed(by_value) => by_value.entry(index_key.clone()).or_insert_with(|| {
                new_key();
                HashSet::new()
            }),
        };
        set.insert(key.into());
    }

    /// Takes `key` off `index_key`; true if that left `index_key` without entries (it goes).
    fn unfile(&mut self, index_key: &IndexKey, key: &[u8]) -> bool {
        let emptied = match self {
            Keyed::Sorted(by_value) => by_value.get_mut(index_key).map(|set| set.remove(key) && set.is_empty()),
            Keyed::Hashed(by_value) => by_value.get_mut(index_key).map(|set| set.remove(key) && set.is_empty()),
        };
        if emptied != Some(true) {
            return false;
        }
        match self {
            Keyed::Sorted(by_value) => by_value.remove(index_key),
            Keyed::Hashed(by_value) => by_value.remove(index_key),
        };
        true
    }

    fn get(&self, index_key: &IndexKey) -> Option<&HashSet<Box<[u8]>>> {
        match self {
            Keyed::Sorted(by_value) => by_value.get(index_key),
            Keyed::Hashed(by_value) => by_value.get(index_key),
        }
    }
}

/// One index of one map in one partition.
#[derive(Debug)]
struct Index {
    definition: IndexDefinition,
    /// Its attributes (one for most; a composite index's several, its keys then tuples);
    /// empty when one does not parse (the index then files nothing and is never used).
    paths: Vec<Path>,
    by_value: Keyed,
    /// The keys each entry is filed under (to take it out again).
    filed: HashMap<Box<[u8]>, Vec<IndexKey>>,
    /// Entries whose attribute could not be keyed: every lookup includes them.
    unkeyed: HashSet<Box<[u8]>>,
    /// How many keys of `by_value` are of each kind ([`IndexKey::kind`]): a lookup skips the
    /// keys of a kind the index has none of (a number is also looked up as its text and as a
    /// boolean, which an index of numbers never holds).
    kinds: [usize; 5],
}

impl Index {
    fn new(definition: IndexDefinition) -> Index {
        let paths = definition.attributes.iter().map(|attribute| Path::parse(attribute).ok());
        let paths = paths.collect::<Option<Vec<Path>>>().unwrap_or_default();
        let by_value = if definition.sorted { Keyed::Sorted(BTreeMap::new()) } else { Keyed::Hashed(HashMap::new()) };
        let (filed, unkeyed) = (HashMap::new(), HashSet::new());
        Index { definition, paths, by_value, filed, unkeyed, kinds: [0; 5] }
    }

    /// Whether it is an index on `attribute` alone.
    fn single_on(&self, attribute: &str) -> bool {
        self.paths.len() == 1 && canonical(&self.definition.attributes[0]) == canonical(attribute)
    }

    /// The keys the entry is filed under (None: it cannot be keyed; every lookup includes it).
    fn keys_of(&self, key: &[u8], value: &[u8], schemas: &Schemas) -> Option<Vec<IndexKey>> {
        let extracted = |path| match ferrogrid_query::extract(key, value, path, schemas) {
            Ok(Extracted::Single(value)) => vec![value],
            Ok(Extracted::Multi(values)) => values,
            Err(_) => Vec::new(),
        };
        if let [path] = self.paths.as_slice() {
            let values = extracted(path);
            return values.iter().map(file_key).collect::<Option<Vec<_>>>().filter(|_| !values.is_empty());
        }
        // a composite key: one single value per attribute (an `[any]` one is not keyed)
        let mut tuple = Vec::with_capacity(self.paths.len());
        for path in &self.paths {
            match extracted(path).as_slice() {
                [value] => tuple.push(file_key(value)?),
                _ => return None,
            }
        }
        Some(vec![IndexKey::Tuple(tuple)])
    }

    fn insert(&mut self, key: &[u8], value: &[u8], schemas: &Schemas) {
        self.remove(key);
        if self.paths.is_empty() {
            return;
        }
        let keyed = self.keys_of(key, value, schemas);
        match keyed {
            Some(keys) => {
                for index_key in &keys {
                    let kinds = &mut self.kinds;
                    self.by_value.file(index_key, key, || kinds[index_key.kind()] += 1);
                }
                self.filed.insert(key.into(), keys);
            }
            _ => {
                self.unkeyed.insert(key.into());
            }
        }
    }

    fn remove(&mut self, key: &[u8]) {
        self.unkeyed.remove(key);
        for index_key in self.filed.remove(key).into_iter().flatten() {
            if self.by_value.unfile(&index_key, key) {
                self.kinds[index_key.kind()] -= 1;
            }
        }
    }

    /// The entries `lookup` may match, each once (None: this index cannot narrow it).
    fn candidates<'a>(&'a self, lookup: &Lookup) -> Option<Vec<&'a [u8]>> {
        let mut found: Vec<&'a [u8]> = self.unkeyed.iter().map(|key| &**key).collect();
        let mut sets = usize::from(!found.is_empty());
        let mut add = |keys: &'a HashSet<Box<[u8]>>| {
            sets += 1;
            found.extend(keys.iter().map(|key| &**key));
        };
        match &lookup.keys {
            LookupKeys::Exact(keys) => {
                for index_key in keys.iter().filter(|key| self.kinds[key.kind()] > 0) {
                    self.by_value.get(index_key).into_iter().for_each(&mut add);
                }
            }
            LookupKeys::Ranges(ranges) => {
                let Keyed::Sorted(by_value) = &self.by_value else { return None };
                for (low, high) in ranges {
                    let kind = match (low, high) {
                        (Bound::Included(key) | Bound::Excluded(key), _) => Some(key.kind()),
                        (Bound::Unbounded, Bound::Included(key) | Bound::Excluded(key)) => Some(key.kind()),
                        (Bound::Unbounded, Bound::Unbounded) => None,
                    };
                    if kind.is_some_and(|kind| self.kinds[kind] == 0) {
                        continue; // (each range stays within its bounds' kind)
                    }
                    by_value.range((low.clone(), high.clone())).for_each(|(_, keys)| add(keys));
                }
            }
        }
        // One set holds each entry once; an entry filed under several keys (an `[any]`
        // attribute) may be in several.
        if sets > 1 {
            found.sort_unstable();
            found.dedup();
        }
        Some(found)
    }
}

/// What an index looks up for one term of a query: worked out once per query (`plan`), then
/// looked up in each partition's index.
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    attribute: String,
    keys: LookupKeys,
}

#[derive(Debug, Clone, PartialEq)]
enum LookupKeys {
    /// Equality and IN: the keys the values may be filed under.
    Exact(Vec<IndexKey>),
    /// A range: needs a sorted index.
    Ranges(Vec<(Bound<IndexKey>, Bound<IndexKey>)>),
}

/// The lookups of a query's conjunction terms (`Filter::index_terms`), equality and IN before
/// ranges; a term whose values cannot be keyed has none (it never narrows).
pub fn plan(terms: &[IndexTerm<'_>]) -> Vec<Lookup> {
    let mut lookups: Vec<Lookup> = Vec::new();
    for term in terms {
        let (attribute, keys) = match term {
            IndexTerm::Equal { attribute, value } => (attribute, lookup_keys(value).map(LookupKeys::Exact)),
            IndexTerm::In { attribute, values } => {
                let keys = values.iter().map(lookup_keys).collect::<Option<Vec<_>>>();
                (attribute, keys.map(|keys| LookupKeys::Exact(keys.into_iter().flatten().collect())))
            }
            IndexTerm::Range { attribute, from, to } => (attribute, ranges(*from, *to).map(LookupKeys::Ranges)),
        };
        if let Some(keys) = keys {
            lookups.push(Lookup { attribute: canonical(attribute).to_owned(), keys });
        }
    }
    lookups.sort_by_key(|lookup| matches!(lookup.keys, LookupKeys::Ranges(_)));
    lookups
}

/// The key ranges a range term may match: one per key a bound converts to, each inclusive
/// (the predicate decides the bounds themselves), open ends within the bound's kind of key.
fn ranges(from: Option<(&Value, bool)>, to: Option<(&Value, bool)>) -> Option<Vec<(Bound<IndexKey>, Bound<IndexKey>)>> {
    let bound_keys = |bound: Option<(&Value, bool)>| match bound {
        None => Some(None),
        Some((value, _)) => lookup_keys(value).map(Some),
    };
    let (lows, highs) = (bound_keys(from)?, bound_keys(to)?);
    let kinds: Vec<IndexKey> = match (&lows, &highs) {
        (Some(keys), _) | (None, Some(keys)) => keys.clone(),
        (None, None) => return None,
    };
    let floor = |kind: &IndexKey| match kind {
        IndexKey::Number(_) => IndexKey::Number(f64::NEG_INFINITY),
        IndexKey::Text(_) => IndexKey::Text(String::new()),
        other => other.clone(),
    };
    let ceiling = |kind: &IndexKey| match kind {
        IndexKey::Number(_) => Bound::Included(IndexKey::Number(f64::INFINITY)),
        // Every text sorts below the next kind; there is none after text.
        IndexKey::Text(_) => Bound::Unbounded,
        other => Bound::Included(other.clone()),
    };
    let same_kind = |a: &IndexKey, b: &IndexKey| std::mem::discriminant(a) == std::mem::discriminant(b);
    let mut ranges = Vec::new();
    for kind in &kinds {
        let low = lows.iter().flatten().find(|key| same_kind(key, kind)).cloned().unwrap_or_else(|| floor(kind));
        let high = highs.iter().flatten().find(|key| same_kind(key, kind)).cloned().map(Bound::Included);
        let high = high.unwrap_or_else(|| ceiling(kind));
        if let Bound::Included(high_key) = &high {
            if *high_key < low {
                continue;
            }
        }
        ranges.push((Bound::Included(low), high));
    }
    Some(ranges)
}

/// The indexes of one map in one partition.
#[derive(Debug)]
pub struct Indexes {
    schemas: Arc<Schemas>,
    indexes: Vec<Index>,
}

impl Indexes {
    pub fn new(schemas: Arc<Schemas>, definitions: &[IndexDefinition]) -> Indexes {
        Indexes { schemas, indexes: definitions.iter().cloned().map(Index::new).collect() }
    }

    /// Adds an index and files `entries` in it; false if it existed.
    pub fn add<'a>(
        &mut self,
        definition: IndexDefinition,
        entries: impl Iterator<Item = (&'a [u8], &'a [u8])>,
    ) -> bool {
        if self.indexes.iter().any(|index| index.definition == definition) {
            return false;
        }
        let mut index = Index::new(definition);
        for (key, value) in entries {
            index.insert(key, value, &self.schemas);
        }
        self.indexes.push(index);
        true
    }

    /// The entry under `key` is now `value`.
    pub fn insert(&mut self, key: &[u8], value: &[u8]) {
        for index in &mut self.indexes {
            index.insert(key, value, &self.schemas);
        }
    }

    /// The entry under `key` is gone.
    pub fn remove(&mut self, key: &[u8]) {
        for index in &mut self.indexes {
            index.remove(key);
        }
    }

    /// Every entry is gone.
    pub fn clear(&mut self) {
        for index in &mut self.indexes {
            match &mut index.by_value {
                Keyed::Sorted(by_value) => by_value.clear(),
                Keyed::Hashed(by_value) => by_value.clear(),
            }
            index.filed.clear();
            index.unkeyed.clear();
            index.kinds = [0; 5];
        }
    }

    /// The groups of entries (equal values) of a sorted index on `attribute` in the order Java
    /// sorts their values, from the lower bound of `plan`'s range on `attribute` (if any) on:
    /// a query's page sorted by that attribute reads only as far as it needs. None unless that
    /// index keyed every entry and only strings (whose index order is exactly Java's).
    pub fn ordered<'a>(
        &'a self,
        attribute: &str,
        plan: &[Lookup],
    ) -> Option<impl Iterator<Item = (&'a IndexKey, &'a HashSet<Box<[u8]>>)> + 'a> {
        let (index, by_value) = self.indexes.iter().find_map(|index| match &index.by_value {
            Keyed::Sorted(by_value) if index.single_on(attribute) => Some((index, by_value)),
            _ => None,
        })?;
        let texts = |key: Option<(&IndexKey, _)>| key.is_none_or(|(key, _)| matches!(key, IndexKey::Text(_)));
        if !index.unkeyed.is_empty() || !texts(by_value.first_key_value()) {
            return None; // (the last key sorts after the first: text is the last kind)
        }
        let low =
            plan.iter().filter(|lookup| lookup.attribute == canonical(attribute)).find_map(|lookup| {
                match &lookup.keys {
                    LookupKeys::Ranges(ranges) => ranges.iter().find_map(|(low, _)| match low {
                        Bound::Included(key @ IndexKey::Text(_)) => Some(key.clone()),
                        _ => None,
                    }),
                    LookupKeys::Exact(_) => None,
                }
            });
        Some(by_value.range((low.map_or(Bound::Unbounded, Bound::Included), Bound::Unbounded)))
    }

    /// The keys of the entries a query may match: from a composite index whose every
    /// attribute the query compares for equality, else from the first of its `plan`'s lookups
    /// an index on one attribute narrows, else from a sorted composite index whose first
    /// attributes the query compares for equality; None when none does (the query scans).
    pub fn candidates(&self, plan: &[Lookup]) -> Option<Vec<&[u8]>> {
        let composite = |prefix| {
            let mut composites = self.indexes.iter().filter(|index| index.paths.len() > 1);
            composites.find_map(|index| index.candidates(&composite_lookup(index, plan, prefix)?))
        };
        let single = || {
            plan.iter().find_map(|lookup| {
                let mut on_attribute = self.indexes.iter().filter(|index| index.single_on(&lookup.attribute));
                on_attribute.find_map(|index| index.candidates(lookup))
            })
        };
        composite(false).or_else(single).or_else(|| composite(true))
    }
}

/// The most keys a composite lookup probes (each attribute's equal or IN values, and the keys
/// each may be filed under, multiply): past it the composite index is not used.
const MOST_COMPOSITE_KEYS: usize = 256;

/// The lookup of `index` (composite) for `plan`: every tuple of the keys its attributes'
/// equality or IN lookups may be filed under when it has one for each attribute; for a sorted
/// index, the ranges of tuples that start with such a tuple of its first attributes (as
/// Hazelcast uses a sorted composite index for a prefix); None when neither applies.
fn composite_lookup(index: &Index, plan: &[Lookup], prefix: bool) -> Option<Lookup> {
    let mut tuples: Vec<Vec<IndexKey>> = vec![Vec::new()];
    let mut complete = true;
    for attribute in &index.definition.attributes {
        let keys = plan.iter().find_map(|lookup| match &lookup.keys {
            LookupKeys::Exact(keys) if lookup.attribute == canonical(attribute) => Some(keys),
            _ => None,
        });
        let Some(keys) = keys.filter(|keys| tuples.len() * keys.len() <= MOST_COMPOSITE_KEYS) else {
            complete = false;
            break;
        };
        tuples = tuples
            .into_iter()
            .flat_map(|tuple| keys.iter().map(move |key| [tuple.as_slice(), std::slice::from_ref(key)].concat()))
            .collect();
    }
    let attribute = index.definition.attributes.join(",");
    if complete {
        let keys = tuples.into_iter().map(IndexKey::Tuple).collect();
        return Some(Lookup { attribute, keys: LookupKeys::Exact(keys) });
    }
    if !prefix || !index.definition.sorted || tuples.first().is_none_or(Vec::is_empty) {
        return None;
    }
    // Every tuple that starts with `tuple` sorts from it (shorter first) to below the same
    // tuple followed by a tuple (the last kind; no component is one).
    let ranges = tuples.into_iter().map(|tuple| {
        let above = [tuple.as_slice(), &[IndexKey::Tuple(Vec::new())]].concat();
        (Bound::Included(IndexKey::Tuple(tuple)), Bound::Excluded(IndexKey::Tuple(above)))
    });
    Some(Lookup { attribute, keys: LookupKeys::Ranges(ranges.collect()) })
}

/// An attribute name as indexes and predicates compare them (`this.a` is `a`).
fn canonical(attribute: &str) -> &str {
    attribute.strip_prefix("this.").unwrap_or(attribute)
}

#[cfg(test)]
mod tests {
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
            },
            ..MapSettings::default()
        }));
        assert_eq!(candidates(&added_later, &between), Some(0), "a store created later builds the map's indexes");
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
        let equal =
            |attribute: &str, value| Predicate::Equal { attribute: attribute.into(), value: int_operand(value) };
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
}
