//! The data of one partition: every map's entries that hash to it.
//!
//! Owned and written by exactly one thread: the reactor that owns the partition
//! (`partition % reactor_count == reactor index`). No locks; other threads reach a partition
//! only by handing an operation to its reactor.

use ahash::RandomState;
use std::collections::HashMap;

/// One entry: the value's serialized bytes and its metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub value: Box<[u8]>,
    /// 0 on creation, +1 on every update (as `EntryView.version` reports it).
    pub version: i64,
}

/// The entries of one map within one partition, keyed by the key's serialized bytes.
#[derive(Debug, Default)]
pub struct RecordStore {
    entries: HashMap<Box<[u8]>, Record, RandomState>,
    /// Bytes held by keys and values (for metrics and, later, size-based eviction).
    held_bytes: usize,
}

impl RecordStore {
    pub fn get(&self, key: &[u8]) -> Option<&Record> {
        self.entries.get(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Stores `value` under `key`; returns the previous value.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Option<Box<[u8]>> {
        match self.entries.get_mut(key) {
            Some(record) => {
                self.held_bytes = self.held_bytes + value.len() - record.value.len();
                record.version += 1;
                Some(std::mem::replace(&mut record.value, value.into()))
            }
            None => {
                self.held_bytes += key.len() + value.len();
                self.entries.insert(key.into(), Record { value: value.into(), version: 0 });
                None
            }
        }
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Box<[u8]>> {
        let (key, record) = self.entries.remove_entry(key)?;
        self.held_bytes -= key.len() + record.value.len();
        Some(record.value)
    }

    /// Removes every entry; returns how many there were.
    pub fn clear(&mut self) -> usize {
        let count = self.entries.len();
        self.entries.clear();
        self.held_bytes = 0;
        count
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Record)> {
        self.entries.iter().map(|(key, record)| (&**key, record))
    }
}

/// All maps' data in one partition.
#[derive(Debug, Default)]
pub struct PartitionStore {
    maps: HashMap<Box<str>, RecordStore, RandomState>,
}

impl PartitionStore {
    pub fn map(&self, name: &str) -> Option<&RecordStore> {
        self.maps.get(name)
    }

    /// The map's store, created on first write.
    pub fn map_mut(&mut self, name: &str) -> &mut RecordStore {
        if !self.maps.contains_key(name) {
            self.maps.insert(name.into(), RecordStore::default());
        }
        self.maps.get_mut(name).expect("inserted above")
    }

    /// Drops a map's data in this partition (destroy).
    pub fn drop_map(&mut self, name: &str) -> usize {
        self.maps.remove(name).map_or(0, |store| store.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_returns_previous_and_bumps_version() {
        let mut store = RecordStore::default();
        assert_eq!(store.put(b"k", b"v1"), None);
        assert_eq!(store.get(b"k").unwrap().version, 0);
        assert_eq!(store.put(b"k", b"v22").as_deref(), Some(&b"v1"[..]));
        assert_eq!(store.get(b"k").unwrap().version, 1);
        assert_eq!(store.held_bytes(), 4);
        assert_eq!(store.remove(b"k").as_deref(), Some(&b"v22"[..]));
        assert_eq!(store.held_bytes(), 0);
        assert!(store.is_empty());
    }

    #[test]
    fn maps_are_separate_namespaces() {
        let mut partition = PartitionStore::default();
        partition.map_mut("a").put(b"k", b"1");
        assert!(partition.map("b").is_none());
        assert_eq!(partition.drop_map("a"), 1);
        assert!(partition.map("a").is_none());
    }
}
