//! The Java classes Hazelcast's member holds values as: the class name exception messages
//! print, and every class and interface a value is an instance of (for INSTANCE OF).

use super::{error, EvalError, EvalErrorKind};
use crate::compact::TYPE_ID as COMPACT;
use crate::data::PORTABLE;
use crate::value::Value;

/// Java's class name of a value, as exception messages print it.
pub(super) fn java_class(value: &Value) -> String {
    let name = value.type_name();
    match value {
        Value::Bool(_)
        | Value::Byte(_)
        | Value::Short(_)
        | Value::Int(_)
        | Value::Long(_)
        | Value::Float(_)
        | Value::Double(_)
        | Value::Char(_)
        | Value::String(_) => format!("java.lang.{name}"),
        Value::BigInteger(_) | Value::BigDecimal(_) => format!("java.math.{name}"),
        Value::Uuid(_) | Value::LegacyDate(_) => format!("java.util.{name}"),
        Value::Date(_) | Value::Time(_) | Value::Timestamp(_) | Value::TimestampWithTimezone(_) => {
            format!("java.time.{name}")
        }
        Value::Json(_) => "com.hazelcast.core.HazelcastJsonValue".into(),
        Value::Object(object) if object.type_id == COMPACT => GENERIC_RECORD_CLASS.into(),
        Value::Object(object) if object.type_id == PORTABLE => {
            "com.hazelcast.internal.serialization.impl.portable.PortableGenericRecord".into()
        }
        Value::Array(items) => primitive_array_class(items).unwrap_or("[Ljava.lang.Object;").into(),
        _ => name.into(),
    }
}

/// Compact's `ARRAY_OF_BOOLEAN`, `ARRAY_OF_INT8`, `_INT16`, `_INT32`, `_INT64`, `_FLOAT32` and
/// `_FLOAT64`: read by Hazelcast as primitive Java arrays.
pub(super) const PRIMITIVE_ARRAY_KINDS: [i32; 7] = [2, 4, 8, 10, 12, 14, 16];

/// The class of Compact records the member reads without their class.
const GENERIC_RECORD_CLASS: &str = "com.hazelcast.internal.serialization.impl.compact.DeserializedGenericRecord";

/// The Java class of an array taken as primitive: non-empty, all items non-null booleans or
/// numbers of one type.
pub(super) fn primitive_array_class(items: &[Value]) -> Option<&'static str> {
    let class = match items.first()? {
        Value::Bool(_) => "[Z",
        Value::Byte(_) => "[B",
        Value::Short(_) => "[S",
        Value::Int(_) => "[I",
        Value::Long(_) => "[J",
        Value::Float(_) => "[F",
        Value::Double(_) => "[D",
        _ => return None,
    };
    let first = std::mem::discriminant(&items[0]);
    items.iter().all(|item| std::mem::discriminant(item) == first).then_some(class)
}

const OBJECT: &str = "java.lang.Object";
const SERIALIZABLE: &str = "java.io.Serializable";
const COMPARABLE: &str = "java.lang.Comparable";
const NUMBER: &str = "java.lang.Number";
const CONSTABLE: &str = "java.lang.constant.Constable";
const CONSTANT_DESC: &str = "java.lang.constant.ConstantDesc";
const TEMPORAL: &[&str] =
    &[SERIALIZABLE, COMPARABLE, "java.time.temporal.Temporal", "java.time.temporal.TemporalAccessor"];

