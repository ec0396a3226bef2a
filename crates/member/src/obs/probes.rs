//! Named probes: what the member measures about itself, cheap enough to leave on.
//!
//! Counters on the hot path belong to one reactor thread and are written only by it, with a
//! relaxed load and store (no read-modify-write, no contention); any thread may read them.
//! Heavier measures (latency histograms, per-map and per-client figures) are kept by each
//! reactor privately and copied into its [`ReactorSnapshot`] about once a second.

use ferrogrid_protocol::{MessageType, Uuid};
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// A monotonically increasing count with one writer thread.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// Adds `amount`; only the owning thread calls this.
    pub fn add(&self, amount: u64) {
        self.0.store(self.0.load(Ordering::Relaxed).wrapping_add(amount), Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A value that goes up and down, with one writer thread.
#[derive(Debug, Default)]
pub struct Gauge(AtomicU64);

impl Gauge {
    pub fn set(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Probes of the IO balancer (written by the balancer thread only).
#[derive(Debug, Default)]
pub struct BalancerProbes {
    pub runs: Counter,
    pub imbalances_detected: Counter,
    pub migrations: Counter,
}

/// Probes of the cluster service (written by its thread only).
#[derive(Debug, Default)]
pub struct ClusterProbes {
    /// Replica moves between the partition tables this member applied (every member sees the
    /// same tables, so each counts the cluster's migrations).
    pub migrations: Counter,
    /// Times this member left its cluster to merge into another (Hazelcast's MERGING).
    pub merging: Counter,
    /// Times it then replayed its kept data into the cluster it joined (MERGED).
    pub merged: Counter,
}

/// Packed placement (`packing.rs`): how many reactors take connections, and its changes.
/// Written by the packing thread only; `active_reactors` is read by whoever places a connection.
#[derive(Debug)]
pub struct PackingProbes {
    /// Reactors `0..active_reactors` take new connections.
    pub active_reactors: Gauge,
    /// Times one more reactor became active (every active one saturated, a core idle).
    pub grows: Counter,
    /// Times the last active reactor gave its connections back (the load fit in fewer).
    pub shrinks: Counter,
}

impl PackingProbes {
    pub fn new(active_reactors: usize) -> PackingProbes {
        let probes =
            PackingProbes { active_reactors: Gauge::default(), grows: Counter::default(), shrinks: Counter::default() };
        probes.active_reactors.set(active_reactors as u64);
        probes
    }
}

/// Counters of one reactor thread (written by that thread only).
#[derive(Debug, Default)]
pub struct ReactorProbes {
    pub read_events: Counter,
    pub write_events: Counter,
    pub bytes_in: Counter,
    pub bytes_out: Counter,
    /// Requests cut from this reactor's connections.
    pub messages_in: Counter,
    /// Responses and events this reactor wrote.
    pub messages_out: Counter,
    /// Partition operations run inline (own partition, own connection).
    pub local_ops: Counter,
    /// Partition operations handed to other reactors (their partitions were busy).
    pub handed_off_ops: Counter,
    /// Partition operations of other reactors' partitions this reactor ran itself.
    pub borrowed_ops: Counter,
    /// Partition requests sent on to the member that owns the partition.
    pub forwarded_ops: Counter,
    /// Partition operations other reactors handed to this one.
    pub received_ops: Counter,
    pub queue_depth: Gauge,
    pub connections_migrated_in: Counter,
    pub connections_migrated_out: Counter,
    /// Entry events not sent to a listening connection that had more than
    /// `listener-event-queue-bytes` waiting (one per listener missing an event). Shared with
    /// the reactor's listeners, which count the drops on the reactor's thread.
    pub events_dropped: std::sync::Arc<Counter>,
    /// What the reactor copies out about once a second.
    pub snapshot: Mutex<ReactorSnapshot>,
}

/// Per-map figures of one reactor's partitions.
#[derive(Debug, Default, Clone)]
pub struct MapFigures {
    pub ops: HashMap<MessageType, u64>,
    pub entries: u64,
    pub bytes: u64,
}

/// Figures of one queue, ringbuffer or topic on one reactor (maps have [`MapFigures`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct ObjectFigures {
    /// Items held in partitions this member owns.
    pub items: u64,
    pub bytes: u64,
    /// Listener registrations on this member (every reactor holds a copy: not summed).
    pub listeners: u64,
    /// Messages published through this member (a topic's owner publishes all of them).
    pub publishes: u64,
    /// Messages this member's listeners were sent (Hazelcast's receiveOperationCount).
    pub receives: u64,
    /// A PN counter's value on this member's replica.
    pub value: i64,
    /// PN counter adds with a positive delta run on this member (totalIncrementOperationCount).
    pub increments: u64,
    /// PN counter adds with a negative delta run on this member (totalDecrementOperationCount).
    pub decrements: u64,
}

/// Per-client figures of one reactor's connections.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClientFigures {
    pub connections: u64,
    pub requests: u64,
}

/// The heavier measures of one reactor, copied out periodically.
#[derive(Debug, Default, Clone)]
pub struct ReactorSnapshot {
    /// Latency of each operation type, nanoseconds, since start.
    pub latency: HashMap<MessageType, Histogram<u64>>,
    pub maps: HashMap<String, MapFigures>,
    /// Queues, ringbuffers and topics, by (kind: `queue`, `ringbuffer`, `topic`; name).
    pub objects: HashMap<(&'static str, String), ObjectFigures>,
    pub clients: HashMap<Uuid, ClientFigures>,
    /// Latency of every request by tenant id (index), nanoseconds, since start.
    pub tenant_latency: Vec<Histogram<u64>>,
}

/// A new latency histogram: 1 ns to 60 s, 3 significant digits.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

/// One probe value: a dotted name for the metrics file (`reactor-0.readEvents`) and a
/// Prometheus name with labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub group: String,
    pub name: &'static str,
    pub prometheus: &'static str,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
    pub counter: bool,
}

impl Probe {
    pub fn dotted_name(&self) -> String {
        format!("{}.{}", self.group, self.name)
    }
}

/// Renders probes in the Prometheus text format (one `# TYPE` line per metric name).
pub fn render_prometheus(probes: &[Probe]) -> String {
    let mut out = String::new();
    let mut typed = std::collections::HashSet::new();
    for probe in probes {
        if typed.insert(probe.prometheus) {
            let kind = if probe.counter { "counter" } else { "gauge" };
            out.push_str(&format!("# TYPE {} {kind}\n", probe.prometheus));
        }
        out.push_str(probe.prometheus);
        if !probe.labels.is_empty() {
            let labels: Vec<String> =
                probe.labels.iter().map(|(key, value)| format!("{key}=\"{}\"", escape_label(value))).collect();
            out.push_str(&format!("{{{}}}", labels.join(",")));
        }
        out.push_str(&format!(" {}\n", probe.value));
    }
    out
}

fn escape_label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Renders probes as `name=value` lines after a timestamp line, as the metrics file holds them.
pub fn render_log(probes: &[Probe], timestamp_ms: i64) -> String {
    let mut out = format!("# {timestamp_ms}\n");
    for probe in probes {
        out.push_str(&format!("{}={}\n", probe.dotted_name(), probe.value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_with_one_type_line_per_name() {
        let probe = |reactor: &str, value| Probe {
            group: format!("reactor-{reactor}"),
            name: "readEvents",
            prometheus: "ferrogrid_reactor_read_events_total",
            labels: vec![("reactor", reactor.to_owned())],
            value,
            counter: true,
        };
        let text = render_prometheus(&[probe("0", 3.0), probe("1", 4.0)]);
        assert_eq!(
            text,
            "# TYPE ferrogrid_reactor_read_events_total counter\n\
             ferrogrid_reactor_read_events_total{reactor=\"0\"} 3\n\
             ferrogrid_reactor_read_events_total{reactor=\"1\"} 4\n"
        );
        assert!(render_log(&[probe("0", 3.0)], 7).ends_with("reactor-0.readEvents=3\n"));
    }
}
