//! The operation table: the union of every structure's and service's rows (`route/row.rs` has
//! the row), checked once at start (no message type has two rows), and found with one array
//! index ([`lookup`]). Nothing else in the member classifies message types: a row says how its
//! request is routed, its flags and its handler. Dispatch, tenant scoping, the data quota and
//! the per-type counters all read the row. A type without a row is answered with
//! `UnsupportedOperationException`.
//!
//! Adding an operation: a codec in `protocol/src/codec.rs`, and a row in its structure's
//! `rows.rs` with its decoder (into the structure's typed request, which its `Execute` impl
//! runs) or classifier. Adding a structure: its folder under `engine/`, and its rows in [`SECTIONS`].

use crate::engine;
use crate::engine::structures::ObjectKind;
use crate::engine::wide::Classified;
use crate::net::connection::ConnectionShared;
use crate::route::protection;
pub use crate::route::row::{ClientCall, Flags, Operation, Route, SqlCall, TxnCall};
use ferrogrid_config::ProtectedStructure;
use ferrogrid_protocol::{DecodeError, Message, MessageType};
use std::sync::Arc;
use std::sync::OnceLock;

/// Makes [`SECTIONS`]: every structure's rows, from the table of structures
/// (`engine/structures.rs`), then the services'.
macro_rules! sections {
    ($($kind:ident = $code:literal, $service:literal, $label:literal, $held:ident:
        $($store:ident)::+, [$($($rows:ident)::+),+], $($destroy:ident)::+;)+) => {
        /// Every structure's and service's rows, each section with the structure whose
        /// split-brain protection guards its rows (None: a service no rule guards). Map key
        /// rows come first (the table of structures starts with maps): a row's index below
        /// [`PARTITION_OPERATION_COUNT`] is its per-map counter slot.
        const SECTIONS: &[Section] = &[
            $($((engine::$($rows)::+, Some(protection::structure(ObjectKind::$kind))),)+)+
            (engine::topic::rows::ROWS, None),
            (engine::pn_counter::rows::ROWS, Some(ProtectedStructure::PnCounter)),
            (engine::flake_id::rows::ROWS, None),
            (engine::executor::rows::ROWS, None),
            (engine::executor::rows::SCHEDULED_TASK_ROWS, None),
            (engine::dynamic_config::rows::ROWS, None),
            (crate::sql::rows::ROWS, None),
            (crate::route::client::rows::ROWS, None),
            (crate::transaction::rows::ROWS, None),
            (crate::cluster::rows::ROWS, None),
        ];

        /// The rows of the structures and the services that name an object (all of them
        /// tenant-scoped).
        #[cfg(test)]
        const OBJECT_ROWS: &[&[Operation]] = &[
            $($(engine::$($rows)::+,)+)+
            engine::topic::rows::ROWS,
            engine::pn_counter::rows::ROWS,
            engine::flake_id::rows::ROWS,
            engine::executor::rows::ROWS,
            engine::executor::rows::SCHEDULED_TASK_ROWS,
        ];
    };
}

engine::structures::with_structures!(sections);

/// Map key rows (the first rows of the table): the size of per-map counter arrays.
pub const PARTITION_OPERATION_COUNT: usize = engine::map::store::KEY_OPERATION_COUNT;

/// Member-link types are service 0x7F, method 0, with the kind byte naming the message.
const MEMBER_SERVICE: u32 = 0x7F;
/// Slots of the index: one per (service, method) pair of client requests, then one per
/// member-link message.
const INDEX_SLOTS: usize = (1 << 16) + 256;

/// A section of the table: rows, and the structure whose split-brain protection guards them.
type Section = (&'static [Operation], Option<ProtectedStructure>);

/// The rows, in table order, and the row index of each slot, +1 (0: no row; 128 KiB).
#[derive(Debug)]
struct Table {
    rows: Vec<&'static Operation>,
    index: Box<[u16]>,
    /// The structure whose split-brain protection guards each row.
    guards: Vec<Option<ProtectedStructure>>,
}

/// Builds the table from [`SECTIONS`]: an error names a type with two rows, or a type that is
/// no request.
fn build(sections: &[Section]) -> Result<Table, String> {
    let rows: Vec<&'static Operation> = sections.iter().flat_map(|(rows, _)| rows.iter()).collect();
    let guards = sections.iter().flat_map(|(rows, guard)| rows.iter().map(move |_| *guard)).collect();
    if rows.len() >= u16::MAX as usize {
        return Err(format!("{} rows: row indexes must fit two bytes", rows.len()));
    }
    let counted = sections.first().map_or(0, |(rows, _)| rows.len());
    if counted != PARTITION_OPERATION_COUNT {
        return Err(format!("{counted} rows counted per map, {PARTITION_OPERATION_COUNT} counters"));
    }
    let mut index = vec![0u16; INDEX_SLOTS].into_boxed_slice();
    for (row, operation) in rows.iter().enumerate() {
        let Some(slot) = slot_of(operation.message_type) else {
            return Err(format!("{} ({}) is not a request or member type", operation.name, operation.message_type));
        };
        if index[slot] != 0 {
            let first = rows[index[slot] as usize - 1].name;
            return Err(format!(
                "{} ({}) has two rows: {first} and {}",
                operation.name, operation.message_type, operation.name
            ));
        }
        index[slot] = row as u16 + 1;
    }
    Ok(Table { rows, index, guards })
}

/// The table, built once per process: by [`check`] at a member's start, or at the first lookup.
fn built() -> &'static Result<Table, String> {
    static TABLE: OnceLock<Result<Table, String>> = OnceLock::new();
    TABLE.get_or_init(|| build(SECTIONS))
}

