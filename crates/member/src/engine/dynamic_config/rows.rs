//! The DynamicConfig rows of the operation table: each request decoded into a [`Definition`]
//! (its settings checked as Hazelcast checks them, and as the static configuration reader
//! checks the same keys), then added on every reactor of every member by [`AddConfig`], a
//! wide operation with no partition work whose answer is the first refusal of any share, or
//! the empty answer once every member has it.
//!
//! Settings ferrogrid does not apply (merge policies, listeners, stores, near-cache, WAN,
//! in-memory format of a map, statistics of a map, …) are ignored, as the static reader
//! ignores those keys; they still take part in telling two definitions apart.

use crate::engine::dynamic_config::configs::{Applied, Definition, DynamicConfigs};
use crate::engine::request::{ErrorKind, OpError, Reply};
use crate::engine::wide::{Classified, Partial, Partitions, ShareContext, WideOperation};
use crate::partition::objects::PartitionStore;
use crate::route::row::{wide_row, Operation, S};
use ferrogrid_config::*;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::message::{MessageReader, MessageWriter};
use ferrogrid_protocol::{DecodeError, Message};
use tracing::warn;

/// Every DynamicConfig request (the service's own codecs, `protocol/src/codec.rs`).
pub(crate) static ROWS: &[Operation] = &[
    wide_row!(DynamicConfigAddMultiMapConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddRingbufferConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddCardinalityEstimatorConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddListConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddSetConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddReplicatedMapConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddTopicConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddExecutorConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddDurableExecutorConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddScheduledExecutorConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddQueueConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddMapConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddReliableTopicConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddCacheConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddFlakeIdGeneratorConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddPnCounterConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddDataConnectionConfig, S, |message, _| classify(message)),
    wide_row!(DynamicConfigAddUserCodeNamespaceConfig, S, |message, _| classify(message)),
    // As a Hazelcast 5.6 member answers it.
    wide_row!(DynamicConfigAddWanReplicationConfig, S, |message, _| {
        DynamicConfigAddWanReplicationConfig::decode(message)?;
        let text = "Adding new WAN config is not supported.";
        Ok(Classified::Refused(OpError::new(ErrorKind::Unsupported, text)))
    }),
];

fn classify(message: &Message<'_>) -> Result<Classified, DecodeError> {
    Ok(match definition(message)? {
        Ok(definition) => {
            let name: Box<str> = definition.name.as_str().into();
            Classified::Wide(crate::engine::wide::WideRequest::new(AddConfig { definition }), name)
        }
        Err(refusal) => Classified::Refused(refusal),
    })
}

/// A backup count pair as Hazelcast checks it (`Preconditions.checkBackupCount`).
fn backups(backup_count: i32, async_backup_count: i32) -> Result<(u8, u8), OpError> {
    let refuse = |text: String| Err(OpError::new(ErrorKind::IllegalArgument, text));
    let max = i32::from(MAX_BACKUP_COUNT);
    if backup_count < 0 {
        return refuse("backup-count can't be smaller than 0".to_owned());
    }
    if async_backup_count < 0 {
        return refuse("async-backup-count can't be smaller than 0".to_owned());
    }
    if backup_count > max {
        return refuse(format!("backup-count can't be larger than than {max}"));
    }
    if async_backup_count > max {
        return refuse(format!("async-backup-count can't be larger than than {max}"));
    }
    if backup_count + async_backup_count > max {
        return refuse(format!("the sum of backup-count and async-backup-count can't be larger than than {max}"));
    }
    Ok((backup_count as u8, async_backup_count as u8))
}

/// A count that may not be negative (`what` names it in the refusal).
fn not_negative(value: i32, what: &str) -> Result<u32, OpError> {
    u32::try_from(value).map_err(|_| OpError::new(ErrorKind::IllegalArgument, format!("{what} can't be negative")))
}

