//! Structures ("custom types") carried inside messages: addresses, members, the partition
//! table, Compact schemas, paging anchors, index definitions, entry views and XA transaction ids.

use crate::data::Data;
use crate::frame::DecodeError;
use crate::message::*;
use crate::types::Uuid;

/// A member address: host and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address<'a> {
    pub host: &'a str,
    pub port: i32,
}

impl<'a> VarField<'a> for Address<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let port = FixedReader::new(reader.value_frame("address port")?).read::<i32>()?;
        let host = reader.string()?;
        reader.skip_to_end()?;
        Ok(Address { host, port })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.port);
        writer.frame(self.host.as_bytes()).end();
    }
}

/// Which endpoint an address serves (0 MEMBER, 1 CLIENT, …) and its optional identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointQualifier<'a> {
    pub endpoint_type: i32,
    pub identifier: Option<&'a str>,
}

pub const ENDPOINT_MEMBER: i32 = 0;
pub const ENDPOINT_CLIENT: i32 = 1;

impl<'a> VarField<'a> for EndpointQualifier<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let endpoint_type = FixedReader::new(reader.value_frame("qualifier type")?).read::<i32>()?;
        let identifier = <Option<&str>>::read(reader)?;
        reader.skip_to_end()?;
        Ok(EndpointQualifier { endpoint_type, identifier })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.endpoint_type);
        writer.var(&self.identifier).end();
    }
}

/// A product version: major, minor, patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberVersion {
    pub major: i8,
    pub minor: i8,
    pub patch: i8,
}

impl VarField<'_> for MemberVersion {
    fn read(reader: &mut MessageReader<'_>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("member version")?);
        let version = MemberVersion { major: fixed.read()?, minor: fixed.read()?, patch: fixed.read()? };
        reader.skip_to_end()?;
        Ok(version)
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.major).fixed(&self.minor).fixed(&self.patch);
        writer.end();
    }
}

/// The cluster version (major, minor) of the ClusterVersion event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterVersion {
    pub major: i8,
    pub minor: i8,
}

impl VarField<'_> for ClusterVersion {
    fn read(reader: &mut MessageReader<'_>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("cluster version")?);
        let version = ClusterVersion { major: fixed.read()?, minor: fixed.read()? };
        reader.skip_to_end()?;
        Ok(version)
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.major).fixed(&self.minor);
        writer.end();
    }
}

/// One member as the cluster view describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberInfo<'a> {
    pub uuid: Uuid,
    pub lite_member: bool,
    pub address: Address<'a>,
    pub attributes: Vec<(&'a str, &'a str)>,
    pub version: MemberVersion,
    pub address_map: Vec<(EndpointQualifier<'a>, Address<'a>)>,
}

impl<'a> VarField<'a> for MemberInfo<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("member info")?);
        let uuid = fixed.read::<Option<Uuid>>()?.unwrap_or_default();
        let lite_member = fixed.read()?;
        let address = Address::read(reader)?;
        let attributes = VarField::read(reader)?;
        let version = MemberVersion::read(reader)?;
        let address_map = VarField::read(reader)?;
        reader.skip_to_end()?;
        Ok(MemberInfo { uuid, lite_member, address, attributes, version, address_map })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&Some(self.uuid)).fixed(&self.lite_member);
        writer.var(&self.address).var(&self.attributes).var(&self.version).var(&self.address_map);
        writer.end();
    }
}

/// The partition table: for each member, the partitions it owns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartitionTable(pub Vec<(Uuid, Vec<i32>)>);

impl VarField<'_> for PartitionTable {
    fn read(reader: &mut MessageReader<'_>) -> Result<Self, DecodeError> {
        let lists = <Vec<Packed<i32>>>::read(reader)?;
        let members = <Packed<Option<Uuid>>>::read(reader)?;
        if members.0.len() != lists.len() {
            return Err(DecodeError::UnexpectedFrame("one member uuid per partition list"));
        }
        let pairs = members.0.into_iter().map(Option::unwrap_or_default).zip(lists.into_iter().map(|l| l.0));
        Ok(PartitionTable(pairs.collect()))
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin();
        for (_, partitions) in &self.0 {
            writer.open_frame(0);
            for partition in partitions {
                writer.fixed(partition);
            }
        }
        writer.end().open_frame(0);
        for (uuid, _) in &self.0 {
            writer.fixed(&Some(*uuid));
        }
    }
}

