//! The cluster's Compact schemas (`Client.SendSchema`, `FetchSchema`, `SendAllSchemas`).
//!
//! Every member holds every schema: a client sends a schema to one member before the first
//! value that uses it, and any member may later be asked for it (`FetchSchema`, from a client
//! that reads such a value) or need it itself (queries read the values). The member a client
//! sends a schema to keeps it, sends it to every other member (`peer::SCHEMAS`), and answers
//! once all of them acknowledged it (`peer::SCHEMAS_ACK`), or after [`ANSWER_WAIT_MS`] with the
//! members known to hold it; as against Hazelcast, the client sends it again until every
//! member it knows is in the answer. A member that links to another sends it all its schemas,
//! so a joiner gets them. A schema never changes (its id is the fingerprint of its content)
//! and is never removed; the cluster keeps at most `ferrogrid.limits.max-schemas`.
//!
//! Shared by every reactor under one read-write lock: schemas arrive once per type and client,
//! and queries read them for every value they test.

use crate::cluster::peer::{put_str, Malformed, Reader};
use crate::engine::request::Reply;
use crate::net::connection::{ConnectionShared, ReplyTo};
use ferrogrid_protocol::codec::{CompactSchema, SchemaField};
use ferrogrid_protocol::Uuid;
use ferrogrid_query::schema::{FieldDescriptor, Schema};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest a SendSchema waits for the other members' acknowledgements.
pub const ANSWER_WAIT_MS: u64 = 2_000;

/// A schema and the members known to hold it.
#[derive(Debug)]
struct Known {
    schema: Arc<Schema>,
    holders: BTreeSet<Uuid>,
}

/// A SendSchema answer held until the other members have the schema.
#[derive(Debug)]
struct Waiting {
    id: i64,
    reply_to: ReplyTo,
    deadline: Instant,
}

#[derive(Debug, Default)]
struct State {
    known: HashMap<i64, Known>,
    waiting: Vec<Waiting>,
}

/// The schemas this member holds.
#[derive(Debug, Default)]
pub struct Schemas {
    state: parking_lot::RwLock<State>,
}

/// The registry is full (`max-schemas`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full(pub usize);

/// A SendSchema answer that is due: the connection, the request's correlation id and the
/// answer to write.
pub type Answer = (Arc<ConnectionShared>, i64, Vec<u8>);

impl Schemas {
    /// Keeps `schema` (held by `holder`); its id. Refused when it is new and `bound` schemas
    /// are kept already.
    pub fn put(&self, schema: Schema, holder: Uuid, bound: usize) -> Result<i64, Full> {
        let mut state = self.state.write();
        let id = schema.id();
        if !state.known.contains_key(&id) && state.known.len() >= bound {
            return Err(Full(bound));
        }
        let known =
            state.known.entry(id).or_insert_with(|| Known { schema: Arc::new(schema), holders: BTreeSet::new() });
        known.holders.insert(holder);
        Ok(id)
    }

    pub fn get(&self, id: i64) -> Option<Arc<Schema>> {
        self.state.read().known.get(&id).map(|known| known.schema.clone())
    }

    /// Every schema (for a member that linked to this one).
    pub fn all(&self) -> Vec<Arc<Schema>> {
        self.state.read().known.values().map(|known| known.schema.clone()).collect()
    }

    pub fn len(&self) -> usize {
        self.state.read().known.len()
    }

    /// `member` holds the schemas `ids`.
    pub fn acknowledged(&self, ids: &[i64], member: Uuid) {
        let mut state = self.state.write();
        for id in ids {
            if let Some(known) = state.known.get_mut(id) {
                known.holders.insert(member);
            }
        }
    }

    /// The members of `members` that are not known to hold schema `id`.
    pub fn missing(&self, id: i64, members: &[Uuid]) -> Vec<Uuid> {
        let state = self.state.read();
        let holders = state.known.get(&id).map(|known| &known.holders);
        members.iter().filter(|member| !holders.is_some_and(|holders| holders.contains(member))).copied().collect()
    }

    /// Sends the answers [`Schemas::due`] gives now.
    pub fn answer_due(&self, members: &[Uuid]) {
        for (connection, _, answer) in self.due(members, Instant::now()) {
            connection.send(&answer);
        }
    }

    /// Holds the answer to a SendSchema of schema `id` until [`Schemas::due`] finds every
    /// member holding it, or [`ANSWER_WAIT_MS`] passed.
    pub fn wait(&self, id: i64, reply_to: ReplyTo, now: Instant) {
        let deadline = now + Duration::from_millis(ANSWER_WAIT_MS);
        self.state.write().waiting.push(Waiting { id, reply_to, deadline });
    }

    /// The held answers that are due at `now` with the cluster's `members`: the members known
    /// to hold the schema (all of them, or whoever answered in time).
    pub fn due(&self, members: &[Uuid], now: Instant) -> Vec<Answer> {
        if self.state.read().waiting.is_empty() {
            return Vec::new();
        }
        let mut state = self.state.write();
        if state.waiting.is_empty() {
            return Vec::new();
        }
        let State { known, waiting } = &mut *state;
        let mut answers = Vec::new();
        waiting.retain(|held| {
            let holders = known.get(&held.id).map(|known| &known.holders);
            let complete = members.iter().all(|member| holders.is_some_and(|holders| holders.contains(member)));
            if !complete && now < held.deadline && !held.reply_to.connection.is_closed() {
                return true;
            }
            let holders = Reply::SchemaHolders(holders.into_iter().flatten().copied().collect());
            let (connection, answer) = crate::route::wire::encode_answer(&held.reply_to, holders);
            answers.push((connection, held.reply_to.correlation_id, answer));
            false
        });
        answers
    }
}

