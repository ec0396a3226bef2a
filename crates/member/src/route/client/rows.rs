//! The client service's rows of the operation table (handled by `service.rs`).

use crate::route::row::{row, Flags, Operation, S, W};
use ferrogrid_protocol::codec::*;

/// The client service, answered by the reactor that read the request (and Compact schemas, kept
/// by every member: `engine/schemas.rs`).
pub(crate) static ROWS: &[Operation] = &[
    row!(ClientAuthentication, Connection, Flags::NONE),
    row!(ClientAuthenticationCustom, Connection, Flags::NONE),
    row!(ClientAddClusterViewListener, Connection, Flags::NONE),
    row!(ClientLocalBackupListener, Connection, Flags::NONE),
    row!(ClientPing, Connection, Flags::NONE),
    row!(ClientStatistics, Connection, Flags::NONE),
    row!(ClientTriggerPartitionAssignment, Connection, Flags::NONE),
    row!(ClientCreateProxy, Connection, S),
    row!(ClientCreateProxies, Connection, Flags::NONE),
    row!(ClientDestroyProxy, Connection, W.with(S)),
    row!(ClientGetDistributedObjects, Connection, Flags::NONE),
    row!(ClientAddDistributedObjectListener, Connection, Flags::NONE),
    row!(ClientRemoveDistributedObjectListener, Connection, Flags::NONE),
    row!(ClientAddPartitionLostListener, Connection, Flags::NONE),
    row!(ClientRemovePartitionLostListener, Connection, Flags::NONE),
    row!(MapAddPartitionLostListener, Connection, S),
    // Compact schemas: kept by every member (schemas.rs).
    row!(ClientSendSchema, Connection, Flags::NONE),
    row!(ClientFetchSchema, Connection, Flags::NONE),
    row!(ClientSendAllSchemas, Connection, Flags::NONE),
    row!(MapRemovePartitionLostListener, Connection, S),
];
