//! Client-service requests (authentication, cluster view, proxies, ping, …): connection-level
//! messages that touch no partition and are answered inline by the connection's reactor.

use crate::cluster::{self, ClusterView};
use crate::connection::ConnectionState;
use crate::peer::Service;
use crate::shared::Shared;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorHolder};
use ferrogrid_protocol::{DecodeError, Message, Uuid};
use tracing::{info, warn};

/// What the reactor must do after a client-service request.
#[derive(Debug, PartialEq, Eq)]
pub enum After {
    Continue,
    /// The object's data must be dropped on every reactor of every member before DestroyProxy
    /// is answered.
    Destroy {
        service: Service,
        name: Box<str>,
    },
    /// Close the connection after flushing what was written (`reason` is logged).
    Close(String),
}

fn random_uuid() -> Uuid {
    Uuid::from_u128(uuid::Uuid::new_v4().as_u128())
}

/// Handles the first message of a connection, which must be an authentication request.
pub fn authenticate(
    shared: &Shared,
    message: &Message<'_>,
    state: &mut ConnectionState,
    out: &mut Vec<u8>,
) -> Result<After, DecodeError> {
    let correlation_id = message.correlation_id();
    let ty = message.message_type();
    let (uuid, serialization_version, cluster_name, credentials, client_type) = match ty {
        ClientAuthentication::TYPE => {
            let request = ClientAuthentication::decode(message)?;
            let credentials = Some((request.username, request.password));
            (request.uuid, request.serialization_version, request.cluster_name, credentials, request.client_type)
        }
        ClientAuthenticationCustom::TYPE => {
            let request = ClientAuthenticationCustom::decode(message)?;
            (request.uuid, request.serialization_version, request.cluster_name, None, request.client_type)
        }
        _ => {
            let cause = "Client must authenticate before any operation.";
            write_error_response(
                out,
                correlation_id,
                &[
                    ErrorHolder { code: error::RETRYABLE, message: Some(cause) },
                    ErrorHolder { code: error::AUTHENTICATION, message: Some(cause) },
                ],
            );
            return Ok(After::Close(format!("request {ty} before authentication")));
        }
    };
    let (status, tenant) = check_credentials(shared, serialization_version, cluster_name, credentials);
    if status != cluster::AUTHENTICATED {
        ClusterView::write_refused(out, ty.response(), correlation_id, status);
        return Ok(After::Continue);
    }
    if let Some(runtime) = shared.tenant(tenant) {
        let max = runtime.config.max_connections.unwrap_or(u32::MAX);
        if runtime.connections.fetch_add(1, std::sync::atomic::Ordering::AcqRel) >= max {
            runtime.connections.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
            let text = format!(
                "tenant {} has reached its connection quota (max-connections {max}) on this member",
                runtime.config.name
            );
            warn!("{text}");
            write_error_response(out, correlation_id, &[ErrorHolder { code: error::HAZELCAST, message: Some(&text) }]);
            return Ok(After::Close(text));
        }
    }
    let client_uuid = uuid.unwrap_or_else(random_uuid);
    info!(client = %client_uuid, client_type, tenant, "client authenticated");
    shared.view.write_authenticated(out, ty.response(), correlation_id);
    *state = ConnectionState::Authenticated { client_uuid, client_type: client_type.to_owned(), tenant };
    Ok(After::Continue)
}

/// The authentication status for a client's serialization version, cluster name and
/// credentials (user name and password, if it sent them), and the tenant they name (0 when
/// tenants are not configured).
fn check_credentials(
    shared: &Shared,
    serialization_version: i8,
    cluster_name: &str,
    credentials: Option<(Option<&str>, Option<&str>)>,
) -> (u8, u16) {
    let tenants = &shared.config.tenants;
    let mut tenant = 0;
    let status = if serialization_version != cluster::SERIALIZATION_VERSION {
        cluster::SERIALIZATION_VERSION_MISMATCH
    } else if cluster_name != shared.config.cluster_name {
        warn!(cluster_name, "client refused: wrong cluster name");
        cluster::CREDENTIALS_FAILED
    } else if !tenants.tenants.is_empty() {
        match credentials.and_then(|(user, password)| tenants.authenticate(user?, password?)) {
            Some(id) => {
                tenant = id;
                cluster::AUTHENTICATED
            }
            None => {
                warn!("client refused: its credentials match no tenant");
                cluster::CREDENTIALS_FAILED
            }
        }
    } else if !credentials.is_some_and(|(user, password)| shared.config.security.check(user, password)) {
        warn!("client refused: credentials rejected");
        cluster::CREDENTIALS_FAILED
    } else {
        cluster::AUTHENTICATED
    };
    (status, tenant)
}

