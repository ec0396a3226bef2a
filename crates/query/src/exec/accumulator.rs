//! One aggregation in progress ([`Accumulator`]): its state per aggregator, how values are
//! added and partials combined, and the partial's bytes ([`Accumulator::encode`]).

use super::distinct::{distinct_of, Distinct, DistinctSet, MAX_CAPACITY};
use super::java_numbers::{
    as_double_exactly, as_int_exactly, as_long_exactly, cast_error, divide_exactly, double_value, long_value, number,
};
use super::{extract_items, inline_of};
use crate::aggregation::{aggregator_class_id as class_id, Aggregator};
use crate::compact::{DirectRead, SchemaSource};
use crate::data::read_object;
use crate::error::ReadError;
use crate::input::Input;
use crate::java::{java_class, ExecError};
use crate::number::{digit_count, BigDecimal, MAX_DIGITS};
use crate::order::is_comparable;
use crate::path::{extract_direct, Path};
use crate::predicate::Literal;
use crate::value::Value;
use crate::wire::NoSchemas;
use crate::write::{self, write_object, ArrayType};
use num_bigint::BigInt;
use std::cmp::Ordering;

/// The best value of a minBy or maxBy, with its entry's key and value blobs.
type BestEntry = (Value, Vec<u8>, Vec<u8>);

/// How a sum takes its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Integral {
    /// `Numbers.asIntExactly` (IntegerSum, IntegerAverage).
    Int,
    /// `Numbers.asLongExactly` (LongSum, LongAverage).
    Long,
    /// `Number.longValue()` (FixedPointSum).
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Floating {
    /// `Numbers.asDoubleExactly` (DoubleSum, DoubleAverage).
    Exact,
    /// `Number.doubleValue()` (FloatingPointSum, NumberAverage).
    Any,
}

/// An aggregation's state; `count` is `Some` for averages.
#[derive(Debug, Clone, PartialEq)]
enum State {
    Count(i64),
    Distinct(DistinctSet),
    LongSum {
        takes: Integral,
        sum: i64,
        count: Option<i64>,
    },
    DoubleSum {
        takes: Floating,
        sum: f64,
        count: Option<i64>,
    },
    BigDecimalSum {
        sum: BigDecimal,
        count: Option<i64>,
    },
    BigIntegerSum {
        sum: BigInt,
        count: Option<i64>,
    },
    /// Min (`greatest` false) or max; `best` is never null.
    Extreme {
        greatest: bool,
        best: Option<Value>,
    },
    /// MinBy or maxBy: the best value and its entry's key and value blobs.
    ExtremeBy {
        greatest: bool,
        best: Option<BestEntry>,
    },
    /// An aggregator that cannot run (a bad path or state): every use reports this.
    Invalid(ExecError),
}

/// One aggregation in progress (one partition's, or several combined).
#[derive(Debug, Clone, PartialEq)]
pub struct Accumulator {
    class_id: i32,
    /// (shared: every partition's accumulator starts as a clone of one)
    attribute: Option<std::sync::Arc<Path>>,
    /// The attribute read straight from Compact values' bytes, when it can be.
    direct: DirectRead,
    state: State,
}

fn literal_value(literal: &Literal) -> Result<Value, ExecError> {
    Ok(read_object(&literal.bytes, 0, &NoSchemas)?.0)
}

impl Accumulator {
    /// An accumulator starting from the state the aggregator was sent with (a client sends
    /// zero sums, null extremes and no values). An attribute path that does not parse, or a
    /// state of the wrong type, is an error.
    pub fn try_new(aggregator: &Aggregator) -> Result<Accumulator, ExecError> {
        let attribute = aggregator.attribute().map(Path::parse).transpose()?.map(std::sync::Arc::new);
        let (class_id, state) = initial_state(aggregator)?;
        Ok(Accumulator { class_id, attribute, direct: DirectRead::default(), state })
    }

