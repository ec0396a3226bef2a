//! Aggregations (`Map.aggregate`, with or without a predicate) and projections (`Map.project`):
//! queries whose shares reduce or map the matching entries (`ferrogrid_query::exec`) instead of
//! returning them. As for queries (`query_ops.rs`), a share's partial is kept per partition it
//! covered, so a partition two members covered while it moved counts once, and a partition
//! nobody covered makes the answer retryable.

use super::query_ops::{for_each_match, read_partition, Coverage};
use crate::engine::map::query::{exec_failure, Predicate};
use crate::engine::request::{ErrorKind, OpError, Reply};
use crate::engine::wide::{Partial, Partitions, ShareContext, WideOperation};
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::message::MessageWriter;
use ferrogrid_protocol::{DecodeError, Message};
use ferrogrid_query::aggregation::{Aggregator, Projection};
use ferrogrid_query::exec::Accumulator;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// An aggregator or projection as the request carried it, decoded on first use (with the
/// member's schemas: it may hold Compact values).
#[derive(Debug)]
struct Decoded<T> {
    data: Box<[u8]>,
    decoded: OnceLock<Result<Arc<T>, OpError>>,
}

impl<T> Decoded<T> {
    fn new(data: &[u8]) -> Decoded<T> {
        Decoded { data: data.into(), decoded: OnceLock::new() }
    }

    fn get(
        &self,
        share: &ShareContext<'_>,
        decode: impl FnOnce(&[u8], &crate::engine::schemas::Schemas) -> Result<T, OpError>,
    ) -> Result<Arc<T>, OpError> {
        self.decoded.get_or_init(|| decode(&self.data, share.schemas).map(Arc::new)).clone()
    }
}

/// The decoded aggregator (or projection) and the compiled predicate of a share, or None with
/// the failure recorded in `coverage`.
fn ready<T>(
    decoded: Result<Arc<T>, OpError>,
    predicate: &Predicate,
    share: &ShareContext<'_>,
    coverage: &mut Coverage,
) -> Option<(Arc<T>, crate::engine::map::query::Compiled)> {
    let compiled = predicate.for_share(share.schemas, share.partition_count);
    match (decoded, compiled) {
        (Ok(decoded), Ok(compiled)) => Some((decoded, compiled)),
        (Err(failure), _) => {
            coverage.failure = Some(failure);
            None
        }
        (_, Err(failure)) => {
            coverage.failure = Some(failure);
            None
        }
    }
}

fn not_readable(what: &str, error: impl std::fmt::Display) -> OpError {
    OpError::new(ErrorKind::IllegalArgument, format!("cannot read the {what}: {error}"))
}

/// The accumulator every partition starts from, and whether a partition nothing matched in
/// may be left out: when combining that start with itself leaves it as it was (a client's
/// zero sums, null extremes, no values), combining it into a total that already holds it (or
/// into the start the total is) changes nothing.
fn prototype(aggregator: &Aggregator) -> (Accumulator, bool) {
    let prototype = Accumulator::new(aggregator);
    let mut twice = prototype.clone();
    let skippable = twice.combine(prototype.clone()).is_ok() && twice == prototype;
    (prototype, skippable)
}

/// One partition's accumulator, or its encoded form after a member hop (decoded again when the
/// origin combines: only the origin needs the aggregator to read it).
#[derive(Debug, Default)]
pub(crate) struct Reduced {
    coverage: Coverage,
    partitions: BTreeMap<u16, Accumulator>,
    /// Partitions as another member encoded them, not yet decoded.
    encoded: BTreeMap<u16, Vec<u8>>,
}

