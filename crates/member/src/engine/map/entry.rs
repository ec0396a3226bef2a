//! One map entry in one allocation: a small header, then the key's bytes, then the value's.
//! The only `unsafe` code of the map store lives here, behind [`Entry`]'s safe interface.
//!
//! An [`Entry`] is a thin owning pointer (8 bytes, so a table slot `Option<Entry>` is 8 bytes)
//! to one of two layouts, told apart by bit 0 of the first word:
//!
//! ```text
//! compact (bit 0 = 0): word: key length (bits 1..17) | value length (17..41) | version (41..64)
//!                      | key | value                                          (8-byte header)
//! rich    (bit 0 = 1): word: key length (bits 32..64) | word: value length | Meta (8 × i64)
//!                      | key | value                                         (80-byte header)
//! ```
//!
//! A compact entry keeps only the version: it is for entries that never expire in maps that
//! keep no per-entry statistics or access order, whose lengths and version fit its fields.
//! Everything else is rich. With a 32-byte key and a 112-byte value a compact entry asks for
//! 152 bytes, which glibc serves from a 160-byte chunk (the smallest that holds 144 bytes).
//!
//! Invariants: `header` points to a live allocation of `header_bytes + key + value` bytes
//! aligned to 8, made by [`Entry::new`] with exactly the layout [`Entry::layout`] recomputes
//! from the header; the entry owns it alone (no aliasing), and frees it when dropped.
#![allow(unsafe_code, reason = "a thin pointer to one allocation per entry; see the module doc")]

use crate::clock::NEVER;
use std::alloc::{self, Layout};
use std::fmt;
use std::ptr::{self, NonNull};

/// An entry's metadata as backups carry it and getEntryView reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Meta {
    /// 0 on creation, +1 on every update (as `EntryView.version` reports it).
    pub version: i64,
    pub creation_time_ms: i64,
    pub last_update_time_ms: i64,
    pub last_access_time_ms: i64,
    pub hits: i64,
    /// Time to live from `ttl_base_ms`, or NEVER.
    pub ttl_ms: i64,
    /// Start of the ttl: the last write, or the last `setTtl`.
    pub ttl_base_ms: i64,
    /// Longest time without access, or NEVER.
    pub max_idle_ms: i64,
}

impl Meta {
    /// What a compact entry reports: its version, no times, no hits, no expiry.
    pub const fn plain(version: i64) -> Meta {
        Meta {
            version,
            creation_time_ms: 0,
            last_update_time_ms: 0,
            last_access_time_ms: 0,
            hits: 0,
            ttl_ms: NEVER,
            ttl_base_ms: 0,
            max_idle_ms: NEVER,
        }
    }

    /// Its fields in the order backups, snapshots and merges carry them.
    pub fn fields(&self) -> [i64; Meta::FIELDS] {
        [
            self.version,
            self.creation_time_ms,
            self.last_update_time_ms,
            self.last_access_time_ms,
            self.hits,
            self.ttl_ms,
            self.ttl_base_ms,
            self.max_idle_ms,
        ]
    }

    /// What [`Meta::fields`] gave.
    pub fn from_fields(fields: [i64; Meta::FIELDS]) -> Meta {
        let [version, creation_time_ms, last_update_time_ms, last_access_time_ms, hits, ttl_ms, ttl_base_ms, max_idle_ms] =
            fields;
        Meta {
            version,
            creation_time_ms,
            last_update_time_ms,
            last_access_time_ms,
            hits,
            ttl_ms,
            ttl_base_ms,
            max_idle_ms,
        }
    }

    /// How many fields a `Meta` has.
    pub const FIELDS: usize = 8;

    /// When the entry expires (NEVER if it does not).
    pub fn expiration_time_ms(&self) -> i64 {
        let by_ttl = if self.ttl_ms == NEVER { NEVER } else { self.ttl_base_ms.saturating_add(self.ttl_ms) };
        let by_idle =
            if self.max_idle_ms == NEVER { NEVER } else { self.last_access_time_ms.saturating_add(self.max_idle_ms) };
        by_ttl.min(by_idle)
    }