fn table() -> &'static Table {
    built().as_ref().unwrap_or_else(|error| panic!("the operation table: {error}"))
}

/// Checks the table (done at start, before any request is read): a type with two rows is a
/// programming error that would route one of them wrongly.
pub fn check() -> Result<(), String> {
    built().as_ref().map(|_| ()).map_err(Clone::clone)
}

/// A client request (kind byte 0x00) is found by its (service, method) pair; a member-link
/// message by its kind byte. Responses and events have no slot.
fn slot_of(message_type: MessageType) -> Option<usize> {
    let ty = message_type.0 as u32;
    let (service, method, kind) = (ty >> 16, ty >> 8 & 0xff, ty & 0xff);
    match (service, method, kind) {
        (0x100.., _, _) => None,
        (MEMBER_SERVICE, 0, kind) if kind != 0 => Some((1 << 16) + kind as usize),
        (_, _, 0) => Some((ty >> 8) as usize),
        _ => None,
    }
}

/// The row of a request type, and its index, in one array read.
pub fn lookup(message_type: MessageType) -> Option<(usize, &'static Operation)> {
    let table = table();
    let row = table.index[slot_of(message_type)?];
    (row != 0).then(|| (row as usize - 1, table.rows[row as usize - 1]))
}

/// The structure whose split-brain protection guards the row at `index` (as [`lookup`] gives
/// it), if any.
pub fn guarded_by(index: usize) -> Option<ProtectedStructure> {
    table().guards[index]
}

/// The row of a request type.
pub fn row(message_type: MessageType) -> Option<&'static Operation> {
    lookup(message_type).map(|(_, operation)| operation)
}

/// Decodes a request over every partition into its fan-out operation, by its row's classifier
/// (a type without one is not a request over every partition).
pub fn classify(message: &Message<'_>, connection: &Arc<ConnectionShared>) -> Result<Classified, DecodeError> {
    match row(message.message_type()).and_then(|row| row.classify) {
        Some(classify) => classify(message, connection),
        None => Ok(Classified::NotWide),
    }
}

/// The message type counted in per-map counter `slot`.
pub fn counted_type(slot: usize) -> MessageType {
    debug_assert!(slot < PARTITION_OPERATION_COUNT);
    table().rows[slot].message_type
}

