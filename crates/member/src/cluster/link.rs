//! Traffic on links to other members, read by the reactor that owns the link: the Hello,
//! membership messages (to the cluster service), forwarded client requests (run like a
//! client's), map-wide shares, backups and their acknowledgements, snapshots, PN counter states,
//! and the answers to requests this member forwarded. What belongs to another reactor's
//! partitions (or counters) is gathered per target and handed off once per read batch
//! ([`Core::send_member_work`]).

use crate::cluster::peer;
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::wide::{Classified, WideRequest};
use crate::net::connection::ConnectionShared;
use crate::route::client::service::After;
use crate::route::dispatch::{Core, Hop, Origin};
use crate::route::envelope::Forward;
use crate::route::operations::{self, ClientCall, Flags, Route, SqlCall};
use crate::route::wire;
use crate::shared::{ClusterEvent, MemberWork, Task};
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::codec::ClientDestroyProxy;
use ferrogrid_protocol::message::RequestHeader;
use ferrogrid_protocol::{Message, PartitionId, Uuid};
use std::sync::Arc;
use tracing::{debug, warn};

impl Core {
    /// Checks a member's Hello and tells the cluster service about the link.
    pub(crate) fn member_hello(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
    ) -> Result<MemberId, String> {
        if message.message_type() != peer::HELLO {
            return Err(format!("member link: expected a Hello, got {}", message.message_type()));
        }
        let payload = peer::payload(message).map_err(|error| format!("malformed member Hello: {error}"))?;
        let hello = peer::Hello::decode(payload).map_err(|error| format!("malformed member Hello: {error}"))?;
        if let Err(reason) = crate::cluster::service::check_hello(&self.shared, &hello) {
            warn!("{reason}");
            return Err(reason);
        }
        let peer = MemberId(hello.member);
        let outgoing = self.turn.outgoing_link;
        let event = ClusterEvent::Hello { link: connection.clone(), outgoing, hello };
        if self.shared.cluster_events.try_send(event).is_err() {
            return Err("cluster service busy or stopped".into());
        }
        Ok(peer)
    }

    /// Handles one message from another member: one function per message kind.
    pub(crate) fn handle_member(
        &mut self,
        connection: &Arc<ConnectionShared>,
        from: MemberId,
        message: &Message<'_>,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let ty = message.message_type();
        if !peer::is_member_type(ty) {
            if message.initial_flags() & ferrogrid_protocol::frame::IS_EVENT != 0 {
                self.relay_event(from, message, bytes);
            } else {
                self.member_response(message, bytes);
            }
            return Ok(After::Continue);
        }
        let payload = peer::payload(message)?;
        match ty {
            peer::CONTROL => self.member_control(connection, from, payload),
            peer::FORWARD | peer::FORWARD_AGAIN => return self.member_forward(connection, from, message, payload, out),
            peer::SNAPSHOT_REQUEST => self.member_snapshot_request(from, payload),
            peer::CLIENT_GONE => self.member_client_gone(payload),
            peer::BACKUP => self.route_backups(from, payload),
            peer::BACKUP_ACK => self.route_acks(from, payload),
            peer::BACKUP_SYNC => self.route_backup_syncs(from, payload),
            peer::SNAPSHOT => self.member_snapshot(from, payload),
            peer::WIDE => self.member_wide(connection, message, payload, out)?,
            peer::TOPIC => self.member_topic(payload),
            peer::LISTEN => self.member_listen(connection, payload)?,
            peer::UNLISTEN => match payload.try_into() {
                Ok(relay_id) => {
                    let operation = crate::engine::wide::objects::DropRelayed {
                        link: connection.clone(),
                        relay_id: i64::from_le_bytes(relay_id),
                    };
                    let (response_type, name) = (peer::UNLISTEN, Box::from(""));
                    self.fan_out_with(None, 0, response_type, name, WideRequest::new(operation), &mut Vec::new(), None);
                }
                Err(_) => warn!(length = payload.len(), "malformed UNLISTEN: ignored"),
            },
            peer::OBJECT
            | peer::OBJECTS
            | peer::INDEXES
            | peer::SCHEMAS
            | peer::MAPPINGS
            | peer::CONFIGS
            | peer::SCHEMAS_ACK
            | peer::PARTITION_LOST => self.member_metadata(from, ty, payload),
            peer::PN_COUNTER_STATE => self.route_counter_states(from, payload),
            peer::TXN_LOG => self.member_txn_log(from, payload),
            peer::TXN_LOG_ACK => self.member_txn_log_ack(connection, from, payload, false),
            peer::XA_PREPARED_ACK => self.member_txn_log_ack(connection, from, payload, true),
            peer::XA_PREPARED => self.member_xa_prepared(from, payload),
            peer::XA_ENDED => self.member_xa_ended(payload),
            peer::QUERY_CACHES => self.member_query_caches(payload),
            peer::SQL_CLOSED => self.member_sql_closed(payload),
            peer::REPLICATED_CHANGES
            | peer::REPLICATED_SYNC
            | peer::REPLICATED_VERSIONS
            | peer::REPLICATED_SYNC_REQUEST
            | peer::REPLICATED_REPLY => self.route_replicated(from, ty, payload),
            _ => debug!(%ty, "unexpected member message: ignored"),
        }
        Ok(After::Continue)
    }

