//! A query's predicate as the member runs it: compiled once (`ferrogrid_query::eval`) with the
//! member's schemas, the partitions it is restricted to, and the Hazelcast exception a query
//! fails with. Used by the query operations (`query_ops.rs`, `aggregate_ops.rs`)
//! and by entry listeners with a predicate (`listeners.rs`).

use crate::engine::schemas::Schemas;
use ferrogrid_protocol::error::{self, write_error_response, ErrorCode, ErrorHolder};
use ferrogrid_protocol::Data;
use ferrogrid_query::eval::Filter;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Why a query has no result: the Hazelcast exception the client gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Failure {
        Failure { code, message: message.into() }
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>, correlation_id: i64) {
        write_error_response(out, correlation_id, &[ErrorHolder { code: self.code, message: Some(&self.message) }]);
    }

    /// A failure another member sent (code, class name, message): the class name is one of
    /// the classes a query fails with, or else HazelcastException.
    pub(crate) fn from_parts(code: i32, class_name: &str, message: String) -> Failure {
        let code = FAILURE_CODES
            .iter()
            .find(|known| known.code == code && known.class_name == class_name)
            .copied()
            .unwrap_or(ErrorCode { code, class_name: error::HAZELCAST.class_name });
        Failure { code, message }
    }
}

/// Every exception a query's share can fail with (what another member's answer may name).
const FAILURE_CODES: [ErrorCode; 14] = [
    error::QUERY,
    error::QUERY_RESULT_SIZE_EXCEEDED,
    error::ILLEGAL_ARGUMENT,
    error::CLASS_CAST,
    error::UNSUPPORTED_OPERATION,
    error::PARTITION_MIGRATING,
    error::NULL_POINTER,
    error::HAZELCAST,
    error::HAZELCAST_SERIALIZATION,
    ErrorCode { code: 0, class_name: "java.lang.NumberFormatException" },
    ErrorCode { code: 0, class_name: "java.util.regex.PatternSyntaxException" },
    ErrorCode { code: 0, class_name: "java.time.format.DateTimeParseException" },
    ErrorCode { code: 0, class_name: "java.lang.ArithmeticException" },
    error::ILLEGAL_STATE,
];

/// A predicate compiled once per member (the first share to run compiles it with the member's
/// schemas) and the partitions it restricts the query to (a partition predicate's).
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) filter: Filter,
    pub(crate) partitions: Option<BTreeSet<u16>>,
    /// What indexes look up for it (worked out once).
    pub(crate) plan: Vec<crate::engine::map::index::Lookup>,
}

/// A predicate as the request carried it, compiled on first use.
#[derive(Debug)]
pub(crate) struct Predicate {
    data: Option<Box<[u8]>>,
    /// Keys (Data blobs) whose partitions alone are searched, besides any the predicate names.
    partition_keys: Vec<Box<[u8]>>,
    compiled: OnceLock<Result<Compiled, Failure>>,
}

impl Predicate {
    /// `data`: the predicate's Data blob (None: every entry, as aggregate and project without one).
    pub(crate) fn new(data: Option<&[u8]>) -> Predicate {
        Predicate::with_partition_keys(data, Vec::new())
    }

    /// A predicate restricted to the partitions of `keys` (a paging predicate's partition key).
    pub(crate) fn with_partition_keys(data: Option<&[u8]>, keys: Vec<Box<[u8]>>) -> Predicate {
        Predicate { data: data.map(Into::into), partition_keys: keys, compiled: OnceLock::new() }
    }

