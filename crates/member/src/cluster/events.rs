//! Cluster-wide events a client listens to on the cluster, not on one object: distributed
//! objects created and destroyed (`client.add_distributed_object_listener`) and partitions
//! whose owner died (`PartitionService.addPartitionLostListener`).
//!
//! Objects: CREATED when an object's name first appears in this member's listing of proxies,
//! DESTROYED when it leaves it. The member a client asks to create or destroy a proxy changes
//! its listing, tells its listeners, and relays the change to every other member
//! (`peer::OBJECT`), which changes its own listing and tells its listeners if that changed
//! anything. As in Hazelcast, a local-only registration (a smart client registers one with
//! every member) hears events only from the master, so a smart client hears each event once;
//! any other registration (a unisocket client's) hears them from its member.
//!
//! Lost partitions: when members die, the master works out what each partition they owned
//! lost ([`ferrogrid_cluster::PartitionTable::losses`]) and sends it to every member
//! (`peer::PARTITION_LOST`). As in Hazelcast, each loss has an origin, the member promoted
//! to owner (the master when no replica survived): local-only registrations hear a loss only
//! from its origin, others from their member. Hazelcast sends one event for every promotion
//! (`lostBackupCount` 0 when the first backup took over) and 6 when nothing survived.
//!
//! The registrations are shared by the reactors and the cluster service under a mutex: events
//! are as rare as proxy creation and member deaths, and whichever thread has one delivers it,
//! writing straight to the listening connection (write-through, like an answer).

use crate::cluster::peer::{put_str, Malformed, Reader};
use crate::net::connection::ConnectionShared;
use ferrogrid_protocol::codec::{
    CachePartitionLostEvent, DistributedObjectEvent, MapPartitionLostEvent, PartitionLostEvent,
};
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

/// What a registration listens to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Objects,
    PartitionLost,
    /// One map's lost partitions (`IMap.addPartitionLostListener`): as in Hazelcast, a loss
    /// counts for a map whose backups (sync and async) were all lost with its owner.
    MapPartitionLost,
    /// One JCache cache's lost partitions (`ICache.addPartitionLostListener`, which names the
    /// cache without its manager's prefix), as a map's.
    CachePartitionLost,
}

/// A partition whose owner died, as members pass it on: `origin` (the promoted member, or the
/// master when no replica survived) is the event's source and the one member whose local-only
/// registrations hear it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionLoss {
    pub partition: u16,
    pub lost_backup_count: i32,
    pub origin: Uuid,
}

impl PartitionLoss {
    /// What PARTITION_LOST carries: `{ partition u16 | lost backup count i32 | origin u128 }*`.
    pub(crate) fn encode_all(losses: &[PartitionLoss], out: &mut Vec<u8>) {
        for loss in losses {
            out.extend_from_slice(&loss.partition.to_le_bytes());
            out.extend_from_slice(&loss.lost_backup_count.to_le_bytes());
            out.extend_from_slice(&loss.origin.as_u128().to_le_bytes());
        }
    }

    pub(crate) fn decode_all(payload: &[u8]) -> Result<Vec<PartitionLoss>, Malformed> {
        let mut reader = Reader::new(payload);
        let mut losses = Vec::new();
        while !reader.is_empty() {
            let partition = reader.u16()?;
            let lost_backup_count = reader.u32()? as i32;
            let origin = Uuid::from_u128(reader.u128()?);
            losses.push(PartitionLoss { partition, lost_backup_count, origin });
        }
        Ok(losses)
    }
}

#[derive(Debug)]
struct Registration {
    id: Uuid,
    topic: Topic,
    /// The map of a `MapPartitionLost` registration, the cache of a `CachePartitionLost` one
    /// (scoped: a tenant's has its prefix).
    map: Option<Box<str>>,
    connection: Arc<ConnectionShared>,
    /// The registration request's: every event carries it.
    correlation_id: i64,
    local_only: bool,
}

/// This member's distributed-object and partition-lost listeners.
#[derive(Debug, Default)]
pub struct ClusterListeners {
    listeners: parking_lot::Mutex<Vec<Registration>>,
}

