//! Running aggregations and projections over entries (key and value `Data` blobs) with Hazelcast
//! 5.6's semantics, and their results as the `Data` blobs its member sends.
//!
//! What is taken from an entry (`AbstractAggregator.accumulate`, the projections' `transform`):
//! - no attribute: the entry's value as the member deserializes it (a `HazelcastJsonValue`
//!   stays one: comparable by its text, not a number);
//! - an attribute path, resolved by [`crate::path`]; a JSON object or array it reaches
//!   (`NonTerminalJsonValue`) is skipped; an `[any]` result gives each of its values, except
//!   the one null that marks a null or empty target; `this` or `__key` of a JSON document is
//!   Hazelcast's internal JSON value, which only `count` accepts.
//!
//! Per aggregator, as the 5.6 classes do (checked against a member in `tests/exec.rs`):
//! - `count` counts every value, nulls included; `distinct` keeps the values equal after
//!   `Comparables.canonicalizeForHashLookup` (integral numbers of any type as `Long`, floats as
//!   `Double`), null included, and answers a `CanonicalizingHashSet` in `HashMap` order;
//! - integer, long and double sums and averages take numbers convertible exactly
//!   (`Numbers.asIntExactly`, ...: otherwise `IllegalArgumentException`); fixed- and
//!   floating-point sums and the number average take any number (`longValue`, `doubleValue`);
//!   `BigDecimal`/`BigInteger` ones only their own type. A null is a `NullPointerException`, a
//!   value of another type a `ClassCastException`. Sums wrap as Java's `long` does.
//! - averages of nothing are null, sums of nothing zero; a `BigDecimal` average is Java's exact
//!   `divide` (its scale; an `ArithmeticException` when the quotient does not terminate);
//! - `min`/`max` skip nulls and compare with `Comparables.compare` (numbers across types; other
//!   types only with themselves); `minBy`/`maxBy` answer the entry (the first of equals wins).
//!
//! Projections: a single attribute's value, several as an `Object[]`, or the entry itself; an
//! `[any]` (or a null nested record's) multi-value cannot be serialized (Hazelcast fails too).
//!
//! Partials: [`Accumulator::new`] starts from the state the aggregator was sent with, as each
//! of Hazelcast's per-partition copies does (clients send fresh ones); combine per-partition
//! accumulators into one more made with `new`.
//!
//! Where the result differs from Hazelcast 5.6, or is refused:
//! - a distinct set's order within one `HashMap` bucket, and which of several equal canonical
//!   values it keeps (the last put), follow the order of `accumulate` and `combine` calls here
//!   and the order partitions finish there; records are placed as if their `hashCode()` were 0
//!   (a `GenericRecord`'s is not reproduced); arrays are each distinct, as Java's are;
//! - a floating-point sum's last bits depend on the order values are added, there as here;
//! - results the member Java-serializes (Hazelcast's internal JSON values, `NonTerminalJsonValue`,
//!   arrays of Compact nullable, decimal, date and time kinds) are [`ExecError::Unsupported`]:
//!   the clients cannot read them either;
//! - Portable records can be projected whole (`this`) but not inside an entry, array or set
//!   ([`crate::write`]), and a list inside a list is written with an inferred Java type;
//! - `BigDecimal` sums beyond [`MAX_DIGITS`](crate::number::MAX_DIGITS) digits are refused rather
//!   than computed.
//!
//! Invariants: an [`Accumulator`] is unchanged by a call that fails (values are checked before
//! any is added); nothing here panics; partials ([`Accumulator::encode`]) are bounds-checked on
//! [`Accumulator::decode`].

use crate::aggregation::Projection;
use crate::compact::{CompactRecord, SchemaSource};
use crate::data::{self, read_value, HEADER_SIZE, JSON};
use crate::error::ReadError;
pub use crate::java::{java_class, ExecError};
use crate::path::{extract_marked, Extracted, Path, Root, Step};
use crate::value::Value;
use crate::write::{self, write_array, write_object, ArrayType};