/// The request as a definition, or the refusal of its settings; a malformed request is a
/// decode error (the connection closes, as for any other request).
pub(crate) fn definition(message: &Message<'_>) -> Result<Result<Definition, OpError>, DecodeError> {
    let kind = message.message_type().0;
    let decoded = match kind {
        _ if kind == DynamicConfigAddMapConfig::TYPE.0 => map(&DynamicConfigAddMapConfig::decode(message)?),
        _ if kind == DynamicConfigAddQueueConfig::TYPE.0 => queue(&DynamicConfigAddQueueConfig::decode(message)?),
        _ if kind == DynamicConfigAddMultiMapConfig::TYPE.0 => {
            multimap(&DynamicConfigAddMultiMapConfig::decode(message)?)
        }
        _ if kind == DynamicConfigAddListConfig::TYPE.0 => {
            let r = DynamicConfigAddListConfig::decode(message)?;
            collection(r.name, r.max_size, r.backup_count, r.async_backup_count).map(Applied::List)
        }
        _ if kind == DynamicConfigAddSetConfig::TYPE.0 => {
            let r = DynamicConfigAddSetConfig::decode(message)?;
            collection(r.name, r.max_size, r.backup_count, r.async_backup_count).map(Applied::Set)
        }
        _ => others(kind, message)?,
    };
    let name = message.reader().string()?.to_owned();
    Ok(decoded.map(|applied| Definition { kind, name, applied, request: message.bytes().into() }))
}

/// The kinds with few settings, and those ferrogrid keeps without applying.
fn others(kind: i32, message: &Message<'_>) -> Result<Result<Applied, OpError>, DecodeError> {
    Ok(match kind {
        _ if kind == DynamicConfigAddRingbufferConfig::TYPE.0 => {
            ringbuffer(&DynamicConfigAddRingbufferConfig::decode(message)?)
        }
        _ if kind == DynamicConfigAddCardinalityEstimatorConfig::TYPE.0 => {
            let r = DynamicConfigAddCardinalityEstimatorConfig::decode(message)?;
            backups(r.backup_count, r.async_backup_count).map(|(backup_count, async_backup_count)| {
                // (The policy's name follows in the frames this decoder does not read: the default.)
                let merge_policy = ferrogrid_config::MergePolicyConfig {
                    batch_size: u32::try_from(r.merge_batch_size).unwrap_or(0),
                    ..CardinalityEstimatorConfig::DEFAULT.merge_policy
                };
                Applied::CardinalityEstimator(CardinalityEstimatorConfig {
                    backup_count,
                    async_backup_count,
                    merge_policy,
                })
            })
        }
        _ if kind == DynamicConfigAddReplicatedMapConfig::TYPE.0 => {
            replicated_map(&DynamicConfigAddReplicatedMapConfig::decode(message)?)
        }
        _ if kind == DynamicConfigAddTopicConfig::TYPE.0 => {
            let r = DynamicConfigAddTopicConfig::decode(message)?;
            let (global_ordering_enabled, statistics_enabled) = (r.global_ordering_enabled, r.statistics_enabled);
            Ok(Applied::Topic(TopicConfig { global_ordering_enabled, statistics_enabled }))
        }
        _ if kind == DynamicConfigAddPnCounterConfig::TYPE.0 => {
            let r = DynamicConfigAddPnCounterConfig::decode(message)?;
            let config = PnCounterConfig { replica_count: r.replica_count.max(0) as u32, ..PnCounterConfig::DEFAULT };
            checked(r.name, "pn-counter", PnCounterConfig { statistics_enabled: r.statistics_enabled, ..config })
                .map(Applied::PnCounter)
        }
        _ if kind == DynamicConfigAddFlakeIdGeneratorConfig::TYPE.0 => {
            flake_id(&DynamicConfigAddFlakeIdGeneratorConfig::decode(message)?)
        }
        // Kept, not applied: the name is the first field of each.
        _ => Ok(Applied::Nothing),
    })
}

/// Refuses a configuration the static reader would refuse (its `validate`), with its text.
fn checked<T>(name: &str, section: &str, config: T) -> Result<T, OpError>
where
    T: Validate,
{
    match config.check(&format!("hazelcast.{section}.{name}")) {
        Ok(()) => Ok(config),
        Err(error) => Err(OpError::new(ErrorKind::InvalidConfiguration, error.to_string())),
    }
}

/// The configuration types' `validate`, as one trait.
trait Validate {
    fn check(&self, key: &str) -> Result<(), ConfigError>;
}

macro_rules! validate {
    ($($ty:ty),*) => {$(
        impl Validate for $ty {
            fn check(&self, key: &str) -> Result<(), ConfigError> {
                self.validate(key)
            }
        }
    )*};
}

validate!(
    MapConfig,
    QueueConfig,
    CollectionConfig,
    MultiMapConfig,
    ReplicatedMapConfig,
    RingbufferConfig,
    PnCounterConfig,
    FlakeIdGeneratorConfig
);

