//! Random numbers and the key distributions of YCSB's core workload.
//!
//! [`Rng`] is SplitMix64: small, fast, seedable, so a run's key sequence is reproducible from
//! `--seed`. The distributions follow YCSB's generators (`core/src/main/java/site/ycsb/generator/`
//! in brianfrankcooper/YCSB, Apache-2.0) algorithm for algorithm; only the underlying uniform
//! source differs (YCSB uses `java.util.Random`), so the distributions match, not the streams:
//! - [`Zipfian`]: `ZipfianGenerator`, Jim Gray et al., "Quickly Generating Billion-Record
//!   Synthetic Databases", SIGMOD 1994, with YCSB's incremental zeta when the item count grows;
//! - [`ScrambledZipfian`]: `ScrambledZipfianGenerator`, a zipfian over 10^16 items (zeta
//!   precomputed) hashed with FNV-1a-64 onto the item range, so popular items are scattered;
//! - [`SkewedLatest`]: `SkewedLatestGenerator`, a zipfian over the inserted records counted
//!   back from the newest one;
//! - [`AcknowledgedCounter`]: `AcknowledgedCounterGenerator`, the insert key sequence whose
//!   "last value" only covers inserts that have finished, with no gaps;
//! - [`fnv_hash64`]: `Utils.fnvhash64`, also used for YCSB's hashed key names.
//!
//! Key numbers are `i64` like YCSB's Java `long`, so the arithmetic (and its corner cases)
//! is the same.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};

use parking_lot::Mutex;

/// YCSB's zipfian constant (`ZipfianGenerator.ZIPFIAN_CONSTANT`).
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// Items of the zipfian behind [`ScrambledZipfian`] (`ScrambledZipfianGenerator.ITEM_COUNT`).
const SCRAMBLED_ITEM_COUNT: i64 = 10_000_000_000_000_000;
/// Zeta of [`SCRAMBLED_ITEM_COUNT`] items at [`ZIPFIAN_CONSTANT`] (`ScrambledZipfianGenerator.ZETAN`).
const SCRAMBLED_ZETAN: f64 = 26.46902820178302;
const FNV_OFFSET_BASIS_64: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
const FNV_PRIME_64: i64 = 1_099_511_628_211;

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014).
/// Owned by one worker task; never shared.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, bound) by multiply-and-shift (bias below 2^-64 × bound). `bound` > 0.
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0, "an empty range has no element");
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// True with probability `probability`.
    pub fn chance(&mut self, probability: f64) -> bool {
        self.next_f64() < probability
    }
}

/// One value of a 64-bit mix (SplitMix64's finalizer): a fixed, well-spread function of `value`,
/// used where a key's expected value must be recomputable.
pub fn mix64(value: u64) -> u64 {
    Rng::new(value).next_u64()
}

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of `value` (low byte first), then
/// `Math.abs` (which leaves `i64::MIN` negative, as in Java).
pub fn fnv_hash64(value: i64) -> i64 {
    let mut hash = FNV_OFFSET_BASIS_64;
    let mut rest = value;
    for _ in 0..8 {
        let octet = rest & 0xff;
        rest >>= 8;
        hash ^= octet;
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    hash.wrapping_abs()
}

/// YCSB's `ZipfianGenerator.zetastatic(st, n, theta, initialsum)`: the sum of 1/i^theta for
/// i in st+1..=n, added to `initial_sum`.
fn zeta(from: i64, to: i64, theta: f64, initial_sum: f64) -> f64 {
    let mut sum = initial_sum;
    for i in from..to {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// YCSB's `ZipfianGenerator`: item `base` is the most popular, `base + 1` the next, …
#[derive(Debug, Clone)]
pub struct Zipfian {
    /// Items the generator was built for (YCSB keeps this fixed in `eta`, even when
    /// `next_of` is asked for more items; reproduced as is).
    items: i64,
    base: i64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    /// The item count `zetan` was computed for.
    count_for_zeta: i64,
}

impl Zipfian {
    /// Items `min..=max` at [`ZIPFIAN_CONSTANT`]; computes zeta (O(max − min)).
    pub fn new(min: i64, max: i64) -> Zipfian {
        let zetan = zeta(0, max - min + 1, ZIPFIAN_CONSTANT, 0.0);
        Zipfian::with_zetan(min, max, ZIPFIAN_CONSTANT, zetan)
    }

    /// Items `min..=max` with a precomputed zeta (YCSB's four-argument constructor).
    pub fn with_zetan(min: i64, max: i64, theta: f64, zetan: f64) -> Zipfian {
        assert!(max >= min, "a zipfian needs at least one item ({min}..={max})");
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let eta = (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan);
        Zipfian { items, base: min, theta, zeta2theta, alpha: 1.0 / (1.0 - theta), zetan, eta, count_for_zeta: items }
    }

    /// The next item of the configured range.
    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        self.next_of(self.items, rng)
    }

    /// YCSB's `nextLong(itemcount)`: the next item as if there were `item_count` items. A
    /// larger count extends zeta incrementally; a smaller one keeps the old zeta (YCSB's
    /// default, `allowitemcountdecrease = false`).
    pub fn next_of(&mut self, item_count: i64, rng: &mut Rng) -> i64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / self.zetan);
        }
        let u = rng.next_f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }
}

