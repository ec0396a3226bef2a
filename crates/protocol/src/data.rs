//! "Data": the serialized key/value blob, and the partition it belongs to.
//!
//! A blob is `partition_hash: i32 BE`, `type_id: i32 BE`, payload. ferrogrid treats the
//! payload as opaque bytes: keys compare by their whole serialized bytes, as in Hazelcast.

/// A partition id: `0..partition_count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PartitionId(pub u16);

/// A borrowed serialized blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Data<'a>(pub &'a [u8]);

/// Size of the blob header (partition hash + type id).
pub const DATA_HEADER_SIZE: usize = 8;

/// Seed of the murmur hash Hazelcast uses for partitioning.
pub const MURMUR_SEED: u32 = 0x0100_0193;

impl<'a> Data<'a> {
    /// The explicit partition hash, if the client set one (0 = not set).
    pub fn explicit_partition_hash(&self) -> i32 {
        match self.0.get(..4) {
            Some(bytes) => i32::from_be_bytes(bytes.try_into().expect("4 bytes")),
            None => 0,
        }
    }

    pub fn type_id(&self) -> Option<i32> {
        self.0.get(4..8).map(|bytes| i32::from_be_bytes(bytes.try_into().expect("4 bytes")))
    }

    /// The payload after the 8-byte header (empty for a short blob).
    pub fn payload(&self) -> &'a [u8] {
        self.0.get(DATA_HEADER_SIZE..).unwrap_or(&[])
    }

    /// The hash Hazelcast partitions by: the explicit one, else murmur3 of the payload.
    pub fn partition_hash(&self) -> i32 {
        match self.explicit_partition_hash() {
            0 => murmur3_x86_32(self.payload(), MURMUR_SEED) as i32,
            explicit => explicit,
        }
    }
}

/// The partition of a blob, by the member's rule (`i32::MIN` maps to 0).
pub fn partition_for(data: Data<'_>, partition_count: u16) -> PartitionId {
    assert!(partition_count > 0, "partition count is validated to be positive");
    let hash = data.partition_hash();
    let index = if hash == i32::MIN { 0 } else { hash.unsigned_abs() % partition_count as u32 };
    PartitionId(index as u16)
}

/// The partition of a distributed object named `name` (a queue, list or set lives there), as
/// Hazelcast's clients and members place it: the partition of the serialized string after the
/// first `@` (the partition key), or of the whole name.
pub fn partition_for_name(name: &str, partition_count: u16) -> PartitionId {
    partition_for_string(name.split_once('@').map_or(name, |(_, key)| key), partition_count)
}

/// The partition of the serialized string `key`, whole (`@` means nothing here): where
/// Hazelcast's partition service places a map-wide event of the map named `key`.
pub fn partition_for_string(key: &str, partition_count: u16) -> PartitionId {
    let mut blob = Vec::with_capacity(DATA_HEADER_SIZE + 4 + key.len());
    blob.extend_from_slice(&0i32.to_be_bytes());
    blob.extend_from_slice(&STRING_TYPE_ID.to_be_bytes());
    blob.extend_from_slice(&(key.len() as i32).to_be_bytes());
    blob.extend_from_slice(key.as_bytes());
    partition_for(Data(&blob), partition_count)
}

/// The type id of a serialized `String`.
const STRING_TYPE_ID: i32 = -11;

/// MurmurHash3 x86 32-bit, blocks read little-endian.
pub fn murmur3_x86_32(bytes: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut hash = seed;
    let mut blocks = bytes.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes(block.try_into().expect("chunk of 4"));
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        hash ^= k;
        hash = hash.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (index, byte) in tail.iter().enumerate() {
            k ^= (*byte as u32) << (8 * index);
        }
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        hash ^= k;
    }
    hash ^= bytes.len() as u32;
    hash ^= hash >> 16;
    hash = hash.wrapping_mul(0x85eb_ca6b);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(0xc2b2_ae35);
    hash ^= hash >> 16;
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_s_partition_is_its_partition_key_s() {
        assert_eq!(partition_for_name("key1", 271), PartitionId(43));
        assert_eq!(partition_for_name("orders@key1", 271), PartitionId(43));
    }

    #[test]
    fn a_string_s_partition_hashes_it_whole() {
        assert_eq!(partition_for_string("key1", 271), PartitionId(43));
        let whole = partition_for_string("orders@key1", 271);
        let mut blob = hex::decode("00000000fffffff50000000b").unwrap();
        blob.extend_from_slice(b"orders@key1");
        assert_eq!(whole, partition_for(Data(&blob), 271));
        assert_ne!(whole, PartitionId(43), "the part after `@` is not the key here");
    }

    #[test]
    fn string_key1_is_partition_43() {
        let blob = hex::decode("00000000fffffff5000000046b657931").unwrap();
        assert_eq!(Data(&blob).partition_hash(), 1754812034);
        assert_eq!(partition_for(Data(&blob), 271), PartitionId(43));
    }

    #[test]
    fn explicit_partition_hash_wins() {
        let blob = [0, 0, 0, 5, 0xff, 0xff, 0xff, 0xf5, 0, 0, 0, 0];
        assert_eq!(partition_for(Data(&blob), 271), PartitionId(5));
        let min = [0x80, 0, 0, 0, 0xff, 0xff, 0xff, 0xf5];
        assert_eq!(partition_for(Data(&min), 271), PartitionId(0));
    }

    #[test]
    fn short_blob_hashes_empty_payload() {
        assert_eq!(partition_for(Data(&[]), 271), partition_for(Data(&[0; 8]), 271));
    }
}
