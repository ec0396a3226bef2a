//! What this member tells clients about the cluster: its identity, the member list and the
//! partition table, as authentication responses and cluster-view events.
//!
//! The member list and partition table change as members join and leave; the cluster service
//! replaces [`ViewState`] and pushes the new views to every connection that registered a
//! cluster-view listener.

use crate::net::connection::ConnectionShared;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::Uuid;
use parking_lot::{Mutex, RwLock};
use std::sync::Arc;

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

/// A member as clients see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewMember {
    pub uuid: Uuid,
    /// Where clients reach it (its client endpoint).
    pub host: String,
    pub port: i32,
    /// Its member endpoint, when that is not where clients reach it (advanced network):
    /// the address map then names both, as Hazelcast's does.
    pub member_endpoint: Option<(String, i32)>,
    /// Holds no partitions (clients leave it out of data routing).
    pub lite: bool,
}

/// The member list and partition owners clients are told, with their versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewState {
    /// The same on every member of a cluster: its founder's uuid.
    pub cluster_id: Uuid,
    /// Oldest first.
    pub members: Vec<ViewMember>,
    pub member_list_version: i32,
    /// Partitions owned by each member.
    pub owners: Vec<(Uuid, Vec<i32>)>,
    pub partition_table_version: i32,
}

/// This member's identity and the current view. Shared by every reactor; the view is replaced
/// (never edited) by the cluster service.
#[derive(Debug)]
pub struct ClusterView {
    pub member_uuid: Uuid,
    pub host: String,
    pub port: i32,
    pub partition_count: u16,
    current: RwLock<Arc<ViewState>>,
    /// Connections that registered a cluster-view listener, with the registration's
    /// correlation id.
    listeners: Mutex<Vec<(Arc<ConnectionShared>, i64)>>,
}

impl ClusterView {
    /// The view of a member alone: it owns every partition (version 0 until it has joined a
    /// cluster).
    pub fn new(member_uuid: Uuid, host: String, port: i32, partition_count: u16) -> ClusterView {
        let me = ViewMember { uuid: member_uuid, host: host.clone(), port, member_endpoint: None, lite: false };
        let state = ViewState {
            cluster_id: member_uuid,
            members: vec![me],
            member_list_version: 0,
            owners: vec![(member_uuid, (0..partition_count as i32).collect())],
            partition_table_version: 0,
        };
        ClusterView {
            member_uuid,
            host,
            port,
            partition_count,
            current: RwLock::new(Arc::new(state)),
            listeners: Mutex::new(Vec::new()),
        }
    }

    pub fn state(&self) -> Arc<ViewState> {
        self.current.read().clone()
    }

    /// Replaces the view and sends it to every registered listener.
    pub fn update(&self, state: ViewState) {
        let state = Arc::new(state);
        *self.current.write() = state.clone();
        let mut listeners = self.listeners.lock();
        listeners.retain(|(connection, _)| !connection.is_closed());
        let mut out = Vec::new();
        for (connection, correlation_id) in listeners.iter() {
            out.clear();
            write_members_and_partitions(&state, &mut out, *correlation_id);
            connection.send(&out);
        }
    }

    /// Registers a cluster-view listener.
    pub fn add_listener(&self, connection: Arc<ConnectionShared>, correlation_id: i64) {
        let mut listeners = self.listeners.lock();
        listeners.retain(|(existing, _)| !existing.is_closed() && existing.id != connection.id);
        listeners.push((connection, correlation_id));
    }

    fn address(&self) -> Address<'_> {
        Address { host: &self.host, port: self.port }
    }

    pub fn write_authenticated(
        &self,
        out: &mut Vec<u8>,
        response_type: ferrogrid_protocol::MessageType,
        correlation_id: i64,
    ) {
        let state = self.state();
        AuthenticationResponse {
            status: AUTHENTICATED,
            member_uuid: Some(self.member_uuid),
            serialization_version: SERIALIZATION_VERSION,
            partition_count: self.partition_count as i32,
            cluster_id: Some(state.cluster_id),
            failover_supported: false,
            member_list_version: Some(state.member_list_version),
            partition_list_version: Some(state.partition_table_version),
            address: Some(self.address()),
            server_hazelcast_version: SERVER_VERSION,
            tpc_ports: None,
            tpc_token: None,
            member_infos: member_infos(&state),
            partitions: PartitionTable(state.owners.clone()),
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
        let state = self.state();
        write_members_and_partitions(&state, out, correlation_id);
        MemberGroupsViewEvent { version: state.member_list_version, member_groups: Vec::new() }.encode(
            out,
            correlation_id,
            -1,
        );
        ClusterVersionEvent { version: CLUSTER_VERSION }.encode(out, correlation_id, -1);
    }
}

