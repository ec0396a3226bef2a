//! The data structures' sections of the document (`map`, `queue`, `list`, `set`, `multimap`,
//! `replicatedmap`, `ringbuffer`, `topic`, `pn-counter`, `crdt-replication`,
//! `flake-id-generator`, `cardinality-estimator`): one entry per named structure; and the
//! `split-brain-protection` rules those entries refer to.

use super::values::{
    boolean, eviction_policy, in_memory_format, in_memory_format_kind, map_indexes, max_size_policy, merge_policy,
    signed, text, unsigned, value_collection_type,
};
use super::{Result, Section};
use crate::{CollectionConfigs, MapConfig, MemberConfig, ProtectOn, ProtectedStructure, ProtectionFunction};

/// Every data structure's section (read in this order, so the first bad key of the document is
/// the one reported).
pub(super) fn read_structures(hazelcast: &mut Section, config: &mut MemberConfig) -> Result<()> {
    if let Some(rules) = hazelcast.section("split-brain-protection")? {
        read_split_brain_protections(rules, config)?;
    }
    if let Some(maps) = hazelcast.section("map")? {
        read_maps(maps, config)?;
    }
    if let Some(queues) = hazelcast.section("queue")? {
        read_queues(queues, config)?;
    }
    for (section, structure) in [("list", ProtectedStructure::List), ("set", ProtectedStructure::Set)] {
        let Some(configured) = hazelcast.section(section)? else { continue };
        read_collections(configured, structure, config)?;
    }
    if let Some(multimaps) = hazelcast.section("multimap")? {
        read_multimaps(multimaps, config)?;
    }
    if let Some(replicated_maps) = hazelcast.section("replicatedmap")? {
        read_replicated_maps(replicated_maps, config)?;
    }
    if let Some(ringbuffers) = hazelcast.section("ringbuffer")? {
        read_ringbuffers(ringbuffers, config)?;
    }
    if let Some(topics) = hazelcast.section("topic")? {
        read_topics(topics, config)?;
    }
    if let Some(counters) = hazelcast.section("pn-counter")? {
        read_pn_counters(counters, config)?;
    }
    if let Some(mut replication) = hazelcast.section("crdt-replication")? {
        let period = &mut config.crdt_replication.replication_period_ms;
        replication.set("replication-period-millis", period, unsigned)?;
    }
    if let Some(generators) = hazelcast.section("flake-id-generator")? {
        read_flake_id_generators(generators, config)?;
    }
    if let Some(estimators) = hazelcast.section("cardinality-estimator")? {
        read_cardinality_estimators(estimators, config)?;
    }
    Ok(())
}

/// Each `map` entry: backups, expiry, statistics, indexes, eviction and merge policy.
fn read_maps(mut maps: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in maps.sections()? {
        let mut map = MapConfig::DEFAULT;
        section.set("backup-count", &mut map.backup_count, unsigned)?;
        section.set("async-backup-count", &mut map.async_backup_count, unsigned)?;
        let time_to_live = &mut map.time_to_live_seconds;
        section.set("time-to-live-seconds", time_to_live, unsigned)?;
        section.set("max-idle-seconds", &mut map.max_idle_seconds, unsigned)?;
        section.set("per-entry-stats-enabled", &mut map.per_entry_stats_enabled, boolean)?;
        section.set("indexes", &mut map.indexes, map_indexes)?;
        section.read("in-memory-format", in_memory_format)?;
        if let Some(mut eviction) = section.section("eviction")? {
            eviction.set("size", &mut map.eviction.size, unsigned)?;
            eviction.set("max-size-policy", &mut map.eviction.max_size_policy, max_size_policy)?;
            eviction.set("eviction-policy", &mut map.eviction.eviction_policy, eviction_policy)?;
        }
        read_merge_policy(&mut section, &mut map.merge_policy)?;
        if let Some(mut journal) = section.section("event-journal")? {
            journal.set("enabled", &mut map.event_journal.enabled, boolean)?;
            journal.set("capacity", &mut map.event_journal.capacity, unsigned)?;
            journal.set("time-to-live-seconds", &mut map.event_journal.time_to_live_seconds, unsigned)?;
        }
        if let Some(mut persistence) = section.section("data-persistence")? {
            persistence.set("enabled", &mut map.data_persistence.enabled, boolean)?;
            persistence.set("fsync", &mut map.data_persistence.fsync, boolean)?;
        }
        refer(&mut section, ProtectedStructure::Map, &name, config)?;
        config.maps.insert(name, map);
    }
    Ok(())
}

