//! Mappings: what `CREATE MAPPING` says about a map, the columns a statement sees, how a
//! column is read from an entry and how a row is written back as key and value.
//!
//! A mapping's canonical form is its DDL ([`Mapping::ddl`]): members keep and exchange
//! mappings as that text, and re-parse it.
//!
//! Invariant: a mapping's column names are unique, and every mapping has the hidden columns
//! `__key` and `this` (not listed by `SELECT *` unless they are ordinary columns).

use crate::error::{Result, SqlError};
use crate::types::{self, SqlType};
use ferrogrid_query::compact::SchemaSource;
use ferrogrid_query::path::{extract, Extracted, Path};
use ferrogrid_query::Value;
use std::collections::BTreeMap;

/// Entries of one map: (key, value) as serialized.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// How a key or a value is serialized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// One value of a built-in type (`'int'`, `'varchar'`, … or `'java'` with a boxed class).
    Primitive(SqlType),
    /// `HazelcastJsonValue`, read and written whole (`'json'`).
    Json,
    /// `HazelcastJsonValue` whose top-level fields are columns (`'json-flat'`).
    JsonFlat,
    /// A Compact record of a type name.
    Compact(String),
    /// A Portable record of a factory, class and version.
    Portable { factory: i32, class: i32, version: i32 },
    /// A Java class the member cannot read by field: one OBJECT column.
    Java(String),
}

/// Which half of an entry a column reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Half {
    Key,
    Value,
}

/// One column of a mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub ty: SqlType,
    pub half: Half,
    /// The field it reads (None: the whole key or value).
    pub field: Option<String>,
    /// Listed by `SELECT *`.
    pub visible: bool,
    /// The column's external name as written (`__key.id`, `this.name`), for the DDL.
    pub external: Option<String>,
}

impl Column {
    fn external_name(&self) -> String {
        let root = if self.half == Half::Key { "__key" } else { "this" };
        match &self.field {
            Some(field) => format!("{root}.{field}"),
            None => root.to_owned(),
        }
    }
}

/// A mapping: a name statements use, the map it names and its columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    pub name: String,
    pub map: String,
    pub key: Format,
    pub value: Format,
    pub columns: Vec<Column>,
    /// The options as given (for the DDL), in order.
    pub options: Vec<(String, String)>,
    /// Whether the column list was given (else it was derived).
    pub explicit_columns: bool,
}

/// A column as written in `CREATE MAPPING ... (name TYPE [EXTERNAL NAME x])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    pub name: String,
    pub ty: SqlType,
    pub external: Option<String>,
}

fn option<'a>(options: &'a [(String, String)], name: &str) -> Option<&'a str> {
    options.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
}

/// The format an option pair names (`keyFormat` with its class/type-name options).
fn format_of(options: &[(String, String)], prefix: &str) -> Result<Format> {
    let Some(format) = option(options, &format!("{prefix}Format")) else {
        return Err(SqlError::generic(format!("Missing '{prefix}Format' option")));
    };
    let lower = format.to_ascii_lowercase();
    Ok(match lower.as_str() {
        "json" => Format::Json,
        "json-flat" => Format::JsonFlat,
        "compact" => match option(options, &format!("{prefix}CompactTypeName")) {
            Some(name) => Format::Compact(name.to_owned()),
            None => {
                return Err(SqlError::parsing(format!(
                    "Unable to resolve table metadata. Missing '{prefix}CompactTypeName' option"
                )))
            }
        },
        "portable" => {
            let number = |name: &str, required: bool| -> Result<i32> {
                match option(options, &format!("{prefix}Portable{name}")) {
                    Some(text) => text
                        .trim()
                        .parse()
                        .map_err(|_| SqlError::generic(format!("Invalid '{prefix}Portable{name}' option: {text}"))),
                    None if required => Err(SqlError::parsing(format!(
                        "Unable to resolve table metadata. Missing '{prefix}Portable{name}' option"
                    ))),
                    None => Ok(0),
                }
            };
            Format::Portable {
                factory: number("FactoryId", true)?,
                class: number("ClassId", true)?,
                version: number("ClassVersion", false)?,
            }
        }
        "java" => {
            let class = option(options, &format!("{prefix}JavaClass")).ok_or_else(|| {
                SqlError::generic(format!("Unable to resolve table metadata. Missing '{prefix}JavaClass' option"))
            })?;
            match java_class_type(class) {
                Some(ty) => Format::Primitive(ty),
                None => Format::Java(class.to_owned()),
            }
        }
        other => match SqlType::parse(other) {
            Some(SqlType::Object) | Some(SqlType::Json) | Some(SqlType::Null) | None => {
                return Err(SqlError::generic(format!("Unsupported serialization format: {format}")))
            }
            Some(ty) => Format::Primitive(ty),
        },
    })
}

