//! Configurations added while the cluster runs (`DynamicConfig.add*Config`), kept by every
//! member ([`DynamicConfigs`], shared by its reactors) and consulted where settings are
//! resolved (`settings.rs`, the flake id generators): an object's settings come from the
//! static configuration's entry for its name or a pattern matching it, else from a dynamic
//! entry for its name or pattern, else from the static `default` (Hazelcast's static-first
//! search, `StaticFirstSearcher`). An object whose settings were resolved before keeps them.
//!
//! A definition is added once per (kind, name): the same definition again is accepted and
//! changes nothing, another one is refused with InvalidConfigurationException, as is one that
//! differs from a static entry of exactly that name (one equal to it is accepted and not
//! kept), as Hazelcast 5.6 answers. Two definitions are the same when their requests carry
//! the same fields (every field, applied or not, as the client encoded them).
//!
//! How a request becomes a definition, and the work that adds it on every member, are in
//! `rows.rs`. A member that joins is sent every request kept (`peer::CONFIGS`).
//!
//! Bound: at most `ferrogrid.limits.max-dynamic-configs` definitions (each a request of at
//! most `max-message-bytes`).

pub(crate) mod rows;

use crate::engine::request::{ErrorKind, OpError};
use ferrogrid_config::{
    CardinalityEstimatorConfig, CardinalityEstimatorConfigs, CollectionConfig, CollectionConfigs,
    FlakeIdGeneratorConfig, FlakeIdGeneratorConfigs, MapConfig, MapConfigs, MemberConfig, MultiMapConfig,
    MultiMapConfigs, NamedConfigs, PnCounterConfig, PnCounterConfigs, QueueConfig, QueueConfigs, ReplicatedMapConfig,
    ReplicatedMapConfigs, RingbufferConfig, RingbufferConfigs, TopicConfig, TopicConfigs,
};
use ferrogrid_protocol::message::REQUEST_HEADER_SIZE;
use ferrogrid_protocol::Message;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What the member applies of one definition, by kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Applied {
    Map(MapConfig),
    Queue(QueueConfig),
    MultiMap(MultiMapConfig),
    List(CollectionConfig),
    Set(CollectionConfig),
    ReplicatedMap(ReplicatedMapConfig),
    Ringbuffer(RingbufferConfig),
    Topic(TopicConfig),
    PnCounter(PnCounterConfig),
    CardinalityEstimator(CardinalityEstimatorConfig),
    FlakeIdGenerator(FlakeIdGeneratorConfig),
    /// Nothing: a kind ferrogrid has no structure for (executors, caches) or whose settings
    /// only clients read (reliable topics). Kept, so that a conflicting one is refused.
    Nothing,
}

/// One definition a request adds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Definition {
    /// The request's type (its kind of configuration) and the configuration's name.
    pub(crate) kind: i32,
    pub(crate) name: String,
    pub(crate) applied: Applied,
    /// The request as the client sent it (what a joining member is sent).
    pub(crate) request: Box<[u8]>,
}

impl Definition {
    /// The request's fields: its fixed fields and every frame after the initial one (its
    /// header, with the correlation id, is not part of the definition).
    fn fields(&self) -> Vec<u8> {
        let Ok(message) = Message::parse(&self.request) else { return self.request.to_vec() };
        let mut fields = message.fixed(REQUEST_HEADER_SIZE).map(|fixed| fixed.rest().to_vec()).unwrap_or_default();
        fields.extend_from_slice(message.reader().remaining());
        fields
    }
}

/// The entries added, one set per kind, and every definition by (kind, name).
#[derive(Debug, Default)]
struct Entries {
    maps: MapConfigs,
    queues: QueueConfigs,
    multimaps: MultiMapConfigs,
    lists: CollectionConfigs,
    sets: CollectionConfigs,
    replicated_maps: ReplicatedMapConfigs,
    ringbuffers: RingbufferConfigs,
    topics: TopicConfigs,
    pn_counters: PnCounterConfigs,
    cardinality_estimators: CardinalityEstimatorConfigs,
    flake_id_generators: FlakeIdGeneratorConfigs,
    definitions: BTreeMap<(i32, String), Definition>,
}

/// The member's dynamic configurations, shared by its reactors (a read lock per lookup, taken
/// only once any was added; lookups happen when an object's settings are first resolved).
#[derive(Debug)]
pub struct DynamicConfigs {
    config: Arc<MemberConfig>,
    entries: RwLock<Entries>,
    /// How many definitions are kept (read without the lock: none means no lookup).
    count: AtomicUsize,
}

