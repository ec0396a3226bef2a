//! Executor services (plain, durable, scheduled): their rows, answered as a Hazelcast 5.6 member
//! that never ran a task answers them (`rows.rs`), and the set of executors shut down that each
//! reactor keeps (`shutdowns.rs`).
pub(crate) mod rows;
pub(crate) mod shutdowns;
