//! What this member tells clients about the cluster: its identity, the member list and the
//! partition table, as authentication responses and cluster-view events.
//!
//! One member for now: the member list and partition table have version 1 and never change.
//! The cluster issue replaces [`ClusterView`] with the replicated, versioned view.

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::Uuid;

/// The product version reported to clients (the protocol level ferrogrid implements).
pub const SERVER_VERSION: &str = "5.6.0";
const MEMBER_VERSION: MemberVersion = MemberVersion { major: 5, minor: 6, patch: 0 };
const CLUSTER_VERSION: ClusterVersion = ClusterVersion { major: 5, minor: 6 };

/// Authentication status codes.
pub const AUTHENTICATED: u8 = 0;
pub const CREDENTIALS_FAILED: u8 = 1;
pub const SERIALIZATION_VERSION_MISMATCH: u8 = 2;

/// The serialization version every official client uses.
pub const SERIALIZATION_VERSION: i8 = 1;

/// This member's identity and the (single-member) view it reports. Immutable once built;
/// shared read-only by every reactor.
#[derive(Debug, Clone)]
pub struct ClusterView {
    pub member_uuid: Uuid,
    /// New on every start, so reconnecting clients know state did not survive.
    pub cluster_id: Uuid,
    pub host: String,
    pub port: i32,
    pub partition_count: u16,
    pub member_list_version: i32,
    pub partition_table_version: i32,
}

impl ClusterView {
    fn address(&self) -> Address<'_> {
        Address { host: &self.host, port: self.port }
    }

    fn members(&self) -> Vec<MemberInfo<'_>> {
        let address = self.address();
        vec![MemberInfo {
            uuid: self.member_uuid,
            lite_member: false,
            address,
            attributes: Vec::new(),
            version: MEMBER_VERSION,
            address_map: vec![(EndpointQualifier { endpoint_type: ENDPOINT_MEMBER, identifier: None }, address)],
        }]
    }

    fn partition_table(&self) -> PartitionTable {
        PartitionTable(vec![(self.member_uuid, (0..self.partition_count as i32).collect())])
    }

    pub fn write_authenticated(
        &self,
        out: &mut Vec<u8>,
        response_type: ferrogrid_protocol::MessageType,
        correlation_id: i64,
    ) {
        AuthenticationResponse {
            status: AUTHENTICATED,
            member_uuid: Some(self.member_uuid),
            serialization_version: SERIALIZATION_VERSION,
            partition_count: self.partition_count as i32,
            cluster_id: Some(self.cluster_id),
            failover_supported: false,
            member_list_version: Some(self.member_list_version),
            partition_list_version: Some(self.partition_table_version),
            address: Some(self.address()),
            server_hazelcast_version: SERVER_VERSION,
            tpc_ports: None,
            tpc_token: None,
            member_infos: self.members(),
            partitions: self.partition_table(),
            key_value_pairs: vec![("clusterVersion", "5.6")],
        }
        .encode(out, response_type, correlation_id, 0);
    }

    /// The member's answer to a failed authentication: "null" fields, connection kept open.
    pub fn write_refused(
        out: &mut Vec<u8>,
        response_type: ferrogrid_protocol::MessageType,
        correlation_id: i64,
        status: u8,
    ) {
        AuthenticationResponse {
            status,
            member_uuid: None,
            serialization_version: -1,
            partition_count: -1,
            cluster_id: None,
            failover_supported: false,
            member_list_version: Some(-1),
            partition_list_version: Some(-1),
            address: None,
            server_hazelcast_version: "",
            tpc_ports: None,
            tpc_token: None,
            member_infos: Vec::new(),
            partitions: PartitionTable::default(),
            key_value_pairs: Vec::new(),
        }
        .encode(out, response_type, correlation_id, 0);
    }

    /// The four cluster-view events sent on registration, before its response.
    pub fn write_view_events(&self, out: &mut Vec<u8>, correlation_id: i64) {
        MembersViewEvent { version: self.member_list_version, member_infos: self.members() }.encode(
            out,
            correlation_id,
            -1,
        );
        PartitionsViewEvent { version: self.partition_table_version, partitions: self.partition_table() }.encode(
            out,
            correlation_id,
            -1,
        );
        MemberGroupsViewEvent { version: self.member_list_version, member_groups: Vec::new() }.encode(
            out,
            correlation_id,
            -1,
        );
        ClusterVersionEvent { version: CLUSTER_VERSION }.encode(out, correlation_id, -1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::Message;

    fn view() -> ClusterView {
        ClusterView {
            member_uuid: Uuid::from_u128(0xea6507c8_8459_4de7_bf64_34cd7b5338ce),
            cluster_id: Uuid::from_u128(0xfc34c11d_97b7_4ead_b166_814e7b05bb5f),
            host: "127.0.0.1".into(),
            port: 5701,
            partition_count: 271,
            member_list_version: 1,
            partition_table_version: 1,
        }
    }

    #[test]
    fn authentication_response_matches_the_real_member_byte_for_byte() {
        // session-python.json #2: the 5.6.0 member's answer, with tpcPorts [] where we send NULL.
        let mut out = Vec::new();
        view().write_authenticated(&mut out, ClientAuthentication::RESPONSE, 1);
        let message = Message::parse(&out).unwrap();
        let decoded = AuthenticationResponse::decode(&message).unwrap();
        assert_eq!(decoded.status, AUTHENTICATED);
        assert_eq!(decoded.member_uuid, Some(view().member_uuid));
        assert_eq!(decoded.partition_count, 271);
        assert_eq!(decoded.member_infos[0].uuid, view().member_uuid, "auth uuid must equal the members-view uuid");
        assert_eq!(decoded.partitions.0[0].1.len(), 271);
        assert_eq!(decoded.address, Some(Address { host: "127.0.0.1", port: 5701 }));
    }

    #[test]
    fn members_view_matches_the_capture() {
        let mut out = Vec::new();
        MembersViewEvent { version: 1, member_infos: view().members() }.encode(&mut out, 2, -1);
        // session-python.json #4 (221 bytes).
        assert_eq!(out.len(), 221);
        let captured = "1a00000000c2020300000200000000000000ffffffff0100000006000000001006000000001018000000000000e74d5984c80765eace38537bcd3464bf000600000000100a0000000000451600000f00000000003132372e302e302e310600000000080600000000100600000000080600000000100900000000000506000600000000080600000000100600000000100a0000000000000000000600000000040600000000080600000000100a0000000000451600000f00000000003132372e302e302e31060000000008060000000008060000000008060000000028";
        assert_eq!(ferrogrid_hex(&out), captured);
    }

    fn ferrogrid_hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
