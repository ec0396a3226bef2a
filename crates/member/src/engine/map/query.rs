//! A query's predicate as the member runs it: compiled once (`ferrogrid_query::eval`) with the
//! member's schemas, the partitions it is restricted to, and the kind of failure a query's
//! errors are ([`failure`], [`exec_failure`]; the front end names each as its protocol does).
//! Used by the query operations (`query_ops.rs`, `aggregate_ops.rs`) and by entry listeners
//! with a predicate (`listeners.rs`).

use crate::engine::request::{ErrorKind, OpError};
use crate::engine::schemas::Schemas;
use ferrogrid_protocol::Data;
use ferrogrid_query::eval::Filter;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Every kind of failure a query's share can fail with (what another member's answer may name).
pub(crate) const QUERY_FAILURES: [ErrorKind; 14] = [
    ErrorKind::Query,
    ErrorKind::QueryResultSizeExceeded,
    ErrorKind::IllegalArgument,
    ErrorKind::ClassCast,
    ErrorKind::Unsupported,
    ErrorKind::PartitionMigrating,
    ErrorKind::NullArgument,
    ErrorKind::Refused,
    ErrorKind::Serialization,
    ErrorKind::NumberFormat,
    ErrorKind::PatternSyntax,
    ErrorKind::DateTimeParse,
    ErrorKind::Arithmetic,
    ErrorKind::IllegalState,
];