impl DynamicConfigs {
    pub fn new(config: Arc<MemberConfig>) -> DynamicConfigs {
        DynamicConfigs { config, entries: RwLock::default(), count: AtomicUsize::new(0) }
    }

    /// The static configuration.
    pub fn config(&self) -> &Arc<MemberConfig> {
        &self.config
    }

    /// Adds `definition`: true if it is new, false if it is kept already (or equals the
    /// static entry of its name); an error if it conflicts with either, or if the bound is
    /// reached.
    pub(crate) fn add(&self, definition: Definition) -> Result<bool, OpError> {
        if let Some(equal) = self.equals_static(&definition) {
            if equal {
                return Ok(false);
            }
            let text = format!(
                "Cannot add a new dynamic configuration {} '{}' as a static configuration already exists",
                kind_name(definition.kind),
                definition.name
            );
            return Err(OpError::new(ErrorKind::InvalidConfiguration, text));
        }
        let mut entries = self.entries.write();
        let key = (definition.kind, definition.name.clone());
        if let Some(existing) = entries.definitions.get(&key) {
            if existing.fields() == definition.fields() {
                return Ok(false);
            }
            let text = format!(
                "Cannot add a dynamic configuration {} '{}' as there is already a conflicting configuration",
                kind_name(definition.kind),
                definition.name
            );
            return Err(OpError::new(ErrorKind::InvalidConfiguration, text));
        }
        let limit = self.config.limits.max_dynamic_configs as usize;
        if entries.definitions.len() >= limit {
            let text =
                format!("{limit} dynamic configurations are kept already (ferrogrid.limits.max-dynamic-configs)");
            return Err(OpError::new(ErrorKind::Refused, text));
        }
        let name = definition.name.clone();
        match definition.applied.clone() {
            Applied::Map(config) => entries.maps.insert(name, config).map(drop),
            Applied::Queue(config) => entries.queues.insert(name, config).map(drop),
            Applied::MultiMap(config) => entries.multimaps.insert(name, config).map(drop),
            Applied::List(config) => entries.lists.insert(name, config).map(drop),
            Applied::Set(config) => entries.sets.insert(name, config).map(drop),
            Applied::ReplicatedMap(config) => entries.replicated_maps.insert(name, config).map(drop),
            Applied::Ringbuffer(config) => entries.ringbuffers.insert(name, config).map(drop),
            Applied::Topic(config) => entries.topics.insert(name, config).map(drop),
            Applied::PnCounter(config) => entries.pn_counters.insert(name, config).map(drop),
            Applied::CardinalityEstimator(config) => entries.cardinality_estimators.insert(name, config).map(drop),
            Applied::FlakeIdGenerator(config) => entries.flake_id_generators.insert(name, config).map(drop),
            Applied::Nothing => None,
        };
        entries.definitions.insert(key, definition);
        self.count.store(entries.definitions.len(), Ordering::Release);
        Ok(true)
    }

    /// Whether the static configuration's entry named exactly like the definition equals it
    /// (None: there is no such entry).
    fn equals_static(&self, definition: &Definition) -> Option<bool> {
        let config = &self.config;
        let name = definition.name.as_str();
        match &definition.applied {
            Applied::Map(added) => config.maps.get(name).map(|entry| entry == added),
            Applied::Queue(added) => config.queues.get(name).map(|entry| entry == added),
            Applied::MultiMap(added) => config.multimaps.get(name).map(|entry| entry == added),
            Applied::List(added) => config.lists.get(name).map(|entry| entry == added),
            Applied::Set(added) => config.sets.get(name).map(|entry| entry == added),
            Applied::ReplicatedMap(added) => config.replicated_maps.get(name).map(|entry| entry == added),
            Applied::Ringbuffer(added) => config.ringbuffers.get(name).map(|entry| entry == added),
            Applied::Topic(added) => config.topics.get(name).map(|entry| entry == added),
            Applied::PnCounter(added) => config.pn_counters.get(name).map(|entry| entry == added),
            Applied::CardinalityEstimator(added) => config.cardinality_estimators.get(name).map(|entry| entry == added),
            Applied::FlakeIdGenerator(added) => config.flake_id_generators.get(name).map(|entry| entry == added),
            Applied::Nothing => None,
        }
    }

