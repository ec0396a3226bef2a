"""The executors' requests besides their submits, and the map's requests that carry or manage
Java code (interceptors, replaceAll's function, loading through a MapStore), as a Hazelcast 5.6.0
member answers them when it has none of the code's classes and the map has no MapStore. Runs
against ferrogrid and a real Hazelcast member, with smart and unisocket routing; every request is
built by hand (the Python client has no durable or scheduled executor proxy).

What the member answers (and these tests hold):
  * ExecutorService: isShutdown is false until shutdown (of that name only), then true (on the
    member that received the shutdown: cluster/test_executors_cluster.py);
    cancelOnPartition and cancelOnMember of a uuid no task has: false; a submit after the
    shutdown is still refused for its task first (IllegalArgumentException naming its class);
  * DurableExecutor: the same shutdown and isShutdown; retrieveResult and
    retrieveAndDisposeResult of sequence 0 answer null and disposeResult succeeds (every slot
    of the result ring starts at sequence 0), any other sequence is a StaleTaskIdException
    "The sequence has been overwritten", before and after the shutdown;
  * ScheduledExecutor: getAllScheduledFutures is an empty list; a task's getStats, getDelay,
    cancel, isCancelled, isDone, getResult and dispose, from its partition or a member, is a
    StaleTaskException "Task with name <name> not found. "; after the member's shutdown they
    are a RejectedExecutionException "Executor is shut down." (a submit is still refused for
    its task: a ClassCastException to Callable);
  * Map: addInterceptor refuses the interceptor as java_code does (a ClassCastException to
    com.hazelcast.map.MapInterceptor, or the serialization error), removeInterceptor of an
    unknown id is false, replaceAll refuses its function (a ClassCastException to
    java.util.function.BiFunction), loadAll is an IllegalArgumentException "First you should
    configure a map store", loadGivenKeys a NullPointerException without a message (its record
    store finds no loader to wait for) unless it names no key; the map is untouched.
"""

import uuid

import pytest
from hazelcast.errors import (
    ClassCastError,
    HazelcastSerializationError,
    IllegalArgumentError,
    NullPointerError,
    RejectedExecutionError,
    StaleTaskError,
    StaleTaskIdError,
)
from hazelcast.invocation import Invocation
from hazelcast.protocol.builtin import DataCodec, FixSizedTypesCodec, ListMultiFrameCodec, StringCodec
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, RESPONSE_HEADER_SIZE, OutboundMessage, create_initial_buffer

from hazelcast.protocol.codec import client_create_proxy_codec, client_destroy_proxy_codec

from conftest import unique_name
from test_java_code import GENERIC_RECORD, IdentifiedTask, PortableTask, first_line

SIZES = {"boolean": 1, "int": 4, "long": 8, "uuid": 17}
PARTITION = 3


def build(type_id, fixed=(), strings=(), data=(), keys=None):
    """A request of `type_id`: fixed fields (kind, value) in order, then string frames, then
    Data frames, then a list of Data."""
    buf = create_initial_buffer(REQUEST_HEADER_SIZE + sum(SIZES[kind] for kind, _ in fixed), type_id)
    offset = REQUEST_HEADER_SIZE
    for kind, value in fixed:
        getattr(FixSizedTypesCodec, "encode_" + kind)(buf, offset, value)
        offset += SIZES[kind]
    frames = [(StringCodec.encode, s) for s in strings] + [(DataCodec.encode, d) for d in data]
    if keys is not None:
        frames.append((lambda b, v, last: ListMultiFrameCodec.encode(b, v, DataCodec.encode, last), keys))
    for index, (encode, value) in enumerate(frames):
        encode(buf, value, index == len(frames) - 1)
    return OutboundMessage(buf, False)


def send(client, message, partition=-1):
    invocation = Invocation(message, partition_id=partition, response_handler=lambda answer: answer)
    client._invocation_service.invoke(invocation)
    return invocation.future.result()


def answered_bool(answer):
    return FixSizedTypesCodec.decode_boolean(answer.start_frame.buf, RESPONSE_HEADER_SIZE)


def frames_after_initial(answer):
    """The frames after the initial one, as bytes (a null frame and an empty one both b'')."""
    frames, frame = [], answer.start_frame.next
    while frame is not None:
        frames.append((bytes(frame.buf), frame.is_null_frame()))
        frame = frame.next
    return frames


def member_uuid(client):
    return list(client.cluster_service.get_members())[0].uuid


def integer(client):
    return client._serialization_service.to_data(7)