mod accumulator;
mod distinct;
mod java_numbers;

pub use accumulator::Accumulator;

// --- extraction ------------------------------------------------------------------------------

/// What an entry gives an aggregator or projection.
struct Extraction {
    items: Vec<Value>,
    /// The leading null only marks a null or empty target (skipped by aggregators).
    marked: bool,
    /// Through `[any]` (Hazelcast's `MultiResult`).
    multi: bool,
    /// `this`/`__key` of a JSON document: Hazelcast's internal JSON value.
    json_internal: bool,
    /// The value is a whole blob of the entry: its inline form, exactly as the member writes it.
    inline: Option<Vec<u8>>,
    /// The Java array type of a single array value, when its record's schema says it.
    array_type: Option<ArrayType>,
}

impl Extraction {
    /// A whole blob; its inline form only if `inline` (writing it is most of the cost).
    fn whole(blob: &[u8], schemas: &dyn SchemaSource, inline: bool) -> Result<Extraction, ExecError> {
        let value = read_value(blob, schemas)?;
        let array_type = ArrayType::from_type_id(data::type_id(blob)?);
        let inline = inline
            .then(|| Some(write::inline_of_data(blob, schemas).unwrap_or_default()).filter(|inline| !inline.is_empty()))
            .flatten();
        let items = vec![value];
        Ok(Extraction { items, marked: false, multi: false, json_internal: false, inline, array_type })
    }
}

/// What `path` (None: the value) gives for an entry; with a whole blob's inline form if
/// `inline`.
fn extract_items(
    path: Option<&Path>,
    (key, value): (&[u8], &[u8]),
    schemas: &dyn SchemaSource,
    inline: bool,
) -> Result<Extraction, ExecError> {
    let Some(path) = path else {
        return Extraction::whole(value, schemas, inline);
    };
    if path.steps().is_empty() {
        let blob = if path.root() == Root::Key { key } else { value };
        if data::type_id(blob)? == JSON {
            let mut extraction = Extraction::whole(blob, schemas, inline)?;
            extraction.json_internal = true;
            return Ok(extraction);
        }
        return Extraction::whole(blob, schemas, inline);
    }
    let (extracted, marked) = extract_marked(key, value, path, schemas)?;
    let (items, multi) = match extracted {
        Extracted::Single(Value::JsonStructure) => (Vec::new(), false),
        Extracted::Single(value) => (vec![value], false),
        Extracted::Multi(values) => (values, true),
    };
    let array_type = match items.as_slice() {
        [Value::Array(_)] if !multi => leaf_array_type(key, value, path, schemas)?,
        _ => None,
    };
    Ok(Extraction { items, marked, multi, json_internal: false, inline: None, array_type })
}

/// The Java array a Compact field at the end of `path` deserializes to on the member: a
/// primitive array, `String[]`, or `Object[]` of records; arrays of boxed types (nullable
/// numbers, decimals, dates and times) are Java-serialized there, which is not supported here.
fn leaf_array_type(
    key: &[u8],
    value: &[u8],
    path: &Path,
    schemas: &dyn SchemaSource,
) -> Result<Option<ArrayType>, ExecError> {
    let blob = if path.root() == Root::Key { key } else { value };
    if data::type_id(blob)? != crate::compact::TYPE_ID {
        return Ok(None);
    }
    let mut record = CompactRecord::parse(&blob[HEADER_SIZE..], schemas)?;
    let steps = path.steps();
    let mut at = 0;
    while at < steps.len() {
        let Step::Field(name) = &steps[at] else { return Ok(None) };
        let next = match steps.get(at + 1) {
            None => {
                let kind = record.schema().field(name).map(|field| field.kind);
                return kind.map(array_type_of_kind).transpose();
            }
            Some(Step::Index(index)) => record.nested_item(name, *index)?,
            Some(Step::Field(_)) => record.nested(name)?,
            Some(Step::Any) => return Ok(None),
        };
        let Some(next) = next else { return Ok(None) };
        record = next;
        at += if matches!(steps.get(at + 1), Some(Step::Index(_))) { 2 } else { 1 };
    }
    Ok(None)
}

