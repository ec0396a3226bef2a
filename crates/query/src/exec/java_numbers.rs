//! Java's numbers as aggregations take them: `Numbers.asIntExactly` and its kin, `longValue()`,
//! `doubleValue()`, and `BigDecimal`'s exact division, with the exceptions Java throws.

use crate::java::{java_class, ExecError};
use crate::number::BigDecimal;
use crate::value::Value;
use num_bigint::BigInt;

/// `String.valueOf(number)` (`Value::java_string`), for messages; anything else by its class.
fn java_text(value: &Value) -> String {
    let text = number(value, "a number").ok().and_then(|number| number.java_string().ok());
    text.unwrap_or_else(|| java_class(value).to_string())
}

/// The value as a `java.lang.Number` (`checkcast Number`): null is a NullPointerException
/// when used, anything else a ClassCastException.
pub(super) fn number<'v>(value: &'v Value, target: &str) -> Result<&'v Value, ExecError> {
    match value {
        Value::Null => Err(ExecError::NullPointer(format!("a null value where a {target} was expected"))),
        Value::Byte(_)
        | Value::Short(_)
        | Value::Int(_)
        | Value::Long(_)
        | Value::Float(_)
        | Value::Double(_)
        | Value::BigInteger(_)
        | Value::BigDecimal(_) => Ok(value),
        other => Err(cast_error(other, target)),
    }
}

pub(super) fn cast_error(value: &Value, target: &str) -> ExecError {
    ExecError::ClassCast(format!("class {} cannot be cast to class {target}", java_class(value)))
}

fn inexact(value: &Value, what: &str) -> ExecError {
    ExecError::IllegalArgument(format!("Can't represent {} as {what} exactly", java_text(value)))
}

/// Java's `double == double` after `equalDoubles` (bits, NaN canonical).
pub(super) fn same_double(left: f64, right: f64) -> bool {
    crate::number::equal_doubles(left, right)
}

/// `Numbers.asIntExactly`.
pub(super) fn as_int_exactly(value: &Value) -> Result<i32, ExecError> {
    Ok(match number(value, "java.lang.Number")? {
        Value::Byte(value) => i32::from(*value),
        Value::Short(value) => i32::from(*value),
        Value::Int(value) => *value,
        Value::Long(long) => i32::try_from(*long).map_err(|_| inexact(value, "int"))?,
        Value::Float(_) | Value::Double(_) => {
            let double = double_value(value);
            let int = double as i32; // Java's d2i: saturating, NaN to 0
            if !same_double(double, f64::from(int)) {
                return Err(inexact(value, "int"));
            }
            int
        }
        other => return Err(inexact(other, "int")),
    })
}

/// `Numbers.asLongExactly`.
pub(super) fn as_long_exactly(value: &Value) -> Result<i64, ExecError> {
    Ok(match number(value, "java.lang.Number")? {
        Value::Byte(value) => i64::from(*value),
        Value::Short(value) => i64::from(*value),
        Value::Int(value) => i64::from(*value),
        Value::Long(value) => *value,
        Value::Float(_) | Value::Double(_) => {
            let double = double_value(value);
            let long = double as i64;
            if !same_double(double, long as f64) {
                return Err(inexact(value, "long"));
            }
            long
        }
        other => return Err(inexact(other, "long")),
    })
}

/// `Numbers.asDoubleExactly`.
pub(super) fn as_double_exactly(value: &Value) -> Result<f64, ExecError> {
    Ok(match number(value, "java.lang.Number")? {
        Value::Long(long) => {
            let double = *long as f64;
            if double as i64 != *long {
                return Err(inexact(value, "double"));
            }
            double
        }
        Value::BigInteger(_) | Value::BigDecimal(_) => return Err(inexact(value, "double")),
        other => double_value(other),
    })
}

/// `Number.longValue()`.
pub(super) fn long_value(value: &Value) -> Result<i64, ExecError> {
    Ok(match number(value, "java.lang.Number")? {
        Value::BigInteger(big) => low_long(big),
        Value::BigDecimal(decimal) => {
            let integer = decimal.to_big_integer().ok_or_else(|| inexact(value, "long"))?;
            low_long(&integer)
        }
        Value::Float(_) | Value::Double(_) => double_value(value) as i64,
        other => as_long_exactly(other)?,
    })
}

/// `BigInteger.longValue()`: the low 64 bits of the two's complement.
fn low_long(value: &BigInt) -> i64 {
    let low = value.magnitude().iter_u64_digits().next().unwrap_or(0);
    match value.sign() {
        num_bigint::Sign::Minus => low.wrapping_neg() as i64,
        _ => low as i64,
    }
}

/// `Number.doubleValue()` (correctly rounded, as Java's `BigInteger` and `BigDecimal` are).
pub(super) fn double_value(value: &Value) -> f64 {
    match value {
        Value::Byte(value) => f64::from(*value),
        Value::Short(value) => f64::from(*value),
        Value::Int(value) => f64::from(*value),
        Value::Long(value) => *value as f64,
        Value::Float(value) => f64::from(*value),
        Value::Double(value) => *value,
        Value::BigInteger(value) => value.to_string().parse().unwrap_or(f64::NAN),
        Value::BigDecimal(value) => value.to_string().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// Java's `BigDecimal.divide(BigDecimal.valueOf(count))`: the exact quotient at the smallest
/// scale not below the dividend's, or an ArithmeticException when it does not terminate.
pub(super) fn divide_exactly(sum: &BigDecimal, count: i64) -> Result<BigDecimal, ExecError> {
    let count = BigInt::from(count);
    let gcd = num_integer_gcd(sum.unscaled(), &count);
    let mut rest = &count / &gcd;
    let negative_divisor = rest < BigInt::from(0);
    if negative_divisor {
        rest = -rest;
    }
    let (mut twos, mut fives) = (0u32, 0u32);
    while (&rest % 2u8) == BigInt::from(0) {
        rest /= 2u8;
        twos += 1;
    }
    while (&rest % 5u8) == BigInt::from(0) {
        rest /= 5u8;
        fives += 1;
    }
    if rest != BigInt::from(1) {
        let message = "Non-terminating decimal expansion; no exact representable decimal result.";
        return Err(ExecError::Arithmetic(message.into()));
    }
    let digits = twos.max(fives);
    let mut unscaled = sum.unscaled() / &gcd * BigInt::from(10u8).pow(digits) / (&count / &gcd);
    if negative_divisor {
        unscaled = -unscaled;
    }
    let scale = i64::from(sum.scale()) + i64::from(digits);
    let scale = i32::try_from(scale).map_err(|_| ExecError::Arithmetic("Underflow".into()))?;
    Ok(BigDecimal::new(unscaled, scale))
}

fn num_integer_gcd(left: &BigInt, right: &BigInt) -> BigInt {
    let (mut a, mut b) = (left.magnitude().clone(), right.magnitude().clone());
    while b != num_bigint::BigUint::from(0u8) {
        let remainder = &a % &b;
        a = b;
        b = remainder;
    }
    if a == num_bigint::BigUint::from(0u8) {
        return BigInt::from(1);
    }
    BigInt::from(a)
}
