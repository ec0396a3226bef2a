//! A row of the operation table: how a message type is routed (the owner of the partition in
//! its header, this member's copy of that partition, every partition, the connection's reactor,
//! the SQL service, or the member link), its flags (writes, may add entries, may wait on a key
//! lock, names a tenant-scoped object) and its handler: the decoder that turns the wire message
//! into the typed request an engine runs, the classifier that turns a request over every
//! partition into a fan-out's operation, or the SQL service's call that answers it. A handler is
//! its row's own (a decoder knows its type from its row, so none matches on the message type).
//! Each structure declares its own rows (`engine/<structure>/rows.rs`) with the macros here; the
//! table (`operations.rs`) is their union.

use crate::engine::wide::Classified;
use crate::net::connection::ConnectionShared;
use crate::partition::owner::{Call, PartitionOwner};
use ferrogrid_protocol::{DecodeError, Message, MessageType, Uuid};
use std::sync::Arc;

/// Where a request runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// On the member and reactor owning the partition named in the request header.
    Partition,
    /// On this member's copy of the partition named in the request header, on the reactor
    /// owning it, whoever owns the partition in the cluster (a replicated map's reads: every
    /// member holds every partition's copy). Never forwarded.
    LocalCopy,
    /// Over every partition of the map (size, keySet, clear, listener registration, …):
    /// every reactor runs a share, other members too where the work is cluster-wide.
    EveryPartition,
    /// On the member the request names as its target replica (a CRDT: PN counter get and
    /// add), on the reactor of its name's partition there; forwarded to that member if it is
    /// another.
    Replica,
    /// Answered by the reactor that read it, by the client service's call named
    /// (authentication, ping, proxies, …).
    Connection(ClientCall),
    /// Answered by the reactor that read it from state its member's reactors share, not from
    /// a partition (flake id generators); from a client it may go on to another member.
    Local,
    /// The SQL service (`sql/execute.rs`), on the reactor that read it, by the call named: a
    /// statement fans out over the partitions of the maps it names.
    Sql(SqlCall),
    /// The transaction service (`transaction/service.rs`), on the reactor that read it, by the
    /// call named: the member the client created a transaction on coordinates it.
    Transaction(TxnCall),
    /// Member-to-member traffic (only on member links).
    MemberLink,
}

impl Route {
    /// Whether a request of this route runs on one partition's owner (checked there, where it
    /// runs, for the partition in its header).
    pub fn is_partition_bound(self) -> bool {
        matches!(self, Route::Partition | Route::Transaction(TxnCall::Key | TxnCall::Named))
    }
}

/// The transaction service's call that answers a [`Route::Transaction`] row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnCall {
    Create,
    Commit,
    Rollback,
    /// A transactional operation on one key: routed, once the coordinator admitted it, to the
    /// key's partition like a [`Route::Partition`] request (its row decodes and runs it there).
    Key,
    /// A transactional operation on a structure that lives in the partition of its name (a
    /// queue, list or set): routed like [`TxnCall::Key`], to the name's partition.
    Named,
    /// A transactional read over every partition (size, keySet, values, …): once admitted,
    /// run like a [`Route::EveryPartition`] request (its row has the classifier).
    Wide,
    /// XA transactions (`transaction/xa.rs`): create, prepare, commit and rollback by the
    /// transaction's id; finalize and clear by its Xid (from any connection); the Xids of
    /// prepared transactions.
    XaCreate,
    XaPrepare,
    XaCommit,
    XaRollback,
    XaFinalize,
    XaClear,
    XaCollect,
}

impl TxnCall {
    pub fn is_xa(self) -> bool {
        use TxnCall::*;
        matches!(self, XaCreate | XaPrepare | XaCommit | XaRollback | XaFinalize | XaClear | XaCollect)
    }
}

/// The client service's call that answers a [`Route::Connection`] row
/// (`route/client/service.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientCall {
    /// Authentication with a user name and password (the first request of a connection).
    Authenticate,
    /// Authentication with custom credentials.
    AuthenticateCustom,
    /// The cluster view's events, now and on every change.
    AddClusterViewListener,
    /// Backup acknowledgements (ferrogrid acknowledges nothing: an id only).
    LocalBackupListener,
    /// Ping, statistics, triggering the partition assignment: an empty answer.
    Acknowledge,
    CreateProxy,
    CreateProxies,
    DestroyProxy,
    GetDistributedObjects,
    AddDistributedObjectListener,
    RemoveDistributedObjectListener,
    AddPartitionLostListener,
    RemovePartitionLostListener,
    AddMapPartitionLostListener,
    RemoveMapPartitionLostListener,
    AddCachePartitionLostListener,
    RemoveCachePartitionLostListener,
    /// A Compact schema, answered once every member holds it.
    SendSchema,
    /// Every Compact schema of a client that connected to the cluster anew.
    SendAllSchemas,
    FetchSchema,
    /// A PN counter's configured replica count.
    PnCounterReplicaCount,
    /// Management center's promotion of this lite member to a data member.
    PromoteLiteMember,
}

/// The SQL service's call that answers a [`Route::Sql`] row (`sql/execute.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlCall {
    /// Runs a statement (a query opens a cursor).
    Execute,
    /// The next page of a cursor.
    Fetch,
    /// Drops a cursor.
    Close,
    /// The DDL of a mapping.
    MappingDdl,
}

/// What a request may do, for admission and bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    pub const NONE: Flags = Flags(0);
    /// Changes data (or locks).
    pub const WRITE: Flags = Flags(1);
    /// May add entries: refused for a tenant at its data quota.
    pub const ADDS_ENTRIES: Flags = Flags(2);
    /// May wait for a key lock another owner holds.
    pub const LOCK_AWARE: Flags = Flags(4);
    /// Names an object in its first variable frame, which a tenant's namespace scopes.
    pub const SCOPED: Flags = Flags(8);
    /// Names the member it runs on (a request over that member's partitions only): another
    /// member forwards it there.
    pub const TARGETED: Flags = Flags(16);

    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Decodes a partition-bound request into its structure's typed request and runs it on the
