"""Tiny, dependency-free encoder/decoder for the Hazelcast Open Binary Client Protocol 2.x.

Only what the raw-socket tests and the member start-up probe need, written from
shared/spec/client-protocol.md section 2 (frames, flags, 16-byte request header,
13-byte response header, 17-byte UUIDs) and sections 5/6 (Data blobs, partition ids).

Every socket opened through this module connects to 127.0.0.1 (or another loopback
address) only.
"""

import socket
import struct
import time
import uuid as uuidlib

PROTOCOL_HEADER = b"CP2"

# Frame flags (section 2.2)
BEGIN_FRAGMENT = 0x8000
END_FRAGMENT = 0x4000
IS_FINAL = 0x2000
BEGIN_DATA_STRUCTURE = 0x1000
END_DATA_STRUCTURE = 0x0800
IS_NULL = 0x0400
IS_EVENT = 0x0200
BACKUP_AWARE = 0x0100
UNFRAGMENTED = BEGIN_FRAGMENT | END_FRAGMENT

FRAME_HEADER_SIZE = 6
REQUEST_HEADER_SIZE = 16  # messageType(4) correlationId(8) partitionId(4)
RESPONSE_HEADER_SIZE = 13  # messageType(4) correlationId(8) backupAcks(1)

# Message types used by the tests
ERROR = 0x000000
CLIENT_AUTHENTICATION = 0x000100
CLIENT_AUTHENTICATION_RESPONSE = 0x000101
CLIENT_CREATE_PROXY = 0x000400
CLIENT_PING = 0x000B00
CLIENT_PING_RESPONSE = 0x000B01
MAP_PUT = 0x010100
MAP_GET = 0x010200
MAP_GET_RESPONSE = 0x010201

MAP_SERVICE = "hz:impl:mapService"
PARTITION_COUNT = 271

# Bytes of the Python client's Client.Authentication request as captured against a real
# 5.6.0 member (shared/spec/vectors/session-python.json, record 1): cluster "dev",
# client uuid bac689cf-3683-4499-939f-a87ad32d4112, client name "spec-client", corr id 1.
AUTH_REQUEST_VECTOR_HEX = (
    "2800000000c1000100000100000000000000ffffffff0099448336cf89c6ba12412dd37aa89f9301"
    "090000000000646576"
    "060000000004"
    "060000000004"
    "090000000000505948"
    "0b0000000000352e372e30"
    "110000000000737065632d636c69656e74"
    "060000000010"
    "060000000028"
)


# --------------------------------------------------------------------------- encoding


def frame(content=b"", flags=0):
    """One frame: int32 LE length (including the 6 header bytes), uint16 LE flags, content."""
    return struct.pack("<iH", FRAME_HEADER_SIZE + len(content), flags) + bytes(content)


def null_frame():
    return frame(b"", IS_NULL)


def string_frame(s):
    return frame(s.encode("utf-8"))


def encode_uuid(u):
    """17 bytes: isNull flag, most-significant 64 bits LE, least-significant 64 bits LE."""
    if u is None:
        return b"\x01" + b"\x00" * 16
    value = u.int
    msb = (value >> 64) & 0xFFFFFFFFFFFFFFFF
    lsb = value & 0xFFFFFFFFFFFFFFFF
    return b"\x00" + struct.pack("<QQ", msb, lsb)


def decode_uuid(buf, offset=0):
    if buf[offset] != 0:
        return None
    msb, lsb = struct.unpack_from("<QQ", buf, offset + 1)
    return uuidlib.UUID(int=(msb << 64) | lsb)


def request(message_type, correlation_id, partition_id=-1, fixed=b"", frames=(), flags=BACKUP_AWARE):
    """A whole request message: initial frame (16-byte header + fixed params) + var frames.

    IS_FINAL is put on the last frame, both fragment bits on the initial frame.
    """
    initial_content = struct.pack("<iqi", message_type, correlation_id, partition_id) + fixed
    parts = [bytearray(frame(initial_content, UNFRAGMENTED | flags))]
    parts.extend(bytearray(f) for f in frames)
    last = parts[-1]
    last_flags = struct.unpack_from("<H", last, 4)[0]
    struct.pack_into("<H", last, 4, last_flags | IS_FINAL)
    return b"".join(bytes(p) for p in parts)


