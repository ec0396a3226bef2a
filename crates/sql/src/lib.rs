//! Hazelcast's SQL over maps, independent of the member that runs it.
//!
//! - [`statement`]: a statement's text (parsed with `sqlparser`, plus Hazelcast's mapping DDL)
//!   to [`Prepared`] work; [`plan`]: queries planned over mappings; [`catalog`]: mappings
//!   and how columns are read from entries; [`write`]: rows written back as entries.
//! - [`expr`] and [`functions`]: typed expressions and their evaluation; [`types`]: SQL types
//!   and conversions; [`exec`]: a planned query run over the entries the member scanned.
//! - [`error`]: Hazelcast's SQL error codes.
//!
//! The member does the IO: it scans the maps a plan names (every partition, or the partition
//! of a point lookup's key), runs [`exec::run`] on what it gathered and pages the result out.

pub mod catalog;
pub mod error;
pub mod exec;
pub mod expr;
pub mod functions;
pub mod plan;
pub mod statement;
mod temporal;
pub mod types;
pub mod virtual_tables;
pub mod write;

pub use catalog::{Catalog, Mapping, Samples};
pub use error::{Code, SqlError};
pub use exec::{Entries, ResultSet};
pub use statement::{prepare, prepare_cached, Change, InsertSelect, Prepared, StatementCache};
pub use types::SqlType;
