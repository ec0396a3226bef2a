//! SQL: statements run as fan-outs over the maps they name (`execute.rs`), and the member's
//! SQL state shared by its reactors: mappings and open cursors (`service.rs`).

pub(crate) mod execute;
pub(crate) mod pages;
pub(crate) mod round;
pub(crate) mod rows;
pub(crate) mod service;
pub(crate) mod shares;
pub(crate) mod stream;