    /// What every member keeps of the cluster besides partitions: proxies created and
    /// destroyed, the listing of objects, index definitions, Compact schemas and their
    /// acknowledgements, SQL mappings, and partitions lost.
    fn member_metadata(&mut self, from: MemberId, ty: ferrogrid_protocol::MessageType, payload: &[u8]) {
        match ty {
            peer::OBJECT => match crate::cluster::events::ObjectEvent::decode(payload) {
                Ok(event) => self.shared.object_event_here(&event),
                Err(error) => warn!(%error, "malformed object event: ignored"),
            },
            peer::OBJECTS => self.merge_listing(payload),
            peer::INDEXES => match self.shared.indexes.merge(payload) {
                // This reactor's cached settings of those maps are stale; the others' caches
                // were filled, if at all, before the link came up.
                Ok(maps) => maps.iter().for_each(|map| self.owner.settings.forget(map)),
                Err(error) => warn!(%error, "malformed index definitions: ignored"),
            },
            peer::SCHEMAS => self.member_schemas(from, payload),
            peer::MAPPINGS => match crate::sql::service::decode_catalog(payload) {
                Some(texts) => crate::sql::service::apply_catalog(&self.shared.sql, &texts),
                None => warn!(length = payload.len(), "malformed SQL mappings: ignored"),
            },
            peer::CONFIGS => {
                if let Err(error) = crate::engine::dynamic_config::rows::merge(&self.shared.dynamic_configs, payload) {
                    warn!(%error, "malformed dynamic configurations: ignored");
                }
            }
            peer::SCHEMAS_ACK => match crate::engine::schemas::decode_ids(payload) {
                Ok(ids) => {
                    self.shared.schemas.acknowledged(&ids, ferrogrid_protocol::Uuid::from_u128(from.0));
                    self.answer_schemas_due();
                }
                Err(error) => warn!(%error, "malformed schema acknowledgement: ignored"),
            },
            peer::PARTITION_LOST => match crate::cluster::events::PartitionLoss::decode_all(payload) {
                Ok(losses) => self.shared.partitions_lost_here(&losses),
                Err(error) => warn!(%error, "malformed partition-lost message: ignored"),
            },
            _ => unreachable!("{ty} is no metadata message"),
        }
    }

