//! Row pages: one page of a query's rows, column by column, as `SqlPageCodec` lays it out (the
//! layout is described in the `sql` module's doc).

use crate::frame::DecodeError;
use crate::message::{Fixed, FixedReader, MessageReader, MessageWriter, Packed, VarField};

use super::values::{BigDecimal, LocalDate, LocalDateTime, LocalTime, OffsetDateTime};
use super::{column_type, SqlColumnType, MAX_DECODED_PAGE_CELLS};

/// One column of a page: its values, row by row (None = SQL NULL).
#[derive(Debug, Clone, PartialEq)]
pub enum SqlColumn {
    Varchar(Vec<Option<String>>),
    Boolean(Vec<Option<bool>>),
    TinyInt(Vec<Option<i8>>),
    SmallInt(Vec<Option<i16>>),
    Integer(Vec<Option<i32>>),
    BigInt(Vec<Option<i64>>),
    Decimal(Vec<Option<BigDecimal>>),
    Real(Vec<Option<f32>>),
    Double(Vec<Option<f64>>),
    Date(Vec<Option<LocalDate>>),
    Time(Vec<Option<LocalTime>>),
    Timestamp(Vec<Option<LocalDateTime>>),
    TimestampWithTimeZone(Vec<Option<OffsetDateTime>>),
    /// Serialized Data blobs.
    Object(Vec<Option<Vec<u8>>>),
    /// A column of the NULL type: every row is null; only the row count travels.
    Null(usize),
    /// JSON text (`HazelcastJsonValue`).
    Json(Vec<Option<String>>),
}

impl SqlColumn {
    pub fn column_type(&self) -> SqlColumnType {
        match self {
            SqlColumn::Varchar(_) => SqlColumnType::Varchar,
            SqlColumn::Boolean(_) => SqlColumnType::Boolean,
            SqlColumn::TinyInt(_) => SqlColumnType::TinyInt,
            SqlColumn::SmallInt(_) => SqlColumnType::SmallInt,
            SqlColumn::Integer(_) => SqlColumnType::Integer,
            SqlColumn::BigInt(_) => SqlColumnType::BigInt,
            SqlColumn::Decimal(_) => SqlColumnType::Decimal,
            SqlColumn::Real(_) => SqlColumnType::Real,
            SqlColumn::Double(_) => SqlColumnType::Double,
            SqlColumn::Date(_) => SqlColumnType::Date,
            SqlColumn::Time(_) => SqlColumnType::Time,
            SqlColumn::Timestamp(_) => SqlColumnType::Timestamp,
            SqlColumn::TimestampWithTimeZone(_) => SqlColumnType::TimestampWithTimeZone,
            SqlColumn::Object(_) => SqlColumnType::Object,
            SqlColumn::Null(_) => SqlColumnType::Null,
            SqlColumn::Json(_) => SqlColumnType::Json,
        }
    }

    pub fn row_count(&self) -> usize {
        match self {
            SqlColumn::Varchar(values) | SqlColumn::Json(values) => values.len(),
            SqlColumn::Boolean(values) => values.len(),
            SqlColumn::TinyInt(values) => values.len(),
            SqlColumn::SmallInt(values) => values.len(),
            SqlColumn::Integer(values) => values.len(),
            SqlColumn::BigInt(values) => values.len(),
            SqlColumn::Decimal(values) => values.len(),
            SqlColumn::Real(values) => values.len(),
            SqlColumn::Double(values) => values.len(),
            SqlColumn::Date(values) => values.len(),
            SqlColumn::Time(values) => values.len(),
            SqlColumn::Timestamp(values) => values.len(),
            SqlColumn::TimestampWithTimeZone(values) => values.len(),
            SqlColumn::Object(values) => values.len(),
            SqlColumn::Null(count) => *count,
        }
    }

