//! The aggregators (factory id -29) and projections (factory id -30) clients send with
//! `aggregate` and `project` requests, decoded from their `Data` blobs into plain values.
//!
//! An aggregator is serialized with its accumulated state (a client sends a fresh one: zero
//! sums and counts, null extremes, no distinct values); the state is kept as sent, numbers as
//! numbers and objects as undecoded [`Literal`]s.
//!
//! Invariants: every read is bounds-checked, counts are bounded by the bytes left and objects
//! nest at most [`crate::wire::MAX_DEPTH`] deep; malformed input is an [`AggregationError`],
//! never a panic. Any other object where an aggregator or projection belongs is an error naming
//! what was found.

use crate::predicate::Literal;
use crate::wire::{
    self, read_data_header, read_object_extent, read_serializable_header, NoSchemas, ObjectKind, Reader, SchemaSource,
    SerializableHeader, WireError,
};

/// Hazelcast's factory id of aggregators (`AggregatorDataSerializerHook`).
pub const AGGREGATOR_FACTORY_ID: i32 = -29;
/// Hazelcast's factory id of projections (`ProjectionDataSerializerHook`).
pub const PROJECTION_FACTORY_ID: i32 = -30;

/// Class ids of the aggregators (`AggregatorDataSerializerHook`).
pub mod aggregator_class_id {
    pub const BIG_DECIMAL_AVERAGE: i32 = 0;
    pub const BIG_DECIMAL_SUM: i32 = 1;
    pub const BIG_INTEGER_AVERAGE: i32 = 2;
    pub const BIG_INTEGER_SUM: i32 = 3;
    pub const COUNT: i32 = 4;
    pub const DISTINCT: i32 = 5;
    pub const DOUBLE_AVERAGE: i32 = 6;
    pub const DOUBLE_SUM: i32 = 7;
    pub const FIXED_POINT_SUM: i32 = 8;
    pub const FLOATING_POINT_SUM: i32 = 9;
    pub const INTEGER_AVERAGE: i32 = 10;
    pub const INTEGER_SUM: i32 = 11;
    pub const LONG_AVERAGE: i32 = 12;
    pub const LONG_SUM: i32 = 13;
    pub const MAX: i32 = 14;
    pub const MIN: i32 = 15;
    pub const NUMBER_AVERAGE: i32 = 16;
    pub const MAX_BY: i32 = 17;
    pub const MIN_BY: i32 = 18;
}

/// Class ids of the projections (`ProjectionDataSerializerHook`).
pub mod projection_class_id {
    pub const SINGLE_ATTRIBUTE: i32 = 0;
    pub const MULTI_ATTRIBUTE: i32 = 1;
    pub const IDENTITY: i32 = 2;
}

/// An aggregator with the state it was sent with. `attribute` is the path values are taken from;
/// none means the entry's value itself (`this`).
#[derive(Debug, Clone, PartialEq)]
pub enum Aggregator {
    /// Average as a `BigDecimal`; `sum` is a `BigDecimal` object.
    BigDecimalAverage {
        attribute: Option<String>,
        sum: Literal,
        count: i64,
    },
    BigDecimalSum {
        attribute: Option<String>,
        sum: Literal,
    },
    /// Average of `BigInteger`s (as a `BigDecimal`); `sum` is a `BigInteger` object.
    BigIntegerAverage {
        attribute: Option<String>,
        sum: Literal,
        count: i64,
    },
    BigIntegerSum {
        attribute: Option<String>,
        sum: Literal,
    },
    Count {
        attribute: Option<String>,
        count: i64,
    },
    /// The set of distinct values.
    Distinct {
        attribute: Option<String>,
        values: Vec<Literal>,
    },
    DoubleAverage {
        attribute: Option<String>,
        sum: f64,
        count: i64,
    },
    DoubleSum {
        attribute: Option<String>,
        sum: f64,
    },
    /// Sum of any numbers as a `long`.
    FixedPointSum {
        attribute: Option<String>,
        sum: i64,
    },
    /// Sum of any numbers as a `double`.
    FloatingPointSum {
        attribute: Option<String>,
        sum: f64,
    },
    IntegerAverage {
        attribute: Option<String>,
        sum: i64,
        count: i64,
    },
    IntegerSum {
        attribute: Option<String>,
        sum: i64,
    },
    LongAverage {
        attribute: Option<String>,
        sum: i64,
        count: i64,
    },
    LongSum {
        attribute: Option<String>,
        sum: i64,
    },
    Max {
        attribute: Option<String>,
        max: Literal,
    },
    Min {
        attribute: Option<String>,
        min: Literal,
    },
    /// Average of any numbers as a `double`.
    NumberAverage {
        attribute: Option<String>,
        sum: f64,
        count: i64,
    },
    /// The entry with the greatest value at `attribute`, and that value.
    MaxBy {
        attribute: Option<String>,
        max_value: Literal,
        max_entry: Literal,
    },
    MinBy {
        attribute: Option<String>,
        min_value: Literal,
        min_entry: Literal,
    },
}