/// Every row (for tests and documentation).
#[cfg(test)]
pub fn rows() -> &'static [&'static Operation] {
    &table().rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::codec::*;

    #[test]
    fn map_key_rows_come_first_and_are_counted() {
        let is_map = |row: &Operation| row.message_type.0 >> 16 == 0x01;
        let counted = rows().iter().copied().take_while(|row| row.route == Route::Partition && is_map(row)).count();
        assert_eq!(counted, PARTITION_OPERATION_COUNT);
        let rest = &rows()[PARTITION_OPERATION_COUNT..];
        assert!(rest.iter().all(|row: &&Operation| !(row.route == Route::Partition && is_map(row))));
        let decoded = |row: &Operation| {
            matches!(
                row.route,
                Route::Partition
                    | Route::Replica
                    | Route::LocalCopy
                    | Route::Transaction(TxnCall::Key | TxnCall::Named)
            )
        };
        assert!(rows().iter().copied().all(|row| decoded(row) == row.run.is_some()));
        assert!(rows().iter().all(|row| (row.route == Route::Replica) == row.replica.is_some()));
        // Commit and rollback run on every member's partitions as a fan-out.
        let wide = |row: &Operation| {
            matches!(
                row.route,
                Route::EveryPartition | Route::Transaction(TxnCall::Wide | TxnCall::Commit | TxnCall::Rollback)
            )
        };
        assert!(rows().iter().copied().all(|row| wide(row) == row.classify.is_some()));
        let sql: Vec<SqlCall> =
            rows().iter().filter_map(|row| if let Route::Sql(call) = row.route { Some(call) } else { None }).collect();
        assert_eq!(sql, [SqlCall::Execute, SqlCall::Fetch, SqlCall::Close, SqlCall::MappingDdl]);
    }

    #[test]
    fn every_row_is_found_at_its_index_and_nothing_else_is() {
        for (index, operation) in rows().iter().copied().enumerate() {
            let (found, row) = lookup(operation.message_type).expect("a row");
            assert_eq!((found, row.name), (index, operation.name));
        }
        // Responses, events, unknown methods and unknown services have no row.
        assert!(lookup(MessageType(MapPut::TYPE.0 | 1)).is_none());
        assert!(lookup(MessageType(0x013F02)).is_none());
        assert!(lookup(MessageType(0x1D0400)).is_none(), "a PN counter method Hazelcast does not have");
        assert!(lookup(MessageType(0x01FF00)).is_none());
        assert!(lookup(MessageType(-1)).is_none());
    }

    #[test]
    fn flags_say_what_the_quota_and_the_namespaces_need() {
        let adds: Vec<&&Operation> = rows().iter().filter(|row| row.is(Flags::ADDS_ENTRIES)).collect();
        assert!(adds.iter().all(|row| row.is(Flags::WRITE)), "{adds:?}");
        assert!(row(MapPut::TYPE).is_some_and(|row| row.is(Flags::ADDS_ENTRIES)));
        assert!(row(QueueOffer::TYPE).is_some_and(|row| row.is(Flags::ADDS_ENTRIES)));
        assert!(row(MapGet::TYPE).is_some_and(|row| !row.is(Flags::WRITE) && row.is(Flags::SCOPED)));
        assert!(row(ClientDestroyProxy::TYPE).is_some_and(|row| row.is(Flags::SCOPED)));
        assert!(row(ClientPing::TYPE).is_some_and(|row| !row.is(Flags::SCOPED)));
        // Every row of every structure (engine/structures.rs) and object service names its
        // object first: a tenant's namespace scopes it. The exceptions name a list of maps or
        // caches (a near cache's metadata fetch), which no namespace prefix scopes, or name the
        // object inside a structure (a cache's configuration); the plain executor's cancels
        // name no object at all.
        let unscoped: Vec<&str> = OBJECT_ROWS
            .iter()
            .flat_map(|rows| rows.iter())
            .filter(|row| !row.is(Flags::SCOPED))
            .map(|row| row.name)
            .collect();
        let expected = [
            "MapFetchNearCacheInvalidationMetadata",
            "CacheCreateConfig",
            "CacheFetchNearCacheInvalidationMetadata",
            "ExecutorServiceCancelOnPartition",
            "ExecutorServiceCancelOnMember",
        ];
        assert_eq!(unscoped, expected);
        assert!(row(MapFetchNearCacheInvalidationMetadata::TYPE).is_some_and(|row| row.is(Flags::TARGETED)));
    }

    #[test]
    fn the_table_is_the_union_of_the_sections_and_refuses_a_type_with_two_rows() {
        assert!(check().is_ok());
        let total: usize = SECTIONS.iter().map(|(rows, _)| rows.len()).sum();
        assert_eq!(rows().len(), total);
        let clash = build(&[
            (engine::map::rows::KEY_ROWS, None),
            (engine::queue::rows::ROWS, None),
            (engine::queue::rows::ROWS, None),
        ]);
        let error = clash.expect_err("a type with two rows");
        assert!(error.contains("QueueOffer") && error.contains("two rows"), "{error}");
    }

    #[test]
    fn every_classifier_knows_its_rows_type() {
        // A request with no fields: the classifier of its own type fails to decode it (or refuses
        // it); one that did not know the type would call it not a request over every partition.
        let (connection, _peer) = crate::route::fanout::testing::loopback();
        for row in rows().iter().filter(|row| row.route == Route::EveryPartition) {
            let mut out = Vec::new();
            ferrogrid_protocol::message::MessageWriter::request(&mut out, row.message_type, 1, 0, 0).finish();
            let message = ferrogrid_protocol::Message::parse(&out).unwrap();
            let classified = (row.classify.expect("a classifier"))(&message, &connection);
            assert!(!matches!(classified, Ok(crate::engine::wide::Classified::NotWide)), "{}", row.name);
        }
    }
}

/// Running requests through their rows in tests, without sockets.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::partition::owner::testing::call;
    use crate::partition::owner::{Call, PartitionOwner};

    /// Runs an encoded request through its row of the operation table (decoder and handler),
    /// from the client `source` on `connection`; the answer written at once.
    pub(crate) fn run(
        owner: &mut PartitionOwner,
        connection: &Arc<ConnectionShared>,
        source: u128,
        request: &[u8],
    ) -> Result<Vec<u8>, DecodeError> {
        let message = Message::parse(request)?;
        let (slot, row) = lookup(message.message_type()).expect("a row");
        let call = Call { counter_slot: slot, ..call(connection, source, message.message_type().response()) };
        let mut out = Vec::new();
        (row.run.expect("a partition row"))(&message, owner, &call, &mut out)?;
        Ok(out)
    }
}
