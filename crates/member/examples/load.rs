//! A small load driver for rough measurements (the Simulator is the real tool): `connections`
//! sockets, each with `depth` requests in flight, String keys/values of fixed length, a
//! `put_ratio` of Map.Set, the rest Map.Get over `key_count` preloaded keys. Speaks the raw
//! protocol, so it drives ferrogrid and Hazelcast alike. Prints one JSON line.
//!
//! `cargo run --release -p ferrogrid-member --example load -- 127.0.0.1:5701 [seconds]
//!  [connections] [depth] [key_count] [key_length] [value_length] [put_ratio]`
//!
//! With `LOAD_PROTOCOL=resp` it speaks RESP instead (GET and SET of the same keys and values,
//! pipelined the same way) and drives Redis: the same driver for both, so ratios compare the
//! servers, not the clients.
//!
//! Environment: `LOAD_WARMUP_SECONDS` (default 2) runs the load before measuring;
//! `LOAD_SERVER_PID` adds the server's CPU seconds (user + system) during the measurement;
//! `LOAD_USERNAME` and `LOAD_PASSWORD` authenticate with credentials (e.g. as a tenant);
//! `LOAD_ONLY=1` stops after the load phase (prints the keys loaded), for memory measurements;
//! `LOAD_TLS_CA=ca.pem` (not empty) connects over TLS (rustls, the same for both protocols), trusting that
//! CA and naming the server `localhost`.

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::frame::{Decoded, StreamDecoder, BACKUP_AWARE};
use ferrogrid_protocol::{partition_for, Data, Message};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn string_data(text: &str) -> Vec<u8> {
    let mut blob = vec![0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf5];
    blob.extend_from_slice(&(text.len() as i32).to_be_bytes());
    blob.extend_from_slice(text.as_bytes());
    blob
}

fn key(index: usize, length: usize) -> Vec<u8> {
    string_data(&format!("{index:0>length$}"))
}

/// Which server the driver speaks to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Hazelcast,
    Resp,
}

fn protocol() -> Protocol {
    match std::env::var("LOAD_PROTOCOL").as_deref() {
        Ok("resp") => Protocol::Resp,
        _ => Protocol::Hazelcast,
    }
}

/// A socket, plain or TLS.
trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// The TLS client configuration when `LOAD_TLS_CA` names a CA file.
fn tls_config() -> Option<Arc<rustls::ClientConfig>> {
    static CONFIG: OnceLock<Option<Arc<rustls::ClientConfig>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            use rustls::pki_types::{pem::PemObject, CertificateDer};
            let path = std::env::var("LOAD_TLS_CA").ok().filter(|path| !path.is_empty())?;
            let mut roots = rustls::RootCertStore::empty();
            for certificate in CertificateDer::pem_file_iter(&path).expect("LOAD_TLS_CA") {
                roots.add(certificate.expect("a PEM certificate")).expect("a CA certificate");
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
            Some(Arc::new(config))
        })
        .clone()
}

fn connect(address: &str) -> Box<dyn Stream> {
    let stream = TcpStream::connect(address).expect("connect");
    stream.set_nodelay(true).unwrap();
    let Some(config) = tls_config() else {
        return Box::new(stream);
    };
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let session = rustls::ClientConnection::new(config, name).expect("a TLS session");
    Box::new(rustls::StreamOwned::new(session, stream))
}

struct Connection {
    stream: Box<dyn Stream>,
    decoder: StreamDecoder,
    buffer: Vec<u8>,
    filled: usize,
    protocol: Protocol,
}

impl Connection {
    /// A connection, authenticated; a member that answers with an error (one still joining
    /// its cluster right after start) is asked again, for up to 10 s.
    fn open(address: &str) -> Connection {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match Connection::try_open(address) {
                Some(connection) => return connection,
                None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
                None => panic!("{address} refused authentication for 10 s"),
            }
        }
    }

    fn try_open(address: &str) -> Option<Connection> {
        let stream = connect(address);
        let protocol = protocol();
        let mut connection =
            Connection { stream, decoder: StreamDecoder::default(), buffer: vec![0; 1 << 20], filled: 0, protocol };
        if protocol == Protocol::Resp {
            return Some(connection);
        }
        let mut out = b"CP2".to_vec();
        let username = std::env::var("LOAD_USERNAME").ok();
        let password = std::env::var("LOAD_PASSWORD").ok();
        ClientAuthentication {
            uuid: Some(ferrogrid_protocol::Uuid::from_u128(rand_u128())),
            serialization_version: 1,
            routing_mode: None,
            cp_direct_to_leader_routing: None,
            cluster_name: "dev",
            username: username.as_deref(),
            password: password.as_deref(),
            client_type: "RST",
            client_hazelcast_version: "5.6.0",
            client_name: "load",
            labels: vec![],
        }
        .encode(&mut out, 1, -1, 0);
        connection.stream.write_all(&out).unwrap();
        let mut status = None;
        connection.read_responses(1, |message| {
            // (An error response does not decode as an authentication response.)
            status = AuthenticationResponse::decode(message).ok().map(|response| response.status);
        });
        (status == Some(0)).then_some(connection)
    }

    /// Reads until at least `minimum` responses have been seen, calling `each` on every
    /// response that arrived; returns how many that was.
    fn read_responses(&mut self, minimum: usize, mut each: impl FnMut(&Message<'_>)) -> usize {
        let mut seen = 0;
        loop {
            let mut start = 0;
            if self.protocol == Protocol::Resp {
                while let Some(length) = resp_reply_length(&self.buffer[start..self.filled]) {
                    start += length;
                    seen += 1;
                }
            }
            while self.protocol == Protocol::Hazelcast {
                let Decoded::Message { length } = self.decoder.decode(&self.buffer[start..self.filled]).unwrap() else {
                    break;
                };
                let message = Message::parse(&self.buffer[start..start + length]).unwrap();
                each(&message);
                start += length;
                seen += 1;
            }
            self.buffer.copy_within(start..self.filled, 0);
            self.filled -= start;
            if seen >= minimum {
                return seen;
            }
            let read = self.stream.read(&mut self.buffer[self.filled..]).expect("read");
            assert!(read > 0, "member closed the connection");
            self.filled += read;
        }
    }
}

