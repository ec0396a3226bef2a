//! Cardinality estimators (`ICardinalityEstimator`): one HyperLogLog per name (`hll.rs`) in
//! the partition of the name, with synchronous backups and migration through
//! [`PartitionObject`].
//!
//! A backup mirrors the owner's state exactly, pending entries, merges and the cached estimate
//! included (when merges happen decides when an estimator turns dense, and the cache what an
//! estimate answers right after the turn, so both decide its estimates after a failover). Each
//! record carries the resulting state of what it changed:
//!
//! | record | body | applied |
//! |---|---|---|
//! | `SPARSE` | merged entries (`u32` count, `u32` each), pending entries (likewise), cache | replaces a sparse state; a dense replica is ahead and ignores it |
//! | `PENDING` | slot (`u16`), entry (`u32`) | writes that pending slot (the next one, or the same entry again); ignored by a dense replica |
//! | `DENSE` | the 2^14 registers, cache | replaces a sparse state, or raises each register to it |
//! | `REGISTER` | index (`u16`), value (`u8`) | raises that register; refused by a sparse replica, which missed the turn to dense |
//! | `CACHE` | cache: `u8` 1 and the `i64` estimate, or `u8` 0 | sets the cached estimate (it ends every operation's records but a whole state's) |
//!
//! so applying one twice, or after a snapshot (whose one entry is a `SPARSE` or `DENSE`
//! record), is harmless. Anything else is `Malformed`: a record is checked before it changes
//! anything, so a bad one leaves the state as it was.
//!
//! Owned by the reactor that owns the partition; no locks.

use crate::cluster::peer::{Malformed, Reader, SnapshotWriter};
use crate::engine::cardinality_estimator::hll::{Change, Form, Hll, Sparse, MAX_REGISTER, REGISTERS};
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::partition::object::PartitionObject;
use ferrogrid_config::{CardinalityEstimatorConfig, MergePolicy};

const SPARSE: u8 = 1;
const PENDING: u8 = 2;
const DENSE: u8 = 3;
const REGISTER: u8 = 4;
const CACHE: u8 = 5;

/// Registers changed since the last `write_changes` sent one by one; past this many the
/// whole state goes instead.
const MAX_REGISTER_RECORDS: usize = 512;

/// What changed since the last `write_changes`.
#[derive(Debug, Default)]
struct Changed {
    /// Everything (a merge, the turn to dense): one state record.
    whole: bool,
    /// Sparse: pending slots written from this one on.
    pending_from: Option<usize>,
    /// Dense: registers raised.
    registers: Vec<u16>,
    /// Anything at all (the cached estimate, at least).
    any: bool,
}

/// One cardinality estimator in one partition.
#[derive(Debug)]
pub struct CardinalityEstimatorStore {
    hll: Hll,
    config: CardinalityEstimatorConfig,
    track_changes: bool,
    changed: Changed,
}

impl CardinalityEstimatorStore {
    pub(crate) fn new(config: CardinalityEstimatorConfig) -> CardinalityEstimatorStore {
        CardinalityEstimatorStore { hll: Hll::default(), config, track_changes: false, changed: Changed::default() }
    }

    /// Adds an item by its client's hash.
    pub(crate) fn add(&mut self, hash: i64) {
        let change = self.hll.add(hash);
        self.record(change);
    }

    /// The estimate of the distinct items added (merging what is pending, as Hazelcast does).
    pub(crate) fn estimate(&mut self) -> i64 {
        let (estimate, change) = self.hll.estimate();
        self.record(change);
        estimate
    }

    /// The whole state as one SPARSE or DENSE record: what a split-brain merge sends.
    pub(crate) fn state(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_state(&mut out, &self.hll);
        out
    }

    /// Whether nothing was ever added (a merge sends no such estimator).
    pub(crate) fn is_empty(&self) -> bool {
        self.hll.is_empty()
    }

