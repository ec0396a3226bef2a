//! The SQL service (0x21) on the wire: query ids, errors, column metadata and row pages.
//!
//! The messages themselves (`SqlExecute`, `SqlFetch`, `SqlClose`, `SqlMappingDdl`) are rows of
//! the `codec` module's table; this module holds the structures they carry.
//!
//! A row page ([`SqlPage`]) is column-major and must decode byte for byte as the official
//! clients' `SqlPageCodec` reads it: BEGIN, a 1-byte frame (1 = last page), a packed `List<int>`
//! of column type ids, one encoding per column, END. By column type:
//! - VARCHAR, DECIMAL, OBJECT: BEGIN, one frame per row (the NULL frame for null), END. A
//!   DECIMAL frame is `i32` length, the unscaled value's big-endian two's-complement bytes,
//!   `i32` scale; an OBJECT frame is a serialized Data blob.
//! - JSON: the same list, but each row is a `HazelcastJsonValue` structure: BEGIN, string, END.
//! - NULL: one frame holding the row count (`i32`).
//! - the fixed-size types: one "ListCN" frame: a kind byte (1 all null, 2 none null, 3 mixed),
//!   the `i32` row count, then for kind 2 the values packed, for kind 3 per group of 8 rows a
//!   bitmask byte (bit `i` set = row `i` of the group is present) followed by that group's
//!   present values. An empty column is kind 1 with count 0.
//!
//! Invariants: every column of a page has the same row count (encoding a ragged page panics,
//! decoding one is an error); decoding allocates at most [`MAX_DECODED_PAGE_CELLS`] cells that
//! no bytes stand behind (the rows of an all-null column cost none).

use crate::frame::DecodeError;
use crate::message::{FixedReader, MessageReader, MessageWriter, VarField};
use crate::types::Uuid;

mod page;
mod values;

pub use page::{RaggedPage, SqlColumn, SqlPage};
pub use values::{BigDecimal, LocalDate, LocalDateTime, LocalTime, OffsetDateTime};

/// Hazelcast's `SqlErrorCode`: the `code` of an [`SqlError`].
pub mod error_code {
    /// Generic error.
    pub const GENERIC: i32 = -1;
    /// A network connection problem between members, or between a client and a member.
    pub const CONNECTION_PROBLEM: i32 = 1001;
    /// The query was cancelled by the user.
    pub const CANCELLED_BY_USER: i32 = 1003;
    /// The query was cancelled by its timeout.
    pub const TIMEOUT: i32 = 1004;
    /// A problem with partition distribution.
    pub const PARTITION_DISTRIBUTION: i32 = 1005;
    /// Map loading has not finished yet. (1006, MAP_DESTROYED, was retired in Hazelcast 5.)
    pub const MAP_LOADING_IN_PROGRESS: i32 = 1007;
    /// Generic parsing error.
    pub const PARSING: i32 = 1008;
    /// An attempt to query an index that is not valid.
    pub const INDEX_INVALID: i32 = 1009;
    /// The object (mapping or table) was not found.
    pub const OBJECT_NOT_FOUND: i32 = 1010;
    /// An error in data conversion or transformation.
    pub const DATA_EXCEPTION: i32 = 2000;
}

/// `SqlExecute::expected_result_type`: any result.
pub const EXPECTED_RESULT_ANY: i8 = 0;
/// `SqlExecute::expected_result_type`: rows (a query).
pub const EXPECTED_RESULT_ROWS: i8 = 1;
/// `SqlExecute::expected_result_type`: an update count (DML, DDL).
pub const EXPECTED_RESULT_UPDATE_COUNT: i8 = 2;

/// Most cells a decoded page may hold (rows × columns). A page's rows are bounded by the
/// `cursorBufferSize` the client asked for (4096 by default), so this leaves room for 1024
/// columns of default pages; it exists because an all-null column's rows cost no bytes.
pub const MAX_DECODED_PAGE_CELLS: usize = 1 << 22;

/// A query's id, chosen by the client: the client's UUID and a local UUID, as four longs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SqlQueryId {
    pub member_id_high: i64,
    pub member_id_low: i64,
    pub local_id_high: i64,
    pub local_id_low: i64,
}

impl VarField<'_> for SqlQueryId {
    fn read(reader: &mut MessageReader<'_>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("an SQL query id")?);
        let id = SqlQueryId {
            member_id_high: fixed.read()?,
            member_id_low: fixed.read()?,
            local_id_high: fixed.read()?,
            local_id_low: fixed.read()?,
        };
        reader.skip_to_end()?;
        Ok(id)
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.member_id_high).fixed(&self.member_id_low);
        writer.fixed(&self.local_id_high).fixed(&self.local_id_low).end();
    }
}