    /// Whether the entry can expire at all (a finite ttl or max-idle).
    pub fn expires(&self) -> bool {
        self.ttl_ms != NEVER || self.max_idle_ms != NEVER
    }
}

const _: () = assert!(size_of::<Meta>() == 64 && align_of::<Meta>() == ALIGN);

const ALIGN: usize = align_of::<u64>();
const RICH: u64 = 1;
const COMPACT_HEADER_BYTES: usize = 8;
const RICH_HEADER_BYTES: usize = 16 + size_of::<Meta>();
const COMPACT_KEY_BITS: u32 = 16;
const COMPACT_VALUE_BITS: u32 = 24;
const COMPACT_VERSION_BITS: u32 = 23;
const _: () = assert!(1 + COMPACT_KEY_BITS + COMPACT_VALUE_BITS + COMPACT_VERSION_BITS == 64);

fn fits(length: usize, bits: u32) -> bool {
    (length as u64) < 1 << bits
}

/// A key, its value and (if rich) its metadata in one allocation. Owns the allocation like a
/// `Box<[u8]>` does its bytes.
pub struct Entry {
    header: NonNull<u8>,
}

// SAFETY: an Entry owns its allocation exclusively (like Box<[u8]>), holds no thread-bound
// state, and `&Entry` only reads; sending or sharing it is as safe as for Box<[u8]>.
unsafe impl Send for Entry {}
// SAFETY: as above: shared references only read immutable bytes.
unsafe impl Sync for Entry {}

impl Entry {
    /// Copies `key` and `value` into a new entry. `rich` keeps all of `meta`; otherwise only
    /// its version is kept if the lengths and version fit the compact header (else it is rich).
    pub fn new(key: &[u8], value: &[u8], meta: &Meta, rich: bool) -> Entry {
        let compact = !rich
            && fits(key.len(), COMPACT_KEY_BITS)
            && fits(value.len(), COMPACT_VALUE_BITS)
            && (0..1 << COMPACT_VERSION_BITS).contains(&meta.version);
        let header_bytes = if compact { COMPACT_HEADER_BYTES } else { RICH_HEADER_BYTES };
        assert!(u32::try_from(key.len()).is_ok(), "a key is shorter than 4 GiB");
        let layout = Self::layout(header_bytes, key.len(), value.len());
        // SAFETY: the layout's size is at least the 8-byte header, never zero.
        let raw = unsafe { alloc::alloc(layout) };
        let Some(header) = NonNull::new(raw) else { alloc::handle_alloc_error(layout) };
        let words = header.as_ptr().cast::<u64>();
        // SAFETY: `header` is a fresh allocation of `header_bytes + key + value` bytes aligned
        // to 8 (so to u64 and Meta); every write below stays inside it, at its own offset, and
        // the fresh allocation cannot overlap `key` or `value`.
        unsafe {
            if compact {
                let version = meta.version as u64;
                words.write((key.len() as u64) << 1 | (value.len() as u64) << 17 | version << 41);
            } else {
                words.write(RICH | (key.len() as u64) << 32);
                words.add(1).write(value.len() as u64);
                header.as_ptr().add(16).cast::<Meta>().write(*meta);
            }
            let data = header.as_ptr().add(header_bytes);
            ptr::copy_nonoverlapping(key.as_ptr(), data, key.len());
            ptr::copy_nonoverlapping(value.as_ptr(), data.add(key.len()), value.len());
        }
        let entry = Entry { header };
        debug_assert_eq!((entry.key(), entry.value(), entry.is_rich()), (key, value, !compact));
        entry
    }

