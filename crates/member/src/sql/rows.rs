//! The SQL service's rows of the operation table, each naming the call that answers it.

use crate::route::row::{row, Operation, SqlCall, S, W};
use ferrogrid_protocol::codec::{SqlClose, SqlExecute, SqlFetch, SqlMappingDdl};

/// Statements run where they are read (scans and writes fan out); cursors belong to the
/// connection that opened them.
pub(crate) static ROWS: &[Operation] = &[
    row!(SqlExecute, Sql(SqlCall::Execute), W.with(S)),
    row!(SqlFetch, Sql(SqlCall::Fetch), S),
    row!(SqlClose, Sql(SqlCall::Close), S),
    row!(SqlMappingDdl, Sql(SqlCall::MappingDdl), S),
];
