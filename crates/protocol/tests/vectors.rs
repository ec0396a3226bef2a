//! Round trip of every captured message ferrogrid has a codec for.
//!
//! Fixtures (`tests/fixtures/`) are extracted verbatim from `shared/spec/vectors/`: bytes that
//! crossed the socket between the official Python, Java and Node.js clients and a real
//! Hazelcast 5.6.0 member. Each message must parse as whole frames, be cut by the stream
//! decoder as exactly one message, decode with its codec, and re-encode to the same bytes.

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{read_error_response, ERROR_RESPONSE};
use ferrogrid_protocol::frame::{Decoded, StreamDecoder, BACKUP_AWARE};
use ferrogrid_protocol::{partition_for, Data, Message, MessageType};

#[derive(serde::Deserialize)]
struct Captured {
    source: String,
    direction: Option<String>,
    hex: String,
}

fn captured() -> Vec<Captured> {
    let text = include_str!("fixtures/captured-messages.json");
    serde_json::from_str(text).expect("fixture parses")
}

/// Re-encodes a request with its codec; None when ferrogrid has no codec for the type.
fn reencode_request(message: &Message<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (corr, partition) = (message.correlation_id(), message.partition_id());
    let flags = message.initial_flags() & BACKUP_AWARE;
    macro_rules! requests {
        ($($codec:ident),*) => {
            match message.message_type() {
                $(t if t == $codec::TYPE => {
                    $codec::decode(message).unwrap().encode(&mut out, corr, partition, flags);
                })*
                _ => return None,
            }
        };
    }
    requests!(
        ClientAuthentication,
        ClientAuthenticationCustom,
        ClientAddClusterViewListener,
        ClientCreateProxy,
        ClientDestroyProxy,
        ClientAddPartitionLostListener,
        ClientRemovePartitionLostListener,
        ClientGetDistributedObjects,
        ClientPing,
        ClientStatistics,
        ClientCreateProxies,
        ClientLocalBackupListener,
        ClientTriggerPartitionAssignment,
        MapPut,
        MapGet,
        MapRemove,
        MapReplace,
        MapReplaceIfSame,
        MapContainsKey,
        MapContainsValue,
        MapRemoveIfSame,
        MapDelete,
        MapFlush,
        MapTryRemove,
        MapTryPut,
        MapPutTransient,
        MapPutIfAbsent,
        MapSet,
        MapGetEntryView,
        MapEvict,
        MapEvictAll,
        MapKeySet,
        MapGetAll,
        MapValues,
        MapEntrySet,
        MapSize,
        MapIsEmpty,
        MapPutAll,
        MapClear,
        MapSetTtl,
        MapPutWithMaxIdle,
        MapPutTransientWithMaxIdle,
        MapPutIfAbsentWithMaxIdle,
        MapSetWithMaxIdle
    );
    Some(out)
}

/// Re-encodes a response by the shape its request type answers with.
fn reencode_response(message: &Message<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (ty, corr, acks) = (message.message_type(), message.correlation_id(), message.backup_acks());
    macro_rules! shape {
        ($shape:ident) => {
            $shape::decode(message).unwrap().encode(&mut out, ty, corr, acks)
        };
    }
    let request = MessageType(ty.0 & !0xff);
    match request {
        t if t == ClientAuthentication::TYPE || t == ClientAuthenticationCustom::TYPE => {
            shape!(AuthenticationResponse)
        }
        t if t == ClientGetDistributedObjects::TYPE => shape!(DistributedObjectsResponse),
        t if [
            ClientLocalBackupListener::TYPE,
            ClientAddPartitionLostListener::TYPE,
            MapAddEntryListener::TYPE,
            MapAddEntryListenerToKey::TYPE,
            MapAddEntryListenerWithPredicate::TYPE,
            MapAddEntryListenerToKeyWithPredicate::TYPE,
        ]
        .contains(&t) =>
        {
            shape!(UuidResponse)
        }
        t if [
            MapPut::TYPE,
            MapGet::TYPE,
            MapRemove::TYPE,
            MapReplace::TYPE,
            MapPutIfAbsent::TYPE,
            MapPutWithMaxIdle::TYPE,
            MapPutTransientWithMaxIdle::TYPE,
            MapPutIfAbsentWithMaxIdle::TYPE,
            MapSetWithMaxIdle::TYPE,
        ]
        .contains(&t) =>
        {
            shape!(NullableDataResponse)
        }
        t if [
            MapReplaceIfSame::TYPE,
            MapContainsKey::TYPE,
            MapContainsValue::TYPE,
            MapRemoveIfSame::TYPE,
            MapTryRemove::TYPE,
            MapTryPut::TYPE,
            MapEvict::TYPE,
            MapIsEmpty::TYPE,
            MapSetTtl::TYPE,
            ClientRemovePartitionLostListener::TYPE,
        ]
        .contains(&t) =>
        {
            shape!(BoolResponse)
        }
        t if t == MapDelete::TYPE => shape!(DeleteResponse),
        t if t == MapSize::TYPE => shape!(IntResponse),
        t if t == MapKeySet::TYPE || t == MapValues::TYPE => shape!(DataListResponse),
        t if t == MapGetAll::TYPE || t == MapEntrySet::TYPE => shape!(EntryListResponse),
        t if t == MapGetEntryView::TYPE => shape!(EntryViewResponse),
        t if [
            ClientAddClusterViewListener::TYPE,
            ClientCreateProxy::TYPE,
            ClientDestroyProxy::TYPE,
            ClientPing::TYPE,
            ClientStatistics::TYPE,
            ClientCreateProxies::TYPE,
            ClientTriggerPartitionAssignment::TYPE,
            MapSet::TYPE,
            MapPutTransient::TYPE,
            MapFlush::TYPE,
            MapEvictAll::TYPE,
            MapPutAll::TYPE,
            MapClear::TYPE,
        ]
        .contains(&t) =>
        {
            shape!(EmptyResponse)
        }
        _ => return None,
    };
    Some(out)
}