impl Partial for Reduced {
    fn merge(&mut self, other: Reduced) {
        let twice = self.coverage.merge(other.coverage);
        self.partitions.extend(other.partitions.into_iter().filter(|(partition, _)| !twice.contains(*partition)));
        self.encoded.extend(other.encoded.into_iter().filter(|(partition, _)| !twice.contains(*partition)));
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        self.coverage.write_to(writer);
        writer.begin();
        for (partition, accumulator) in &self.partitions {
            writer.frame(&partition.to_le_bytes()).frame(&accumulator.encode());
        }
        for (partition, bytes) in &self.encoded {
            writer.frame(&partition.to_le_bytes()).frame(bytes);
        }
        writer.end();
    }

    fn read_from(message: &Message<'_>) -> Result<Reduced, DecodeError> {
        let mut reader = message.reader();
        let coverage = Coverage::read_from(&mut reader)?;
        reader.begin()?;
        let mut encoded = BTreeMap::new();
        while !reader.at_end()? {
            let partition = read_partition(&mut reader)?;
            encoded.insert(partition, reader.value_frame("accumulator")?.to_vec());
        }
        Ok(Reduced { coverage, partitions: BTreeMap::new(), encoded })
    }
}

/// `Map.aggregate` (`predicate` None) and `Map.aggregateWithPredicate`.
#[derive(Debug)]
pub(crate) struct Aggregate {
    aggregator: Decoded<Aggregator>,
    predicate: Predicate,
    /// The member's schemas, from the first share (a result holding a Compact record is
    /// written in its schema's field order).
    schemas: OnceLock<Arc<crate::engine::schemas::Schemas>>,
}

impl Aggregate {
    pub(crate) fn new(aggregator: &[u8], predicate: Option<&[u8]>) -> Aggregate {
        Aggregate {
            aggregator: Decoded::new(aggregator),
            predicate: Predicate::new(predicate),
            schemas: OnceLock::new(),
        }
    }

    fn decode(data: &[u8], schemas: &crate::engine::schemas::Schemas) -> Result<Aggregator, OpError> {
        ferrogrid_query::aggregation::decode_aggregator_with(data, schemas).map_err(|e| not_readable("aggregator", e))
    }

    /// The result once every partition is in: the accumulators (taken from `partial`)
    /// combined in partition order.
    fn result(&self, partial: &mut Reduced) -> Result<Option<Vec<u8>>, OpError> {
        partial.coverage.outcome()?;
        let aggregator = match self.aggregator.decoded.get() {
            Some(decoded) => decoded.clone()?,
            None => return Err(OpError::new(ErrorKind::Refused, "no share ran the aggregation")),
        };
        let mut total = Accumulator::new(&aggregator);
        let mut partitions: BTreeMap<u16, Accumulator> = std::mem::take(&mut partial.partitions);
        for (partition, bytes) in std::mem::take(&mut partial.encoded) {
            let accumulator = Accumulator::decode(&aggregator, &bytes).map_err(exec_failure)?;
            partitions.insert(partition, accumulator);
        }
        for (_, accumulator) in partitions {
            total.combine(accumulator).map_err(exec_failure)?;
        }
        let schemas = self.schemas.get().cloned().unwrap_or_default();
        total.result(&*schemas).map_err(exec_failure)
    }
}

impl WideOperation for Aggregate {
    type Partial = Reduced;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Reduced {
        Reduced::default()
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut Reduced) {
        unreachable!("an aggregation runs its share in on_share")
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Reduced) {
        self.schemas.get_or_init(|| share.schemas.clone());
        let decoded = self.aggregator.get(share, Aggregate::decode);
        let Some((aggregator, ref compiled)) = ready(decoded, &self.predicate, share, &mut partial.coverage) else {
            return;
        };
        let shared = share.schemas.clone();
        let (now_ms, schemas) = (share.now_ms, crate::engine::map::query::ShareSchemas::new(&shared));
        let mut partitions = BTreeMap::new();
        let (prototype, skippable) = prototype(&aggregator);
        partial.coverage.visit_owned((share, map), compiled, |partition, store, candidates| {
            if skippable && candidates.is_some_and(<[_]>::is_empty) {
                return Ok(());
            }
            let mut accumulator = prototype.clone();
            let mut matched = false;
            if let Some(store) = store.map(map) {
                for_each_match((store, candidates), compiled, (now_ms, &schemas), |key, value| {
                    matched = true;
                    accumulator.accumulate(key, value, &schemas).map_err(exec_failure)
                })?;
            }
            if matched || !skippable {
                partitions.insert(partition, accumulator);
            }
            Ok(())
        });
        partial.partitions = partitions;
    }

