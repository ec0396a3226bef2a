//! Tenants: client applications sharing one grid, each with its own credentials, map
//! namespace, scheduling weight and quotas (`ferrogrid.tenants`).

use crate::error::{invalid, ConfigError};

/// Most tenants a member accepts.
pub const MAX_TENANTS: usize = 1024;
/// Largest scheduling weight.
pub const MAX_WEIGHT: u32 = 1000;

/// What a member does with a tenant's work beyond its operation quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverQuota {
    /// Stop reading the tenant's connections until its budget refills (backpressure).
    #[default]
    Throttle,
    /// Answer each request beyond the quota with an error the client sees.
    Reject,
}

/// One tenant. `name` is its namespace: its maps are invisible to every other tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantConfig {
    /// `name`: non-empty, at most 64 characters, letters, digits, `-`, `_` and `.`.
    pub name: String,
    /// `username` / `password`: what the tenant's clients authenticate with (unique username).
    pub username: String,
    pub password: String,
    /// `weight`: its share of a busy reactor relative to the others, `1..=MAX_WEIGHT`, default 1.
    pub weight: u32,
    /// `max-connections`: open client connections per member.
    pub max_connections: Option<u32>,
    /// `max-ops-per-second`: requests per second per member.
    pub max_ops_per_second: Option<u64>,
    /// `max-entries`: entries the tenant's maps hold on this member (owned partitions).
    pub max_entries: Option<u64>,
    /// `max-bytes`: key and value bytes its maps hold on this member (owned partitions).
    pub max_bytes: Option<u64>,
    /// `over-quota`: `throttle` (default) or `reject`.
    pub over_quota: OverQuota,
}

impl TenantConfig {
    pub fn new(name: &str, username: &str, password: &str) -> TenantConfig {
        TenantConfig {
            name: name.into(),
            username: username.into(),
            password: password.into(),
            weight: 1,
            max_connections: None,
            max_ops_per_second: None,
            max_entries: None,
            max_bytes: None,
            over_quota: OverQuota::Throttle,
        }
    }
}

/// The configured tenants (empty: one default tenant, as without multi-tenancy) and whether
/// busy reactors share themselves by weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantsConfig {
    pub tenants: Vec<TenantConfig>,
    /// `ferrogrid.fair-scheduling`, default true: a busy reactor runs tenants' requests in
    /// proportion to their weights (deficit round robin); false runs them as they come.
    pub fair_scheduling: bool,
}

impl Default for TenantsConfig {
    fn default() -> Self {
        TenantsConfig { tenants: Vec::new(), fair_scheduling: true }
    }
}

impl TenantsConfig {
    /// The tenant whose clients authenticate with these credentials: its index + 1 (0 is the
    /// default tenant of a member without tenants).
    pub fn authenticate(&self, username: &str, password: &str) -> Option<u16> {
        let found = self.tenants.iter().position(|tenant| tenant.username == username && tenant.password == password);
        found.map(|index| index as u16 + 1)
    }

    /// The tenant with id `id` (1-based).
    pub fn tenant(&self, id: u16) -> Option<&TenantConfig> {
        id.checked_sub(1).and_then(|index| self.tenants.get(index as usize))
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.tenants.len() > MAX_TENANTS {
            return Err(invalid("ferrogrid.tenants", format!("at most {MAX_TENANTS} tenants")));
        }
        for (index, tenant) in self.tenants.iter().enumerate() {
            let key = |field: &str| format!("ferrogrid.tenants[{index}].{field}");
            let valid_name = !tenant.name.is_empty()
                && tenant.name.len() <= 64
                && tenant.name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !valid_name {
                return Err(invalid(key("name"), "expected 1-64 letters, digits, '-', '_' or '.'"));
            }
            if tenant.username.is_empty() {
                return Err(invalid(key("username"), "every tenant needs a username"));
            }
            if !(1..=MAX_WEIGHT).contains(&tenant.weight) {
                return Err(invalid(key("weight"), format!("expected 1..={MAX_WEIGHT}, got {}", tenant.weight)));
            }
            if tenant.max_ops_per_second == Some(0) {
                return Err(invalid(key("max-ops-per-second"), "expected at least 1"));
            }
            let earlier = &self.tenants[..index];
            if earlier.iter().any(|other| other.name == tenant.name) {
                return Err(invalid(key("name"), format!("tenant {:?} is configured twice", tenant.name)));
            }
            if earlier.iter().any(|other| other.username == tenant.username) {
                return Err(invalid(key("username"), format!("username {:?} belongs to two tenants", tenant.username)));
            }
        }
        Ok(())
    }
}
