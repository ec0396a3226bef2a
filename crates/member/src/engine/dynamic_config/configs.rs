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
//! `rows.rs` beside this file. A member that joins is sent every request kept (`peer::CONFIGS`).
//!
//! Bound: at most `ferrogrid.limits.max-dynamic-configs` definitions (each a request of at
//! most `max-message-bytes`).

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
    /// Nothing: a kind ferrogrid has no structure for (executors, caches, data connections,
    /// user code namespaces) or whose settings only clients read (reliable topics). Kept, so
    /// that a conflicting one is refused.
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
    /// The JCache caches that exist (created by clients, not by DynamicConfig requests).
    pub(crate) caches: crate::engine::cache::configs::CacheConfigs,
    entries: RwLock<Entries>,
    /// How many definitions are kept (read without the lock: none means no lookup).
    count: AtomicUsize,
}

impl DynamicConfigs {
    pub fn new(config: Arc<MemberConfig>) -> DynamicConfigs {
        DynamicConfigs { config, caches: Default::default(), entries: RwLock::default(), count: AtomicUsize::new(0) }
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
        let definitions =
            self.entries.read().definitions.values().map(|definition| definition.request.clone()).collect();
        [definitions, self.caches.requests()].concat()
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
        0x11 => "DataConnectionConfig",
        0x13 => "UserCodeNamespaceConfig",
        _ => "configuration",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::codec::{DynamicConfigAddExecutorConfig, DynamicConfigAddQueueConfig, Rest};

    fn queue_request(name: &str, max_size: i32, correlation_id: i64) -> Vec<u8> {
        let request = DynamicConfigAddQueueConfig {
            backup_count: 1,
            async_backup_count: 0,
            max_size,
            empty_queue_ttl: -1,
            statistics_enabled: true,
            merge_batch_size: 100,
            name,
            rest: Rest(&[]),
        };
        let mut out = Vec::new();
        request.encode(&mut out, correlation_id, -1, 0);
        out
    }

    fn queue(name: &str, max_size: i32, correlation_id: i64) -> Definition {
        let bytes = queue_request(name, max_size, correlation_id);
        crate::engine::dynamic_config::rows::definition(&Message::parse(&bytes).unwrap()).unwrap().unwrap()
    }

    fn configs(configure: impl FnOnce(&mut MemberConfig)) -> DynamicConfigs {
        let mut config = MemberConfig::default();
        configure(&mut config);
        DynamicConfigs::new(Arc::new(config))
    }

    #[test]
    fn a_definition_is_added_once_and_a_conflicting_one_is_refused() {
        let configs = configs(|_| {});
        assert_eq!(configs.queue("jobs").max_size, 0);
        assert_eq!(configs.add(queue("jobs", 5, 1)), Ok(true));
        assert_eq!(configs.add(queue("jobs", 5, 2)), Ok(false), "the same fields under another correlation id");
        let refused = configs.add(queue("jobs", 6, 3)).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::InvalidConfiguration);
        assert!(refused.message.contains("QueueConfig 'jobs'"), "{}", refused.message);
        assert_eq!(configs.queue("jobs").max_size, 5);
        assert_eq!(configs.queue("other").max_size, 0);
        assert_eq!(configs.requests().len(), 1);
    }

    #[test]
    fn the_static_configuration_is_searched_first() {
        let configs = configs(|config| {
            config.queues.insert("jobs-*", QueueConfig { max_size: 3, ..QueueConfig::DEFAULT });
            config.queues.insert("default", QueueConfig { max_size: 9, ..QueueConfig::DEFAULT });
            config.queues.insert("exact", QueueConfig { max_size: 4, ..QueueConfig::DEFAULT });
        });
        assert_eq!(configs.add(queue("jobs-a", 5, 1)), Ok(true), "no static entry is named so");
        assert_eq!(configs.queue("jobs-a").max_size, 3, "the static pattern governs");
        assert_eq!(configs.add(queue("new-*", 7, 1)), Ok(true));
        assert_eq!(configs.queue("new-x").max_size, 7, "a dynamic pattern before the static default");
        assert_eq!(configs.queue("else").max_size, 9);
        assert_eq!(configs.add(queue("exact", 4, 1)), Ok(false), "equal to the static entry: accepted, not kept");
        assert_eq!(configs.add(queue("exact", 2, 1)).unwrap_err().kind, ErrorKind::InvalidConfiguration);
        assert_eq!(configs.requests().len(), 2);
    }

    #[test]
    fn the_number_of_definitions_is_bounded() {
        let configs = configs(|config| config.limits.max_dynamic_configs = 1);
        assert_eq!(configs.add(queue("a", 1, 1)), Ok(true));
        assert_eq!(configs.add(queue("a", 1, 2)), Ok(false), "one already kept is still accepted");
        assert_eq!(configs.add(queue("b", 1, 1)).unwrap_err().kind, ErrorKind::Refused);
    }

    #[test]
    fn kinds_without_settings_are_kept_to_compare() {
        let configs = configs(|_| {});
        let executor = |frames: &[u8]| {
            let mut out = Vec::new();
            DynamicConfigAddExecutorConfig { name: "pool", rest: Rest(frames) }.encode(&mut out, 1, -1, 0);
            crate::engine::dynamic_config::rows::definition(&Message::parse(&out).unwrap()).unwrap().unwrap()
        };
        let mut other = Vec::new();
        ferrogrid_protocol::message::write_frame(&mut other, 0, b"x");
        assert_eq!(configs.add(executor(&[])), Ok(true));
        assert_eq!(configs.add(executor(&[])), Ok(false));
        assert_eq!(configs.add(executor(&other)).unwrap_err().kind, ErrorKind::InvalidConfiguration);
    }

    #[test]
    fn a_joining_member_adds_what_another_sent() {
        let sender = configs(|_| {});
        sender.add(queue("jobs", 5, 1)).unwrap();
        let mut payload = Vec::new();
        for request in sender.requests() {
            crate::cluster::peer::put_bytes(&mut payload, &request);
        }
        let joiner = configs(|_| {});
        crate::engine::dynamic_config::rows::merge(&joiner, &payload).unwrap();
        assert_eq!(joiner.queue("jobs").max_size, 5);
        assert!(
            crate::engine::dynamic_config::rows::merge(&joiner, &payload[..payload.len() - 1]).is_err(),
            "a truncated message"
        );
    }
}