    /// The answer to a request one of this member's reactors forwarded: relayed here, or
    /// gathered for the reactor that forwarded it (its index is the correlation id's top byte).
    fn member_response(&mut self, message: &Message<'_>, bytes: &[u8]) {
        let origin = (message.correlation_id() as u64 >> 56) as usize;
        if origin == self.index {
            self.owner.on_forward_response(bytes);
        } else if origin < self.shared.reactor_count() {
            let batch = &mut self.link_work.responses[origin];
            batch.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            batch.extend_from_slice(bytes);
        }
    }

    /// A membership message: for the cluster service.
    fn member_control(&mut self, connection: &Arc<ConnectionShared>, from: MemberId, payload: &[u8]) {
        let event = ClusterEvent::Control { link: connection.id, from, bytes: payload.to_vec() };
        if self.shared.cluster_events.try_send(event).is_err() {
            warn!("cluster service busy or stopped: membership message dropped");
        }
    }

    /// A client request another member forwarded: run it here, answer on the link under the
    /// forwarder's correlation id. If the partition moved on, a FORWARD goes on once more to
    /// the owner this member knows (tables differ for a moment while partitions migrate; a
    /// client would otherwise pause before its retry).
    fn member_forward(
        &mut self,
        connection: &Arc<ConnectionShared>,
        from: MemberId,
        message: &Message<'_>,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let forward = match Forward::decode(payload) {
            Ok(forward) => forward,
            Err(reason) => return Ok(After::Close(format!("malformed forwarded request: {reason}"))),
        };
        let Some(header) = RequestHeader::peek(forward.request) else {
            return Ok(After::Close("malformed forwarded request: no request header".into()));
        };
        let routed = |row: &operations::Operation| {
            let elsewhere = matches!(row.route, Route::Replica | Route::Local) || row.is(Flags::TARGETED);
            row.route.is_partition_bound() || elsewhere
        };
        if !operations::row(header.message_type).is_some_and(routed) {
            let text = format!("not a partition request: {}", header.message_type);
            wire::write_error(out, message.correlation_id(), &OpError::new(ErrorKind::Unsupported, text));
            return Ok(After::Continue);
        }
        let header = RequestHeader { correlation_id: message.correlation_id(), ..header };
        let hop = if message.message_type() == peer::FORWARD { Hop::Forwarded(from) } else { Hop::Last };
        self.dispatch(connection, header, forward.request, out, Origin { hop, source: forward.source, tenant: 0 })
    }

    /// A replica still waiting for a partition's data asks for it again.
    fn member_snapshot_request(&mut self, from: MemberId, payload: &[u8]) {
        if payload.len() == 2 {
            let partition = PartitionId(u16::from_le_bytes([payload[0], payload[1]]));
            let target = self.shared.owner_of(partition);
            if target == self.index {
                self.owner.on_snapshot_request(from, partition);
            } else {
                self.handoff.hand_off(target, Task::Member { from, work: MemberWork::SnapshotRequest(partition) });
            }
        }
    }

    /// A client has had no connection to the sender for the cleanup period.
    fn member_client_gone(&mut self, payload: &[u8]) {
        if payload.len() == 16 {
            let client = Uuid::from_u128(u128::from_le_bytes(payload.try_into().expect("16 bytes")));
            self.release_everywhere(client);
        }
    }

    /// Messages another member published to a topic: delivered to this member's listeners
    /// that are not local-only (every reactor holds every registration, so the reactor that
    /// reads the link delivers them, in the order the link brought them).
    fn member_topic(&mut self, payload: &[u8]) {
        match peer::TopicRelay::decode(payload) {
            Ok(relay) => {
                let owner = &mut *self.owner;
                let receives = owner.listeners.publish_messages(&mut owner.outbox, &relay, true);
                self.owner.count_topic(relay.name, 0, receives);
            }
            Err(error) => warn!(%error, "malformed topic relay: ignored"),
        }
    }

    /// Schemas from another member: kept (the sender holds them too) and acknowledged.
    fn member_schemas(&mut self, from: MemberId, payload: &[u8]) {
        let schemas = match crate::engine::schemas::decode(payload) {
            Ok(schemas) => schemas,
            Err(error) => {
                warn!(%error, "malformed schemas: ignored");
                return;
            }
        };
        let (me, sender) = (self.shared.view.member_uuid, ferrogrid_protocol::Uuid::from_u128(from.0));
        let bound = self.shared.config.limits.max_schemas as usize;
        let mut kept = Vec::new();
        for schema in schemas {
            match self.shared.schemas.put(schema.clone(), sender, bound) {
                Ok(id) => {
                    self.shared.schemas.acknowledged(&[id], me);
                    kept.push(schema);
                }
                Err(crate::engine::schemas::Full(bound)) => {
                    warn!(bound, "a schema from another member refused: max-schemas")
                }
            }
        }
        self.shared.persist_schemas();
        let mut ids = Vec::new();
        crate::engine::schemas::encode_ids(&kept, &mut ids);
        peer::write(self.owner.replication.message_for(from), peer::SCHEMAS_ACK, 0, &ids);
    }

    /// Another member's listing of proxies (sent when the link came up): merged into this
    /// member's, silently (these objects were announced when they were created).
    fn merge_listing(&mut self, payload: &[u8]) {
        let mut reader = peer::Reader::new(payload);
        let mut names = Vec::new();
        while !reader.is_empty() {
            match (reader.str(), reader.str()) {
                (Ok(service_name), Ok(name)) => names.push((service_name.to_owned(), name.to_owned())),
                (Err(error), _) | (_, Err(error)) => {
                    warn!(%error, "malformed listing of proxies: ignored");
                    return;
                }
            }
        }
        self.shared.objects.write().extend(names);
    }

    /// An event of a registration this member relays for one of its unisocket clients
    /// (`relays.rs`): to the client, under its correlation id; a relay whose client has gone is
    /// withdrawn from the member that sent it.
    fn relay_event(&mut self, from: MemberId, message: &Message<'_>, bytes: &[u8]) {
        let relay_id = message.correlation_id();
        let Some((client, correlation_id)) = self.shared.relays.target(relay_id) else {
            peer::write(self.owner.replication.message_for(from), peer::UNLISTEN, 0, &relay_id.to_le_bytes());
            return;
        };
        if client.pending_bytes() > self.shared.config.limits.listener_event_queue_bytes as usize {
            self.probes().events_dropped.add(1);
            return;
        }
        if let Some(event) = crate::cluster::relays::with_correlation_id(bytes, correlation_id) {
            client.send(&event);
        }
    }

    /// A unisocket client's registration made through another member before this one joined:
    /// registered here with the link as its connection (no one is answered).
    fn member_listen(
        &mut self,
        connection: &Arc<ConnectionShared>,
        payload: &[u8],
    ) -> Result<(), ferrogrid_protocol::DecodeError> {
        let inner = Message::parse(payload)?;
        match operations::classify(&inner, connection)? {
            Classified::Wide(operation, name) if operation.relayed_registration().is_some() => {
                let response_type = inner.message_type().response();
                self.fan_out_with(None, 0, response_type, name, operation.for_member(), &mut Vec::new(), None);
            }
            _ => warn!(ty = %inner.message_type(), "LISTEN of something that is not a relayed registration: ignored"),
        }
        Ok(())
    }

    /// Acknowledgements of backups: each goes to the reactor that holds the write (its index
    /// is the sequence number's top byte).
    fn route_acks(&mut self, from: MemberId, payload: &[u8]) {
        let acks = match peer::read_acks(payload) {
            Ok(acks) => acks,
            Err(error) => {
                warn!(%error, "malformed backup acknowledgements: ignored");
                return;
            }
        };
        let count = self.shared.reactor_count();
        let mut per_target: Vec<Vec<(u64, bool)>> = vec![Vec::new(); count];
        for ack in acks {
            let target = (ack.0 >> 56) as usize;
            if target < count {
                per_target[target].push(ack);
            }
        }
        for (target, acks) in per_target.into_iter().enumerate().filter(|(_, acks)| !acks.is_empty()) {
            if target == self.index {
                self.owner.on_acks(from, &acks);
            } else {
                self.handoff.hand_off(target, Task::Member { from, work: MemberWork::Acks(acks) });
            }
        }
    }

    /// Requests to acknowledge held writes again (`rebackup.rs`): each goes to its partition's
    /// reactor, after the backup records read before it for that reactor, so that it is
    /// acknowledged only once what came ahead of it on the link is applied.
    fn route_backup_syncs(&mut self, from: MemberId, payload: &[u8]) {
        let syncs = match peer::read_backup_syncs(payload) {
            Ok(syncs) => syncs,
            Err(error) => {
                warn!(%error, "malformed backup sync requests: ignored");
                return;
            }
        };
        let mut per_target: Vec<Vec<peer::BackupHeader>> = vec![Vec::new(); self.shared.reactor_count()];
        for sync in syncs {
            per_target[self.shared.owner_of(PartitionId(sync.partition))].push(sync);
        }
        for (target, syncs) in per_target.into_iter().enumerate().filter(|(_, syncs)| !syncs.is_empty()) {
            if target == self.index {
                self.owner.on_backup_syncs(from, &syncs);
            } else {
                self.hand_off_backups(from, target);
                self.handoff.hand_off(target, Task::Member { from, work: MemberWork::BackupSyncs(syncs) });
            }
        }
    }

    /// A chunk of a partition's data for a replica here: installed by the partition's reactor,
    /// which then publishes its readiness.
    fn member_snapshot(&mut self, from: MemberId, payload: &[u8]) {
        if payload.len() < 2 {
            warn!("malformed snapshot: ignored");
            return;
        }
        let partition = PartitionId(u16::from_le_bytes([payload[0], payload[1]]));
        let target = self.shared.owner_of(partition);
        if target != self.index {
            self.handoff.hand_off(target, Task::Member { from, work: MemberWork::Snapshot(payload.into()) });
            return;
        }
        self.owner.install_snapshot(from, payload);
        self.publish_ready();
    }

    /// Another member's map-wide request: this member's share, answered on the link with its
    /// merged partial.
    fn member_wide(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), ferrogrid_protocol::DecodeError> {
        let inner = Message::parse(payload)?;
        let correlation_id = message.correlation_id();
        let response_type = inner.message_type().response();
        // A destroy and an SQL statement's share by their rows; an INSERT's writes and a
        // split-brain merge's entries have none.
        let route = operations::row(inner.message_type()).map(|row| row.route);
        if route == Some(Route::Connection(ClientCall::DestroyProxy)) {
            let destroy = ClientDestroyProxy::decode(&inner)?;
            let Some(service) = crate::cluster::peer::Service::from_name(destroy.service_name) else {
                let text = format!("ferrogrid does not support the service {}", destroy.service_name);
                wire::write_error(out, correlation_id, &OpError::new(ErrorKind::Unsupported, text));
                return Ok(());
            };
            // The listing follows the OBJECT event the destroying member sends.
            self.shared.forget_object(service, destroy.name);
            let operation = crate::route::fanout::destroy(service);
            self.fan_out(connection, correlation_id, response_type, destroy.name.into(), operation, out);
            return Ok(());
        }
        if inner.message_type() == crate::sql::shares::SQL_WRITE {
            return self.sql_member_write(connection, correlation_id, &inner, out);
        }
        if let Some((map, operation)) = crate::cluster::merge::merge_request(&inner)? {
            self.fan_out(connection, correlation_id, response_type, map.into(), operation, out);
            return Ok(());
        }
        if route == Some(Route::Sql(SqlCall::Execute)) {
            return self.sql_member_share(connection, correlation_id, &inner, None, out);
        }
        if inner.message_type() == crate::sql::round::SQL_ROUND {
            return self.sql_member_round(connection, correlation_id, &inner, out);
        }
        match operations::classify(&inner, connection)? {
            Classified::Wide(operation, name) => {
                self.fan_out(connection, correlation_id, response_type, name, operation, out);
            }
            Classified::Refused(failure) => wire::write_error(out, correlation_id, &failure),
            Classified::NotWide => {
                let text = format!("not a map-wide request: {}", inner.message_type());
                wire::write_error(out, correlation_id, &OpError::new(ErrorKind::Unsupported, text));
            }
        }
        Ok(())
    }

    /// Hands other reactors the member traffic read for them from one link.
    pub(crate) fn send_member_work(&mut self, from: MemberId) {
        for target in 0..self.link_work.backups.len() {
            self.hand_off_backups(from, target);
            if !self.link_work.counters[target].is_empty() {
                let records = std::mem::take(&mut self.link_work.counters[target]).into_boxed_slice();
                self.handoff.hand_off(target, Task::Member { from, work: MemberWork::CounterStates(records) });
            }
            if !self.link_work.responses[target].is_empty() {
                let batch = std::mem::take(&mut self.link_work.responses[target]).into_boxed_slice();
                self.handoff.hand_off(target, Task::Member { from, work: MemberWork::Responses(batch) });
            }
        }
    }

    /// Hands reactor `target` the backup records read for it from `from`'s link so far.
    fn hand_off_backups(&mut self, from: MemberId, target: usize) {
        if !self.link_work.backups[target].is_empty() {
            let records = std::mem::take(&mut self.link_work.backups[target]).into_boxed_slice();
            self.handoff.hand_off(target, Task::Member { from, work: MemberWork::Backups(records) });
        }
    }

    /// Releases `client`'s locks on every reactor of this member, unless it is connected here.
    pub(crate) fn release_everywhere(&mut self, client: Uuid) {
        if self.shared.client_is_connected(client) {
            return;
        }
        let (origin, count) = (self.index, self.shared.reactor_count());
        for target in (0..count).filter(|target| *target != origin) {
            self.handoff.hand_off(target, Task::ReleaseClient(client));
        }
        self.owner.release_client(client);
    }

    /// Merges PN counter states into this reactor's counters and gathers the others' per
    /// reactor (handed off at the end of the read batch), by their name's partition.
    fn route_counter_states(&mut self, from: MemberId, payload: &[u8]) {
        let mut own = Vec::new();
        let mut reader = peer::CounterStates::new(payload);
        let partition_count = self.shared.view.partition_count;
        loop {
            match reader.next_record() {
                Ok(Some(record)) => {
                    let target = self
                        .shared
                        .owner_of(crate::engine::pn_counter::state::partition_of(record.name, partition_count));
                    if target == self.index {
                        own.extend_from_slice(record.raw);
                    } else {
                        self.link_work.counters[target].extend_from_slice(record.raw);
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    warn!(%error, "malformed PN counter states from a member: rest ignored");
                    break;
                }
            }
        }
        if !own.is_empty() {
            self.owner.apply_counter_states(from, &own);
        }
    }

    /// A replicated-map message: split by the reactors owning its partitions (each part keeps
    /// the message's order), run here for this reactor's, handed to the others.
    fn route_replicated(&mut self, from: MemberId, ty: ferrogrid_protocol::MessageType, payload: &[u8]) {
        if !self.owner.replication.state.is_member(from) {
            // Sent by a member of another cluster (before a split was noticed, delivered after
            // the network healed): not this cluster's copies.
            debug!(?from, %ty, "replicated-map message from a member not in this cluster: ignored");
            return;
        }
        let count = self.shared.reactor_count();
        let mut parts: Vec<Vec<u8>> = vec![Vec::new(); count];
        let target_of = |partition: u16| self.shared.owner_of(PartitionId(partition));
        match ty {
            peer::REPLICATED_CHANGES => {
                let mut reader = peer::Reader::new(payload);
                loop {
                    match crate::engine::replicated_map::store::next_change_record(&mut reader) {
                        Ok(Some(record)) => parts[target_of(record.partition)].extend_from_slice(record.raw),
                        Ok(None) => break,
                        Err(error) => {
                            warn!(%error, "malformed replicated-map changes from a member: rest ignored");
                            break;
                        }
                    }
                }
            }
            peer::REPLICATED_SYNC if payload.len() >= 2 => {
                parts[target_of(u16::from_le_bytes([payload[0], payload[1]]))].extend_from_slice(payload);
            }
            peer::REPLICATED_VERSIONS | peer::REPLICATED_SYNC_REQUEST => {
                let size = if ty == peer::REPLICATED_VERSIONS { 18 } else { 2 };
                for item in payload.chunks_exact(size) {
                    parts[target_of(u16::from_le_bytes([item[0], item[1]]))].extend_from_slice(item);
                }
            }
            peer::REPLICATED_REPLY => {
                let mut reader = peer::Reader::new(payload);
                while !reader.is_empty() {
                    let start = payload.len() - reader.rest().len();
                    match reader.u16().and_then(|partition| reader.bytes().map(|_| partition)) {
                        Ok(partition) => {
                            let end = payload.len() - reader.rest().len();
                            parts[target_of(partition)].extend_from_slice(&payload[start..end]);
                        }
                        Err(error) => {
                            warn!(%error, "malformed replicated-map replies from a member: rest ignored");
                            break;
                        }
                    }
                }
            }
            _ => warn!(%ty, "malformed replicated-map message: ignored"),
        }
        for (target, part) in parts.into_iter().enumerate().filter(|(_, part)| !part.is_empty()) {
            if target == self.index && ty == peer::REPLICATED_REPLY {
                self.relay_replicated_replies(from, &part);
            } else if target == self.index {
                self.owner.on_replicated(from, ty, &part);
            } else {
                let work = MemberWork::Replicated(ty, part.into_boxed_slice());
                self.handoff.hand_off(target, Task::Member { from, work });
            }
        }
    }

    /// Answers to replicated-map writes this member forwarded, arriving on the reactor of
    /// their partition after the changes they made were applied to its copy: each goes to the
    /// reactor that forwarded it (the top byte of its correlation id), which answers the client.
    pub(crate) fn relay_replicated_replies(&mut self, from: MemberId, records: &[u8]) {
        let mut batches: Vec<Vec<u8>> = vec![Vec::new(); self.shared.reactor_count()];
        let mut reader = peer::Reader::new(records);
        while let Ok(response) = reader.u16().and_then(|_| reader.bytes()) {
            let Ok(message) = Message::parse(response) else { continue };
            let origin = (message.correlation_id() as u64 >> 56) as usize;
            if origin == self.index {
                self.owner.on_forward_response(response);
            } else if let Some(batch) = batches.get_mut(origin) {
                peer::put_bytes(batch, response);
            }
        }
        for (origin, batch) in batches.into_iter().enumerate().filter(|(_, batch)| !batch.is_empty()) {
            let work = MemberWork::Responses(batch.into_boxed_slice());
            self.handoff.hand_off(origin, Task::Member { from, work });
        }
    }

    /// Applies backup records for this reactor's partitions and gathers the others' per
    /// reactor (handed off at the end of the read batch).
    pub(crate) fn route_backups(&mut self, from: MemberId, payload: &[u8]) {
        let mut own = Vec::new();
        let mut reader = peer::Backups::new(payload);
        loop {
            match reader.next_record() {
                Ok(Some(record)) => {
                    let target = self.shared.owner_of(PartitionId(record.header.partition));
                    if target == self.index {
                        own.extend_from_slice(record.raw);
                    } else {
                        self.link_work.backups[target].extend_from_slice(record.raw);
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    warn!(%error, "malformed backup records from a member: rest ignored");
                    break;
                }
            }
        }
        if !own.is_empty() {
            self.owner.apply_backups(from, &own);
        }
    }
}
