//! Routing a request, on the reactor that read it. [`Core`] is everything a reactor owns
//! except its connections (so that both can be borrowed at once).
//!
//! An authenticated request is routed by its row in the operation table (`operations.rs`):
//! a partition-bound request runs here if this reactor owns the partition, is handed to the
//! reactor that does (batched per target, one inbox push per target per read batch), or is
//! forwarded to the member that does; a map-wide request is fanned out to every reactor (and,
//! from a client, every member); anything else is a client-service request answered inline.
//! A tenant's request first passes its quotas and has its object's name scoped.

use crate::cluster::events::{ObjectChange, ObjectEvent};
use crate::cluster::replication::state::{Route as Route_, NO_DATA_MEMBER_TEXT};
use crate::engine::request::{ErrorKind, OpError};
use crate::net::connection::{ConnectionShared, ConnectionState};
use crate::net::turn::Turn;
use crate::partition::owner::{Call, PartitionOwner};
use crate::route::client::service::{self as client, After};
use crate::route::handoff::Handoff;
use crate::route::handoff::LinkWork;
use crate::route::operations::{self, ClientCall, Flags, Operation, Route, SqlCall};
use crate::route::protection;
use crate::route::wire;
use crate::shared::{Shared, Task};
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::codec::ClientDestroyProxy;
use ferrogrid_protocol::frame::StreamLimits;
use ferrogrid_protocol::message::{RequestHeader, REQUEST_HEADER_SIZE};
use ferrogrid_protocol::{Message, PartitionId, Uuid};
use std::sync::Arc;
use std::time::Instant;

/// What to do with a connection after handling one message.
pub(crate) enum Flow {
    Continue,
    Close(String),
}

/// Everything a reactor owns except its connections (so both can be borrowed at once).
pub(crate) struct Core {
    pub(crate) index: usize,
    pub(crate) shared: Arc<Shared>,
    /// The partitions this reactor owns and everything that acts on them.
    pub(crate) owner: crate::partition::held::HeldOwner,
    /// Work for the other reactors, and their partitions while this reactor holds them.
    pub(crate) handoff: Handoff,
    /// Member traffic read from a link for the other reactors, gathered per target.
    pub(crate) link_work: LinkWork,
    /// The connection being processed: its turn, and its requests' bookkeeping.
    pub(crate) turn: Turn,
    pub(crate) authenticated_limits: StreamLimits,
    /// Deficit round robin over tenants.
    pub(crate) fairness: crate::tenants::Fairness,
}

impl Core {
    pub(crate) fn new(index: usize, shared: Arc<Shared>) -> Core {
        let count = shared.reactor_count();
        let (member, partition_count) = (shared.view.member_uuid, shared.view.partition_count);
        let events_dropped = shared.reactors[index].probes.events_dropped.clone();
        let mut owner = PartitionOwner::new(
            index,
            count,
            member,
            shared.config.clone(),
            partition_count,
            shared.cluster_state(),
            events_dropped,
        );
        owner.schemas = shared.schemas.clone();
        owner.listeners.schemas = (shared.schemas.clone(), partition_count);
        owner.settings.indexes = (shared.indexes.clone(), shared.schemas.clone());
        owner.settings.dynamic = shared.dynamic_configs.clone();
        let limits = &shared.config.limits;
        let authenticated_limits = StreamLimits {
            max_frame_bytes: limits.max_frame_bytes,
            max_message_bytes: limits.max_message_bytes,
            max_pending_fragmented: limits.max_pending_fragmented_messages,
        };
        let tenants = &shared.config.tenants;
        let weights: Vec<u32> = std::iter::once(1).chain(tenants.tenants.iter().map(|tenant| tenant.weight)).collect();
        let fairness = crate::tenants::Fairness::new(tenants.fair_scheduling, &weights);
        let turn_budget = limits.requests_per_turn as usize;
        let owner = crate::partition::held::HeldOwner::new(owner);
        let _ = shared.reactors[index].owner.set(owner.lock().clone());
        let handoff = Handoff::new(shared.clone());
        Core {
            index,
            shared,
            owner,
            handoff,
            link_work: LinkWork::new(count),
            turn: Turn::new(turn_budget),
            authenticated_limits,
            fairness,
        }
    }

