//! Sending a request and getting its response: routing, retries, timeouts.
//!
//! An [`Invocation`] is encoded once; each attempt picks a connection from scratch (partition
//! owner in smart mode, else any open connection), takes a fresh correlation id and waits for
//! the response. The rules are the official clients' (client-protocol.md §3.4):
//! - an Error response with a retryable code ([`RETRYABLE_CODES`]) is retried; code 52
//!   (target disconnected) only for read-only requests; any other code is final;
//! - a request that was never queued (no connection, or it had just closed) is retried;
//! - a request lost with its connection is retried only if read-only (`retryable`), because
//!   a write may have been applied;
//! - retries pause 100 ms, doubling to 1 s, until the deadline (the invocation timeout from the
//!   first send), then fail with [`ClientError::Timeout`] carrying the last problem;
//! - unlike the official clients, waiting for a response is bounded by the same deadline, so a
//!   caller never waits longer than the invocation timeout;
//! - an invocation pinned to one connection (authentication-time requests, listener
//!   registration, ping) is never retried.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use ferrogrid_protocol::error::{read_error_response, ERROR_RESPONSE};
use ferrogrid_protocol::{Message, MessageType, PartitionId};
use tokio::time::{timeout_at, Instant};

use crate::connection::{Connection, MESSAGE_TYPE_OFFSET, REQUEST_HEADER_BYTES};
use crate::error::ClientError;
use crate::shared::{Inner, State};

/// Error codes retried for every request: CallerNotMember, InstanceNotActive, MemberLeft,
/// PartitionMigrating, RetryableHazelcast, RetryableIO, TargetNotMember, WrongTarget,
/// TargetNotReplica, CannotReplicate.
pub const RETRYABLE_CODES: [i32; 10] = [8, 19, 33, 39, 46, 47, 53, 62, 82, 90];
/// TargetDisconnected: retried for read-only requests only.
pub const TARGET_DISCONNECTED: i32 = 52;
/// First pause before a retry.
pub const INITIAL_RETRY_PAUSE: Duration = Duration::from_millis(100);
/// Longest pause between retries.
pub const MAX_RETRY_PAUSE: Duration = Duration::from_secs(1);

/// Where an invocation goes.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// The owner of this partition (smart routing), else any connection.
    Partition(PartitionId),
    /// Any open connection.
    Any,
    /// This connection only; not retried.
    Connection(Arc<Connection>),
}

/// One request, encoded once with correlation id 0 (stamped per attempt by the writer).
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    pub request: Arc<Vec<u8>>,
    pub target: Target,
    /// Read-only: safe to send again after its connection was lost.
    pub retryable: bool,
    /// A correlation id chosen by the caller (it registered an event handler under it).
    pub correlation_id: Option<i64>,
}

impl Invocation {
    pub fn new(request: Vec<u8>, target: Target, retryable: bool) -> Invocation {
        assert!(request.len() >= REQUEST_HEADER_BYTES, "an encoded request has a 16-byte header");
        Invocation { request: Arc::new(request), target, retryable, correlation_id: None }
    }

    /// The response type a successful answer must have.
    fn expected_response(&self) -> MessageType {
        let bytes = &self.request[MESSAGE_TYPE_OFFSET..MESSAGE_TYPE_OFFSET + 4];
        MessageType(i32::from_le_bytes(bytes.try_into().expect("4 bytes"))).response()
    }
}

/// Whether an Error response with `code` is worth another attempt.
pub fn is_retryable_error(code: i32, read_only: bool) -> bool {
    RETRYABLE_CODES.contains(&code) || (code == TARGET_DISCONNECTED && read_only)
}

/// Pauses between retries: 100 ms doubling to 1 s.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: INITIAL_RETRY_PAUSE }
    }
}

impl Backoff {
    pub fn next_pause(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(MAX_RETRY_PAUSE);
        pause
    }
}

/// How one attempt ended without a usable response.
#[derive(Debug)]
enum Failure {
    Retry(ClientError),
    Final(ClientError),
}

impl Inner {
    /// Sends `invocation` until it succeeds, fails for good, or the invocation timeout passes.
    pub(crate) async fn invoke(&self, invocation: &Invocation) -> Result<Vec<u8>, ClientError> {
        self.invoke_until(invocation, Instant::now() + self.config.invocation_timeout).await
    }

