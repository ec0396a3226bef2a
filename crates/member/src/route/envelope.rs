//! Envelopes of requests on their way to the thread or member that runs them.
//!
//! A request travels as the bytes its client sent, parsed once by whoever runs it; what the
//! bytes do not say (whose request it is, its tenant, the correlation id to answer under)
//! travels beside them in a typed header, never patched into the bytes.

use ferrogrid_protocol::Uuid;

/// What the bytes of a handed-over request do not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handoff {
    /// Length of the request's bytes in [`Handoffs::bytes`].
    pub length: u32,
    /// The client the request came from (owner of its locks, source of its events).
    pub source: Uuid,
    pub tenant: u16,
    /// The id to answer under (a forwarded request is answered under the link's id).
    pub correlation_id: i64,
}

/// Requests of one connection that one reactor hands another, cut from one read batch: their
/// bytes back to back (copied once out of the read buffer) and a header for each.
#[derive(Debug, Default)]
pub struct Handoffs {
    pub bytes: Vec<u8>,
    pub requests: Vec<Handoff>,
}

impl Handoffs {
    pub fn push(&mut self, request: &[u8], source: Uuid, tenant: u16, correlation_id: i64) {
        let length = u32::try_from(request.len()).expect("messages are bounded by max-message-bytes");
        self.bytes.extend_from_slice(request);
        self.requests.push(Handoff { length, source, tenant, correlation_id });
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Each request's header with its bytes, in the order they were pushed.
    pub fn iter(&self) -> impl Iterator<Item = (Handoff, &[u8])> {
        let mut offset = 0usize;
        self.requests.iter().map(move |handoff| {
            let bytes = &self.bytes[offset..offset + handoff.length as usize];
            offset += handoff.length as usize;
            (*handoff, bytes)
        })
    }
}

/// A client's partition request forwarded to the member that owns the partition: the client's
/// uuid, then the request's bytes. It is answered under the forwarding message's correlation id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forward<'a> {
    pub source: Uuid,
    pub request: &'a [u8],
}

impl<'a> Forward<'a> {
    pub fn encode(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(16 + self.request.len());
        payload.extend_from_slice(&self.source.as_u128().to_le_bytes());
        payload.extend_from_slice(self.request);
        payload
    }

    pub fn decode(payload: &'a [u8]) -> Result<Forward<'a>, String> {
        if payload.len() < 16 {
            return Err(format!("forwarded request of {} bytes: no client uuid", payload.len()));
        }
        let (uuid, request) = payload.split_at(16);
        let source = Uuid::from_u128(u128::from_le_bytes(uuid.try_into().expect("16 bytes")));
        Ok(Forward { source, request })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handoffs_keep_each_request_with_its_header() {
        let mut batch = Handoffs::default();
        assert!(batch.is_empty());
        batch.push(b"first", Uuid::from_u128(1), 0, 10);
        batch.push(b"", Uuid::from_u128(2), 3, 11);
        batch.push(b"third!", Uuid::from_u128(3), 1, -12);
        let items: Vec<(Handoff, &[u8])> = batch.iter().collect();
        assert_eq!(items.len(), 3);
        assert_eq!((items[0].1, items[0].0.correlation_id), (&b"first"[..], 10));
        assert_eq!((items[1].1, items[1].0.tenant), (&b""[..], 3));
        assert_eq!((items[2].1, items[2].0.source), (&b"third!"[..], Uuid::from_u128(3)));
    }

    #[test]
    fn a_forward_round_trips_and_a_short_one_is_refused() {
        let forward = Forward { source: Uuid::from_u128(7 << 90), request: b"request" };
        let payload = forward.encode();
        assert_eq!(Forward::decode(&payload).unwrap(), forward);
        assert!(Forward::decode(&payload[..15]).is_err());
        assert_eq!(Forward::decode(&payload[..16]).unwrap().request, b"");
    }
}
