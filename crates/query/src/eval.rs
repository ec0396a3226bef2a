//! Whether a map entry passes a predicate, with Hazelcast 5.6's semantics (`Predicate.apply` of
//! the classes in `com.hazelcast.query.impl.predicates`).
//!
//! A [`Filter`] is compiled once per query from a [`Predicate`] tree: attribute paths parsed,
//! comparison values decoded, LIKE and regular expression patterns translated and compiled
//! (see [`java_regex`]). [`Filter::matches`] then takes one entry, its key and value as the
//! `Data` blobs the member stores.
//!
//! Semantics reproduced (verified against Hazelcast 5.6's bytecode and, through
//! `tests/fixtures/gen_eval.py`, against a running member):
//! - an attribute that resolves to several values (`[any]`) passes when any one does
//!   (`NotEqual`: when none equals); an element that is not `Comparable` (a nested record) is
//!   a `ClassCastException`;
//! - a whole array, list or array of records is an `IllegalArgumentException` ("Cannot use
//!   EqualPredicate predicate with an array or a collection attribute"); a primitive array and a
//!   record are a `QueryException` ("... does not implement Comparable interface"); a JSON
//!   object or array reached by a path passes nothing, a whole JSON document that is one is an
//!   `IllegalArgumentException` ("Unknown Json type");
//! - a null attribute equals only a null value, is in an IN list only with a null in it, is
//!   never greater, less or between, and is LIKE, ILIKE or REGEX only a null pattern;
//! - the comparison value is converted to the attribute's type ([`Value::convert_like`]) unless
//!   it already has the entry's attribute type. As in Hazelcast, the type converted to is that of
//!   the first non-null attribute value the predicate meets, kept for the whole query; EQUAL and
//!   NOT EQUAL keep the converted value too, and IN converts its list once, when it meets its
//!   first non-null attribute. The answer can therefore depend on the order entries are met when
//!   an attribute has values of different types across entries — in Hazelcast too, whose
//!   partitions are scanned in parallel. A filter is meant for one query: its state is behind a
//!   mutex per leaf, so one filter may be shared by threads;
//! - GREATER/LESS with a null value is Hazelcast's `NullPointerException`; values of types that
//!   do not compare (a string with a number) are a `ClassCastException`;
//! - LIKE patterns become regular expressions exactly as `LikePredicate.createPattern` builds
//!   them (quoted, `%` and `_` not preceded by a backslash become `.*` and `.`, then `\%` and
//!   `\_` become literal), with DOTALL, and for ILIKE CASE_INSENSITIVE and UNICODE_CASE; the
//!   whole value must match; a non-string attribute is a `ClassCastException`;
//! - `sql(...)` text values are strings converted like any other value; `%` (skip index), paging
//!   and partition predicates evaluate their inner predicate; a partition predicate anywhere but
//!   at the root is Hazelcast's `UnsupportedOperationException`;
//! - attributes are used as the client sent them: `this.a` is a field named `this` (Hazelcast
//!   strips `this.` only from predicates built on the member and from SQL text), and `__key#a`
//!   is a value attribute of that name (5.6 no longer reads it as a key attribute).
//!
//! Differences, on purpose or by necessity:
//! - INSTANCE OF is decided for the classes of values the member reads itself (boxed
//!   primitives, strings, big numbers, `java.time`, Compact records as generic records, JSON)
//!   and the interfaces they implement; any other class name is [`EvalErrorKind::Unsupported`]
//!   (Hazelcast would load the class);
//! - Hazelcast's query optimizer rewrites some trees (an OR of equalities on one attribute into
//!   an IN, ...) before evaluating them; the answers differ from the tree's only in the order
//!   dependence described above, so trees are evaluated as sent;
//! - whether a whole array is a primitive Java array (a `QueryException`) or an object array (an
//!   `IllegalArgumentException`) is told by the Compact field's kind; for other arrays (Portable
//!   fields, whole values) it is guessed from the items: a non-empty array of non-null booleans
//!   or numbers of one type is taken as primitive;
//! - attributes found by reflection on Java classes (a string's `length`) do not exist here
//!   (see [`crate::path`]); Java regex features listed in [`java_regex`] are refused.
//!
//! Invariants: predicates nest at most [`MAX_DEPTH`] deep (deeper trees are refused when
//! compiled), so evaluation recursion is bounded; malformed input is an [`EvalError`], never a
//! panic.

