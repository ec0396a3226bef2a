//! The member links' rows of the operation table: their messages are routed by the link
//! (`link.rs`), the rows name them for metrics and keep their types from clashing with a client's.

use crate::cluster::peer;
use crate::route::row::{member_row, Operation};

/// Member-to-member messages (service 0x7F).
pub(crate) static ROWS: &[Operation] = &[
    member_row!(peer::HELLO, "MemberHello"),
    member_row!(peer::CONTROL, "MemberControl"),
    member_row!(peer::BACKUP, "MemberBackup"),
    member_row!(peer::BACKUP_ACK, "MemberBackupAck"),
    member_row!(peer::BACKUP_SYNC, "MemberBackupSync"),
    member_row!(peer::SNAPSHOT, "MemberSnapshot"),
    member_row!(peer::WIDE, "MemberWide"),
    member_row!(peer::FORWARD, "MemberForward"),
    member_row!(peer::CLIENT_GONE, "MemberClientGone"),
    member_row!(peer::SNAPSHOT_REQUEST, "MemberSnapshotRequest"),
    member_row!(peer::FORWARD_AGAIN, "MemberForwardAgain"),
    member_row!(peer::TOPIC, "MemberTopic"),
    member_row!(peer::OBJECT, "MemberObject"),
    member_row!(peer::LISTEN, "MemberListen"),
    member_row!(peer::UNLISTEN, "MemberUnlisten"),
    member_row!(peer::PARTITION_LOST, "MemberPartitionLost"),
    member_row!(peer::OBJECTS, "MemberObjects"),
    member_row!(peer::SCHEMAS, "MemberSchemas"),
    member_row!(peer::SCHEMAS_ACK, "MemberSchemasAck"),
    member_row!(peer::INDEXES, "MemberIndexes"),
    member_row!(peer::MAPPINGS, "MemberMappings"),
    member_row!(peer::CONFIGS, "MemberConfigs"),
    member_row!(peer::PN_COUNTER_STATE, "MemberPnCounterState"),
    member_row!(peer::REPLICATED_CHANGES, "MemberReplicatedChanges"),
    member_row!(peer::REPLICATED_SYNC, "MemberReplicatedSync"),
    member_row!(peer::REPLICATED_VERSIONS, "MemberReplicatedVersions"),
    member_row!(peer::REPLICATED_SYNC_REQUEST, "MemberReplicatedSyncRequest"),
    member_row!(peer::REPLICATED_REPLY, "MemberReplicatedReply"),
    member_row!(peer::TXN_LOG, "MemberTxnLog"),
    member_row!(peer::TXN_LOG_ACK, "MemberTxnLogAck"),
    member_row!(peer::XA_PREPARED, "MemberXaPrepared"),
    member_row!(peer::XA_ENDED, "MemberXaEnded"),
    member_row!(peer::XA_PREPARED_ACK, "MemberXaPreparedAck"),
    member_row!(peer::QUERY_CACHES, "MemberQueryCaches"),
    member_row!(peer::SQL_CLOSED, "MemberSqlClosed"),
];