fn map(r: &DynamicConfigAddMapConfig<'_>) -> Result<Applied, OpError> {
    let (backup_count, async_backup_count) = backups(r.backup_count, r.async_backup_count)?;
    let eviction = match &r.eviction {
        None => EvictionConfig::DEFAULT,
        Some(holder) => eviction(holder)?,
    };
    let indexes = r.indexes.iter().flatten().map(|index| MapIndexConfig {
        sorted: index.index_type == 0,
        attributes: index.attributes.iter().map(|attribute| attribute.trim().to_owned()).collect(),
    });
    let config = MapConfig {
        backup_count,
        async_backup_count,
        time_to_live_seconds: u64::from(not_negative(r.time_to_live_seconds, "time-to-live-seconds")?),
        max_idle_seconds: u64::from(not_negative(r.max_idle_seconds, "max-idle-seconds")?),
        eviction,
        per_entry_stats_enabled: r.per_entry_stats_enabled,
        indexes: indexes.collect(),
        merge_policy: merge_policy(r.merge_policy, r.merge_batch_size)?,
        event_journal: r.event_journal.map_or(ferrogrid_config::EventJournalConfig::DEFAULT, |journal| {
            ferrogrid_config::EventJournalConfig {
                enabled: journal.enabled,
                capacity: journal.capacity.max(0) as u32,
                time_to_live_seconds: journal.time_to_live_seconds.max(0) as u32,
            }
        }),
        // (the request's data-persistence is not read: the member does not persist yet)
        data_persistence: ferrogrid_config::DataPersistenceConfig::DEFAULT,
    };
    checked(r.name, "map", config).map(Applied::Map)
}

/// A map's merge policy: Hazelcast's built-in classes (ferrogrid runs no Java class of the
/// user's); the batch size is checked with the rest of the config.
fn merge_policy(class_name: &str, batch_size: i32) -> Result<ferrogrid_config::MergePolicyConfig, OpError> {
    let policy = ferrogrid_config::MergePolicy::parse(class_name).ok_or_else(|| {
        let text = format!("ferrogrid runs only Hazelcast's built-in merge policies; got {class_name}");
        OpError::new(ErrorKind::IllegalArgument, text)
    })?;
    Ok(ferrogrid_config::MergePolicyConfig { policy, batch_size: u32::try_from(batch_size).unwrap_or(0) })
}

/// A map's eviction settings: Hazelcast's enum names (an unknown one is refused as Java's
/// `valueOf` refuses it); a policy Hazelcast has and ferrogrid does not is refused as the
/// static reader refuses it.
fn eviction(holder: &EvictionConfigHolder<'_>) -> Result<EvictionConfig, OpError> {
    let unknown = |class: &str, name: &str| {
        OpError::new(ErrorKind::IllegalArgument, format!("No enum constant com.hazelcast.config.{class}.{name}"))
    };
    let eviction_policy = match holder.eviction_policy {
        "LRU" => EvictionPolicy::Lru,
        "LFU" => EvictionPolicy::Lfu,
        "RANDOM" => EvictionPolicy::Random,
        "NONE" => EvictionPolicy::None,
        other => return Err(unknown("EvictionPolicy", other)),
    };
    let max_size_policy = match holder.max_size_policy {
        "PER_NODE" => MaxSizePolicy::PerNode,
        "PER_PARTITION" => MaxSizePolicy::PerPartition,
        "USED_HEAP_SIZE" => MaxSizePolicy::UsedHeapSize,
        other @ ("ENTRY_COUNT"
        | "USED_HEAP_PERCENTAGE"
        | "FREE_HEAP_SIZE"
        | "FREE_HEAP_PERCENTAGE"
        | "USED_NATIVE_MEMORY_SIZE"
        | "USED_NATIVE_MEMORY_PERCENTAGE"
        | "FREE_NATIVE_MEMORY_SIZE"
        | "FREE_NATIVE_MEMORY_PERCENTAGE") => {
            let text =
                format!("max-size-policy {other} is not supported; use PER_NODE, PER_PARTITION or USED_HEAP_SIZE");
            return Err(OpError::new(ErrorKind::InvalidConfiguration, text));
        }
        other => return Err(unknown("MaxSizePolicy", other)),
    };
    // A map's size 0 is Integer.MAX_VALUE in Hazelcast.
    let size = match not_negative(holder.size, "eviction size")? {
        0 => i32::MAX as u32,
        size => size,
    };
    Ok(EvictionConfig { size, max_size_policy, eviction_policy })
}