    /// An accumulator starting from the state the aggregator was sent with (a client sends
    /// zero sums, null extremes and no values). An aggregator whose attribute path does not
    /// parse, or whose state is of the wrong type, gives an accumulator whose every use
    /// reports that error.
    pub fn new(aggregator: &Aggregator) -> Accumulator {
        Accumulator::try_new(aggregator).unwrap_or_else(|error| Accumulator {
            class_id: class_of(aggregator),
            attribute: None,
            direct: DirectRead::default(),
            state: State::Invalid(error),
        })
    }
}

fn class_of(aggregator: &Aggregator) -> i32 {
    use Aggregator::*;
    match aggregator {
        BigDecimalAverage { .. } => class_id::BIG_DECIMAL_AVERAGE,
        BigDecimalSum { .. } => class_id::BIG_DECIMAL_SUM,
        BigIntegerAverage { .. } => class_id::BIG_INTEGER_AVERAGE,
        BigIntegerSum { .. } => class_id::BIG_INTEGER_SUM,
        Count { .. } => class_id::COUNT,
        Distinct { .. } => class_id::DISTINCT,
        DoubleAverage { .. } => class_id::DOUBLE_AVERAGE,
        DoubleSum { .. } => class_id::DOUBLE_SUM,
        FixedPointSum { .. } => class_id::FIXED_POINT_SUM,
        FloatingPointSum { .. } => class_id::FLOATING_POINT_SUM,
        IntegerAverage { .. } => class_id::INTEGER_AVERAGE,
        IntegerSum { .. } => class_id::INTEGER_SUM,
        LongAverage { .. } => class_id::LONG_AVERAGE,
        LongSum { .. } => class_id::LONG_SUM,
        Max { .. } => class_id::MAX,
        Min { .. } => class_id::MIN,
        NumberAverage { .. } => class_id::NUMBER_AVERAGE,
        MaxBy { .. } => class_id::MAX_BY,
        MinBy { .. } => class_id::MIN_BY,
    }
}

/// A `BigDecimal` sum as the aggregator was sent with it.
fn sum_decimal(sum: &Literal) -> Result<BigDecimal, ExecError> {
    match literal_value(sum)? {
        Value::BigDecimal(decimal) => Ok(decimal),
        other => Err(cast_error(&other, "java.math.BigDecimal")),
    }
}

/// A `BigInteger` sum as the aggregator was sent with it.
fn sum_integer(sum: &Literal) -> Result<BigInt, ExecError> {
    match literal_value(sum)? {
        Value::BigInteger(integer) => Ok(integer),
        other => Err(cast_error(&other, "java.math.BigInteger")),
    }
}

/// The best value a min or max was sent with (null: none yet).
fn initial_extreme(literal: &Literal) -> Result<Option<Value>, ExecError> {
    Ok(Some(literal_value(literal)?).filter(|v| !v.is_null()))
}

/// The best entry a minBy or maxBy was sent with: only none is supported.
fn initial_extreme_by(value: &Literal, entry: &Literal) -> Result<Option<BestEntry>, ExecError> {
    match (initial_extreme(value)?, literal_value(entry)) {
        (None, Ok(Value::Null)) => Ok(None),
        _ => Err(ExecError::Unsupported("a minBy/maxBy sent with an entry".into())),
    }
}

