//! The `ferrogrid-simulator` command: `run`, `compare`, `max-throughput`, `tenants` and
//! `scaling` (see the crate docs and README.md). Results go to `--out` (default `simulator-results/<time>-<test>`);
//! progress goes to stderr, the summary to stdout. Ctrl-C stops the members it started.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use ferrogrid_simulator::cluster::{ClusterSettings, Product};
use ferrogrid_simulator::results::SeriesSummary;
use ferrogrid_simulator::runner::{self, RunSettings, Target};
use ferrogrid_simulator::scaling::{self, ScalingSettings};
use ferrogrid_simulator::search::{self, SearchSettings};
use ferrogrid_simulator::tenants::{self, TenantSpec, TenantsSettings};
use ferrogrid_simulator::{Credentials, SimulatorError, TestDefinition};

#[derive(Parser, Debug)]
#[command(name = "ferrogrid-simulator", version, about = "Load and performance tests for ferrogrid and Hazelcast")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a test file or YCSB workload against one target, --runs times.
    Run(RunArgs),
    /// Run the same test against ferrogrid and Hazelcast (fresh clusters, runs interleaved)
    /// and print the ratios.
    Compare(CompareArgs),
    /// Search the highest open-loop rate whose p99 stays under a bound.
    MaxThroughput(SearchArgs),
    /// Several tenants, each with its own credentials, test file and rate, measured over the
    /// same window against one cluster.
    Tenants(TenantsArgs),
    /// Aggregate throughput as client processes go 1 → 2 → 4 → … at a fixed total of threads.
    Scaling(ScalingArgs),
}

#[derive(Args, Debug)]
struct CommonArgs {
    /// A Simulator test file (class=…) or a YCSB workload file (workload=…).
    file: PathBuf,
    /// Worker tasks (default: the file's threadCount / threadcount).
    #[arg(long)]
    threads: Option<u32>,
    /// Client instances; the workers are spread over them.
    #[arg(long, default_value_t = 1)]
    clients: u32,
    /// Seed of every random choice (keys, values, operations).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One connection per client instead of one per member.
    #[arg(long)]
    unisocket: bool,
    /// Results directory (default: simulator-results/<UTC time>-<test>).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct TimingArgs {
    /// Warm-up seconds before measuring.
    #[arg(long, default_value_t = 10.0)]
    warmup: f64,
    /// Measured seconds.
    #[arg(long, default_value_t = 30.0)]
    duration: f64,
    /// Open loop at this many operations per second (default: the workload's `target`, else
    /// closed loop).
    #[arg(long)]
    rate: Option<f64>,
    /// Repeated runs, each on a fresh cluster when the Simulator starts it.
    #[arg(long, default_value_t = 1)]
    runs: u32,
}

#[derive(Args, Debug)]
struct TargetArgs {
    /// An existing cluster member, host:port (repeatable).
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "start")]
    address: Vec<SocketAddr>,
    /// With --address: the member processes whose CPU to measure (repeatable).
    #[arg(long, value_name = "PID")]
    server_pid: Vec<u32>,
    /// Start a fresh cluster of this product (`run`, `compare`: one per run; `max-throughput`,
    /// `tenants`, `scaling`: one for the command).
    #[arg(long, value_enum)]
    start: Option<Product>,
    /// With --start ferrogrid: the members' configuration file (`ferrogrid member --config FILE`).
    #[arg(long, value_name = "FILE", requires = "start")]
    config: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct ClientArgs {
    /// The cluster name the clients present.
    #[arg(long, default_value = "dev")]
    cluster_name: String,
    /// Username for members with security or tenants (none: no credentials are sent).
    #[arg(long)]
    username: Option<String>,
    /// Password (with --username).
    #[arg(long, requires = "username")]
    password: Option<String>,
}

impl ClientArgs {
    fn credentials(&self) -> Result<Credentials, SimulatorError> {
        Credentials::new(&self.cluster_name, self.username.as_deref(), self.password.as_deref())
    }
}