mod apply;
mod java_classes;
pub mod java_regex;
mod like;

use crate::compact::{CompactRecord, DirectRead, SchemaSource, TYPE_ID as COMPACT};
use crate::data::{self, read_object, JSON, PORTABLE};
use crate::error::ReadError;
use crate::path::{extract, extract_direct, Extracted, Path, Step};
use crate::predicate::{Literal, Operand, Predicate};
use crate::value::Value;
use regex::Regex;
use std::sync::{Mutex, PoisonError};

use java_classes::{check_known_class, classes_of, java_class, primitive_array_class, PRIMITIVE_ARRAY_KINDS};
pub use like::like_to_regex;

/// How deep a predicate tree may nest.
pub const MAX_DEPTH: usize = 64;

/// The exception Hazelcast throws for a failure, which the member sends the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalErrorKind {
    /// `com.hazelcast.query.QueryException`: an attribute that cannot be compared or read.
    Query,
    /// `java.lang.IllegalArgumentException`.
    IllegalArgument,
    /// `java.lang.ClassCastException`: values of types that do not compare, a LIKE or REGEX on
    /// a non-string, a comparison value that is not `Comparable`.
    ClassCast,
    /// `java.lang.NumberFormatException`: text that is not a number of the attribute's type.
    NumberFormat,
    /// `java.lang.NullPointerException`: GREATER/LESS with a null value.
    NullPointer,
    /// `java.util.regex.PatternSyntaxException`: an invalid regular expression.
    PatternSyntax,
    /// `java.time.format.DateTimeParseException`: text that is not a date or time.
    DateTimeParse,
    /// `java.lang.UnsupportedOperationException`: what Hazelcast refuses (a nested partition
    /// predicate) or what ferrogrid cannot do (a Java class to load, a Java regex feature).
    Unsupported,
    /// `com.hazelcast.nio.serialization.HazelcastSerializationException`: bytes that cannot be
    /// read.
    Serialization,
    /// A Compact schema the member does not hold: fetch it and evaluate again.
    SchemaNotFound { schema_id: i64 },
}

impl EvalErrorKind {
    /// The Java class Hazelcast throws.
    pub fn java_class(&self) -> &'static str {
        match self {
            EvalErrorKind::Query => "com.hazelcast.query.QueryException",
            EvalErrorKind::IllegalArgument => "java.lang.IllegalArgumentException",
            EvalErrorKind::ClassCast => "java.lang.ClassCastException",
            EvalErrorKind::NumberFormat => "java.lang.NumberFormatException",
            EvalErrorKind::NullPointer => "java.lang.NullPointerException",
            EvalErrorKind::PatternSyntax => "java.util.regex.PatternSyntaxException",
            EvalErrorKind::DateTimeParse => "java.time.format.DateTimeParseException",
            EvalErrorKind::Unsupported => "java.lang.UnsupportedOperationException",
            EvalErrorKind::Serialization | EvalErrorKind::SchemaNotFound { .. } => {
                "com.hazelcast.nio.serialization.HazelcastSerializationException"
            }
        }
    }
}

/// Why an entry could not be evaluated (or a predicate compiled).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.java_class())]
pub struct EvalError {
    pub kind: EvalErrorKind,
    pub message: String,
}

fn error(kind: EvalErrorKind, message: impl Into<String>) -> EvalError {
    EvalError { kind, message: message.into() }
}

impl From<ReadError> for EvalError {
    fn from(read: ReadError) -> EvalError {
        let kind = match read {
            ReadError::SchemaNotFound { schema_id } => EvalErrorKind::SchemaNotFound { schema_id },
            ReadError::Attribute(_) | ReadError::InvalidJson(_) => EvalErrorKind::Query,
            _ => EvalErrorKind::Serialization,
        };
        error(kind, read.to_string())
    }
}

/// A compiled predicate. A clone remembers, from then on, what its leaves meet on its own
/// (each reactor scanning at once tests with its own clone, never waiting on another's).
#[derive(Debug, Clone)]
pub struct Filter {
    root: Node,
    partition_keys: Option<Vec<Vec<u8>>>,
}

/// An equality or range term of a top-level conjunction, for choosing an index.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexTerm<'a> {
    /// `attribute = value`.
    Equal { attribute: &'a str, value: &'a Value },
    /// `attribute IN values`.
    In { attribute: &'a str, values: &'a [Value] },
    /// `from <(=) attribute <(=) to`, either bound open (`None`).
    Range { attribute: &'a str, from: Option<(&'a Value, bool)>, to: Option<(&'a Value, bool)> },
}

