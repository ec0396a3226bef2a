//! Every structure whose objects live in partitions, one line each ([`with_structures`]): the
//! one place a structure is registered. Its line names
//!
//! - its kind and the kind's code in member records (BACKUP, SNAPSHOT; never reused),
//! - Hazelcast's service name for it (CreateProxy, DestroyProxy, the object listing),
//! - its label in metrics, and whether every member holds every partition's copy
//!   (`Everywhere`: replicated maps) or only the partition's replicas (`Replicas`),
//! - the store its objects keep in a partition (`engine/<folder>/store.rs`, a
//!   `PartitionObject`: `partition/object.rs`),
//! - its rows of the operation table (`engine/<folder>/rows.rs`: each row decodes its typed
//!   request, which the structure's `Execute` impl runs), and
//! - what destroys one of its objects everywhere (a `fn(ObjectKind) -> WideRequest`).
//!
//! The line is read where each part is needed: [`ObjectKind`] here, the partition's `Object`
//! enum in `partition/objects.rs`, the operation table in `route/operations.rs`, destroy in
//! `route/fanout.rs`. Paths are relative to `engine/`.
//!
//! Services with no objects in partitions (topics, PN counters, flake id generators) are
//! `cluster::peer::Service`'s other variants, with their rows in `route/operations.rs`.

/// Calls the macro `$expand` with the table of structures (see the module's documentation).
/// Map comes first: its key rows are the table's first rows (their indexes are per-map
/// counter slots).
macro_rules! with_structures {
    ($expand:path) => {
        $expand! {
            Map = 1, "hz:impl:mapService", "map", Replicas:
                map::store::RecordStore, [map::rows::KEY_ROWS, map::wide_rows::WIDE_ROWS, map::txn_rows::ROWS, map::query_cache_rows::ROWS], map::wide::destroy;
            Queue = 2, "hz:impl:queueService", "queue", Replicas:
                queue::store::QueueStore, [queue::rows::ROWS], queue::rows::destroy;
            Ringbuffer = 3, "hz:impl:ringbufferService", "ringbuffer", Replicas:
                ringbuffer::store::RingbufferStore, [ringbuffer::rows::ROWS], ringbuffer::rows::destroy;
            List = 4, "hz:impl:listService", "list", Replicas:
                collection::store::CollectionStore, [collection::rows::LIST_ROWS], collection::rows::destroy;
            Set = 5, "hz:impl:setService", "set", Replicas:
                collection::store::CollectionStore, [collection::rows::SET_ROWS], collection::rows::destroy;
            MultiMap = 6, "hz:impl:multiMapService", "multimap", Replicas:
                multimap::store::MultiMapStore, [multimap::rows::ROWS, multimap::txn_rows::ROWS], multimap::rows::destroy;
            ReplicatedMap = 7, "hz:impl:replicatedMapService", "replicatedmap", Everywhere:
                replicated_map::store::ReplicatedMapStore, [replicated_map::rows::ROWS], replicated_map::rows::destroy;
            CardinalityEstimator = 8, "hz:impl:cardinalityEstimatorService", "cardinalityestimator", Replicas:
                cardinality_estimator::store::CardinalityEstimatorStore, [cardinality_estimator::rows::ROWS], cardinality_estimator::rows::destroy;
            Cache = 9, "hz:impl:cacheService", "cache", Replicas:
                cache::store::CacheStore, [cache::rows::ROWS], cache::rows::destroy;
        }
    };
}

pub(crate) use with_structures;

/// Who holds a structure's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// The partition's replicas: its owner and backups (backed up, migrated, dropped with the
    /// replica).
    Replicas,
    /// Every member holds every partition's copy, and the structure replicates itself: a
    /// partition's backups, snapshots and the dropping of a replica leave its objects alone.
    Everywhere,
}

/// Makes [`ObjectKind`] from the table.
macro_rules! object_kinds {
    ($($kind:ident = $code:literal, $service:literal, $label:literal, $held:ident:
        $($store:ident)::+, [$($($rows:ident)::+),+], $($destroy:ident)::+;)+) => {
        /// What kind of object a partition holds (which service's): half of its key in the
        /// partition, and its code in BACKUP and SNAPSHOT records.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub(crate) enum ObjectKind {
            $($kind = $code,)+
            /// The test double `partition::probe`.
            #[cfg(test)]
            Probe = 0x7F,
        }

        impl ObjectKind {
            /// Every kind (the test double aside).
            pub(crate) const ALL: &'static [ObjectKind] = &[$(ObjectKind::$kind,)+];

            pub(crate) fn code(self) -> u8 {
                self as u8
            }

            pub(crate) fn from_code(code: u8) -> Option<ObjectKind> {
                match code {
                    $($code => Some(ObjectKind::$kind),)+
                    #[cfg(test)]
                    0x7F => Some(ObjectKind::Probe),
                    _ => None,
                }
            }

            /// The Hazelcast service name of this kind's objects.
            pub(crate) fn service_name(self) -> &'static str {
                match self {
                    $(ObjectKind::$kind => $service,)+
                    #[cfg(test)]
                    ObjectKind::Probe => "ferrogrid:test:probe",
                }
            }

            /// The kind's name in metrics.
            pub(crate) fn label(self) -> &'static str {
                match self {
                    $(ObjectKind::$kind => $label,)+
                    #[cfg(test)]
                    ObjectKind::Probe => "probe",
                }
            }

            /// Who holds this kind's objects.
            pub(crate) fn held(self) -> Held {
                match self {
                    $(ObjectKind::$kind => Held::$held,)+
                    #[cfg(test)]
                    ObjectKind::Probe => Held::Replicas,
                }
            }

            /// Whether every member holds every partition's copy of this kind's objects.
            pub(crate) fn is_everywhere(self) -> bool {
                self.held() == Held::Everywhere
            }
        }
    };
}

with_structures!(object_kinds);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_service_names_are_unique_and_read_back() {
        let mut codes: Vec<u8> = ObjectKind::ALL.iter().map(|kind| kind.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ObjectKind::ALL.len());
        for kind in ObjectKind::ALL {
            assert_eq!(ObjectKind::from_code(kind.code()), Some(*kind));
            let same_name = ObjectKind::ALL.iter().filter(|other| other.service_name() == kind.service_name());
            assert_eq!(same_name.count(), 1, "{kind:?}");
        }
        assert_eq!(ObjectKind::from_code(0), None);
        assert!(ObjectKind::ReplicatedMap.is_everywhere() && !ObjectKind::Map.is_everywhere());
    }
}