    fn reply<'p>(&'p self, partial: &'p mut Reduced) -> Result<Reply<'p>, OpError> {
        self.result(partial).map(Reply::Aggregated)
    }
}

/// What a projection's shares found: each matching entry's projected value, by partition.
#[derive(Debug, Default)]
pub(crate) struct Projected {
    coverage: Coverage,
    items: Vec<(u16, Option<Vec<u8>>)>,
}

impl Partial for Projected {
    fn merge(&mut self, other: Projected) {
        let twice = self.coverage.merge(other.coverage);
        self.items.extend(other.items.into_iter().filter(|(partition, _)| !twice.contains(*partition)));
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        self.coverage.write_to(writer);
        writer.begin();
        for (partition, item) in &self.items {
            writer.frame(&partition.to_le_bytes());
            match item {
                Some(item) => writer.frame(item),
                None => writer.null(),
            };
        }
        writer.end();
    }

    fn read_from(message: &Message<'_>) -> Result<Projected, DecodeError> {
        let mut reader = message.reader();
        let coverage = Coverage::read_from(&mut reader)?;
        reader.begin()?;
        let mut items = Vec::new();
        while !reader.at_end()? {
            let partition = read_partition(&mut reader)?;
            let item = if reader.next_is_null() { None } else { Some(reader.value_frame("projected")?.to_vec()) };
            items.push((partition, item));
        }
        Ok(Projected { coverage, items })
    }
}

/// `Map.project` (`predicate` None) and `Map.projectWithPredicate`.
#[derive(Debug)]
pub(crate) struct Project {
    projection: Decoded<Projection>,
    predicate: Predicate,
}

impl Project {
    pub(crate) fn new(projection: &[u8], predicate: Option<&[u8]>) -> Project {
        Project { projection: Decoded::new(projection), predicate: Predicate::new(predicate) }
    }
}

impl WideOperation for Project {
    type Partial = Projected;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Projected {
        Projected::default()
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut Projected) {
        unreachable!("a projection runs its share in on_share")
    }

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Projected) {
        let decoded = self.projection.get(share, |data, _| {
            ferrogrid_query::aggregation::decode_projection(data).map_err(|e| not_readable("projection", e))
        });
        let Some((projection, ref compiled)) = ready(decoded, &self.predicate, share, &mut partial.coverage) else {
            return;
        };
        let shared = share.schemas.clone();
        let (now_ms, schemas) = (share.now_ms, crate::engine::map::query::ShareSchemas::new(&shared));
        let mut items = Vec::new();
        partial.coverage.visit_owned((share, map), compiled, |partition, store, candidates| {
            if candidates.is_some_and(<[_]>::is_empty) {
                return Ok(());
            }
            let Some(store) = store.map(map) else { return Ok(()) };
            for_each_match((store, candidates), compiled, (now_ms, &schemas), |key, value| {
                let item = ferrogrid_query::exec::project(&projection, key, value, &schemas);
                items.push((partition, item.map_err(exec_failure)?));
                Ok(())
            })
        });
        partial.items = items;
    }

    fn reply<'p>(&'p self, partial: &'p mut Projected) -> Result<Reply<'p>, OpError> {
        partial.coverage.outcome()?;
        partial.coverage.check_count(partial.items.len())?;
        Ok(Reply::Projected(partial.items.iter().map(|(_, item)| item.as_deref()).collect()))
    }

    fn oversized(&self, partial: &Projected, bytes: usize) -> Option<OpError> {
        partial.coverage.oversized(bytes)
    }
}
