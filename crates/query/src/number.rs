//! Java's numbers as Hazelcast's query engine treats them: `BigDecimal` (an unscaled integer and
//! a scale, compared by value, equal only with equal scale), Java's number text in both
//! directions (`Long.parseLong`, `Double.parseDouble`, `new BigInteger(String)`,
//! `new BigDecimal(String)`, `Double.toString`, `Float.toString`, `BigDecimal.toString`), and the
//! cross-type comparisons of `com.hazelcast.query.impl.Numbers`.
//!
//! Invariant: no operation here allocates more than its inputs justify: decimal comparisons
//! never scale a number by more digits than the other operand has, and conversions to integers
//! refuse results beyond [`MAX_DIGITS`] digits.

use num_bigint::{BigInt, Sign};
use std::cmp::Ordering;
use std::fmt;

/// The most decimal digits a conversion may produce (Java has no such bound; it would run out
/// of memory instead).
pub const MAX_DIGITS: u64 = 100_000;

/// Java's `BigDecimal`: `unscaled × 10^-scale`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BigDecimal {
    unscaled: BigInt,
    scale: i32,
}

impl BigDecimal {
    pub fn new(unscaled: BigInt, scale: i32) -> BigDecimal {
        BigDecimal { unscaled, scale }
    }

    pub fn unscaled(&self) -> &BigInt {
        &self.unscaled
    }

    pub fn scale(&self) -> i32 {
        self.scale
    }

