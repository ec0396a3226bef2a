//! Fresh clusters for runs: member processes started, waited for, measured and stopped.
//!
//! - ferrogrid: `ferrogrid member [--config FILE] --port P --no-port-auto-increment
//!   --member 127.0.0.1:Q …`, one process per member, each given every member's address (and
//!   the member configuration file, if any: tenants, security, limits; the flags override its
//!   port and add to its member list).
//! - Hazelcast: `java -Xms1g -Xmx1g -Dhazelcast.phone.home.enabled=false
//!   -Dhazelcast.config=<yaml> -cp <hazelcast-5.6.0.jar> com.hazelcast.core.server.HazelcastMemberStarter`,
//!   with a `hazelcast-<n>.yaml` per member (cluster `dev`, its port without auto-increment,
//!   no multicast, a tcp-ip member list of every member on 127.0.0.1, interface 127.0.0.1)
//!   written into the run directory. A missing default jar is fetched with `mvn dependency:get`.
//!
//! Members run with the run directory as working directory and their output in
//! `member-<n>.log` there. Ready means: every port accepts, and a client (with the settings'
//! credentials, for members that require them) sees all members.
//! Stopping sends SIGTERM, waits up to [`STOP_GRACE`], then kills. [`Cluster`] stops its
//! members when dropped too, so an error or a panic does not leave them running.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferrogrid_client::{Client, ClientConfig};
use serde::Serialize;

use crate::driver::Credentials;
use crate::error::SimulatorError;

/// The Hazelcast release started by default.
pub const HAZELCAST_VERSION: &str = "5.6.0";
/// How long members get to exit after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(15);
/// Ports scanned above the base port for free ones.
const PORT_SCAN: u16 = 1000;
/// Pause between readiness checks.
const READY_POLL: Duration = Duration::from_millis(250);
/// Log lines shown when a member dies during start-up.
const LOG_TAIL_LINES: usize = 20;

/// The products a run can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Product {
    Ferrogrid,
    Hazelcast,
}

impl Product {
    pub fn name(self) -> &'static str {
        match self {
            Product::Ferrogrid => "ferrogrid",
            Product::Hazelcast => "hazelcast",
        }
    }
}

/// How to start a cluster.
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    pub product: Product,
    pub members: u32,
    /// Member ports are the first free ones from here up.
    pub base_port: u16,
    /// The `ferrogrid` binary; None: `$CARGO_TARGET_DIR/release/ferrogrid`, then
    /// `target/release/ferrogrid`.
    pub ferrogrid_binary: Option<PathBuf>,
    pub hazelcast_jar: PathBuf,
    pub java: PathBuf,
    /// Longest wait for the members to be ready.
    pub startup_timeout: Duration,
    /// ferrogrid only: the members' configuration file (`ferrogrid member --config FILE`).
    pub member_config: Option<PathBuf>,
    /// What the readiness check's client authenticates with.
    pub credentials: Credentials,
}

impl ClusterSettings {
    /// Refuses what cannot be started, before anything is.
    pub fn validate(&self) -> Result<(), SimulatorError> {
        if self.members == 0 {
            return Err(SimulatorError::Input("--members: at least 1".into()));
        }
        if let Some(config) = &self.member_config {
            if self.product != Product::Ferrogrid {
                return Err(SimulatorError::Input("--config: for ferrogrid members only".into()));
            }
            if !config.is_file() {
                return Err(SimulatorError::Input(format!("--config {}: no such file", config.display())));
            }
        }
        match self.product {
            Product::Ferrogrid => self.ferrogrid_path().map(drop),
            Product::Hazelcast if !self.hazelcast_jar.is_file() => Err(SimulatorError::Input(format!(
                "Hazelcast jar {} not found; fetch it with `mvn dependency:get -Dartifact=com.hazelcast:hazelcast:5.6.0` \
                 or pass --hazelcast-jar",
                self.hazelcast_jar.display()
            ))),
            Product::Hazelcast => Ok(()),
        }
    }

