//! JCache (`javax.cache` through Hazelcast's `ICache`): caches whose configuration a client
//! creates (`configs.rs`), their entries in partitions with expiry policies (`store.rs`,
//! `expiry.rs`, `ops.rs`), their events with completion ids (`listeners/caches.rs`), their
//! event journal (`journal.rs`), and the Cache service's rows (`rows.rs`, `wide.rs`).

pub(crate) mod configs;
pub(crate) mod expiry;
pub(crate) mod java_serial;
pub(crate) mod journal;
pub(crate) mod ops;
pub(crate) mod request;
pub(crate) mod rows;
pub(crate) mod store;
pub(crate) mod wide;