/// Each `queue` entry: its bound, backups, empty-queue TTL and merge policy.
fn read_queues(mut queues: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in queues.sections()? {
        let mut queue = crate::QueueConfig::DEFAULT;
        section.set("max-size", &mut queue.max_size, unsigned)?;
        section.set("backup-count", &mut queue.backup_count, unsigned)?;
        section.set("async-backup-count", &mut queue.async_backup_count, unsigned)?;
        section.set("empty-queue-ttl", &mut queue.empty_queue_ttl_seconds, signed)?;
        read_merge_policy(&mut section, &mut queue.merge_policy)?;
        refer(&mut section, ProtectedStructure::Queue, &name, config)?;
        config.queues.insert(name, queue);
    }
    Ok(())
}

/// Each `list` or `set` entry: its bound, backups and merge policy.
fn read_collections(mut configured: Section, structure: ProtectedStructure, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in configured.sections()? {
        let mut collection = crate::CollectionConfig::DEFAULT;
        section.set("max-size", &mut collection.max_size, unsigned)?;
        section.set("backup-count", &mut collection.backup_count, unsigned)?;
        section.set("async-backup-count", &mut collection.async_backup_count, unsigned)?;
        read_merge_policy(&mut section, &mut collection.merge_policy)?;
        refer(&mut section, structure, &name, config)?;
        let collections: &mut CollectionConfigs = match structure {
            ProtectedStructure::List => &mut config.lists,
            _ => &mut config.sets,
        };
        collections.insert(name, collection);
    }
    Ok(())
}

/// Each `multimap` entry: its value collection, backups and merge policy.
fn read_multimaps(mut multimaps: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in multimaps.sections()? {
        let mut multimap = crate::MultiMapConfig::DEFAULT;
        section.set("value-collection-type", &mut multimap.value_collection_type, value_collection_type)?;
        section.set("backup-count", &mut multimap.backup_count, unsigned)?;
        section.set("async-backup-count", &mut multimap.async_backup_count, unsigned)?;
        read_merge_policy(&mut section, &mut multimap.merge_policy)?;
        refer(&mut section, ProtectedStructure::MultiMap, &name, config)?;
        config.multimaps.insert(name, multimap);
    }
    Ok(())
}

/// Each `replicatedmap` entry: its format, fill-up and statistics.
fn read_replicated_maps(mut replicated_maps: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in replicated_maps.sections()? {
        let mut replicated = crate::ReplicatedMapConfig::DEFAULT;
        section.set("in-memory-format", &mut replicated.in_memory_format, in_memory_format_kind)?;
        section.set("async-fillup", &mut replicated.async_fillup, boolean)?;
        section.set("statistics-enabled", &mut replicated.statistics_enabled, boolean)?;
        read_merge_policy(&mut section, &mut replicated.merge_policy)?;
        refer(&mut section, ProtectedStructure::ReplicatedMap, &name, config)?;
        config.replicated_maps.insert(name, replicated);
    }
    Ok(())
}

/// Each `ringbuffer` entry: capacity, TTL, backups and merge policy.
fn read_ringbuffers(mut ringbuffers: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in ringbuffers.sections()? {
        let mut ringbuffer = crate::RingbufferConfig::DEFAULT;
        section.set("capacity", &mut ringbuffer.capacity, unsigned)?;
        section.set("time-to-live-seconds", &mut ringbuffer.time_to_live_seconds, unsigned)?;
        section.set("backup-count", &mut ringbuffer.backup_count, unsigned)?;
        section.set("async-backup-count", &mut ringbuffer.async_backup_count, unsigned)?;
        section.read("in-memory-format", in_memory_format)?;
        read_merge_policy(&mut section, &mut ringbuffer.merge_policy)?;
        refer(&mut section, ProtectedStructure::Ringbuffer, &name, config)?;
        config.ringbuffers.insert(name, ringbuffer);
    }
    Ok(())
}

/// Each `topic` entry: ordering and statistics.
fn read_topics(mut topics: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in topics.sections()? {
        let mut topic = crate::TopicConfig::DEFAULT;
        section.set("global-ordering-enabled", &mut topic.global_ordering_enabled, boolean)?;
        section.set("statistics-enabled", &mut topic.statistics_enabled, boolean)?;
        config.topics.insert(name, topic);
    }
    Ok(())
}

