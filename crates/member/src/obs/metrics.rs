//! Collecting the probes of all threads, the rolling metrics file, and the HTTP endpoint
//! (`GET /metrics` in Prometheus text, `GET /health`).
//!
//! Threads: `metrics` appends a snapshot to the file every collection period; `metrics-http`
//! answers one request at a time (each bounded in size and time). Neither touches partition
//! data: they read the reactors' probes and snapshots.

use crate::obs::probes::{
    latency_histogram, render_log, render_prometheus, ClientFigures, MapFigures, ObjectFigures, Probe, ReactorSnapshot,
};
use crate::shared::{ReactorHandle, Shared};
use ferrogrid_config::MetricsConfig;
use ferrogrid_protocol::MessageType;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tracing::{info, warn};

/// Longest request line or header the HTTP endpoint reads.
const MAX_HTTP_LINE_BYTES: usize = 8 << 10;
/// Headers read per request at most.
const MAX_HTTP_HEADERS: usize = 64;
const HTTP_TIMEOUT: Duration = Duration::from_secs(2);

fn probe(
    group: String,
    name: &'static str,
    prometheus: &'static str,
    labels: Vec<(&'static str, String)>,
    value: f64,
    counter: bool,
) -> Probe {
    Probe { group, name, prometheus, labels, value, counter }
}

/// Every probe of the member, read now.
pub fn collect(shared: &Shared) -> Vec<Probe> {
    let mut probes = Vec::new();
    let mut totals = Totals::default();
    for (index, reactor) in shared.reactors.iter().enumerate() {
        reactor_probes(&mut probes, index, reactor);
        let snapshot = reactor.probes.snapshot.lock().clone();
        totals.add(snapshot);
    }
    latency_probes(&mut probes, totals.latency);
    map_probes(&mut probes, totals.maps);
    object_probes(&mut probes, totals.objects);
    flake_id_probes(&mut probes, shared);
    client_probes(&mut probes, totals.clients);
    tenant_probes(&mut probes, shared, totals.tenant_latency);
    cluster_probes(&mut probes, shared);
    probes
}

/// The reactors' snapshots summed over reactors: latency per operation type and per tenant,
/// figures per map (by display name) and per client.
#[derive(Default)]
struct Totals {
    latency: BTreeMap<MessageType, Histogram<u64>>,
    tenant_latency: BTreeMap<usize, Histogram<u64>>,
    maps: BTreeMap<String, MapFigures>,
    objects: BTreeMap<(&'static str, String), ObjectFigures>,
    clients: BTreeMap<String, ClientFigures>,
}

impl Totals {
    fn add(&mut self, snapshot: ReactorSnapshot) {
        for (ty, histogram) in snapshot.latency {
            self.latency.entry(ty).or_insert_with(latency_histogram).add(&histogram).expect("same bounds");
        }
        for (name, figures) in snapshot.maps {
            let total = self.maps.entry(crate::tenants::display(&name)).or_default();
            total.entries += figures.entries;
            total.bytes += figures.bytes;
            for (ty, count) in figures.ops {
                *total.ops.entry(ty).or_insert(0) += count;
            }
        }
        for ((kind, name), figures) in snapshot.objects {
            let total = self.objects.entry((kind, crate::tenants::display(&name))).or_default();
            total.items += figures.items;
            total.bytes += figures.bytes;
            total.listeners = total.listeners.max(figures.listeners);
            total.publishes += figures.publishes;
            total.receives += figures.receives;
            total.value = total.value.wrapping_add(figures.value);
            total.increments += figures.increments;
            total.decrements += figures.decrements;
        }
        for (tenant, histogram) in snapshot.tenant_latency.iter().enumerate() {
            let total = self.tenant_latency.entry(tenant).or_insert_with(latency_histogram);
            total.add(histogram).expect("same bounds");
        }
        for (client, figures) in snapshot.clients {
            let total = self.clients.entry(client.to_string()).or_default();
            total.connections += figures.connections;
            total.requests += figures.requests;
        }
    }
}

/// One reactor's counters and gauges.
fn reactor_probes(probes: &mut Vec<Probe>, index: usize, reactor: &ReactorHandle) {
    let p = &reactor.probes;
    let group = format!("reactor-{index}");
    let label = || vec![("reactor", index.to_string())];
    let counters = [
        ("readEvents", "ferrogrid_reactor_read_events_total", p.read_events.get()),
        ("writeEvents", "ferrogrid_reactor_write_events_total", p.write_events.get()),
        ("bytesIn", "ferrogrid_reactor_bytes_in_total", p.bytes_in.get()),
        ("bytesOut", "ferrogrid_reactor_bytes_out_total", p.bytes_out.get()),
        ("messagesIn", "ferrogrid_reactor_messages_in_total", p.messages_in.get()),
        ("messagesOut", "ferrogrid_reactor_messages_out_total", p.messages_out.get()),
        ("localOps", "ferrogrid_reactor_local_ops_total", p.local_ops.get()),
        ("handedOffOps", "ferrogrid_reactor_handed_off_ops_total", p.handed_off_ops.get()),
        ("borrowedOps", "ferrogrid_reactor_borrowed_ops_total", p.borrowed_ops.get()),
        ("forwardedOps", "ferrogrid_reactor_forwarded_ops_total", p.forwarded_ops.get()),
        ("receivedOps", "ferrogrid_reactor_received_ops_total", p.received_ops.get()),
        ("connectionsMigratedIn", "ferrogrid_reactor_connections_migrated_in_total", p.connections_migrated_in.get()),
        (
            "connectionsMigratedOut",
            "ferrogrid_reactor_connections_migrated_out_total",
            p.connections_migrated_out.get(),
        ),
        ("eventsDropped", "ferrogrid_reactor_events_dropped_total", p.events_dropped.get()),
    ];
    for (name, prometheus, value) in counters {
        probes.push(probe(group.clone(), name, prometheus, label(), value as f64, true));
    }
    let connections = reactor.connections.load(Ordering::Acquire) as f64;
    probes.push(probe(group.clone(), "connections", "ferrogrid_reactor_connections", label(), connections, false));
    let depth = p.queue_depth.get() as f64;
    probes.push(probe(group, "queueDepth", "ferrogrid_reactor_queue_depth", label(), depth, false));
}

/// Latency quantiles, maximum and count per operation type.
fn latency_probes(probes: &mut Vec<Probe>, latency: BTreeMap<MessageType, Histogram<u64>>) {
    for (ty, histogram) in latency {
        let operation = operation_name(ty);
        let group = format!("operation-{operation}");
        let label = || vec![("operation", operation.clone())];
        let quantiles = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)];
        for (name, quantile) in quantiles {
            let value = histogram.value_at_quantile(quantile) as f64;
            let mut labels = label();
            labels.push(("quantile", quantile.to_string()));
            probes.push(probe(group.clone(), name, "ferrogrid_operation_latency_nanoseconds", labels, value, false));
        }
        let max = histogram.max() as f64;
        probes.push(probe(group.clone(), "max", "ferrogrid_operation_latency_max_nanoseconds", label(), max, false));
        probes.push(probe(group, "count", "ferrogrid_operation_count_total", label(), histogram.len() as f64, true));
    }
}