fn queue(r: &DynamicConfigAddQueueConfig<'_>) -> Result<Applied, OpError> {
    let (backup_count, async_backup_count) = backups(r.backup_count, r.async_backup_count)?;
    if r.max_size < 0 {
        return Err(OpError::new(ErrorKind::IllegalArgument, "Size of the queue can not be a negative value!"));
    }
    let config = QueueConfig {
        max_size: r.max_size as u32,
        backup_count,
        async_backup_count,
        empty_queue_ttl_seconds: i64::from(r.empty_queue_ttl),
        merge_policy: MergePolicyConfig::DEFAULT,
    };
    checked(r.name, "queue", config).map(Applied::Queue)
}

fn multimap(r: &DynamicConfigAddMultiMapConfig<'_>) -> Result<Applied, OpError> {
    let (backup_count, async_backup_count) = backups(r.backup_count, r.async_backup_count)?;
    // Hazelcast 5.6 accepts any text here; anything but LIST is a SET.
    let value_collection_type = match r.collection_type.eq_ignore_ascii_case("LIST") {
        true => ValueCollectionType::List,
        false => ValueCollectionType::Set,
    };
    // (The policy's name follows in the frames this decoder does not read: the default.)
    let merge_policy = ferrogrid_config::MergePolicyConfig {
        batch_size: u32::try_from(r.merge_batch_size).unwrap_or(0),
        ..ferrogrid_config::MergePolicyConfig::DEFAULT
    };
    let config = MultiMapConfig { value_collection_type, backup_count, async_backup_count, merge_policy };
    checked(r.name, "multimap", config).map(Applied::MultiMap)
}

fn collection(name: &str, max_size: i32, backup: i32, async_backup: i32) -> Result<CollectionConfig, OpError> {
    let (backup_count, async_backup_count) = backups(backup, async_backup)?;
    let max_size = not_negative(max_size, "max-size")?;
    let merge_policy = MergePolicyConfig::DEFAULT;
    checked(name, "list", CollectionConfig { max_size, backup_count, async_backup_count, merge_policy })
}

fn ringbuffer(r: &DynamicConfigAddRingbufferConfig<'_>) -> Result<Applied, OpError> {
    let (backup_count, async_backup_count) = backups(r.backup_count, r.async_backup_count)?;
    if r.capacity < 1 {
        return Err(OpError::new(ErrorKind::IllegalArgument, "capacity can't be smaller than 1"));
    }
    let time_to_live_seconds = not_negative(r.time_to_live_seconds, "timeToLiveSeconds")?;
    let config = RingbufferConfig {
        capacity: r.capacity as u32,
        time_to_live_seconds,
        backup_count,
        async_backup_count,
        merge_policy: MergePolicyConfig::DEFAULT,
    };
    checked(r.name, "ringbuffer", config).map(Applied::Ringbuffer)
}

fn replicated_map(r: &DynamicConfigAddReplicatedMapConfig<'_>) -> Result<Applied, OpError> {
    let in_memory_format = match r.in_memory_format {
        "BINARY" => InMemoryFormat::Binary,
        "OBJECT" => InMemoryFormat::Object,
        "NATIVE" => InMemoryFormat::Native,
        other => {
            let text = format!("No enum constant com.hazelcast.config.InMemoryFormat.{other}");
            return Err(OpError::new(ErrorKind::IllegalArgument, text));
        }
    };
    let config = ReplicatedMapConfig {
        in_memory_format,
        async_fillup: r.async_fillup,
        statistics_enabled: r.statistics_enabled,
        // (The policy's name follows in the frames this decoder does not read: the default.)
        merge_policy: ferrogrid_config::MergePolicyConfig {
            batch_size: u32::try_from(r.merge_batch_size).unwrap_or(0),
            ..ferrogrid_config::MergePolicyConfig::DEFAULT
        },
    };
    checked(r.name, "replicatedmap", config).map(Applied::ReplicatedMap)
}

fn flake_id(r: &DynamicConfigAddFlakeIdGeneratorConfig<'_>) -> Result<Applied, OpError> {
    let bits = |bits: i32, what: &str| {
        u8::try_from(bits).map_err(|_| OpError::new(ErrorKind::IllegalArgument, format!("{what} out of range: {bits}")))
    };
    let config = FlakeIdGeneratorConfig {
        prefetch_count: not_negative(r.prefetch_count, "prefetch-count")?,
        prefetch_validity_millis: r.prefetch_validity_millis,
        epoch_start: r.epoch_start,
        node_id_offset: r.node_id_offset,
        bits_sequence: bits(r.bits_sequence, "bitsSequence")?,
        bits_node_id: bits(r.bits_node_id, "bitsNodeId")?,
        allowed_future_millis: r.allowed_future_millis,
        statistics_enabled: r.statistics_enabled,
    };
    checked(r.name, "flake-id-generator", config).map(Applied::FlakeIdGenerator)
}

