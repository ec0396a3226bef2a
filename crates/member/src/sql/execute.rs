//! The SQL service (Sql.Execute, Fetch, Close): statements prepared by `ferrogrid_sql`, run as
//! fan-outs over the partitions of the maps they name, answered in pages.
//!
//! The state (mappings, cursors) is `sql_service.rs`.
//!
//! - Mapping DDL changes this member's catalog, then goes to every other member as a WIDE
//!   request (the client's bytes), which applies it there: the client is answered once every
//!   member has the mapping. A joining member is sent the catalog as DDL texts.
//! - A SELECT is a cluster-wide [`Scan`] of the entries of its sources' maps (only the
//!   partitions of a point lookup's keys). The share that completes the scan runs the query
//!   ([`ferrogrid_sql::exec::run`]), answers the first page and keeps the rest as a cursor.
//! - INSERT/SINK, UPDATE and DELETE are [`Write`]s run on every replica held (as clear is):
//!   each member changes each copy it holds, owned copies publish the entry events.
//!
//! Invariants: a connection holds at most `max-sql-cursors-per-connection` cursors, a query at
//! most `max-sql-rows-per-query` rows; cursors go when read to their end, closed, or when
//! their connection closes.

use crate::engine::listeners::{Event, EventKind};
use crate::engine::schemas::Schemas;
use crate::engine::wide::{Partial, Partitions, ShareContext, WideOperation, WideRequest};
use crate::net::connection::ConnectionShared;
use crate::partition::objects::PartitionStore;
use crate::route::dispatch::Core;
use crate::sql::service::{apply_ddl, Cursor, FollowUp, SqlService};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::message::{MessageReader, MessageWriter, RESPONSE_HEADER_SIZE};
use ferrogrid_protocol::sql::{self as wire, SqlColumn, SqlColumnMetadata, SqlColumnType, SqlPage, SqlQueryId};
use ferrogrid_protocol::{Data, DecodeError, Message, MessageType, Uuid};
use ferrogrid_query::{SchemaSource, Value};
use ferrogrid_sql::exec::{Entries, ResultSet};
use ferrogrid_sql::plan::{ColumnMeta, SelectPlan};
use ferrogrid_sql::write::Action;
use ferrogrid_sql::{Change, Code, Prepared, SqlError, SqlType};
use std::collections::VecDeque;
use std::sync::Arc;

/// A statement's error as the wire carries it, from `member`.
fn wire_error(error: &SqlError, member: Uuid) -> wire::SqlError<'_> {
    let code = match error.code {
        Code::Generic => wire::error_code::GENERIC,
        Code::Timeout => wire::error_code::TIMEOUT,
        Code::PartitionDistribution => wire::error_code::PARTITION_DISTRIBUTION,
        Code::Parsing => wire::error_code::PARSING,
        Code::ObjectNotFound => wire::error_code::OBJECT_NOT_FOUND,
        Code::DataException => wire::error_code::DATA_EXCEPTION,
    };
    wire::SqlError {
        code,
        message: Some(&error.message),
        originating_member_id: member,
        suggestion: error.suggestion.as_deref(),
        cause_stack_trace: None,
    }
}

fn error_response(out: &mut Vec<u8>, correlation_id: i64, member: Uuid, error: &SqlError) {
    SqlExecuteResponse {
        update_count: -1,
        is_infinite_rows: false,
        partition_argument_index: -1,
        row_metadata: None,
        row_page: None,
        error: Some(wire_error(error, member)),
    }
    .encode(out, SqlExecute::TYPE.response(), correlation_id, 0);
}

fn update_count_response(out: &mut Vec<u8>, correlation_id: i64, count: i64) {
    SqlExecuteResponse {
        update_count: count,
        is_infinite_rows: false,
        partition_argument_index: -1,
        row_metadata: None,
        row_page: None,
        error: None,
    }
    .encode(out, SqlExecute::TYPE.response(), correlation_id, 0);
}

fn column_type(ty: SqlType) -> SqlColumnType {
    SqlColumnType::from_id(ty.id()).expect("every SQL type has a column type id")
}

/// Takes up to `count` rows off `rows` as a columnar page.
fn page(columns: &[ColumnMeta], rows: &mut VecDeque<Vec<Value>>, count: usize) -> SqlPage {
    let taken: Vec<Vec<Value>> = rows.drain(..count.min(rows.len())).collect();
    let last = rows.is_empty();
    let cells = columns
        .iter()
        .enumerate()
        .map(|(index, column)| column_of(column.ty, taken.iter().map(|row| &row[index])))
        .collect();
    SqlPage { last, columns: cells }
}

