//! Indexes of a map's entries by an attribute of their values (`Map.addIndex`), one set per
//! map per reactor: as Hazelcast keeps one index per member (not per partition), every
//! partition replica of the map a reactor holds files its entries in the reactor's
//! [`Shared`] indexes (`SettingsCache::shared_indexes`), each entry with its [`Owner`]: the
//! store that filed it and that store's slot (its partition's place among the reactor's
//! partitions). A lookup is one probe per reactor, not one per partition; a query then reads
//! the candidates of the partitions it covers from their stores (`query_ops::Narrowed`).
//!
//! The record store (`store.rs`) tells the indexes of every change: every put, backup,
//! snapshot, removal, eviction, expiry and clear goes through it; a store placed in a
//! partition (a partition's first entry, a replica a migration or promotion brings) attaches
//! to the reactor's indexes and files its entries, and a dropped one takes its entries out.
//! An index serves a lookup only once every attached store has filed into it (`complete`): a
//! definition that reaches a reactor whose stores predate it (another member's index, on
//! joining) is filled in by the next query (`RecordStore::file_missing`); until then queries
//! scan. A store outside a reactor's partitions (tests, a store being built) keeps private
//! indexes of its own.
//!
//! An index only narrows the entries a query evaluates: the planner (`candidates`) returns a
//! superset of the entries a term can match, and every candidate is still tested with the
//! whole predicate. So an index keys numbers (exactly, by value: a long and a double that are
//! equal are one key), strings, booleans and null (a composite index the tuple of its
//! attributes' keys), keeps the entries
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
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// The indexes of one map on one reactor, shared by the reactor's stores of the map.
pub type Shared = Arc<ReactorIndexes>;

/// [`Indexes`] behind a lock only the reactor's thread takes (never contended, never held
/// while a store changes), and whether there is any index: until there is, a store's writes
/// do not take the lock.
#[derive(Debug)]
pub struct ReactorIndexes {
    indexes: parking_lot::Mutex<Indexes>,
    any: std::sync::atomic::AtomicBool,
}

impl ReactorIndexes {
    pub fn new(schemas: Arc<Schemas>) -> Shared {
        let indexes = parking_lot::Mutex::new(Indexes::new(schemas, &[]));
        Arc::new(ReactorIndexes { indexes, any: Default::default() })
    }

    pub fn lock(&self) -> Locked<'_> {
        Locked { indexes: self.indexes.lock(), any: &self.any }
    }

    /// Whether the map has any index on this reactor (a store's change then goes in).
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }
}

/// The locked indexes; unlocking records whether there is any.
pub struct Locked<'a> {
    indexes: parking_lot::MutexGuard<'a, Indexes>,
    any: &'a std::sync::atomic::AtomicBool,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Indexes;
    fn deref(&self) -> &Indexes {
        &self.indexes
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Indexes {
        &mut self.indexes
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.any.store(!self.indexes.indexes.is_empty(), Ordering::Relaxed);
    }
}

/// Who filed an entry: the filing store's slot (its partition's place in the reactor's
/// partitions; [`PRIVATE_SLOT`] for a store outside them) in the low 32 bits, a serial that
/// tells that store from an earlier one of the same slot in the high ones.
pub type Owner = u64;

/// The slot of a store outside a reactor's partitions.
pub const PRIVATE_SLOT: u32 = u32::MAX;

/// A new owner for a store in `slot`.
pub fn new_owner(slot: u32) -> Owner {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    (u64::from(SERIAL.fetch_add(1, Ordering::Relaxed)) << 32) | u64::from(slot)
}

/// The slot of an owner.
pub fn slot_of(owner: Owner) -> u32 {
    owner as u32
}

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

/// A value as an index keys it, totally ordered: numbers exactly by their value whatever their
/// type (a whole number as a `Whole`, every long exactly, any other as a `Fraction`, so that
/// equal numbers are one key); texts in Java's order (`String.compareTo`), so that a sorted
/// index of strings lists them as Java sorts them.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexKey {
    Null,
    Bool(bool),
    /// A whole number within a long's range (made by [`number_key`] only).
    Whole(i64),
    /// Any other number: not whole, or beyond a long's range; never NaN (made by
    /// [`number_key`] only).
    Fraction(f64),
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
            (Whole(a), Whole(b)) => a.cmp(b),
            (Fraction(a), Fraction(b)) => a.total_cmp(b),
            (Whole(a), Fraction(b)) => whole_against(*a, *b),
            (Fraction(a), Whole(b)) => whole_against(*b, *a).reverse(),
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
            IndexKey::Whole(_) | IndexKey::Fraction(_) => 2,
            IndexKey::Text(_) => 3,
            IndexKey::Tuple(_) => 4,
        }
    }
}

