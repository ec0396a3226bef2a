//! Requests answered by the reactor that reads them from state the member's reactors share,
//! not from a partition (`Route::Local` in the operation table): FlakeIdGenerator.NewIdBatch,
//! from the generators' state in `engine/flake_id/store.rs`.

use crate::engine::flake_id::store::{self as flake_id, BatchError, IdBatch};
use crate::engine::request::{ErrorKind, OpError};
use crate::net::connection::ConnectionShared;
use crate::route::client::service::After;
use crate::route::dispatch::{Core, Hop, Origin};
use crate::route::wire;
use ferrogrid_cluster::MemberId;
use ferrogrid_config::FlakeIdGeneratorConfig;
use ferrogrid_protocol::codec::{FlakeIdGeneratorNewIdBatch, FlakeIdGeneratorNewIdBatchResponse};
use ferrogrid_protocol::error::{self, write_error_response, ErrorHolder};
use ferrogrid_protocol::message::RequestHeader;
use ferrogrid_protocol::{DecodeError, Message};
use std::sync::Arc;

impl Core {
    /// FlakeIdGenerator.NewIdBatch, answered here from the member-wide generator state. Before
    /// this member joined a cluster it has no node id: the client is told to retry. With a
    /// node id out of range, a client's request goes on to a member whose node id fits (all
    /// members know each other's join versions), as Hazelcast's member asks another.
    pub(crate) fn new_id_batch(
        &mut self,
        connection: &Arc<ConnectionShared>,
        header: RequestHeader,
        bytes: &[u8],
        out: &mut Vec<u8>,
        origin: Origin,
    ) -> Result<After, DecodeError> {
        let message = Message::parse(bytes)?;
        let request = FlakeIdGeneratorNewIdBatch::decode(&message)?;
        let correlation_id = header.correlation_id;
        let state = &self.owner.replication.state;
        let me = state.members.iter().find(|member| member.id == state.me);
        let Some(join_version) = me.map(|member| member.join_version) else {
            let text = format!(
                "this member has not joined a cluster yet, so it has no node id for flake id generator {}: retry",
                crate::tenants::display(request.name)
            );
            let chain = [ErrorHolder { code: error::RETRYABLE, message: Some(&text) }];
            write_error_response(out, correlation_id, &chain);
            return Ok(After::Continue);
        };
        let now_ms = self.owner.now_ms;
        match self.shared.flake_ids.new_batch(request.name, join_version, request.batch_size, now_ms) {
            Ok(issued) => {
                if issued.created {
                    let service = flake_id::SERVICE_NAME.to_owned();
                    self.shared.objects.write().insert((service, request.name.to_owned()));
                }
                let IdBatch { base, increment, size } = issued.batch;
                let response = FlakeIdGeneratorNewIdBatchResponse { base, increment, batch_size: size };
                if issued.wait_ms == 0 {
                    response.encode(out, FlakeIdGeneratorNewIdBatch::RESPONSE, correlation_id, 0);
                } else {
                    let mut answer = Vec::new();
                    response.encode(&mut answer, FlakeIdGeneratorNewIdBatch::RESPONSE, correlation_id, 0);
                    self.owner.answer_later(connection, answer, issued.wait_ms);
                }
            }
            Err(BatchError::NodeIdOutOfRange { settings, .. }) => {
                let state = &self.owner.replication.state;
                let target = (origin.hop == Hop::Client)
                    .then(|| other_member_in_range(state, &settings, correlation_id))
                    .flatten();
                match target {
                    Some(member) => {
                        let kind = crate::cluster::peer::FORWARD_AGAIN;
                        self.forward(connection, member, correlation_id, bytes, origin.source, kind);
                    }
                    None => {
                        let text = "All members have node ID out of range. Cluster restart is required";
                        wire::write_error(out, correlation_id, &OpError::new(ErrorKind::Refused, text));
                    }
                }
            }
            Err(BatchError::Refused(failure)) => wire::write_error(out, correlation_id, &failure),
        }
        Ok(After::Continue)
    }
}

/// A linked member whose node id fits, picked by the correlation id so that the load spreads.
fn other_member_in_range(
    state: &crate::cluster::replication::state::ClusterState,
    settings: &FlakeIdGeneratorConfig,
    correlation_id: i64,
) -> Option<MemberId> {
    let candidates: Vec<MemberId> = state
        .members
        .iter()
        .filter(|member| member.id != state.me && state.links.contains_key(&member.id))
        .filter(|member| flake_id::fits(settings, member.join_version))
        .map(|member| member.id)
        .collect();
    (!candidates.is_empty()).then(|| candidates[correlation_id.unsigned_abs() as usize % candidates.len()])
}