fn reencode_event(message: &Message<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (corr, partition) = (message.correlation_id(), message.partition_id());
    macro_rules! events {
        ($($codec:ident),*) => {
            match message.message_type() {
                $(t if t == $codec::TYPE => {
                    $codec::decode(message).unwrap().encode(&mut out, corr, partition);
                })*
                _ => return None,
            }
        };
    }
    let ty = message.message_type();
    if [0x011902, 0x011802, 0x011702, 0x011602].contains(&ty.0) {
        EntryEvent::decode(message).unwrap().encode(&mut out, ty, corr, partition);
        return Some(out);
    }
    events!(MembersViewEvent, PartitionsViewEvent, MemberGroupsViewEvent, ClusterVersionEvent, BackupEvent);
    Some(out)
}

#[test]
fn every_captured_message_round_trips() {
    let mut checked = 0;
    for record in captured() {
        let bytes = hex::decode(&record.hex).unwrap();
        let message = Message::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", record.source));
        assert_eq!(
            StreamDecoder::default().decode(&bytes).unwrap(),
            Decoded::Message { length: bytes.len() },
            "{}",
            record.source
        );
        let kind = message.message_type().0 & 0xff;
        let reencoded = if message.message_type() == ERROR_RESPONSE {
            assert!(!read_error_response(&message).unwrap().is_empty());
            None
        } else if kind == 0 && record.direction.as_deref() != Some("server->client") {
            reencode_request(&message)
        } else if kind == 1 {
            reencode_response(&message)
        } else {
            reencode_event(&message)
        };
        if let Some(reencoded) = reencoded {
            assert_eq!(hex::encode(reencoded), record.hex, "{}", record.source);
            checked += 1;
        }
    }
    assert!(checked > 420, "only {checked} messages had a codec");
}

#[test]
fn stream_decoder_cuts_a_whole_session_fed_byte_by_byte() {
    let records = captured();
    let stream: Vec<u8> = records
        .iter()
        .filter(|r| r.source.starts_with("session-python.json") && r.direction.as_deref() == Some("client->server"))
        .flat_map(|r| hex::decode(&r.hex).unwrap())
        .collect();
    let expected = records
        .iter()
        .filter(|r| r.source.starts_with("session-python.json") && r.direction.as_deref() == Some("client->server"))
        .count();
    let mut decoder = StreamDecoder::default();
    let (mut buffer, mut messages) = (Vec::new(), 0);
    for byte in stream {
        buffer.push(byte);
        if let Decoded::Message { length } = decoder.decode(&buffer).unwrap() {
            Message::parse(&buffer[..length]).unwrap();
            buffer.drain(..length);
            messages += 1;
        }
    }
    assert!(buffer.is_empty());
    assert_eq!(messages, expected);
}

#[derive(serde::Deserialize)]
struct PartitionVector {
    key: String,
    data_hex: String,
    partition_hash: i32,
    partition_id_271: u16,
}

#[test]
fn partition_ids_match_the_member() {
    let vectors: Vec<PartitionVector> = serde_json::from_str(include_str!("fixtures/partition-vectors.json")).unwrap();
    assert_eq!(vectors.len(), 23);
    for vector in vectors {
        let blob = hex::decode(&vector.data_hex).unwrap();
        assert_eq!(Data(&blob).partition_hash(), vector.partition_hash, "{}", vector.key);
        assert_eq!(partition_for(Data(&blob), 271).0, vector.partition_id_271, "{}", vector.key);
    }
}

