//! Scalar values read at a dotted path: text, numbers, booleans and the enumerations of the
//! document, each a `Parser` that names the path in its error.

use std::net::Ipv4Addr;

use serde_yaml::Value;

use super::Result;
use crate::error::{invalid, ConfigError};
use crate::{EvictionPolicy, MaxSizePolicy, Placement};

pub(super) fn text(value: &Value, path: &str) -> Result<String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        other => Err(expected(path, "text", other)),
    }
}

/// Text, where nothing (an empty XML element) is the empty text.
pub(super) fn optional_text(value: &Value, path: &str) -> Result<String> {
    match value {
        Value::Null => Ok(String::new()),
        other => text(other, path),
    }
}

/// `indexes`: a list of `{type: SORTED|HASH|BITMAP, attributes: [..]}` (type default SORTED;
/// a `name` is accepted and not used).
pub(super) fn map_indexes(value: &Value, path: &str) -> Result<Vec<crate::MapIndexConfig>> {
    let Value::Sequence(items) = value else { return Err(expected(path, "a list", value)) };
    let mut indexes = Vec::new();
    for (position, item) in items.iter().enumerate() {
        let path = format!("{path}[{position}]");
        let Value::Mapping(fields) = item else { return Err(expected(&path, "an index", item)) };
        let mut index = crate::MapIndexConfig { sorted: true, attributes: Vec::new() };
        for (key, field) in fields {
            let key = key.as_str().unwrap_or("");
            let field_path = format!("{path}.{key}");
            match key {
                "type" => {
                    index.sorted = match text(field, &field_path)?.to_ascii_uppercase().as_str() {
                        "SORTED" => true,
                        "HASH" | "BITMAP" => false,
                        other => {
                            return Err(invalid(field_path, format!("expected SORTED, HASH or BITMAP, got {other}")))
                        }
                    }
                }
                "attributes" => index.attributes = strings(field, &field_path)?,
                "name" => {}
                other => return Err(invalid(field_path, format!("unknown index setting {other}"))),
            }
        }
        if index.attributes.is_empty() || index.attributes.iter().any(|attribute| attribute.trim().is_empty()) {
            return Err(invalid(path, "an index needs at least one attribute, none blank"));
        }
        indexes.push(index);
    }
    Ok(indexes)
}

pub(super) fn strings(value: &Value, path: &str) -> Result<Vec<String>> {
    let items = match value {
        Value::Null => &[][..],
        Value::Sequence(items) => items,
        other => return Err(expected(path, "a list", other)),
    };
    let items = items.iter().enumerate();
    items.map(|(index, item)| text(item, &format!("{path}[{index}]"))).collect()
}

pub(super) fn boolean(value: &Value, path: &str) -> Result<bool> {
    match value {
        Value::Bool(flag) => Ok(*flag),
        Value::String(text) if text.eq_ignore_ascii_case("true") => Ok(true),
        Value::String(text) if text.eq_ignore_ascii_case("false") => Ok(false),
        other => Err(expected(path, "true or false", other)),
    }
}

pub(super) fn max_size_policy(value: &Value, path: &str) -> Result<MaxSizePolicy> {
    match text(value, path)?.to_ascii_uppercase().as_str() {
        "PER_NODE" => Ok(MaxSizePolicy::PerNode),
        "PER_PARTITION" => Ok(MaxSizePolicy::PerPartition),
        "USED_HEAP_SIZE" => Ok(MaxSizePolicy::UsedHeapSize),
        other => Err(invalid(
            path.to_owned(),
            format!("max-size-policy {other} is not supported; use PER_NODE, PER_PARTITION or USED_HEAP_SIZE"),
        )),
    }
}

pub(super) fn eviction_policy(value: &Value, path: &str) -> Result<EvictionPolicy> {
    match text(value, path)?.to_ascii_uppercase().as_str() {
        "LRU" => Ok(EvictionPolicy::Lru),
        "LFU" => Ok(EvictionPolicy::Lfu),
        "RANDOM" => Ok(EvictionPolicy::Random),
        "NONE" => Ok(EvictionPolicy::None),
        other => Err(invalid(path.to_owned(), format!("expected LRU, LFU, RANDOM or NONE, got {other}"))),
    }
}

/// A merge policy's `class-name`: Hazelcast's built-in policies, by short or full class name
/// (ferrogrid runs no Java: another class is refused).
pub(super) fn merge_policy(value: &Value, path: &str) -> Result<crate::MergePolicy> {
    let name = text(value, path)?;
    crate::MergePolicy::parse(&name).ok_or_else(|| {
        let known = crate::MergePolicy::known_names();
        invalid(path.to_owned(), format!("expected {known} (optionally with com.hazelcast.spi.merge.), got {name}"))
    })
}

