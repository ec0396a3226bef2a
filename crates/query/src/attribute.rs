//! Attribute paths as clients write them, parsed into steps, and what resolving one finds.
//!
//! Syntax: `this` (the value), `__key` (the key), `this.a` (same as `a`), `__key.a` (an
//! attribute of the key; `__key#a` is the old spelling), `a.b.c` (nested records), `a[2]` (one
//! array item), `a[any]` (every item: the result is [`Extracted::Multi`]). An index is a
//! non-negative decimal number (Hazelcast would take a negative one and fail later).
//!
//! How a path is resolved against an entry is the `path` module's job, which builds on this one.

use crate::error::ReadError;
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

    /// The blob the path starts from: the entry's `key` or its `value`.
    pub fn blob<'a>(&self, key: &'a [u8], value: &'a [u8]) -> &'a [u8] {
        match self.root {
            Root::Key => key,
            Root::Value => value,
        }
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