/// A predicate compiled once per member (the first share to run compiles it with the member's
/// schemas) and the partitions it restricts the query to (a partition predicate's).
#[derive(Debug, Clone)]
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
    compiled: OnceLock<Result<Compiled, OpError>>,
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

    /// Whether one entry passes the predicate, for a listener or a query cache (`what`, named
    /// in the debug log): a predicate that cannot be compiled, or an entry it cannot be tested
    /// on, passes nothing.
    pub(crate) fn admits(
        &self,
        (key, value): (&[u8], &[u8]),
        (schemas, partition_count): (&Schemas, u16),
        what: &str,
    ) -> bool {
        match self.compiled(schemas, partition_count) {
            Ok(compiled) => compiled.filter.matches(key, value, schemas).unwrap_or_else(|error| {
                tracing::debug!(%error, "an entry could not be tested against {what}'s predicate");
                false
            }),
            Err(failure) => {
                tracing::debug!(message = %failure.message, "{what}'s predicate cannot be compiled");
                false
            }
        }
    }

    /// A share's own copy of the compiled predicate (or its failure): its leaves remember what
    /// they meet without waiting on the other reactors' shares.
    pub(crate) fn for_share(&self, schemas: &Schemas, partition_count: u16) -> Result<Compiled, OpError> {
        self.compiled(schemas, partition_count).clone()
    }

    /// The compiled predicate (compiled here on the first call, with the member's `schemas`
    /// and the cluster's `partition_count`).
    pub(crate) fn compiled(&self, schemas: &Schemas, partition_count: u16) -> &Result<Compiled, OpError> {
        self.compiled.get_or_init(|| {
            let predicate = match &self.data {
                Some(data) => ferrogrid_query::predicate::decode_predicate_with(data, schemas).map_err(|error| {
                    OpError::new(ErrorKind::Serialization, format!("cannot read the predicate: {error}"))
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

/// The failure for an evaluation error (its message without the Java class name, which the
/// front end names from its kind).
pub(crate) fn failure(error: ferrogrid_query::eval::EvalError) -> OpError {
    use ferrogrid_query::eval::EvalErrorKind as Kind;
    let kind = match error.kind {
        Kind::Query => ErrorKind::Query,
        Kind::IllegalArgument => ErrorKind::IllegalArgument,
        Kind::ClassCast => ErrorKind::ClassCast,
        Kind::NumberFormat => ErrorKind::NumberFormat,
        Kind::NullPointer => ErrorKind::NullArgument,
        Kind::PatternSyntax => ErrorKind::PatternSyntax,
        Kind::DateTimeParse => ErrorKind::DateTimeParse,
        Kind::Unsupported => ErrorKind::Unsupported,
        Kind::Serialization | Kind::SchemaNotFound { .. } => ErrorKind::Serialization,
    };
    OpError::new(kind, error.message)
}

/// The failure for an aggregation's, a projection's or a paging order's error.
pub(crate) fn exec_failure(error: ferrogrid_query::exec::ExecError) -> OpError {
    use ferrogrid_query::exec::ExecError;
    let kind = match &error {
        ExecError::ClassCast(_) => ErrorKind::ClassCast,
        ExecError::IllegalArgument(_) => ErrorKind::IllegalArgument,
        ExecError::NullPointer(_) => ErrorKind::NullArgument,
        // An attribute a value does not have: Hazelcast's QueryException ("There is no
        // suitable accessor ...").
        ExecError::Read(ferrogrid_query::ReadError::Attribute(_)) => ErrorKind::Query,
        ExecError::Serialization(_) | ExecError::Read(_) => ErrorKind::Serialization,
        ExecError::Unsupported(_) => ErrorKind::Unsupported,
        ExecError::Arithmetic(_) => ErrorKind::Arithmetic,
        ExecError::Write(_) | ExecError::Partial(_) => ErrorKind::Refused,
    };
    OpError::new(kind, error.to_string())
}

/// The schemas one share reads values with: the member's, each copied on first use into this
/// thread's own `Arc` (every value a query tests looks its schema up, and reactors sharing one
/// `Arc` would bounce its reference count between their cores).
#[derive(Debug)]
pub(crate) struct ShareSchemas<'a> {
    shared: &'a Schemas,
    local: std::cell::RefCell<std::collections::HashMap<i64, std::sync::Arc<ferrogrid_query::schema::Schema>>>,
    /// The last one asked for (a map's values are mostly of one schema): no hashing per row.
    last: std::cell::RefCell<Option<std::sync::Arc<ferrogrid_query::schema::Schema>>>,
}

impl<'a> ShareSchemas<'a> {
    pub(crate) fn new(shared: &'a Schemas) -> ShareSchemas<'a> {
        ShareSchemas { shared, local: Default::default(), last: Default::default() }
    }
}

impl ferrogrid_query::SchemaSource for ShareSchemas<'_> {
    fn schema(&self, id: i64) -> Option<std::sync::Arc<ferrogrid_query::schema::Schema>> {
        if let Some(last) = self.last.borrow().as_ref().filter(|last| last.id() == id) {
            return Some(last.clone());
        }
        let found = self.local.borrow().get(&id).cloned();
        let schema = match found {
            Some(schema) => schema,
            None => {
                let copy = std::sync::Arc::new((*self.shared.get(id)?).clone());
                self.local.borrow_mut().insert(id, copy.clone());
                copy
            }
        };
        self.last.replace(Some(schema.clone()));
        Some(schema)
    }
}

/// What a reactor's indexes of a map gave a query's lookups: the candidate keys of every
/// partition the reactor holds, by slot (a partition's place among the reactor's partitions),
/// from one lookup (`index.rs`); a partition's share of them is [`Narrowed::of`].
#[derive(Debug)]
pub(crate) struct Narrowed<'g> {
    /// (slot, key), in slot order.
    keys: Vec<(u32, &'g [u8])>,
    /// Where each slot's candidates start in `keys` (and, last, their count).
    starts: Vec<usize>,
}

/// The candidates of one partition: None when the reactor's indexes do not narrow the query
/// (the partition is read whole, or narrowed by its store's own indexes).
pub(crate) type Candidates<'n, 'g> = Option<&'n [(u32, &'g [u8])]>;

impl<'g> Narrowed<'g> {
    /// The candidates `indexes` give `plan` (None: no index of them serves it), placed by slot
    /// in one pass (no sort: a broad range's candidates are many, the slots few).
    pub(crate) fn new(
        indexes: &'g crate::engine::map::index::Indexes,
        plan: &[crate::engine::map::index::Lookup],
    ) -> Option<Narrowed<'g>> {
        use crate::engine::map::index::{slot_of, PRIVATE_SLOT};
        let mut found = indexes.candidates(plan)?;
        found.retain(|(_, owner)| slot_of(*owner) != PRIVATE_SLOT); // (none: only placed stores attach)
        let slots = found.iter().map(|(_, owner)| slot_of(*owner) as usize + 1).max().unwrap_or(0);
        let mut starts = vec![0usize; slots + 1];
        for (_, owner) in &found {
            starts[slot_of(*owner) as usize + 1] += 1;
        }
        for slot in 1..starts.len() {
            starts[slot] += starts[slot - 1];
        }
        let mut next = starts.clone();
        let mut keys: Vec<(u32, &[u8])> = vec![(0, &[]); found.len()];
        for (key, owner) in found {
            let slot = slot_of(owner);
            keys[next[slot as usize]] = (slot, key);
            next[slot as usize] += 1;
        }
        Some(Narrowed { keys, starts })
    }

    /// The candidates of the partition in `slot`.
    pub(crate) fn of(&self, slot: usize) -> &[(u32, &'g [u8])] {
        match (self.starts.get(slot), self.starts.get(slot + 1)) {
            (Some(start), Some(end)) => &self.keys[*start..*end],
            _ => &[],
        }
    }
}

/// This reactor's indexes of `map` for a query that `needs` them (None: it has none, or the
/// query has nothing to look up). An index some store of the map has not filed into yet (one
/// that came after the store: another member's, on joining) is filled in first, so that it
/// serves.
pub(crate) fn reactor_indexes(
    (partitions, settings): (&[crate::partition::objects::PartitionStore], &crate::engine::settings::SettingsCache),
    map: &str,
    needs: bool,
) -> Option<crate::engine::map::index::Shared> {
    if !needs {
        return None;
    }
    let shared = settings.shared_indexes(map)?;
    if !shared.lock().complete() {
        partitions.iter().filter_map(|partition| partition.map(map)).for_each(|store| store.file_missing());
    }
    Some(shared)
}
