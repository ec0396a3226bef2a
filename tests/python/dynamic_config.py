"""DynamicConfig.add*Config requests (service 0x1B) sent through the Python client's invocation
service: the Python client 5.7.0 has no dynamic configuration API (the Java client has
`client.getConfig().addMapConfig(...)`, which sends these same messages).

Each helper builds the request as the Java client 5.6 encodes it for a config built with
Hazelcast's defaults plus the given settings (`ClientDynamicClusterConfig`): fixed-size fields
in the initial frame in declaration order, then one frame (or NULL frame, or structure) per
variable-size field. `add(client, request)` sends it to any member and returns its future; the
answer is empty, or an error (a conflicting definition: InvalidConfigurationException).
"""

import struct

from hazelcast.invocation import Invocation
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer

_FIXED = {"int": "<i", "bool": "<?", "long": "<q", "byte": "<b"}
_IS_NULL, _BEGIN, _END, _IS_FINAL = 1 << 10, 1 << 12, 1 << 11, 1 << 13
MERGE_POLICY = "com.hazelcast.spi.merge.PutIfAbsentMergePolicy"


def _frame(content=b"", flags=0):
    return bytearray(struct.pack("<iH", 6 + len(content), flags)) + content


NULL = _frame(flags=_IS_NULL)


def text(value):
    return None if value is None else _frame(value.encode("utf-8"))


def structure(fixed=(), fields=()):
    """A custom type: BEGIN, a frame of its fixed fields (if any), its fields, END."""
    out = _frame(flags=_BEGIN)
    if fixed:
        out += _frame(b"".join(struct.pack(_FIXED[kind], value) for kind, value in fixed))
    for field in fields:
        out += NULL if field is None else field
    return out + _frame(flags=_END)


def request(message_type, fixed, fields):
    """A request: `fixed` as (kind, value) pairs, `fields` as frames (None: a NULL frame)."""
    fixed_bytes = b"".join(struct.pack(_FIXED[kind], value) for kind, value in fixed)
    buf = create_initial_buffer(REQUEST_HEADER_SIZE + len(fixed_bytes), message_type)
    buf[REQUEST_HEADER_SIZE:] = fixed_bytes
    for field in fields:
        buf += NULL if field is None else field
    offset = last = 0
    while offset < len(buf):
        last = offset
        offset += struct.unpack_from("<i", buf, offset)[0]
    flags_at = last + 4
    struct.pack_into("<H", buf, flags_at, struct.unpack_from("<H", buf, flags_at)[0] | _IS_FINAL)
    return buf


def add(client, buf):
    """Sends an add*Config request to a member; its future (None, or the member's error)."""
    invocation = Invocation(OutboundMessage(buf, False))
    client._invocation_service.invoke(invocation)
    return invocation.future


def eviction(size=2147483647, max_size_policy="PER_NODE", eviction_policy="NONE"):
    return structure([("int", size)], [text(max_size_policy), text(eviction_policy), None, None])


def map_config(
    name,
    backup_count=1,
    async_backup_count=0,
    ttl=0,
    max_idle=0,
    evict=None,
    per_entry_stats=False,
    statistics=True,
    event_journal=None,
):
    """DynamicConfig.addMapConfig (0x1B0C00); `event_journal`: (enabled, capacity, ttl seconds)."""
    fixed = [
        ("int", backup_count),
        ("int", async_backup_count),
        ("int", ttl),
        ("int", max_idle),
        ("bool", False),  # readBackupData
        ("int", 100),  # mergeBatchSize
        ("bool", statistics),
        ("int", 0),  # metadataPolicy CREATE_ON_UPDATE
        ("bool", per_entry_stats),
    ]
    persistence = structure([("bool", False), ("bool", False)])
    memory_tier = structure(fields=[structure([("long", 256), ("int", 2)])])
    disk_tier = structure([("bool", False)], [text("default-tiered-store-device")])
    tiered = structure([("bool", False)], [memory_tier, disk_tier])
    fields = [text(name), evict if evict is not None else eviction(), text("INDEX_ONLY"), text(MERGE_POLICY)]
    journal = None
    if event_journal is not None:
        enabled, capacity, journal_ttl = event_journal
        journal = structure([("bool", enabled), ("int", capacity), ("int", journal_ttl)])
    fields += [text("BINARY")] + [None] * 12 + [journal, None] + [persistence, tiered, None, None]
    return request(0x1B0C00, fixed, fields)


def queue_config(name, max_size=0, backup_count=1, async_backup_count=0, empty_queue_ttl=-1):
    """DynamicConfig.addQueueConfig (0x1B0B00)."""
    fixed = [
        ("int", backup_count),
        ("int", async_backup_count),
        ("int", max_size),
        ("int", empty_queue_ttl),
        ("bool", True),
        ("int", 100),
    ]
    fields = [text(name), None, None, None, text(MERGE_POLICY), None, None]
    return request(0x1B0B00, fixed, fields)


def collection_config(name, is_set, max_size=0, backup_count=1, async_backup_count=0):
    """DynamicConfig.addSetConfig (0x1B0500) or addListConfig (0x1B0400)."""
    fixed = [("int", backup_count), ("int", async_backup_count), ("int", max_size), ("bool", True), ("int", 100)]
    fields = [text(name), None, None, text(MERGE_POLICY), None]
    return request(0x1B0500 if is_set else 0x1B0400, fixed, fields)


