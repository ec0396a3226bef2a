//! Requests that carry Java code (an executor's task, a map's entry processor), which
//! ferrogrid cannot run: each is answered with the error a Hazelcast 5.6 member answers when
//! it does not have the class, worked out from the serialized object alone (no class is ever
//! loaded), so a client sees what it would see against such a member:
//!
//! | serialized as | executor task | entry processor |
//! |---|---|---|
//! | IdentifiedDataSerializable | `HazelcastSerializationException: No DataSerializerFactory registered for namespace: <factory id>` | the same |
//! | Portable | `IllegalArgumentException: <generic record class>` (not a Callable or Runnable) | `ClassCastException: class <generic record class> cannot be cast to class com.hazelcast.map.EntryProcessor (…)` |
//! | a Java built-in (String, Integer, …) | `IllegalArgumentException: java.lang.String` | `ClassCastException: class java.lang.String cannot be cast to …` |
//! | a custom serializer's type id | `HazelcastSerializationException: There is no suitable de-serializer for type <id>. …` | the same |
//!
//! A durable or scheduled executor's task is cast to `Callable`, a map's interceptor
//! (Map.addInterceptor) to `com.hazelcast.map.MapInterceptor` and Map.replaceAll's function to
//! `java.util.function.BiFunction`: a ClassCastException as for an entry processor, naming the
//! JDK's module for the JDK's interfaces.
//!
//! (Checked against a Hazelcast 5.6.0 member by `tests/python/test_java_code.py`.) Any other
//! serialized form (Java serialization, Compact, JSON) gets a HazelcastSerializationException
//! saying ferrogrid runs no Java code.

use crate::engine::request::{ErrorKind, OpError};
use ferrogrid_protocol::Data;

/// What the member would have cast the object to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JavaRole {
    /// An executor's task (`Callable` or `Runnable`).
    Task,
    /// A map's `EntryProcessor`.
    EntryProcessor,
    /// A durable or scheduled executor's task, cast to `Callable`.
    Callable,
    /// A map event journal read's predicate (`java.util.function.Predicate`).
    JournalPredicate,
    /// A map event journal read's projection (`java.util.function.Function`).
    JournalProjection,
    /// A map's `MapInterceptor`.
    Interceptor,
    /// Map.replaceAll's function, cast to `java.util.function.BiFunction`.
    BiFunction,
}

/// Portable objects a member has no factory for deserialize as this generic record.
const PORTABLE_RECORD: &str = "com.hazelcast.internal.serialization.impl.portable.DeserializedPortableGenericRecord";
const ENTRY_PROCESSOR: &str = "com.hazelcast.map.EntryProcessor";

/// The Java class of a built-in serialization type id (`SerializationConstants`).
fn builtin_class(type_id: i32) -> Option<&'static str> {
    Some(match type_id {
        -3 => "java.lang.Byte",
        -4 => "java.lang.Boolean",
        -5 => "java.lang.Character",
        -6 => "java.lang.Short",
        -7 => "java.lang.Integer",
        -8 => "java.lang.Long",
        -9 => "java.lang.Float",
        -10 => "java.lang.Double",
        -11 => "java.lang.String",
        -21 => "java.util.UUID",
        _ => return None,
    })
}

/// The error a Hazelcast member without the object's class answers for `code` in `role`.
pub(crate) fn refusal(code: &[u8], role: JavaRole) -> OpError {
    let data = Data(code);
    let payload = if code.len() >= 8 { data.payload() } else { &[] };
    match data.type_id() {
        Some(-2) if payload.first().is_some_and(|header| header & 1 == 1) && payload.len() >= 5 => {
            let factory = i32::from_be_bytes(payload[1..5].try_into().expect("4 bytes"));
            let text = format!("No DataSerializerFactory registered for namespace: {factory}");
            OpError::new(ErrorKind::Serialization, text)
        }
        Some(-1) => not_the_role(PORTABLE_RECORD, false, role),
        Some(type_id) if type_id > 0 => OpError::new(
            ErrorKind::Serialization,
            format!(
                "There is no suitable de-serializer for type {type_id}. This exception is likely caused by \
                 differences in the serialization configuration between members or between clients and members."
            ),
        ),
        Some(type_id) => match builtin_class(type_id) {
            Some(class) => not_the_role(class, true, role),
            None => OpError::new(
                ErrorKind::Serialization,
                format!(
                    "ferrogrid runs no Java code: cannot load the class of an object of serialization type {type_id}"
                ),
            ),
        },
        None => {
            OpError::new(ErrorKind::Serialization, "ferrogrid runs no Java code: the object is not serialized data")
        }
    }
}