/// Entries, bytes and operations per map.
fn map_probes(probes: &mut Vec<Probe>, maps: BTreeMap<String, MapFigures>) {
    for (name, figures) in maps {
        let group = format!("map-{name}");
        let label = || vec![("map", name.clone())];
        probes.push(probe(group.clone(), "entries", "ferrogrid_map_entries", label(), figures.entries as f64, false));
        probes.push(probe(group.clone(), "bytes", "ferrogrid_map_bytes", label(), figures.bytes as f64, false));
        let mut ops: Vec<_> = figures.ops.into_iter().collect();
        ops.sort();
        for (ty, count) in ops {
            let mut labels = label();
            labels.push(("operation", operation_name(ty)));
            probes.push(probe(group.clone(), "ops", "ferrogrid_map_ops_total", labels, count as f64, true));
        }
    }
}

/// Items, bytes and listeners per queue and ringbuffer; listeners, publishes and receives per
/// topic (`queue-jobs.items`, `ferrogrid_object_items{kind="queue",name="jobs"}`).
fn object_probes(probes: &mut Vec<Probe>, objects: BTreeMap<(&'static str, String), ObjectFigures>) {
    for ((kind, name), figures) in objects {
        let group = format!("{kind}-{name}");
        let label = || vec![("kind", kind.to_owned()), ("name", name.clone())];
        if kind == "pncounter" {
            let value = figures.value as f64;
            probes.push(probe(group.clone(), "value", "ferrogrid_pncounter_value", label(), value, false));
        }
        let mut figure = |field, prometheus, value: u64, counter| {
            probes.push(probe(group.clone(), field, prometheus, label(), value as f64, counter));
        };
        if kind == "pncounter" {
            figure("increments", "ferrogrid_pncounter_increments_total", figures.increments, true);
            figure("decrements", "ferrogrid_pncounter_decrements_total", figures.decrements, true);
            continue;
        }
        if kind == "topic" {
            figure("publishes", "ferrogrid_topic_publishes_total", figures.publishes, true);
            figure("receives", "ferrogrid_topic_receives_total", figures.receives, true);
        } else {
            figure("items", "ferrogrid_object_items", figures.items, false);
            figure("bytes", "ferrogrid_object_bytes", figures.bytes, false);
        }
        if kind != "ringbuffer" {
            figure("listeners", "ferrogrid_object_listeners", figures.listeners, false);
        }
    }
}

/// Ids and batches each flake id generator with statistics enabled issued on this member
/// (`flakeIdGenerator-ids.idCount`, `ferrogrid_flake_id_generator_ids_total{name="ids"}`).
fn flake_id_probes(probes: &mut Vec<Probe>, shared: &Shared) {
    for figures in shared.flake_ids.figures() {
        let group = format!("flakeIdGenerator-{}", figures.name);
        let label = || vec![("name", figures.name.clone())];
        let ids = figures.ids as f64;
        probes.push(probe(group.clone(), "idCount", "ferrogrid_flake_id_generator_ids_total", label(), ids, true));
        let batches = figures.batches as f64;
        let prometheus = "ferrogrid_flake_id_generator_batches_total";
        probes.push(probe(group, "batchCount", prometheus, label(), batches, true));
    }
}

/// Connections and requests per client.
fn client_probes(probes: &mut Vec<Probe>, clients: BTreeMap<String, ClientFigures>) {
    for (client, figures) in clients {
        let group = format!("client-{client}");
        let label = || vec![("client", client.clone())];
        let connections = figures.connections as f64;
        probes.push(probe(group.clone(), "connections", "ferrogrid_client_connections", label(), connections, false));
        let requests = figures.requests as f64;
        probes.push(probe(group, "requests", "ferrogrid_client_requests_total", label(), requests, true));
    }
}

/// Per tenant: operations, throttled and rejected (summed over reactors), data held,
/// connections and latency quantiles.
fn tenant_probes(probes: &mut Vec<Probe>, shared: &Shared, tenant_latency: BTreeMap<usize, Histogram<u64>>) {
    for (id, histogram) in tenant_latency {
        let Some(tenant) = shared.tenant(id as u16) else { continue };
        let name = tenant.config.name.clone();
        let group = format!("tenant-{name}");
        let label = || vec![("tenant", name.clone())];
        let sum = |pick: fn(&crate::tenants::TenantProbes) -> u64| {
            shared.reactors.iter().map(|reactor| pick(&reactor.tenant_probes[id])).sum::<u64>() as f64
        };
        let counters = [
            ("ops", "ferrogrid_tenant_ops_total", sum(|p| p.ops.get())),
            ("throttled", "ferrogrid_tenant_throttled_total", sum(|p| p.throttled.get())),
            ("rejected", "ferrogrid_tenant_rejected_total", sum(|p| p.rejected.get())),
        ];
        for (probe_name, prometheus, value) in counters {
            probes.push(probe(group.clone(), probe_name, prometheus, label(), value, true));
        }
        let held = |counters: &[std::sync::atomic::AtomicU64]| {
            counters.iter().map(|counter| counter.load(Ordering::Relaxed)).sum::<u64>() as f64
        };
        probes.push(probe(group.clone(), "entries", "ferrogrid_tenant_entries", label(), held(&tenant.entries), false));
        probes.push(probe(group.clone(), "bytes", "ferrogrid_tenant_bytes", label(), held(&tenant.bytes), false));
        let connections = tenant.connections.load(Ordering::Relaxed) as f64;
        probes.push(probe(group.clone(), "connections", "ferrogrid_tenant_connections", label(), connections, false));
        for (probe_name, quantile) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
            let mut labels = label();
            labels.push(("quantile", quantile.to_string()));
            let value = histogram.value_at_quantile(quantile) as f64;
            probes.push(probe(group.clone(), probe_name, "ferrogrid_tenant_latency_nanoseconds", labels, value, false));
        }
    }
}

