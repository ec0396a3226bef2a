//! Values of the fixed-size column types, as Java's `FixedSizeTypesCodec` lays them out, and
//! `BigDecimal`. Calendar fields are carried as they are, not validated: the producer of a page
//! owns that.

use crate::frame::DecodeError;
use crate::message::{Fixed, FixedReader, MessageReader, MessageWriter, VarField};

/// `java.time.LocalDate`: `i32` year, `u8` month (1–12), `u8` day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalDate {
    pub year: i32,
    pub month: u8,
    pub day: u8,
}

/// `java.time.LocalTime`: `u8` hour, minute, second, then `i32` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalTime {
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub nano: u32,
}

/// `java.time.LocalDateTime`: a date, then a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalDateTime {
    pub date: LocalDate,
    pub time: LocalTime,
}

/// `java.time.OffsetDateTime`: a local date-time, then the `i32` offset from UTC in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetDateTime {
    pub date_time: LocalDateTime,
    pub offset_seconds: i32,
}

impl Fixed for LocalDate {
    const SIZE: usize = 6;
    fn read(bytes: &[u8]) -> Self {
        LocalDate { year: i32::read(&bytes[..4]), month: bytes[4], day: bytes[5] }
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.year.write(out);
        out.extend_from_slice(&[self.month, self.day]);
    }
}

impl Fixed for LocalTime {
    const SIZE: usize = 7;
    fn read(bytes: &[u8]) -> Self {
        LocalTime { hour: bytes[0], minute: bytes[1], second: bytes[2], nano: u32::read(&bytes[3..]) }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[self.hour, self.minute, self.second]);
        self.nano.write(out);
    }
}

impl Fixed for LocalDateTime {
    const SIZE: usize = LocalDate::SIZE + LocalTime::SIZE;
    fn read(bytes: &[u8]) -> Self {
        let (date, time) = <(LocalDate, LocalTime)>::read(bytes);
        LocalDateTime { date, time }
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.date.write(out);
        self.time.write(out);
    }
}

impl Fixed for OffsetDateTime {
    const SIZE: usize = LocalDateTime::SIZE + 4;
    fn read(bytes: &[u8]) -> Self {
        let (date_time, offset_seconds) = <(LocalDateTime, i32)>::read(bytes);
        OffsetDateTime { date_time, offset_seconds }
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.date_time.write(out);
        self.offset_seconds.write(out);
    }
}

/// `java.math.BigDecimal`: `unscaled × 10^-scale`, the unscaled value as Java's
/// `BigInteger.toByteArray` gives it (big-endian two's complement, at least one byte).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BigDecimal {
    pub unscaled: Vec<u8>,
    pub scale: i32,
}

impl BigDecimal {
    /// `unscaled × 10^-scale`, in the fewest bytes (as Java writes it).
    pub fn from_i128(unscaled: i128, scale: i32) -> BigDecimal {
        let bytes = unscaled.to_be_bytes();
        // Drop leading bytes that only repeat the sign of the byte after them.
        let sign_byte = if unscaled < 0 { 0xff } else { 0x00 };
        let mut start = 0;
        while start + 1 < bytes.len() && bytes[start] == sign_byte && (bytes[start + 1] ^ sign_byte) & 0x80 == 0 {
            start += 1;
        }
        BigDecimal { unscaled: bytes[start..].to_vec(), scale }
    }

    /// The unscaled value, if it fits an `i128`.
    pub fn unscaled_i128(&self) -> Option<i128> {
        let first = *self.unscaled.first()?;
        if self.unscaled.len() > 16 {
            return None;
        }
        let mut bytes = if first & 0x80 != 0 { [0xff; 16] } else { [0; 16] };
        bytes[16 - self.unscaled.len()..].copy_from_slice(&self.unscaled);
        Some(i128::from_be_bytes(bytes))
    }
}

impl VarField<'_> for BigDecimal {
    fn read(reader: &mut MessageReader<'_>) -> Result<Self, DecodeError> {
        let content = reader.value_frame("a decimal")?;
        let mut fixed = FixedReader::new(content);
        let length =
            usize::try_from(fixed.read::<i32>()?).map_err(|_| DecodeError::InvalidValue("a decimal's length"))?;
        // Java cannot read an empty unscaled value (a zero is one 0x00 byte).
        if length == 0 || content.len() != 4 + length + 4 {
            return Err(DecodeError::InvalidValue("a decimal of length + 8 bytes"));
        }
        let unscaled = content[4..4 + length].to_vec();
        let scale = FixedReader::new(&content[4 + length..]).read()?;
        Ok(BigDecimal { unscaled, scale })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        assert!(!self.unscaled.is_empty(), "a decimal's unscaled value has at least one byte");
        let length = i32::try_from(self.unscaled.len()).expect("a decimal's unscaled value fits a frame");
        writer.open_frame(0).fixed(&length).bytes(&self.unscaled).fixed(&self.scale);
    }
}