/// The classes and interfaces (besides `java.lang.Object`) a value the member reads is an
/// instance of.
pub(super) fn classes_of(value: &Value) -> Vec<&'static str> {
    let mut classes: Vec<&'static str> = match value {
        Value::Bool(_) => vec!["java.lang.Boolean", SERIALIZABLE, COMPARABLE, CONSTABLE],
        Value::Byte(_) => vec!["java.lang.Byte", NUMBER, SERIALIZABLE, COMPARABLE, CONSTABLE],
        Value::Short(_) => vec!["java.lang.Short", NUMBER, SERIALIZABLE, COMPARABLE, CONSTABLE],
        Value::Int(_) => vec!["java.lang.Integer", NUMBER, SERIALIZABLE, COMPARABLE, CONSTABLE, CONSTANT_DESC],
        Value::Long(_) => vec!["java.lang.Long", NUMBER, SERIALIZABLE, COMPARABLE, CONSTABLE, CONSTANT_DESC],
        Value::Float(_) => vec!["java.lang.Float", NUMBER, SERIALIZABLE, COMPARABLE, CONSTABLE, CONSTANT_DESC],
        Value::Double(_) => vec!["java.lang.Double", NUMBER, SERIALIZABLE, COMPARABLE, CONSTABLE, CONSTANT_DESC],
        Value::Char(_) => vec!["java.lang.Character", SERIALIZABLE, COMPARABLE, CONSTABLE],
        Value::String(_) => {
            vec!["java.lang.String", "java.lang.CharSequence", SERIALIZABLE, COMPARABLE, CONSTABLE, CONSTANT_DESC]
        }
        Value::BigInteger(_) => vec!["java.math.BigInteger", NUMBER, SERIALIZABLE, COMPARABLE],
        Value::BigDecimal(_) => vec!["java.math.BigDecimal", NUMBER, SERIALIZABLE, COMPARABLE],
        Value::Uuid(_) => vec!["java.util.UUID", SERIALIZABLE, COMPARABLE],
        Value::LegacyDate(_) => vec!["java.util.Date", SERIALIZABLE, COMPARABLE, "java.lang.Cloneable"],
        Value::Date(_) => [&["java.time.LocalDate"][..], TEMPORAL].concat(),
        Value::Time(_) => [&["java.time.LocalTime"][..], TEMPORAL].concat(),
        Value::Timestamp(_) => [&["java.time.LocalDateTime"][..], TEMPORAL].concat(),
        Value::TimestampWithTimezone(_) => [&["java.time.OffsetDateTime"][..], TEMPORAL].concat(),
        Value::Json(_) => vec!["com.hazelcast.core.HazelcastJsonValue", COMPARABLE],
        Value::Object(object) if object.type_id == COMPACT => vec![
            GENERIC_RECORD_CLASS,
            "com.hazelcast.internal.serialization.impl.compact.CompactGenericRecord",
            "com.hazelcast.internal.serialization.impl.AbstractGenericRecord",
            "com.hazelcast.internal.serialization.impl.InternalGenericRecord",
            "com.hazelcast.nio.serialization.genericrecord.GenericRecord",
        ],
        _ => vec![],
    };
    classes.push(OBJECT);
    classes
}

/// Every class name [`classes_of`] knows: INSTANCE OF any other needs the class itself.
pub(super) fn check_known_class(class: &str) -> Result<(), EvalError> {
    let samples = [
        Value::Bool(false),
        Value::Byte(0),
        Value::Short(0),
        Value::Int(0),
        Value::Long(0),
        Value::Float(0.0),
        Value::Double(0.0),
        Value::Char(0),
        Value::String(String::new()),
        Value::BigInteger(0.into()),
        Value::Uuid(0),
        Value::LegacyDate(0),
        Value::Json(String::new()),
        Value::Object(crate::value::Object { type_id: COMPACT, bytes: Vec::new() }),
    ];
    let known = ["java.math.BigDecimal", "java.time.LocalDate", "java.time.LocalTime", "java.time.LocalDateTime"]
        .into_iter()
        .chain(["java.time.OffsetDateTime"])
        .chain(TEMPORAL.iter().copied())
        .chain(samples.iter().flat_map(classes_of))
        .any(|known| known == class);
    match known {
        true => Ok(()),
        false => Err(error(EvalErrorKind::Unsupported, format!("ferrogrid cannot load class {class} for instanceOf"))),
    }
}
