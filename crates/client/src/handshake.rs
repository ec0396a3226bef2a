//! Opening a connection: TCP connect, the `CP2` header and `Client.Authentication` in one
//! write, then the authentication response (client-protocol.md §1, §4.1.1).
//!
//! Runs on the task that opens the connection, before any reader or writer task exists, so
//! the socket has one owner throughout. Bytes read past the response are kept in the
//! returned [`Input`] for the reader task.

use std::net::SocketAddr;

use ferrogrid_protocol::codec::{AuthenticationResponse, ClientAuthentication};
use ferrogrid_protocol::error::{read_error_response, ERROR_RESPONSE};
use ferrogrid_protocol::frame::{Decoded, CLIENT_PROTOCOL_HEADER};
use ferrogrid_protocol::{Message, Uuid};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::cluster::{Authenticated, Member};
use crate::connection::Input;
use crate::error::{AuthenticationStatus, ClientError};

/// The client type this client announces (the official ones send "JVM", "PYH", "NJS", …).
pub const CLIENT_TYPE: &str = "RST";
/// The protocol level this client speaks, as a product version.
pub const CLIENT_VERSION: &str = "5.6.0";
const SERIALIZATION_VERSION: i8 = 1;
/// Routing mode byte of protocol 2.8 (sent as the Java client does).
const ROUTING_SINGLE_MEMBER: i8 = 0;
const ROUTING_ALL_MEMBERS: i8 = 1;

/// Who the client says it is.
#[derive(Debug, Clone)]
pub(crate) struct Identity<'a> {
    pub client_uuid: Uuid,
    pub client_name: &'a str,
    pub cluster_name: &'a str,
    pub username: Option<&'a str>,
    pub password: Option<&'a str>,
    pub smart_routing: bool,
}

/// An authenticated socket, not yet split between tasks.
#[derive(Debug)]
pub(crate) struct Handshake {
    pub stream: TcpStream,
    pub input: Input,
    pub authenticated: Authenticated,
}

/// Connects to `address` and authenticates. The caller bounds the time taken.
pub(crate) async fn open(
    address: SocketAddr,
    identity: &Identity<'_>,
    correlation_id: i64,
) -> Result<Handshake, ClientError> {
    let io_error = |source| ClientError::Io { address, source };
    let mut stream = TcpStream::connect(address).await.map_err(io_error)?;
    stream.set_nodelay(true).map_err(io_error)?;
    let mut first_write = CLIENT_PROTOCOL_HEADER.to_vec();
    encode_authentication(&mut first_write, identity, correlation_id);
    stream.write_all(&first_write).await.map_err(io_error)?;
    let mut input = Input::new();
    let response = loop {
        match input.decoder.decode(&input.buffer[input.start..])? {
            Decoded::Message { length } => {
                let response = input.buffer[input.start..input.start + length].to_vec();
                input.start += length;
                break response;
            }
            Decoded::Reassembled { consumed, message } => {
                input.start += consumed;
                break message;
            }
            Decoded::Absorbed { consumed } => input.start += consumed,
            Decoded::NeedMore => {
                input.reserve();
                if stream.read_buf(&mut input.buffer).await.map_err(io_error)? == 0 {
                    let eof = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed during authentication");
                    return Err(io_error(eof));
                }
            }
        }
    };
    let authenticated = decode_authentication(address, identity.cluster_name, correlation_id, &response)?;
    Ok(Handshake { stream, input, authenticated })
}

fn encode_authentication(out: &mut Vec<u8>, identity: &Identity<'_>, correlation_id: i64) {
    let routing_mode = if identity.smart_routing { ROUTING_ALL_MEMBERS } else { ROUTING_SINGLE_MEMBER };
    ClientAuthentication {
        uuid: Some(identity.client_uuid),
        serialization_version: SERIALIZATION_VERSION,
        routing_mode: Some(routing_mode),
        cp_direct_to_leader_routing: Some(false),
        cluster_name: identity.cluster_name,
        username: identity.username,
        password: identity.password,
        client_type: CLIENT_TYPE,
        client_hazelcast_version: CLIENT_VERSION,
        client_name: identity.client_name,
        labels: Vec::new(),
    }
    .encode(out, correlation_id, -1, 0);
}