fn column_of<'a>(ty: SqlType, values: impl Iterator<Item = &'a Value>) -> SqlColumn {
    use ferrogrid_sql::types::{to_double, to_integer, to_text};
    let values: Vec<&Value> = values.collect();
    macro_rules! cells {
        ($variant:ident, $convert:expr) => {
            SqlColumn::$variant(values.iter().map(|v| if v.is_null() { None } else { $convert(*v) }).collect())
        };
    }
    match ty {
        SqlType::Varchar => cells!(Varchar, |v: &Value| Some(to_text(v))),
        SqlType::Boolean => cells!(Boolean, |v: &Value| match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }),
        SqlType::TinyInt => cells!(TinyInt, |v: &Value| to_integer(v).map(|i| i as i8)),
        SqlType::SmallInt => cells!(SmallInt, |v: &Value| to_integer(v).map(|i| i as i16)),
        SqlType::Integer => cells!(Integer, |v: &Value| to_integer(v).map(|i| i as i32)),
        SqlType::BigInt => cells!(BigInt, |v: &Value| to_integer(v).map(|i| i as i64)),
        SqlType::Real => cells!(Real, |v: &Value| to_double(v).map(|d| d as f32)),
        SqlType::Double => cells!(Double, |v: &Value| to_double(v)),
        SqlType::Decimal => cells!(Decimal, |v: &Value| ferrogrid_sql::types::to_decimal(v)
            .map(|d| wire::BigDecimal { unscaled: d.unscaled().to_signed_bytes_be(), scale: d.scale() })),
        SqlType::Date => cells!(Date, |v: &Value| match v {
            Value::Date(d) => Some(date(d)),
            _ => None,
        }),
        SqlType::Time => cells!(Time, |v: &Value| match v {
            Value::Time(t) => Some(time(t)),
            _ => None,
        }),
        SqlType::Timestamp => cells!(Timestamp, |v: &Value| match v {
            Value::Timestamp(ts) => Some(wire::LocalDateTime { date: date(&ts.date), time: time(&ts.time) }),
            _ => None,
        }),
        SqlType::TimestampWithTimeZone => cells!(TimestampWithTimeZone, |v: &Value| match v {
            Value::TimestampWithTimezone(tz) => Some(wire::OffsetDateTime {
                date_time: wire::LocalDateTime { date: date(&tz.timestamp.date), time: time(&tz.timestamp.time) },
                offset_seconds: tz.offset_seconds(),
            }),
            _ => None,
        }),
        SqlType::Json => cells!(Json, |v: &Value| Some(to_text(v))),
        SqlType::Null => SqlColumn::Null(values.len()),
        SqlType::Object => cells!(Object, |v: &Value| match v {
            Value::Char(c) => ferrogrid_query::write::write_data(&Value::String(String::from_utf16_lossy(&[*c]))).ok(),
            other => ferrogrid_query::write::write_data(other).ok(),
        }),
    }
}

fn date(d: &ferrogrid_query::temporal::Date) -> wire::LocalDate {
    wire::LocalDate { year: d.year(), month: d.month(), day: d.day() }
}

fn time(t: &ferrogrid_query::temporal::Time) -> wire::LocalTime {
    wire::LocalTime { hour: t.hour(), minute: t.minute(), second: t.second(), nano: t.nano() }
}

/// Answers a query's result: the first page, and a cursor for the rest.
fn answer_rows(
    respond: &Respond,
    connection: Option<&Arc<ConnectionShared>>,
    result: ResultSet,
    out: &mut Vec<u8>,
    correlation_id: i64,
) {
    let Respond { service, query_id, page_size, max_cursors, member, .. } = respond;
    let (query_id, page_size, max_cursors, member) = (*query_id, *page_size, *max_cursors, *member);
    let mut rows: VecDeque<Vec<Value>> = result.rows.into();
    let first = page(&result.columns, &mut rows, page_size.max(1));
    if !rows.is_empty() {
        let Some(connection) = connection else { return };
        let mut cursors = service.cursors.lock();
        let held = cursors.keys().filter(|(owner, _)| *owner == connection.id).count();
        if held >= max_cursors {
            let error = SqlError::generic(format!(
                "This connection already has {held} open SQL cursors (max-sql-cursors-per-connection); close or read some first"
            ));
            drop(cursors);
            return error_response(out, correlation_id, member, &error);
        }
        cursors.insert((connection.id, query_id), Cursor { columns: result.columns.clone(), rows });
    }
    let metadata: Vec<SqlColumnMetadata<'_>> = result
        .columns
        .iter()
        .map(|c| SqlColumnMetadata { name: &c.name, column_type: column_type(c.ty), nullable: c.nullable })
        .collect();
    SqlExecuteResponse {
        update_count: -1,
        is_infinite_rows: false,
        partition_argument_index: -1,
        row_metadata: Some(metadata),
        row_page: Some(first),
        error: None,
    }
    .encode(out, SqlExecute::TYPE.response(), correlation_id, 0);
}

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

