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

/// The writes of an `INSERT ... SELECT`, once its query has run: handed to a reactor
/// (`Task::SqlWrite`), which fans them out as a write of its own.
#[derive(Debug)]
pub(crate) struct FollowUp {
    pub(crate) connection: std::sync::Arc<crate::net::connection::ConnectionShared>,
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
    pub(crate) connection: std::sync::Arc<crate::net::connection::ConnectionShared>,
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
    fn applied_ddl_texts_become_mappings_and_bad_ones_are_skipped() {
        let service = SqlService::default();
        let good = "CREATE MAPPING m TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')".to_owned();
        apply_catalog(&service, &[good, "CREATE MAPPING nonsense".to_owned()]);
        assert_eq!(service.catalog.read().names().collect::<Vec<_>>(), vec!["m"]);
        assert_eq!(service.ddl().len(), 1);
    }
}