/// The SQL type of a boxed Java class (`java.lang.Integer` is INTEGER).
fn java_class_type(class: &str) -> Option<SqlType> {
    Some(match class {
        "java.lang.String" | "java.lang.Character" | "char" => SqlType::Varchar,
        "java.lang.Boolean" | "boolean" => SqlType::Boolean,
        "java.lang.Byte" | "byte" => SqlType::TinyInt,
        "java.lang.Short" | "short" => SqlType::SmallInt,
        "java.lang.Integer" | "int" => SqlType::Integer,
        "java.lang.Long" | "long" => SqlType::BigInt,
        "java.lang.Float" | "float" => SqlType::Real,
        "java.lang.Double" | "double" => SqlType::Double,
        "java.math.BigDecimal" | "java.math.BigInteger" => SqlType::Decimal,
        "java.time.LocalDate" => SqlType::Date,
        "java.time.LocalTime" => SqlType::Time,
        "java.time.LocalDateTime" => SqlType::Timestamp,
        "java.time.OffsetDateTime" => SqlType::TimestampWithTimeZone,
        _ => return None,
    })
}

/// Something that can show a sample entry's fields (for mappings without a column list).
pub trait Samples {
    /// The fields of a Portable class definition the member has learned (by reading a value
    /// of that class), in definition order.
    fn portable_fields(&self, factory: i32, class: i32, version: i32) -> Option<Vec<(String, SqlType)>>;
}

/// A Portable class: (factory id, class id, version).
pub type PortableClass = (i32, i32, i32);

/// A Portable value's class and its fields with their SQL types, in definition order (None:
/// not a Portable value, or malformed).
pub fn portable_definition(data: &[u8]) -> Option<(PortableClass, Vec<(String, SqlType)>)> {
    if ferrogrid_query::data::type_id(data).ok()? != ferrogrid_query::data::PORTABLE {
        return None;
    }
    let record = ferrogrid_query::portable::PortableRecord::parse(data, 8).ok()?;
    let version = i32::from_be_bytes(data.get(16..20)?.try_into().ok()?);
    let fields = record.fields().ok()?;
    let typed = fields.into_iter().map(|(name, kind)| (name, portable_field_sql_type(kind))).collect();
    Some(((record.factory_id(), record.class_id(), version), typed))
}

/// The SQL type of a Portable field type.
fn portable_field_sql_type(kind: u8) -> SqlType {
    match kind {
        1 => SqlType::TinyInt,
        2 => SqlType::Boolean,
        3 | 9 => SqlType::Varchar,
        4 => SqlType::SmallInt,
        5 => SqlType::Integer,
        6 => SqlType::BigInt,
        7 => SqlType::Real,
        8 => SqlType::Double,
        20 => SqlType::Decimal,
        22 => SqlType::Time,
        24 => SqlType::Date,
        26 => SqlType::Timestamp,
        28 => SqlType::TimestampWithTimeZone,
        _ => SqlType::Object,
    }
}

/// The Portable field type SQL writes a column of `ty` as (None: not written here).
pub fn portable_kind(ty: SqlType) -> Option<u8> {
    Some(match ty {
        SqlType::TinyInt => 1,
        SqlType::Boolean => 2,
        SqlType::SmallInt => 4,
        SqlType::Integer => 5,
        SqlType::BigInt => 6,
        SqlType::Real => 7,
        SqlType::Double => 8,
        SqlType::Varchar => 9,
        SqlType::Decimal => 20,
        _ => return None,
    })
}

