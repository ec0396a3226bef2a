//! Transactions (`TransactionContext`): the member a client creates a transaction on
//! coordinates it. The open transactions and their bounds (`registry.rs`, shared by the
//! member's reactors), the service that admits each transactional request and routes it, and
//! ends transactions on commit, rollback, timeout and the client's disconnection
//! (`service.rs`), XA transactions (`xa.rs`), and the service's rows (`rows.rs`). What a transaction does to a map's keys
//! is the map's (`engine/map/txn.rs`, `engine/map/txn_wide.rs`).

pub(crate) mod backup_log;
pub(crate) mod durability;
pub(crate) mod registry;
pub(crate) mod rows;
pub(crate) mod service;
pub(crate) mod xa;
