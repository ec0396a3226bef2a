//! Errors from loading and validating a member configuration.
//!
//! Every error about a value names the dotted key it came from, the same in YAML and XML (for example
//! `hazelcast.network.port`) and what was expected, so a user can fix the file without reading code.

use std::path::PathBuf;

/// Why a configuration could not be loaded or is not acceptable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Io {
        /// The file that was being read.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// The config file is larger than [`crate::MAX_CONFIG_FILE_BYTES`].
    #[error("config file {} is larger than the limit of {limit_bytes} bytes", path.display())]
    FileTooLarge {
        /// The file that was being read.
        path: PathBuf,
        /// The limit it exceeded.
        limit_bytes: u64,
    },
    /// The text is not well-formed YAML.
    #[error("config is not valid YAML: {0}")]
    Yaml(#[from] serde_yaml::Error),
    /// The text is not well-formed XML, or breaks a bound of the XML reader (a DTD, nesting
    /// deeper than [`crate::MAX_XML_DEPTH`], a repeated named section).
    #[error("config is not valid XML at line {line}, column {column}: {message}")]
    Xml {
        /// Line of the offending text, from 1.
        line: u32,
        /// Column of the offending text, from 1.
        column: u32,
        /// What was wrong.
        message: String,
    },
    /// An error in the file [`crate::MemberConfig::load`] read.
    #[error("{}: {source}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What was wrong with it.
        source: Box<ConfigError>,
    },
    /// A recognised key has a value of the wrong type, outside its bounds, or inconsistent with
    /// another setting.
    #[error("invalid value for `{key}`: {message}")]
    InvalidValue {
        /// Dotted path of the offending key, e.g. `hazelcast.map.orders.backup-count`.
        key: String,
        /// What was wrong and what was expected.
        message: String,
    },
}

/// Shorthand for [`ConfigError::InvalidValue`].
pub(crate) fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::InvalidValue { key: key.into(), message: message.into() }
}
