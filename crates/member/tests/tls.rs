//! TLS on the member's port (`hazelcast.network.ssl`): the material is checked at start, each
//! mistake failing it with the file's path; clients speak the protocol through rustls, mutual
//! authentication refuses a client without a trusted certificate, and a client that does not
//! speak TLS (plain text, garbage, a cut handshake, 300 fuzzed first flights) loses its connection
//! and nobody else's.

mod support;

use ferrogrid_config::{KeySource, MemberConfig, MutualAuthentication, TlsConfig, TrustSource};
use ferrogrid_member::{Member, StartError};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use rustls::ClientConfig;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;
use support::certs::{make_pki, TestPki, KEY_STORE_PASSWORD, TRUST_STORE_PASSWORD};
use support::{start_member, WireClient};

fn pkcs12_tls(pki: &TestPki) -> TlsConfig {
    TlsConfig {
        enabled: true,
        key: Some(KeySource::KeyStore { path: pki.member_p12.clone(), password: KEY_STORE_PASSWORD.into() }),
        trust: Some(TrustSource::TrustStore { path: pki.trust_p12.clone(), password: TRUST_STORE_PASSWORD.into() }),
        ..TlsConfig::default()
    }
}

fn pem_tls(pki: &TestPki) -> TlsConfig {
    TlsConfig {
        enabled: true,
        key: Some(KeySource::Pem {
            key_file: pki.member_key_pem.clone(),
            cert_chain_file: pki.member_chain_pem.clone(),
        }),
        trust: Some(TrustSource::Pem { path: pki.ca_pem.clone() }),
        ..TlsConfig::default()
    }
}

/// The start error for `tls`, as the operator reads it.
fn start_error(tls: TlsConfig) -> String {
    let mut config = MemberConfig::default();
    config.network.port = 15601;
    config.network.port_count = 50;
    config.metrics.file = None;
    config.metrics.http_enabled = false;
    config.network.tls = tls;
    match Member::start(config) {
        Err(error @ StartError::Tls(_)) => error.to_string(),
        Err(other) => panic!("expected a TLS start error, got {other}"),
        Ok(member) => {
            member.shutdown();
            panic!("the member started")
        }
    }
}

#[test]
fn bad_tls_material_fails_the_start_naming_the_file() {
    let pki = make_pki("bad-material");
    let path = |path: &std::path::PathBuf| path.display().to_string();
    let missing = pki.dir.join("nope.p12");
    let mut tls = pkcs12_tls(&pki);
    tls.key = Some(KeySource::KeyStore { path: missing.clone(), password: KEY_STORE_PASSWORD.into() });
    let error = start_error(tls);
    assert!(error.contains(&path(&missing)) && error.contains("cannot open"), "{error}");
    let mut tls = pkcs12_tls(&pki);
    tls.key = Some(KeySource::KeyStore { path: pki.member_p12.clone(), password: "wrong".into() });
    let error = start_error(tls);
    assert!(error.contains(&path(&pki.member_p12)) && error.contains("wrong store password"), "{error}");
    let mut tls = pkcs12_tls(&pki);
    tls.key = Some(KeySource::KeyStore { path: pki.jks.clone(), password: KEY_STORE_PASSWORD.into() });
    let error = start_error(tls);
    assert!(error.contains(&path(&pki.jks)) && error.contains("PKCS12"), "{error}");
    let mut tls = pem_tls(&pki);
    tls.key =
        Some(KeySource::Pem { key_file: pki.expired_key_pem.clone(), cert_chain_file: pki.expired_chain_pem.clone() });
    let error = start_error(tls);
    assert!(error.contains("expired"), "{error}");
    let mut tls = pem_tls(&pki);
    tls.key =
        Some(KeySource::Pem { key_file: pki.other_key_pem.clone(), cert_chain_file: pki.member_chain_pem.clone() });
    let error = start_error(tls);
    assert!(error.contains(&path(&pki.other_key_pem)) && error.contains("does not match"), "{error}");
    let mut tls = pem_tls(&pki);
    tls.mutual_authentication = MutualAuthentication::Required;
    tls.trust = Some(TrustSource::TrustStore { path: pki.trust_p12.clone(), password: "wrong".into() });
    let error = start_error(tls);
    assert!(error.contains(&path(&pki.trust_p12)) && error.contains("wrong store password"), "{error}");
    let mut tls = pem_tls(&pki);
    tls.cipher_suites = vec!["TLS_RSA_WITH_RC4_128_MD5".into()];
    let error = start_error(tls);
    assert!(error.contains("unknown cipher suite"), "{error}");
    let _ = std::fs::remove_dir_all(&pki.dir);
}