    /// Every request kept, for a member that joins.
    pub(crate) fn requests(&self) -> Vec<Box<[u8]>> {
        self.entries.read().definitions.values().map(|definition| definition.request.clone()).collect()
    }

    /// The settings of the object `name` of a kind: the static entry for its name or a
    /// pattern, else the dynamic one, else the static default (`resolve`).
    fn pick<T: Clone>(
        &self,
        name: &str,
        statics: &NamedConfigs<T>,
        dynamic: impl Fn(&Entries) -> &NamedConfigs<T>,
        resolve: impl Fn(&str) -> T,
    ) -> T {
        if let Some(entry) = statics.matching(name) {
            return entry.clone();
        }
        if self.count.load(Ordering::Acquire) > 0 {
            if let Some(entry) = dynamic(&self.entries.read()).matching(name) {
                return entry.clone();
            }
        }
        resolve(name)
    }

    pub fn map(&self, name: &str) -> MapConfig {
        let maps = &self.config.maps;
        self.pick(name, maps, |entries| &entries.maps, |name| maps.for_map(name).clone())
    }

    pub fn queue(&self, name: &str) -> QueueConfig {
        let queues = &self.config.queues;
        self.pick(name, queues, |entries| &entries.queues, |name| *queues.for_queue(name))
    }

    pub fn multimap(&self, name: &str) -> MultiMapConfig {
        let multimaps = &self.config.multimaps;
        self.pick(name, multimaps, |entries| &entries.multimaps, |name| *multimaps.for_multimap(name))
    }

    /// A list's (`set` false) or a set's settings.
    pub fn collection(&self, name: &str, set: bool) -> CollectionConfig {
        let statics = if set { &self.config.sets } else { &self.config.lists };
        self.pick(name, statics, |entries| collections(entries, set), |name| *statics.for_collection(name))
    }

    pub fn replicated_map(&self, name: &str) -> ReplicatedMapConfig {
        let statics = &self.config.replicated_maps;
        self.pick(name, statics, |entries| &entries.replicated_maps, |name| *statics.for_replicated_map(name))
    }

    pub fn ringbuffer(&self, name: &str) -> RingbufferConfig {
        let statics = &self.config.ringbuffers;
        self.pick(name, statics, |entries| &entries.ringbuffers, |name| *statics.for_ringbuffer(name))
    }

    pub fn topic(&self, name: &str) -> TopicConfig {
        let statics = &self.config.topics;
        self.pick(name, statics, |entries| &entries.topics, |name| *statics.for_topic(name))
    }

    pub fn pn_counter(&self, name: &str) -> PnCounterConfig {
        let statics = &self.config.pn_counters;
        self.pick(name, statics, |entries| &entries.pn_counters, |name| *statics.for_pn_counter(name))
    }

    pub fn cardinality_estimator(&self, name: &str) -> CardinalityEstimatorConfig {
        let statics = &self.config.cardinality_estimators;
        let resolve = |name: &str| *statics.for_cardinality_estimator(name);
        self.pick(name, statics, |entries| &entries.cardinality_estimators, resolve)
    }

    pub fn flake_id_generator(&self, name: &str) -> FlakeIdGeneratorConfig {
        let statics = &self.config.flake_id_generators;
        self.pick(name, statics, |entries| &entries.flake_id_generators, |name| *statics.for_generator(name))
    }
}

/// The added lists (`set` false) or sets.
fn collections(entries: &Entries, set: bool) -> &CollectionConfigs {
    if set {
        &entries.sets
    } else {
        &entries.lists
    }
}

/// The kind of configuration a DynamicConfig request type adds, as errors name it.
fn kind_name(kind: i32) -> &'static str {
    match kind >> 8 & 0xff {
        0x01 => "MultiMapConfig",
        0x02 => "RingbufferConfig",
        0x03 => "CardinalityEstimatorConfig",
        0x04 => "ListConfig",
        0x05 => "SetConfig",
        0x06 => "ReplicatedMapConfig",
        0x07 => "TopicConfig",
        0x08 => "ExecutorConfig",
        0x09 => "DurableExecutorConfig",
        0x0A => "ScheduledExecutorConfig",
        0x0B => "QueueConfig",
        0x0C => "MapConfig",
        0x0D => "ReliableTopicConfig",
        0x0E => "CacheSimpleConfig",
        0x0F => "FlakeIdGeneratorConfig",
        0x10 => "PNCounterConfig",
        _ => "configuration",
    }
}
