//! Observability: the probes every thread writes (`probes.rs`) and what reads them: the metrics
//! file and the HTTP endpoint (`metrics.rs`).

pub(crate) mod metrics;
pub(crate) mod probes;