impl Filter {
    /// Compiles `predicate`; Compact values in it are read with `schemas`.
    pub fn compile(predicate: &Predicate, schemas: &dyn SchemaSource) -> Result<Filter, EvalError> {
        let compiler = Compiler { schemas };
        let (inner, partition_keys) = match predicate {
            Predicate::Partition { key, predicate } => (predicate.as_ref(), Some(vec![data_blob(key)])),
            Predicate::MultiPartition { keys, predicate } => {
                (predicate.as_ref(), Some(keys.iter().map(data_blob).collect()))
            }
            predicate => (predicate, None),
        };
        Ok(Filter { root: compiler.node(inner, 0)?, partition_keys })
    }

    /// Whether the entry (`key` and `value` as whole `Data` blobs) passes.
    pub fn matches(&self, key: &[u8], value: &[u8], schemas: &dyn SchemaSource) -> Result<bool, EvalError> {
        self.root.matches(&Entry { key, value, schemas })
    }

    /// For partition predicates, the keys (whole `Data` blobs, partition hash 0 as clients write
    /// keys without a partitioning strategy) whose partitions alone are searched; `None` for any
    /// other predicate.
    pub fn partition_keys(&self) -> Option<&[Vec<u8>]> {
        self.partition_keys.as_deref()
    }

    /// The EQUAL, IN, GREATER/LESS and BETWEEN terms of the predicate when it is one such term
    /// or a conjunction (AND, nested ANDs, `sql` text) including them, with the values as the
    /// client sent them (not yet converted to the attribute's type). Other terms are left out:
    /// every entry an index finds must still be checked with [`Filter::matches`].
    pub fn index_terms(&self) -> Vec<IndexTerm<'_>> {
        let mut terms = Vec::new();
        self.root.collect_terms(&mut terms);
        terms
    }
}

/// A key written with `writeObject` as the `Data` blob a member hashes: partition hash 0, then
/// the type id and payload.
fn data_blob(key: &Literal) -> Vec<u8> {
    let mut blob = vec![0; 4];
    blob.extend_from_slice(&key.bytes);
    blob
}

#[derive(Debug, Clone)]
enum Node {
    Constant(bool),
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
    Leaf(Box<Leaf>),
    InstanceOf(String),
    /// Fails when evaluated (a partition predicate below the root).
    Fail(EvalError),
}

struct Entry<'a> {
    key: &'a [u8],
    value: &'a [u8],
    schemas: &'a dyn SchemaSource,
}