/// A (service, name) pair naming a distributed object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistributedObjectInfo<'a> {
    pub service_name: &'a str,
    pub name: &'a str,
}

impl<'a> VarField<'a> for DistributedObjectInfo<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let service_name = reader.string()?;
        let name = reader.string()?;
        reader.skip_to_end()?;
        Ok(DistributedObjectInfo { service_name, name })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().frame(self.service_name.as_bytes()).frame(self.name.as_bytes()).end();
    }
}

/// One field of a Compact schema as the wire carries it (`FieldDescriptor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaField<'a> {
    pub name: &'a str,
    /// Hazelcast's `FieldKind` ordinal.
    pub kind: i32,
}

impl<'a> VarField<'a> for SchemaField<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let kind = FixedReader::new(reader.value_frame("field descriptor")?).read()?;
        let name = reader.string()?;
        reader.skip_to_end()?;
        Ok(SchemaField { name, kind })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.kind);
        writer.frame(self.name.as_bytes()).end();
    }
}

/// A Compact schema as the wire carries it (`Schema`: the type name and its fields; the id is
/// not sent, every side computes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactSchema<'a> {
    pub type_name: &'a str,
    pub fields: Vec<SchemaField<'a>>,
}

impl<'a> VarField<'a> for CompactSchema<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let type_name = reader.string()?;
        let fields = VarField::read(reader)?;
        reader.skip_to_end()?;
        Ok(CompactSchema { type_name, fields })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().frame(self.type_name.as_bytes());
        self.fields.write(writer);
        writer.end();
    }
}

/// The anchors of a paging predicate: for each page already seen, its last entry (what the
/// next page starts after). `AnchorDataListHolder`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AnchorList<'a> {
    pub pages: Packed<i32>,
    pub anchors: Vec<(Data<'a>, Data<'a>)>,
}

impl<'a> VarField<'a> for AnchorList<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let pages: Packed<i32> = VarField::read(reader)?;
        let anchors: Vec<(Data<'a>, Data<'a>)> = VarField::read(reader)?;
        reader.skip_to_end()?;
        if pages.0.len() != anchors.len() {
            return Err(DecodeError::UnexpectedFrame("one anchor per anchor page"));
        }
        Ok(AnchorList { pages, anchors })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin();
        self.pages.write(writer);
        self.anchors.write(writer);
        writer.end();
    }
}

/// A paging predicate as the paging queries carry it (`PagingPredicateHolder`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagingPredicateHolder<'a> {
    pub page_size: i32,
    pub page: i32,
    /// 0 keys, 1 values, 2 entries.
    pub iteration_type: i8,
    pub anchors: AnchorList<'a>,
    pub predicate: Option<Data<'a>>,
    pub comparator: Option<Data<'a>>,
    pub partition_key: Option<Data<'a>>,
    /// Since protocol 2.5; older clients do not send it.
    pub partition_keys: Option<Vec<Data<'a>>>,
}

impl<'a> VarField<'a> for PagingPredicateHolder<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("paging predicate")?);
        let (page_size, page, iteration_type) = (fixed.read()?, fixed.read()?, fixed.read()?);
        let anchors = AnchorList::read(reader)?;
        let predicate = VarField::read(reader)?;
        let comparator = VarField::read(reader)?;
        let partition_key = VarField::read(reader)?;
        // `at_end` takes the END frame when there is nothing more (a client before 2.5).
        let partition_keys = if reader.at_end()? {
            None
        } else {
            let keys = VarField::read(reader)?;
            reader.skip_to_end()?;
            keys
        };
        Ok(PagingPredicateHolder {
            page_size,
            page,
            iteration_type,
            anchors,
            predicate,
            comparator,
            partition_key,
            partition_keys,
        })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.page_size).fixed(&self.page).fixed(&self.iteration_type);
        writer.var(&self.anchors).var(&self.predicate).var(&self.comparator).var(&self.partition_key);
        writer.var(&self.partition_keys);
        writer.end();
    }
}