/// The cluster's size, table version, migrations and merges, the IO balancer's counters and
/// packed placement's.
fn cluster_probes(probes: &mut Vec<Probe>, shared: &Shared) {
    let cluster = || "cluster".to_owned();
    let members = shared.cluster_state().members.len().max(1) as f64;
    probes.push(probe(cluster(), "members", "ferrogrid_cluster_members", vec![], members, false));
    let version = shared.view.state().partition_table_version as f64;
    let table_version = "ferrogrid_cluster_partition_table_version";
    probes.push(probe(cluster(), "partitionTableVersion", table_version, vec![], version, false));
    let counts = &shared.cluster_probes;
    for (name, prometheus, counter) in [
        ("migrations", "ferrogrid_cluster_migrations_total", &counts.migrations),
        ("merging", "ferrogrid_cluster_merging_total", &counts.merging),
        ("merged", "ferrogrid_cluster_merged_total", &counts.merged),
    ] {
        probes.push(probe(cluster(), name, prometheus, vec![], counter.get() as f64, true));
    }
    let balancer = &shared.balancer;
    let balancer_group = || "balancer".to_owned();
    let runs = balancer.runs.get() as f64;
    probes.push(probe(balancer_group(), "runs", "ferrogrid_balancer_runs_total", vec![], runs, true));
    let imbalances = balancer.imbalances_detected.get() as f64;
    let imbalances_name = "ferrogrid_balancer_imbalances_total";
    probes.push(probe(balancer_group(), "imbalancesDetected", imbalances_name, vec![], imbalances, true));
    let migrations = balancer.migrations.get() as f64;
    probes.push(probe(balancer_group(), "migrations", "ferrogrid_balancer_migrations_total", vec![], migrations, true));
    let packing = &shared.packing;
    let packing_group = || "packing".to_owned();
    let active = shared.active_reactors() as f64;
    let active_name = "ferrogrid_packing_active_reactors";
    probes.push(probe(packing_group(), "activeReactors", active_name, vec![], active, false));
    let grows = packing.grows.get() as f64;
    probes.push(probe(packing_group(), "grows", "ferrogrid_packing_grows_total", vec![], grows, true));
    let shrinks = packing.shrinks.get() as f64;
    probes.push(probe(packing_group(), "shrinks", "ferrogrid_packing_shrinks_total", vec![], shrinks, true));
}

