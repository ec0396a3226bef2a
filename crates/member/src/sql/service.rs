//! The member's SQL state, shared by its reactors: the mappings (every member holds all, as DDL
//! texts they exchange) and the open cursors. The statements themselves are run by `execute.rs`.
//!
//! Invariant: a cursor belongs to the connection that opened it and goes with it.

use crate::net::connection::ConnectionId;
use ferrogrid_protocol::sql::SqlQueryId;
use ferrogrid_query::Value;
use ferrogrid_sql::plan::ColumnMeta;
use ferrogrid_sql::{Catalog, Prepared, SqlError, SqlType};
use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

/// The writes of an `INSERT ... SELECT`, once its query has run: handed to a reactor
/// (`Task::SqlWrite`), which fans them out as a write of its own.
#[derive(Debug)]
pub(crate) struct FollowUp {
    pub(crate) connection: Arc<crate::net::connection::ConnectionShared>,
    pub(crate) correlation_id: i64,
    pub(crate) map: String,
    pub(crate) entries: Vec<(Vec<u8>, Vec<u8>)>,
    pub(crate) overwrite: bool,
}

/// A streamed query's next round, started by a reactor (`Task::SqlRound`): for the same
/// request when a round found no row to answer it (OFFSET skipped them all), or `ahead` of the
/// client's next fetch.
#[derive(Debug)]
pub(crate) struct NextRound {
    pub(crate) connection: Arc<crate::net::connection::ConnectionShared>,
    pub(crate) correlation_id: i64,
    pub(crate) query_id: SqlQueryId,
    pub(crate) page_size: usize,
    /// The request waiting is Sql.Execute (its first page), not Sql.Fetch.
    pub(crate) first: bool,
    /// No request waits: the round reads ahead.
    pub(crate) ahead: bool,
}

/// Rows not yet fetched of one query.
#[derive(Debug)]
pub(crate) struct Cursor {
    pub(crate) columns: Vec<ColumnMeta>,
    pub(crate) rows: VecDeque<Vec<Value>>,
    /// A streamed query's partitions not read yet (None: every row is in `rows`).
    pub(crate) more: Option<Box<crate::sql::round::More>>,
}

impl Cursor {
    /// Up to `count` rows off the front, and whether they are the query's last.
    pub(crate) fn take(&mut self, count: usize) -> (Vec<Vec<Value>>, bool) {
        let taken: Vec<Vec<Value>> = self.rows.drain(..count.min(self.rows.len())).collect();
        (taken, self.rows.is_empty() && self.more.is_none())
    }
}

/// The member's SQL state: the catalog and the open cursors.
#[derive(Debug, Default)]
pub(crate) struct SqlService {
    pub(crate) catalog: RwLock<Catalog>,
    pub(crate) cursors: Mutex<HashMap<(ConnectionId, SqlQueryId), Cursor>>,
    /// Statements parsed before (a repeated point lookup is not parsed again).
    pub(crate) statements: ferrogrid_sql::StatementCache,
    /// Portable class definitions learned from values the SQL service read (a sample for an
    /// unmapped map's suggestion), as Hazelcast's member learns them: (factory, class,
    /// version) → fields in definition order. At most [`MAX_PORTABLE_CLASSES`].
    pub(crate) portable: RwLock<HashMap<ferrogrid_sql::catalog::PortableClass, Vec<(String, SqlType)>>>,
    /// The statements running on this member, by query id: what Sql.Close (or another
    /// member's `SQL_CLOSED`) sets to stop them.
    pub(crate) running: Mutex<Running>,
}

/// The close flags of the statements running on a member. A flag is held by the statement's
/// work (its scan, its cursor's later rounds) and only referred to here, so an entry dies
/// with the work and no path has to remember to remove it.
///
/// Invariant: at most twice the statements alive when last swept, plus [`RUNNING_SWEEP`],
/// entries: a start past that sweeps the dead ones.
#[derive(Debug, Default)]
pub(crate) struct Running {
    flags: HashMap<SqlQueryId, Weak<AtomicBool>>,
    sweep_at: usize,
}