fn prepare(core: &Core, request: &SqlExecute<'_>) -> Result<Prepared, SqlError> {
    let schemas = &core.shared.schemas;
    let values = parameters(request, schemas)?;
    let catalog = core.shared.sql.catalog.read();
    let service = &core.shared.sql;
    ferrogrid_sql::prepare_cached(request.sql, values, &catalog, &**service, &service.statements)
}

fn check_expected(prepared: &Prepared, expected: i8) -> Result<(), SqlError> {
    let rows = matches!(prepared, Prepared::Rows(_) | Prepared::Select(_));
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
            partitions
                .into_iter()
                .all(|p| matches!(self.owner.replication.route(p), crate::cluster::replication::state::Route::Here))
        });
        let scan = Scan {
            local,
            then,
            plan,
            respond: Some(respond),
            schemas: self.shared.schemas.clone(),
            connection: Some(connection.clone()),
        };
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
        let mut payload = Vec::new();
        crate::engine::schemas::encode(schemas.iter(), &mut payload);
        let peers: Vec<_> = self.owner.replication.state.links.keys().copied().collect();
        self.write_to_peers(&peers, crate::cluster::peer::SCHEMAS, &payload);
        Ok(())
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
                if let Some(map) = unmapped(&error) {
                    // Hazelcast suggests a mapping derived from one of the map's entries.
                    let sample = Sample {
                        map: map.clone(),
                        service: self.shared.sql.clone(),
                        error: Some(error),
                        member,
                        schemas: self.shared.schemas.clone(),
                    };
                    let response_type = SqlExecute::TYPE.response();
                    self.fan_out_with(
                        Some(connection),
                        correlation_id,
                        response_type,
                        map.into(),
                        WideRequest::new(sample),
                        out,
                        Some(bytes),
                    );
                    return Ok(());
                }
                error_response(out, correlation_id, member, &error);
                return Ok(());
            }
        };
        if let Err(error) = check_expected(&prepared, request.expected_result_type) {
            error_response(out, correlation_id, member, &error);
            return Ok(());
        }
        let limits = &self.shared.config.limits;
        let (max_rows, max_cursors) =
            (limits.max_sql_rows_per_query as usize, limits.max_sql_cursors_per_connection as usize);
        let page_size = request.cursor_buffer_size.max(1) as usize;
        let service = self.shared.sql.clone();
        let response_type = SqlExecute::TYPE.response();
        match prepared {
            Prepared::Rows(result) => {
                let respond = Respond { service, query_id: request.query_id, page_size, max_rows, max_cursors, member };
                answer_rows(&respond, Some(connection), result, out, correlation_id);
            }
            ddl @ (Prepared::CreateMapping { .. } | Prepared::DropMapping { .. }) => {
                if let Err(error) = apply_ddl(&service, &ddl) {
                    error_response(out, correlation_id, member, &error);
                    return Ok(());
                }
                let operation = WideRequest::new(Ddl);
                self.fan_out_with(
                    Some(connection),
                    correlation_id,
                    response_type,
                    "".into(),
                    operation,
                    out,
                    Some(bytes),
                );
            }
            Prepared::Select(plan) => {
                let respond = Respond { service, query_id: request.query_id, page_size, max_rows, max_cursors, member };
                self.sql_scan(connection, correlation_id, bytes, out, (plan, respond, None));
            }
            Prepared::InsertSelect(insert) => {
                if let Err(error) = self.sql_share_schemas(insert.schemas.clone()) {
                    error_response(out, correlation_id, member, &error);
                    return Ok(());
                }
                let plan = Box::new(insert.plan.clone());
                let respond = Respond { service, query_id: request.query_id, page_size, max_rows, max_cursors, member };
                let then = Some((insert, self.shared.clone()));
                self.sql_scan(connection, correlation_id, bytes, out, (plan, respond, then));
            }
            Prepared::Insert { map, entries, overwrite, schemas } => {
                if let Err(error) = self.sql_share_schemas(schemas) {
                    error_response(out, correlation_id, member, &error);
                    return Ok(());
                }
                let write = self.sql_write(Work::Insert { entries, overwrite });
                self.fan_out_with(
                    Some(connection),
                    correlation_id,
                    response_type,
                    map.into(),
                    WideRequest::new(write),
                    out,
                    Some(bytes),
                );
            }
            Prepared::Change(change) => {
                let schemas = change.source.mapping.compact_schemas();
                if let Err(error) = schemas.and_then(|schemas| self.sql_share_schemas(schemas)) {
                    error_response(out, correlation_id, member, &error);
                    return Ok(());
                }
                let map: Box<str> = change.source.mapping.map.clone().into();
                let write = self.sql_write(Work::Change(change));
                self.fan_out_with(
                    Some(connection),
                    correlation_id,
                    response_type,
                    map,
                    WideRequest::new(write),
                    out,
                    Some(bytes),
                );
            }
        }
        Ok(())
    }
    /// Another member's share of a client's Sql.Execute (its WIDE request): DDL applied here,
    /// scans and writes run on this member's partitions.
    pub(crate) fn sql_member_share(
        &mut self,
        link: &Arc<ConnectionShared>,
        correlation_id: i64,
        inner: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let request = SqlExecute::decode(inner)?;
        let response_type = SqlExecute::TYPE.response();
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
            Prepared::Rows(_) => ("".into(), WideRequest::new(Ddl)),
            // (an INSERT ... SELECT's share here is its query's: the rows come back as SQL_WRITE)
            Prepared::Select(plan) => self.sql_member_scan(plan),
            Prepared::InsertSelect(insert) => self.sql_member_scan(Box::new(insert.plan)),
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
    fn sql_member_scan(&self, plan: Box<SelectPlan>) -> (Box<str>, WideRequest) {
        let name = plan.sources.first().map_or(String::new(), |s| s.mapping.map.clone()).into();
        let schemas = self.shared.schemas.clone();
        let scan = Scan { local: false, plan, respond: None, then: None, schemas, connection: None };
        (name, WideRequest::new(scan))
    }

    /// A write fan-out's operation on this member.
    fn sql_write(&self, work: Work) -> Write {
        Write { work, schemas: self.shared.schemas.clone(), member: self.shared.view.member_uuid }
    }

    /// Sql.Fetch: the next page of a cursor.
    pub(crate) fn sql_fetch(
        &self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let request = SqlFetch::decode(message)?;
        let correlation_id = message.correlation_id();
        let mut cursors = self.shared.sql.cursors.lock();
        let key = (connection.id, request.query_id);
        let Some(cursor) = cursors.get_mut(&key) else {
            drop(cursors);
            let member = self.shared.view.member_uuid;
            let error =
                SqlError::generic("Query cursor not found (closed, read to its end, or never opened on this member)");
            let error = wire_error(&error, member);
            SqlFetchResponse { row_page: None, error: Some(error) }.encode(
                out,
                SqlFetch::TYPE.response(),
                correlation_id,
                0,
            );
            return Ok(());
        };
        let next = page(&cursor.columns, &mut cursor.rows, request.cursor_buffer_size.max(1) as usize);
        if next.last {
            cursors.remove(&key);
        }
        drop(cursors);
        SqlFetchResponse { row_page: Some(next), error: None }.encode(
            out,
            SqlFetch::TYPE.response(),
            correlation_id,
            0,
        );
        Ok(())
    }
    /// Sql.Close: drops a cursor (closing one already gone is not an error).
    pub(crate) fn sql_close(
        &self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let request = SqlClose::decode(message)?;
        self.shared.sql.cursors.lock().remove(&(connection.id, request.query_id));
        EmptyResponse {}.encode(out, SqlClose::TYPE.response(), message.correlation_id(), 0);
        Ok(())
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

/// One entry of a map without a mapping, from whichever share finds one first: the sample a
/// suggested mapping is derived from; the coordinator answers the not-found error with it.
#[derive(Debug)]
struct Sample {
    map: String,
    service: Arc<SqlService>,
    /// The coordinator's error (None on other members, which answer their sample).
    error: Option<SqlError>,
    member: Uuid,
    schemas: Arc<Schemas>,
}

#[derive(Debug, Default)]
pub(crate) struct Sampled(Option<(Vec<u8>, Vec<u8>)>);

impl Partial for Sampled {
    fn merge(&mut self, other: Sampled) {
        if self.0.is_none() {
            self.0 = other.0;
        }
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&self.0.is_some());
        if let Some((key, value)) = &self.0 {
            writer.frame(key).frame(value);
        }
    }

    fn read_from(message: &Message<'_>) -> Result<Sampled, DecodeError> {
        let found: bool = message.fixed(RESPONSE_HEADER_SIZE)?.read()?;
        if !found {
            return Ok(Sampled(None));
        }
        let mut reader = message.reader();
        let key = reader.value_frame("a sampled key")?.to_vec();
        let value = reader.value_frame("a sampled value")?.to_vec();
        Ok(Sampled(Some((key, value))))
    }
}

impl WideOperation for Sample {
    type Partial = Sampled;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) -> Sampled {
        Sampled(None)
    }

    fn on_partition(&self, _: &str, partition: &mut PartitionStore, _: bool, now_ms: i64, partial: &mut Sampled) {
        if partial.0.is_some() {
            return;
        }
        if let Some(store) = partition.map(&self.map) {
            if let Some((key, entry)) = store.iter(now_ms).next() {
                partial.0 = Some((key.to_vec(), entry.value().to_vec()));
            }
        }
    }

    fn write_response(&self, partial: Sampled, out: &mut Vec<u8>, _: MessageType, correlation_id: i64) {
        let Some(error) = &self.error else { return };
        if let Some((_, value)) = &partial.0 {
            // reading the sample teaches the member its Portable class, as on Hazelcast
            self.service.learn_portable(value);
        }
        let suggestion = partial
            .0
            .and_then(|(key, value)| ferrogrid_sql::catalog::suggest_mapping(&self.map, &key, &value, &*self.schemas));
        let error = match suggestion {
            Some(suggestion) => SqlError {
                message: format!(
                    "{} If you want to use the IMap named '{}', execute this command first: {suggestion}",
                    error.message, self.map
                ),
                suggestion: Some(suggestion),
                ..error.clone()
            },
            None => error.clone(),
        };
        error_response(out, correlation_id, self.member, &error);
    }
}

