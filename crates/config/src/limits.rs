//! Every bound the member enforces on frames, messages, buffers, queues and connections.
//!
//! The defaults are generous for a trusted network; `Limits::validate` keeps them nonzero and
//! mutually consistent (a frame never larger than a message, the unauthenticated bound never larger
//! than the general one, a snapshot chunk at most half a frame).

use crate::error::{invalid, ConfigError};

const MEBIBYTE: u32 = 1024 * 1024;

/// Smallest accepted `max_unauthenticated_message_bytes`: an authentication request with a
/// cluster name, credentials and client metadata must fit.
pub const MIN_UNAUTHENTICATED_MESSAGE_BYTES: u32 = 1024;

/// Smallest accepted `max_frame_bytes`, so that any real message header fits in one frame.
pub const MIN_FRAME_BYTES: u32 = 1024;

/// Largest accepted `max_frame_bytes`: the frame length on the wire is a signed 32-bit integer.
pub const MAX_FRAME_BYTES: u32 = i32::MAX as u32;

/// Resource bounds. All are per member unless the field says otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest accepted frame, header included; longer is a protocol error and closes the
    /// connection. `ferrogrid.limits.max-frame-bytes`, default 64 MiB, in
    /// `MIN_FRAME_BYTES..=MAX_FRAME_BYTES` and at most `max_message_bytes`.
    pub max_frame_bytes: u32,
    /// Longest accepted message, all its frames and fragments together.
    /// `ferrogrid.limits.max-message-bytes`, default 256 MiB.
    pub max_message_bytes: u32,
    /// Longest message accepted before a connection has authenticated.
    /// `hazelcast.properties."hazelcast.client.protocol.max.message.bytes"`, default 4096,
    /// in `MIN_UNAUTHENTICATED_MESSAGE_BYTES..=max_message_bytes`.
    pub max_unauthenticated_message_bytes: u32,
    /// Outbound bytes pending on one connection before the member stops reading from it; on a
    /// link to another member, before the member stops reading its clients.
    /// `ferrogrid.limits.connection-write-buffer-bytes`, default 64 MiB, nonzero.
    pub connection_write_buffer_bytes: u32,
    /// Open client connections accepted at once. `ferrogrid.limits.max-connections`,
    /// default 10 000, nonzero.
    pub max_connections: u32,
    /// Capacity of each reactor's inbound hand-off queue.
    /// `ferrogrid.limits.reactor-queue-capacity`, default 65 536, nonzero.
    pub reactor_queue_capacity: u32,
    /// Fragmented messages being reassembled at once on one connection.
    /// `ferrogrid.limits.max-pending-fragmented-messages`, default 64, nonzero.
    pub max_pending_fragmented_messages: u32,
    /// Requests of one connection handed to other reactors and not yet answered; past it the
    /// member reads no more from that connection until answers go out.
    /// `ferrogrid.limits.max-in-flight-per-connection`, default 1 024, nonzero.
    pub max_in_flight_per_connection: u32,
    /// Requests cut from one connection in one turn before the reactor serves its other ready
    /// connections, so a client with one request waits behind a slice of a deep pipeline, not
    /// behind all of it. `ferrogrid.limits.requests-per-turn`, default 256, nonzero.
    pub requests_per_turn: u32,
    /// Socket reads from one connection in one turn, for the same fairness when requests are
    /// large. `ferrogrid.limits.reads-per-turn`, default 16, nonzero.
    pub reads_per_turn: u32,
    /// Requests that may wait for one key's lock; more are refused with an error rather than
    /// queued without bound. `ferrogrid.limits.max-parked-per-key`, default 4 096, nonzero.
    pub max_parked_per_key: u32,
    /// Rows one SQL statement may hold on its coordinating member (entries scanned, joined or
    /// grouped); a statement that needs more fails with a data error naming this bound.
    /// `ferrogrid.limits.max-sql-rows-per-query`, default 1 000 000, nonzero.
    pub max_sql_rows_per_query: u32,
    /// Bytes of entries (keys and values) one SQL statement may hold on its coordinating
    /// member while it runs (the entries whose rows passed its WHERE, or every entry of a
    /// joined source); a statement that needs more fails with a data error naming this bound.
    /// With `max-sql-rows-per-query`, what bounds a running query's memory.
    /// `ferrogrid.limits.max-sql-bytes-per-query`, default 512 MiB, nonzero.
    pub max_sql_bytes_per_query: u32,
    /// Open SQL cursors (queries with rows not yet fetched) one client connection may hold;
    /// another query fails until one is closed or read to its end.
    /// `ferrogrid.limits.max-sql-cursors-per-connection`, default 1 024, nonzero.
    pub max_sql_cursors_per_connection: u32,
    /// Entries each reactor's expiry sweep examines per run (every 100 ms), which bounds the
    /// pause a sweep adds to the requests behind it. `ferrogrid.limits.expiry-sweep-entries`,
    /// default 2 000, nonzero.
    pub expiry_sweep_entries: u32,
    /// Bytes at which a partition snapshot sent to a new replica is cut into another chunk.
    /// `ferrogrid.limits.snapshot-chunk-bytes`, default 512 KiB, in `1..=max_frame_bytes / 2`:
    /// a chunk travels as one frame of a member message, and since entries are never split it
    /// is closed only after it reached its bound, so it may run past it by its last entry; half a
    /// frame of room holds the message headers (under 100 bytes) and an entry up to that size.
    pub snapshot_chunk_bytes: u32,
    /// Link and membership events the reactors may queue for the cluster thread. Reactors never
    /// wait on it: past it a membership message is dropped (and logged) and a new link is
    /// refused. `ferrogrid.limits.cluster-event-queue`, default 65 536, nonzero.
    pub cluster_event_queue: u32,
    /// Outbound bytes a listening connection may have waiting (unsent on its socket plus events
    /// gathered for it) before further entry events for it are dropped and counted, as
    /// Hazelcast drops events past its event queue capacity: a client that does not read its
    /// events cannot grow the member's memory without bound. Responses are never dropped.
    /// `ferrogrid.limits.listener-event-queue-bytes`, default 16 MiB, nonzero.
    pub listener_event_queue_bytes: u32,
    /// PN counters each reactor sends each other replica per CRDT replication period
    /// (`hazelcast.crdt-replication.replication-period-millis`); the next period goes on where
    /// this one stopped, so many counters are exchanged over several periods instead of in one
    /// burst. `ferrogrid.limits.crdt-replication-batch`, default 4 096, nonzero.
    pub crdt_replication_batch: u32,
    /// Flake id generators one member keeps state for (their last issued value; a destroyed
    /// one that ran ahead of the clock counts until the clock passes it): a request naming
    /// another is refused with an error. `ferrogrid.limits.max-flake-id-generators`, default
    /// 10 000, nonzero.
    pub max_flake_id_generators: u32,
    /// Compact schemas the cluster keeps (every member holds all of them): a client's schema
    /// beyond them is refused with an error. `ferrogrid.limits.max-schemas`, default 10 000,
    /// nonzero.
    pub max_schemas: u32,
    /// Configurations added while the cluster runs (`DynamicConfig.add*Config`, every kind
    /// together; every member keeps all of them): one more is refused with an error.
    /// `ferrogrid.limits.max-dynamic-configs`, default 10 000, nonzero.
    pub max_dynamic_configs: u32,
    /// Open transactions of one client connection; one more is refused with
    /// TransactionException. `ferrogrid.limits.max-transactions-per-connection`, default 64,
    /// nonzero, at most `max_transactions`.
    pub max_transactions_per_connection: u32,
    /// Open transactions this member coordinates; also, each apart, the TWO_PHASE logs it
    /// holds for other members and the XA transactions other members prepared.
    /// `ferrogrid.limits.max-transactions`, default 10 000, nonzero.
    pub max_transactions: u32,
    /// Transactional writes (and getForUpdate locks; a queue's offer, poll and take, a list's
    /// or set's add and remove) one transaction may log; one more is refused with
    /// TransactionException. `ferrogrid.limits.max-transaction-log-entries`,
    /// default 10 000, nonzero.
    pub max_transaction_log_entries: u32,
    /// Query caches (`IMap.getQueryCache`) this member publishes events for, every map
    /// together; another publisherCreate is refused with an error.
    /// `ferrogrid.limits.max-query-caches`, default 1 000, nonzero.
    pub max_query_caches: u32,
    /// Events a query cache's publisher keeps per partition (its `buffer-size`, for
    /// setReadCursor and for events not yet sent): a cache's larger buffer size is cut to it.
    /// `ferrogrid.limits.query-cache-buffer-events`, default 65 536, nonzero.
    pub query_cache_buffer_events: u32,
    /// Timeout of a transaction created without one (Hazelcast's default: 2 minutes).
    /// `ferrogrid.limits.transaction-default-timeout-millis`, default 120 000, nonzero, at most
    /// `transaction_max_timeout_millis`.
    pub transaction_default_timeout_millis: u32,
    /// Longest timeout a transaction may ask for (longer is refused with
    /// IllegalArgumentException); also how long a transaction's key lock outlives a coordinator
    /// that never ends it. `ferrogrid.limits.transaction-max-timeout-millis`, default 600 000,
    /// nonzero.
    pub transaction_max_timeout_millis: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_frame_bytes: 64 * MEBIBYTE,
            max_message_bytes: 256 * MEBIBYTE,
            max_unauthenticated_message_bytes: 4096,
            connection_write_buffer_bytes: 64 * MEBIBYTE,
            max_connections: 10_000,
            reactor_queue_capacity: 65_536,
            max_pending_fragmented_messages: 64,
            max_in_flight_per_connection: 1024,
            requests_per_turn: 256,
            reads_per_turn: 16,
            max_parked_per_key: 4096,
            max_sql_rows_per_query: 1_000_000,
            max_sql_bytes_per_query: 512 * MEBIBYTE,
            max_sql_cursors_per_connection: 1024,
            expiry_sweep_entries: 2_000,
            snapshot_chunk_bytes: 512 * 1024,
            cluster_event_queue: 65_536,
            listener_event_queue_bytes: 16 * MEBIBYTE,
            crdt_replication_batch: 4096,
            max_flake_id_generators: 10_000,
            max_schemas: 10_000,
            max_dynamic_configs: 10_000,
            max_transactions_per_connection: 64,
            max_transactions: 10_000,
            max_transaction_log_entries: 10_000,
            max_query_caches: 1_000,
            query_cache_buffer_events: 65_536,
            transaction_default_timeout_millis: 120_000,
            transaction_max_timeout_millis: 600_000,
        }
    }
}

