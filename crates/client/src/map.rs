//! `IMap` operations on serialized keys and values.
//!
//! Keys and values are Data blobs (see [`crate::serialize_string`]); the member compares them
//! byte for byte. Each method encodes its request once and hands it to the invocation layer.
//! Key-based requests carry the key's partition id and go to its owner; `put_all` and
//! `get_all` send one request per partition, concurrently, as the official clients do.
//! Read-only requests (get, contains_key, size, get_all) are retried after a lost connection;
//! writes are not (client-protocol.md §3.4).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{Data, DecodeError, PartitionId};
use tokio::task::JoinSet;

use crate::error::ClientError;
use crate::invocation::{Invocation, Target};
use crate::proxy::{decode, nullable_data, whole_millis};
use crate::shared::{Client, Inner};

/// The thread id sent with key operations (it only matters to locks, which this client does
/// not offer).
const THREAD_ID: i64 = 1;
/// `ttl` meaning "the map's configured default".
const DEFAULT_TTL: i64 = -1;
/// Room for headers and frame headers when sizing a request buffer.
const REQUEST_OVERHEAD_BYTES: usize = 96;

/// A handle on one distributed map. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Map {
    client: Client,
    name: Arc<str>,
}

impl Map {
    pub(crate) fn new(client: Client, name: &str) -> Map {
        Map { client, name: name.into() }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn inner(&self) -> &Arc<Inner> {
        self.client.inner()
    }

    /// The value of `key`, or None.
    pub async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ClientError> {
        let (request, partition) = self.key_request(key, 0, |out, partition| {
            MapGet { thread_id: THREAD_ID, name: &self.name, key: Data(key) }.encode(out, 0, partition, 0)
        });
        let response = self.invoke(request, Target::Partition(partition), true).await?;
        decode(&response, nullable_data)
    }

    /// Sets `key` to `value`; returns the previous value.
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<Option<Vec<u8>>, ClientError> {
        self.put_ttl_ms(key, value, DEFAULT_TTL).await
    }

    /// Sets `key` to `value` for `ttl` (zero: forever; below a millisecond counts as one);
    /// returns the previous value.
    pub async fn put_with_ttl(&self, key: &[u8], value: &[u8], ttl: Duration) -> Result<Option<Vec<u8>>, ClientError> {
        self.put_ttl_ms(key, value, whole_millis(ttl)).await
    }

    async fn put_ttl_ms(&self, key: &[u8], value: &[u8], ttl: i64) -> Result<Option<Vec<u8>>, ClientError> {
        let (request, partition) = self.key_request(key, value.len(), |out, partition| {
            MapPut { thread_id: THREAD_ID, ttl, name: &self.name, key: Data(key), value: Data(value) }
                .encode(out, 0, partition, 0)
        });
        let response = self.invoke(request, Target::Partition(partition), false).await?;
        decode(&response, nullable_data)
    }

    /// Sets `key` to `value` without returning the previous value.
    pub async fn set(&self, key: &[u8], value: &[u8]) -> Result<(), ClientError> {
        let (request, partition) = self.key_request(key, value.len(), |out, partition| {
            MapSet { thread_id: THREAD_ID, ttl: DEFAULT_TTL, name: &self.name, key: Data(key), value: Data(value) }
                .encode(out, 0, partition, 0)
        });
        self.invoke(request, Target::Partition(partition), false).await.map(drop)
    }

    /// Removes `key`; returns the value it had.
    pub async fn remove(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ClientError> {
        let (request, partition) = self.key_request(key, 0, |out, partition| {
            MapRemove { thread_id: THREAD_ID, name: &self.name, key: Data(key) }.encode(out, 0, partition, 0)
        });
        let response = self.invoke(request, Target::Partition(partition), false).await?;
        decode(&response, nullable_data)
    }

    /// Removes `key` without returning its value.
    pub async fn delete(&self, key: &[u8]) -> Result<(), ClientError> {
        let (request, partition) = self.key_request(key, 0, |out, partition| {
            MapDelete { thread_id: THREAD_ID, name: &self.name, key: Data(key) }.encode(out, 0, partition, 0)
        });
        self.invoke(request, Target::Partition(partition), false).await.map(drop)
    }

    pub async fn contains_key(&self, key: &[u8]) -> Result<bool, ClientError> {
        let (request, partition) = self.key_request(key, 0, |out, partition| {
            MapContainsKey { thread_id: THREAD_ID, name: &self.name, key: Data(key) }.encode(out, 0, partition, 0)
        });
        let response = self.invoke(request, Target::Partition(partition), true).await?;
        decode(&response, |message| BoolResponse::decode(message).map(|r| r.response))
    }

    /// Entries in the whole map.
    pub async fn size(&self) -> Result<usize, ClientError> {
        let request = self.map_request(|out| MapSize { name: &self.name }.encode(out, 0, -1, 0));
        let response = self.invoke(request, Target::Any, true).await?;
        let size = decode(&response, |message| IntResponse::decode(message).map(|r| r.response))?;
        usize::try_from(size).map_err(|_| DecodeError::UnexpectedFrame("a non-negative size").into())
    }

    /// Removes every entry.
    pub async fn clear(&self) -> Result<(), ClientError> {
        let request = self.map_request(|out| MapClear { name: &self.name }.encode(out, 0, -1, 0));
        self.invoke(request, Target::Any, false).await.map(drop)
    }

    /// Sets every entry: one request per partition, sent concurrently. On an error some
    /// partitions' entries may have been set.
    pub async fn put_all(&self, entries: Vec<(Vec<u8>, Vec<u8>)>) -> Result<(), ClientError> {
        let mut requests = JoinSet::new();
        for (partition, group) in self.group_by_partition(entries, |(key, _)| key) {
            let pairs = group.iter().map(|(key, value)| (Data(key), Data(value))).collect();
            let size = group.iter().map(|(key, value)| key.len() + value.len() + 12).sum::<usize>();
            let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len() + size);
            MapPutAll { trigger_map_loader: Some(true), name: &self.name, entries: pairs }.encode(
                &mut request,
                0,
                i32::from(partition.0),
                0,
            );
            let (inner, invocation) =
                (self.inner().clone(), Invocation::new(request, Target::Partition(partition), false));
            requests.spawn(async move { inner.invoke(&invocation).await });
        }
        while let Some(joined) = requests.join_next().await {
            joined.expect("invocation tasks do not panic")?;
        }
        Ok(())
    }

    /// The entries of the keys that exist: one request per partition, sent concurrently.
    pub async fn get_all(&self, keys: &[Vec<u8>]) -> Result<Vec<(Vec<u8>, Vec<u8>)>, ClientError> {
        let mut requests = JoinSet::new();
        for (partition, group) in self.group_by_partition(keys.iter().collect(), |key| key) {
            let size = group.iter().map(|key| key.len() + 6).sum::<usize>();
            let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len() + size);
            let keys = group.iter().map(|key| Data(key)).collect();
            MapGetAll { name: &self.name, keys }.encode(&mut request, 0, i32::from(partition.0), 0);
            let (inner, invocation) =
                (self.inner().clone(), Invocation::new(request, Target::Partition(partition), true));
            requests.spawn(async move { inner.invoke(&invocation).await });
        }
        let mut entries = Vec::with_capacity(keys.len());
        while let Some(joined) = requests.join_next().await {
            let response = joined.expect("invocation tasks do not panic")?;
            decode(&response, |message| {
                let found = EntryListResponse::decode(message)?.response;
                entries.extend(found.into_iter().map(|(key, value)| (key.0.to_vec(), value.0.to_vec())));
                Ok(())
            })?;
        }
        Ok(entries)
    }