impl Aggregator {
    /// The attribute path values are taken from (none: the value itself).
    pub fn attribute(&self) -> Option<&str> {
        use Aggregator::*;
        let attribute = match self {
            BigDecimalAverage { attribute, .. }
            | BigDecimalSum { attribute, .. }
            | BigIntegerAverage { attribute, .. }
            | BigIntegerSum { attribute, .. }
            | Count { attribute, .. }
            | Distinct { attribute, .. }
            | DoubleAverage { attribute, .. }
            | DoubleSum { attribute, .. }
            | FixedPointSum { attribute, .. }
            | FloatingPointSum { attribute, .. }
            | IntegerAverage { attribute, .. }
            | IntegerSum { attribute, .. }
            | LongAverage { attribute, .. }
            | LongSum { attribute, .. }
            | Max { attribute, .. }
            | Min { attribute, .. }
            | NumberAverage { attribute, .. }
            | MaxBy { attribute, .. }
            | MinBy { attribute, .. } => attribute,
        };
        attribute.as_deref()
    }
}

/// A projection of each entry a query passes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Projection {
    /// The value at one attribute path.
    SingleAttribute { attribute: String },
    /// The values at several attribute paths, as an array.
    MultiAttribute { attributes: Vec<String> },
    /// The entry itself.
    Identity,
}