/// Entries [`Running`] holds before it first sweeps the dead ones.
const RUNNING_SWEEP: usize = 64;

impl Running {
    /// The close flag of a statement starting under `id` (a later start under the same id,
    /// another member's round of it, replaces the entry).
    pub(crate) fn start(&mut self, id: SqlQueryId) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        if self.flags.len() >= self.sweep_at {
            self.flags.retain(|_, flag| flag.strong_count() > 0);
            self.sweep_at = self.flags.len() * 2 + RUNNING_SWEEP;
        }
        self.flags.insert(id, Arc::downgrade(&flag));
        flag
    }

    /// Closes the statement running under `id`: whether one was.
    pub(crate) fn close(&mut self, id: SqlQueryId) -> bool {
        let Some(flag) = self.flags.remove(&id).and_then(|flag| flag.upgrade()) else { return false };
        flag.store(true, Ordering::Relaxed);
        true
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.flags.len()
    }
}

/// How many Portable class definitions the SQL service keeps.
pub(crate) const MAX_PORTABLE_CLASSES: usize = 10_000;

impl SqlService {
    /// Learns the class definition of a Portable value read (nothing for another value).
    pub(crate) fn learn_portable(&self, data: &[u8]) {
        if let Some((id, fields)) = ferrogrid_sql::catalog::portable_definition(data) {
            let mut portable = self.portable.write();
            if portable.len() < MAX_PORTABLE_CLASSES || portable.contains_key(&id) {
                portable.insert(id, fields);
            }
        }
    }

    /// Every mapping's DDL (for a joining member).
    pub(crate) fn ddl(&self) -> Vec<String> {
        self.catalog.read().mappings().map(|m| m.ddl()).collect()
    }

    /// Drops the cursors of a closed connection.
    pub(crate) fn connection_closed(&self, connection: ConnectionId) {
        self.cursors.lock().retain(|(owner, _), _| *owner != connection);
    }
}

/// The Portable classes learned are what mappings without a column list are derived from.
impl ferrogrid_sql::Samples for SqlService {
    fn portable_fields(&self, factory: i32, class: i32, version: i32) -> Option<Vec<(String, SqlType)>> {
        self.portable.read().get(&(factory, class, version)).cloned()
    }
}

/// Applies mapping DDL to this member's catalog; the update count, or the error.
pub(crate) fn apply_ddl(service: &SqlService, prepared: &Prepared) -> Result<(), SqlError> {
    let mut catalog = service.catalog.write();
    match prepared {
        Prepared::CreateMapping { mapping, replace, if_not_exists } => {
            if catalog.get(&mapping.name).is_some() && !replace {
                if *if_not_exists {
                    return Ok(());
                }
                return Err(SqlError::generic(format!("Mapping or view already exists: {}", mapping.name)));
            }
            catalog.put(mapping.clone());
            Ok(())
        }
        Prepared::DropMapping { name, if_exists } => match catalog.remove(name) {
            Some(_) => Ok(()),
            None if *if_exists => Ok(()),
            None => Err(SqlError::generic(format!("Mapping does not exist: {name}"))),
        },
        _ => Ok(()),
    }
}

/// DDL texts as a MAPPINGS payload: a count, then each text's length and UTF-8 bytes (u32 BE).
pub(crate) fn encode_catalog(texts: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(texts.len() as u32).to_be_bytes());
    for text in texts {
        out.extend_from_slice(&(text.len() as u32).to_be_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    out
}

/// What [`encode_catalog`] wrote (None: malformed).
pub(crate) fn decode_catalog(mut payload: &[u8]) -> Option<Vec<String>> {
    let mut take = |count: usize| -> Option<&[u8]> {
        let (head, tail) = (payload.get(..count)?, payload.get(count..)?);
        payload = tail;
        Some(head)
    };
    let count = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
    let mut texts = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        let length = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
        texts.push(String::from_utf8(take(length)?.to_vec()).ok()?);
    }
    Some(texts)
}