/// A whole number against any other, exactly (no rounding of either to the other's type).
fn whole_against(whole: i64, other: f64) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
    if other >= TWO_TO_63 {
        return Ordering::Less;
    }
    if other < -TWO_TO_63 {
        return Ordering::Greater;
    }
    let truncated = other.trunc();
    whole.cmp(&(truncated as i64)).then_with(|| truncated.total_cmp(&other))
}

/// A number's key: `Whole` if it is a whole number a long holds, else `Fraction` (-0.0 and
/// 0.0 are one key; the predicate tells them apart where Java does).
fn number_key(number: f64) -> IndexKey {
    const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
    if number.fract() == 0.0 && (-TWO_TO_63..TWO_TO_63).contains(&number) {
        IndexKey::Whole(number as i64)
    } else {
        IndexKey::Fraction(number)
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
        other => number_of(other)?,
    })
}

/// A number's key (None: not a number the index keys: NaN, big decimals and integers).
fn number_of(value: &Value) -> Option<IndexKey> {
    Some(match value {
        Value::Byte(n) => IndexKey::Whole(i64::from(*n)),
        Value::Short(n) => IndexKey::Whole(i64::from(*n)),
        Value::Int(n) => IndexKey::Whole(i64::from(*n)),
        Value::Long(n) => IndexKey::Whole(*n),
        Value::Float(n) if !n.is_nan() => number_key(f64::from(*n)),
        Value::Double(n) if !n.is_nan() => number_key(*n),
        _ => return None,
    })
}

/// The number a text spells, as Java parses a long or else a double (None: none).
fn parsed_number(text: &str) -> Option<IndexKey> {
    let text = text.trim();
    match text.parse::<i64>() {
        Ok(whole) => Some(IndexKey::Whole(whole)),
        Err(_) => text.parse::<f64>().ok().filter(|n| !n.is_nan()).map(number_key),
    }
}

/// Every key a comparison value may match an attribute under: its own kind, and the kinds
/// Hazelcast converts it to for an attribute of another type (text to a number or a boolean,
/// a number or a boolean to its text, a number to a boolean).
fn lookup_keys(value: &Value) -> Option<Vec<IndexKey>> {
    let mut keys = vec![file_key(value)?];
    match value {
        Value::String(text) => {
            keys.extend(parsed_number(text));
            if text.eq_ignore_ascii_case("true") || text.eq_ignore_ascii_case("false") {
                keys.push(IndexKey::Bool(text.eq_ignore_ascii_case("true")));
            }
        }
        Value::Null => {}
        Value::Bool(flag) => keys.push(IndexKey::Text(flag.to_string())),
        number => {
            keys.extend(number.java_string().ok().map(IndexKey::Text));
            keys.push(IndexKey::Bool(number_of(number).is_some_and(|n| n != IndexKey::Whole(0))));
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
            // (a number has one key: `number_key`; a fraction is never NaN nor -0.0)
            IndexKey::Whole(number) => number.hash(state),
            IndexKey::Fraction(number) => number.to_bits().hash(state),
            IndexKey::Text(text) => text.hash(state),
            IndexKey::Tuple(keys) => keys.hash(state),
        }
    }
}

/// The entries filed under one index key, each with its owner.
pub type Filed = HashMap<Box<[u8]>, Owner>;

/// The entries of an index by key: in order for a SORTED index (ranges, and equality), hashed
/// for a HASH one (equality only: one probe, as Hazelcast's hash index).
#[derive(Debug)]
enum Keyed {
    Sorted(BTreeMap<IndexKey, Filed>),
    Hashed(HashMap<IndexKey, Filed>),
}