impl Node {
    fn matches(&self, entry: &Entry<'_>) -> Result<bool, EvalError> {
        match self {
            Node::Constant(constant) => Ok(*constant),
            Node::And(nodes) => {
                for node in nodes {
                    if !node.matches(entry)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Node::Or(nodes) => {
                for node in nodes {
                    if node.matches(entry)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Node::Not(node) => Ok(!node.matches(entry)?),
            Node::Leaf(leaf) => leaf.matches(entry),
            Node::InstanceOf(class) => instance_of(class, entry),
            Node::Fail(failure) => Err(failure.clone()),
        }
    }

    fn collect_terms<'a>(&'a self, terms: &mut Vec<IndexTerm<'a>>) {
        match self {
            Node::And(nodes) => nodes.iter().for_each(|node| node.collect_terms(terms)),
            Node::Leaf(leaf) => terms.extend(leaf.index_term()),
            _ => {}
        }
    }
}

/// NOT of `node` as Hazelcast's query engine runs it: its optimizer (`FlatteningVisitor`,
/// applied to every query, bottom up) replaces NOT(P) with P negated when P can be negated: a
/// comparison flips (`a > x` becomes `a <= x`), `=` and `!=` swap, AND becomes OR (and OR
/// AND) of its terms negated the same way, and NOT(P) is P. A comparison with a missing or null
/// attribute is false, negated or not, so `NOT(a > x)` matches no entry without `a`; NOT over
/// what cannot be negated (BETWEEN, IN, LIKE, ILIKE, REGEX, instanceof, a constant) stays NOT.
fn negated(node: Node) -> Node {
    match node {
        Node::And(nodes) => Node::Or(nodes.into_iter().map(negated).collect()),
        Node::Or(nodes) => Node::And(nodes.into_iter().map(negated).collect()),
        Node::Not(inner) => *inner,
        Node::Leaf(mut leaf) => match &mut leaf.test {
            Test::Equal { negated, .. } => {
                *negated = !*negated;
                Node::Leaf(leaf)
            }
            Test::Compare { equal, less, .. } => {
                (*equal, *less) = (!*equal, !*less);
                Node::Leaf(leaf)
            }
            _ => Node::Not(Box::new(Node::Leaf(leaf))),
        },
        other => Node::Not(Box::new(other)),
    }
}

struct Compiler<'s> {
    schemas: &'s dyn SchemaSource,
}

impl Compiler<'_> {
    fn node(&self, predicate: &Predicate, depth: usize) -> Result<Node, EvalError> {
        if depth >= MAX_DEPTH {
            return Err(error(EvalErrorKind::Query, format!("predicates nested more than {MAX_DEPTH} deep")));
        }
        let inner = depth + 1;
        Ok(match predicate {
            Predicate::Sql { predicate, .. } | Predicate::SkipIndex(predicate) => self.node(predicate, inner)?,
            Predicate::Paging { predicate: Some(predicate), .. } => self.node(predicate, inner)?,
            Predicate::Paging { predicate: None, .. } | Predicate::True => Node::Constant(true),
            Predicate::False => Node::Constant(false),
            Predicate::And(predicates) => Node::And(self.nodes(predicates, inner)?),
            Predicate::Or(predicates) => Node::Or(self.nodes(predicates, inner)?),
            Predicate::Not(predicate) => negated(self.node(predicate, inner)?),
            Predicate::InstanceOf { class_name } => {
                check_known_class(class_name)?;
                Node::InstanceOf(class_name.clone())
            }
            Predicate::Partition { .. } | Predicate::MultiPartition { .. } => {
                Node::Fail(error(EvalErrorKind::Unsupported, "null"))
            }
            leaf => Node::Leaf(Box::new(self.leaf(leaf)?)),
        })
    }

    fn nodes(&self, predicates: &[Predicate], depth: usize) -> Result<Vec<Node>, EvalError> {
        predicates.iter().map(|predicate| self.node(predicate, depth)).collect()
    }

    fn leaf(&self, predicate: &Predicate) -> Result<Leaf, EvalError> {
        let (attribute, test) = match predicate {
            Predicate::Equal { attribute, value } => {
                (attribute, Test::Equal { negated: false, value: self.operand(value)? })
            }
            Predicate::NotEqual { attribute, value } => {
                (attribute, Test::Equal { negated: true, value: self.operand(value)? })
            }
            Predicate::GreaterLess { attribute, value, equal, less } => {
                (attribute, Test::Compare { value: self.operand(value)?, equal: *equal, less: *less })
            }
            Predicate::Between { attribute, from, to } => {
                (attribute, Test::Between { from: self.operand(from)?, to: self.operand(to)? })
            }
            Predicate::In { attribute, values } => {
                let values = values.iter().map(|value| self.operand(value)).collect::<Result<_, _>>()?;
                (attribute, Test::In { values })
            }
            Predicate::Like { attribute, pattern } => (attribute, like(PatternKind::Like, pattern)),
            Predicate::ILike { attribute, pattern } => (attribute, like(PatternKind::ILike, pattern)),
            Predicate::Regex { attribute, pattern } => (attribute, regex(pattern)),
            other => return Err(error(EvalErrorKind::Unsupported, format!("not an attribute predicate: {other:?}"))),
        };
        let value = match &test {
            Test::Equal { value, .. } => value.clone(),
            _ => Value::Null,
        };
        let state = Mutex::new(State { witness: None, value, in_values: None });
        Ok(Leaf {
            path: attribute_path(attribute)?,
            attribute: attribute.clone(),
            test,
            state,
            direct: DirectRead::default(),
        })
    }

    /// A comparison value: a client's object (which Hazelcast casts to `Comparable`) or SQL text.
    fn operand(&self, operand: &Operand) -> Result<Value, EvalError> {
        let literal = match operand {
            Operand::Text(text) => return Ok(Value::String(text.clone())),
            Operand::Object(literal) => literal,
        };
        let (value, _) = read_object(&literal.bytes, 0, self.schemas)?;
        if comparable(&value) {
            return Ok(value);
        }
        Err(error(
            EvalErrorKind::ClassCast,
            format!("class {} cannot be cast to class java.lang.Comparable", java_class(&value)),
        ))
    }
}

/// The path of an attribute as Hazelcast 5.6 reads a deserialized predicate's attribute name.
fn attribute_path(attribute: &str) -> Result<Path, EvalError> {
    let literal_root = attribute.starts_with("this.") || attribute.starts_with("__key#");
    let spelled = if literal_root { format!("this.{attribute}") } else { attribute.to_string() };
    Path::parse(&spelled).map_err(EvalError::from)
}

/// Whether Java's class of the value implements `Comparable` (`HazelcastJsonValue` does).
fn comparable(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_) | Value::JsonStructure)
}

