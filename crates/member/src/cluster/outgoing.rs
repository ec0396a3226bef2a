//! What a reactor sends other members besides backups (`replication/`): requests forwarded to
//! the member that owns their partition, the announcement of proxies created and destroyed, and
//! to members it has just linked to, this member's listing of objects, relayed registrations,
//! Compact schemas, SQL mappings and index definitions.

use crate::cluster::events::{ObjectChange, ObjectEvent};
use crate::cluster::replication::state::Forward as Pending;
use crate::net::connection::ConnectionShared;
use crate::route::dispatch::Core;
use crate::route::envelope::Forward;
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::codec::ClientDestroyProxy;
use ferrogrid_protocol::{MessageType, Uuid};
use std::sync::Arc;

impl Core {
    /// Destroys an object the member decided to drop (a queue empty and unused past its
    /// `empty-queue-ttl`) as a client's DestroyProxy would: on every reactor of every member,
    /// its proxy no longer listed; no one is answered.
    pub(crate) fn destroy_internally(&mut self, service: crate::cluster::peer::Service, name: Box<str>) {
        let (change, service_name) = (ObjectChange::Destroyed, service.name().to_owned());
        let source = self.shared.view.member_uuid;
        self.announce(ObjectEvent { change, service_name, name: name.to_string(), source });
        self.shared.forget_object(service, &name);
        let mut request = Vec::new();
        ClientDestroyProxy { name: &name, service_name: service.name() }.encode(&mut request, 0, -1, 0);
        let (response_type, operation) = (ClientDestroyProxy::RESPONSE, crate::route::fanout::destroy(service));
        self.fan_out_with(None, 0, response_type, name, operation, &mut Vec::new(), Some(&request));
    }

    /// Gives a unisocket client's registration a relay id (`relays.rs`); the request to send to
    /// the other members, or None when the relay table is full.
    pub(crate) fn relay_registration(
        &mut self,
        connection: &Arc<ConnectionShared>,
        correlation_id: i64,
        registration: ferrogrid_protocol::Uuid,
        bytes: &[u8],
    ) -> Option<Vec<u8>> {
        let bound = self.shared.config.limits.max_connections as usize * crate::cluster::relays::RELAYS_PER_CONNECTION;
        let mut dropped = Vec::new();
        let relayed = self.shared.relays.add(connection, correlation_id, registration, bytes, bound, &mut dropped);
        self.unlisten_everywhere(&dropped);
        relayed
    }

    /// Writes one `ty` message with `payload` to each of `peers` but this member.
    pub(crate) fn write_to_peers(&mut self, peers: &[MemberId], ty: ferrogrid_protocol::MessageType, payload: &[u8]) {
        let me = self.owner.replication.state.me;
        for peer in peers.iter().copied().filter(|peer| *peer != me) {
            crate::cluster::peer::write(self.owner.replication.message_for(peer), ty, 0, payload);
        }
    }

    /// Sends this member's relayed registrations to members it has just linked to.
    pub(crate) fn relay_registrations_to(&mut self, peers: &[MemberId]) {
        for request in self.shared.relays.requests() {
            self.write_to_peers(peers, crate::cluster::peer::LISTEN, &request);
        }
    }

    /// Sends this member's listing of proxies to members it has just linked to: a member that
    /// joins knows the objects created before (its `GetDistributedObjects`, and its listeners
    /// hearing them destroyed).
    pub(crate) fn send_listing_to(&mut self, peers: &[MemberId]) {
        let mut chunks = vec![Vec::new()];
        for (service_name, name) in self.shared.objects.read().iter() {
            let chunk = chunks.last_mut().expect("one chunk at least");
            crate::cluster::peer::put_str(chunk, service_name);
            crate::cluster::peer::put_str(chunk, name);
            if chunk.len() >= crate::cluster::peer::LISTING_CHUNK_BYTES {
                chunks.push(Vec::new());
            }
        }
        for chunk in chunks.iter().filter(|chunk| !chunk.is_empty()) {
            self.write_to_peers(peers, crate::cluster::peer::OBJECTS, chunk);
        }
    }

