//! Flake id generators (`hz:impl:flakeIdGeneratorService`, FlakeIdGenerator.NewIdBatch): ids
//! unique across the cluster without coordination, each
//!
//! ```text
//! (now_ms - epoch-start) << (bits-sequence + bits-node-id) | sequence << bits-node-id | node id
//! ```
//!
//! where the node id is this member's join version (`ferrogrid_cluster::MemberEntry`, unique
//! for the cluster's life) plus `node-id-offset`. A batch is `(base, increment, size)`: ids
//! `base + i * increment`. Per member and name a generator keeps the last timestamp|sequence
//! it issued, so its ids only grow; past `2^bits-sequence` ids in a millisecond it runs ahead
//! of the clock, and a batch that ends more than `allowed-future-millis` ahead is answered
//! only once the clock is within that (as Hazelcast schedules its answer).
//!
//! **Where the state lives.** A generator keeps no partition data: it is member-wide state in
//! [`FlakeIdGenerators`] (in `Shared`), one atomic per name, and any reactor answers a
//! request where it reads it (`Route::Local`, `local_ops.rs`). Issuing a batch is a read lock on the registry
//! and a compare-and-swap on the name's atomic: ~40 ns alone, ~60 ns with two reactors on the
//! same name, against ~6 µs for a round trip to an owning thread (measured on the 2-core
//! development machine), so no name is routed to one reactor.
//!
//! **Destroy.** A destroyed generator's state is dropped, except that one which handed out
//! ids ahead of the clock keeps its last value until the clock passes it: the name created
//! anew continues from there, so a destroy never makes a member issue an id twice. (Hazelcast
//! starts such a generator from the clock.) The read lock is held across the
//! compare-and-swap, so a destroy (write lock) sees every batch issued before it.
//!
//! The member-side `prefetch-count` and `prefetch-validity-millis` are not used here (see
//! `ferrogrid_config::FlakeIdGeneratorConfig`): the client sends its batch size.

use crate::engine::request::{ErrorKind, OpError};
use ferrogrid_config::FlakeIdGeneratorConfig;
#[cfg(test)]
use ferrogrid_config::MemberConfig;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use tracing::warn;

/// Hazelcast's service name for flake id generators.
pub const SERVICE_NAME: &str = "hz:impl:flakeIdGeneratorService";

/// A batch of ids: `base + i * increment` for `i` in `0..size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdBatch {
    pub base: i64,
    pub increment: i64,
    pub size: i32,
}

/// What a request got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued {
    pub batch: IdBatch,
    /// How long the answer must wait: the batch ends more than `allowed-future-millis` ahead
    /// of the clock by this much.
    pub wait_ms: i64,
    /// The request created the generator's state on this member.
    pub created: bool,
}

/// Why a batch was not issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// This member's node id does not fit `bits-node-id`: another member may take it (the
    /// generator's settings say which ones can).
    NodeIdOutOfRange {
        node_id: i128,
        settings: FlakeIdGeneratorConfig,
    },
    Refused(OpError),
}

/// One generator's state on this member. Every field is touched under the registry's lock
/// (read for a batch, write to create or destroy), by any reactor.
#[derive(Debug)]
struct Generator {
    settings: FlakeIdGeneratorConfig,
    /// The next timestamp|sequence to hand out, not yet shifted past the node id (i64::MIN
    /// before the first batch, so that the first starts at the clock).
    next: AtomicI64,
    /// Ids and batches issued (counted only with `statistics-enabled`).
    ids: AtomicU64,
    batches: AtomicU64,
    /// The node id was found out of range once (logged once).
    warned: AtomicBool,
}

/// The state a destroyed generator leaves while it is ahead of the clock.
#[derive(Debug, Clone, Copy)]
struct Retired {
    next: i64,
    /// When the clock passes its last id (milliseconds since the Unix epoch).
    until_ms: i64,
}

#[derive(Debug, Default)]
struct Registry {
    live: HashMap<Box<str>, Generator, ahash::RandomState>,
    retired: HashMap<Box<str>, Retired, ahash::RandomState>,
}