/// Handles a client-service request on an authenticated connection.
pub fn handle(shared: &Shared, message: &Message<'_>, out: &mut Vec<u8>, tenant: u16) -> Result<After, DecodeError> {
    let correlation_id = message.correlation_id();
    let ty = message.message_type();
    let empty = |out: &mut Vec<u8>| {
        EmptyResponse {}.encode(out, ty.response(), correlation_id, 0);
    };
    match ty {
        ClientAuthentication::TYPE | ClientAuthenticationCustom::TYPE => {
            let mut state = ConnectionState::AwaitingAuthentication;
            return authenticate(shared, message, &mut state, out);
        }
        ClientAddClusterViewListener::TYPE => {
            shared.view.write_view_events(out, correlation_id);
            empty(out);
        }
        ClientLocalBackupListener::TYPE => {
            UuidResponse { response: Some(random_uuid()) }.encode(out, ty.response(), correlation_id, 0);
        }
        ClientPing::TYPE | ClientStatistics::TYPE | ClientTriggerPartitionAssignment::TYPE => empty(out),
        ClientCreateProxy::TYPE => {
            let request = ClientCreateProxy::decode(message)?;
            match create_proxy(shared, request.name, request.service_name) {
                Ok(()) => empty(out),
                Err(refusal) => unsupported(out, correlation_id, &refusal),
            }
        }
        ClientCreateProxies::TYPE => {
            let request = ClientCreateProxies::decode(message)?;
            let prefix = shared.tenant(tenant).map_or("", |runtime| runtime.prefix.as_str());
            let refusal = request
                .proxies
                .iter()
                .find_map(|(name, service)| create_proxy(shared, &format!("{prefix}{name}"), service).err());
            match refusal {
                None => empty(out),
                Some(refusal) => unsupported(out, correlation_id, &refusal),
            }
        }
        ClientDestroyProxy::TYPE => {
            let request = ClientDestroyProxy::decode(message)?;
            if let Some(service) = Service::from_name(request.service_name) {
                shared.forget_object(service, request.name);
                return Ok(After::Destroy { service, name: request.name.into() });
            }
            shared.objects.write().remove(&(request.service_name.to_owned(), request.name.to_owned()));
            empty(out);
        }
        ClientGetDistributedObjects::TYPE => {
            let objects = shared.objects.read();
            // A tenant sees its own objects, by their unscoped names; nobody sees a tenant's.
            let prefix = shared.tenant(tenant).map(|runtime| runtime.prefix.as_str());
            let visible = objects.iter().filter_map(|(service_name, name)| match prefix {
                Some(prefix) => name.strip_prefix(prefix).map(|name| (service_name, name)),
                None => (!name.contains(crate::tenants::SEPARATOR)).then_some((service_name, name.as_str())),
            });
            let response = visible.map(|(service_name, name)| DistributedObjectInfo { service_name, name }).collect();
            DistributedObjectsResponse { response }.encode(out, ty.response(), correlation_id, 0);
        }
        _ => {
            // Hazelcast's wording for an unknown type, plus which service it belongs to.
            let text = format!(
                "Unrecognized client message received with type: {ty} ({}); ferrogrid does not support it",
                ty.describe()
            );
            unsupported(out, correlation_id, &text);
        }
    }
    Ok(After::Continue)
}

fn create_proxy(shared: &Shared, name: &str, service_name: &str) -> Result<(), String> {
    if Service::from_name(service_name).is_none() {
        return Err(format!(
            "ferrogrid does not support the service {service_name} (object {name}); only maps, multimaps, \
             queues, lists, sets, ringbuffers, topics, reliable topics and flake id generators"
        ));
    }
    shared.objects.write().insert((service_name.to_owned(), name.to_owned()));
    Ok(())
}

/// Answers with UnsupportedOperationException (code 61); the connection stays open.
pub fn unsupported(out: &mut Vec<u8>, correlation_id: i64, text: &str) {
    write_error_response(
        out,
        correlation_id,
        &[ErrorHolder { code: error::UNSUPPORTED_OPERATION, message: Some(text) }],
    );
}
