//! Attribute paths as Hazelcast resolves them against an entry's key and value.
//!
//! Syntax: `this` (the value), `__key` (the key), `this.a` (same as `a`), `__key.a` (an
//! attribute of the key; `__key#a` is the old spelling), `a.b.c` (nested records), `a[2]` (one
//! array item), `a[any]` (every item: the result is [`Extracted::Multi`]). An index is a
//! non-negative decimal number (Hazelcast would take a negative one and fail later).
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

use crate::compact::{CompactRecord, SchemaSource, TYPE_ID as COMPACT};
use crate::data::{self, HEADER_SIZE, JSON, NULL, PORTABLE};
use crate::error::ReadError;
use crate::input::Input;
use crate::portable::PortableRecord;
use crate::value::Value;

/// Which half of the entry a path starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    Key,
    Value,
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Field(String),
    Index(usize),
    Any,
}

/// A parsed attribute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    root: Root,
    /// The path after its root (`a.b[1]` of `__key.a.b[1]`), as records look whole names up.
    attribute: String,
    steps: Vec<Step>,
}

/// What a path found: one value, or (through `[any]`) several.
#[derive(Debug, Clone, PartialEq)]
pub enum Extracted {
    Single(Value),
    Multi(Vec<Value>),
}

fn invalid(attribute: &str, why: &str) -> ReadError {
    ReadError::Attribute(format!("invalid attribute path '{attribute}': {why}"))
}

impl Path {
    pub fn parse(attribute: &str) -> Result<Path, ReadError> {
        if attribute.trim().is_empty() {
            return Err(invalid(attribute, "empty"));
        }
        let (root, rest) = match attribute {
            "this" => (Root::Value, ""),
            "__key" => (Root::Key, ""),
            _ => match (attribute.strip_prefix("__key."), attribute.strip_prefix("__key#")) {
                (Some(rest), _) | (None, Some(rest)) => (Root::Key, rest),
                _ => (Root::Value, attribute.strip_prefix("this.").unwrap_or(attribute)),
            },
        };
        let mut steps = Vec::new();
        if !rest.is_empty() {
            for (at, token) in rest.split('.').enumerate() {
                parse_token(token, at == 0, &mut steps).map_err(|why| invalid(attribute, why))?;
            }
        }
        Ok(Path { root, attribute: rest.to_string(), steps })
    }

    pub fn root(&self) -> Root {
        self.root
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The path after its root, as written.
    pub fn attribute(&self) -> &str {
        &self.attribute
    }
}

/// One dot-separated token: a name, then any number of `[index]` or `[any]`.
fn parse_token(token: &str, first: bool, steps: &mut Vec<Step>) -> Result<(), &'static str> {
    let (name, mut brackets) = token.split_at(token.find('[').unwrap_or(token.len()));
    if name.contains(']') {
        return Err("']' without '['");
    }
    match (name.is_empty(), first && !brackets.is_empty()) {
        (false, _) => steps.push(Step::Field(name.to_string())),
        (true, true) => {}
        (true, false) => return Err("empty name"),
    }
    while !brackets.is_empty() {
        let close = brackets.find(']').ok_or("'[' without ']'")?;
        let inside = &brackets[1..close];
        steps.push(match inside {
            "any" => Step::Any,
            _ if !inside.is_empty() && inside.bytes().all(|byte| byte.is_ascii_digit()) => {
                Step::Index(inside.parse().map_err(|_| "index too large")?)
            }
            _ => return Err("an index is a number or 'any'"),
        });
        brackets = &brackets[close + 1..];
        if !brackets.is_empty() && !brackets.starts_with('[') {
            return Err("text after ']'");
        }
    }
    Ok(())
}

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
    match type_id_of(key, value, path)? {
        COMPACT | PORTABLE if !path.steps.is_empty() => {
            let data = match path.root {
                Root::Key => key,
                Root::Value => value,
            };
            if data::type_id(data)? == COMPACT {
                walk_marked(CompactRecord::parse(&data[HEADER_SIZE..], schemas)?, path)
            } else {
                walk_marked(PortableRecord::parse(data, HEADER_SIZE)?, path)
            }
        }
        _ => extract_unmarked(key, value, path, schemas).map(|extracted| (extracted, false)),
    }
}