/// An aggregator or projection blob that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AggregationError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("expected {expected} (factory id {factory_id}), found {found}")]
    Unexpected { expected: &'static str, factory_id: i32, found: ObjectKind },
    #[error("unknown {what} class id {class_id}")]
    UnknownClass { what: &'static str, class_id: i32 },
}

/// Decodes an aggregator from a whole `Data` blob as a request carries it (a Compact value in
/// its state is an error: see [`decode_aggregator_with`]).
pub fn decode_aggregator(data: &[u8]) -> Result<Aggregator, AggregationError> {
    decode_aggregator_with(data, &NoSchemas)
}

/// Decodes an aggregator, finding the end of Compact values in its state with `schemas`.
pub fn decode_aggregator_with(data: &[u8], schemas: &dyn SchemaSource) -> Result<Aggregator, AggregationError> {
    let mut reader = Reader::new(data);
    let class_id = read_identified(&mut reader, AGGREGATOR_FACTORY_ID, "an aggregator")?;
    let mut state = State { reader, schemas };
    let aggregator = state.aggregator(class_id)?;
    state.reader.finish()?;
    Ok(aggregator)
}

/// Decodes a projection from a whole `Data` blob as a request carries it.
pub fn decode_projection(data: &[u8]) -> Result<Projection, AggregationError> {
    let mut reader = Reader::new(data);
    let class_id = read_identified(&mut reader, PROJECTION_FACTORY_ID, "a projection")?;
    let projection = match class_id {
        projection_class_id::SINGLE_ATTRIBUTE => {
            Projection::SingleAttribute { attribute: reader.read_required_string("attribute path")? }
        }
        projection_class_id::MULTI_ATTRIBUTE => {
            let offset = reader.position();
            if reader.clone().read_i32()? == -1 {
                return Err(WireError::Null { offset, what: "attribute path array" }.into());
            }
            let count = reader.read_count(4)?;
            let attributes =
                (0..count).map(|_| reader.read_required_string("attribute path")).collect::<Result<_, _>>()?;
            Projection::MultiAttribute { attributes }
        }
        projection_class_id::IDENTITY => Projection::Identity,
        class_id => return Err(AggregationError::UnknownClass { what: "projection", class_id }),
    };
    reader.finish()?;
    Ok(projection)
}

/// Reads a blob's header and an `IdentifiedDataSerializable` header of `factory_id`, and
/// returns the class id.
fn read_identified(reader: &mut Reader<'_>, factory_id: i32, expected: &'static str) -> Result<i32, AggregationError> {
    let header = read_data_header(reader)?;
    if header.type_id != wire::type_id::DATA_SERIALIZABLE {
        let found = wire::describe(reader, header.type_id);
        return Err(AggregationError::Unexpected { expected, factory_id, found });
    }
    match read_serializable_header(reader)? {
        SerializableHeader::Identified { factory_id: found_factory, class_id, .. } if found_factory == factory_id => {
            Ok(class_id)
        }
        header => Err(AggregationError::Unexpected { expected, factory_id, found: header.kind() }),
    }
}

struct State<'a, 's> {
    reader: Reader<'a>,
    schemas: &'s dyn SchemaSource,
}

impl State<'_, '_> {
    /// The fields of aggregator `class_id` (each class's `writeData`): the attribute path, then
    /// the state.
    fn aggregator(&mut self, class_id: i32) -> Result<Aggregator, AggregationError> {
        use aggregator_class_id as id;
        use Aggregator::*;
        let attribute = self.reader.read_string()?;
        let aggregator = match class_id {
            id::BIG_DECIMAL_AVERAGE => BigDecimalAverage { attribute, sum: self.literal()?, count: self.long()? },
            id::BIG_DECIMAL_SUM => BigDecimalSum { attribute, sum: self.literal()? },
            id::BIG_INTEGER_AVERAGE => BigIntegerAverage { attribute, sum: self.literal()?, count: self.long()? },
            id::BIG_INTEGER_SUM => BigIntegerSum { attribute, sum: self.literal()? },
            id::COUNT => Count { attribute, count: self.long()? },
            id::DISTINCT => {
                let count = self.reader.read_count(4)?;
                Distinct { attribute, values: (0..count).map(|_| self.literal()).collect::<Result<_, _>>()? }
            }
            id::DOUBLE_AVERAGE => DoubleAverage { attribute, sum: self.double()?, count: self.long()? },
            id::DOUBLE_SUM => DoubleSum { attribute, sum: self.double()? },
            id::FIXED_POINT_SUM => FixedPointSum { attribute, sum: self.long()? },
            id::FLOATING_POINT_SUM => FloatingPointSum { attribute, sum: self.double()? },
            id::INTEGER_AVERAGE => IntegerAverage { attribute, sum: self.long()?, count: self.long()? },
            id::INTEGER_SUM => IntegerSum { attribute, sum: self.long()? },
            id::LONG_AVERAGE => LongAverage { attribute, sum: self.long()?, count: self.long()? },
            id::LONG_SUM => LongSum { attribute, sum: self.long()? },
            id::MAX => Max { attribute, max: self.literal()? },
            id::MIN => Min { attribute, min: self.literal()? },
            id::NUMBER_AVERAGE => NumberAverage { attribute, sum: self.double()?, count: self.long()? },
            id::MAX_BY => MaxBy { attribute, max_value: self.literal()?, max_entry: self.literal()? },
            id::MIN_BY => MinBy { attribute, min_value: self.literal()?, min_entry: self.literal()? },
            class_id => return Err(AggregationError::UnknownClass { what: "aggregator", class_id }),
        };
        Ok(aggregator)
    }

    fn long(&mut self) -> Result<i64, WireError> {
        self.reader.read_i64()
    }

    fn double(&mut self) -> Result<f64, WireError> {
        self.reader.read_f64()
    }

    fn literal(&mut self) -> Result<Literal, WireError> {
        let range = read_object_extent(&mut self.reader, self.schemas, 1)?;
        Ok(Literal { bytes: self.reader.slice(range.clone()).to_vec(), offset: range.start })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(factory_id: i32, class_id: i32) -> Vec<u8> {
        let mut bytes = vec![0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe, 1];
        bytes.extend_from_slice(&factory_id.to_be_bytes());
        bytes.extend_from_slice(&class_id.to_be_bytes());
        bytes
    }

    #[test]
    fn a_count_without_attribute_counts_values() {
        let mut bytes = ids(-29, 4);
        bytes.extend_from_slice(&(-1i32).to_be_bytes());
        bytes.extend_from_slice(&0i64.to_be_bytes());
        assert_eq!(decode_aggregator(&bytes), Ok(Aggregator::Count { attribute: None, count: 0 }));
        assert_eq!(decode_aggregator(&bytes).unwrap().attribute(), None);
    }

    #[test]
    fn other_factories_and_classes_are_named() {
        let found = ObjectKind::IdentifiedDataSerializable { factory_id: -20, class_id: 14 };
        let expected = AggregationError::Unexpected { expected: "an aggregator", factory_id: -29, found };
        assert_eq!(decode_aggregator(&ids(-20, 14)), Err(expected));
        let mut unknown = ids(-29, 19);
        unknown.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(
            decode_aggregator(&unknown),
            Err(AggregationError::UnknownClass { what: "aggregator", class_id: 19 })
        );
        assert_eq!(
            decode_projection(&ids(-30, 3)),
            Err(AggregationError::UnknownClass { what: "projection", class_id: 3 })
        );
    }

    #[test]
    fn a_null_attribute_array_is_an_error() {
        let mut bytes = ids(-30, 1);
        bytes.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(matches!(decode_projection(&bytes), Err(AggregationError::Wire(WireError::Null { .. }))));
    }
}
