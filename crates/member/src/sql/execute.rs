//! The SQL service (Sql.Execute, Fetch, Close): statements prepared by `ferrogrid_sql`, run as
//! fan-outs over the partitions of the maps they name, answered in pages.
//!
//! The state (mappings, cursors) is `service.rs`; the answers' encoding `pages.rs`; the work over
//! partitions (scans, writes, DDL, samples) `shares.rs`.
//!
//! - Mapping DDL changes this member's catalog, then goes to every other member as a WIDE
//!   request (the client's bytes), which applies it there: the client is answered once every
//!   member has the mapping. A joining member is sent the catalog as DDL texts.
//! - A SELECT is a cluster-wide [`Scan`] of its sources' maps (only the partitions of a point
//!   lookup's keys): each share reads, filters and groups its partitions where they are
//!   ([`ferrogrid_sql::exec::PartScanner`]). The share that completes the scan merges the
//!   parts and runs the rest ([`ferrogrid_sql::exec::run_parts`]), answers the first page and
//!   keeps the rest as a cursor.
//! - INSERT/SINK, UPDATE and DELETE are [`Write`]s run on every replica held (as clear is):
//!   each member changes each copy it holds, owned copies publish the entry events.
//!
//! Invariants: a connection holds at most `max-sql-cursors-per-connection` cursors, a query at
//! most `max-sql-rows-per-query` rows read from at most `max-sql-bytes-per-query` bytes of
//! entries (on the coordinator, and on each share); cursors go when read to their end, closed,
//! or when their connection closes.

use crate::engine::schemas::Schemas;
use crate::engine::wide::WideRequest;
use crate::net::connection::ConnectionShared;
use crate::route::dispatch::Core;
use crate::sql::pages::{answer_rows, error_response, Respond};
use crate::sql::round::{Resume, Round};
use crate::sql::service::{apply_ddl, decode_closed, encode_closed, FollowUp, SqlService};
use crate::sql::shares::{decode_write, encode_write, Ddl, Sample, Scan, ScanParts, Work, Write};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::sql::{self as wire};
use ferrogrid_protocol::{Data, DecodeError, Message};
use ferrogrid_query::Value;
use ferrogrid_sql::exec::Deadline;
use ferrogrid_sql::plan::SelectPlan;
use ferrogrid_sql::{Code, Prepared, SqlError};
use std::sync::Arc;

/// Parameters as values (a record the member cannot read is passed through as an object).
fn parameters(request: &SqlExecute<'_>, schemas: &Schemas) -> Result<Vec<Value>, SqlError> {
    request
        .parameters
        .iter()
        .map(|data| match data {
            None => Ok(Value::Null),
            Some(data) => ferrogrid_query::read_value(data.0, schemas)
                .map_err(|error| SqlError::data(format!("Cannot read a query parameter: {error}"))),
        })
        .collect()
}

/// When a statement must have answered: its `timeoutMillis` from now (0 or less: never, as
/// Hazelcast's default statement timeout is none); closed when its client closes it (the
/// statement is entered in this member's running ones under its query id).
fn deadline_of(service: &SqlService, request: &SqlExecute<'_>) -> Deadline {
    let millis = u64::try_from(request.timeout_millis).ok().filter(|millis| *millis > 0);
    let at = millis.and_then(|millis| std::time::Instant::now().checked_add(std::time::Duration::from_millis(millis)));
    Deadline::at(at).closed_by(service.running.lock().start(request.query_id))
}

fn prepare(core: &Core, request: &SqlExecute<'_>) -> Result<Prepared, SqlError> {
    let schemas = &core.shared.schemas;
    let values = parameters(request, schemas)?;
    let catalog = core.shared.sql.catalog.read();
    let service = &core.shared.sql;
    ferrogrid_sql::prepare_cached(request.sql, values, &catalog, &**service, &service.statements)
}