/// Members' internal request carrying the rows an `INSERT ... SELECT` writes (never accepted
/// from a client: the operation table has no row for it).
pub(crate) const SQL_WRITE: MessageType = MessageType(0x21_FF00);

fn encode_write(map: &str, entries: &[(Vec<u8>, Vec<u8>)], overwrite: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer = MessageWriter::request(&mut out, SQL_WRITE, 0, -1, 0);
    writer.fixed(&overwrite);
    writer.frame(map.as_bytes()).begin();
    for (key, value) in entries {
        writer.frame(key).frame(value);
    }
    writer.end();
    writer.finish();
    out
}

fn decode_write(message: &Message<'_>) -> Result<(String, Entries, bool), DecodeError> {
    let overwrite: bool = message.fixed(ferrogrid_protocol::message::REQUEST_HEADER_SIZE)?.read()?;
    let mut reader = message.reader();
    let map = reader.string()?.to_owned();
    reader.begin()?;
    let mut entries = Vec::new();
    while !reader.at_end()? {
        let key = reader.value_frame("a written key")?.to_vec();
        let value = reader.value_frame("a written value")?.to_vec();
        entries.push((key, value));
    }
    Ok((map, entries, overwrite))
}

// ------------------------------------------------------------------------------------------
// The fan-out operations.