def multimap_config(name, collection_type="SET", backup_count=1, async_backup_count=0):
    """DynamicConfig.addMultiMapConfig (0x1B0100)."""
    fixed = [("bool", True), ("int", backup_count), ("int", async_backup_count), ("bool", True), ("int", 100)]
    fields = [text(name), text(collection_type), None, None, text(MERGE_POLICY), None]
    return request(0x1B0100, fixed, fields)


def ringbuffer_config(name, capacity=10000, backup_count=1, async_backup_count=0, ttl=0):
    """DynamicConfig.addRingbufferConfig (0x1B0200)."""
    fixed = [("int", capacity), ("int", backup_count), ("int", async_backup_count), ("int", ttl), ("int", 100)]
    fields = [text(name), text("BINARY"), None, None, text(MERGE_POLICY), None]
    return request(0x1B0200, fixed, fields)


def replicated_map_config(name, in_memory_format="OBJECT", async_fillup=True, statistics=True):
    """DynamicConfig.addReplicatedMapConfig (0x1B0600)."""
    fixed = [("bool", async_fillup), ("bool", statistics), ("int", 100)]
    fields = [text(name), text(in_memory_format), text(MERGE_POLICY), None, None, None]
    return request(0x1B0600, fixed, fields)


def topic_config(name, global_ordering=False, statistics=True, multi_threading=False):
    """DynamicConfig.addTopicConfig (0x1B0700)."""
    fixed = [("bool", global_ordering), ("bool", statistics), ("bool", multi_threading)]
    return request(0x1B0700, fixed, [text(name), None, None])


def reliable_topic_config(name, read_batch_size=10, statistics=True, overload="BLOCK"):
    """DynamicConfig.addReliableTopicConfig (0x1B0D00)."""
    fixed = [("int", read_batch_size), ("bool", statistics)]
    return request(0x1B0D00, fixed, [text(name), None, text(overload), None, None])


def flake_id_config(name, prefetch_count=100, prefetch_validity_ms=600000, node_id_offset=0, epoch_start=1514764800000):
    """DynamicConfig.addFlakeIdGeneratorConfig (0x1B0F00)."""
    fixed = [
        ("int", prefetch_count),
        ("long", prefetch_validity_ms),
        ("bool", True),
        ("long", node_id_offset),
        ("long", epoch_start),
        ("int", 6),  # bitsSequence
        ("int", 16),  # bitsNodeId
        ("long", 15000),  # allowedFutureMillis
    ]
    return request(0x1B0F00, fixed, [text(name)])


def pn_counter_config(name, replica_count=2147483647, statistics=True):
    """DynamicConfig.addPNCounterConfig (0x1B1000)."""
    return request(0x1B1000, [("int", replica_count), ("bool", statistics)], [text(name), None])


def cardinality_estimator_config(name, backup_count=1, async_backup_count=0):
    """DynamicConfig.addCardinalityEstimatorConfig (0x1B0300)."""
    fixed = [("int", backup_count), ("int", async_backup_count), ("int", 100)]
    merge = "com.hazelcast.spi.merge.HyperLogLogMergePolicy"
    return request(0x1B0300, fixed, [text(name), None, text(merge)])


def executor_config(name, pool_size=16, queue_capacity=0):
    """DynamicConfig.addExecutorConfig (0x1B0800)."""
    fixed = [("int", pool_size), ("int", queue_capacity), ("bool", True)]
    return request(0x1B0800, fixed, [text(name), None, None])


def durable_executor_config(name, pool_size=16, durability=1, capacity=100):
    """DynamicConfig.addDurableExecutorConfig (0x1B0900)."""
    fixed = [("int", pool_size), ("int", durability), ("int", capacity), ("bool", True)]
    return request(0x1B0900, fixed, [text(name), None, None])


def scheduled_executor_config(name, pool_size=16, durability=1, capacity=100):
    """DynamicConfig.addScheduledExecutorConfig (0x1B0A00)."""
    fixed = [("int", pool_size), ("int", durability), ("int", capacity), ("int", 100), ("bool", True), ("byte", 0)]
    return request(0x1B0A00, fixed, [text(name), None, text(MERGE_POLICY), None])


def data_connection_config(name, kind="Jdbc", shared=True):
    """DynamicConfig.addDataConnectionConfig (0x1B1100): no properties. (Hazelcast keeps the
    type as "Jdbc" whatever its case, so another "JDBC" would conflict with the first there.)"""
    return request(0x1B1100, [("bool", shared)], [text(name), text(kind), structure()])


def wan_replication_config(name):
    """DynamicConfig.addWanReplicationConfig (0x1B1200): no consumer, no publishers."""
    return request(0x1B1200, [], [text(name), None, structure(), structure()])


def vector_collection_config(name):
    """DynamicConfig.addVectorCollectionConfig (0x1B1400): no indexes."""
    fixed = [("int", 1), ("int", 0), ("int", 100)]
    return request(0x1B1400, fixed, [text(name), structure(), None, text(MERGE_POLICY), None])