    /// Adds an index on `attributes` (`Map.AddIndex`; sorted, or else hash), which every member
    /// builds over the entries it holds.
    pub async fn add_index(&self, sorted: bool, attributes: &[&str]) -> Result<(), ClientError> {
        let index = IndexConfig {
            index_type: if sorted { 0 } else { 1 },
            name: None,
            attributes: attributes.to_vec(),
            bitmap: None,
        };
        let request = self.map_request(|out| MapAddIndex { name: &self.name, index }.encode(out, 0, -1, 0));
        self.invoke(request, Target::Any, false).await.map(drop)
    }

    /// The first `page_size` entries matching `predicate` (a Data blob) in the natural order
    /// of their keys: the first page of a paging predicate with no comparator
    /// (`entrySet(PagingPredicate)`).
    pub async fn entries_page(
        &self,
        predicate: &[u8],
        page_size: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, ClientError> {
        let page_size = i32::try_from(page_size)
            .map_err(|_| ClientError::Config(format!("page size {page_size} above i32::MAX")))?;
        let holder = PagingPredicateHolder {
            page_size,
            page: 0,
            iteration_type: 2,
            anchors: AnchorList::default(),
            predicate: Some(Data(predicate)),
            comparator: None,
            partition_key: None,
            partition_keys: None,
        };
        let request = self.map_request(|out| {
            MapEntriesWithPagingPredicate { name: &self.name, predicate: holder }.encode(out, 0, -1, 0)
        });
        let response = self.invoke(request, Target::Any, true).await?;
        decode(&response, |message| {
            let page = EntryListPageResponse::decode(message)?.response;
            Ok(page.into_iter().map(|(key, value)| (key.0.to_vec(), value.0.to_vec())).collect())
        })
    }

    /// Encodes a key-based request with `encode(out, partition_id)`; returns it and the key's
    /// partition.
    fn key_request(
        &self,
        key: &[u8],
        value_bytes: usize,
        encode: impl FnOnce(&mut Vec<u8>, i32) -> usize,
    ) -> (Vec<u8>, PartitionId) {
        let partition = self.inner().partition_of(key);
        let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len() + key.len() + value_bytes);
        encode(&mut request, i32::from(partition.0));
        (request, partition)
    }

    fn map_request(&self, encode: impl FnOnce(&mut Vec<u8>) -> usize) -> Vec<u8> {
        let mut request = Vec::with_capacity(REQUEST_OVERHEAD_BYTES + self.name.len());
        encode(&mut request);
        request
    }

    async fn invoke(&self, request: Vec<u8>, target: Target, read_only: bool) -> Result<Vec<u8>, ClientError> {
        self.inner().invoke(&Invocation::new(request, target, read_only)).await
    }

    /// Groups items by the partition of the key `key_of` finds in each.
    fn group_by_partition<T>(&self, items: Vec<T>, key_of: impl Fn(&T) -> &[u8]) -> HashMap<PartitionId, Vec<T>> {
        let mut groups: HashMap<PartitionId, Vec<T>> = HashMap::new();
        for item in items {
            let partition = self.inner().partition_of(key_of(&item));
            groups.entry(partition).or_default().push(item);
        }
        groups
    }
}
