//! Tables that are not maps: `TABLE(generate_series(a, b))` and
//! `information_schema.mappings`. Each is a source whose entries the statement supplies
//! ([`Source::inline`]), read through an ordinary mapping.

use super::{Parameters, Source, Translator};
use crate::catalog::{Catalog, Column, Format, Half, Mapping};
use crate::error::{Result, SqlError};
use crate::types::{self, SqlType};
use ferrogrid_query::write::write_data;
use ferrogrid_query::Value;
use sqlparser::ast;

/// The most rows `generate_series` produces.
pub const MAX_SERIES: i64 = 1_000_000;

fn column(name: &str, ty: SqlType, half: Half, field: Option<&str>, visible: bool) -> Column {
    Column { name: name.into(), ty, half, field: field.map(Into::into), visible, external: None }
}

fn data(value: &Value) -> Result<Vec<u8>> {
    write_data(value).map_err(|error| SqlError::data(error.to_string()))
}

/// `TABLE(generate_series(start, stop [, step]))`: one INTEGER column `v`.
pub fn table_function(expr: &ast::Expr, parameters: &Parameters) -> Result<Source> {
    let ast::Expr::Function(function) = expr else {
        return Err(SqlError::parsing(format!("Unsupported table function: {expr}")));
    };
    let name = function.name.to_string();
    if !name.eq_ignore_ascii_case("generate_series") {
        return Err(SqlError::parsing(format!("Function '{name}' does not exist")));
    }
    let ast::FunctionArguments::List(list) = &function.args else {
        return Err(SqlError::parsing("generate_series takes 2 or 3 arguments"));
    };
    let mut translator = Translator::new(&[], parameters);
    let mut numbers = Vec::new();
    for arg in &list.args {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg)) = arg else {
            return Err(SqlError::parsing("generate_series takes 2 or 3 arguments"));
        };
        let value = translator.expr(arg)?.eval(&[])?;
        numbers.push(types::to_integer(&value).ok_or_else(|| SqlError::data("generate_series takes integers"))? as i64);
    }
    let (start, stop, step) = match numbers.as_slice() {
        [start, stop] => (*start, *stop, 1),
        [start, stop, step] if *step != 0 => (*start, *stop, *step),
        _ => return Err(SqlError::parsing("generate_series takes 2 or 3 arguments, the step not 0")),
    };
    let mut entries = Vec::new();
    let mut v = start;
    while (step > 0 && v <= stop) || (step < 0 && v >= stop) {
        if entries.len() as i64 >= MAX_SERIES {
            return Err(SqlError::data(format!("generate_series produces more than {MAX_SERIES} rows")));
        }
        let value =
            Value::Int(i32::try_from(v).map_err(|_| SqlError::data("generate_series value out of INTEGER range"))?);
        entries.push((data(&Value::Long(entries.len() as i64))?, data(&value)?));
        v += step;
    }
    let mapping = Mapping {
        name: "generate_series".into(),
        map: String::new(),
        key: Format::Primitive(SqlType::BigInt),
        value: Format::Primitive(SqlType::Integer),
        columns: vec![
            column("v", SqlType::Integer, Half::Value, None, true),
            column("__key", SqlType::BigInt, Half::Key, None, false),
        ],
        options: Vec::new(),
        explicit_columns: true,
    };
    Ok(Source { mapping, alias: "generate_series".into(), offset: 0, keys: None, inline: Some(entries) })
}

/// `information_schema.mappings` (None: another name).
pub fn information_schema(parts: &[String], catalog: &Catalog) -> Option<Source> {
    let lower: Vec<String> = parts.iter().map(|p| p.to_ascii_lowercase()).collect();
    let table = match lower.as_slice() {
        [schema, table] | [_, schema, table] if schema == "information_schema" => table.clone(),
        _ => return None,
    };
    if table != "mappings" {
        return None;
    }
    let fields =
        ["table_catalog", "table_schema", "table_name", "mapping_external_name", "mapping_type", "mapping_options"];
    let mut columns: Vec<Column> =
        fields.iter().map(|field| column(field, SqlType::Varchar, Half::Value, Some(field), true)).collect();
    columns.push(column("__key", SqlType::Varchar, Half::Key, None, false));
    columns.push(column("this", SqlType::Object, Half::Value, None, false));
    let quote = |text: &str| serde_json::Value::String(text.to_owned()).to_string();
    let mut entries = Vec::new();
    for mapping in catalog.mappings() {
        let options: Vec<String> = mapping.options.iter().map(|(k, v)| format!("{}:{}", quote(k), quote(v))).collect();
        let values = [
            "hazelcast".to_owned(),
            "public".to_owned(),
            mapping.name.clone(),
            format!("\"{}\"", mapping.map),
            "IMap".to_owned(),
            format!("{{{}}}", options.join(",")),
        ];
        let object: Vec<String> =
            fields.iter().zip(&values).map(|(f, v)| format!("{}:{}", quote(f), quote(v))).collect();
        let key = data(&Value::String(mapping.name.clone())).ok()?;
        let value = data(&Value::Json(format!("{{{}}}", object.join(",")))).ok()?;
        entries.push((key, value));
    }
    let mapping = Mapping {
        name: "mappings".into(),
        map: String::new(),
        key: Format::Primitive(SqlType::Varchar),
        value: Format::JsonFlat,
        columns,
        options: Vec::new(),
        explicit_columns: true,
    };
    Some(Source {
        mapping,
        alias: parts.last().cloned().unwrap_or_default(),
        offset: 0,
        keys: None,
        inline: Some(entries),
    })
}
