//! The predicates clients send, as syntax trees: decoded from the `Data` blob a query request
//! carries (Hazelcast's `IdentifiedDataSerializable` predicates, factory id -20), or parsed from
//! the text of an `sql(...)` predicate (see [`crate::sql`]).
//!
//! Invariants:
//! - values compared with are kept as the client wrote them ([`Literal`], undecoded) or, from
//!   `sql(...)` text, as the text ([`Operand::Text`]); reading them is the value library's job;
//! - a `sql(...)` predicate is parsed when it is decoded, as Hazelcast does when it deserializes
//!   one, so a tree never holds unparsed text;
//! - predicates nest at most [`MAX_DEPTH`] deep and every count is bounded by the bytes left;
//!   malformed input is a [`PredicateError`], never a panic;
//! - only the predicate classes Hazelcast's clients send are decoded; any other object where a
//!   predicate belongs (a Java-serialized or custom predicate, another factory's class) is an
//!   error that names what was found.

use crate::sql::{self, SqlError};
pub use crate::tree::{Anchor, IterationType, Literal, Operand, Predicate};
use crate::wire::{
    self, read_data_header, read_object_extent, read_serializable_header, NoSchemas, ObjectKind, Reader, SchemaSource,
    SerializableHeader, WireError, MAX_DEPTH,
};

/// Hazelcast's factory id of predicates (`PredicateDataSerializerHook`).
pub const PREDICATE_FACTORY_ID: i32 = -20;

/// Class ids of the predicates (`PredicateDataSerializerHook`).
pub mod class_id {
    pub const SQL: i32 = 0;
    pub const AND: i32 = 1;
    pub const BETWEEN: i32 = 2;
    pub const EQUAL: i32 = 3;
    pub const GREATER_LESS: i32 = 4;
    pub const LIKE: i32 = 5;
    pub const ILIKE: i32 = 6;
    pub const IN: i32 = 7;
    pub const INSTANCE_OF: i32 = 8;
    pub const NOT_EQUAL: i32 = 9;
    pub const NOT: i32 = 10;
    pub const OR: i32 = 11;
    pub const REGEX: i32 = 12;
    pub const FALSE: i32 = 13;
    pub const TRUE: i32 = 14;
    pub const PAGING: i32 = 15;
    pub const PARTITION: i32 = 16;
    pub const MULTI_PARTITION: i32 = 21;
}

/// A predicate blob that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PredicateError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("expected a predicate at byte {offset}, found {found}")]
    NotAPredicate { offset: usize, found: ObjectKind },
    #[error("unknown predicate class id {class_id} (factory id -20) at byte {offset}")]
    UnknownClass { offset: usize, class_id: i32 },
    #[error("predicates nested more than {MAX_DEPTH} deep at byte {offset}")]
    TooDeep { offset: usize },
    #[error("unknown iteration type {name:?} at byte {offset}")]
    UnknownIterationType { offset: usize, name: String },
    #[error("expected a collection of partition keys at byte {offset}, found {found}")]
    NotACollection { offset: usize, found: ObjectKind },
    #[error("in the sql predicate at byte {offset}: {source}")]
    Sql { offset: usize, source: SqlError },
}

/// Decodes a predicate from a whole `Data` blob as a request carries it. A Compact value inside
/// it is an error: its length needs its schema (see [`decode_predicate_with`]).
pub fn decode_predicate(data: &[u8]) -> Result<Predicate, PredicateError> {
    decode_predicate_with(data, &NoSchemas)
}

/// Decodes a predicate, finding the end of Compact values inside it with `schemas`.
pub fn decode_predicate_with(data: &[u8], schemas: &dyn SchemaSource) -> Result<Predicate, PredicateError> {
    let mut decoder = Decoder { reader: Reader::new(data), schemas };
    let header = read_data_header(&mut decoder.reader)?;
    let predicate = decoder.predicate_of_type(header.type_id, 0, TYPE_ID_OFFSET)?;
    decoder.reader.finish()?;
    Ok(predicate)
}