pub(super) fn placement(value: &Value, path: &str) -> Result<Placement> {
    match text(value, path)?.as_str() {
        "packed" => Ok(Placement::Packed),
        "least-connections" => Ok(Placement::LeastConnections),
        "first-reactor" => Ok(Placement::FirstReactor),
        other => {
            Err(invalid(path.to_owned(), format!("expected packed, least-connections or first-reactor, got {other}")))
        }
    }
}

/// An integer that may be negative, written as a number or a string of digits.
pub(super) fn signed(value: &Value, path: &str) -> Result<i64> {
    let number = match value {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => text.trim().parse::<i64>().ok(),
        _ => None,
    };
    number.ok_or_else(|| expected(path, "an integer", value))
}

/// ferrogrid keeps serialized bytes either way; NATIVE (off-heap, Enterprise) is refused.
pub(super) fn value_collection_type(value: &Value, path: &str) -> Result<crate::ValueCollectionType> {
    match text(value, path)?.to_ascii_uppercase().as_str() {
        "SET" => Ok(crate::ValueCollectionType::Set),
        "LIST" => Ok(crate::ValueCollectionType::List),
        other => Err(invalid(path.to_owned(), format!("value-collection-type {other}: expected SET or LIST"))),
    }
}

/// A replicated map's `in-memory-format` (NATIVE is read, and refused by `validate`).
pub(super) fn in_memory_format_kind(value: &Value, path: &str) -> Result<crate::InMemoryFormat> {
    match text(value, path)?.to_ascii_uppercase().as_str() {
        "BINARY" => Ok(crate::InMemoryFormat::Binary),
        "OBJECT" => Ok(crate::InMemoryFormat::Object),
        "NATIVE" => Ok(crate::InMemoryFormat::Native),
        other => Err(invalid(path.to_owned(), format!("in-memory-format {other}: expected OBJECT or BINARY"))),
    }
}

pub(super) fn in_memory_format(value: &Value, path: &str) -> Result<()> {
    match text(value, path)?.to_ascii_uppercase().as_str() {
        "BINARY" | "OBJECT" => Ok(()),
        other => Err(invalid(path.to_owned(), format!("in-memory-format {other} is not supported; use BINARY"))),
    }
}

/// An integer in `0..=T::MAX`, written as a number or a string of digits.
pub(super) fn unsigned<T: TryFrom<u64> + Bounded>(value: &Value, path: &str) -> Result<T> {
    let number = match value {
        Value::Number(number) => number.as_u64(),
        Value::String(text) => text.trim().parse::<u64>().ok(),
        _ => None,
    };
    let number = number.and_then(|number| T::try_from(number).ok());
    number.ok_or_else(|| expected(path, &format!("an integer in 0..={}", T::MAX), value))
}

/// The largest value of an unsigned setting type, for error messages.
pub(super) trait Bounded {
    const MAX: u64;
}

macro_rules! bounded {
    ($($type:ty),*) => {$(impl Bounded for $type { const MAX: u64 = <$type>::MAX as u64; })*};
}
bounded!(u8, u16, u32, u64, usize);

/// `host`, `host:port` or `[ipv6]:port` (without a port, the bound port is advertised).
pub(super) fn public_address(value: &Value, path: &str) -> Result<Option<crate::network::PublicAddress>> {
    let address = text(value, path)?;
    crate::network::PublicAddress::parse(&address).map(Some).map_err(|message| invalid(path, message))
}

/// The address an interface pattern names: each `*` octet becomes 1, each range `a-b` its `a`.
pub(super) fn interface_host(pattern: &str) -> Option<Ipv4Addr> {
    let octet = |octet: &str| match octet.trim() {
        "*" => "1".to_owned(),
        range => range.split('-').next().unwrap_or_default().to_owned(),
    };
    let octets: Vec<String> = pattern.split('.').map(octet).collect();
    octets.join(".").parse().ok()
}

pub(super) fn expected(path: &str, what: &str, value: &Value) -> ConfigError {
    invalid(path, format!("expected {what}, got {}", describe(value)))
}

pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => format!("{text:?}"),
        Value::Sequence(_) => "a list".to_owned(),
        Value::Mapping(_) => "a mapping".to_owned(),
        Value::Tagged(tagged) => format!("a value tagged {}", tagged.tag),
    }
}
