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
use crate::cluster::replication::state::{Forward as Pending, Route as Route_};
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::wide::{Classified, WideRequest};
use crate::net::connection::{ConnectionShared, ConnectionState};
use crate::partition::owner::{Call, PartitionOwner};
use crate::route::client::service::{self as client, After};
use crate::route::envelope::{Forward, Handoffs};
use crate::route::fanout::FanOut;
use crate::route::operations::{self, Flags, Operation, Route};
use crate::route::wire;
use crate::shared::{Shared, Task};
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::codec::{ClientAddClusterViewListener, ClientDestroyProxy};
use ferrogrid_protocol::frame::StreamLimits;
use ferrogrid_protocol::message::{RequestHeader, REQUEST_HEADER_SIZE};
use ferrogrid_protocol::{Message, MessageType, PartitionId, Uuid};
use std::collections::VecDeque;
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
    /// When the previous request of the batch being processed finished: the next one's start
    /// (one clock read per request instead of two; None at a batch's start and after a
    /// hand-off).
    pub(crate) request_clock: Option<Instant>,
    /// The partitions this reactor owns and everything that acts on them.
    pub(crate) owner: crate::partition::held::HeldOwner,
    /// Hand-offs that did not fit a target's inbox, per target, in order.
    pub(crate) overflow: Vec<VecDeque<Task>>,
    /// Reactors to wake at the end of this batch.
    pub(crate) wake: Vec<bool>,
    /// Requests for other reactors cut from the connection being processed, per target.
    pub(crate) outgoing: Vec<Handoffs>,
    /// Backup records read from a member link for other reactors' partitions, per target.
    pub(crate) member_backups: Vec<Vec<u8>>,
    /// Answers read from a member link to requests other reactors forwarded, per target
    /// (each `u32` LE length-prefixed).
    pub(crate) member_responses: Vec<Vec<u8>>,
    /// PN counter states read from a member link for other reactors' counters, per target.
    pub(crate) member_counters: Vec<Vec<u8>>,
    pub(crate) authenticated_limits: StreamLimits,
    /// Whether the request being handled went to another reactor (it is timed there).
    pub(crate) handed_off: bool,
    /// Whether the connection being processed is a member link this member opened.
    pub(crate) current_outgoing: bool,
    /// Whether the connection being processed is a member link (its requests are always
    /// handed over: they keep their order with the backups and snapshots it carries).
    pub(crate) current_link: bool,
    /// Other reactors' partitions this reactor holds while it processes a connection's
    /// requests (`held.rs`), per reactor, with the deadline of their first timer when taken.
    pub(crate) borrowed: Vec<Option<(crate::partition::held::OwnerGuard, Option<i64>)>>,
    /// Deficit round robin over tenants.
    pub(crate) fairness: crate::tenants::Fairness,
    /// Requests the connection being processed may still have cut in its current turn.
    pub(crate) turn_budget: usize,
    /// A connection ended its turn with input left: poll without sleeping this iteration.
    pub(crate) turn_over: bool,
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
        Core {
            index,
            shared,
            request_clock: None,
            owner,
            overflow: (0..count).map(|_| VecDeque::new()).collect(),
            wake: vec![false; count],
            outgoing: (0..count).map(|_| Handoffs::default()).collect(),
            member_backups: vec![Vec::new(); count],
            member_responses: vec![Vec::new(); count],
            member_counters: vec![Vec::new(); count],
            authenticated_limits,
            handed_off: false,
            current_outgoing: false,
            current_link: false,
            borrowed: (0..count).map(|_| None).collect(),
            fairness,
            turn_budget,
            turn_over: false,
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
        let (started, written_before) = (self.request_clock.take().unwrap_or_else(Instant::now), out.len());
        self.handed_off = false;
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
        if !self.handed_off {
            // Requests handed to another reactor are timed there.
            let finished = Instant::now();
            self.owner.record_latency(message_type, connection.tenant(), finished - started);
            self.request_clock = Some(finished);
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
                let outcome = client::authenticate(&self.shared, message, state, out);
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
        match operations::lookup(header.message_type) {
            Some((slot, row)) if row.route == Route::Partition => {
                self.dispatch_partition(connection, header, (slot, row), bytes, out, origin)
            }
            Some((slot, row)) if row.route == Route::Replica => {
                self.dispatch_replica(connection, header, (slot, row), bytes, out, origin)
            }
            Some((slot, row)) if row.route == Route::LocalCopy => {
                let Some(partition) = self.check_partition(header, out) else { return Ok(After::Continue) };
                self.run_or_hand_off(connection, header, (slot, row), partition, bytes, out, origin)
            }
            Some((_, row)) if row.route == Route::EveryPartition => {
                let message = Message::parse(bytes)?;
                self.dispatch_wide(connection, &message, bytes, out, origin)
            }
            Some((_, row)) if row.route == Route::Sql => {
                let message = Message::parse(bytes)?;
                match header.message_type {
                    ferrogrid_protocol::codec::SqlExecute::TYPE => {
                        self.sql_execute(connection, &message, bytes, out)?
                    }
                    ferrogrid_protocol::codec::SqlFetch::TYPE => self.sql_fetch(connection, &message, out)?,
                    ferrogrid_protocol::codec::SqlClose::TYPE => self.sql_close(connection, &message, out)?,
                    _ => self.sql_mapping_ddl(&message, out)?,
                }
                Ok(After::Continue)
            }
            // (The only Local row.)
            Some((_, row)) if row.route == Route::Local => self.new_id_batch(connection, header, bytes, out, origin),
            // The client service, and types without a row (answered UnsupportedOperation).
            _ => {
                let message = Message::parse(bytes)?;
                if header.message_type == ClientAddClusterViewListener::TYPE {
                    self.shared.view.add_listener(connection.clone(), header.correlation_id);
                }
                client::handle(&self.shared, connection, &message, out, origin.tenant)
            }
        }
    }

    pub(crate) fn dispatch_wide(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let from_member = origin.hop != Hop::Client;
        let (correlation_id, response_type) = (message.correlation_id(), message.message_type().response());
        match operations::classify(message, connection)? {
            Classified::Wide(operation, name) => {
                let mut remote = if from_member { None } else { Some(std::borrow::Cow::Borrowed(bytes)) };
                if !from_member {
                    if let Some(registration) = operation.relayed_registration() {
                        match self.relay_registration(connection, correlation_id, registration, bytes) {
                            Some(relayed) => remote = Some(std::borrow::Cow::Owned(relayed)),
                            None => {
                                let text = "too many listener registrations relayed through this member";
                                crate::engine::wide::write_refusal(
                                    out,
                                    correlation_id,
                                    ferrogrid_protocol::error::HAZELCAST,
                                    text,
                                );
                                return Ok(After::Continue);
                            }
                        }
                    }
                    if let Some(relay_id) =
                        operation.removed_registration().and_then(|id| self.shared.relays.remove_registration(id))
                    {
                        self.unlisten_everywhere(&[relay_id]);
                    }
                }
                let remote = remote.as_deref();
                self.fan_out_with(Some(connection), correlation_id, response_type, name, operation, out, remote);
            }
            Classified::Refused(code, text) => crate::engine::wide::write_refusal(out, correlation_id, code, &text),
            Classified::NotWide => unreachable!("{} has a map-wide row", message.message_type()),
        }
        Ok(After::Continue)
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
        let Some(partition) = self.routes_here(connection, header, bytes, out, origin) else {
            return Ok(After::Continue);
        };
        self.run_or_hand_off(connection, header, (slot, row), partition, bytes, out, origin)
    }

    /// A request for `partition` on this member: run here if this reactor owns the partition
    /// (parsed and decoded once), else handed, unparsed, to the reactor that does.
    #[allow(clippy::too_many_arguments)]
    fn run_or_hand_off(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        (slot, row): (usize, &Operation),
        partition: PartitionId,
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let owner = self.shared.owner_of(partition);
        if owner == self.index || self.borrow(connection, owner) {
            let probes = self.probes();
            if owner == self.index { &probes.local_ops } else { &probes.borrowed_ops }.add(1);
            let message = Message::parse(bytes)?;
            let request = (row.decode.expect("partition rows decode"))(&message)?;
            let call = Call {
                connection,
                correlation_id: header.correlation_id,
                response_type: header.message_type.response(),
                source: origin.source,
                counter_slot: slot,
                partition_id: partition,
                backup_aware: Call::asks_backup_acks(&message, connection),
            };
            if owner == self.index {
                self.owner.execute(&call, &request, out);
            } else {
                let (borrowed, _) = self.borrowed[owner].as_mut().expect("borrowed above");
                borrowed.execute(&call, &request, out);
            }
        } else {
            self.hand_off_request(connection, owner, bytes, origin, header.correlation_id);
        }
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
        self.handed_off = true;
        self.outgoing[owner].push(bytes, origin.source, origin.tenant, correlation_id);
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
        let request = (row.decode.expect("replica rows decode"))(&message)?;
        let crate::engine::request::Request::PnCounter(counter) = &request else {
            unreachable!("{} has a replica row", header.message_type)
        };
        let state = &self.owner.replication.state;
        let target = counter.target.map(|uuid| MemberId(uuid.as_u128()));
        if target != Some(state.me) {
            let id = header.correlation_id;
            let refusal = match target {
                Some(member) if origin.hop == Hop::Client && state.links.contains_key(&member) => {
                    self.forward(connection, member, id, bytes, origin.source, crate::cluster::peer::FORWARD);
                    return Ok(After::Continue);
                }
                Some(member) if state.is_member(member) => OpError::new(
                    ErrorKind::TargetNotMember,
                    format!(
                        "Member with uuid({}) is not reachable from this member",
                        counter.target.unwrap_or_default()
                    ),
                ),
                _ => OpError::new(
                    ErrorKind::TargetNotMember,
                    format!("Member with uuid({}) is not in member list ", display_uuid(counter.target)),
                ),
            };
            wire::write_error(out, id, &refusal);
            return Ok(After::Continue);
        }
        let partition = crate::engine::pn_counter::state::partition_of(&counter.name, self.shared.view.partition_count);
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
            };
            self.owner.execute(&call, &request, out);
        } else {
            self.hand_off_request(connection, owner, bytes, origin, header.correlation_id);
        }
        Ok(After::Continue)
    }

    /// The request's partition, validated, if the request runs on this member. If not, it has
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
    ) -> Option<PartitionId> {
        let (partition, id) = (header.partition_id, header.correlation_id);
        let partition_id = self.check_partition(header, out)?;
        let text = match self.owner.replication.route(partition_id) {
            Route_::Here => return Some(partition_id),
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
        for target in 0..self.outgoing.len() {
            if self.outgoing[target].is_empty() {
                continue;
            }
            let batch = std::mem::take(&mut self.outgoing[target]);
            if self.borrow(connection, target) {
                let (owner, _) = self.borrowed[target].as_mut().expect("borrowed above");
                let ran = owner.run_handed_off(connection, &batch) as u64;
                self.probes().borrowed_ops.add(ran);
                self.probes().messages_out.add(ran);
                continue;
            }
            self.probes().handed_off_ops.add(batch.requests.len() as u64);
            connection.begin_queued(1);
            self.hand_off(target, Task::Partitions { connection: connection.clone(), batch });
        }
        self.give_back();
    }

    /// Whether this reactor holds reactor `target`'s partitions to run `connection`'s next
    /// request on them itself: taken only if nobody holds them (never waited for, so two
    /// reactors cannot wait on each other), and only while none of the connection's requests
    /// for them wait to be handed over, here or in an inbox (they would be overtaken).
    fn borrow(&mut self, connection: &ConnectionShared, target: usize) -> bool {
        if self.current_link || connection.queued() > 0 || !self.outgoing[target].is_empty() {
            return false;
        }
        if self.borrowed[target].is_some() {
            return true;
        }
        let Some(mut guard) = self.shared.reactors[target].owner.get().and_then(|lock| lock.try_lock_arc()) else {
            return false;
        };
        guard.tick_clock();
        let next_timer = guard.next_deadline_ms();
        self.borrowed[target] = Some((guard, next_timer));
        true
    }

    /// Lets go of the other reactors' partitions, after writing what was run on them owes
    /// (answers to re-run requests, events, backups), so that those leave in the order the
    /// partitions made them. A timer sooner than the one their reactor sleeps until wakes it.
    pub(crate) fn give_back(&mut self) {
        for target in 0..self.borrowed.len() {
            let Some((mut owner, next_timer)) = self.borrowed[target].take() else { continue };
            let written = owner.outbox.flush() + owner.replication.flush();
            self.probes().bytes_out.add(written as u64);
            if owner.next_deadline_ms().is_some_and(|deadline| next_timer.is_none_or(|next| deadline < next)) {
                self.wake[target] = true;
            }
        }
    }

    pub(crate) fn hand_off(&mut self, target: usize, task: Task) {
        let task =
            if self.overflow[target].is_empty() { self.shared.reactors[target].try_push(task) } else { Err(task) };
        match task {
            Ok(()) => self.wake[target] = true,
            Err(task) => self.overflow[target].push_back(task),
        }
    }

    pub(crate) fn wake_targets(&mut self) {
        for (target, wake) in self.wake.iter_mut().enumerate() {
            if std::mem::take(wake) {
                self.shared.reactors[target].wake();
            }
        }
    }

    /// Runs another member's share of a map-wide request (its WIDE message) on every reactor
    /// here, and answers it on `link` with this member's merged partial.
    pub(crate) fn fan_out(
        &mut self,
        link: &Arc<ConnectionShared>,
        correlation_id: i64,
        response_type: MessageType,
        name: Box<str>,
        operation: WideRequest,
        out: &mut Vec<u8>,
    ) {
        self.fan_out_with(Some(link), correlation_id, response_type, name, operation.for_member(), out, None);
    }

    /// Runs a map-wide request on every reactor and, with `request` (the client's bytes), on
    /// every other member too (their answers merge into the same job).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fan_out_with(
        &mut self,
        connection: Option<&Arc<ConnectionShared>>,
        correlation_id: i64,
        response_type: MessageType,
        name: Box<str>,
        operation: WideRequest,
        out: &mut Vec<u8>,
        request: Option<&[u8]>,
    ) {
        let count = self.shared.reactor_count();
        if let Some(connection) = connection {
            connection.begin_in_flight();
        }
        let job = Arc::new(FanOut::new(connection.cloned(), correlation_id, response_type, name, operation, count));
        if let Some(request) = request.filter(|_| job.is_cluster_wide()) {
            let state = self.owner.replication.state.clone();
            let others: Vec<MemberId> = state
                .members
                .iter()
                .map(|member| member.id)
                .filter(|id| *id != state.me && state.links.contains_key(id))
                .collect();
            job.add_shares(others.len());
            for member in others {
                let id = self.owner.replication.forward_id();
                self.owner.replication.forwards.insert(id, Pending::Wide { job: job.clone(), member });
                crate::cluster::peer::write(
                    self.owner.replication.message_for(member),
                    crate::cluster::peer::WIDE,
                    id,
                    request,
                );
            }
        }
        // The connection's requests read before this one go to their reactors first: a
        // map-wide request must not overtake the client's earlier writes (its puts, then
        // size, see the puts), as on Hazelcast's partition threads.
        if let Some(connection) = connection {
            self.send_outgoing(connection);
        }
        let origin = self.index;
        if let Some(connection) = connection {
            connection.begin_queued(count - 1);
        }
        for target in (0..count).filter(|target| *target != origin) {
            self.hand_off(target, Task::FanOut(job.clone()));
        }
        if let (Some(response), Some(connection)) =
            (self.owner.run_share(&job, crate::engine::wide::Share::Here), connection)
        {
            out.extend_from_slice(&response);
            connection.end_in_flight(1);
        }
    }

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
    fn relay_registration(
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
        self.handed_off = true;
        let id = self.owner.replication.forward_id();
        let relay = Pending::Relay { connection: connection.clone(), correlation_id, member };
        self.owner.replication.forwards.insert(id, relay);
        // The client's uuid (its locks' owner) and the request, answered under `id`.
        let payload = Forward { source, request: bytes }.encode();
        crate::cluster::peer::write(self.owner.replication.message_for(member), kind, id, &payload);
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
