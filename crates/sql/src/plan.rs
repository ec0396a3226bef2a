//! From a parsed query (sqlparser's AST) to a plan: names resolved against the mappings,
//! expressions typed ([`crate::expr`]), parameters bound, aggregates collected, and the keys
//! of point lookups (`WHERE __key = ?`) found so that the member reads only their partitions.
//!
//! A row, while a query runs, is every column of every source (hidden ones included), one
//! source after another in FROM order; after grouping it is the group keys, then the
//! aggregates' results.
//!
//! `query` plans a query (its FROM, select list, grouping, order, limits, UNION, point
//! lookups); `translate` turns its expressions into typed ones over the sources in scope, with
//! `typing`'s checks and conversions, and `location` places their errors in the text;
//! [`virtual_tables`] are the sources that are not maps.

mod location;
mod query;
mod ranges;
pub mod simplify;
mod translate;
mod typing;
pub mod virtual_tables;

pub use location::located;
pub use query::{object_not_found, select};
pub use translate::{contains_aggregate, Translator};
pub use typing::{bind_parameter, data_type_of, is_parameter, widen};

use crate::catalog::Mapping;
use crate::error::{Result, SqlError};
use crate::expr::Expr;
use crate::types::SqlType;
use ferrogrid_query::Value;

/// One source of rows: a mapping and where its columns start in a row.
#[derive(Debug, Clone)]
pub struct Source {
    pub mapping: Mapping,
    pub alias: String,
    pub offset: usize,
    /// The serialized keys a point lookup reads (None: every entry).
    pub keys: Option<Vec<Vec<u8>>>,
    /// Entries the statement itself supplies (a table function, `information_schema`): not
    /// scanned from any map.
    pub inline: Option<crate::catalog::Entries>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
}

/// How source `i + 1` joins the sources before it.
#[derive(Debug, Clone)]
pub struct Join {
    pub kind: JoinKind,
    pub on: Option<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregateFunction {
    CountAll,
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

/// One aggregate call of a grouped query.
#[derive(Debug, Clone)]
pub struct AggregateCall {
    pub function: AggregateFunction,
    pub argument: Option<Expr>,
    pub distinct: bool,
    pub ty: SqlType,
    /// Its text, so the same call written twice is computed once.
    text: String,
}

#[derive(Debug, Clone)]
pub struct Grouping {
    pub keys: Vec<Expr>,
    pub calls: Vec<AggregateCall>,
    pub having: Option<Expr>,
}

/// A result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMeta {
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
}

#[derive(Debug, Clone)]
pub struct OrderKey {
    pub expr: Expr,
    pub descending: bool,
    pub nulls_first: bool,
}

/// A SELECT ready to run over its sources' entries.
#[derive(Debug, Clone)]
pub struct SelectPlan {
    pub sources: Vec<Source>,
    pub joins: Vec<Join>,
    pub filter: Option<Expr>,
    pub grouping: Option<Grouping>,
    pub projection: Vec<Expr>,
    pub columns: Vec<ColumnMeta>,
    pub order: Vec<OrderKey>,
    pub distinct: bool,
    pub offset: usize,
    pub limit: Option<usize>,
    /// A UNION: its branches (whose sources are this plan's, in order) and whether it keeps
    /// duplicates (UNION ALL). This plan's projection is then the identity over their rows.
    pub union: Option<Box<Union>>,
}

#[derive(Debug, Clone)]
pub struct Union {
    pub branches: Vec<SelectPlan>,
    pub all: bool,
}

/// Placeholders (`?`) numbered by where they are in the text.
#[derive(Debug, Default)]
pub struct Parameters {
    pub values: Vec<Value>,
    /// The statement's text (to widen sqlparser's spans of CAST and calls to their ')').
    pub text: String,
    /// (line, column) of each `?`, in text order.
    pub positions: Vec<(u64, u64)>,
}

impl Parameters {
    fn value(&self, span: &sqlparser::tokenizer::Span) -> Result<(usize, Value)> {
        let index = self
            .positions
            .iter()
            .position(|position| *position == (span.start.line, span.start.column))
            .ok_or_else(|| SqlError::parsing("Unexpected parameter"))?;
        match self.values.get(index) {
            Some(value) => Ok((index, value.clone())),
            None => Err(SqlError::data(format!(
                "Unexpected parameter count: expected {}, got {}",
                self.positions.len(),
                self.values.len()
            ))),
        }
    }
}