impl Mapping {
    /// A mapping from `CREATE MAPPING` parts: columns resolved against the formats.
    pub fn new(
        name: &str,
        map: Option<&str>,
        specs: &[ColumnSpec],
        options: Vec<(String, String)>,
        samples: &dyn Samples,
    ) -> Result<Mapping> {
        let key = format_of(&options, "key")?;
        let value = format_of(&options, "value")?;
        let mut columns = Vec::new();
        if specs.is_empty() {
            derive_columns(&key, Half::Key, samples, &mut columns)?;
            derive_columns(&value, Half::Value, samples, &mut columns)?;
        } else {
            for spec in specs {
                columns.push(column_of(spec, &key, &value)?);
            }
        }
        let mut seen = std::collections::HashSet::new();
        for column in &columns {
            if !seen.insert(column.name.clone()) {
                return Err(SqlError::parsing(format!("Column '{}' specified more than once", column.name)));
            }
        }
        for (half, format, hidden) in [(Half::Key, &key, "__key"), (Half::Value, &value, "this")] {
            if !columns.iter().any(|column| column.name == hidden) {
                let ty = match format {
                    Format::Primitive(ty) => *ty,
                    Format::Json => SqlType::Json,
                    _ => SqlType::Object,
                };
                columns.push(Column { name: hidden.into(), ty, half, field: None, visible: false, external: None });
            }
        }
        Ok(Mapping {
            name: name.to_owned(),
            map: map.unwrap_or(name).to_owned(),
            key,
            value,
            columns,
            options,
            explicit_columns: !specs.is_empty(),
        })
    }

    /// The Compact schemas rows written through this mapping get (one per half of a
    /// `compact` format): a field per column of that half, of the nullable kind of the
    /// column's type, as Hazelcast's SQL writes Compact records.
    pub fn compact_schemas(&self) -> Result<Vec<ferrogrid_query::schema::Schema>> {
        let mut schemas = Vec::new();
        for (half, format) in [(Half::Key, &self.key), (Half::Value, &self.value)] {
            let Format::Compact(type_name) = format else { continue };
            let mut fields = Vec::new();
            for column in self.columns.iter().filter(|c| c.half == half) {
                let Some(field) = &column.field else { continue };
                let kind = compact_kind(column.ty).ok_or_else(|| {
                    SqlError::data(format!(
                        "Writing a {} column to a Compact record is not supported by this member yet",
                        column.ty.name()
                    ))
                })?;
                fields.push(ferrogrid_query::schema::FieldDescriptor { name: field.clone(), kind });
            }
            schemas.push(ferrogrid_query::schema::Schema::new(type_name.clone(), fields));
        }
        Ok(schemas)
    }

    /// The columns `SELECT *` lists, in order.
    pub fn visible(&self) -> impl Iterator<Item = (usize, &Column)> {
        self.columns.iter().enumerate().filter(|(_, column)| column.visible)
    }

    pub fn column(&self, name: &str) -> Option<(usize, &Column)> {
        self.columns.iter().enumerate().find(|(_, column)| column.name == name)
    }

    /// The mapping's DDL (what members exchange and `GET_DDL` would show).
    pub fn ddl(&self) -> String {
        let quote = |text: &str| format!("\"{}\"", text.replace('"', "\"\""));
        let literal = |text: &str| format!("'{}'", text.replace('\'', "''"));
        let mut ddl = format!("CREATE OR REPLACE MAPPING {}", quote(&self.name));
        if self.map != self.name {
            ddl.push_str(&format!(" EXTERNAL NAME {}", quote(&self.map)));
        }
        if self.explicit_columns {
            let columns: Vec<String> = self
                .columns
                .iter()
                .filter(|column| column.visible)
                .map(|column| match &column.external {
                    Some(_) => {
                        let external = quote(&column.external_name());
                        format!("{} {} EXTERNAL NAME {external}", quote(&column.name), column.ty.name())
                    }
                    None => format!("{} {}", quote(&column.name), column.ty.name()),
                })
                .collect();
            ddl.push_str(&format!(" ({})", columns.join(", ")));
        }
        ddl.push_str(" TYPE IMap OPTIONS (");
        let options: Vec<String> =
            self.options.iter().map(|(k, v)| format!("{} = {}", literal(k), literal(v))).collect();
        ddl.push_str(&options.join(", "));
        ddl.push(')');
        ddl
    }

