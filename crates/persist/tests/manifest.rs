//! The member-wide manifest: created once, read back, another partition count refused.

use std::fs;

use ferrogrid_persist::{Manifest, PersistError, MANIFEST_NAME};

const UUID: [u8; 16] = *b"0123456789abcdef";

#[test]
fn a_manifest_is_created_once_and_keeps_its_uuid() {
    let base = tempfile::tempdir().unwrap();
    let created = Manifest::open_or_create(base.path(), 271, UUID).unwrap();
    assert_eq!(created, Manifest { partition_count: 271, member_uuid: UUID });
    let reopened = Manifest::open_or_create(base.path(), 271, *b"another uuid....").unwrap();
    assert_eq!(reopened, created, "the stored uuid wins over a new one");
    let names: Vec<_> = fs::read_dir(base.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert_eq!(names, [MANIFEST_NAME], "no temp file is left");
}

#[test]
fn another_partition_count_is_refused() {
    let base = tempfile::tempdir().unwrap();
    Manifest::open_or_create(base.path(), 271, UUID).unwrap();
    let error = Manifest::open_or_create(base.path(), 137, UUID).unwrap_err();
    assert!(matches!(error, PersistError::PartitionCountMismatch { stored: 271, configured: 137, .. }));
    let message = error.to_string();
    assert!(message.ends_with("persisted with 271 partitions, configured 137: refusing to start"), "{message}");
    assert!(message.contains(MANIFEST_NAME), "{message}");
}

#[test]
fn a_damaged_manifest_is_refused() {
    let base = tempfile::tempdir().unwrap();
    Manifest::open_or_create(base.path(), 271, UUID).unwrap();
    let path = base.path().join(MANIFEST_NAME);
    let original = fs::read(&path).unwrap();
    for position in 0..original.len() {
        let mut bytes = original.clone();
        bytes[position] ^= 0x04;
        fs::write(&path, &bytes).unwrap();
        let error = Manifest::open_or_create(base.path(), 271, UUID).unwrap_err();
        assert!(matches!(error, PersistError::Corrupt { .. }), "flip at {position}: {error:?}");
    }
    for len in [0, 27, 29] {
        let mut bytes = original.clone();
        bytes.resize(len, 0);
        fs::write(&path, &bytes).unwrap();
        let error = Manifest::open_or_create(base.path(), 271, UUID).unwrap_err();
        assert!(matches!(error, PersistError::Corrupt { offset: 0, .. }), "{len} bytes: {error:?}");
    }
}

#[test]
fn partition_files_without_a_manifest_are_refused() {
    let base = tempfile::tempdir().unwrap();
    fs::create_dir(base.path().join("partition-0")).unwrap();
    let error = Manifest::open_or_create(base.path(), 271, UUID).unwrap_err();
    assert!(error.to_string().ends_with("manifest is missing beside partition files: refusing to start"), "{error}");
    assert!(!base.path().join(MANIFEST_NAME).exists());
}
