"""Self-tests of the raw protocol helper (no member needed)."""

import uuid

import pytest

import wire


def test_auth_request_matches_captured_python_client_bytes():
    built = wire.auth_request(
        1,
        client_uuid=uuid.UUID("bac689cf-3683-4499-939f-a87ad32d4112"),
        client_name="spec-client",
    )
    assert built.hex() == wire.AUTH_REQUEST_VECTOR_HEX


def test_uuid_encoding():
    u = uuid.UUID("ea6507c8-8459-4de7-bf64-34cd7b5338ce")
    enc = wire.encode_uuid(u)
    assert enc.hex() == "00" "e74d5984c80765ea" "ce38537bcd3464bf"
    assert wire.decode_uuid(enc) == u
    assert wire.encode_uuid(None) == b"\x01" + b"\x00" * 16
    assert wire.decode_uuid(wire.encode_uuid(None)) is None


@pytest.mark.parametrize(
    "blob_hex, partition",
    [
        ("00000000fffffff5000000046b657931", 43),
        ("00000000fffffff5000000046b657932", 93),
        ("00000000fffffff50000000161", 73),
        ("00000000fffffff500000000", 11),
        ("00000000fffffff500000009c3bce282acf09f9880", 223),
        ("00000000fffffff9ffffffff", 164),
        ("00000000fffffff980000000", 249),
        ("00000000fffffff80000011f71fb04cb", 40),
        ("00000000fffffff640091eb851eb851f", 191),
        ("00000000fffffffc01", 223),
        ("00000000fffffff400000003010203", 263),
    ],
)
def test_partition_ids_match_spec_vectors(blob_hex, partition):
    assert wire.partition_id(bytes.fromhex(blob_hex)) == partition


def test_string_data():
    assert wire.string_data("key1").hex() == "00000000fffffff5000000046b657931"
    assert wire.string_data("").hex() == "00000000fffffff500000000"


def test_ping_request_layout():
    assert wire.ping_request(4).hex() == "1600000000e1" "000b0000" "0400000000000000" "ffffffff"