/// Mapping DDL: nothing to do on partitions (each member changed its catalog when it read
/// the request); answers the update count 0.
#[derive(Debug)]
struct Ddl;

impl WideOperation for Ddl {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;

    fn empty(&self) {}

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut ()) {}

    fn write_response(&self, _: (), out: &mut Vec<u8>, _: MessageType, correlation_id: i64) {
        update_count_response(out, correlation_id, 0);
    }
}

/// A scan to start: its plan, where its result goes, and an `INSERT ... SELECT`'s writes.
type ScanParts = (Box<SelectPlan>, Respond, Option<(Box<ferrogrid_sql::InsertSelect>, Arc<crate::shared::Shared>)>);

/// Where a scan's result goes on the coordinating member.
#[derive(Debug)]
struct Respond {
    service: Arc<SqlService>,
    query_id: SqlQueryId,
    page_size: usize,
    max_rows: usize,
    max_cursors: usize,
    member: Uuid,
}

/// A SELECT's scan: the entries of every source's map (only a point lookup's keys).
#[derive(Debug)]
struct Scan {
    /// Every partition it reads is this member's: no other member is asked.
    local: bool,
    plan: Box<SelectPlan>,
    respond: Option<Respond>,
    /// An `INSERT ... SELECT`: the rows become writes instead of an answer.
    then: Option<(Box<ferrogrid_sql::InsertSelect>, Arc<crate::shared::Shared>)>,
    schemas: Arc<Schemas>,
    connection: Option<Arc<ConnectionShared>>,
}