/// owner of its partition: the typed request's [`Execute`](crate::partition::owner::Execute)
/// handler, in the structure's folder. A decode error is the row's; the handler answers
/// everything else.
pub type Run = for<'a> fn(&Message<'a>, &mut PartitionOwner, &Call<'_>, &mut Vec<u8>) -> Result<(), DecodeError>;

/// The object name and target member a [`Route::Replica`] request names (routing reads them
/// before the request runs).
pub type ReplicaOf = for<'a> fn(&Message<'a>) -> Result<(&'a str, Option<Uuid>), DecodeError>;

/// Decodes a request over every partition into its operation ([`Route::EveryPartition`]); a
/// listener registration's answers go to `connection`.
pub type Classifier = fn(&Message<'_>, &Arc<ConnectionShared>) -> Result<Classified, DecodeError>;

/// One row of the table.
#[derive(Debug)]
pub struct Operation {
    pub message_type: MessageType,
    pub name: &'static str,
    pub route: Route,
    pub flags: Flags,
    /// The typed request's decoder and handler (partition-bound operations only).
    pub run: Option<Run>,
    /// Where a [`Route::Replica`] request goes.
    pub replica: Option<ReplicaOf>,
    /// The decoder into a fan-out's operation ([`Route::EveryPartition`] rows only).
    pub classify: Option<Classifier>,
}

impl Operation {
    pub fn is(&self, flags: Flags) -> bool {
        self.flags.contains(flags)
    }

    /// The client service's call that answers this row, if it is one of its rows.
    pub fn client_call(&self) -> Option<ClientCall> {
        match self.route {
            Route::Connection(call) => Some(call),
            _ => None,
        }
    }
}

pub(crate) const W: Flags = Flags::WRITE;
pub(crate) const A: Flags = Flags::ADDS_ENTRIES;
pub(crate) const L: Flags = Flags::LOCK_AWARE;
pub(crate) const S: Flags = Flags::SCOPED;

/// A row: `row!(Codec, Route, flags)`; a partition row with its decoder and handler:
/// `row!(Codec, Route, flags, |r| request)`, where `r` is the message decoded by the row's codec
/// (a decode error is the decoder's) and `request` the typed request it becomes, which runs by
/// its [`Execute`](crate::partition::owner::Execute) impl; a replica row adds
/// `replica: |r| (name, target)`.
macro_rules! row {
    ($codec:ident, $route:ident $(($($argument:tt)*))?, $flags:expr) => {
        $crate::route::row::Operation {
            message_type: $codec::TYPE,
            name: stringify!($codec),
            route: $crate::route::row::Route::$route $(($($argument)*))?,
            flags: $flags,
            run: None,
            replica: None,
            classify: None,
        }
    };
    ($codec:ident, $route:ident, $flags:expr, |$decoded:ident| $request:expr) => {
        $crate::route::row::Operation {
            message_type: $codec::TYPE,
            name: stringify!($codec),
            route: $crate::route::row::Route::$route,
            flags: $flags,
            run: Some({
                const RUN: $crate::route::row::Run = |message, owner, call, out| {
                    let $decoded = $codec::decode(message)?;
                    $crate::partition::owner::Execute::execute(&$request, owner, call, out);
                    Ok(())
                };
                RUN
            }),
            replica: None,
            classify: None,
        }
    };
    ($codec:ident, $route:ident, $flags:expr, |$decoded:ident| $request:expr, replica: |$named:ident| $replica:expr) => {
        $crate::route::row::Operation {
            replica: Some({
                const REPLICA: $crate::route::row::ReplicaOf = |message| {
                    let $named = $codec::decode(message)?;
                    Ok($replica)
                };
                REPLICA
            }),
            ..$crate::route::row::row!($codec, $route, $flags, |$decoded| $request)
        }
    };
}

/// A [`Route::EveryPartition`] row and its classifier: `wide_row!(Codec, flags, classify)`, a
/// function or a closure `|message, connection| ...`.
macro_rules! wide_row {
    ($codec:ident, $flags:expr, $classify:expr) => {
        $crate::route::row::Operation {
            message_type: $codec::TYPE,
            name: stringify!($codec),
            route: $crate::route::row::Route::EveryPartition,
            flags: $flags,
            run: None,
            replica: None,
            classify: Some({
                const CLASSIFY: $crate::route::row::Classifier = $classify;
                CLASSIFY
            }),
        }
    };
}

/// A transactional row of a structure that lives in the partition of its name (a queue, list
/// or set): `txn_row!(Codec, flags, |r| request)`. The transaction service admits it and routes
/// it to the name's partition ([`TxnCall::Named`]), where it decodes and runs as a `row!` does.
macro_rules! txn_row {
    ($codec:ident, $flags:expr, |$decoded:ident| $request:expr) => {
        $crate::route::row::Operation {
            route: $crate::route::row::Route::Transaction($crate::route::row::TxnCall::Named),
            ..$crate::route::row::row!($codec, Partition, $flags, |$decoded| $request)
        }
    };
}

/// A member-link message's row (routed by the link, not by the table).
macro_rules! member_row {
    ($constant:path, $name:literal) => {
        $crate::route::row::Operation {
            message_type: $constant,
            name: $name,
            route: $crate::route::row::Route::MemberLink,
            flags: $crate::route::row::Flags::NONE,
            run: None,
            replica: None,
            classify: None,
        }
    };
}

pub(crate) use {member_row, row, txn_row, wide_row};
