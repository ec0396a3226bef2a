//! What the proxies (`map.rs`, `queue.rs`, `topic.rs`) share: reading a response message into a
//! typed value, and durations as the wire's whole milliseconds.

use std::time::Duration;

use ferrogrid_protocol::codec::NullableDataResponse;
use ferrogrid_protocol::{DecodeError, Message};

use crate::error::ClientError;

/// A TTL or timeout in whole milliseconds for the wire, rounding a non-zero sub-millisecond
/// one up (zero keeps its meaning: a TTL of forever, a timeout of "do not wait").
pub(crate) fn whole_millis(duration: Duration) -> i64 {
    match i64::try_from(duration.as_millis()) {
        Ok(0) if !duration.is_zero() => 1,
        Ok(milliseconds) => milliseconds,
        Err(_) => i64::MAX,
    }
}

/// Decodes a response message with `read`.
pub(crate) fn decode<T>(
    response: &[u8],
    read: impl for<'a> FnOnce(&Message<'a>) -> Result<T, DecodeError>,
) -> Result<T, ClientError> {
    let message = Message::parse(response)?;
    Ok(read(&message)?)
}

pub(crate) fn nullable_data(message: &Message<'_>) -> Result<Option<Vec<u8>>, DecodeError> {
    Ok(NullableDataResponse::decode(message)?.response.map(|data| data.0.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_rounds_to_whole_milliseconds() {
        assert_eq!(whole_millis(Duration::ZERO), 0);
        assert_eq!(whole_millis(Duration::from_micros(10)), 1);
        assert_eq!(whole_millis(Duration::from_millis(1500)), 1500);
        assert_eq!(whole_millis(Duration::MAX), i64::MAX);
    }
}