    /// Reads column `index` of an entry, converted to its type.
    pub fn read(&self, index: usize, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Result<Value> {
        let path = self.path(index)?;
        self.read_at(index, path.as_ref(), key, value, schemas)
    }

    /// The attribute path column `index` reads (None: the whole key or value): parsed once
    /// per statement by callers that read many entries.
    pub fn path(&self, index: usize) -> Result<Option<Path>> {
        let column = &self.columns[index];
        let Some(field) = &column.field else { return Ok(None) };
        let attribute = if column.half == Half::Key { format!("__key.{field}") } else { field.clone() };
        Path::parse(&attribute).map(Some).map_err(|error| SqlError::data(error.to_string()))
    }

    /// Reads column `index` with its path from [`Mapping::path`].
    pub fn read_at(
        &self,
        index: usize,
        path: Option<&Path>,
        key: &[u8],
        value: &[u8],
        schemas: &dyn SchemaSource,
    ) -> Result<Value> {
        let column = &self.columns[index];
        let raw = match (path, column.half) {
            (None, Half::Key) => ferrogrid_query::read_value(key, schemas),
            (None, Half::Value) => ferrogrid_query::read_value(value, schemas),
            (Some(path), _) => extract(key, value, path, schemas).map(|extracted| match extracted {
                Extracted::Single(value) => value,
                Extracted::Multi(values) => Value::Array(values),
            }),
        }
        .map_err(|error| {
            SqlError::data(format!(
                "Failed to extract map entry {}: {error}",
                if column.half == Half::Key { "key" } else { "value" }
            ))
        })?;
        coerce_read(raw, column)
    }

    /// The field column `index` reads from the top level of a Compact value (its path
    /// from [`Mapping::path`] is that field's name alone), so a scan can read it at the
    /// field's place in the schema; None for any other read.
    pub fn compact_field<'p>(&self, index: usize, path: Option<&'p Path>) -> Option<&'p str> {
        let (Format::Compact(_), Half::Value, Some(path)) = (&self.value, self.columns[index].half, path) else {
            return None;
        };
        match path.steps() {
            [ferrogrid_query::path::Step::Field(name)] if path.root() == ferrogrid_query::path::Root::Value => {
                Some(name.as_str())
            }
            _ => None,
        }
    }

    /// Reads column `index` (a [`Mapping::compact_field`]) from the value's Compact record,
    /// its field's kind and place found in the record's schema (None: the schema has no such
    /// field, so null): as [`Mapping::read_at`] reads it.
    pub fn read_compact_at(
        &self,
        index: usize,
        record: &ferrogrid_query::compact::CompactRecord<'_>,
        place: Option<(i32, ferrogrid_query::schema::Place)>,
    ) -> Result<Value> {
        let raw = match place {
            None => Value::Null,
            Some((kind, place)) => record
                .field_at(kind, place)
                .map_err(|error| SqlError::data(format!("Failed to extract map entry value: {error}")))?,
        };
        coerce_read(raw, &self.columns[index])
    }

    /// Whether the entry's value is of this mapping's value format (Hazelcast skips entries
    /// of another Compact type or Portable class).
    pub fn accepts(&self, value: &[u8], schemas: &dyn SchemaSource) -> bool {
        match &self.value {
            Format::Compact(type_name) => {
                compact_schema(value, schemas).is_none_or(|schema| &schema.type_name == type_name)
            }
            _ => true,
        }
    }
}

fn compact_schema(value: &[u8], schemas: &dyn SchemaSource) -> Option<std::sync::Arc<ferrogrid_query::schema::Schema>> {
    if ferrogrid_query::data::type_id(value).ok()? != ferrogrid_query::compact::TYPE_ID {
        return None;
    }
    schemas.schema(i64::from_be_bytes(value.get(8..16)?.try_into().ok()?))
}

/// A read value as a column's type: numbers widen, anything else must already be of it.
fn coerce_read(raw: Value, column: &Column) -> Result<Value> {
    if raw.is_null() || column.ty == SqlType::Object {
        return Ok(match raw {
            Value::JsonStructure => Value::Null,
            raw => raw,
        });
    }
    let from = SqlType::of_value(&raw);
    if from == column.ty {
        return Ok(raw);
    }
    // json-flat fields hold dates and times as text
    if matches!(raw, Value::String(_)) && column.ty.is_temporal() {
        return types::convert(raw, column.ty);
    }
    let widening = from.is_numeric() && column.ty.is_numeric();
    if widening || (column.ty == SqlType::Varchar && matches!(raw, Value::Char(_))) || column.ty == SqlType::Json {
        return types::convert(raw, column.ty);
    }
    Err(SqlError::data(format!(
        "Failed to extract map entry value because of type mismatch [expectedClass={}, actualClass={}]",
        java_class(column.ty),
        java_class(from)
    )))
}

