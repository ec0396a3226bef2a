//! The Hazelcast protocol adapter of the engines' answers: encodes an engine's [`Reply`] (a key
//! operation's, a waiter's, or the merged answer of a request over every partition) as the
//! response the client expects, and names every [`OpError`] with Hazelcast's error code (the only
//! place that does). Each kind of reply has one response codec; the request's response type only
//! heads it. A SQL statement's result is laid out in columns by `sql/pages.rs`, which the SQL
//! service's own answers share. Requests are decoded by their rows, in each structure's
//! `rows.rs`, with the helpers here ([`blob`], [`list`]): fields borrow from the message's
//! buffer, nothing is copied.

use crate::engine::request::{ErrorKind, OpError, PageItems, Replies, Reply};
use crate::net::connection::{ConnectionShared, ReplyTo};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorCode, ErrorHolder};
use ferrogrid_protocol::message::{MessageWriter, Packed};
use ferrogrid_protocol::{Data, MessageType};
use std::borrow::Cow;
use std::sync::Arc;

/// Backup acks a response tells the client to wait for: the member waits for backups itself.
const BACKUP_ACKS: u8 = 0;

pub(crate) fn blob(data: Data<'_>) -> Cow<'_, [u8]> {
    Cow::Borrowed(data.0)
}

pub(crate) fn list(values: Vec<Data<'_>>) -> Vec<Cow<'_, [u8]>> {
    values.into_iter().map(blob).collect()
}

/// Encodes replies as the responses to one request.
#[derive(Debug)]
pub struct HazelcastReply<'o> {
    pub out: &'o mut Vec<u8>,
    pub response_type: MessageType,
    pub correlation_id: i64,
}

/// A member's near-cache invalidation metadata ([`Reply::InvalidationMetadata`]).
fn write_metadata(
    out: &mut Vec<u8>,
    (ty, id): (MessageType, i64),
    sequences: Vec<(&str, Vec<(i32, i64)>)>,
    uuids: Vec<(i32, ferrogrid_protocol::Uuid)>,
) {
    let name_partition_sequence_list = sequences.into_iter().map(|(name, pairs)| (name, Packed(pairs))).collect();
    let partition_uuid_list = Packed(uuids.into_iter().map(|(id, uuid)| (id, Some(uuid))).collect());
    let response = MapFetchNearCacheInvalidationMetadataResponse { name_partition_sequence_list, partition_uuid_list };
    response.encode(out, ty, id, BACKUP_ACKS);
}

/// A ringbuffer's or an event journal's items with their sequences (readMany's layout).
fn write_read_many(out: &mut Vec<u8>, (ty, id): (MessageType, i64), items: Vec<(i64, &[u8])>, next_seq: i64) {
    let sequences = items.iter().map(|(sequence, _)| *sequence).collect();
    RingbufferReadManyResponse {
        read_count: items.len() as i32,
        next_seq,
        items: items.into_iter().map(|(_, item)| Data(item)).collect(),
        item_seqs: Some(Packed(sequences)),
    }
    .encode(out, ty, id, BACKUP_ACKS);
}

impl Replies for HazelcastReply<'_> {
    fn reply(&mut self, reply: Reply<'_>) {
        let (out, ty, id) = (&mut *self.out, self.response_type, self.correlation_id);
        match reply {
            Reply::Empty => {
                EmptyResponse {}.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Bool(response) => {
                BoolResponse { response }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Value(value) => {
                NullableDataResponse { response: value.map(Data) }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Deleted(removed) => {
                DeleteResponse { response: Some(removed) }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::EntryView(view) => {
                let max_idle = view.as_ref().map_or(0, |view| view.max_idle);
                EntryViewResponse { max_idle, response: view }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::EntryViews { cursor, views } => {
                EntryViewsPage { cursor_id: Some(cursor), entry_views: views }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Int(response) => {
                IntResponse { response }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Long(response) => {
                LongResponse { response }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Sequences { oldest, newest } => {
                let response = MapEventJournalSubscribeResponse { oldest_sequence: oldest, newest_sequence: newest };
                response.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::ReadMany { items, next_sequence } => write_read_many(out, (ty, id), items, next_sequence),
            Reply::Values(values) => {
                DataListResponse { response: values.into_iter().map(Data).collect() }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Entries(entries) => {
                let response = entries.into_iter().map(|(key, value)| (Data(key), Data(value))).collect();
                EntryListResponse { response }.encode(out, ty, id, BACKUP_ACKS);
            }
            query @ (Reply::FramedList(_)
            | Reply::Page { .. }
            | Reply::Aggregated(_)
            | Reply::Projected(_)
            | Reply::Fetched { .. }
            | Reply::FetchedQuery { .. }) => {
                write_query_answer(out, ty, id, query);
            }
            Reply::Registration(registration) => {
                UuidResponse { response: Some(registration) }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::Structure(frames) => write_structure(out, ty, id, frames),
            Reply::Counter { value, clock, replica_count } => {
                let response = PnCounterResponse { value, replica_count, replica_timestamps: Packed(clock) };
                response.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::SchemaHolders(holders) => {
                let replicated_members = Packed(holders.into_iter().map(Some).collect());
                SchemaReplicatedResponse { replicated_members }.encode(out, ty, id, BACKUP_ACKS);
            }
            Reply::InvalidationMetadata { sequences, uuids } => write_metadata(out, (ty, id), sequences, uuids),
            Reply::Statement(statement) => crate::sql::pages::write_statement(out, ty, id, &statement),
            Reply::NoAnswer => {}
        }
    }
}

/// Encodes the answers of queries and listings over every partition, and of a map's iteration
/// by partition (of the response type `ty`, to the request `id`).
fn write_query_answer(out: &mut Vec<u8>, ty: MessageType, id: i64, reply: Reply<'_>) {
    match reply {
        Reply::FramedList(frames) => {
            out.reserve(frames.len() + 64);
            let mut writer = MessageWriter::response(out, ty, id, BACKUP_ACKS);
            writer.begin().append_frames(frames).end();
            writer.finish();
        }
        Reply::Page { items, anchors } => {
            let anchors = AnchorList {
                pages: Packed(anchors.iter().map(|(page, _, _)| *page).collect()),
                anchors: anchors.iter().map(|(_, key, value)| (Data(key), Data(value))).collect(),
            };
            match items {
                PageItems::Values(values) => {
                    let response = values.into_iter().map(Data).collect();
                    DataListPageResponse { response, anchors }.encode(out, ty, id, BACKUP_ACKS);
                }
                PageItems::Entries(entries) => {
                    let response = entries.into_iter().map(|(key, value)| (Data(key), Data(value))).collect();
                    EntryListPageResponse { response, anchors }.encode(out, ty, id, BACKUP_ACKS);
                }
            }
        }
        Reply::Aggregated(result) => {
            NullableDataResponse { response: result.as_deref().map(Data) }.encode(out, ty, id, BACKUP_ACKS);
        }
        Reply::Projected(values) => {
            let response = values.into_iter().map(|value| value.map(Data)).collect();
            NullableDataListResponse { response }.encode(out, ty, id, BACKUP_ACKS);
        }
        Reply::Fetched { pointers, keys, values: None } => {
            let keys = keys.into_iter().map(Data).collect();
            MapFetchKeysResponse { iteration_pointers: Packed(pointers), keys }.encode(out, ty, id, BACKUP_ACKS);
        }
        Reply::Fetched { pointers, keys, values: Some(values) } => {
            let entries = keys.into_iter().zip(values).map(|(key, value)| (Data(key), Data(value))).collect();
            let response = MapFetchEntriesResponse { iteration_pointers: Packed(pointers), entries };
            response.encode(out, ty, id, BACKUP_ACKS);
        }
        Reply::FetchedQuery { pointers, results } => {
            let results = results.iter().map(|result| result.as_deref().map(Data)).collect();
            let response = MapFetchWithQueryResponse { results, iteration_pointers: Packed(pointers) };
            response.encode(out, ty, id, BACKUP_ACKS);
        }
        other => unreachable!("not a query's answer: {other:?}"),
    }
}

/// Encodes `reply` for a waiting request: its connection and the response bytes.
pub fn encode_answer(reply_to: &ReplyTo, reply: Reply<'_>) -> (Arc<ConnectionShared>, Vec<u8>) {
    encode_outcome(reply_to, Ok(reply))
}

/// Encodes a waiting request's answer or failure: its connection and the response bytes.
pub fn encode_outcome(reply_to: &ReplyTo, outcome: Result<Reply<'_>, OpError>) -> (Arc<ConnectionShared>, Vec<u8>) {
    let mut out = Vec::new();
    let (response_type, correlation_id) = (reply_to.response_type, reply_to.correlation_id);
    match outcome {
        Ok(reply) => HazelcastReply { out: &mut out, response_type, correlation_id }.reply(reply),
        Err(failure) => write_error(&mut out, correlation_id, &failure),
    }
    (reply_to.connection.clone(), out)
}

/// A response whose one field is a structure's frames as they came, or null.
fn write_structure(out: &mut Vec<u8>, ty: MessageType, id: i64, frames: Option<&[u8]>) {
    let mut writer = MessageWriter::response(out, ty, id, BACKUP_ACKS);
    match frames {
        Some(frames) => writer.append_frames(frames),
        None => writer.null(),
    };
    writer.finish();
}

/// The Hazelcast error code (and so the exception clients raise) of each kind of failure.
pub fn error_code(kind: ErrorKind) -> ErrorCode {
    match kind {
        ErrorKind::NullArgument => error::NULL_POINTER,
        ErrorKind::IllegalArgument => error::ILLEGAL_ARGUMENT,
        ErrorKind::NotLockOwner => error::ILLEGAL_MONITOR_STATE,
        ErrorKind::PartitionMigrating => error::PARTITION_MIGRATING,
        ErrorKind::NoDataMember => error::NO_DATA_MEMBER,
        ErrorKind::IllegalState => error::ILLEGAL_STATE,
        ErrorKind::Refused => error::HAZELCAST,
        ErrorKind::StaleSequence => error::STALE_SEQUENCE,
        ErrorKind::Unsupported => error::UNSUPPORTED_OPERATION,
        ErrorKind::ClassCast => error::CLASS_CAST,
        ErrorKind::Destroyed => error::DISTRIBUTED_OBJECT_DESTROYED,
        ErrorKind::IndexOutOfBounds => error::INDEX_OUT_OF_BOUNDS,
        ErrorKind::TargetNotReplica => error::TARGET_NOT_REPLICA,
        ErrorKind::ConsistencyLost => error::CONSISTENCY_LOST,
        ErrorKind::TargetNotMember => error::TARGET_NOT_MEMBER,
        ErrorKind::StackOverflow => error::STACK_OVERFLOW,
        ErrorKind::Query => error::QUERY,
        ErrorKind::QueryResultSizeExceeded => error::QUERY_RESULT_SIZE_EXCEEDED,
        ErrorKind::Serialization => error::HAZELCAST_SERIALIZATION,
        ErrorKind::SplitBrainProtection => error::SPLIT_BRAIN_PROTECTION,
        ErrorKind::InvalidConfiguration => error::INVALID_CONFIGURATION,
        ErrorKind::Transaction => error::TRANSACTION,
        ErrorKind::TransactionTimedOut => error::TRANSACTION_TIMED_OUT,
        ErrorKind::StaleTaskId => error::STALE_TASK_ID,
        ErrorKind::StaleTask => error::STALE_TASK,
        ErrorKind::RejectedExecution => error::REJECTED_EXECUTION,
        ErrorKind::CacheNotExists => error::CACHE_NOT_EXISTS,
        ErrorKind::CacheLoader => error::CACHE_LOADER,
        ErrorKind::CacheWriter => error::CACHE_WRITER,
        // Not in the protocol's table: sent as Hazelcast sends them, code 0 with the class name.
        ErrorKind::NumberFormat => ErrorCode { code: 0, class_name: "java.lang.NumberFormatException" },
        ErrorKind::PatternSyntax => ErrorCode { code: 0, class_name: "java.util.regex.PatternSyntaxException" },
        ErrorKind::DateTimeParse => ErrorCode { code: 0, class_name: "java.time.format.DateTimeParseException" },
        ErrorKind::Arithmetic => ErrorCode { code: 0, class_name: "java.lang.ArithmeticException" },
    }
}

/// The kind among `kinds` that [`error_code`] names `code` and `class_name` (how another member
/// sends a failure back with its share), or `Refused` when none is.
pub fn error_kind(kinds: &[ErrorKind], code: i32, class_name: &str) -> ErrorKind {
    let names = |kind: &ErrorKind| {
        let named = error_code(*kind);
        named.code == code && named.class_name == class_name
    };
    kinds.iter().copied().find(names).unwrap_or(ErrorKind::Refused)
}

/// Replaces what an operation wrote from `start` on with the Error response for `failure`
/// (an operation that failed after answering part of its work answers only the error).
pub fn replace_with_error(out: &mut Vec<u8>, start: usize, correlation_id: i64, failure: &OpError) {
    out.truncate(start);
    write_error(out, correlation_id, failure);
}

/// Appends the Error response for `failure`. An empty message is sent as null, as Java sends
/// an exception that has none (a NullPointerException the JDK throws).
pub fn write_error(out: &mut Vec<u8>, correlation_id: i64, failure: &OpError) {
    let message = (!failure.message.is_empty()).then_some(failure.message.as_str());
    let holder = ErrorHolder { code: error_code(failure.kind), message };
    write_error_response(out, correlation_id, &[holder]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::ErrorKind;
    use ferrogrid_protocol::Message;

    #[test]
    fn replies_and_errors_encode_as_hazelcast_answers() {
        let mut out = Vec::new();
        let mut sink = HazelcastReply { out: &mut out, response_type: MapGet::RESPONSE, correlation_id: 77 };
        sink.reply(Reply::Value(Some(b"v")));
        let message = Message::parse(&out).unwrap();
        assert_eq!((message.message_type(), message.correlation_id()), (MapGet::RESPONSE, 77));
        assert_eq!(NullableDataResponse::decode(&message).unwrap().response, Some(Data(b"v")));
        let mut out = Vec::new();
        write_error(&mut out, 5, &OpError::new(ErrorKind::NotLockOwner, "not yours"));
        let chain = error::read_error_response(&Message::parse(&out).unwrap()).unwrap();
        assert_eq!((chain[0].code, chain[0].message.as_deref()), (26, Some("not yours")));
    }

    /// `reply` as the response to request 9 of type MapKeySet's response.
    fn encoded(reply: Reply<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        HazelcastReply { out: &mut out, response_type: MapKeySet::RESPONSE, correlation_id: 9 }.reply(reply);
        out
    }

    #[test]
    fn the_answers_of_requests_over_every_partition_encode_as_hazelcast_responses() {
        let mut frames = Vec::new();
        ferrogrid_protocol::message::write_frame(&mut frames, 0, b"a");
        ferrogrid_protocol::message::write_frame(&mut frames, 0, b"bb");
        let listed = encoded(Reply::FramedList(&frames));
        assert_eq!(listed, encoded(Reply::Values(vec![b"a", b"bb"])), "framed by the shares, or here: the same bytes");
        let anchors = vec![(0, &b"k"[..], &b"v"[..])];
        let page = encoded(Reply::Page { items: PageItems::Values(vec![b"k"]), anchors });
        let page = DataListPageResponse::decode(&Message::parse(&page).unwrap()).unwrap();
        assert_eq!(page.response, vec![Data(b"k")]);
        assert_eq!((page.anchors.pages.0, page.anchors.anchors), (vec![0], vec![(Data(b"k"), Data(b"v"))]));
        let aggregated = encoded(Reply::Aggregated(Some(b"7".to_vec())));
        assert_eq!(
            NullableDataResponse::decode(&Message::parse(&aggregated).unwrap()).unwrap().response,
            Some(Data(b"7"))
        );
        let projected = encoded(Reply::Projected(vec![Some(b"p"), None]));
        let projected = NullableDataListResponse::decode(&Message::parse(&projected).unwrap()).unwrap();
        assert_eq!(projected.response, vec![Some(Data(b"p")), None]);
        let id = ferrogrid_protocol::Uuid { most: 1, least: 2 };
        assert_eq!(
            UuidResponse::decode(&Message::parse(&encoded(Reply::Registration(id))).unwrap()).unwrap().response,
            Some(id)
        );
        assert!(encoded(Reply::NoAnswer).is_empty(), "no answer is no bytes");
        let count = encoded(Reply::Statement(crate::engine::request::Statement::UpdateCount(0)));
        let count = SqlExecuteResponse::decode(&Message::parse(&count).unwrap()).unwrap();
        assert_eq!((count.update_count, count.error.is_none()), (0, true));
    }

    #[test]
    fn a_query_failure_is_named_as_hazelcast_names_it_and_read_back_from_that_name() {
        let named = error_code(ErrorKind::NumberFormat);
        assert_eq!((named.code, named.class_name), (0, "java.lang.NumberFormatException"));
        let kinds = crate::engine::map::query::QUERY_FAILURES;
        for kind in kinds {
            let named = error_code(kind);
            assert_eq!(error_kind(&kinds, named.code, named.class_name), kind);
        }
        assert_eq!(error_kind(&kinds, 0, "java.lang.Error"), ErrorKind::Refused, "a name no kind has");
    }
}
