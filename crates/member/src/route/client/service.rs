//! Client-service requests (authentication, cluster view, proxies, ping, …): connection-level
//! messages that touch no partition and are answered inline by the connection's reactor, each
//! by the call its row names (`rows.rs`, [`ClientCall`]).

use crate::cluster::events::Topic;
use crate::cluster::peer::Service;
use crate::cluster::view::{self, ClusterView};
use crate::net::connection::{ConnectionShared, ConnectionState, ReplyTo};
use crate::route::row::ClientCall;
use crate::shared::Shared;
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::error::{self, write_error_response, ErrorHolder};
use ferrogrid_protocol::{DecodeError, Message, Uuid};
use std::sync::Arc;
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
    /// Proxies a client asked for, (service name, scoped name): listed here and on every
    /// other member, with CREATED events where they are new.
    Created(Vec<(String, String)>),
    /// Close the connection after flushing what was written (`reason` is logged).
    Close(String),
}

pub(crate) fn random_uuid() -> Uuid {
    Uuid::from_u128(uuid::Uuid::new_v4().as_u128())
}

/// Handles the first message of a connection, which must be an authentication request (`call`:
/// its row's, if it has one).
pub fn authenticate(
    shared: &Shared,
    call: Option<ClientCall>,
    message: &Message<'_>,
    state: &mut ConnectionState,
    out: &mut Vec<u8>,
) -> Result<After, DecodeError> {
    let correlation_id = message.correlation_id();
    let ty = message.message_type();
    let (uuid, serialization_version, cluster_name, credentials, client_type) = match call {
        Some(ClientCall::Authenticate) => {
            let request = ClientAuthentication::decode(message)?;
            let credentials = Some((request.username, request.password));
            (request.uuid, request.serialization_version, request.cluster_name, credentials, request.client_type)
        }
        Some(ClientCall::AuthenticateCustom) => {
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
    if status != view::AUTHENTICATED {
        ClusterView::write_refused(out, ty.response(), correlation_id, status);
        return Ok(After::Continue);
    }
    if !shared.joined.load(std::sync::atomic::Ordering::Acquire) {
        // Until then this member would give the client its own uuid as the cluster id and
        // itself as the only member; a client that kept them would take the cluster it finds
        // later for another one. Clients retry the connection.
        let text = "this member has not joined a cluster yet; try again";
        write_error_response(
            out,
            correlation_id,
            &[ErrorHolder { code: error::INSTANCE_NOT_ACTIVE, message: Some(text) }],
        );
        return Ok(After::Close(text.into()));
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
    let status = if serialization_version != view::SERIALIZATION_VERSION {
        view::SERIALIZATION_VERSION_MISMATCH
    } else if cluster_name != shared.config.cluster_name {
        warn!(cluster_name, "client refused: wrong cluster name");
        view::CREDENTIALS_FAILED
    } else if !tenants.tenants.is_empty() {
        match credentials.and_then(|(user, password)| tenants.authenticate(user?, password?)) {
            Some(id) => {
                tenant = id;
                view::AUTHENTICATED
            }
            None => {
                warn!("client refused: its credentials match no tenant");
                view::CREDENTIALS_FAILED
            }
        }
    } else if !credentials.is_some_and(|(user, password)| shared.config.security.check(user, password)) {
        warn!("client refused: credentials rejected");
        view::CREDENTIALS_FAILED
    } else {
        view::AUTHENTICATED
    };
    (status, tenant)
}

/// Handles a client-service request on an authenticated connection by its row's call (none: a
/// type without a client-service row, answered UnsupportedOperation).
pub fn handle(
    shared: &Shared,
    call: Option<ClientCall>,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    out: &mut Vec<u8>,
    tenant: u16,
) -> Result<After, DecodeError> {
    let correlation_id = message.correlation_id();
    let ty = message.message_type();
    let empty = |out: &mut Vec<u8>| {
        EmptyResponse {}.encode(out, ty.response(), correlation_id, 0);
    };
    let Some(call) = call else {
        // Hazelcast's wording for an unknown type, plus which service it belongs to.
        let text = format!(
            "Unrecognized client message received with type: {ty} ({}); ferrogrid does not support it",
            ty.describe()
        );
        unsupported(out, correlation_id, &text);
        return Ok(After::Continue);
    };
    match call {
        ClientCall::Authenticate | ClientCall::AuthenticateCustom => {
            let mut state = ConnectionState::AwaitingAuthentication;
            return authenticate(shared, Some(call), message, &mut state, out);
        }
        ClientCall::AddClusterViewListener => {
            shared.view.write_view_events(out, correlation_id);
            empty(out);
        }
        ClientCall::LocalBackupListener => {
            connection.set_backup_listener(correlation_id);
            UuidResponse { response: Some(random_uuid()) }.encode(out, ty.response(), correlation_id, 0);
        }
        ClientCall::Acknowledge => empty(out),
        ClientCall::CreateProxy
        | ClientCall::CreateProxies
        | ClientCall::AddDistributedObjectListener
        | ClientCall::RemoveDistributedObjectListener
        | ClientCall::AddPartitionLostListener
        | ClientCall::RemovePartitionLostListener
        | ClientCall::AddMapPartitionLostListener
        | ClientCall::RemoveMapPartitionLostListener
        | ClientCall::AddCachePartitionLostListener
        | ClientCall::RemoveCachePartitionLostListener => {
            return proxies(shared, call, connection, message, out, tenant);
        }
        ClientCall::DestroyProxy => return destroy_proxy(shared, message, out),
        ClientCall::SendSchema | ClientCall::SendAllSchemas | ClientCall::FetchSchema => {
            schema_request(shared, call, connection, message, out)?;
        }
        ClientCall::PnCounterReplicaCount => {
            let request = PnCounterGetConfiguredReplicaCount::decode(message)?;
            let replica_count = shared.config.pn_counters.for_pn_counter(request.name).replica_count;
            IntResponse { response: replica_count as i32 }.encode(out, ty.response(), correlation_id, 0);
        }
        ClientCall::PromoteLiteMember => promote_lite_member(shared, tenant, out, (ty, correlation_id)),
        ClientCall::GetDistributedObjects => {
            let objects = shared.objects.read();
            let visible = objects
                .iter()
                .filter_map(|(service_name, name)| shared.visible_name(tenant, name).map(|name| (service_name, name)));
            let response = visible.map(|(service_name, name)| DistributedObjectInfo { service_name, name }).collect();
            DistributedObjectsResponse { response }.encode(out, ty.response(), correlation_id, 0);
        }
    }
    Ok(After::Continue)
}

/// DestroyProxy: a known service's object is destroyed everywhere (the dispatcher fans it
/// out); any other name only leaves the listing.
fn destroy_proxy(shared: &Shared, message: &Message<'_>, out: &mut Vec<u8>) -> Result<After, DecodeError> {
    let request = ClientDestroyProxy::decode(message)?;
    if let Some(service) = Service::from_name(request.service_name) {
        shared.forget_object(service, request.name);
        return Ok(After::Destroy { service, name: request.name.into() });
    }
    shared.objects.write().remove(&(request.service_name.to_owned(), request.name.to_owned()));
    EmptyResponse {}.encode(out, message.message_type().response(), message.correlation_id(), 0);
    Ok(After::Continue)
}

/// Proxy creation, and the (de)registration of listeners on the cluster (`listener_request`).
fn proxies(
    shared: &Shared,
    call: ClientCall,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    out: &mut Vec<u8>,
    tenant: u16,
) -> Result<After, DecodeError> {
    let (correlation_id, ty) = (message.correlation_id(), message.message_type());
    let empty = |out: &mut Vec<u8>| {
        EmptyResponse {}.encode(out, ty.response(), correlation_id, 0);
    };
    let prefix = shared.tenant(tenant).map_or("", |runtime| runtime.prefix.as_str());
    match call {
        ClientCall::CreateProxy => {
            let request = ClientCreateProxy::decode(message)?;
            if let Err(refusal) = check_service(request.name, request.service_name) {
                unsupported(out, correlation_id, &refusal);
                return Ok(After::Continue);
            }
            empty(out);
            return Ok(After::Created(vec![(request.service_name.to_owned(), request.name.to_owned())]));
        }
        ClientCall::CreateProxies => {
            let request = ClientCreateProxies::decode(message)?;
            if let Some(refusal) = request.proxies.iter().find_map(|(name, service)| check_service(name, service).err())
            {
                unsupported(out, correlation_id, &refusal);
                return Ok(After::Continue);
            }
            empty(out);
            let proxies = request.proxies.iter();
            return Ok(After::Created(
                proxies.map(|(name, service)| ((*service).to_owned(), format!("{prefix}{name}"))).collect(),
            ));
        }
        _ => listener_request(shared, call, connection, message, out)?,
    }
    Ok(After::Continue)
}

/// A distributed-object, partition-lost or map partition-lost listener added or removed (a
/// map's request comes with its name scoped: a tenant's has its prefix).
fn listener_request(
    shared: &Shared,
    call: ClientCall,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let (correlation_id, ty) = (message.correlation_id(), message.message_type());
    // (topic, map, Ok(local_only) to add | Err(registration id) to remove)
    let (topic, map, add) = match call {
        ClientCall::AddDistributedObjectListener => {
            (Topic::Objects, None, Ok(ClientAddDistributedObjectListener::decode(message)?.local_only))
        }
        ClientCall::AddPartitionLostListener => {
            (Topic::PartitionLost, None, Ok(ClientAddPartitionLostListener::decode(message)?.local_only))
        }
        ClientCall::AddMapPartitionLostListener => {
            let request = MapAddPartitionLostListener::decode(message)?;
            (Topic::MapPartitionLost, Some(request.name.to_owned()), Ok(request.local_only))
        }
        ClientCall::RemoveDistributedObjectListener => {
            (Topic::Objects, None, Err(ClientRemoveDistributedObjectListener::decode(message)?.registration_id))
        }
        ClientCall::RemovePartitionLostListener => {
            (Topic::PartitionLost, None, Err(ClientRemovePartitionLostListener::decode(message)?.registration_id))
        }
        ClientCall::RemoveMapPartitionLostListener => {
            let request = MapRemovePartitionLostListener::decode(message)?;
            (Topic::MapPartitionLost, Some(request.name.to_owned()), Err(request.registration_id))
        }
        ClientCall::AddCachePartitionLostListener => {
            let request = CacheAddPartitionLostListener::decode(message)?;
            (Topic::CachePartitionLost, Some(request.name.to_owned()), Ok(request.local_only))
        }
        ClientCall::RemoveCachePartitionLostListener => {
            let request = CacheRemovePartitionLostListener::decode(message)?;
            (Topic::CachePartitionLost, Some(request.name.to_owned()), Err(request.registration_id))
        }
        other => unreachable!("{other:?} is not a listener request"),
    };
    match add {
        Ok(local_only) => add_cluster_listener(shared, connection, (topic, map.as_deref()), local_only, message, out),
        Err(registration) => {
            let topic = (topic, map.as_deref());
            let removed = registration.is_some_and(|id| shared.cluster_listeners.remove(id, topic));
            BoolResponse { response: removed }.encode(out, ty.response(), correlation_id, 0);
        }
    }
    Ok(())
}

/// SendSchema (answered once every member holds it), SendAllSchemas (a client that connected
/// to the cluster anew: answered at once) and FetchSchema (from this member's copy).
fn schema_request(
    shared: &Shared,
    call: ClientCall,
    connection: &Arc<ConnectionShared>,
    message: &Message<'_>,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let (correlation_id, ty) = (message.correlation_id(), message.message_type());
    match call {
        ClientCall::SendSchema => {
            let request = ClientSendSchema::decode(message)?;
            let schema = crate::engine::schemas::from_wire(&request.schema);
            let reply_to = ReplyTo { connection: connection.clone(), correlation_id, response_type: ty.response() };
            send_schemas(shared, &[schema], Some(reply_to), out);
        }
        ClientCall::SendAllSchemas => {
            let request = ClientSendAllSchemas::decode(message)?;
            let schemas: Vec<_> = request.schemas.iter().map(crate::engine::schemas::from_wire).collect();
            if send_schemas(shared, &schemas, None, out) {
                EmptyResponse {}.encode(out, ty.response(), correlation_id, 0);
            }
        }
        _ => {
            let request = ClientFetchSchema::decode(message)?;
            let schema = shared.schemas.get(request.schema_id);
            let schema = schema.as_deref().map(crate::engine::schemas::to_wire);
            SchemaResponse { schema }.encode(out, ty.response(), correlation_id, 0);
        }
    }
    Ok(())
}

/// Keeps schemas a client sent and sends each to the members not known to hold it. A
/// SendSchema (`reply_to`) is answered once every member holds it (`schemas.rs`); false (and an
/// error written) when the cluster keeps as many schemas as it may.
fn send_schemas(
    shared: &Shared,
    schemas: &[ferrogrid_query::schema::Schema],
    reply_to: Option<ReplyTo>,
    out: &mut Vec<u8>,
) -> bool {
    let correlation_id = reply_to.as_ref().map_or(0, |reply_to| reply_to.correlation_id);
    let state = shared.cluster_state();
    let me = shared.view.member_uuid;
    let members = state.member_uuids();
    let bound = shared.config.limits.max_schemas as usize;
    for schema in schemas {
        let Ok(id) = shared.schemas.put(schema.clone(), me, bound) else {
            let text = format!("the cluster keeps at most {bound} Compact schemas (ferrogrid.limits.max-schemas)");
            write_error_response(out, correlation_id, &[ErrorHolder { code: error::HAZELCAST, message: Some(&text) }]);
            return false;
        };
        shared.persist_schemas();
        let mut payload = Vec::new();
        crate::engine::schemas::encode([schema], &mut payload);
        let mut message = Vec::with_capacity(payload.len() + 32);
        crate::cluster::peer::write(&mut message, crate::cluster::peer::SCHEMAS, 0, &payload);
        for member in shared.schemas.missing(id, &members) {
            if let Some(link) = state.links.get(&ferrogrid_cluster::MemberId(member.as_u128())) {
                link.send(&message);
            }
        }
        if let Some(reply_to) = &reply_to {
            shared.schemas.wait(id, reply_to.clone(), std::time::Instant::now());
        }
    }
    shared.schemas.answer_due(&members);
    true
}

/// Registers a distributed-object or partition-lost listener and answers with its id, or with
/// an error when the member's registry is full.
fn add_cluster_listener(
    shared: &Shared,
    connection: &Arc<ConnectionShared>,
    topic: (Topic, Option<&str>),
    local_only: bool,
    request: &Message<'_>,
    out: &mut Vec<u8>,
) {
    let (correlation_id, id) = (request.correlation_id(), random_uuid());
    let bound = shared.config.limits.max_connections as usize * crate::cluster::events::LISTENERS_PER_CONNECTION;
    if !shared.cluster_listeners.add(id, topic, connection.clone(), correlation_id, local_only, bound) {
        let text = format!("too many distributed-object and partition-lost listeners on this member (at most {bound})");
        write_error_response(out, correlation_id, &[ErrorHolder { code: error::HAZELCAST, message: Some(&text) }]);
        return;
    }
    UuidResponse { response: Some(id) }.encode(out, request.message_type().response(), correlation_id, 0);
}

/// Refuses a proxy of a service ferrogrid does not have.
fn check_service(name: &str, service_name: &str) -> Result<(), String> {
    if Service::from_name(service_name).is_none() {
        return Err(format!(
            "ferrogrid does not support the service {service_name} (object {name}); only maps, multimaps, \
             queues, lists, sets, ringbuffers, replicated maps, topics, reliable topics, PN counters, flake id \
             generators, cardinality estimators, executors and JCache caches"
        ));
    }
    Ok(())
}

/// MC.promoteLiteMember: a lite member asks the master to make it a data member and is answered
/// at once (the member list that says so follows); any other member answers, as Hazelcast's
/// does, IllegalStateException. A tenant's client (which shares the cluster with others) may
/// not administer the cluster.
fn promote_lite_member(
    shared: &Shared,
    tenant: u16,
    out: &mut Vec<u8>,
    (ty, correlation_id): (ferrogrid_protocol::MessageType, i64),
) {
    if shared.tenant(tenant).is_some() {
        let text = "a tenant's client may not promote a member";
        let holder = ErrorHolder { code: error::HAZELCAST, message: Some(text) };
        return write_error_response(out, correlation_id, &[holder]);
    }
    let state = shared.cluster_state();
    let me = state.members.iter().find(|member| member.id == state.me);
    let lite = me.map_or(shared.config.lite_member, |member| member.lite);
    if !lite {
        let text =
            format!("Member [{}] - {} this is not a lite member!", shared.member_address, shared.view.member_uuid);
        let holder = ErrorHolder { code: error::ILLEGAL_STATE, message: Some(&text) };
        return write_error_response(out, correlation_id, &[holder]);
    }
    if shared.cluster_events.try_send(crate::shared::ClusterEvent::Promote).is_err() {
        let text = "the cluster service is busy: promotion not started; retry";
        let holder = ErrorHolder { code: error::HAZELCAST, message: Some(text) };
        return write_error_response(out, correlation_id, &[holder]);
    }
    info!("promotion to a data member asked by a client");
    EmptyResponse {}.encode(out, ty.response(), correlation_id, 0);
}

/// Answers with UnsupportedOperationException (code 61); the connection stays open.
pub fn unsupported(out: &mut Vec<u8>, correlation_id: i64, text: &str) {
    write_error_response(
        out,
        correlation_id,
        &[ErrorHolder { code: error::UNSUPPORTED_OPERATION, message: Some(text) }],
    );
}