/// Where a blob's serializer type id is (after the partition hash).
const TYPE_ID_OFFSET: usize = 4;

struct Decoder<'a, 's> {
    reader: Reader<'a>,
    schemas: &'s dyn SchemaSource,
}

impl Decoder<'_, '_> {
    /// A predicate written with `writeObject`; null is an error.
    fn predicate(&mut self, depth: usize) -> Result<Predicate, PredicateError> {
        let offset = self.reader.position();
        match self.nullable_predicate(depth)? {
            Some(predicate) => Ok(predicate),
            None => Err(WireError::Null { offset, what: "predicate" }.into()),
        }
    }

    fn nullable_predicate(&mut self, depth: usize) -> Result<Option<Predicate>, PredicateError> {
        let offset = self.reader.position();
        let type_id = self.reader.read_i32()?;
        if type_id == wire::type_id::NULL {
            return Ok(None);
        }
        self.predicate_of_type(type_id, depth, offset).map(Some)
    }

    /// The rest of a predicate whose serializer type id (read at `offset`) was `type_id`.
    fn predicate_of_type(&mut self, type_id: i32, depth: usize, offset: usize) -> Result<Predicate, PredicateError> {
        if depth >= MAX_DEPTH {
            return Err(PredicateError::TooDeep { offset });
        }
        if type_id != wire::type_id::DATA_SERIALIZABLE {
            let found = wire::describe(&mut self.reader, type_id);
            return Err(PredicateError::NotAPredicate { offset, found });
        }
        match read_serializable_header(&mut self.reader)? {
            SerializableHeader::Identified { factory_id: PREDICATE_FACTORY_ID, class_id, version } => {
                self.body(class_id, version, depth, offset)
            }
            header => Err(PredicateError::NotAPredicate { offset, found: header.kind() }),
        }
    }

    /// The fields of predicate `class_id` (each class's `writeData`).
    fn body(
        &mut self,
        class_id: i32,
        version: Option<(u8, u8)>,
        depth: usize,
        offset: usize,
    ) -> Result<Predicate, PredicateError> {
        let inner = depth + 1;
        let predicate = match class_id {
            class_id::SQL => self.sql()?,
            class_id::AND => Predicate::And(self.predicates(inner)?),
            class_id::OR => Predicate::Or(self.predicates(inner)?),
            class_id::NOT => Predicate::Not(Box::new(self.predicate(inner)?)),
            class_id::BETWEEN => {
                let attribute = self.attribute()?;
                let to = self.operand(inner)?;
                let from = self.operand(inner)?;
                Predicate::Between { attribute, from, to }
            }
            class_id::EQUAL => Predicate::Equal { attribute: self.attribute()?, value: self.operand(inner)? },
            class_id::NOT_EQUAL => Predicate::NotEqual { attribute: self.attribute()?, value: self.operand(inner)? },
            class_id::GREATER_LESS => {
                let attribute = self.attribute()?;
                let value = self.operand(inner)?;
                let equal = self.reader.read_bool()?;
                let less = self.reader.read_bool()?;
                Predicate::GreaterLess { attribute, value, equal, less }
            }
            class_id::LIKE => Predicate::Like { attribute: self.attribute()?, pattern: self.reader.read_string()? },
            class_id::ILIKE => Predicate::ILike { attribute: self.attribute()?, pattern: self.reader.read_string()? },
            class_id::REGEX => Predicate::Regex { attribute: self.attribute()?, pattern: self.reader.read_string()? },
            class_id::IN => Predicate::In { attribute: self.attribute()?, values: self.operands(inner)? },
            class_id::INSTANCE_OF => {
                Predicate::InstanceOf { class_name: self.reader.read_required_string("class name")? }
            }
            class_id::FALSE => Predicate::False,
            class_id::TRUE => Predicate::True,
            class_id::PAGING => self.paging(version, inner)?,
            class_id::PARTITION => {
                let key = self.literal(inner)?;
                Predicate::Partition { key, predicate: Box::new(self.predicate(inner)?) }
            }
            class_id::MULTI_PARTITION => {
                let keys = self.collection(inner)?;
                Predicate::MultiPartition { keys, predicate: Box::new(self.predicate(inner)?) }
            }
            class_id => return Err(PredicateError::UnknownClass { offset, class_id }),
        };
        Ok(predicate)
    }

