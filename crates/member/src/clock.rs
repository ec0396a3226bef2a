//! Time as the member keeps it: milliseconds since the Unix epoch (`i64`, as Hazelcast reports
//! times), and [`NEVER`] for "no expiry". A reactor reads the clock once per loop iteration
//! (`PartitionOwner::tick_clock`) and passes that time down, so every operation of one
//! iteration sees the same `now_ms`.

/// "No expiry" for ttl, max-idle and expiration times, as Hazelcast reports it.
pub const NEVER: i64 = i64::MAX;

/// The deadline of a wait of `wait_ms` from `now_ms`: NEVER for a negative wait (until
/// served or released).
pub fn deadline_after(now_ms: i64, wait_ms: i64) -> i64 {
    if wait_ms < 0 {
        NEVER
    } else {
        now_ms.saturating_add(wait_ms)
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as i64)
}
