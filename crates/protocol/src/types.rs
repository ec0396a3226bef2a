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
    fn response_type_sets_kind_one() {
        assert_eq!(MessageType(0x010100).response(), MessageType(0x010101));
    }
}