    /// Merges a merging estimator's [`state`](Self::state) by `policy`, as Hazelcast's
    /// `CardinalityEstimatorContainer.merge` does: an estimator that estimates 0 counts as
    /// absent, and every policy but Discard fills an absence; HyperLogLog takes the union,
    /// PassThrough the merging estimator, PutIfAbsent keeps this one. Returns whether it
    /// changed; a malformed state changes nothing.
    pub(crate) fn merge_state(&mut self, policy: MergePolicy, state: &[u8]) -> Result<bool, Malformed> {
        let mut merging = CardinalityEstimatorStore::new(self.config);
        merging.apply_records(state)?;
        let absent = self.estimate() == 0;
        let merged = match policy {
            MergePolicy::Discard => return Ok(false),
            _ if absent => merging.hll,
            MergePolicy::HyperLogLog => {
                let mut union = self.hll.clone();
                union.union(&merging.hll);
                union
            }
            MergePolicy::PassThrough => merging.hll,
            _ => return Ok(false),
        };
        if merged == self.hll {
            return Ok(false);
        }
        self.hll = merged;
        self.record(Change::Whole);
        Ok(true)
    }

    fn record(&mut self, change: Change) {
        if !self.track_changes || change == Change::None {
            return;
        }
        let changed = &mut self.changed;
        changed.any = true;
        match change {
            Change::Whole => changed.whole = true,
            _ if changed.whole => {}
            Change::Pending(slot) => {
                changed.pending_from = Some(changed.pending_from.map_or(slot, |from| from.min(slot)))
            }
            Change::Register(_) if changed.registers.len() >= MAX_REGISTER_RECORDS => changed.whole = true,
            Change::Register(index) => changed.registers.push(index as u16),
            Change::None | Change::Cached => {}
        }
    }

    /// Applies SPARSE, PENDING, DENSE, REGISTER and CACHE records (a backup's or a snapshot's).
    fn apply_records(&mut self, body: &[u8]) -> Result<(), Malformed> {
        let mut reader = Reader::new(body);
        while !reader.is_empty() {
            match reader.u8()? {
                SPARSE => {
                    let (merged, pending) = (read_entries(&mut reader)?, read_entries(&mut reader)?);
                    let cached = read_cache(&mut reader)?;
                    let sparse = Sparse::from_parts(merged, pending)
                        .ok_or(Malformed::Refused("a sparse estimator no owner could have"))?;
                    if let Form::Sparse(_) = self.hll.form {
                        self.hll = Hll { form: Form::Sparse(sparse), cached };
                    }
                }
                PENDING => {
                    let (slot, entry) = (reader.u16()?, reader.u32()?);
                    if let Form::Sparse(sparse) = &mut self.hll.form {
                        let refused = Malformed::Refused("an estimator's pending entry out of turn");
                        sparse.set_pending(usize::from(slot), entry).ok_or(refused)?;
                    }
                }
                DENSE => {
                    let registers = reader.take(REGISTERS)?;
                    let cached = read_cache(&mut reader)?;
                    self.apply_dense(registers)?;
                    self.hll.cached = cached;
                }
                REGISTER => self.apply_register(usize::from(reader.u16()?), reader.u8()?)?,
                CACHE => self.hll.cached = read_cache(&mut reader)?,
                other => return Err(Malformed::UnknownChange(other)),
            }
        }
        Ok(())
    }

    fn apply_dense(&mut self, bytes: &[u8]) -> Result<(), Malformed> {
        if bytes.iter().any(|register| *register > MAX_REGISTER) {
            return Err(Malformed::Refused("an estimator's register out of range"));
        }
        match &mut self.hll.form {
            Form::Dense(registers) => {
                for (register, value) in registers.iter_mut().zip(bytes) {
                    *register = (*register).max(*value);
                }
            }
            Form::Sparse(_) => {
                let mut registers = Box::new([0u8; REGISTERS]);
                registers.copy_from_slice(bytes);
                self.hll.form = Form::Dense(registers);
            }
        }
        Ok(())
    }

    fn apply_register(&mut self, index: usize, value: u8) -> Result<(), Malformed> {
        if index >= REGISTERS || !(1..=MAX_REGISTER).contains(&value) {
            return Err(Malformed::Refused("an estimator's register out of range"));
        }
        let Form::Dense(registers) = &mut self.hll.form else {
            return Err(Malformed::Refused("a register of an estimator this replica holds sparse"));
        };
        registers[index] = registers[index].max(value);
        Ok(())
    }
}

/// A `u32` count and that many `u32` entries; a count beyond any state's is refused before
/// anything is allocated.
fn read_entries(reader: &mut Reader<'_>) -> Result<Vec<u32>, Malformed> {
    let count = reader.u32()? as usize;
    if count >= REGISTERS {
        return Err(Malformed::Refused("more sparse estimator entries than any state has"));
    }
    (0..count).map(|_| reader.u32()).collect()
}

