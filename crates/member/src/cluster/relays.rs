//! Listener registrations a client made through this member that cover the whole cluster (a
//! unisocket client's: `local_only` false), and the relay of the other members' events to it.
//!
//! Hazelcast registers such a listener on every member and relays the events through the
//! member the client talks to. Here the client's member gives the registration a relay id,
//! sends the registration request to every other member with the relay id as its correlation
//! id (as `WIDE`, so the client is answered once every member has it; as `LISTEN` to a member
//! that joins later), and each of them registers it with the member link as the listening
//! connection. Their events therefore arrive on the link as ordinary event messages carrying
//! the relay id; this member puts the client's correlation id in and writes them to the client.
//! Removing the registration, the client's connection closing, or finding the client gone when
//! an event arrives, sends `UNLISTEN` (the relay id) to the members, which drop it.
//!
//! Shared by the reactors under a mutex: registrations are rare, and a relayed event takes the
//! lock once to find its connection.

use crate::net::connection::ConnectionShared;
use ferrogrid_protocol::Uuid;
use std::collections::HashMap;
use std::sync::Arc;

/// Relayed registrations a member keeps per allowed connection (`max-connections`).
pub const RELAYS_PER_CONNECTION: usize = 16;

/// Where a relay id's events go.
#[derive(Debug)]
struct Relay {
    connection: Arc<ConnectionShared>,
    /// The client's registration request's correlation id (its events carry it).
    correlation_id: i64,
    /// The registration id the client was given (what it removes the listener by).
    registration: Uuid,
    /// The registration request with the relay id as its correlation id, for members that join.
    request: Vec<u8>,
}

/// This member's relayed registrations, by relay id.
#[derive(Debug, Default)]
pub struct Relays {
    table: parking_lot::Mutex<(i64, HashMap<i64, Relay>)>,
}

/// Byte offset of the correlation id in a message (after the frame header and message type).
const CORRELATION_AT: std::ops::Range<usize> = 10..18;

/// `bytes` with another correlation id; None if they are too short to hold one.
pub fn with_correlation_id(bytes: &[u8], correlation_id: i64) -> Option<Vec<u8>> {
    let mut copy = bytes.to_vec();
    copy.get_mut(CORRELATION_AT)?.copy_from_slice(&correlation_id.to_le_bytes());
    Some(copy)
}

impl Relays {
    /// Registers a relay for `connection`'s registration `request`; returns the request to
    /// send to the other members (with the relay id), or None when the table is full (`bound`)
    /// or the request is malformed. Relays of closed connections are dropped first; their ids
    /// are returned in `dropped` (the members must be told).
    pub fn add(
        &self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        registration: Uuid,
        request: &[u8],
        bound: usize,
        dropped: &mut Vec<i64>,
    ) -> Option<Vec<u8>> {
        let mut guard = self.table.lock();
        let (next, table) = &mut *guard;
        dropped.extend(drop_closed(table));
        if table.len() >= bound {
            return None;
        }
        *next += 1;
        let request = with_correlation_id(request, *next)?;
        let relay = Relay { connection: connection.clone(), correlation_id, registration, request: request.clone() };
        table.insert(*next, relay);
        Some(request)
    }

    /// Drops the relays of clients that have gone (a connection closed); their relay ids, for
    /// the other members to drop too.
    pub fn drop_closed(&self) -> Vec<i64> {
        drop_closed(&mut self.table.lock().1)
    }

    /// Where the events of `relay_id` go: the client's connection and correlation id (None:
    /// no such relay, or its client has gone, and the relay is dropped).
    pub fn target(&self, relay_id: i64) -> Option<(Arc<ConnectionShared>, i64)> {
        let mut guard = self.table.lock();
        let table = &mut guard.1;
        match table.get(&relay_id) {
            Some(relay) if !relay.connection.is_closed() => Some((relay.connection.clone(), relay.correlation_id)),
            Some(_) => {
                table.remove(&relay_id);
                None
            }
            None => None,
        }
    }

    /// Drops the relay of registration `registration`; its relay id, if there was one.
    pub fn remove_registration(&self, registration: Uuid) -> Option<i64> {
        let mut guard = self.table.lock();
        let table = &mut guard.1;
        let relay_id = table.iter().find(|(_, relay)| relay.registration == registration).map(|(id, _)| *id)?;
        table.remove(&relay_id);
        Some(relay_id)
    }

    /// The registration requests of the relays whose clients are still here (for a member
    /// that joined).
    pub fn requests(&self) -> Vec<Vec<u8>> {
        let guard = self.table.lock();
        guard.1.values().filter(|relay| !relay.connection.is_closed()).map(|relay| relay.request.clone()).collect()
    }
}

fn drop_closed(table: &mut HashMap<i64, Relay>) -> Vec<i64> {
    let mut dropped = Vec::new();
    table.retain(|id, relay| {
        let open = !relay.connection.is_closed();
        if !open {
            dropped.push(*id);
        }
        open
    });
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relay_rewrites_the_correlation_id_and_is_dropped_with_its_registration() {
        let (connection, _peer) = ConnectionShared::loopback(1);
        let relays = Relays::default();
        let mut request = vec![0u8; 22];
        request[10..18].copy_from_slice(&77i64.to_le_bytes());
        let registration = Uuid::from_u128(5);
        let mut dropped = Vec::new();
        let sent = relays.add(&connection, 77, registration, &request, 10, &mut dropped).unwrap();
        let relay_id = i64::from_le_bytes(sent[10..18].try_into().unwrap());
        assert_ne!(relay_id, 77);
        assert_eq!(relays.target(relay_id).map(|(_, correlation_id)| correlation_id), Some(77));
        assert_eq!(relays.requests(), vec![sent]);
        assert_eq!(relays.remove_registration(registration), Some(relay_id));
        assert!(relays.target(relay_id).is_none() && relays.requests().is_empty());
        assert!(relays.add(&connection, 1, registration, &request[..12], 10, &mut dropped).is_none(), "too short");
        relays.add(&connection, 1, registration, &request, 1, &mut dropped).unwrap();
        assert!(relays.add(&connection, 2, registration, &request, 1, &mut dropped).is_none(), "full");
        connection.close();
        assert!(relays.add(&connection, 3, registration, &request, 1, &mut dropped).is_some());
        assert_eq!(dropped.len(), 1, "the closed connection's relay was dropped");
        assert_eq!(relays.drop_closed().len(), 1, "the relay just added, of the same closed connection");
        assert!(relays.drop_closed().is_empty() && relays.requests().is_empty());
    }
}