    fn layout(header_bytes: usize, key_bytes: usize, value_bytes: usize) -> Layout {
        let size = header_bytes.checked_add(key_bytes).and_then(|size| size.checked_add(value_bytes));
        size.and_then(|size| Layout::from_size_align(size, ALIGN).ok()).expect("an entry's size fits in memory")
    }

    fn first_word(&self) -> u64 {
        // SAFETY: every entry starts with an initialized, aligned u64 (see `new`).
        unsafe { self.header.as_ptr().cast::<u64>().read() }
    }

    /// (header bytes, key bytes, value bytes).
    fn lengths(&self) -> (usize, usize, usize) {
        let word = self.first_word();
        if word & RICH == 0 {
            let key = (word >> 1) & ((1 << COMPACT_KEY_BITS) - 1);
            let value = (word >> 17) & ((1 << COMPACT_VALUE_BITS) - 1);
            (COMPACT_HEADER_BYTES, key as usize, value as usize)
        } else {
            // SAFETY: a rich entry's second word is its initialized value length (see `new`).
            let value = unsafe { self.header.as_ptr().cast::<u64>().add(1).read() };
            (RICH_HEADER_BYTES, (word >> 32) as usize, value as usize)
        }
    }

    /// Asks the CPU to bring the entry's first two cache lines (its header, key and the
    /// start of its value) in: a scan calls it a few entries ahead of the one it reads, so
    /// their loads from memory overlap instead of stalling one after another. A hint only.
    #[inline]
    pub fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let at = self.header.as_ptr().cast::<i8>();
            // SAFETY: a prefetch never faults nor changes memory; `at` is this entry's live
            // allocation, and the second line is only hinted, never read.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(at);
                _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(64));
            }
        }
    }

    /// Whether the entry keeps all its metadata.
    pub fn is_rich(&self) -> bool {
        self.first_word() & RICH != 0
    }

    pub fn key(&self) -> &[u8] {
        let (header_bytes, key_bytes, _) = self.lengths();
        // SAFETY: the key's bytes were copied in at this offset and length by `new`, and the
        // allocation lives (unchanged but for metadata) as long as `self`.
        unsafe { std::slice::from_raw_parts(self.header.as_ptr().add(header_bytes), key_bytes) }
    }

    pub fn value(&self) -> &[u8] {
        let (header_bytes, key_bytes, value_bytes) = self.lengths();
        // SAFETY: as for `key`: the value follows the key, written by `new`.
        unsafe { std::slice::from_raw_parts(self.header.as_ptr().add(header_bytes + key_bytes), value_bytes) }
    }

    /// Key and value bytes (the USED_HEAP_SIZE measure).
    pub fn held_bytes(&self) -> usize {
        let (_, key_bytes, value_bytes) = self.lengths();
        key_bytes + value_bytes
    }

    /// The entry's metadata; a compact entry's is [`Meta::plain`].
    pub fn meta(&self) -> Meta {
        match self.rich_meta() {
            Some(meta) => *meta,
            None => Meta::plain((self.first_word() >> 41) as i64),
        }
    }

    fn rich_meta(&self) -> Option<&Meta> {
        // SAFETY: a rich entry holds an initialized Meta at offset 16, aligned to 8; the shared
        // borrow of `self` keeps it from being written meanwhile.
        self.is_rich().then(|| unsafe { &*self.header.as_ptr().add(16).cast::<Meta>() })
    }

    /// The metadata of a rich entry, to record accesses in place; None if compact.
    pub fn meta_mut(&mut self) -> Option<&mut Meta> {
        // SAFETY: as in `rich_meta`; the exclusive borrow of `self` makes this the only
        // reference to the metadata.
        self.is_rich().then(|| unsafe { &mut *self.header.as_ptr().add(16).cast::<Meta>() })
    }

    pub fn version(&self) -> i64 {
        self.meta().version
    }

    pub fn expiration_time_ms(&self) -> i64 {
        self.rich_meta().map_or(NEVER, Meta::expiration_time_ms)
    }

    pub fn is_expired(&self, now_ms: i64) -> bool {
        now_ms >= self.expiration_time_ms()
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        let (header_bytes, key_bytes, value_bytes) = self.lengths();
        let layout = Self::layout(header_bytes, key_bytes, value_bytes);
        // SAFETY: `new` allocated `header` with this very layout (recomputed from the header it
        // wrote), and the entry owns it alone; nothing uses it after drop.
        unsafe { alloc::dealloc(self.header.as_ptr(), layout) }
    }
}

