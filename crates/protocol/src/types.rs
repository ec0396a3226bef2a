//! Fixed-size ids used on the wire.

use std::fmt;

/// A message type id: `(service << 16) | (method << 8) | kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MessageType(pub i32);

impl MessageType {
    /// The response type of a request type (kind byte 0x01).
    pub fn response(self) -> MessageType {
        MessageType((self.0 & !0xff) | 0x01)
    }

    /// The (first) event type of a listener registration request type (kind byte 0x02).
    pub fn event(self) -> MessageType {
        MessageType((self.0 & !0xff) | 0x02)
    }
}

/// Service names by service id (the high byte of a message type).
const SERVICES: &[(u8, &str)] = &[
    (0x00, "Client"),
    (0x01, "Map"),
    (0x02, "MultiMap"),
    (0x03, "Queue"),
    (0x04, "Topic"),
    (0x05, "List"),
    (0x06, "Set"),
    (0x07, "FencedLock"),
    (0x08, "ExecutorService"),
    (0x09, "AtomicLong"),
    (0x0A, "AtomicRef"),
    (0x0B, "CountDownLatch"),
    (0x0C, "Semaphore"),
    (0x0D, "ReplicatedMap"),
    (0x0E, "TransactionalMap"),
    (0x0F, "TransactionalMultiMap"),
    (0x10, "TransactionalSet"),
    (0x11, "TransactionalList"),
    (0x12, "TransactionalQueue"),
    (0x13, "Cache"),
    (0x14, "XATransaction"),
    (0x15, "Transaction"),
    (0x16, "ContinuousQuery"),
    (0x17, "Ringbuffer"),
    (0x18, "DurableExecutor"),
    (0x19, "CardinalityEstimator"),
    (0x1A, "ScheduledExecutor"),
    (0x1B, "DynamicConfig"),
    (0x1C, "FlakeIdGenerator"),
    (0x1D, "PNCounter"),
    (0x1E, "CPGroup"),
    (0x1F, "CPSession"),
    (0x20, "MC"),
    (0x21, "Sql"),
    (0x22, "CPSubsystem"),
    (0x23, "CPMap"),
    (0x24, "VectorCollection"),
    (0xFD, "Experimental"),
    (0xFE, "Jet"),
];

impl MessageType {
    /// The service this message belongs to, e.g. "Map", or None for an unknown service id.
    pub fn service_name(self) -> Option<&'static str> {
        let service = (self.0 >> 16) as u8;
        SERVICES.iter().find(|(id, _)| *id == service).map(|(_, name)| *name)
    }

    /// "Map request 0x011000", for error messages and logs.
    pub fn describe(self) -> String {
        let kind = match self.0 & 0xff {
            0 => "request",
            1 => "response",
            _ => "event",
        };
        match self.service_name() {
            Some(service) => format!("{service} {kind} {self}"),
            None => format!("{kind} {self} of an unknown service"),
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:06x}", self.0)
    }
}

/// The correlation id a client chose for a request; echoed in the response and in events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CorrelationId(pub i64);

/// A UUID as the protocol carries it: two 64-bit halves (most significant first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Uuid {
    pub most: u64,
    pub least: u64,
}

impl Uuid {
    /// Encoded size inside a fixed section: a null flag byte and two longs.
    pub const WIRE_SIZE: usize = 17;

    pub fn from_u128(value: u128) -> Uuid {
        Uuid { most: (value >> 64) as u64, least: value as u64 }
    }

    pub fn as_u128(self) -> u128 {
        ((self.most as u128) << 64) | self.least as u128
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.as_u128();
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v >> 48) as u16,
            v & 0xffff_ffff_ffff
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_displays_canonically() {
        let uuid = Uuid::from_u128(0xea6507c8_8459_4de7_bf64_34cd7b5338ce);
        assert_eq!(uuid.to_string(), "ea6507c8-8459-4de7-bf64-34cd7b5338ce");
    }

    #[test]
    fn describes_service_and_kind() {
        assert_eq!(MessageType(0x011000).describe(), "Map request 0x011000");
        assert_eq!(MessageType(0x030100).describe(), "Queue request 0x030100");
        assert_eq!(MessageType(0x7f0100).describe(), "request 0x7f0100 of an unknown service");
    }

    #[test]
    fn response_type_sets_kind_one() {
        assert_eq!(MessageType(0x010100).response(), MessageType(0x010101));
    }
}