/// An index definition (`IndexConfig`): type 0 sorted, 1 hash, 2 bitmap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexConfig<'a> {
    pub index_type: i32,
    pub name: Option<&'a str>,
    pub attributes: Vec<&'a str>,
    /// A bitmap index's unique key and its transformation (`BitmapIndexOptions`).
    pub bitmap: Option<(&'a str, i32)>,
}

impl<'a> VarField<'a> for IndexConfig<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let index_type = FixedReader::new(reader.value_frame("index config")?).read()?;
        let name = VarField::read(reader)?;
        let attributes = VarField::read(reader)?;
        let bitmap = if reader.next_is_null() {
            None
        } else {
            reader.begin()?;
            let transformation = FixedReader::new(reader.value_frame("bitmap index options")?).read()?;
            let unique_key = reader.string()?;
            reader.skip_to_end()?;
            Some((unique_key, transformation))
        };
        // A B-tree index configuration (protocol 2.5) is Enterprise's: skipped.
        reader.skip_to_end()?;
        Ok(IndexConfig { index_type, name, attributes, bitmap })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.index_type);
        writer.var(&self.name).var(&self.attributes);
        match self.bitmap {
            None => {
                writer.null();
            }
            Some((unique_key, transformation)) => {
                writer.begin().open_frame(0).fixed(&transformation);
                writer.frame(unique_key.as_bytes()).end();
            }
        }
        writer.end();
    }
}

/// An entry's metadata as `IMap.getEntryView` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryView<'a> {
    pub key: Data<'a>,
    pub value: Data<'a>,
    pub cost: i64,
    pub creation_time: i64,
    pub expiration_time: i64,
    pub hits: i64,
    pub last_access_time: i64,
    pub last_stored_time: i64,
    pub last_update_time: i64,
    pub version: i64,
    pub ttl: i64,
    pub max_idle: i64,
}

impl<'a> VarField<'a> for EntryView<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("entry view")?);
        let mut next = || fixed.read::<i64>();
        let (cost, creation_time, expiration_time, hits) = (next()?, next()?, next()?, next()?);
        let (last_access_time, last_stored_time, last_update_time) = (next()?, next()?, next()?);
        let (version, ttl, max_idle) = (next()?, next()?, next()?);
        let key = Data::read(reader)?;
        let value = Data::read(reader)?;
        reader.skip_to_end()?;
        Ok(EntryView {
            key,
            value,
            cost,
            creation_time,
            expiration_time,
            hits,
            last_access_time,
            last_stored_time,
            last_update_time,
            version,
            ttl,
            max_idle,
        })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0);
        for field in [
            self.cost,
            self.creation_time,
            self.expiration_time,
            self.hits,
            self.last_access_time,
            self.last_stored_time,
            self.last_update_time,
            self.version,
            self.ttl,
            self.max_idle,
        ] {
            writer.fixed(&field);
        }
        writer.var(&self.key).var(&self.value).end();
    }
}

/// A replicated map entry with its metadata (`ReplicatedMapEntryViewHolder`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicatedEntryView<'a> {
    pub key: Data<'a>,
    pub value: Data<'a>,
    pub creation_time: i64,
    pub hits: i64,
    pub last_access_time: i64,
    pub last_update_time: i64,
    pub ttl: i64,
}

impl<'a> VarField<'a> for ReplicatedEntryView<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("replicated entry view")?);
        let mut next = || fixed.read::<i64>();
        let (creation_time, hits, last_access_time, last_update_time, ttl) =
            (next()?, next()?, next()?, next()?, next()?);
        let key = Data::read(reader)?;
        let value = Data::read(reader)?;
        reader.skip_to_end()?;
        Ok(ReplicatedEntryView { key, value, creation_time, hits, last_access_time, last_update_time, ttl })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0);
        for field in [self.creation_time, self.hits, self.last_access_time, self.last_update_time, self.ttl] {
            writer.fixed(&field);
        }
        writer.var(&self.key).var(&self.value).end();
    }
}