/// The length of the first whole RESP reply in `bytes` (simple string, error, integer or bulk
/// string: what GET, SET and DBSIZE answer), or None if it has not all arrived.
fn resp_reply_length(bytes: &[u8]) -> Option<usize> {
    let line_end = bytes.windows(2).position(|pair| pair == b"\r\n")? + 2;
    match bytes.first()? {
        b'+' | b'-' | b':' => Some(line_end),
        b'$' => {
            let length: i64 = std::str::from_utf8(&bytes[1..line_end - 2]).ok()?.parse().ok()?;
            let total = if length < 0 { line_end } else { line_end + length as usize + 2 };
            (bytes.len() >= total).then_some(total)
        }
        other => panic!("unexpected RESP reply type {:?}", *other as char),
    }
}

/// A RESP command (an array of bulk strings).
fn resp_command(out: &mut Vec<u8>, words: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", words.len()).as_bytes());
    for word in words {
        out.extend_from_slice(format!("${}\r\n", word.len()).as_bytes());
        out.extend_from_slice(word);
        out.extend_from_slice(b"\r\n");
    }
}

/// A Hazelcast Data blob's payload (the string's bytes): what the RESP mode stores.
fn payload(data: &[u8]) -> &[u8] {
    &data[12..]
}

/// User + system CPU seconds a process has used (from /proc; Linux clock ticks of 1/100 s).
fn process_cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("server process stat");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let after_name = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

fn rand_u128() -> u128 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    nanos ^ ((std::process::id() as u128) << 64)
}

/// xorshift: cheap and good enough to spread keys.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

struct Settings {
    address: String,
    seconds: u64,
    connections: usize,
    depth: usize,
    key_count: usize,
    key_length: usize,
    value_length: usize,
    put_ratio: f64,
    protocol: Protocol,
}

fn encode_request(
    out: &mut Vec<u8>,
    settings: &Settings,
    keys: &[(Vec<u8>, i32)],
    value: &[u8],
    random: &mut u64,
    corr: i64,
) {
    let (key, partition) = &keys[next_random(random) as usize % keys.len()];
    let is_put = (next_random(random) % 10_000) < (settings.put_ratio * 10_000.0) as u64;
    if settings.protocol == Protocol::Resp {
        if is_put {
            resp_command(out, &[b"SET", payload(key), payload(value)]);
        } else {
            resp_command(out, &[b"GET", payload(key)]);
        }
        return;
    }
    if is_put {
        MapSet { thread_id: 1, ttl: -1, name: "map", key: Data(key), value: Data(value) }.encode(
            out,
            corr,
            *partition,
            BACKUP_AWARE,
        );
    } else {
        MapGet { thread_id: 1, name: "map", key: Data(key) }.encode(out, corr, *partition, BACKUP_AWARE);
    }
}

/// Sets every key over the Hazelcast protocol; returns the map's size.
fn load_hazelcast(loader: &mut Connection, keys: &[(Vec<u8>, i32)], value: &[u8]) -> usize {
    for chunk in keys.chunks(1000) {
        let mut out = Vec::new();
        for (index, (key, partition)) in chunk.iter().enumerate() {
            MapSet { thread_id: 1, ttl: -1, name: "map", key: Data(key), value: Data(value) }.encode(
                &mut out,
                index as i64 + 2,
                *partition,
                0,
            );
        }
        loader.stream.write_all(&out).unwrap();
        loader.read_responses(chunk.len(), |_| {});
    }
    let mut size = 0;
    let mut out = Vec::new();
    MapSize { name: "map" }.encode(&mut out, 99, -1, 0);
    loader.stream.write_all(&out).unwrap();
    loader.read_responses(1, |message| size = IntResponse::decode(message).unwrap().response);
    size.max(0) as usize
}