fn check_expected(prepared: &Prepared, expected: i8) -> Result<(), SqlError> {
    let rows = matches!(prepared, Prepared::Rows(_) | Prepared::Select(_) | Prepared::Explain(_));
    match expected {
        wire::EXPECTED_RESULT_ROWS if !rows => Err(SqlError::generic("The statement doesn't produce rows")),
        wire::EXPECTED_RESULT_UPDATE_COUNT if rows => {
            Err(SqlError::generic("The statement doesn't produce update count"))
        }
        _ => Ok(()),
    }
}

impl Core {
    /// A statement's scan (a query's, or an `INSERT ... SELECT`'s with `then`), cluster-wide.
    fn sql_scan(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        bytes: &[u8],
        out: &mut Vec<u8>,
        scan: ScanParts,
    ) {
        let (plan, respond, then) = scan;
        let deadline = respond.deadline.clone();
        let name: Box<str> = plan.sources.first().map_or(String::new(), |s| s.mapping.map.clone()).into();
        // A point lookup whose keys' partitions are all here reads nothing of other members.
        let count = self.shared.view.partition_count;
        let key_partitions =
            plan.sources.iter().filter(|s| s.inline.is_none()).try_fold(Vec::new(), |mut all, source| {
                let keys = source.keys.as_ref()?;
                all.extend(keys.iter().map(|key| ferrogrid_protocol::data::partition_for(Data(key), count)));
                Some(all)
            });
        let local = key_partitions.is_some_and(|partitions| {
            partitions.into_iter().all(|p| {
                matches!(self.owner.replication.route(p), crate::cluster::replication::state::Route::Here { .. })
            })
        });
        let mut scan = Scan::new(plan, deadline, &self.shared);
        if ferrogrid_sql::exec::streams(&scan.plan) && then.is_none() {
            let members = self.owner.replication.state.members.len();
            scan.round = Some(Round::first(respond.page_size, members));
            scan.resume = Some(Resume::Open { request: bytes.to_vec() });
            scan.shared = Some(self.shared.clone());
        }
        (scan.local, scan.then, scan.respond) = (local, then, Some(respond));
        (scan.connection, scan.correlation_id) = (Some(connection.clone()), correlation_id);
        let response_type = SqlExecute::TYPE.response();
        self.fan_out_with(
            Some(connection),
            correlation_id,
            response_type,
            name,
            WideRequest::new(scan),
            out,
            Some(bytes),
        );
    }

    /// Keeps the Compact schemas of records a statement writes and sends them to every other
    /// member (ahead of the statement itself on each link), so any member can read the records
    /// and answer a client that fetches the schema.
    fn sql_share_schemas(&mut self, schemas: Vec<ferrogrid_query::schema::Schema>) -> Result<(), SqlError> {
        if schemas.is_empty() {
            return Ok(());
        }
        let me = self.shared.view.member_uuid;
        let bound = self.shared.config.limits.max_schemas as usize;
        for schema in &schemas {
            if self.shared.schemas.put(schema.clone(), me, bound).is_err() {
                return Err(SqlError::generic(format!(
                    "The member holds {bound} Compact schemas already (max-schemas)"
                )));
            }
        }
        self.shared.persist_schemas();
        let mut payload = Vec::new();
        crate::engine::schemas::encode(schemas.iter(), &mut payload);
        let peers: Vec<_> = self.owner.replication.state.links.keys().copied().collect();
        self.write_to_peers(&peers, crate::cluster::peer::SCHEMAS, &payload);
        Ok(())
    }

    /// Where a statement's result goes: `page_size` rows to a page, within the limits.
    pub(crate) fn sql_respond(
        &self,
        query_id: ferrogrid_protocol::sql::SqlQueryId,
        page_size: usize,
        deadline: Deadline,
    ) -> Respond {
        let limits = &self.shared.config.limits;
        Respond {
            service: self.shared.sql.clone(),
            query_id,
            page_size,
            max_rows: limits.max_sql_rows_per_query as usize,
            max_cursors: limits.max_sql_cursors_per_connection as usize,
            member: self.shared.view.member_uuid,
            deadline,
        }
    }

