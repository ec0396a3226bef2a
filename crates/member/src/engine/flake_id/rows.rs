//! The flake id generator's row of the operation table.

use crate::route::row::{row, Operation, S};
use ferrogrid_protocol::codec::FlakeIdGeneratorNewIdBatch;

/// Member-wide state, answered where the request is read (`route/local_ops.rs`).
pub(crate) static ROWS: &[Operation] = &[row!(FlakeIdGeneratorNewIdBatch, Local, S)];