/// A query's failure, reported inside an Execute or Fetch response (not as an Error response).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlError<'a> {
    /// One of [`error_code`].
    pub code: i32,
    pub message: Option<&'a str>,
    pub originating_member_id: Uuid,
    /// Since protocol 2.3: a statement that would fix the problem (e.g. a CREATE MAPPING).
    pub suggestion: Option<&'a str>,
    /// Since protocol 2.7.
    pub cause_stack_trace: Option<&'a str>,
}

impl<'a> VarField<'a> for SqlError<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("an SQL error")?);
        let code = fixed.read()?;
        let originating_member_id = fixed.read::<Option<Uuid>>()?.unwrap_or_default();
        let message = VarField::read(reader)?;
        // An older member ends the structure before the fields added in 2.3 and 2.7.
        let mut ended = false;
        let suggestion = read_added(reader, &mut ended)?;
        let cause_stack_trace = read_added(reader, &mut ended)?;
        if !ended {
            reader.skip_to_end()?;
        }
        Ok(SqlError { code, message, originating_member_id, suggestion, cause_stack_trace })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.code).fixed(&Some(self.originating_member_id));
        writer.var(&self.message).var(&self.suggestion).var(&self.cause_stack_trace).end();
    }
}

/// Reads a variable field a newer peer added at the end of a structure: None if the structure
/// has already ended (`ended` then records that its END frame was consumed).
fn read_added<'a, T: VarField<'a>>(reader: &mut MessageReader<'a>, ended: &mut bool) -> Result<Option<T>, DecodeError> {
    if !*ended {
        *ended = reader.at_end()?;
    }
    if *ended {
        return Ok(None);
    }
    <Option<T>>::read(reader)
}

/// The SQL type of a column, by Hazelcast's `SqlColumnType` id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlColumnType {
    Varchar = 0,
    Boolean = 1,
    TinyInt = 2,
    SmallInt = 3,
    Integer = 4,
    BigInt = 5,
    Decimal = 6,
    Real = 7,
    Double = 8,
    Date = 9,
    Time = 10,
    Timestamp = 11,
    TimestampWithTimeZone = 12,
    Object = 13,
    Null = 14,
    Json = 15,
}

impl SqlColumnType {
    /// Every type, indexed by id.
    pub const ALL: [SqlColumnType; 16] = [
        SqlColumnType::Varchar,
        SqlColumnType::Boolean,
        SqlColumnType::TinyInt,
        SqlColumnType::SmallInt,
        SqlColumnType::Integer,
        SqlColumnType::BigInt,
        SqlColumnType::Decimal,
        SqlColumnType::Real,
        SqlColumnType::Double,
        SqlColumnType::Date,
        SqlColumnType::Time,
        SqlColumnType::Timestamp,
        SqlColumnType::TimestampWithTimeZone,
        SqlColumnType::Object,
        SqlColumnType::Null,
        SqlColumnType::Json,
    ];

    pub fn id(self) -> i32 {
        self as i32
    }

    /// The type with this id; None for an id ferrogrid does not know (e.g. ROW, 16, which
    /// Hazelcast does not send in pages).
    pub fn from_id(id: i32) -> Option<SqlColumnType> {
        SqlColumnType::ALL.get(usize::try_from(id).ok()?).copied()
    }
}

/// One column of a result's row type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlColumnMetadata<'a> {
    pub name: &'a str,
    pub column_type: SqlColumnType,
    /// Since protocol 2.2; a column of an older member reads as nullable.
    pub nullable: bool,
}

impl<'a> VarField<'a> for SqlColumnMetadata<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("SQL column metadata")?);
        let column_type = column_type(fixed.read()?)?;
        let nullable = fixed.read_optional().unwrap_or(true);
        let name = reader.string()?;
        reader.skip_to_end()?;
        Ok(SqlColumnMetadata { name, column_type, nullable })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.column_type.id()).fixed(&self.nullable);
        writer.frame(self.name.as_bytes()).end();
    }
}

