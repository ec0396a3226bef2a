//! What can go wrong for a caller of the client.

use std::net::SocketAddr;
use std::time::Duration;

use ferrogrid_protocol::{DecodeError, MessageType};

/// Why an authentication was refused (the status byte of the authentication response).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthenticationStatus {
    /// Status 1: wrong cluster name, or wrong (or unexpected) credentials.
    CredentialsFailed,
    /// Status 2.
    SerializationVersionMismatch,
    /// Status 3: the cluster does not allow this client.
    NotAllowedInCluster,
    /// Any other status.
    Other(u8),
}

impl AuthenticationStatus {
    pub fn from_status(status: u8) -> AuthenticationStatus {
        match status {
            1 => AuthenticationStatus::CredentialsFailed,
            2 => AuthenticationStatus::SerializationVersionMismatch,
            3 => AuthenticationStatus::NotAllowedInCluster,
            other => AuthenticationStatus::Other(other),
        }
    }
}

impl std::fmt::Display for AuthenticationStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthenticationStatus::CredentialsFailed => {
                write!(f, "credentials failed (wrong cluster name, username or password)")
            }
            AuthenticationStatus::SerializationVersionMismatch => write!(f, "serialization version mismatch"),
            AuthenticationStatus::NotAllowedInCluster => write!(f, "client not allowed in the cluster"),
            AuthenticationStatus::Other(status) => write!(f, "unknown status {status}"),
        }
    }
}

/// An expected failure of a client operation.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// No configured address accepted a connection within the connect timeout.
    #[error("could not connect to any of {addresses:?} within {timeout:?}: {last}")]
    ConnectFailed { addresses: Vec<SocketAddr>, timeout: Duration, last: Box<ClientError> },
    /// The member answered the authentication with a failure status.
    #[error("member {address} refused authentication to cluster {cluster_name:?}: {status}")]
    Authentication { address: SocketAddr, cluster_name: String, status: AuthenticationStatus },
    /// The member's answer breaks an assumption the client relies on (partition count changed,
    /// a response of the wrong type, …).
    #[error("member {address} is unusable: {reason}")]
    Incompatible { address: SocketAddr, reason: String },
    /// The member answered with an Error response the client does not retry.
    #[error("server error {code} ({class_name}): {}", message.as_deref().unwrap_or("no message"))]
    Server { code: i32, class_name: String, message: Option<String> },
    /// The connection closed while the request was in flight; it may or may not have been
    /// applied, so it is not retried (only read-only requests are).
    #[error("connection to {address} closed with the request in flight")]
    ConnectionClosed { address: SocketAddr },
    /// No connection was open to send the request on.
    #[error("no connection to the cluster is open")]
    NoConnection,
    /// The invocation did not complete within the invocation timeout.
    #[error("invocation timed out after {elapsed:?} (timeout {timeout:?}); last problem: {last}")]
    Timeout { elapsed: Duration, timeout: Duration, last: Box<ClientError> },
    /// No response arrived before the invocation timeout (the request is still pending).
    #[error("no response")]
    NoResponse,
    #[error("response of type {actual} to a request expecting {expected}")]
    UnexpectedResponse { expected: MessageType, actual: MessageType },
    #[error("I/O error with {address}: {source}")]
    Io { address: SocketAddr, source: std::io::Error },
    /// A message from the member did not decode.
    #[error("malformed message: {0}")]
    Protocol(#[from] DecodeError),
    #[error("the client is shut down")]
    Shutdown,
}

impl ClientError {
    /// The error code of a server error (also behind a timeout), for callers that count them.
    pub fn server_code(&self) -> Option<i32> {
        match self {
            ClientError::Server { code, .. } => Some(*code),
            ClientError::Timeout { last, .. } => last.server_code(),
            _ => None,
        }
    }
}