    /// Handles one request from a connection this reactor owns.
    pub(crate) fn handle(
        &mut self,
        connection: &Arc<ConnectionShared>,
        state: &mut ConnectionState,
        out: &mut Vec<u8>,
        bytes: &[u8],
    ) -> Flow {
        let (started, written_before) = (self.turn.request_clock.take().unwrap_or_else(Instant::now), out.len());
        self.turn.handed_off = false;
        let (message_type, correlation_id, outcome) = if let ConnectionState::Authenticated { tenant, .. } = state {
            // A client's request is routed by its header; it is parsed where it runs.
            let Some(header) = RequestHeader::peek(bytes) else {
                return Flow::Close("request initial frame shorter than the 16-byte header".into());
            };
            self.probes().messages_in.add(1);
            let tenant = *tenant;
            let outcome = if tenant == 0 {
                self.dispatch(connection, header, bytes, out, Origin::client(connection, 0))
            } else {
                self.dispatch_for_tenant(connection, header, bytes, out, tenant)
            };
            (header.message_type, header.correlation_id, outcome)
        } else {
            let message = match Message::parse(bytes) {
                Ok(message) => message,
                Err(error) => return Flow::Close(format!("malformed message: {error}")),
            };
            let answer_on_link = matches!(state, ConnectionState::Member { .. })
                && !crate::cluster::peer::is_request(message.message_type())
                && !crate::cluster::peer::is_member_type(message.message_type());
            if !answer_on_link && message.fixed(REQUEST_HEADER_SIZE).is_err() {
                return Flow::Close("request initial frame shorter than the 16-byte header".into());
            }
            self.probes().messages_in.add(1);
            let outcome = self.handle_unestablished_or_member(connection, state, &message, bytes, out);
            (message.message_type(), message.correlation_id(), outcome)
        };
        if !self.turn.handed_off {
            // Requests handed to another reactor are timed there.
            let finished = Instant::now();
            self.owner.record_latency(message_type, connection.tenant(), finished - started);
            self.turn.request_clock = Some(finished);
            if out.len() > written_before {
                self.probes().messages_out.add(1);
            }
        }
        match outcome {
            Ok(After::Continue) => Flow::Continue,
            Ok(After::Close(reason)) => Flow::Close(reason),
            Ok(After::Created(proxies)) => {
                for (service_name, name) in proxies {
                    let change = ObjectChange::Created;
                    self.announce(ObjectEvent { change, service_name, name, source: connection.client_uuid() });
                }
                Flow::Continue
            }
            Ok(After::Destroy { service, name }) => {
                let authenticated = matches!(state, ConnectionState::Authenticated { .. });
                self.destroy_for_client(connection, authenticated, correlation_id, service, name, out);
                Flow::Continue
            }
            Err(error) => Flow::Close(format!("malformed {message_type} request: {error}")),
        }
    }

    /// A client's DestroyProxy: announced, and every member drops the object's replicas (a
    /// client's request goes to the others as WIDE, re-encoded with the object's scoped name: a
    /// tenant's has its prefix).
    fn destroy_for_client(
        &mut self,
        connection: &Arc<ConnectionShared>,
        authenticated: bool,
        correlation_id: i64,
        service: crate::cluster::peer::Service,
        name: Box<str>,
        out: &mut Vec<u8>,
    ) {
        let (change, service_name) = (ObjectChange::Destroyed, service.name().to_owned());
        let source = connection.client_uuid();
        self.announce(ObjectEvent { change, service_name, name: name.to_string(), source });
        let mut request = Vec::new();
        if authenticated {
            let destroy = ClientDestroyProxy { name: &name, service_name: service.name() };
            destroy.encode(&mut request, correlation_id, -1, 0);
        }
        let request = (!request.is_empty()).then_some(&request[..]);
        let (response, operation) = (ClientDestroyProxy::RESPONSE, crate::route::fanout::destroy(service));
        self.fan_out_with(Some(connection), correlation_id, response, name, operation, out, request);
    }