impl ferrogrid_query::SchemaSource for Schemas {
    fn schema(&self, id: i64) -> Option<Arc<Schema>> {
        self.get(id)
    }
}

/// A schema from the wire (the member computes its id).
pub fn from_wire(schema: &CompactSchema<'_>) -> Schema {
    let fields = schema.fields.iter().map(|field| FieldDescriptor { name: field.name.to_owned(), kind: field.kind });
    Schema::new(schema.type_name, fields.collect())
}

/// A schema for the wire.
pub fn to_wire(schema: &Schema) -> CompactSchema<'_> {
    let fields = schema.fields.iter().map(|field| SchemaField { name: &field.name, kind: field.kind });
    CompactSchema { type_name: &schema.type_name, fields: fields.collect() }
}

/// What SCHEMAS carries: `{ type name str | field count u32 | { name str | kind i32 }* }*`.
pub fn encode<'a>(schemas: impl IntoIterator<Item = &'a Schema>, out: &mut Vec<u8>) {
    for schema in schemas {
        put_str(out, &schema.type_name);
        out.extend_from_slice(&(schema.fields.len() as u32).to_le_bytes());
        for field in &schema.fields {
            put_str(out, &field.name);
            out.extend_from_slice(&field.kind.to_le_bytes());
        }
    }
}

pub fn decode(payload: &[u8]) -> Result<Vec<Schema>, Malformed> {
    let mut reader = Reader::new(payload);
    let mut schemas = Vec::new();
    while !reader.is_empty() {
        let type_name = reader.str()?.to_owned();
        let count = reader.u32()? as usize;
        // Each field takes at least 8 bytes: a count beyond that is malformed, not a reason
        // to reserve memory.
        let mut fields = Vec::with_capacity(count.min(payload.len() / 8));
        for _ in 0..count {
            let name = reader.str()?.to_owned();
            fields.push(FieldDescriptor { name, kind: reader.u32()? as i32 });
        }
        schemas.push(Schema::new(type_name, fields));
    }
    Ok(schemas)
}

/// What SCHEMAS_ACK carries: the ids, `i64` LE each.
pub fn encode_ids(schemas: &[Schema], out: &mut Vec<u8>) {
    for schema in schemas {
        out.extend_from_slice(&schema.id().to_le_bytes());
    }
}

pub fn decode_ids(payload: &[u8]) -> Result<Vec<i64>, Malformed> {
    if !payload.chunks_exact(8).remainder().is_empty() {
        return Err(Malformed::Refused("schema acknowledgement not a list of ids"));
    }
    Ok(payload.chunks_exact(8).map(|id| i64::from_le_bytes(id.try_into().expect("8 bytes"))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(name: &str, fields: &[(&str, i32)]) -> Schema {
        Schema::new(
            name,
            fields.iter().map(|(name, kind)| FieldDescriptor { name: (*name).into(), kind: *kind }).collect(),
        )
    }

    #[test]
    fn schemas_survive_the_member_hop_and_truncations_are_refused() {
        let schemas = vec![schema("employee", &[("name", 16), ("age", 8)]), schema("empty", &[])];
        let mut bytes = Vec::new();
        encode(&schemas, &mut bytes);
        let decoded = decode(&bytes).unwrap();
        assert_eq!(
            decoded.iter().map(Schema::id).collect::<Vec<_>>(),
            schemas.iter().map(|s| s.id()).collect::<Vec<_>>()
        );
        for cut in 1..bytes.len() {
            if let Ok(partial) = decode(&bytes[..cut]) {
                assert_eq!(partial.len(), 1, "only the cut after the first schema decodes (at {cut})");
            }
        }
        let mut ids = Vec::new();
        encode_ids(&decoded, &mut ids);
        assert_eq!(decode_ids(&ids).unwrap(), vec![schemas[0].id(), schemas[1].id()]);
        assert!(decode_ids(&ids[..7]).is_err());
    }

    #[test]
    fn an_answer_waits_for_every_member_or_its_deadline() {
        let (connection, _peer) = ConnectionShared::loopback(1);
        let schemas = Schemas::default();
        let (me, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let id = schemas.put(schema("employee", &[("age", 8)]), me, 2).unwrap();
        assert_eq!(schemas.missing(id, &[me, other]), vec![other]);
        let now = Instant::now();
        let reply_to = |correlation_id| ReplyTo {
            connection: connection.clone(),
            correlation_id,
            response_type: ferrogrid_protocol::codec::ClientSendSchema::TYPE.response(),
        };
        schemas.wait(id, reply_to(7), now);
        assert!(schemas.due(&[me, other], now).is_empty(), "the other member has not acknowledged");
        schemas.acknowledged(&[id], other);
        let answers = schemas.due(&[me, other], now);
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0].1, 7);
        schemas.wait(id, reply_to(8), now);
        let third = Uuid::from_u128(3);
        let late = now + Duration::from_millis(ANSWER_WAIT_MS);
        assert!(schemas.due(&[me, other, third], now).is_empty());
        assert_eq!(schemas.due(&[me, other, third], late).len(), 1, "at the deadline: with whoever has it");
        assert_eq!(schemas.put(schema("another", &[]), me, 1), Err(Full(1)));
        assert_eq!(schemas.put(schema("employee", &[("age", 8)]), other, 1), Ok(id), "a known schema is no new one");
        assert_eq!(schemas.len(), 1);
    }
}
