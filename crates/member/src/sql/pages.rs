//! A statement's answers as the client protocol carries them: errors with their member, update
//! counts, and pages of rows in Hazelcast's columnar layout. A statement's result from a request
//! over every partition ([`Statement`]) reaches here through the Hazelcast adapter
//! (`route/wire.rs`); the SQL service's own answers (rows it has at once, fetches) directly.

use crate::engine::request::Statement;
use crate::net::connection::ConnectionShared;
use crate::sql::service::{Cursor, SqlService};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::sql::{self as wire, SqlColumn, SqlColumnMetadata, SqlColumnType, SqlPage, SqlQueryId};
use ferrogrid_protocol::{MessageType, Uuid};
use ferrogrid_query::Value;
use ferrogrid_sql::exec::ResultSet;
use ferrogrid_sql::plan::ColumnMeta;
use ferrogrid_sql::{Code, SqlError, SqlType};
use std::sync::Arc;

/// A statement's error as the wire carries it, from `member`.
pub(crate) fn wire_error(error: &SqlError, member: Uuid) -> wire::SqlError<'_> {
    let code = match error.code {
        Code::Generic => wire::error_code::GENERIC,
        Code::CancelledByUser => wire::error_code::CANCELLED_BY_USER,
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

pub(crate) fn error_response(out: &mut Vec<u8>, correlation_id: i64, member: Uuid, error: &SqlError) {
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

pub(crate) fn update_count_response(out: &mut Vec<u8>, correlation_id: i64, count: i64) {
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

pub(crate) fn column_type(ty: SqlType) -> SqlColumnType {
    SqlColumnType::from_id(ty.id()).expect("every SQL type has a column type id")
}

/// `rows` as a columnar page (`last`: no page follows).
fn columnar(columns: &[ColumnMeta], rows: &[Vec<Value>], last: bool) -> SqlPage {
    let cells = columns
        .iter()
        .enumerate()
        .map(|(index, column)| column_of(column.ty, rows.iter().map(|row| &row[index])))
        .collect();
    SqlPage { last, columns: cells }
}

pub(crate) fn column_of<'a>(ty: SqlType, values: impl Iterator<Item = &'a Value>) -> SqlColumn {
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

pub(crate) fn date(d: &ferrogrid_query::temporal::Date) -> wire::LocalDate {
    wire::LocalDate { year: d.year(), month: d.month(), day: d.day() }
}

pub(crate) fn time(t: &ferrogrid_query::temporal::Time) -> wire::LocalTime {
    wire::LocalTime { hour: t.hour(), minute: t.minute(), second: t.second(), nano: t.nano() }
}

/// Answers a query's result: the first page, and a cursor for the rest.
pub(crate) fn answer_rows(
    respond: &Respond,
    connection: Option<&Arc<ConnectionShared>>,
    result: ResultSet,
    out: &mut Vec<u8>,
    correlation_id: i64,
) {
    if let Some(statement) = first_page(respond, connection, result) {
        write_statement(out, SqlExecute::TYPE.response(), correlation_id, &statement);
    }
}

/// A query's result as its answer: the first page, the rest kept in a cursor of the
/// connection's for its fetches (refused beyond its cursors' bound). None: rows remain and
/// there is no connection to keep them for. A statement its client closed while it ran keeps
/// no cursor: it answers [`cancelled`](ferrogrid_sql::exec::cancelled).
pub(crate) fn first_page(
    respond: &Respond,
    connection: Option<&Arc<ConnectionShared>>,
    result: ResultSet,
) -> Option<Statement> {
    let Respond { service, query_id, page_size, max_cursors, member, .. } = respond;
    let (query_id, page_size, max_cursors, member) = (*query_id, *page_size, *max_cursors, *member);
    if respond.deadline.is_closed() {
        return Some(Statement::Failed { error: ferrogrid_sql::exec::cancelled(), member });
    }
    let mut cursor = Cursor { columns: result.columns, rows: result.rows.into(), more: None };
    let (first, last) = cursor.take(page_size.max(1));
    if last {
        return Some(Statement::Rows { columns: cursor.columns, rows: first, last });
    }
    let connection = connection?;
    let mut cursors = service.cursors.lock();
    if let Err(error) = cursor_room(&cursors, connection.id, max_cursors) {
        return Some(Statement::Failed { error, member });
    }
    let columns = cursor.columns.clone();
    cursors.insert((connection.id, query_id), cursor);
    Some(Statement::Rows { columns, rows: first, last })
}

/// Whether `connection` may open one more cursor (`max-sql-cursors-per-connection`); the
/// failure when it may not.
pub(crate) fn cursor_room(
    cursors: &std::collections::HashMap<(crate::net::connection::ConnectionId, SqlQueryId), Cursor>,
    connection: crate::net::connection::ConnectionId,
    max_cursors: usize,
) -> Result<(), SqlError> {
    let held = cursors.keys().filter(|(owner, _)| *owner == connection).count();
    if held < max_cursors {
        return Ok(());
    }
    Err(SqlError::generic(format!(
        "This connection already has {held} open SQL cursors (max-sql-cursors-per-connection); close or read some first"
    )))
}

/// Appends the response carrying a statement's result: Sql.Fetch's (`ty`) for a later page
/// or its failure, Sql.Execute's otherwise.
pub(crate) fn write_statement(out: &mut Vec<u8>, ty: MessageType, correlation_id: i64, statement: &Statement) {
    if ty == SqlFetch::TYPE.response() {
        let (row_page, error) = match statement {
            Statement::Page { columns, rows, last } | Statement::Rows { columns, rows, last } => {
                (Some(columnar(columns, rows, *last)), None)
            }
            Statement::Failed { error, member } => (None, Some(wire_error(error, *member))),
            Statement::UpdateCount(_) => (None, None),
        };
        SqlFetchResponse { row_page, error }.encode(out, ty, correlation_id, 0);
        return;
    }
    let (columns, rows, last) = match statement {
        Statement::Rows { columns, rows, last } | Statement::Page { columns, rows, last } => (columns, rows, *last),
        Statement::UpdateCount(count) => return update_count_response(out, correlation_id, *count),
        Statement::Failed { error, member } => return error_response(out, correlation_id, *member, error),
    };
    let metadata: Vec<SqlColumnMetadata<'_>> = columns
        .iter()
        .map(|c| SqlColumnMetadata { name: &c.name, column_type: column_type(c.ty), nullable: c.nullable })
        .collect();
    SqlExecuteResponse {
        update_count: -1,
        is_infinite_rows: false,
        partition_argument_index: -1,
        row_metadata: Some(metadata),
        row_page: Some(columnar(columns, rows, last)),
        error: None,
    }
    .encode(out, SqlExecute::TYPE.response(), correlation_id, 0);
}

/// Where a scan's result goes on the coordinating member.
#[derive(Debug)]
pub(crate) struct Respond {
    pub(crate) service: Arc<SqlService>,
    pub(crate) query_id: SqlQueryId,
    pub(crate) page_size: usize,
    pub(crate) max_rows: usize,
    pub(crate) max_cursors: usize,
    pub(crate) member: Uuid,
    /// When the statement must have answered (`timeoutMillis`).
    pub(crate) deadline: ferrogrid_sql::exec::Deadline,
}
