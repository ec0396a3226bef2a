//! Attributes of `HazelcastJsonValue`s, as Hazelcast's JSON getters extract them.
//!
//! - A path walks objects by key and arrays by index; anything missing, or a key asked of a
//!   non-object, an index of a non-array, gives null. An object or array at the end of the path
//!   is a [`Value::JsonStructure`] (Hazelcast's `NonTerminalJsonValue`), which no predicate
//!   matches.
//! - `[any]` takes every element of an array: with nothing after it, the scalar elements
//!   (objects and arrays skipped); with keys after it, those keys followed in each object
//!   element (elements without them skipped). Another index or `[any]` after `[any]` is an
//!   error ("Nested arrays in JSON paths are not supported"), as in Hazelcast.
//! - Numbers written without a fraction or exponent are longs; others are doubles. A text that
//!   is not JSON gives null for every path (Hazelcast: "Json strings are allowed to be
//!   invalid"), and an error when read whole (`this`).
//!
//! Differences from Hazelcast 5.6: with its default metadata policy, Hazelcast fails a query on
//! a number with an exponent but no fraction (`1e5`) or an integer beyond a long; here the
//! first is a double and only the second an error. Where an object repeats a key Hazelcast
//! takes the first, here the last counts. Documents nested deeper than 128 levels are treated as
//! invalid (serde_json's limit).

use crate::attribute::{Extracted, Step};
use crate::error::ReadError;
use crate::value::Value;
use serde_json::Value as Json;

/// A JSON scalar as Hazelcast's query engine sees it; objects and arrays are
/// [`Value::JsonStructure`].
fn convert(json: &Json) -> Result<Value, ReadError> {
    Ok(match json {
        Json::Null => Value::Null,
        Json::Bool(value) => Value::Bool(*value),
        Json::String(text) => Value::String(text.clone()),
        Json::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(long), _) => Value::Long(long),
            (None, Some(_)) => return Err(ReadError::Attribute(format!("JSON number {number} is beyond a long"))),
            (None, None) => Value::Double(number.as_f64().unwrap_or(f64::NAN)),
        },
        Json::Array(_) | Json::Object(_) => Value::JsonStructure,
    })
}

/// A whole `HazelcastJsonValue` (the `this` attribute): its scalar, or a structure.
pub fn this_value(text: &str) -> Result<Value, ReadError> {
    let json: Json = serde_json::from_str(text).map_err(|error| ReadError::InvalidJson(error.to_string()))?;
    convert(&json)
}

/// The attribute at `steps` in the JSON document `text`.
pub fn extract(text: &str, steps: &[Step]) -> Result<Extracted, ReadError> {
    let Ok(json) = serde_json::from_str::<Json>(text) else {
        return Ok(Extracted::Single(Value::Null));
    };
    let mut node = &json;
    for (at, step) in steps.iter().enumerate() {
        let next = match (step, node) {
            (Step::Field(name), Json::Object(members)) => members.get(name),
            (Step::Index(index), Json::Array(items)) => items.get(*index),
            (Step::Any, Json::Array(items)) => return any(items, &steps[at + 1..]).map(Extracted::Multi),
            _ => None,
        };
        let Some(next) = next else {
            return Ok(Extracted::Single(Value::Null));
        };
        node = next;
    }
    convert(node).map(Extracted::Single)
}

const NESTED_ARRAYS: &str = "Nested arrays in JSON paths are not supported";

/// `[any]` over `items`, then the keys in `rest`.
fn any(items: &[Json], rest: &[Step]) -> Result<Vec<Value>, ReadError> {
    let mut values = Vec::new();
    for item in items {
        match (item, rest.first()) {
            (Json::Array(_) | Json::Object(_), None) => {}
            (_, None) => values.push(convert(item)?),
            (Json::Array(_), Some(Step::Index(_) | Step::Any)) => {
                return Err(ReadError::Attribute(NESTED_ARRAYS.into()))
            }
            (Json::Object(_), Some(_)) => {
                if let Some(found) = follow_keys(item, rest)? {
                    values.push(convert(found)?);
                }
            }
            _ => {}
        }
    }
    Ok(values)
}

/// The value at the keys `rest` from `object`, `None` when one is missing.
fn follow_keys<'a>(object: &'a Json, rest: &[Step]) -> Result<Option<&'a Json>, ReadError> {
    let mut node = object;
    for step in rest {
        let Step::Field(name) = step else {
            return Err(ReadError::Attribute(NESTED_ARRAYS.into()));
        };
        match node {
            Json::Object(members) => match members.get(name) {
                Some(next) => node = next,
                None => return Ok(None),
            },
            _ => return Ok(None),
        }
    }
    Ok(Some(node))
}