impl ClusterListeners {
    /// Registers a listener; false when the registry is full (`bound`).
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &self,
        id: Uuid,
        (topic, map): (Topic, Option<&str>),
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
        let map = map.map(Box::from);
        listeners.push(Registration { id, topic, map, connection, correlation_id, local_only });
        true
    }

    /// Removes a listener of `topic` (and map); false if there was none with this id.
    pub fn remove(&self, id: Uuid, (topic, map): (Topic, Option<&str>)) -> bool {
        let mut listeners = self.listeners.lock();
        let before = listeners.len();
        listeners.retain(|listener| {
            let matches = listener.id == id && listener.topic == topic && listener.map.as_deref() == map;
            !matches && !listener.connection.is_closed()
        });
        listeners.len() < before
    }

    /// Tells this member's object listeners of `event`: local-only ones only if this member is
    /// the `master`, each by the name its tenant knows the object by (`visible`; None: not its
    /// object). A listener whose connection holds more than `limit` bytes unsent misses the
    /// event (logged).
    pub fn publish_object<'n>(
        &self,
        event: &'n ObjectEvent,
        master: bool,
        limit: usize,
        visible: impl Fn(u16, &'n str) -> Option<&'n str>,
    ) {
        self.deliver(Topic::Objects, limit, |listener, frame| {
            let name = visible(listener.connection.tenant(), &event.name).filter(|_| master || !listener.local_only);
            let Some(name) = name else { return false };
            let payload = DistributedObjectEvent {
                source: Some(event.source),
                name,
                service_name: &event.service_name,
                event_type: event.change.name(),
            };
            payload.encode(frame, listener.correlation_id, -1);
            true
        });
    }

    /// Tells this member (`me`) 's partition-lost listeners of `losses`: local-only ones only
    /// of the losses `me` is the origin of. Each event carries its partition id (clients keep
    /// one partition's events in order).
    /// A map's or a cache's listeners hear the losses at least as deep as its backups
    /// (`backups(topic, name)`).
    pub fn publish_losses(
        &self,
        losses: &[PartitionLoss],
        me: Uuid,
        limit: usize,
        backups: impl Fn(Topic, &str) -> i32,
    ) {
        for loss in losses {
            for topic in [Topic::MapPartitionLost, Topic::CachePartitionLost] {
                self.deliver(topic, limit, |listener, frame| {
                    let name = listener.map.as_deref().unwrap_or("");
                    if (listener.local_only && loss.origin != me) || backups(topic, name) > loss.lost_backup_count {
                        return false;
                    }
                    let (partition_id, uuid) = (i32::from(loss.partition), Some(loss.origin));
                    match topic {
                        Topic::CachePartitionLost => CachePartitionLostEvent { partition_id, uuid }.encode(
                            frame,
                            listener.correlation_id,
                            partition_id,
                        ),
                        _ => MapPartitionLostEvent { partition_id, uuid }.encode(
                            frame,
                            listener.correlation_id,
                            partition_id,
                        ),
                    };
                    true
                });
            }
            self.deliver(Topic::PartitionLost, limit, |listener, frame| {
                if listener.local_only && loss.origin != me {
                    return false;
                }
                let payload = PartitionLostEvent {
                    partition_id: i32::from(loss.partition),
                    lost_backup_count: loss.lost_backup_count,
                    source: Some(loss.origin),
                };
                payload.encode(frame, listener.correlation_id, i32::from(loss.partition));
                true
            });
        }
    }

    /// Writes to each listener of `topic` the frame `encode` makes (false: not for it).
    fn deliver(&self, topic: Topic, limit: usize, mut encode: impl FnMut(&Registration, &mut Vec<u8>) -> bool) {
        let listeners = self.listeners.lock();
        let mut frame = Vec::new();
        for listener in listeners.iter().filter(|listener| listener.topic == topic) {
            frame.clear();
            if !encode(listener, &mut frame) {
                continue;
            }
            if listener.connection.pending_bytes() > limit {
                warn!(client = %listener.connection.client_uuid(), ?topic, "cluster event dropped: the listener reads too slowly");
                continue;
            }
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

    #[test]
    fn losses_survive_the_member_hop_and_a_truncated_list_is_refused() {
        let losses = [
            PartitionLoss { partition: 7, lost_backup_count: 0, origin: Uuid::from_u128(1) },
            PartitionLoss { partition: 270, lost_backup_count: 6, origin: Uuid::from_u128(u128::MAX) },
        ];
        let mut bytes = Vec::new();
        PartitionLoss::encode_all(&losses, &mut bytes);
        assert_eq!(PartitionLoss::decode_all(&bytes), Ok(losses.to_vec()));
        assert_eq!(PartitionLoss::decode_all(&[]), Ok(Vec::new()));
        for cut in (1..bytes.len()).filter(|cut| cut % 22 != 0) {
            assert!(PartitionLoss::decode_all(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }
}