fn column_type(id: i32) -> Result<SqlColumnType, DecodeError> {
    SqlColumnType::from_id(id).ok_or(DecodeError::InvalidValue("a known SQL column type id"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::*;
    use crate::frame::{END_DATA_STRUCTURE, IS_FINAL};
    use crate::message::{write_frame, Message, REQUEST_HEADER_SIZE};
    use crate::Data;
    use proptest::collection::vec;
    use proptest::option::of;
    use proptest::prelude::*;

    /// Size of a response's initial frame: frame header and response header.
    const RESPONSE_INITIAL_FRAME: usize = 6 + 13;

    fn fetch_response(page: &SqlPage) -> Vec<u8> {
        let mut out = Vec::new();
        SqlFetchResponse { row_page: Some(page.clone()), error: None }.encode(&mut out, SqlFetch::RESPONSE, 7, 0);
        out
    }

    /// The page's frames in a Fetch response: after the initial frame, before the final
    /// NULL frame standing for "no error".
    fn page_frames(page: &SqlPage) -> String {
        let out = fetch_response(page);
        assert_eq!(hex::encode(&out[out.len() - 6..]), "060000000024", "a final NULL frame");
        hex::encode(&out[RESPONSE_INITIAL_FRAME..out.len() - 6])
    }

    /// Decodes `frames` (hex) as the page of a Fetch response.
    fn decode_page(frames: &str) -> Result<SqlPage, DecodeError> {
        let mut bytes = hex::decode("1300000000c001052100070000000000000000").unwrap();
        bytes.extend(hex::decode(frames).unwrap());
        write_frame(&mut bytes, crate::frame::IS_NULL | IS_FINAL, &[]);
        let response = SqlFetchResponse::decode(&Message::parse(&bytes)?)?;
        assert_eq!(response.error, None);
        Ok(response.row_page.expect("a page"))
    }

    fn assert_page_bytes(page: &SqlPage, expected: &[&str]) {
        let expected = expected.concat();
        assert_eq!(page_frames(page), expected);
        assert_eq!(&decode_page(&expected).unwrap(), page);
    }

    const BEGIN: &str = "060000000010";
    const END: &str = "060000000008";
    const NULL: &str = "060000000004";

    #[test]
    fn column_type_ids_are_hazelcasts() {
        for (id, column_type) in SqlColumnType::ALL.iter().enumerate() {
            assert_eq!(column_type.id(), id as i32);
            assert_eq!(SqlColumnType::from_id(id as i32), Some(*column_type));
        }
        assert_eq!(SqlColumnType::Json.id(), 15);
        assert_eq!(SqlColumnType::TimestampWithTimeZone.id(), 12);
        assert_eq!(SqlColumnType::from_id(16), None);
        assert_eq!(SqlColumnType::from_id(-1), None);
    }

    /// Ten INTEGER rows with nulls in both bitmask groups, beside a NULL-typed column.
    /// The Python client's `ListCNFixedSizeCodec.decode` reads kind 3, count 10, then per
    /// group a bitmask byte followed by the group's present values: rows 0, 2, 5, 6, 7 of the
    /// first group (0b1110_0101), row 9 of the second (bit 1).
    #[test]
    #[rustfmt::skip]
    fn mixed_integer_column_interleaves_bitmasks_and_values() {
        let integers = vec![Some(1), None, Some(3), None, None, Some(6), Some(7), Some(8), None, Some(10)];
        let page = SqlPage::new(false, vec![SqlColumn::Integer(integers), SqlColumn::Null(10)]).unwrap();
        assert_eq!(page.row_count(), 10);
        assert_page_bytes(&page, &[
            BEGIN,
            "070000000000", "00", // last: false
            "0e0000000000", "04000000", "0e000000", // column types: INTEGER, NULL
            // 6 header + 1 kind + 4 count + 2 bitmasks + 6 values × 4 = 37 bytes
            "250000000000", "03", "0a000000",
            "e5", "01000000", "03000000", "06000000", "07000000", "08000000",
            "02", "0a000000",
            "0a0000000000", "0a000000", // the NULL column: its row count
            END,
        ]);
    }

    /// All-null BIGINT (kind 1: no values), not-null SMALLINT (kind 2: no bitmask), VARCHAR
    /// with a null (a NULL frame among string frames), NULL type.
    #[test]
    #[rustfmt::skip]
    fn null_only_not_null_varchar_and_null_columns() {
        let page = SqlPage::new(true, vec![
            SqlColumn::BigInt(vec![None, None, None]),
            SqlColumn::SmallInt(vec![Some(1), Some(-2), Some(300)]),
            SqlColumn::Varchar(vec![Some("a".into()), None, Some("bc".into())]),
            SqlColumn::Null(3),
        ])
        .unwrap();
        assert_page_bytes(&page, &[
            BEGIN,
            "070000000000", "01",
            "160000000000", "05000000", "03000000", "00000000", "0e000000",
            "0b0000000000", "01", "03000000",
            "110000000000", "02", "03000000", "0100", "feff", "2c01",
            BEGIN, "070000000000", "61", NULL, "080000000000", "6263", END,
            "0a0000000000", "03000000",
            END,
        ]);
    }

    /// Sixteen rows: two whole groups, so no partial bitmask; an empty column is kind 1.
    #[test]
    #[rustfmt::skip]
    fn whole_bitmask_groups_and_empty_columns() {
        let booleans: Vec<Option<bool>> = (0..16).map(|row| (row % 3 != 0).then_some(row % 2 == 0)).collect();
        let page = SqlPage::new(true, vec![SqlColumn::Boolean(booleans)]).unwrap();
        // present: rows 1 2 4 5 7 | 8 10 11 13 14; bitmasks 0b1011_0110, 0b0110_1101
        assert_page_bytes(&page, &[
            BEGIN, "070000000000", "01", "0a0000000000", "01000000",
            "170000000000", "03", "10000000", "b6", "0001010000", "6d", "0101000001",
            END,
        ]);
        let empty = SqlPage::new(false, vec![SqlColumn::Real(vec![]), SqlColumn::Varchar(vec![])]).unwrap();
        assert_page_bytes(&empty, &[
            BEGIN, "070000000000", "00", "0e0000000000", "07000000", "00000000",
            "0b0000000000", "01", "00000000",
            BEGIN, END,
            END,
        ]);
    }

    /// Values of the other types; bytes checked by decoding them with the Python client's
    /// `SqlPageCodec` (`2020-02-29`, `23:59:58.5`, `Decimal('-1.29')`, a UTC+1 timestamp, …).
    #[test]
    #[rustfmt::skip]
    fn dates_decimals_json_and_objects() {
        let date = LocalDate { year: 2020, month: 2, day: 29 };
        let time = LocalTime { hour: 23, minute: 59, second: 58, nano: 500_000_000 };
        let date_time = LocalDateTime { date, time };
        let page = SqlPage::new(true, vec![
            SqlColumn::TinyInt(vec![Some(-1), None]),
            SqlColumn::Double(vec![Some(1.5), Some(-0.25)]),
            SqlColumn::Date(vec![Some(date), None]),
            SqlColumn::Time(vec![None, Some(time)]),
            SqlColumn::Timestamp(vec![Some(date_time), None]),
            SqlColumn::TimestampWithTimeZone(vec![None, Some(OffsetDateTime { date_time, offset_seconds: 3600 })]),
            SqlColumn::Decimal(vec![Some(BigDecimal::from_i128(-129, 2)), None]),
            SqlColumn::Json(vec![None, Some("{\"a\":1}".into())]),
            SqlColumn::Object(vec![Some(hex::decode("00000000fffffff9").unwrap()), None]),
        ])
        .unwrap();
        assert_page_bytes(&page, &[
            BEGIN, "070000000000", "01",
            "2a0000000000", "02000000", "08000000", "09000000", "0a000000", "0b000000", "0c000000", "06000000",
            "0f000000", "0d000000",
            "0d0000000000", "03", "02000000", "01", "ff",
            "1b0000000000", "02", "02000000", "000000000000f83f", "000000000000d0bf",
            "120000000000", "03", "02000000", "01", "e4070000", "02", "1d",
            "130000000000", "03", "02000000", "02", "17", "3b", "3a", "0065cd1d",
            "190000000000", "03", "02000000", "01", "e4070000021d", "173b3a0065cd1d",
            "1d0000000000", "03", "02000000", "02", "e4070000021d", "173b3a0065cd1d", "100e0000",
            BEGIN, "100000000000", "02000000", "ff7f", "02000000", NULL, END, // unscaled -129, scale 2
            BEGIN, NULL, BEGIN, "0d0000000000", "7b2261223a317d", END, END, // JSON rows are structures
            BEGIN, "0e0000000000", "00000000fffffff9", NULL, END,
            END,
        ]);
    }

    #[test]
    #[should_panic(expected = "one row count")]
    fn encoding_a_ragged_page_panics() {
        let page = SqlPage { last: true, columns: vec![SqlColumn::Null(2), SqlColumn::Integer(vec![Some(1)])] };
        fetch_response(&page);
    }

    #[test]
    fn a_ragged_page_is_refused() {
        let columns = vec![SqlColumn::Null(2), SqlColumn::Integer(vec![Some(1)])];
        assert_eq!(SqlPage::new(true, columns), Err(RaggedPage { column: 1, rows: 1, expected: 2 }));
        let ragged = [BEGIN, "070000000000", "01", "0e0000000000", "0e000000", "04000000"].concat();
        let ragged = ragged + "0a0000000000" + "02000000" + "0f0000000000" + "02" + "01000000" + "01000000" + END;
        assert!(matches!(decode_page(&ragged), Err(DecodeError::InvalidValue(_))));
    }

    #[test]
    fn malformed_columns_are_errors() {
        let page = |column: &str| [BEGIN, "070000000000", "01", "0a0000000000", "04000000", column, END].concat();
        let invalid =
            |column: &[&str]| matches!(decode_page(&page(&column.concat())), Err(DecodeError::InvalidValue(_)));
        let truncated =
            |column: &[&str]| matches!(decode_page(&page(&column.concat())), Err(DecodeError::Truncated(_)));
        assert!(decode_page(&page(&["0f0000000000", "02", "01000000", "05000000"].concat())).is_ok());
        // kind 4
        assert!(invalid(&["0f0000000000", "04", "01000000", "05000000"]));
        // negative count
        assert!(invalid(&["0b0000000000", "01", "ffffffff"]));
        // an all-null column beyond the page bound
        assert!(invalid(&["0b0000000000", "01", "ffffff7f"]));
        // a value missing, and a byte too many
        assert!(truncated(&["0f0000000000", "02", "02000000", "01000000"]));
        assert!(invalid(&["100000000000", "02", "01000000", "01000000", "00"]));
        // a mixed list of 9 rows without the second group's bitmask
        assert!(truncated(&["100000000000", "03", "09000000", "01", "01000000"]));
        // an unknown column type
        let unknown = [BEGIN, "070000000000", "01", "0a0000000000", "10000000", "0a0000000000", "00000000", END];
        assert!(decode_page(&unknown.concat()).is_err());
        // a decimal without unscaled bytes
        let decimal = [
            BEGIN,
            "070000000000",
            "01",
            "0a0000000000",
            "06000000",
            BEGIN,
            "0e0000000000",
            "0000000000000000",
            END,
            END,
        ];
        assert!(decode_page(&decimal.concat()).is_err());
    }

    #[test]
    fn decimals_are_minimal_twos_complement() {
        for (value, bytes) in [
            (0, "00"),
            (1, "01"),
            (127, "7f"),
            (128, "0080"),
            (-1, "ff"),
            (-128, "80"),
            (-129, "ff7f"),
            (65535, "00ffff"),
            (i128::MIN, "80000000000000000000000000000000"),
            (i128::MAX, "7fffffffffffffffffffffffffffffff"),
        ] {
            let decimal = BigDecimal::from_i128(value, 3);
            assert_eq!(hex::encode(&decimal.unscaled), bytes, "{value}");
            assert_eq!(decimal.unscaled_i128(), Some(value));
        }
        assert_eq!(BigDecimal { unscaled: vec![1; 17], scale: 0 }.unscaled_i128(), None);
    }

    #[test]
    fn sql_error_codes_are_hazelcasts() {
        use error_code::*;
        let codes = [
            GENERIC,
            CONNECTION_PROBLEM,
            CANCELLED_BY_USER,
            TIMEOUT,
            PARTITION_DISTRIBUTION,
            MAP_LOADING_IN_PROGRESS,
            PARSING,
            INDEX_INVALID,
            OBJECT_NOT_FOUND,
            DATA_EXCEPTION,
        ];
        assert_eq!(codes, [-1, 1001, 1003, 1004, 1005, 1007, 1008, 1009, 1010, 2000]);
    }

    const QUERY_ID: SqlQueryId =
        SqlQueryId { member_id_high: 1, member_id_low: -2, local_id_high: i64::MAX, local_id_low: i64::MIN };

    #[test]
    fn execute_request_round_trips_and_reads_an_old_client() {
        let blob = hex::decode("00000000fffffff900000005").unwrap();
        let request = SqlExecute {
            timeout_millis: -1,
            cursor_buffer_size: 4096,
            expected_result_type: EXPECTED_RESULT_ROWS,
            skip_update_statistics: true,
            sql: "SELECT * FROM m WHERE a = ? AND b = ?",
            parameters: vec![Some(Data(&blob)), None],
            schema: None,
            query_id: QUERY_ID,
        };
        let mut bytes = Vec::new();
        let length = request.encode(&mut bytes, 3, -1, 0);
        assert_eq!(length, bytes.len());
        let message = Message::parse(&bytes).unwrap();
        assert_eq!(message.message_type().0, 0x210400);
        assert_eq!(message.partition_id(), -1);
        assert_eq!(SqlExecute::decode(&message).unwrap(), request);
        // Fixed fields: 8 + 4 + 1 + 1 bytes after the request header.
        assert_eq!(i32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize, 6 + REQUEST_HEADER_SIZE + 14);

        // A 2.2 client sends no skipUpdateStatistics byte.
        let mut old = bytes.clone();
        old.remove(6 + REQUEST_HEADER_SIZE + 13);
        old[..4].copy_from_slice(&((6 + REQUEST_HEADER_SIZE + 13) as i32).to_le_bytes());
        let decoded = SqlExecute::decode(&Message::parse(&old).unwrap()).unwrap();
        assert_eq!(decoded, SqlExecute { skip_update_statistics: false, ..request });
    }

    #[test]
    fn execute_response_round_trips_and_reads_an_old_member() {
        let page = SqlPage::new(true, vec![SqlColumn::Integer(vec![Some(1), None]), SqlColumn::Null(2)]).unwrap();
        let metadata = vec![
            SqlColumnMetadata { name: "a", column_type: SqlColumnType::Integer, nullable: false },
            SqlColumnMetadata { name: "b", column_type: SqlColumnType::Null, nullable: true },
        ];
        let response = SqlExecuteResponse {
            update_count: -1,
            is_infinite_rows: true,
            partition_argument_index: 1,
            row_metadata: Some(metadata),
            row_page: Some(page),
            error: None,
        };
        let mut bytes = Vec::new();
        response.encode(&mut bytes, SqlExecute::RESPONSE, 9, 0);
        let message = Message::parse(&bytes).unwrap();
        assert_eq!(message.message_type().0, 0x210401);
        assert_eq!(SqlExecuteResponse::decode(&message).unwrap(), response);

        // A 2.2 member's response ends its initial frame after updateCount.
        let mut old = bytes.clone();
        old.drain(RESPONSE_INITIAL_FRAME + 8..RESPONSE_INITIAL_FRAME + 13);
        old[..4].copy_from_slice(&((RESPONSE_INITIAL_FRAME + 8) as i32).to_le_bytes());
        let decoded = SqlExecuteResponse::decode(&Message::parse(&old).unwrap()).unwrap();
        assert_eq!(decoded, SqlExecuteResponse { is_infinite_rows: false, partition_argument_index: -1, ..response });

        let error = SqlError {
            code: error_code::OBJECT_NOT_FOUND,
            message: Some("Object 'm' not found"),
            originating_member_id: Uuid::from_u128(0x0102),
            suggestion: Some("CREATE MAPPING \"m\" ..."),
            cause_stack_trace: None,
        };
        let failed = SqlExecuteResponse {
            update_count: -1,
            is_infinite_rows: false,
            partition_argument_index: -1,
            row_metadata: None,
            row_page: None,
            error: Some(error),
        };
        let mut bytes = Vec::new();
        failed.encode(&mut bytes, SqlExecute::RESPONSE, 10, 0);
        assert_eq!(SqlExecuteResponse::decode(&Message::parse(&bytes).unwrap()).unwrap(), failed);
    }

    #[test]
    fn fetch_close_and_mapping_ddl_round_trip() {
        let mut bytes = Vec::new();
        let fetch = SqlFetch { cursor_buffer_size: 100, query_id: QUERY_ID };
        fetch.encode(&mut bytes, 4, -1, 0);
        let message = Message::parse(&bytes).unwrap();
        assert_eq!(message.message_type().0, 0x210500);
        assert_eq!(SqlFetch::decode(&message).unwrap(), fetch);

        let error = SqlError {
            code: error_code::CANCELLED_BY_USER,
            message: None,
            originating_member_id: Uuid::from_u128(7),
            suggestion: None,
            cause_stack_trace: Some("at ..."),
        };
        let response = SqlFetchResponse { row_page: None, error: Some(error) };
        let mut bytes = Vec::new();
        response.encode(&mut bytes, SqlFetch::RESPONSE, 4, 0);
        assert_eq!(SqlFetchResponse::decode(&Message::parse(&bytes).unwrap()).unwrap(), response);

        let mut bytes = Vec::new();
        SqlClose { query_id: QUERY_ID }.encode(&mut bytes, 5, -1, 0);
        let message = Message::parse(&bytes).unwrap();
        assert_eq!(message.message_type().0, 0x210300);
        assert_eq!(SqlClose::decode(&message).unwrap(), SqlClose { query_id: QUERY_ID });
        let mut bytes = Vec::new();
        EmptyResponse {}.encode(&mut bytes, SqlClose::RESPONSE, 5, 0);
        assert_eq!(Message::parse(&bytes).unwrap().message_type().0, 0x210301);

        let mut bytes = Vec::new();
        SqlMappingDdl { name: "m" }.encode(&mut bytes, 6, -1, 0);
        let message = Message::parse(&bytes).unwrap();
        assert_eq!(message.message_type().0, 0x210600);
        assert_eq!(SqlMappingDdl::decode(&message).unwrap(), SqlMappingDdl { name: "m" });
        for sql in [None, Some("CREATE MAPPING \"m\" TYPE IMap OPTIONS ()")] {
            let mut bytes = Vec::new();
            SqlMappingDdlResponse { sql }.encode(&mut bytes, SqlMappingDdl::RESPONSE, 6, 0);
            let message = Message::parse(&bytes).unwrap();
            assert_eq!(message.message_type().0, 0x210601);
            assert_eq!(SqlMappingDdlResponse::decode(&message).unwrap(), SqlMappingDdlResponse { sql });
        }
    }

    /// Requests as the Python client 5.x encodes them (`sql_execute_codec.encode_request("SELECT
    /// ?", [Data, None], 5000, 4096, "public", 1, id, True)`, then Fetch and Close of that id):
    /// ours decode them and encode the same bytes.
    #[test]
    fn python_client_requests() {
        let id = SqlQueryId { member_id_high: 1, member_id_low: -2, local_id_high: 3, local_id_low: -4 };
        let id_frames =
            "0600000000102600000000000100000000000000feffffffffffffff0300000000000000fcffffffffffffff060000000028";
        let execute = hex::decode(
            [
                "2400000000c0000421000b00000000000000ffffffff88130000000000000010000001010e000000000053454c454354203f",
                "06000000001012000000000000000000fffffff9000000050600000000040600000000080c00000000007075626c6963",
                id_frames,
            ]
            .concat(),
        )
        .unwrap();
        let blob = hex::decode("00000000fffffff900000005").unwrap();
        let request = SqlExecute::decode(&Message::parse(&execute).unwrap()).unwrap();
        let expected = SqlExecute {
            timeout_millis: 5000,
            cursor_buffer_size: 4096,
            expected_result_type: EXPECTED_RESULT_ROWS,
            skip_update_statistics: true,
            sql: "SELECT ?",
            parameters: vec![Some(Data(&blob)), None],
            schema: Some("public"),
            query_id: id,
        };
        assert_eq!(request, expected);
        let mut bytes = Vec::new();
        expected.encode(&mut bytes, 11, -1, 0);
        assert_eq!(hex::encode(bytes), hex::encode(&execute));

        let fetch = hex::decode(["1a00000000c0000521000000000000000000ffffffff00100000", id_frames].concat()).unwrap();
        assert_eq!(
            SqlFetch::decode(&Message::parse(&fetch).unwrap()).unwrap(),
            SqlFetch { cursor_buffer_size: 4096, query_id: id }
        );
        let mut bytes = Vec::new();
        SqlFetch { cursor_buffer_size: 4096, query_id: id }.encode(&mut bytes, 0, -1, 0);
        assert_eq!(bytes, fetch);

        let close = hex::decode(["1600000000c0000321000000000000000000ffffffff", id_frames].concat()).unwrap();
        assert_eq!(SqlClose::decode(&Message::parse(&close).unwrap()).unwrap(), SqlClose { query_id: id });
    }

    /// The query id: BEGIN, one frame of four longs, END (as the Python client writes it).
    #[test]
    fn query_id_layout() {
        let mut bytes = Vec::new();
        SqlClose { query_id: SqlQueryId { member_id_high: 1, member_id_low: 2, local_id_high: 3, local_id_low: 4 } }
            .encode(&mut bytes, 5, -1, 0);
        let frames = hex::encode(&bytes[6 + REQUEST_HEADER_SIZE..]);
        let fixed = "0100000000000000020000000000000003000000000000000400000000000000";
        assert_eq!(frames, format!("{BEGIN}260000000000{fixed}060000000028"));
    }

    /// Structures of older members: SqlError before 2.3 (no suggestion) and column metadata
    /// before 2.2 (no nullable flag, read as nullable).
    #[test]
    fn older_structures_decode() {
        let uuid = "00".to_owned() + &"11".repeat(16);
        let error = [BEGIN, "1b0000000000", "e8030000", &uuid, NULL, END].concat();
        let metadata = [BEGIN, BEGIN, "0a0000000000", "04000000", "070000000000", "61", END, END].concat();
        let mut bytes = hex::decode("1b00000000c001042100090000000000000000ffffffffffffffff").unwrap();
        bytes.extend(hex::decode(metadata + NULL + &error).unwrap());
        let last = bytes.len() - 6;
        bytes[last + 4..last + 6].copy_from_slice(&(END_DATA_STRUCTURE | IS_FINAL).to_le_bytes());
        let response = SqlExecuteResponse::decode(&Message::parse(&bytes).unwrap()).unwrap();
        assert_eq!(response.update_count, -1);
        let column = SqlColumnMetadata { name: "a", column_type: SqlColumnType::Integer, nullable: true };
        assert_eq!(response.row_metadata, Some(vec![column]));
        let error = response.error.unwrap();
        assert_eq!((error.code, error.message, error.suggestion, error.cause_stack_trace), (1000, None, None, None));
        assert_eq!(error.originating_member_id, Uuid::from_u128(0x1111_1111_1111_1111_1111_1111_1111_1111));
    }

    fn column(column_type: SqlColumnType, rows: usize) -> BoxedStrategy<SqlColumn> {
        macro_rules! values {
            ($variant:ident, $strategy:expr) => {
                vec(of($strategy), rows).prop_map(SqlColumn::$variant).boxed()
            };
        }
        let date =
            (any::<i32>(), any::<u8>(), any::<u8>()).prop_map(|(year, month, day)| LocalDate { year, month, day });
        let time = (any::<[u8; 3]>(), any::<u32>()).prop_map(|([hour, minute, second], nano)| LocalTime {
            hour,
            minute,
            second,
            nano,
        });
        let date_time = (date.clone(), time.clone()).prop_map(|(date, time)| LocalDateTime { date, time });
        match column_type {
            SqlColumnType::Varchar => values!(Varchar, any::<String>()),
            SqlColumnType::Boolean => values!(Boolean, any::<bool>()),
            SqlColumnType::TinyInt => values!(TinyInt, any::<i8>()),
            SqlColumnType::SmallInt => values!(SmallInt, any::<i16>()),
            SqlColumnType::Integer => values!(Integer, any::<i32>()),
            SqlColumnType::BigInt => values!(BigInt, any::<i64>()),
            SqlColumnType::Decimal => {
                values!(
                    Decimal,
                    (any::<i128>(), any::<i32>()).prop_map(|(value, scale)| BigDecimal::from_i128(value, scale))
                )
            }
            SqlColumnType::Real => values!(Real, -1e30f32..1e30),
            SqlColumnType::Double => values!(Double, -1e300f64..1e300),
            SqlColumnType::Date => values!(Date, date),
            SqlColumnType::Time => values!(Time, time),
            SqlColumnType::Timestamp => values!(Timestamp, date_time),
            SqlColumnType::TimestampWithTimeZone => values!(
                TimestampWithTimeZone,
                (date_time, any::<i32>())
                    .prop_map(|(date_time, offset_seconds)| OffsetDateTime { date_time, offset_seconds })
            ),
            SqlColumnType::Object => values!(Object, vec(any::<u8>(), 0..12)),
            SqlColumnType::Null => Just(SqlColumn::Null(rows)).boxed(),
            SqlColumnType::Json => values!(Json, "[ -~]{0,8}"),
        }
    }

    fn page() -> impl Strategy<Value = SqlPage> {
        (any::<bool>(), 0usize..20, vec(0usize..16, 0..6)).prop_flat_map(|(last, rows, types)| {
            let columns: Vec<_> = types.into_iter().map(|id| column(SqlColumnType::ALL[id], rows)).collect();
            columns.prop_map(move |columns| SqlPage { last, columns })
        })
    }

    proptest! {
        #[test]
        fn pages_round_trip(page in page()) {
            let bytes = fetch_response(&page);
            let message = Message::parse(&bytes)?;
            let decoded = SqlFetchResponse::decode(&message)?;
            prop_assert_eq!(decoded.row_page.as_ref(), Some(&page));
        }
    }
}
