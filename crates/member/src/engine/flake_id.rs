//! Flake id generators: the member-wide state ids are drawn from (`store.rs`), and the
//! generator's row of the operation table (`rows.rs`).

pub(crate) mod rows;
pub(crate) mod store;