fn initial_state(aggregator: &Aggregator) -> Result<(i32, State), ExecError> {
    use Aggregator::*;
    Ok(match aggregator {
        BigDecimalAverage { sum, count, .. } => {
            (class_id::BIG_DECIMAL_AVERAGE, State::BigDecimalSum { sum: sum_decimal(sum)?, count: Some(*count) })
        }
        BigDecimalSum { sum, .. } => {
            (class_id::BIG_DECIMAL_SUM, State::BigDecimalSum { sum: sum_decimal(sum)?, count: None })
        }
        BigIntegerAverage { sum, count, .. } => {
            (class_id::BIG_INTEGER_AVERAGE, State::BigIntegerSum { sum: sum_integer(sum)?, count: Some(*count) })
        }
        BigIntegerSum { sum, .. } => {
            (class_id::BIG_INTEGER_SUM, State::BigIntegerSum { sum: sum_integer(sum)?, count: None })
        }
        Count { count, .. } => (class_id::COUNT, State::Count(*count)),
        Distinct { values, .. } => {
            let mut set = DistinctSet::default();
            for literal in values {
                set.put(distinct_of(&literal_value(literal)?, literal.bytes.clone())?);
            }
            (class_id::DISTINCT, State::Distinct(set))
        }
        DoubleAverage { sum, count, .. } => {
            (class_id::DOUBLE_AVERAGE, State::DoubleSum { takes: Floating::Exact, sum: *sum, count: Some(*count) })
        }
        DoubleSum { sum, .. } => {
            (class_id::DOUBLE_SUM, State::DoubleSum { takes: Floating::Exact, sum: *sum, count: None })
        }
        FixedPointSum { sum, .. } => {
            (class_id::FIXED_POINT_SUM, State::LongSum { takes: Integral::Any, sum: *sum, count: None })
        }
        FloatingPointSum { sum, .. } => {
            (class_id::FLOATING_POINT_SUM, State::DoubleSum { takes: Floating::Any, sum: *sum, count: None })
        }
        IntegerAverage { sum, count, .. } => {
            (class_id::INTEGER_AVERAGE, State::LongSum { takes: Integral::Int, sum: *sum, count: Some(*count) })
        }
        IntegerSum { sum, .. } => {
            (class_id::INTEGER_SUM, State::LongSum { takes: Integral::Int, sum: *sum, count: None })
        }
        LongAverage { sum, count, .. } => {
            (class_id::LONG_AVERAGE, State::LongSum { takes: Integral::Long, sum: *sum, count: Some(*count) })
        }
        LongSum { sum, .. } => (class_id::LONG_SUM, State::LongSum { takes: Integral::Long, sum: *sum, count: None }),
        Max { max, .. } => (class_id::MAX, State::Extreme { greatest: true, best: initial_extreme(max)? }),
        Min { min, .. } => (class_id::MIN, State::Extreme { greatest: false, best: initial_extreme(min)? }),
        NumberAverage { sum, count, .. } => {
            (class_id::NUMBER_AVERAGE, State::DoubleSum { takes: Floating::Any, sum: *sum, count: Some(*count) })
        }
        MaxBy { max_value, max_entry, .. } => {
            (class_id::MAX_BY, State::ExtremeBy { greatest: true, best: initial_extreme_by(max_value, max_entry)? })
        }
        MinBy { min_value, min_entry, .. } => {
            (class_id::MIN_BY, State::ExtremeBy { greatest: false, best: initial_extreme_by(min_value, min_entry)? })
        }
    })
}