/// One event of a query cache (`QueryCacheEventData`): the key (none for CLEAR_ALL), the new
/// value (none without values, or for a removal), the partition's sequence of the event, its
/// entry event type, its partition and its map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryCacheEventData<'a> {
    pub key: Option<Data<'a>>,
    pub value: Option<Data<'a>>,
    pub sequence: i64,
    pub event_type: i32,
    pub partition_id: i32,
    pub map_name: &'a str,
}

impl<'a> VarField<'a> for QueryCacheEventData<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("query cache event")?);
        let (sequence, event_type, partition_id) = (fixed.read::<i64>()?, fixed.read::<i32>()?, fixed.read::<i32>()?);
        let key = Option::<Data>::read(reader)?;
        let value = Option::<Data>::read(reader)?;
        let map_name = <&str>::read(reader)?;
        reader.skip_to_end()?;
        Ok(QueryCacheEventData { key, value, sequence, event_type, partition_id, map_name })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0);
        writer.fixed(&self.sequence).fixed(&self.event_type).fixed(&self.partition_id);
        writer.var(&self.key).var(&self.value).var(&self.map_name).end();
    }
}

/// One entry event of a cache (`CacheEventData`): the cache's name, the event type, the key,
/// the new and old values (none where the event has none) and whether the old value is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEventData<'a> {
    pub name: &'a str,
    pub event_type: i32,
    pub key: Option<Data<'a>>,
    pub value: Option<Data<'a>>,
    pub old_value: Option<Data<'a>>,
    pub old_value_available: bool,
}

impl<'a> VarField<'a> for CacheEventData<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("cache event")?);
        let (event_type, old_value_available) = (fixed.read::<i32>()?, fixed.read::<bool>()?);
        let name = <&str>::read(reader)?;
        let key = Option::<Data>::read(reader)?;
        let value = Option::<Data>::read(reader)?;
        let old_value = Option::<Data>::read(reader)?;
        reader.skip_to_end()?;
        Ok(CacheEventData { name, event_type, key, value, old_value, old_value_available })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.event_type).fixed(&self.old_value_available);
        writer.var(&self.name).var(&self.key).var(&self.value).var(&self.old_value).end();
    }
}

/// A cache's configuration (`CacheConfigHolder`) as a client sends it: the fields the member
/// applies, and the whole structure's frames (`frames`), which getConfig answers as they came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfigHolder<'a> {
    /// The structure's frames, its BEGIN and END frames included.
    pub frames: &'a [u8],
    pub name: &'a str,
    pub manager_prefix: Option<&'a str>,
    pub backup_count: i32,
    pub async_backup_count: i32,
    pub read_through: bool,
    pub write_through: bool,
    pub statistics_enabled: bool,
    pub in_memory_format: &'a str,
    pub eviction: EvictionConfigHolder<'a>,
    pub key_class_name: &'a str,
    pub value_class_name: &'a str,
    /// Factories of a `CacheLoader` and a `CacheWriter` (Java code), if configured.
    pub loader_factory: Option<Data<'a>>,
    pub writer_factory: Option<Data<'a>>,
    pub expiry_policy_factory: Data<'a>,
    /// The cache's event journal, if configured.
    pub event_journal: Option<EventJournalConfigHolder>,
}

impl<'a> VarField<'a> for CacheConfigHolder<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        let start = reader.remaining();
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("cache config")?);
        let (backup_count, async_backup_count) = (fixed.read::<i32>()?, fixed.read::<i32>()?);
        let (read_through, write_through) = (fixed.read::<bool>()?, fixed.read::<bool>()?);
        // storeByValue, managementEnabled, then statisticsEnabled.
        let statistics_enabled = (fixed.read::<bool>()?, fixed.read::<bool>()?, fixed.read::<bool>()?).2;
        let name = <&str>::read(reader)?;
        let manager_prefix = Option::<&str>::read(reader)?;
        let _uri = Option::<&str>::read(reader)?;
        let in_memory_format = <&str>::read(reader)?;
        let eviction = EvictionConfigHolder::read(reader)?;
        let _wan_replication_ref = Opaque::read(reader)?;
        let key_class_name = <&str>::read(reader)?;
        let value_class_name = <&str>::read(reader)?;
        let loader_factory = Option::<Data>::read(reader)?;
        let writer_factory = Option::<Data>::read(reader)?;
        let expiry_policy_factory = Data::read(reader)?;
        let _hot_restart = Opaque::read(reader)?;
        let event_journal = Option::<EventJournalConfigHolder>::read(reader)?;
        reader.skip_to_end()?;
        let frames = &start[..start.len() - reader.remaining().len()];
        Ok(CacheConfigHolder {
            frames,
            name,
            manager_prefix,
            backup_count,
            async_backup_count,
            read_through,
            write_through,
            statistics_enabled,
            in_memory_format,
            eviction,
            key_class_name,
            value_class_name,
            loader_factory,
            writer_factory,
            expiry_policy_factory,
            event_journal,
        })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.append_frames(self.frames);
    }
}

