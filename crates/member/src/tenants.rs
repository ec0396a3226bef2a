//! Multi-tenancy: tenants authenticate with their own credentials, see only their own maps,
//! share busy reactors by weight, and are held to their quotas.
//!
//! - **Namespaces.** A tenant's request names map `orders`; the reactor that reads it rewrites
//!   the name to `<tenant>\0orders` before anything else sees it, so the stores, backups,
//!   migrations, forwarding and listeners of every member only ever see scoped names, and no
//!   name a client can send reaches another tenant's maps (a name containing `\0` is refused).
//!   Distributed-object listings show a tenant only its own objects, unscoped.
//! - **Fair service.** Each reactor keeps a deficit per tenant, refilled every loop iteration by
//!   `QUANTUM × weight` and capped; cutting a request costs one. A connection whose tenant has
//!   no deficit left waits for the next iteration (deficit round robin over the tenants'
//!   connections), so a flooding tenant gets its weighted share of a busy reactor and no more.
//! - **Quotas.** Connections (refused at authentication), operations per second (a token bucket
//!   shared by the member's reactors: over it, the tenant's connections are throttled or its
//!   requests refused, as configured), entries and bytes held (writes refused once the
//!   member's owned partitions hold that much for the tenant; measured twice a second).

use crate::obs::probes::Counter;
use ferrogrid_config::{OverQuota, TenantConfig};
use ferrogrid_protocol::frame::FRAME_HEADER_SIZE;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

/// Separates a tenant's name from its map names in scoped names.
pub const SEPARATOR: char = '\0';
/// Requests a tenant of weight 1 may cut per reactor loop iteration before others get a turn.
pub const QUANTUM: i64 = 64;
/// The deficit a tenant may bank (in quanta) while it has nothing to do.
const DEFICIT_CAP_QUANTA: i64 = 4;

/// A tenant as the member runs it.
#[derive(Debug)]
pub struct Tenant {
    pub config: TenantConfig,
    /// `<name>\0`: what its map names are prefixed with.
    pub prefix: String,
    pub connections: AtomicU32,
    bucket: Option<TokenBucket>,
    /// Entries and bytes its maps hold in partitions this member owns, per reactor.
    pub entries: Vec<AtomicU64>,
    pub bytes: Vec<AtomicU64>,
}

impl Tenant {
    pub fn new(config: TenantConfig, reactors: usize) -> Tenant {
        let bucket = config.max_ops_per_second.map(TokenBucket::new);
        Tenant {
            prefix: format!("{}{SEPARATOR}", config.name),
            config,
            connections: AtomicU32::new(0),
            bucket,
            entries: (0..reactors).map(|_| AtomicU64::new(0)).collect(),
            bytes: (0..reactors).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Takes one operation from the rate quota; false when over it.
    pub fn take_operation(&self, now_ns: u64) -> bool {
        self.bucket.as_ref().is_none_or(|bucket| bucket.take(now_ns))
    }

    pub fn over_quota(&self) -> OverQuota {
        self.config.over_quota
    }

    /// Whether the tenant's maps hold as much as it may on this member.
    pub fn is_full(&self) -> bool {
        let sum = |counters: &[AtomicU64]| counters.iter().map(|c| c.load(Ordering::Relaxed)).sum::<u64>();
        self.config.max_entries.is_some_and(|max| sum(&self.entries) >= max)
            || self.config.max_bytes.is_some_and(|max| sum(&self.bytes) >= max)
    }
}

/// Operations per second, refilled continuously, with at most one second banked.
#[derive(Debug)]
struct TokenBucket {
    rate: u64,
    tokens: AtomicI64,
    /// Nanoseconds (monotonic, from [`now_ns`]) up to which tokens were added.
    refilled_ns: AtomicU64,
}

impl TokenBucket {
    fn new(rate: u64) -> TokenBucket {
        TokenBucket { rate, tokens: AtomicI64::new(rate as i64), refilled_ns: AtomicU64::new(now_ns()) }
    }

    fn take(&self, now_ns: u64) -> bool {
        if self.tokens.fetch_sub(1, Ordering::AcqRel) > 0 {
            return true;
        }
        self.tokens.fetch_add(1, Ordering::AcqRel);
        // Refill for the time since the last refill (one thread wins the interval).
        let last = self.refilled_ns.load(Ordering::Acquire);
        let elapsed = now_ns.saturating_sub(last);
        let earned = (elapsed as u128 * self.rate as u128 / 1_000_000_000) as i64;
        if earned == 0 {
            return false;
        }
        let spent_ns = (earned as u128 * 1_000_000_000 / self.rate as u128) as u64;
        if self.refilled_ns.compare_exchange(last, last + spent_ns, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            let cap = self.rate as i64;
            let before = self.tokens.fetch_add(earned, Ordering::AcqRel);
            if before + earned > cap {
                self.tokens.fetch_sub(before + earned - cap, Ordering::AcqRel);
            }
        }
        if self.tokens.fetch_sub(1, Ordering::AcqRel) > 0 {
            return true;
        }
        self.tokens.fetch_add(1, Ordering::AcqRel);
        false
    }
}

/// Monotonic nanoseconds since the first call.
pub fn now_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
}

/// Per-tenant probes of one reactor (written by it only).
#[derive(Debug, Default)]
pub struct TenantProbes {
    /// Requests cut from the tenant's connections.
    pub ops: Counter,
    /// Times a connection of the tenant waited: its fair share used up, or its rate quota.
    pub throttled: Counter,
    /// Requests refused for a quota.
    pub rejected: Counter,
}

/// A reactor's deficit round robin over tenants.
#[derive(Debug)]
pub struct Fairness {
    enabled: bool,
    quantum: Vec<i64>,
    deficit: Vec<i64>,
    /// A connection waits for the next round: poll without sleeping.
    pub waiting: bool,
}

impl Fairness {
    /// `weights[t]` for tenant ids 0 (default) ..; disabled when there are no tenants.
    pub fn new(enabled: bool, weights: &[u32]) -> Fairness {
        let quantum: Vec<i64> = weights.iter().map(|weight| QUANTUM * i64::from(*weight)).collect();
        Fairness { enabled: enabled && weights.len() > 1, deficit: quantum.clone(), quantum, waiting: false }
    }