    /// Java's `new BigDecimal(String)`: `[sign] digits [. digits] [e|E [sign] digits]`.
    pub fn parse(text: &str) -> Option<BigDecimal> {
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(at) => (&text[..at], parse_int_text(&text[at + 1..])?),
            None => (text, 0),
        };
        let (negative, mantissa) = strip_sign(mantissa);
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
        if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
            return None;
        }
        let digits = format!("{whole}{fraction}");
        let mut unscaled = BigInt::parse_bytes(digits.as_bytes(), 10)?;
        if negative {
            unscaled = -unscaled;
        }
        let scale = i64::try_from(fraction.len()).ok()? - i64::from(exponent);
        Some(BigDecimal { unscaled, scale: i32::try_from(scale).ok()? })
    }

    /// Java's `BigDecimal.valueOf(double)`: the decimal `Double.toString` prints; `None` for
    /// NaN and infinities (Java throws `NumberFormatException`).
    pub fn from_f64(value: f64) -> Option<BigDecimal> {
        value.is_finite().then(|| BigDecimal::parse(&java_double_string(value)))?
    }

    /// `toBigInteger()`: the integer part, truncated toward zero; `None` past [`MAX_DIGITS`].
    pub fn to_big_integer(&self) -> Option<BigInt> {
        if self.unscaled.sign() == Sign::NoSign {
            return Some(BigInt::from(0));
        }
        if self.scale <= 0 {
            let zeros = u64::from(self.scale.unsigned_abs());
            if digit_count(&self.unscaled) + zeros > MAX_DIGITS {
                return None;
            }
            return Some(&self.unscaled * BigInt::from(10).pow(zeros as u32));
        }
        let scale = u64::from(self.scale.unsigned_abs());
        if scale >= digit_count(&self.unscaled) {
            return Some(BigInt::from(0));
        }
        Some(&self.unscaled / BigInt::from(10).pow(scale as u32))
    }

    /// Java's `compareTo`: by value, whatever the scales.
    pub fn compare(&self, other: &BigDecimal) -> Ordering {
        let sign_order = sign_rank(&self.unscaled).cmp(&sign_rank(&other.unscaled));
        if sign_order != Ordering::Equal || self.unscaled.sign() == Sign::NoSign {
            return sign_order;
        }
        // Same sign, both non-zero: the larger adjusted exponent is the larger magnitude.
        let adjusted = |decimal: &BigDecimal| digit_count(&decimal.unscaled) as i64 - 1 - i64::from(decimal.scale);
        let magnitude = match adjusted(self).cmp(&adjusted(other)) {
            Ordering::Equal => {
                // Equal adjusted exponents: the scales differ by no more than the digit counts.
                let shift = i64::from(self.scale) - i64::from(other.scale);
                let scale_up =
                    |value: &BigInt, by: i64| value.magnitude() * num_bigint::BigUint::from(10u8).pow(by as u32);
                match shift.cmp(&0) {
                    Ordering::Less => scale_up(&self.unscaled, -shift).cmp(other.unscaled.magnitude()),
                    Ordering::Greater => self.unscaled.magnitude().cmp(&scale_up(&other.unscaled, shift)),
                    Ordering::Equal => self.unscaled.magnitude().cmp(other.unscaled.magnitude()),
                }
            }
            order => order,
        };
        if self.unscaled.sign() == Sign::Minus {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

fn sign_rank(value: &BigInt) -> i8 {
    match value.sign() {
        Sign::Minus => -1,
        Sign::NoSign => 0,
        Sign::Plus => 1,
    }
}

/// The number of decimal digits of `value`'s magnitude (1 for zero).
pub fn digit_count(value: &BigInt) -> u64 {
    let bits = value.bits();
    if bits == 0 {
        return 1;
    }
    // 2^(bits-1) <= |value| < 2^bits, so the count is `estimate` or `estimate + 1`.
    let estimate = ((bits - 1) as f64 * std::f64::consts::LOG10_2).floor() as u64 + 1;
    if *value.magnitude() >= num_bigint::BigUint::from(10u8).pow(estimate as u32) {
        estimate + 1
    } else {
        estimate
    }
}

impl fmt::Display for BigDecimal {
    /// Java's `BigDecimal.toString` (scientific notation when the scale is negative or the
    /// adjusted exponent is below -6).
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let coefficient = self.unscaled.magnitude().to_string();
        let sign = if self.unscaled.sign() == Sign::Minus { "-" } else { "" };
        let length = coefficient.len() as i64;
        let scale = i64::from(self.scale);
        let adjusted = length - 1 - scale;
        if scale == 0 {
            return write!(out, "{sign}{coefficient}");
        }
        if scale > 0 && adjusted >= -6 {
            return if length > scale {
                let point = (length - scale) as usize;
                write!(out, "{sign}{}.{}", &coefficient[..point], &coefficient[point..])
            } else {
                write!(out, "{sign}0.{}{coefficient}", "0".repeat((scale - length) as usize))
            };
        }
        write!(out, "{sign}{}", &coefficient[..1])?;
        if length > 1 {
            write!(out, ".{}", &coefficient[1..])?;
        }
        let exponent_sign = if adjusted > 0 { "+" } else { "" };
        write!(out, "E{exponent_sign}{adjusted}")
    }
}

fn strip_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// Java's `Integer.parseInt`/`Long.parseLong` for the range of `T`: an optional sign and ASCII
/// digits, nothing else (Java also takes non-ASCII Unicode digits; ferrogrid does not).
pub fn parse_java_integer<T: TryFrom<i128>>(text: &str) -> Option<T> {
    let (negative, digits) = strip_sign(text);
    if digits.is_empty() || digits.len() > 40 || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let magnitude: i128 = digits.parse().ok()?;
    T::try_from(if negative { -magnitude } else { magnitude }).ok()
}

fn parse_int_text(text: &str) -> Option<i32> {
    parse_java_integer::<i32>(text)
}

/// Java's `new BigInteger(String)`: an optional sign and decimal digits.
pub fn parse_java_big_integer(text: &str) -> Option<BigInt> {
    let (negative, digits) = strip_sign(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let magnitude = BigInt::parse_bytes(digits.as_bytes(), 10)?;
    Some(if negative { -magnitude } else { magnitude })
}

/// Java's `Double.parseDouble`: surrounding whitespace (characters up to U+0020) is ignored, an
/// optional `f`/`F`/`d`/`D` suffix is allowed, `NaN` and `Infinity` are spelled as Java spells
/// them. Hexadecimal floating literals are not supported (Java's are).
pub fn parse_java_double(text: &str) -> Option<f64> {
    let trimmed = text.trim_matches(|character: char| character <= ' ');
    let (negative, unsigned) = strip_sign(trimmed);
    let magnitude = match unsigned {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        _ => {
            let body = unsigned.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(unsigned);
            let valid =
                body.bytes().all(|byte| byte.is_ascii_digit() || matches!(byte, b'.' | b'e' | b'E' | b'+' | b'-'));
            let has_digit_before_exponent = body
                .split(['e', 'E'])
                .next()
                .is_some_and(|mantissa| mantissa.bytes().any(|byte| byte.is_ascii_digit()));
            if !valid || !has_digit_before_exponent || body.starts_with(['+', '-']) {
                return None;
            }
            body.parse::<f64>().ok()?
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// The shortest decimal digits and exponent that read back as `value` (finite, non-zero):
/// `value = 0.d1d2d3… × 10^exponent` with `digits = "d1d2d3…"`.
fn shortest_digits(scientific: &str) -> (String, i32) {
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exponent.parse::<i32>().unwrap_or(0) + 1)
}

fn java_decimal_text(magnitude_scientific: &str, negative: bool, magnitude: f64) -> String {
    let (digits, exponent) = shortest_digits(magnitude_scientific);
    let sign = if negative { "-" } else { "" };
    if (1e-3..1e7).contains(&magnitude) {
        let (whole, fraction) = if exponent > 0 {
            let point = exponent as usize;
            let padded = format!("{digits:0<point$}");
            (padded[..point].to_string(), padded[point..].to_string())
        } else {
            ("0".to_string(), format!("{}{digits}", "0".repeat(exponent.unsigned_abs() as usize)))
        };
        let fraction = if fraction.is_empty() { "0".to_string() } else { fraction };
        return format!("{sign}{whole}.{fraction}");
    }
    let fraction = if digits.len() > 1 { &digits[1..] } else { "0" };
    format!("{sign}{}.{fraction}E{}", &digits[..1], exponent - 1)
}

/// Java's `Double.toString` (the shortest digits that read back, as JDK 19 and later print
/// them; older JDKs sometimes print one more digit).
pub fn java_double_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    java_decimal_text(&format!("{:e}", value.abs()), value < 0.0, value.abs())
}

/// Java's `Float.toString` (shortest digits for a `float`).
pub fn java_float_string(value: f32) -> String {
    if !value.is_finite() || value == 0.0 {
        return java_double_string(f64::from(value));
    }
    java_decimal_text(&format!("{:e}", value.abs()), value < 0.0, f64::from(value.abs()))
}

/// Java's `Double.compare`: NaN above everything and equal to itself, -0.0 below 0.0.
pub fn compare_doubles(left: f64, right: f64) -> Ordering {
    match left.partial_cmp(&right) {
        Some(Ordering::Equal) | None => java_bits(left).cmp(&java_bits(right)),
        Some(order) => order,
    }
}

/// Java's `Double.doubleToLongBits`: the bits, with every NaN made the canonical one.
fn java_bits(value: f64) -> i64 {
    if value.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        value.to_bits() as i64
    }
}

/// Java's `Double.equals` (`Numbers.equalDoubles`): NaN equals NaN, -0.0 differs from 0.0.
pub fn equal_doubles(left: f64, right: f64) -> bool {
    java_bits(left) == java_bits(right)
}

/// `Numbers.equalLongAndDouble`: exact, without the precision loss of `long as double`.
pub fn equal_long_and_double(long: i64, double: f64) -> bool {
    compare_long_with_double(long, double) == Ordering::Equal && !double.is_nan()
}

/// `Numbers.compareLongWithDouble`: exact comparison; NaN is above every long.
pub fn compare_long_with_double(long: i64, double: f64) -> Ordering {
    const TWO_53: f64 = 9_007_199_254_740_992.0;
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if double > -TWO_53 && double < TWO_53 {
        return compare_doubles(long as f64, double);
    }
    if double <= -TWO_63 {
        return Ordering::Greater;
    }
    if double >= TWO_63 || double.is_nan() {
        return Ordering::Less;
    }
    long.cmp(&(double as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> BigDecimal {
        BigDecimal::parse(text).unwrap()
    }

    #[test]
    fn doubles_print_as_java_prints_them() {
        for (value, text) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (123456.789, "123456.789"),
            (1e7, "1.0E7"),
            (1.5e-5, "1.5E-5"),
            (0.001, "0.001"),
            (-2.5e20, "-2.5E20"),
            (f64::MAX, "1.7976931348623157E308"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(java_double_string(value), text, "{value}");
        }
        assert_eq!(java_float_string(0.1), "0.1");
        assert_eq!(java_float_string(1.0e10), "1.0E10");
        assert_eq!(java_float_string(f32::MAX), "3.4028235E38");
    }

    #[test]
    fn decimals_parse_print_and_compare_as_java() {
        assert_eq!(decimal("1.50").scale(), 2);
        assert_eq!(decimal("1.5E+3").to_string(), "1.5E+3");
        assert_eq!(decimal("1500").to_string(), "1500");
        assert_eq!(decimal("-0.00000012").to_string(), "-1.2E-7");
        assert_eq!(decimal("0.0000012").to_string(), "0.0000012");
        assert_eq!(decimal(".5").to_string(), "0.5");
        assert_eq!(BigDecimal::parse("1e"), None);
        assert_eq!(BigDecimal::parse("."), None);
        assert_eq!(BigDecimal::parse("1_0"), None);
        assert_eq!(decimal("2.0").compare(&decimal("2.00")), Ordering::Equal);
        assert_ne!(decimal("2.0"), decimal("2.00"), "equals takes the scale into account");
        assert_eq!(decimal("-3").compare(&decimal("-2.9999")), Ordering::Less);
        assert_eq!(decimal("1E+2147483647").compare(&decimal("1E-2147483647")), Ordering::Greater);
        assert_eq!(decimal("0").compare(&decimal("-0.0")), Ordering::Equal);
        assert_eq!(BigDecimal::from_f64(0.1).unwrap(), decimal("0.1"));
        assert_eq!(BigDecimal::from_f64(1e20).unwrap(), decimal("1.0E20"));
        assert_eq!(decimal("-7.9").to_big_integer(), Some(BigInt::from(-7)));
        assert_eq!(decimal("12E3").to_big_integer(), Some(BigInt::from(12_000)));
        assert_eq!(decimal("1E-2147483647").to_big_integer(), Some(BigInt::from(0)));
        assert_eq!(decimal("1E+2147483647").to_big_integer(), None, "too many digits");
    }

    #[test]
    fn number_text_parses_as_java() {
        assert_eq!(parse_java_integer::<i32>("+42"), Some(42));
        assert_eq!(parse_java_integer::<i32>("2147483648"), None);
        assert_eq!(parse_java_integer::<i64>("2147483648"), Some(2_147_483_648));
        assert_eq!(parse_java_integer::<i64>(" 1"), None);
        assert_eq!(parse_java_double(" 1.5 "), Some(1.5));
        assert_eq!(parse_java_double("1e3d"), Some(1000.0));
        assert_eq!(parse_java_double("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(parse_java_double("NaN").unwrap().is_nan());
        assert_eq!(parse_java_double("inf"), None);
        assert_eq!(parse_java_double("nan"), None);
        assert_eq!(parse_java_double("1."), Some(1.0));
        assert_eq!(parse_java_double(".5"), Some(0.5));
        assert_eq!(parse_java_double("e5"), None);
        assert_eq!(parse_java_double("--1"), None);
    }

    #[test]
    fn longs_and_doubles_compare_exactly() {
        assert_eq!(compare_long_with_double(i64::MAX, 9.223372036854776e18), Ordering::Less);
        assert!(!equal_long_and_double(i64::MAX - 1, i64::MAX as f64));
        assert!(equal_long_and_double(1 << 60, (1u64 << 60) as f64));
        assert_eq!(compare_long_with_double(0, f64::NAN), Ordering::Less);
        assert!(!equal_long_and_double(0, -0.0));
        assert_eq!(compare_doubles(-0.0, 0.0), Ordering::Less);
        assert_eq!(compare_doubles(f64::NAN, f64::INFINITY), Ordering::Greater);
        assert!(equal_doubles(f64::NAN, -f64::NAN));
    }
}
