//! Distributed-object events (`client.add_distributed_object_listener`): CREATED when an
//! object's name first appears in this member's listing of proxies, DESTROYED when it leaves it.
//!
//! The member a client asks to create or destroy a proxy changes its listing, tells its
//! listeners, and relays the change to every other member (`peer::OBJECT`), which changes its
//! own listing and tells its listeners if that changed anything. As in Hazelcast, a local-only
//! registration (a smart client registers one with every member) hears events only from the
//! master, so a smart client hears each event once; any other registration (a unisocket
//! client's) hears them from its member.
//!
//! The registrations are shared by the reactors under a mutex: events are as rare as proxy
//! creation, and any reactor (the one that read the request or the member link) delivers
//! them, writing straight to the listening connection (write-through, like an answer).

use crate::connection::ConnectionShared;
use crate::peer::{put_str, Malformed, Reader};
use ferrogrid_protocol::codec::DistributedObjectEvent;
use ferrogrid_protocol::Uuid;
use std::sync::Arc;
use tracing::warn;

/// Registrations a member keeps per allowed connection (`max-connections`): the bound of the
/// registry.
pub const LISTENERS_PER_CONNECTION: usize = 4;

/// Whether a proxy appeared or went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectChange {
    Created,
    Destroyed,
}

impl ObjectChange {
    fn name(self) -> &'static str {
        match self {
            ObjectChange::Created => "CREATED",
            ObjectChange::Destroyed => "DESTROYED",
        }
    }
}

/// A proxy created or destroyed, by the client (or member) `source`; `name` is scoped (a
/// tenant's carries its prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectEvent {
    pub change: ObjectChange,
    pub service_name: String,
    pub name: String,
    pub source: Uuid,
}

impl ObjectEvent {
    /// What OBJECT carries: `change u8 (1 created, 2 destroyed) | service str | name str | source u128`.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.push(match self.change {
            ObjectChange::Created => 1,
            ObjectChange::Destroyed => 2,
        });
        put_str(out, &self.service_name);
        put_str(out, &self.name);
        out.extend_from_slice(&self.source.as_u128().to_le_bytes());
    }

    pub(crate) fn decode(payload: &[u8]) -> Result<ObjectEvent, Malformed> {
        let mut reader = Reader::new(payload);
        let change = match reader.u8()? {
            1 => ObjectChange::Created,
            2 => ObjectChange::Destroyed,
            other => return Err(Malformed::UnknownChange(other)),
        };
        let (service_name, name) = (reader.str()?.to_owned(), reader.str()?.to_owned());
        let source = Uuid::from_u128(reader.u128()?);
        if !reader.is_empty() {
            return Err(Malformed::Refused("bytes after an object event"));
        }
        Ok(ObjectEvent { change, service_name, name, source })
    }
}

#[derive(Debug)]
struct ObjectListener {
    id: Uuid,
    connection: Arc<ConnectionShared>,
    /// The registration request's: every event carries it.
    correlation_id: i64,
    local_only: bool,
}

/// This member's distributed-object listeners.
#[derive(Debug, Default)]
pub struct ObjectListeners {
    listeners: parking_lot::Mutex<Vec<ObjectListener>>,
}

impl ObjectListeners {
    /// Registers a listener; false when the registry is full (`bound`).
    pub fn add(
        &self,
        id: Uuid,
        connection: Arc<ConnectionShared>,
        correlation_id: i64,
        local_only: bool,
        bound: usize,
    ) -> bool {
        let mut listeners = self.listeners.lock();
        listeners.retain(|listener| !listener.connection.is_closed());
        if listeners.len() >= bound {
            return false;
        }
        listeners.push(ObjectListener { id, connection, correlation_id, local_only });
        true
    }

    /// Removes a listener; false if there was none with this id.
    pub fn remove(&self, id: Uuid) -> bool {
        let mut listeners = self.listeners.lock();
        let before = listeners.len();
        listeners.retain(|listener| listener.id != id && !listener.connection.is_closed());
        listeners.len() < before
    }

    /// Tells this member's listeners of `event`: local-only ones only if this member is the
    /// `master`, each by the name its tenant knows the object by (`visible`; None: not its
    /// object). A listener whose connection holds more than `limit` bytes unsent misses the
    /// event (logged).
    pub fn publish<'n>(
        &self,
        event: &'n ObjectEvent,
        master: bool,
        limit: usize,
        visible: impl Fn(u16, &'n str) -> Option<&'n str>,
    ) {
        let listeners = self.listeners.lock();
        let mut frame = Vec::new();
        for listener in listeners.iter().filter(|listener| master || !listener.local_only) {
            let Some(name) = visible(listener.connection.tenant(), &event.name) else {
                continue;
            };
            if listener.connection.pending_bytes() > limit {
                warn!(client = %listener.connection.client_uuid(), "distributed-object event dropped: the listener reads too slowly");
                continue;
            }
            frame.clear();
            let payload = DistributedObjectEvent {
                source: Some(event.source),
                name,
                service_name: &event.service_name,
                event_type: event.change.name(),
            };
            payload.encode(&mut frame, listener.correlation_id, -1);
            listener.connection.send(&frame);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_survives_the_member_hop_and_a_truncated_one_is_refused() {
        let event = ObjectEvent {
            change: ObjectChange::Destroyed,
            service_name: "hz:impl:mapService".into(),
            name: "orders".into(),
            source: Uuid::from_u128(42),
        };
        let mut bytes = Vec::new();
        event.encode(&mut bytes);
        assert_eq!(ObjectEvent::decode(&bytes), Ok(event));
        for cut in 0..bytes.len() {
            assert!(ObjectEvent::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        bytes[0] = 9;
        assert_eq!(ObjectEvent::decode(&bytes), Err(Malformed::UnknownChange(9)));
    }
}