    /// A new round: every tenant's deficit grows by its quantum (capped).
    pub fn refill(&mut self) {
        self.waiting = false;
        if !self.enabled {
            return;
        }
        for (deficit, quantum) in self.deficit.iter_mut().zip(&self.quantum) {
            *deficit = (*deficit + quantum).min(quantum * DEFICIT_CAP_QUANTA);
        }
    }

    /// Charges one request to `tenant`; false when its share of this round is used up.
    pub fn charge(&mut self, tenant: u16) -> bool {
        if !self.enabled {
            return true;
        }
        let Some(deficit) = self.deficit.get_mut(tenant as usize) else { return true };
        if *deficit <= 0 {
            self.waiting = true;
            return false;
        }
        *deficit -= 1;
        true
    }
}

/// The map-name frame of a request: the first frame after the initial one.
fn name_frame(bytes: &[u8]) -> Option<(usize, usize)> {
    let initial = i32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    let start = initial;
    let length = i32::from_le_bytes(bytes.get(start..start + 4)?.try_into().ok()?) as usize;
    (length >= FRAME_HEADER_SIZE && start + length <= bytes.len()).then_some((start, length))
}

/// The object name a request names in its first variable frame (None without one, or if it
/// is not UTF-8).
pub fn object_name(bytes: &[u8]) -> Option<&str> {
    let (start, length) = name_frame(bytes)?;
    std::str::from_utf8(&bytes[start + FRAME_HEADER_SIZE..start + length]).ok()
}

/// The request with its map name scoped to the tenant (`prefix` + name). Err if the name
/// holds the separator (no name may reach into another namespace) or the frame is missing.
pub fn scope_request(bytes: &[u8], prefix: &str) -> Result<Vec<u8>, String> {
    let (start, length) = name_frame(bytes).ok_or("request without a name frame")?;
    let name = &bytes[start + FRAME_HEADER_SIZE..start + length];
    if name.contains(&0) {
        return Err("map names may not contain the NUL character (it separates tenant namespaces)".into());
    }
    let mut scoped = Vec::with_capacity(bytes.len() + prefix.len());
    scoped.extend_from_slice(&bytes[..start]);
    scoped.extend_from_slice(&((length + prefix.len()) as i32).to_le_bytes());
    scoped.extend_from_slice(&bytes[start + 4..start + FRAME_HEADER_SIZE]);
    scoped.extend_from_slice(prefix.as_bytes());
    scoped.extend_from_slice(name);
    scoped.extend_from_slice(&bytes[start + length..]);
    Ok(scoped)
}

/// A scoped name's tenant part and map part (None for a name of the default tenant).
pub fn split(name: &str) -> Option<(&str, &str)> {
    name.split_once(SEPARATOR)
}

/// A name for people: `tenant/map`.
pub fn display(name: &str) -> String {
    name.replace(SEPARATOR, "/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::codec::MapPut;
    use ferrogrid_protocol::{Data, Message};

    #[test]
    fn scoping_rewrites_only_the_name() {
        let mut out = Vec::new();
        MapPut { thread_id: 7, ttl: -1, name: "orders", key: Data(b"k"), value: Data(b"v") }.encode(&mut out, 5, 12, 0);
        let scoped = scope_request(&out, "team-a\0").unwrap();
        let message = Message::parse(&scoped).unwrap();
        let request = MapPut::decode(&message).unwrap();
        assert_eq!(request.name, "team-a\0orders");
        assert_eq!((request.key.0, request.value.0, request.thread_id), (&b"k"[..], &b"v"[..], 7));
        assert_eq!((message.correlation_id(), message.partition_id()), (5, 12));
        assert_eq!(split(request.name), Some(("team-a", "orders")));
        let mut evil = Vec::new();
        MapPut { thread_id: 7, ttl: -1, name: "team-b\0orders", key: Data(b"k"), value: Data(b"v") }
            .encode(&mut evil, 5, 12, 0);
        assert!(scope_request(&evil, "team-a\0").unwrap_err().contains("NUL"));
    }

    #[test]
    fn the_bucket_allows_the_rate_and_refills() {
        let bucket = TokenBucket::new(100);
        let start = bucket.refilled_ns.load(Ordering::Relaxed);
        assert_eq!((0..150).filter(|_| bucket.take(start)).count(), 100, "a second's worth banked");
        assert!(!bucket.take(start + 1_000_000), "1 ms earns nothing at 100/s... nearly");
        assert_eq!((0..100).filter(|_| bucket.take(start + 500_000_000)).count(), 50, "half a second later");
    }

    #[test]
    fn deficit_round_robin_shares_by_weight() {
        let mut fairness = Fairness::new(true, &[1, 3, 1]);
        let mut served = [0u32; 3];
        for _ in 0..100 {
            fairness.refill();
            // Tenants 1 and 2 always have work; tenant 0 none.
            for tenant in [1u16, 2] {
                while fairness.charge(tenant) {
                    served[tenant as usize] += 1;
                }
            }
        }
        assert_eq!(served[1], served[2] * 3, "{served:?}");
        assert!(fairness.waiting);
    }
}
