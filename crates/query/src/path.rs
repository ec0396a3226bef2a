//! Attribute paths as Hazelcast resolves them against an entry's key and value.
//!
//! The syntax of paths and the [`Path`] they parse to are in `attribute.rs` (re-exported here),
//! the walk through records in `record.rs`.
//!
//! Resolution, as in Hazelcast 5.6:
//! - `this` and `__key` are the whole value (for JSON: its scalar, see [`crate::json`]);
//! - Compact and Portable records follow Hazelcast's `GenericRecordQueryReader`: a missing field
//!   or a null nested record gives null; `[any]` over records or items gives every one, and
//!   when any of them was null, missing or an empty array the results also hold a null (a
//!   single result that met no null is [`Extracted::Single`]); a path that names a field of the
//!   whole record (a field literally named `a.b`) reads that field;
//! - JSON documents follow Hazelcast's JSON getters ([`crate::json`]);
//! - an attribute of a built-in value (a string, a number, ...) is an error, Hazelcast's "There
//!   is no suitable accessor" (Hazelcast reflects on Java classes, so a few such attributes,
//!   like a string's `length`, exist there; none do here); an attribute of null is null.

pub use crate::attribute::{Extracted, Path, Root, Step};
use crate::compact::{CompactRecord, DirectRead, SchemaSource, TYPE_ID as COMPACT};
use crate::data::{self, HEADER_SIZE, JSON, NULL, PORTABLE};
use crate::error::ReadError;
use crate::input::Input;
use crate::portable::PortableRecord;
use crate::record::{walk, walk_marked};
use crate::value::Value;

/// The attribute `path` of an entry whose key and value are whole `Data` blobs.
pub fn extract(key: &[u8], value: &[u8], path: &Path, schemas: &dyn SchemaSource) -> Result<Extracted, ReadError> {
    extract_marked(key, value, path, schemas).map(|(extracted, _)| extracted)
}

/// [`extract`], and whether the result's leading null only marks that a record path met a
/// null or empty target (Hazelcast's `MultiResult.isNullEmptyTarget`; aggregations skip it).
pub fn extract_marked(
    key: &[u8],
    value: &[u8],
    path: &Path,
    schemas: &dyn SchemaSource,
) -> Result<(Extracted, bool), ReadError> {
    let data = path.blob(key, value);
    match data::type_id(data)? {
        COMPACT if !path.steps().is_empty() => walk_marked(CompactRecord::parse(&data[HEADER_SIZE..], schemas)?, path),
        PORTABLE if !path.steps().is_empty() => walk_marked(PortableRecord::parse(data, HEADER_SIZE)?, path),
        _ => extract_unmarked(key, value, path, schemas).map(|extracted| (extracted, false)),
    }
}

/// The attribute `path` of the entry read straight from the bytes (see [`DirectRead`]) when it
/// is one field of a Compact key or value that `direct` reads so: what [`extract`] gives as
/// [`Extracted::Single`] (unmarked), without parsing the record; None: read it with [`extract`].
pub fn extract_direct(
    direct: &DirectRead,
    (key, value): (&[u8], &[u8]),
    path: &Path,
    schemas: &dyn SchemaSource,
) -> Option<Value> {
    let blob = path.blob(key, value);
    let field = || match path.steps() {
        [Step::Field(name)] if name == path.attribute() => Some(name.as_str()),
        _ => None,
    };
    direct.read(blob, field, schemas)
}

fn extract_unmarked(key: &[u8], value: &[u8], path: &Path, schemas: &dyn SchemaSource) -> Result<Extracted, ReadError> {
    let data = path.blob(key, value);
    let type_id = data::type_id(data)?;
    if type_id == JSON {
        let text = Input::new(data, HEADER_SIZE).string()?.unwrap_or_default();
        return match path.steps().is_empty() {
            true => crate::json::this_value(&text).map(Extracted::Single),
            false => crate::json::extract(&text, path.steps()),
        };
    }
    if path.steps().is_empty() {
        return data::read_value(data, schemas).map(Extracted::Single);
    }
    match type_id {
        NULL => Ok(Extracted::Single(Value::Null)),
        COMPACT => walk(CompactRecord::parse(&data[HEADER_SIZE..], schemas)?, path),
        PORTABLE => walk(PortableRecord::parse(data, HEADER_SIZE)?, path),
        _ => {
            let whole = data::read_value(data, schemas)?;
            let name = path.steps().first().map_or(path.attribute(), |step| match step {
                Step::Field(name) => name.as_str(),
                _ => "[]",
            });
            Err(ReadError::Attribute(format!(
                "There is no suitable accessor for '{name}' on class '{}'",
                whole.type_name()
            )))
        }
    }
}
