//! PN counters (`PNCounter`): the replicas' state and its rules (`state.rs`) and what a reactor does
//! with the replicas it holds (`replicas.rs`).
pub(crate) mod replicas;
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod state;