fn write_members_and_partitions(state: &ViewState, out: &mut Vec<u8>, correlation_id: i64) {
    MembersViewEvent { version: state.member_list_version, member_infos: member_infos(state) }.encode(
        out,
        correlation_id,
        -1,
    );
    let partitions = PartitionTable(state.owners.clone());
    PartitionsViewEvent { version: state.partition_table_version, partitions }.encode(out, correlation_id, -1);
}

fn member_infos(state: &ViewState) -> Vec<MemberInfo<'_>> {
    state
        .members
        .iter()
        .map(|member| {
            let client = Address { host: &member.host, port: member.port };
            let qualifier = |endpoint_type| EndpointQualifier { endpoint_type, identifier: None };
            // As Hazelcast's members view for clients: `address` is the endpoint clients reach the
            // member at (its client endpoint with advanced network: the Go client connects to
            // `address` and never reads the map), and the map names every endpoint.
            let address_map = match &member.member_endpoint {
                None => vec![(qualifier(ENDPOINT_MEMBER), client)],
                Some((host, port)) => {
                    let member_address = Address { host, port: *port };
                    vec![(qualifier(ENDPOINT_MEMBER), member_address), (qualifier(ENDPOINT_CLIENT), client)]
                }
            };
            let address = client;
            MemberInfo {
                uuid: member.uuid,
                lite_member: member.lite,
                address,
                attributes: Vec::new(),
                version: MEMBER_VERSION,
                address_map,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::Message;

    fn view() -> ClusterView {
        let uuid = Uuid::from_u128(0xea6507c8_8459_4de7_bf64_34cd7b5338ce);
        let view = ClusterView::new(uuid, "127.0.0.1".into(), 5701, 271);
        let mut state = (*view.state()).clone();
        state.member_list_version = 1;
        state.partition_table_version = 1;
        view.update(state);
        view
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
        MembersViewEvent { version: 1, member_infos: member_infos(&view().state()) }.encode(&mut out, 2, -1);
        // session-python.json #4 (221 bytes).
        assert_eq!(out.len(), 221);
        let captured = "1a00000000c2020300000200000000000000ffffffff0100000006000000001006000000001018000000000000e74d5984c80765eace38537bcd3464bf000600000000100a0000000000451600000f00000000003132372e302e302e310600000000080600000000100600000000080600000000100900000000000506000600000000080600000000100600000000100a0000000000000000000600000000040600000000080600000000100a0000000000451600000f00000000003132372e302e302e31060000000008060000000008060000000008060000000028";
        assert_eq!(ferrogrid_hex(&out), captured);
    }

    #[test]
    fn lite_members_and_client_endpoints_are_in_the_members_view() {
        let view = view();
        let mut state = (*view.state()).clone();
        let uuid = Uuid::from_u128(7);
        let member_endpoint = Some(("10.0.0.7".to_owned(), 5701));
        state.members.push(ViewMember { uuid, host: "203.0.113.7".into(), port: 9000, member_endpoint, lite: true });
        let mut out = Vec::new();
        MembersViewEvent { version: 2, member_infos: member_infos(&state) }.encode(&mut out, 2, -1);
        let message = Message::parse(&out).unwrap();
        let decoded = MembersViewEvent::decode(&message).unwrap();
        let (data, lite) = (&decoded.member_infos[0], &decoded.member_infos[1]);
        assert!(!data.lite_member && lite.lite_member);
        assert_eq!(data.address_map.len(), 1, "one endpoint: MEMBER only, as Hazelcast's");
        // Hazelcast's shape: `address` is the client endpoint, the map names both.
        assert_eq!(lite.address, Address { host: "203.0.113.7", port: 9000 });
        let endpoint = |kind| {
            let found = lite.address_map.iter().find(|(qualifier, _)| qualifier.endpoint_type == kind);
            found.map(|(_, address)| (address.host.to_owned(), address.port))
        };
        assert_eq!(endpoint(ENDPOINT_MEMBER), Some(("10.0.0.7".to_owned(), 5701)));
        assert_eq!(endpoint(ENDPOINT_CLIENT), Some(("203.0.113.7".to_owned(), 9000)));
    }

    fn ferrogrid_hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
