//! A scripted member on 127.0.0.1 for failure cases a real member does not produce on demand:
//! injected error codes, connections dropped on receiving a request, requests or pings never
//! answered. It answers authentication, the cluster-view listener (one member owning every
//! partition), CreateProxy and Ping like a real member; map requests are recorded, then
//! handled as [`Script`] says (by default: a null or empty response). Topic requests are
//! recorded and served like a member serves them to one connection: a published message goes,
//! as an event, to every listener registered on the connection it came in on.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{write_error_response, ErrorCode, ErrorHolder};
use ferrogrid_protocol::frame::Decoded;
use ferrogrid_protocol::{Data, Message, MessageType, StreamDecoder, Uuid};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub const MEMBER_UUID: Uuid = Uuid { most: 0x1111, least: 0x2222 };
const CLUSTER_ID: Uuid = Uuid { most: 0x3333, least: 0x4444 };
const PARTITION_COUNT: i32 = 271;
/// The publish time the fake stamps on every topic event.
pub const PUBLISH_TIME_MS: i64 = 1_700_000_000_000;

/// What the fake does with the next map requests.
#[derive(Debug, Default)]
pub struct Script {
    /// Error codes to answer the next map requests with, one each, in order.
    pub errors: VecDeque<i32>,
    /// Map requests on receiving which the connection is closed instead of answered.
    pub close_on_next: usize,
    /// Never answer map requests.
    pub silent: bool,
    /// Never answer pings.
    pub ignore_pings: bool,
}

/// One map request as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    pub message_type: MessageType,
    pub correlation_id: i64,
    pub partition_id: i32,
}

#[derive(Debug, Default)]
struct Shared {
    script: Mutex<Script>,
    received: Mutex<Vec<Received>>,
    connections: AtomicUsize,
}

pub struct FakeMember {
    pub address: SocketAddr,
    shared: Arc<Shared>,
    acceptor: JoinHandle<()>,
}

impl FakeMember {
    pub async fn start() -> FakeMember {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the fake member");
        let address = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        let acceptor = tokio::spawn(accept(listener, address, shared.clone()));
        FakeMember { address, shared, acceptor }
    }

    pub fn script(&self, change: impl FnOnce(&mut Script)) {
        change(&mut self.shared.script.lock());
    }

    /// Map requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().clone()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::Relaxed)
    }
}

impl Drop for FakeMember {
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

async fn accept(listener: TcpListener, address: SocketAddr, shared: Arc<Shared>) {
    while let Ok((stream, _)) = listener.accept().await {
        shared.connections.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(serve(stream, address, shared.clone()));
    }
}

/// Serves one connection until the client closes it or the script closes it.
async fn serve(mut stream: TcpStream, address: SocketAddr, shared: Arc<Shared>) {
    let mut header = [0u8; 3];
    if stream.read_exact(&mut header).await.is_err() || &header != b"CP2" {
        return;
    }
    let (mut buffer, mut decoder) = (Vec::new(), StreamDecoder::default());
    let mut listeners = Vec::new();
    loop {
        while let Decoded::Message { length } = decoder.decode(&buffer).expect("the client sends well-formed frames") {
            let request: Vec<u8> = buffer.drain(..length).collect();
            let request = Message::parse(&request).unwrap();
            if let Some(out) = topic_answer(&request, &mut listeners, &shared) {
                if stream.write_all(&out).await.is_err() {
                    return;
                }
                continue;
            }
            let Some(out) = answer(&request, address, &shared) else { return };
            if stream.write_all(&out).await.is_err() {
                return;
            }
        }
        let mut chunk = [0u8; 65536];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(count) => buffer.extend_from_slice(&chunk[..count]),
        }
    }
}

/// The bytes to send back (possibly none); None to close the connection.
fn answer(request: &Message<'_>, address: SocketAddr, shared: &Shared) -> Option<Vec<u8>> {
    let (message_type, correlation_id) = (request.message_type(), request.correlation_id());
    let mut out = Vec::new();
    if message_type == ClientAuthentication::TYPE {
        authenticated(&mut out, correlation_id, address);
    } else if message_type == ClientAddClusterViewListener::TYPE {
        view(&mut out, correlation_id, address);
        EmptyResponse {}.encode(&mut out, message_type.response(), correlation_id, 0);
    } else if message_type == ClientPing::TYPE {
        if !shared.script.lock().ignore_pings {
            EmptyResponse {}.encode(&mut out, message_type.response(), correlation_id, 0);
        }
    } else if message_type == ClientCreateProxy::TYPE {
        EmptyResponse {}.encode(&mut out, message_type.response(), correlation_id, 0);
    } else {
        let partition_id = request.partition_id();
        shared.received.lock().push(Received { message_type, correlation_id, partition_id });
        return map_answer(&mut out, message_type, correlation_id, shared).then_some(out);
    }
    Some(out)
}

