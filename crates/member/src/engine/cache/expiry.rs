//! JCache expiry policies: a cache's (its configuration's `expiryPolicyFactory`) and one an
//! operation carries. Each gives a duration for creation, and maybe for access and for update
//! (none: the entry's expiry stays), as `javax.cache.expiry`'s policies do:
//!
//! | policy | creation | access | update |
//! |---|---|---|---|
//! | `EternalExpiryPolicy` | eternal | — | — |
//! | `CreatedExpiryPolicy(d)` | d | — | — |
//! | `AccessedExpiryPolicy(d)` | d | d | — |
//! | `ModifiedExpiryPolicy(d)` | d | — | d |
//! | `TouchedExpiryPolicy(d)` | d | d | d |
//!
//! They arrive Java-serialized (`java_serial.rs`), a factory as a `FactoryBuilder`'s
//! `SingletonFactory` holding the policy, or a `ClassFactory` naming one of these classes. Any
//! other class is one the member would have to load: refused with the
//! `ClassNotFoundException` a Hazelcast member without the class answers.
//!
//! Hazelcast's own `HazelcastExpiryPolicy` (a creation, an access and an update duration) is
//! read too: an operation's as Hazelcast serializes it (IdentifiedDataSerializable, factory
//! −13, class 21: each duration's amount and `TimeUnit` ordinal), a factory's Java-serialized.

use crate::engine::cache::java_serial::{self, Value, JAVA_SERIALIZATION};
use crate::engine::request::{ErrorKind, OpError};
use ferrogrid_protocol::Data;

/// How long an entry lives from a moment on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifetime {
    Eternal,
    /// Milliseconds (0: the entry is expired at once).
    Millis(i64),
}

impl Lifetime {
    /// The expiry time for a moment `now_ms` (`i64::MAX`: never).
    pub(crate) fn from(self, now_ms: i64) -> i64 {
        match self {
            Lifetime::Eternal => i64::MAX,
            Lifetime::Millis(ms) => now_ms.saturating_add(ms),
        }
    }
}

/// What a policy says for each moment of an entry's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExpiryPolicy {
    pub creation: Lifetime,
    pub access: Option<Lifetime>,
    pub update: Option<Lifetime>,
}

impl ExpiryPolicy {
    pub(crate) const ETERNAL: ExpiryPolicy = ExpiryPolicy { creation: Lifetime::Eternal, access: None, update: None };
}

fn refused(text: String) -> OpError {
    OpError::new(ErrorKind::Serialization, text)
}

/// The policy a factory (a cache configuration's) makes.
pub(crate) fn from_factory(data: &[u8]) -> Result<ExpiryPolicy, OpError> {
    let value = java_value(data)?;
    match value.class() {
        Some("javax.cache.configuration.FactoryBuilder$SingletonFactory") => {
            policy(value.field("instance").ok_or_else(|| refused("a SingletonFactory without its instance".into()))?)
        }
        Some("javax.cache.configuration.FactoryBuilder$ClassFactory") => match value.field("className") {
            Some(Value::Text(class)) if &**class == "javax.cache.expiry.EternalExpiryPolicy" => {
                Ok(ExpiryPolicy::ETERNAL)
            }
            Some(Value::Text(class)) => Err(refused(format!("java.lang.ClassNotFoundException: {class}"))),
            _ => Err(refused("a ClassFactory without its class name".into())),
        },
        Some(class) => Err(refused(format!("java.lang.ClassNotFoundException: {class}"))),
        None => Err(refused("an expiry policy factory that is not an object".into())),
    }
}

/// The policy an operation carries (None: the cache's).
pub(crate) fn from_operation(data: Option<&[u8]>) -> Result<Option<ExpiryPolicy>, OpError> {
    data.map(|data| match Data(data).type_id() {
        Some(IDENTIFIED) => hazelcast_policy(Data(data).payload()),
        _ => policy(&java_value(data)?),
    })
    .transpose()
}

/// The IdentifiedDataSerializable serialization type id.
const IDENTIFIED: i32 = -2;
/// `HazelcastExpiryPolicy`'s factory (`CacheDataSerializerHook`) and class ids in 5.6.
const HAZELCAST_POLICY: (i32, i32) = (-13, 21);
/// `TimeUnit`'s constants by ordinal.
const TIME_UNITS: [&str; 7] = ["NANOSECONDS", "MICROSECONDS", "MILLISECONDS", "SECONDS", "MINUTES", "HOURS", "DAYS"];

