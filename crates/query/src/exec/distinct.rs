//! The distinct aggregation's set: Hazelcast's `CanonicalizingHashSet`, iterated in Java's
//! `HashMap` order.

use super::java_numbers::{double_value, same_double};
use crate::java::ExecError;
use crate::order::java_hash_code;
use crate::value::Value;
use crate::write::write_object;

/// One value of a distinct set: its canonical form's inline bytes (what Java's `equals` on the
/// canonical form compares; empty for values equal only to themselves, like arrays), the
/// `hashCode()` `HashMap` places it by, and the value as written.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Distinct {
    pub(super) canonical: Vec<u8>,
    pub(super) hash: i32,
    pub(super) inline: Vec<u8>,
}

/// Hazelcast's `CanonicalizingHashSet`: a `java.util.HashMap` from canonical values to values,
/// iterated as Java iterates it (bucket by bucket, each bucket in insertion order; a put of an
/// equal value replaces the value in place). `capacity` 0 is a table not yet allocated, which
/// takes `threshold` (or 16) at the first put.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct DistinctSet {
    pub(super) entries: Vec<Distinct>,
    pub(super) capacity: u32,
    pub(super) threshold: u32,
    /// Where each entry with a canonical form is in `entries`, by that form (a put finds its
    /// equal in one lookup, not by walking every entry).
    positions: std::collections::HashMap<Vec<u8>, usize>,
}

pub(super) const MAX_CAPACITY: u32 = 1 << 30;

impl DistinctSet {
    /// A set as another member sent it (its entries already distinct, in its order).
    pub(super) fn decoded(entries: Vec<Distinct>, capacity: u32, threshold: u32) -> DistinctSet {
        let mut set =
            DistinctSet { entries: Vec::with_capacity(entries.len()), capacity, threshold, ..DistinctSet::default() };
        for entry in entries {
            set.append(entry);
        }
        set
    }

    pub(super) fn put(&mut self, entry: Distinct) {
        if let Some(&at) = self.positions.get(&entry.canonical) {
            self.entries[at].inline = entry.inline;
            return;
        }
        if self.capacity == 0 {
            self.capacity = if self.threshold > 0 { self.threshold } else { 16 };
        }
        self.append(entry);
        if self.entries.len() as u64 > u64::from(self.capacity) * 3 / 4 && self.capacity < MAX_CAPACITY {
            self.capacity *= 2;
        }
    }

    /// Adds `entry` as a new one (a value equal only to itself has no canonical form to find).
    fn append(&mut self, entry: Distinct) {
        if !entry.canonical.is_empty() {
            self.positions.insert(entry.canonical.clone(), self.entries.len());
        }
        self.entries.push(entry);
    }

    /// `HashMap.putAll` (what `combine` does): presizes an unallocated table, then puts.
    pub(super) fn put_all(&mut self, other: &DistinctSet) {
        let size = other.entries.len();
        if size == 0 {
            return;
        }
        if self.capacity == 0 {
            let wanted = (size as f32 / 0.75 + 1.0).min(MAX_CAPACITY as f32) as u32;
            if wanted > self.threshold {
                self.threshold = wanted.next_power_of_two().min(MAX_CAPACITY);
            }
        } else if size as u64 > u64::from(self.capacity) * 3 / 4 && self.capacity < MAX_CAPACITY {
            self.capacity *= 2;
        }
        for entry in other.ordered() {
            self.put(entry.clone());
        }
    }

    /// The values in Java's iteration order.
    pub(super) fn ordered(&self) -> Vec<&Distinct> {
        let mask = self.capacity.max(1) - 1;
        let bucket = |entry: &&Distinct| {
            let hash = entry.hash as u32;
            (hash ^ (hash >> 16)) & mask
        };
        let mut ordered: Vec<&Distinct> = self.entries.iter().collect();
        ordered.sort_by_key(bucket);
        ordered
    }
}

/// `Comparables.canonicalizeForHashLookup`: integral numbers as `Long`, other floats as
/// `Double`.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Byte(_) | Value::Short(_) | Value::Int(_) => Value::Long(double_value(value) as i64),
        Value::Float(_) | Value::Double(_) => {
            let double = double_value(value);
            let long = double as i64;
            if same_double(double, long as f64) {
                Value::Long(long)
            } else {
                Value::Double(if double.is_nan() { f64::NAN } else { double })
            }
        }
        other => other.clone(),
    }
}

pub(super) fn distinct_of(value: &Value, inline: Vec<u8>) -> Result<Distinct, ExecError> {
    let canonical = canonical(value);
    let (canonical, hash) = match &canonical {
        Value::Null => (0i32.to_be_bytes().to_vec(), 0),
        Value::Array(_) => (Vec::new(), 0),
        Value::Object(_) => (inline.clone(), 0),
        other => {
            let mut bytes = Vec::new();
            write_object(&mut bytes, other, 0)?;
            (bytes, java_hash_code(other)?)
        }
    };
    Ok(Distinct { canonical, hash, inline })
}
