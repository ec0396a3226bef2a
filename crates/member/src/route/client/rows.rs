//! The client service's rows of the operation table, each naming the call of `service.rs` that
//! answers it.

use crate::route::row::{row, ClientCall as Call, Flags, Operation, S, W};
use ferrogrid_protocol::codec::*;

/// The client service, answered by the reactor that read the request (and Compact schemas, kept
/// by every member: `engine/schemas.rs`).
pub(crate) static ROWS: &[Operation] = &[
    row!(ClientAuthentication, Connection(Call::Authenticate), Flags::NONE),
    row!(ClientAuthenticationCustom, Connection(Call::AuthenticateCustom), Flags::NONE),
    row!(ClientAddClusterViewListener, Connection(Call::AddClusterViewListener), Flags::NONE),
    row!(ClientLocalBackupListener, Connection(Call::LocalBackupListener), Flags::NONE),
    row!(ClientPing, Connection(Call::Acknowledge), Flags::NONE),
    row!(ClientStatistics, Connection(Call::Acknowledge), Flags::NONE),
    row!(ClientTriggerPartitionAssignment, Connection(Call::Acknowledge), Flags::NONE),
    row!(ClientCreateProxy, Connection(Call::CreateProxy), S),
    row!(ClientCreateProxies, Connection(Call::CreateProxies), Flags::NONE),
    row!(ClientDestroyProxy, Connection(Call::DestroyProxy), W.with(S)),
    row!(ClientGetDistributedObjects, Connection(Call::GetDistributedObjects), Flags::NONE),
    row!(ClientAddDistributedObjectListener, Connection(Call::AddDistributedObjectListener), Flags::NONE),
    row!(ClientRemoveDistributedObjectListener, Connection(Call::RemoveDistributedObjectListener), Flags::NONE),
    row!(ClientAddPartitionLostListener, Connection(Call::AddPartitionLostListener), Flags::NONE),
    row!(ClientRemovePartitionLostListener, Connection(Call::RemovePartitionLostListener), Flags::NONE),
    row!(MapAddPartitionLostListener, Connection(Call::AddMapPartitionLostListener), S),
    // Compact schemas: kept by every member (schemas.rs).
    row!(ClientSendSchema, Connection(Call::SendSchema), Flags::NONE),
    row!(ClientFetchSchema, Connection(Call::FetchSchema), Flags::NONE),
    row!(ClientSendAllSchemas, Connection(Call::SendAllSchemas), Flags::NONE),
    row!(MapRemovePartitionLostListener, Connection(Call::RemoveMapPartitionLostListener), S),
    row!(CacheAddPartitionLostListener, Connection(Call::AddCachePartitionLostListener), S),
    row!(CacheRemovePartitionLostListener, Connection(Call::RemoveCachePartitionLostListener), S),
    // Management center's promotion of a lite member (what Cluster.promoteLocalLiteMember does).
    row!(McPromoteLiteMember, Connection(Call::PromoteLiteMember), Flags::NONE),
];