/// Adds the definitions a member sent when this one linked to it (`peer::CONFIGS`: `{ request
/// bytes }*`); a definition that conflicts with one held here is logged and skipped.
pub(crate) fn merge(configs: &DynamicConfigs, payload: &[u8]) -> Result<(), crate::cluster::peer::Malformed> {
    let mut reader = crate::cluster::peer::Reader::new(payload);
    while !reader.is_empty() {
        let bytes = reader.bytes()?;
        let definition =
            Message::parse(bytes).map_err(|_| crate::cluster::peer::Malformed::Refused("a dynamic configuration"))?;
        if definition.message_type() == ferrogrid_protocol::codec::CacheCreateConfig::TYPE {
            let limit = configs.config().limits.max_dynamic_configs as usize;
            let created = crate::engine::cache::configs::CacheDef::from_request(bytes)
                .and_then(|def| configs.caches.create(std::sync::Arc::new(def), limit));
            if let Err(refusal) = created {
                warn!(reason = %refusal.message, "a cache another member holds: not created");
            }
            continue;
        }
        match definition_of(&definition) {
            Some(Ok(definition)) => {
                if let Err(refusal) = configs.add(definition) {
                    warn!(reason = %refusal.message, "a dynamic configuration another member holds: not added");
                }
            }
            Some(Err(refusal)) => warn!(reason = %refusal.message, "a dynamic configuration another member sent"),
            None => return Err(crate::cluster::peer::Malformed::Refused("a dynamic configuration")),
        }
    }
    Ok(())
}

fn definition_of(message: &Message<'_>) -> Option<Result<Definition, OpError>> {
    definition(message).ok()
}

/// DynamicConfig.add*Config over every member: each reactor adds the definition to the
/// member's [`DynamicConfigs`] (the first adds it, the others find it there).
#[derive(Debug)]
pub(crate) struct AddConfig {
    definition: Definition,
}

/// The first refusal of any share (None: every share added the definition or held it).
#[derive(Debug, Default)]
pub(crate) struct Verdict(Option<OpError>);

impl Partial for Verdict {
    fn merge(&mut self, other: Verdict) {
        if self.0.is_none() {
            self.0 = other.0;
        }
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        match &self.0 {
            Some(refusal) => {
                let named = crate::route::wire::error_code(refusal.kind);
                writer.frame(&named.code.to_le_bytes()).frame(named.class_name.as_bytes());
                writer.frame(refusal.message.as_bytes())
            }
            None => writer.null(),
        };
    }

    fn read_from(message: &Message<'_>) -> Result<Verdict, DecodeError> {
        let mut reader: MessageReader<'_> = message.reader();
        if reader.next_is_null() {
            return Ok(Verdict(None));
        }
        let code = reader.value_frame("refusal code")?;
        let code = i32::from_le_bytes(code.try_into().map_err(|_| DecodeError::UnexpectedFrame("refusal code"))?);
        let class_name = reader.string()?;
        let message = reader.string()?.to_owned();
        let kinds = [ErrorKind::InvalidConfiguration, ErrorKind::IllegalArgument, ErrorKind::Refused];
        Ok(Verdict(Some(OpError::new(crate::route::wire::error_kind(&kinds, code, class_name), message))))
    }
}

impl WideOperation for AddConfig {
    type Partial = Verdict;
    const PARTITIONS: Partitions = Partitions::None;

    fn empty(&self) -> Verdict {
        Verdict(None)
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut Verdict) {
        unreachable!("a configuration is added in on_share")
    }

    fn on_share(&self, _name: &str, share: &mut ShareContext<'_>, partial: &mut Verdict) {
        if let Err(refusal) = share.settings.dynamic.add(self.definition.clone()) {
            partial.merge(Verdict(Some(refusal)));
        }
    }