    /// [`Inner::invoke`] with an explicit deadline. Returns the whole response message.
    pub(crate) async fn invoke_until(
        &self,
        invocation: &Invocation,
        deadline: Instant,
    ) -> Result<Vec<u8>, ClientError> {
        let started = Instant::now();
        let mut backoff = Backoff::default();
        loop {
            if self.is_shut_down() {
                return Err(ClientError::Shutdown);
            }
            let problem = match timeout_at(deadline, self.attempt(invocation)).await {
                Ok(Ok(response)) => return Ok(response),
                Ok(Err(Failure::Final(error))) => return Err(error),
                Ok(Err(Failure::Retry(problem))) => problem,
                Err(_elapsed) => ClientError::NoResponse,
            };
            if matches!(invocation.target, Target::Connection(_)) {
                return Err(problem);
            }
            let pause = backoff.next_pause();
            if Instant::now() + pause >= deadline {
                let timeout = deadline.saturating_duration_since(started);
                return Err(ClientError::Timeout { elapsed: started.elapsed(), timeout, last: Box::new(problem) });
            }
            // A missing connection is the maintenance task's to open; tell it now.
            self.signals.wake.notify_one();
            tokio::time::sleep(pause).await;
        }
    }

    /// One send and the wait for its answer; the caller bounds the time it takes.
    async fn attempt(&self, invocation: &Invocation) -> Result<Vec<u8>, Failure> {
        let connection = self.route(&invocation.target).ok_or(Failure::Retry(ClientError::NoConnection))?;
        let address = connection.address;
        let correlation_id = invocation.correlation_id.unwrap_or_else(|| self.next_correlation_id());
        let Ok(reply) = connection.call(correlation_id, &invocation.request).await else {
            return Err(Failure::Retry(ClientError::ConnectionClosed { address }));
        };
        drop(connection);
        let response = match reply.await {
            Ok(response) => response,
            Err(_lost) if invocation.retryable => {
                return Err(Failure::Retry(ClientError::ConnectionClosed { address }))
            }
            Err(_lost) => return Err(Failure::Final(ClientError::ConnectionClosed { address })),
        };
        classify(invocation, address, response)
    }

    /// The connection for `target`, skipping closed ones; None when none is open.
    pub(crate) fn route(&self, target: &Target) -> Option<Arc<Connection>> {
        let state = self.state.read();
        match target {
            Target::Connection(connection) => (!connection.is_closed()).then(|| connection.clone()),
            Target::Partition(partition) if self.config.smart_routing => {
                let owner = state.view.owner(*partition);
                let connection = owner.and_then(|owner| {
                    state.connections.iter().find(|c| c.member_uuid == owner && !c.is_closed()).cloned()
                });
                connection.or_else(|| self.any_connection(&state))
            }
            Target::Partition(_) | Target::Any => self.any_connection(&state),
        }
    }

    /// Round-robin over the open connections.
    fn any_connection(&self, state: &State) -> Option<Arc<Connection>> {
        let count = state.connections.len();
        let first = self.round_robin.fetch_add(1, Ordering::Relaxed);
        (0..count).map(|offset| &state.connections[(first + offset) % count]).find(|c| !c.is_closed()).cloned()
    }
}

/// Sorts a response into success, a retryable error, or a final error.
fn classify(invocation: &Invocation, address: SocketAddr, response: Vec<u8>) -> Result<Vec<u8>, Failure> {
    let message = Message::parse(&response).map_err(|error| Failure::Final(error.into()))?;
    let actual = message.message_type();
    if actual == ERROR_RESPONSE {
        let chain = read_error_response(&message).map_err(|error| Failure::Final(error.into()))?;
        let first = chain.into_iter().next();
        let (code, class_name, message) = first.map(|e| (e.code, e.class_name, e.message)).unwrap_or_default();
        let error = ClientError::Server { code, class_name, message };
        return Err(if is_retryable_error(code, invocation.retryable) {
            Failure::Retry(error)
        } else {
            Failure::Final(error)
        });
    }
    let expected = invocation.expected_response();
    if actual != expected {
        tracing::warn!(%address, %expected, %actual, "response of an unexpected type");
        return Err(Failure::Final(ClientError::UnexpectedResponse { expected, actual }));
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_the_codes_of_the_spec() {
        for code in [8, 19, 33, 39, 46, 47, 53, 62, 82, 90] {
            assert!(is_retryable_error(code, false), "{code}");
        }
        assert!(is_retryable_error(52, true));
        assert!(!is_retryable_error(52, false));
        for code in [0, 3, 18, 23, 37, 61] {
            assert!(!is_retryable_error(code, true), "{code}");
        }
    }

    #[test]
    fn backoff_doubles_up_to_a_second() {
        let mut backoff = Backoff::default();
        let pauses: Vec<u64> = (0..6).map(|_| backoff.next_pause().as_millis() as u64).collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1000, 1000]);
    }
}
