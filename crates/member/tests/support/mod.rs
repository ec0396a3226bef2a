//! A minimal blocking client for integration tests: raw sockets and the protocol crate's
//! codecs, so tests can send exactly the bytes they want (including bad ones).

#![allow(dead_code)]

pub mod certs;

use ferrogrid_config::MemberConfig;
use ferrogrid_member::Member;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::frame::{Decoded, StreamDecoder, StreamLimits};
use ferrogrid_protocol::{Data, Message};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Starts a member on a free port of 127.0.0.1 with `configure` applied to the defaults.
pub fn start_member(configure: impl FnOnce(&mut MemberConfig)) -> Member {
    let mut config = MemberConfig::default();
    config.network.port = 15701;
    config.network.port_count = 500;
    config.reactor_threads = 3;
    config.metrics.file = None;
    config.metrics.http_enabled = false;
    config.io.balancer_interval_seconds = -1;
    configure(&mut config);
    Member::start(config).expect("member starts")
}

/// `count` members on free local ports, each knowing all of them, started together (each also
/// `configure`d with its index), once every one sees the others.
#[allow(dead_code, reason = "not every test binary starts a cluster")]
pub fn start_cluster(count: usize, configure: impl Fn(usize, &mut MemberConfig) + Sync) -> Vec<Member> {
    let ports: Vec<u16> =
        (0..count).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    let member_list: Vec<String> = ports.iter().map(|port| format!("127.0.0.1:{port}")).collect();
    let members: Vec<Member> = std::thread::scope(|scope| {
        let starting: Vec<_> = ports
            .iter()
            .enumerate()
            .map(|(index, port)| {
                let (member_list, configure) = (member_list.clone(), &configure);
                scope.spawn(move || {
                    start_member(|config| {
                        config.network.port = *port;
                        config.network.port_count = 1;
                        config.network.member_list = member_list;
                        config.cluster.join_wait_ms = 1_000;
                        configure(index, config);
                    })
                })
            })
            .collect();
        starting.into_iter().map(|handle| handle.join().unwrap()).collect()
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while !members.iter().all(|member| member.cluster_size() == count) {
        assert!(std::time::Instant::now() < deadline, "not {count} members within 15 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    members
}

/// A serialized String, as the clients encode it.
pub fn string_data(text: &str) -> Vec<u8> {
    let mut blob = vec![0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf5];
    blob.extend_from_slice(&(text.len() as i32).to_be_bytes());
    blob.extend_from_slice(text.as_bytes());
    blob
}

pub struct WireClient {
    pub stream: TcpStream,
    /// The client's TLS session, when it speaks TLS: every byte passes through it.
    tls: Option<Box<rustls::ClientConnection>>,
    decoder: StreamDecoder,
    buffer: Vec<u8>,
    next_correlation_id: i64,
}

impl WireClient {
    /// Connects and sends the protocol header, nothing else.
    pub fn connect_raw(address: SocketAddr) -> WireClient {
        let stream = TcpStream::connect(address).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        stream.set_nodelay(true).unwrap();
        let limits =
            StreamLimits { max_frame_bytes: 512 << 20, max_message_bytes: 512 << 20, max_pending_fragmented: 4 };
        WireClient {
            stream,
            tls: None,
            decoder: StreamDecoder::new(limits),
            buffer: Vec::new(),
            next_correlation_id: 1,
        }
    }

    /// Connects speaking TLS with `config` (the handshake happens with the first bytes sent),
    /// and sends nothing.
    pub fn connect_tls_raw(address: SocketAddr, config: std::sync::Arc<rustls::ClientConfig>) -> WireClient {
        let mut client = WireClient::connect_raw(address);
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        client.tls = Some(Box::new(rustls::ClientConnection::new(config, name).unwrap()));
        client
    }

    /// Connects over TLS and authenticates to cluster `dev`; panics unless accepted.
    pub fn connect_tls(address: SocketAddr, config: std::sync::Arc<rustls::ClientConfig>) -> WireClient {
        let mut client = WireClient::connect_tls_raw(address, config);
        client.send_bytes(b"CP2");
        assert_eq!(client.authenticate("dev", None, None), 0, "authentication accepted");
        client
    }

    /// Writes `bytes` (through TLS when the client speaks it).
    pub fn try_send_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match &mut self.tls {
            None => self.stream.write_all(bytes),
            Some(tls) => rustls::Stream::new(tls.as_mut(), &mut self.stream).write_all(bytes),
        }
    }

    fn read_some(&mut self, chunk: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.tls {
            None => self.stream.read(chunk),
            Some(tls) => rustls::Stream::new(tls.as_mut(), &mut self.stream).read(chunk),
        }
    }

    /// Connects and authenticates to cluster `dev`; panics unless accepted.
    pub fn connect(address: SocketAddr) -> WireClient {
        let mut client = WireClient::connect_raw(address);
        client.send_bytes(b"CP2");
        let status = client.authenticate("dev", None, None);
        assert_eq!(status, 0, "authentication accepted");
        client
    }

    pub fn correlation_id(&mut self) -> i64 {
        self.next_correlation_id += 1;
        self.next_correlation_id
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.try_send_bytes(bytes).expect("write");
    }

    /// Sends an authentication request; returns the response status.
    pub fn authenticate(&mut self, cluster_name: &str, username: Option<&str>, password: Option<&str>) -> u8 {
        let response = self.authentication_answer(cluster_name, username, password);
        AuthenticationResponse::decode(&Message::parse(&response).unwrap()).unwrap().status
    }

    /// Sends an authentication request; returns the whole answer (a response or an error).
    pub fn authentication_answer(
        &mut self,
        cluster_name: &str,
        username: Option<&str>,
        password: Option<&str>,
    ) -> Vec<u8> {
        let corr = self.correlation_id();
        let mut out = Vec::new();
        ClientAuthentication {
            uuid: Some(ferrogrid_protocol::Uuid::from_u128(0x1234)),
            serialization_version: 1,
            routing_mode: None,
            cp_direct_to_leader_routing: None,
            cluster_name,
            username,
            password,
            client_type: "RST",
            client_hazelcast_version: "5.6.0",
            client_name: "test",
            labels: vec![],
        }
        .encode(&mut out, corr, -1, 0);
        self.send_bytes(&out);
        let response = self.read_message();
        assert_eq!(Message::parse(&response).unwrap().correlation_id(), corr);
        response
    }

    /// Reads one whole message (blocking, 10 s timeout).
    pub fn read_message(&mut self) -> Vec<u8> {
        self.try_read_message().expect("a message before the connection closed")
    }

    /// One whole message, or None when the member closed the connection.
    pub fn try_read_message(&mut self) -> Option<Vec<u8>> {
        loop {
            match self.decoder.decode(&self.buffer).expect("member sends well-formed frames") {
                Decoded::Message { length } => return Some(self.buffer.drain(..length).collect()),
                Decoded::NeedMore => {}
                other => panic!("member sent fragments: {other:?}"),
            }
            let mut chunk = [0u8; 65536];
            match self.read_some(&mut chunk) {
                Ok(0) => return None,
                Ok(count) => self.buffer.extend_from_slice(&chunk[..count]),
                // Reset, or on TLS the member's alert or a close without close_notify.
                Err(error)
                    if matches!(
                        error.kind(),
                        ErrorKind::ConnectionReset
                            | ErrorKind::BrokenPipe
                            | ErrorKind::InvalidData
                            | ErrorKind::UnexpectedEof
                    ) =>
                {
                    return None
                }
                Err(error) => panic!("read failed: {error}"),
            }
        }
    }

    /// Reads messages until the response to `corr` (skipping events); returns it.
    pub fn response_to(&mut self, corr: i64) -> Vec<u8> {
        loop {
            let bytes = self.read_message();
            let message = Message::parse(&bytes).unwrap();
            if message.correlation_id() == corr && message.initial_flags() & ferrogrid_protocol::frame::IS_EVENT == 0 {
                return bytes;
            }
        }
    }

    pub fn put(&mut self, map: &str, key: &[u8], value: &[u8]) -> Option<Vec<u8>> {
        let corr = self.correlation_id();
        let partition = ferrogrid_protocol::partition_for(Data(key), 271).0 as i32;
        let mut out = Vec::new();
        MapPut { thread_id: 1, ttl: -1, name: map, key: Data(key), value: Data(value) }
            .encode(&mut out, corr, partition, 0);
        self.send_bytes(&out);
        let bytes = self.response_to(corr);
        let message = Message::parse(&bytes).unwrap();
        NullableDataResponse::decode(&message).unwrap().response.map(|data| data.0.to_vec())
    }

    pub fn get(&mut self, map: &str, key: &[u8]) -> Option<Vec<u8>> {
        let corr = self.correlation_id();
        let partition = ferrogrid_protocol::partition_for(Data(key), 271).0 as i32;
        let mut out = Vec::new();
        MapGet { thread_id: 1, name: map, key: Data(key) }.encode(&mut out, corr, partition, 0);
        self.send_bytes(&out);
        let bytes = self.response_to(corr);
        let message = Message::parse(&bytes).unwrap();
        NullableDataResponse::decode(&message).unwrap().response.map(|data| data.0.to_vec())
    }

    pub fn size(&mut self, map: &str) -> i32 {
        let corr = self.correlation_id();
        let mut out = Vec::new();
        MapSize { name: map }.encode(&mut out, corr, -1, 0);
        self.send_bytes(&out);
        let bytes = self.response_to(corr);
        IntResponse::decode(&Message::parse(&bytes).unwrap()).unwrap().response
    }

    pub fn ping(&mut self) {
        let corr = self.correlation_id();
        let mut out = Vec::new();
        ClientPing {}.encode(&mut out, corr, -1, 0);
        self.send_bytes(&out);
        self.response_to(corr);
    }

    /// True once the member has closed this connection (reads EOF within the timeout).
    pub fn is_closed_by_member(&mut self) -> bool {
        while let Some(_message) = self.try_read_message() {}
        true
    }
}