fn put_entries(out: &mut Vec<u8>, entries: &[u32]) {
    let count = u32::try_from(entries.len()).expect("fewer entries than registers");
    out.extend_from_slice(&count.to_le_bytes());
    for entry in entries {
        out.extend_from_slice(&entry.to_le_bytes());
    }
}

/// A cached estimate: `u8` 1 and the `i64`, or `u8` 0.
fn read_cache(reader: &mut Reader<'_>) -> Result<Option<i64>, Malformed> {
    match reader.u8()? {
        0 => Ok(None),
        1 => Ok(Some(reader.i64()?)),
        _ => Err(Malformed::Refused("an estimator's cache flag is neither 0 nor 1")),
    }
}

fn put_cache(out: &mut Vec<u8>, cached: Option<i64>) {
    match cached {
        Some(estimate) => {
            out.push(1);
            out.extend_from_slice(&estimate.to_le_bytes());
        }
        None => out.push(0),
    }
}

/// The whole state as one record.
fn put_state(out: &mut Vec<u8>, hll: &Hll) {
    match &hll.form {
        Form::Sparse(sparse) => {
            out.push(SPARSE);
            put_entries(out, sparse.merged());
            put_entries(out, sparse.pending());
        }
        Form::Dense(registers) => {
            out.push(DENSE);
            out.extend_from_slice(&registers[..]);
        }
    }
    put_cache(out, hll.cached);
}

