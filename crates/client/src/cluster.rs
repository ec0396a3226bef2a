//! What the client knows about the cluster: identity, members, partition owners. No IO.
//!
//! [`ClusterView`] is fed by authentication responses and by the cluster-view listener's
//! MembersView / PartitionsView events, with the official clients' rules (client-protocol.md
//! §4.1.1, §4.1.2): a member list is applied only with a higher version (the version is reset
//! to 0 when the listener is registered again, so a new registration's versions are taken); a
//! partition table is applied when it is newer or comes from another connection, never when
//! empty. Input from the network never panics here: out-of-range partition ids are skipped.

use ferrogrid_protocol::codec::{MemberInfo, ENDPOINT_CLIENT, ENDPOINT_MEMBER};
use ferrogrid_protocol::{PartitionId, Uuid};

/// One connection, for the life of the client (ids are never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u64);

/// A member as the client dials it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub uuid: Uuid,
    pub host: String,
    pub port: u16,
}

impl Member {
    /// The address clients dial: the addressMap's CLIENT entry, else its MEMBER entry, else the
    /// member's `address` (client-protocol.md §4.1.3). None for a port outside 1..=65535.
    pub fn from_info(info: &MemberInfo<'_>) -> Option<Member> {
        let entry = |kind| info.address_map.iter().find(|(q, _)| q.endpoint_type == kind && q.identifier.is_none());
        let address = match (entry(ENDPOINT_CLIENT), entry(ENDPOINT_MEMBER)) {
            (Some((_, address)), _) | (None, Some((_, address))) => *address,
            (None, None) => info.address,
        };
        let port = u16::try_from(address.port).ok().filter(|port| *port != 0)?;
        Some(Member { uuid: info.uuid, host: address.host.to_owned(), port })
    }
}

/// What an accepted authentication says about the member and the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    pub member_uuid: Uuid,
    pub partition_count: i32,
    pub cluster_id: Option<Uuid>,
    pub server_version: String,
    pub member_list_version: Option<i32>,
    pub members: Vec<Member>,
    pub partition_list_version: Option<i32>,
    pub partitions: Vec<(Uuid, Vec<i32>)>,
}

/// What [`ClusterView::on_authenticated`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Same cluster as before (or the first connection).
    Admitted,
    /// The client had no connection left and this one reaches a cluster with another id: the
    /// view was reset, and server-side state (proxies) must be assumed gone.
    NewCluster,
}

/// The client's view of the cluster. Written under the client's state lock by connection
/// set-up and by the cluster-view event handler (a connection's reader task).
#[derive(Debug, Clone)]
pub struct ClusterView {
    partition_count: Option<u16>,
    cluster_id: Option<Uuid>,
    /// −1 until a list is applied; reset to 0 on listener registration.
    member_list_version: i32,
    members: Vec<Member>,
    partition_table_version: i32,
    partition_table_source: Option<ConnectionId>,
    /// Owner of each partition; empty until a table is applied, then `partition_count` long.
    owners: Vec<Option<Uuid>>,
}

impl Default for ClusterView {
    fn default() -> Self {
        ClusterView {
            partition_count: None,
            cluster_id: None,
            member_list_version: -1,
            members: Vec::new(),
            partition_table_version: -1,
            partition_table_source: None,
            owners: Vec::new(),
        }
    }
}

impl ClusterView {
    pub fn partition_count(&self) -> Option<u16> {
        self.partition_count
    }

    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The owner of `partition`, if a partition table names one.
    pub fn owner(&self, partition: PartitionId) -> Option<Uuid> {
        self.owners.get(partition.0 as usize).copied().flatten()
    }

