//! Records a path walks into (Compact and Portable ones) and the walk through them, Hazelcast's
//! `GenericRecordQueryReader.read`: how its results hold nulls is in the `path` module's doc.

use crate::attribute::{Extracted, Path, Step};
use crate::compact::CompactRecord;
use crate::error::ReadError;
use crate::value::Value;

/// A record a path can walk: Compact and Portable records.
pub(crate) trait Record: Sized {
    fn has_field(&self, name: &str) -> bool;
    /// The field's value, None when there is no such field (one lookup for both).
    fn present_leaf(&self, name: &str) -> Result<Option<Value>, ReadError> {
        if !self.has_field(name) {
            return Ok(None);
        }
        self.leaf(name).map(Some)
    }
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
pub(crate) fn walk<R: Record>(root: R, path: &Path) -> Result<Extracted, ReadError> {
    walk_marked(root, path).map(|(extracted, _)| extracted)
}

/// [`walk`], and whether the result's leading null marks a null or empty target.
pub(crate) fn walk_marked<R: Record>(root: R, path: &Path) -> Result<(Extracted, bool), ReadError> {
    if let Some(value) = root.present_leaf(path.attribute())? {
        return Ok((Extracted::Single(value), false));
    }
    let tokens = tokens(path.steps())?;
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

    fn present_leaf(&self, name: &str) -> Result<Option<Value>, ReadError> {
        self.field(name)
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