#[derive(Args, Debug)]
struct ClusterArgs {
    /// Members of a started cluster.
    #[arg(long, default_value_t = 1)]
    members: u32,
    /// Started members listen on the first free ports from here.
    #[arg(long, default_value_t = 5801)]
    base_port: u16,
    /// The ferrogrid binary (default: $CARGO_TARGET_DIR/release/ferrogrid, then
    /// target/release/ferrogrid).
    #[arg(long)]
    ferrogrid_bin: Option<PathBuf>,
    /// The Hazelcast jar (default: ~/.m2/repository/com/hazelcast/hazelcast/5.6.0/hazelcast-5.6.0.jar).
    #[arg(long)]
    hazelcast_jar: Option<PathBuf>,
    #[arg(long, default_value = "java")]
    java: PathBuf,
    /// Seconds the members get to become ready.
    #[arg(long, default_value_t = 120)]
    startup_timeout: u64,
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    timing: TimingArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
    #[command(flatten)]
    client: ClientArgs,
    /// A `scaling` process: no load, start time read from stdin (internal).
    #[arg(long, hide = true)]
    coordinated: bool,
}

#[derive(Args, Debug)]
struct CompareArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    timing: TimingArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
}

#[derive(Args, Debug)]
struct SearchArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
    #[command(flatten)]
    client: ClientArgs,
    /// The p99 bound, in microseconds (all operations, from their intended start).
    #[arg(long)]
    p99_bound_us: f64,
    /// The first rate tried, ops/s.
    #[arg(long, default_value_t = 10_000.0)]
    start_rate: f64,
    /// Warm-up seconds of each step.
    #[arg(long, default_value_t = 2.0)]
    step_warmup: f64,
    /// Measured seconds of each step.
    #[arg(long, default_value_t = 5.0)]
    step_duration: f64,
    /// Most steps tried.
    #[arg(long, default_value_t = 12)]
    max_steps: u32,
    /// Stop when the gap between the best pass and the first failure is below this share.
    #[arg(long, default_value_t = 0.05)]
    precision: f64,
}

#[derive(Args, Debug)]
struct TenantsArgs {
    /// A tenant: its name, credentials (empty: none), test file and optional open-loop rate
    /// in ops/s (repeatable).
    #[arg(long = "tenant", value_name = "NAME:USERNAME:PASSWORD:TEST_FILE[:RATE]", required = true)]
    tenants: Vec<String>,
    /// Worker tasks of one tenant (default: its file's threadCount / threadcount; repeatable).
    #[arg(long = "tenant-threads", value_name = "NAME:N")]
    tenant_threads: Vec<String>,
    /// The cluster name every tenant's clients present.
    #[arg(long, default_value = "dev")]
    cluster_name: String,
    /// Client instances per tenant.
    #[arg(long, default_value_t = 1)]
    clients: u32,
    /// Seed of every random choice (tenant i uses seed + i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One connection per client instead of one per member.
    #[arg(long)]
    unisocket: bool,
    /// Results directory (default: simulator-results/<UTC time>-tenants).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Warm-up seconds before measuring (every tenant at once).
    #[arg(long, default_value_t = 10.0)]
    warmup: f64,
    /// Measured seconds (the same window for every tenant).
    #[arg(long, default_value_t = 30.0)]
    duration: f64,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
}

