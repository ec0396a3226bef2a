//! The `ferrogrid` command.
//!
//! `ferrogrid member` reads its configuration as Hazelcast does: `--config FILE`, else the
//! `hazelcast.config` system property (`-Dhazelcast.config=FILE` here or in `JAVA_OPTS`), else
//! `HAZELCAST_CONFIG`, else `hazelcast.xml`, `.yaml` or `.yml` in the working directory, else
//! embedded defaults (cluster `dev`, 127.0.0.1:5701 with auto-increment, 271 partitions). `HZ_*`
//! environment variables and `-Dhz.*` system properties override the file, and flags override
//! everything. SIGTERM or SIGINT stops the member.

use clap::{Parser, Subcommand};
use ferrogrid_config::{Environment, MemberConfig};
use ferrogrid_member::Member;
use std::path::PathBuf;
use std::process::ExitCode;
use tracing::{error, info, warn};

/// The member allocates from mimalloc, not glibc's malloc: a query's or a fan-out's buffers are
/// allocated on one reactor and freed on another, which glibc pays for with arena locks and
/// consolidation (BENCHMARKS.md, "The allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(name = "ferrogrid", version, about = "An in-memory data grid that speaks the Hazelcast client protocol")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start a member and serve until SIGTERM/SIGINT.
    Member(MemberArgs),
    /// Print a running member's probes as a table (from its metrics endpoint).
    Metrics(MetricsArgs),
}

#[derive(Parser, Debug)]
struct MetricsArgs {
    /// The member's metrics endpoint, host:port.
    #[arg(long, default_value = "127.0.0.1:9701")]
    address: String,
    /// Only probes whose name or labels contain this text.
    #[arg(long)]
    filter: Option<String>,
}

#[derive(Parser, Debug)]
struct MemberArgs {
    /// A hazelcast.xml- or hazelcast.yaml-shaped configuration file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A system property, as on Hazelcast's JVM command line: `-Dhazelcast.config=FILE` names
    /// the configuration file, `-Dhz.cluster-name=NAME` overrides a setting (repeatable; after
    /// those of JAVA_OPTS).
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    system_properties: Vec<String>,
    /// The member's port (overrides hazelcast.network.port, or with an advanced network the
    /// member endpoint's port; clients then use the client endpoint).
    #[arg(long)]
    port: Option<u16>,
    /// Fail instead of trying the next port when the port is taken.
    #[arg(long)]
    no_port_auto_increment: bool,
    /// Address to bind (overrides the config; with an advanced network, the member endpoint's);
    /// advertised unless a public address is set.
    #[arg(long)]
    host: Option<String>,
    /// Cluster name clients must present (overrides hazelcast.cluster-name).
    #[arg(long)]
    cluster_name: Option<String>,
    /// Another member's address, host:port (repeatable; adds to the tcp-ip member list).
    #[arg(long = "member", value_name = "HOST:PORT")]
    members: Vec<String>,
    /// Reactor threads (0 = one per core).
    #[arg(long)]
    reactor_threads: Option<usize>,
    /// Microseconds a reactor that had work looks for more before it sleeps (0 = never spin).
    #[arg(long)]
    reactor_spin_micros: Option<u64>,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("FERROGRID_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Member(args) => run_member(args),
        Command::Metrics(args) => print_metrics(args),
    }
}

/// Fetches `/metrics` and prints one aligned row per probe: name, labels, value.
fn print_metrics(args: MetricsArgs) -> ExitCode {
    let text = match fetch_metrics(&args.address) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("cannot read metrics from {}: {error}", args.address);
            return ExitCode::FAILURE;
        }
    };
    let rows: Vec<(&str, &str, &str)> = text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter(|line| args.filter.as_deref().is_none_or(|filter| line.contains(filter)))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (name, labels) =
                series.split_once('{').map_or((series, ""), |(name, rest)| (name, rest.trim_end_matches('}')));
            Some((name.trim_start_matches("ferrogrid_"), labels, value))
        })
        .collect();
    let name_width = rows.iter().map(|row| row.0.len()).max().unwrap_or(0);
    let label_width = rows.iter().map(|row| row.1.len()).max().unwrap_or(0);
    println!("{:name_width$}  {:label_width$}  VALUE", "PROBE", "LABELS");
    for (name, labels, value) in rows {
        println!("{name:name_width$}  {labels:label_width$}  {value:>14}");
    }
    ExitCode::SUCCESS
}

fn fetch_metrics(address: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.take(64 << 20).read_to_string(&mut response)?;
    let (head, body) =
        response.split_once("\r\n\r\n").ok_or_else(|| std::io::Error::other("malformed HTTP response"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(std::io::Error::other(head.lines().next().unwrap_or("").to_owned()));
    }
    Ok(body.to_owned())
}

fn load_config(args: &MemberArgs) -> Result<MemberConfig, String> {
    let environment = Environment::of_process(&args.system_properties)
        .map_err(|e| format!("cannot read the working directory: {e}"))?;
    let (origin, loaded) = MemberConfig::load(args.config.as_deref(), &environment).map_err(|e| e.to_string())?;
    info!("configuration: {origin}");
    for applied in &loaded.overrides {
        info!(key = applied.key, value = applied.shown_value, "configuration override from {}", applied.source);
    }
    for key in &loaded.unsupported_keys {
        warn!(key, "configuration key not supported by ferrogrid; ignored");
    }
    let mut config = loaded.config;
    if let Some(port) = args.port {
        config.network.port = port;
    }
    if args.no_port_auto_increment {
        config.network.port_auto_increment = false;
    }
    if let Some(host) = &args.host {
        config.network.host = host.clone();
    }
    if let Some(cluster_name) = &args.cluster_name {
        config.cluster_name = cluster_name.clone();
    }
    config.network.member_list.extend(args.members.iter().cloned());
    if let Some(threads) = args.reactor_threads {
        config.reactor_threads = threads;
    }
    if let Some(micros) = args.reactor_spin_micros {
        config.reactor_spin_micros = micros;
    }
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

fn run_member(args: MemberArgs) -> ExitCode {
    let config = match load_config(&args) {
        Ok(config) => config,
        Err(message) => {
            error!("configuration error: {message}");
            return ExitCode::from(2);
        }
    };
    let mut signals =
        match signal_hook::iterator::Signals::new([signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT]) {
            Ok(signals) => signals,
            Err(e) => {
                error!("cannot install signal handlers: {e}");
                return ExitCode::FAILURE;
            }
        };
    let member = match Member::start(config) {
        Ok(member) => member,
        Err(e) => {
            error!("cannot start member: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("ferrogrid member listening on {}", member.address());
    loop {
        if let Some(signal) = signals.pending().next() {
            info!(signal, "stopping: handing partitions off to the other members");
            break;
        }
        if let Some(failure) = member.failure() {
            error!("member stopped: {failure}");
            member.shutdown();
            return ExitCode::from(3);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    member.leave(std::time::Duration::from_secs(120));
    ExitCode::SUCCESS
}
