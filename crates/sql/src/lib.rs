//! Hazelcast's SQL over maps, independent of the member that runs it.
//!
//! - [`statement`]: a statement's text (parsed with `sqlparser`, plus Hazelcast's mapping DDL)
//!   to [`Prepared`] work; [`plan`]: queries planned over mappings (and over the
//!   [`virtual_tables`], which plan a source of their own); [`catalog`]: mappings and how
//!   columns are read from entries; [`write`]: rows written back as entries.
//! - [`expr`] and its [`functions`]: typed expressions and their evaluation; [`types`]: SQL
//!   types and conversions; [`exec`]: a planned query run over the entries the member scanned,
//!   or over the parts each partition's share sent ([`exec::parts`]).
//! - [`error`]: Hazelcast's SQL error codes.
//!
//! Each module uses only the ones listed after it, read bottom up: `error`, `types`,
//! `catalog`, `expr`, `plan`, `write`, `exec`, `statement`.
//!
//! The member does the IO: its shares scan the partitions of the maps a plan names (every
//! partition, a point lookup's key's, or the candidates of an index) with an
//! [`exec::PartScanner`], the coordinator runs [`exec::run_parts`] on what they sent and pages
//! the result out.

pub mod catalog;
pub mod error;
pub mod exec;
pub mod expr;
pub mod plan;
pub mod statement;
pub mod types;
pub mod write;

pub use catalog::{Catalog, Mapping, Samples};
pub use error::{Code, SqlError};
pub use exec::{Entries, ResultSet};
pub use expr::functions;
pub use plan::virtual_tables;
pub use statement::{prepare, prepare_cached, Change, InsertSelect, Prepared, StatementCache};
pub use types::SqlType;