impl Clone for Entry {
    fn clone(&self) -> Entry {
        Entry::new(self.key(), self.value(), &self.meta(), self.is_rich())
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        (self.key(), self.value(), self.meta(), self.is_rich())
            == (other.key(), other.value(), other.meta(), other.is_rich())
    }
}

impl Eq for Entry {}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("key", &self.key())
            .field("value", &self.value())
            .field("meta", &self.meta())
            .field("rich", &self.is_rich())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rich_meta() -> Meta {
        Meta {
            version: 7,
            creation_time_ms: 1,
            last_update_time_ms: 2,
            last_access_time_ms: 3,
            hits: 4,
            ttl_ms: 5,
            ttl_base_ms: 6,
            max_idle_ms: 8,
        }
    }

    #[test]
    fn a_compact_entry_keeps_key_value_and_version_only() {
        let entry = Entry::new(b"key", b"value", &rich_meta(), false);
        assert!(!entry.is_rich());
        assert_eq!((entry.key(), entry.value(), entry.held_bytes()), (&b"key"[..], &b"value"[..], 8));
        assert_eq!(entry.meta(), Meta::plain(7));
        assert_eq!(entry.expiration_time_ms(), NEVER);
        let mut entry = entry;
        assert!(entry.meta_mut().is_none());
    }

    #[test]
    fn a_rich_entry_keeps_and_updates_its_metadata() {
        let mut entry = Entry::new(b"k", b"", &rich_meta(), true);
        assert!(entry.is_rich());
        assert_eq!((entry.key(), entry.value()), (&b"k"[..], &b""[..]));
        assert_eq!(entry.meta(), rich_meta());
        assert_eq!(entry.expiration_time_ms(), 11, "ttl base + ttl before access + max idle");
        entry.meta_mut().unwrap().hits += 1;
        assert_eq!(entry.meta().hits, 5);
        assert_eq!(entry.clone(), entry);
    }

    #[test]
    fn what_does_not_fit_the_compact_header_is_rich() {
        let plain = |version| Meta::plain(version);
        let long_key = vec![1u8; (1 << COMPACT_KEY_BITS) - 1];
        let long_value = vec![2u8; (1 << COMPACT_VALUE_BITS) - 1];
        let largest = Entry::new(&long_key, &long_value, &plain((1 << COMPACT_VERSION_BITS) - 1), false);
        assert!(!largest.is_rich());
        assert_eq!((largest.key(), largest.value()), (&long_key[..], &long_value[..]));
        assert_eq!(largest.version(), (1 << COMPACT_VERSION_BITS) - 1);
        let cases = [
            (vec![1u8; 1 << COMPACT_KEY_BITS], vec![], 0),
            (vec![], vec![2u8; 1 << COMPACT_VALUE_BITS], 0),
            (vec![], vec![], 1 << COMPACT_VERSION_BITS),
            (vec![], vec![], -1),
        ];
        for (key, value, version) in cases {
            let entry = Entry::new(&key, &value, &plain(version), false);
            assert!(entry.is_rich());
            assert_eq!((entry.key(), entry.value(), entry.meta()), (&key[..], &value[..], plain(version)));
        }
    }

    #[test]
    fn entries_move_between_threads() {
        let entry = Entry::new(b"key", b"value", &Meta::plain(0), false);
        let back = std::thread::spawn(move || entry).join().unwrap();
        assert_eq!(back.value(), b"value");
    }
}
