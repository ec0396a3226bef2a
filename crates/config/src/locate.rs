//! Which configuration file a member reads, in Hazelcast 5's order (`Config.load()` with
//! `XmlConfigLocator` and `YamlConfigLocator`), and the process inputs that decide it.
//!
//! 1. `--config FILE` (any name; the syntax from its extension, else its content);
//! 2. the system property `hazelcast.config` (from `-Dhazelcast.config=FILE` on the command line,
//!    else in `JAVA_OPTS`, which Hazelcast's scripts pass to the JVM after their own);
//! 3. the environment variable `HAZELCAST_CONFIG`, which Hazelcast's `hz` script and Docker images
//!    turn into that system property;
//! 4. `hazelcast.xml`, then `hazelcast.yaml`, then `hazelcast.yml` in the working directory;
//! 5. the embedded defaults.
//!
//! As in Hazelcast, a file named by 2 or 3 must end in `.xml`, `.yaml` or `.yml` and must exist.
//! Hazelcast's class-path look-ups have no equivalent here.

use std::path::{Path, PathBuf};

use crate::error::{invalid, ConfigError};

/// The system property naming the member's configuration file.
pub const CONFIG_PROPERTY: &str = "hazelcast.config";
/// The environment variable Hazelcast's scripts turn into [`CONFIG_PROPERTY`].
pub const CONFIG_VARIABLE: &str = "HAZELCAST_CONFIG";
/// The files looked for in the working directory, in this order.
pub const WORKING_DIRECTORY_FILES: [&str; 3] = ["hazelcast.xml", "hazelcast.yaml", "hazelcast.yml"];

/// What the process was given: its environment, its system properties and where it runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    /// Environment variables, such as `HZ_CLUSTERNAME` or `HAZELCAST_CONFIG`.
    pub variables: Vec<(String, String)>,
    /// `-Dkey=value` settings: those of `JAVA_OPTS` first, then those of the command line, so a
    /// later one of the same name wins, as on a JVM's command line.
    pub system_properties: Vec<(String, String)>,
    /// The directory relative paths and the working-directory files are resolved in.
    pub working_directory: PathBuf,
}

impl Environment {
    /// This process's environment, with `command_line` `-D` settings (`key=value`) after those
    /// of `JAVA_OPTS` (split at whitespace; quotes are not interpreted).
    pub fn of_process(command_line: &[String]) -> std::io::Result<Self> {
        // (`vars()` would panic on a variable that is not UTF-8; such a variable is no override.)
        let variables =
            std::env::vars_os().filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)));
        let variables: Vec<(String, String)> = variables.collect();
        let java_options = variables.iter().find(|(name, _)| name == "JAVA_OPTS").map(|(_, value)| value.as_str());
        let from_java_options =
            java_options.unwrap_or_default().split_whitespace().filter_map(|option| option.strip_prefix("-D"));
        let settings = from_java_options.chain(command_line.iter().map(String::as_str));
        let system_properties = settings.filter_map(split_setting).collect();
        Ok(Self { variables, system_properties, working_directory: std::env::current_dir()? })
    }

    /// The last value of system property `name`.
    pub fn system_property(&self, name: &str) -> Option<&str> {
        self.system_properties.iter().rev().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// The value of environment variable `name`.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

/// `key=value` as a pair; a bare `key` has the empty value, as `-Dkey` has on a JVM.
fn split_setting(setting: &str) -> Option<(String, String)> {
    let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
    (!key.is_empty()).then(|| (key.to_owned(), value.to_owned()))
}

/// Where the configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigOrigin {
    /// The file named by `--config`.
    CommandLine(PathBuf),
    /// The file named by the system property `hazelcast.config`.
    SystemProperty(PathBuf),
    /// The file named by the environment variable `HAZELCAST_CONFIG`.
    EnvironmentVariable(PathBuf),
    /// `hazelcast.xml`, `.yaml` or `.yml` found in the working directory.
    WorkingDirectory(PathBuf),
    /// No file: the embedded defaults.
    Defaults,
}

impl ConfigOrigin {
    /// The file to read, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConfigOrigin::CommandLine(path)
            | ConfigOrigin::SystemProperty(path)
            | ConfigOrigin::EnvironmentVariable(path)
            | ConfigOrigin::WorkingDirectory(path) => Some(path),
            ConfigOrigin::Defaults => None,
        }
    }
}

impl std::fmt::Display for ConfigOrigin {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigOrigin::CommandLine(path) => write!(formatter, "{} (--config)", path.display()),
            ConfigOrigin::SystemProperty(path) => write!(formatter, "{} (system property {CONFIG_PROPERTY})", path.display()),
            ConfigOrigin::EnvironmentVariable(path) => write!(formatter, "{} (environment variable {CONFIG_VARIABLE})", path.display()),
            ConfigOrigin::WorkingDirectory(path) => write!(formatter, "{} (found in the working directory)", path.display()),
            ConfigOrigin::Defaults => write!(formatter, "embedded defaults (no --config, {CONFIG_PROPERTY}, {CONFIG_VARIABLE} or hazelcast.xml/.yaml/.yml in the working directory)"),
        }
    }
}

/// The configuration to read, in the order of the module documentation.
pub fn locate(command_line: Option<&Path>, environment: &Environment) -> Result<ConfigOrigin, ConfigError> {
    let resolve = |path: &str| environment.working_directory.join(path);
    if let Some(path) = command_line {
        return Ok(ConfigOrigin::CommandLine(path.to_owned()));
    }
    if let Some(path) = environment.system_property(CONFIG_PROPERTY) {
        let path = named_file(CONFIG_PROPERTY, resolve(path))?;
        return Ok(ConfigOrigin::SystemProperty(path));
    }
    if let Some(path) = environment.variable(CONFIG_VARIABLE) {
        let path = named_file(CONFIG_VARIABLE, resolve(path))?;
        return Ok(ConfigOrigin::EnvironmentVariable(path));
    }
    let found = WORKING_DIRECTORY_FILES.iter().map(|name| resolve(name)).find(|path| path.is_file());
    Ok(found.map_or(ConfigOrigin::Defaults, ConfigOrigin::WorkingDirectory))
}

/// A file named by a property or variable: it must have a configuration suffix and exist.
fn named_file(setting: &str, path: PathBuf) -> Result<PathBuf, ConfigError> {
    let suffix = path.extension().map(|suffix| suffix.to_string_lossy().to_lowercase());
    if !matches!(suffix.as_deref(), Some("xml" | "yaml" | "yml")) {
        let message = format!("{} does not end in .xml, .yaml or .yml", path.display());
        return Err(invalid(setting, message));
    }
    if !path.is_file() {
        return Err(invalid(setting, format!("config file {} does not exist", path.display())));
    }
    Ok(path)
}