    /// Checks a newly authenticated connection against the view and applies the member list
    /// and partition table it carries. `connected` tells whether other connections are open.
    /// On an error the view is unchanged and the connection must be closed.
    pub fn on_authenticated(
        &mut self,
        source: ConnectionId,
        auth: &Authenticated,
        connected: bool,
    ) -> Result<Admission, String> {
        let count = u16::try_from(auth.partition_count)
            .ok()
            .filter(|count| *count > 0)
            .ok_or_else(|| format!("partition count {} is out of range", auth.partition_count))?;
        if let Some(known) = self.partition_count.filter(|known| *known != count) {
            return Err(format!("partition count {count} differs from the cluster's {known}"));
        }
        let mut admission = Admission::Admitted;
        if let (Some(known), Some(id)) = (self.cluster_id, auth.cluster_id) {
            if known != id && connected {
                return Err(format!("cluster id {id} differs from the connected cluster's {known}"));
            }
            if known != id {
                *self = ClusterView::default();
                admission = Admission::NewCluster;
            }
        }
        self.partition_count = Some(count);
        self.cluster_id = auth.cluster_id.or(self.cluster_id);
        if !auth.members.is_empty() {
            self.apply_members(auth.member_list_version.unwrap_or(0), auth.members.clone());
        }
        self.apply_partitions(source, auth.partition_list_version.unwrap_or(0), &auth.partitions);
        Ok(admission)
    }

    /// Before (re-)registering the cluster-view listener: accept the new registration's
    /// versions, which may restart at 1.
    pub fn reset_member_list_version(&mut self) {
        self.member_list_version = 0;
    }

    /// Applies a member list if `version` is newer. Returns whether it was applied.
    pub fn apply_members(&mut self, version: i32, members: Vec<Member>) -> bool {
        if version <= self.member_list_version {
            return false;
        }
        self.member_list_version = version;
        self.members = members;
        true
    }

