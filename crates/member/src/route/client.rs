//! The client service: connection-level requests (authentication, cluster view, proxies, ping,
//! schemas, …) answered by the connection's reactor (`service.rs`), and their rows (`rows.rs`).

pub(crate) mod rows;
pub(crate) mod service;