/// The Compact field kind SQL writes a column of `ty` as (None: not written here).
pub fn compact_kind(ty: SqlType) -> Option<i32> {
    Some(match ty {
        SqlType::Varchar => 17,
        SqlType::Boolean => 33,
        SqlType::TinyInt => 35,
        SqlType::SmallInt => 37,
        SqlType::Integer => 39,
        SqlType::BigInt => 41,
        SqlType::Real => 43,
        SqlType::Double => 45,
        SqlType::Decimal => 19,
        _ => return None,
    })
}

/// The Java class of a type's values (as Hazelcast's errors name them).
pub fn java_class(ty: SqlType) -> &'static str {
    match ty {
        SqlType::Varchar => "java.lang.String",
        SqlType::Boolean => "java.lang.Boolean",
        SqlType::TinyInt => "java.lang.Byte",
        SqlType::SmallInt => "java.lang.Short",
        SqlType::Integer => "java.lang.Integer",
        SqlType::BigInt => "java.lang.Long",
        SqlType::Decimal => "java.math.BigDecimal",
        SqlType::Real => "java.lang.Float",
        SqlType::Double => "java.lang.Double",
        SqlType::Date => "java.time.LocalDate",
        SqlType::Time => "java.time.LocalTime",
        SqlType::Timestamp => "java.time.LocalDateTime",
        SqlType::TimestampWithTimeZone => "java.time.OffsetDateTime",
        SqlType::Json => "com.hazelcast.core.HazelcastJsonValue",
        SqlType::Object | SqlType::Null => "java.lang.Object",
    }
}

fn derive_columns(format: &Format, half: Half, samples: &dyn Samples, columns: &mut Vec<Column>) -> Result<()> {
    let whole = |name: &str, ty| Column { name: name.into(), ty, half, field: None, visible: true, external: None };
    let root = if half == Half::Key { "__key" } else { "this" };
    match format {
        Format::Primitive(ty) => columns.push(whole(root, *ty)),
        Format::Json => columns.push(whole(root, SqlType::Json)),
        Format::Java(_) => columns.push(whole(root, SqlType::Object)),
        Format::JsonFlat => return Err(SqlError::generic("Column list is required for JSON format")),
        // Hazelcast does not derive Compact columns from a schema (it suggests a mapping
        // that lists them instead: see the member's unmapped-map suggestion).
        Format::Compact(_) => return Err(SqlError::generic("Column list is required for Compact format")),
        // The fields of the class definition the member learned from a value it read; without
        // one, Hazelcast maps a Portable value as one OBJECT column.
        Format::Portable { factory, class, version } => match samples.portable_fields(*factory, *class, *version) {
            Some(fields) => {
                for (name, ty) in fields {
                    columns.push(Column {
                        name: name.clone(),
                        ty,
                        half,
                        field: Some(name),
                        visible: true,
                        external: None,
                    });
                }
            }
            None => columns.push(whole(root, SqlType::Object)),
        },
    }
    Ok(())
}

fn column_of(spec: &ColumnSpec, key: &Format, value: &Format) -> Result<Column> {
    let external = spec.external.clone().unwrap_or_else(|| spec.name.clone());
    let (half, field) = match external.as_str() {
        "__key" => (Half::Key, None),
        "this" => (Half::Value, None),
        text => {
            if let Some(field) = text.strip_prefix("__key.") {
                (Half::Key, Some(field.to_owned()))
            } else if let Some(field) = text.strip_prefix("this.") {
                (Half::Value, Some(field.to_owned()))
            } else {
                (Half::Value, Some(text.to_owned()))
            }
        }
    };
    if field.is_none() && spec.external.is_some() && spec.name != external {
        return Err(SqlError::generic(format!("Cannot rename field: '{external}'")));
    }
    let format = if half == Half::Key { key } else { value };
    if let (Some(_), Format::Primitive(ty)) = (&field, format) {
        let root = if half == Half::Key { "__key" } else { "this" };
        return Err(SqlError::generic(format!(
            "The field '{root}' is of type {}, you can't map '{}' too",
            ty.name(),
            spec.name
        )));
    }
    Ok(Column { name: spec.name.clone(), ty: spec.ty, half, field, visible: true, external: spec.external.clone() })
}

/// The mappings of a cluster, by name.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    mappings: BTreeMap<String, Mapping>,
}

impl Catalog {
    pub fn get(&self, name: &str) -> Option<&Mapping> {
        self.mappings.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.mappings.keys().map(String::as_str)
    }

    pub fn mappings(&self) -> impl Iterator<Item = &Mapping> {
        self.mappings.values()
    }