    /// Applies a partition table that is non-empty and newer or from another connection.
    /// Returns whether it was applied.
    pub fn apply_partitions(&mut self, source: ConnectionId, version: i32, table: &[(Uuid, Vec<i32>)]) -> bool {
        let Some(count) = self.partition_count else { return false };
        let newer = version > self.partition_table_version || self.partition_table_source != Some(source);
        if table.iter().all(|(_, partitions)| partitions.is_empty()) || !newer {
            return false;
        }
        let mut owners = vec![None; count as usize];
        for (member, partitions) in table {
            for partition in partitions {
                if let Some(slot) = usize::try_from(*partition).ok().and_then(|index| owners.get_mut(index)) {
                    *slot = Some(*member);
                }
            }
        }
        self.owners = owners;
        self.partition_table_version = version;
        self.partition_table_source = Some(source);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::codec::{Address, EndpointQualifier, MemberVersion};

    fn uuid(value: u128) -> Uuid {
        Uuid::from_u128(value)
    }

    fn member(value: u128, port: u16) -> Member {
        Member { uuid: uuid(value), host: "127.0.0.1".into(), port }
    }

    fn auth(cluster: u128, members: Vec<Member>, partitions: Vec<(Uuid, Vec<i32>)>) -> Authenticated {
        Authenticated {
            member_uuid: members.first().map(|m| m.uuid).unwrap_or_default(),
            partition_count: 4,
            cluster_id: Some(uuid(cluster)),
            server_version: "5.6.0".into(),
            member_list_version: Some(1),
            members,
            partition_list_version: Some(1),
            partitions,
        }
    }

    #[test]
    fn picks_the_client_address_then_the_member_address() {
        let qualifier = |endpoint_type| EndpointQualifier { endpoint_type, identifier: None };
        let mut info = MemberInfo {
            uuid: uuid(1),
            lite_member: false,
            address: Address { host: "10.0.0.1", port: 1 },
            attributes: vec![],
            version: MemberVersion { major: 5, minor: 6, patch: 0 },
            address_map: vec![],
        };
        assert_eq!(Member::from_info(&info).unwrap().host, "10.0.0.1");
        info.address_map.push((qualifier(ENDPOINT_MEMBER), Address { host: "127.0.0.2", port: 5702 }));
        assert_eq!(Member::from_info(&info).unwrap(), member(1, 5702).with_host("127.0.0.2"));
        info.address_map.push((qualifier(ENDPOINT_CLIENT), Address { host: "127.0.0.3", port: 5703 }));
        assert_eq!(Member::from_info(&info).unwrap(), member(1, 5703).with_host("127.0.0.3"));
        info.address_map.clear();
        info.address.port = 70000;
        assert_eq!(Member::from_info(&info), None);
    }

    impl Member {
        fn with_host(mut self, host: &str) -> Member {
            self.host = host.into();
            self
        }
    }

    #[test]
    fn applies_the_auth_view_and_routes_by_owner() {
        let mut view = ClusterView::default();
        let table = vec![(uuid(1), vec![0, 2]), (uuid(2), vec![1, 3, 99, -1])];
        let admission = view.on_authenticated(ConnectionId(1), &auth(7, vec![member(1, 5701)], table), false);
        assert_eq!(admission, Ok(Admission::Admitted));
        assert_eq!(view.partition_count(), Some(4));
        assert_eq!(view.members(), &[member(1, 5701)]);
        assert_eq!(view.owner(PartitionId(2)), Some(uuid(1)));
        assert_eq!(view.owner(PartitionId(3)), Some(uuid(2)));
        assert_eq!(view.owner(PartitionId(4)), None);
    }

    #[test]
    fn member_lists_apply_only_when_newer_until_reset() {
        let mut view = ClusterView::default();
        assert!(view.apply_members(2, vec![member(1, 1)]));
        assert!(!view.apply_members(2, vec![member(2, 2)]));
        assert!(!view.apply_members(1, vec![member(2, 2)]));
        view.reset_member_list_version();
        assert!(view.apply_members(1, vec![member(2, 2)]));
        assert_eq!(view.members(), &[member(2, 2)]);
    }

    #[test]
    fn partition_tables_apply_when_newer_or_from_another_connection_and_not_empty() {
        let mut view = ClusterView::default();
        view.on_authenticated(ConnectionId(1), &auth(7, vec![], vec![]), false).unwrap();
        assert!(view.apply_partitions(ConnectionId(1), 1, &[(uuid(1), vec![0, 1, 2, 3])]));
        assert!(!view.apply_partitions(ConnectionId(1), 1, &[(uuid(2), vec![0, 1, 2, 3])]));
        assert!(view.apply_partitions(ConnectionId(2), 1, &[(uuid(2), vec![0, 1, 2, 3])]));
        assert!(!view.apply_partitions(ConnectionId(3), 9, &[(uuid(3), vec![])]));
        assert_eq!(view.owner(PartitionId(0)), Some(uuid(2)));
    }

    #[test]
    fn a_different_cluster_is_refused_while_connected_and_resets_the_view_otherwise() {
        let mut view = ClusterView::default();
        view.on_authenticated(ConnectionId(1), &auth(7, vec![member(1, 1)], vec![]), false).unwrap();
        let other = auth(8, vec![member(2, 2)], vec![]);
        assert!(view.on_authenticated(ConnectionId(2), &other, true).is_err());
        assert_eq!(view.members(), &[member(1, 1)]);
        assert_eq!(view.on_authenticated(ConnectionId(2), &other, false), Ok(Admission::NewCluster));
        assert_eq!(view.members(), &[member(2, 2)]);
    }

    #[test]
    fn a_changed_partition_count_is_refused() {
        let mut view = ClusterView::default();
        view.on_authenticated(ConnectionId(1), &auth(7, vec![], vec![]), false).unwrap();
        let mut other = auth(7, vec![], vec![]);
        other.partition_count = 5;
        assert!(view.on_authenticated(ConnectionId(2), &other, true).is_err());
        other.partition_count = 0;
        assert!(view.on_authenticated(ConnectionId(2), &other, true).is_err());
    }
}
