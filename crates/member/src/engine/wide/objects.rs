//! Fan-out operations every kind of object shares: listener registration and removal (every
//! reactor applies them), dropping a departed client's relayed registrations, destroy (an
//! executor's: forgetting its shutdown), and a
//! fixed answer (a request about something the object never has).

use super::{Classified, Found, Partitions, WideOperation, WideRequest};
use crate::engine::executor::shutdowns::ExecutorKind;
use crate::engine::listeners::{Listener, Listeners, Registry};
use crate::engine::request::{ErrorKind, OpError, Reply};
use crate::engine::structures::ObjectKind;
use crate::net::connection::ConnectionShared;
use crate::partition::objects::PartitionStore;
use ferrogrid_protocol::{DecodeError, Message, Uuid};
use std::sync::Arc;

/// A request whose answer is the same on every member and needs no state: about work that never
/// ran (an executor's task) or a thing the object never has (a map's interceptor).
#[derive(Debug)]
pub(crate) struct Answered(Answer);

#[derive(Debug, Clone, Copy)]
pub(crate) enum Answer {
    False,
    Null,
    Nothing,
}

impl WideOperation for Answered {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) {}

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(match self.0 {
            Answer::False => Reply::Bool(false),
            Answer::Null => Reply::Value(None),
            Answer::Nothing => Reply::Empty,
        })
    }
}

/// `answer`, for a request about the object `name` (empty: a request that names none).
pub(crate) fn answered(answer: Answer, name: &str) -> Result<Classified, DecodeError> {
    Classified::wide(Answered(answer), name)
}

/// Map.addEntryListener (and the key and near-cache variants) and IQueue.addItemListener: the
/// registration on every reactor of this member, so it is in force everywhere before the
/// client hears its id.
#[derive(Debug)]
pub(crate) struct AddListener {
    listener: Box<Listener>,
    registry: Registry,
}

impl AddListener {
    /// The registration of `listener` among the object's listeners in `registry`.
    pub(crate) fn to(registry: Registry, listener: Listener) -> AddListener {
        AddListener { listener: Box::new(listener), registry }
    }
}

impl WideOperation for AddListener {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) {}

    /// A unisocket client's registration (not local-only) is made on every member, except a
    /// topic's and a replicated map's: the topic's owner relays its messages to every member's
    /// listeners already, and every member applies, and announces, every replicated-map change.
    fn cluster_wide(&self) -> bool {
        !self.listener.local_only && !matches!(self.registry, Registry::Messages | Registry::ReplicatedEntries)
    }

    fn relayed_registration(&self) -> Option<Uuid> {
        self.cluster_wide().then_some(self.listener.id)
    }

    fn on_reactor(&self, map: &str, listeners: &mut Listeners, _partial: &mut ()) {
        listeners.add_to(self.registry, map, (*self.listener).clone());
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Registration(self.listener.id))
    }
}

/// A relayed registration another member withdrew (`relays.rs`): the registrations sending
/// to its member link under its relay id, off every reactor of this member. No one is answered.
#[derive(Debug)]
pub(crate) struct DropRelayed {
    pub link: Arc<ConnectionShared>,
    pub relay_id: i64,
}

impl WideOperation for DropRelayed {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) {}

    fn on_reactor(&self, _map: &str, listeners: &mut Listeners, _partial: &mut ()) {
        listeners.drop_relayed(&self.link, self.relay_id);
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::NoAnswer)
    }
}

/// Map.removeEntryListener: the registration off every reactor of this member; answers
/// whether any reactor had it.
#[derive(Debug)]
pub(crate) struct RemoveListener {
    id: Uuid,
    registry: Registry,
}

impl RemoveListener {
    /// The removal of registration `id` from the object's listeners in `registry`.
    pub(crate) fn from(registry: Registry, id: Uuid) -> RemoveListener {
        RemoveListener { id, registry }
    }
}

impl WideOperation for RemoveListener {
    type Partial = Found;
    const PARTITIONS: Partitions = Partitions::None;
    const CLUSTER_WIDE: bool = false;

    fn empty(&self) -> Found {
        Found(false)
    }

    fn removed_registration(&self) -> Option<Uuid> {
        Some(self.id)
    }