/// Reads the authentication response: what the member says, or why it refused.
fn decode_authentication(
    address: SocketAddr,
    cluster_name: &str,
    correlation_id: i64,
    bytes: &[u8],
) -> Result<Authenticated, ClientError> {
    let message = Message::parse(bytes)?;
    let incompatible = |reason: String| ClientError::Incompatible { address, reason };
    if message.correlation_id() != correlation_id {
        return Err(incompatible(format!("first response has correlation id {}", message.correlation_id())));
    }
    if message.message_type() == ERROR_RESPONSE {
        let first = read_error_response(&message)?.into_iter().next();
        let (code, class_name, message) = first.map(|e| (e.code, e.class_name, e.message)).unwrap_or_default();
        return Err(ClientError::Server { code, class_name, message });
    }
    if message.message_type() != ClientAuthentication::RESPONSE {
        let actual = message.message_type();
        return Err(ClientError::UnexpectedResponse { expected: ClientAuthentication::RESPONSE, actual });
    }
    let response = AuthenticationResponse::decode(&message)?;
    if response.status != 0 {
        let status = AuthenticationStatus::from_status(response.status);
        return Err(ClientError::Authentication { address, cluster_name: cluster_name.to_owned(), status });
    }
    let member_uuid = response.member_uuid.ok_or_else(|| incompatible("no member uuid".to_owned()))?;
    Ok(Authenticated {
        member_uuid,
        partition_count: response.partition_count,
        cluster_id: response.cluster_id,
        server_version: response.server_hazelcast_version.to_owned(),
        member_list_version: response.member_list_version,
        members: response.member_infos.iter().filter_map(Member::from_info).collect(),
        partition_list_version: response.partition_list_version,
        partitions: response.partitions.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::codec::{Address, PartitionTable};

    const ADDRESS: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 5701);

    fn response(status: u8, correlation_id: i64) -> Vec<u8> {
        let mut out = Vec::new();
        AuthenticationResponse {
            status,
            member_uuid: Some(Uuid::from_u128(9)),
            serialization_version: 1,
            partition_count: 271,
            cluster_id: Some(Uuid::from_u128(10)),
            failover_supported: false,
            member_list_version: None,
            partition_list_version: None,
            address: Some(Address { host: "127.0.0.1", port: 5701 }),
            server_hazelcast_version: "5.6.0",
            tpc_ports: None,
            tpc_token: None,
            member_infos: vec![],
            partitions: PartitionTable(vec![(Uuid::from_u128(9), vec![0, 1])]),
            key_value_pairs: vec![],
        }
        .encode(&mut out, ClientAuthentication::RESPONSE, correlation_id, 0);
        out
    }

    #[test]
    fn accepts_status_zero() {
        let authenticated = decode_authentication(ADDRESS, "dev", 5, &response(0, 5)).unwrap();
        assert_eq!(authenticated.member_uuid, Uuid::from_u128(9));
        assert_eq!(authenticated.partition_count, 271);
        assert_eq!(authenticated.partitions, vec![(Uuid::from_u128(9), vec![0, 1])]);
    }

    #[test]
    fn reports_a_refusal_with_its_reason() {
        let error = decode_authentication(ADDRESS, "wrong", 5, &response(1, 5)).unwrap_err();
        assert!(matches!(
            error,
            ClientError::Authentication { status: AuthenticationStatus::CredentialsFailed, ref cluster_name, .. }
                if cluster_name == "wrong"
        ));
        assert!(error.to_string().contains("wrong cluster name"), "{error}");
    }

    #[test]
    fn rejects_a_response_to_another_request() {
        assert!(matches!(
            decode_authentication(ADDRESS, "dev", 6, &response(0, 5)),
            Err(ClientError::Incompatible { .. })
        ));
    }
}