impl PartitionObject for CardinalityEstimatorStore {
    fn create(_kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self {
        CardinalityEstimatorStore::new(settings.cardinality_estimator(name))
    }

    /// An estimator holds no entries: what it takes is its bytes.
    fn entry_count(&self) -> usize {
        0
    }

    fn held_bytes(&self) -> usize {
        self.hll.held_bytes()
    }

    fn set_track_changes(&mut self, track: bool) {
        self.track_changes = track;
        self.changed = Changed::default();
    }

    fn sync_backup_count(&self) -> usize {
        self.config.backup_count as usize
    }

    fn write_changes(&mut self, body: &mut Vec<u8>) {
        let changed = std::mem::take(&mut self.changed);
        if changed.whole {
            return put_state(body, &self.hll);
        }
        match &self.hll.form {
            Form::Sparse(sparse) => {
                let from = changed.pending_from.unwrap_or(sparse.pending().len());
                for (slot, entry) in sparse.pending().iter().enumerate().skip(from) {
                    body.push(PENDING);
                    body.extend_from_slice(&(slot as u16).to_le_bytes());
                    body.extend_from_slice(&entry.to_le_bytes());
                }
            }
            Form::Dense(registers) => {
                for index in changed.registers {
                    body.push(REGISTER);
                    body.extend_from_slice(&index.to_le_bytes());
                    body.push(registers[usize::from(index)]);
                }
            }
        }
        if changed.any {
            body.push(CACHE);
            put_cache(body, self.hll.cached);
        }
    }

    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body)
    }

    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
        writer.entry(|out| put_state(out, &self.hll));
    }

    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> CardinalityEstimatorStore {
        CardinalityEstimatorStore::new(CardinalityEstimatorConfig::DEFAULT)
    }

    /// An estimator of the items of `range`, hashed as spread as MurmurHash3 spreads them
    /// (splitmix64), so that estimates are within HyperLogLog's error.
    fn filled(range: std::ops::Range<u64>) -> CardinalityEstimatorStore {
        let spread = |n: u64| {
            let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as i64
        };
        let mut filled = store();
        range.for_each(|n| filled.add(spread(n)));
        filled
    }

    #[test]
    fn a_merging_state_merges_by_each_policy_and_reaches_the_backup() {
        let merging = filled(500..2_000).state();
        let cases = [
            (MergePolicy::HyperLogLog, 2_000.0, 1_500.0),
            (MergePolicy::PassThrough, 1_500.0, 1_500.0),
            (MergePolicy::PutIfAbsent, 1_000.0, 1_500.0),
            (MergePolicy::Discard, 1_000.0, 0.0),
        ];
        for (policy, held_then, absent_then) in cases {
            let (mut owner, mut backup) = (filled(0..1_000), filled(0..1_000));
            owner.set_track_changes(true);
            assert_eq!(owner.merge_state(policy, &merging).unwrap(), held_then != 1_000.0, "{policy:?}");
            let mut body = Vec::new();
            owner.write_changes(&mut body);
            backup.apply_backup(&body).unwrap();
            let estimate = owner.estimate() as f64;
            assert!((estimate - held_then).abs() < held_then * 0.02, "{policy:?}: {estimate}");
            assert_eq!(backup.estimate() as f64, estimate, "{policy:?}: the backup has the merged state");
            let mut absent = store();
            absent.merge_state(policy, &merging).unwrap();
            let estimate = absent.estimate() as f64;
            assert!((estimate - absent_then).abs() <= absent_then * 0.02, "{policy:?} on an absent one: {estimate}");
        }
        assert!(store().merge_state(MergePolicy::PassThrough, &[DENSE, 1]).is_err(), "a truncated state");
        assert!(store().is_empty() && !filled(0..1).is_empty());
    }

    fn hash_of(n: u64) -> i64 {
        (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ n.rotate_left(29).wrapping_mul(0xBF58_476D_1CE4_E5B9)) as i64
    }

    /// Adds the items of `range` to the owner, with an estimate now and then, and applies each
    /// operation's changes to the backup, twice.
    fn mirror(
        owner: &mut CardinalityEstimatorStore,
        backup: &mut CardinalityEstimatorStore,
        range: std::ops::Range<u64>,
    ) {
        for n in range {
            owner.add(hash_of(n));
            if n % 997 == 0 {
                owner.estimate();
            }
            let mut body = Vec::new();
            owner.write_changes(&mut body);
            backup.apply_backup(&body).unwrap();
            backup.apply_backup(&body).unwrap();
        }
    }

    #[test]
    fn a_backup_mirrors_the_owner_through_merges_and_the_turn_to_dense() {
        let (mut owner, mut backup) = (store(), store());
        owner.set_track_changes(true);
        mirror(&mut owner, &mut backup, 0..3_000);
        assert!(matches!(owner.hll.form, Form::Sparse(_)));
        assert_eq!(backup.hll, owner.hll, "sparse, pending entries and merges alike");
        mirror(&mut owner, &mut backup, 3_000..30_000);
        assert!(matches!(owner.hll.form, Form::Dense(_)));
        assert_eq!(backup.hll, owner.hll);
        assert_eq!(backup.estimate(), owner.estimate());
        assert_eq!(backup.held_bytes(), REGISTERS);
    }

    #[test]
    fn a_snapshot_gives_a_new_replica_the_same_estimate() {
        for count in [0, 150, 5_000, 20_000] {
            let mut owner = store();
            (0..count).for_each(|n| owner.add(hash_of(n)));
            let mut snapshot = Vec::new();
            put_state(&mut snapshot, &owner.hll);
            let mut replica = store();
            replica.apply_snapshot(&snapshot).unwrap();
            assert_eq!(replica.hll, owner.hll, "{count}");
            assert_eq!(replica.estimate(), owner.estimate(), "{count}");
            // A stale sparse state after the dense one changes nothing.
            let mut again = Vec::new();
            put_state(&mut again, &Hll::default());
            replica.apply_snapshot(&again).unwrap();
            if count == 20_000 {
                assert_eq!(replica.hll, owner.hll);
            }
        }
    }

    #[test]
    fn malformed_records_are_refused_without_a_panic_or_a_change() {
        let mut owner = store();
        owner.set_track_changes(true);
        (0..20_000).for_each(|n| owner.add(hash_of(n)));
        let mut dense = Vec::new();
        owner.write_changes(&mut dense);
        for cut in 0..dense.len().min(64) {
            let _ = store().apply_backup(&dense[..cut]);
        }
        let _ = store().apply_backup(&dense[..dense.len() - 1]);
        let refused = |body: &[u8]| {
            let mut replica = store();
            replica.add(1);
            let before = replica.hll.clone();
            assert!(replica.apply_backup(body).is_err(), "{body:?}");
            assert_eq!(replica.hll, before, "{body:?}");
        };
        refused(&[9]);
        refused(&[REGISTER, 0, 0, 1]);
        refused(&[REGISTER, 0, 0x40, 1]);
        refused(&[PENDING, 5, 0, 0, 0, 0, 1]);
        refused(&[SPARSE, 0xFF, 0xFF, 0xFF, 0xFF]);
        refused(&[SPARSE, 2, 0, 0, 0, 4, 0, 2, 0, 4, 0, 1, 0, 0, 0, 0, 0]);
        let mut too_high = vec![DENSE];
        too_high.extend(std::iter::repeat_n(MAX_REGISTER + 1, REGISTERS));
        refused(&too_high);
    }
}
