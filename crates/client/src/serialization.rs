//! The two Data encodings a load generator needs (client-protocol.md §5): String (type −11)
//! and byte[] (type −12). A blob is `partition_hash: i32 BE` (0 = hash the payload),
//! `type_id: i32 BE`, then the payload; both payloads are `length: i32 BE` and the bytes.
//! Strings count UTF-8 bytes, so the blobs equal those of the Java and Python clients and hash
//! to the same partitions.
//!
//! Queries also need one predicate, `attribute >= value` ([`greater_equal_predicate`]): an
//! `IdentifiedDataSerializable` of Hazelcast's predicate factory, as the clients write it.

/// Serializer type id of `java.lang.String`.
pub const STRING_TYPE_ID: i32 = -11;
/// Serializer type id of `byte[]`.
pub const BYTE_ARRAY_TYPE_ID: i32 = -12;

const HEADER_BYTES: usize = 8;
const LENGTH_BYTES: usize = 4;

/// `text` as a Java String Data blob.
///
/// Panics if `text` is longer than `i32::MAX` bytes (no member accepts such a message).
pub fn serialize_string(text: &str) -> Vec<u8> {
    serialize(STRING_TYPE_ID, text.as_bytes())
}

/// The text of a String blob; None if `data` is not a well-formed String blob.
pub fn deserialize_string(data: &[u8]) -> Option<String> {
    let payload = payload_of(data, STRING_TYPE_ID)?;
    String::from_utf8(payload.to_vec()).ok()
}

/// `bytes` as a Java `byte[]` Data blob.
///
/// Panics if `bytes` is longer than `i32::MAX` bytes.
pub fn serialize_bytes(bytes: &[u8]) -> Vec<u8> {
    serialize(BYTE_ARRAY_TYPE_ID, bytes)
}

/// The bytes of a `byte[]` blob; None if `data` is not a well-formed `byte[]` blob.
pub fn deserialize_bytes(data: &[u8]) -> Option<Vec<u8>> {
    payload_of(data, BYTE_ARRAY_TYPE_ID).map(<[u8]>::to_vec)
}

fn serialize(type_id: i32, payload: &[u8]) -> Vec<u8> {
    let length = i32::try_from(payload.len()).expect("a serialized value fits in i32::MAX bytes");
    let mut blob = Vec::with_capacity(HEADER_BYTES + LENGTH_BYTES + payload.len());
    blob.extend_from_slice(&0i32.to_be_bytes());
    blob.extend_from_slice(&type_id.to_be_bytes());
    blob.extend_from_slice(&length.to_be_bytes());
    blob.extend_from_slice(payload);
    blob
}

/// Serializer type id of an `IdentifiedDataSerializable`.
const DATA_SERIALIZABLE_TYPE_ID: i32 = -2;
/// Hazelcast's predicate factory (`PredicateDataSerializerHook`) and its `GreaterLessPredicate`.
const PREDICATE_FACTORY_ID: i32 = -20;
const GREATER_LESS_CLASS_ID: i32 = 4;

/// The predicate `attribute >= value` (`Predicates.greaterEqual`) as a Data blob; `value` is a
/// Data blob (its header's partition hash is dropped: a nested object is written without one).
///
/// Panics if `value` is shorter than a Data header or `attribute` longer than `i32::MAX` bytes.
pub fn greater_equal_predicate(attribute: &str, value: &[u8]) -> Vec<u8> {
    let nested = &value[4..];
    let mut blob = Vec::with_capacity(HEADER_BYTES + 9 + 4 + attribute.len() + nested.len() + 2);
    blob.extend_from_slice(&0i32.to_be_bytes());
    blob.extend_from_slice(&DATA_SERIALIZABLE_TYPE_ID.to_be_bytes());
    blob.push(1); // identified by factory and class ids
    blob.extend_from_slice(&PREDICATE_FACTORY_ID.to_be_bytes());
    blob.extend_from_slice(&GREATER_LESS_CLASS_ID.to_be_bytes());
    let length = i32::try_from(attribute.len()).expect("an attribute name fits in i32::MAX bytes");
    blob.extend_from_slice(&length.to_be_bytes());
    blob.extend_from_slice(attribute.as_bytes());
    blob.extend_from_slice(nested);
    blob.extend_from_slice(&[1, 0]); // equal, not less
    blob
}

/// The length-prefixed payload of a blob of `type_id`, checked to fill the blob exactly.
fn payload_of(data: &[u8], type_id: i32) -> Option<&[u8]> {
    let header = data.get(..HEADER_BYTES + LENGTH_BYTES)?;
    if i32::from_be_bytes(header[4..8].try_into().expect("4 bytes")) != type_id {
        return None;
    }
    let length = i32::from_be_bytes(header[8..12].try_into().expect("4 bytes"));
    let payload = &data[HEADER_BYTES + LENGTH_BYTES..];
    (usize::try_from(length).ok()? == payload.len()).then_some(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::{partition_for, Data, PartitionId};

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|byte| format!("{byte:02x}")).collect()
    }

    #[test]
    fn strings_match_the_spec_vectors() {
        assert_eq!(hex(&serialize_string("key1")), "00000000fffffff5000000046b657931");
        assert_eq!(hex(&serialize_string("")), "00000000fffffff500000000");
        assert_eq!(hex(&serialize_string("ü€😀")), "00000000fffffff500000009c3bce282acf09f9880");
        assert_eq!(partition_for(Data(&serialize_string("key1")), 271), PartitionId(43));
        assert_eq!(partition_for(Data(&serialize_string("ü€😀")), 271), PartitionId(223));
    }

    #[test]
    fn bytes_match_the_spec_vector() {
        let blob = serialize_bytes(&[1, 2, 3]);
        assert_eq!(hex(&blob), "00000000fffffff400000003010203");
        assert_eq!(partition_for(Data(&blob), 271), PartitionId(263));
    }

    #[test]
    fn a_greater_equal_predicate_is_written_as_the_python_client_writes_it() {
        // hazelcast-python-client 5.x: to_data(predicate.greater_or_equal("__key", "a"))
        let expected = "00000000fffffffe01ffffffec00000004000000055f5f6b6579fffffff500000001610100";
        assert_eq!(hex(&greater_equal_predicate("__key", &serialize_string("a"))), expected);
    }

    #[test]
    fn round_trips_and_rejects_other_blobs() {
        assert_eq!(deserialize_string(&serialize_string("héllo")).as_deref(), Some("héllo"));
        assert_eq!(deserialize_bytes(&serialize_bytes(b"raw")).as_deref(), Some(&b"raw"[..]));
        assert_eq!(deserialize_string(&serialize_bytes(b"raw")), None);
        assert_eq!(deserialize_bytes(&serialize_string("text")), None);
        let mut truncated = serialize_string("abc");
        truncated.pop();
        assert_eq!(deserialize_string(&truncated), None);
        let mut invalid_utf8 = serialize_string("a");
        *invalid_utf8.last_mut().unwrap() = 0xff;
        assert_eq!(deserialize_string(&invalid_utf8), None);
        assert_eq!(deserialize_string(&[]), None);
    }
}