/// One field's frames as they came, not interpreted: a NULL frame, a value frame or a whole
/// structure (a configuration's part the member keeps only to compare definitions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opaque<'a>(pub &'a [u8]);

impl<'a> VarField<'a> for Opaque<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        let start = reader.remaining();
        let frame = reader.next_frame()?;
        if frame.is_begin() {
            reader.skip_to_end()?;
        }
        Ok(Opaque(&start[..start.len() - reader.remaining().len()]))
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.append_frames(self.0);
    }
}

/// Every frame left in a message, not interpreted (the fields of a configuration the member
/// does not apply, and fields a newer client adds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rest<'a>(pub &'a [u8]);

impl<'a> VarField<'a> for Rest<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        let rest = reader.remaining();
        while reader.has_more() {
            reader.next_frame()?;
        }
        Ok(Rest(rest))
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.append_frames(self.0);
    }
}

/// A map's eviction settings in a dynamic configuration (`EvictionConfigHolder`); its
/// comparator (a class name or a serialized object) is not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvictionConfigHolder<'a> {
    pub size: i32,
    pub max_size_policy: &'a str,
    pub eviction_policy: &'a str,
}

impl<'a> VarField<'a> for EvictionConfigHolder<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let size = FixedReader::new(reader.value_frame("eviction config")?).read()?;
        let max_size_policy = reader.string()?;
        let eviction_policy = reader.string()?;
        reader.skip_to_end()?;
        Ok(EvictionConfigHolder { size, max_size_policy, eviction_policy })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.size);
        writer.frame(self.max_size_policy.as_bytes()).frame(self.eviction_policy.as_bytes());
        writer.null().null().end();
    }
}

/// A map's event journal settings in a dynamic configuration (`EventJournalConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventJournalConfigHolder {
    pub enabled: bool,
    pub capacity: i32,
    pub time_to_live_seconds: i32,
}

impl VarField<'_> for EventJournalConfigHolder {
    fn read(reader: &mut MessageReader<'_>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let mut fixed = FixedReader::new(reader.value_frame("event journal config")?);
        let config = EventJournalConfigHolder {
            enabled: fixed.read()?,
            capacity: fixed.read()?,
            time_to_live_seconds: fixed.read()?,
        };
        reader.skip_to_end()?;
        Ok(config)
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.enabled).fixed(&self.capacity).fixed(&self.time_to_live_seconds);
        writer.end();
    }
}

/// An XA transaction id (`javax.transaction.xa.Xid`): its format, global transaction id and
/// branch qualifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Xid<'a> {
    pub format_id: i32,
    pub global_transaction_id: &'a [u8],
    pub branch_qualifier: &'a [u8],
}

impl<'a> VarField<'a> for Xid<'a> {
    fn read(reader: &mut MessageReader<'a>) -> Result<Self, DecodeError> {
        reader.begin()?;
        let format_id = FixedReader::new(reader.value_frame("xid format id")?).read::<i32>()?;
        let global_transaction_id = reader.value_frame("xid global transaction id")?;
        let branch_qualifier = reader.value_frame("xid branch qualifier")?;
        reader.skip_to_end()?;
        Ok(Xid { format_id, global_transaction_id, branch_qualifier })
    }
    fn write(&self, writer: &mut MessageWriter<'_>) {
        writer.begin().open_frame(0).fixed(&self.format_id);
        writer.frame(self.global_transaction_id).frame(self.branch_qualifier).end();
    }
}