impl Accumulator {
    /// Adds one entry (its key and value `Data` blobs). On an error nothing is added.
    pub fn accumulate(&mut self, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Result<(), ExecError> {
        if let State::Invalid(error) = &self.state {
            return Err(error.clone());
        }
        let inline = matches!(self.state, State::Distinct(_));
        let direct = self.attribute.as_deref().filter(|_| !inline);
        if let Some(read) = direct.and_then(|path| extract_direct(&self.direct, (key, value), path, schemas)) {
            let entry =
                Taken { values: std::slice::from_ref(&read), inline: None, array_type: None, key, value, schemas };
            return self.state.take(entry);
        }
        let extraction = extract_items(self.attribute.as_deref(), (key, value), schemas, inline)?;
        if extraction.json_internal {
            return self.accumulate_json_internal();
        }
        let mut skip_marker = extraction.marked;
        let mut values = Vec::with_capacity(extraction.items.len());
        for item in extraction.items {
            if skip_marker && item.is_null() {
                skip_marker = false;
                continue;
            }
            values.push(item);
        }
        let inline = if values.len() == 1 { extraction.inline } else { None };
        let entry = Taken { values: &values, inline, array_type: extraction.array_type, key, value, schemas };
        self.state.take(entry)
    }

    /// Hazelcast's internal JSON value (`this` of a JSON document): only counted.
    fn accumulate_json_internal(&mut self) -> Result<(), ExecError> {
        let class = "com.hazelcast.internal.json.JsonValue";
        match &mut self.state {
            State::Count(count) => {
                *count = count.wrapping_add(1);
                Ok(())
            }
            State::Distinct(_) => Err(ExecError::Unsupported(format!("a distinct set of {class} (Java-serialized)"))),
            State::BigDecimalSum { .. } => {
                Err(ExecError::ClassCast(format!("class {class} cannot be cast to class java.math.BigDecimal")))
            }
            State::BigIntegerSum { .. } => {
                Err(ExecError::ClassCast(format!("class {class} cannot be cast to class java.math.BigInteger")))
            }
            State::Extreme { .. } | State::ExtremeBy { .. } => {
                Err(ExecError::ClassCast(format!("class {class} cannot be cast to class java.lang.Comparable")))
            }
            _ => Err(ExecError::ClassCast(format!("class {class} cannot be cast to class java.lang.Number"))),
        }
    }

    /// Adds another accumulator of the same aggregator (Hazelcast's `combine`).
    pub fn combine(&mut self, other: Accumulator) -> Result<(), ExecError> {
        if other.class_id != self.class_id {
            let message = format!("aggregator {} cannot be combined with aggregator {}", other.class_id, self.class_id);
            return Err(ExecError::ClassCast(message));
        }
        if let (State::Distinct(set), State::Distinct(other)) = (&mut self.state, &other.state) {
            // Combining sets cannot fail: in place (a copy per combine grows with the set).
            set.put_all(other);
            return Ok(());
        }
        let next = self.state.combined(other.state)?;
        self.state = next;
        Ok(())
    }

    /// The result as the `Data` blob the client gets; `None` for null. `schemas` lay out the
    /// Compact records of a minBy/maxBy entry as the member does.
    pub fn result(&self, schemas: &dyn SchemaSource) -> Result<Option<Vec<u8>>, ExecError> {
        let average = |sum: f64, count: i64| Value::Double(sum / count as f64);
        let value = match &self.state {
            State::Invalid(error) => return Err(error.clone()),
            State::Count(count) => Value::Long(*count),
            State::Distinct(set) => {
                let items: Vec<Vec<u8>> = set.ordered().into_iter().map(|entry| entry.inline.clone()).collect();
                return Ok(Some(write::write_hash_set(&items)));
            }
            State::LongSum { sum, count: None, .. } => Value::Long(*sum),
            State::DoubleSum { sum, count: None, .. } => Value::Double(*sum),
            State::BigDecimalSum { sum, count: None } => Value::BigDecimal(sum.clone()),
            State::BigIntegerSum { sum, count: None } => Value::BigInteger(sum.clone()),
            State::LongSum { count: Some(0), .. }
            | State::DoubleSum { count: Some(0), .. }
            | State::BigDecimalSum { count: Some(0), .. }
            | State::BigIntegerSum { count: Some(0), .. } => Value::Null,
            State::LongSum { sum, count: Some(count), .. } => average(*sum as f64, *count),
            State::DoubleSum { sum, count: Some(count), .. } => average(*sum, *count),
            State::BigDecimalSum { sum, count: Some(count) } => Value::BigDecimal(divide_exactly(sum, *count)?),
            State::BigIntegerSum { sum, count: Some(count) } => {
                Value::BigDecimal(divide_exactly(&BigDecimal::new(sum.clone(), 0), *count)?)
            }
            State::Extreme { best, .. } => best.clone().unwrap_or(Value::Null),
            State::ExtremeBy { best: None, .. } => Value::Null,
            State::ExtremeBy { best: Some((_, key, value)), .. } => {
                return Ok(Some(write::write_entry(key, value, schemas)?))
            }
        };
        Ok(write::write_nullable(&value)?)
    }
}

/// The values one entry gives an aggregator, after the null-target marker is dropped.
struct Taken<'e> {
    values: &'e [Value],
    /// The single value's inline form when it is a whole blob of the entry.
    inline: Option<Vec<u8>>,
    array_type: Option<ArrayType>,
    key: &'e [u8],
    value: &'e [u8],
    schemas: &'e dyn SchemaSource,
}

