//! Client credentials, in the shape of Hazelcast's simple authentication realm.
//!
//! Passwords are compared in time independent of where they differ, and never printed by `Debug`.

use std::fmt;

use crate::error::{invalid, ConfigError};

/// One user a client may authenticate as, from
/// `hazelcast.security.realms[].authentication.simple.users[]`.
#[derive(Clone, PartialEq, Eq)]
pub struct User {
    /// `username`; non-empty and unique among the users.
    pub username: String,
    /// `password`, compared exactly.
    pub password: String,
}

impl fmt::Debug for User {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("User").field("username", &self.username).field("password", &"<redacted>").finish()
    }
}

/// Client authentication settings, from `hazelcast.security`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SecurityConfig {
    /// Whether clients must present credentials. `hazelcast.security.enabled`, default `false`.
    pub enabled: bool,
    /// Users of the realm named by `hazelcast.security.client-authentication.realm`.
    /// Default empty; must be non-empty when `enabled`.
    pub users: Vec<User>,
}

impl SecurityConfig {
    /// Whether a client presenting these credentials may connect.
    ///
    /// With security off, only a client presenting no credentials is accepted, as the Hazelcast
    /// member does. With security on, both must be present and match a configured user exactly.
    pub fn check(&self, username: Option<&str>, password: Option<&str>) -> bool {
        if !self.enabled {
            return username.is_none() && password.is_none();
        }
        let (Some(username), Some(password)) = (username, password) else {
            return false;
        };
        self.users
            .iter()
            .any(|user| user.username == username && bytes_equal(user.password.as_bytes(), password.as_bytes()))
    }

    /// Checks that an enabled configuration has users, each with a unique non-empty username.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const USERS_KEY: &str = "hazelcast.security.realms[].authentication.simple.users";
        if self.enabled && self.users.is_empty() {
            return Err(invalid(
                "hazelcast.security.enabled",
                "security is enabled but the realm named by hazelcast.security.client-authentication.realm has no simple users",
            ));
        }
        for (index, user) in self.users.iter().enumerate() {
            if user.username.is_empty() {
                return Err(invalid(USERS_KEY, "expected a non-empty username"));
            }
            if self.users[..index].iter().any(|earlier| earlier.username == user.username) {
                return Err(invalid(USERS_KEY, format!("username {:?} appears twice", user.username)));
            }
        }
        Ok(())
    }
}

/// Byte equality whose running time does not depend on where the inputs first differ.
fn bytes_equal(left: &[u8], right: &[u8]) -> bool {
    let difference = left.iter().zip(right).fold(0u8, |difference, (a, b)| difference | (a ^ b));
    left.len() == right.len() && difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secured() -> SecurityConfig {
        SecurityConfig {
            enabled: true,
            users: vec![User { username: "dev".to_owned(), password: "secret".to_owned() }],
        }
    }

    #[test]
    fn disabled_security_accepts_only_anonymous_clients() {
        let open = SecurityConfig::default();
        assert!(open.check(None, None));
        assert!(!open.check(Some("dev"), None));
        assert!(!open.check(None, Some("secret")));
        assert!(!open.check(Some("dev"), Some("secret")));
    }

    #[test]
    fn enabled_security_requires_an_exact_match() {
        let security = secured();
        assert!(security.check(Some("dev"), Some("secret")));
        assert!(!security.check(Some("dev"), Some("secret2")));
        assert!(!security.check(Some("dev"), Some("secre")));
        assert!(!security.check(Some("Dev"), Some("secret")));
        assert!(!security.check(Some("dev"), None));
        assert!(!security.check(None, None));
    }

    #[test]
    fn validate_rejects_enabled_without_users_and_duplicates() {
        let empty = SecurityConfig { enabled: true, users: Vec::new() };
        assert!(
            matches!(empty.validate(), Err(ConfigError::InvalidValue { key, .. }) if key == "hazelcast.security.enabled")
        );
        let mut duplicated = secured();
        duplicated.users.push(duplicated.users[0].clone());
        assert!(duplicated.validate().is_err());
        assert!(!format!("{:?}", secured()).contains("secret"));
    }
}