    fn ferrogrid_path(&self) -> Result<PathBuf, SimulatorError> {
        if let Some(path) = &self.ferrogrid_binary {
            return if path.is_file() {
                Ok(path.clone())
            } else {
                Err(SimulatorError::Input(format!("--ferrogrid-bin {}: no such file", path.display())))
            };
        }
        let mut candidates = Vec::new();
        if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
            candidates.push(PathBuf::from(target).join("release/ferrogrid"));
        }
        candidates.push(PathBuf::from("target/release/ferrogrid"));
        candidates.iter().find(|path| path.is_file()).cloned().ok_or_else(|| {
            SimulatorError::Input(format!(
                "no ferrogrid binary at {}; build it with `cargo build --release -p ferrogrid` or pass --ferrogrid-bin",
                candidates.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(" or ")
            ))
        })
    }

    /// The default jar: Maven's local repository.
    pub fn default_hazelcast_jar() -> PathBuf {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(format!(
            ".m2/repository/com/hazelcast/hazelcast/{HAZELCAST_VERSION}/hazelcast-{HAZELCAST_VERSION}.jar"
        ))
    }

    /// Fetches the default Hazelcast jar with Maven (`mvn dependency:get`) when a Hazelcast
    /// cluster is to be started and the jar is missing. A jar given with `--hazelcast-jar` is
    /// never fetched.
    pub fn fetch_missing_jar(&self) -> Result<(), SimulatorError> {
        let default = ClusterSettings::default_hazelcast_jar();
        if self.product != Product::Hazelcast || self.hazelcast_jar.is_file() || self.hazelcast_jar != default {
            return Ok(());
        }
        let artifact = format!("-Dartifact=com.hazelcast:hazelcast:{HAZELCAST_VERSION}");
        eprintln!("{} is missing: fetching it with `mvn -q dependency:get {artifact}`…", default.display());
        match Command::new("mvn").args(["-q", "dependency:get", &artifact]).stdin(Stdio::null()).status() {
            Ok(status) if status.success() && default.is_file() => Ok(()),
            Ok(status) => Err(SimulatorError::Cluster(format!("mvn dependency:get {artifact} failed ({status})"))),
            Err(error) => Err(SimulatorError::Input(format!(
                "the Hazelcast jar is missing and mvn cannot run ({error}): install Maven or pass --hazelcast-jar"
            ))),
        }
    }
}

/// A member process.
#[derive(Debug)]
struct MemberProcess {
    child: Child,
    port: u16,
    log: PathBuf,
}

/// Running members, stopped on drop.
#[derive(Debug)]
pub struct Cluster {
    pub product: Product,
    members: Vec<MemberProcess>,
    pub addresses: Vec<SocketAddr>,
}

impl Cluster {
    /// Starts the members, with `directory` (created) for their configuration and logs, and
    /// waits until they are ready.
    pub async fn start(settings: &ClusterSettings, directory: &Path) -> Result<Cluster, SimulatorError> {
        settings.validate()?;
        std::fs::create_dir_all(directory).map_err(SimulatorError::io(directory))?;
        let ports = free_ports(settings.base_port, settings.members)?;
        let mut cluster = Cluster {
            product: settings.product,
            members: Vec::new(),
            addresses: ports.iter().map(|&port| SocketAddr::from(([127, 0, 0, 1], port))).collect(),
        };
        for (index, &port) in ports.iter().enumerate() {
            let log = directory.join(format!("member-{}.log", index + 1));
            let mut command = match settings.product {
                Product::Ferrogrid => {
                    ferrogrid_command(&settings.ferrogrid_path()?, settings.member_config.as_deref(), port, &ports)
                }
                Product::Hazelcast => hazelcast_command(settings, &write_hazelcast_yaml(directory, index, &ports)?),
            };
            let output = File::create(&log).map_err(SimulatorError::io(&log))?;
            let errors = output.try_clone().map_err(SimulatorError::io(&log))?;
            command.current_dir(directory).stdin(Stdio::null()).stdout(output).stderr(errors);
            let child = command.spawn().map_err(|error| {
                SimulatorError::Cluster(format!("cannot start {:?}: {error}", command.get_program()))
            })?;
            cluster.members.push(MemberProcess { child, port, log });
        }
        cluster.wait_ready(settings.startup_timeout, &settings.credentials).await?;
        Ok(cluster)
    }

