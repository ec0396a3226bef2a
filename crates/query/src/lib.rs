//! What queries need to know about values, independent of the member that runs them.
//!
//! - [`schema`]: Compact schemas (a type name and its fields' names and kinds) and the id every
//!   client and member gives a schema, its 64-bit Rabin fingerprint.
//! - [`value`]: one attribute's value as Hazelcast's query engine sees it, with its comparisons;
//!   [`convert`]: how a predicate's value is converted to an attribute's type; [`number`] and
//!   [`temporal`]: Java's `BigDecimal`, number text, dates and times; [`error`]: what can fail.
//! - [`data`], [`compact`], [`portable`], [`json`]: reading a serialized value (a `Data` blob as
//!   the clients write it) without its class: built-in types, Compact records (with the schemas
//!   the member holds), Portable records and `HazelcastJsonValue`.
//! - [`path`]: attribute paths as Hazelcast resolves them (`this`, `__key`, `a.b.c`, `arr[2]`,
//!   `arr[any]`), their syntax in `attribute.rs`.
//! - [`predicate`], [`sql`]: the predicates clients send (factory -20) and the text of `sql(...)`
//!   predicates, as syntax trees (`tree.rs`); [`aggregation`]: aggregators (factory -29) and
//!   projections (factory -30); [`eval`]: whether an entry passes a predicate, as Hazelcast
//!   decides it.
//! - [`wire`]: the byte layout those decoders share: `Data` and `DataSerializable` headers, and
//!   where an object written by `writeObject` ends.
//! - [`exec`]: aggregations and projections run over entries with Hazelcast's semantics (`java.rs`:
//!   the Java classes and exceptions they report);
//!   [`write`](mod@write): their results written back as the `Data` blobs Hazelcast's member sends;
//!   [`order`]: the order of paging queries without a comparator, and Java's `hashCode()`.
//!
//! Every decoder here is bounds-checked: malformed input is an error, never a panic.

pub mod aggregation;
mod attribute;
pub mod compact;
pub mod convert;
pub mod data;
pub mod error;
pub mod eval;
pub mod exec;
mod input;
mod java;
pub mod json;
pub mod number;
pub mod order;
pub mod path;
pub mod portable;
pub mod predicate;
mod record;
pub mod schema;
pub mod sql;
pub mod temporal;
mod tree;
pub mod value;
pub mod wire;
pub mod write;

pub use compact::{CompactRecord, SchemaSource};
pub use data::{read_object, read_value};
pub use error::{QueryError, ReadError};
pub use eval::{EvalError, EvalErrorKind, Filter};
pub use path::{extract, Extracted, Path};
pub use value::{Object, Value};