/// A `HazelcastExpiryPolicy` as Hazelcast serializes it: a flags byte, factory and class ids,
/// then per duration its amount (`i64`; −1: none) and its unit's ordinal (`i32`).
fn hazelcast_policy(payload: &[u8]) -> Result<ExpiryPolicy, OpError> {
    let short = || refused("a truncated HazelcastExpiryPolicy".into());
    let int = |at: usize| -> Result<i32, OpError> {
        Ok(i32::from_be_bytes(payload.get(at..at + 4).ok_or_else(short)?.try_into().expect("4 bytes")))
    };
    let ids = (int(1)?, int(5)?);
    if payload.first().is_none_or(|flags| flags & 1 == 0) || ids != HAZELCAST_POLICY {
        let text = format!("an IdentifiedDataSerializable expiry policy of factory {} and class {}", ids.0, ids.1);
        return Err(refused(text));
    }
    let mut at = 9;
    let mut duration = || -> Result<Option<Lifetime>, OpError> {
        let amount = i64::from_be_bytes(payload.get(at..at + 8).ok_or_else(short)?.try_into().expect("8 bytes"));
        at += 8;
        if amount < 0 {
            return Ok(None);
        }
        let unit = usize::try_from(int(at)?).ok().and_then(|ordinal| TIME_UNITS.get(ordinal));
        at += 4;
        let unit = unit.ok_or_else(|| refused("a TimeUnit ordinal beyond DAYS".into()))?;
        Ok(Some(millis(amount, unit)?))
    };
    let (creation, access, update) = (duration()?, duration()?, duration()?);
    Ok(ExpiryPolicy { creation: creation.unwrap_or(Lifetime::Eternal), access, update })
}

fn java_value(data: &[u8]) -> Result<Value, OpError> {
    let data = Data(data);
    if data.type_id() != Some(JAVA_SERIALIZATION) {
        let text = format!(
            "an expiry policy of serialization type {:?}: only Java-serialized javax.cache.expiry policies are read",
            data.type_id()
        );
        return Err(OpError::new(ErrorKind::Unsupported, text));
    }
    java_serial::read(data.payload())
        .map_err(|reason| refused(format!("an expiry policy that cannot be read: {reason}")))
}

fn policy(value: &Value) -> Result<ExpiryPolicy, OpError> {
    let class = value.class().unwrap_or("");
    if class == "javax.cache.expiry.EternalExpiryPolicy" {
        return Ok(ExpiryPolicy::ETERNAL);
    }
    if class == "com.hazelcast.cache.HazelcastExpiryPolicy" {
        let duration = |name| value.field(name).filter(|field| **field != Value::Null).map(lifetime).transpose();
        let creation = duration("create")?.unwrap_or(Lifetime::Eternal);
        return Ok(ExpiryPolicy { creation, access: duration("access")?, update: duration("update")? });
    }
    let (access, update) = match class {
        "javax.cache.expiry.CreatedExpiryPolicy" => (false, false),
        "javax.cache.expiry.AccessedExpiryPolicy" => (true, false),
        "javax.cache.expiry.ModifiedExpiryPolicy" => (false, true),
        "javax.cache.expiry.TouchedExpiryPolicy" => (true, true),
        other => return Err(refused(format!("java.lang.ClassNotFoundException: {other}"))),
    };
    let duration = value.field("expiryDuration").ok_or_else(|| refused(format!("{class} without its duration")))?;
    let lifetime = lifetime(duration)?;
    Ok(ExpiryPolicy { creation: lifetime, access: access.then_some(lifetime), update: update.then_some(lifetime) })
}

/// A `javax.cache.expiry.Duration`: eternal when its unit is null (`Duration.ETERNAL`).
fn lifetime(duration: &Value) -> Result<Lifetime, OpError> {
    let Some(Value::Primitive(amount)) = duration.field("durationAmount") else {
        return Err(refused("a Duration without its amount".into()));
    };
    let unit = match duration.field("timeUnit") {
        Some(Value::Null) | None => return Ok(Lifetime::Eternal),
        Some(Value::Enum { constant, .. }) => constant.clone(),
        Some(_) => return Err(refused("a Duration whose unit is not a TimeUnit".into())),
    };
    millis(*amount, &unit)
}