/// Where a class lives, as Java's ClassCastException names it: a JDK class's module and loader,
/// or the application's.
fn module_of(jdk: bool) -> &'static str {
    if jdk {
        "module java.base of loader 'bootstrap'"
    } else {
        "unnamed module of loader 'app'"
    }
}

/// An object of `class` where `role` is needed: what the member says (`jdk`: a JDK class).
fn not_the_role(class: &str, jdk: bool, role: JavaRole) -> OpError {
    let (target, target_jdk) = match role {
        // Hazelcast's DistributedExecutorService names the class it can neither call nor run.
        JavaRole::Task => return OpError::new(ErrorKind::IllegalArgument, class),
        JavaRole::EntryProcessor => (ENTRY_PROCESSOR, false),
        JavaRole::Callable => ("java.util.concurrent.Callable", true),
        JavaRole::JournalPredicate => ("java.util.function.Predicate", true),
        JavaRole::JournalProjection => ("java.util.function.Function", true),
        JavaRole::Interceptor => ("com.hazelcast.map.MapInterceptor", false),
        JavaRole::BiFunction => ("java.util.function.BiFunction", true),
    };
    let modules = if jdk == target_jdk {
        format!("{class} and {target} are in {}", module_of(jdk))
    } else {
        format!("{class} is in {}; {target} is in {}", module_of(jdk), module_of(target_jdk))
    };
    OpError::new(ErrorKind::ClassCast, format!("class {class} cannot be cast to class {target} ({modules})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(type_id: i32, payload: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0, 0, 0, 0];
        bytes.extend_from_slice(&type_id.to_be_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    #[test]
    fn each_serialized_form_gets_hazelcasts_error() {
        let identified = data(-2, &[1, 0, 0, 0, 66, 0, 0, 0, 1]);
        let roles =
            [JavaRole::Task, JavaRole::EntryProcessor, JavaRole::Callable, JavaRole::Interceptor, JavaRole::BiFunction];
        for role in roles {
            let failure = refusal(&identified, role);
            assert_eq!(failure.kind, ErrorKind::Serialization);
            assert_eq!(failure.message, "No DataSerializerFactory registered for namespace: 66");
            assert!(refusal(&data(1000, b"x"), role)
                .message
                .starts_with("There is no suitable de-serializer for type 1000."));
        }
        let string = data(-11, b"\0\0\0\x01s");
        assert_eq!(refusal(&string, JavaRole::Task).message, "java.lang.String");
        assert_eq!(refusal(&string, JavaRole::Task).kind, ErrorKind::IllegalArgument);
        let cast = refusal(&string, JavaRole::EntryProcessor);
        assert_eq!(cast.kind, ErrorKind::ClassCast);
        assert!(cast.message.starts_with("class java.lang.String cannot be cast to class com.hazelcast.map.EntryProcessor (java.lang.String is in module java.base"));
        let portable = refusal(&data(-1, &[0; 8]), JavaRole::EntryProcessor);
        assert!(portable
            .message
            .contains("DeserializedPortableGenericRecord and com.hazelcast.map.EntryProcessor are in unnamed module"));
        let callable = refusal(&data(-7, &[0, 0, 0, 7]), JavaRole::Callable).message;
        let both_jdk =
            "(java.lang.Integer and java.util.concurrent.Callable are in module java.base of loader 'bootstrap')";
        assert!(callable.ends_with(both_jdk), "{callable}");
        let callable = refusal(&data(-1, &[0; 8]), JavaRole::Callable).message;
        let apart = "is in unnamed module of loader 'app'; java.util.concurrent.Callable is in module java.base of loader 'bootstrap')";
        assert!(callable.ends_with(apart), "{callable}");
        let interceptor = refusal(&string, JavaRole::Interceptor).message;
        assert!(interceptor.ends_with("com.hazelcast.map.MapInterceptor is in unnamed module of loader 'app')"));
        let function = refusal(&string, JavaRole::BiFunction).message;
        assert!(function.ends_with(
            "(java.lang.String and java.util.function.BiFunction are in module java.base of loader 'bootstrap')"
        ));
        assert_eq!(refusal(b"xy", JavaRole::Task).kind, ErrorKind::Serialization, "not Data at all");
    }
}