    /// The compiled predicate (compiled here on the first call, with the member's `schemas`
    /// and the cluster's `partition_count`).
    pub(crate) fn compiled(&self, schemas: &Schemas, partition_count: u16) -> &Result<Compiled, Failure> {
        self.compiled.get_or_init(|| {
            let predicate = match &self.data {
                Some(data) => ferrogrid_query::predicate::decode_predicate_with(data, schemas).map_err(|error| {
                    Failure::new(error::HAZELCAST_SERIALIZATION, format!("cannot read the predicate: {error}"))
                })?,
                None => ferrogrid_query::predicate::Predicate::True,
            };
            let filter = Filter::compile(&predicate, schemas).map_err(failure)?;
            let count = partition_count;
            let partition = |key: &[u8]| ferrogrid_protocol::partition_for(Data(key), count).0;
            let mut partitions: Option<BTreeSet<u16>> =
                filter.partition_keys().map(|keys| keys.iter().map(|key| partition(key)).collect());
            if !self.partition_keys.is_empty() {
                partitions
                    .get_or_insert_with(BTreeSet::new)
                    .extend(self.partition_keys.iter().map(|key| partition(key)));
            }
            let plan = crate::engine::map::index::plan(&filter.index_terms());
            Ok(Compiled { filter, partitions, plan })
        })
    }
}

/// The Hazelcast exception for an evaluation error (its message without the class name the
/// error holder carries anyway).
pub(crate) fn failure(error: ferrogrid_query::eval::EvalError) -> Failure {
    use ferrogrid_query::eval::EvalErrorKind as Kind;
    let code = match error.kind {
        Kind::Query => error::QUERY,
        Kind::IllegalArgument => error::ILLEGAL_ARGUMENT,
        Kind::ClassCast => error::CLASS_CAST,
        Kind::NullPointer => error::NULL_POINTER,
        Kind::Unsupported => error::UNSUPPORTED_OPERATION,
        Kind::Serialization | Kind::SchemaNotFound { .. } => error::HAZELCAST_SERIALIZATION,
        // Not in the protocol's table: sent as Hazelcast sends them, code 0 with the class name.
        kind => ErrorCode { code: 0, class_name: kind.java_class() },
    };
    Failure { code, message: error.message }
}

/// The Hazelcast exception for an aggregation's, a projection's or a paging order's error.
pub(crate) fn exec_failure(error: ferrogrid_query::exec::ExecError) -> Failure {
    use ferrogrid_query::exec::ExecError;
    let code = match &error {
        ExecError::ClassCast(_) => error::CLASS_CAST,
        ExecError::IllegalArgument(_) => error::ILLEGAL_ARGUMENT,
        ExecError::NullPointer(_) => error::NULL_POINTER,
        // An attribute a value does not have: Hazelcast's QueryException ("There is no
        // suitable accessor ...").
        ExecError::Read(ferrogrid_query::ReadError::Attribute(_)) => error::QUERY,
        ExecError::Serialization(_) | ExecError::Read(_) => error::HAZELCAST_SERIALIZATION,
        ExecError::Unsupported(_) => error::UNSUPPORTED_OPERATION,
        ExecError::Arithmetic(_) => ErrorCode { code: 0, class_name: "java.lang.ArithmeticException" },
        ExecError::Write(_) | ExecError::Partial(_) => error::HAZELCAST,
    };
    Failure { code, message: error.to_string() }
}

/// The schemas one share reads values with: the member's, each copied on first use into this
/// thread's own `Arc` (every value a query tests looks its schema up, and reactors sharing one
/// `Arc` would bounce its reference count between their cores).
#[derive(Debug)]
pub(crate) struct ShareSchemas<'a> {
    shared: &'a Schemas,
    local: std::cell::RefCell<std::collections::HashMap<i64, std::sync::Arc<ferrogrid_query::schema::Schema>>>,
}

impl<'a> ShareSchemas<'a> {
    pub(crate) fn new(shared: &'a Schemas) -> ShareSchemas<'a> {
        ShareSchemas { shared, local: Default::default() }
    }
}

impl ferrogrid_query::SchemaSource for ShareSchemas<'_> {
    fn schema(&self, id: i64) -> Option<std::sync::Arc<ferrogrid_query::schema::Schema>> {
        if let Some(schema) = self.local.borrow().get(&id) {
            return Some(schema.clone());
        }
        let copy = std::sync::Arc::new((*self.shared.get(id)?).clone());
        self.local.borrow_mut().insert(id, copy.clone());
        Some(copy)
    }
}