#[derive(Args, Debug)]
struct ScalingArgs {
    /// A Simulator test file (class=…) or a YCSB workload file (workload=…).
    file: PathBuf,
    /// Client processes of each step, in order.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,12")]
    processes: Vec<u32>,
    /// Worker tasks over all processes of a step (split evenly, the first processes take the
    /// remainder).
    #[arg(long, default_value_t = 48)]
    total_threads: u32,
    /// Runs per step (min/avg/max reported).
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Client instances per process.
    #[arg(long, default_value_t = 1)]
    clients: u32,
    /// Seed of every random choice (process i uses seed + i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One connection per client instead of one per member.
    #[arg(long)]
    unisocket: bool,
    /// Results directory (default: simulator-results/<UTC time>-scaling-<test>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Warm-up seconds before measuring.
    #[arg(long, default_value_t = 10.0)]
    warmup: f64,
    /// Measured seconds.
    #[arg(long, default_value_t = 30.0)]
    duration: f64,
    /// Open loop at this total rate, split over the processes (default: the workload's
    /// `target`, also a total, else closed loop).
    #[arg(long)]
    rate: Option<f64>,
    /// Seconds the processes of a step get to connect.
    #[arg(long, default_value_t = 120)]
    ready_timeout: u64,
    #[command(flatten)]
    client: ClientArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = execute(cli.command) => outcome,
            _ = tokio::signal::ctrl_c() => Err(SimulatorError::Interrupted),
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(command: Command) -> Result<(), SimulatorError> {
    match command {
        Command::Run(args) => run(args).await,
        Command::Compare(args) => compare(args).await,
        Command::MaxThroughput(args) => max_throughput(args).await,
        Command::Tenants(args) => run_tenants(args).await,
        Command::Scaling(args) => run_scaling(args).await,
    }
}

async fn run(args: RunArgs) -> Result<(), SimulatorError> {
    let definition = TestDefinition::read(&args.common.file)?;
    let credentials = args.client.credentials()?;
    let target = target(&args.target, &args.cluster, &credentials)?;
    let mut settings = run_settings(&args.common, &args.timing, credentials)?;
    settings.coordinated = args.coordinated;
    if args.coordinated && (args.timing.runs != 1 || args.target.start.is_some()) {
        return Err(SimulatorError::Input("--coordinated: one run against --address".into()));
    }
    let out = output_directory(&args.common, &definition);
    let series = runner::run_series(&definition, &[target], &settings, args.timing.runs, &out).await?;
    if !settings.coordinated {
        runner::write_summaries(&out, &definition, &series)?;
    }
    for (label, runs) in &series {
        println!("{}", SeriesSummary::of(label, runs).text());
    }
    println!("results: {}", out.display());
    Ok(())
}

async fn compare(args: CompareArgs) -> Result<(), SimulatorError> {
    let definition = TestDefinition::read(&args.common.file)?;
    let targets = [
        Target::Start(cluster_settings(Product::Ferrogrid, &args.cluster, None, &Credentials::default())),
        Target::Start(cluster_settings(Product::Hazelcast, &args.cluster, None, &Credentials::default())),
    ];
    let settings = run_settings(&args.common, &args.timing, Credentials::default())?;
    let out = output_directory(&args.common, &definition);
    let series = runner::run_series(&definition, &targets, &settings, args.timing.runs, &out).await?;
    let comparison = runner::write_summaries(&out, &definition, &series)?.expect("two targets compare");
    println!("{}", comparison.a.text());
    println!("{}", comparison.b.text());
    println!();
    print!("{}", comparison.text());
    println!("results: {}  (report: {})", out.display(), out.join("report.html").display());
    Ok(())
}

async fn max_throughput(args: SearchArgs) -> Result<(), SimulatorError> {
    let definition = TestDefinition::read(&args.common.file)?;
    let credentials = args.client.credentials()?;
    let target = target(&args.target, &args.cluster, &credentials)?;
    let settings = RunSettings {
        threads: args.common.threads,
        clients: args.common.clients,
        warmup: Duration::ZERO,
        duration: seconds(args.step_duration, "--step-duration")?,
        rate: None,
        seed: args.common.seed,
        smart_routing: !args.common.unisocket,
        credentials,
        coordinated: false,
    };
    let search_settings = SearchSettings {
        p99_bound_us: args.p99_bound_us,
        start_rate: args.start_rate,
        step_warmup: seconds(args.step_warmup, "--step-warmup")?,
        step_duration: seconds(args.step_duration, "--step-duration")?,
        max_steps: args.max_steps,
        precision: args.precision,
    };
    let out = output_directory(&args.common, &definition);
    let result = search::search(&definition, &target, &settings, &search_settings, &out).await?;
    match &result.best {
        Some(best) => println!(
            "{}: maximum throughput with p99 ≤ {:.0} µs: {:.0} ops/s target ({:.0} ops/s achieved, p99 {:.0} µs)",
            result.target, result.p99_bound_us, best.target_ops_per_second, best.ops_per_second, best.p99_us
        ),
        None => println!("{}: no rate tried kept p99 ≤ {:.0} µs", result.target, result.p99_bound_us),
    }
    println!("results: {}", out.display());
    Ok(())
}

async fn run_tenants(args: TenantsArgs) -> Result<(), SimulatorError> {
    let mut tenants = args.tenants.iter().map(|text| TenantSpec::parse(text)).collect::<Result<Vec<_>, _>>()?;
    for text in &args.tenant_threads {
        tenants::set_threads(&mut tenants, text)?;
    }
    let cluster_credentials = Credentials::new(&args.cluster_name, None, None)?;
    let target = target(&args.target, &args.cluster, &cluster_credentials)?;
    let settings = TenantsSettings {
        tenants,
        cluster_name: args.cluster_name.clone(),
        clients: args.clients,
        warmup: seconds(args.warmup, "--warmup")?,
        duration: seconds(args.duration, "--duration")?,
        seed: args.seed,
        smart_routing: !args.unisocket,
    };
    let out = args.out.clone().unwrap_or_else(tenants::default_output_directory);
    let (result, _) = tenants::run(&settings, &target, &out).await?;
    print!("{}", result.text());
    println!("results: {}  (tenants.json, report.html)", out.display());
    Ok(())
}

async fn run_scaling(args: ScalingArgs) -> Result<(), SimulatorError> {
    let definition = TestDefinition::read(&args.file)?;
    let credentials = args.client.credentials()?;
    let target = target(&args.target, &args.cluster, &credentials)?;
    let program = std::env::current_exe()
        .map_err(|error| SimulatorError::Input(format!("cannot find the Simulator's own binary: {error}")))?;
    let settings = ScalingSettings {
        processes: args.processes.clone(),
        total_threads: args.total_threads,
        repeat: args.repeat,
        clients: args.clients,
        warmup: seconds(args.warmup, "--warmup")?,
        duration: seconds(args.duration, "--duration")?,
        rate: args.rate,
        seed: args.seed,
        smart_routing: !args.unisocket,
        credentials,
        program,
        ready_timeout: std::time::Duration::from_secs(args.ready_timeout),
    };
    let out = args.out.clone().unwrap_or_else(|| scaling::default_output_directory(&definition));
    let result = scaling::scaling(&args.file, &definition, &target, &settings, &out).await?;
    println!("{}", result.text());
    println!("results: {}  (scaling.json, scaling.csv)", out.display());
    Ok(())
}

fn target(target: &TargetArgs, cluster: &ClusterArgs, credentials: &Credentials) -> Result<Target, SimulatorError> {
    match (target.start, target.address.is_empty()) {
        (Some(product), true) => {
            Ok(Target::Start(cluster_settings(product, cluster, target.config.clone(), credentials)))
        }
        (None, false) => {
            Ok(Target::Existing { addresses: target.address.clone(), server_pids: target.server_pid.clone() })
        }
        (None, true) => {
            Err(SimulatorError::Input("name a target: --address HOST:PORT or --start ferrogrid|hazelcast".into()))
        }
        (Some(_), false) => Err(SimulatorError::Input("--address and --start exclude each other".into())),
    }
}

fn cluster_settings(
    product: Product,
    args: &ClusterArgs,
    member_config: Option<PathBuf>,
    credentials: &Credentials,
) -> ClusterSettings {
    ClusterSettings {
        product,
        members: args.members,
        base_port: args.base_port,
        ferrogrid_binary: args.ferrogrid_bin.clone(),
        hazelcast_jar: args.hazelcast_jar.clone().unwrap_or_else(ClusterSettings::default_hazelcast_jar),
        java: args.java.clone(),
        startup_timeout: Duration::from_secs(args.startup_timeout),
        member_config,
        credentials: credentials.clone(),
    }
}

fn run_settings(
    common: &CommonArgs,
    timing: &TimingArgs,
    credentials: Credentials,
) -> Result<RunSettings, SimulatorError> {
    Ok(RunSettings {
        threads: common.threads,
        clients: common.clients,
        warmup: seconds(timing.warmup, "--warmup")?,
        duration: seconds(timing.duration, "--duration")?,
        rate: timing.rate,
        seed: common.seed,
        smart_routing: !common.unisocket,
        credentials,
        coordinated: false,
    })
}

fn seconds(value: f64, option: &str) -> Result<Duration, SimulatorError> {
    Duration::try_from_secs_f64(value).map_err(|_| SimulatorError::Input(format!("{option} {value}: seconds ≥ 0")))
}

fn output_directory(common: &CommonArgs, definition: &TestDefinition) -> PathBuf {
    common.out.clone().unwrap_or_else(|| runner::default_output_directory(definition))
}