    /// Reads a column of `column_type`; a column without bytes behind its rows (all null) may
    /// hold at most `max_rows`.
    fn read(reader: &mut MessageReader<'_>, column_type: SqlColumnType, max_rows: usize) -> Result<Self, DecodeError> {
        let column = match column_type {
            SqlColumnType::Varchar => SqlColumn::Varchar(read_items(reader, |r| r.string().map(str::to_owned))?),
            SqlColumnType::Boolean => SqlColumn::Boolean(read_fixed(reader, max_rows)?),
            SqlColumnType::TinyInt => SqlColumn::TinyInt(read_fixed(reader, max_rows)?),
            SqlColumnType::SmallInt => SqlColumn::SmallInt(read_fixed(reader, max_rows)?),
            SqlColumnType::Integer => SqlColumn::Integer(read_fixed(reader, max_rows)?),
            SqlColumnType::BigInt => SqlColumn::BigInt(read_fixed(reader, max_rows)?),
            SqlColumnType::Decimal => SqlColumn::Decimal(read_items(reader, BigDecimal::read)?),
            SqlColumnType::Real => SqlColumn::Real(read_fixed(reader, max_rows)?),
            SqlColumnType::Double => SqlColumn::Double(read_fixed(reader, max_rows)?),
            SqlColumnType::Date => SqlColumn::Date(read_fixed(reader, max_rows)?),
            SqlColumnType::Time => SqlColumn::Time(read_fixed(reader, max_rows)?),
            SqlColumnType::Timestamp => SqlColumn::Timestamp(read_fixed(reader, max_rows)?),
            SqlColumnType::TimestampWithTimeZone => SqlColumn::TimestampWithTimeZone(read_fixed(reader, max_rows)?),
            SqlColumnType::Object => {
                SqlColumn::Object(read_items(reader, |r| r.value_frame("a Data blob").map(<[u8]>::to_vec))?)
            }
            SqlColumnType::Null => {
                let content = reader.value_frame("a NULL column's row count")?;
                let mut fixed = FixedReader::new(content);
                let count = row_count(fixed.read()?)?;
                no_bytes_left(&fixed)?;
                SqlColumn::Null(count)
            }
            SqlColumnType::Json => SqlColumn::Json(read_items(reader, read_json)?),
        };
        Ok(column)
    }

    fn write(&self, writer: &mut MessageWriter<'_>) {
        match self {
            SqlColumn::Varchar(values) => write_items(writer, values, |w, value| {
                w.frame(value.as_bytes());
            }),
            SqlColumn::Boolean(values) => write_fixed(writer, values),
            SqlColumn::TinyInt(values) => write_fixed(writer, values),
            SqlColumn::SmallInt(values) => write_fixed(writer, values),
            SqlColumn::Integer(values) => write_fixed(writer, values),
            SqlColumn::BigInt(values) => write_fixed(writer, values),
            SqlColumn::Decimal(values) => write_items(writer, values, |w, value| value.write(w)),
            SqlColumn::Real(values) => write_fixed(writer, values),
            SqlColumn::Double(values) => write_fixed(writer, values),
            SqlColumn::Date(values) => write_fixed(writer, values),
            SqlColumn::Time(values) => write_fixed(writer, values),
            SqlColumn::Timestamp(values) => write_fixed(writer, values),
            SqlColumn::TimestampWithTimeZone(values) => write_fixed(writer, values),
            SqlColumn::Object(values) => write_items(writer, values, |w, value| {
                w.frame(value);
            }),
            SqlColumn::Null(count) => {
                writer.open_frame(0).fixed(&wire_count(*count));
            }
            SqlColumn::Json(values) => write_items(writer, values, |w, value| {
                w.begin().frame(value.as_bytes()).end();
            }),
        }
    }
}

/// One page of a query's rows, column by column.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SqlPage {
    /// True when no page follows.
    pub last: bool,
    /// Every column holds the same number of rows.
    pub columns: Vec<SqlColumn>,
}

/// A page whose columns do not all hold the same number of rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("column {column} holds {rows} rows where column 0 holds {expected}")]
pub struct RaggedPage {
    pub column: usize,
    pub rows: usize,
    pub expected: usize,
}

impl SqlPage {
    /// A page of `columns`, which must all hold the same number of rows.
    pub fn new(last: bool, columns: Vec<SqlColumn>) -> Result<SqlPage, RaggedPage> {
        let page = SqlPage { last, columns };
        page.check_rows()?;
        Ok(page)
    }

    /// The number of rows (0 for a page without columns).
    pub fn row_count(&self) -> usize {
        self.columns.first().map_or(0, SqlColumn::row_count)
    }

    /// Checks that every column holds [`SqlPage::row_count`] rows.
    pub fn check_rows(&self) -> Result<(), RaggedPage> {
        let expected = self.row_count();
        match self.columns.iter().position(|column| column.row_count() != expected) {
            Some(column) => Err(RaggedPage { column, rows: self.columns[column].row_count(), expected }),
            None => Ok(()),
        }
    }
}

impl VarField<'_> for SqlPage {
    fn read(reader: &mut MessageReader<'_>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let last = FixedReader::new(reader.value_frame("an SQL page's last flag")?).read::<bool>()?;
        let type_ids = Packed::<i32>::read(reader)?.0;
        let max_rows = MAX_DECODED_PAGE_CELLS / type_ids.len().max(1);
        let mut columns: Vec<SqlColumn> = Vec::with_capacity(type_ids.len());
        for type_id in type_ids {
            let column = SqlColumn::read(reader, column_type(type_id)?, max_rows)?;
            let expected = columns.first().map_or(column.row_count(), SqlColumn::row_count);
            if column.row_count() != expected || expected > max_rows {
                return Err(DecodeError::InvalidValue("columns of one row count within the page bound"));
            }
            columns.push(column);
        }
        reader.skip_to_end()?;
        Ok(SqlPage { last, columns })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        if let Err(ragged) = self.check_rows() {
            panic!("a page is built with columns of one row count: {ragged}");
        }
        writer.begin().open_frame(0).fixed(&self.last);
        writer.open_frame(0);
        for column in &self.columns {
            writer.fixed(&column.column_type().id());
        }
        for column in &self.columns {
            column.write(writer);
        }
        writer.end();
    }
}