    fn reply<'p>(&'p self, partial: &'p mut Verdict) -> Result<Reply<'p>, OpError> {
        match partial.0.take() {
            Some(refusal) => Err(refusal),
            None => Ok(Reply::Empty),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_request(backup_count: i32, eviction: Option<EvictionConfigHolder<'_>>) -> Vec<u8> {
        let mut null = Vec::new();
        ferrogrid_protocol::message::write_frame(&mut null, ferrogrid_protocol::frame::IS_NULL, &[]);
        let request = DynamicConfigAddMapConfig {
            backup_count,
            async_backup_count: 0,
            time_to_live_seconds: 5,
            max_idle_seconds: 7,
            read_backup_data: false,
            merge_batch_size: 100,
            statistics_enabled: true,
            metadata_policy: 0,
            per_entry_stats_enabled: true,
            name: "orders",
            eviction,
            cache_deserialized_values: "INDEX_ONLY",
            merge_policy: "PutIfAbsentMergePolicy",
            in_memory_format: "BINARY",
            listeners: Opaque(&null),
            partition_lost_listeners: Opaque(&null),
            split_brain_protection: Opaque(&null),
            map_store: Opaque(&null),
            near_cache: Opaque(&null),
            wan_replication: Opaque(&null),
            indexes: None,
            attributes: Opaque(&null),
            query_caches: Opaque(&null),
            partitioning_strategy_class_name: Opaque(&null),
            partitioning_strategy: Opaque(&null),
            hot_restart: Opaque(&null),
            event_journal: Some(EventJournalConfigHolder { enabled: true, capacity: 542, time_to_live_seconds: 3 }),
            rest: Rest(&[]),
        };
        let mut out = Vec::new();
        request.encode(&mut out, 1, -1, 0);
        out
    }

    fn decoded(bytes: &[u8]) -> Result<Definition, OpError> {
        definition(&Message::parse(bytes).unwrap()).unwrap()
    }

    #[test]
    fn a_map_definition_applies_its_settings() {
        let holder = EvictionConfigHolder { size: 0, max_size_policy: "PER_PARTITION", eviction_policy: "LRU" };
        let definition = decoded(&map_request(2, Some(holder))).unwrap();
        assert_eq!(definition.name, "orders");
        let Applied::Map(config) = definition.applied else { panic!("a map config: {definition:?}") };
        assert_eq!((config.backup_count, config.time_to_live_seconds, config.max_idle_seconds), (2, 5, 7));
        let journal = ferrogrid_config::EventJournalConfig { enabled: true, capacity: 542, time_to_live_seconds: 3 };
        assert_eq!(config.event_journal, journal);
        assert!(config.per_entry_stats_enabled);
        let expected = EvictionConfig {
            size: i32::MAX as u32,
            max_size_policy: MaxSizePolicy::PerPartition,
            eviction_policy: EvictionPolicy::Lru,
        };
        assert_eq!(config.eviction, expected, "size 0 is Integer.MAX_VALUE");
    }

    #[test]
    fn settings_java_or_the_static_reader_refuse_are_refused() {
        let refusal = |bytes: Vec<u8>| decoded(&bytes).unwrap_err();
        let refused = refusal(map_request(7, None));
        assert_eq!(
            (refused.kind, refused.message.as_str()),
            (ErrorKind::IllegalArgument, "backup-count can't be larger than than 6")
        );
        let unknown = EvictionConfigHolder { size: 1, max_size_policy: "PER_NODE", eviction_policy: "FOO" };
        assert!(refusal(map_request(1, Some(unknown))).message.contains("EvictionPolicy.FOO"));
        let unsupported = EvictionConfigHolder { size: 1, max_size_policy: "FREE_HEAP_SIZE", eviction_policy: "LRU" };
        assert_eq!(refusal(map_request(1, Some(unsupported))).kind, ErrorKind::InvalidConfiguration);
        assert_eq!(backups(3, 4).unwrap_err().kind, ErrorKind::IllegalArgument);
        assert_eq!(backups(-1, 0).unwrap_err().kind, ErrorKind::IllegalArgument);
    }

    #[test]
    fn a_verdict_crosses_members() {
        let refusal = OpError::new(ErrorKind::InvalidConfiguration, "conflicting");
        for verdict in [Verdict(None), Verdict(Some(refusal))] {
            let mut out = Vec::new();
            let mut writer = MessageWriter::response(&mut out, ferrogrid_protocol::MessageType(1), 1, 0);
            verdict.write_to(&mut writer);
            writer.finish();
            let read = Verdict::read_from(&Message::parse(&out).unwrap()).unwrap();
            assert_eq!(read.0, verdict.0);
        }
    }
}