/// YCSB's `ScrambledZipfianGenerator`: zipfian popularity, popular items spread over
/// `min..=max` by hashing.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    zipfian: Zipfian,
    min: i64,
    item_count: i64,
}

impl ScrambledZipfian {
    pub fn new(min: i64, max: i64) -> ScrambledZipfian {
        assert!(max >= min, "a zipfian needs at least one item ({min}..={max})");
        let zipfian = Zipfian::with_zetan(0, SCRAMBLED_ITEM_COUNT, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN);
        ScrambledZipfian { zipfian, min, item_count: max - min + 1 }
    }

    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        let drawn = self.zipfian.next(rng);
        self.min + fnv_hash64(drawn) % self.item_count
    }
}

/// YCSB's `SkewedLatestGenerator`: favours the records inserted last. `next` takes the
/// insert sequence's current last value (its "basis").
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// Built, as in YCSB, for `last_value` items (at least one).
    pub fn new(last_value: i64) -> SkewedLatest {
        SkewedLatest { zipfian: Zipfian::new(0, last_value.max(1) - 1) }
    }

    /// `max − zipfian(max)`: the newest record `max` is the most popular.
    pub fn next(&mut self, last_value: i64, rng: &mut Rng) -> i64 {
        let max = last_value.max(1);
        max - self.zipfian.next_of(max, rng)
    }
}

/// YCSB's `UniformLongGenerator`: uniform over `min..=max`.
#[derive(Debug, Clone)]
pub struct Uniform {
    min: i64,
    count: u64,
}

impl Uniform {
    pub fn new(min: i64, max: i64) -> Uniform {
        assert!(max >= min, "a uniform range needs at least one item ({min}..={max})");
        Uniform { min, count: (max - min) as u64 + 1 }
    }

    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        self.min + rng.below(self.count) as i64
    }
}

/// YCSB's `AcknowledgedCounterGenerator`: hands out increasing key numbers for inserts;
/// [`AcknowledgedCounter::last_value`] is the highest number below which every insert has
/// finished, so readers never pick a key that may not exist yet. Shared by all workers.
#[derive(Debug)]
pub struct AcknowledgedCounter {
    next: AtomicI64,
    limit: AtomicI64,
    /// Finished numbers above `limit`; bounded by the inserts in flight (one per worker).
    finished: Mutex<BTreeSet<i64>>,
}

impl AcknowledgedCounter {
    /// The first number handed out is `start`; until then the last value is `start − 1`.
    pub fn new(start: i64) -> AcknowledgedCounter {
        AcknowledgedCounter {
            next: AtomicI64::new(start),
            limit: AtomicI64::new(start - 1),
            finished: Mutex::new(BTreeSet::new()),
        }
    }