    /// Sql.Execute from a client.
    pub(crate) fn sql_execute(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let request = SqlExecute::decode(message)?;
        let correlation_id = message.correlation_id();
        let member = self.shared.view.member_uuid;
        let prepared = match prepare(self, &request) {
            Ok(prepared) => prepared,
            Err(error) => {
                match unmapped(&error) {
                    Some(map) => self.sql_suggest_mapping(connection, correlation_id, bytes, out, map, error),
                    None => error_response(out, correlation_id, member, &error),
                }
                return Ok(());
            }
        };
        if let Err(error) = check_expected(&prepared, request.expected_result_type) {
            error_response(out, correlation_id, member, &error);
            return Ok(());
        }
        let page_size = request.cursor_buffer_size.max(1) as usize;
        let respond = self.sql_respond(request.query_id, page_size, deadline_of(&self.shared.sql, &request));
        if let Err(error) = self.sql_run(connection, correlation_id, bytes, out, prepared, respond) {
            error_response(out, correlation_id, member, &error);
        }
        Ok(())
    }

    /// Runs a prepared statement: rows answered at once, DDL and writes fanned out, SELECTs
    /// scanned. An error is the statement's, answered by the caller.
    fn sql_run(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        bytes: &[u8],
        out: &mut Vec<u8>,
        prepared: Prepared,
        respond: Respond,
    ) -> Result<(), SqlError> {
        match prepared {
            Prepared::Rows(result) => answer_rows(&respond, Some(connection), result, out, correlation_id),
            Prepared::Explain(plan) => {
                let result = self.sql_explain(&plan);
                answer_rows(&respond, Some(connection), result, out, correlation_id)
            }
            ddl @ (Prepared::CreateMapping { .. } | Prepared::DropMapping { .. }) => {
                apply_ddl(&respond.service, &ddl)?;
                self.sql_fan_out(connection, correlation_id, bytes, out, "".into(), WideRequest::new(Ddl));
            }
            Prepared::Select(plan) => self.sql_scan(connection, correlation_id, bytes, out, (plan, respond, None)),
            Prepared::InsertSelect(insert) => {
                self.sql_share_schemas(insert.schemas.clone())?;
                let plan = Box::new(insert.plan.clone());
                let then = Some((insert, self.shared.clone()));
                self.sql_scan(connection, correlation_id, bytes, out, (plan, respond, then));
            }
            Prepared::Insert { map, entries, overwrite, schemas } => {
                self.sql_share_schemas(schemas)?;
                let write = WideRequest::new(self.sql_write(Work::Insert { entries, overwrite }));
                self.sql_fan_out(connection, correlation_id, bytes, out, map.into(), write);
            }
            Prepared::Change(change) => {
                self.sql_share_schemas(change.source.mapping.compact_schemas()?)?;
                let map: Box<str> = change.source.mapping.map.clone().into();
                let write = WideRequest::new(self.sql_write(Work::Change(change)));
                self.sql_fan_out(connection, correlation_id, bytes, out, map, write);
            }
        }
        Ok(())
    }

    /// A statement that named a map without a mapping: Hazelcast suggests a mapping derived from
    /// one of the map's entries, which a fan-out samples.
    fn sql_suggest_mapping(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        bytes: &[u8],
        out: &mut Vec<u8>,
        map: String,
        error: SqlError,
    ) {
        let sample = Sample {
            map: map.clone(),
            service: self.shared.sql.clone(),
            error: Some(error),
            member: self.shared.view.member_uuid,
            schemas: self.shared.schemas.clone(),
        };
        self.sql_fan_out(connection, correlation_id, bytes, out, map.into(), WideRequest::new(sample));
    }