def auth_request(
    correlation_id=1,
    cluster_name="dev",
    client_uuid=None,
    username=None,
    password=None,
    client_type="PYH",
    serialization_version=1,
    client_version="5.7.0",
    client_name="wire-test",
    labels=(),
):
    """Client.Authentication (0x000100) exactly as the Python client 5.7.0 encodes it."""
    if client_uuid is None:
        client_uuid = uuidlib.uuid4()
    fixed = encode_uuid(client_uuid) + struct.pack("<b", serialization_version)
    frames = [
        string_frame(cluster_name),
        null_frame() if username is None else string_frame(username),
        null_frame() if password is None else string_frame(password),
        string_frame(client_type),
        string_frame(client_version),
        string_frame(client_name),
        frame(b"", BEGIN_DATA_STRUCTURE),
    ]
    frames.extend(string_frame(label) for label in labels)
    frames.append(frame(b"", END_DATA_STRUCTURE))
    return request(CLIENT_AUTHENTICATION, correlation_id, -1, fixed, frames)


def ping_request(correlation_id):
    return request(CLIENT_PING, correlation_id)


def create_proxy_request(correlation_id, name, service=MAP_SERVICE):
    return request(CLIENT_CREATE_PROXY, correlation_id, -1, b"", [string_frame(name), string_frame(service)])


def string_data(s):
    """Data blob of a Java/Python string: partition hash 0, type -11, int32 BE byte count, UTF-8."""
    b = s.encode("utf-8")
    return struct.pack(">iii", 0, -11, len(b)) + b


