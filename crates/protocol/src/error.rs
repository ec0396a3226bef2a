//! Hazelcast error codes and the Error response (`0x000000`).
//!
//! Clients map `code` to an exception type and decide from it whether to retry (§3.4 of the
//! spec), so every error ferrogrid sends names the Java class the real member would name.

use crate::message::MessageWriter;
use crate::types::MessageType;

pub const ERROR_RESPONSE: MessageType = MessageType(0x000000);

/// An error code with the Java class name the member puts beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode {
    pub code: i32,
    pub class_name: &'static str,
}

macro_rules! error_codes {
    ($($name:ident = $code:literal, $class:literal;)*) => {
        $(pub const $name: ErrorCode = ErrorCode { code: $code, class_name: $class };)*
    };
}

error_codes! {
    AUTHENTICATION = 3, "com.hazelcast.client.AuthenticationException";
    CACHE_LOADER = 5, "javax.cache.integration.CacheLoaderException";
    CACHE_NOT_EXISTS = 6, "com.hazelcast.cache.CacheNotExistsException";
    CACHE_WRITER = 7, "javax.cache.integration.CacheWriterException";
    CLASS_CAST = 10, "java.lang.ClassCastException";
    DISTRIBUTED_OBJECT_DESTROYED = 14, "com.hazelcast.spi.exception.DistributedObjectDestroyedException";
    HAZELCAST = 18, "com.hazelcast.core.HazelcastException";
    HAZELCAST_SERIALIZATION = 21, "com.hazelcast.nio.serialization.HazelcastSerializationException";
    INSTANCE_NOT_ACTIVE = 19, "com.hazelcast.core.HazelcastInstanceNotActiveException";
    ILLEGAL_ARGUMENT = 23, "java.lang.IllegalArgumentException";
    ILLEGAL_MONITOR_STATE = 26, "java.lang.IllegalMonitorStateException";
    ILLEGAL_STATE = 27, "java.lang.IllegalStateException";
    REJECTED_EXECUTION = 44, "java.util.concurrent.RejectedExecutionException";
    INVALID_CONFIGURATION = 32, "com.hazelcast.config.InvalidConfigurationException";
    INDEX_OUT_OF_BOUNDS = 29, "java.lang.IndexOutOfBoundsException";
    MEMBER_LEFT = 33, "com.hazelcast.core.MemberLeftException";
    NULL_POINTER = 37, "java.lang.NullPointerException";
    OPERATION_TIMEOUT = 38, "com.hazelcast.core.OperationTimeoutException";
    PARTITION_MIGRATING = 39, "com.hazelcast.spi.exception.PartitionMigratingException";
    QUERY = 40, "com.hazelcast.query.QueryException";
    QUERY_RESULT_SIZE_EXCEEDED = 41, "com.hazelcast.map.QueryResultSizeExceededException";
    SPLIT_BRAIN_PROTECTION = 42, "com.hazelcast.splitbrainprotection.SplitBrainProtectionException";
    RETRYABLE = 46, "com.hazelcast.spi.exception.RetryableHazelcastException";
    STALE_SEQUENCE = 51, "com.hazelcast.ringbuffer.StaleSequenceException";
    TARGET_DISCONNECTED = 52, "com.hazelcast.spi.exception.TargetDisconnectedException";
    TARGET_NOT_MEMBER = 53, "com.hazelcast.spi.exception.TargetNotMemberException";
    TRANSACTION = 56, "com.hazelcast.transaction.TransactionException";
    TRANSACTION_TIMED_OUT = 58, "com.hazelcast.transaction.TransactionTimedOutException";
    UNSUPPORTED_OPERATION = 61, "java.lang.UnsupportedOperationException";
    WRONG_TARGET = 62, "com.hazelcast.spi.exception.WrongTargetException";
    NO_DATA_MEMBER = 67, "com.hazelcast.partition.NoDataMemberInClusterException";
    STACK_OVERFLOW = 73, "java.lang.StackOverflowError";
    STALE_TASK_ID = 76, "com.hazelcast.durableexecutor.StaleTaskIdException";
    STALE_TASK = 78, "com.hazelcast.scheduledexecutor.StaleTaskException";
    TARGET_NOT_REPLICA = 82, "com.hazelcast.crdt.TargetNotReplicaException";
    CONSISTENCY_LOST = 84, "com.hazelcast.core.ConsistencyLostException";
}

/// One exception of a cause chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorHolder<'a> {
    pub code: ErrorCode,
    pub message: Option<&'a str>,
}

/// Appends an Error response carrying `chain` (item 0 the error, item 1 its cause, …),
/// each with an empty stack trace.
pub fn write_error_response(out: &mut Vec<u8>, correlation_id: i64, chain: &[ErrorHolder<'_>]) {
    let mut writer = MessageWriter::response(out, ERROR_RESPONSE, correlation_id, 0);
    writer.begin();
    for holder in chain {
        writer.begin();
        writer.open_frame(0).fixed(&holder.code.code);
        writer.frame(holder.code.class_name.as_bytes());
        match holder.message {
            Some(message) => writer.frame(message.as_bytes()),
            None => writer.null(),
        };
        writer.begin().end();
        writer.end();
    }
    writer.end();
    writer.finish();
}

/// A decoded error holder (for tests and the Rust client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedError {
    pub code: i32,
    pub class_name: String,
    pub message: Option<String>,
}

/// Reads an Error response's cause chain.
pub fn read_error_response(message: &crate::Message<'_>) -> Result<Vec<DecodedError>, crate::DecodeError> {
    let mut reader = message.reader();
    reader.begin()?;
    let mut chain = Vec::new();
    while !reader.at_end()? {
        reader.begin()?;
        let fixed = reader.value_frame("error code")?;
        let code = crate::message::FixedReader::new(fixed).read::<i32>()?;
        let class_name = reader.string()?.to_owned();
        let message = if reader.next_is_null() { None } else { Some(reader.string()?.to_owned()) };
        reader.skip_to_end()?;
        chain.push(DecodedError { code, class_name, message });
    }
    Ok(chain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    #[test]
    fn error_response_round_trips() {
        let mut out = Vec::new();
        write_error_response(
            &mut out,
            7,
            &[
                ErrorHolder { code: RETRYABLE, message: Some("retry") },
                ErrorHolder { code: AUTHENTICATION, message: None },
            ],
        );
        let message = Message::parse(&out).unwrap();
        assert_eq!(message.message_type(), ERROR_RESPONSE);
        assert_eq!(message.correlation_id(), 7);
        let chain = read_error_response(&message).unwrap();
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[0].code, 46);
        assert_eq!(chain[0].message.as_deref(), Some("retry"));
        assert_eq!(chain[1].class_name, "com.hazelcast.client.AuthenticationException");
        assert_eq!(chain[1].message, None);
    }

    #[test]
    fn matches_the_minimal_error_layout_of_the_spec() {
        let mut out = Vec::new();
        write_error_response(&mut out, 8, &[ErrorHolder { code: UNSUPPORTED_OPERATION, message: Some("m") }]);
        let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert!(hex.starts_with("1300000000c0000000000800000000000000000600000000100600000000100a00000000003d000000"));
        assert!(hex.ends_with("060000000010060000000008060000000008060000000028"));
    }
}