    /// Fans a statement's work out over every reactor and member, answered as Sql.Execute.
    fn sql_fan_out(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        bytes: &[u8],
        out: &mut Vec<u8>,
        name: Box<str>,
        operation: WideRequest,
    ) {
        let response_type = SqlExecute::TYPE.response();
        self.fan_out_with(Some(connection), correlation_id, response_type, name, operation, out, Some(bytes));
    }
    /// Another member's share of a client's Sql.Execute (its WIDE request): DDL applied here,
    /// scans and writes run on this member's partitions (`later`: the partitions of a streamed
    /// query's later round, and whether it answers the first page; see `stream.rs`).
    pub(crate) fn sql_member_share(
        &mut self,
        link: &Arc<ConnectionShared>,
        correlation_id: i64,
        inner: &Message<'_>,
        later: Option<(Vec<bool>, bool)>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let request = SqlExecute::decode(inner)?;
        // (a later round answers the coordinator's fetch, unless it answers the first page)
        let fetch = later.as_ref().is_some_and(|(_, first)| !first);
        let response_type = if fetch { SqlFetch::TYPE.response() } else { SqlExecute::TYPE.response() };
        let only = later.map(|(only, _)| only);
        let member = self.shared.view.member_uuid;
        let prepared = match prepare(self, &request) {
            Ok(prepared) => prepared,
            Err(error) => {
                if let Some(map) = unmapped(&error) {
                    let sample = Sample {
                        map: map.clone(),
                        service: self.shared.sql.clone(),
                        error: None,
                        member,
                        schemas: self.shared.schemas.clone(),
                    };
                    self.fan_out(link, correlation_id, response_type, map.into(), WideRequest::new(sample), out);
                    return Ok(());
                }
                // The coordinator prepared it; a member that cannot (a mapping not here yet)
                // contributes nothing rather than failing the whole statement.
                tracing::warn!(%error, "a member's share of an SQL statement could not be prepared");
                self.fan_out(link, correlation_id, response_type, "".into(), WideRequest::new(Ddl), out);
                return Ok(());
            }
        };
        let (name, operation): (Box<str>, WideRequest) = match prepared {
            ddl @ (Prepared::CreateMapping { .. } | Prepared::DropMapping { .. }) => {
                let _ = apply_ddl(&self.shared.sql, &ddl);
                ("".into(), WideRequest::new(Ddl))
            }
            Prepared::Rows(_) | Prepared::Explain(_) => ("".into(), WideRequest::new(Ddl)),
            // (an INSERT ... SELECT's share here is its query's: the rows come back as SQL_WRITE)
            Prepared::Select(plan) => {
                let budget = request.cursor_buffer_size.max(1) as usize;
                let members = self.owner.replication.state.members.len();
                let round =
                    ferrogrid_sql::exec::streams(&plan).then(|| Round { only, ..Round::first(budget, members) });
                self.sql_member_scan(plan, deadline_of(&self.shared.sql, &request), round)
            }
            Prepared::InsertSelect(insert) => {
                self.sql_member_scan(Box::new(insert.plan), deadline_of(&self.shared.sql, &request), None)
            }
            Prepared::Insert { map, entries, overwrite, .. } => {
                (map.into(), WideRequest::new(self.sql_write(Work::Insert { entries, overwrite })))
            }
            Prepared::Change(change) => {
                let map = change.source.mapping.map.clone().into();
                (map, WideRequest::new(self.sql_write(Work::Change(change))))
            }
        };
        self.fan_out(link, correlation_id, response_type, name, operation, out);
        Ok(())
    }
    /// The writes of an `INSERT ... SELECT` (its query ran): a write fan-out of its own, to
    /// other members as an internal [`SQL_WRITE`] request.
    pub(crate) fn sql_follow_up(&mut self, follow_up: FollowUp) {
        let FollowUp { connection, correlation_id, map, entries, overwrite } = follow_up;
        let request = encode_write(&map, &entries, overwrite);
        let write = self.sql_write(Work::Insert { entries, overwrite });
        let mut out = Vec::new();
        let response_type = SqlExecute::TYPE.response();
        self.fan_out_with(
            Some(&connection),
            correlation_id,
            response_type,
            map.into(),
            WideRequest::new(write),
            &mut out,
            Some(&request),
        );
        connection.send(&out);
    }

