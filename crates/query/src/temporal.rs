//! Dates and times as Hazelcast carries them (Java's `LocalDate`, `LocalTime`, `LocalDateTime`,
//! `OffsetDateTime`, and `java.util.Date` as epoch milliseconds), with Java's ordering, its ISO
//! parsing (`LocalDate.parse`, ...) and its `toString`.
//!
//! Invariant: every value of these types is valid as Java would accept it (year within
//! ±999,999,999, month 1–12, a day that exists in its month, hour < 24, nanosecond < 10⁹, offset
//! within ±18 hours); the constructors return `None` otherwise.

use std::cmp::Ordering;
use std::fmt;

const MAX_YEAR: i32 = 999_999_999;
const NANOS_PER_SECOND: u32 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
const MAX_OFFSET_SECONDS: i32 = 18 * 3600;

/// A date without a time zone (Java `LocalDate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

/// A time of day without a time zone (Java `LocalTime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Time {
    hour: u8,
    minute: u8,
    second: u8,
    nano: u32,
}

/// A date and time without a time zone (Java `LocalDateTime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    pub date: Date,
    pub time: Time,
}

/// A date and time with an offset from UTC (Java `OffsetDateTime`). Ordered as Java orders it:
/// by instant, then by local date-time; equal only with equal local date-time and offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimestampWithTimezone {
    pub timestamp: Timestamp,
    offset_seconds: i32,
}

fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Date {
    pub fn new(year: i32, month: u8, day: u8) -> Option<Date> {
        let valid = (-MAX_YEAR..=MAX_YEAR).contains(&year)
            && (1..=12).contains(&month)
            && day >= 1
            && day <= days_in_month(year, month);
        valid.then_some(Date { year, month, day })
    }

    pub fn year(&self) -> i32 {
        self.year
    }

    pub fn month(&self) -> u8 {
        self.month
    }

    pub fn day(&self) -> u8 {
        self.day
    }

    /// Days since 1970-01-01 (the proleptic Gregorian calendar, as Java's).
    pub fn epoch_day(&self) -> i64 {
        // Howard Hinnant's days_from_civil.
        let year = i64::from(self.year) - i64::from(self.month <= 2);
        let era = year.div_euclid(400);
        let year_of_era = year - era * 400;
        let month = i64::from(self.month);
        let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * 146_097 + day_of_era - 719_468
    }

    /// The date `days` after 1970-01-01, if within Java's range.
    pub fn from_epoch_day(days: i64) -> Option<Date> {
        // Howard Hinnant's civil_from_days.
        let shifted = days.checked_add(719_468)?;
        let era = shifted.div_euclid(146_097);
        let day_of_era = shifted - era * 146_097;
        let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let month_index = (5 * day_of_year + 2) / 153;
        let day = day_of_year - (153 * month_index + 2) / 5 + 1;
        let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        Date::new(i32::try_from(year).ok()?, month as u8, day as u8)
    }

    /// Java's `LocalDate.parse` (ISO `yyyy-MM-dd`; years beyond 9999 need a `+`).
    pub fn parse(text: &str) -> Option<Date> {
        let (year, rest) = parse_year(text)?;
        let rest = rest.strip_prefix('-')?;
        let (month, rest) = two_digits(rest)?;
        let rest = rest.strip_prefix('-')?;
        let (day, rest) = two_digits(rest)?;
        rest.is_empty().then_some(())?;
        Date::new(year, month, day)
    }
}

fn parse_year(text: &str) -> Option<(i32, &str)> {
    let (sign, unsigned) = match text.as_bytes().first()? {
        b'+' => (Some(1), &text[1..]),
        b'-' => (Some(-1), &text[1..]),
        _ => (None, text),
    };
    let digits = unsigned.bytes().take_while(u8::is_ascii_digit).count();
    let signed_ok = match sign {
        None => digits == 4,
        Some(1) => (5..=10).contains(&digits),
        Some(_) => (4..=10).contains(&digits),
    };
    if !signed_ok {
        return None;
    }
    let magnitude: i64 = unsigned[..digits].parse().ok()?;
    let year = i32::try_from(magnitude * sign.unwrap_or(1)).ok()?;
    Some((year, &unsigned[digits..]))
}

