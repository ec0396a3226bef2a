//! A bounds-checked big-endian cursor over a serialized value, the byte order Hazelcast's
//! serialization uses by default (and the only one clients use with ferrogrid).
//!
//! Invariant: every read checks that its bytes are within the buffer and returns
//! [`ReadError::Truncated`] otherwise; positions are absolute within the buffer, because
//! Portable records store absolute positions.

use crate::error::ReadError;
use crate::number::BigDecimal;
use crate::temporal::{Date, Time, Timestamp, TimestampWithTimezone};
use num_bigint::BigInt;

#[derive(Debug, Clone)]
pub(crate) struct Input<'a> {
    buffer: &'a [u8],
    position: usize,
}

pub(crate) fn malformed(what: impl Into<String>) -> ReadError {
    ReadError::Malformed(what.into())
}

impl<'a> Input<'a> {
    pub(crate) fn new(buffer: &'a [u8], position: usize) -> Input<'a> {
        Input { buffer, position }
    }

    pub(crate) fn buffer(&self) -> &'a [u8] {
        self.buffer
    }

    pub(crate) fn position(&self) -> usize {
        self.position
    }

    pub(crate) fn seek(&mut self, position: usize) {
        self.position = position;
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buffer.len().saturating_sub(self.position)
    }

    /// The next `count` bytes.
    pub(crate) fn bytes(&mut self, count: usize) -> Result<&'a [u8], ReadError> {
        let end = self.position.checked_add(count).filter(|end| *end <= self.buffer.len());
        let Some(end) = end else {
            return Err(ReadError::Truncated { offset: self.position, needed: count, available: self.remaining() });
        };
        let bytes = &self.buffer[self.position..end];
        self.position = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let mut array = [0; N];
        array.copy_from_slice(self.bytes(N)?);
        Ok(array)
    }

    pub(crate) fn i8(&mut self) -> Result<i8, ReadError> {
        Ok(i8::from_be_bytes(self.array()?))
    }

    pub(crate) fn u8(&mut self) -> Result<u8, ReadError> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn bool(&mut self) -> Result<bool, ReadError> {
        Ok(self.u8()? != 0)
    }

    pub(crate) fn i16(&mut self) -> Result<i16, ReadError> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    pub(crate) fn u16(&mut self) -> Result<u16, ReadError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(crate) fn i32(&mut self) -> Result<i32, ReadError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub(crate) fn i64(&mut self) -> Result<i64, ReadError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    pub(crate) fn f32(&mut self) -> Result<f32, ReadError> {
        Ok(f32::from_be_bytes(self.array()?))
    }

    pub(crate) fn f64(&mut self) -> Result<f64, ReadError> {
        Ok(f64::from_be_bytes(self.array()?))
    }

    /// An array length: -1 for a null array (`None`), otherwise a count whose items, each at
    /// least `item_size` bytes, must fit in what remains.
    pub(crate) fn length(&mut self, item_size: usize) -> Result<Option<usize>, ReadError> {
        let at = self.position;
        match self.i32()? {
            -1 => Ok(None),
            length if length < 0 => Err(malformed(format!("negative length {length} at offset {at}"))),
            length => {
                let length = length as usize;
                let needed = length.saturating_mul(item_size);
                if needed > self.remaining() {
                    return Err(ReadError::Truncated { offset: self.position, needed, available: self.remaining() });
                }
                Ok(Some(length))
            }
        }
    }

    /// A string as `writeString` writes it: a byte length (-1 for null) and UTF-8.
    pub(crate) fn string(&mut self) -> Result<Option<String>, ReadError> {
        let Some(length) = self.length(1)? else {
            return Ok(None);
        };
        let at = self.position;
        let bytes = self.bytes(length)?;
        let text = std::str::from_utf8(bytes).map_err(|_| malformed(format!("invalid UTF-8 at offset {at}")))?;
        Ok(Some(text.to_owned()))
    }

    /// A `BigInteger`: a byte length and the two's-complement big-endian bytes.
    pub(crate) fn big_integer(&mut self) -> Result<BigInt, ReadError> {
        let at = self.position;
        match self.length(1)? {
            Some(length) if length > 0 => Ok(BigInt::from_signed_bytes_be(self.bytes(length)?)),
            _ => Err(malformed(format!("empty or null BigInteger at offset {at}"))),
        }
    }

    pub(crate) fn big_decimal(&mut self) -> Result<BigDecimal, ReadError> {
        let unscaled = self.big_integer()?;
        Ok(BigDecimal::new(unscaled, self.i32()?))
    }

    /// A date with the year in `year_bytes` bytes (4 in Data and Compact, 2 in Portable).
    pub(crate) fn date(&mut self, year_bytes: usize) -> Result<Date, ReadError> {
        let at = self.position;
        let year = if year_bytes == 2 { i32::from(self.i16()?) } else { self.i32()? };
        let (month, day) = (self.i8()?, self.i8()?);
        let valid = u8::try_from(month).ok().zip(u8::try_from(day).ok());
        valid
            .and_then(|(month, day)| Date::new(year, month, day))
            .ok_or_else(|| malformed(format!("invalid date {year}-{month}-{day} at offset {at}")))
    }

    pub(crate) fn time(&mut self) -> Result<Time, ReadError> {
        let at = self.position;
        let (hour, minute, second, nano) = (self.i8()?, self.i8()?, self.i8()?, self.i32()?);
        let valid = (u8::try_from(hour), u8::try_from(minute), u8::try_from(second), u32::try_from(nano));
        match valid {
            (Ok(hour), Ok(minute), Ok(second), Ok(nano)) => Time::new(hour, minute, second, nano),
            _ => None,
        }
        .ok_or_else(|| malformed(format!("invalid time at offset {at}")))
    }

    pub(crate) fn timestamp(&mut self, year_bytes: usize) -> Result<Timestamp, ReadError> {
        let date = self.date(year_bytes)?;
        Ok(Timestamp::new(date, self.time()?))
    }

    pub(crate) fn timestamp_with_timezone(&mut self, year_bytes: usize) -> Result<TimestampWithTimezone, ReadError> {
        let timestamp = self.timestamp(year_bytes)?;
        let at = self.position;
        let offset = self.i32()?;
        TimestampWithTimezone::new(timestamp, offset)
            .ok_or_else(|| malformed(format!("invalid zone offset {offset} at offset {at}")))
    }
}