impl Registry {
    fn prune(&mut self, now_ms: i64) {
        self.retired.retain(|_, retired| retired.until_ms > now_ms);
    }
}

/// Every flake id generator this member has state for, shared by its reactors.
#[derive(Debug)]
pub struct FlakeIdGenerators {
    config: Arc<crate::engine::dynamic_config::configs::DynamicConfigs>,
    registry: RwLock<Registry>,
}

/// A generator's figures for the metrics (`statistics-enabled` ones only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratorFigures {
    pub name: String,
    pub ids: u64,
    pub batches: u64,
}

impl FlakeIdGenerators {
    pub fn new(config: Arc<crate::engine::dynamic_config::configs::DynamicConfigs>) -> FlakeIdGenerators {
        FlakeIdGenerators { config, registry: RwLock::new(Registry::default()) }
    }

    /// Issues a batch of `batch_size` ids of generator `name` (tenant-scoped) from this member
    /// (admitted at `join_version`) at `now_ms`, creating the generator's state on first use.
    pub fn new_batch(&self, name: &str, join_version: u64, batch_size: i32, now_ms: i64) -> Result<Issued, BatchError> {
        if batch_size <= 0 {
            let text = format!("batchSize must be positive, got {batch_size}");
            return Err(BatchError::Refused(OpError::new(ErrorKind::IllegalArgument, text)));
        }
        {
            let registry = self.registry.read();
            if let Some(generator) = registry.live.get(name) {
                return generator.issue(name, join_version, batch_size, now_ms, false);
            }
        }
        let mut registry = self.registry.write();
        let created = !registry.live.contains_key(name);
        if created {
            registry.prune(now_ms);
            let max = self.config.config().limits.max_flake_id_generators as usize;
            if registry.live.len() + registry.retired.len() >= max {
                let text = format!(
                    "this member keeps at most {max} flake id generators (ferrogrid.limits.max-flake-id-generators): \
                     cannot create {}",
                    crate::tenants::display(name)
                );
                return Err(BatchError::Refused(OpError::new(ErrorKind::Refused, text)));
            }
            let unscoped = crate::tenants::split(name).map_or(name, |(_, unscoped)| unscoped);
            let settings = self.config.flake_id_generator(unscoped);
            let next = registry.retired.remove(name).map_or(i64::MIN, |retired| retired.next);
            registry.live.insert(name.into(), Generator::new(settings, next));
        }
        registry.live[name].issue(name, join_version, batch_size, now_ms, created)
    }

    /// Drops generator `name`'s state (keeping its last value while it is ahead of the clock).
    pub fn destroy(&self, name: &str, now_ms: i64) {
        let mut registry = self.registry.write();
        if let Some(generator) = registry.live.remove(name) {
            let retired = generator.retired();
            if retired.until_ms > now_ms {
                registry.retired.insert(name.into(), retired);
            }
        }
        registry.prune(now_ms);
    }

    /// Ids and batches per generator with statistics enabled, by display name.
    pub fn figures(&self) -> Vec<GeneratorFigures> {
        let registry = self.registry.read();
        let mut figures: Vec<GeneratorFigures> = registry
            .live
            .iter()
            .filter(|(_, generator)| generator.settings.statistics_enabled)
            .map(|(name, generator)| GeneratorFigures {
                name: crate::tenants::display(name),
                ids: generator.ids.load(Ordering::Relaxed),
                batches: generator.batches.load(Ordering::Relaxed),
            })
            .collect();
        figures.sort_by(|a, b| a.name.cmp(&b.name));
        figures
    }
}

impl Generator {
    fn new(settings: FlakeIdGeneratorConfig, next: i64) -> Generator {
        Generator {
            settings,
            next: AtomicI64::new(next),
            ids: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            warned: AtomicBool::new(false),
        }
    }

    /// What destroying it leaves: its next value and when the clock passes it.
    fn retired(&self) -> Retired {
        let next = self.next.load(Ordering::Acquire);
        let settings = &self.settings;
        let until_ms = if next == i64::MIN {
            i64::MIN
        } else {
            (next >> settings.bits_sequence).saturating_add(settings.epoch_start)
        };
        Retired { next, until_ms }
    }