/// "Map.Get" for a known map request type, else its hex id.
fn operation_name(ty: ferrogrid_protocol::MessageType) -> String {
    ferrogrid_protocol::codec::any_message_name(ty).map_or_else(|| ty.describe(), str::to_owned)
}

/// Appends a snapshot every collection period until shutdown, rolling the file over to
/// `<file>.1` when it passes the size bound.
pub fn log_loop(shared: Arc<Shared>, config: MetricsConfig, path: std::path::PathBuf) {
    let period = Duration::from_secs(config.collection_frequency_seconds as u64);
    let mut waited = Duration::ZERO;
    while !shared.is_shutting_down() {
        std::thread::sleep(Duration::from_millis(100));
        waited += Duration::from_millis(100);
        if waited < period {
            continue;
        }
        waited = Duration::ZERO;
        let text = render_log(&collect(&shared), crate::clock::now_ms());
        if let Err(error) = append_rolling(&path, text.as_bytes(), config.max_file_bytes) {
            warn!(path = %path.display(), %error, "could not write the metrics file");
        }
    }
}

fn append_rolling(path: &Path, bytes: &[u8], max_bytes: u64) -> std::io::Result<()> {
    let size = std::fs::metadata(path).map(|metadata| metadata.len()).unwrap_or(0);
    if size > 0 && size + bytes.len() as u64 > max_bytes {
        let mut rolled = path.as_os_str().to_owned();
        rolled.push(".1");
        std::fs::rename(path, rolled)?;
    }
    OpenOptions::new().create(true).append(true).open(path)?.write_all(bytes)
}