/// The distinct set's entries for the values `taken` holds.
fn distinct_items(taken: &Taken<'_>) -> Result<Vec<Distinct>, ExecError> {
    let mut items = Vec::with_capacity(taken.values.len());
    for value in taken.values {
        let inline = match &taken.inline {
            Some(inline) => inline.clone(),
            None => write::canonical_inline(&inline_of(value, taken.array_type)?, taken.schemas)?,
        };
        items.push(distinct_of(value, inline)?);
    }
    Ok(items)
}

impl State {
    /// Takes `taken` (`accumulateExtracted` for each value); on an error the state is as it
    /// was. A distinct set is changed in place once every value is ready (a copy per entry
    /// made a distinct aggregation quadratic).
    fn take(&mut self, taken: Taken<'_>) -> Result<(), ExecError> {
        if let State::Distinct(set) = self {
            for item in distinct_items(&taken)? {
                set.put(item);
            }
            return Ok(());
        }
        *self = self.with(taken)?;
        Ok(())
    }

    /// The state after `taken` (`accumulateExtracted` for each value), or the first error.
    fn with(&self, taken: Taken<'_>) -> Result<State, ExecError> {
        let mut next = self.clone();
        match &mut next {
            State::Count(count) => *count = count.wrapping_add(taken.values.len() as i64),
            State::Distinct(set) => distinct_items(&taken)?.into_iter().for_each(|item| set.put(item)),
            State::LongSum { takes, sum, count } => {
                for value in taken.values {
                    let add = match takes {
                        Integral::Int => i64::from(as_int_exactly(value)?),
                        Integral::Long => as_long_exactly(value)?,
                        Integral::Any => long_value(value)?,
                    };
                    *sum = sum.wrapping_add(add);
                    count.iter_mut().for_each(|count| *count = count.wrapping_add(1));
                }
            }
            State::DoubleSum { takes, sum, count } => {
                for value in taken.values {
                    *sum += match takes {
                        Floating::Exact => as_double_exactly(value)?,
                        Floating::Any => double_value(number(value, "java.lang.Number")?),
                    };
                    count.iter_mut().for_each(|count| *count = count.wrapping_add(1));
                }
            }
            State::BigDecimalSum { sum, count } => {
                for value in taken.values {
                    let Value::BigDecimal(add) = big(value, "java.math.BigDecimal")? else { continue };
                    *sum = add_decimals(sum, add)?;
                    count.iter_mut().for_each(|count| *count = count.wrapping_add(1));
                }
            }
            State::BigIntegerSum { sum, count } => {
                for value in taken.values {
                    let Value::BigInteger(add) = big(value, "java.math.BigInteger")? else { continue };
                    *sum += add;
                    count.iter_mut().for_each(|count| *count = count.wrapping_add(1));
                }
            }
            State::Extreme { greatest, best } => {
                for value in taken.values {
                    if better(*greatest, best.as_ref(), value)? {
                        *best = Some(value.clone());
                    }
                }
            }
            State::ExtremeBy { greatest, best } => {
                for value in taken.values {
                    if better(*greatest, best.as_ref().map(|(best, _, _)| best), value)? {
                        *best = Some((value.clone(), taken.key.to_vec(), taken.value.to_vec()));
                    }
                }
            }
            State::Invalid(error) => return Err(error.clone()),
        }
        Ok(next)
    }

