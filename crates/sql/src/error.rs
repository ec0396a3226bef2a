//! What a statement fails with: Hazelcast's `SqlErrorCode` and the message its member sends.

/// Hazelcast's `SqlErrorCode` values (the `code` of the `SqlError` a client receives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Generic,
    /// The client closed the statement (Sql.Close) while it ran.
    CancelledByUser,
    Timeout,
    /// Partitions moved while a statement ran and it could not read all it needed.
    PartitionDistribution,
    /// Text that is not a statement, and statements that do not validate (unknown objects,
    /// columns and functions, type mismatches): Hazelcast reports both as parsing errors.
    Parsing,
    ObjectNotFound,
    /// A value that cannot be converted, read or computed (overflow, a bad cast).
    DataException,
}

impl Code {
    /// The number on the wire.
    pub fn value(self) -> i32 {
        match self {
            Code::Generic => -1,
            Code::CancelledByUser => 1003,
            Code::Timeout => 1004,
            Code::PartitionDistribution => 1005,
            Code::Parsing => 1008,
            Code::ObjectNotFound => 1010,
            Code::DataException => 2000,
        }
    }

    /// The code of a number on the wire (an unknown one is [`Code::Generic`]).
    pub fn from_value(value: i32) -> Code {
        [
            Code::CancelledByUser,
            Code::Timeout,
            Code::PartitionDistribution,
            Code::Parsing,
            Code::ObjectNotFound,
            Code::DataException,
        ]
        .into_iter()
        .find(|code| code.value() == value)
        .unwrap_or(Code::Generic)
    }
}

/// A statement's failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SqlError {
    pub code: Code,
    pub message: String,
    /// What the client could do instead (Hazelcast sends one for a few errors).
    pub suggestion: Option<String>,
}

impl SqlError {
    pub fn new(code: Code, message: impl Into<String>) -> SqlError {
        SqlError { code, message: message.into(), suggestion: None }
    }

    pub fn parsing(message: impl Into<String>) -> SqlError {
        SqlError::new(Code::Parsing, message)
    }

    pub fn data(message: impl Into<String>) -> SqlError {
        SqlError::new(Code::DataException, message)
    }

    pub fn generic(message: impl Into<String>) -> SqlError {
        SqlError::new(Code::Generic, message)
    }
}

pub type Result<T, E = SqlError> = std::result::Result<T, E>;
