//! The list's and set's typed requests. No wire format in them: a row decodes a message into
//! them (`rows.rs`), the engine runs them.

use crate::engine::request::Blob;
use ferrogrid_protocol::Uuid;
use std::borrow::Cow;

/// One list or set request (the collection lives in the partition of its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionRequest<'a> {
    /// The collection's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    /// A set (unique items, no positions) or a list.
    pub set: bool,
    pub op: CollectionOp<'a>,
}

/// The operations of lists and sets; those with an index are the list's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectionOp<'a> {
    Size,
    IsEmpty,
    Contains {
        value: Blob<'a>,
    },
    ContainsAll {
        values: Vec<Blob<'a>>,
    },
    /// add (at the end, or at `index` of a list: answers nothing).
    Add {
        value: Blob<'a>,
        index: Option<i32>,
    },
    /// addAll (at the end, or from `index` of a list).
    AddAll {
        values: Vec<Blob<'a>>,
        index: Option<i32>,
    },
    /// The first equal item.
    Remove {
        value: Blob<'a>,
    },
    RemoveAll {
        values: Vec<Blob<'a>>,
    },
    RetainAll {
        values: Vec<Blob<'a>>,
    },
    Clear,
    /// getAll and iterator: every item in order.
    GetAll,
    Get {
        index: i32,
    },
    /// set: the item at `index` replaced; answers the old one.
    Replace {
        index: i32,
        value: Blob<'a>,
    },
    RemoveAt {
        index: i32,
    },
    IndexOf {
        value: Blob<'a>,
        last: bool,
    },
    /// subList and listIterator (from `from` to the end: `to` −1), with Hazelcast's −1
    /// bounds: (−1, −1) is the whole list.
    Sub {
        from: i32,
        to: i32,
    },
    /// An operation of transaction `txn` (TransactionalList, TransactionalSet: `txn.rs`).
    Txn {
        txn: Uuid,
        op: CollectionTxnOp<'a>,
    },
}

/// TransactionalList's and TransactionalSet's operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectionTxnOp<'a> {
    /// Staged until the commit.
    Add {
        value: Blob<'a>,
    },
    /// Reserves the first equal item (or drops the transaction's own add of it).
    Remove {
        value: Blob<'a>,
    },
    Size,
}