impl Limits {
    /// The transaction bounds that depend on each other (each is nonzero already).
    fn validate_transactions(&self) -> Result<(), ConfigError> {
        if self.max_transactions_per_connection > self.max_transactions {
            let expected = format!(
                "expected at most max-transactions ({}), got {}",
                self.max_transactions, self.max_transactions_per_connection
            );
            return Err(invalid("ferrogrid.limits.max-transactions-per-connection", expected));
        }
        if self.transaction_default_timeout_millis > self.transaction_max_timeout_millis {
            let expected = format!(
                "expected at most transaction-max-timeout-millis ({}), got {}",
                self.transaction_max_timeout_millis, self.transaction_default_timeout_millis
            );
            return Err(invalid("ferrogrid.limits.transaction-default-timeout-millis", expected));
        }
        Ok(())
    }

    /// Checks every bound documented on the fields.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let nonzero = [
            ("max-message-bytes", self.max_message_bytes),
            ("connection-write-buffer-bytes", self.connection_write_buffer_bytes),
            ("max-connections", self.max_connections),
            ("reactor-queue-capacity", self.reactor_queue_capacity),
            ("max-pending-fragmented-messages", self.max_pending_fragmented_messages),
            ("max-in-flight-per-connection", self.max_in_flight_per_connection),
            ("requests-per-turn", self.requests_per_turn),
            ("reads-per-turn", self.reads_per_turn),
            ("max-parked-per-key", self.max_parked_per_key),
            ("max-sql-rows-per-query", self.max_sql_rows_per_query),
            ("max-sql-bytes-per-query", self.max_sql_bytes_per_query),
            ("max-sql-cursors-per-connection", self.max_sql_cursors_per_connection),
            ("expiry-sweep-entries", self.expiry_sweep_entries),
            ("snapshot-chunk-bytes", self.snapshot_chunk_bytes),
            ("cluster-event-queue", self.cluster_event_queue),
            ("listener-event-queue-bytes", self.listener_event_queue_bytes),
            ("crdt-replication-batch", self.crdt_replication_batch),
            ("max-flake-id-generators", self.max_flake_id_generators),
            ("max-schemas", self.max_schemas),
            ("max-dynamic-configs", self.max_dynamic_configs),
            ("max-transactions-per-connection", self.max_transactions_per_connection),
            ("max-transactions", self.max_transactions),
            ("max-transaction-log-entries", self.max_transaction_log_entries),
            ("max-query-caches", self.max_query_caches),
            ("query-cache-buffer-events", self.query_cache_buffer_events),
            ("transaction-default-timeout-millis", self.transaction_default_timeout_millis),
            ("transaction-max-timeout-millis", self.transaction_max_timeout_millis),
        ];
        if let Some((name, _)) = nonzero.iter().find(|(_, value)| *value == 0) {
            let key = format!("ferrogrid.limits.{name}");
            return Err(invalid(key, "expected at least 1, got 0"));
        }
        self.validate_transactions()?;
        let (frame, message) = (self.max_frame_bytes, self.max_message_bytes);
        let frame_key = "ferrogrid.limits.max-frame-bytes";
        if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&frame) {
            let expected = format!("expected {MIN_FRAME_BYTES}..={MAX_FRAME_BYTES}, got {frame}");
            return Err(invalid(frame_key, expected));
        }
        if frame > message {
            let expected = format!("expected at most max-message-bytes ({message}), got {frame}");
            return Err(invalid(frame_key, expected));
        }
        let (chunk, chunk_limit) = (self.snapshot_chunk_bytes, frame / 2);
        if chunk > chunk_limit {
            let expected = format!(
                "expected at most half of max-frame-bytes ({chunk_limit}): a chunk is one frame and may run past \
                 this bound by its last entry, got {chunk}"
            );
            return Err(invalid("ferrogrid.limits.snapshot-chunk-bytes", expected));
        }
        let unauthenticated = self.max_unauthenticated_message_bytes;
        let minimum = MIN_UNAUTHENTICATED_MESSAGE_BYTES;
        if !(minimum..=message).contains(&unauthenticated) {
            let key = "hazelcast.properties.hazelcast.client.protocol.max.message.bytes";
            let expected =
                format!("expected {minimum}..={message} (ferrogrid.limits.max-message-bytes), got {unauthenticated}");
            return Err(invalid(key, expected));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid_key(limits: &Limits) -> String {
        match limits.validate() {
            Err(ConfigError::InvalidValue { key, .. }) => key,
            other => panic!("expected InvalidValue for {limits:?}, got {other:?}"),
        }
    }

    #[test]
    fn each_bound_rejects_zero_under_its_own_key() {
        type Field = fn(&mut Limits) -> &mut u32;
        let fields: [(&str, Field); 16] = [
            ("requests-per-turn", |limits| &mut limits.requests_per_turn),
            ("reads-per-turn", |limits| &mut limits.reads_per_turn),
            ("max-parked-per-key", |limits| &mut limits.max_parked_per_key),
            ("expiry-sweep-entries", |limits| &mut limits.expiry_sweep_entries),
            ("snapshot-chunk-bytes", |limits| &mut limits.snapshot_chunk_bytes),
            ("cluster-event-queue", |limits| &mut limits.cluster_event_queue),
            ("listener-event-queue-bytes", |limits| &mut limits.listener_event_queue_bytes),
            ("crdt-replication-batch", |limits| &mut limits.crdt_replication_batch),
            ("max-flake-id-generators", |limits| &mut limits.max_flake_id_generators),
            ("max-schemas", |limits| &mut limits.max_schemas),
            ("max-dynamic-configs", |limits| &mut limits.max_dynamic_configs),
            ("max-transactions", |limits| &mut limits.max_transactions),
            ("max-transaction-log-entries", |limits| &mut limits.max_transaction_log_entries),
            ("max-query-caches", |limits| &mut limits.max_query_caches),
            ("query-cache-buffer-events", |limits| &mut limits.query_cache_buffer_events),
            ("transaction-max-timeout-millis", |limits| &mut limits.transaction_max_timeout_millis),
        ];
        for (name, field) in fields {
            // (the bounds that must stay below others at 1 too)
            let mut limits = Limits {
                max_transactions_per_connection: 1,
                transaction_default_timeout_millis: 1,
                ..Limits::default()
            };
            *field(&mut limits) = 1;
            limits.validate().unwrap_or_else(|error| panic!("{name}: 1 must be accepted, got {error}"));
            *field(&mut limits) = 0;
            assert_eq!(invalid_key(&limits), format!("ferrogrid.limits.{name}"));
        }
    }

    #[test]
    fn defaults_are_the_bounds_the_member_had_in_code() {
        let limits = Limits::default();
        assert_eq!((limits.requests_per_turn, limits.reads_per_turn), (256, 16));
        assert_eq!((limits.max_parked_per_key, limits.expiry_sweep_entries), (4096, 2_000));
        assert_eq!((limits.snapshot_chunk_bytes, limits.cluster_event_queue), (512 << 10, 65_536));
        assert_eq!(limits.listener_event_queue_bytes, 16 << 20);
        assert_eq!(limits.max_flake_id_generators, 10_000);
        limits.validate().unwrap();
    }

    #[test]
    fn transaction_bounds_are_consistent() {
        let mut limits = Limits { max_transactions: 10, max_transactions_per_connection: 11, ..Limits::default() };
        assert_eq!(invalid_key(&limits), "ferrogrid.limits.max-transactions-per-connection");
        limits.max_transactions_per_connection = 10;
        limits.validate().unwrap();
        limits.transaction_default_timeout_millis = limits.transaction_max_timeout_millis + 1;
        assert_eq!(invalid_key(&limits), "ferrogrid.limits.transaction-default-timeout-millis");
    }

    #[test]
    fn snapshot_chunk_leaves_half_a_frame_of_room() {
        let mut limits = Limits::default();
        limits.snapshot_chunk_bytes = limits.max_frame_bytes / 2;
        limits.validate().unwrap();
        limits.snapshot_chunk_bytes += 1;
        assert_eq!(invalid_key(&limits), "ferrogrid.limits.snapshot-chunk-bytes");
        let mut small_frames = Limits { max_frame_bytes: 512 << 10, ..Limits::default() };
        assert_eq!(invalid_key(&small_frames), "ferrogrid.limits.snapshot-chunk-bytes", "the default no longer fits");
        small_frames.snapshot_chunk_bytes = 256 << 10;
        small_frames.validate().unwrap();
        let smallest_frames =
            Limits { max_frame_bytes: MIN_FRAME_BYTES, snapshot_chunk_bytes: 512, ..Limits::default() };
        smallest_frames.validate().expect("every accepted frame bound leaves room for some chunk");
    }
}
