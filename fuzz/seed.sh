#!/usr/bin/env bash
# Writes a seed corpus for both fuzz targets from the captured messages
# (crates/protocol/tests/fixtures/captured-messages.json) into fuzz/corpus/<target>/.
# The corpus directory is not committed; run this before the first `cargo fuzz run`.
#
#   codecs/          one captured message per file
#   stream_decoder/  a setup byte (see drive_stream in src/lib.rs) then: each message alone,
#                    the whole capture back to back, and a captured request split into
#                    fragments (client-protocol.md §2.7)
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/codecs corpus/stream_decoder
python3 - <<'PY'
import json, struct

records = json.load(open("../crates/protocol/tests/fixtures/captured-messages.json"))
messages = [bytes.fromhex(r["hex"]) for r in records]

def frames(message):
    out, offset = [], 0
    while offset < len(message):
        (length,) = struct.unpack_from("<i", message, offset)
        out.append(bytearray(message[offset:offset + length]))
        offset += length
    return out

def fragmented(message, fragment_id):
    """Each frame after the initial one starts a new piece; flags per §2.7."""
    parts = frames(message)
    parts[0][4:6] = struct.pack("<H", struct.unpack_from("<H", parts[0], 4)[0] & 0x3FFF)
    pieces = [parts[:2]] + [[frame] for frame in parts[2:]]
    out = bytearray()
    for index, piece in enumerate(pieces):
        flags = (0x8000 if index == 0 else 0) | (0x4000 if index == len(pieces) - 1 else 0)
        out += struct.pack("<iHq", 14, flags, fragment_id)
        for position, frame in enumerate(piece):
            frame = bytearray(frame)
            if position == len(piece) - 1:
                frame[4:6] = struct.pack("<H", struct.unpack_from("<H", frame, 4)[0] | 0x2000)
            out += frame
    return bytes(out)

def write(path, data):
    with open(path, "wb") as file:
        file.write(data)

for index, message in enumerate(messages):
    write(f"corpus/codecs/captured-{index:03}", message)
    for setup in (0x00, 0x0B):
        write(f"corpus/stream_decoder/captured-{index:03}-{setup:02x}", bytes([setup]) + message)
write("corpus/stream_decoder/session", bytes([0x05]) + b"".join(messages))
requests = [m for m in messages if len(frames(m)) >= 3 and m[5] & 0x02 == 0]
for index, message in enumerate(requests[:8]):
    write(f"corpus/stream_decoder/fragmented-{index:03}", bytes([0x04]) + fragmented(message, index))
print(f"seeded {len(messages)} captured messages, {min(len(requests), 8)} fragmented")
PY