    fn sql(&mut self) -> Result<Predicate, PredicateError> {
        let offset = self.reader.position();
        let text = self.reader.read_required_string("sql text")?;
        match sql::parse(&text) {
            Ok(predicate) => Ok(Predicate::Sql { text, predicate: Box::new(predicate) }),
            Err(source) => Err(PredicateError::Sql { offset, source }),
        }
    }

    fn attribute(&mut self) -> Result<String, PredicateError> {
        Ok(self.reader.read_required_string("attribute name")?)
    }

    /// A count, then that many predicates (each at least a 4-byte type id).
    fn predicates(&mut self, depth: usize) -> Result<Vec<Predicate>, PredicateError> {
        let count = self.reader.read_count(4)?;
        (0..count).map(|_| self.predicate(depth)).collect()
    }

    fn literal(&mut self, depth: usize) -> Result<Literal, PredicateError> {
        let range = read_object_extent(&mut self.reader, self.schemas, depth)?;
        Ok(Literal { bytes: self.reader.slice(range.clone()).to_vec(), offset: range.start })
    }

    fn operand(&mut self, depth: usize) -> Result<Operand, PredicateError> {
        self.literal(depth).map(Operand::Object)
    }

    /// A count, then that many values.
    fn operands(&mut self, depth: usize) -> Result<Vec<Operand>, PredicateError> {
        let count = self.reader.read_count(4)?;
        (0..count).map(|_| self.operand(depth)).collect()
    }

    /// A collection written with `writeObject` (the key set of a multi-partition predicate),
    /// as its elements.
    fn collection(&mut self, depth: usize) -> Result<Vec<Literal>, PredicateError> {
        use wire::type_id::*;
        let offset = self.reader.position();
        let type_id = self.reader.read_i32()?;
        let sorted = matches!(type_id, TREE_SET | CONCURRENT_SKIP_LIST_SET);
        let unsorted = matches!(
            type_id,
            HASH_SET | LINKED_HASH_SET | COPY_ON_WRITE_ARRAY_SET | ARRAY_LIST | LINKED_LIST | COPY_ON_WRITE_ARRAY_LIST
        );
        if !sorted && !unsorted {
            let found = wire::describe(&mut self.reader, type_id);
            return Err(PredicateError::NotACollection { offset, found });
        }
        if sorted {
            self.literal(depth + 1)?; // the set's comparator: the key order does not matter here
        }
        let count = self.reader.read_count(4)?;
        (0..count).map(|_| self.literal(depth + 1)).collect()
    }

    /// `PagingPredicateImpl.writeData`. Java clients since 5.4 write a user code namespace first
    /// (they version the stream by their own build); the Python client and older Java clients do
    /// not.
    fn paging(&mut self, version: Option<(u8, u8)>, depth: usize) -> Result<Predicate, PredicateError> {
        let user_code_namespace = match self.paging_has_namespace(version)? {
            true => self.reader.read_string()?,
            false => None,
        };
        let predicate = self.nullable_predicate(depth)?.map(Box::new);
        let comparator = Some(self.literal(depth)?).filter(|comparator| !comparator.is_null());
        let page = self.reader.read_i32()?;
        let page_size = self.reader.read_i32()?;
        let offset = self.reader.position();
        let name = self.reader.read_required_string("iteration type")?;
        let Some(iteration_type) = IterationType::from_name(&name) else {
            return Err(PredicateError::UnknownIterationType { offset, name });
        };
        // An anchor is at least a page and two null objects.
        let count = self.reader.read_count(12)?;
        let mut anchors = Vec::with_capacity(count);
        for _ in 0..count {
            let page = self.reader.read_i32()?;
            let key = self.literal(depth)?;
            let value = self.literal(depth)?;
            anchors.push(Anchor { page, key, value });
        }
        Ok(Predicate::Paging { predicate, comparator, page, page_size, iteration_type, anchors, user_code_namespace })
    }

