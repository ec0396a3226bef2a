//! Predicates as syntax trees, whichever way they came: decoded from a query request's blob
//! (the `predicate` module) or parsed from `sql(...)` text (the `sql` module).
//!
//! Invariant: values compared with are kept as the client wrote them ([`Literal`], undecoded)
//! or, from `sql(...)` text, as the text ([`Operand::Text`]); reading them is the value
//! library's job.

use crate::wire;

/// An object as `ObjectDataOutput.writeObject` wrote it: the serializer's type id (`i32`
/// big-endian) and its payload, undecoded. Null is type id 0 with no payload.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Literal {
    /// The type id and the payload: never shorter than the 4-byte type id.
    pub bytes: Vec<u8>,
    /// Where `bytes` began in the blob it was cut from. Portable records hold absolute positions
    /// counted from the start of that blob, so reading one needs this origin; nothing else does.
    pub offset: usize,
}

impl Literal {
    /// The null object (type id 0), as every client writes `null`.
    pub fn null() -> Literal {
        Literal { bytes: wire::type_id::NULL.to_be_bytes().to_vec(), offset: 0 }
    }

    /// The serializer type id (the first four bytes; a literal always has them).
    pub fn type_id(&self) -> i32 {
        let mut head = [0u8; 4];
        head.copy_from_slice(&self.bytes[..4]);
        i32::from_be_bytes(head)
    }

    pub fn is_null(&self) -> bool {
        self.type_id() == wire::type_id::NULL
    }

    /// The bytes after the type id.
    pub fn payload(&self) -> &[u8] {
        &self.bytes[4..]
    }
}

/// A value a predicate compares an attribute with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A value a client serialized (null included, as [`Literal::null`]).
    Object(Literal),
    /// A value written in `sql(...)` text, quoted or not (`5`, `'abc'`, `true`): Hazelcast
    /// converts it to the type of the attribute's value when it compares.
    Text(String),
}

impl Operand {
    pub fn null() -> Operand {
        Operand::Object(Literal::null())
    }
}

/// What a paging query returns (Hazelcast's `IterationType`, sent by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IterationType {
    Key,
    Value,
    Entry,
}

impl IterationType {
    pub(crate) fn from_name(name: &str) -> Option<IterationType> {
        match name {
            "KEY" => Some(IterationType::Key),
            "VALUE" => Some(IterationType::Value),
            "ENTRY" => Some(IterationType::Entry),
            _ => None,
        }
    }
}

/// The last entry of a page the client has seen: paging resumes after it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Anchor {
    pub page: i32,
    pub key: Literal,
    pub value: Literal,
}

/// A predicate as a syntax tree. Attribute names are paths as Hazelcast resolves them
/// (`this`, `__key`, `a.b`, `arr[2]`, `arr[any]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Predicate {
    /// `sql(text)`, with the predicate the text parses to.
    Sql {
        text: String,
        predicate: Box<Predicate>,
    },
    /// All of them (none: true).
    And(Vec<Predicate>),
    /// Any of them (none: false).
    Or(Vec<Predicate>),
    Not(Box<Predicate>),
    /// `from <= attribute <= to`.
    Between {
        attribute: String,
        from: Operand,
        to: Operand,
    },
    Equal {
        attribute: String,
        value: Operand,
    },
    NotEqual {
        attribute: String,
        value: Operand,
    },
    /// `attribute < value` (`less`), `>` (not `less`), or `<=`/`>=` with `equal`.
    GreaterLess {
        attribute: String,
        value: Operand,
        equal: bool,
        less: bool,
    },
    /// SQL `LIKE`: `%` any characters, `_` one, `\` escapes; a null pattern matches null.
    Like {
        attribute: String,
        pattern: Option<String>,
    },
    /// Case-insensitive [`Predicate::Like`].
    ILike {
        attribute: String,
        pattern: Option<String>,
    },
    /// A Java regular expression matched against the whole value.
    Regex {
        attribute: String,
        pattern: Option<String>,
    },
    In {
        attribute: String,
        values: Vec<Operand>,
    },
    /// The value's Java class is (a subclass of) `class_name`.
    InstanceOf {
        class_name: String,
    },
    False,
    True,
    /// One page of the entries `predicate` (none: every entry) passes, in `comparator` order
    /// (none: natural order of what is iterated).
    Paging {
        predicate: Option<Box<Predicate>>,
        comparator: Option<Literal>,
        page: i32,
        page_size: i32,
        iteration_type: IterationType,
        anchors: Vec<Anchor>,
        /// The user code namespace Java clients 5.4 and later send (usually none).
        user_code_namespace: Option<String>,
    },
    /// `predicate`, run only on the partition that owns `key`.
    Partition {
        key: Literal,
        predicate: Box<Predicate>,
    },
    /// `predicate`, run only on the partitions that own `keys`.
    MultiPartition {
        keys: Vec<Literal>,
        predicate: Box<Predicate>,
    },
    /// `predicate`, evaluated without indexes: only from `sql(...)` text, where an attribute
    /// written `%name` asks for it.
    SkipIndex(Box<Predicate>),
}