/// Sets every key over RESP; returns the database's size.
fn load_resp(loader: &mut Connection, keys: &[(Vec<u8>, i32)], value: &[u8]) -> usize {
    for chunk in keys.chunks(1000) {
        let mut out = Vec::new();
        for (key, _) in chunk {
            resp_command(&mut out, &[b"SET", payload(key), payload(value)]);
        }
        loader.stream.write_all(&out).unwrap();
        loader.read_responses(chunk.len(), |_| {});
    }
    let mut out = Vec::new();
    resp_command(&mut out, &[b"DBSIZE"]);
    loader.stream.write_all(&out).unwrap();
    loader.filled = 0;
    let read = loader.stream.read(&mut loader.buffer).expect("read");
    let reply = std::str::from_utf8(&loader.buffer[..read]).expect("DBSIZE reply");
    reply.trim_start_matches(':').trim().parse().expect("DBSIZE is an integer")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |index: usize, default: &str| args.get(index).cloned().unwrap_or_else(|| default.to_owned());
    let settings = Arc::new(Settings {
        address: arg(0, "127.0.0.1:5701"),
        seconds: arg(1, "10").parse().unwrap(),
        connections: arg(2, "4").parse().unwrap(),
        depth: arg(3, "10").parse().unwrap(),
        key_count: arg(4, "10000").parse().unwrap(),
        key_length: arg(5, "20").parse().unwrap(),
        value_length: arg(6, "100").parse().unwrap(),
        put_ratio: arg(7, "0.0").parse().unwrap(),
        protocol: protocol(),
    });
    let keys: Arc<Vec<(Vec<u8>, i32)>> = Arc::new(
        (0..settings.key_count)
            .map(|index| {
                let key = key(index, settings.key_length);
                let partition = partition_for(Data(&key), 271).0 as i32;
                (key, partition)
            })
            .collect(),
    );
    let value = string_data(&"v".repeat(settings.value_length));
    // Load phase: every key present before measuring.
    let mut loader = Connection::open(&settings.address);
    let size = match settings.protocol {
        Protocol::Hazelcast => load_hazelcast(&mut loader, &keys, &value),
        Protocol::Resp => load_resp(&mut loader, &keys, &value),
    };
    assert!(size >= settings.key_count, "load phase incomplete: size {size}");
    if std::env::var("LOAD_ONLY").is_ok_and(|only| only == "1") {
        println!("{{\"loaded\": {size}}}");
        return;
    }

    let stop = Arc::new(AtomicBool::new(false));
    let operations = Arc::new(AtomicU64::new(0));
    let warmup_seconds = std::env::var("LOAD_WARMUP_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let warmup = Duration::from_secs(warmup_seconds);
    let threads: Vec<_> = (0..settings.connections)
        .map(|thread| {
            let (settings, keys, value) = (settings.clone(), keys.clone(), value.clone());
            let (stop, operations) = (stop.clone(), operations.clone());
            std::thread::spawn(move || {
                let mut connection = Connection::open(&settings.address);
                let mut random = 0x9e37_79b9_7f4a_7c15u64 ^ (thread as u64 + 1);
                let mut out = Vec::new();
                let mut corr = 10i64;
                for _ in 0..settings.depth {
                    corr += 1;
                    encode_request(&mut out, &settings, &keys, &value, &mut random, corr);
                }
                connection.stream.write_all(&out).unwrap();
                let mut done = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let answered = connection.read_responses(1, |_| {});
                    out.clear();
                    for _ in 0..answered {
                        corr += 1;
                        encode_request(&mut out, &settings, &keys, &value, &mut random, corr);
                    }
                    connection.stream.write_all(&out).unwrap();
                    done += answered as u64;
                    if done >= 256 {
                        operations.fetch_add(done, Ordering::Relaxed);
                        done = 0;
                    }
                }
                connection.read_responses(settings.depth, |_| {});
            })
        })
        .collect();
    std::thread::sleep(warmup);
    let start_ops = operations.load(Ordering::Relaxed);
    let started = Instant::now();
    let server_pid = std::env::var("LOAD_SERVER_PID").ok();
    let cpu_start = server_pid.as_deref().map(process_cpu_seconds);
    std::thread::sleep(Duration::from_secs(settings.seconds));
    let server_cpu = server_pid.as_deref().map(process_cpu_seconds).zip(cpu_start).map(|(end, start)| end - start);
    let measured = operations.load(Ordering::Relaxed) - start_ops;
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    let cpu = match server_cpu {
        Some(seconds) => format!(
            ", \"server_cpu_seconds\": {seconds:.2}, \"ops_per_server_cpu_second\": {:.0}",
            measured as f64 / seconds.max(0.01)
        ),
        None => String::new(),
    };
    println!(
        "{{\"operations\": {measured}, \"seconds\": {elapsed:.3}, \"ops_per_second\": {:.0}, \"connections\": {}, \"depth\": {}, \"put_ratio\": {}{cpu}}}",
        measured as f64 / elapsed,
        settings.connections,
        settings.depth,
        settings.put_ratio
    );
}