    pub fn len(&self) -> usize {
        self.mappings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mappings.is_empty()
    }

    pub fn put(&mut self, mapping: Mapping) {
        self.mappings.insert(mapping.name.clone(), mapping);
    }

    pub fn remove(&mut self, name: &str) -> Option<Mapping> {
        self.mappings.remove(name)
    }
}

/// The mapping Hazelcast suggests for a map that has entries but no mapping, from one of its
/// entries (None where Hazelcast suggests nothing: a JSON value, a value it cannot name).
pub fn suggest_mapping(name: &str, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Option<String> {
    let mut options = Vec::new();
    let mut columns = Vec::new();
    for (prefix, data, root) in [("key", key, "__key"), ("value", value, "this")] {
        let type_id = ferrogrid_query::data::type_id(data).ok()?;
        match type_id {
            ferrogrid_query::compact::TYPE_ID => {
                let record = ferrogrid_query::CompactRecord::parse(data.get(8..)?, schemas).ok()?;
                let schema = record.schema().clone();
                let mut fields: Vec<_> = schema.fields.iter().collect();
                fields.sort_by(|a, b| a.name.cmp(&b.name));
                for field in fields {
                    let ty = compact_field_type(field.kind)?;
                    columns.push(format!("  \"{}\" {} EXTERNAL NAME \"{root}.{}\"", field.name, ty.name(), field.name));
                }
                options.push((format!("{prefix}Format"), "compact".to_owned()));
                options.push((format!("{prefix}CompactTypeName"), schema.type_name.clone()));
            }
            ferrogrid_query::data::PORTABLE => {
                let int = |at: usize| data.get(at..at + 4).map(|b| i32::from_be_bytes(b.try_into().expect("4 bytes")));
                options.push((format!("{prefix}Format"), "portable".to_owned()));
                options.push((format!("{prefix}PortableFactoryId"), int(8)?.to_string()));
                options.push((format!("{prefix}PortableClassId"), int(12)?.to_string()));
                options.push((format!("{prefix}PortableClassVersion"), int(16)?.to_string()));
            }
            ferrogrid_query::data::JSON => return None,
            _ => {
                let read = ferrogrid_query::read_value(data, schemas).ok()?;
                let ty = SqlType::of_value(&read);
                if matches!(ty, SqlType::Object | SqlType::Null | SqlType::Json) {
                    return None;
                }
                let class = match read {
                    Value::BigInteger(_) => "java.math.BigInteger",
                    Value::Char(_) => "java.lang.Character",
                    _ => java_class(ty),
                };
                options.push((format!("{prefix}Format"), "java".to_owned()));
                options.push((format!("{prefix}JavaClass"), class.to_owned()));
            }
        }
    }
    let mut ddl =
        format!("CREATE OR REPLACE EXTERNAL MAPPING \"hazelcast\".\"public\".\"{name}\" EXTERNAL NAME \"{name}\"");
    if !columns.is_empty() {
        ddl.push_str(&format!(" (\n{}\n)", columns.join(",\n")));
    }
    ddl.push_str("\nTYPE \"IMap\"\nOPTIONS (\n");
    let options: Vec<String> = options.iter().map(|(k, v)| format!("  '{k}'='{v}'")).collect();
    ddl.push_str(&options.join(",\n"));
    ddl.push_str("\n)");
    Some(ddl)
}

/// The SQL type of a Compact field kind (None: a kind SQL does not map).
pub fn compact_field_type(kind: i32) -> Option<SqlType> {
    use ferrogrid_query::compact::kind as k;
    Some(match kind {
        k::BOOLEAN | k::NULLABLE_BOOLEAN => SqlType::Boolean,
        k::INT8 | 35 => SqlType::TinyInt,
        k::INT16 | 37 => SqlType::SmallInt,
        k::INT32 | 39 => SqlType::Integer,
        k::INT64 | 41 => SqlType::BigInt,
        k::FLOAT32 | 43 => SqlType::Real,
        k::FLOAT64 | k::NULLABLE_FLOAT64 => SqlType::Double,
        k::STRING => SqlType::Varchar,
        k::DECIMAL => SqlType::Decimal,
        k::TIME => SqlType::Time,
        k::DATE => SqlType::Date,
        k::TIMESTAMP => SqlType::Timestamp,
        k::TIMESTAMP_WITH_TIMEZONE => SqlType::TimestampWithTimeZone,
        _ => SqlType::Object,
    })
}