/// A row count as the wire carries it. Pages are bounded by the cursor buffer size (an `i32`).
fn wire_count(count: usize) -> i32 {
    i32::try_from(count).expect("a page's row count fits an i32")
}

fn row_count(count: i32) -> Result<usize, DecodeError> {
    usize::try_from(count).map_err(|_| DecodeError::InvalidValue("a non-negative row count"))
}

fn no_bytes_left(fixed: &FixedReader<'_>) -> Result<(), DecodeError> {
    match fixed.remaining() {
        0 => Ok(()),
        _ => Err(DecodeError::InvalidValue("no bytes after a column's last value")),
    }
}

/// Kinds of a "ListCN" frame (a list of nullable fixed-size values).
const ALL_NULL: u8 = 1;
const NONE_NULL: u8 = 2;
const MIXED: u8 = 3;
/// Rows per bitmask byte of a mixed list.
const ROWS_PER_BITMASK: usize = 8;

fn write_fixed<T: Fixed>(writer: &mut MessageWriter<'_>, values: &[Option<T>]) {
    let present = values.iter().filter(|value| value.is_some()).count();
    let kind = match present {
        0 => ALL_NULL,
        _ if present == values.len() => NONE_NULL,
        _ => MIXED,
    };
    writer.open_frame(0).fixed(&kind).fixed(&wire_count(values.len()));
    match kind {
        ALL_NULL => {}
        NONE_NULL => {
            for value in values.iter().flatten() {
                writer.fixed(value);
            }
        }
        _ => {
            for group in values.chunks(ROWS_PER_BITMASK) {
                let bitmask = group
                    .iter()
                    .enumerate()
                    .filter(|(_, value)| value.is_some())
                    .fold(0u8, |bitmask, (bit, _)| bitmask | (1 << bit));
                writer.fixed(&bitmask);
                for value in group.iter().flatten() {
                    writer.fixed(value);
                }
            }
        }
    }
}

fn read_fixed<T: Fixed>(reader: &mut MessageReader<'_>, max_rows: usize) -> Result<Vec<Option<T>>, DecodeError> {
    let mut fixed = FixedReader::new(reader.value_frame("a column of fixed-size values")?);
    let kind: u8 = fixed.read()?;
    let count = row_count(fixed.read()?)?;
    if count > max_rows {
        return Err(DecodeError::InvalidValue("a column within the page bound"));
    }
    let mut values = Vec::with_capacity(count);
    match kind {
        ALL_NULL => values.resize_with(count, || None),
        NONE_NULL => {
            for _ in 0..count {
                values.push(Some(fixed.read()?));
            }
        }
        MIXED => {
            while values.len() < count {
                let bitmask: u8 = fixed.read()?;
                for bit in 0..ROWS_PER_BITMASK.min(count - values.len()) {
                    let present = bitmask & (1 << bit) != 0;
                    values.push(if present { Some(fixed.read()?) } else { None });
                }
            }
        }
        _ => return Err(DecodeError::InvalidValue("a nullable list kind of 1, 2 or 3")),
    }
    no_bytes_left(&fixed)?;
    Ok(values)
}

/// A list of variable-size values: BEGIN, a value or the NULL frame per row, END.
fn write_items<T>(writer: &mut MessageWriter<'_>, values: &[Option<T>], write: impl Fn(&mut MessageWriter<'_>, &T)) {
    writer.begin();
    for value in values {
        match value {
            Some(value) => write(writer, value),
            None => {
                writer.null();
            }
        }
    }
    writer.end();
}

fn read_items<'a, T>(
    reader: &mut MessageReader<'a>,
    read: impl Fn(&mut MessageReader<'a>) -> Result<T, DecodeError>,
) -> Result<Vec<Option<T>>, DecodeError> {
    reader.begin()?;
    let mut values = Vec::new();
    while !reader.at_end()? {
        values.push(if reader.next_is_null() { None } else { Some(read(reader)?) });
    }
    Ok(values)
}

/// A `HazelcastJsonValue`: a structure holding one string.
fn read_json(reader: &mut MessageReader<'_>) -> Result<String, DecodeError> {
    reader.begin()?;
    let text = reader.string()?.to_owned();
    reader.skip_to_end()?;
    Ok(text)
}