/// SQL_CLOSED's payload: the query id.
pub(crate) fn encode_closed(id: SqlQueryId) -> Vec<u8> {
    [id.member_id_high, id.member_id_low, id.local_id_high, id.local_id_low]
        .iter()
        .flat_map(|part| part.to_le_bytes())
        .collect()
}

/// What [`encode_closed`] wrote (None: malformed).
pub(crate) fn decode_closed(payload: &[u8]) -> Option<SqlQueryId> {
    let parts: [u8; 32] = payload.try_into().ok()?;
    let part = |at: usize| i64::from_le_bytes(parts[at..at + 8].try_into().expect("8 bytes"));
    Some(SqlQueryId {
        member_id_high: part(0),
        member_id_low: part(8),
        local_id_high: part(16),
        local_id_low: part(24),
    })
}

/// Applies the DDL texts another member sent (a joining member's catalog).
pub(crate) fn apply_catalog(service: &SqlService, texts: &[String]) {
    for text in texts {
        let prepared = {
            let catalog = service.catalog.read();
            ferrogrid_sql::prepare(text, Vec::new(), &catalog, service)
        };
        match prepared {
            Ok(prepared) => {
                let _ = apply_ddl(service, &prepared);
            }
            Err(error) => tracing::warn!(%error, "a mapping another member sent could not be read"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalog_payload_round_trips_and_malformed_ones_are_refused() {
        let texts =
            vec!["CREATE OR REPLACE MAPPING \"a\" TYPE IMap OPTIONS ('keyFormat' = 'int')".to_owned(), String::new()];
        let payload = encode_catalog(&texts);
        assert_eq!(decode_catalog(&payload), Some(texts));
        assert_eq!(decode_catalog(&payload[..payload.len() - 1]), None);
        assert_eq!(decode_catalog(&[0, 0, 0, 9]), None);
        assert_eq!(decode_catalog(&[0xff, 0xff, 0xff, 0xff, 0, 0]), None);
        assert_eq!(decode_catalog(&[0, 0, 0, 1, 0, 0, 0, 2, 0xc3, 0x28]), None);
        // not UTF-8
    }

    #[test]
    fn a_closed_statement_is_told_and_the_dead_ones_are_swept() {
        let id = |n: i64| SqlQueryId { member_id_high: 1, member_id_low: 2, local_id_high: 3, local_id_low: n };
        let mut running = Running::default();
        let flag = running.start(id(0));
        assert!(running.close(id(0)), "a statement running is closed");
        assert!(flag.load(Ordering::Relaxed));
        assert!(!running.close(id(0)), "closed once");
        drop(running.start(id(1)));
        assert!(!running.close(id(1)), "a statement whose work ended is not running");
        let alive: Vec<_> = (0..10).map(|n| running.start(id(100 + n))).collect();
        for n in 0..10_000 {
            drop(running.start(id(1_000 + n)));
        }
        assert!(running.len() <= 2 * alive.len() + RUNNING_SWEEP + 1, "swept: {}", running.len());
        assert!(running.close(id(105)), "the live ones stay");
        let closed = id(-7);
        assert_eq!(decode_closed(&encode_closed(closed)), Some(closed));
        assert_eq!(decode_closed(&encode_closed(closed)[..31]), None);
        assert_eq!(decode_closed(&[0; 33]), None);
    }

    #[test]
    fn applied_ddl_texts_become_mappings_and_bad_ones_are_skipped() {
        let service = SqlService::default();
        let good = "CREATE MAPPING m TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')".to_owned();
        apply_catalog(&service, &[good, "CREATE MAPPING nonsense".to_owned()]);
        assert_eq!(service.catalog.read().names().collect::<Vec<_>>(), vec!["m"]);
        assert_eq!(service.ddl().len(), 1);
    }
}