/// Each `pn-counter` entry: replicas and statistics.
fn read_pn_counters(mut counters: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in counters.sections()? {
        let mut counter = crate::PnCounterConfig::DEFAULT;
        section.set("replica-count", &mut counter.replica_count, unsigned)?;
        section.set("statistics-enabled", &mut counter.statistics_enabled, boolean)?;
        refer(&mut section, ProtectedStructure::PnCounter, &name, config)?;
        config.pn_counters.insert(name, counter);
    }
    Ok(())
}

/// Each `flake-id-generator` entry, under Hazelcast's key names.
fn read_flake_id_generators(mut generators: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in generators.sections()? {
        let mut generator = crate::FlakeIdGeneratorConfig::DEFAULT;
        section.set("prefetch-count", &mut generator.prefetch_count, unsigned)?;
        section.set("prefetch-validity-millis", &mut generator.prefetch_validity_millis, signed)?;
        section.set("epoch-start", &mut generator.epoch_start, signed)?;
        section.set("node-id-offset", &mut generator.node_id_offset, signed)?;
        section.set("bits-sequence", &mut generator.bits_sequence, unsigned)?;
        section.set("bits-node-id", &mut generator.bits_node_id, unsigned)?;
        section.set("allowed-future-millis", &mut generator.allowed_future_millis, signed)?;
        section.set("statistics-enabled", &mut generator.statistics_enabled, boolean)?;
        config.flake_id_generators.insert(name, generator);
    }
    Ok(())
}

/// Each `cardinality-estimator` entry: backups and merge policy.
fn read_cardinality_estimators(mut estimators: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in estimators.sections()? {
        let mut estimator = crate::CardinalityEstimatorConfig::DEFAULT;
        section.set("backup-count", &mut estimator.backup_count, unsigned)?;
        section.set("async-backup-count", &mut estimator.async_backup_count, unsigned)?;
        read_merge_policy(&mut section, &mut estimator.merge_policy)?;
        refer(&mut section, ProtectedStructure::CardinalityEstimator, &name, config)?;
        config.cardinality_estimators.insert(name, estimator);
    }
    Ok(())
}

/// An entry's `merge-policy` (`class-name`, `batch-size`; the bounds are `validate`'s).
fn read_merge_policy(section: &mut Section, target: &mut crate::MergePolicyConfig) -> Result<()> {
    if let Some(mut merge) = section.section("merge-policy")? {
        merge.set("class-name", &mut target.policy, merge_policy)?;
        merge.set("batch-size", &mut target.batch_size, unsigned)?;
    }
    Ok(())
}

/// An entry's `split-brain-protection-ref` (checked against the rules by `validate`).
fn refer(section: &mut Section, structure: ProtectedStructure, name: &str, config: &mut MemberConfig) -> Result<()> {
    let reference = section.read("split-brain-protection-ref", text)?;
    config.split_brain_protections.refer(structure, name, reference);
    Ok(())
}

/// Each `split-brain-protection` rule: its size, what it guards and how it counts members.
fn read_split_brain_protections(mut rules: Section, config: &mut MemberConfig) -> Result<()> {
    for (name, mut section) in rules.sections()? {
        let mut rule = crate::SplitBrainProtectionConfig::DEFAULT;
        section.set("enabled", &mut rule.enabled, boolean)?;
        section.set("minimum-cluster-size", &mut rule.minimum_cluster_size, unsigned)?;
        section.set("protect-on", &mut rule.protect_on, protect_on)?;
        if let Some(mut active) = section.section("recently-active-split-brain-protection")? {
            let mut heartbeat_tolerance_ms = 5_000;
            active.set("heartbeat-tolerance-millis", &mut heartbeat_tolerance_ms, unsigned)?;
            rule.function = ProtectionFunction::RecentlyActive { heartbeat_tolerance_ms };
        }
        if let Some(mut probabilistic) = section.section("probabilistic-split-brain-protection")? {
            let mut heartbeat_tolerance_ms = 60_000;
            probabilistic.set("acceptable-heartbeat-pause-millis", &mut heartbeat_tolerance_ms, unsigned)?;
            rule.function = ProtectionFunction::RecentlyActive { heartbeat_tolerance_ms };
        }
        config.split_brain_protections.insert(name, rule);
    }
    Ok(())
}

fn protect_on(value: &serde_yaml::Value, path: &str) -> Result<ProtectOn> {
    match text(value, path)?.as_str() {
        "READ" => Ok(ProtectOn::Read),
        "WRITE" => Ok(ProtectOn::Write),
        "READ_WRITE" => Ok(ProtectOn::ReadWrite),
        _ => Err(super::values::expected(path, "READ, WRITE or READ_WRITE", value)),
    }
}