/// A topic listener registered on one connection: its registration's correlation id and id.
struct TopicListener {
    correlation_id: i64,
    registration_id: Uuid,
}

/// Records and answers a topic request; None for any other request.
fn topic_answer(request: &Message<'_>, listeners: &mut Vec<TopicListener>, shared: &Shared) -> Option<Vec<u8>> {
    let (message_type, correlation_id) = (request.message_type(), request.correlation_id());
    let topic_types =
        [TopicPublish::TYPE, TopicAddMessageListener::TYPE, TopicRemoveMessageListener::TYPE, TopicPublishAll::TYPE];
    if !topic_types.contains(&message_type) {
        return None;
    }
    let partition_id = request.partition_id();
    shared.received.lock().push(Received { message_type, correlation_id, partition_id });
    let mut out = Vec::new();
    let response = message_type.response();
    let publish = |out: &mut Vec<u8>, item: Data<'_>| {
        for listener in listeners.iter() {
            let event = TopicEvent { publish_time: PUBLISH_TIME_MS, uuid: Some(MEMBER_UUID), item };
            event.encode(out, listener.correlation_id, -1);
        }
    };
    if message_type == TopicPublish::TYPE {
        publish(&mut out, TopicPublish::decode(request).unwrap().message);
        EmptyResponse {}.encode(&mut out, response, correlation_id, 0);
    } else if message_type == TopicPublishAll::TYPE {
        for item in TopicPublishAll::decode(request).unwrap().messages {
            publish(&mut out, item);
        }
        EmptyResponse {}.encode(&mut out, response, correlation_id, 0);
    } else if message_type == TopicAddMessageListener::TYPE {
        let registration_id = Uuid { most: 0x5555, least: listeners.len() as u64 + 1 };
        listeners.push(TopicListener { correlation_id, registration_id });
        UuidResponse { response: Some(registration_id) }.encode(&mut out, response, correlation_id, 0);
    } else {
        let removed = TopicRemoveMessageListener::decode(request).unwrap().registration_id;
        let before = listeners.len();
        listeners.retain(|listener| Some(listener.registration_id) != removed);
        BoolResponse { response: listeners.len() < before }.encode(&mut out, response, correlation_id, 0);
    }
    Some(out)
}

/// Answers a map request as scripted; false to close the connection instead.
fn map_answer(out: &mut Vec<u8>, message_type: MessageType, correlation_id: i64, shared: &Shared) -> bool {
    let mut script = shared.script.lock();
    if script.close_on_next > 0 {
        script.close_on_next -= 1;
        return false;
    }
    if let Some(code) = script.errors.pop_front() {
        let holder = ErrorHolder {
            code: ErrorCode { code, class_name: "com.example.InjectedException" },
            message: Some("injected"),
        };
        write_error_response(out, correlation_id, &[holder]);
    } else if !script.silent {
        let response = message_type.response();
        if [MapGet::TYPE, MapPut::TYPE, MapRemove::TYPE].contains(&message_type) {
            NullableDataResponse { response: None }.encode(out, response, correlation_id, 0);
        } else {
            EmptyResponse {}.encode(out, response, correlation_id, 0);
        }
    }
    true
}

fn member_info(host: &str, port: u16) -> MemberInfo<'_> {
    let address = Address { host, port: i32::from(port) };
    MemberInfo {
        uuid: MEMBER_UUID,
        lite_member: false,
        address,
        attributes: Vec::new(),
        version: MemberVersion { major: 5, minor: 6, patch: 0 },
        address_map: vec![(EndpointQualifier { endpoint_type: ENDPOINT_MEMBER, identifier: None }, address)],
    }
}

fn partitions() -> PartitionTable {
    PartitionTable(vec![(MEMBER_UUID, (0..PARTITION_COUNT).collect())])
}

fn authenticated(out: &mut Vec<u8>, correlation_id: i64, address: SocketAddr) {
    let host = address.ip().to_string();
    let info = member_info(&host, address.port());
    AuthenticationResponse {
        status: 0,
        member_uuid: Some(MEMBER_UUID),
        serialization_version: 1,
        partition_count: PARTITION_COUNT,
        cluster_id: Some(CLUSTER_ID),
        failover_supported: false,
        member_list_version: Some(1),
        partition_list_version: Some(1),
        address: Some(info.address),
        server_hazelcast_version: "5.6.0",
        tpc_ports: None,
        tpc_token: None,
        member_infos: vec![info],
        partitions: partitions(),
        key_value_pairs: Vec::new(),
    }
    .encode(out, ClientAuthentication::RESPONSE, correlation_id, 0);
}

fn view(out: &mut Vec<u8>, correlation_id: i64, address: SocketAddr) {
    let host = address.ip().to_string();
    let members = vec![member_info(&host, address.port())];
    MembersViewEvent { version: 1, member_infos: members }.encode(out, correlation_id, -1);
    PartitionsViewEvent { version: 1, partitions: partitions() }.encode(out, correlation_id, -1);
}