fn type_id_of(key: &[u8], value: &[u8], path: &Path) -> Result<i32, ReadError> {
    data::type_id(match path.root {
        Root::Key => key,
        Root::Value => value,
    })
}

fn extract_unmarked(key: &[u8], value: &[u8], path: &Path, schemas: &dyn SchemaSource) -> Result<Extracted, ReadError> {
    let data = match path.root {
        Root::Key => key,
        Root::Value => value,
    };
    let type_id = data::type_id(data)?;
    if type_id == JSON {
        let text = Input::new(data, HEADER_SIZE).string()?.unwrap_or_default();
        return match path.steps.is_empty() {
            true => crate::json::this_value(&text).map(Extracted::Single),
            false => crate::json::extract(&text, &path.steps),
        };
    }
    if path.steps.is_empty() {
        return data::read_value(data, schemas).map(Extracted::Single);
    }
    match type_id {
        NULL => Ok(Extracted::Single(Value::Null)),
        COMPACT => walk(CompactRecord::parse(&data[HEADER_SIZE..], schemas)?, path),
        PORTABLE => walk(PortableRecord::parse(data, HEADER_SIZE)?, path),
        _ => {
            let whole = data::read_value(data, schemas)?;
            let name = path.steps.first().map_or(path.attribute.as_str(), |step| match step {
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

/// A record a path can walk: Compact and Portable records.
pub(crate) trait Record: Sized {
    fn has_field(&self, name: &str) -> bool;
    /// The field's value, null when there is no such field.
    fn leaf(&self, name: &str) -> Result<Value, ReadError>;
    fn item(&self, name: &str, index: usize) -> Result<Value, ReadError>;
    fn items(&self, name: &str) -> Result<Option<Vec<Value>>, ReadError>;
    fn nested(&self, name: &str) -> Result<Option<Self>, ReadError>;
    fn nested_item(&self, name: &str, index: usize) -> Result<Option<Self>, ReadError>;
    fn nested_items(&self, name: &str) -> Result<Option<Vec<Option<Self>>>, ReadError>;
}

/// A path's steps grouped as Hazelcast reads them: a name and at most one selector.
fn tokens(steps: &[Step]) -> Result<Vec<(&str, Option<&Step>)>, ReadError> {
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < steps.len() {
        let Step::Field(name) = &steps[at] else {
            return Err(ReadError::Attribute("a record path step needs a field name".into()));
        };
        let selector = steps.get(at + 1).filter(|step| !matches!(step, Step::Field(_)));
        if selector.is_some() && matches!(steps.get(at + 2), Some(Step::Index(_) | Step::Any)) {
            return Err(ReadError::Attribute(format!("arrays of arrays cannot be indexed: {name}")));
        }
        tokens.push((name.as_str(), selector));
        at += 1 + usize::from(selector.is_some());
    }
    Ok(tokens)
}

/// Hazelcast's `GenericRecordQueryReader.read` over `root`.
fn walk<R: Record>(root: R, path: &Path) -> Result<Extracted, ReadError> {
    walk_marked(root, path).map(|(extracted, _)| extracted)
}

/// [`walk`], and whether the result's leading null marks a null or empty target.
fn walk_marked<R: Record>(root: R, path: &Path) -> Result<(Extracted, bool), ReadError> {
    if root.has_field(&path.attribute) {
        return root.leaf(&path.attribute).map(|value| (Extracted::Single(value), false));
    }
    let tokens = tokens(&path.steps)?;
    let Some(((last, last_selector), inner)) = tokens.split_last() else {
        return Err(ReadError::Attribute("an empty path".into()));
    };
    let mut null_target = false;
    let mut records = vec![root];
    for (name, selector) in inner {
        let mut next = Vec::new();
        for record in records {
            let found = match (record.has_field(name), selector) {
                (false, _) => None,
                (true, None) => record.nested(name)?.map(|nested| vec![Some(nested)]),
                (true, Some(Step::Index(index))) => record.nested_item(name, *index)?.map(|nested| vec![Some(nested)]),
                (true, Some(_)) => record.nested_items(name)?,
            };
            match found {
                Some(found) if !found.is_empty() => {
                    null_target |= found.iter().any(Option::is_none);
                    next.extend(found.into_iter().flatten());
                }
                _ => null_target = true,
            }
        }
        records = next;
    }
    let mut results = Vec::new();
    for record in records {
        match last_selector {
            None => results.push(record.leaf(last)?),
            Some(Step::Index(index)) => {
                results.push(if record.has_field(last) { record.item(last, *index)? } else { Value::Null });
            }
            Some(_) => match record.has_field(last).then(|| record.items(last)).transpose()?.flatten() {
                Some(items) if !items.is_empty() => results.extend(items),
                _ => null_target = true,
            },
        }
    }
    let extracted = match (null_target, results.len()) {
        (true, _) => Extracted::Multi(std::iter::once(Value::Null).chain(results).collect()),
        (false, 1) => Extracted::Single(results.pop().unwrap_or(Value::Null)),
        (false, _) => Extracted::Multi(results),
    };
    Ok((extracted, null_target))
}

impl Record for CompactRecord<'_> {
    fn has_field(&self, name: &str) -> bool {
        self.schema().field(name).is_some()
    }

    fn leaf(&self, name: &str) -> Result<Value, ReadError> {
        Ok(self.field(name)?.unwrap_or(Value::Null))
    }

    fn item(&self, name: &str, index: usize) -> Result<Value, ReadError> {
        CompactRecord::item(self, name, index)
    }

    fn items(&self, name: &str) -> Result<Option<Vec<Value>>, ReadError> {
        CompactRecord::items(self, name)
    }

    fn nested(&self, name: &str) -> Result<Option<Self>, ReadError> {
        CompactRecord::nested(self, name)
    }

    fn nested_item(&self, name: &str, index: usize) -> Result<Option<Self>, ReadError> {
        CompactRecord::nested_item(self, name, index)
    }

    fn nested_items(&self, name: &str) -> Result<Option<Vec<Option<Self>>>, ReadError> {
        CompactRecord::nested_items(self, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str) -> Step {
        Step::Field(name.into())
    }

    #[test]
    fn paths_parse_as_hazelcast_writes_them() {
        let this = Path::parse("this").unwrap();
        assert_eq!((this.root(), this.steps()), (Root::Value, &[][..]));
        let key = Path::parse("__key").unwrap();
        assert_eq!((key.root(), key.steps()), (Root::Key, &[][..]));
        let key_field = Path::parse("__key.id").unwrap();
        assert_eq!((key_field.root(), key_field.steps()), (Root::Key, &[field("id")][..]));
        assert_eq!(Path::parse("__key#id").unwrap(), key_field);
        assert_eq!(Path::parse("this.a.b").unwrap().steps(), &[field("a"), field("b")]);
        assert_eq!(Path::parse("a.b").unwrap().attribute(), "a.b");
        assert_eq!(Path::parse("arr[2]").unwrap().steps(), &[field("arr"), Step::Index(2)]);
        assert_eq!(Path::parse("arr[any].x").unwrap().steps(), &[field("arr"), Step::Any, field("x")]);
        assert_eq!(Path::parse("[any]").unwrap().steps(), &[Step::Any]);
        assert_eq!(Path::parse("m[1][2]").unwrap().steps(), &[field("m"), Step::Index(1), Step::Index(2)]);
        assert_eq!(Path::parse("__keys").unwrap().steps(), &[field("__keys")]);
        for bad in ["", " ", "a.", ".a", "a..b", "a[", "a]", "a[x]", "a[-1]", "a[1]b", "a.[1]", "a[]"] {
            assert!(Path::parse(bad).is_err(), "{bad:?} is not a path");
        }
    }
}
