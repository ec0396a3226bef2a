//! `IQueue` operations on serialized items.
//!
//! Items are Data blobs (see [`crate::serialize_bytes`]). Every request goes to the owner of
//! the partition of the queue's name, as the official clients send them (see
//! [`crate::Client::partition_of_name`]). Offers and polls change the queue and are not sent
//! again after a lost connection (client-protocol.md §3.4); `size` is.

use std::sync::Arc;
use std::time::Duration;

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{Data, DecodeError, PartitionId};
use tokio::time::Instant;

use crate::error::ClientError;
use crate::invocation::{Invocation, Target};
use crate::proxy::{decode, nullable_data, whole_millis};
use crate::shared::{Client, Inner};

/// Room for headers and frame headers when sizing a request buffer.
const REQUEST_OVERHEAD_BYTES: usize = 96;
/// Longest wait a timed offer or poll adds to the invocation deadline.
const MAX_WAIT: Duration = Duration::from_secs(30 * 24 * 3600);

/// A handle on one distributed queue. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Queue {
    client: Client,
    name: Arc<str>,
    /// The partition of the name: every request goes there.
    partition: PartitionId,
}

impl Queue {
    pub(crate) fn new(client: Client, name: &str) -> Queue {
        let partition = client.partition_of_name(name);
        Queue { client, name: name.into(), partition }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The partition that holds the queue.
    pub fn partition(&self) -> PartitionId {
        self.partition
    }

    fn inner(&self) -> &Arc<Inner> {
        self.client.inner()
    }

    /// Adds `item` at the tail if there is room now; false if the queue is full.
    pub async fn offer(&self, item: &[u8]) -> Result<bool, ClientError> {
        self.offer_with_timeout(item, Duration::ZERO).await
    }

    /// Adds `item` at the tail, waiting up to `timeout` for room; false if there was none.
    pub async fn offer_with_timeout(&self, item: &[u8], timeout: Duration) -> Result<bool, ClientError> {
        let timeout_millis = whole_millis(timeout);
        let request = self.request(item.len(), |out, partition| {
            QueueOffer { timeout_millis, name: &self.name, value: Data(item) }.encode(out, 0, partition, 0)
        });
        let response = self.invoke_waiting(request, false, timeout).await?;
        decode(&response, |message| BoolResponse::decode(message).map(|r| r.response))
    }

    /// Removes and returns the head, or None if the queue is empty now.
    pub async fn poll(&self) -> Result<Option<Vec<u8>>, ClientError> {
        self.poll_with_timeout(Duration::ZERO).await
    }

    /// Removes and returns the head, waiting up to `timeout` for an item; None if none came.
    /// The invocation may take `timeout` longer than the client's invocation timeout.
    pub async fn poll_with_timeout(&self, timeout: Duration) -> Result<Option<Vec<u8>>, ClientError> {
        let timeout_millis = whole_millis(timeout);
        let request = self
            .request(0, |out, partition| QueuePoll { timeout_millis, name: &self.name }.encode(out, 0, partition, 0));
        let response = self.invoke_waiting(request, false, timeout).await?;
        decode(&response, nullable_data)
    }

    /// Items in the queue.
    pub async fn size(&self) -> Result<usize, ClientError> {
        let request = self.request(0, |out, partition| QueueSize { name: &self.name }.encode(out, 0, partition, 0));
        let response = self.invoke_waiting(request, true, Duration::ZERO).await?;
        let size = decode(&response, |message| IntResponse::decode(message).map(|r| r.response))?;
        usize::try_from(size).map_err(|_| DecodeError::UnexpectedFrame("a non-negative size").into())
    }

    /// Removes every item.
    pub async fn clear(&self) -> Result<(), ClientError> {
        let request = self.request(0, |out, partition| QueueClear { name: &self.name }.encode(out, 0, partition, 0));
        self.invoke_waiting(request, false, Duration::ZERO).await.map(drop)
    }

    fn request(&self, item_bytes: usize, encode: impl FnOnce(&mut Vec<u8>, i32) -> usize) -> Vec<u8> {
        let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len() + item_bytes);
        encode(&mut request, i32::from(self.partition.0));
        request
    }

    /// Sends `request` to the queue's partition; the member may hold it for `wait` (a timed
    /// offer or poll), so the deadline is the invocation timeout plus `wait`.
    async fn invoke_waiting(&self, request: Vec<u8>, read_only: bool, wait: Duration) -> Result<Vec<u8>, ClientError> {
        let invocation = Invocation::new(request, Target::Partition(self.partition), read_only);
        let deadline = Instant::now() + self.inner().config.invocation_timeout + wait.min(MAX_WAIT);
        self.inner().invoke_until(&invocation, deadline).await
    }
}
