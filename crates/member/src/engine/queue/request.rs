//! The queue's typed requests. No wire format in them: a row decodes a message into
//! them (`rows.rs`), the engine runs them.

use crate::engine::request::Blob;
use ferrogrid_protocol::Uuid;
use std::borrow::Cow;

/// One queue request (the queue lives in the partition of its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRequest<'a> {
    /// The queue's name (scoped to the tenant's namespace already).
    pub name: Cow<'a, str>,
    pub op: QueueOp<'a>,
}

/// The queue operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueOp<'a> {
    /// offer (`answers_bool`; `timeout_ms` 0: do not wait) and put (waits until there is room:
    /// `timeout_ms` < 0, answers nothing).
    Offer {
        value: Blob<'a>,
        timeout_ms: i64,
        answers_bool: bool,
    },
    /// poll (`timeout_ms` 0: do not wait) and take (`timeout_ms` < 0).
    Poll {
        timeout_ms: i64,
    },
    Peek,
    Size,
    IsEmpty,
    RemainingCapacity,
    /// The items in order, not removed.
    Iterator,
    Contains {
        value: Blob<'a>,
    },
    ContainsAll {
        values: Vec<Blob<'a>>,
    },
    /// The first equal item.
    Remove {
        value: Blob<'a>,
    },
    /// drainTo (`max` None) and drainToMaxSize.
    Drain {
        max: Option<i32>,
    },
    Clear,
    AddAll {
        values: Vec<Blob<'a>>,
    },
    RemoveAll {
        values: Vec<Blob<'a>>,
    },
    RetainAll {
        values: Vec<Blob<'a>>,
    },
    /// An operation of transaction `txn` (TransactionalQueue, `txn.rs`).
    Txn {
        txn: Uuid,
        op: QueueTxnOp<'a>,
    },
}

/// TransactionalQueue's operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueTxnOp<'a> {
    /// Staged until the commit; on a full queue it waits `timeout_ms` for room (0: not).
    Offer {
        value: Blob<'a>,
        timeout_ms: i64,
    },
    /// Reserves the first item (`timeout_ms` 0: do not wait; take: < 0).
    Poll {
        timeout_ms: i64,
    },
    /// The first item, not reserved (`timeout_ms` 0: do not wait).
    Peek {
        timeout_ms: i64,
    },
    Size,
}