impl Keyed {
    /// Files `key` of `owner` under `index_key` (`new_key` is called when `index_key` had no
    /// entry).
    fn file(&mut self, index_key: &IndexKey, (key, owner): (&[u8], Owner), new_key: impl FnOnce()) {
        let set = match self {
            Keyed::Sorted(by_value) => by_value.entry(index_key.clone()).or_insert_with(|| {
                new_key();
                HashMap::new()
            }),
            Keyed::Hashed(by_value) => by_value.entry(index_key.clone()).or_insert_with(|| {
                new_key();
                HashMap::new()
            }),
        };
        set.insert(key.into(), owner);
    }

    /// Takes `key` off `index_key`; true if that left `index_key` without entries (it goes).
    fn unfile(&mut self, index_key: &IndexKey, key: &[u8]) -> bool {
        let emptied = match self {
            Keyed::Sorted(by_value) => {
                by_value.get_mut(index_key).map(|set| set.remove(key).is_some() && set.is_empty())
            }
            Keyed::Hashed(by_value) => {
                by_value.get_mut(index_key).map(|set| set.remove(key).is_some() && set.is_empty())
            }
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

    fn get(&self, index_key: &IndexKey) -> Option<&Filed> {
        match self {
            Keyed::Sorted(by_value) => by_value.get(index_key),
            Keyed::Hashed(by_value) => by_value.get(index_key),
        }
    }
}

/// One index of one map on one reactor.
#[derive(Debug)]
struct Index {
    definition: IndexDefinition,
    /// Its attributes (one for most; a composite index's several, its keys then tuples);
    /// empty when one does not parse (the index then files nothing and is never used).
    paths: Vec<Path>,
    by_value: Keyed,
    /// Each entry's owner and the keys it is filed under (to take it out again).
    filed: HashMap<Box<[u8]>, (Owner, Vec<IndexKey>)>,
    /// Entries whose attribute could not be keyed: every lookup includes them.
    unkeyed: Filed,
    /// The attached stores that filed their entries here: the index serves lookups when that
    /// is every attached store (`Indexes::attached`).
    filed_by: HashSet<Owner>,
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
        let (filed, unkeyed, filed_by) = (HashMap::new(), HashMap::new(), HashSet::new());
        Index { definition, paths, by_value, filed, unkeyed, filed_by, kinds: [0; 5] }
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

    /// Files `key` of `owner`, now `value` (wherever the key was filed before, it is not any
    /// more: a key is in one partition, so in one store of the map on a reactor).
    fn insert(&mut self, (key, value): (&[u8], &[u8]), owner: Owner, schemas: &Schemas) {
        self.remove(key, None);
        if self.paths.is_empty() {
            return;
        }
        let keyed = self.keys_of(key, value, schemas);
        match keyed {
            Some(keys) => {
                for index_key in &keys {
                    let kinds = &mut self.kinds;
                    self.by_value.file(index_key, (key, owner), || kinds[index_key.kind()] += 1);
                }
                self.filed.insert(key.into(), (owner, keys));
            }
            _ => {
                self.unkeyed.insert(key.into(), owner);
            }
        }
    }

    /// Takes `key` out if `owner` filed it (any owner: None).
    fn remove(&mut self, key: &[u8], owner: Option<Owner>) {
        let mine = |filer: Owner| owner.is_none_or(|owner| owner == filer);
        if self.unkeyed.get(key).is_some_and(|filer| mine(*filer)) {
            self.unkeyed.remove(key);
        }
        if !self.filed.get(key).is_some_and(|(filer, _)| mine(*filer)) {
            return;
        }
        for index_key in self.filed.remove(key).into_iter().flat_map(|(_, keys)| keys) {
            if self.by_value.unfile(&index_key, key) {
                self.kinds[index_key.kind()] -= 1;
            }
        }
    }

    /// The entries `lookup` may match, each once, with their owners (None: this index cannot
    /// narrow it).
    fn candidates<'a>(&'a self, lookup: &Lookup) -> Option<Vec<(&'a [u8], Owner)>> {
        let mut found: Vec<(&'a [u8], Owner)> = self.unkeyed.iter().map(|(key, owner)| (&**key, *owner)).collect();
        let mut sets = usize::from(!found.is_empty());
        let mut add = |keys: &'a Filed| {
            sets += 1;
            found.extend(keys.iter().map(|(key, owner)| (&**key, *owner)));
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
        IndexKey::Whole(_) | IndexKey::Fraction(_) => IndexKey::Fraction(f64::NEG_INFINITY),
        IndexKey::Text(_) => IndexKey::Text(String::new()),
        other => other.clone(),
    };
    let ceiling = |kind: &IndexKey| match kind {
        IndexKey::Whole(_) | IndexKey::Fraction(_) => Bound::Included(IndexKey::Fraction(f64::INFINITY)),
        // Every text sorts below the next kind; there is none after text.
        IndexKey::Text(_) => Bound::Unbounded,
        other => Bound::Included(other.clone()),
    };
    let same_kind = |a: &IndexKey, b: &IndexKey| a.kind() == b.kind();
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

/// The indexes of one map on one reactor ([`Shared`]), or of one store outside a reactor's
/// partitions.
#[derive(Debug)]
pub struct Indexes {
    schemas: Arc<Schemas>,
    indexes: Vec<Index>,
    /// The stores that file here (each files every change of its entries).
    attached: HashSet<Owner>,
}

impl Indexes {
    pub fn new(schemas: Arc<Schemas>, definitions: &[IndexDefinition]) -> Indexes {
        let indexes = definitions.iter().cloned().map(Index::new).collect();
        Indexes { schemas, indexes, attached: HashSet::new() }
    }

    /// Adds an empty index (its entries come by [`Indexes::file_missing`]); false if it
    /// existed.
    pub fn ensure(&mut self, definition: &IndexDefinition) -> bool {
        if self.indexes.iter().any(|index| index.definition == *definition) {
            return false;
        }
        self.indexes.push(Index::new(definition.clone()));
        true
    }

    /// A store (`owner`) files here from now on; its entries go in by `file_missing`.
    pub fn attach(&mut self, owner: Owner) {
        self.attached.insert(owner);
    }

    /// A store (`owner`) is gone with its entries (`keys`).
    pub fn detach<'a>(&mut self, owner: Owner, keys: impl Iterator<Item = &'a [u8]>) {
        for key in keys {
            self.remove(key, owner);
        }
        self.attached.remove(&owner);
        for index in &mut self.indexes {
            index.filed_by.remove(&owner);
        }
    }

    /// Whether every index holds the entries of every attached store.
    pub fn complete(&self) -> bool {
        self.indexes.iter().all(|index| index.filed_by.len() == self.attached.len())
    }

    /// Whether `owner` has entries to file: an index it has not filed into.
    pub fn missing(&self, owner: Owner) -> bool {
        self.indexes.iter().any(|index| !index.filed_by.contains(&owner))
    }

    /// Files the entries of `owner` (attached) in every index it has not filed into yet.
    pub fn file_missing<'a, I: Iterator<Item = (&'a [u8], &'a [u8])>>(
        &mut self,
        owner: Owner,
        entries: impl Fn() -> I,
    ) {
        for index in self.indexes.iter_mut().filter(|index| !index.filed_by.contains(&owner)) {
            for entry in entries() {
                index.insert(entry, owner, &self.schemas);
            }
            index.filed_by.insert(owner);
        }
    }

    /// The entry under `key`, of `owner`, is now `value`.
    pub fn insert(&mut self, key: &[u8], value: &[u8], owner: Owner) {
        for index in &mut self.indexes {
            index.insert((key, value), owner, &self.schemas);
        }
    }

    /// The entry under `key`, of `owner`, is gone.
    pub fn remove(&mut self, key: &[u8], owner: Owner) {
        for index in &mut self.indexes {
            index.remove(key, Some(owner));
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
    ) -> Option<impl Iterator<Item = (&'a IndexKey, &'a Filed)> + 'a> {
        let (index, by_value) = self.usable().find_map(|index| match &index.by_value {
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
    pub fn candidates(&self, plan: &[Lookup]) -> Option<Vec<(&[u8], Owner)>> {
        let composite = |prefix| {
            let mut composites = self.usable().filter(|index| index.paths.len() > 1);
            composites.find_map(|index| index.candidates(&composite_lookup(index, plan, prefix)?))
        };
        let single = || {
            plan.iter().find_map(|lookup| {
                let mut on_attribute = self.usable().filter(|index| index.single_on(&lookup.attribute));
                on_attribute.find_map(|index| index.candidates(lookup))
            })
        };
        composite(false).or_else(single).or_else(|| composite(true))
    }

    /// The indexes that hold every attached store's entries.
    fn usable(&self) -> impl Iterator<Item = &Index> {
        self.indexes.iter().filter(|index| index.filed_by.len() == self.attached.len())
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
mod tests;