/// What a leaf checks of one attribute value.
#[derive(Debug, Clone)]
enum Test {
    /// EQUAL (`negated`: NOT EQUAL); `value` as sent, the converted one is in the state.
    Equal {
        negated: bool,
        value: Value,
    },
    Compare {
        value: Value,
        equal: bool,
        less: bool,
    },
    Between {
        from: Value,
        to: Value,
    },
    In {
        values: Vec<Value>,
    },
    /// LIKE, ILIKE or REGEX; `None` for a null pattern; a pattern that cannot be compiled fails
    /// when the first non-null string meets it, as Hazelcast compiles it then.
    Pattern {
        kind: PatternKind,
        pattern: Option<Result<Regex, EvalError>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatternKind {
    Like,
    ILike,
    Regex,
}

/// What Hazelcast's predicate objects remember between entries.
#[derive(Debug, Clone)]
struct State {
    /// The first non-null attribute value met: its type is what values are converted to.
    witness: Option<Value>,
    /// EQUAL's value, converted again at every entry (Hazelcast keeps the converted value).
    value: Value,
    /// IN's values, converted once at the first non-null attribute.
    in_values: Option<Vec<Value>>,
}

#[derive(Debug)]
struct Leaf {
    attribute: String,
    path: Path,
    test: Test,
    state: Mutex<State>,
    /// A top-level number field of Compact values read straight from their bytes.
    direct: DirectRead,
}

impl Clone for Leaf {
    fn clone(&self) -> Leaf {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner).clone();
        Leaf {
            attribute: self.attribute.clone(),
            path: self.path.clone(),
            test: self.test.clone(),
            state: Mutex::new(state),
            direct: self.direct.clone(),
        }
    }
}

fn like(kind: PatternKind, pattern: &Option<String>) -> Test {
    let flags = java_regex::Flags {
        dotall: true,
        case_insensitive: kind == PatternKind::ILike,
        unicode_case: kind == PatternKind::ILike,
        ..java_regex::Flags::default()
    };
    let compiled = pattern.as_deref().map(|pattern| compile_regex(&like_to_regex(pattern), flags));
    Test::Pattern { kind, pattern: compiled }
}

fn regex(pattern: &Option<String>) -> Test {
    let compiled = pattern.as_deref().map(|pattern| compile_regex(pattern, java_regex::Flags::default()));
    Test::Pattern { kind: PatternKind::Regex, pattern: compiled }
}

fn compile_regex(pattern: &str, flags: java_regex::Flags) -> Result<Regex, EvalError> {
    java_regex::compile(pattern, flags).map_err(|failure| match failure {
        java_regex::RegexError::Syntax(message) => error(EvalErrorKind::PatternSyntax, message),
        java_regex::RegexError::Unsupported(message) => error(EvalErrorKind::Unsupported, message),
    })
}

impl Leaf {
    fn predicate_class(&self) -> &'static str {
        match &self.test {
            Test::Equal { negated: false, .. } => "EqualPredicate",
            Test::Equal { negated: true, .. } => "NotEqualPredicate",
            Test::Compare { .. } => "GreaterLessPredicate",
            Test::Between { .. } => "BetweenPredicate",
            Test::In { .. } => "InPredicate",
            Test::Pattern { kind: PatternKind::Like, .. } => "LikePredicate",
            Test::Pattern { kind: PatternKind::ILike, .. } => "ILikePredicate",
            Test::Pattern { kind: PatternKind::Regex, .. } => "RegexPredicate",
        }
    }