/// What the scan's shares found: per partition covered, the entries of each source there. A
/// partition two shares covered (it moved while the scan ran) counts once: the first share's.
#[derive(Debug, Default)]
pub(crate) struct Scanned {
    parts: std::collections::BTreeMap<u16, Vec<Entries>>,
    partition_count: u16,
}

impl Scanned {
    /// Every source's entries, partitions in order.
    fn into_sources(self, sources: usize) -> Vec<Entries> {
        let mut all = vec![Vec::new(); sources];
        for (_, parts) in self.parts {
            for (mine, entries) in all.iter_mut().zip(parts) {
                mine.extend(entries);
            }
        }
        all
    }
}

impl Partial for Scanned {
    fn merge(&mut self, other: Scanned) {
        for (partition, entries) in other.parts {
            self.parts.entry(partition).or_insert(entries);
        }
        self.partition_count = self.partition_count.max(other.partition_count);
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&(self.parts.len() as i32)).fixed(&(self.partition_count as i32));
        for (partition, sources) in &self.parts {
            writer.frame(&partition.to_be_bytes());
            writer.frame(&(sources.len() as u32).to_be_bytes());
            for entries in sources {
                writer.begin();
                for (key, value) in entries {
                    writer.frame(key).frame(value);
                }
                writer.end();
            }
        }
    }

    fn read_from(message: &Message<'_>) -> Result<Scanned, DecodeError> {
        let mut fixed = message.fixed(RESPONSE_HEADER_SIZE)?;
        let (count, partition_count): (i32, i32) = (fixed.read()?, fixed.read()?);
        let mut reader: MessageReader<'_> = message.reader();
        let mut parts = std::collections::BTreeMap::new();
        let number = |bytes: &[u8]| -> Result<u32, DecodeError> {
            Ok(match bytes.len() {
                2 => u16::from_be_bytes([bytes[0], bytes[1]]) as u32,
                4 => u32::from_be_bytes(bytes.try_into().expect("4 bytes")),
                _ => return Err(DecodeError::InvalidValue("a scanned partition's numbers")),
            })
        };
        for _ in 0..count.clamp(0, u16::MAX as i32) {
            let partition = number(reader.value_frame("a scanned partition")?)? as u16;
            let sources = number(reader.value_frame("a scanned source count")?)?.min(64);
            let mut all = Vec::new();
            for _ in 0..sources {
                reader.begin()?;
                let mut entries = Vec::new();
                while !reader.at_end()? {
                    let key = reader.value_frame("a scanned key")?.to_vec();
                    let value = reader.value_frame("a scanned value")?.to_vec();
                    entries.push((key, value));
                }
                all.push(entries);
            }
            parts.insert(partition, all);
        }
        Ok(Scanned { parts, partition_count: partition_count.clamp(0, u16::MAX as i32) as u16 })
    }
}

impl WideOperation for Scan {
    type Partial = Scanned;
    const PARTITIONS: Partitions = Partitions::Owned;

    fn cluster_wide(&self) -> bool {
        !self.local
    }

    fn empty(&self) -> Scanned {
        Scanned::default()
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut Scanned) {}

    fn on_share(&self, _map: &str, share: &mut ShareContext<'_>, partial: &mut Scanned) {
        let plan = &self.plan;
        partial.partition_count = share.partition_count;
        let wanted: Vec<Option<Vec<u16>>> = plan
            .sources
            .iter()
            .map(|source| {
                source.keys.as_ref().map(|keys| {
                    keys.iter()
                        .map(|key| ferrogrid_protocol::data::partition_for(Data(key), share.partition_count).0)
                        .collect()
                })
            })
            .collect();
        let scans_all =
            plan.sources.iter().zip(&wanted).any(|(source, wanted)| source.inline.is_none() && wanted.is_none());
        for local in 0..share.partitions.len() {
            if !share.owned.get(local).copied().unwrap_or(true) {
                continue;
            }
            let partition_id = share.partition_id(local);
            let wanted_here = |w: &Option<Vec<u16>>| w.as_ref().is_none_or(|w| w.contains(&partition_id));
            if !scans_all && !wanted.iter().any(|w| w.as_ref().is_some_and(|w| w.contains(&partition_id))) {
                continue;
            }
            let mut found = vec![Vec::new(); plan.sources.len()];
            for (index, source) in plan.sources.iter().enumerate() {
                if source.inline.is_some() || !wanted_here(&wanted[index]) {
                    continue;
                }
                let Some(store) = share.partitions[local].map(&source.mapping.map) else { continue };
                match &source.keys {
                    Some(keys) => {
                        for key in keys {
                            if let Some(entry) = store.get(key, share.now_ms) {
                                found[index].push((key.clone(), entry.value().to_vec()));
                            }
                        }
                    }
                    None => {
                        for (key, entry) in store.iter(share.now_ms) {
                            found[index].push((key.to_vec(), entry.value().to_vec()));
                        }
                    }
                }
            }
            partial.parts.insert(partition_id, found);
        }
    }