/// `amount` of `unit` in milliseconds, as `TimeUnit.toMillis` (saturating, truncating).
fn millis(amount: i64, unit: &str) -> Result<Lifetime, OpError> {
    let per_unit_ns: i64 = match unit {
        "NANOSECONDS" => 1,
        "MICROSECONDS" => 1_000,
        "MILLISECONDS" => 1_000_000,
        "SECONDS" => 1_000_000_000,
        "MINUTES" => 60_000_000_000,
        "HOURS" => 3_600_000_000_000,
        "DAYS" => 86_400_000_000_000,
        other => return Err(refused(format!("the TimeUnit {other}"))),
    };
    let ms = (i128::from(amount) * i128::from(per_unit_ns) / 1_000_000).clamp(0, i128::from(i64::MAX)) as i64;
    Ok(Lifetime::Millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streams `javax.cache` 1.1.1's `ObjectOutputStream` wrote (Hazelcast's type −100 carries
    /// them after its 8-byte header), of `CreatedExpiryPolicy.factoryOf(new Duration(SECONDS,
    /// 1))`, `new TouchedExpiryPolicy(new Duration(MILLISECONDS, 1500))` and `new
    /// ModifiedExpiryPolicy(Duration.ETERNAL)`.
    const CREATED_FACTORY: &str = "aced0005737200396a617661782e63616368652e636f6e66696775726174696f6e2e466163746f72794275696c6465722453696e676c65746f6e466163746f72790000002edeb815420200014c0008696e7374616e63657400124c6a6176612f6c616e672f4f626a6563743b7870737200266a617661782e63616368652e6578706972792e43726561746564457870697279506f6c6963790000002edebaf90f0200014c000e6578706972794475726174696f6e74001d4c6a617661782f63616368652f6578706972792f4475726174696f6e3b78707372001b6a617661782e63616368652e6578706972792e4475726174696f6e0000002edeb814820200024a000e6475726174696f6e416d6f756e744c000874696d65556e697474001f4c6a6176612f7574696c2f636f6e63757272656e742f54696d65556e69743b787000000000000000017e72001d6a6176612e7574696c2e636f6e63757272656e742e54696d65556e697400000000000000001200007872000e6a6176612e6c616e672e456e756d000000000000000012000078707400075345434f4e4453";
    const TOUCHED: &str = "aced0005737200266a617661782e63616368652e6578706972792e546f7563686564457870697279506f6c6963790000002edebaf90f0200014c000e6578706972794475726174696f6e74001d4c6a617661782f63616368652f6578706972792f4475726174696f6e3b78707372001b6a617661782e63616368652e6578706972792e4475726174696f6e0000002edeb814820200024a000e6475726174696f6e416d6f756e744c000874696d65556e697474001f4c6a6176612f7574696c2f636f6e63757272656e742f54696d65556e69743b787000000000000005dc7e72001d6a6176612e7574696c2e636f6e63757272656e742e54696d65556e697400000000000000001200007872000e6a6176612e6c616e672e456e756d0000000000000000120000787074000c4d494c4c495345434f4e4453";
    const MODIFIED_ETERNAL: &str = "aced0005737200276a617661782e63616368652e6578706972792e4d6f646966696564457870697279506f6c6963790000002edeb815220200014c000e6578706972794475726174696f6e74001d4c6a617661782f63616368652f6578706972792f4475726174696f6e3b78707372001b6a617661782e63616368652e6578706972792e4475726174696f6e0000002edeb814820200024a000e6475726174696f6e416d6f756e744c000874696d65556e697474001f4c6a6176612f7574696c2f636f6e63757272656e742f54696d65556e69743b7870000000000000000070";

    /// The stream as Data: partition hash 0, type −100, the stream.
    fn data(stream: &str) -> Vec<u8> {
        let mut data = vec![0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x9C];
        data.extend((0..stream.len()).step_by(2).map(|i| u8::from_str_radix(&stream[i..i + 2], 16).unwrap()));
        data
    }

    #[test]
    fn policies_read_as_javax_cache_defines_them() {
        let created = from_factory(&data(CREATED_FACTORY)).unwrap();
        assert_eq!(created, ExpiryPolicy { creation: Lifetime::Millis(1000), access: None, update: None });
        let touched = from_operation(Some(&data(TOUCHED))).unwrap().unwrap();
        let lifetime = Some(Lifetime::Millis(1500));
        assert_eq!(touched, ExpiryPolicy { creation: Lifetime::Millis(1500), access: lifetime, update: lifetime });
        let modified = from_operation(Some(&data(MODIFIED_ETERNAL))).unwrap().unwrap();
        let eternal = Some(Lifetime::Eternal);
        assert_eq!(modified, ExpiryPolicy { creation: Lifetime::Eternal, access: None, update: eternal });
        assert_eq!(from_operation(None).unwrap(), None);
    }

    #[test]
    fn hazelcasts_own_policy_reads_as_its_three_durations() {
        // `new HazelcastExpiryPolicy(1500, 1500, 1500, MILLISECONDS)` as the 5.6.0 jar serializes it
        let stream = "00000000fffffffe01fffffff30000001500000000000005dc0000000200000000000005dc0000000200000000000005dc00000002";
        let bytes: Vec<u8> =
            (0..stream.len()).step_by(2).map(|i| u8::from_str_radix(&stream[i..i + 2], 16).unwrap()).collect();
        let lifetime = Some(Lifetime::Millis(1500));
        let expected = ExpiryPolicy { creation: Lifetime::Millis(1500), access: lifetime, update: lifetime };
        assert_eq!(from_operation(Some(&bytes)).unwrap(), Some(expected));
        for end in 8..bytes.len() {
            assert!(from_operation(Some(&bytes[..end])).is_err(), "truncated at {end}");
        }
        let mut other = bytes.clone();
        other[16] = 22;
        assert!(from_operation(Some(&other)).unwrap_err().message.contains("class 22"));
    }

    #[test]
    fn a_policy_the_member_would_have_to_load_is_refused_naming_it() {
        let refused = from_operation(Some(&data(CREATED_FACTORY))).unwrap_err();
        assert!(
            refused
                .message
                .contains("ClassNotFoundException: javax.cache.configuration.FactoryBuilder$SingletonFactory"),
            "{}",
            refused.message
        );
        let not_java = [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xF5, 1, 2];
        assert_eq!(from_factory(&not_java).unwrap_err().kind, ErrorKind::Unsupported);
    }
}