    pub fn pids(&self) -> Vec<u32> {
        self.members.iter().map(|member| member.child.id()).collect()
    }

    async fn wait_ready(&mut self, timeout: Duration, credentials: &Credentials) -> Result<(), SimulatorError> {
        let deadline = Instant::now() + timeout;
        let expected = self.members.len();
        let mut last_problem = String::from("ports not open yet");
        while Instant::now() < deadline {
            for member in &mut self.members {
                if let Ok(Some(status)) = member.child.try_wait() {
                    return Err(SimulatorError::Cluster(format!(
                        "{} member on port {} exited during start-up ({status}); end of {}:\n{}",
                        self.product.name(),
                        member.port,
                        member.log.display(),
                        log_tail(&member.log)
                    )));
                }
            }
            if all_accept(&self.addresses).await {
                let config = credentials.apply(ClientConfig {
                    addresses: self.addresses.clone(),
                    connect_timeout: Duration::from_secs(5),
                    ..Default::default()
                });
                match Client::connect(config).await {
                    Ok(client) => {
                        let members = client.members().len();
                        client.shutdown().await;
                        if members == expected {
                            return Ok(());
                        }
                        last_problem = format!("{members} of {expected} members in the cluster");
                    }
                    Err(error) => last_problem = error.to_string(),
                }
            }
            tokio::time::sleep(READY_POLL).await;
        }
        Err(SimulatorError::Cluster(format!(
            "{} members not ready within {timeout:?}: {last_problem} (logs: {})",
            self.product.name(),
            self.members.iter().map(|member| member.log.display().to_string()).collect::<Vec<_>>().join(", ")
        )))
    }