    /// A message on a member link, a member's Hello, or a connection's first (authentication)
    /// request.
    pub(crate) fn handle_unestablished_or_member(
        &mut self,
        connection: &Arc<ConnectionShared>,
        state: &mut ConnectionState,
        message: &Message<'_>,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        match state {
            ConnectionState::Member { peer } => {
                let peer = *peer;
                self.handle_member(connection, peer, message, bytes, out)
            }
            ConnectionState::MemberHello => match self.member_hello(connection, message) {
                Ok(peer) => {
                    *state = ConnectionState::Member { peer };
                    Ok(After::Continue)
                }
                Err(reason) => Ok(After::Close(reason)),
            },
            _ => {
                let call = operations::row(message.message_type()).and_then(Operation::client_call);
                let outcome = client::authenticate(&self.shared, call, message, state, out);
                if let ConnectionState::Authenticated { client_uuid, tenant, .. } = state {
                    connection.set_client(*client_uuid);
                    connection.set_tenant(*tenant);
                    self.shared.client_connected(*client_uuid);
                }
                outcome
            }
        }
    }

    /// Routes an authenticated request by its row in the operation table.
    pub(crate) fn dispatch(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let found = operations::lookup(header.message_type);
        if let (true, Some(found)) = (self.shared.protection_active, found) {
            let rules = (&self.shared.config.split_brain_protections, &self.shared.heard);
            if let Some(refusal) = protection::check(rules, &self.owner.replication.state, found, bytes) {
                wire::write_error(out, header.correlation_id, &refusal);
                return Ok(After::Continue);
            }
        }
        match found {
            Some((slot, row)) if row.route == Route::Partition => {
                self.dispatch_partition(connection, header, (slot, row), bytes, out, origin)
            }
            Some((slot, row)) if row.route == Route::Replica => {
                self.dispatch_replica(connection, header, (slot, row), bytes, out, origin)
            }
            Some((slot, row)) if row.route == Route::LocalCopy => {
                let Some(partition) = self.check_partition(header, out) else { return Ok(After::Continue) };
                let reactor = self.shared.owner_of(partition);
                self.run_or_hand_off(connection, header, (slot, row), (partition, reactor, None), bytes, out, origin)
            }
            Some((_, row)) if row.route == Route::EveryPartition => {
                let message = Message::parse(bytes)?;
                self.dispatch_wide(connection, row, &message, header.correlation_id, bytes, out, origin)
            }
            Some((_, &Operation { route: Route::Sql(call), .. })) => {
                let message = Message::parse(bytes)?;
                match call {
                    SqlCall::Execute => self.sql_execute(connection, &message, bytes, out)?,
                    SqlCall::Fetch => self.sql_fetch(connection, &message, out)?,
                    SqlCall::Close => self.sql_close(connection, &message, out)?,
                    SqlCall::MappingDdl => self.sql_mapping_ddl(&message, out)?,
                }
                Ok(After::Continue)
            }
            Some((slot, row @ &Operation { route: Route::Transaction(call), .. })) => {
                self.dispatch_transaction(connection, header, (slot, row), call, bytes, out, origin)
            }
            // (The only Local row.)
            Some((_, row)) if row.route == Route::Local => self.new_id_batch(connection, header, bytes, out, origin),
            // The client service, and types without one of its rows (answered UnsupportedOperation).
            found => {
                let message = Message::parse(bytes)?;
                let call = found.and_then(|(_, row)| row.client_call());
                if call == Some(ClientCall::AddClusterViewListener) {
                    self.shared.view.add_listener(connection.clone(), header.correlation_id);
                }
                client::handle(&self.shared, call, connection, &message, out, origin.tenant)
            }
        }
    }

    /// A partition-bound request: run here (parsed and decoded once), handed to the reactor
    /// that owns the partition, or forwarded to the member that does (both unparsed).
    pub(crate) fn dispatch_partition(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        (slot, row): (usize, &Operation),
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let Some(routed) = self.routes_here(connection, header, bytes, out, origin) else {
            return Ok(After::Continue);
        };
        self.run_or_hand_off(connection, header, (slot, row), routed, bytes, out, origin)
    }

    /// A request for `partition` on this member: run here if this reactor owns the partition
    /// (parsed and decoded once), else handed, unparsed, to the reactor that does (`reactor`).
    /// `serves`: the partition's local index if routing found this reactor's copy ready; else
    /// the reactor that runs a partition-bound request checks its own state, once.
    #[allow(clippy::too_many_arguments)]
    fn run_or_hand_off(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        (slot, row): (usize, &Operation),
        (partition, reactor, serves): (PartitionId, usize, Option<usize>),
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let here = reactor == self.index;
        if !here && !self.handoff.borrow(connection, reactor, self.turn.link) {
            self.hand_off_request(connection, reactor, bytes, origin, header.correlation_id);
            return Ok(After::Continue);
        }
        let probes = self.probes();
        if here { &probes.local_ops } else { &probes.borrowed_ops }.add(1);
        let running = match self.handoff.borrowed[reactor].as_mut() {
            Some((borrowed, _)) if !here => &mut **borrowed,
            _ => &mut self.owner,
        };
        let local = match (row.route, serves) {
            (route, Some(local)) if here && route.is_partition_bound() => local,
            (route, _) if route.is_partition_bound() => match running.serving(partition, header.correlation_id, out) {
                Some(local) => local,
                None => return Ok(After::Continue),
            },
            // Any copy serves (a replicated map's read).
            _ => running.replication.local(partition.0 as usize),
        };
        let message = Message::parse(bytes)?;
        let call = Call {
            connection,
            correlation_id: header.correlation_id,
            response_type: header.message_type.response(),
            source: origin.source,
            counter_slot: slot,
            partition_id: partition,
            backup_aware: connection.asks_backup_acks(&message),
            local,
        };
        (row.run.expect("partition rows run"))(&message, running, &call, out)?;
        Ok(After::Continue)
    }

    /// Hands a request, unparsed, to the reactor `owner` at the end of this read batch.
    fn hand_off_request(
        &mut self,
        connection: &Arc<ConnectionShared>,
        owner: usize,
        bytes: &[u8],
        origin: Origin,
        correlation_id: i64,
    ) {
        connection.begin_in_flight();
        self.turn.handed_off = true;
        self.handoff.outgoing[owner].push(bytes, origin.source, origin.tenant, correlation_id);
    }

    /// A CRDT request for the replica it names: run here (on the reactor of its name's
    /// partition), or forwarded to the member it names, as Hazelcast forwards a request that
    /// reached another member than its target (a unisocket client's). A target that is not a
    /// member is refused with TargetNotMemberException, as in Hazelcast; the client then
    /// chooses another replica.
    pub(crate) fn dispatch_replica(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        (slot, row): (usize, &Operation),
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let message = Message::parse(bytes)?;
        let (name, named) = (row.replica.expect("replica rows name their replica"))(&message)?;
        if !self.runs_here(connection, (header.correlation_id, named), bytes, out, origin) {
            return Ok(After::Continue);
        }
        let partition = crate::engine::pn_counter::state::partition_of(name, self.shared.view.partition_count);
        let owner = self.shared.owner_of(partition);
        if owner == self.index {
            self.probes().local_ops.add(1);
            let call = Call {
                connection,
                correlation_id: header.correlation_id,
                response_type: header.message_type.response(),
                source: origin.source,
                counter_slot: slot,
                partition_id: partition,
                backup_aware: false,
                local: self.owner.replication.local(partition.0 as usize),
            };
            (row.run.expect("replica rows run"))(&message, &mut self.owner, &call, out)?;
        } else {
            self.hand_off_request(connection, owner, bytes, origin, header.correlation_id);
        }
        Ok(After::Continue)
    }

    /// Whether a request the client sent for the member `named` (a CRDT replica, the member
    /// whose near-cache metadata it asks for) runs here: if not, it has been forwarded to that
    /// member (from a client), or answered (request `correlation_id`) with TargetNotMember.
    pub(crate) fn runs_here(
        &mut self,
        connection: &Arc<ConnectionShared>,
        (correlation_id, named): (i64, Option<Uuid>),
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> bool {
        let state = &self.owner.replication.state;
        let target = named.map(|uuid| MemberId(uuid.as_u128()));
        if target == Some(state.me) {
            return true;
        }
        let refusal = match target {
            // Only to a member of this cluster: after a split the link to one of the other
            // side may stay open (TCP keeps what is sent through a cut), and a request sent
            // on it would wait for an answer that never comes.
            Some(member)
                if origin.hop == Hop::Client && state.is_member(member) && state.links.contains_key(&member) =>
            {
                self.forward(connection, member, correlation_id, bytes, origin.source, crate::cluster::peer::FORWARD);
                return false;
            }
            Some(member) if state.is_member(member) => OpError::new(
                ErrorKind::TargetNotMember,
                format!("Member with uuid({}) is not reachable from this member", named.unwrap_or_default()),
            ),
            _ => OpError::new(
                ErrorKind::TargetNotMember,
                format!("Member with uuid({}) is not in member list ", display_uuid(named)),
            ),
        };
        wire::write_error(out, correlation_id, &refusal);
        false
    }

    /// The request's partition, validated, if the request runs on this member (with its local
    /// index if this reactor's copy of it is ready). If not, it has
    /// been forwarded to the owner, or answered with an error (a bad partition id, or no owner
    /// to reach). The client's `i32` partition id is checked here once; from here on a
    /// partition is a [`PartitionId`].
    pub(crate) fn routes_here(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        bytes: &[u8],
        out: &mut Vec<u8>,
        Origin { hop, source, .. }: Origin,
    ) -> Option<(PartitionId, usize, Option<usize>)> {
        let (partition, id) = (header.partition_id, header.correlation_id);
        let partition_id = self.check_partition(header, out)?;
        let text = match self.owner.replication.route(partition_id) {
            Route_::Here { reactor, serves } => return Some((partition_id, reactor, serves)),
            Route_::Member(member) if hop == Hop::Client => {
                self.forward(connection, member, id, bytes, source, crate::cluster::peer::FORWARD);
                return None;
            }
            Route_::Member(member) if matches!(hop, Hop::Forwarded(by) if by != member) => {
                self.forward(connection, member, id, bytes, source, crate::cluster::peer::FORWARD_AGAIN);
                return None;
            }
            Route_::Unavailable => format!("partition {partition} has no owner reachable from this member (no table yet, or no link to the owner); retry"),
            Route_::Member(_) => format!("partition {partition} is migrating: a forwarded request reached a member that no longer owns it; retry"),
            Route_::NoDataMember => {
                wire::write_error(out, id, &OpError::new(ErrorKind::NoDataMember, NO_DATA_MEMBER_TEXT));
                return None;
            }
        };
        wire::write_error(out, id, &OpError::new(ErrorKind::PartitionMigrating, text));
        None
    }

    /// The request's partition id, if it names a partition (answered with an error if not).
    fn check_partition(&self, header: RequestHeader, out: &mut Vec<u8>) -> Option<PartitionId> {
        let partition = header.partition_id;
        let count = self.shared.view.partition_count as i32;
        if !(0..count).contains(&partition) {
            let text = if partition < 0 {
                "Partition ID cannot be negative!".to_owned()
            } else {
                format!("Partition ID {partition} is not below the partition count {count}")
            };
            wire::write_error(out, header.correlation_id, &OpError::new(ErrorKind::IllegalArgument, text));
            return None;
        }
        Some(PartitionId(partition as u16))
    }

    /// Whether a connection of `tenant` may have its next request cut now: its fair share of
    /// this round, and (when over-quota work is throttled) its rate quota.
    pub(crate) fn admit(&mut self, tenant: u16) -> bool {
        let probes = &self.shared.reactors[self.index].tenant_probes[tenant as usize];
        if !self.fairness.charge(tenant) {
            probes.throttled.add(1);
            return false;
        }
        let Some(runtime) = self.shared.tenant(tenant) else { return true };
        if runtime.over_quota() == ferrogrid_config::OverQuota::Throttle
            && !runtime.take_operation(crate::tenants::now_ns())
        {
            probes.throttled.add(1);
            return false;
        }
        true
    }

    /// A tenant's request: quotas that refuse, then its object's name scoped to its namespace.
    pub(crate) fn dispatch_for_tenant(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        bytes: &[u8],
        out: &mut Vec<u8>,
        tenant: u16,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let shared = self.shared.clone();
        let runtime = shared.tenant(tenant).expect("authenticated tenants exist");
        let probes = &shared.reactors[self.index].tenant_probes[tenant as usize];
        probes.ops.add(1);
        let row = operations::row(header.message_type);
        let refuse = |out: &mut Vec<u8>, failure: OpError| {
            if failure.kind == ErrorKind::Refused {
                probes.rejected.add(1);
            }
            wire::write_error(out, header.correlation_id, &failure);
            Ok(After::Continue)
        };
        if runtime.over_quota() == ferrogrid_config::OverQuota::Reject
            && !runtime.take_operation(crate::tenants::now_ns())
        {
            let rate = runtime.config.max_ops_per_second.unwrap_or_default();
            let text =
                format!("tenant {} is over its operation quota (max-ops-per-second {rate})", runtime.config.name);
            return refuse(out, OpError::new(ErrorKind::Refused, text));
        }
        if row.is_some_and(|row| row.is(Flags::ADDS_ENTRIES)) && runtime.is_full() {
            let text = format!(
                "tenant {} holds its quota of data on this member (max-entries {:?}, max-bytes {:?})",
                runtime.config.name, runtime.config.max_entries, runtime.config.max_bytes
            );
            return refuse(out, OpError::new(ErrorKind::Refused, text));
        }
        if !row.is_some_and(|row| row.is(Flags::SCOPED)) {
            return self.dispatch(connection, header, bytes, out, Origin::client(connection, tenant));
        }
        match crate::tenants::scope_request(bytes, &runtime.prefix) {
            Ok(scoped) => self.dispatch(connection, header, &scoped, out, Origin::client(connection, tenant)),
            Err(text) => refuse(out, OpError::new(ErrorKind::IllegalArgument, text)),
        }
    }

    /// Runs the requests gathered from this connection for other reactors' partitions: on
    /// those partitions by this thread when their lock is free (no hop, no wake-up), else
    /// handed to their reactor's inbox. Once any of the connection's work waits in an inbox,
    /// its later requests wait there too, so a partition's requests keep their order.
    pub(crate) fn send_outgoing(&mut self, connection: &Arc<ConnectionShared>) {
        for target in 0..self.handoff.outgoing.len() {
            if self.handoff.outgoing[target].is_empty() {
                continue;
            }
            let batch = std::mem::take(&mut self.handoff.outgoing[target]);
            if self.handoff.borrow(connection, target, self.turn.link) {
                let (owner, _) = self.handoff.borrowed[target].as_mut().expect("borrowed above");
                let ran = owner.run_handed_off(connection, &batch) as u64;
                self.probes().borrowed_ops.add(ran);
                self.probes().messages_out.add(ran);
                continue;
            }
            self.probes().handed_off_ops.add(batch.requests.len() as u64);
            connection.begin_queued(1);
            self.handoff.hand_off(target, Task::Partitions { connection: connection.clone(), batch });
        }
        self.give_back();
    }

    /// Lets go of the other reactors' partitions (see [`Handoff::give_back`]).
    pub(crate) fn give_back(&mut self) {
        let written = self.handoff.give_back();
        self.probes().bytes_out.add(written as u64);
    }

    pub(crate) fn probes(&self) -> &crate::obs::probes::ReactorProbes {
        &self.shared.reactors[self.index].probes
    }
}

/// A uuid as Java prints it (`null` for none).
fn display_uuid(uuid: Option<Uuid>) -> String {
    uuid.map_or_else(|| "null".to_owned(), |uuid| uuid.to_string())
}

/// Where a request came from: a client (its uuid owns locks; its tenant) or another member.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin {
    pub(crate) hop: Hop,
    pub(crate) source: Uuid,
    pub(crate) tenant: u16,
}

/// How a partition request reached this member, and so whether it may be forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hop {
    /// From a client: forwarded to the owner if that is another member.
    Client,
    /// Forwarded by this member: sent on once more (`FORWARD_AGAIN`) to an owner other than it.
    Forwarded(MemberId),
    /// Forwarded twice: run here or refused.
    Last,
}

impl Origin {
    pub(crate) fn client(connection: &ConnectionShared, tenant: u16) -> Origin {
        Origin { hop: Hop::Client, source: connection.client_uuid(), tenant }
    }
}