    /// The state after `other` is combined into it.
    fn combined(&self, other: State) -> Result<State, ExecError> {
        let mut next = self.clone();
        match (&mut next, other) {
            (State::Count(count), State::Count(other)) => *count = count.wrapping_add(other),
            (State::Distinct(set), State::Distinct(other)) => set.put_all(&other),
            (State::LongSum { sum, count, .. }, State::LongSum { sum: other, count: other_count, .. }) => {
                *sum = sum.wrapping_add(other);
                add_counts(count, other_count);
            }
            (State::DoubleSum { sum, count, .. }, State::DoubleSum { sum: other, count: other_count, .. }) => {
                *sum += other;
                add_counts(count, other_count);
            }
            (State::BigDecimalSum { sum, count }, State::BigDecimalSum { sum: other, count: other_count }) => {
                *sum = add_decimals(sum, &other)?;
                add_counts(count, other_count);
            }
            (State::BigIntegerSum { sum, count }, State::BigIntegerSum { sum: other, count: other_count }) => {
                *sum += other;
                add_counts(count, other_count);
            }
            (State::Extreme { greatest, best }, State::Extreme { best: Some(other), .. }) => {
                if better(*greatest, best.as_ref(), &other)? {
                    *best = Some(other);
                }
            }
            (State::ExtremeBy { greatest, best }, State::ExtremeBy { best: Some(other), .. }) => {
                if better(*greatest, best.as_ref().map(|(best, _, _)| best), &other.0)? {
                    *best = Some(other);
                }
            }
            (State::Extreme { .. }, State::Extreme { best: None, .. })
            | (State::ExtremeBy { .. }, State::ExtremeBy { best: None, .. }) => {}
            (State::Invalid(error), _) => return Err(error.clone()),
            (_, State::Invalid(error)) => return Err(error),
            _ => return Err(ExecError::ClassCast("accumulators of different aggregators".into())),
        }
        Ok(next)
    }
}

fn add_counts(count: &mut Option<i64>, other: Option<i64>) {
    if let (Some(count), Some(other)) = (count.as_mut(), other) {
        *count = count.wrapping_add(other);
    }
}

/// A `BigDecimal` or `BigInteger` value (`checkcast`): null is a NullPointerException when
/// added, anything else a ClassCastException.
fn big<'v>(value: &'v Value, target: &str) -> Result<&'v Value, ExecError> {
    match (value, target) {
        (Value::Null, _) => Err(ExecError::NullPointer(format!("a null value where a {target} was expected"))),
        (Value::BigDecimal(_), "java.math.BigDecimal") | (Value::BigInteger(_), "java.math.BigInteger") => Ok(value),
        (other, _) => Err(cast_error(other, target)),
    }
}

/// `BigDecimal.add`: exact, at the larger scale. Sums that would need more than
/// [`MAX_DIGITS`] digits are refused (Java would compute them, or run out of memory).
fn add_decimals(left: &BigDecimal, right: &BigDecimal) -> Result<BigDecimal, ExecError> {
    let scale = left.scale().max(right.scale());
    let widen = |decimal: &BigDecimal| {
        let by = (i64::from(scale) - i64::from(decimal.scale())) as u64;
        if decimal.unscaled().bits() > 0 && by + digit_count(decimal.unscaled()) > MAX_DIGITS {
            return Err(ExecError::Unsupported(format!("a BigDecimal sum of more than {MAX_DIGITS} digits")));
        }
        Ok(decimal.unscaled() * BigInt::from(10u8).pow(by as u32))
    };
    Ok(BigDecimal::new(widen(left)? + widen(right)?, scale))
}

