//! The hash table of a map's entries in one partition: open addressing with Robin Hood
//! probing over slots of one thin pointer ([`Entry`], 8 bytes) and one byte of probe distance.
//!
//! Why not hashbrown: its bucket count is a power of two at most 7/8 full, so one partition of
//! a 1,000,000-entry map (≈3,690 entries) sits in 8,192 buckets, 45% full. Here the capacity
//! is any number and grows by a quarter when the table would pass 7/8, so a table is 70–87.5%
//! full: 9 bytes a slot is 10.3–12.9 bytes an entry. No hash is stored: lookups compare keys
//! only of entries with the same home slot (those whose distance equals the probe's), and a
//! resize re-hashes every key.
//!
//! Invariants: `distances[i]` is 0 iff `slots[i]` is None, else the entry's distance from its
//! home slot plus one; along a probe run distances grow by at most one per slot (Robin Hood),
//! so a lookup stops at the first slot poorer than itself; at least one slot is empty; `len`
//! counts the entries; past 8 slots, at least a quarter of them are full. Removal shifts the run after the hole back by one (no tombstones), so
//! a removal moves entries only to lower slots (or, at the wrap, to the last ones).

use crate::engine::map::entry::Entry;
use ahash::RandomState;

/// Longest probe distance a slot's byte holds; beyond it the table grows (never seen with a
/// keyed hash at 7/8 load).
const MAX_DISTANCE: usize = u8::MAX as usize - 1;

/// A map's entries in one partition, keyed by the key's bytes. Owned by the partition's store.
#[derive(Debug, Default)]
pub struct Table {
    slots: Vec<Option<Entry>>,
    /// Per slot: 0 = empty, else probe distance + 1.
    distances: Vec<u8>,
    len: usize,
    hasher: RandomState,
}

impl Table {
    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slots, occupied or not: the range of [`Table::slot`] and [`Table::remove_at`].
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn home(&self, key: &[u8]) -> usize {
        let hash = self.hasher.hash_one(key);
        // Maps the hash onto 0..capacity without a division (Lemire's multiply-shift).
        ((u128::from(hash) * self.slots.len() as u128) >> 64) as usize
    }

    fn next(&self, slot: usize) -> usize {
        if slot + 1 == self.slots.len() {
            0
        } else {
            slot + 1
        }
    }