#[test]
fn good_tls_material_is_accepted() {
    let pki = make_pki("good-material");
    for mut tls in [pkcs12_tls(&pki), pem_tls(&pki)] {
        tls.mutual_authentication = MutualAuthentication::Required;
        tls.cipher_suites = vec!["TLS_AES_128_GCM_SHA256".into(), "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256".into()];
        let member = start_member(|config| config.network.tls = tls);
        let mut client = WireClient::connect_tls(member.address(), client_config(&pki, true, None));
        client.ping();
        member.shutdown();
    }
    let _ = std::fs::remove_dir_all(&pki.dir);
}

/// A rustls client trusting the test CA, presenting the client certificate if `with_cert`,
/// speaking only `version` if given.
fn client_config(
    pki: &TestPki,
    with_cert: bool,
    version: Option<&'static rustls::SupportedProtocolVersion>,
) -> Arc<ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_der.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions = version.map_or(rustls::DEFAULT_VERSIONS.to_vec(), |version| vec![version]);
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .unwrap()
        .with_root_certificates(roots);
    let config = match with_cert {
        true => builder.with_client_auth_cert(pki.client_chain.clone(), pki.client_key()).unwrap(),
        false => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

/// Whether a TLS client with `config` gets through authentication.
fn authenticates(address: std::net::SocketAddr, config: Arc<ClientConfig>) -> bool {
    let mut client = WireClient::connect_tls_raw(address, config);
    if client.try_send_bytes(b"CP2").is_err() {
        return false;
    }
    let mut request = Vec::new();
    let authentication = ferrogrid_protocol::codec::ClientAuthentication {
        uuid: None,
        serialization_version: 1,
        routing_mode: None,
        cp_direct_to_leader_routing: None,
        cluster_name: "dev",
        username: None,
        password: None,
        client_type: "RST",
        client_hazelcast_version: "5.6.0",
        client_name: "tls-test",
        labels: vec![],
    };
    authentication.encode(&mut request, 2, -1, 0);
    client.try_send_bytes(&request).is_ok() && client.try_read_message().is_some()
}

#[test]
fn tls_client_reads_and_writes_large_values() {
    let pki = make_pki("large-values");
    let member = start_member(|config| config.network.tls = pkcs12_tls(&pki));
    let mut client = WireClient::connect_tls(member.address(), client_config(&pki, false, None));
    let key = support::string_data("k");
    // Larger than rustls' buffer limit and the socket buffers: written in many turns.
    let text: String = (0..3 << 20).map(|index| char::from(b'a' + (index % 26) as u8)).collect();
    let value = support::string_data(&text);
    assert_eq!(client.put("tls-map", &key, &value), None);
    assert_eq!(client.get("tls-map", &key), Some(value.clone()));
    for round in 0..200u32 {
        let key = support::string_data(&format!("key-{round}"));
        client.put("tls-map", &key, &support::string_data(&round.to_string()));
    }
    assert_eq!(client.size("tls-map"), 201);
    member.shutdown();
    let _ = std::fs::remove_dir_all(&pki.dir);
}

/// The end of a refusal test: the TLS client `good`, connected before, still works, and a new
/// one gets in and reads what it wrote; then the member stops.
fn goes_on_and_lets_others_in(member: Member, pki: &TestPki, mut good: WireClient) {
    good.ping();
    assert_eq!(good.put("m", &support::string_data("k"), &support::string_data("v")), None);
    let mut late = WireClient::connect_tls(member.address(), client_config(pki, false, None));
    assert_eq!(late.get("m", &support::string_data("k")), Some(support::string_data("v")));
    member.shutdown();
    let _ = std::fs::remove_dir_all(&pki.dir);
}

#[test]
fn clients_that_do_not_speak_tls_are_closed_and_others_go_on() {
    let pki = make_pki("not-tls");
    let member = start_member(|config| config.network.tls = pem_tls(&pki));
    let address = member.address();
    let good = WireClient::connect_tls(address, client_config(&pki, false, None));
    // A plain client: its protocol header and authentication are not a TLS record.
    let mut plain = std::net::TcpStream::connect(address).unwrap();
    plain.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    plain.write_all(b"CP2\x16\x00\x00\x00\x00\xc0\x00\x00").unwrap();
    let mut answer = Vec::new();
    let _ = plain.read_to_end(&mut answer);
    assert!(answer.is_empty() || answer[0] == 0x15, "at most a TLS alert: {answer:02x?}");
    // Garbage that looks like a handshake record, then a handshake cut short.
    let mut garbage = std::net::TcpStream::connect(address).unwrap();
    garbage.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    garbage.write_all(&[0x16, 0x03, 0x01, 0x00, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff]).unwrap();
    assert!(garbage.read_to_end(&mut Vec::new()).is_ok());
    let mut cut = std::net::TcpStream::connect(address).unwrap();
    cut.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    cut.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]).unwrap();
    cut.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(cut.read_to_end(&mut Vec::new()).is_ok());
    goes_on_and_lets_others_in(member, &pki, good);
}