    /// Hazelcast's `newIdBaseLocal`: the batch starts at the clock or where the last one
    /// ended, whichever is later, and is answered after the time it runs past the allowance.
    fn issue(
        &self,
        name: &str,
        join_version: u64,
        batch_size: i32,
        now_ms: i64,
        created: bool,
    ) -> Result<Issued, BatchError> {
        let settings = &self.settings;
        let node_id = join_version as i128 + settings.node_id_offset as i128;
        if node_id >= 1i128 << settings.bits_node_id {
            if !self.warned.swap(true, Ordering::Relaxed) {
                let name = crate::tenants::display(name);
                warn!(generator = %name, node_id, "node id out of range: this member cannot generate ids (bits-node-id {}); other members answer for it", settings.bits_node_id);
            }
            return Err(BatchError::NodeIdOutOfRange { node_id, settings: *settings });
        }
        let bits_timestamp = settings.bits_timestamp();
        let since_epoch = now_ms.checked_sub(settings.epoch_start).filter(|since| {
            let limit = 1i128 << bits_timestamp;
            (-limit..limit).contains(&(*since as i128))
        });
        let Some(since_epoch) = since_epoch else {
            let text = "Current time out of allowed range";
            return Err(BatchError::Refused(OpError::new(ErrorKind::Refused, text)));
        };
        let now = since_epoch << settings.bits_sequence;
        let size = i64::from(batch_size);
        let mut seen = self.next.load(Ordering::Acquire);
        let base = loop {
            let base = now.max(seen);
            let Some(end) = base.checked_add(size) else {
                let text = "Current time out of allowed range: the sequence overflowed";
                return Err(BatchError::Refused(OpError::new(ErrorKind::Refused, text)));
            };
            match self.next.compare_exchange_weak(seen, end, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break base,
                Err(current) => seen = current,
            }
        };
        // (In i128: with an epoch in the future `now` is negative and the span may exceed i64.)
        let ahead_ms = (i128::from(base) + i128::from(size) - i128::from(now)) >> settings.bits_sequence;
        let wait_ms = (ahead_ms - i128::from(settings.allowed_future_millis)).clamp(0, i128::from(i64::MAX)) as i64;
        if settings.statistics_enabled {
            self.ids.fetch_add(size as u64, Ordering::Relaxed);
            self.batches.fetch_add(1, Ordering::Relaxed);
        }
        let batch = IdBatch {
            base: (base << settings.bits_node_id) | node_id as i64,
            increment: 1i64 << settings.bits_node_id,
            size: batch_size,
        };
        Ok(Issued { batch, wait_ms, created })
    }
}

