//! Every bound the member enforces on frames, messages, buffers, queues and connections.
//!
//! The defaults are generous for a trusted network; `Limits::validate` keeps them nonzero and
//! mutually consistent (a frame never larger than a message, the unauthenticated bound never larger
//! than the general one).

use crate::error::{invalid, ConfigError};

const MEBIBYTE: u32 = 1024 * 1024;

/// Smallest accepted `max_unauthenticated_message_bytes`: an authentication request with a
/// cluster name, credentials and client metadata must fit.
pub const MIN_UNAUTHENTICATED_MESSAGE_BYTES: u32 = 1024;

/// Smallest accepted `max_frame_bytes`, so that any real message header fits in one frame.
pub const MIN_FRAME_BYTES: u32 = 1024;

/// Largest accepted `max_frame_bytes`: the frame length on the wire is a signed 32-bit integer.
pub const MAX_FRAME_BYTES: u32 = i32::MAX as u32;

/// Resource bounds. All are per member unless the field says otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest accepted frame, header included; longer is a protocol error and closes the
    /// connection. `ferrogrid.limits.max-frame-bytes`, default 64 MiB, in
    /// `MIN_FRAME_BYTES..=MAX_FRAME_BYTES` and at most `max_message_bytes`.
    pub max_frame_bytes: u32,
    /// Longest accepted message, all its frames and fragments together.
    /// `ferrogrid.limits.max-message-bytes`, default 256 MiB.
    pub max_message_bytes: u32,
    /// Longest message accepted before a connection has authenticated.
    /// `hazelcast.properties."hazelcast.client.protocol.max.message.bytes"`, default 4096,
    /// in `MIN_UNAUTHENTICATED_MESSAGE_BYTES..=max_message_bytes`.
    pub max_unauthenticated_message_bytes: u32,
    /// Outbound bytes pending on one connection before the member stops reading from it; on a
    /// link to another member, before the member stops reading its clients.
    /// `ferrogrid.limits.connection-write-buffer-bytes`, default 64 MiB, nonzero.
    pub connection_write_buffer_bytes: u32,
    /// Open client connections accepted at once. `ferrogrid.limits.max-connections`,
    /// default 10 000, nonzero.
    pub max_connections: u32,
    /// Capacity of each reactor's inbound hand-off queue.
    /// `ferrogrid.limits.reactor-queue-capacity`, default 65 536, nonzero.
    pub reactor_queue_capacity: u32,
    /// Fragmented messages being reassembled at once on one connection.
    /// `ferrogrid.limits.max-pending-fragmented-messages`, default 64, nonzero.
    pub max_pending_fragmented_messages: u32,
    /// Requests of one connection handed to other reactors and not yet answered; past it the
    /// member reads no more from that connection until answers go out.
    /// `ferrogrid.limits.max-in-flight-per-connection`, default 1 024, nonzero.
    pub max_in_flight_per_connection: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_frame_bytes: 64 * MEBIBYTE,
            max_message_bytes: 256 * MEBIBYTE,
            max_unauthenticated_message_bytes: 4096,
            connection_write_buffer_bytes: 64 * MEBIBYTE,
            max_connections: 10_000,
            reactor_queue_capacity: 65_536,
            max_pending_fragmented_messages: 64,
            max_in_flight_per_connection: 1024,
        }
    }
}

impl Limits {
    /// Checks every bound documented on the fields.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let nonzero = [
            ("max-message-bytes", self.max_message_bytes),
            ("connection-write-buffer-bytes", self.connection_write_buffer_bytes),
            ("max-connections", self.max_connections),
            ("reactor-queue-capacity", self.reactor_queue_capacity),
            ("max-pending-fragmented-messages", self.max_pending_fragmented_messages),
            ("max-in-flight-per-connection", self.max_in_flight_per_connection),
        ];
        if let Some((name, _)) = nonzero.iter().find(|(_, value)| *value == 0) {
            let key = format!("ferrogrid.limits.{name}");
            return Err(invalid(key, "expected at least 1, got 0"));
        }
        let (frame, message) = (self.max_frame_bytes, self.max_message_bytes);
        let frame_key = "ferrogrid.limits.max-frame-bytes";
        if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&frame) {
            let expected = format!("expected {MIN_FRAME_BYTES}..={MAX_FRAME_BYTES}, got {frame}");
            return Err(invalid(frame_key, expected));
        }
        if frame > message {
            let expected = format!("expected at most max-message-bytes ({message}), got {frame}");
            return Err(invalid(frame_key, expected));
        }
        let unauthenticated = self.max_unauthenticated_message_bytes;
        let minimum = MIN_UNAUTHENTICATED_MESSAGE_BYTES;
        if !(minimum..=message).contains(&unauthenticated) {
            let key = "hazelcast.properties.hazelcast.client.protocol.max.message.bytes";
            let expected =
                format!("expected {minimum}..={message} (ferrogrid.limits.max-message-bytes), got {unauthenticated}");
            return Err(invalid(key, expected));
        }
        Ok(())
    }
}
