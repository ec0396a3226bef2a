"""Cache.CreateConfig's CacheConfigHolder as the Java client 5.6 encodes it (ClientCacheHelper):
fixed fields in one frame in declaration order, then one frame, NULL frame or structure per
variable-size field, in declaration order (Custom.yaml's CacheConfigHolder).

The expiry policy factory is Data the client serializes with Java serialization (type -100):
ETERNAL below is what the 5.6.0 jar's serialization service makes of
`EternalExpiryPolicy.factoryOf()` (a javax.cache FactoryBuilder.SingletonFactory), the default
of a `MutableConfiguration`.
"""

from dynamic_config import NULL, _frame, request, structure, text

CREATE_CONFIG = 0x130600
ETERNAL = bytes.fromhex(
    "00000000ffffff9caced0005737200396a617661782e63616368652e636f6e66696775726174696f6e2e466163746f72794275696c6465722453696e676c65746f6e466163746f72790000002edeb815420200014c0008696e7374616e63657400124c6a6176612f6c616e672f4f626a6563743b7870737200266a617661782e63616368652e6578706972792e457465726e616c457870697279506f6c6963790000002edeb815230200007870"
)


# `new TouchedExpiryPolicy(new Duration(MILLISECONDS, 1500))` as `ObjectOutputStream` writes it
# (javax.cache 1.1.1): a policy an operation carries, serialized by the client as Java
# serialization (type -100).
TOUCHED_1500_MS_STREAM = bytes.fromhex(
    "aced0005737200266a617661782e63616368652e6578706972792e546f7563686564457870697279506f6c69637900"
    "00002edebaf90f0200014c000e6578706972794475726174696f6e74001d4c6a617661782f63616368652f65787069"
    "72792f4475726174696f6e3b78707372001b6a617661782e63616368652e6578706972792e4475726174696f6e0000"
    "002edeb814820200024a000e6475726174696f6e416d6f756e744c000874696d65556e697474001f4c6a6176612f75"
    "74696c2f636f6e63757272656e742f54696d65556e69743b787000000000000005dc7e72001d6a6176612e7574696c"
    "2e636f6e63757272656e742e54696d65556e697400000000000000001200007872000e6a6176612e6c616e672e456e"
    "756d0000000000000000120000787074000c4d494c4c495345434f4e4453"
)


def java_serialized(stream):
    """A Java-serialized object as Data: partition hash 0, type -100, the stream."""
    return bytes.fromhex("00000000ffffff9c") + stream


TOUCHED_1500_MS = java_serialized(TOUCHED_1500_MS_STREAM)
# The same policy renamed to a class no member has (the name keeps its length).
UNKNOWN_POLICY_CLASS = "com.example.cache.ThirtyEightCharPolic"
UNKNOWN_POLICY = java_serialized(
    TOUCHED_1500_MS_STREAM.replace(b"javax.cache.expiry.TouchedExpiryPolicy", UNKNOWN_POLICY_CLASS.encode())
)
assert len(UNKNOWN_POLICY) == len(TOUCHED_1500_MS)


# `FactoryBuilder.factoryOf("com.example.MissingLoader")`: a loader factory naming a class no
# member has.
MISSING_LOADER_CLASS = "com.example.MissingLoader"
MISSING_LOADER_FACTORY = java_serialized(
    bytes.fromhex(
        "aced0005737200356a617661782e63616368652e636f6e66696775726174696f6e2e466163746f72794275696c6465"
        "7224436c617373466163746f72790000002edeb8153a0200014c0009636c6173734e616d657400124c6a6176612f6c"
        "616e672f537472696e673b7870740019636f6d2e6578616d706c652e4d697373696e674c6f61646572"
    )
)

MISSING_WRITER_CLASS = "com.example.MissingWriter"
MISSING_WRITER_FACTORY = MISSING_LOADER_FACTORY.replace(MISSING_LOADER_CLASS.encode(), MISSING_WRITER_CLASS.encode())


def eviction(size=10000, max_size_policy="ENTRY_COUNT", eviction_policy="LRU"):
    """A cache's EvictionConfigHolder (a cache's default: 10000 entries, ENTRY_COUNT, LRU)."""
    return structure([("int", size)], [text(max_size_policy), text(eviction_policy), None, None])


def cache_config(
    name,
    manager_prefix="/hz/",
    expiry_factory=ETERNAL,
    statistics=False,
    backup_count=1,
    loader=None,
    read_through=False,
    writer=None,
    write_through=False,
    eviction_holder=None,
    journal=None,
):
    """A CacheConfigHolder of a MutableConfiguration<Object, Object> under the default manager;
    `journal`: (capacity, time to live seconds) of an enabled event journal."""
    enabled, capacity, ttl = (False, 10000, 0) if journal is None else (True, *journal)
    fixed = [
        ("int", backup_count),
        ("int", 0),  # asyncBackupCount
        ("bool", read_through),
        ("bool", write_through),
        ("bool", True),  # storeByValue
        ("bool", False),  # managementEnabled
        ("bool", statistics),
        ("bool", False),  # disablePerEntryInvalidationEvents
    ]
    fields = [
        text(name),
        text(manager_prefix),
        None,  # uriString
        text("BINARY"),
        eviction() if eviction_holder is None else eviction_holder,
        None,  # wanReplicationRef
        text("java.lang.Object"),
        text("java.lang.Object"),
        None if loader is None else _frame(loader),  # cacheLoaderFactory
        None if writer is None else _frame(writer),  # cacheWriterFactory
        _frame(expiry_factory),
        structure([("bool", False), ("bool", False)]),  # hotRestartConfig: the member needs one
        structure([("bool", enabled), ("int", capacity), ("int", ttl)]),  # eventJournalConfig
        None,  # splitBrainProtectionName
        None,  # listenerConfigurations
        structure([("int", 100)], [text("com.hazelcast.spi.merge.PutIfAbsentMergePolicy")]),
        None,  # cachePartitionLostListenerConfigs
        structure([("bool", False), ("int", 10), ("bool", False)]),  # merkleTreeConfig
        structure([("bool", False), ("bool", False)]),  # dataPersistenceConfig
        None,  # userCodeNamespace
    ]
    return structure(fixed, fields)


def create_config(name, **settings):
    """Cache.CreateConfig(createAlsoOnOthers=true) of the cache `name` (the simple name)."""
    return request(CREATE_CONFIG, [("bool", True)], [cache_config(name, **settings)])


__all__ = [
    "CREATE_CONFIG",
    "ETERNAL",
    "MISSING_LOADER_CLASS",
    "MISSING_LOADER_FACTORY",
    "MISSING_WRITER_CLASS",
    "MISSING_WRITER_FACTORY",
    "NULL",
    "TOUCHED_1500_MS",
    "UNKNOWN_POLICY",
    "UNKNOWN_POLICY_CLASS",
    "cache_config",
    "create_config",
    "eviction",
    "java_serialized",
]
