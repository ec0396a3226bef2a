//! The cardinality estimator's typed requests. No wire format in them: a row decodes a message
//! into them (`rows.rs`), the engine runs them.

use std::borrow::Cow;

/// One cardinality estimator request (the estimator lives in the partition of its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardinalityEstimatorRequest<'a> {
    /// The estimator's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: CardinalityEstimatorOp,
}

/// The cardinality estimator operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardinalityEstimatorOp {
    /// Adds an item by the 64-bit hash the client computed of it (any value).
    Add { hash: i64 },
    /// The estimate of how many distinct items were added.
    Estimate,
}