    fn on_reactor(&self, map: &str, listeners: &mut Listeners, partial: &mut Found) {
        partial.0 |= listeners.remove_from(self.registry, map, self.id);
    }

    fn reply<'p>(&'p self, partial: &'p mut Found) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Bool(partial.0))
    }
}

/// Destroy of an object other than a map: its data (if it has a kind of partition object)
/// dropped on every replica, and its listeners (if it has a registry), on every member.
#[derive(Debug)]
pub(crate) struct DestroyObject {
    pub kind: Option<ObjectKind>,
    pub registry: Option<Registry>,
}

/// Destroy of an object of `kind` (None: a service with no objects in partitions) whose
/// listeners are in `registry`.
pub(crate) fn destroy_object(kind: Option<ObjectKind>, registry: Option<Registry>) -> WideRequest {
    WideRequest::new(DestroyObject { kind, registry })
}

impl WideOperation for DestroyObject {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Replicas;

    fn empty(&self) {}

    fn on_reactor(&self, name: &str, listeners: &mut Listeners, _partial: &mut ()) {
        if let Some(registry) = self.registry {
            listeners.drop_all_of(registry, name);
        }
    }

    fn on_partition(&self, name: &str, partition: &mut PartitionStore, _owned: bool, _now_ms: i64, _partial: &mut ()) {
        let Some(mut object) = self.kind.and_then(|kind| partition.drop_object(kind, name)) else { return };
        // Requests waiting on it (a poll, a ringbuffer read) fail as in Hazelcast. They are
        // answered here, on their connection: the share has no outbox for partitions.
        let text = format!("Distributed object is destroyed: {}", crate::tenants::display(name));
        let failure = OpError::new(ErrorKind::Destroyed, text);
        for reply_to in partition.take_waiting(&mut object) {
            let (connection, answer) = crate::route::wire::encode_outcome(&reply_to, Err(failure.clone()));
            if !connection.is_closed() {
                connection.send(&answer);
            }
        }
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// Destroy of an executor's proxy: every reactor of every member forgets its shutdown, as
/// Hazelcast's executor services do.
#[derive(Debug)]
pub(crate) struct ForgetShutdown(pub(crate) ExecutorKind);

impl WideOperation for ForgetShutdown {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;

    fn empty(&self) {}

    fn on_share(&self, name: &str, share: &mut super::ShareContext<'_>, _partial: &mut ()) {
        share.executors.remove(self.0, name);
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// Client.DestroyProxy of a PN counter: every member drops its replica (which lives on one of
/// its reactors, outside the partitions).
#[derive(Debug)]
pub(crate) struct DestroyPnCounter;

impl WideOperation for DestroyPnCounter {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::None;

    fn empty(&self) {}

    fn on_counters(&self, name: &str, counters: &mut crate::engine::pn_counter::state::PnCounters, _partial: &mut ()) {
        counters.remove(name);
    }

    fn reply<'p>(&'p self, _partial: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

/// A listener registered by `message` (its correlation id and its event type, the request's
/// with kind 0x02) for `connection`: all events, without values, from every member; a row sets
/// what its request asks for.
pub(crate) fn listener(message: &Message<'_>, connection: &Arc<ConnectionShared>) -> Listener {
    Listener {
        id: Uuid::from_u128(uuid::Uuid::new_v4().as_u128()),
        connection: connection.clone(),
        correlation_id: message.correlation_id(),
        event_type: message.message_type().event(),
        include_value: false,
        flags: 0,
        key: None,
        invalidation: false,
        local_only: false,
        predicate: None,
    }
}

/// Registers `listener` among the object `name`'s listeners in `registry`, on every reactor.
pub(crate) fn add_listener(registry: Registry, name: &str, listener: Listener) -> Result<Classified, DecodeError> {
    Classified::wide(AddListener::to(registry, listener), name)
}

/// Removes the registration `id` (none: the nil id) from the object `name`'s listeners in
/// `registry`, on every reactor.
pub(crate) fn remove_listener(registry: Registry, name: &str, id: Option<Uuid>) -> Result<Classified, DecodeError> {
    Classified::wide(RemoveListener::from(registry, id.unwrap_or_default()), name)
}