    pub fn next_value(&self) -> i64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    pub fn last_value(&self) -> i64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Marks `value` finished (successfully or not, as YCSB does) and advances the limit over
    /// every contiguous finished number.
    pub fn acknowledge(&self, value: i64) {
        let mut finished = self.finished.lock();
        finished.insert(value);
        let mut limit = self.limit.load(Ordering::Acquire);
        while finished.remove(&(limit + 1)) {
            limit += 1;
        }
        self.limit.store(limit, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(samples: impl Iterator<Item = i64>, items: usize) -> Vec<u64> {
        let mut counts = vec![0u64; items];
        for item in samples {
            counts[usize::try_from(item).expect("non-negative item")] += 1;
        }
        counts
    }

    #[test]
    fn fnv_matches_ycsb() {
        // Values of the Java code (FNV-1a-64 over the little-endian bytes, then Math.abs).
        assert_eq!(fnv_hash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnv_hash64(1), 8_517_097_267_634_966_620);
        assert_eq!(fnv_hash64(12_345), 1_792_800_413_050_876_852);
    }

    #[test]
    fn uniform_stays_in_bounds_and_covers_them() {
        let mut rng = Rng::new(7);
        let mut uniform = Uniform::new(10, 19);
        let samples: Vec<i64> = (0..10_000).map(|_| uniform.next(&mut rng)).collect();
        assert!(samples.iter().all(|item| (10..=19).contains(item)));
        let histogram = counts(samples.iter().map(|item| item - 10), 10);
        assert!(histogram.iter().all(|&count| (800..1200).contains(&count)), "{histogram:?}");
    }

    #[test]
    fn zipfian_top_item_is_much_more_frequent_than_the_median() {
        let mut rng = Rng::new(1);
        let mut zipfian = Zipfian::new(0, 999);
        let mut histogram = counts((0..200_000).map(|_| zipfian.next(&mut rng).min(999)), 1000);
        assert!(histogram[0] > histogram[1] && histogram[1] > histogram[10], "item 0 is the most popular");
        let top = histogram[0];
        histogram.sort_unstable();
        let median = histogram[500];
        assert!(top > 100 * median.max(1), "top {top} vs median {median}");
        // With theta 0.99 over 1000 items, item 0 draws about 1/zeta(1000) ≈ 13% of samples.
        assert!((20_000..32_000).contains(&top), "top item share {top}/200000");
    }

    #[test]
    fn scrambled_zipfian_is_skewed_but_scattered() {
        let mut rng = Rng::new(2);
        let mut scrambled = ScrambledZipfian::new(0, 999);
        let histogram = counts((0..200_000).map(|_| scrambled.next(&mut rng)), 1000);
        let (hottest, &top) = histogram.iter().enumerate().max_by_key(|(_, count)| **count).unwrap();
        let mut sorted = histogram.clone();
        sorted.sort_unstable();
        assert!(top > 20 * sorted[500].max(1), "top {top} vs median {}", sorted[500]);
        assert_ne!(hottest, 0, "the hottest item is not the first one");
        assert!(histogram.iter().all(|&count| count <= top));
    }

    #[test]
    fn skewed_latest_favours_recent_inserts() {
        let mut rng = Rng::new(3);
        let mut latest = SkewedLatest::new(999);
        let histogram = counts((0..100_000).map(|_| latest.next(999, &mut rng)), 1000);
        let newest_ten: u64 = histogram[990..].iter().sum();
        let oldest_ten: u64 = histogram[..10].iter().sum();
        assert!(histogram[999] > histogram[998] && histogram[998] > histogram[900]);
        assert!(newest_ten > 20 * oldest_ten.max(1), "newest {newest_ten} oldest {oldest_ten}");
        // As inserts finish, the favourite moves to the new last record.
        let after_inserts = counts((0..10_000).map(|_| latest.next(1_499, &mut rng)), 1500);
        assert_eq!(after_inserts.iter().enumerate().max_by_key(|(_, c)| **c).unwrap().0, 1499);
    }

    #[test]
    fn acknowledged_counter_covers_only_contiguous_finished_inserts() {
        let counter = AcknowledgedCounter::new(100);
        assert_eq!(counter.last_value(), 99);
        let (a, b, c) = (counter.next_value(), counter.next_value(), counter.next_value());
        assert_eq!((a, b, c), (100, 101, 102));
        counter.acknowledge(b);
        assert_eq!(counter.last_value(), 99, "100 is still in flight");
        counter.acknowledge(a);
        assert_eq!(counter.last_value(), 101);
        counter.acknowledge(c);
        assert_eq!(counter.last_value(), 102);
    }

    #[test]
    fn rng_helpers_stay_in_range() {
        let mut rng = Rng::new(9);
        for _ in 0..10_000 {
            let value = rng.next_f64();
            assert!((0.0..1.0).contains(&value));
            assert!(rng.below(3) < 3);
        }
        let hits = (0..10_000).filter(|_| rng.chance(0.25)).count();
        assert!((2_200..2_800).contains(&hits));
    }
}
