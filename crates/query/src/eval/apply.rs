//! Applying a leaf's test to one attribute value, as each of Hazelcast's predicate classes
//! does (`applyForSingleAttributeValue`), with its conversions of the predicate's values to
//! the attribute's type.

use super::{error, java_class, EvalError, EvalErrorKind, Leaf, State, Test};
use crate::error::QueryError;
use crate::value::Value;
use std::cmp::Ordering;
use std::sync::PoisonError;

impl Leaf {
    /// `applyForSingleAttributeValue` of each predicate class.
    pub(super) fn apply(&self, attribute: &Value) -> Result<bool, EvalError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let State { witness, value: equal_value, in_values } = &mut *state;
        if let Some(passes) = Leaf::apply_same_type(&self.test, witness, attribute) {
            return passes;
        }
        match &self.test {
            Test::Equal { .. } => {
                if attribute.is_null() {
                    return Ok(equal_value.is_null());
                }
                *equal_value = self.convert(witness, attribute, equal_value)?;
                Ok(attribute.equals(equal_value))
            }
            Test::Compare { value, equal, less } => {
                if attribute.is_null() {
                    return Ok(false);
                }
                let converted = self.convert(witness, attribute, value)?;
                let order = compare(attribute, &converted)?;
                let strict = if *less { Ordering::Less } else { Ordering::Greater };
                Ok((*equal && order == Ordering::Equal) || order == strict)
            }
            Test::Between { from, to } => self.between(witness, attribute, from, to),
            Test::In { values } => self.within(witness, in_values, attribute, values),
            Test::Pattern { pattern, .. } => match attribute {
                Value::Null => Ok(pattern.is_none()),
                Value::String(text) => match pattern {
                    None => Ok(false),
                    Some(Ok(regex)) => Ok(regex.is_match(text)),
                    Some(Err(failure)) => Err(failure.clone()),
                },
                other => Err(cast_error(other, "java.lang.String")),
            },
        }
    }

    /// [`Leaf::apply`] of a comparison or range whose bounds are of the attribute's own type,
    /// as the attributes of a scan mostly are: conversion would copy them unchanged, so they
    /// are compared as they are. None for any other test or type (see [`Leaf::apply`]).
    fn apply_same_type(test: &Test, witness: &mut Option<Value>, attribute: &Value) -> Option<Result<bool, EvalError>> {
        let same = |given: &Value| std::mem::discriminant(attribute) == std::mem::discriminant(given);
        if attribute.is_null() {
            return None;
        }
        let passes = match test {
            Test::Compare { value, equal, less } if same(value) => compare(attribute, value).map(|order| {
                let strict = if *less { Ordering::Less } else { Ordering::Greater };
                (*equal && order == Ordering::Equal) || order == strict
            }),
            Test::Between { from, to } if same(from) && same(to) => compare(attribute, from)
                .and_then(|low| Ok(low != Ordering::Less && compare(attribute, to)? != Ordering::Greater)),
            _ => return None,
        };
        // (the witness is the first attribute met, as conversion would have kept it)
        witness.get_or_insert_with(|| attribute.clone());
        Some(passes)
    }

    fn between(
        &self,
        witness: &mut Option<Value>,
        attribute: &Value,
        from: &Value,
        to: &Value,
    ) -> Result<bool, EvalError> {
        if attribute.is_null() {
            return Ok(false);
        }
        let from = self.convert(witness, attribute, from)?;
        let to = self.convert(witness, attribute, to)?;
        if from.is_null() || to.is_null() {
            return Ok(false);
        }
        Ok(compare(attribute, &from)? != Ordering::Less && compare(attribute, &to)? != Ordering::Greater)
    }

    fn within(
        &self,
        witness: &mut Option<Value>,
        in_values: &mut Option<Vec<Value>>,
        attribute: &Value,
        values: &[Value],
    ) -> Result<bool, EvalError> {
        if in_values.is_none() {
            if attribute.is_null() {
                return Ok(values.iter().any(Value::is_null));
            }
            let converted = values.iter().map(|value| self.convert(witness, attribute, value));
            *in_values = Some(converted.collect::<Result<_, _>>()?);
        }
        Ok(in_values.iter().flatten().any(|value| value.equals(attribute)))
    }

    /// `AbstractPredicate.convert`: `given` as is when null or of the attribute's type, else
    /// converted to the type of the first non-null attribute met.
    fn convert(&self, witness: &mut Option<Value>, attribute: &Value, given: &Value) -> Result<Value, EvalError> {
        if given.is_null() {
            return Ok(Value::Null);
        }
        let witness = witness.get_or_insert_with(|| attribute.clone());
        if std::mem::discriminant(attribute) == std::mem::discriminant(given) {
            return Ok(given.clone());
        }
        given.convert_like(witness).map_err(|failure| self.conversion_error(failure, given))
    }

    fn conversion_error(&self, failure: QueryError, given: &Value) -> EvalError {
        let text = matches!(given, Value::String(_));
        match failure {
            QueryError::Conversion { value, target } => match target {
                "number" | "java.math.BigInteger" | "java.math.BigDecimal" if text => {
                    error(EvalErrorKind::NumberFormat, format!("For input string: \"{value}\""))
                }
                "LocalDate" | "LocalTime" | "LocalDateTime" | "OffsetDateTime" if text => {
                    error(EvalErrorKind::DateTimeParse, format!("Text '{value}' could not be parsed"))
                }
                _ => error(EvalErrorKind::IllegalArgument, format!("Cannot convert [{value}] to {target}")),
            },
            QueryError::UnknownAttributeType { value, .. } => error(
                EvalErrorKind::Query,
                format!("Unknown attribute type: {} for attribute: {}", value, self.attribute),
            ),
        }
    }
}

/// `Comparables.compare(attribute, value)`: a null value is Java's `NullPointerException`, types
/// that do not compare its `ClassCastException`.
fn compare(attribute: &Value, value: &Value) -> Result<Ordering, EvalError> {
    if value.is_null() {
        return Err(error(EvalErrorKind::NullPointer, "Cannot invoke \"Object.getClass()\" because \"rhs\" is null"));
    }
    attribute.compare(value).ok_or_else(|| cast_error(value, &java_class(attribute)))
}

fn cast_error(value: &Value, target: &str) -> EvalError {
    error(EvalErrorKind::ClassCast, format!("class {} cannot be cast to class {target}", java_class(value)))
}
