//! The cluster: the membership service thread (`service.rs`), the member-to-member protocol
//! (`peer.rs`) and traffic on member links (`link.rs`), replication of partitions to their
//! backups (`replication/`), what clients are told about the cluster (`view.rs`), cluster-wide
//! events and the relay of other members' events to unisocket clients, and a split-brain merge's
//! data (`merge.rs`).

pub(crate) mod events;
pub(crate) mod heard;
pub(crate) mod link;
pub(crate) mod merge;
pub(crate) mod outgoing;
pub(crate) mod peer;
pub(crate) mod query_caches;
pub(crate) mod relays;
pub(crate) mod replication;
pub(crate) mod rows;
pub(crate) mod service;
pub(crate) mod view;
