//! Split-brain protection (`hazelcast.split-brain-protection`, `ferrogrid_config::split_brain`):
//! a request on an object whose rule is not met fails with `SplitBrainProtectionException`
//! before it is routed, on the member that received it, by that member's view of the cluster.
//!
//! What a rule guards is read from the request's row: its section's structure (the operation
//! table, `route/operations.rs`), whether it writes (`Flags::WRITE`: data or locks; else it
//! reads), and that it names an object (`Flags::SCOPED`). Listener registrations and removals
//! are never refused, as in Hazelcast, whose listener operations are neither reads nor writes.
//! With no rule attached to anything (the usual case) nothing is looked at.

use crate::cluster::heard::Heard;
use crate::cluster::replication::state::ClusterState;
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::structures::ObjectKind;
use crate::route::row::{Flags, Operation};
use ferrogrid_config::{ProtectedStructure, ProtectionFunction, SplitBrainProtectionConfig, SplitBrainProtections};
use std::time::Instant;

/// The section of the configuration whose entries may guard a structure's objects.
pub(crate) const fn structure(kind: ObjectKind) -> ProtectedStructure {
    match kind {
        ObjectKind::Map => ProtectedStructure::Map,
        ObjectKind::Queue => ProtectedStructure::Queue,
        ObjectKind::Ringbuffer => ProtectedStructure::Ringbuffer,
        ObjectKind::List => ProtectedStructure::List,
        ObjectKind::Set => ProtectedStructure::Set,
        ObjectKind::MultiMap => ProtectedStructure::MultiMap,
        ObjectKind::ReplicatedMap => ProtectedStructure::ReplicatedMap,
        ObjectKind::CardinalityEstimator => ProtectedStructure::CardinalityEstimator,
        ObjectKind::Cache => ProtectedStructure::Cache,
        #[cfg(test)]
        ObjectKind::Probe => ProtectedStructure::Map,
    }
}

/// The refusal of a request on row `row` (at `index` in the table) when its object's rule is
/// not met; None when it may go on.
pub(crate) fn check(
    (protections, heard): (&SplitBrainProtections, &Heard),
    cluster: &ClusterState,
    (index, row): (usize, &Operation),
    bytes: &[u8],
) -> Option<OpError> {
    if !row.is(Flags::SCOPED) || row.name.contains("Listener") {
        return None;
    }
    let structure = crate::route::operations::guarded_by(index)?;
    let scoped = crate::tenants::object_name(bytes)?;
    let name = crate::tenants::split(scoped).map_or(scoped, |(_, name)| name);
    let (rule_name, rule) = protections.for_object(structure, name)?;
    if !rule.protect_on.guards(row.is(Flags::WRITE)) {
        return None;
    }
    let present = present(heard, cluster, rule);
    (present < rule.minimum_cluster_size as usize).then(|| {
        let text = format!(
            "Split brain protection exception: {rule_name} has failed! (members present: {present}, \
             minimum-cluster-size: {})",
            rule.minimum_cluster_size
        );
        OpError::new(ErrorKind::SplitBrainProtection, text)
    })
}

/// The members a rule counts: this member and, by its function, every other member of the
/// member list or those heard from recently.
fn present(heard: &Heard, cluster: &ClusterState, rule: &SplitBrainProtectionConfig) -> usize {
    let others = cluster.members.iter().map(|member| member.id).filter(|id| *id != cluster.me);
    1 + match rule.function {
        ProtectionFunction::MemberCount => others.count(),
        ProtectionFunction::RecentlyActive { heartbeat_tolerance_ms } => {
            heard.count_within(others, Instant::now(), heartbeat_tolerance_ms)
        }
    }
}