    /// Another member's writes of an `INSERT ... SELECT` ([`SQL_WRITE`]): this member's share.
    pub(crate) fn sql_member_write(
        &mut self,
        link: &Arc<ConnectionShared>,
        correlation_id: i64,
        inner: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let (map, entries, overwrite) = decode_write(inner)?;
        let write = self.sql_write(Work::Insert { entries, overwrite });
        self.fan_out(link, correlation_id, SqlExecute::TYPE.response(), map.into(), WideRequest::new(write), out);
        Ok(())
    }

    /// This member's share of another member's scan (the map it names, and the operation).
    fn sql_member_scan(
        &self,
        plan: Box<SelectPlan>,
        deadline: Deadline,
        round: Option<Round>,
    ) -> (Box<str>, WideRequest) {
        let name = plan.sources.first().map_or(String::new(), |s| s.mapping.map.clone()).into();
        let mut scan = Scan::new(plan, deadline, &self.shared);
        scan.round = round;
        (name, WideRequest::new(scan))
    }

    /// EXPLAIN's rows: the plan's steps, with the index this member's maps would use.
    fn sql_explain(&self, plan: &SelectPlan) -> ferrogrid_sql::exec::ResultSet {
        use ferrogrid_sql::exec::explain::{explain, IndexInfo};
        let indexes = |map: &str| {
            let definitions = self.shared.indexes.of(map).into_iter();
            definitions.map(|d| IndexInfo { sorted: d.sorted, attributes: d.attributes }).collect()
        };
        let rows = explain(plan, &indexes).into_iter().map(|step| vec![Value::String(step)]).collect();
        let column =
            ferrogrid_sql::plan::ColumnMeta { name: "rel".into(), ty: ferrogrid_sql::SqlType::Varchar, nullable: true };
        ferrogrid_sql::exec::ResultSet { columns: vec![column], rows }
    }

    /// A write fan-out's operation on this member.
    fn sql_write(&self, work: Work) -> Write {
        Write { work, schemas: self.shared.schemas.clone(), member: self.shared.view.member_uuid }
    }

    /// Sql.Close: drops a cursor (closing one already gone is not an error) and stops the
    /// statement if it still runs: here at its next check (a partition, a joined row), and
    /// on the other members, told by SQL_CLOSED.
    pub(crate) fn sql_close(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let request = SqlClose::decode(message)?;
        let running = self.shared.sql.running.lock().close(request.query_id);
        self.shared.sql.cursors.lock().remove(&(connection.id, request.query_id));
        if running {
            let peers = self.owner.replication.peers();
            self.write_to_peers(&peers, crate::cluster::peer::SQL_CLOSED, &encode_closed(request.query_id));
        }
        EmptyResponse {}.encode(out, SqlClose::TYPE.response(), message.correlation_id(), 0);
        Ok(())
    }

    /// Another member's SQL_CLOSED: this member's shares of that statement stop.
    pub(crate) fn member_sql_closed(&mut self, payload: &[u8]) {
        match decode_closed(payload) {
            Some(id) => {
                self.shared.sql.running.lock().close(id);
            }
            None => tracing::warn!(length = payload.len(), "malformed SQL_CLOSED: ignored"),
        }
    }
    /// Sql.MappingDdl: the DDL of a mapping of that name, if there is one.
    pub(crate) fn sql_mapping_ddl(&self, message: &Message<'_>, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let request = SqlMappingDdl::decode(message)?;
        let ddl = self.shared.sql.catalog.read().get(request.name).map(|m| m.ddl());
        SqlMappingDdlResponse { sql: ddl.as_deref() }.encode(
            out,
            SqlMappingDdl::TYPE.response(),
            message.correlation_id(),
            0,
        );
        Ok(())
    }
}

/// The map a statement named without a mapping ("Object 'x' not found, ..."), if that is
/// why it failed.
fn unmapped(error: &SqlError) -> Option<String> {
    if error.code != Code::ObjectNotFound {
        return None;
    }
    let rest = error.message.strip_prefix("Object '")?;
    let (name, _) = rest.split_once("' not found, did you forget to CREATE MAPPING?")?;
    Some(name.to_owned())
}