fn array_type_of_kind(kind: i32) -> Result<ArrayType, ExecError> {
    let type_id = match kind {
        2 => -13,
        4 => -12,
        8 => -15,
        10 => -16,
        12 => -17,
        14 => -18,
        16 => -19,
        18 => -20,
        30 => -28,
        kind => {
            let what = format!("an array of Compact field kind {kind} (Java-serialized by Hazelcast)");
            return Err(ExecError::Unsupported(what));
        }
    };
    Ok(ArrayType(type_id))
}

/// The inline form of one extracted value.
fn inline_of(value: &Value, array_type: Option<ArrayType>) -> Result<Vec<u8>, ExecError> {
    let mut out = Vec::new();
    match (value, array_type) {
        (Value::Array(items), Some(array_type)) => write_array(&mut out, items, array_type, 0)?,
        (value, _) => write_object(&mut out, value, 0)?,
    }
    Ok(out)
}

// --- projection --------------------------------------------------------------------------------

const NULL_INLINE: [u8; 4] = [0; 4];

/// One entry's projection as the `Data` blob the client gets (`None` for null).
pub fn project(
    projection: &Projection,
    key: &[u8],
    value: &[u8],
    schemas: &dyn SchemaSource,
) -> Result<Option<Vec<u8>>, ExecError> {
    match projection {
        Projection::Identity => Ok(Some(write::write_entry(key, value, schemas)?)),
        Projection::SingleAttribute { attribute } => {
            let path = Path::parse(attribute)?;
            if path.steps().is_empty() {
                return whole_blob(if path.root() == Root::Key { key } else { value }, schemas);
            }
            let inline = projected_inline(&path, key, value, schemas)?;
            Ok((inline != NULL_INLINE).then(|| write::data_of_inline(&inline)))
        }
        Projection::MultiAttribute { attributes } => {
            let mut items = Vec::with_capacity(attributes.len());
            for attribute in attributes {
                items.push(projected_inline(&Path::parse(attribute)?, key, value, schemas)?);
            }
            Ok(Some(write::write_object_array(&items)))
        }
    }
}

/// `this` or `__key` projected: the blob as the member writes the object again (a Portable
/// record included: it stays where it was read).
fn whole_blob(blob: &[u8], schemas: &dyn SchemaSource) -> Result<Option<Vec<u8>>, ExecError> {
    match data::type_id(blob)? {
        data::NULL => Ok(None),
        JSON => Err(ExecError::Unsupported("Hazelcast's internal JSON value (Java-serialized)".into())),
        _ if blob.len() < HEADER_SIZE => Err(ExecError::Read(ReadError::Malformed("a short Data blob".into()))),
        _ => {
            if data::type_id(blob)? == data::PORTABLE {
                let mut out = vec![0; 4];
                out.extend_from_slice(&blob[4..]);
                return Ok(Some(out));
            }
            Ok(Some(write::data_of_inline(&write::canonical_inline(&blob[4..], schemas)?)))
        }
    }
}

/// One attribute's value as an inline object (type id 0 for null).
fn projected_inline(path: &Path, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Result<Vec<u8>, ExecError> {
    let extraction = extract_items(Some(path), (key, value), schemas, true)?;
    if extraction.json_internal {
        return Err(ExecError::Unsupported("Hazelcast's internal JSON value (Java-serialized)".into()));
    }
    if extraction.multi {
        let message = "Failed to serialize 'com.hazelcast.query.impl.getters.MultiResult'";
        return Err(ExecError::Serialization(message.into()));
    }
    match (extraction.items.as_slice(), extraction.inline) {
        ([_], Some(inline)) => Ok(inline),
        ([item], None) => Ok(write::canonical_inline(&inline_of(item, extraction.array_type)?, schemas)?),
        _ => Err(ExecError::Unsupported("a JSON object or array (NonTerminalJsonValue, Java-serialized)".into())),
    }
}
