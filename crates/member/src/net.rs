//! The network layer: reactors (one event loop each), connections and their IO, what a reactor
//! owes other connections, and the two threads that place connections on reactors (the IO
//! balancer and packed placement). Nothing here knows a data structure.

pub(crate) mod balancer;
pub(crate) mod connection;
pub(crate) mod connection_io;
pub(crate) mod outbox;
pub(crate) mod packing;
pub(crate) mod reactor;
pub(crate) mod tls;
pub mod tls_files;
pub(crate) mod tls_link;
pub(crate) mod turn;