    /// `AbstractPredicate.apply` (NOT EQUAL: its negation).
    fn matches(&self, entry: &Entry<'_>) -> Result<bool, EvalError> {
        let extracted = match extract_direct(&self.direct, (entry.key, entry.value), &self.path, entry.schemas) {
            Some(value) => Extracted::Single(value),
            None => extract(entry.key, entry.value, &self.path, entry.schemas)?,
        };
        let found = match extracted {
            Extracted::Multi(values) => self.any(&values)?,
            Extracted::Single(value) => self.single(value, entry)?,
        };
        Ok(found != matches!(self.test, Test::Equal { negated: true, .. }))
    }

    /// `applyForMultiResult`: each value is cast to `Comparable`, the first that passes decides
    /// (a JSON structure passes nothing).
    fn any(&self, values: &[Value]) -> Result<bool, EvalError> {
        for value in values {
            match value {
                Value::JsonStructure => continue,
                value if !comparable(value) => {
                    let message = format!("class {} cannot be cast to class java.lang.Comparable", java_class(value));
                    return Err(error(EvalErrorKind::ClassCast, message));
                }
                value if self.apply(value)? => return Ok(true),
                _ => {}
            }
        }
        Ok(false)
    }

    /// A single attribute value: arrays and records refused, JSON structures pass nothing.
    fn single(&self, value: Value, entry: &Entry<'_>) -> Result<bool, EvalError> {
        match &value {
            Value::Array(items) if !self.primitive_array(items, entry) => {
                let message =
                    format!("Cannot use {} predicate with an array or a collection attribute", self.predicate_class());
                Err(error(EvalErrorKind::IllegalArgument, message))
            }
            Value::Object(object) if object.type_id == PORTABLE => Err(error(
                EvalErrorKind::Query,
                format!(
                    "{} field can not be compared, because the user class could not be constructed.",
                    self.attribute
                ),
            )),
            Value::Array(_) | Value::Object(_) => Err(error(
                EvalErrorKind::Query,
                format!(
                    "{} field can not be compared, because it does not implement Comparable interface. Class class {}",
                    self.attribute,
                    java_class(&value)
                ),
            )),
            Value::JsonStructure if self.path.steps().is_empty() => Err(self.whole_json(entry)),
            Value::JsonStructure => Ok(false),
            _ => self.apply(&value),
        }
    }

    /// Whether a whole array attribute is a primitive Java array: for a field of a Compact record
    /// its kind says so, otherwise its items are looked at ([`primitive_array_class`]).
    fn primitive_array(&self, items: &[Value], entry: &Entry<'_>) -> bool {
        match self.compact_field_kind(entry) {
            Some(kind) => PRIMITIVE_ARRAY_KINDS.contains(&kind),
            None => primitive_array_class(items).is_some(),
        }
    }

    /// The kind of the Compact field the path names, when it names one through nested records.
    fn compact_field_kind(&self, entry: &Entry<'_>) -> Option<i32> {
        let blob = self.path.blob(entry.key, entry.value);
        if data::type_id(blob).ok()? != COMPACT {
            return None;
        }
        let mut record = CompactRecord::parse(blob.get(data::HEADER_SIZE..)?, entry.schemas).ok()?;
        if let Some(field) = record.schema().field(self.path.attribute()) {
            return Some(field.kind);
        }
        let (last, inner) = self.path.steps().split_last()?;
        for step in inner {
            let Step::Field(name) = step else { return None };
            record = record.nested(name).ok()??;
        }
        let Step::Field(name) = last else { return None };
        record.schema().field(name).map(|field| field.kind)
    }

    /// A whole JSON document that is an object or an array, which Hazelcast cannot convert.
    fn whole_json(&self, entry: &Entry<'_>) -> EvalError {
        let blob = self.path.blob(entry.key, entry.value);
        let text = match (data::type_id(blob), data::read_value(blob, entry.schemas)) {
            (Ok(JSON), Ok(Value::Json(text))) => text,
            _ => String::new(),
        };
        error(EvalErrorKind::IllegalArgument, format!("Unknown Json type: {text}"))
    }

    fn index_term(&self) -> Option<IndexTerm<'_>> {
        let attribute = self.attribute.as_str();
        Some(match &self.test {
            Test::Equal { negated: false, value } => IndexTerm::Equal { attribute, value },
            Test::In { values } => IndexTerm::In { attribute, values },
            Test::Compare { value, equal, less: true } => {
                IndexTerm::Range { attribute, from: None, to: Some((value, *equal)) }
            }
            Test::Compare { value, equal, less: false } => {
                IndexTerm::Range { attribute, from: Some((value, *equal)), to: None }
            }
            Test::Between { from, to } => {
                IndexTerm::Range { attribute, from: Some((from, true)), to: Some((to, true)) }
            }
            _ => return None,
        })
    }
}

