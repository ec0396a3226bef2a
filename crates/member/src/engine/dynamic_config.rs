//! Configurations added while the cluster runs (`DynamicConfig.add*Config`): what every member
//! keeps and looks settings up in (`configs.rs`), and the requests that add them (`rows.rs`).

pub(crate) mod configs;
pub(crate) mod rows;