/// Binds the HTTP endpoint on `host`, trying `port` and the next 99.
pub fn bind_http(host: &str, port: u16) -> std::io::Result<TcpListener> {
    let mut last_error = std::io::Error::other("no port tried");
    for candidate in port..=port.saturating_add(99) {
        match TcpListener::bind((host, candidate)) {
            Ok(listener) => return Ok(listener),
            Err(error) => last_error = error,
        }
    }
    Err(last_error)
}

/// Serves `/metrics` and `/health`, one request at a time, until shutdown.
pub fn http_loop(shared: Arc<Shared>, listener: TcpListener) {
    let address = listener.local_addr().ok();
    info!(address = ?address, "metrics endpoint listening");
    for stream in listener.incoming() {
        if shared.is_shutting_down() {
            return;
        }
        let Ok(stream) = stream else { continue };
        if let Err(error) = answer(&shared, stream) {
            warn!(%error, "metrics request failed");
        }
    }
}

/// Unblocks `http_loop`'s accept so it sees the shutdown flag.
pub fn wake_http(address: SocketAddr) {
    let _ = TcpStream::connect_timeout(&address, Duration::from_millis(200));
}

fn answer(shared: &Shared, stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(HTTP_TIMEOUT))?;
    stream.set_write_timeout(Some(HTTP_TIMEOUT))?;
    let mut reader = BufReader::new((&stream).take(MAX_HTTP_LINE_BYTES as u64 * (MAX_HTTP_HEADERS as u64 + 1)));
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    for _ in 0..MAX_HTTP_HEADERS {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("");
    let (status, content_type, body) = match (request_line.starts_with("GET "), path) {
        (true, "/metrics") => ("200 OK", "text/plain; version=0.0.4", render_prometheus(&collect(shared))),
        (true, "/health") => ("200 OK", "application/json", health(shared)),
        (true, _) => ("404 Not Found", "text/plain", "try /metrics or /health\n".to_owned()),
        (false, _) => ("405 Method Not Allowed", "text/plain", "GET only\n".to_owned()),
    };
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn health(shared: &Shared) -> String {
    let state = if shared.is_shutting_down() { "SHUTTING_DOWN" } else { "ACTIVE" };
    let view = shared.view.state();
    format!(
        "{{\"state\": \"{state}\", \"clusterSize\": {}, \"partitionTableVersion\": {}, \"member\": \"{}\", \"clientConnections\": {}}}\n",
        view.members.len(),
        view.partition_table_version,
        shared.view.member_uuid,
        shared.open_connections.load(Ordering::Acquire)
    )
}

use std::io::Read;