fn two_digits(text: &str) -> Option<(u8, &str)> {
    let bytes = text.as_bytes();
    if bytes.len() < 2 || !bytes[0].is_ascii_digit() || !bytes[1].is_ascii_digit() {
        return None;
    }
    Some(((bytes[0] - b'0') * 10 + (bytes[1] - b'0'), &text[2..]))
}

impl fmt::Display for Date {
    /// Java's `LocalDate.toString`.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let year = self.year;
        if year.unsigned_abs() < 1000 {
            let sign = if year < 0 { "-" } else { "" };
            write!(out, "{sign}{:04}", year.unsigned_abs())?;
        } else if year > 9999 {
            write!(out, "+{year}")?;
        } else {
            write!(out, "{year}")?;
        }
        write!(out, "-{:02}-{:02}", self.month, self.day)
    }
}

impl Time {
    pub fn new(hour: u8, minute: u8, second: u8, nano: u32) -> Option<Time> {
        let valid = hour < 24 && minute < 60 && second < 60 && nano < NANOS_PER_SECOND;
        valid.then_some(Time { hour, minute, second, nano })
    }

    pub fn hour(&self) -> u8 {
        self.hour
    }

    pub fn minute(&self) -> u8 {
        self.minute
    }

    pub fn second(&self) -> u8 {
        self.second
    }

    pub fn nano(&self) -> u32 {
        self.nano
    }

    fn second_of_day(&self) -> i64 {
        i64::from(self.hour) * 3600 + i64::from(self.minute) * 60 + i64::from(self.second)
    }

    fn from_second_of_day(seconds: i64, nano: u32) -> Option<Time> {
        let seconds = u32::try_from(seconds).ok()?;
        Time::new((seconds / 3600) as u8, (seconds / 60 % 60) as u8, (seconds % 60) as u8, nano)
    }

    /// Java's `LocalTime.parse` (ISO `HH:mm[:ss[.fffffffff]]`).
    pub fn parse(text: &str) -> Option<Time> {
        let (hour, rest) = two_digits(text)?;
        let (minute, mut rest) = two_digits(rest.strip_prefix(':')?)?;
        let (mut second, mut nano) = (0, 0);
        if let Some(after) = rest.strip_prefix(':') {
            (second, rest) = two_digits(after)?;
            if let Some(fraction) = rest.strip_prefix('.') {
                let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
                if !(1..=9).contains(&digits) {
                    return None;
                }
                let value: u32 = fraction[..digits].parse().ok()?;
                nano = value * 10u32.pow(9 - digits as u32);
                rest = &fraction[digits..];
            }
        }
        rest.is_empty().then_some(())?;
        Time::new(hour, minute, second, nano)
    }
}

impl fmt::Display for Time {
    /// Java's `LocalTime.toString`: seconds only when not zero, fractions in groups of three.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{:02}:{:02}", self.hour, self.minute)?;
        if self.second > 0 || self.nano > 0 {
            write!(out, ":{:02}", self.second)?;
            match (self.nano, self.nano % 1_000_000, self.nano % 1000) {
                (0, _, _) => {}
                (nano, 0, _) => write!(out, ".{:03}", nano / 1_000_000)?,
                (nano, _, 0) => write!(out, ".{:06}", nano / 1000)?,
                (nano, _, _) => write!(out, ".{nano:09}")?,
            }
        }
        Ok(())
    }
}

impl Timestamp {
    pub fn new(date: Date, time: Time) -> Timestamp {
        Timestamp { date, time }
    }

    /// Seconds since 1970-01-01T00:00 of this local date-time read as UTC.
    pub fn epoch_second(&self) -> i64 {
        self.date.epoch_day() * SECONDS_PER_DAY + self.time.second_of_day()
    }

