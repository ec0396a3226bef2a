//! Rows written back as entries: a key and a value serialized in their mapping's formats, and
//! what an UPDATE or DELETE does to one entry.

use crate::catalog::{Format, Half, Mapping};
use crate::error::{Code, Result, SqlError};
use crate::exec::tasklet_failure;
use crate::expr::Expr;
use crate::plan::Source;
use crate::types;
use ferrogrid_query::compact::SchemaSource;
use ferrogrid_query::Value;

/// The key and value of a row (`row`: a value per mapping column, hidden ones included).
pub fn encode(mapping: &Mapping, row: &[Value]) -> Result<(Vec<u8>, Vec<u8>)> {
    let key = encode_half(mapping, Half::Key, &mapping.key, row)?;
    let value = encode_half(mapping, Half::Value, &mapping.value, row)?;
    Ok((key, value))
}

fn encode_half(mapping: &Mapping, half: Half, format: &Format, row: &[Value]) -> Result<Vec<u8>> {
    let whole = mapping.columns.iter().position(|c| c.half == half && c.field.is_none());
    let name = if half == Half::Key { "__key" } else { "this" };
    match format {
        Format::Primitive(ty) => {
            let value = whole.map(|i| row[i].clone()).unwrap_or(Value::Null);
            if value.is_null() {
                return Err(null_half(half));
            }
            data(&crate::expr::to_type(value, *ty)?)
        }
        Format::Json => {
            let value = whole.map(|i| row[i].clone()).unwrap_or(Value::Null);
            match value {
                Value::Null => Err(null_half(half)),
                value => data(&Value::Json(types::to_text(&value))),
            }
        }
        Format::JsonFlat => json_flat(mapping, half, whole, row),
        Format::Compact(type_name) => {
            if let Some(Value::Object(object)) = whole.map(|i| &row[i]) {
                return data(&Value::Object(object.clone()));
            }
            compact_record(mapping, half, type_name, row)
        }
        Format::Portable { factory, class, version } => {
            if let Some(Value::Object(object)) = whole.map(|i| &row[i]) {
                return data(&Value::Object(object.clone()));
            }
            portable_record(mapping, half, (*factory, *class, *version), row)
        }
        Format::Java(_) => {
            // The whole object, when given, is written as it came (a parameter's record).
            if let Some(Value::Object(object)) = whole.map(|i| &row[i]) {
                return data(&Value::Object(object.clone()));
            }
            Err(SqlError::data(format!(
                "Writing rows of the {} format of mapping '{}' ({name}) is not supported by this member yet",
                format_name(format),
                mapping.name
            )))
        }
    }
}

/// A value serialized as Hazelcast's data.
fn data(value: &Value) -> Result<Vec<u8>> {
    ferrogrid_query::write::write_data(value).map_err(|error| SqlError::data(error.to_string()))
}

/// A `json-flat` half: its field columns as a JSON object in column order (the whole-value
/// column's text when no field is mapped).
fn json_flat(mapping: &Mapping, half: Half, whole: Option<usize>, row: &[Value]) -> Result<Vec<u8>> {
    // Fields in column order, as Hazelcast writes them (serde_json's map would sort).
    let mut fields = Vec::new();
    for (index, column) in mapping.columns.iter().enumerate() {
        let Some(field) = &column.field else { continue };
        if column.half != half {
            continue;
        }
        if matches!(row[index], Value::Double(v) if !v.is_finite())
            || matches!(row[index], Value::Float(v) if !v.is_finite())
        {
            // Jackson's refusal, which fails the statement (GENERIC) in Hazelcast
            return Err(SqlError::generic("Infinite and NaN values not permitted in JSON"));
        }
        let name = serde_json::Value::String(field.clone()).to_string();
        fields.push(format!("{name}:{}", types::json_of(&row[index])));
    }
    if fields.is_empty() {
        if let Some(i) = whole {
            if !row[i].is_null() {
                return data(&Value::Json(types::to_text(&row[i])));
            }
        }
    }
    data(&Value::Json(format!("{{{}}}", fields.join(","))))
}

/// A Compact half: a record of the mapping's type, its fields from their columns.
fn compact_record(mapping: &Mapping, half: Half, type_name: &str, row: &[Value]) -> Result<Vec<u8>> {
    let schemas = mapping.compact_schemas()?;
    let Some(schema) = schemas.iter().find(|s| s.type_name == type_name) else {
        return Err(SqlError::data("no Compact schema for the mapping"));
    };
    let mut values = Vec::with_capacity(schema.fields.len());
    for field in &schema.fields {
        let column = mapping.columns.iter().position(|c| c.half == half && c.field.as_deref() == Some(&field.name));
        let value = match column {
            Some(index) => crate::expr::to_type(row[index].clone(), mapping.columns[index].ty)?,
            None => Value::Null,
        };
        values.push(value);
    }
    let record =
        ferrogrid_query::write::write_compact(schema, &values).map_err(|error| SqlError::data(error.to_string()))?;
    let mut blob = vec![0; 4];
    blob.extend_from_slice(&ferrogrid_query::compact::TYPE_ID.to_be_bytes());
    blob.extend_from_slice(&record);
    Ok(blob)
}