/// Whether `candidate` replaces `best` in a max (`greatest`) or min: nulls never do, the first
/// value always does, otherwise `Comparables.compare` decides (strictly).
fn better(greatest: bool, best: Option<&Value>, candidate: &Value) -> Result<bool, ExecError> {
    if candidate.is_null() {
        return Ok(false);
    }
    if !is_comparable(candidate) {
        return Err(cast_error(candidate, "java.lang.Comparable"));
    }
    let Some(best) = best else { return Ok(true) };
    let order = match (best, candidate) {
        (Value::Json(best), Value::Json(candidate)) => best.encode_utf16().cmp(candidate.encode_utf16()),
        _ => best.compare(candidate).ok_or_else(|| cast_error(candidate, java_class(best)))?,
    };
    Ok(if greatest { order == Ordering::Less } else { order == Ordering::Greater })
}

// --- partials ----------------------------------------------------------------------------------

const PARTIAL_VERSION: u8 = 1;

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn put_count(out: &mut Vec<u8>, count: Option<i64>) {
    match count {
        Some(count) => {
            out.push(1);
            out.extend_from_slice(&count.to_be_bytes());
        }
        None => out.push(0),
    }
}

fn inline_or_null(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    // Extremes are comparable scalars, which always write.
    if write_object(&mut out, value, 0).is_err() {
        out = 0i32.to_be_bytes().to_vec();
    }
    out
}

impl Accumulator {
    /// This partial in ferrogrid's own layout, to be sent to the member that combines it:
    /// a version byte, the aggregator's class id, then the state.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![PARTIAL_VERSION];
        out.extend_from_slice(&self.class_id.to_be_bytes());
        match &self.state {
            State::Count(count) => out.extend_from_slice(&count.to_be_bytes()),
            State::Distinct(set) => {
                out.extend_from_slice(&set.capacity.to_be_bytes());
                out.extend_from_slice(&set.threshold.to_be_bytes());
                out.extend_from_slice(&(set.entries.len() as u32).to_be_bytes());
                for entry in &set.entries {
                    out.extend_from_slice(&entry.hash.to_be_bytes());
                    put_bytes(&mut out, &entry.canonical);
                    put_bytes(&mut out, &entry.inline);
                }
            }
            State::LongSum { sum, count, .. } => {
                out.extend_from_slice(&sum.to_be_bytes());
                put_count(&mut out, *count);
            }
            State::DoubleSum { sum, count, .. } => {
                out.extend_from_slice(&sum.to_bits().to_be_bytes());
                put_count(&mut out, *count);
            }
            State::BigDecimalSum { sum, count } => {
                put_bytes(&mut out, &sum.unscaled().to_signed_bytes_be());
                out.extend_from_slice(&sum.scale().to_be_bytes());
                put_count(&mut out, *count);
            }
            State::BigIntegerSum { sum, count } => {
                put_bytes(&mut out, &sum.to_signed_bytes_be());
                put_count(&mut out, *count);
            }
            State::Extreme { best, .. } => match best {
                Some(best) => put_bytes(&mut out, &inline_or_null(best)),
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            },
            State::ExtremeBy { best, .. } => match best {
                Some((best, key, value)) => {
                    put_bytes(&mut out, &inline_or_null(best));
                    put_bytes(&mut out, key);
                    put_bytes(&mut out, value);
                }
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            },
            State::Invalid(error) => put_bytes(&mut out, error.to_string().as_bytes()),
        }
        out
    }

    /// A partial [`Accumulator::encode`] wrote for `aggregator`. Bytes of another aggregator,
    /// of another layout version, truncated or with bytes left over are an error.
    pub fn decode(aggregator: &Aggregator, bytes: &[u8]) -> Result<Accumulator, ExecError> {
        let mut accumulator = Accumulator::try_new(aggregator)?;
        let partial = |error: ReadError| ExecError::Partial(error.to_string());
        let mut input = Input::new(bytes, 0);
        let version = input.u8().map_err(partial)?;
        let class_id = input.i32().map_err(partial)?;
        if version != PARTIAL_VERSION || class_id != accumulator.class_id {
            let what = format!("version {version} of class {class_id} for class {}", accumulator.class_id);
            return Err(ExecError::Partial(what));
        }
        accumulator.state = decode_state(&accumulator.state, &mut input).map_err(partial)?;
        if input.remaining() != 0 {
            return Err(ExecError::Partial(format!("{} bytes left over", input.remaining())));
        }
        Ok(accumulator)
    }
}

