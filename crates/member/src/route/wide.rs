//! Requests over every partition (a map's size, clear, queries, listener registration, …), on the
//! reactor that read them: decoded by their row's classifier into a fan-out job
//! (`route/fanout.rs`) that runs one share on every reactor here and, from a client, on every
//! other member too; the share that completes the job answers.

use crate::cluster::replication::state::{Forward as Pending, NO_DATA_MEMBER_TEXT};
use crate::engine::request::{ErrorKind, OpError};
use crate::engine::wide::{Classified, WideRequest};
use crate::net::connection::ConnectionShared;
use crate::route::client::service::After;
use crate::route::dispatch::{Core, Hop, Origin};
use crate::route::fanout::FanOut;
use crate::route::operations::Operation;
use crate::route::wire;
use crate::shared::Task;
use ferrogrid_cluster::MemberId;
use ferrogrid_protocol::{Message, MessageType};
use std::sync::Arc;

impl Core {
    /// Runs a request over every partition by its row (`row`, found by dispatch), whose
    /// classifier decodes it into the fan-out's operation, answered under `correlation_id` (the
    /// request's own, or the forwarder's for a request another member forwarded).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dispatch_wide(
        &mut self,
        connection: &Arc<ConnectionShared>,
        row: &Operation,
        message: &Message<'_>,
        correlation_id: i64,
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, ferrogrid_protocol::DecodeError> {
        let from_member = origin.hop != Hop::Client;
        let response_type = message.message_type().response();
        let classify = row.classify.expect("a row over every partition has a classifier");
        match classify(message, connection)? {
            Classified::Wide(operation, _)
                if operation.target().is_some_and(|target| {
                    !self.runs_here(connection, (correlation_id, Some(target)), bytes, out, origin)
                }) => {}
            Classified::Wide(operation, name) => {
                if operation.reads_owned_partitions() && self.owner.replication.state.without_data_members() {
                    let failure = OpError::new(ErrorKind::NoDataMember, NO_DATA_MEMBER_TEXT);
                    wire::write_error(out, correlation_id, &failure);
                    return Ok(After::Continue);
                }
                let mut remote = if from_member { None } else { Some(std::borrow::Cow::Borrowed(bytes)) };
                if !from_member {
                    if let Some(registration) = operation.relayed_registration() {
                        match self.relay_registration(connection, correlation_id, registration, bytes) {
                            Some(relayed) => remote = Some(std::borrow::Cow::Owned(relayed)),
                            None => {
                                let text = "too many listener registrations relayed through this member";
                                wire::write_error(out, correlation_id, &OpError::new(ErrorKind::Refused, text));
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
            Classified::Refused(failure) => wire::write_error(out, correlation_id, &failure),
            Classified::NotWide => unreachable!("{} has a map-wide row", message.message_type()),
        }
        Ok(After::Continue)
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
    /// every other member too (their answers merge into the same job). `connection` is the
    /// one being read: its requests read before this one go to their reactors first (a
    /// map-wide request must not overtake the client's earlier writes: its puts, then size,
    /// see the puts, as on Hazelcast's partition threads).
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
        if let Some(connection) = connection {
            self.send_outgoing(connection);
        }
        self.start_fan_out(connection, correlation_id, response_type, name, operation, out, request);
    }

    /// [`Core::fan_out_with`] for a connection that may not be the one being read (a commit
    /// resumed when its transaction's log holders answered): nothing of it is flushed first.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start_fan_out(
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
        let origin = self.index;
        if let Some(connection) = connection {
            connection.begin_queued(count - 1);
        }
        for target in (0..count).filter(|target| *target != origin) {
            self.handoff.hand_off(target, Task::FanOut(job.clone()));
        }
        // The other reactors start their shares now, while this one runs its own (woken at
        // the end of the read batch, they would start only after it).
        self.handoff.wake_targets();
        if let (Some(response), Some(connection)) =
            (self.owner.run_share(&job, crate::engine::wide::Share::Here), connection)
        {
            out.extend_from_slice(&response);
            connection.end_in_flight(1);
        }
    }
}
