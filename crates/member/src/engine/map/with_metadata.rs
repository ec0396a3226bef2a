//! `Map.putAllWithMetadata`: a partition's entries with the metadata a `SimpleEntryView`
//! carries, put as a Hazelcast 5.6 member puts them (its `MergeOperation` with the
//! PassThroughMergePolicy). What the entry keeps, checked with `getEntryView` on a 5.6 member:
//!
//! - the value, the creation, last-access and last-update times (whole seconds, as every
//!   entry time is reported), and the expiration time;
//! - a ttl and a max idle only when either is defined (positive and finite); then both are
//!   kept in whole seconds, a non-zero value under a second (-1 included) becoming one second;
//! - the version is the replaced entry's plus one (0 for a new key), the hits the replaced
//!   entry's plus one (0 for a new key): the view's own version, hits, cost and last-stored time
//!   are not read.
//!
//! Each entry publishes a MERGED event, as every merge does. Keys of another partition than the
//! request's are ignored (the protocol's contract).
//!
//! One difference: ferrogrid's entry expires at the earlier of its ttl and its idle deadline, so
//! an entry whose view expires after its own idle deadline (last access + max idle) keeps its
//! view's expiration by a later last-access time.

use crate::clock::NEVER;
use crate::engine::map::entry::Meta;
use crate::engine::map::merge::publish_merged;
use crate::engine::request::{OpError, Reply};
use crate::engine::wide::{Partitions, ShareContext, WideOperation};
use ferrogrid_protocol::codec::EntryView;

/// One entry of the request, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryWithMetadata {
    pub(crate) key: Box<[u8]>,
    pub(crate) value: Box<[u8]>,
    pub(crate) creation_time_ms: i64,
    pub(crate) last_access_time_ms: i64,
    pub(crate) last_update_time_ms: i64,
    pub(crate) expiration_time_ms: i64,
    pub(crate) ttl_ms: i64,
    pub(crate) max_idle_ms: i64,
}

impl EntryWithMetadata {
    pub(crate) fn from_view(view: &EntryView<'_>) -> EntryWithMetadata {
        EntryWithMetadata {
            key: view.key.0.into(),
            value: view.value.0.into(),
            creation_time_ms: view.creation_time,
            last_access_time_ms: view.last_access_time,
            last_update_time_ms: view.last_update_time,
            expiration_time_ms: view.expiration_time,
            ttl_ms: view.ttl,
            max_idle_ms: view.max_idle,
        }
    }

    /// The metadata the entry is stored with, replacing `held` (if any).
    fn meta(&self, held: Option<&Meta>) -> Meta {
        let defined = |ms: i64| ms > 0 && ms != NEVER;
        let expires = defined(self.ttl_ms) || defined(self.max_idle_ms);
        let (ttl_ms, max_idle_ms) =
            if expires { (whole_seconds(self.ttl_ms), whole_seconds(self.max_idle_ms)) } else { (NEVER, NEVER) };
        let ttl_base_ms =
            if ttl_ms == NEVER { self.last_update_time_ms } else { self.expiration_time_ms.saturating_sub(ttl_ms) };
        let last_access_time_ms = if max_idle_ms == NEVER {
            self.last_access_time_ms
        } else {
            self.last_access_time_ms.max(self.expiration_time_ms.saturating_sub(max_idle_ms))
        };
        Meta {
            version: held.map_or(0, |meta| meta.version.wrapping_add(1)),
            creation_time_ms: self.creation_time_ms,
            last_update_time_ms: self.last_update_time_ms,
            last_access_time_ms,
            hits: held.map_or(0, |meta| meta.hits.saturating_add(1)),
            ttl_ms,
            ttl_base_ms,
            max_idle_ms,
        }
    }
}

/// A duration as Hazelcast's expiry metadata keeps it: whole seconds (at least one for a
/// non-zero duration), at most `i32::MAX` seconds; NEVER stays NEVER.
fn whole_seconds(ms: i64) -> i64 {
    if ms == NEVER {
        return NEVER;
    }
    let seconds = if ms != 0 && ms / 1000 <= 0 { 1 } else { ms / 1000 };
    seconds.min(i64::from(i32::MAX)) * 1000
}

/// The request on the owner of `partition` (the request's partition).
#[derive(Debug)]
pub(crate) struct PutAllWithMetadata {
    pub(crate) partition: u16,
    pub(crate) entries: Vec<EntryWithMetadata>,
}

impl WideOperation for PutAllWithMetadata {
    type Partial = ();
    const PARTITIONS: Partitions = Partitions::Owned;

    fn empty(&self) {}

    fn on_share(&self, map: &str, share: &mut ShareContext<'_>, _: &mut ()) {
        let settings = share.settings.get(map);
        for entry in &self.entries {
            let Some((partition_id, local)) = share.local_of(&entry.key) else { continue };
            if partition_id != self.partition || !share.owned.get(local).copied().unwrap_or(false) {
                continue;
            }
            let store = share.partitions[local].map_mut(map, || settings.clone());
            store.expire_if_due(&entry.key, share.now_ms);
            let held = store.get(&entry.key, share.now_ms).map(|held| (held.meta(), held.value().to_vec()));
            let meta = entry.meta(held.as_ref().map(|(meta, _)| meta));
            store.merge_in(&entry.key, &entry.value, &meta);
            share.touch(local);
            let old_value = held.as_ref().map(|(_, value)| &value[..]);
            publish_merged(share, map, partition_id, &entry.key, &entry.value, old_value);
        }
    }

    fn reply<'p>(&'p self, _: &'p mut ()) -> Result<Reply<'p>, OpError> {
        Ok(Reply::Empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(ttl_ms: i64, max_idle_ms: i64) -> EntryWithMetadata {
        EntryWithMetadata {
            key: b"k"[..].into(),
            value: b"v"[..].into(),
            creation_time_ms: 1_000,
            last_access_time_ms: 2_000,
            last_update_time_ms: 3_000,
            expiration_time_ms: 63_500,
            ttl_ms,
            max_idle_ms,
        }
    }

    #[test]
    fn durations_are_whole_seconds_and_kept_only_when_one_is_defined() {
        assert_eq!(whole_seconds(-1), 1_000);
        assert_eq!(whole_seconds(1_999), 1_000);
        assert_eq!(whole_seconds(0), 0);
        assert_eq!(whole_seconds(NEVER), NEVER);
        let meta = entry(60_000, -1).meta(None);
        assert_eq!((meta.ttl_ms, meta.max_idle_ms), (60_000, 1_000));
        assert_eq!(meta.expiration_time_ms(), 63_500, "the view's expiration time");
        let meta = entry(-1, 0).meta(None);
        assert_eq!((meta.ttl_ms, meta.max_idle_ms), (NEVER, NEVER));
        assert!(!meta.expires());
    }

    #[test]
    fn version_and_hits_follow_the_replaced_entry() {
        let new = entry(-1, -1).meta(None);
        assert_eq!((new.version, new.hits, new.creation_time_ms, new.last_update_time_ms), (0, 0, 1_000, 3_000));
        let held = Meta { version: 4, hits: 2, ..new };
        let replacing = entry(-1, -1).meta(Some(&held));
        assert_eq!((replacing.version, replacing.hits), (5, 3));
    }
}
