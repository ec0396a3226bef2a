//! Merge policies: what a structure keeps when the data of a cluster that merges into another
//! (a split brain healed) meets what the other holds. Configured per structure as Hazelcast
//! writes it, `merge-policy: {class-name, batch-size}` (XML: `<merge-policy
//! batch-size="100">PutIfAbsentMergePolicy</merge-policy>`), by class name or short name.

use crate::error::{invalid, ConfigError};

/// The most entries a merging member sends in one batch.
pub const MAX_MERGE_BATCH_SIZE: u32 = 100_000;

/// Hazelcast's built-in policies (`com.hazelcast.spi.merge.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergePolicy {
    /// Keeps what the cluster merged into holds; adds what it lacks (the default).
    PutIfAbsent,
    /// The merging entry wins.
    PassThrough,
    /// Keeps what the cluster merged into holds; adds nothing.
    Discard,
    /// The entry read more often wins (ties: the merging one).
    HigherHits,
    /// The entry read last wins (ties: the merging one).
    LatestAccess,
    /// The entry written last wins (ties: the merging one).
    LatestUpdate,
    /// The entry that expires later wins (ties: the merging one).
    ExpirationTime,
    /// Cardinality estimators: the union of both estimators.
    HyperLogLog,
}

impl MergePolicy {
    const NAMES: [(&'static str, MergePolicy); 8] = [
        ("PutIfAbsentMergePolicy", MergePolicy::PutIfAbsent),
        ("PassThroughMergePolicy", MergePolicy::PassThrough),
        ("DiscardMergePolicy", MergePolicy::Discard),
        ("HigherHitsMergePolicy", MergePolicy::HigherHits),
        ("LatestAccessMergePolicy", MergePolicy::LatestAccess),
        ("LatestUpdateMergePolicy", MergePolicy::LatestUpdate),
        ("ExpirationTimeMergePolicy", MergePolicy::ExpirationTime),
        ("HyperLogLogMergePolicy", MergePolicy::HyperLogLog),
    ];

    /// The policy a `class-name` names: a short name, or the class in `com.hazelcast.spi.merge`.
    /// The short class names, for messages: "A, B or C".
    pub fn known_names() -> String {
        let names: Vec<&str> = Self::NAMES.iter().map(|(name, _)| *name).collect();
        let (last, rest) = names.split_last().expect("policies are listed");
        format!("{} or {last}", rest.join(", "))
    }

    /// Its short class name (`PutIfAbsentMergePolicy`).
    pub fn name(self) -> &'static str {
        Self::NAMES[usize::from(self.code())].0
    }

    /// A number for the policy (its place in Hazelcast's list above), as members send it.
    pub fn code(self) -> u8 {
        Self::NAMES.iter().position(|(_, policy)| *policy == self).expect("every policy is listed") as u8
    }

    /// The policy [`MergePolicy::code`] numbered.
    pub fn from_code(code: u8) -> Option<MergePolicy> {
        Self::NAMES.get(code as usize).map(|(_, policy)| *policy)
    }

    pub fn parse(name: &str) -> Option<MergePolicy> {
        let short = name.trim().strip_prefix("com.hazelcast.spi.merge.").unwrap_or(name.trim());
        Self::NAMES.iter().find(|(known, _)| *known == short).map(|(_, policy)| *policy)
    }

    /// Whether it compares per-entry statistics (hits, access and update times), which a map
    /// keeps only with `per-entry-stats-enabled`.
    pub fn needs_entry_stats(self) -> bool {
        matches!(self, MergePolicy::HigherHits | MergePolicy::LatestAccess | MergePolicy::LatestUpdate)
    }

    /// Whether it can merge a structure whose items merge as one value, with no statistics.
    pub fn merges_whole(self) -> bool {
        matches!(self, MergePolicy::PutIfAbsent | MergePolicy::PassThrough | MergePolicy::Discard)
    }

    /// Whether the merging entry replaces the existing one (`existing`: None when the key is
    /// absent). Every policy adds an entry the other cluster lacks, except Discard.
    pub fn merging_wins(self, merging: &MergingEntry, existing: Option<&MergingEntry>) -> bool {
        let Some(existing) = existing else {
            return self != MergePolicy::Discard;
        };
        match self {
            MergePolicy::PutIfAbsent | MergePolicy::Discard | MergePolicy::HyperLogLog => false,
            MergePolicy::PassThrough => true,
            MergePolicy::HigherHits => merging.hits >= existing.hits,
            MergePolicy::LatestAccess => merging.last_access_time_ms >= existing.last_access_time_ms,
            MergePolicy::LatestUpdate => merging.last_update_time_ms >= existing.last_update_time_ms,
            MergePolicy::ExpirationTime => merging.expiration_time_ms >= existing.expiration_time_ms,
        }
    }
}

/// What a policy compares of an entry (Hazelcast's `MergingHits`, `MergingLastAccessTime`, …).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergingEntry {
    pub hits: i64,
    pub last_access_time_ms: i64,
    pub last_update_time_ms: i64,
    /// When it expires (`i64::MAX`: never).
    pub expiration_time_ms: i64,
}

/// A structure's `merge-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergePolicyConfig {
    pub policy: MergePolicy,
    /// Entries per merge batch. `batch-size`, default 100, 1..=[`MAX_MERGE_BATCH_SIZE`].
    pub batch_size: u32,
}