    /// Sends every schema this member holds to members it has just linked to (`schemas.rs`).
    pub(crate) fn send_schemas_to(&mut self, peers: &[MemberId]) {
        let schemas = self.shared.schemas.all();
        if schemas.is_empty() {
            return;
        }
        let mut payload = Vec::new();
        crate::engine::schemas::encode(schemas.iter().map(|schema| &**schema), &mut payload);
        self.write_to_peers(peers, crate::cluster::peer::SCHEMAS, &payload);
    }

    /// Sends this member's SQL mappings to members it has just linked to.
    pub(crate) fn send_mappings_to(&mut self, peers: &[MemberId]) {
        let texts = self.shared.sql.ddl();
        if !texts.is_empty() {
            self.write_to_peers(peers, crate::cluster::peer::MAPPINGS, &crate::sql::service::encode_catalog(&texts));
        }
    }

    /// Sends this member's dynamic configurations to members it has just linked to.
    pub(crate) fn send_configs_to(&mut self, peers: &[MemberId]) {
        let mut payload = Vec::new();
        for request in self.shared.dynamic_configs.requests() {
            crate::cluster::peer::put_bytes(&mut payload, &request);
        }
        if !payload.is_empty() {
            self.write_to_peers(peers, crate::cluster::peer::CONFIGS, &payload);
        }
    }

    /// Sends this member's index definitions to members it has just linked to.
    pub(crate) fn send_indexes_to(&mut self, peers: &[MemberId]) {
        let mut payload = Vec::new();
        self.shared.indexes.encode(&mut payload);
        if !payload.is_empty() {
            self.write_to_peers(peers, crate::cluster::peer::INDEXES, &payload);
        }
    }

    /// Writes the SendSchema answers that are due (every member holds the schema, or the
    /// wait is over).
    pub(crate) fn answer_schemas_due(&mut self) {
        self.shared.schemas.answer_due(&self.owner.replication.state.member_uuids());
    }

    /// Tells every other member to drop the relayed registrations `relay_ids`.
    pub(crate) fn unlisten_everywhere(&mut self, relay_ids: &[i64]) {
        let peers = self.owner.replication.peers();
        for relay_id in relay_ids {
            self.write_to_peers(&peers, crate::cluster::peer::UNLISTEN, &relay_id.to_le_bytes());
        }
    }

    /// A proxy created or destroyed here: this member's listing and listeners, and every
    /// other member's (`peer::OBJECT`; relayed even when the listing here did not change, as
    /// another member's may).
    pub(crate) fn announce(&mut self, event: ObjectEvent) {
        self.shared.object_event_here(&event);
        self.owner.replication.relay_object(&event);
    }

    /// Sends a client's partition request to the member that owns the partition (`kind`:
    /// FORWARD, or FORWARD_AGAIN for one another member forwarded here); its answer is relayed
    /// by [`PartitionOwner::on_forward_response`] to `connection` under `correlation_id`.
    pub(crate) fn forward(
        &mut self,
        connection: &Arc<ConnectionShared>,
        member: MemberId,
        correlation_id: i64,
        bytes: &[u8],
        source: Uuid,
        kind: MessageType,
    ) {
        connection.begin_in_flight();
        self.probes().forwarded_ops.add(1);
        self.turn.handed_off = true;
        let id = self.owner.replication.forward_id();
        let relay = Pending::Relay { connection: connection.clone(), correlation_id, member };
        self.owner.replication.forwards.insert(id, relay);
        // The client's uuid (its locks' owner) and the request, answered under `id`.
        let payload = Forward { source, request: bytes }.encode();
        crate::cluster::peer::write(self.owner.replication.message_for(member), kind, id, &payload);
    }
}
