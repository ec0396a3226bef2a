//! A persisting member's directory, `<base-dir>/member-<port>` (each member on a host keeps its
//! own, found again by the port it binds): its manifest (the partition count and the uuid the
//! member comes back as) and the partition table its data was written under
//! (`partition-table`, replaced whenever the member holds everything a new table gives it).

use ferrogrid_cluster::PartitionTable;
use ferrogrid_config::MemberConfig;
use ferrogrid_persist::{load_blob, save_blob, Manifest};
use std::path::{Path, PathBuf};

/// The file that holds the partition table a member's data was written under.
const TABLE_FILE: &str = "partition-table";

/// The file that holds the Compact schemas the member knew (values on disk need them).
const SCHEMAS_FILE: &str = "schemas";

/// A member's persistence as every thread shares it.
#[derive(Debug, Default)]
pub(crate) struct Persisted {
    /// What the member found in its directory at start (None: it does not persist).
    pub(crate) disk: Option<MemberDisk>,
    /// The version of the partition table last persisted: replicas left under it or an older
    /// one may be emptied on disk.
    pub(crate) table_version: std::sync::atomic::AtomicU64,
    /// How many Compact schemas the directory holds (`Shared::persist_schemas`), and the lock
    /// their writers take.
    pub(crate) schemas: parking_lot::Mutex<usize>,
}

impl Persisted {
    pub(crate) fn new(disk: Option<MemberDisk>) -> Persisted {
        Persisted { disk, ..Persisted::default() }
    }
}

/// What a persisting member finds in its directory at start.
#[derive(Debug)]
pub(crate) struct MemberDisk {
    pub(crate) dir: PathBuf,
    /// The uuid the member's data was written by (a new one for a new directory).
    pub(crate) uuid: u128,
    /// The partition table its data was written under (None: none written yet).
    pub(crate) table: Option<PartitionTable>,
}

/// The directory of the member that binds `port`.
pub(crate) fn member_dir(config: &MemberConfig, port: u16) -> PathBuf {
    Path::new(&config.persistence.base_dir).join(format!("member-{port}"))
}

/// Opens (creating) the member's directory: reads its manifest, or writes one for
/// `new_uuid`, and the partition table. Another partition count, or a damaged file, is an
/// error naming the file.
pub(crate) fn open(config: &MemberConfig, port: u16, new_uuid: u128) -> Result<MemberDisk, String> {
    let dir = member_dir(config, port);
    std::fs::create_dir_all(&dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let manifest =
        Manifest::open_or_create(&dir, config.partition_count, new_uuid.to_be_bytes()).map_err(|e| e.to_string())?;
    let uuid = u128::from_be_bytes(manifest.member_uuid);
    let table = match load_blob(&dir, TABLE_FILE).map_err(|error| error.to_string())? {
        None => None,
        Some(bytes) => {
            let path = dir.join(TABLE_FILE);
            let table = ferrogrid_cluster::wire::decode_table(&bytes)
                .map_err(|reason| format!("{}: not a partition table: {reason}", path.display()))?;
            if table.partition_count() != usize::from(config.partition_count) {
                return Err(format!(
                    "{}: a table of {} partitions, configured {}",
                    path.display(),
                    table.partition_count(),
                    config.partition_count
                ));
            }
            Some(table)
        }
    };
    Ok(MemberDisk { dir, uuid, table })
}

/// Replaces the persisted Compact schemas by `schemas` (every schema the member holds).
pub(crate) fn save_schemas(
    dir: &Path,
    schemas: &[std::sync::Arc<ferrogrid_query::schema::Schema>],
) -> Result<(), String> {
    let mut payload = Vec::new();
    crate::engine::schemas::encode(schemas.iter().map(|schema| &**schema), &mut payload);
    save_blob(dir, SCHEMAS_FILE, &payload).map_err(|error| error.to_string())
}

/// The persisted Compact schemas (none when none were saved).
pub(crate) fn load_schemas(dir: &Path) -> Result<Vec<ferrogrid_query::schema::Schema>, String> {
    let Some(payload) = load_blob(dir, SCHEMAS_FILE).map_err(|error| error.to_string())? else {
        return Ok(Vec::new());
    };
    crate::engine::schemas::decode(&payload)
        .map_err(|error| format!("{}: not a list of schemas: {error}", dir.join(SCHEMAS_FILE).display()))
}

/// Replaces the persisted partition table (the member holds everything `table` gives it).
pub(crate) fn save_table(dir: &Path, table: &PartitionTable) -> Result<(), String> {
    save_blob(dir, TABLE_FILE, &ferrogrid_cluster::wire::encode_table(table)).map_err(|error| error.to_string())
}