    /// SIGTERM to every member, then SIGKILL to those still running after [`STOP_GRACE`].
    pub fn stop(&mut self) {
        for member in &mut self.members {
            if matches!(member.child.try_wait(), Ok(None)) {
                let _ = Command::new("kill")
                    .args(["-TERM", &member.child.id().to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
        let deadline = Instant::now() + STOP_GRACE;
        for member in &mut self.members {
            loop {
                if !matches!(member.child.try_wait(), Ok(None)) {
                    break;
                }
                if Instant::now() >= deadline {
                    let _ = member.child.kill();
                    let _ = member.child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.members.clear();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// True when every address accepts a TCP connection.
async fn all_accept(addresses: &[SocketAddr]) -> bool {
    for address in addresses {
        if tokio::net::TcpStream::connect(address).await.is_err() {
            return false;
        }
    }
    true
}

fn ferrogrid_command(binary: &Path, config: Option<&Path>, port: u16, ports: &[u16]) -> Command {
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut command = Command::new(absolute(binary));
    command.arg("member");
    if let Some(config) = config {
        command.arg("--config").arg(absolute(config));
    }
    command.args(["--port", &port.to_string(), "--no-port-auto-increment"]);
    if ports.len() > 1 {
        for member in ports {
            command.args(["--member", &format!("127.0.0.1:{member}")]);
        }
    }
    command
}

fn hazelcast_command(settings: &ClusterSettings, config: &Path) -> Command {
    let mut command = Command::new(&settings.java);
    command
        .args(["-Xms1g", "-Xmx1g", "-Dhazelcast.phone.home.enabled=false"])
        .arg(format!("-Dhazelcast.config={}", config.display()))
        .arg("-cp")
        .arg(std::path::absolute(&settings.hazelcast_jar).unwrap_or_else(|_| settings.hazelcast_jar.clone()))
        .arg("com.hazelcast.core.server.HazelcastMemberStarter");
    command
}

/// Writes member `index`'s `hazelcast-<index>.yaml`; returns its absolute path.
fn write_hazelcast_yaml(directory: &Path, index: usize, ports: &[u16]) -> Result<PathBuf, SimulatorError> {
    let file = directory.join(format!("hazelcast-{}.yaml", index + 1));
    let path = std::path::absolute(&file).map_err(SimulatorError::io(&file))?;
    std::fs::write(&path, hazelcast_yaml_for(ports[index], ports)).map_err(SimulatorError::io(&path))?;
    Ok(path)
}

/// The YAML for the member on `port` of a cluster on `ports`.
fn hazelcast_yaml_for(port: u16, ports: &[u16]) -> String {
    let members: Vec<String> = ports.iter().map(|port| format!("\"127.0.0.1:{port}\"")).collect();
    format!(
        "hazelcast:\n  cluster-name: dev\n  network:\n    port: {{port: {port}, auto-increment: false}}\n    join:\n      \
         multicast: {{enabled: false}}\n      tcp-ip: {{enabled: true, member-list: [{}]}}\n    interfaces: {{enabled: true, \
         interfaces: [\"127.0.0.1\"]}}\n",
        members.join(", ")
    )
}

/// The first `count` ports from `base` up that can be bound on 127.0.0.1 now.
fn free_ports(base: u16, count: u32) -> Result<Vec<u16>, SimulatorError> {
    let ports: Vec<u16> = (base..=base.saturating_add(PORT_SCAN))
        .filter(|&port| TcpListener::bind(("127.0.0.1", port)).is_ok())
        .take(count as usize)
        .collect();
    if ports.len() < count as usize {
        return Err(SimulatorError::Cluster(format!("fewer than {count} free ports in {base}..{}", base + PORT_SCAN)));
    }
    Ok(ports)
}

pub(crate) fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hazelcast_yaml_lists_every_member() {
        let yaml = hazelcast_yaml_for(5801, &[5801, 5802]);
        assert!(yaml.contains("port: {port: 5801, auto-increment: false}"), "{yaml}");
        assert!(yaml.contains("member-list: [\"127.0.0.1:5801\", \"127.0.0.1:5802\"]"), "{yaml}");
        assert!(yaml.contains("multicast: {enabled: false}") && yaml.contains("cluster-name: dev"), "{yaml}");
    }

    #[test]
    fn a_missing_jar_is_refused_and_ferrogrid_members_know_each_other() {
        let settings = ClusterSettings {
            product: Product::Hazelcast,
            members: 3,
            base_port: 5801,
            ferrogrid_binary: None,
            hazelcast_jar: "/nope.jar".into(),
            java: "java".into(),
            startup_timeout: Duration::from_secs(1),
            member_config: None,
            credentials: Credentials::default(),
        };
        assert!(settings.validate().unwrap_err().to_string().contains("/nope.jar"));
        let with_config = ClusterSettings { member_config: Some("/etc/hostname".into()), ..settings.clone() };
        assert!(with_config.validate().unwrap_err().to_string().contains("ferrogrid members only"));
        let command = ferrogrid_command(Path::new("/bin/ferrogrid"), None, 5802, &[5801, 5802]);
        let args: Vec<_> = command.get_args().map(|arg| arg.to_string_lossy().into_owned()).collect();
        assert_eq!(
            args,
            [
                "member",
                "--port",
                "5802",
                "--no-port-auto-increment",
                "--member",
                "127.0.0.1:5801",
                "--member",
                "127.0.0.1:5802"
            ]
        );
        let command = ferrogrid_command(Path::new("/bin/ferrogrid"), Some(Path::new("/t/tenants.yaml")), 5801, &[5801]);
        let args: Vec<_> = command.get_args().map(|arg| arg.to_string_lossy().into_owned()).collect();
        assert_eq!(args, ["member", "--config", "/t/tenants.yaml", "--port", "5801", "--no-port-auto-increment"]);
    }

    #[test]
    fn free_ports_are_bindable() {
        let ports = free_ports(20_000, 2).unwrap();
        assert_eq!(ports.len(), 2);
        assert!(ports[0] < ports[1]);
    }
}