#[test]
fn mutual_authentication_refuses_a_client_without_a_trusted_certificate() {
    let pki = make_pki("mutual");
    for mode in [MutualAuthentication::Required, MutualAuthentication::Optional] {
        let mut tls = pkcs12_tls(&pki);
        tls.mutual_authentication = mode;
        let member = start_member(|config| config.network.tls = tls);
        assert!(authenticates(member.address(), client_config(&pki, true, None)), "{mode:?}, with a certificate");
        let without = authenticates(member.address(), client_config(&pki, false, None));
        assert_eq!(without, mode == MutualAuthentication::Optional, "{mode:?}, without a certificate");
        member.shutdown();
    }
    let _ = std::fs::remove_dir_all(&pki.dir);
}

#[test]
fn the_protocol_setting_limits_the_versions_spoken() {
    let pki = make_pki("versions");
    let mut tls = pem_tls(&pki);
    tls.protocol = ferrogrid_config::TlsProtocol::Tls13;
    let member = start_member(|config| config.network.tls = tls);
    assert!(authenticates(member.address(), client_config(&pki, false, Some(&rustls::version::TLS13))));
    assert!(!authenticates(member.address(), client_config(&pki, false, Some(&rustls::version::TLS12))));
    member.shutdown();
    let _ = std::fs::remove_dir_all(&pki.dir);
}

#[test]
fn members_link_over_tls_and_a_member_without_tls_is_refused() {
    let pki = make_pki("links");
    let members = support::start_cluster(2, |_, config| {
        let mut tls = pem_tls(&pki);
        tls.mutual_authentication = MutualAuthentication::Required;
        config.network.tls = tls;
    });
    let client_tls = client_config(&pki, true, None);
    let mut first = WireClient::connect_tls(members[0].address(), Arc::clone(&client_tls));
    for index in 0..40 {
        let key = support::string_data(&format!("key-{index}"));
        first.put("linked", &key, &support::string_data(&format!("value-{index}")));
    }
    // Half the keys live on the other member: read through it, forwarded over the link.
    let mut second = WireClient::connect_tls(members[1].address(), client_tls);
    for index in 0..40 {
        let key = support::string_data(&format!("key-{index}"));
        assert_eq!(second.get("linked", &key), Some(support::string_data(&format!("value-{index}"))));
    }
    assert_eq!(second.size("linked"), 40);
    let plain = start_member(|config| {
        config.network.member_list = vec![members[0].address().to_string()];
        config.cluster.join_wait_ms = 1_000;
    });
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(plain.cluster_size(), 1, "a member without TLS stays out of the TLS cluster");
    assert!(members.iter().all(|member| member.cluster_size() == 2));
    assert_eq!(first.size("linked"), 40);
    plain.shutdown();
    for member in members {
        member.shutdown();
    }
    let _ = std::fs::remove_dir_all(&pki.dir);
}