fn read_bytes(input: &mut Input<'_>) -> Result<Option<Vec<u8>>, ReadError> {
    input.length(1)?.map(|length| input.bytes(length).map(<[u8]>::to_vec)).transpose()
}

fn read_required(input: &mut Input<'_>) -> Result<Vec<u8>, ReadError> {
    read_bytes(input)?.ok_or_else(|| ReadError::Malformed("a null field".into()))
}

fn read_count(input: &mut Input<'_>, expected: &Option<i64>) -> Result<Option<i64>, ReadError> {
    let count = match input.u8()? {
        0 => None,
        1 => Some(input.i64()?),
        flag => return Err(ReadError::Malformed(format!("count flag {flag}"))),
    };
    if count.is_some() != expected.is_some() {
        return Err(ReadError::Malformed("a count where none belongs, or none where one does".into()));
    }
    Ok(count)
}

fn read_inline_value(bytes: &[u8]) -> Result<Value, ReadError> {
    let (value, end) = read_object(bytes, 0, &NoSchemas)?;
    if end != bytes.len() || value.is_null() {
        return Err(ReadError::Malformed("an extreme that is not one value".into()));
    }
    Ok(value)
}

/// The state `fresh` (a new accumulator's, giving its kind) holds in `input`.
fn decode_state(fresh: &State, input: &mut Input<'_>) -> Result<State, ReadError> {
    Ok(match fresh {
        State::Count(_) => State::Count(input.i64()?),
        State::Distinct(_) => {
            let (capacity, threshold) = (input.i32()? as u32, input.i32()? as u32);
            if !capacity.is_power_of_two() && capacity != 0 || capacity > MAX_CAPACITY || threshold > MAX_CAPACITY {
                return Err(ReadError::Malformed(format!("capacity {capacity}, threshold {threshold}")));
            }
            let count = input.i32()? as u32 as usize;
            let mut entries = Vec::with_capacity(count.min(input.remaining() / 12));
            for _ in 0..count {
                let hash = input.i32()?;
                let canonical = read_required(input)?;
                let inline = read_required(input)?;
                entries.push(Distinct { canonical, hash, inline });
            }
            State::Distinct(DistinctSet::decoded(entries, capacity, threshold))
        }
        State::LongSum { takes, count, .. } => {
            State::LongSum { takes: *takes, sum: input.i64()?, count: read_count(input, count)? }
        }
        State::DoubleSum { takes, count, .. } => {
            State::DoubleSum { takes: *takes, sum: input.f64()?, count: read_count(input, count)? }
        }
        State::BigDecimalSum { count, .. } => {
            let unscaled = BigInt::from_signed_bytes_be(&read_required(input)?);
            let sum = BigDecimal::new(unscaled, input.i32()?);
            State::BigDecimalSum { sum, count: read_count(input, count)? }
        }
        State::BigIntegerSum { count, .. } => {
            let sum = BigInt::from_signed_bytes_be(&read_required(input)?);
            State::BigIntegerSum { sum, count: read_count(input, count)? }
        }
        State::Extreme { greatest, .. } => {
            let best = read_bytes(input)?.map(|bytes| read_inline_value(&bytes)).transpose()?;
            State::Extreme { greatest: *greatest, best }
        }
        State::ExtremeBy { greatest, .. } => {
            let best = match read_bytes(input)? {
                Some(bytes) => Some((read_inline_value(&bytes)?, read_required(input)?, read_required(input)?)),
                None => None,
            };
            State::ExtremeBy { greatest: *greatest, best }
        }
        State::Invalid(error) => return Err(ReadError::Malformed(error.to_string())),
    })
}