def murmur3_x86_32(data, seed=0x01000193):
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & 0xFFFFFFFF
    n = len(data)
    nblocks = n // 4
    for i in range(nblocks):
        k = struct.unpack_from("<I", data, i * 4)[0]
        k = (k * c1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        k = (k * c2) & 0xFFFFFFFF
        h ^= k
        h = ((h << 13) | (h >> 19)) & 0xFFFFFFFF
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
    tail = data[nblocks * 4:]
    k = 0
    if len(tail) >= 3:
        k ^= tail[2] << 16
    if len(tail) >= 2:
        k ^= tail[1] << 8
    if len(tail) >= 1:
        k ^= tail[0]
        k = (k * c1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        k = (k * c2) & 0xFFFFFFFF
        h ^= k
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h - 0x100000000 if h & 0x80000000 else h


def partition_id(data, partition_count=PARTITION_COUNT):
    h = struct.unpack_from(">i", data, 0)[0]
    if h == 0:
        h = murmur3_x86_32(data[8:])
    if h == -0x80000000:
        return 0
    return abs(h) % partition_count


def map_put_request(correlation_id, name, key_data, value_data, thread_id=1, ttl=-1):
    return request(
        MAP_PUT,
        correlation_id,
        partition_id(key_data),
        struct.pack("<qq", thread_id, ttl),
        [string_frame(name), frame(key_data), frame(value_data)],
    )


def map_get_request(correlation_id, name, key_data, thread_id=1):
    return request(
        MAP_GET,
        correlation_id,
        partition_id(key_data),
        struct.pack("<q", thread_id),
        [string_frame(name), frame(key_data)],
    )


# --------------------------------------------------------------------------- decoding


class Frame:
    __slots__ = ("flags", "content")

    def __init__(self, flags, content):
        self.flags = flags
        self.content = content

    def has(self, flag):
        return (self.flags & flag) == flag

    def __repr__(self):
        return "Frame(flags=0x%04x, content=%s)" % (self.flags, self.content.hex())


class Message:
    def __init__(self, frames):
        self.frames = frames

    @property
    def initial(self):
        return self.frames[0]

    @property
    def message_type(self):
        return struct.unpack_from("<i", self.initial.content, 0)[0]

    @property
    def correlation_id(self):
        return struct.unpack_from("<q", self.initial.content, 4)[0]

    @property
    def is_event(self):
        return self.initial.has(IS_EVENT)

    def response_fixed(self):
        """Fixed parameters of a response (after the 13-byte header)."""
        return self.initial.content[RESPONSE_HEADER_SIZE:]

    def __repr__(self):
        return "Message(type=0x%06x, corr=%d, frames=%d)" % (
            self.message_type,
            self.correlation_id,
            len(self.frames),
        )


class ConnectionClosed(Exception):
    pass


class Connection:
    """A raw client connection to a member on a loopback address."""

    def __init__(self, host, port, timeout=10.0, ssl_context=None):
        """`ssl_context`: speak TLS with it (an `ssl.SSLContext`), server name `localhost`."""
        assert host.startswith("127.") or host in ("localhost", "::1"), "loopback only: %r" % host
        self.sock = socket.create_connection((host, port), timeout=timeout)
        if ssl_context is not None:
            self.sock = ssl_context.wrap_socket(self.sock, server_hostname="localhost")
        self.sock.settimeout(timeout)
        self.buf = b""
        self.correlation_id = 0

    def next_correlation_id(self):
        self.correlation_id += 1
        return self.correlation_id

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, n, deadline):
        while len(self.buf) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout("timed out waiting for %d bytes" % n)
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionClosed("peer closed the connection")
            self.buf += chunk

    def _take(self, n, deadline):
        self._fill(n, deadline)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_message(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        frames = []
        while True:
            length, flags = struct.unpack("<iH", self._take(FRAME_HEADER_SIZE, deadline))
            if length < FRAME_HEADER_SIZE:
                raise ValueError("bad frame length %d from server" % length)
            frames.append(Frame(flags, self._take(length - FRAME_HEADER_SIZE, deadline)))
            if flags & IS_FINAL:
                return Message(frames)

    def read_response(self, correlation_id, timeout=10.0):
        """Read messages until the (non-event) response with this correlation id; skip events."""
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read_message(max(0.01, deadline - time.monotonic()))
            if not msg.is_event and msg.correlation_id == correlation_id:
                return msg

    def call(self, data_builder, timeout=10.0):
        """data_builder(corr) -> bytes; sends it and returns the matching response."""
        corr = self.next_correlation_id()
        self.send(data_builder(corr))
        return self.read_response(corr, timeout)

    def wait_closed(self, timeout=10.0):
        """True if the peer closes the connection (EOF or reset) within timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return False
            except (ConnectionResetError, BrokenPipeError):
                return True
            if not chunk:
                return True
            self.buf += chunk
        return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def authenticate(conn, cluster_name="dev", **kwargs):
    """Send CP2 + Client.Authentication; return the decoded auth response dict."""
    corr = conn.next_correlation_id()
    conn.send(PROTOCOL_HEADER + auth_request(corr, cluster_name=cluster_name, **kwargs))
    msg = conn.read_response(corr)
    return decode_auth_response(msg)


def decode_auth_response(msg):
    if msg.message_type != CLIENT_AUTHENTICATION_RESPONSE:
        raise AssertionError("expected an auth response, got %r (%r)" % (msg, decode_error(msg) if msg.message_type == ERROR else None))
    fixed = msg.response_fixed()
    status = struct.unpack_from("<b", fixed, 0)[0]
    out = {"status": status, "member_uuid": decode_uuid(fixed, 1)}
    out["serialization_version"] = struct.unpack_from("<b", fixed, 18)[0]
    out["partition_count"] = struct.unpack_from("<i", fixed, 19)[0]
    out["cluster_id"] = decode_uuid(fixed, 23)
    return out


def decode_error(msg):
    """Error response (0x000000) -> list of (errorCode, className, message) for the cause chain."""
    if msg.message_type != ERROR:
        raise AssertionError("not an error response: %r" % msg)
    frames = msg.frames[1:]
    i = 0

    def expect(flag):
        nonlocal i
        f = frames[i]
        if not f.has(flag):
            raise AssertionError("expected flag 0x%04x at frame %d, got %r" % (flag, i, f))
        i += 1

    def skip_structure():
        # frames[i] is just after a BEGIN; skip to the matching END (inclusive)
        nonlocal i
        depth = 1
        while depth:
            f = frames[i]
            if f.has(BEGIN_DATA_STRUCTURE):
                depth += 1
            elif f.has(END_DATA_STRUCTURE):
                depth -= 1
            i += 1

    holders = []
    expect(BEGIN_DATA_STRUCTURE)  # list
    while not frames[i].has(END_DATA_STRUCTURE):
        expect(BEGIN_DATA_STRUCTURE)  # holder
        code = struct.unpack_from("<i", frames[i].content, 0)[0]
        i += 1
        class_name = frames[i].content.decode("utf-8")
        i += 1
        message = None if frames[i].has(IS_NULL) else frames[i].content.decode("utf-8")
        i += 1
        expect(BEGIN_DATA_STRUCTURE)  # stack trace list
        skip_structure()
        skip_structure()  # rest of the holder up to its END
        holders.append((code, class_name, message))
    return holders


def decode_nullable_data_response(msg):
    """Response whose single var field is Data-or-NULL (Map.Get, Map.Put): bytes or None."""
    f = msg.frames[1]
    if f.has(IS_NULL):
        return None
    return f.content