def test_an_executor_is_shut_down_by_name(client, request):
    name = unique_name(request, "ex")
    is_shutdown = lambda n: answered_bool(send(client, build(0x080200, strings=[n])))
    assert is_shutdown(name) is False
    assert answered_bool(send(client, build(0x080300, fixed=[("uuid", uuid.uuid4()), ("boolean", True)]), PARTITION)) is False
    cancel_on_member = [("uuid", uuid.uuid4()), ("uuid", member_uuid(client)), ("boolean", False)]
    assert answered_bool(send(client, build(0x080400, fixed=cancel_on_member))) is False
    send(client, build(0x080100, strings=[name]))
    assert is_shutdown(name) is True
    assert is_shutdown(name + "-other") is False
    send(client, build(0x080100, strings=[name]))  # again: no error
    with pytest.raises(IllegalArgumentError) as raised:
        send(client, build(0x080500, fixed=[("uuid", uuid.uuid4())], strings=[name], data=[integer(client)]), PARTITION)
    assert first_line(raised.value).endswith("java.lang.IllegalArgumentException: java.lang.Integer")




def durable_results(client, name):
    """retrieveResult, disposeResult and retrieveAndDisposeResult of never-submitted sequences."""
    for sequence in (0, 5, 99, 100, -1, 1 << 30):
        for type_id in (0x180400, 0x180500, 0x180600):
            message = build(type_id, fixed=[("int", sequence)], strings=[name])
            if sequence != 0:
                with pytest.raises(StaleTaskIdError) as raised:
                    send(client, message, PARTITION)
                assert first_line(raised.value).endswith(
                    "com.hazelcast.durableexecutor.StaleTaskIdException: The sequence has been overwritten"
                )
                continue
            frames = frames_after_initial(send(client, message, PARTITION))
            assert frames == ([] if type_id == 0x180500 else [(b"", True)]), hex(type_id)


def test_a_durable_executor_has_no_results_and_is_shut_down_by_name(client, request):
    name = unique_name(request, "dex")
    is_shutdown = lambda n: answered_bool(send(client, build(0x180200, strings=[n])))
    assert is_shutdown(name) is False
    durable_results(client, name)
    send(client, build(0x180100, strings=[name]))
    assert is_shutdown(name) is True
    assert is_shutdown(name + "-other") is False
    durable_results(client, name)
    with pytest.raises(ClassCastError):
        send(client, build(0x180300, strings=[name], data=[integer(client)]), PARTITION)


@pytest.mark.parametrize(
    "service, is_shutdown, shutdown",
    [("hz:impl:executorService", 0x080200, 0x080100), ("hz:impl:durableExecutorService", 0x180200, 0x180100)],
    ids=["plain", "durable"],
)
def test_destroying_an_executor_forgets_its_shutdown(client, request, service, is_shutdown, shutdown):
    name = unique_name(request, "ex")
    send(client, client_create_proxy_codec.encode_request(name, service))
    send(client, build(shutdown, strings=[name]))
    assert answered_bool(send(client, build(is_shutdown, strings=[name]))) is True
    send(client, client_destroy_proxy_codec.encode_request(name, service))
    assert answered_bool(send(client, build(is_shutdown, strings=[name]))) is False


def test_destroying_a_scheduler_forgets_its_shutdown(client, request):
    name = unique_name(request, "sched")
    service = "hz:impl:scheduledExecutorService"
    send(client, client_create_proxy_codec.encode_request(name, service))
    send(client, build(0x1A0100, fixed=[("uuid", member_uuid(client))], strings=[name]))
    send(client, client_destroy_proxy_codec.encode_request(name, service))
    with pytest.raises(StaleTaskError):
        send(client, build(0x1A0700, strings=[name, "t"]), PARTITION)


# Each task request from its partition (type id) and from a member (type id + 0x100), with the
# fixed fields after the member uuid.
SCHEDULED_TASK_REQUESTS = [
    (0x1A0500, []),  # getStats
    (0x1A0700, []),  # getDelay
    (0x1A0900, [("boolean", True)]),  # cancel
    (0x1A0B00, []),  # isCancelled
    (0x1A0D00, []),  # isDone
    (0x1A0F00, []),  # getResult
    (0x1A1100, []),  # dispose
]


def scheduled_task_requests(client, scheduler, task):
    for type_id, fixed in SCHEDULED_TASK_REQUESTS:
        yield build(type_id, fixed=fixed, strings=[scheduler, task]), PARTITION
        on_member = [("uuid", member_uuid(client))] + fixed
        yield build(type_id + 0x100, fixed=on_member, strings=[scheduler, task]), -1


