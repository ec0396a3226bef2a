//! The SQL service's rows of the operation table.

use crate::route::row::{row, Operation, S, W};
use ferrogrid_protocol::codec::{SqlClose, SqlExecute, SqlFetch, SqlMappingDdl};

/// Statements run where they are read (scans and writes fan out); cursors belong to the
/// connection that opened them.
pub(crate) static ROWS: &[Operation] =
    &[row!(SqlExecute, Sql, W.with(S)), row!(SqlFetch, Sql, S), row!(SqlClose, Sql, S), row!(SqlMappingDdl, Sql, S)];