impl MergePolicyConfig {
    pub const DEFAULT: MergePolicyConfig = MergePolicyConfig { policy: MergePolicy::PutIfAbsent, batch_size: 100 };

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if !(1..=MAX_MERGE_BATCH_SIZE).contains(&self.batch_size) {
            let expected = format!("expected 1..={MAX_MERGE_BATCH_SIZE}, got {}", self.batch_size);
            return Err(invalid(format!("{key}.merge-policy.batch-size"), expected));
        }
        Ok(())
    }

    /// [`MergePolicyConfig::validate`] for a structure that merges whole (a queue, list, set
    /// or ringbuffer: its items are one merging value, with no hits, access, update or expiry
    /// times): only PutIfAbsent, PassThrough and Discard apply. Hazelcast refuses the others
    /// alike (`MergePolicyValidator`: the policy needs a merging type the structure does not
    /// provide).
    pub fn validate_whole(&self, key: &str) -> Result<(), ConfigError> {
        self.validate(key)?;
        if !self.policy.merges_whole() {
            let name = self.policy.name();
            let text = format!(
                "{name} compares per-entry statistics this structure does not keep; use PutIfAbsentMergePolicy, \
                 PassThroughMergePolicy or DiscardMergePolicy"
            );
            return Err(invalid(format!("{key}.merge-policy.class-name"), text));
        }
        Ok(())
    }
}

impl Default for MergePolicyConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(hits: i64, access: i64, update: i64, expiration: i64) -> MergingEntry {
        MergingEntry { hits, last_access_time_ms: access, last_update_time_ms: update, expiration_time_ms: expiration }
    }

    #[test]
    fn names_are_hazelcasts_short_and_class_names() {
        assert_eq!(MergePolicy::parse("PutIfAbsentMergePolicy"), Some(MergePolicy::PutIfAbsent));
        assert_eq!(
            MergePolicy::parse("com.hazelcast.spi.merge.LatestUpdateMergePolicy"),
            Some(MergePolicy::LatestUpdate)
        );
        assert_eq!(MergePolicy::parse(" HigherHitsMergePolicy "), Some(MergePolicy::HigherHits));
        assert_eq!(MergePolicy::parse("com.example.MyPolicy"), None);
        assert!(MergePolicy::LatestAccess.needs_entry_stats() && !MergePolicy::ExpirationTime.needs_entry_stats());
    }

    #[test]
    fn each_policy_decides_as_hazelcasts() {
        let (old, new) = (entry(5, 100, 100, 1_000), entry(2, 200, 50, 2_000));
        let absent = None;
        for policy in
            [MergePolicy::PutIfAbsent, MergePolicy::PassThrough, MergePolicy::HigherHits, MergePolicy::LatestUpdate]
        {
            assert!(policy.merging_wins(&new, absent), "{policy:?} adds what is absent");
        }
        assert!(!MergePolicy::Discard.merging_wins(&new, absent));
        assert!(!MergePolicy::PutIfAbsent.merging_wins(&new, Some(&old)));
        assert!(MergePolicy::PassThrough.merging_wins(&new, Some(&old)));
        assert!(!MergePolicy::Discard.merging_wins(&new, Some(&old)));
        assert!(!MergePolicy::HigherHits.merging_wins(&new, Some(&old)));
        assert!(MergePolicy::LatestAccess.merging_wins(&new, Some(&old)));
        assert!(!MergePolicy::LatestUpdate.merging_wins(&new, Some(&old)));
        assert!(MergePolicy::ExpirationTime.merging_wins(&new, Some(&old)));
        assert!(MergePolicy::HigherHits.merging_wins(&old, Some(&old)), "a tie goes to the merging entry");
    }

    #[test]
    fn whole_structures_refuse_the_policies_that_compare_statistics() {
        for policy in [MergePolicy::PutIfAbsent, MergePolicy::PassThrough, MergePolicy::Discard] {
            let config = MergePolicyConfig { policy, ..MergePolicyConfig::DEFAULT };
            assert!(config.validate_whole("hazelcast.queue.q").is_ok(), "{policy:?}");
        }
        for policy in [
            MergePolicy::HigherHits,
            MergePolicy::LatestAccess,
            MergePolicy::LatestUpdate,
            MergePolicy::ExpirationTime,
            MergePolicy::HyperLogLog,
        ] {
            let config = MergePolicyConfig { policy, ..MergePolicyConfig::DEFAULT };
            let error = config.validate_whole("hazelcast.set.s").unwrap_err().to_string();
            assert!(error.contains("hazelcast.set.s.merge-policy.class-name"), "{error}");
            assert!(error.contains(policy.name()), "{error}");
        }
        let zero = MergePolicyConfig { batch_size: 0, ..MergePolicyConfig::DEFAULT };
        assert!(zero.validate_whole("hazelcast.list.l").unwrap_err().to_string().contains("batch-size"));
    }

    #[test]
    fn the_batch_size_is_bounded() {
        assert!(MergePolicyConfig::DEFAULT.validate("hazelcast.map.m").is_ok());
        let zero = MergePolicyConfig { batch_size: 0, ..MergePolicyConfig::DEFAULT };
        let error = zero.validate("hazelcast.map.m").unwrap_err().to_string();
        assert!(error.contains("hazelcast.map.m.merge-policy.batch-size"), "{error}");
    }
}