def no_scheduled_futures(client, scheduler):
    frames = frames_after_initial(send(client, build(0x1A0400, strings=[scheduler])))
    assert [data for data, _ in frames] == [b"", b""], "an empty list: its BEGIN and END frames"


def test_a_scheduled_executor_has_no_tasks_and_is_shut_down_on_a_member(client, request):
    scheduler = unique_name(request, "sched")
    no_scheduled_futures(client, scheduler)
    for message, partition in scheduled_task_requests(client, scheduler, "no-such-task"):
        with pytest.raises(StaleTaskError) as raised:
            send(client, message, partition)
        assert first_line(raised.value).endswith(
            "com.hazelcast.scheduledexecutor.StaleTaskException: Task with name no-such-task not found. "
        )
    send(client, build(0x1A0100, fixed=[("uuid", member_uuid(client))], strings=[scheduler]))
    for message, partition in scheduled_task_requests(client, scheduler, "no-such-task"):
        with pytest.raises(RejectedExecutionError) as raised:
            send(client, message, partition)
        assert first_line(raised.value).endswith("java.util.concurrent.RejectedExecutionException: Executor is shut down.")
    no_scheduled_futures(client, scheduler)
    submit = [("boolean", False), ("long", 0), ("long", 0), ("boolean", False)]  # a Callable, no delay, no period
    with pytest.raises(ClassCastError):
        send(client, build(0x1A0200, fixed=submit, strings=[scheduler, "t"], data=[integer(client)]), PARTITION)
    for message, partition in scheduled_task_requests(client, scheduler + "-other", "t"):
        with pytest.raises(StaleTaskError):
            send(client, message, partition)


def java_code_refusals(client, type_id, name, target, target_module, partition):
    """Sends `type_id` carrying each kind of object the member has no class for."""
    to_data = client._serialization_service.to_data
    with pytest.raises(HazelcastSerializationError) as raised:
        send(client, build(type_id, strings=[name], data=[to_data(IdentifiedTask())]), partition)
    assert first_line(raised.value).endswith("No DataSerializerFactory registered for namespace: 66")
    with pytest.raises(ClassCastError) as raised:
        send(client, build(type_id, strings=[name], data=[to_data(PortableTask())]), partition)
    assert first_line(raised.value).endswith(
        "class %s cannot be cast to class %s (%s)" % (GENERIC_RECORD, target, target_module(GENERIC_RECORD))
    )
    with pytest.raises(ClassCastError) as raised:
        send(client, build(type_id, strings=[name], data=[to_data(7)]), partition)
    assert first_line(raised.value).endswith("class java.lang.Integer cannot be cast to class %s (%s)" % (target, target_module("java.lang.Integer")))


APP = "unnamed module of loader 'app'"
JDK = "module java.base of loader 'bootstrap'"


def test_interceptors_and_functions_are_refused(client, m):
    m.put("k", 1)
    interceptor = "com.hazelcast.map.MapInterceptor"

    def interceptor_module(cls):
        if cls == GENERIC_RECORD:
            return "%s and %s are in %s" % (cls, interceptor, APP)
        return "%s is in %s; %s is in %s" % (cls, JDK, interceptor, APP)

    java_code_refusals(client, 0x011400, m.name, interceptor, interceptor_module, -1)
    function = "java.util.function.BiFunction"

    def function_module(cls):
        if cls == GENERIC_RECORD:
            return "%s is in %s; %s is in %s" % (cls, APP, function, JDK)
        return "%s and %s are in %s" % (cls, function, JDK)

    java_code_refusals(client, 0x014800, m.name, function, function_module, PARTITION)
    assert answered_bool(send(client, build(0x011500, strings=[m.name, "no-such-interceptor"]))) is False
    assert m.get("k") == 1


def test_a_map_without_a_map_store_loads_nothing(client, m):
    m.put("k", 1)
    key = client._serialization_service.to_data("k")
    for replace in (True, False):
        with pytest.raises(IllegalArgumentError) as raised:
            send(client, build(0x012000, fixed=[("boolean", replace)], strings=[m.name]))
        assert first_line(raised.value).endswith("java.lang.IllegalArgumentException: First you should configure a map store")
        with pytest.raises(NullPointerError) as raised:
            send(client, build(0x012100, fixed=[("boolean", replace)], strings=[m.name], keys=[key]))
        assert first_line(raised.value).endswith("java.lang.NullPointerException: None"), "no message"
        send(client, build(0x012100, fixed=[("boolean", replace)], strings=[m.name], keys=[]))
    assert m.get("k") == 1 and m.size() == 1