#[test]
fn a_tls_client_that_stops_reading_is_resumed_intact_and_others_go_on() {
    use ferrogrid_protocol::codec::{MapGet, NullableDataResponse};
    let pki = make_pki("slow-reader");
    let member = start_member(|config| config.network.tls = pkcs12_tls(&pki));
    let client_tls = client_config(&pki, false, None);
    let mut slow = WireClient::connect_tls(member.address(), Arc::clone(&client_tls));
    let key = support::string_data("big");
    let text: String = (0..1 << 20).map(|index| char::from(b'a' + (index % 26) as u8)).collect();
    let value = support::string_data(&text);
    slow.put("slow-map", &key, &value);
    // 32 MiB of answers the client does not read yet: the socket and rustls' buffer fill, the
    // rest waits in the connection's outbound bytes.
    let partition = ferrogrid_protocol::partition_for(ferrogrid_protocol::Data(&key), 271).0 as i32;
    let mut requests = Vec::new();
    let correlation_ids: Vec<i64> = (0..32).map(|_| slow.correlation_id()).collect();
    for corr in &correlation_ids {
        let get = MapGet { thread_id: 1, name: "slow-map", key: ferrogrid_protocol::Data(&key) };
        get.encode(&mut requests, *corr, partition, 0);
    }
    slow.send_bytes(&requests);
    std::thread::sleep(Duration::from_millis(300));
    let mut other = WireClient::connect_tls(member.address(), client_tls);
    other.ping();
    assert_eq!(other.get("slow-map", &key).map(|found| found.len()), Some(value.len()));
    for corr in correlation_ids {
        let answer = slow.response_to(corr);
        let message = ferrogrid_protocol::Message::parse(&answer).unwrap();
        let found = NullableDataResponse::decode(&message).unwrap().response.map(|data| data.0.to_vec());
        assert!(found.as_deref() == Some(&value[..]), "answer {corr} intact");
    }
    member.shutdown();
    let _ = std::fs::remove_dir_all(&pki.dir);
}

/// The bytes a real rustls client sends first: its ClientHello record.
fn client_hello(pki: &TestPki) -> Vec<u8> {
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut session = rustls::ClientConnection::new(client_config(pki, true, None), name).unwrap();
    let mut hello = Vec::new();
    while session.wants_write() {
        session.write_tls(&mut hello).unwrap();
    }
    hello
}

/// What a fuzzed connection sends: random bytes, or a real ClientHello with a few bytes
/// changed, cut short, or followed by a random record.
fn accept_case(hello: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let length = hello.len();
    prop_oneof![
        vec(any::<u8>(), 1..600),
        vec((0..length, any::<u8>()), 1..8).prop_map({
            let hello = hello.clone();
            move |changes| {
                let mut bytes = hello.clone();
                for (at, byte) in changes {
                    bytes[at] = byte;
                }
                bytes
            }
        }),
        (0..length).prop_map({
            let hello = hello.clone();
            move |cut| hello[..cut].to_vec()
        }),
        (prop::sample::select(vec![0x14u8, 0x15, 0x16, 0x17]), vec(any::<u8>(), 0..300)).prop_map(
            move |(kind, body)| {
                let mut bytes = hello.clone();
                bytes.extend_from_slice(&[kind, 0x03, 0x03]);
                bytes.extend_from_slice(&(body.len() as u16).to_be_bytes());
                bytes.extend_from_slice(&body);
                bytes
            }
        ),
    ]
}

/// Sends `sent` on a new connection, closes its writing half and reads until the member
/// closes: Err names what was wrong.
fn refused_alone(address: std::net::SocketAddr, sent: &[u8]) -> Result<(), String> {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The member may close first (it refused what it read): later writes may fail.
    let _ = stream.write_all(sent).and_then(|()| stream.shutdown(std::net::Shutdown::Write));
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(error) => return Err(format!("not closed: {error}")),
    }
    match answer.first() {
        None | Some(0x14..=0x16) => Ok(()),
        Some(_) => Err(format!("answered with no TLS record: {answer:02x?}")),
    }
}

/// The accept path fuzzed: 300 connections, each sending random bytes or a damaged real
/// ClientHello and then closing its writing half. Every one is answered with at most TLS records
/// and then closed by the member (none is left open waiting); a good TLS client connected
/// before them goes on, and one connecting after them gets in.
#[test]
fn random_bytes_on_the_tls_port_close_their_own_connection_only() {
    let pki = make_pki("fuzzed-accept");
    let member = start_member(|config| config.network.tls = pem_tls(&pki));
    let address = member.address();
    let good = WireClient::connect_tls(address, client_config(&pki, false, None));
    let hello = client_hello(&pki);
    let mut runner =
        TestRunner::new(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() });
    let (cases, good) = (std::cell::Cell::new(0), std::cell::RefCell::new(good));
    runner
        .run(&accept_case(hello), |sent| {
            cases.set(cases.get() + 1);
            if cases.get() % 50 == 0 {
                good.borrow_mut().ping();
            }
            refused_alone(address, &sent).map_err(TestCaseError::fail)
        })
        .unwrap();
    goes_on_and_lets_others_in(member, &pki, good.into_inner());
}