    /// The UTC date-time `millis` after the epoch (`java.util.Date`'s milliseconds).
    pub fn from_epoch_millis(millis: i64) -> Option<Timestamp> {
        let seconds = millis.div_euclid(1000);
        let nano = (millis.rem_euclid(1000) * 1_000_000) as u32;
        let date = Date::from_epoch_day(seconds.div_euclid(SECONDS_PER_DAY))?;
        let time = Time::from_second_of_day(seconds.rem_euclid(SECONDS_PER_DAY), nano)?;
        Some(Timestamp { date, time })
    }

    /// Java's `LocalDateTime.parse` (ISO `yyyy-MM-ddTHH:mm[:ss[.f]]`).
    pub fn parse(text: &str) -> Option<Timestamp> {
        let at = text.find(['T', 't'])?;
        Some(Timestamp { date: Date::parse(&text[..at])?, time: Time::parse(&text[at + 1..])? })
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{}T{}", self.date, self.time)
    }
}

impl TimestampWithTimezone {
    pub fn new(timestamp: Timestamp, offset_seconds: i32) -> Option<TimestampWithTimezone> {
        (offset_seconds.abs() <= MAX_OFFSET_SECONDS).then_some(TimestampWithTimezone { timestamp, offset_seconds })
    }

    pub fn offset_seconds(&self) -> i32 {
        self.offset_seconds
    }

    /// Seconds since the epoch of the instant this names.
    pub fn epoch_second(&self) -> i64 {
        self.timestamp.epoch_second() - i64::from(self.offset_seconds)
    }

    /// Java's `OffsetDateTime.parse` (ISO local date-time then `Z` or `±HH:MM[:SS]`).
    pub fn parse(text: &str) -> Option<TimestampWithTimezone> {
        let (local, offset_seconds) = if let Some(local) = text.strip_suffix(['Z', 'z']) {
            (local, 0)
        } else {
            let at = text.rfind(['+', '-'])?;
            (&text[..at], parse_offset(&text[at..])?)
        };
        TimestampWithTimezone::new(Timestamp::parse(local)?, offset_seconds)
    }
}

fn parse_offset(text: &str) -> Option<i32> {
    let sign = if text.starts_with('-') { -1 } else { 1 };
    let (hours, rest) = two_digits(&text[1..])?;
    let (minutes, rest) = two_digits(rest.strip_prefix(':')?)?;
    let (seconds, rest) = match rest.strip_prefix(':') {
        Some(after) => two_digits(after)?,
        None => (0, rest),
    };
    if !rest.is_empty() || minutes > 59 || seconds > 59 {
        return None;
    }
    Some(sign * (i32::from(hours) * 3600 + i32::from(minutes) * 60 + i32::from(seconds)))
}

impl Ord for TimestampWithTimezone {
    fn cmp(&self, other: &Self) -> Ordering {
        if self.offset_seconds == other.offset_seconds {
            return self.timestamp.cmp(&other.timestamp);
        }
        self.epoch_second()
            .cmp(&other.epoch_second())
            .then(self.timestamp.time.nano.cmp(&other.timestamp.time.nano))
            .then(self.timestamp.cmp(&other.timestamp))
    }
}

impl PartialOrd for TimestampWithTimezone {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for TimestampWithTimezone {
    /// Java's `OffsetDateTime.toString`: `Z` for UTC, else `±HH:MM[:SS]`.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{}", self.timestamp)?;
        let offset = self.offset_seconds;
        if offset == 0 {
            return write!(out, "Z");
        }
        let sign = if offset < 0 { '-' } else { '+' };
        let magnitude = offset.unsigned_abs();
        write!(out, "{sign}{:02}:{:02}", magnitude / 3600, magnitude / 60 % 60)?;
        match magnitude % 60 {
            0 => {}
            seconds => write!(out, ":{seconds:02}")?,
        }
        Ok(())
    }
}