    /// Whether a user code namespace comes first. A flagged stream version says so (5.4 and
    /// later); otherwise the first `i32` tells: the inner predicate's type id is -2 (or 0 for
    /// none), while a namespace starts with its length (-1 for null).
    fn paging_has_namespace(&self, version: Option<(u8, u8)>) -> Result<bool, PredicateError> {
        if let Some(version) = version {
            return Ok(version >= (5, 4));
        }
        let first = self.reader.clone().read_i32()?;
        Ok(first == -1 || first > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(class_id: i32) -> Vec<u8> {
        let mut bytes = vec![0, 0, 0, 0];
        bytes.extend_from_slice(&(-2i32).to_be_bytes());
        bytes.push(1);
        bytes.extend_from_slice(&PREDICATE_FACTORY_ID.to_be_bytes());
        bytes.extend_from_slice(&class_id.to_be_bytes());
        bytes
    }

    #[test]
    fn true_and_false_have_no_fields() {
        assert_eq!(decode_predicate(&ids(class_id::TRUE)), Ok(Predicate::True));
        assert_eq!(decode_predicate(&ids(class_id::FALSE)), Ok(Predicate::False));
        let mut trailing = ids(class_id::TRUE);
        trailing.push(0);
        assert!(matches!(decode_predicate(&trailing), Err(PredicateError::Wire(WireError::TrailingBytes { .. }))));
    }

    #[test]
    fn the_version_bytes_are_skipped_when_flagged() {
        let mut bytes = ids(class_id::TRUE);
        bytes[8] = 3;
        bytes.extend_from_slice(&[5, 6]);
        assert_eq!(decode_predicate(&bytes), Ok(Predicate::True));
    }

    #[test]
    fn other_classes_and_factories_are_named() {
        let unknown = ids(17);
        assert_eq!(decode_predicate(&unknown), Err(PredicateError::UnknownClass { offset: 4, class_id: 17 }));
        let mut other = ids(1);
        other[9..13].copy_from_slice(&(-29i32).to_be_bytes());
        let found = ObjectKind::IdentifiedDataSerializable { factory_id: -29, class_id: 1 };
        assert_eq!(decode_predicate(&other), Err(PredicateError::NotAPredicate { offset: 4, found }));
    }

    #[test]
    fn a_java_serialized_predicate_is_named() {
        let mut bytes = vec![0, 0, 0, 0];
        bytes.extend_from_slice(&(-100i32).to_be_bytes());
        bytes.extend_from_slice(&[0xac, 0xed, 0x00, 0x05, 0x73, 0x72, 0x00, 0x03]);
        bytes.extend_from_slice(b"a.B");
        let found = ObjectKind::JavaSerializable { class_name: Some("a.B".into()) };
        assert_eq!(decode_predicate(&bytes), Err(PredicateError::NotAPredicate { offset: 4, found }));
        let message = decode_predicate(&bytes).unwrap_err().to_string();
        assert!(message.contains("Java-serialized object of class a.B"), "{message}");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut bytes = ids(class_id::NOT);
        for _ in 0..MAX_DEPTH {
            bytes.extend_from_slice(&ids(class_id::NOT)[4..]);
        }
        bytes.extend_from_slice(&ids(class_id::TRUE)[4..]);
        assert!(matches!(decode_predicate(&bytes), Err(PredicateError::TooDeep { .. })));
    }

    #[test]
    fn literals_know_their_type() {
        let null = Literal::null();
        assert!(null.is_null());
        assert_eq!(null.payload(), &[] as &[u8]);
        let int = Literal { bytes: vec![0xff, 0xff, 0xff, 0xf9, 0, 0, 0, 5], offset: 9 };
        assert_eq!(int.type_id(), -7);
        assert_eq!(int.payload(), &[0, 0, 0, 5]);
    }
}