/// A Portable half of `(factory, class, version)`, its fields from their columns.
fn portable_record(
    mapping: &Mapping,
    half: Half,
    (factory, class, version): (i32, i32, i32),
    row: &[Value],
) -> Result<Vec<u8>> {
    let mut fields = Vec::new();
    for (index, column) in mapping.columns.iter().enumerate() {
        let Some(field) = &column.field else { continue };
        if column.half != half {
            continue;
        }
        let kind = crate::catalog::portable_kind(column.ty).ok_or_else(|| {
            SqlError::data(format!(
                "Writing a {} column to a Portable record is not supported by this member yet",
                column.ty.name()
            ))
        })?;
        fields.push((field.clone(), kind, crate::expr::to_type(row[index].clone(), column.ty)?));
    }
    ferrogrid_query::write::write_portable(factory, class, version, &fields)
        .map_err(|error| SqlError::data(error.to_string()))
}

fn format_name(format: &Format) -> &'static str {
    match format {
        Format::Compact(_) => "compact",
        Format::Portable { .. } => "portable",
        Format::Java(_) => "java",
        Format::Json => "json",
        Format::JsonFlat => "json-flat",
        Format::Primitive(_) => "primitive",
    }
}

fn null_half(half: Half) -> SqlError {
    SqlError::generic(match half {
        Half::Key => "Cannot write NULL to '__key' field. Note that NULL is used also if your INSERT/SINK command doesn't write to '__key' at all.",
        Half::Value => "Cannot write NULL to 'this' field. Note that NULL is used also if your INSERT/SINK command doesn't write to 'this' at all.",
    })
}

/// UPDATE or DELETE: which entries (a plan over one source whose row is the mapping's columns)
/// and what becomes of them.
#[derive(Debug, Clone)]
pub struct Change {
    pub source: Source,
    pub filter: Option<Expr>,
    /// Column index → new value expression (empty: DELETE).
    pub assignments: Vec<(usize, Expr)>,
    pub delete: bool,
}

/// What an UPDATE or DELETE does to one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Keep,
    Remove,
    Replace(Vec<u8>),
}

/// Decides an entry's fate under `change` (the row is the mapping's columns).
pub fn apply(change: &Change, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Result<Action> {
    let mapping = &change.source.mapping;
    if !mapping.accepts(value, schemas) {
        return Ok(Action::Keep);
    }
    let scanned = |error| failed(change, error, false);
    let mut row = Vec::with_capacity(mapping.columns.len());
    for index in 0..mapping.columns.len() {
        row.push(mapping.read(index, key, value, schemas).map_err(scanned)?);
    }
    if let Some(filter) = &change.filter {
        if !filter.passes(&row).map_err(scanned)? {
            return Ok(Action::Keep);
        }
    }
    if change.delete {
        return Ok(Action::Remove);
    }
    let updating = |error| failed(change, error, true);
    let mut updated = row.clone();
    for (index, expr) in &change.assignments {
        updated[*index] = expr.eval(&row).map_err(updating)?;
    }
    // A whole-value column assigned overrides the fields; fields assigned rebuild the value.
    let whole = mapping.columns.iter().position(|c| c.half == Half::Value && c.field.is_none());
    let assigned_whole = whole.is_some_and(|w| change.assignments.iter().any(|(i, _)| *i == w));
    if !assigned_whole {
        if let Some(w) = whole {
            if !matches!(mapping.value, Format::Primitive(_) | Format::Json) {
                updated[w] = Value::Null;
            }
        }
    }
    let (_, value) = encode(mapping, &updated).map_err(updating)?;
    Ok(Action::Replace(value))
}

/// A run-time failure of an UPDATE or DELETE as Hazelcast 5.6 reports it: GENERIC, not a data
/// error, thrown by the job's scan (`Project`) or, from an assignment, by the entry processor
/// its `Update` processor sent (`updating`). A plan-time error is not one.
fn failed(change: &Change, error: SqlError, updating: bool) -> SqlError {
    if matches!(error.code, Code::Parsing | Code::ObjectNotFound) {
        return error;
    }
    let table = &change.source.mapping.name;
    let job = table
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3));
    let cause = format!("com.hazelcast.sql.impl.QueryException: {}", error.message);
    let text = if updating {
        let cause = format!(
            "com.hazelcast.jet.JetException: Async operation completed exceptionally: java.util.concurrent.ExecutionException: {cause}"
        );
        tasklet_failure(job, &format!("Update(IMap[public.{table}])#0"), &cause)
    } else {
        tasklet_failure(job, &format!("Project(IMap[public.{table}])#0"), &cause)
    };
    SqlError::generic(format!("com.hazelcast.jet.JetException: {text}"))
}