    fn write_response(&self, partial: Scanned, out: &mut Vec<u8>, _: MessageType, correlation_id: i64) {
        let (plan, Some(respond)) = (&self.plan, &self.respond) else { return };
        if let Some(missing) = uncovered(plan, &partial) {
            // A partition moved between members while the scan ran and no share read it.
            let error = SqlError::new(
                Code::PartitionDistribution,
                format!(
                    "Partition distribution has changed while the query ran (partition {missing} was not read); retry"
                ),
            );
            return error_response(out, correlation_id, respond.member, &error);
        }
        let sources = partial.into_sources(plan.sources.len());
        let schemas: &dyn SchemaSource = &*self.schemas;
        match ferrogrid_sql::exec::run(plan, &sources, schemas, respond.max_rows) {
            Ok(result) => match (&self.then, &self.connection) {
                (Some((insert, shared)), Some(connection)) => {
                    let follow_up = match insert.entries(result.rows) {
                        Ok(entries) => FollowUp {
                            connection: connection.clone(),
                            correlation_id,
                            map: insert.target.map.clone(),
                            entries,
                            overwrite: insert.overwrite,
                        },
                        Err(error) => return error_response(out, correlation_id, respond.member, &error),
                    };
                    // The writes are a fan-out of their own, started by a reactor; this job
                    // answers nothing (its in-flight count ends, the write's begins).
                    let reactor = &shared.reactors[0];
                    match reactor.try_push(crate::shared::Task::SqlWrite(Box::new(follow_up))) {
                        Ok(()) => reactor.wake(),
                        Err(_) => {
                            let error = SqlError::generic(
                                "The member is too busy to write the rows (its reactor's queue is full); retry",
                            );
                            error_response(out, correlation_id, respond.member, &error);
                        }
                    }
                }
                _ => answer_rows(respond, self.connection.as_ref(), result, out, correlation_id),
            },
            Err(error) => {
                let job = respond.query_id.local_id_low as u64;
                let error = ferrogrid_sql::exec::runtime_error(plan, error, job);
                error_response(out, correlation_id, respond.member, &error)
            }
        }
    }
}

/// A partition the scan should have read and no share did (None: all were read).
fn uncovered(plan: &SelectPlan, scanned: &Scanned) -> Option<u16> {
    let count = scanned.partition_count;
    let mut expected: Vec<u16> = Vec::new();
    for source in plan.sources.iter().filter(|s| s.inline.is_none()) {
        match &source.keys {
            None => return (0..count).find(|p| !scanned.parts.contains_key(p)),
            Some(keys) => {
                expected.extend(keys.iter().map(|key| ferrogrid_protocol::data::partition_for(Data(key), count).0))
            }
        }
    }
    expected.into_iter().find(|p| !scanned.parts.contains_key(p))
}

/// What a write does.
#[derive(Debug)]
enum Work {
    Insert { entries: Vec<(Vec<u8>, Vec<u8>)>, overwrite: bool },
    Change(Box<Change>),
}

/// INSERT/SINK, UPDATE, DELETE on every replica held here.
#[derive(Debug)]
struct Write {
    work: Work,
    schemas: Arc<Schemas>,
    member: Uuid,
}

/// A write's outcome: entries changed on owned copies, and the first failure.
#[derive(Debug, Default)]
pub(crate) struct Written {
    count: u64,
    failure: Option<(i32, String)>,
}

impl Partial for Written {
    fn merge(&mut self, other: Written) {
        self.count += other.count;
        if self.failure.is_none() {
            self.failure = other.failure;
        }
    }

    fn write_to(&self, writer: &mut MessageWriter<'_>) {
        writer.fixed(&(self.count as i64)).fixed(&self.failure.as_ref().map_or(0, |(code, _)| *code));
        writer.frame(self.failure.as_ref().map_or("", |(_, text)| text).as_bytes());
    }