/// `java.util.Date.toString` in UTC (`EEE MMM dd HH:mm:ss zzz yyyy`); Java uses the member's
/// default time zone, which ferrogrid takes to be UTC.
pub fn legacy_date_string(millis: i64) -> Option<String> {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let timestamp = Timestamp::from_epoch_millis(millis)?;
    let (date, time) = (timestamp.date, timestamp.time);
    let weekday = DAYS[date.epoch_day().rem_euclid(7) as usize];
    let month = MONTHS[usize::from(date.month - 1)];
    Some(format!(
        "{weekday} {month} {:02} {:02}:{:02}:{:02} UTC {}",
        date.day, time.hour, time.minute, time.second, date.year
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_days_round_trip_and_match_java() {
        assert_eq!(Date::new(1970, 1, 1).unwrap().epoch_day(), 0);
        assert_eq!(Date::new(2000, 3, 1).unwrap().epoch_day(), 11_017);
        assert_eq!(Date::new(1969, 12, 31).unwrap().epoch_day(), -1);
        for days in [-1_000_000, -719_468, -1, 0, 59, 60, 11_016, 2_932_896] {
            assert_eq!(Date::from_epoch_day(days).unwrap().epoch_day(), days);
        }
        assert_eq!(Date::new(2023, 2, 29), None);
        assert!(Date::new(2024, 2, 29).is_some());
    }

    #[test]
    fn parses_and_prints_as_java() {
        let date = Date::parse("2024-02-29").unwrap();
        assert_eq!(date.to_string(), "2024-02-29");
        assert_eq!(Date::parse("+12345-01-02").unwrap().to_string(), "+12345-01-02");
        assert_eq!(Date::parse("-0005-01-02").unwrap().to_string(), "-0005-01-02");
        assert_eq!(Date::parse("12345-01-02"), None, "a year beyond 9999 needs its sign");
        assert_eq!(Date::parse("2024-2-29"), None);
        assert_eq!(Time::parse("10:15").unwrap().to_string(), "10:15");
        assert_eq!(Time::parse("10:15:00").unwrap().to_string(), "10:15");
        assert_eq!(Time::parse("10:15:30.5").unwrap().to_string(), "10:15:30.500");
        assert_eq!(Time::parse("10:15:30.000001").unwrap().to_string(), "10:15:30.000001");
        assert_eq!(Time::parse("10:15:30.123456789").unwrap().nano(), 123_456_789);
        assert_eq!(Time::parse("24:00"), None);
        let timestamp = Timestamp::parse("2024-01-05T10:15:30").unwrap();
        assert_eq!(timestamp.to_string(), "2024-01-05T10:15:30");
        let zoned = TimestampWithTimezone::parse("2024-01-05T10:15:30+01:30").unwrap();
        assert_eq!(zoned.offset_seconds(), 5400);
        assert_eq!(zoned.to_string(), "2024-01-05T10:15:30+01:30");
        assert_eq!(TimestampWithTimezone::parse("2024-01-05T10:15Z").unwrap().to_string(), "2024-01-05T10:15Z");
        assert_eq!(TimestampWithTimezone::parse("2024-01-05T10:15"), None);
        assert_eq!(legacy_date_string(0).unwrap(), "Thu Jan 01 00:00:00 UTC 1970");
    }

    #[test]
    fn offset_date_times_order_by_instant_then_local_time() {
        let utc = TimestampWithTimezone::parse("2024-01-05T10:00Z").unwrap();
        let same_instant = TimestampWithTimezone::parse("2024-01-05T11:00+01:00").unwrap();
        let later = TimestampWithTimezone::parse("2024-01-05T10:30+00:00").unwrap();
        assert_eq!(utc.cmp(&same_instant), Ordering::Less, "same instant: the earlier local time first");
        assert_ne!(utc, same_instant);
        assert_eq!(same_instant.cmp(&later), Ordering::Less);
    }
}