/// Whether `join_version` makes a node id that fits `settings`.
pub fn fits(settings: &FlakeIdGeneratorConfig, join_version: u64) -> bool {
    join_version as i128 + (settings.node_id_offset as i128) < 1i128 << settings.bits_node_id
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn generators(configure: impl FnOnce(&mut MemberConfig)) -> FlakeIdGenerators {
        let mut config = MemberConfig::default();
        configure(&mut config);
        FlakeIdGenerators::new(Arc::new(crate::engine::dynamic_config::configs::DynamicConfigs::new(Arc::new(config))))
    }

    fn ids(batch: IdBatch) -> impl Iterator<Item = i64> {
        (0..batch.size as i64).map(move |i| batch.base + i * batch.increment)
    }

    #[test]
    fn an_id_is_timestamp_sequence_and_node_id() {
        let generators = generators(|_| {});
        let issued = generators.new_batch("ids", 3, 5, NOW).unwrap();
        assert!(issued.created);
        assert_eq!(issued.wait_ms, 0);
        let since_epoch = NOW - FlakeIdGeneratorConfig::DEFAULT.epoch_start;
        assert_eq!(issued.batch, IdBatch { base: (since_epoch << 22) | 3, increment: 1 << 16, size: 5 });
        let next = generators.new_batch("ids", 3, 1, NOW).unwrap();
        assert!(!next.created);
        assert_eq!(next.batch.base, ((since_epoch << 22) + (5 << 16)) | 3, "the sequence goes on in the same ms");
        let later = generators.new_batch("ids", 3, 1, NOW + 10).unwrap();
        assert_eq!(later.batch.base, ((since_epoch + 10) << 22) | 3, "a later ms starts at its sequence 0");
    }

    #[test]
    fn the_configured_layout_is_used() {
        let settings = FlakeIdGeneratorConfig {
            epoch_start: 1_600_000_000_000,
            node_id_offset: 10,
            bits_sequence: 8,
            bits_node_id: 4,
            ..FlakeIdGeneratorConfig::DEFAULT
        };
        let generators = generators(|config| {
            config.flake_id_generators.insert("short-*", settings);
        });
        let batch = generators.new_batch("short-1", 1, 300, NOW).unwrap().batch;
        assert_eq!(batch.increment, 16);
        assert_eq!(batch.base & 15, 11, "join version 1 + offset 10");
        assert_eq!(batch.base >> 12, NOW - 1_600_000_000_000);
        let all: Vec<i64> = ids(batch).collect();
        assert_eq!(all[256] >> 12, NOW - 1_600_000_000_000 + 1, "256 ids a ms, then the next ms");
        // A tenant's generator takes the settings of its unscoped name.
        let scoped = generators.new_batch("shop\0short-2", 1, 1, NOW).unwrap().batch;
        assert_eq!((scoped.base & 15, scoped.increment), (11, 16));
    }

    #[test]
    fn ids_stay_unique_and_increasing_past_the_sequence_and_wait_beyond_the_allowance() {
        let settings = FlakeIdGeneratorConfig { allowed_future_millis: 10, ..FlakeIdGeneratorConfig::DEFAULT };
        let generators = generators(|config| {
            config.flake_id_generators.insert("fast", settings);
        });
        let mut last = i64::MIN;
        let mut waits = Vec::new();
        for _ in 0..20 {
            let issued = generators.new_batch("fast", 1, 64, NOW).unwrap();
            assert!(ids(issued.batch).all(|id| id > last));
            last = ids(issued.batch).last().unwrap();
            waits.push(issued.wait_ms);
        }
        // 64 ids a ms: batch k ends k+1 ms ahead; past 10 ms ahead the answer waits.
        assert_eq!(waits, (0..20).map(|k: i64| (k + 1 - 10).max(0)).collect::<Vec<_>>());
    }

    #[test]
    fn batch_size_must_be_positive_and_the_node_id_must_fit() {
        let generators = generators(|config| {
            let narrow = FlakeIdGeneratorConfig { bits_node_id: 2, ..FlakeIdGeneratorConfig::DEFAULT };
            config.flake_id_generators.insert("narrow", narrow);
        });
        for size in [0, -1] {
            let error = generators.new_batch("ids", 1, size, NOW).unwrap_err();
            assert!(matches!(error, BatchError::Refused(OpError { kind: ErrorKind::IllegalArgument, .. })));
        }
        assert!(generators.new_batch("narrow", 3, 1, NOW).is_ok(), "node id 3 fits 2 bits");
        let error = generators.new_batch("narrow", 4, 1, NOW).unwrap_err();
        assert!(matches!(error, BatchError::NodeIdOutOfRange { node_id: 4, .. }));
        let settings = FlakeIdGeneratorConfig { bits_node_id: 2, ..FlakeIdGeneratorConfig::DEFAULT };
        assert!(fits(&settings, 3) && !fits(&settings, 4));
    }

    #[test]
    fn a_clock_before_the_epoch_or_past_the_timestamp_bits_is_refused() {
        let generators = generators(|config| {
            let late = FlakeIdGeneratorConfig {
                epoch_start: NOW + 1,
                bits_sequence: 22,
                bits_node_id: 22,
                ..FlakeIdGeneratorConfig::DEFAULT
            };
            config.flake_id_generators.insert("late", late);
        });
        // 19 timestamp bits: 2^19 ms either side of the epoch.
        assert!(generators.new_batch("late", 1, 1, NOW).is_ok(), "1 ms before the epoch is in range");
        let error = generators.new_batch("late", 1, 1, NOW - (1 << 19)).unwrap_err();
        assert!(matches!(error, BatchError::Refused(OpError { kind: ErrorKind::Refused, .. })));
    }

    #[test]
    fn destroy_drops_the_state_but_never_lets_an_id_repeat() {
        let generators = generators(|config| config.limits.max_flake_id_generators = 2);
        let first = generators.new_batch("ids", 1, 64 * 100, NOW).unwrap().batch;
        generators.destroy("ids", NOW);
        assert!(generators.figures().is_empty());
        // Ran 100 ms ahead: created again at the same ms, it continues after its last id.
        let again = generators.new_batch("ids", 1, 1, NOW).unwrap();
        assert!(again.created);
        assert!(again.batch.base > ids(first).last().unwrap());
        // Once the clock has passed it, nothing of it is kept.
        generators.destroy("ids", NOW + 1_000);
        assert!(generators.registry.read().retired.is_empty());
        let fresh = generators.new_batch("ids", 1, 1, NOW + 1_000).unwrap();
        assert_eq!(fresh.batch.base >> 22, NOW + 1_000 - FlakeIdGeneratorConfig::DEFAULT.epoch_start);
    }

    #[test]
    fn the_number_of_generators_is_bounded() {
        let generators = generators(|config| config.limits.max_flake_id_generators = 2);
        generators.new_batch("a", 1, 1, NOW).unwrap();
        generators.new_batch("b", 1, 1, NOW).unwrap();
        let error = generators.new_batch("c", 1, 1, NOW).unwrap_err();
        assert!(matches!(&error, BatchError::Refused(failure) if failure.message.contains("max-flake-id-generators")));
        generators.new_batch("a", 1, 1, NOW).expect("an existing one still works");
        // A destroyed one that ran ahead still counts until the clock passes it.
        generators.new_batch("b", 1, 64 * 50, NOW).unwrap();
        generators.destroy("b", NOW);
        assert!(generators.new_batch("c", 1, 1, NOW).is_err());
        assert!(generators.new_batch("c", 1, 1, NOW + 100).is_ok());
    }

    #[test]
    fn figures_count_ids_and_batches_of_generators_with_statistics() {
        let generators = generators(|config| {
            let quiet = FlakeIdGeneratorConfig { statistics_enabled: false, ..FlakeIdGeneratorConfig::DEFAULT };
            config.flake_id_generators.insert("quiet", quiet);
        });
        generators.new_batch("ids", 1, 10, NOW).unwrap();
        generators.new_batch("ids", 1, 5, NOW).unwrap();
        generators.new_batch("shop\0ids", 1, 1, NOW).unwrap();
        generators.new_batch("quiet", 1, 1, NOW).unwrap();
        let figures = generators.figures();
        let expected = [
            GeneratorFigures { name: "ids".into(), ids: 15, batches: 2 },
            GeneratorFigures { name: "shop/ids".into(), ids: 1, batches: 1 },
        ];
        assert_eq!(figures, expected);
    }

    /// Reactors issuing batches of one name at once never hand out an id twice, and each
    /// thread's batches increase.
    #[test]
    fn concurrent_batches_never_overlap() {
        let generators = Arc::new(generators(|_| {}));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let generators = generators.clone();
                std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    for k in 0..2_000 {
                        let batch =
                            generators.new_batch("shared", 7, 1 + k % 50, NOW + (k as i64) / 500).unwrap().batch;
                        mine.extend(ids(batch));
                    }
                    mine
                })
            })
            .collect();
        let mut all = Vec::new();
        for thread in threads {
            let mine = thread.join().unwrap();
            assert!(mine.windows(2).all(|pair| pair[0] < pair[1]), "one thread's ids increase");
            all.extend(mine);
        }
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count, "no id was issued twice");
    }
}