    fn read_from(message: &Message<'_>) -> Result<Written, DecodeError> {
        let mut fixed = message.fixed(RESPONSE_HEADER_SIZE)?;
        let count: i64 = fixed.read()?;
        let code: i32 = fixed.read()?;
        let text = message.reader().string()?.to_owned();
        Ok(Written { count: count.max(0) as u64, failure: (code != 0).then_some((code, text)) })
    }
}

fn publish(
    share: &mut ShareContext<'_>,
    map: &str,
    partition_id: u16,
    kind: EventKind,
    key: &[u8],
    value: Option<&[u8]>,
    old: Option<&[u8]>,
) {
    if share.listeners.has(map) {
        let event = Event {
            kind,
            partition_id: Some(ferrogrid_protocol::PartitionId(partition_id)),
            key: Some(key),
            value,
            old_value: old,
            affected_entries: 1,
            source: share.member,
        };
        share.listeners.publish(share.outbox, share.member, map, event);
    }
}

impl WideOperation for Write {
    type Partial = Written;
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) -> Written {
        Written::default()
    }

    fn on_partition(&self, _: &str, _: &mut PartitionStore, _: bool, _: i64, _: &mut Written) {}

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, partial: &mut Written) {
        let settings = share.settings.get(map);
        let now_ms = share.now_ms;
        match &self.work {
            Work::Insert { entries, overwrite } => {
                for (key, value) in entries {
                    let partition_id = ferrogrid_protocol::data::partition_for(Data(key), share.partition_count).0;
                    let (reactor, count) = share.reactor;
                    if partition_id as usize % count != reactor {
                        continue;
                    }
                    let local = partition_id as usize / count;
                    let owned = share.owned.get(local).copied().unwrap_or(true);
                    let Some(partition) = share.partitions.get_mut(local) else { continue };
                    let store = partition.map_mut(map, || settings.clone());
                    store.expire_if_due(key, now_ms);
                    let exists = store.get(key, now_ms).is_some();
                    if exists && !overwrite {
                        if owned && partial.failure.is_none() {
                            partial.failure = Some((wire::error_code::GENERIC, "Duplicate key".to_owned()));
                        }
                        continue;
                    }
                    let old = store.put(key, value, now_ms, -1, -1).map(|e| e.value().to_vec());
                    if owned {
                        partial.count += 1;
                        let kind = if old.is_some() { EventKind::Updated } else { EventKind::Added };
                        publish(share, map, partition_id, kind, key, Some(value), old.as_deref());
                    }
                }
            }
            Work::Change(change) => {
                for local in 0..share.partitions.len() {
                    let owned = share.owned.get(local).copied().unwrap_or(true);
                    let partition_id = share.partition_id(local);
                    let Some(store) = share.partitions[local].existing_mut(map) else { continue };
                    let mut actions = Vec::new();
                    for (key, entry) in store.iter(now_ms) {
                        match ferrogrid_sql::write::apply(change, key, entry.value(), &*self.schemas) {
                            Ok(Action::Keep) => {}
                            Ok(action) => actions.push((key.to_vec(), entry.value().to_vec(), action)),
                            Err(error) => {
                                if owned && partial.failure.is_none() {
                                    partial.failure = Some((wire::error_code::DATA_EXCEPTION, error.message));
                                }
                            }
                        }
                    }
                    for (key, old, action) in actions {
                        let Some(store) = share.partitions[local].existing_mut(map) else { break };
                        match action {
                            Action::Remove => {
                                store.remove(&key);
                                if owned {
                                    partial.count += 1;
                                    publish(share, map, partition_id, EventKind::Removed, &key, None, Some(&old));
                                }
                            }
                            Action::Replace(value) => {
                                store.put(&key, &value, now_ms, -1, -1);
                                if owned {
                                    partial.count += 1;
                                    publish(
                                        share,
                                        map,
                                        partition_id,
                                        EventKind::Updated,
                                        &key,
                                        Some(&value),
                                        Some(&old),
                                    );
                                }
                            }
                            Action::Keep => {}
                        }
                    }
                }
            }
        }
    }

    fn write_response(&self, partial: Written, out: &mut Vec<u8>, _: MessageType, correlation_id: i64) {
        match partial.failure {
            Some((code, text)) => {
                let error = SqlError::new(
                    if code == wire::error_code::DATA_EXCEPTION { Code::DataException } else { Code::Generic },
                    text,
                );
                error_response(out, correlation_id, self.member, &error);
            }
            None => update_count_response(out, correlation_id, 0),
        }
    }
}