    /// The slot holding `key`.
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mut slot = self.home(key);
        for distance in 1..=MAX_DISTANCE + 1 {
            let here = usize::from(self.distances[slot]);
            if here < distance {
                return None;
            }
            if here == distance && self.slots[slot].as_ref().expect("a distance marks an entry").key() == key {
                return Some(slot);
            }
            slot = self.next(slot);
        }
        None
    }

    pub fn get(&self, key: &[u8]) -> Option<&Entry> {
        self.find(key).and_then(|slot| self.slot(slot))
    }

    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.find(key).and_then(|slot| self.slots[slot].as_mut())
    }

    /// The entry in `slot`, if any.
    pub fn slot(&self, slot: usize) -> Option<&Entry> {
        self.slots[slot].as_ref()
    }

    /// Puts `entry` in place of the one in `slot`, which must have the same key; returns it.
    pub fn replace_at(&mut self, slot: usize, entry: Entry) -> Entry {
        let old = self.slots[slot].replace(entry).expect("replacing an entry");
        debug_assert_eq!(old.key(), self.slots[slot].as_ref().map(Entry::key).unwrap());
        old
    }

    /// Adds an entry whose key is not in the table.
    pub fn insert(&mut self, entry: Entry) {
        debug_assert!(self.find(entry.key()).is_none(), "the key is new");
        if (self.len + 1) * 8 > self.slots.len() * 7 {
            self.grow(None);
        }
        if let Some(unplaced) = self.place(entry) {
            // A run grew too long to record: spread the table out.
            self.grow(Some(unplaced));
        }
        self.len += 1;
    }

    /// Robin Hood insertion: takes the slot of any entry closer to its home than the one carried
    /// and carries that one on. Returns the carried entry if its distance outgrew a byte.
    fn place(&mut self, entry: Entry) -> Option<Entry> {
        let mut slot = self.home(entry.key());
        let mut carried = entry;
        let mut distance = 1;
        loop {
            let here = usize::from(self.distances[slot]);
            if here == 0 {
                self.slots[slot] = Some(carried);
                self.distances[slot] = distance as u8;
                return None;
            }
            if here < distance {
                carried = self.slots[slot].replace(carried).expect("a distance marks an entry");
                self.distances[slot] = distance as u8;
                distance = here;
            }
            slot = self.next(slot);
            distance += 1;
            if distance > MAX_DISTANCE {
                return Some(carried);
            }
        }
    }

    /// Grows the capacity by a quarter (at least to 8) and re-places every entry and `extra`
    /// (an entry not in the table yet).
    fn grow(&mut self, extra: Option<Entry>) {
        let capacity = self.slots.len();
        self.resize((capacity + capacity / 4).max(8), extra);
    }

    /// Re-places every entry and `extra` in `capacity` slots, grown by a quarter again while
    /// a run outgrows a byte.
    fn resize(&mut self, mut capacity: usize, extra: Option<Entry>) {
        let mut unplaced: Vec<Entry> = extra.into_iter().collect();
        loop {
            assert!(capacity <= self.len.max(64) * 64, "runs stay short with a keyed hash");
            let old = std::mem::replace(&mut self.slots, std::iter::repeat_with(|| None).take(capacity).collect());
            self.distances = vec![0; capacity];
            let mut entries = std::mem::take(&mut unplaced).into_iter().chain(old.into_iter().flatten());
            for entry in entries.by_ref() {
                if let Some(entry) = self.place(entry) {
                    unplaced.push(entry);
                    break;
                }
            }
            unplaced.extend(entries);
            if unplaced.is_empty() {
                return;
            }
            capacity += capacity / 4;
        }
    }

    /// Removes the entry in `slot` (which must hold one) and shifts the run after it back.
    /// A table left less than a quarter full shrinks to half full (empty: no slots), so that
    /// walks over slots (the sweep, eviction samples) cost at most a few slots per entry.
    pub fn remove_at(&mut self, slot: usize) -> Entry {
        let entry = self.take_at(slot);
        if self.len * 4 < self.slots.len() && self.slots.len() > 8 {
            let capacity = if self.len == 0 { 0 } else { (self.len * 2).max(8) };
            self.resize(capacity, None);
        }
        entry
    }

    fn take_at(&mut self, slot: usize) -> Entry {
        let entry = self.slots[slot].take().expect("removing an entry");
        self.distances[slot] = 0;
        self.len -= 1;
        let mut hole = slot;
        loop {
            let next = self.next(hole);
            let distance = self.distances[next];
            if distance <= 1 {
                break;
            }
            self.slots[hole] = self.slots[next].take();
            self.distances[hole] = distance - 1;
            self.distances[next] = 0;
            hole = next;
        }
        entry
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let slot = self.find(key)?;
        Some(self.remove_at(slot))
    }

    /// The entries in slot order; each is asked in ([`Entry::prefetch`]) a few slots before
    /// it is reached, so that a scan over a table larger than the caches does not wait on
    /// memory once per entry.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        const AHEAD: usize = 6;
        let slots = &self.slots;
        slots.iter().take(AHEAD).flatten().for_each(Entry::prefetch);
        slots.iter().enumerate().filter_map(move |(at, slot)| {
            if let Some(Some(ahead)) = slots.get(at + AHEAD) {
                ahead.prefetch();
            }
            slot.as_ref()
        })
    }

    /// Keeps the entries `keep` says to and drops the others; the table is rebuilt to fit.
    pub fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        let old = std::mem::take(&mut self.slots);
        self.distances = Vec::new();
        self.len = 0;
        for entry in old.into_iter().flatten() {
            if keep(&entry) {
                self.insert(entry);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::map::entry::Meta;
    use proptest::prelude::*;
    use std::collections::{hash_map, HashMap};

    fn entry(key: &[u8], value: &[u8]) -> Entry {
        Entry::new(key, value, &Meta::plain(0), false)
    }

    /// Checks the invariants of the module doc.
    fn check(table: &Table) {
        assert_eq!(table.slots.len(), table.distances.len());
        assert_eq!(table.iter().count(), table.len);
        assert!(table.slots.is_empty() || table.len < table.slots.len(), "a slot stays empty");
        for (slot, entry) in table.slots.iter().enumerate() {
            let distance = usize::from(table.distances[slot]);
            match entry {
                None => assert_eq!(distance, 0),
                Some(entry) => {
                    let home = table.home(entry.key());
                    let capacity = table.slots.len();
                    assert_eq!(distance, (slot + capacity - home) % capacity + 1, "slot {slot}");
                    let previous = usize::from(table.distances[(slot + capacity - 1) % capacity]);
                    assert!(distance <= previous + 1, "Robin Hood order at slot {slot}");
                    assert_eq!(table.find(entry.key()), Some(slot));
                }
            }
        }
    }

    #[test]
    fn holds_many_keys_at_most_seven_eighths_full() {
        let mut table = Table::default();
        for index in 0..5_000u32 {
            table.insert(entry(&index.to_le_bytes(), b"v"));
        }
        check(&table);
        assert!(table.len() * 8 <= table.capacity() * 7);
        assert!(table.len() * 10 >= table.capacity() * 7, "grown by a quarter at a time");
        for index in (0..5_000u32).step_by(2) {
            assert_eq!(table.remove(&index.to_le_bytes()).unwrap().key(), index.to_le_bytes());
        }
        check(&table);
        assert_eq!(table.len(), 2_500);
        assert!(table.get(&2u32.to_le_bytes()).is_none());
        assert_eq!(table.get(&3u32.to_le_bytes()).unwrap().value(), b"v");
        table.retain(|entry| entry.key()[0] % 4 == 1);
        check(&table);
        assert_eq!(table.len(), 1_250);
        while table.len() > 1 {
            table.remove_at((0..table.capacity()).find(|slot| table.slot(*slot).is_some()).unwrap());
            assert!(table.capacity() <= 8 || table.len() * 4 >= table.capacity(), "shrinks when a quarter full");
        }
        check(&table);
        table.remove_at((0..table.capacity()).find(|slot| table.slot(*slot).is_some()).unwrap());
        assert_eq!((table.len(), table.capacity()), (0, 8));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(Vec<u8>, u8),
        Remove(Vec<u8>),
        RemoveAt(usize),
        Replace(Vec<u8>, u8),
        Retain(u8),
    }

    fn key() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(0u8..6, 0..4)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (key(), any::<u8>()).prop_map(|(key, value)| Op::Insert(key, value)),
            3 => key().prop_map(Op::Remove),
            2 => any::<usize>().prop_map(Op::RemoveAt),
            2 => (key(), any::<u8>()).prop_map(|(key, value)| Op::Replace(key, value)),
            1 => (1u8..4).prop_map(Op::Retain),
        ]
    }

    proptest! {
        #[test]
        fn behaves_like_a_hash_map(ops in proptest::collection::vec(op(), 1..300)) {
            let mut table = Table::default();
            let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(key, value) => {
                        if let hash_map::Entry::Vacant(vacant) = model.entry(key) {
                            table.insert(entry(vacant.key(), &[value]));
                            vacant.insert(vec![value]);
                        }
                    }
                    Op::Remove(key) => {
                        let removed = table.remove(&key).map(|entry| entry.value().to_vec());
                        prop_assert_eq!(removed, model.remove(&key));
                    }
                    Op::RemoveAt(at) if table.capacity() > 0 => {
                        let slot = at % table.capacity();
                        if table.slot(slot).is_some() {
                            let removed = table.remove_at(slot);
                            prop_assert_eq!(model.remove(removed.key()), Some(removed.value().to_vec()));
                        }
                    }
                    Op::RemoveAt(_) => {}
                    Op::Replace(key, value) => {
                        if let Some(slot) = table.find(&key) {
                            let old = table.replace_at(slot, entry(&key, &[value]));
                            prop_assert_eq!(model.insert(key, vec![value]), Some(old.value().to_vec()));
                        }
                    }
                    Op::Retain(modulus) => {
                        let keep = |key: &[u8]| key.len() < usize::from(modulus);
                        table.retain(|entry| keep(entry.key()));
                        model.retain(|key, _| keep(key));
                    }
                }
                check(&table);
                prop_assert_eq!(table.len(), model.len());
                for (key, value) in &model {
                    prop_assert_eq!(table.get(key).map(Entry::value), Some(&value[..]));
                }
            }
        }
    }
}