/// PN counter messages never crossed the captured sessions; these were encoded by the
/// official codecs themselves: the requests by the Python client 5.7.0
/// (`pn_counter_*_codec.encode_request`), the response by the 5.6.0 jar
/// (`PNCounterAddCodec.encodeResponse`, IS_FINAL set on the last frame as on the socket).
#[test]
fn pn_counter_messages_of_the_official_codecs_round_trip() {
    let target = Some(ferrogrid_protocol::Uuid { most: 0x1234_5678_9abc_def0, least: 0x1122_3344_5566_7788 });
    let add_hex = "3000000000c000021d000700000000000000fffffffffbffffffffffffff0100f0debc9a7856341288776655443322110d\
                   0000000000636f756e7465723800000000200001000000000000000200000000000000010000000000008000feffffffff\
                   ffffff01000000000000802a00000000000000";
    let bytes = hex::decode(add_hex).unwrap();
    let add = PnCounterAdd::decode(&Message::parse(&bytes).unwrap()).unwrap();
    let clock = vec![
        (Some(ferrogrid_protocol::Uuid { most: 1, least: 2 }), i64::MIN + 1),
        (Some(ferrogrid_protocol::Uuid { most: 0xffff_ffff_ffff_fffe, least: 0x8000_0000_0000_0001 }), 42),
    ];
    let expected = PnCounterAdd {
        delta: -5,
        get_before_update: true,
        target_replica_uuid: target,
        name: "counter",
        replica_timestamps: ferrogrid_protocol::message::Packed(clock.clone()),
    };
    assert_eq!(add, expected);
    let mut out = Vec::new();
    add.encode(&mut out, 7, -1, 0);
    assert_eq!(hex::encode(out), add_hex);

    let get_hex = "2700000000c000011d000800000000000000ffffffff00f0debc9a7856341288776655443322110d0000000000636f756e\
                   746572060000000020";
    let bytes = hex::decode(get_hex).unwrap();
    let get = PnCounterGet::decode(&Message::parse(&bytes).unwrap()).unwrap();
    assert_eq!((get.name, get.target_replica_uuid, get.replica_timestamps.0.len()), ("counter", target, 0));
    let mut out = Vec::new();
    get.encode(&mut out, 8, -1, 0);
    assert_eq!(hex::encode(out), get_hex);

    let count_hex = "1600000000c000031d000900000000000000ffffffff0d0000000020636f756e746572";
    let bytes = hex::decode(count_hex).unwrap();
    let count = PnCounterGetConfiguredReplicaCount::decode(&Message::parse(&bytes).unwrap()).unwrap();
    assert_eq!(count.name, "counter");

    let response_hex =
        "1f00000000c001021d00070000000000000000fdffffffffffffffffffff7f380000000020000100000000000000020000\
                        0000000000010000000000008000feffffffffffffff01000000000000802a00000000000000";
    let bytes = hex::decode(response_hex).unwrap();
    let response = PnCounterResponse::decode(&Message::parse(&bytes).unwrap()).unwrap();
    assert_eq!((response.value, response.replica_count), (-3, i32::MAX));
    assert_eq!(response.replica_timestamps.0, clock);
    let mut out = Vec::new();
    response.encode(&mut out, PnCounterAdd::RESPONSE, 7, 0);
    assert_eq!(hex::encode(out), response_hex);
}

/// CardinalityEstimator messages never crossed the captured sessions (the Python client has no
/// proxy for them); these were encoded by the official codecs of the 5.6.0 jar
/// (`CardinalityEstimatorAddCodec`, `CardinalityEstimatorEstimateCodec`), IS_FINAL set on the
/// last frame as on the socket.
#[test]
fn cardinality_estimator_messages_of_the_official_codecs_round_trip() {
    let add_hex = "1e00000000c00001190007000000000000002a000000fbffffffffffffff0f0000000020657374696d61746f72";
    let bytes = hex::decode(add_hex).unwrap();
    let add = CardinalityEstimatorAdd::decode(&Message::parse(&bytes).unwrap()).unwrap();
    assert_eq!(add, CardinalityEstimatorAdd { hash: -5, name: "estimator" });
    let mut out = Vec::new();
    add.encode(&mut out, 7, 42, 0);
    assert_eq!(hex::encode(out), add_hex);

    let estimate_hex = "1600000000c00002190008000000000000002a0000000f0000000020657374696d61746f72";
    let bytes = hex::decode(estimate_hex).unwrap();
    let estimate = CardinalityEstimatorEstimate::decode(&Message::parse(&bytes).unwrap()).unwrap();
    assert_eq!(estimate.name, "estimator");
    let mut out = Vec::new();
    estimate.encode(&mut out, 8, 42, 0);
    assert_eq!(hex::encode(out), estimate_hex);

    let response_hex = "1b00000000e00102190008000000000000000015cd5b0700000000";
    let mut out = Vec::new();
    LongResponse { response: 123_456_789 }.encode(&mut out, CardinalityEstimatorEstimate::RESPONSE, 8, 0);
    assert_eq!(hex::encode(out), response_hex);
    let mut out = Vec::new();
    EmptyResponse {}.encode(&mut out, CardinalityEstimatorAdd::RESPONSE, 7, 0);
    assert_eq!(hex::encode(out), "1300000000e001011900070000000000000000");
}