/// `InstanceOfPredicate.apply`: the entry's value (deserialized) is of the class.
fn instance_of(class: &str, entry: &Entry<'_>) -> Result<bool, EvalError> {
    let value = data::read_value(entry.value, entry.schemas)?;
    match &value {
        Value::Null => Ok(false),
        Value::Object(object) if object.type_id == PORTABLE => {
            Err(error(EvalErrorKind::Serialization, "a Portable value cannot be deserialized without its factory"))
        }
        value => Ok(classes_of(value).contains(&class)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::Root;

    #[test]
    fn like_patterns_become_java_regexes_as_hazelcast_builds_them() {
        assert_eq!(like_to_regex("A%"), r"\QA\E.*\Q\E");
        assert_eq!(like_to_regex("_ob"), r"\Q\E.\Qob\E");
        assert_eq!(like_to_regex(r"a\%b"), r"\Qa%b\E");
        assert_eq!(like_to_regex(r"a\_b"), r"\Qa_b\E");
        assert_eq!(like_to_regex(r"a\\%b"), r"\Qa\%b\E", "the % after a backslash stays, then \\% becomes %");
        assert_eq!(like_to_regex(r"a\E%"), r"\Qa\E\\E\Q\E.*\Q\E");
        assert_eq!(like_to_regex(""), r"\Q\E");
    }

    fn like_matches(pattern: &str, text: &str, kind: PatternKind) -> Result<bool, EvalError> {
        match like(kind, &Some(pattern.to_string())) {
            Test::Pattern { pattern: Some(compiled), .. } => compiled.map(|regex| regex.is_match(text)),
            _ => unreachable!("like gives a pattern"),
        }
    }

    #[test]
    fn like_matches_whole_values() {
        let like = |pattern: &str, text: &str| like_matches(pattern, text, PatternKind::Like).unwrap();
        assert!(like("a%b", "a_b") && like("a%b", "a%b") && like("a%b", "ab"));
        assert!(like(r"a\%b", "a%b") && !like(r"a\%b", "axb"));
        assert!(like("a_b", "a\rb"), "DOTALL: _ is any character");
        assert!(like("line%", "line\nbreak"));
        assert!(like("x.y", "x.y") && !like("x.y", "xzy"));
        assert!(like("[a]%", "[a]") && like(r"\", r"\") && like(r"a\\%b", r"a\%b"));
        assert!(!like("Al", "Alice") && !like("apple", "Apple"));
        let ilike = |pattern: &str, text: &str| like_matches(pattern, text, PatternKind::ILike).unwrap();
        assert!(ilike("ÄÖÜ", "äöü") && ilike("APPLE", "apple") && ilike("ǆ", "ǅ"));
        assert!(!ilike("STRASSE", "straße"));
    }

    #[test]
    fn errors_name_the_java_exception() {
        let failure = error(EvalErrorKind::NumberFormat, "For input string: \"x\"");
        assert_eq!(failure.to_string(), "java.lang.NumberFormatException: For input string: \"x\"");
        assert_eq!(
            EvalErrorKind::SchemaNotFound { schema_id: 1 }.java_class(),
            EvalErrorKind::Serialization.java_class()
        );
        let read: EvalError = ReadError::SchemaNotFound { schema_id: 7 }.into();
        assert_eq!(read.kind, EvalErrorKind::SchemaNotFound { schema_id: 7 });
        assert_eq!(EvalError::from(ReadError::Attribute("x".into())).kind, EvalErrorKind::Query);
        assert!(check_known_class("java.lang.Number").is_ok());
        assert_eq!(check_known_class("com.example.Person").unwrap_err().kind, EvalErrorKind::Unsupported);
    }

    #[test]
    fn attribute_paths_are_read_as_sent() {
        let this_prefixed = attribute_path("this.name").unwrap();
        assert_eq!(this_prefixed.root(), Root::Value);
        assert_eq!(this_prefixed.attribute(), "this.name");
        let old_key = attribute_path("__key#id").unwrap();
        assert_eq!((old_key.root(), old_key.attribute()), (Root::Value, "__key#id"));
        assert_eq!(attribute_path("__key.id").unwrap().root(), Root::Key);
        assert!(attribute_path("a[").is_err());
    }
}
